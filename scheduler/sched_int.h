/*
 * scheduler/sched_int.h - internals of the scheduler: the cycle's view of the nodes (free
 * capacity after the placements made so far in the cycle), filters, scoring and reasons.
 */
#ifndef SCHED_INT_H
#define SCHED_INT_H

#include "scheduler/sched.h"

#define SCHED_MAX_GPU_RESOURCES 8 /* distinct GPU resource names scored */

/* The cycle's view: nodes sorted by name, with free capacity per resource. */
typedef struct sched_view {
  const model *m;                   /* the model (read only) */
  const sched_config *cfg;          /* configuration */
  int64_t now_ns;                   /* the cycle's clock */
  uint32_t n;                       /* nodes */
  const model_node **nodes;         /* nodes sorted by name (scratch arena) */
  int stride;                       /* resource ids per node row */
  int64_t *free;                    /* n x stride: allocatable - used - placed this cycle */
  int gpu[SCHED_MAX_GPU_RESOURCES]; /* resource ids counted as GPUs */
  int ngpu;                         /* entries in gpu */
  ts_arena *arena;                  /* scratch memory for the cycle */
  ts_arena *out;                    /* memory of the result (messages) */
  size_t decisions_cap;             /* capacity of the result's decision array */
} sched_view;

typedef enum sched_fit {
  SCHED_FIT,           /* passes the static filters */
  SCHED_UNSCHEDULABLE, /* node.spec.unschedulable and not tolerated */
  SCHED_TAINT,         /* an untolerated NoSchedule / NoExecute taint */
  SCHED_AFFINITY,      /* nodeSelector or required node affinity */
} sched_fit;

ts_rc sched__view_init(sched_view *v, const model *m, const sched_config *cfg, int64_t now_ns,
                       ts_arena *scratch, ts_arena *out);
/* Filters that do not depend on free capacity, in kube-scheduler's plugin order. */
sched_fit sched__static_fit(const sched_view *v, const model_pod *p, uint32_t node);
/* True when every resource the pod requests is free on the node. */
bool sched__resources_fit(const sched_view *v, const model_pod *p, uint32_t node);
/* The node's score if the pod were placed there; higher is better. */
int64_t sched__score(const sched_view *v, const model_pod *p, uint32_t node);
/* Charges the pod's requests to the node in the view. */
void sched__place(sched_view *v, const model_pod *p, uint32_t node);
/* Why the pod fits no node now, as kube-scheduler says it ("0/3 nodes are available: ...").
 * Returns a string in the result arena, NULL when out of memory. */
const char *sched__why_pending(const sched_view *v, const model_pod *p);

#endif
