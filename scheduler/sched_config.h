/*
 * scheduler/sched_config.h - the scheduler's settings (what tessera.yaml sets for it), apart
 * from the cycle's interface (sched.h), so that config/ can fill them without knowing the
 * scheduler.
 */
#ifndef SCHED_CONFIG_H
#define SCHED_CONFIG_H

#include "common/ts.h"
#include "dra/dra.h"
#include "queueing/queueing.h"

typedef enum sched_scoring {
  SCHED_BINPACK,        /* fill partly used nodes first (GPUs first, then cpu and memory) */
  SCHED_SPREAD,         /* prefer the least used nodes */
  SCHED_FIRST_FIT,      /* the first feasible node by name (a baseline) */
  SCHED_BEST_FIT,       /* the node left with the least free GPU and CPU, over the maximum node
                           spec (a baseline, as the FGD paper's simulator scores it) */
  SCHED_DOT_PRODUCT,    /* the node whose free GPU and CPU align least with the request (Tetris's
                           dot product, as the FGD paper's simulator scores it; a baseline) */
  SCHED_GPU_PACKING,    /* the FGD paper's GPU packing: a share on a GPU already shared (the
                           fullest), else a node already in use, else the empty node with the fewest
                           GPUs (a baseline) */
  SCHED_FGD,            /* fragmentation gradient descent (Weng et al., ATC '23): the node (and
                           GPU) whose GPU fragmentation, measured against the workload's typical
                           pods, grows least, scored as the paper's simulator scores it */
  SCHED_RANDOM,         /* a feasible node drawn at random for each pod (the FGD paper's Random
                           baseline; from the pod's name and the tie seed, so a run repeats) */
  SCHED_GPU_CLUSTERING, /* the FGD paper's GPU clustering: a node running only pods that ask
                           for GPUs as the pod does (as many whole GPUs, or a share), else one
                           running such pods among others, else an empty one, then the fuller
                           (a baseline) */
  SCHED_SCORING_COUNT
} sched_scoring;

/* "binpack", "spread", "first-fit", "best-fit", "dot-product", "gpu-packing", "fgd", "random",
 * "gpu-clustering"
 * (static),
 * and back: false when the name is none of them. */
const char *sched_scoring_name(sched_scoring s);
bool sched_scoring_parse(const char *name, sched_scoring *out);

#define SCHED_MAX_TOPOLOGY 8 /* topology levels */

/* One shape of pod in a workload, as FGD weighs fragmentation: a pod asking for `gpus` GPUs of
 * which it takes `milli` thousandths each (1000: whole GPUs; a share: 1 GPU, less than 1000, or
 * `mib` MiB of a GPU's memory), and `cpu` millicores. */
typedef struct sched_workload_shape {
  int64_t cpu;        /* millicores */
  int32_t gpus;       /* GPUs */
  int32_t milli;      /* thousandths of each GPU (0 when mib says) */
  int32_t mib;        /* a share given as GPU memory (KAI's gpu-memory), else 0 */
  double count;       /* pods of the workload with this shape */
  const char *models; /* the GPU models (label nvidia.com/gpu.product) it may use, "A|B" as
                         openb's gpu_spec gives them, or NULL for any */
} sched_workload_shape;

/* The stages of a cycle that work on one object, for fault injection: the tests that prove an
 * error stays inside the object that caused it make one stage fail for one pod (as TS_EFAULT). */
typedef enum sched_stage {
  SCHED_STAGE_NONE,      /* no fault */
  SCHED_STAGE_ADMISSION, /* making the Kueue workload of the pod's gang */
  SCHED_STAGE_DRA,       /* allocating the pod's ResourceClaims */
  SCHED_STAGE_PLACEMENT, /* choosing a node for the pod */
  SCHED_STAGE_SCORING,   /* scoring nodes for the pod */
  SCHED_STAGE_DECISION,  /* deciding the pod's gang at all (the cycle's last safety net) */
} sched_stage;

