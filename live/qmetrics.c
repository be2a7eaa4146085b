/* live/qmetrics.c - Kueue-named queue metrics and Tessera's cycle, pending and GPU metrics;
 * see qmetrics.h. Names, labels and buckets follow Kueue v0.19.2's pkg/metrics/metrics.go
 * (tests/data/kueue-v0.19.2-metrics.txt, compared by test_qmetrics). */
#include "live/qmetrics.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kueue's generateExponentialBuckets(n): 1, then 2.5 doubling; admission_wait_time_seconds
 * has 16 since v0.17, the other wait histograms 14. */
static const double exp_le[16] = {1,   2.5, 5,    10,   20,   40,    80,    160,
                                  320, 640, 1280, 2560, 5120, 10240, 20480, 40960};
/* Prometheus' DefBuckets (Kueue's admission_attempt_duration_seconds sets none). */
static const double def_le[11] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
/* kube-scheduler's: ExponentialBuckets(0.01, 2, 20) and ExponentialBuckets(1, 2, 5). */
static const double sli_le[20] = {0.01,   0.02,   0.04,   0.08,    0.16,    0.32,   0.64,
                                  1.28,   2.56,   5.12,   10.24,   20.48,   40.96,  81.92,
                                  163.84, 327.68, 655.36, 1310.72, 2621.44, 5242.88};
static const double tries_le[5] = {1, 2, 4, 8, 16};
/* ExponentialBuckets(0.001, 2, 15): 1 ms to 16 s. */
static const double bind_le[15] = {0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128,
                                   0.256, 0.512, 1.024, 2.048, 4.096, 8.192, 16.384};
static const double cycle_le[QMETRICS_CYCLE_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

#define MAX_LE 20

/* One labelled series of a counter or a histogram. */
typedef struct series {
  uint64_t n;          /* counter value / observations */
  double sum;          /* histograms: sum of observations */
  uint64_t le[MAX_LE]; /* histograms: observations per bucket (not cumulative) */
  char labels[];       /* `a="x",b="y"` */
} series;

/* The counters and histograms, counted as events land. */
typedef enum fam {
  F_ATTEMPTS,
  F_ATTEMPT_S,
  F_QUOTA_RESERVED,
  F_QUOTA_RESERVED_WAIT,
  F_ADMITTED,
  F_ADMISSION_WAIT,
  F_LQ_QUOTA_RESERVED,
  F_LQ_QUOTA_RESERVED_WAIT,
  F_LQ_ADMITTED,
  F_LQ_ADMISSION_WAIT,
  F_COHORT_ADMITTED,
  F_EVICTED,
  F_LQ_EVICTED,
  F_PREEMPTED,
  F_READY_WAIT,
  F_ADMITTED_READY,
  F_LQ_READY_WAIT,
  F_LQ_ADMITTED_READY,
  F_READY_EVICTED,
  F_FINISHED,
  F_LQ_FINISHED,
  F_EVICTION_LATENCY,
  F_SCHED_ATTEMPTS,
  F_SCHED_SLI,
  F_SCHED_TRIES,
  F_BIND_WRITE,
  F_COUNT
} fam;

static const struct {
  const char *name, *help;
  const double *le; /* histograms: bucket bounds; NULL for a counter */
  int nle;          /* entries */
} fams[F_COUNT] = {
    [F_ATTEMPTS] = {"kueue_admission_attempts_total",
                    "Admission attempts (rounds of the Kueue cycle with heads to try), by result "
                    "(success: at least one workload admitted; inadmissible: none)."},
    [F_ATTEMPT_S] = {"kueue_admission_attempt_duration_seconds",
                     "The latency of an admission attempt, by result.", def_le, 11},
    [F_QUOTA_RESERVED] = {"kueue_quota_reserved_workloads_total",
                          "Workloads that got quota reserved, per cluster_queue and "
                          "priority_class (there are no admission checks: as admitted)."},
    [F_QUOTA_RESERVED_WAIT] = {"kueue_quota_reserved_wait_time_seconds",
                               "Time from a workload's creation or requeue to its quota "
                               "reservation, per cluster_queue and priority_class.",
                               exp_le, 14},
    [F_ADMITTED] = {"kueue_admitted_workloads_total",
                    "Workloads admitted per cluster_queue and priority_class (counted when a "
                    "pod of it is bound)."},
    [F_ADMISSION_WAIT] = {"kueue_admission_wait_time_seconds",
                          "Time from a workload's creation or requeue to its admission, per "
                          "cluster_queue and priority_class.",
                          exp_le, 16},
    [F_LQ_QUOTA_RESERVED] = {"kueue_local_queue_quota_reserved_workloads_total",
                             "Workloads that got quota reserved, per local queue."},
    [F_LQ_QUOTA_RESERVED_WAIT] = {"kueue_local_queue_quota_reserved_wait_time_seconds",
                                  "Time from a workload's creation or requeue to its quota "
                                  "reservation, per local queue.",
                                  exp_le, 14},
    [F_LQ_ADMITTED] = {"kueue_local_queue_admitted_workloads_total",
                       "Workloads admitted per local queue."},
    [F_LQ_ADMISSION_WAIT] = {"kueue_local_queue_admission_wait_time_seconds",
                             "Time from a workload's creation or requeue to its admission, per "
                             "local queue.",
                             exp_le, 14},
    [F_COHORT_ADMITTED] = {"kueue_cohort_subtree_admitted_workloads_total",
                           "Workloads admitted in the subtree of each cohort."},
    [F_EVICTED] = {"kueue_evicted_workloads_total",
                   "Workloads evicted per cluster_queue, reason (Preempted, PodsReadyTimeout, "
                   "ClusterQueueStopped, LocalQueueStopped) and underlying_cause, counted when "
                   "the first of their pods' evictions landed."},
    [F_LQ_EVICTED] = {"kueue_local_queue_evicted_workloads_total",
                      "Workloads evicted per local queue, reason and underlying_cause."},
    [F_PREEMPTED] = {"kueue_preempted_workloads_total",
                     "Workloads preempted per preempting_cluster_queue and reason "
                     "(InClusterQueue, InCohortReclamation, InCohortFairSharing, "
                     "InCohortReclaimWhileBorrowing)."},
    [F_READY_WAIT] = {"kueue_ready_wait_time_seconds",
                      "Time from a workload's creation or requeue until its pods were all Running "
                      "and Ready, per cluster_queue (waitForPodsReady on, as Kueue reports it).",
                      exp_le, 14},
    [F_ADMITTED_READY] = {"kueue_admitted_until_ready_wait_time_seconds",
                          "Time from a workload's admission until its pods were all Running and "
                          "Ready, per cluster_queue (waitForPodsReady on).",
                          exp_le, 14},
    [F_LQ_READY_WAIT] = {"kueue_local_queue_ready_wait_time_seconds",
                         "Time from creation or requeue until ready, per local queue.", exp_le, 14},
    [F_LQ_ADMITTED_READY] = {"kueue_local_queue_admitted_until_ready_wait_time_seconds",
                             "Time from admission until ready, per local queue.", exp_le, 14},
    [F_READY_EVICTED] = {"kueue_pods_ready_to_evicted_time_seconds",
                         "Time from a workload's pods becoming ready to its eviction, per "
                         "cluster_queue, reason and underlying_cause.",
                         exp_le, 14},
    [F_FINISHED] = {"kueue_finished_workloads_total",
                    "Workloads that ran and ended (every pod Succeeded or Failed), per "
                    "cluster_queue and priority_class."},
    [F_LQ_FINISHED] = {"kueue_local_queue_finished_workloads_total",
                       "Workloads that ran and ended, per local queue."},
    [F_EVICTION_LATENCY] = {"kueue_workload_eviction_latency_seconds",
                            "Time from a workload's eviction (the first of its pods' evictions "
                            "landed) until its last pod went and its quota was released, per "
                            "cluster_queue and reason.",
                            exp_le, 14},
    [F_SCHED_ATTEMPTS] = {"scheduler_schedule_attempts_total",
                          "kube-scheduler's: attempts to schedule pods, by result (scheduled, "
                          "unschedulable, error) and profile. A pod is attempted in a cycle run "
                          "because something changed, and at least every 5 minutes."},
    [F_SCHED_SLI] = {"scheduler_pod_scheduling_sli_duration_seconds",
                     "kube-scheduler's: from a pod's first scheduling attempt (after its gates "
                     "were removed) to its binding, by attempts (15+ above 14).",
                     sli_le, 20},
    [F_SCHED_TRIES] = {"scheduler_pod_scheduling_attempts",
                       "kube-scheduler's: attempts it took to schedule a pod.", tries_le, 5},
    [F_BIND_WRITE] = {"tessera_binding_duration_seconds",
                      "From a binding being handed to the writer to the API server's answer "
                      "(its queue in the client included): the API server's share of "
                      "scheduler_pod_scheduling_sli_duration_seconds.",
                      bind_le, 15},
};

/* The Kueue families carry replica_role; kube-scheduler's do not. */
static bool kueue_family(fam f) {
  return f < F_SCHED_ATTEMPTS;
}

struct qmetrics {
  ts_map series[F_COUNT];                    /* labels -> series (owned) */
  ts_buf gauges;                             /* the last cycle's gauges, in the text format */
  ts_map chains;                             /* ClusterQueue -> its cohorts, nearest first:
                                                "a\0b\0\0" (owned), as of the last cycle that admitted */
  qmetrics_role role;                        /* this replica's */
  bool no_kueue;                             /* Kueue's controller exports kueue_* itself */
  uint64_t cycle_le[QMETRICS_CYCLE_BUCKETS]; /* cycle durations per bucket */
  uint64_t cycles;                           /* cycles observed */
  double cycle_sum;                          /* their seconds */
  size_t unschedulable, backoff, gated;      /* pods the last cycle left pending, by
                                                kube-scheduler's queue */
  qmetrics_wait *waits;                      /* the last estimate's, per ClusterQueue (owned) */
  size_t nwaits;                             /* entries */
  sched_gpu_room *rooms;                     /* the last GPU room, per model (owned) */
  size_t nrooms;                             /* entries */
  const char *levels[SCHED_MAX_TOPOLOGY];    /* its topology keys (interned) */
  int nlevels;                               /* entries */
};

static void chains_clear(qmetrics *q) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&q->chains, &it, &s)) ts_free(s->value);
  ts_map_free(&q->chains);
  ts_map_init(&q->chains);
}

