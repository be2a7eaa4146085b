/*
 * queueing/queueing.h - Kueue's admission semantics (v0.19), independent of pods: the quota
 * tree of ClusterQueues and Cohorts, usage accounting, flavor assignment, fair sharing,
 * preemption, queueing strategies and the admission cycle. Pure: libc, common and model only.
 *
 * How the pieces fit:
 *   q_tree    the quota tree built from the Kueue objects of a model (ClusterQueues, Cohorts,
 *             ResourceFlavors, LocalQueues) plus the usage of admitted workloads. It borrows
 *             from the model: rebuild it (q_tree_build, cheap) when Kueue objects change.
 *   q_queues  the pending workloads per ClusterQueue (active heap and inadmissible parking).
 *             A caller may keep them across cycles and trees (the benchmark and the conformance
 *             runner do); the scheduler rebuilds them every cycle from the pods (scratch), and
 *             keeps only the flavor-search memo (q_memo, Kueue's LastAssignment) across cycles.
 *   q_cycle   one admission cycle: at most one head per ClusterQueue, ordered, assigned,
 *             admitted or preempting, requeued. Hooks let the scheduler veto flavors whose
 *             nodes cannot hold the pods and commit (place) a workload before it is admitted.
 *
 * Amounts are in the units of model_resource_amount (cpu millicores, others whole units).
 * Strings marked "interned" come from ts_intern. Determinism: every tie is broken by names
 * or keys, never by pointers or hash order.
 */
#ifndef QUEUEING_H
#define QUEUEING_H

#include "common/ts.h"
#include "model/model.h"

/* ---- units ----------------------------------------------------------------------------- */

/* Amounts in the quota tree (quotas, pod sets' requests, usage) are in the model's units
 * (model_resource_amount), except nvidia.com/gpu: thousandths of a GPU, so that a pod sharing
 * a GPU (KAI's gpu-fraction) counts exactly its share against a quota, and a whole GPU 1000.
 * q_scale is that factor (1000 for nvidia.com/gpu, else 1); q_amount converts a quantity to
 * the tree's units, q_format an amount of the tree back ("1500m" GPUs, "2"). */
int64_t q_scale(const model_resources *t, int id);
ts_rc q_amount(const model_resources *t, int id, const ts_quantity *q, int64_t *out);
void q_format(const model_resources *t, int id, int64_t amount, char *out);

/* ---- DRA: device classes charged to quota ---------------------------------------------- */

/* Kueue's deviceClassMappings with a weight: each device of a mapped DeviceClass counts as
 * `weight` of the quota resource (1 for whole GPUs; e.g. 1/7 for a MIG 1g slice). */
typedef struct q_devmap_entry {
  const char *device_class; /* interned DeviceClass name */
  uint32_t slot;            /* its quota resource: index in q_devmap.res */
  ts_quantity weight;       /* per device, > 0 */
} q_devmap_entry;

/* Distinct quota resources the mappings may name. */
#define Q_DEVMAP_MAX_RESOURCES 16

typedef struct q_devmap {
  q_devmap_entry *v;                       /* owned */
  uint32_t n;                              /* entries */
  const char *res[Q_DEVMAP_MAX_RESOURCES]; /* interned quota resource names */
  uint32_t nres;                           /* entries */
} q_devmap;

/* Adds a mapping; weight is a quantity string ("1", "0.125", "250m"). TS_EINVAL (naming the
 * field) for a non-positive weight or a class mapped twice. */
ts_rc q_devmap_add(q_devmap *m, const char *device_class, const char *resource, const char *weight,
                   ts_err *err);
void q_devmap_free(q_devmap *m); /* frees the entries; m is then empty */

typedef struct q_device_request {
  const char *device_class; /* interned */
  int64_t count;            /* devices */
} q_device_request;

