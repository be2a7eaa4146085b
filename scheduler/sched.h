/*
 * scheduler/sched.h - the scheduling cycle: a pure function of (model, config, now) that
 * returns decisions. It never changes the model; callers apply decisions (replay applies them
 * to its model, `tessera run` writes them to the API server).
 */
#ifndef SCHED_H
#define SCHED_H

#include "common/ts.h"
#include "dra/dra.h"
#include "model/model.h"
#include "queueing/queueing.h"
#include "scheduler/sched_config.h"

/* ---- the cycle ------------------------------------------------------------------------ */

typedef enum sched_decision_kind {
  SCHED_BIND,    /* place pod on node */
  SCHED_PENDING, /* pod cannot be placed now; reason says why */
  SCHED_EVICT,   /* evict the bound pod (its gang is requeued); reason says why */
} sched_decision_kind;

/* A ResourceClaim of a pod, as the cycle resolved it. */
typedef struct sched_claim {
  const char *pod_claim;            /* interned spec.resourceClaims[].name */
  const char *name;                 /* the claim's name (arena); namespace is the pod's */
  const model_claim *claim;         /* the existing claim, or NULL when made from a template */
  const model_claim_template *tmpl; /* the template it is made from (replay), or NULL */
  const model_claim_spec *spec;     /* what it asks for */
  bool allocated;                   /* already allocated (a shared claim): reserve only */
  bool reused;                      /* shared with a pod placed earlier in this cycle: result is
                                       that pod's allocation, written again (identical) */
  dra_result result;                /* BIND of an unallocated claim: the new allocation */
  const uint32_t *refs;             /* an unallocated existing claim: how many pending pods of
                                       the cycle name it (scheduler internal), else NULL */
} sched_claim;

/* Which kind of reason keeps a pod pending: its PodScheduled=False condition's reason in a
 * cluster, and a metric's label. Only SCHED_WHY_UNSCHEDULABLE says that more or other nodes
 * would help: cluster-autoscaler and Karpenter add nodes for exactly the pods whose reason is
 * "Unschedulable", and leave the others alone (the message says the rest). */
typedef enum sched_pending_why {
  SCHED_WHY_UNSCHEDULABLE, /* no node has room for it, or no domain for its gang, or its claims
                              fit no node's devices ("Unschedulable": nodes would help) */
  SCHED_WHY_GANG,          /* its gang has fewer pods than its minimum: waits for the rest
                              ("WaitingForGang") */
  SCHED_WHY_BLOCKED,       /* an object it needs is missing, or its queue cannot admit anything
                              (a PodGroup, claim, owner or LocalQueue missing; a queue inactive
                              or stopped): "Blocked" */
  SCHED_WHY_QUEUED,        /* waits for quota or its turn in its queue, or for the preemption
                              made for it ("WaitingForQuota") */
  SCHED_WHY_BACKOFF,       /* in its requeue backoff after an eviction ("Backoff") */
  SCHED_WHY_NO_QUEUE,      /* no queue label, and manageJobsWithoutQueueName holds such pods
                              ("NoQueueName") */
  SCHED_WHY_ERROR,         /* evaluating it (its own objects) failed: the message names what and
                              where; everything else was decided as without it
                              ("SchedulerError", as kube-scheduler says it) */
  SCHED_WHY_GATED,         /* it, or a member of its gang, still has spec.schedulingGates: not
                              scheduled and not unschedulable ("SchedulingGated", the reason
                              the API server gives such a pod) */
  SCHED_WHY_COUNT
} sched_pending_why;
/* The names above, in that order. */
const char *sched_pending_why_name(sched_pending_why w);

