/*
 * scheduler/sched_int.h - internals of the scheduler: the cycle's view of the nodes (free
 * capacity after the placements made so far in the cycle), filters, scoring and reasons.
 */
#ifndef SCHED_INT_H
#define SCHED_INT_H

#include "queueing/queueing.h"
#include "scheduler/sched.h"

#define SCHED_MAX_GPU_RESOURCES 8  /* distinct GPU resource names scored */
#define SCHED_PENDING_RUNS      16 /* shapes of runs that stayed pending, remembered */
#define SCHED_DRA_FITS          16 /* claim shapes whose fit per node is remembered */

#define SCHED_MAX_SIGS 64 /* static-filter results cached per cycle */
#define SCHED_GPU_TAGS                                                                             \
  33 /* GPU-clustering's tags kept apart: a share, 1..31 whole GPUs, and                           \
        32 or more whole GPUs as one */

/* A reason nodes give for not taking a pod, and how many give it. */
typedef struct sched_reason {
  char text[300]; /* "Insufficient nvidia.com/gpu" */
  int count;      /* nodes that gave it */
} sched_reason;

#define SCHED_MAX_MASKS 256 /* distinct sets of short resources counted apart */

/* Nodes that lack one set of a pod's requests (bit i: request i does not fit). */
typedef struct sched_mask_count {
  uint64_t mask; /* the short requests */
  int count;     /* nodes */
} sched_mask_count;

/* Nodes passing the static filters for pods with one static signature (node selector,
 * affinity, tolerations). */
typedef struct sched_sig {
  const model_pod *pod;  /* representative pod */
  uint64_t hash;         /* hash of the signature */
  uint32_t *nodes;       /* passing node indexes, ascending (scratch arena, v->n capacity) */
  uint32_t n;            /* entries */
  uint8_t *pass;         /* v->n flags: node k passes */
  const char *flavors;   /* the flavor restriction it was computed under (interned), or NULL */
  sched_reason *reasons; /* why the other nodes fail the static filters (scratch arena) */
  size_t nreasons;       /* entries */
  bool reasons_done;     /* reasons computed */
  const void *glevel;    /* the level whose node groups gpass is of (place.c), or NULL */
  uint8_t *gpass;        /* per node group of glevel: some node of it passes (scratch arena) */
} sched_sig;

/* Where each node is among the nodes of one static signature, shared by the classes that
 * have it (classes.c): slot[node] is its leaf in their trees, or UINT32_MAX. */
typedef struct sched_slots {
  struct sched_slots *next; /* the view's other maps */
  const model_pod *pod;     /* whose signature (a class's representative) */
  uint64_t hash;            /* sched__static_hash of it */
  const char *flavors;      /* the flavor restriction (interned), or NULL */
  const void *within;       /* the node subset it is restricted to (a class's), or NULL */
  uint32_t *slot;           /* v->n entries (malloc) */
  uint32_t refs;            /* classes using it */
  /* the entries of the view's change log whose node it holds, in order: its classes replay
   * these, so that a node no class of the signature holds is passed over once per signature,
   * not once per class (classes.c) */
  uint32_t *log;    /* malloc */
  size_t nlog;      /* entries */
  size_t logcap;    /* capacity */
  size_t copied;    /* entries of the view's log filtered into log */
  size_t last_from; /* the view's log entry its last entry copies */
} sched_slots;

/* What scoring needs of a pod, prepared once per run of same-shape pods. */
typedef struct sched_shape sched_shape;
struct sched_shape {
  const model_pod *pod;                     /* representative */
  int64_t cpu, mem;                         /* cpu (milli) and memory requests */
  int gpu[SCHED_MAX_GPU_RESOURCES];         /* GPU resource ids requested */
  int64_t gpu_req[SCHED_MAX_GPU_RESOURCES]; /* amounts */
  int ngpu;                                 /* entries */
  int64_t dra_devices;                      /* DRA devices its claims ask for (scoring) */
  bool share;                               /* it asks for a share of one GPU */
};

/* A feasible node in a run's heap. */
/* A class's index entry: score and node in one key (classes.c). */
typedef uint64_t sched_key;

typedef struct sched_cand {
  int64_t score; /* higher is better */
  uint32_t node; /* index in the name-sorted view; the lower wins ties */
} sched_cand;

/* One topology domain: the nodes carrying one value of a level's label. */
typedef struct sched_domain {
  const char *value; /* interned label value */
  uint32_t *nodes;   /* node indexes (scratch arena) */
  uint32_t n;        /* entries */
  int64_t free;      /* free amount of the gang's main resource (set per attempt) */
  int64_t *sum;      /* per resource: the free capacity of its nodes, kept as pods are placed */
} sched_domain;

/* The domains of one topology level (a node label key), computed once per cycle and kept up
 * to date by every placement (sched__levels_charge), so that whether a gang may fit a domain
 * costs one comparison per resource, not a pass over the domain's nodes. */
