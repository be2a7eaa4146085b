/* live/qmetrics.c - Kueue-named queue metrics and Tessera's cycle, pending and GPU metrics;
 * see qmetrics.h. */
#include "live/qmetrics.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kueue's admission wait buckets: 1, then 2.5 doubling (generateExponentialBuckets(14)). */
static const double wait_le[QMETRICS_WAIT_BUCKETS] = {1,   2.5, 5,   10,   20,   40,   80,
                                                      160, 320, 640, 1280, 2560, 5120, 10240};
static const double cycle_le[QMETRICS_CYCLE_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

/* One labelled series of a counter or a histogram. */
typedef struct series {
  uint64_t n;                         /* counter value / observations */
  double sum;                         /* histograms: sum of observations */
  uint64_t le[QMETRICS_WAIT_BUCKETS]; /* histograms: observations per bucket (not cumulative) */
  char labels[];                      /* `a="x",b="y"` */
} series;

typedef enum fam { F_ADMITTED, F_WAIT, F_EVICTED, F_PREEMPTED, F_COUNT } fam;

static const struct {
  const char *name, *type, *help;
} fams[F_COUNT] = {
    [F_ADMITTED] = {"kueue_admitted_workloads_total", "counter",
                    "Workloads admitted per cluster_queue (counted when a pod of it is bound)."},
    [F_WAIT] = {"kueue_admission_wait_time_seconds", "histogram",
                "Time from a workload's creation or requeue to its admission, per cluster_queue."},
    [F_EVICTED] = {"kueue_evicted_workloads_total", "counter",
                   "Workloads evicted per cluster_queue and reason (Preempted, PodsReadyTimeout), "
                   "counted when the first of their pods' evictions landed."},
    [F_PREEMPTED] = {"kueue_preempted_workloads_total", "counter",
                     "Workloads preempted per preempting_cluster_queue and reason "
                     "(InClusterQueue, InCohortReclamation, InCohortFairSharing, "
                     "InCohortReclaimWhileBorrowing)."},
};

struct qmetrics {
  ts_map series[F_COUNT];                    /* labels -> series (owned) */
  ts_buf gauges;                             /* the last cycle's gauges, in the text format */
  uint64_t cycle_le[QMETRICS_CYCLE_BUCKETS]; /* cycle durations per bucket */
  uint64_t cycles;                           /* cycles observed */
  double cycle_sum;                          /* their seconds */
};

qmetrics *qmetrics_new(void) {
  qmetrics *q = ts_calloc(1, sizeof *q);
  if (!q) return NULL;
  for (int f = 0; f < F_COUNT; f++) ts_map_init(&q->series[f]);
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
  ts_buf_free(&q->gauges);
  ts_free(q);
}

/* ---- output ----------------------------------------------------------------------------- */

/* A buffer that remembers its first failure, so that a text is whole or reported failed. */
typedef struct pbuf {
  ts_buf *b; /* borrowed */
  ts_rc rc;  /* the first failure */
} pbuf;

static void pprintf(pbuf *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pprintf(pbuf *p, const char *fmt, ...) {
  va_list ap;
  if (p->rc != TS_OK) return;
  va_start(ap, fmt);
  p->rc = ts_buf_vprintf(p->b, fmt, ap);
  va_end(ap);
}

static void pappend(pbuf *p, const char *s, size_t n) {
  if (p->rc == TS_OK) p->rc = ts_buf_append(p->b, s, n);
}

static void pputs(pbuf *p, const char *s) {
  pappend(p, s, strlen(s));
}

/* ---- labels ----------------------------------------------------------------------------- */

/* Appends `name="value"` (after a comma unless first) with the format's escapes. */
static void label(pbuf *b, const char *name, const char *value) {
  if (b->b->len) pputs(b, ",");
  pputs(b, name);
  pputs(b, "=\"");
  for (const char *p = value ? value : ""; *p; p++) {
    if (*p == '\\')
      pputs(b, "\\\\");
    else if (*p == '"')
      pputs(b, "\\\"");
    else if (*p == '\n')
      pputs(b, "\\n");
    else
      pappend(b, p, 1);
  }
  pputs(b, "\"");
}

/* The series of family f with these labels (created at zero), or NULL when out of memory. */
static series *get(qmetrics *q, fam f, const pbuf *labels) {
  const char *key = labels->b->data ? labels->b->data : "";
  size_t len = labels->b->len;
  series *s;
  if (labels->rc != TS_OK) return NULL;
  if ((s = ts_map_get(&q->series[f], key, len))) return s;
  if (!(s = ts_calloc(1, sizeof *s + len + 1))) return NULL;
  memcpy(s->labels, key, len);
  if (ts_map_put(&q->series[f], s->labels, len, s, NULL) != TS_OK) {
    ts_free(s);
    return NULL;
  }
  return s;
}

/* ---- counters --------------------------------------------------------------------------- */

void qmetrics_admitted(qmetrics *q, const char *cluster_queue, int64_t waited_ns) {
  ts_buf buf;
  pbuf b = {&buf, TS_OK};
  series *s;
  double w = waited_ns > 0 ? (double)waited_ns / 1e9 : 0;
  ts_buf_init(&buf, 0);
  label(&b, "cluster_queue", cluster_queue);
  if ((s = get(q, F_ADMITTED, &b))) s->n++;
  if ((s = get(q, F_WAIT, &b))) {
    int k = 0;
    while (k < QMETRICS_WAIT_BUCKETS && w > wait_le[k]) k++;
    if (k < QMETRICS_WAIT_BUCKETS) s->le[k]++;
    s->n++;
    s->sum += w;
  }
  ts_buf_free(&buf);
}

void qmetrics_evicted(qmetrics *q, const sched_wl_event *ev) {
  ts_buf buf;
  pbuf b = {&buf, TS_OK};
  series *s;
  ts_buf_init(&buf, 0);
  label(&b, "cluster_queue", ev->cluster_queue);
  label(&b, "reason", ev->reason);
  if ((s = get(q, F_EVICTED, &b))) s->n++;
  if (ev->preempting_cq && ev->preempt_reason) {
    ts_buf_reset(&buf);
    label(&b, "preempting_cluster_queue", ev->preempting_cq);
    label(&b, "reason", ev->preempt_reason);
    if ((s = get(q, F_PREEMPTED, &b))) s->n++;
  }
  ts_buf_free(&buf);
}

/* ---- the cycle's gauges ----------------------------------------------------------------- */

static void head(pbuf *b, const char *name, const char *type, const char *help) {
  pprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A resource amount as Kueue reports it: cpu in cores, the rest in units. */
/* A quota tree's amount in the metric's unit (cores, GPUs, bytes). */
static double amount(const model_resources *rt, int resource, int64_t v) {
  return resource == MODEL_RES_CPU ? (double)v / 1000.0 : (double)v / (double)q_scale(rt, resource);
}

/* One sample: name{labels} value. */
static void sample(pbuf *b, const char *name, const pbuf *labels, double v) {
  pprintf(b, "%s{%s} %.17g\n", name, labels->b->data ? labels->b->data : "", v);
}

typedef enum frv { FRV_USAGE, FRV_NOMINAL, FRV_BLIMIT, FRV_LLIMIT } frv;

/* A ClusterQueue's flavor-resources: one sample per flavor and resource. */
static void cq_frs(pbuf *b, const model *m, const char *name, const q_cq_report *c, frv what,
                   pbuf *l) {
  const model_resources *rt = model_resources_of(m);
  for (uint32_t i = 0; i < c->nfrs; i++) {
    const q_fr_report *x = &c->frs[i];
    double v = what == FRV_USAGE     ? amount(rt, x->resource, x->usage)
               : what == FRV_NOMINAL ? amount(rt, x->resource, x->nominal)
               : what == FRV_BLIMIT  ? amount(rt, x->resource, x->borrowing_limit)
                                     : amount(rt, x->resource, x->lending_limit);
    if ((what == FRV_BLIMIT && !x->has_borrowing_limit) ||
        (what == FRV_LLIMIT && !x->has_lending_limit))
      continue;
    ts_buf_reset(l->b);
    label(l, "cohort", c->cohort ? c->cohort : "");
    label(l, "cluster_queue", c->name);
    label(l, "flavor", x->flavor);
    label(l, "resource", model_resource_name(rt, x->resource));
    sample(b, name, l, v);
  }
}

static void lq_labels(pbuf *l, const q_lq_report *q);

/* One sample per ClusterQueue (lq false: labels cluster_queue) or LocalQueue (lq true: name,
 * namespace), with status when not NULL, of the uint32_t count at offset in its report. */
static void counts(pbuf *b, pbuf *l, const q_report *r, bool lq, const char *name,
                   const char *status, size_t offset) {
  size_t n = lq ? r->nlqs : r->ncqs;
  for (size_t i = 0; i < n; i++) {
    const char *rep = lq ? (const char *)&r->lqs[i] : (const char *)&r->cqs[i];
    uint32_t v;
    memcpy(&v, rep + offset, sizeof v);
    if (lq) {
      lq_labels(l, &r->lqs[i]);
    } else {
      ts_buf_reset(l->b);
      label(l, "cluster_queue", r->cqs[i].name);
    }
    if (status) label(l, "status", status);
    sample(b, name, l, v);
  }
}

static void cq_gauges(pbuf *b, const model *m, const q_report *r, pbuf *l) {
  static const struct {
    const char *name, *help;
    frv what;
  } frs[] = {
      {"kueue_cluster_queue_resource_reservation",
       "Quota reserved per cluster_queue, flavor and resource (cpu in cores, memory in bytes).",
       FRV_USAGE},
      {"kueue_cluster_queue_resource_usage",
       "Quota used per cluster_queue, flavor and resource (cpu in cores, memory in bytes).",
       FRV_USAGE},
      {"kueue_cluster_queue_nominal_quota", "nominalQuota per cluster_queue, flavor and resource.",
       FRV_NOMINAL},
      {"kueue_cluster_queue_borrowing_limit",
       "borrowingLimit per cluster_queue, flavor and resource (only where set).", FRV_BLIMIT},
      {"kueue_cluster_queue_lending_limit",
       "lendingLimit per cluster_queue, flavor and resource (only where set).", FRV_LLIMIT},
  };
  static const char *const statuses[] = {"pending", "active", "terminating"};
  head(b, "kueue_pending_workloads", "gauge",
       "Pending workloads per cluster_queue and status (active: in the queue; inadmissible: "
       "parked until quota is released).");
  counts(b, l, r, false, "kueue_pending_workloads", "active",
         offsetof(q_cq_report, pending_active));
  counts(b, l, r, false, "kueue_pending_workloads", "inadmissible",
         offsetof(q_cq_report, pending_inadmissible));
  head(b, "kueue_reserving_active_workloads", "gauge",
       "Workloads holding quota per cluster_queue.");
  counts(b, l, r, false, "kueue_reserving_active_workloads", NULL, offsetof(q_cq_report, admitted));
  head(b, "kueue_admitted_active_workloads", "gauge",
       "Admitted workloads per cluster_queue (there are no admission checks: the same as "
       "kueue_reserving_active_workloads).");
  counts(b, l, r, false, "kueue_admitted_active_workloads", NULL, offsetof(q_cq_report, admitted));
  head(b, "kueue_cluster_queue_status", "gauge",
       "1 for the status of each cluster_queue (active, or pending when it cannot admit).");
  for (size_t i = 0; i < r->ncqs; i++)
    for (size_t k = 0; k < 3; k++) {
      bool is = r->cqs[i].inactive ? k == 0 : k == 1;
      ts_buf_reset(l->b);
      label(l, "cluster_queue", r->cqs[i].name);
      label(l, "status", statuses[k]);
      sample(b, "kueue_cluster_queue_status", l, is);
    }
  for (size_t f = 0; f < sizeof frs / sizeof *frs; f++) {
    head(b, frs[f].name, "gauge", frs[f].help);
    for (size_t i = 0; i < r->ncqs; i++) cq_frs(b, m, frs[f].name, &r->cqs[i], frs[f].what, l);
  }
  head(b, "kueue_cluster_queue_weighted_share", "gauge",
       "Weighted share of each cluster_queue under fair sharing (0: within its nominal quota; "
       "9223372036854775807: borrowing with weight 0).");
  for (size_t i = 0; i < r->ncqs; i++) {
    double s = r->cqs[i].weighted_share;
    ts_buf_reset(l->b);
    label(l, "cluster_queue", r->cqs[i].name);
    sample(b, "kueue_cluster_queue_weighted_share", l, isinf(s) ? 9223372036854775807.0 : round(s));
  }
}

static void lq_labels(pbuf *l, const q_lq_report *q) {
  ts_buf_reset(l->b);
  label(l, "name", q->name);
  label(l, "namespace", q->ns);
}

static void lq_gauges(pbuf *b, const model *m, const q_report *r, pbuf *l) {
  static const char *const active[] = {"True", "False", "Unknown"};
  const model_resources *rt = model_resources_of(m);
  head(b, "kueue_local_queue_pending_workloads", "gauge",
       "Pending workloads per local queue (name, namespace) and status.");
  counts(b, l, r, true, "kueue_local_queue_pending_workloads", "active",
         offsetof(q_lq_report, pending_active));
  counts(b, l, r, true, "kueue_local_queue_pending_workloads", "inadmissible",
         offsetof(q_lq_report, pending_inadmissible));
  head(b, "kueue_local_queue_admitted_active_workloads", "gauge",
       "Admitted workloads per local queue.");
  counts(b, l, r, true, "kueue_local_queue_admitted_active_workloads", NULL,
         offsetof(q_lq_report, admitted));
  head(b, "kueue_local_queue_status", "gauge",
       "1 for the Active condition status of each local queue (True, False).");
  for (size_t i = 0; i < r->nlqs; i++)
    for (size_t k = 0; k < 3; k++) {
      lq_labels(l, &r->lqs[i]);
      label(l, "active", active[k]);
      sample(b, "kueue_local_queue_status", l, r->lqs[i].inactive ? k == 1 : k == 0);
    }
  head(b, "kueue_local_queue_resource_usage", "gauge",
       "Quota used per local queue, flavor and resource (cpu in cores, memory in bytes).");
  for (size_t i = 0; i < r->nlqs; i++)
    for (uint32_t k = 0; k < r->lqs[i].nfrs; k++) {
      const q_fr_report *x = &r->lqs[i].frs[k];
      lq_labels(l, &r->lqs[i]);
      label(l, "flavor", x->flavor);
      label(l, "resource", model_resource_name(rt, x->resource));
      sample(b, "kueue_local_queue_resource_usage", l, amount(rt, x->resource, x->usage));
    }
}

static void pending_gauge(pbuf *b, const sched_result *res, pbuf *l) {
  size_t n[SCHED_WHY_COUNT] = {0};
  for (size_t i = 0; i < res->ndecisions; i++)
    if (res->decisions[i].kind == SCHED_PENDING && res->decisions[i].why < SCHED_WHY_COUNT)
      n[res->decisions[i].why]++;
  head(b, "tessera_pending_pods", "gauge",
       "Pods the last cycle left pending, by kind of reason (Unschedulable, WaitingForGang, "
       "Blocked, WaitingForQuota, Backoff, NoQueueName, SchedulerError, SchedulingGated).");
  for (int w = 0; w < SCHED_WHY_COUNT; w++) {
    ts_buf_reset(l->b);
    label(l, "reason", sched_pending_why_name((sched_pending_why)w));
    sample(b, "tessera_pending_pods", l, (double)n[w]);
  }
}

void qmetrics_cycle(qmetrics *q, const model *m, const sched_result *res, double s) {
  ts_buf text, lab;
  pbuf b = {&text, TS_OK}, l = {&lab, TS_OK};
  int k = 0;
  while (k < QMETRICS_CYCLE_BUCKETS && s > cycle_le[k]) k++;
  if (k < QMETRICS_CYCLE_BUCKETS) q->cycle_le[k]++;
  q->cycles++;
  q->cycle_sum += s;
  ts_buf_init(&text, 0);
  ts_buf_init(&lab, 0);
  pending_gauge(&b, res, &l);
  cq_gauges(&b, m, &res->queues, &l);
  lq_gauges(&b, m, &res->queues, &l);
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

static void write_family(const qmetrics *q, fam f, pbuf *out) {
  size_t n = 0, it = 0;
  const ts_map_slot *s;
  series **v = ts_malloc((q->series[f].count + 1) * sizeof *v);
  head(out, fams[f].name, fams[f].type, fams[f].help);
  if (!v) {
    out->rc = TS_ENOMEM;
    return;
  }
  while (ts_map_next(&q->series[f], &it, &s)) v[n++] = s->value;
  qsort(v, n, sizeof *v, series_cmp);
  for (size_t i = 0; i < n; i++) {
    if (f != F_WAIT) {
      pprintf(out, "%s{%s} %llu\n", fams[f].name, v[i]->labels, (unsigned long long)v[i]->n);
      continue;
    }
    uint64_t cum = 0;
    for (int k = 0; k < QMETRICS_WAIT_BUCKETS; k++) {
      cum += v[i]->le[k];
      pprintf(out, "%s_bucket{%s,le=\"%g\"} %llu\n", fams[f].name, v[i]->labels, wait_le[k],
              (unsigned long long)cum);
    }
    pprintf(out, "%s_bucket{%s,le=\"+Inf\"} %llu\n%s_sum{%s} %.6f\n%s_count{%s} %llu\n",
            fams[f].name, v[i]->labels, (unsigned long long)v[i]->n, fams[f].name, v[i]->labels,
            v[i]->sum, fams[f].name, v[i]->labels, (unsigned long long)v[i]->n);
  }
  ts_free(v);
}

#define QMETRICS_POOLS 1024 /* node pools exported (the rest are left out) */

/* GPUs (extended resources counted as GPUs, MIG slices included) per node pool. */
static void write_gpus(const model *m, pbuf *out) {
  sched_pool *pools = ts_malloc(QMETRICS_POOLS * sizeof *pools);
  int gpu[SCHED_POOL_GPUS], ngpu = sched_gpu_resources(m, gpu);
  size_t n;
  ts_buf lab;
  pbuf l = {&lab, TS_OK};
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
      label(&l, "node_pool", pools[i].name);
      sample(out, name, &l, (double)v);
    }
  }
  if (l.rc != TS_OK && out->rc == TS_OK) out->rc = l.rc;
  ts_buf_free(&lab);
  ts_free(pools);
}

ts_rc qmetrics_write(const qmetrics *q, const model *m, ts_buf *buf) {
  pbuf o = {buf, TS_OK}, *out = &o;
  uint64_t cum = 0;
  head(out, "tessera_scheduling_cycle_duration_seconds", "histogram",
       "Time spent in each scheduling cycle.");
  for (int k = 0; k < QMETRICS_CYCLE_BUCKETS; k++) {
    cum += q->cycle_le[k];
    pprintf(out, "tessera_scheduling_cycle_duration_seconds_bucket{le=\"%g\"} %llu\n", cycle_le[k],
            (unsigned long long)cum);
  }
  pprintf(out,
          "tessera_scheduling_cycle_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
          "tessera_scheduling_cycle_duration_seconds_sum %.6f\n"
          "tessera_scheduling_cycle_duration_seconds_count %llu\n",
          (unsigned long long)q->cycles, q->cycle_sum, (unsigned long long)q->cycles);
  for (int f = 0; f < F_COUNT; f++) write_family(q, (fam)f, out);
  if (q->gauges.len) pappend(out, q->gauges.data, q->gauges.len);
  write_gpus(m, out);
  return o.rc;
}