typedef struct sched_decision {
  sched_decision_kind kind;   /* what to do */
  const model_pod *pod;       /* borrowed from the model */
  const model_node *node;     /* BIND: the node; NULL otherwise */
  const char *reason;         /* PENDING: kube-scheduler style message (arena) */
  const char *gang;           /* "PodGroup team-a/train" when the pod is part of a gang, or NULL
                                 (arena) */
  const sched_claim *claims;  /* BIND: the pod's claims with their allocations (arena) */
  uint32_t nclaims;           /* entries */
  sched_pending_why why;      /* PENDING: which kind of reason (0 otherwise) */
  bool gpu_shared;            /* BIND of a pod sharing a GPU: it goes on GPU gpu_index */
  uint32_t gpu_index;         /* the node's GPU (0-based), written as tessera.dev/gpu-index */
  uint32_t group;             /* the sched_group it is part of (result's groups) */
  const model_pod *preemptor; /* EVICT by a preemption: the first pending pod of the gang (or
                                 the pod) it makes room for, borrowed from the model; NULL
                                 otherwise */
} sched_decision;

/* The decisions of one gang, or of one pod outside any gang: what the consumers of a cycle
 * (the writer, replay, simulate) carry out or count together, without regrouping. */
typedef struct sched_group {
  size_t first;     /* its first decision: decisions[first .. first + n) */
  uint32_t n;       /* decisions */
  uint32_t nbound;  /* BIND decisions among them */
  const char *gang; /* the gang's label ("PodGroup team-a/train"), NULL for a single pod */
  int64_t event;    /* the Kueue workload event (ADMITTED or EVICTED) of its decisions, -1 */
} sched_group;

/* What happened to a Kueue workload in the cycle, once per workload (Kueue's counters). */
typedef enum sched_wl_kind {
  SCHED_WL_ADMITTED, /* admitted: its pods are bound by the BIND decisions */
  SCHED_WL_EVICTED,  /* evicted: its pods go by the EVICT decisions */
  SCHED_WL_READY,    /* its pods became all Running and Ready for the first time (with
                        waitForPodsReady on, as Kueue reports it); no decision */
  SCHED_WL_FINISHED, /* it ran and every pod of it ended (Succeeded or Failed); no decision */
} sched_wl_kind;

typedef struct sched_wl_event {
  sched_wl_kind kind;         /* what happened */
  const char *cluster_queue;  /* interned: the ClusterQueue it is (was) admitted to */
  const char *ns;             /* interned: its namespace */
  const char *local_queue;    /* interned: its LocalQueue */
  const char *priority_class; /* Kueue's priority class name of the workload (its
                                 WorkloadPriorityClass, else its pods' PriorityClass), "" when
                                 none; interned or static */
  const char *reason;         /* EVICTED: Kueue's reason, "Preempted" or "PodsReadyTimeout" */
  const char *cause;          /* EVICTED: Kueue's underlying cause ("WaitForStart" for
                                 PodsReadyTimeout), "" when none */
  const char *preempting_cq;  /* Preempted: the ClusterQueue of the workload it makes room for */
  const char *preempt_reason; /* Preempted: "InClusterQueue", "InCohortReclamation", ... */
  int64_t waited_ns;          /* ADMITTED: from its queue time (creation or requeue) to now;
                                 READY: from its queue time to ready */
  int64_t admitted_ready_ns;  /* READY: from its admission (first binding) to ready */
  int64_t ready_evicted_ns;   /* EVICTED: from ready to the eviction, -1 when it never was */
  size_t decision;            /* its first BIND (ADMITTED) or EVICT (EVICTED) decision */
  size_t count;               /* EVICTED: its EVICT decisions, from decision on */
} sched_wl_event;