/* One-node domains ordered by their free amount of a resource (place.c: a treap keyed by
 * the amount and then the domain's index; by the amount negated when spreading). */
typedef struct sched_order {
  uint32_t *left, *right; /* per domain: its children, UINT32_MAX for none */
  int64_t *key;           /* per domain: its amount, negated when spreading */
  uint32_t *stack;        /* scratch of a walk: a path from the root */
  uint32_t *root;         /* per node group of the level: its tree, UINT32_MAX when empty */
  bool spread;            /* keyed by the amount negated: the most free first */
} sched_order;

typedef struct sched_level {
  const char *key;      /* interned label key */
  sched_domain *d;      /* domains sorted by value (scratch arena) */
  uint32_t n;           /* entries */
  uint32_t *dom_of;     /* node -> its domain's index, UINT32_MAX when it has no such label */
  int64_t *max;         /* per resource: at least the greatest sum of any domain (a bound) */
  sched_domain **cands; /* scratch of one gang's attempt: the domains that may hold it */
  bool single;          /* every domain is one node (kubernetes.io/hostname) */
  /* with single, made with the first order: per domain, its node's group (nodes alike in
   * every label but the level's own, in taints and in being cordoned, which static filters
   * mostly pass or fail together), and how many groups */
  uint32_t *group;
  uint32_t ngroups;
  /* with single: per resource, made when a gang first asks, the domains in the order of
   * their free amount of it (NULL until then) */
  sched_order **order; /* stride entries */
} sched_level;

/* One resource of one node as the cycle sees it. The three fields sit together because
 * fitting reads free and scoring reads all three of the same entries: at 20,000 nodes three
 * separate arrays cost three cache lines per node visited, this costs one or two. */
typedef struct sched_cap {
  int64_t free;  /* allocatable - used - placed this cycle */
  int64_t alloc; /* allocatable */
  double inv;    /* 1e6 / allocatable (0 when none) */
} sched_cap;

/* Where a scoring policy puts a share of a GPU, among a node's GPUs that can take it. */
typedef enum sched_share_rule {
  SCHED_SHARE_FULLEST,  /* the fullest (a GPU left free stays whole), else the lowest unshared */
  SCHED_SHARE_EMPTIEST, /* a GPU nobody shares yet, else the emptiest */
  SCHED_SHARE_LOWEST,   /* the lowest-numbered */
  SCHED_SHARE_RANDOM,   /* one drawn from the pod's name and the tie seed */
} sched_share_rule;

struct sched_view;
struct sched_shape;

/* A scoring policy: one row of the table in view.c, indexed by sched_scoring. Adding a policy
 * is adding a row (and its name to the enum). */
typedef struct sched_policy {
  const char *name; /* as tessera.yaml and `simulate --policy` name it */
  /* Its own score (higher is better, the node name breaking ties), or NULL for the common
   * score: bin-packing, or spreading when `spread`. */
  int64_t (*score)(const struct sched_view *v, const struct sched_shape *s, uint32_t node);
  bool spread;             /* prefers the least used nodes, and the loosest domains first */
  bool fgd;                /* scores as FGD (and FGD picks the GPU of a share) */
  bool fgd_with_shares;    /* scores as FGD when some pod of the model shares a GPU */
  bool fill_gpu_nodes;     /* a pod without GPUs that must go to GPU nodes goes where the
                              fewest GPUs are free */
  sched_share_rule shares; /* where a share goes (unless FGD picks) */
  bool per_pod;            /* its score depends on the pod, not only its shape: pods are scored
                              one at a time (no classes, no runs of a shape) */
} sched_policy;
/* Node k's place among nodes of equal score (the lower wins): its index (name order), or its
 * place in the cycle's random order with a tie seed. */
#define sched__rank(v, k) ((v)->rank ? (v)->rank[k] : (k))
/* The row of a policy (the binpack row for a value out of range). */
const sched_policy *sched__policy(sched_scoring s);

/* The cycle's view: nodes sorted by name, with free capacity per resource. */
typedef struct sched_class sched_class;