qmetrics *qmetrics_new(void) {
  qmetrics *q = ts_calloc(1, sizeof *q);
  if (!q) return NULL;
  for (int f = 0; f < F_COUNT; f++) ts_map_init(&q->series[f]);
  ts_map_init(&q->chains);
  ts_buf_init(&q->gauges, 0);
  return q;
}

void qmetrics_free(qmetrics *q) {
  if (!q) return;
  for (int f = 0; f < F_COUNT; f++) {
    size_t it = 0;
    const ts_map_slot *s;
    while (ts_map_next(&q->series[f], &it, &s)) ts_free(s->value);
    ts_map_free(&q->series[f]);
  }
  ts_free(q->waits);
  ts_free(q->rooms);
  chains_clear(q);
  ts_map_free(&q->chains);
  ts_buf_free(&q->gauges);
  ts_free(q);
}

const char *qmetrics_role_name(qmetrics_role role) {
  return role == QMETRICS_LEADER ? "leader" : role == QMETRICS_FOLLOWER ? "follower" : "standalone";
}

void qmetrics_kueue(qmetrics *q, bool export_kueue) {
  q->no_kueue = !export_kueue;
}

void qmetrics_role_set(qmetrics *q, qmetrics_role role) {
  q->role = role;
  if (role == QMETRICS_FOLLOWER) ts_buf_reset(&q->gauges);
}

/* ---- output ----------------------------------------------------------------------------- */

/* Appends text to out (the last cycle's gauges, already in the format). */
static void pappend(ts_prom *p, const char *text, size_t n) {
  if (p->rc == TS_OK) p->rc = ts_buf_append(p->b, text, n);
}

/* A label set of the pairs of kv (name, value, ..., NULL). */
static void plain_labels(ts_prom *l, const char *const *kv) {
  ts_buf_reset(l->b);
  for (; kv[0]; kv += 2) ts_prom_label(l, kv[0], kv[1]);
}

/* A Kueue family's label set: kv, then this replica's role. */
static void labels(const qmetrics *q, ts_prom *l, const char *const *kv) {
  plain_labels(l, kv);
  ts_prom_label(l, "replica_role", qmetrics_role_name(q->role));
}