typedef struct sched_result {
  sched_decision *decisions; /* in the order they were made (owned: sched_result_free) */
  size_t ndecisions;         /* entries */
  sched_group *groups;       /* the decisions by gang, in order, covering all of them (owned) */
  size_t ngroups;            /* entries */
  size_t nbound;             /* BIND decisions */
  size_t npending;           /* PENDING decisions */
  size_t nevicted;           /* EVICT decisions */
  /* Problems of the Kueue objects that make ClusterQueues inactive (q_tree_problems: "Cohort
   * a: spec.parentName: cycle a -> b -> a"), as of this cycle (arena). */
  const char **problems;
  size_t nproblems;       /* entries */
  sched_wl_event *events; /* Kueue workloads admitted or evicted, in decision order (owned) */
  size_t nevents;         /* entries */
  /* Kueue's admission attempts: each round of the Kueue cycle that had heads to try, with
   * whether it admitted one and how long it took (arena). */
  struct sched_attempt {
    bool admitted; /* at least one head was admitted */
    double s;      /* seconds */
  } * attempts;
  size_t nattempts; /* entries */
  q_report queues;  /* the ClusterQueues and LocalQueues after the cycle's decisions
                       (arena), as Kueue reports them */
  ts_arena arena;   /* private: owns decisions and messages */
} sched_result;

/* Runs one cycle over the pending pods of cfg->scheduler_name in the model: pods by
 * priority (highest first), then creation time, then namespace/name. The model is read,
 * never changed; decisions are returned in *out (initialised here; free with
 * sched_result_free). state (may be NULL) carries what earlier cycles decided; now_ns is the
 * cycle's clock. An error while deciding one gang (or queue, claim, node) is contained: its pods
 * are decided pending with a reason naming the object (SCHED_WHY_ERROR, or an inactive queue)
 * and every other pod is decided as without it. Fails only when out of memory. */
ts_rc sched_cycle(const model *m, const sched_config *cfg, sched_state *state, int64_t now_ns,
                  sched_result *out, ts_err *err);
void sched_result_free(sched_result *r); /* frees decisions and messages; r is then empty */
/* Applies a decision to m as the cluster shows it once carried out (replay, simulate): a BIND
 * binds the pod (on its GPU, for a share), an EVICT frees what the pod held; PENDING changes
 * nothing. */
ts_rc sched_decision_apply(model *m, const sched_decision *d);

/* The effective priority of a pod: spec.priority, else its PriorityClass's value, else the
 * global default PriorityClass's value, else 0. */
int32_t sched_pod_priority(const model *m, const model_pod *p);

/* The ClusterQueue a pod's workload is charged to (interned): its LocalQueue's, or the
 * Volcano or KAI Queue it names; NULL when it is not queued or the queue does not exist. */
const char *sched_pod_queue(const model *m, const model_pod *p);
/* A count under a name (the map's key is the name inside it). */
typedef struct sched_count {
  uint32_t n;
  char key[];
} sched_count;
/* Kueue's finished workloads still present: queued workloads (of cfg's scheduler) whose every
 * pod ended (Succeeded or Failed), counted into by_cq (ClusterQueue -> sched_count) and by_lq
 * ("ns/LocalQueue" -> sched_count), maps the caller initialised; the values are new (ts_free
 * each). Cost: one pass over the pods, a gang key per queued one. */
ts_rc sched_finished_workloads(const model *m, const sched_config *cfg, ts_map *by_cq,
                               ts_map *by_lq);
/* The Kueue quota tree of the model, charged with the gangs running through queues (their
 * flavors inferred from the nodes they run on; their claims' devices charged as cfg maps
 * them). The workloads it holds live in arena, which must outlive the tree. Returns new in
 * *out (q_tree_free). */
struct q_tree;
ts_rc sched_queue_tree(const model *m, const sched_config *cfg, ts_arena *arena,
                       struct q_tree **out, ts_err *err);

/* True for resources counted as GPUs when scoring: names ending in "/gpu" and NVIDIA MIG
 * resources ("nvidia.com/mig-..."). */
bool sched_is_gpu_resource(const model_resources *t, int id);

/* ---- explain: why a pending workload waits and where it stands ------------------------- */

#define SCHED_EXPLAIN_AHEAD 10 /* workloads ahead named */

/* One flavor-resource of the ClusterQueue a waiting workload asks for, in the quota tree's
 * units (q_format prints them; thousandths of a GPU): what its pending pods request, the queue's
 * quota and use, what its cohort could lend it now, and what is missing after both. */