typedef struct sched_view {
  const model *m;                   /* the model (read only) */
  const sched_config *cfg;          /* configuration */
  const sched_policy *pol;          /* its scoring policy's row */
  int64_t now_ns;                   /* the cycle's clock */
  uint32_t n;                       /* nodes */
  const model_node **nodes;         /* nodes sorted by name (scratch arena) */
  uint32_t *rank, *unrank;          /* with cfg->tie_seed: node -> its place in this cycle's
                                       random order of ties, and back; else NULL */
  int stride;                       /* resource ids per node row */
  struct sched_cap *cap;            /* n x stride: each node's capacity per resource */
  uint8_t *has_gpu;                 /* n: the node has some GPU resource */
  int gpu[SCHED_MAX_GPU_RESOURCES]; /* resource ids counted as GPUs */
  int ngpu;                         /* entries in gpu */
  sched_sig sigs[SCHED_MAX_SIGS];   /* static-filter cache */
  int nsigs;                        /* entries in use */
  int next_evict;                   /* round-robin slot to reuse when full */
  sched_cand *heap;                 /* one heap buffer of n entries for every run */
  dra_world *dra;                   /* devices of every ResourceSlice, and what is in use */
  ts_arena dra_scratch;             /* memory of trial allocations, reset before each */
  const model_pod *fail_pod;        /* a pod whose attempt failed in this cycle (sched__fail) */
  const char *fail_text;            /* why, naming the pod and the stage (result arena) */
  const char *dra_error;            /* an allocation error met while filtering (result arena) */
  const model_pod *dra_error_pod;   /* the pod it was met for: its other nodes are not tried */
  ts_map claim_refs;   /* "ns/name" (scratch arena) -> uint32_t: pods naming an unallocated
                          claim, so that claims named by one pod only compare by value */
  ts_map cycle_claims; /* "ns/name" (result arena) -> sched_claim: claims allocated by a pod
                          placed this cycle, which later pods sharing them reuse */
  sched_level levels[SCHED_MAX_TOPOLOGY + 1]; /* topology levels seen this cycle */
  int nlevels;                                /* entries */
  sched_state *state;                         /* what earlier cycles decided, or NULL */
  uint64_t changes;                           /* changes of any node's free capacity */
  struct {
    const struct sched_pending *pod;  /* the first pending pod of a run that stayed pending
                                         (arena), NULL for an empty entry */
    const char *reason;               /* its reason (result arena) */
    uint64_t at;                      /* changes when it was found */
  } pending_runs[SCHED_PENDING_RUNS]; /* the last few, round robin */
  uint32_t next_pending_run;          /* the entry to fill next */
  uint32_t *node_rev; /* n: changes of each node's free capacity or devices, from 1 */
  uint64_t dra_epoch; /* allocations of devices other nodes reach too (a change of
                         every node's devices) */
  struct {
    const struct sched_pending *rep;       /* a pod with these claims (arena), NULL when unused */
    uint64_t epoch;                        /* dra_epoch of its answers */
    uint32_t *answer;                      /* n: node_rev << 1 | fits, 0 when not known (arena) */
  } dra_fits[SCHED_DRA_FITS];              /* sched__dra_fits per claim shape and node (claims.c) */
  uint32_t next_dra_fit;                   /* the entry to fill next */
  int dra_fit_last;                        /* the entry of the last pod looked up, or -1 */
  const struct sched_pending *dra_fit_pod; /* that pod */
  uint32_t *changed;    /* log of the nodes changed while some class has a heap (malloc) */
  size_t nchanged;      /* entries */
  size_t changed_cap;   /* capacity */
  uint32_t *mark;       /* n: stamp of the pick that last applied the node's change (arena) */
  uint32_t *scan_nodes; /* n: scratch of a class's build, its nodes (arena) */
  uint32_t mark_stamp;  /* the current pick's stamp */
  bool log_changes;     /* some class has a heap: log changes */
  bool log_lost;        /* the log could not grow: classes scan from then on */
  struct sched_class *tail_reader; /* the one class that applied the log's last entry, or NULL */
  bool tail_shared;                /* more than one reader applied it (or a reasons count did) */
  ts_map classes;                  /* class hash -> first sched_class of that hash */
  sched_reason *hist_buf;          /* the reasons histogram of one pending pod (arena, reused
                                      by each: the message is copied out) */
  sched_mask_count *mask_buf;      /* the short-resource masks of one pending pod (same) */
  char **lines;                    /* the "COUNT REASON" lines of one message (same) */
  char *line_text;                 /* their text */
  sched_class *class_list;         /* every class (their indexes are freed with the view) */
  const model_pod **pending;       /* pods this scheduler must place (sched__view_pods; arena) */
  const model_pod **running;       /* pods that hold their node's resources (model_pod_counts) */
  size_t npending, nrunning;       /* entries */
  bool pods_listed;                /* the two lists are built */
  struct sched_slots *slots;       /* the classes' node -> leaf maps, one per static signature */
  size_t class_bytes;              /* memory of the classes' indexes */
  ts_arena *arena;                 /* scratch memory for the cycle */
  ts_arena *out;                   /* memory of the result (messages) */
  /* GPUs shared by pods (when some pod of the model asks for a share): each node's GPUs' shares
   * in thousandths (model_node.gpu_shares, then this cycle's placements) */
  uint16_t *share;    /* every node's GPUs (scratch arena), NULL when no pod shares */
  uint32_t *share_at; /* n + 1: node k's GPUs are share[share_at[k] .. share_at[k + 1]) */
  int share_res;      /* the id of nvidia.com/gpu, -1 when none */
  ts_map share_slot;  /* pod key -> 1 + the GPU its share was placed on this cycle */
  /* with the GPU-clustering policy: per node, SCHED_GPU_TAGS counts of the pods it runs by how
   * they ask for GPUs (view.c: gpu_tag), else NULL */
  uint16_t *gpu_tags;
  struct sched_fgd_shape *fgd; /* FGD: the typical shapes (arena) */
  const char **fgd_model;      /* FGD: each node's GPU model (label nvidia.com/gpu.product,
                                  interned), or NULL (arena) */
  uint32_t nfgd;               /* entries */
  bool fgd_ready;              /* the typical shapes are known */
  bool fgd_on;                 /* nodes score as FGD: scoring fgd, or binpack with pods sharing
                                  GPUs in the model */
  bool score_other;            /* scoring is not plain bin-packing or spreading without shares */
  struct sched_kueue *kueue;   /* Kueue's Workloads indexed by owner (kueue.c), NULL until
                                  first needed */
  size_t decisions_cap;        /* capacity of the result's decision array */
  size_t events_cap;           /* capacity of the result's workload events */
  size_t groups_cap;           /* capacity of the result's groups */
} sched_view;

