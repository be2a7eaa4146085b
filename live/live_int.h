/*
 * live/live_int.h - internals of the in-cluster loop, shared by its files: live.c (events,
 * assumptions, the write pump, cycles), reports.c (PodScheduled=False reports) and qstatus.c
 * (ClusterQueue and LocalQueue status).
 */
#ifndef LIVE_INT_H
#define LIVE_INT_H

#include "live/live.h"
#include "live/qmetrics.h"

typedef struct gang_op gang_op;

typedef enum wkind { W_RESERVE, W_UNRESERVE, W_BIND, W_EVICT } wkind;

/* One write in flight: the token handed to the writer. Tokens of a gang's writes live inside
 * the gang's memory, made before anything is assumed, so issuing a write cannot fail. */
typedef struct wr {
  live *l;         /* the loop */
  wkind kind;      /* what was written */
  gang_op *g;      /* W_RESERVE / W_UNRESERVE / W_BIND: the gang it belongs to */
  uint32_t pod;    /* index in g->pods */
  uint32_t claim;  /* index in the pod's claims */
  double issued_s; /* monotonic time it was handed to the writer */
} wr;

typedef struct claim_op {
  char *name;             /* owned: the claim's name (namespace is the pod's) */
  char *uid;              /* owned: the claim's uid ("" when unknown) */
  bool has_alloc;         /* it is allocated here (else only reserved) */
  model_allocation alloc; /* owned: the allocation to write, when has_alloc */
  bool reserved;          /* the reserve write landed */
  wr reserve;             /* token of its reserve write */
  wr unreserve;           /* token of its unreserve write (roll-back) */
} claim_op;

typedef struct pod_op {
  char *ns, *name, *uid; /* owned */
  char *node;            /* owned: where it goes */
  int32_t gpu_index;     /* the GPU of its share, or -1 */
  claim_op *claims;      /* owned */
  uint32_t nclaims;      /* entries */
  bool bound;            /* the bind landed */
  wr bind;               /* token of its bind write */
} pod_op;

typedef enum op_phase { PHASE_RESERVE, PHASE_BIND, PHASE_ROLLBACK } op_phase;

struct gang_op {
  sched_wl_event adm;   /* a Kueue admission (adm.cluster_queue set), its strings held
                           (live__wl_hold), else zero */
  pod_op *pods;         /* owned */
  uint32_t npods;       /* entries */
  uint32_t outstanding; /* writes in flight */
  op_phase phase;       /* what the writes in flight are */
  bool failed;          /* a reserve failed: roll back instead of binding */
};

/* Takes a reference on each string of ev (label values may leave the model before the writes
 * they are counted for answer); live__wl_release drops them. Out of memory leaves a string
 * NULL (counted as ""). */
void live__wl_hold(sched_wl_event *ev);
void live__wl_release(sched_wl_event *ev);

/* A Kueue workload's eviction: counted once, when the first of its pods' evictions lands. */
typedef struct wl_evict {
  sched_wl_event ev; /* its strings held (live__wl_hold) */
  uint32_t refs;     /* evictions in flight, and evicted pods not gone yet, that point here */
  bool counted;      /* one landed */
  uint32_t left;     /* its pods not gone yet (eviction issued, not failed, pod still seen) */
  double landed_s;   /* monotonic: when the first eviction landed (Kueue's Evicted) */
} wl_evict;

/* An eviction in flight. */
typedef struct evict_op {
  wr token;     /* first: the token is the eviction */
  wl_evict *wl; /* the Kueue workload it is part of, or NULL */
  char key[];   /* the pod's "ns/name" */
} evict_op;

/* A PodScheduled=False report to write once the cycle's bindings are on their way. */
/* The last PodScheduled=False message written for a pod, and when. */
typedef struct report_memo {
  int64_t at_ns;     /* the cycle's clock when it was written */
  size_t reason_len; /* the message is the cycle's reason, then the pod's place in its queues */
  int64_t start_ns;  /* the estimated start the message gives, or -1 */
  char text[];       /* the message */
} report_memo;

typedef struct pend_report {
  const char *why;    /* the condition's reason (static: sched_pending_why_name) */
  const char *reason; /* the message: the copy kept in l->reported */
  bool event;         /* with a FailedScheduling Event (not when the place alone changed) */
  char *ns, *name;    /* owned block: ns, name and uid */
  const char *uid;    /* in the block */
} pend_report;

typedef TS_VEC(pend_report) pend_reports;