typedef struct sched_quota_line {
  const char *flavor; /* interned */
  int resource;       /* resource id */
  int64_t request;    /* the workload's pending pods, in all */
  int64_t nominal;    /* the ClusterQueue's nominalQuota */
  int64_t usage;      /* reserved by the workloads it admitted */
  int64_t borrowed;   /* usage above nominal */
  int64_t borrowable; /* its cohort's unused quota beyond the queue's own (the cohort's
                         subtree quota less its usage), within its borrowingLimit; an upper
                         bound (other queues' lendingLimits are not subtracted); -1: no cohort */
  int64_t missing;    /* request less the queue's free quota and borrowable, at least 0 */
} sched_quota_line;

/* The node or topology domain with the most free of the resource that decides the workload's
 * placement, among the nodes its first pod's filters pass (node selector, affinity, taints). */
typedef struct sched_capacity_line {
  const char *level;  /* interned topology key, NULL: one node */
  const char *domain; /* the domain's label value or the node's name (borrowed) */
  int resource;       /* its first GPU resource, else cpu */
  int64_t demand;     /* what the workload's pending pods ask of it in all (a node: one pod) */
  int64_t free;       /* free there, before this cycle's placements */
} sched_capacity_line;

typedef enum sched_explain_state {
  SCHED_EXPLAIN_PENDING, /* pending, Tessera's: explained */
  SCHED_EXPLAIN_BOUND,   /* already bound or ended: nothing to explain */
  SCHED_EXPLAIN_NOT_OURS /* another scheduler's pod (spec.schedulerName), or being deleted */
} sched_explain_state;

typedef struct sched_explanation {
  const model_pod *pod;
  sched_explain_state state;
  const sched_decision *decision; /* the dry run's decision for it (BIND: it would be placed
                                     now), NULL when the cycle made none */
  const char *workload;           /* "PyTorchJob ns/name", "pod ns/name" */
  bool gang;                      /* its workload has several pods or a minimum above 1 */
  int32_t min;                    /* pods that must run together */
  uint32_t pending, bound;        /* its members pending and bound */
  const char *local_queue, *cluster_queue, *cohort; /* interned, NULL when none; cohort:
                                                       the root of its cohort tree */
  int32_t pos_lq, pos_cq, pos_cohort;     /* 0-based positions among the workloads left waiting
                                             by the cycle, in queue order (priority, then
                                             creation); -1 when not queued there */
  const char *ahead[SCHED_EXPLAIN_AHEAD]; /* the first workloads ahead in its ClusterQueue */
  uint32_t nahead;
  sched_quota_line *quota; /* per flavor-resource of its ClusterQueue it asks for */
  uint32_t nquota;
  sched_capacity_line *capacity; /* a node, then each topology level narrowest first (the
                                    levels only for a gang) */
  uint32_t ncapacity;
  uint32_t nodes, nodes_passing; /* nodes, and those its filters pass */
  const model_pod **victims;     /* pods the dry run's preemption evicts for it */
  uint32_t nvictims;
} sched_explanation;

/* Built from m and the result r of a cycle run on m with cfg at now_ns (the dry run); both
 * must outlive it. Explanations point into it: valid until sched_explainer_free. */
typedef struct sched_explainer sched_explainer;
ts_rc sched_explainer_new(const model *m, const sched_config *cfg, const sched_result *r,
                          int64_t now_ns, sched_explainer **out);
/* Explains pod p of the model; TS_EINVAL when p is not in it. */
ts_rc sched_explain(sched_explainer *x, const model_pod *p, sched_explanation *e);
void sched_explainer_free(sched_explainer *x);
/* A workload the dry run left waiting (borrowed from the explainer). */
typedef struct sched_waiting {
  const char *label;                       /* "PyTorchJob ns/name", "pod ns/name" */
  const char *ns;                          /* interned namespace */
  const char *name;                        /* its gang's or pod's name (within label) */
  const model_pod *first;                  /* a pending member */
  int32_t priority;                        /* highest pending member priority */
  int64_t created_ns;                      /* earliest pending member creation */
  const char *local_queue, *cluster_queue; /* interned, NULL when not queued */
  int32_t pos_lq, pos_cq;                  /* as in sched_explanation */
} sched_waiting;
/* The waiting workloads in queue order (priority, then creation), one per call from *it = 0;
 * false after the last. */