typedef enum sched_fit {
  SCHED_FIT,           /* passes the static filters */
  SCHED_UNSCHEDULABLE, /* node.spec.unschedulable and not tolerated */
  SCHED_TAINT,         /* an untolerated NoSchedule / NoExecute taint */
  SCHED_AFFINITY,      /* nodeSelector or required node affinity */
} sched_fit;

/* The ResourceFlavors Kueue admitted a pod on: the pod may only use nodes carrying their
 * nodeLabels, and their tolerations apply to it. */
typedef struct sched_flavors {
  const model_resource_flavor *const *v; /* borrowed (arena) */
  uint32_t n;                            /* entries */
  const char *key;                       /* interned "f1,f2" naming the restriction */
} sched_flavors;

/* A pending pod with its effective priority and its resolved ResourceClaims. */
typedef struct sched_pending {
  const model_pod *pod;         /* borrowed from the model */
  int32_t priority;             /* effective priority */
  sched_claim *claims;          /* resolved claims (arena), NULL when none */
  uint32_t nclaims;             /* entries */
  bool dra;                     /* some claim needs an allocation */
  const char *blocked;          /* why the pod cannot be scheduled at all (a claim is missing),
                                   or NULL */
  const sched_flavors *flavors; /* while placed as an admitted workload: its flavors, else NULL */
  int64_t gpus;                 /* GPUs it requests (extended resources, sched_is_gpu_resource) */
} sched_pending;

/* Pending single pods that filter and score alike, and their feasible nodes (classes.c). */
struct sched_class {
  struct sched_class *next;     /* next class of the same hash */
  struct sched_class *all_next; /* every class of the cycle */
  uint64_t hash;                /* of the shape (the map's key for the first of a chain) */
  sched_pending rep;            /* representative: its pod, requests and flavors */
  const void *within;           /* a gang's class: what its nodes are restricted to (a topology
                                   domain, or the view for every node); NULL: single pods' */
  const uint32_t *subset;       /* with within: its nodes (ascending), or NULL for all */
  uint32_t nsubset;             /* entries */
  sched_shape shape;            /* for scoring */
  struct sched_slots *slots;    /* the node -> leaf map of its static signature (classes.c) */
  sched_key *tree;              /* tournament tree of the feasible nodes' keys (classes.c;
                                   malloc), or NULL */
  uint32_t level[10];           /* where each level of tree starts (leaves first) */
  uint32_t nlevels;             /* levels (the last holds the best node) */
  size_t bytes;                 /* memory of slot and tree */
  size_t seen;                  /* entries of its slots' log applied to the tree */
  uint32_t remaining;           /* pods of the class not decided yet */
  bool unindexed;               /* picks scan the nodes (one pod, or over the budget) */
  const char *reason;           /* why no node fits (result arena), or NULL */
  uint64_t reason_at;           /* the view's change count when reason was computed */
  /* the counts behind the reason, kept up to date from the change log (classes.c) */
  uint64_t *rmask;             /* v->n: requests each statically passing node lacks (malloc) */
  uint8_t *rpass;              /* v->n: the node passes the static filters (malloc) */
  sched_mask_count *rcounts;   /* nodes per mask (malloc, SCHED_MAX_MASKS) */
  size_t nrcounts;             /* entries */
  const sched_reason *rstatic; /* why the other nodes fail the static filters (scratch) */
  size_t nrstatic;             /* entries */
  size_t rseen;                /* change log entries applied to the counts */
  bool rvalid;                 /* the counts hold */
};