/* Adds the quota needed by a pod's device requests to out[slot] (slot: the index of the
 * resource in m->res; out has m->nres entries): per resource, the sum of count x weight,
 * rounded up once to the quota tree's units (q_amount: thousandths of cpu and nvidia.com/gpu).
 * TS_ENOTFOUND naming the class when a class is not mapped; out is untouched on failure. */
ts_rc q_devmap_quota(const q_devmap *m, const q_device_request *reqs, size_t n, int64_t *out,
                     ts_err *err);
/* Same for the requests of a ResourceClaim spec: `exactly` requests count; a `firstAvailable`
 * request counts as its first alternative; allocationMode All is TS_EUNSUPPORTED (as Kueue). */
ts_rc q_devmap_claim(const q_devmap *m, const model_claim_spec *spec, int64_t *out, ts_err *err);

/* ---- configuration --------------------------------------------------------------------- */

typedef enum q_fs_strategy {
  Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, /* rule S2-a */
  Q_FS_LESS_THAN_INITIAL_SHARE,           /* rule S2-b */
} q_fs_strategy;

/* Fault injection, for the tests that prove an error stays inside the object that caused it: one
 * stage fails for one object as an unexpected error would (TS_EFAULT). Zero in production. */
typedef enum q_fault_stage {
  Q_FAULT_NONE,   /* no fault */
  Q_FAULT_TREE,   /* building the ClusterQueue, Cohort, Volcano or KAI Queue named */
  Q_FAULT_ASSIGN, /* assigning flavors to the workload whose key ("ns/name") is named */
} q_fault_stage;

typedef struct q_fault {
  q_fault_stage stage; /* which stage fails */
  const char *object;  /* for which object (compared by text) */
} q_fault;

typedef struct q_config {
  bool fair_sharing;               /* fairSharing.enable */
  q_fs_strategy fs_strategies[2];  /* fairSharing.preemptionStrategies, in order */
  uint32_t nfs_strategies;         /* 1 or 2 */
  bool partial_admission;          /* PartialAdmission feature gate (on by default) */
  bool priority_sorting_in_cohort; /* PrioritySortingWithinCohort gate (on by default) */
  bool preempt_within_nominal;     /* FairSharingPreemptWithinNominal (beta, on): a preemptor
                                      whose queue stays within its nominal quota reclaims from
                                      borrowing queues whatever their shares */
  bool prioritize_non_borrowing;   /* FairSharingPrioritizeNonBorrowing (beta, on): in the
                                      fair-sharing tournament, heads that would not borrow on
                                      their flavors go before those that would */
  bool manage_jobs_without_queue;  /* manageJobsWithoutQueueName: the scheduler holds pods
                                      without a queue name (not used by the cycle here) */
  q_devmap devmap;                 /* deviceClassMappings (owned: q_config_free); the
                                      scheduler charges claims' devices with it */
  q_fault fault;                   /* tests only: a stage that fails for one object */
} q_config;

/* Kueue v0.19's defaults: no fair sharing, strategies S2-a then S2-b, the gates above on, no
 * device class mappings. */
void q_config_default(q_config *c);
/* Frees what c owns (the device class mappings); c is then empty, as after the default. */
void q_config_free(q_config *c);

/* ---- workloads ------------------------------------------------------------------------- */

typedef enum q_mode {
  Q_NO_FIT,  /* quota cannot hold it, even with preemption */
  Q_PREEMPT, /* it fits only when some admitted workloads are preempted */
  Q_FIT,     /* it fits in unused quota (possibly borrowing) */
} q_mode;

const char *q_mode_name(q_mode m); /* "NoFit", "Preempt", "Fit"; borrowed, static */

/* A group of identical pods (Kueue's podSet). */
typedef struct q_podset {
  const char *name;                    /* interned pod set name */
  int32_t count;                       /* pods wanted */
  int32_t min_count;                   /* partial admission minimum; 0 = count (not reducible) */
  const model_rq *requests;            /* borrowed: per-pod requests, sorted by resource id */
  uint32_t nrequests;                  /* entries in requests */
  const model_toleration *tolerations; /* borrowed: pod tolerations (vs flavor nodeTaints) */
  uint32_t ntolerations;               /* entries */
  const model_labels *node_selector;   /* borrowed or NULL: pod nodeSelector (vs nodeLabels) */
} q_podset;

