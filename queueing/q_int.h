/*
 * queueing/q_int.h - internals of the queueing module: the resource nodes of the quota tree
 * (Kueue's resourceNode arithmetic), admitted-workload records, assignments, preemption and
 * the per-cycle context. Only queueing/ and its tests include this header.
 *
 * Flavor-resources ("FR") are dense indices: fr = flavor * nres + resource slot, so that every
 * node keeps its quotas and usage in flat int64 arrays of t->nfr entries.
 */
#ifndef Q_INT_H
#define Q_INT_H

#include "queueing/queueing.h"

#define Q__NONE       INT64_MIN /* an absent borrowingLimit / lendingLimit */
#define Q__MAX_GROUPS 16        /* resource groups per queue (Kueue's CRD limit) */
#define Q__MAX_DEPTH  32        /* cohort nesting we accept; deeper is reported as a problem */
#define Q__MSG_MAX    512       /* one reason sentence */

/* ---- the quota tree -------------------------------------------------------------------- */

/* A ClusterQueue or a Cohort: quotas and usage per FR (Kueue's resourceNode). */
typedef struct q__node q__node;
struct q__node {
  const char *name;        /* interned */
  q__node *parent;         /* the cohort, NULL for roots and for queues without one */
  bool is_cq;              /* a ClusterQueue (else a Cohort) */
  uint32_t index;          /* position in t->cqs or t->cohorts */
  bool active;             /* false: in a cohort cycle, stopped, or missing a flavor */
  int depth;               /* 0 for roots */
  double weight;           /* fairSharing.weight */
  int64_t *nominal;        /* [nfr] own nominalQuota */
  int64_t *blimit;         /* [nfr] borrowingLimit, Q__NONE when absent */
  int64_t *llimit;         /* [nfr] lendingLimit, Q__NONE when absent */
  int64_t *subtree;        /* [nfr] own quota plus what children lend (SubtreeQuota) */
  int64_t *usage;          /* [nfr] usage counted against subtree (Usage) */
  q__node **kids;          /* cohorts: child cohorts then child queues, each sorted by name */
  uint32_t nkid_cohorts;   /* leading entries of kids that are cohorts */
  uint32_t nkids;          /* entries of kids */
  int height;              /* cohorts: distance to the furthest leaf (getNodeHeight) */
  int64_t *lendable;       /* cohorts: [nres] calculateLendable, fixed per tree */
  int mark;                /* build: nesting check state */
  const model_cohort *obj; /* cohorts: the Cohort object, NULL when implicit */
  uint8_t cause;           /* cohorts: why it is inactive (q__cause), Q__CAUSE_NONE if active */
  const char *cause_text;  /* cohorts: the problem behind the cause (in t->problems), or NULL */
};

/* Why a cohort is inactive; the queues under it are inactive for the same cause. */
typedef enum q__cause {
  Q__CAUSE_NONE,   /* active */
  Q__CAUSE_CYCLE,  /* in a cycle of parents, or under one */
  Q__CAUSE_DEEP,   /* nested deeper than Q__MAX_DEPTH, or under such a cohort */
  Q__CAUSE_BROKEN, /* its own definition failed to build (cause_text says how), or an ancestor's */
} q__cause;

/* One resource group of a ClusterQueue: resources and flavors in order. */
typedef struct q__group {
  uint16_t *res;     /* resource ids covered */
  uint32_t nres;     /* entries */
  uint16_t *flavors; /* flavor indices, in preference order */
  uint32_t nflavors; /* entries */
} q__group;

typedef struct q__adm q__adm;

typedef struct q__cq {
  q__node node;                   /* first member: a q__cq is a q__node */
  const model_cluster_queue *obj; /* borrowed from the model */
  q__group *groups;               /* resource groups */
  uint32_t ngroups;               /* entries */
  int8_t *group_of;               /* [tree's nids] resource id -> group index, -1 when
                                     not covered */
  uint32_t nids;                  /* entries of group_of */
  const char *inactive;           /* why it is inactive (tree arena), or NULL */
  const char *problem;            /* the problem that made it so, without "ClusterQueue
                                     NAME: " (in t->problems), or NULL */
  TS_VEC(q__adm *) adm;           /* admitted workloads charged here, unordered */
  uint64_t removed;               /* admitted workloads removed since the build */
} q__cq;

/* An admitted workload as the tree keeps it: one allocation holding the record, its usage
 * per FR and a deep copy of its admission. */
struct q__adm {
  const q_workload *wl; /* borrowed from the caller */
  q__cq *cq;            /* where it is charged */
  uint32_t *fr;         /* FRs it uses */
  int64_t *amount;      /* amount per FR */
  uint32_t nuse;        /* entries of fr / amount */
  q_admission a;        /* copy of the admission (strings interned) */
  bool evicting;        /* a preemption was issued for it */
  uint32_t slot;        /* index in cq->adm */
};