typedef enum sched_gang_kind {
  SCHED_GANG_SINGLE,    /* a pod on its own */
  SCHED_GANG_POD_GROUP, /* scheduler-plugins PodGroup (minMember) */
  SCHED_GANG_KUEUE,     /* Kueue pod group (pod-group-total-count) */
  SCHED_GANG_JOBSET,    /* pods of one JobSet */
  SCHED_GANG_OWNER,     /* pods of one owning job (PyTorchJob, TFJob, MPIJob, Job, ...) */
} sched_gang_kind;

/* Pods that must run together, and what the cycle knows of them. */
typedef struct sched_gang {
  sched_gang_kind kind;        /* how the gang was identified */
  const char *what;            /* "PodGroup", "PyTorchJob", ... for messages */
  const char *key;             /* unique key of the gang (arena) */
  const char *name;            /* "ns/name" of the group or owner (arena) */
  int32_t min;                 /* pods that must run together (bound ones count) */
  uint32_t nbound;             /* members already bound and running */
  uint32_t nmembers;           /* members that exist: bound + pending */
  sched_pending *pods;         /* pending members in placement order (arena) */
  uint32_t npods;              /* entries */
  uint32_t id;                 /* its number before the gangs were sorted (gang.c) */
  int32_t priority;            /* highest member priority */
  int64_t created;             /* earliest member creation time */
  const char *required_level;  /* interned topology key the gang must fit in, or NULL */
  const char *preferred_level; /* interned topology key to try first, or NULL */
  const char *blocked;         /* why the gang cannot be scheduled at all (arena), or NULL */
  const char *gated;           /* a member still has scheduling gates: "waiting for scheduling
                                  gates: [a b]" (result arena), or NULL */
  sched_class *cls;            /* a single pod decided through its class: the class, or NULL */
} sched_gang;

/* Pods of the gang that must be placed in this cycle for it to start: its minimum less the
 * members already running (0 when those are enough). */
uint32_t sched__gang_needed(const sched_gang *g);
/* Why the gang cannot even be tried now: it is blocked (a missing PodGroup, claim, ...) or
 * has fewer members than its minimum. A message in the result arena that starts with label
 * ("PodGroup team-a/train"), or NULL when it can be tried. *oom is set when out of memory. */
const char *sched__gang_waits(sched_view *v, const sched_gang *g, const char *label, bool *oom);

/* The gang of a pod as sched__gangs identifies it: its key, a label for people ("PodGroup
 * team-a/x", "pod team-a/p"; label may be NULL), and its explicit minimum (-1: every member
 * that exists). */
int32_t sched__gang_ident(const model *m, const model_pod *p, char *key, size_t kcap, char *label,
                          size_t lcap);
/* The key of the gang a pod belongs to (as sched__gangs identifies gangs). */
void sched__gang_key(const model *m, const model_pod *p, char *key, size_t cap);

/* waitForPodsReady (ready.c): evicts bound gangs that are not Ready in time (EVICT decisions
 * into r) and remembers their backoff in st; a gang still in backoff is held (the
 * reason, arena) or NULL. */
ts_rc sched__ready_check(sched_view *v, sched_state *st, sched_result *r);
const char *sched__ready_hold(sched_view *v, sched_state *st, const char *key);
/* Evictions decided earlier and not yet visible in the model: their gangs count as being
 * evicted, so that a preemption is not issued twice. */
bool sched__evicting(const sched_state *st, const model_pod *p);
/* The flavor-search memory kept across cycles, or NULL (no state, out of memory). */
q_memo *sched__memo(sched_state *st);
void sched__evictions_seen(sched_state *st, const model *m);
ts_rc sched__evictions_issued(sched_state *st, const sched_result *r);

/* Errors contained to one pod (cycle.c): records that the pod's attempt failed (rc, and a
 * message that names the pod and says what failed); its other nodes are not tried and it is
 * decided pending with that message (SCHED_WHY_ERROR), its gang with it. */
void sched__fail(sched_view *v, const model_pod *p, ts_rc rc, const char *what);
/* True, having recorded the failure as sched__fail does, when the configured fault makes stage
 * fail for p. */
bool sched__fault(sched_view *v, sched_stage stage, const model_pod *p);
/* True when the fault of stage names a pod of g. */
bool sched__gang_faulted(const sched_view *v, sched_stage stage, const sched_gang *g);
/* The failure recorded for a pod of g (its message), or NULL. */
const char *sched__gang_failure(const sched_view *v, const sched_gang *g);

/* Kueue admission (admit.c): queued gangs (pods labelled kueue.x-k8s.io/queue-name) are
 * admitted through their LocalQueues with placement; handled[i] says which gangs it decided. */
ts_rc sched__admit(sched_view *v, sched_gang *gangs, size_t n, sched_result *r, bool *handled);
/* Where a pod's workload queues: the LocalQueue of Kueue's label kueue.x-k8s.io/queue-name,
 * else a Volcano or KAI Queue named directly (admit.c says how it is found). */