/* The flavor assigned to one resource of a pod set. */
typedef struct q_rflavor {
  uint16_t resource;  /* resource id */
  const char *flavor; /* interned flavor name */
  int64_t total;      /* per-pod request x count */
  q_mode mode;        /* FIT or PREEMPT (what this resource needed) */
} q_rflavor;

/* The admission of one pod set. */
typedef struct q_psa {
  const char *name; /* interned pod set name */
  int32_t count;    /* pods admitted (lower than wanted under partial admission) */
  q_rflavor *rf;    /* one per requested resource */
  uint32_t nrf;     /* entries */
  q_mode mode;      /* worst mode of the pod set */
} q_psa;

/* What a workload was (or would be) admitted with: Kueue's status.admission. */
typedef struct q_admission {
  const char *cluster_queue; /* interned */
  q_psa *podsets;            /* one per pod set, in the workload's order */
  uint32_t npodsets;         /* entries */
} q_admission;

/* A workload, independent of pods (a gang, a Job, a test vector). The caller owns it and
 * keeps it alive and unchanged while it is queued or admitted in a tree. */
typedef struct q_workload {
  const char *ns;               /* interned namespace */
  const char *name;             /* borrowed */
  const char *key;              /* borrowed "ns/name": identity and last tie-breaker */
  const char *local_queue;      /* interned LocalQueue name (kueue.x-k8s.io/queue-name) */
  const char *cluster_queue;    /* interned queue named directly (a Volcano or KAI Queue, which
                                   the tree holds as a ClusterQueue), when local_queue is NULL */
  model_kind queue_kind;        /* its kind: MODEL_VOLCANO_QUEUE or MODEL_KAI_QUEUE */
  int32_t priority;             /* effective priority */
  int64_t queue_ns;             /* queue order time: creation time, or last requeue time */
  int64_t admitted_ns;          /* admitted ones: when quota was reserved (0 = unknown) */
  q_podset *podsets;            /* borrowed pod sets */
  uint32_t npodsets;            /* entries */
  const q_admission *admission; /* borrowed: non-NULL for a workload already admitted */
  bool evicting;                /* an eviction of it is already in progress */
  bool resume;                  /* the missing pods of a gang that runs below its minimum (a
                                   write failed): its quota was reserved when the gang was
                                   admitted, so it goes ahead of everything that waits */
  void *user;                   /* the caller's handle; never touched */
} q_workload;

/* Kueue's priority of a workload: the WorkloadPriorityClass wpc (interned name or NULL) when
 * it exists, else the PriorityClass pc, else the global default PriorityClass, else 0. */
int32_t q_priority(const model *m, const char *wpc, const char *pc);

/* ---- the quota tree -------------------------------------------------------------------- */

typedef struct q_tree q_tree;

/* Builds the quota tree from the Kueue objects of m (borrowed: m must outlive the tree and
 * its Kueue objects stay unchanged). Problems in the objects (a cohort cycle, nesting deeper
 * than 32, a missing flavor, a quota out of range, any error building one of them) do not fail
 * the build: the ClusterQueues concerned (the object's, and every one under a cohort concerned)
 * become inactive and each problem is recorded (q_tree_problems), whatever order the objects
 * come in. A stopped queue is inactive too, but no problem. cfg (may be NULL) is read for its
 * fault only. Returns new in *out; fails only when out of memory. Cost: O(objects log objects +
 * queues x flavor-resources), no recursion deeper than 32. */
ts_rc q_tree_build(const model *m, const q_config *cfg, q_tree **out, ts_err *err);
void q_tree_free(q_tree *t); /* NULL is a no-op; the admitted workloads stay the caller's */