/* The series of family f with these labels (created at zero), or NULL when out of memory. */
static series *get(qmetrics *q, fam f, const ts_prom *l) {
  const char *key = l->b->data ? l->b->data : "";
  size_t len = l->b->len;
  series *s;
  if (l->rc != TS_OK) return NULL;
  if ((s = ts_map_get(&q->series[f], key, len))) return s;
  if (!(s = ts_calloc(1, sizeof *s + len + 1))) return NULL;
  memcpy(s->labels, key, len);
  if (ts_map_put(&q->series[f], s->labels, len, s, NULL) != TS_OK) {
    ts_free(s);
    return NULL;
  }
  return s;
}

/* Counts one in the counter f, or observes v in the histogram f, under the labels kv. */
static void count(qmetrics *q, fam f, const char *const *kv, double v) {
  ts_buf buf;
  ts_prom l = {&buf, TS_OK};
  series *s;
  if (q->no_kueue && kueue_family(f)) return;
  ts_buf_init(&buf, 0);
  if (kueue_family(f))
    labels(q, &l, kv);
  else
    plain_labels(&l, kv);
  if ((s = get(q, f, &l))) {
    if (fams[f].le) {
      int k = 0;
      while (k < fams[f].nle && v > fams[f].le[k]) k++;
      if (k < fams[f].nle) s->le[k]++;
      s->sum += v;
    }
    s->n++;
  }
  ts_buf_free(&buf);
}

/* ---- counters --------------------------------------------------------------------------- */

void qmetrics_admitted(qmetrics *q, const sched_wl_event *ev) {
  const char *pc = ev->priority_class ? ev->priority_class : "";
  const char *cq[] = {"cluster_queue", ev->cluster_queue, "priority_class", pc, NULL};
  const char *lq[] = {"name", ev->local_queue, "namespace", ev->ns, "priority_class", pc, NULL};
  const char *chain;
  double w = ev->waited_ns > 0 ? (double)ev->waited_ns / 1e9 : 0;
  count(q, F_QUOTA_RESERVED, cq, 0);
  count(q, F_QUOTA_RESERVED_WAIT, cq, w);
  count(q, F_ADMITTED, cq, 0);
  count(q, F_ADMISSION_WAIT, cq, w);
  if (ev->local_queue) {
    count(q, F_LQ_QUOTA_RESERVED, lq, 0);
    count(q, F_LQ_QUOTA_RESERVED_WAIT, lq, w);
    count(q, F_LQ_ADMITTED, lq, 0);
    count(q, F_LQ_ADMISSION_WAIT, lq, w);
  }
  chain = ev->cluster_queue ? ts_map_get(&q->chains, ev->cluster_queue, strlen(ev->cluster_queue))
                            : NULL;
  for (; chain && *chain; chain += strlen(chain) + 1) {
    const char *co[] = {"cohort", chain, "priority_class", pc, NULL};
    count(q, F_COHORT_ADMITTED, co, 0);
  }
}

void qmetrics_evicted(qmetrics *q, const sched_wl_event *ev) {
  const char *pc = ev->priority_class ? ev->priority_class : "";
  const char *cause = ev->cause ? ev->cause : "";
  const char *cq[] = {"cluster_queue", ev->cluster_queue, "reason", ev->reason, "underlying_cause",
                      cause,           "priority_class",  pc,       NULL};
  const char *lq[] = {"name",     ev->local_queue,    "namespace", ev->ns,           "reason",
                      ev->reason, "underlying_cause", cause,       "priority_class", pc,
                      NULL};
  count(q, F_EVICTED, cq, 0);
  if (ev->local_queue) count(q, F_LQ_EVICTED, lq, 0);
  if (ev->ready_evicted_ns >= 0) {
    const char *re[] = {
        "cluster_queue", ev->cluster_queue, "reason", ev->reason, "underlying_cause", cause, NULL};
    count(q, F_READY_EVICTED, re, (double)ev->ready_evicted_ns / 1e9);
  }
  if (ev->preempting_cq && ev->preempt_reason) {
    const char *pr[] = {"preempting_cluster_queue", ev->preempting_cq, "reason", ev->preempt_reason,
                        NULL};
    count(q, F_PREEMPTED, pr, 0);
  }
}

void qmetrics_eviction_latency(qmetrics *q, const sched_wl_event *ev, double s) {
  const char *kv[] = {"cluster_queue", ev->cluster_queue, "reason", ev->reason, NULL};
  count(q, F_EVICTION_LATENCY, kv, s > 0 ? s : 0);
}

void qmetrics_workload(qmetrics *q, const sched_wl_event *ev) {
  const char *pc = ev->priority_class ? ev->priority_class : "";
  const char *cq[] = {"cluster_queue", ev->cluster_queue, "priority_class", pc, NULL};
  const char *lq[] = {"name", ev->local_queue, "namespace", ev->ns, "priority_class", pc, NULL};
  if (ev->kind == SCHED_WL_READY) {
    double w = ev->waited_ns > 0 ? (double)ev->waited_ns / 1e9 : 0;
    double a = ev->admitted_ready_ns > 0 ? (double)ev->admitted_ready_ns / 1e9 : 0;
    count(q, F_READY_WAIT, cq, w);
    count(q, F_ADMITTED_READY, cq, a);
    if (ev->local_queue) count(q, F_LQ_READY_WAIT, lq, w), count(q, F_LQ_ADMITTED_READY, lq, a);
  } else if (ev->kind == SCHED_WL_FINISHED) {
    count(q, F_FINISHED, cq, 0);
    if (ev->local_queue) count(q, F_LQ_FINISHED, lq, 0);
  }
}

void qmetrics_attempt(qmetrics *q, const char *profile, const char *result) {
  const char *kv[] = {"result", result, "profile", profile, NULL};
  count(q, F_SCHED_ATTEMPTS, kv, 0);
}

void qmetrics_scheduled(qmetrics *q, const char *profile, double s, uint32_t attempts,
                        double bind_s) {
  const char *kv[] = {"result", "scheduled", "profile", profile, NULL};
  char n[16];
  const char *sli[] = {"attempts", n, NULL}, *none[] = {NULL};
  if (attempts >= 15)
    snprintf(n, sizeof n, "15+");
  else
    snprintf(n, sizeof n, "%u", attempts);
  count(q, F_SCHED_ATTEMPTS, kv, 0);
  count(q, F_SCHED_SLI, sli, s > 0 ? s : 0);
  count(q, F_SCHED_TRIES, none, attempts);
  count(q, F_BIND_WRITE, none, bind_s > 0 ? bind_s : 0);
}