typedef struct sched_fault {
  sched_stage stage; /* which stage fails */
  const char *pod;   /* for which pod ("ns/name"; its gang, for gang-wide stages) */
} sched_fault;

/* What the differential and fault tests change (zero, the default, is the production cycle):
 * each shortcut the cycle takes can be turned off to compare it with the plain path it stands
 * for, and one stage can be made to fail for one pod. */
typedef struct sched_tuning {
  bool no_classes;       /* pods decided run by run (scans), not through their classes */
  bool no_domain_order;  /* one-node domains of a gang found by a scan, not by free amount */
  bool no_pending_memo;  /* runs of a shape that stayed pending are not remembered */
  bool claims_by_ref;    /* existing claims in runs compare by identity, not by value */
  bool no_dra_fit_cache; /* the fit of claims per shape and node is not remembered */
  sched_fault fault;     /* a stage that fails for one pod */
} sched_tuning;

typedef struct sched_config {
  const char *scheduler_name;               /* interned; pods whose spec.schedulerName is this */
  sched_scoring scoring;                    /* node scoring */
  uint64_t tie_seed;                        /* nodes of equal score: 0, the first by name; else
                                               the first in a random order of the nodes drawn
                                               from it, the same in every cycle (tessera
                                               simulate's seeds, as the FGD paper's simulator
                                               breaks ties) */
  const char *topology[SCHED_MAX_TOPOLOGY]; /* interned node label keys, widest first */
  int ntopology;                            /* entries */
  dra_features dra;                         /* DRA feature gates */
  dra_eval_fn dra_eval;                     /* CEL selector evaluator; NULL: selectors fail */
  void *dra_eval_ctx;                       /* for dra_eval */
  const sched_workload_shape *workload;     /* FGD: the workload to expect (borrowed; tessera
                                               simulate gives its trace's), or NULL: the pods
                                               the model has, pending and running */
  size_t nworkload;                         /* entries */
  bool instantiate_templates;               /* replay: make claims from ResourceClaimTemplates
                                               (in a cluster the claim controller does) */
  bool wait_for_pods_ready;                 /* evict gangs not Ready in time (Kueue's
                                               waitForPodsReady) */
  int64_t pods_ready_timeout_ns;            /* how long after binding (5 min) */
  int64_t requeue_base_ns;                  /* first requeue backoff (1 min), doubled each time */
  int64_t requeue_max_ns;                   /* backoff cap (1 h) */
  bool kueue_admits;                        /* queueing.admission: kueue. Kueue's controller
                                               admits (its Workloads say what and on which
                                               flavors and topology domains); Tessera places
                                               what Kueue admitted, and charges no quota */
  q_config queueing;                        /* Kueue's settings: fair sharing, strategies,
                                               gates, manageJobsWithoutQueueName,
                                               deviceClassMappings (owned) */
  sched_tuning tuning;                      /* tests only: shortcuts off, a fault injected */
} sched_config;

/* What the scheduler remembers from one cycle to the next (requeue backoffs). A cycle given
 * no state behaves as the first cycle of a fresh scheduler. */
typedef struct sched_state sched_state;
sched_state *sched_state_new(void); /* returns new, NULL when out of memory */
void sched_state_free(sched_state *s);
/* Forgets that the pod (key "ns/name") was evicted: its eviction failed (a
 * PodDisruptionBudget refused it, say), so a later cycle may decide it again. */
void sched_state_forget_eviction(sched_state *s, const char *pod_key);

/* Fills cfg with the defaults: schedulerName "tessera", bin-packing, topology levels
 * topology.kubernetes.io/zone > nvidia.com/gpu.clique > kubernetes.io/hostname, Kueue's
 * defaults (q_config_default). */
void sched_config_default(sched_config *cfg);
/* Frees what cfg owns (Kueue's device class mappings). */
void sched_config_free(sched_config *cfg);

#endif