/* The problems found while building, each naming the object and field, e.g.
 * "Cohort a: spec.parentName: cycle a -> b -> a". Borrowed, valid until q_tree_free. */
size_t q_tree_problems(const q_tree *t, const char *const **out);
/* The object a problem names ("ClusterQueue x: ...", "LocalQueue ns/x: ...") in m, or NULL
 * (an implicit cohort has no object). */
const model_obj *q_problem_object(const model *m, const char *problem);
/* TS_OK when there is no problem, else TS_EINVAL with the first problem in err. */
ts_rc q_tree_check(const q_tree *t, ts_err *err);

/* Charges an admitted workload (wl->admission set) to its ClusterQueue and cohorts. The tree
 * keeps a copy of the admission and borrows wl until q_tree_remove. TS_ENOTFOUND when the
 * ClusterQueue does not exist, TS_EEXIST when wl->key is admitted already. */
ts_rc q_tree_admit(q_tree *t, const q_workload *wl, ts_err *err);
/* Removes an admitted workload (finished or evicted); TS_ENOTFOUND when it is not admitted. */
ts_rc q_tree_remove(q_tree *t, const char *key);
/* The admission of an admitted workload, or NULL. Borrowed, valid until it is removed. */
const q_admission *q_tree_admission(const q_tree *t, const char *key);
/* Admitted workloads in key order: for (i = 0; (wl = q_tree_admitted(t, i, &a)); i++).
 * O(n log n) after a change (sorted lazily), O(1) otherwise. */
const q_workload *q_tree_admitted(q_tree *t, size_t i, const q_admission **adm);

/* Per ClusterQueue, flavor and resource (names interned): usage, nominal quota and what is
 * available now (own unused quota plus what the cohort tree lends, within the limits).
 * TS_ENOTFOUND for an unknown queue, flavor or resource. */
typedef struct q_usage {
  int64_t usage;     /* charged by admitted workloads */
  int64_t nominal;   /* nominalQuota */
  int64_t borrowed;  /* usage above nominal */
  int64_t available; /* what one more workload could get now */
  int64_t potential; /* the most it could ever get (empty cluster) */
} q_usage;
ts_rc q_tree_usage(const q_tree *t, const char *cq, const char *flavor, int resource, q_usage *out);
/* The weighted dominant resource share of a ClusterQueue (0 when it borrows nothing,
 * +inf when it borrows with weight 0), as Kueue reports it. */
double q_tree_share(const q_tree *t, const char *cq);
/* True when the ClusterQueue exists and is active. */
bool q_tree_cq_active(const q_tree *t, const char *cq);
/* Why the ClusterQueue is inactive, as Kueue's condition reason ("FlavorNotFound",
 * "CohortCycle", "Stopped"), and in *problem (may be NULL) the problem that made it so without
 * its "ClusterQueue NAME: " (borrowed from t); NULL when it is active or unknown. */
const char *q_tree_cq_inactive(const q_tree *t, const char *cq, const char **problem);

/* ---- pending workloads ----------------------------------------------------------------- */

typedef struct q_queues q_queues;

q_queues *q_queues_new(void); /* returns new, NULL when out of memory */
void q_queues_free(q_queues *qs);

typedef enum q_queued {
  Q_QUEUED,           /* in its ClusterQueue's queue */
  Q_NO_LOCAL_QUEUE,   /* its LocalQueue does not exist (waits, queued nowhere) */
  Q_NO_CLUSTER_QUEUE, /* its LocalQueue points to a missing ClusterQueue, or the queue it
                         names directly is not a ClusterQueue of the tree (waits) */
  Q_HELD,             /* its LocalQueue is stopped (stopPolicy Hold or HoldAndDrain) */
} q_queued;
/* True when t holds a ClusterQueue of that name made of an object of that kind
 * (MODEL_CLUSTER_QUEUE, MODEL_VOLCANO_QUEUE, MODEL_KAI_QUEUE): a Volcano or KAI parent queue is
 * a cohort, and a queue whose name another kind took is left out. */