/* ---- the cycle's gauges ----------------------------------------------------------------- */

static void head(ts_prom *b, const char *name, const char *type, const char *help) {
  ts_prom_family f = {name, type, help, {NULL}};
  ts_prom_head(b, &f);
}

/* A quota tree's amount in the metric's unit (cores, GPUs, bytes). */
static double amount(const model_resources *rt, int resource, int64_t v) {
  return resource == MODEL_RES_CPU ? (double)v / 1000.0 : (double)v / (double)q_scale(rt, resource);
}

/* One sample: name{labels} value. */
static void sample(ts_prom *b, const char *name, const ts_prom *l, double v) {
  ts_prom_printf(b, "%s{%s} ", name, l->b->data ? l->b->data : "");
  ts_prom_value(b, v);
  ts_prom_printf(b, "\n");
}

/* The context of one rendering: the cycle's report, the model, the label buffer. */
typedef struct render {
  const qmetrics *q;
  const model *m;
  const q_report *r;
  ts_prom *b; /* the text */
  ts_prom *l; /* labels being built */
} render;

typedef enum frv { FRV_RESERVED, FRV_NOMINAL, FRV_BLIMIT, FRV_LLIMIT } frv;

/* A ClusterQueue's flavor-resources: one sample per flavor and resource; an unset limit is
 * +Inf, as Kueue reports it. */
static void cq_frs(render *x, const char *name, const q_cq_report *c, frv what) {
  const model_resources *rt = model_resources_of(x->m);
  for (uint32_t i = 0; i < c->nfrs; i++) {
    const q_fr_report *f = &c->frs[i];
    const char *rn = model_resource_name(rt, f->resource);
    const char *kv[] = {
        "cohort", c->cohort, "cluster_queue", c->name, "flavor", f->flavor, "resource", rn, NULL};
    double v =
        what == FRV_RESERVED  ? amount(rt, f->resource, f->usage)
        : what == FRV_NOMINAL ? amount(rt, f->resource, f->nominal)
        : what == FRV_BLIMIT
            ? (f->has_borrowing_limit ? amount(rt, f->resource, f->borrowing_limit) : INFINITY)
            : (f->has_lending_limit ? amount(rt, f->resource, f->lending_limit) : INFINITY);
    labels(x->q, x->l, kv);
    sample(x->b, name, x->l, v);
  }
}

/* One sample per ClusterQueue (lq false) or LocalQueue (lq true), with status when not NULL,
 * of the uint32_t count at offset in its report. */
static void counts(render *x, bool lq, const char *name, const char *status, size_t offset) {
  size_t n = lq ? x->r->nlqs : x->r->ncqs;
  for (size_t i = 0; i < n; i++) {
    const char *rep = lq ? (const char *)&x->r->lqs[i] : (const char *)&x->r->cqs[i];
    const char *kv[7] = {NULL};
    uint32_t v;
    int k = 0;
    memcpy(&v, rep + offset, sizeof v);
    if (lq) {
      kv[k++] = "name", kv[k++] = x->r->lqs[i].name;
      kv[k++] = "namespace", kv[k++] = x->r->lqs[i].ns;
    } else {
      kv[k++] = "cluster_queue", kv[k++] = x->r->cqs[i].name;
    }
    if (status) kv[k++] = "status", kv[k++] = status;
    labels(x->q, x->l, kv);
    sample(x->b, name, x->l, v);
  }
}

static void cq_gauges(render *x, bool fair_sharing) {
  static const struct {
    const char *name, *help;
    frv what;
  } frs[] = {
      {"kueue_cluster_queue_resource_reservation",
       "Quota reserved per cluster_queue, flavor and resource (cpu in cores, memory in bytes).",
       FRV_RESERVED},
      {"kueue_cluster_queue_resource_usage",
       "Quota used by admitted workloads per cluster_queue, flavor and resource (there are no "
       "admission checks: as reserved).",
       FRV_RESERVED},
      {"kueue_cluster_queue_nominal_quota", "nominalQuota per cluster_queue, flavor and resource.",
       FRV_NOMINAL},
      {"kueue_cluster_queue_borrowing_limit",
       "borrowingLimit per cluster_queue, flavor and resource (+Inf when unset).", FRV_BLIMIT},
      {"kueue_cluster_queue_lending_limit",
       "lendingLimit per cluster_queue, flavor and resource (+Inf when unset).", FRV_LLIMIT},
  };
  static const char *const statuses[] = {"pending", "active", "terminating"};
  const model_resources *rt = model_resources_of(x->m);
  head(x->b, "kueue_pending_workloads", "gauge",
       "Pending workloads per cluster_queue and status (active: in the queue; inadmissible: "
       "parked until quota is released, or in an inactive queue).");
  counts(x, false, "kueue_pending_workloads", "active", offsetof(q_cq_report, pending_active));
  counts(x, false, "kueue_pending_workloads", "inadmissible",
         offsetof(q_cq_report, pending_inadmissible));
  head(x->b, "kueue_reserving_active_workloads", "gauge",
       "Workloads holding quota per cluster_queue.");
  counts(x, false, "kueue_reserving_active_workloads", NULL, offsetof(q_cq_report, admitted));
  head(x->b, "kueue_admitted_active_workloads", "gauge",
       "Admitted workloads per cluster_queue (there are no admission checks: the same as "
       "kueue_reserving_active_workloads).");
  counts(x, false, "kueue_admitted_active_workloads", NULL, offsetof(q_cq_report, admitted));
  head(x->b, "kueue_cluster_queue_status", "gauge",
       "1 for the status of each cluster_queue (active, or pending when it cannot admit).");
  for (size_t i = 0; i < x->r->ncqs; i++)
    for (size_t k = 0; k < 3; k++) {
      const char *kv[] = {"cluster_queue", x->r->cqs[i].name, "status", statuses[k], NULL};
      labels(x->q, x->l, kv);
      sample(x->b, "kueue_cluster_queue_status", x->l, x->r->cqs[i].inactive ? k == 0 : k == 1);
    }
  for (size_t f = 0; f < sizeof frs / sizeof *frs; f++) {
    head(x->b, frs[f].name, "gauge", frs[f].help);
    for (size_t i = 0; i < x->r->ncqs; i++) cq_frs(x, frs[f].name, &x->r->cqs[i], frs[f].what);
  }
  head(x->b, "kueue_cluster_queue_resource_pending", "gauge",
       "What the pending workloads of each cluster_queue request in all, per resource.");
  for (size_t i = 0; i < x->r->ncqs; i++)
    for (uint32_t k = 0; k < x->r->cqs[i].npending_res; k++) {
      const q_res_amount *a = &x->r->cqs[i].pending_res[k];
      const char *kv[] = {"cluster_queue", x->r->cqs[i].name, "resource",
                          model_resource_name(rt, a->resource), NULL};
      labels(x->q, x->l, kv);
      sample(x->b, "kueue_cluster_queue_resource_pending", x->l,
             amount(rt, a->resource, a->amount));
    }
  head(x->b, "kueue_cluster_queue_info", "gauge",
       "1 per cluster_queue, with its parent and root cohort (\"\" when none).");
  for (size_t i = 0; i < x->r->ncqs; i++) {
    const char *kv[] = {"cluster_queue",
                        x->r->cqs[i].name,
                        "parent_cohort",
                        x->r->cqs[i].cohort,
                        "root_cohort",
                        x->r->cqs[i].root,
                        NULL};
    labels(x->q, x->l, kv);
    sample(x->b, "kueue_cluster_queue_info", x->l, 1);
  }
  if (!fair_sharing) return; /* Kueue reports shares only with fair sharing on */
  head(x->b, "kueue_cluster_queue_weighted_share", "gauge",
       "Weighted share of each cluster_queue under fair sharing: its dominant resource share "
       "(per mille of what the cohort lends) over its weight; 0 within nominal quota; NaN when "
       "it borrows with weight 0.");
  for (size_t i = 0; i < x->r->ncqs; i++) {
    double s = x->r->cqs[i].weighted_share;
    const char *kv[] = {"cluster_queue", x->r->cqs[i].name, "cohort", x->r->cqs[i].cohort, NULL};
    labels(x->q, x->l, kv);
    sample(x->b, "kueue_cluster_queue_weighted_share", x->l, isinf(s) ? NAN : s);
  }
}