typedef struct q__lq {
  const char *cq; /* interned spec.clusterQueue */
  bool held;      /* stopPolicy Hold or HoldAndDrain */
} q__lq;

struct q_tree {
  const model *m;                     /* borrowed */
  ts_arena arena;                     /* nodes, arrays, names: tree lifetime */
  uint32_t nflavors;                  /* flavors known (referenced or defined) */
  const char **fname;                 /* [nflavors] interned names */
  const model_resource_flavor **fobj; /* [nflavors] ResourceFlavor or NULL (missing) */
  uint32_t nres;                      /* distinct covered resources */
  uint32_t nids;                      /* resource ids in the model's table at the build */
  uint16_t *res_id;                   /* [nids] slot -> resource id */
  int32_t *res_slot;                  /* [nids] resource id -> slot, -1 when not covered */
  uint32_t nfr;                       /* nflavors x nres */
  q__cq **cqs;                        /* sorted by name */
  uint32_t ncqs;                      /* entries */
  q__node **cohorts;                  /* sorted by name */
  uint32_t ncohorts;                  /* entries */
  ts_map cq_by_name;                  /* name -> q__cq */
  ts_map cohort_by_name;              /* name -> q__node */
  ts_map flavor_by_name;              /* name -> flavor index + 1 (as a pointer value) */
  ts_map lq_by_key;                   /* "ns/name" -> q__lq */
  ts_map adm_by_key;                  /* workload key -> q__adm */
  TS_VEC(char *) problems;            /* owned messages */
  TS_VEC(q__adm *) sorted;            /* admitted records by key, rebuilt lazily */
  bool sorted_ok;                     /* sorted is current */
  const q_memo *synced_by;            /* the memo that synced with it last, NULL when none */
  const char *froot[2];               /* root cohorts of Volcano's, KAI's queues, or NULL */
  const q_fault *fault;               /* the configuration's injected fault, or NULL */
};

/* The slot of a resource id, -1 when no queue of the tree covers it. */
static inline int q__slot(const q_tree *t, int res_id) {
  return (uint32_t)res_id < t->nids ? t->res_slot[res_id] : -1;
}
/* The group of cq covering a resource id, -1 when none does. */
static inline int q__group_of(const q__cq *cq, int res_id) {
  return (uint32_t)res_id < cq->nids ? cq->group_of[res_id] : -1;
}

static inline uint32_t q__fr(const q_tree *t, uint32_t flavor, int res_id) {
  return flavor * t->nres + (uint32_t)t->res_slot[res_id];
}
static inline uint32_t q__fr_flavor(const q_tree *t, uint32_t fr) {
  return fr / t->nres;
}
static inline int q__fr_res(const q_tree *t, uint32_t fr) {
  return t->res_id[fr % t->nres];
}

