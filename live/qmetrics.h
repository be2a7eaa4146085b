/*
 * live/qmetrics.h - the metrics a platform team's dashboards read, with Kueue v0.19's names,
 * labels and buckets where the meaning is the same (docs/metrics.md): queue and cohort gauges
 * rendered once per cycle from the cycle's queue report, Kueue's counters and histograms
 * counted when the writes they stand for landed, the cycle-time histogram, pending pods by
 * kind of reason, and GPUs allocated per node pool (read from the model when scraped).
 *
 * Under leader election every Kueue family carries `replica_role` as Kueue's does (leader,
 * follower; standalone without election), and a follower exports no cluster gauge at all:
 * it runs no cycle, so it has nothing true to say, and a dashboard's sum over replicas stays
 * the leader's. A replica that loses the lease drops its gauges at once; its counters stay
 * (each replica counts what it did, so sums of rates stay true).
 */
#ifndef LIVE_QMETRICS_H
#define LIVE_QMETRICS_H

#include "common/ts.h"
#include "model/model.h"
#include "scheduler/sched.h"

typedef struct qmetrics qmetrics;

qmetrics *qmetrics_new(void); /* returns new, NULL when out of memory */
void qmetrics_free(qmetrics *q);

typedef enum qmetrics_role {
  QMETRICS_STANDALONE, /* no leader election (the default role) */
  QMETRICS_LEADER,     /* holds the lease */
  QMETRICS_FOLLOWER,   /* stands by: exports no cluster gauge */
} qmetrics_role;

/* Whether the kueue_* families are Tessera's to export (the default): not when Kueue's own
 * controller admits (queueing.admission: kueue), which exports them itself; the same names
 * from both would be summed twice. tessera_* and scheduler_* families stay. */
void qmetrics_kueue(qmetrics *q, bool export_kueue);
/* The estimated waits of the workloads waiting in one ClusterQueue, from the last estimate of
 * their starts (live's place refresh): how many wait, how many of them the forward run starts,
 * and the nearest-rank p50 and p90 of those waits in seconds. */
typedef struct qmetrics_wait {
  const char *cluster_queue; /* interned */
  uint32_t waiting, estimated;
  double p50, p90;
} qmetrics_wait;
/* Replaces the waits rendered with each cycle's gauges (copied). */
void qmetrics_waits(qmetrics *q, const qmetrics_wait *w, size_t n);
/* Replaces the GPU room rendered with each cycle's gauges (copied; levels: the topology keys
 * of largest[1..nlevels]). */
void qmetrics_rooms(qmetrics *q, const sched_gpu_room *r, size_t n, const char *const *levels,
                    int nlevels);

/* This replica's role from now on. Becoming a follower drops the last cycle's gauges. */
void qmetrics_role_set(qmetrics *q, qmetrics_role role);
const char *qmetrics_role_name(qmetrics_role role); /* Kueue's label value */

/* A cycle ran in seconds s and returned res (fair_sharing: Kueue's fairSharing.enable): its
 * gauges replace the last cycle's, and it counts as an admission attempt when it had Kueue
 * workloads to try. Out of memory keeps the last cycle's gauges. */
void qmetrics_cycle(qmetrics *q, const model *m, const sched_result *res, double s,
                    bool fair_sharing);

/* A Kueue workload's admission landed (a pod of it is bound): counts it, its wait, in its
 * ClusterQueue, LocalQueue and every cohort above. */
void qmetrics_admitted(qmetrics *q, const sched_wl_event *ev);
/* A Kueue workload's eviction landed (the first of its pods went). */
void qmetrics_evicted(qmetrics *q, const sched_wl_event *ev);
/* The last pod of an evicted Kueue workload went, s seconds after its eviction landed: its
 * quota is released (Kueue's workload_eviction_latency_seconds). */
void qmetrics_eviction_latency(qmetrics *q, const sched_wl_event *ev, double s);
/* A cycle saw a Kueue workload become ready (SCHED_WL_READY) or end (SCHED_WL_FINISHED). */
void qmetrics_workload(qmetrics *q, const sched_wl_event *ev);

/* kube-scheduler's view (scheduler_* families, its meaning; profile: the scheduler name).
 * A scheduling attempt of one pod ended as result ("unschedulable" or "error"). */
void qmetrics_attempt(qmetrics *q, const char *profile, const char *result);
/* A pod's binding landed after attempts attempts, s seconds after its first attempt; its write
 * took bind_s of them (from the writer being given it to the API server's answer). */
void qmetrics_scheduled(qmetrics *q, const char *profile, double s, uint32_t attempts,
                        double bind_s);

/* Appends every family in Prometheus' text format; active: pods that arrived since the last
 * cycle and wait for their first attempt (scheduler_pending_pods{queue="active"}). */
ts_rc qmetrics_write(const qmetrics *q, const model *m, const sched_config *cfg, size_t active,
                     ts_buf *out);

/* Bucket bounds of tessera_scheduling_cycle_duration_seconds. */
#define QMETRICS_CYCLE_BUCKETS 14

#endif