struct live {
  model *m;                /* the cluster as watched, plus assumptions */
  const sched_config *cfg; /* borrowed */
  live_writer w;           /* the writer */
  sched_state *state;      /* what cycles remember */
  ts_map assumed_pods;     /* pod uid (owned key) -> interned node name */
  ts_map reported;         /* pod uid (owned key) -> owned report_memo: last report */
  pend_reports reports;    /* reports waiting for the cycle's writes to answer */
  size_t reports_next;     /* the first of them not sent yet */
  gang_op **queue;         /* gangs of the last cycle not started yet (owned), or NULL */
  size_t qhead, qn;        /* the next to start, entries */
  bool pumping;            /* in pump (a writer may answer at once) */
  size_t reports_inflight; /* sent and not ended */
  bool sending;            /* in send_reports (a writer may answer at once) */
  ts_map problems;         /* queue problem (owned key) -> (void *)cycle it was last seen */
  bool dirty;              /* something changed since the last cycle */
  live_stats st;           /* counters */
  qmetrics *qm;            /* Kueue-named and cycle metrics */
  ts_map evicted;          /* pod key (owned) -> wl_evict: evicted pods not gone yet */
  ts_map attempts;         /* pod uid (owned key) -> owned pod_attempts, for pods attempted
                              and not bound yet (kube-scheduler's attempts and SLI) */
  size_t arrived;          /* pods of ours added unbound since the last cycle */
  double attempts_flush_s; /* monotonic: the last cycle that counted every pending pod */
  ts_map qstatus;          /* "ClusterQueue NAME" / "LocalQueue NS/NAME" -> qstat (owned) */
  int64_t qstatus_ns;      /* interval between status writes of a queue; < 0: off */
  int64_t places_ns;       /* the cycle clock when the pods' places in their queues were
                              last worked out (reports.c) */
  bool places_owed;        /* a pod was first reported between them, without its place */
  live_estimator estimate; /* when pending pods will start (live_set_estimator), or NULL */
  ts_map history;          /* "queue|shape" (owned key) -> owned run_history: run times of
                              finished pods (reports.c) */
  int64_t rooms_ns;        /* the cycle clock when the GPU room was last measured */
  ts_map starts;           /* pod uid (owned key) -> owned int64_t: when the last estimate
                              starts it (reports.c) */
  int64_t estimate_ns;     /* the cycle clock of that estimate */
  void *estimate_ud;       /* for it */
};

/* A pod's scheduling attempts, as kube-scheduler counts them. */
typedef struct pod_attempts {
  double first_s; /* monotonic: its first attempt */
  uint32_t n;     /* attempts counted */
} pod_attempts;

/* What a queue's status writes remember. */
typedef struct qstat {
  uint64_t written;      /* hash of the status that landed last (0: none) */
  uint64_t sending;      /* hash of the status in flight */
  int64_t sent_ns;       /* the cycle clock when it was last sent */
  bool sent;             /* it was sent once */
  int64_t transition_ns; /* when Active last changed */
  bool active;           /* Active, as last seen */
  bool inflight;         /* a write is in flight (its token is this) */
  bool gone;             /* the queue went while a write was in flight: freed when it ends */
  bool reset;            /* forgotten while a write was in flight: its answer is not kept */
  uint64_t seen;         /* the cycle that last reported it */
  char key[];            /* the map's key */
} qstat;

/* ---- maps that own their keys: the entry holds the key, so no lookup is done twice -------- */

typedef struct oentry {
  void *value; /* the caller's value */
  char key[];  /* the key, NUL-terminated */
} oentry;

void *live__oget(const ts_map *m, const char *key);
/* Puts value under key (copied); the replaced value (or NULL) goes to *old. */
ts_rc live__oput(ts_map *m, const char *key, void *value, void **old);
/* Removes key; returns its value (NULL when absent). */
void *live__odel(ts_map *m, const char *key);
/* Frees every entry, and every value with free_value (may be NULL). */
void live__oclear(ts_map *m, void (*free_value)(void *));

/* ---- reports.c ---------------------------------------------------------------------------- */

/* Keeps p's run time when it has just ended Succeeded (a pod of ours, with a start and an end). */
void live__record_run(live *l, const model_pod *p);

/* Queues the PodScheduled=False report of a pending decision when its reason is new. */
/* The pods' places in their queues, worked out from a cycle's result at most once a minute
 * (an explainer: a pass over the pods); NULL in the cycles between (or out of memory). */
typedef struct live_places live_places;
live_places *live__places(live *l, const sched_result *res, int64_t now_ns);
void live__places_free(live_places *c);
/* Queues d's report when its message changed (c: the places, or NULL to keep the last). */
void live__report_pending(live *l, const live_places *c, const sched_decision *d, int64_t now_ns);
/* Writes the queued reports, at most LIVE_REPORTS_INFLIGHT at a time. */
void live__send_reports(live *l);

/* ---- qstatus.c ---------------------------------------------------------------------------- */

/* Writes the status of the queues that changed in the cycle's report; forgets those gone. */
void live__write_queue_status(live *l, const sched_result *res, int64_t now_ns);
/* Frees the status memory (one with a write in flight is freed when the write ends). */
void live__free_qstatus(live *l);

#endif