bool q_tree_has_cq(const q_tree *t, const char *name, model_kind kind);
/* The ClusterQueue a workload's LocalQueue points to in t (interned), or the one it names
 * directly when the tree holds it, or NULL. */
const char *q_tree_cq_of(const q_tree *t, const q_workload *wl);

/* Adds a pending workload (borrowed until removed) to the queue of the ClusterQueue its
 * LocalQueue points to in t. A workload that cannot be queued yet is remembered and placed by
 * q_queues_sync. O(log n + n) per add (sorted array, memmove). */
ts_rc q_queues_add(q_queues *qs, const q_tree *t, q_workload *wl, q_queued *how);
/* Forgets a pending workload (admitted elsewhere, deleted); false when it is not there. */
bool q_queues_remove(q_queues *qs, const char *key);
/* Re-resolves LocalQueues after a tree rebuild: waiting workloads get queued, workloads whose
 * ClusterQueue changed move. */
ts_rc q_queues_sync(q_queues *qs, const q_tree *t);
/* Moves the parked (inadmissible) workloads of every ClusterQueue sharing a root cohort with
 * cq (or of every queue when cq is NULL) back to the active heap: call it when quota is
 * released (a workload finished or was evicted, a queue changed). */
void q_queues_wake(q_queues *qs, const q_tree *t, const char *cq);

/* Pending workloads of a ClusterQueue, in queue order (active) or key order (parked), e.g.
 * for `tessera replay`. Borrowed array valid until the next change of qs. */
size_t q_queues_active(q_queues *qs, const char *cq, q_workload *const **out);
size_t q_queues_parked(q_queues *qs, const char *cq, q_workload *const **out);
/* ClusterQueue names (interned) that have pending workloads, sorted. Borrowed as above. */
size_t q_queues_cluster_queues(q_queues *qs, const char *const **out);

/* ---- what the queues report: Kueue's ClusterQueue / LocalQueue status and metrics -------- */

/* One flavor-resource of a queue, in the resource's units (model_resource_format prints it). */
typedef struct q_fr_report {
  const char *flavor;       /* interned */
  int resource;             /* resource id */
  int64_t usage;            /* charged by the workloads holding quota */
  int64_t nominal;          /* ClusterQueues: nominalQuota (LocalQueues: 0) */
  int64_t borrowed;         /* ClusterQueues: usage above nominal */
  bool has_borrowing_limit; /* ClusterQueues: borrowingLimit set */
  int64_t borrowing_limit;  /* the limit, when set */
  bool has_lending_limit;   /* ClusterQueues: lendingLimit set */
  int64_t lending_limit;    /* the limit, when set */
} q_fr_report;

/* An amount of one resource. */
typedef struct q_res_amount {
  int resource;   /* resource id */
  int64_t amount; /* in the resource's units */
} q_res_amount;

typedef struct q_cq_report {
  const char *name;              /* interned */
  model_kind kind;               /* MODEL_CLUSTER_QUEUE, or the Volcano or KAI Queue it is */
  const char *cohort;            /* interned cohort name, NULL when none */
  const char *root;              /* interned root of its cohort tree, NULL when none */
  int64_t generation;            /* its metadata.generation (0 for Volcano's, KAI's) */
  uint32_t pending_active;       /* pending workloads in the active queue (0 when inactive) */
  uint32_t pending_inadmissible; /* pending workloads parked as inadmissible, and those of the
                                    active queue when the queue is inactive (as Kueue counts) */
  q_res_amount *pending_res;     /* what its pending workloads request in all, per resource the
                                    quota tree covers: its own resources first (0 included) */
  uint32_t npending_res;         /* entries */
  uint32_t admitted;             /* workloads holding quota */
  double weighted_share;         /* q_tree_share: +inf when it borrows with weight 0 */
  const char *inactive;          /* Kueue's Active=False reason, NULL when active */
  const char *problem;           /* the problem behind it (copied into the arena), or NULL */
  q_fr_report *frs;              /* every flavor-resource of its resource groups, spec order */
  uint32_t nfrs;                 /* entries */
} q_cq_report;