typedef struct sched_qref {
  const char *local_queue;    /* interned LocalQueue name, or NULL */
  const char *queue;          /* interned Volcano or KAI Queue name, or NULL */
  model_kind kind;            /* MODEL_LOCAL_QUEUE, MODEL_VOLCANO_QUEUE or MODEL_KAI_QUEUE */
  const char *priority_class; /* interned: its Volcano or KAI PodGroup's priorityClassName */
} sched_qref;
/* Fills *out; false when the pod's workload is not queued (no queue, or its project's
 * default queue, which does not exist here). */
bool sched__queue_ref(const model *m, const model_pod *p, sched_qref *out);
/* Kueue's priority class name of the workload pod p belongs to (queued as ref): its
 * WorkloadPriorityClass label, else ref's PodGroup priority class, else the pod's
 * priorityClassName; "" when none. Interned or static. */
const char *sched__wl_priority_class(const model_pod *p, const sched_qref *ref);
/* The ClusterQueue (interned) a workload of namespace ns queued as ref is charged to, or NULL
 * when its LocalQueue or queue does not exist. */
const char *sched__queue_cq(const model *m, const char *ns, const sched_qref *ref);
/* Records a Kueue workload event in the result. */
ts_rc sched__event(sched_view *v, sched_result *r, const sched_wl_event *e);
/* At the end of the cycle: each group's event, from the events' first decisions. */
void sched__groups_events(sched_result *r);
/* A workload's life across cycles (ready.c), for Kueue's ready and finished metrics: a
 * running workload admitted to cluster_queue is recorded (first pod p, its queue ref);
 * sched__finished_check emits FINISHED for the recorded ones that stopped running because
 * every pod ended, and forgets the others; sched__ready_since is when a gang became ready
 * (0 when unknown or never). */
ts_rc sched__admitted_seen(sched_view *v, const model_pod *p, const char *cluster_queue,
                           const sched_qref *ref);
ts_rc sched__finished_check(sched_view *v, sched_result *r);
int64_t sched__ready_since(const sched_state *st, const char *gang_key);

/* Groups the pending pods of the cycle's scheduler into gangs (docs/features.md, "Gangs": PodGroup,
 * Kueue pod group, JobSet, owning job, else a gang of one) and orders them: priority
 * (highest first), then earliest creation, then name. *out is heap memory (ts_free; NULL
 * when there are none); what the gangs point to is in the arena. */
ts_rc sched__gangs(sched_view *v, sched_gang **out, size_t *n);

ts_rc sched__view_init(sched_view *v, const model *m, const sched_config *cfg, int64_t now_ns,
                       ts_arena *scratch, ts_arena *out);
/* Frees what the view holds outside its arenas (the DRA world). */
/* Lists the model's pending and running pods in the view, in the model's order (one walk over
 * every pod, which are scattered in memory, instead of one per step of the cycle that needs
 * them); nothing when already listed. */
ts_rc sched__view_pods(sched_view *v);
/* Asks the CPU to fetch what the cycle reads of a pod a few steps ahead: past ~10k pending
 * pods they are out of cache, and each pass over the queue would wait on every one. */
static inline void sched__prefetch_pod(const model_pod *p) {
  __builtin_prefetch(p);
  __builtin_prefetch(p->requests.v);
  __builtin_prefetch(p->tolerations);
  __builtin_prefetch(p->node_selector.v);
}
void sched__view_free(sched_view *v);
/* The first NoSchedule / NoExecute taint of n that neither the pod nor its flavors tolerate. */
const model_taint *sched__untolerated(const sched_pending *p, const model_node *n);
/* Filters that do not depend on free capacity, in kube-scheduler's plugin order, plus the
 * nodeLabels of the pod's flavors. */
sched_fit sched__static_fit(const sched_view *v, const sched_pending *p, uint32_t node);
/* The nodes passing the static filters for p, cached per signature; NULL when out of
 * memory. Valid until the next call (a full cache reuses slots). */
const sched_sig *sched__static_nodes(sched_view *v, const sched_pending *p);
/* True when two pods have the same node selector, affinity and tolerations. */
bool sched__same_static(const model_pod *a, const model_pod *b);
/* True when every resource the pod requests is free on the node. */
bool sched__resources_fit(const sched_view *v, const model_pod *p, uint32_t node);
void sched__shape_init(const sched_view *v, const model_pod *p, sched_shape *s);
/* The node's score if a pod of this shape were placed there; higher is better. */
int64_t sched__score(const sched_view *v, const sched_shape *s, uint32_t node);
/* True when two pods filter and score identically on every node. */
bool sched__same_shape(const sched_view *v, const sched_pending *a, const sched_pending *b);
/* The kueue.x-k8s.io/role-hash annotation of a pod (Kueue's pod set name), or NULL. */
const char *sched__role_of(const model_pod *p);
/* Places pods[0..n), all of one shape, on the best nodes among subset (all when NULL);
 * placed[i] = node of pods[i]. Returns the number placed (a prefix). */
