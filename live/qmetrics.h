/*
 * live/qmetrics.h - the metrics a platform team's dashboards read, with Kueue's names and
 * labels where the meaning is the same (docs/running.md, "Metrics"): queue gauges rendered once per
 * cycle from the cycle's queue report, Kueue's counters counted when the writes they stand
 * for landed, the cycle-time histogram, pending pods by kind of reason, and GPUs allocated
 * per node pool (read from the model when scraped).
 */
#ifndef LIVE_QMETRICS_H
#define LIVE_QMETRICS_H

#include "common/ts.h"
#include "model/model.h"
#include "scheduler/sched.h"

typedef struct qmetrics qmetrics;

qmetrics *qmetrics_new(void); /* returns new, NULL when out of memory */
void qmetrics_free(qmetrics *q);

/* A cycle ran in seconds s and returned res: its gauges replace the last cycle's. Out of
 * memory keeps the last cycle's gauges. */
void qmetrics_cycle(qmetrics *q, const model *m, const sched_result *res, double s);

/* A Kueue workload's admission landed (a pod of it is bound): counts it, and its wait. */
void qmetrics_admitted(qmetrics *q, const char *cluster_queue, int64_t waited_ns);
/* A Kueue workload's eviction landed (the first of its pods went). */
void qmetrics_evicted(qmetrics *q, const sched_wl_event *ev);

/* Appends every family in Prometheus' text format. */
ts_rc qmetrics_write(const qmetrics *q, const model *m, ts_buf *out);

/* Bucket bounds (seconds) of kueue_admission_wait_time_seconds: Kueue's, 1 then 2.5 x 2^k. */
#define QMETRICS_WAIT_BUCKETS 14
/* Bucket bounds of tessera_scheduling_cycle_duration_seconds. */
#define QMETRICS_CYCLE_BUCKETS 14

#endif