typedef struct q_lq_report {
  const char *ns, *name;         /* interned */
  const char *cluster_queue;     /* interned spec.clusterQueue */
  int64_t generation;            /* its metadata.generation */
  uint32_t pending_active;       /* as in q_cq_report, for its workloads */
  uint32_t pending_inadmissible; /* ditto */
  uint32_t admitted;             /* its workloads holding quota */
  const char *inactive;          /* Kueue's Active=False reason ("Stopped" first, then
                                    "ClusterQueueDoesNotExist", "ClusterQueueIsInactive"),
                                    NULL when active */
  q_fr_report *frs;              /* flavor-resources its workloads use (usage only) */
  uint32_t nfrs;                 /* entries */
} q_lq_report;

/* A cohort of the quota tree, with Kueue's subtree figures. */
typedef struct q_cohort_report {
  const char *name;      /* interned */
  const char *parent;    /* interned parent cohort, NULL for a root */
  const char *root;      /* interned root of its tree (itself for a root) */
  double weighted_share; /* its dominant resource share over its weight (+inf: weight 0) */
  uint32_t admitted;     /* workloads holding quota in the queues under it */
  q_fr_report *frs;      /* per flavor-resource: nominal = its subtree quota, usage = what the
                            queues under it reserve; those with either above 0, FR order */
  uint32_t nfrs;         /* entries */
} q_cohort_report;

typedef struct q_report {
  q_cq_report *cqs;         /* every ClusterQueue of the tree, by name */
  size_t ncqs;              /* entries */
  q_cohort_report *cohorts; /* every cohort of the tree, by name */
  size_t ncohorts;          /* entries */
  q_lq_report *lqs;         /* every LocalQueue of the model, by namespace/name */
  size_t nlqs;              /* entries */
} q_report;

/* What t and qs hold now, per ClusterQueue and LocalQueue, in arena a (which must outlive
 * *out; names are interned). Cost: O(queues x flavor-resources + workloads). */
ts_rc q_report_build(const q_tree *t, q_queues *qs, ts_arena *a, q_report *out);

/* Kueue's LastAssignment: where each pending workload's flavor search stopped, so that the
 * next attempt resumes with the following flavor instead of retrying the same one (flavor
 * fungibility), per ClusterQueue generation (advanced when an admitted workload leaves or
 * the queue's quota changes; a record from the previous cycle stays usable, as Kueue's
 * FlavorFungibilityPreserveScanProgress). A q_queues keeps its own; a caller that rebuilds
 * its queues every cycle keeps one memo across them and lends it with q_queues_set_memo. */
typedef struct q_memo q_memo;
q_memo *q_memo_new(void); /* returns new, NULL when out of memory */
void q_memo_free(q_memo *mm);
/* qs uses mm (borrowed; NULL: its own again) from now on. */
void q_queues_set_memo(q_queues *qs, q_memo *mm);

/* ---- the admission cycle --------------------------------------------------------------- */

/* What the flavor assigner proposes for one pod set: the scheduler's placement check
 * (`placeable`) may veto it, and the flavor is then treated as NoFit for this attempt. */
typedef struct q_candidate {
  const q_workload *wl;            /* the head being assigned */
  uint32_t podset;                 /* index of the pod set */
  int32_t count;                   /* pods of the pod set in this attempt */
  const char *flavor;              /* interned flavor name */
  const model_resource_flavor *rf; /* borrowed: its ResourceFlavor (nodeLabels, taints) */
  q_mode mode;                     /* FIT or PREEMPT: what quota alone says */
} q_candidate;