uint32_t sched__place_run(sched_view *v, sched_pending *pods, uint32_t n, const uint32_t *subset,
                          uint32_t nsubset, uint32_t *placed);
/* Places as many of the gang's pending pods as fit, run by run, within subset (NULL: all
 * nodes); placed[i] = node of pod i or UINT32_MAX. Returns the number placed. When `whole`,
 * stops at the first pod that does not fit. */
uint32_t sched__place_members(sched_view *v, const sched_gang *g, const uint32_t *subset,
                              uint32_t nsubset, bool whole, uint32_t *placed);
/* Gives back what sched__place_members placed (placed[i] != UINT32_MAX). */
void sched__unplace_members(sched_view *v, const sched_gang *g, const uint32_t *placed);
/* The topology domains of node label key (each value's nodes, sorted by value), computed once
 * per cycle; NULL when out of memory or past SCHED_MAX_TOPOLOGY + 1 keys. */
sched_level *sched__level_of(sched_view *v, const char *key);
/* The flavors named (interned names; unknown ones and repeats skipped) as a restriction for
 * placement, in the scratch arena; NULL when none is known or out of memory. */
const sched_flavors *sched__flavors_of(sched_view *v, const char *const *names, uint32_t n);
/* Kueue admits, Tessera places (kueue.c; queueing.admission: kueue): the gangs of pods that
 * belong to Kueue Workloads are decided here (handled[i] set): an admitted Workload's pod sets
 * placed whole on its flavors and topology domains, the others pending with Kueue's reason. */
ts_rc sched__kueue_place(sched_view *v, sched_gang *gangs, size_t n, sched_result *r,
                         bool *handled);
/* Kueue admits (queueing.admission: kueue): true when the pod's job is Kueue's to admit (it
 * names a LocalQueue, or a Workload owns it); false in the other mode. */
bool sched__kueue_managed(sched_view *v, const model_pod *p);
void sched__kueue_free(sched_view *v); /* frees the index */
/* Places a gang (see place.c) on the view; placed[i] = node of g->pods[i] or UINT32_MAX.
 * Returns the number placed, or 0 with everything given back when fewer than needed fit;
 * *best then tells how many fit at most across the cluster. */
uint32_t sched__place_gang(sched_view *v, const sched_gang *g, uint32_t needed, uint32_t *placed,
                           uint32_t *best);

/* DRA in the cycle (claims.c). */
ts_rc sched__dra_init(sched_view *v);
void sched__dra_free(sched_view *v);
/* Resolves the pod's claims into p (arena): existing claims, claims made from templates
 * (replay) or named in status.resourceClaimStatuses; sets p->blocked when one is missing. */
ts_rc sched__pod_claims(sched_view *v, sched_pending *p);
/* True when the pod's claims can be allocated (or are allocated) for node k. An allocation
 * error (a CEL error, a search over its budget) is recorded in v->dra_error and reported as not
 * fitting; it aborts the pod's attempt, as upstream's filter does: its other nodes are not
 * tried. */
bool sched__dra_fits(sched_view *v, const sched_pending *p, uint32_t k);
/* Allocates the pod's claims on node k into p->claims[].result and marks the devices in use.
 * Returns false when that fails (it cannot after sched__dra_fits said yes). *shared is set
 * when a device that other nodes also reach was taken. */
bool sched__dra_commit(sched_view *v, sched_pending *p, uint32_t k, bool *shared);
void sched__dra_release(sched_view *v, sched_pending *p);
/* Devices of node k in use and in all, for scoring. */
void sched__dra_usage(const sched_view *v, uint32_t k, uint32_t *used, uint32_t *total);
/* Why node k cannot take the pod's claims ("cannot allocate all claims", kube-scheduler's
 * words), or NULL when it can. */
const char *sched__dra_node_reason(sched_view *v, const sched_pending *p, uint32_t k);
/* Devices the pod's unallocated claims ask for (ExactCount; the first alternative). */
int64_t sched__dra_devices(const sched_pending *p);
/* Why the pod's claims cannot be allocated anywhere: the first request that fits no node
 * (arena), or NULL. */
const char *sched__dra_why(sched_view *v, const sched_pending *p);

/* True when the two pods' claims filter alike on every node (place.c). */
bool sched__same_claims(const sched_view *v, const sched_pending *a, const sched_pending *b);
/* True when p can be decided through its class: no claims, not blocked, classes not turned off
 * (sched_tuning). */