static void cohort_gauges(render *x, bool fair_sharing) {
  const model_resources *rt = model_resources_of(x->m);
  head(x->b, "kueue_cohort_info", "gauge", "1 per cohort, with its parent and root cohort.");
  for (size_t i = 0; i < x->r->ncohorts; i++) {
    const q_cohort_report *c = &x->r->cohorts[i];
    const char *kv[] = {"cohort", c->name, "parent_cohort", c->parent, "root_cohort",
                        c->root,  NULL};
    labels(x->q, x->l, kv);
    sample(x->b, "kueue_cohort_info", x->l, 1);
  }
  head(x->b, "kueue_cohort_subtree_admitted_active_workloads", "gauge",
       "Workloads holding quota in the queues under each cohort.");
  for (size_t i = 0; i < x->r->ncohorts; i++) {
    const char *kv[] = {"cohort", x->r->cohorts[i].name, NULL};
    labels(x->q, x->l, kv);
    sample(x->b, "kueue_cohort_subtree_admitted_active_workloads", x->l, x->r->cohorts[i].admitted);
  }
  for (int w = 0; w < 2; w++) {
    const char *name =
        w ? "kueue_cohort_subtree_resource_reservations" : "kueue_cohort_subtree_quota";
    head(x->b, name, "gauge",
         w ? "Quota reserved by the queues under each cohort, per flavor and resource (only "
             "where above 0)."
           : "Each cohort's subtree quota (its own and what its children lend), per flavor and "
             "resource (only where above 0).");
    for (size_t i = 0; i < x->r->ncohorts; i++)
      for (uint32_t k = 0; k < x->r->cohorts[i].nfrs; k++) {
        const q_fr_report *f = &x->r->cohorts[i].frs[k];
        int64_t v = w ? f->usage : f->nominal;
        const char *kv[] = {"cohort",   x->r->cohorts[i].name,
                            "flavor",   f->flavor,
                            "resource", model_resource_name(rt, f->resource),
                            NULL};
        if (v <= 0) continue;
        labels(x->q, x->l, kv);
        sample(x->b, name, x->l, amount(rt, f->resource, v));
      }
  }
  if (!fair_sharing) return;
  head(x->b, "kueue_cohort_weighted_share", "gauge",
       "Weighted share of each cohort under fair sharing (+Inf when it borrows with weight 0).");
  for (size_t i = 0; i < x->r->ncohorts; i++) {
    const char *kv[] = {"cohort", x->r->cohorts[i].name, NULL};
    labels(x->q, x->l, kv);
    sample(x->b, "kueue_cohort_weighted_share", x->l, x->r->cohorts[i].weighted_share);
  }
}

static void lq_gauges(render *x) {
  static const char *const active[] = {"True", "False", "Unknown"};
  const model_resources *rt = model_resources_of(x->m);
  head(x->b, "kueue_local_queue_pending_workloads", "gauge",
       "Pending workloads per local queue (name, namespace) and status.");
  counts(x, true, "kueue_local_queue_pending_workloads", "active",
         offsetof(q_lq_report, pending_active));
  counts(x, true, "kueue_local_queue_pending_workloads", "inadmissible",
         offsetof(q_lq_report, pending_inadmissible));
  head(x->b, "kueue_local_queue_reserving_active_workloads", "gauge",
       "Workloads holding quota per local queue.");
  counts(x, true, "kueue_local_queue_reserving_active_workloads", NULL,
         offsetof(q_lq_report, admitted));
  head(x->b, "kueue_local_queue_admitted_active_workloads", "gauge",
       "Admitted workloads per local queue.");
  counts(x, true, "kueue_local_queue_admitted_active_workloads", NULL,
         offsetof(q_lq_report, admitted));
  head(x->b, "kueue_local_queue_status", "gauge",
       "1 for the Active condition status of each local queue (True, False).");
  for (size_t i = 0; i < x->r->nlqs; i++)
    for (size_t k = 0; k < 3; k++) {
      const char *kv[] = {"name",   x->r->lqs[i].name, "namespace", x->r->lqs[i].ns,
                          "active", active[k],         NULL};
      labels(x->q, x->l, kv);
      sample(x->b, "kueue_local_queue_status", x->l, x->r->lqs[i].inactive ? k == 1 : k == 0);
    }
  for (int w = 0; w < 2; w++) {
    const char *name =
        w ? "kueue_local_queue_resource_usage" : "kueue_local_queue_resource_reservation";
    head(x->b, name, "gauge",
         w ? "Quota used by admitted workloads per local queue, flavor and resource."
           : "Quota reserved per local queue, flavor and resource (cpu in cores, memory in "
             "bytes).");
    for (size_t i = 0; i < x->r->nlqs; i++)
      for (uint32_t k = 0; k < x->r->lqs[i].nfrs; k++) {
        const q_fr_report *f = &x->r->lqs[i].frs[k];
        const char *kv[] = {
            "name",   x->r->lqs[i].name, "namespace", x->r->lqs[i].ns,
            "flavor", f->flavor,         "resource",  model_resource_name(rt, f->resource),
            NULL};
        labels(x->q, x->l, kv);
        sample(x->b, name, x->l, amount(rt, f->resource, f->usage));
      }
  }
}

