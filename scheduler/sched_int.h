/*
 * scheduler/sched_int.h - internals of the scheduler: the cycle's view of the nodes (free
 * capacity after the placements made so far in the cycle), filters, scoring and reasons.
 */
#ifndef SCHED_INT_H
#define SCHED_INT_H

#include "scheduler/sched.h"

#define SCHED_MAX_GPU_RESOURCES 8 /* distinct GPU resource names scored */

#define SCHED_MAX_SIGS 64 /* static-filter results cached per cycle */

/* Nodes passing the static filters for pods with one static signature (node selector,
 * affinity, tolerations). */
typedef struct sched_sig {
  const model_pod *pod; /* representative pod */
  uint64_t hash;        /* hash of the signature */
  uint32_t *nodes;      /* passing node indexes, ascending (scratch arena, v->n capacity) */
  uint32_t n;           /* entries */
} sched_sig;

/* What scoring needs of a pod, prepared once per run of same-shape pods. */
typedef struct sched_shape {
  const model_pod *pod;                     /* representative */
  int64_t cpu, mem;                         /* cpu (milli) and memory requests */
  int gpu[SCHED_MAX_GPU_RESOURCES];         /* GPU resource ids requested */
  int64_t gpu_req[SCHED_MAX_GPU_RESOURCES]; /* amounts */
  int ngpu;                                 /* entries */
} sched_shape;

/* The cycle's view: nodes sorted by name, with free capacity per resource. */
typedef struct sched_view {
  const model *m;                   /* the model (read only) */
  const sched_config *cfg;          /* configuration */
  int64_t now_ns;                   /* the cycle's clock */
  uint32_t n;                       /* nodes */
  const model_node **nodes;         /* nodes sorted by name (scratch arena) */
  int stride;                       /* resource ids per node row */
  int64_t *free;                    /* n x stride: allocatable - used - placed this cycle */
  double *inv;                      /* n x stride: 1e6 / allocatable (0 when none) */
  uint8_t *has_gpu;                 /* n: the node has some GPU resource */
  int gpu[SCHED_MAX_GPU_RESOURCES]; /* resource ids counted as GPUs */
  int ngpu;                         /* entries in gpu */
  sched_sig sigs[SCHED_MAX_SIGS];   /* static-filter cache */
  int nsigs;                        /* entries in use */
  int next_evict;                   /* round-robin slot to reuse when full */
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
/* The nodes passing the static filters for p, cached per signature; NULL when out of
 * memory. Valid until the next call (a full cache reuses slots). */
const sched_sig *sched__static_nodes(sched_view *v, const model_pod *p);
/* True when two pods have the same node selector, affinity and tolerations. */
bool sched__same_static(const model_pod *a, const model_pod *b);
/* True when every resource the pod requests is free on the node. */
bool sched__resources_fit(const sched_view *v, const model_pod *p, uint32_t node);
void sched__shape_init(const sched_view *v, const model_pod *p, sched_shape *s);
/* The node's score if a pod of this shape were placed there; higher is better. */
int64_t sched__score(const sched_view *v, const sched_shape *s, uint32_t node);
/* Charges the pod's requests to the node in the view. */
void sched__place(sched_view *v, const model_pod *p, uint32_t node);
/* Why the pod fits no node now, as kube-scheduler says it ("0/3 nodes are available: ...").
 * Returns a string in the result arena, NULL when out of memory. */
const char *sched__why_pending(const sched_view *v, const model_pod *p);

#endif