bool sched__class_eligible(const sched_view *v, const sched_pending *p);
/* The class of p, created on first use (arena); NULL when out of memory. */
sched_class *sched__class_of(sched_view *v, const sched_pending *p);
/* The class of gang members like p placed among subset (every node when NULL), identified by
 * within (a topology domain, or the view itself for every node): kept for the whole cycle, so
 * that the gangs of one shape tried in one domain pay for what changed since the last of them,
 * not for a scan of the domain each. NULL when out of memory. */
sched_class *sched__class_within(sched_view *v, const sched_pending *p, const void *within,
                                 const uint32_t *subset, uint32_t nsubset);
/* The node a full scan would pick for a pod of the class now, or UINT32_MAX when none fits. */
uint32_t sched__class_pick(sched_view *v, sched_class *c);
/* One pod of the class was decided; the last frees the class's heap. */
void sched__class_done(sched_view *v, sched_class *c);
/* Records that node's free capacity changed: lost (sched__place) or, when freed, gained
 * (sched__unplace). */
void sched__node_changed(sched_view *v, uint32_t node, bool freed);
void sched__classes_free(sched_view *v);
/* A hash of the pod's static signature (node selector, tolerations, affinity). */
uint64_t sched__static_hash(const model_pod *p);

/* decide.c: decision d added to r (its array grows past the pending pods reserved only when
 * evictions add to them; TS_ENOMEM when it cannot). */
ts_rc sched__decide(sched_view *v, sched_result *r, sched_decision d);
/* A pending decision for p with reason (result arena or static), its gang's label, and the kind
 * of reason. */
sched_decision sched__pend(const sched_pending *p, const char *reason, const char *gang,
                           sched_pending_why why);
/* Charges the pod's requests to the node in the view, or gives them back. A pod sharing a GPU
 * takes its share of one of the node's GPUs (the one the scoring policy prefers), which
 * sched__gpu_slot tells until it is given back. */
void sched__place(sched_view *v, const model_pod *p, uint32_t node);
/* Keeps the topology levels' domain sums current: node's free amount of resource r changed by
 * delta (called by view.c's free_add, the one place a node's free capacity changes). */
void sched__levels_charge(sched_view *v, uint32_t node, int r, int64_t delta);
void sched__unplace(sched_view *v, const model_pod *p, uint32_t node);
/* The BIND decision of p on node (its claims, and the GPU of its share). */
sched_decision sched__bind(const sched_view *v, const sched_pending *p, uint32_t node,
                           const char *gang);
/* The GPU of its node that the pod's share was placed on this cycle, or -1. */
int32_t sched__gpu_slot(const sched_view *v, const model_pod *p);
/* Node k's GPUs' shares in the view, thousandths by GPU index (*n entries; NULL when none). */
uint16_t *sched__shares_of(const sched_view *v, uint32_t k, uint32_t *n);
/* Whole GPUs (nvidia.com/gpu) node k has free: neither used whole nor shared. */
int64_t sched__whole_free(const sched_view *v, uint32_t k);
/* True when GPU j of node k (shares sh) can take a share of s thousandths. */
bool sched__slot_takes(const sched_view *v, uint32_t k, const uint16_t *sh, uint32_t j, int32_t s);

/* FGD (fgd.c): the score of node k for a pod of shape s (the growth of the node's GPU
 * fragmentation, negated, in the GPU field; cpu and memory utilisation break ties), and the
 * GPU of node k a share of s thousandths of p goes on. */
int64_t sched__fgd_score(const sched_view *v, const sched_shape *s, uint32_t k);
/* FGD's typical shapes for the cycle (from cfg->workload, else the model's pods). */
ts_rc sched__fgd_prepare(sched_view *v);
uint32_t sched__fgd_slot(const sched_view *v, const model_pod *p, uint32_t k, int32_t s);
/* The requests of p that node k lacks (bit i: request i). */
uint64_t sched__short_mask(const sched_view *v, const model_pod *p, uint32_t k);
/* The static filter signature of p with its reasons computed, or NULL when out of memory. */
const sched_sig *sched__static_reasons(sched_view *v, const sched_pending *p);
/* The message of sched__why_pending from its parts (no DRA detail); prev when the message
 * is the same text (so pods that stay pending for one reason share one copy). */
const char *sched__format_why(sched_view *v, const model_pod *p, const sched_reason *stat,
                              size_t nstat, const sched_mask_count *masks, size_t nmasks,
                              const char *prev);
/* Why no node fits a pod of the class, from counts kept up to date with the change log: the
 * same message as sched__why_pending, without a pass over every node each time. */
const char *sched__class_why(sched_view *v, sched_class *c);

/* Why the pod fits no node now, as kube-scheduler says it ("0/3 nodes are available: ...").
 * Returns a string in the result arena, NULL when out of memory. */
const char *sched__why_pending(sched_view *v, const sched_pending *p);

#endif