bool sched_explainer_next(const sched_explainer *x, size_t *it, sched_waiting *out);
/* The waiting workload pod p belongs to (a pending pod of cfg's scheduler that the dry run left
 * waiting); false when it is none. Costs its gang's key. */
bool sched_explainer_waiting(const sched_explainer *x, const model_pod *p, sched_waiting *out);

/* ---- GPU room: what the free GPUs can hold (rooms.c) ----------------------------------- */

/* One GPU model's GPUs on schedulable nodes (label nvidia.com/gpu.product; "" without). */
typedef struct sched_gpu_room {
  const char *model;                       /* interned */
  int64_t gpus, free;                      /* allocatable, and free */
  int64_t stranded;                        /* free on nodes no pending shape can use (0 when
                                              no shape is given) */
  int64_t largest[SCHED_MAX_TOPOLOGY + 1]; /* the most free in one node ([0]) and in one domain
                                              of cfg->topology[i] ([1 + i]) */
} sched_gpu_room;
/* The distinct shapes (requests and static filters) of the pods asking for GPUs among pods,
 * at most cap into out; how many. */
size_t sched_gpu_shapes(const model *m, const model_pod *const *pods, size_t npods,
                        const model_pod **out, size_t cap);
/* The room after cycle result res: weighed against the shapes of the pods it left pending
 * (*nshapes of them, at most SCHED_ROOM_SHAPES). */
#define SCHED_ROOM_SHAPES 64
ts_rc sched_gpu_rooms_after(const model *m, const sched_config *cfg, int64_t now_ns,
                            const sched_result *res, sched_gpu_room **out, size_t *nout,
                            size_t *nshapes);
/* The room of every GPU model, sorted by model (*out: ts_free). */
ts_rc sched_gpu_rooms(const model *m, const sched_config *cfg, int64_t now_ns,
                      const model_pod *const *shapes, size_t nshapes, sched_gpu_room **out,
                      size_t *nout);

/* ---- shadow: another scheduler's placements against Tessera's (tessera run --shadow) ----- */

#define SCHED_SHADOW_EXAMPLES 20            /* examples kept of each kind */
#define SCHED_SHADOW_GRACE_NS 10000000000LL /* a pod pending less long is not "left pending" */

typedef enum sched_shadow_kind {
  SCHED_SHADOW_PARTIAL,      /* a gang it bound partially */
  SCHED_SHADOW_SPLIT,        /* a gang it spread over more topology domains than Tessera would */
  SCHED_SHADOW_PLACEABLE,    /* a pod it left pending that Tessera would place now */
  SCHED_SHADOW_UNPLACEABLE,  /* a pod it bound that Tessera would have left pending */
  SCHED_SHADOW_ADMITTED,     /* a queued workload Tessera would have admitted and it did not */
  SCHED_SHADOW_NOT_ADMITTED, /* a queued workload it admitted and Tessera would not have */
  SCHED_SHADOW_PREEMPT,      /* a pod Tessera would preempt now */
  SCHED_SHADOW_KIND_COUNT
} sched_shadow_kind;
/* "partial", "split", "placeable", "unplaceable", "admitted", "not-admitted", "preempt". */
const char *sched_shadow_kind_name(sched_shadow_kind k);

typedef struct sched_shadow_example {
  sched_shadow_kind kind; /* what differs */
  const char *what;       /* "PodGroup team-a/x", "pod team-a/p" (arena) */
  const char *detail;     /* how (arena) */
} sched_shadow_example;

