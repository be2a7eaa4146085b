/*
 * live/live.h - the in-cluster scheduling loop, without the network: watch events go into the
 * model, cycles turn the model into decisions, and decisions become writes through a writer the
 * caller supplies (kubeclient in `tessera run`, a recording fake in the tests).
 *
 * What it guarantees, whatever the writer answers:
 *   - Order (kube-scheduler's; docs/architecture.md): every claim of every pod of a gang is
 * reserved (finalizer, then status with allocation and reservedFor) before any pod of the gang is
 * bound.
 *   - Assumed decisions: a bind or a claim allocation is applied to the model when it is
 *     issued, survives stale watch events until an event confirms it, and is rolled back when
 *     its write finally fails (claims already reserved for the gang are unreserved).
 *   - No double binding: no cycle runs while any write of the previous one is in flight, and a
 *     pod assumed bound is never offered to a cycle again.
 *   - Pending pods get PodScheduled=False once per distinct reason, not once per cycle.
 */
#ifndef LIVE_H
#define LIVE_H

#include "common/ts.h"
#include "model/model.h"
#include "model/wire.h"
#include "scheduler/sched.h"
#include "live/qmetrics.h"

typedef struct live live;

/* The writer. Every call that takes a token must eventually lead to exactly one
 * live_write_done(token, result), never from inside the call itself. Strings and the
 * allocation are borrowed for the duration of the call only. The loop never fails to issue a
 * write once it assumed its outcome: tokens are made with the cycle's decisions, before
 * anything is assumed. */
typedef struct live_writer {
  /* Reserve claim ns/name (uid) for the pod: when alloc is not NULL, add the finalizer and
   * write it (model_allocation_json encodes it) with reservedFor; otherwise only add the pod to
   * reservedFor (a shared claim allocated already). Bodies: model/wire.h. */
  void (*claim_reserve)(void *ud, void *token, const char *ns, const char *name,
                        const char *claim_uid, const model_allocation *alloc, const char *pod_name,
                        const char *pod_uid);
  /* Remove the pod from the claim's reservedFor; deallocate when no one is left. */
  void (*claim_unreserve)(void *ud, void *token, const char *ns, const char *name,
                          const char *pod_uid);
  /* Bind the pod to node; a pod sharing a GPU (gpu_index >= 0) gets the annotation
   * tessera.dev/gpu-index with it. */
  void (*bind)(void *ud, void *token, const char *ns, const char *name, const char *uid,
               const char *node, int32_t gpu_index);
  /* Evict the pod (the Eviction API, so PodDisruptionBudgets hold); reason says why, in
   * Kueue's words ("preempted to make room for Job team-a/x (InCohortReclamation)"). */
  void (*evict)(void *ud, void *token, const char *ns, const char *name, const char *uid,
                const char *reason);
  /* PodScheduled=False with reason (the kind of reason, sched_pending_why_name: only
   * "Unschedulable" tells autoscalers that nodes would help) and message, and, when event is
   * set and the pod is not gated, a FailedScheduling Event (rate-limited by the writer; event
   * is false when only the pod's place in its queues changed); when the status write ends,
   * whatever its outcome, the writer calls live_report_done(token). */
  void (*unschedulable)(void *ud, void *token, const char *ns, const char *name, const char *uid,
                        const char *reason, const char *message, bool event);
  /* Fire and forget, once per problem while it lasts: a problem of the Kueue objects that
   * makes ClusterQueues inactive (sched_result.problems); about is the object it names (NULL
   * for an implicit cohort). */
  void (*queue_problem)(void *ud, const model_obj *about, const char *problem);
  /* Optional: writes a ClusterQueue's or LocalQueue's status (Kueue's fields, through the
   * status subresource); must lead to exactly one live_queue_status_done(token, result), never
   * from inside the call. Called only after live_set_queue_status turned the writes on. */
  void (*queue_status)(void *ud, void *token, const model_queue_status *st);
  void *ud; /* passed to every call */
} live_writer;

typedef struct live_stats {
  uint64_t cycles;         /* cycles run */
  uint64_t bound;          /* binds that landed */
  uint64_t rolled_back;    /* pods whose assumed placement was rolled back */
  uint64_t evicted;        /* evictions that landed */
  uint64_t unschedulable;  /* PodScheduled=False updates issued */
  uint64_t writes;         /* writes issued */
  uint64_t inflight;       /* writes in flight now */
  uint64_t queue_problems; /* problems of the Kueue objects in the last cycle */
  uint64_t queue_status;   /* ClusterQueue / LocalQueue status writes issued */
  double last_cycle_s;     /* how long the last cycle took */
} live_stats;