typedef struct q_hooks {
  /* Optional. Can the pods of c be placed on nodes of c->flavor? Return false with a short
   * reason in why (NUL-terminated, at most whycap bytes) to veto the flavor. */
  bool (*placeable)(void *ctx, const q_candidate *c, char *why, size_t whycap);
  /* Optional. Called right before a head that fits is admitted: the scheduler places every
   * pod for real on its tentative view. Return false (reason in why) to refuse: the head is
   * then skipped as "no longer fits" and requeued, and nothing is charged. */
  bool (*commit)(void *ctx, const q_workload *wl, const q_admission *adm, char *why, size_t whycap);
  void *ctx; /* passed to the hooks */
} q_hooks;

typedef enum q_outcome {
  Q_ADMITTED,     /* quota reserved (and committed); charged to the tree */
  Q_PREEMPTING,   /* victims chosen; the head waits at the front for them to go */
  Q_PENDING,      /* not admitted this cycle; reason says why */
  Q_INADMISSIBLE, /* cannot be considered (namespace not selected, queue inactive) */
} q_outcome;

typedef enum q_preempt_reason {
  Q_IN_CLUSTER_QUEUE,             /* InClusterQueue */
  Q_IN_COHORT_RECLAMATION,        /* InCohortReclamation */
  Q_IN_COHORT_FAIR_SHARING,       /* InCohortFairSharing */
  Q_IN_COHORT_RECLAIM_WHILE_BORR, /* InCohortReclaimWhileBorrowing */
} q_preempt_reason;

const char *q_preempt_reason_name(q_preempt_reason r); /* "InClusterQueue", ...; static */

typedef struct q_victim {
  const q_workload *wl;        /* borrowed: the admitted workload to evict */
  const q_workload *preemptor; /* borrowed: the head it makes room for */
  q_preempt_reason reason;     /* why */
} q_victim;

typedef struct q_decision {
  const q_workload *wl;  /* borrowed: the head */
  q_outcome outcome;     /* what happened */
  q_admission admission; /* ADMITTED: the admission; PREEMPTING: what it waits for */
  const char *reason;    /* PENDING / INADMISSIBLE / PREEMPTING: a sentence (arena) */
  size_t victim0;        /* PREEMPTING: first victim in q_result.victims */
  size_t nvictims;       /* PREEMPTING: victims */
  bool parked;           /* requeued as inadmissible (waits for quota to be released) */
  bool failed;           /* evaluating it failed (reason names it and the error); contained to
                            it: the cycle went on for the others */
} q_decision;

typedef struct q_result {
  q_decision *decisions; /* one per head, in processing order (arena) */
  size_t ndecisions;     /* entries */
  q_victim *victims;     /* every preemption issued (arena) */
  size_t nvictims;       /* entries */
  ts_arena arena;        /* private: owns the arrays and the strings */
} q_result;

/* Runs one admission cycle over the heads of qs: takes at most one head per active
 * ClusterQueue, assigns flavors (calling hooks->placeable per candidate flavor), orders the
 * heads (Kueue's classical or fair-sharing order), and admits them in that order, so that
 * quota taken earlier in the cycle counts against later heads. Admitted workloads are
 * charged to t (the tree keeps them) and leave qs; preempting heads keep their place at the
 * front of their queue; the others are requeued or parked per queueing strategy. Victims are
 * reported, not removed: call q_tree_remove when their eviction is observed, and
 * q_queues_wake. hooks may be NULL. now_ns is the cycle's clock. *out is initialised here
 * (free with q_result_free) even on failure. Cost: O(heads x (flavors x resources +
 * candidates)) plus O(queues x flavor-resources) per cycle. */
ts_rc q_cycle(q_tree *t, q_queues *qs, const q_config *cfg, const q_hooks *hooks, int64_t now_ns,
              q_result *out, ts_err *err);
void q_result_free(q_result *r); /* frees its arena; r is then empty */

#endif