static void pending_gauge(qmetrics *q, ts_prom *b, const sched_result *res, ts_prom *l) {
  size_t n[SCHED_WHY_COUNT] = {0};
  for (size_t i = 0; i < res->ndecisions; i++)
    if (res->decisions[i].kind == SCHED_PENDING && res->decisions[i].why < SCHED_WHY_COUNT)
      n[res->decisions[i].why]++;
  q->backoff = n[SCHED_WHY_BACKOFF];
  q->gated = n[SCHED_WHY_GATED];
  q->unschedulable = 0;
  for (int w = 0; w < SCHED_WHY_COUNT; w++)
    if (w != SCHED_WHY_BACKOFF && w != SCHED_WHY_GATED) q->unschedulable += n[w];
  head(b, "tessera_pending_pods", "gauge",
       "Pods the last cycle left pending, by kind of reason (Unschedulable, WaitingForGang, "
       "Blocked, WaitingForQuota, Backoff, NoQueueName, SchedulerError, SchedulingGated).");
  for (int w = 0; w < SCHED_WHY_COUNT; w++) {
    ts_buf_reset(l->b);
    ts_prom_label(l, "reason", sched_pending_why_name((sched_pending_why)w));
    sample(b, "tessera_pending_pods", l, (double)n[w]);
  }
}

/* tessera_cluster_queue_pending_workloads: the workloads (gangs, or pods on their own) the
 * cycle left pending, per ClusterQueue and kind of reason; every ClusterQueue gets every kind a
 * queued workload can have (0 included: a series that vanishes reads as no data). */
static void cq_pending_by_reason(render *x, const sched_result *res) {
  ts_map by_cq; /* ClusterQueue (interned) -> uint32_t[SCHED_WHY_COUNT] */
  const q_report *r = x->r;
  uint32_t *counts = ts_calloc(r->ncqs * SCHED_WHY_COUNT + 1, sizeof *counts);
  if (!counts) return;
  ts_map_init(&by_cq);
  for (size_t i = 0; i < r->ncqs; i++)
    ts_map_put(&by_cq, r->cqs[i].name, strlen(r->cqs[i].name), counts + i * SCHED_WHY_COUNT, NULL);
  for (size_t g = 0; g < res->ngroups; g++) {
    const sched_decision *d = &res->decisions[res->groups[g].first];
    const char *cq;
    uint32_t *n;
    if (d->kind != SCHED_PENDING || d->why >= SCHED_WHY_COUNT) continue;
    if (!(cq = sched_pod_queue(x->m, d->pod)) || !(n = ts_map_get(&by_cq, cq, strlen(cq))))
      continue;
    n[d->why]++;
  }
  head(x->b, "tessera_cluster_queue_pending_workloads", "gauge",
       "Workloads the last cycle left pending per cluster_queue, by kind of reason (as "
       "tessera_pending_pods names them).");
  for (size_t i = 0; i < r->ncqs; i++)
    for (int w = 0; w < SCHED_WHY_COUNT; w++) {
      const char *kv[] = {"cluster_queue", r->cqs[i].name, "reason",
                          sched_pending_why_name((sched_pending_why)w), NULL};
      if (w == SCHED_WHY_NO_QUEUE) continue; /* a queued workload has a queue name */
      labels(x->q, x->l, kv);
      sample(x->b, "tessera_cluster_queue_pending_workloads", x->l,
             (double)counts[i * SCHED_WHY_COUNT + (size_t)w]);
    }
  ts_map_free(&by_cq);
  ts_free(counts);
}

void qmetrics_waits(qmetrics *q, const qmetrics_wait *w, size_t n) {
  qmetrics_wait *copy = n ? ts_malloc(n * sizeof *copy) : NULL;
  if (n && !copy) return; /* the last ones stay */
  if (n) memcpy(copy, w, n * sizeof *copy);
  ts_free(q->waits);
  q->waits = copy, q->nwaits = n;
}

void qmetrics_rooms(qmetrics *q, const sched_gpu_room *r, size_t n, const char *const *levels,
                    int nlevels) {
  sched_gpu_room *copy = n ? ts_malloc(n * sizeof *copy) : NULL;
  if (n && !copy) return; /* the last ones stay */
  if (n) memcpy(copy, r, n * sizeof *copy);
  ts_free(q->rooms);
  q->rooms = copy, q->nrooms = n;
  q->nlevels = nlevels < SCHED_MAX_TOPOLOGY ? nlevels : SCHED_MAX_TOPOLOGY;
  for (int i = 0; i < q->nlevels; i++) q->levels[i] = levels[i];
}

/* tessera_gpu_stranded and tessera_gpu_largest_free, per GPU model, from the last room. */
static void gpu_rooms(qmetrics *q, ts_prom *b, ts_prom *l) {
  head(b, "tessera_gpu_stranded", "gauge",
       "Free GPUs per GPU model on nodes that none of the pending GPU pods' shapes can use "
       "(0 when no pod asking for GPUs waits; refreshed at most once a minute).");
  for (size_t i = 0; i < q->nrooms; i++) {
    ts_buf_reset(l->b);
    ts_prom_label(l, "gpu_model", q->rooms[i].model);
    sample(b, "tessera_gpu_stranded", l, (double)q->rooms[i].stranded);
  }
  head(b, "tessera_gpu_largest_free", "gauge",
       "The most free GPUs of one GPU model in one node (level=\"node\") or in one domain of a "
       "topology level: the largest gang of one-GPU pods that fits there now.");
  for (size_t i = 0; i < q->nrooms; i++)
    for (int k = 0; k <= q->nlevels; k++) {
      ts_buf_reset(l->b);
      ts_prom_label(l, "gpu_model", q->rooms[i].model);
      ts_prom_label(l, "level", k ? q->levels[k - 1] : "node");
      sample(b, "tessera_gpu_largest_free", l, (double)q->rooms[i].largest[k]);
    }
}