/* A new loop over an empty model. cfg (borrowed, must outlive the loop) is the scheduling
 * configuration; writer is copied. Returns new, NULL when out of memory. */
live *live_new(const sched_config *cfg, const live_writer *writer);
/* Frees the loop and its model. Writes in flight must have answered (their tokens point into
 * the loop); NULL is a no-op. */
void live_free(live *l);

/* Feeds one watch event: o (decoded with model_decode; stolen) goes into the model. Pods and
 * claims assumed by earlier decisions keep their assumed state until an event confirms it. */
ts_rc live_event(live *l, model_event ev, model_obj *o, ts_err *err);

/* A deletion: removes the object of that kind and key (absent: TS_OK) and what the loop
 * assumed about it. Needs no decoded object: a re-list's tombstones carry only a name. */
ts_rc live_remove(live *l, model_kind kind, const char *ns, const char *name);

/* Objects of `kind` (a kind name) cannot be known: the server does not serve them to us. */
void live_kind_unseen(live *l, const char *group, const char *kind);

/* True when something changed since the last cycle (an event, a finished write). */
bool live_dirty(const live *l);
/* True while writes are in flight (no cycle runs then). */
bool live_busy(const live *l);

/* Runs one cycle at now_ns when no write is in flight, and issues its writes. *ran tells
 * whether it ran. */
ts_rc live_cycle(live *l, int64_t now_ns, bool *ran, ts_err *err);

/* The writer's answer for token (which knows its loop): TS_OK, or how it failed as kc_write_cb
 * says (TS_ECONFLICT, TS_ENOTFOUND, TS_EELSEWHERE: re-plan; TS_EBUDGET: retry the eviction
 * later; TS_ENOTLEADER: not written; anything else: failed). */
void live_write_done(void *token, ts_rc r);
/* A PodScheduled=False write ended (the token given to unschedulable). Reports run at most
 * LIVE_REPORTS_INFLIGHT at a time, so that a cycle leaving 40,000 pods pending does not hold
 * 40,000 writes (150 MB at 10,000 nodes and 100,000 pods). */
void live_report_done(void *token);
#define LIVE_REPORTS_INFLIGHT 256
/* Gangs of a cycle start while fewer writes than this are in flight. */
#define LIVE_WRITES_INFLIGHT 512

const model *live_model(const live *l); /* borrowed */
/* The model lent for a change that is undone before the loop runs again (the forward run of an
 * estimate, which gives every pod back as it was): nothing else may change it. */
model *live_model_lend(live *l);
/* Optional: when pending pods will start, for the place in their messages. fn runs m forward
 * from now_ns (cmd/ gives sim_estimate's forward run, bounded), tells started(sud, pod, at_ns)
 * of each pod pending now that starts, and gives m back as it was. */
typedef void (*live_started_fn)(void *sud, const model_pod *p, int64_t at_ns);
typedef ts_rc (*live_estimator)(void *ud, model *m, const sched_config *cfg, int64_t now_ns,
                                live_started_fn started, void *sud);
void live_set_estimator(live *l, live_estimator fn, void *ud);
/* The median run time (ns) of the last pods of p's ClusterQueue (else namespace) and requests
 * that ran to Succeeded while watched (at most 16 kept per queue and shape, 4,096 of those):
 * what a running pod that gives no duration of its own is expected to take; -1 when none. */
int64_t live_history_duration(const live *l, const model_pod *p);
/* Shadow mode (tessera run --shadow, which writes nothing): compares the placements of the pods
 * of scheduler `name` (interned; NULL: every pod not of the configured scheduler name) with
 * Tessera's (sched_shadow_eval on the loop's model). live_dirty is false afterwards, until the
 * next event. */
ts_rc live_shadow(live *l, const char *name, int64_t now_ns, sched_shadow *out, ts_err *err);
void live_get_stats(const live *l, live_stats *out);

/* ClusterQueue and LocalQueue status: interval_ns >= 0 turns the writes on (a queue's status
 * is written after a cycle when it changed and at least interval_ns after its last write; a
 * failed write is tried again the same way), < 0 turns them off (the default). */
void live_set_queue_status(live *l, int64_t interval_ns);
/* Forgets what status was written: the next cycles write every queue's again (as soon as each
 * write in flight ends). For a replica that becomes the leader again: another may have written
 * since. */
void live_queue_status_reset(live *l);
/* A status write ended (the token given to queue_status). */
void live_queue_status_done(void *token, ts_rc r);

/* This replica's role for the metrics (standalone, leader, follower). A follower exports no
 * cluster gauge; becoming one drops the last cycle's. */
void live_set_role(live *l, qmetrics_role role);

/* Appends the loop's counters in Prometheus' text format (for /metrics). */
ts_rc live_metrics(const live *l, ts_buf *out);

#endif