/* A ClusterQueue (or Volcano / KAI queue) the other scheduler's pods queue in. */
typedef struct sched_shadow_queue {
  const char *name;     /* interned */
  size_t workloads;     /* its workloads (gangs) among the pods */
  size_t admitted[2];   /* wholly placed: [0] as the other scheduler placed them, [1] as Tessera
                           would have (everything placed again) */
  size_t would_admit;   /* Tessera would admit now, from the cluster as it is */
  size_t would_preempt; /* workloads Tessera would preempt now */
} sched_shadow_queue;

/* One comparison. [0] is the cluster as the other scheduler placed its pods; [1] is the same
 * cluster with every one of those pods placed again by Tessera (its cycle, one pass, with the
 * configuration's queues, topology and scoring); "now" is what Tessera would do from the
 * cluster as it is. */
typedef struct sched_shadow {
  int64_t at_ns;               /* when */
  size_t pods;                 /* the other scheduler's pods (not finished) */
  size_t bound[2], pending[2]; /* placed and not */
  size_t gangs;                /* gangs of more than one pod */
  size_t partial[2];           /* gangs bound partially: some pods placed, and another that must
                                  start with them pending (past the grace, in [0]) */
  size_t split;                /* gangs it spread over more domains of the narrowest topology
                                  level in which Tessera kept them whole */
  size_t placeable;            /* pods pending past the grace that Tessera would place now */
  size_t unplaceable;          /* pods it placed that Tessera would have left pending */
  size_t preempt;              /* pods Tessera would evict now */
  int64_t gpus;                /* GPUs of the schedulable nodes */
  int64_t free_gpus[2];        /* free GPUs */
  int64_t stranded_gpus[2];    /* free GPUs on nodes where no pending shape fits */
  size_t shapes;               /* distinct shapes of the GPU pods pending in [0] or [1] */
  sched_shadow_queue *queues;  /* by name (arena) */
  size_t nqueues;              /* entries */
  size_t counts[SCHED_SHADOW_KIND_COUNT]; /* differences of each kind */
  sched_shadow_example *examples;         /* the first SCHED_SHADOW_EXAMPLES of each kind (arena) */
  size_t nexamples;                       /* entries */
  ts_arena arena;                         /* owns the above */
} sched_shadow;

/* Compares the placements of the pods of scheduler `name` (interned; NULL: every pod that is
 * not cfg->scheduler_name's) with Tessera's, at now_ns. The model is changed while this runs
 * (those pods are placed again by Tessera to measure [1]) and given back as it was: nothing
 * else may read it meanwhile. Free *out with sched_shadow_free. Fails only when out of
 * memory (the model is then given back too). */
ts_rc sched_shadow_eval(model *m, const sched_config *cfg, const char *name, int64_t now_ns,
                        sched_shadow *out, ts_err *err);
void sched_shadow_free(sched_shadow *s);

/* ---- GPUs per node pool (replay's summary, tessera run's metrics) ----------------------- */

#define SCHED_POOL_GPUS 16 /* GPU resource names summed per pool */

/* A node's pool: the first of its labels cloud.google.com/gke-nodepool,
 * eks.amazonaws.com/nodegroup, kubernetes.azure.com/agentpool, karpenter.sh/nodepool,
 * nvidia.com/gpu.product, node.kubernetes.io/instance-type; "(no pool label)" without any. */
const char *sched_node_pool(const model_node *n);
/* The GPU resources (sched_is_gpu_resource) of m into gpu, at most SCHED_POOL_GPUS. */
int sched_gpu_resources(const model *m, int *gpu);

typedef struct sched_pool {
  const char *name;               /* the pool (interned label value) */
  int nodes;                      /* nodes in it */
  int64_t used[SCHED_POOL_GPUS];  /* requested by counted pods, per GPU resource of gpu[] */
  int64_t alloc[SCHED_POOL_GPUS]; /* allocatable */
} sched_pool;
/* GPUs per pool (of the resources gpu[0..ngpu)), by pool name; at most cap pools (nodes of
 * further pools are left out). */
size_t sched_pools(const model *m, const int *gpu, int ngpu, sched_pool *pools, size_t cap);

#endif