/* tessera_cluster_queue_estimated_wait_seconds{quantile} and _estimated_workloads: per
 * ClusterQueue of the cycle, from the last estimate (the quantiles only where some workload
 * got one). */
static void cq_waits(render *x) {
  const q_report *r = x->r;
  head(x->b, "tessera_cluster_queue_estimated_workloads", "gauge",
       "Workloads waiting per cluster_queue whose start the last estimate gave (refreshed at "
       "most once a minute).");
  for (int pass = 0; pass < 2; pass++) {
    if (pass)
      head(x->b, "tessera_cluster_queue_estimated_wait_seconds", "gauge",
           "Estimated wait of the workloads waiting per cluster_queue (nearest-rank quantile "
           "over those the last estimate starts).");
    for (size_t i = 0; i < r->ncqs; i++) {
      const qmetrics_wait *w = NULL;
      for (size_t k = 0; k < x->q->nwaits && !w; k++)
        if (!strcmp(x->q->waits[k].cluster_queue, r->cqs[i].name)) w = &x->q->waits[k];
      if (!pass) {
        const char *kv[] = {"cluster_queue", r->cqs[i].name, NULL};
        labels(x->q, x->l, kv);
        sample(x->b, "tessera_cluster_queue_estimated_workloads", x->l,
               w ? (double)w->estimated : 0);
        continue;
      }
      if (!w || !w->estimated) continue;
      for (int qn = 0; qn < 2; qn++) {
        const char *kv[] = {"cluster_queue", r->cqs[i].name, "quantile", qn ? "0.9" : "0.5", NULL};
        labels(x->q, x->l, kv);
        sample(x->b, "tessera_cluster_queue_estimated_wait_seconds", x->l, qn ? w->p90 : w->p50);
      }
    }
  }
}

/* Each ClusterQueue's cohorts, nearest first, for counting admissions in every cohort above. */
static void chains_build(qmetrics *q, const q_report *r) {
  ts_map parent; /* cohort -> its report */
  chains_clear(q);
  ts_map_init(&parent);
  for (size_t i = 0; i < r->ncohorts; i++)
    if (ts_map_put(&parent, r->cohorts[i].name, strlen(r->cohorts[i].name), (void *)&r->cohorts[i],
                   NULL) != TS_OK)
      goto out;
  for (size_t i = 0; i < r->ncqs; i++) {
    ts_buf chain;
    const q_cohort_report *c = NULL;
    bool ok = true;
    if (!r->cqs[i].cohort) continue;
    ts_buf_init(&chain, 0);
    for (const char *name = r->cqs[i].cohort; name && ok; name = c ? c->parent : NULL) {
      ok = ts_buf_append(&chain, name, strlen(name) + 1) == TS_OK;
      c = ts_map_get(&parent, name, strlen(name));
      if (chain.len > 64 * 1024) break; /* a cycle would not end (the tree refuses them) */
    }
    if (ok) ok = ts_buf_append(&chain, "", 1) == TS_OK;
    if (!ok ||
        ts_map_put(&q->chains, r->cqs[i].name, strlen(r->cqs[i].name), chain.data, NULL) != TS_OK)
      ts_buf_free(&chain);
  }
out:
  ts_map_free(&parent);
}

void qmetrics_cycle(qmetrics *q, const model *m, const sched_result *res, double s,
                    bool fair_sharing) {
  ts_buf text, lab;
  ts_prom b = {&text, TS_OK}, l = {&lab, TS_OK};
  render x = {q, m, &res->queues, &b, &l};
  int k = 0;
  while (k < QMETRICS_CYCLE_BUCKETS && s > cycle_le[k]) k++;
  if (k < QMETRICS_CYCLE_BUCKETS) q->cycle_le[k]++;
  q->cycles++;
  q->cycle_sum += s;
  for (size_t i = 0; i < res->nattempts; i++) {
    const char *kv[] = {"result", res->attempts[i].admitted ? "success" : "inadmissible", NULL};
    count(q, F_ATTEMPTS, kv, 0);
    count(q, F_ATTEMPT_S, kv, res->attempts[i].s);
  }
  for (size_t i = 0; i < res->nevents; i++) /* the cohorts above, for the admissions to count */
    if (res->events[i].kind == SCHED_WL_ADMITTED) {
      chains_build(q, &res->queues);
      break;
    }
  if (q->role == QMETRICS_FOLLOWER) return; /* a follower has no cluster gauges */
  ts_buf_init(&text, 0);
  ts_buf_init(&lab, 0);
  pending_gauge(q, &b, res, &l);
  cq_pending_by_reason(&x, res);
  cq_waits(&x);
  gpu_rooms(q, &b, &l);
  if (!q->no_kueue) {
    cq_gauges(&x, fair_sharing);
    cohort_gauges(&x, fair_sharing);
    lq_gauges(&x);
  }
  if (b.rc != TS_OK || l.rc != TS_OK) {
    ts_buf_free(&text);
  } else {
    ts_buf_free(&q->gauges);
    q->gauges = text;
  }
  ts_buf_free(&lab);
}

/* ---- on scrape -------------------------------------------------------------------------- */

static int series_cmp(const void *a, const void *b) {
  return strcmp((*(series *const *)a)->labels, (*(series *const *)b)->labels);
}

static void write_family(const qmetrics *q, fam f, ts_prom *out) {
  size_t n = 0, it = 0;
  const ts_map_slot *s;
  const char *name = fams[f].name;
  ts_prom_family hf = {name, "histogram", fams[f].help, {NULL}};
  series **v = ts_malloc((q->series[f].count + 1) * sizeof *v);
  if (!q->series[f].count && (!kueue_family(f) || q->no_kueue)) { /* none until counted */
    ts_free(v);
    return;
  }
  head(out, name, fams[f].le ? "histogram" : "counter", fams[f].help);
  if (!v) {
    out->rc = TS_ENOMEM;
    return;
  }
  while (ts_map_next(&q->series[f], &it, &s)) v[n++] = s->value;
  qsort(v, n, sizeof *v, series_cmp);
  for (size_t i = 0; i < n; i++) {
    if (!fams[f].le) {
      ts_prom_printf(out, "%s{%s} %llu\n", name, v[i]->labels, (unsigned long long)v[i]->n);
      continue;
    }
    ts_prom_histogram(out, &hf, v[i]->labels, fams[f].le, fams[f].nle, v[i]->le, v[i]->n,
                      v[i]->sum);
  }
  ts_free(v);
}