q__cq *q__cq_get(const q_tree *t, const char *name);
/* n zeroed bytes of the tree's arena (at least one), NULL when out of memory. */
void *q__zalloc(q_tree *t, size_t n);
/* Records a problem message ("Kind name: field: what"); TS_ENOMEM when it cannot. */
ts_rc q__problem(q_tree *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a flavor by name (rf: its ResourceFlavor, NULL when only referenced). */
ts_rc q__add_flavor(q_tree *t, const char *name, const model_resource_flavor *rf);
/* "ClusterQueue", "Cohort", "Volcano Queue", "KAI Queue": what an object is, for messages. */
const char *q__kind_label(model_kind k);

/* Volcano's and KAI's queues as tree objects (foreign.c): arena copies to build with the Kueue
 * objects. Sets t->froot for the kinds present and registers their flavors. */
typedef struct q__foreign {
  model_obj **cqs; /* model_cluster_queue copies, cohort set */
  size_t ncqs;
  model_obj **cohorts; /* model_cohort made of parent queues */
  size_t ncohorts;
} q__foreign;
ts_rc q__foreign_build(q_tree *t, q__foreign *out);
int q__flavor_index(const q_tree *t, const char *name); /* -1 when unknown */
q__node *q__root(q__node *n);
/* Saves / restores the usage of every node (a cycle's snapshot). buf holds
 * q__usage_words(t) int64 values. */
size_t q__usage_words(const q_tree *t);
void q__usage_save(const q_tree *t, int64_t *buf);
void q__usage_restore(q_tree *t, const int64_t *buf);

/* ---- resource node arithmetic (node.c), Kueue's resource_node.go ----------------------- */

int64_t q__guaranteed(const q__node *n, uint32_t fr);
int64_t q__local_available(const q__node *n, uint32_t fr);
/* Capacity left for n now (may be negative on overadmission); q__available clamps at 0. */
int64_t q__available_raw(const q__node *n, uint32_t fr);
int64_t q__available(const q__node *n, uint32_t fr);
/* The most n could get with no usage anywhere, within borrowing limits. */
int64_t q__potential(const q__node *n, uint32_t fr);
void q__add_usage(q__node *n, uint32_t fr, int64_t v);
void q__remove_usage(q__node *n, uint32_t fr, int64_t v);
/* A queue borrows with v more when nominal < usage + v; a cohort when subtree < usage + v. */
bool q__borrowing_with(const q__node *n, uint32_t fr, int64_t v);
/* Usage within subtree quota for every FR of frs. */
bool q__within_nominal(const q__node *n, const uint32_t *frs, uint32_t nfrs);
/* Kueue's QuantitiesFitInQuota: fits, and rem[i] = max(0, v[i] - local available). */
bool q__fits_in_quota(const q__node *n, const uint32_t *fr, const int64_t *v, uint32_t nv,
                      int64_t *rem);
/* Height of the lowest subtree that fits v more of fr (0 = the queue itself); *partial is
 * true when that subtree is smaller than the whole cohort tree. */
int q__find_height(const q__node *cq, uint32_t fr, int64_t v, bool *partial);

/* A dominant resource share (Kueue's DRS). */
typedef struct q__drs {
  double ratio;   /* unweighted, per mille of what the parent lends */
  double weight;  /* fairSharing.weight */
  bool borrowing; /* usage above quota for some resource */
} q__drs;

q__drs q__share(const q_tree *t, const q__node *n);
/* -1, 0, 1: a lower share is preferred for admission, a higher one for preemption. */
int q__drs_cmp(q__drs a, q__drs b);
bool q__drs_zero(q__drs d);
double q__drs_value(q__drs d); /* weighted share, +inf when borrowing with weight 0 */

/* ---- admitted workloads (adm.c) -------------------------------------------------------- */

/* Builds an admitted record for wl with admission a on cq (new, malloc'd). */
ts_rc q__adm_new(q_tree *t, q__cq *cq, const q_workload *wl, const q_admission *a, q__adm **out,
                 ts_err *err);
void q__adm_charge(q_tree *t, q__adm *r);   /* adds its usage to the nodes */
void q__adm_uncharge(q_tree *t, q__adm *r); /* removes it */
/* Links a charged record into its queue and the key map (the tree owns it from then on). */
ts_rc q__adm_link(q_tree *t, q__adm *r);
bool q__adm_uses(const q__adm *r, const uint32_t *frs, uint32_t nfrs);

/* ---- the cycle context ----------------------------------------------------------------- */

typedef struct q__ctx {
  q_tree *t;            /* the tree, used as the cycle's snapshot */
  const q_config *cfg;  /* configuration */
  const q_hooks *hooks; /* never NULL (an empty set when the caller gave none) */
  ts_arena *arena;      /* per-cycle memory */
  int64_t now;          /* cycle clock */
  void *scratch;        /* reusable temporary memory (q__scratch), freed by q_cycle */
  size_t scratch_size;  /* bytes in scratch */
} q__ctx;

/* Formats a sentence into the cycle arena; never NULL ("" when out of memory). */
const char *q__msg(q__ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Temporary memory of at least n bytes, aligned for any type, valid until the next call;
 * NULL when out of memory. Reused so that repeated searches do not grow the arena. */
void *q__scratch(q__ctx *c, size_t n);
/* A stable merge sort with a context (qsort has none); tmp holds n elements. */
typedef int (*q__cmp_fn)(const void *a, const void *b, const void *ctx);
void q__sort(void *base, size_t n, size_t size, q__cmp_fn cmp, const void *ctx, void *tmp);

/* Kueue's preemption modes inside the flavor assigner, worst first. */
typedef enum q__pmode {
  Q__P_NOFIT,
  Q__P_NOCAND, /* preemption could help but found no target */
  Q__P_PREEMPT,
  Q__P_RECLAIM,
  Q__P_FIT,
} q__pmode;

/* The result of assigning flavors to a workload. */
typedef struct q__asg {
  q_psa *ps;        /* pod set assignments (arena) */
  uint32_t nps;     /* entries */
  uint32_t *fr;     /* total usage: FRs (arena) */
  int64_t *amount;  /* total usage: amounts */
  uint32_t nuse;    /* entries */
  int borrow;       /* borrowing level (0 = none) */
  q_mode mode;      /* representative (worst) mode */
  const char *msg;  /* why it is not Fit (arena), or NULL */
  int16_t *next;    /* [nps x ngroups] where the flavor search of each pod set and group
                       resumes next time (Kueue's LastTriedFlavorIdx + 1; 0 = from the start) */
  uint32_t ngroups; /* the queue's resource groups */
} q__asg;

/* Assigns flavors to every pod set of wl in cq, at counts (NULL = the full counts). The
 * search of each pod set and group starts at start[ps x cq->ngroups] (NULL: the first
 * flavor), as Kueue resumes from its LastAssignment. */
ts_rc q__assign(q__ctx *c, q__cq *cq, const q_workload *wl, const int32_t *counts,
                const int16_t *start, q__asg *out);

/* ---- flavor-search memory (Kueue's LastAssignment) -------------------------------------- */

/* Brings the memo up to date with tree t at the start of a cycle: a new scheduling cycle,
 * ClusterQueue generations advanced by removed workloads or changed quotas, and records of
 * workloads no longer queued in qs dropped. */
ts_rc q__memo_sync(q_memo *mm, q_tree *t, const q_queues *qs);
/* Where wl's search resumes in cq: the recorded progress when it is still current (same
 * queue and shape, recorded in the previous cycle or the queue's generation unchanged), else
 * NULL (from the first flavor). Borrowed until the next q__memo_* call. */
const int16_t *q__memo_start(q_memo *mm, const q__cq *cq, const q_workload *wl);
/* Records the progress of an assignment that did not end in admission or preemption. */
ts_rc q__memo_record(q_memo *mm, const q__cq *cq, const q_workload *wl, const q__asg *a);
/* Forgets wl's progress (admitted, preempting: the next search starts over). */
void q__memo_forget(q_memo *mm, const char *key);
/* True when the recorded progress of wl leaves flavors to try (Kueue's PendingFlavors). */
bool q__memo_pending(const q_memo *mm, const char *key);
/* The memo qs uses: its own, or the one given by q_queues_set_memo. */
q_memo *q__queues_memo(q_queues *qs);
/* True when a workload with this key is queued (active, parked or waiting) in qs. */
bool q__queues_has(const q_queues *qs, const char *key);

/* A preemption target. */
typedef struct q__target {
  q__adm *adm;             /* the victim */
  q_preempt_reason reason; /* why */
} q__target;

/* What a preemption search works on. */
typedef struct q__pctx {
  q__ctx *c;              /* cycle */
  const q_workload *wl;   /* preemptor */
  q__cq *cq;              /* its queue */
  const uint32_t *frs;    /* FRs needing preemption */
  uint32_t nfrs;          /* entries */
  const uint32_t *req_fr; /* the preemptor's usage: FRs */
  const int64_t *req;     /* amounts */
  uint32_t nreq;          /* entries */
} q__pctx;

/* Finds a minimal, deterministic set of targets making room for the preemptor (classical or
 * fair sharing per configuration). Leaves the usage as it found it. *out is arena memory. */
ts_rc q__targets(q__pctx *p, q__target **out, uint32_t *n);
/* The flavor assigner's oracle: can preemption make room for v of fr? Returns the mode
 * (NOCAND, PREEMPT or RECLAIM) and the borrowing level after those preemptions. */
ts_rc q__simulate_preemption(q__ctx *c, q__cq *cq, const q_workload *wl, uint32_t fr, int64_t v,
                             q__pmode *mode, int *borrow);
/* Kueue's CandidatesOrdering, <0 when a goes first. */
int q__cand_cmp(const q__adm *a, const q__adm *b, const q__cq *cq, int64_t now);

/* ---- queues (queues.c) used by the cycle ----------------------------------------------- */

typedef enum q__requeue {
  Q__RQ_GENERIC,
  Q__RQ_NO_FIT,
  Q__RQ_NS_MISMATCH,
  Q__RQ_NO_CANDIDATES,
  Q__RQ_FAILED_AFTER_NOMINATION,
  Q__RQ_PENDING_PREEMPTION,
  Q__RQ_ERROR, /* evaluating it failed: parked, as a namespace mismatch is, so that its queue's
                  next workloads get their turn */
} q__requeue;

/* A head popped for a cycle. */
typedef struct q__head {
  q_workload *wl; /* the workload */
  q__cq *cq;      /* the (active) ClusterQueue whose queue it heads */
} q__head;

/* Pops the head of every active ClusterQueue with pending workloads, in name order, into an
 * arena array. */
ts_rc q__queues_heads(q_queues *qs, const q_tree *t, ts_arena *a, q__head **out, size_t *n);
/* Puts a popped head back per Kueue's rules; returns true when it was parked. A head whose
 * flavor search left flavors to try (pending_flavors) goes back to the active queue. */
bool q__queues_requeue(q_queues *qs, q_workload *wl, q__requeue why, bool pending_flavors);
/* Forgets a popped head that was admitted. */
void q__queues_done(q_queues *qs, q_workload *wl);

#endif
