/*
 * scheduler/sched.h - the scheduling cycle: a pure function of (model, config, now) that
 * returns decisions. It never changes the model; callers apply decisions (replay applies them
 * to its model, `tessera run` writes them to the API server).
 */
#ifndef SCHED_H
#define SCHED_H

#include "common/ts.h"
#include "model/model.h"

typedef enum sched_scoring {
  SCHED_BINPACK, /* fill partly used nodes first (GPUs first, then cpu and memory) */
  SCHED_SPREAD,  /* prefer the least used nodes */
} sched_scoring;

#define SCHED_MAX_TOPOLOGY 8 /* topology levels */

typedef struct sched_config {
  const char *scheduler_name;               /* interned; pods whose spec.schedulerName is this */
  sched_scoring scoring;                    /* node scoring */
  const char *topology[SCHED_MAX_TOPOLOGY]; /* interned node label keys, widest first */
  int ntopology;                            /* entries */
} sched_config;

/* Fills cfg with the defaults: schedulerName "tessera", bin-packing, topology levels
 * topology.kubernetes.io/zone > nvidia.com/gpu.clique > kubernetes.io/hostname. */
void sched_config_default(sched_config *cfg);

typedef enum sched_decision_kind {
  SCHED_BIND,    /* place pod on node */
  SCHED_PENDING, /* pod cannot be placed now; reason says why */
} sched_decision_kind;

typedef struct sched_decision {
  sched_decision_kind kind; /* what to do */
  const model_pod *pod;     /* borrowed from the model */
  const model_node *node;   /* BIND: the node; NULL otherwise */
  const char *reason;       /* PENDING: kube-scheduler style message (arena) */
  const char *gang;         /* "PodGroup team-a/train" when the pod is part of a gang, or NULL
                               (arena) */
} sched_decision;

typedef struct sched_result {
  sched_decision *decisions; /* in the order they were made (arena) */
  size_t ndecisions;         /* entries */
  size_t nbound;             /* BIND decisions */
  size_t npending;           /* PENDING decisions */
  ts_arena arena;            /* private: owns decisions and messages */
} sched_result;

/* Runs one cycle over the pending pods of cfg->scheduler_name in the model: pods by
 * priority (highest first), then creation time, then namespace/name. The model is read,
 * never changed; decisions are returned in *out (initialised here; free with
 * sched_result_free). now_ns is the cycle's clock. */
ts_rc sched_cycle(const model *m, const sched_config *cfg, int64_t now_ns, sched_result *out,
                  ts_err *err);
void sched_result_free(sched_result *r);

/* The effective priority of a pod: spec.priority, else its PriorityClass's value, else the
 * global default PriorityClass's value, else 0. */
int32_t sched_pod_priority(const model *m, const model_pod *p);

/* True for resources counted as GPUs when scoring: names ending in "/gpu" and NVIDIA MIG
 * resources ("nvidia.com/mig-..."). */
bool sched_is_gpu_resource(int id);

#endif