#define QMETRICS_POOLS 1024 /* node pools exported (the rest are left out) */

/* GPUs (extended resources counted as GPUs, MIG slices included) per node pool. */
static void write_gpus(const model *m, ts_prom *out) {
  sched_pool *pools = ts_malloc(QMETRICS_POOLS * sizeof *pools);
  int gpu[SCHED_POOL_GPUS], ngpu = sched_gpu_resources(m, gpu);
  size_t n;
  ts_buf lab;
  ts_prom l = {&lab, TS_OK};
  if (!pools) {
    out->rc = TS_ENOMEM;
    return;
  }
  n = sched_pools(m, gpu, ngpu, pools, QMETRICS_POOLS);
  ts_buf_init(&lab, 0);
  for (int w = 0; w < 2; w++) {
    const char *name = w ? "tessera_gpu_allocated" : "tessera_gpu_allocatable";
    head(out, name, "gauge",
         w ? "GPUs requested by the pods bound to nodes (placements being written included), "
             "per node_pool."
           : "GPUs nodes offer (device-plugin resources counted as GPUs, MIG slices included), "
             "per node_pool (the node's pool label, as tessera replay reads it).");
    for (size_t i = 0; i < n; i++) {
      int64_t v = 0;
      for (int g = 0; g < ngpu; g++) v = ts_add_sat(v, w ? pools[i].used[g] : pools[i].alloc[g]);
      ts_buf_reset(l.b);
      ts_prom_label(&l, "node_pool", pools[i].name);
      sample(out, name, &l, (double)v);
    }
  }
  if (l.rc != TS_OK && out->rc == TS_OK) out->rc = l.rc;
  ts_buf_free(&lab);
  ts_free(pools);
}

/* kube-scheduler's scheduler_pending_pods: its queues as Tessera holds them. */
static void write_pending(const qmetrics *q, size_t active, ts_prom *out) {
  head(out, "scheduler_pending_pods", "gauge",
       "kube-scheduler's: pending pods by queue (active: arrived since the last cycle, not yet "
       "attempted; backoff: in their requeue backoff; unschedulable: attempted and left "
       "pending; gated: with scheduling gates, never attempted).");
  ts_prom_printf(out,
                 "scheduler_pending_pods{queue=\"active\"} %zu\n"
                 "scheduler_pending_pods{queue=\"backoff\"} %zu\n"
                 "scheduler_pending_pods{queue=\"unschedulable\"} %zu\n"
                 "scheduler_pending_pods{queue=\"gated\"} %zu\n",
                 active, q->backoff, q->unschedulable, q->gated);
}

static int count_cmp(const void *a, const void *b) {
  return strcmp((*(sched_count *const *)a)->key, (*(sched_count *const *)b)->key);
}

/* One gauge sample per entry of counts, sorted (keys "name" or "ns/name" when lq); frees
 * the entries. */
static void write_counts(const qmetrics *q, ts_prom *out, const char *name, ts_map *counts,
                         bool lq) {
  size_t n = 0, it = 0;
  const ts_map_slot *s;
  sched_count **v = ts_malloc((counts->count + 1) * sizeof *v);
  ts_buf lab;
  ts_prom l = {&lab, TS_OK};
  ts_buf_init(&lab, 0);
  while (ts_map_next(counts, &it, &s)) {
    if (v)
      v[n++] = s->value;
    else
      ts_free(s->value);
  }
  if (!v) out->rc = TS_ENOMEM;
  if (v) qsort(v, n, sizeof *v, count_cmp);
  for (size_t i = 0; i < n; i++) {
    const char *slash = strchr(v[i]->key, '/');
    char ns[TS_NAME_MAX];
    if (lq && slash) {
      const char *kv[] = {"name", slash + 1, "namespace", ns, NULL};
      snprintf(ns, sizeof ns, "%.*s", (int)(slash - v[i]->key), v[i]->key);
      labels(q, &l, kv);
    } else {
      const char *kv[] = {"cluster_queue", v[i]->key, NULL};
      labels(q, &l, kv);
    }
    sample(out, name, &l, v[i]->n);
    ts_free(v[i]);
  }
  ts_free(v);
  ts_buf_free(&lab);
}

/* Kueue's finished_workloads gauges: finished workloads not deleted yet, read from the model
 * when scraped (queues with none are left out). */
static void write_finished(const qmetrics *q, const model *m, const sched_config *cfg,
                           ts_prom *out) {
  ts_map cq, lq;
  ts_map_init(&cq);
  ts_map_init(&lq);
  if (sched_finished_workloads(m, cfg, &cq, &lq) != TS_OK) out->rc = TS_ENOMEM;
  head(out, "kueue_finished_workloads", "gauge",
       "Workloads that ended (every pod Succeeded or Failed) and whose pods are still there, "
       "per cluster_queue.");
  write_counts(q, out, "kueue_finished_workloads", &cq, false);
  head(out, "kueue_local_queue_finished_workloads", "gauge", "The same per local queue.");
  write_counts(q, out, "kueue_local_queue_finished_workloads", &lq, true);
  ts_map_free(&cq);
  ts_map_free(&lq);
}

ts_rc qmetrics_write(const qmetrics *q, const model *m, const sched_config *cfg, size_t active,
                     ts_buf *buf) {
  static const ts_prom_family cycle = {"tessera_scheduling_cycle_duration_seconds",
                                       "histogram",
                                       "Time spent in each scheduling cycle.",
                                       {NULL}};
  ts_prom o = {buf, TS_OK}, *out = &o;
  ts_prom_head(out, &cycle);
  ts_prom_histogram(out, &cycle, "", cycle_le, QMETRICS_CYCLE_BUCKETS, q->cycle_le, q->cycles,
                    q->cycle_sum);
  for (int f = 0; f < F_COUNT; f++) write_family(q, (fam)f, out);
  if (q->role == QMETRICS_FOLLOWER) return o.rc; /* cluster gauges: the leader's alone */
  if (q->gauges.len) pappend(out, q->gauges.data, q->gauges.len);
  if (!q->no_kueue && q->cycles) write_finished(q, m, cfg, out);
  write_pending(q, active, out);
  write_gpus(m, out);
  return o.rc;
}
