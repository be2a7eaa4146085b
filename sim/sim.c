/* sim/sim.c - the event loop of `tessera simulate` (sim.h says what it models).
 *
 * Each event time t: jobs whose submit time has come get their pods (and a PodGroup when they
 * have more than one), jobs whose run ends at t lose theirs, then sched_cycle runs on the model
 * at t (again, at most CYCLES_PER_EVENT times, while a cycle evicts: evicted pods leave at once
 * here, so the preemptor fits in the next). A bound pod is bound in the model; a job runs once
 * all its pods are bound. An evicted pod ends its job's run: every pod of the job is removed
 * and the job is submitted again at t. The next event is the next submit time or end of a run,
 * whichever comes first; the run ends when neither is left (jobs that never fit stay pending). */
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define CYCLES_PER_EVENT 4
#define SECOND_NS        INT64_C(1000000000)

enum { J_FUTURE, J_PENDING, J_RUNNING, J_DONE };

#define PREDICT_EVENTS 2000 /* ends a prediction's forward run may simulate */

typedef struct jstate {
  int state;        /* J_* */
  uint32_t attempt; /* pods of attempt a are named sim-<index>-<a>-<k> */
  int32_t bound;    /* pods of this attempt bound */
  int64_t queued_s; /* when this attempt was submitted */
  int64_t start_s;  /* when it last started */
  int64_t left_s;   /* run time still to do */
  int64_t end_s;    /* running: when it ends */
  uint32_t q;       /* its queue's index in the result */
  bool started;     /* started at least once */
} jstate;

typedef struct ending {
  int64_t end_s;
  uint32_t job, attempt;
} ending;

typedef struct qinfo {
  const char *ns;          /* interned namespace of its pods */
  const char *local_queue; /* interned LocalQueue its pods name, or NULL */
  TS_VEC(double) wait;     /* seconds, started jobs */
  TS_VEC(double) jct;      /* seconds, finished jobs */
} qinfo;

typedef struct sim {
  model *m;
  const sched_config *cfg;
  const sim_trace *t;
  const sim_opts *o;
  sim_result *r;
  ts_err *err;
  sched_state *st;
  jstate *js;
  qinfo *qs;
  TS_VEC(ending) heap;    /* runs by end time */
  int gpu;                /* resource id of nvidia.com/gpu */
  int64_t *qgpus;         /* [nqueues] thousandths of GPUs held by each queue's running jobs */
  int64_t *qlast;         /* [nqueues] what the last point of each queue said */
  uint8_t *qdirty;        /* [nqueues] qgpus changed since the last sample */
  TS_VEC(uint32_t) dirty; /* those queues */
  size_t points_cap;      /* capacity of r->queue_points */
  sched_config cfg_own;   /* cfg with the trace's workload (FGD's typical pods) */
  sched_workload_shape *workload; /* owned */
  model_node **nodes;             /* schedulable nodes (they do not change during a run) */
  size_t nnodes;
  size_t next;              /* next job to submit */
  size_t running;           /* jobs running */
  size_t pending;           /* jobs submitted, not running */
  TS_VEC(uint32_t) evicted; /* jobs whose run a cycle ended */
  qinfo all;
} sim;

/* ---- the heap of runs ------------------------------------------------------------------ */

static bool before(const ending *a, const ending *b) {
  return a->end_s < b->end_s || (a->end_s == b->end_s && a->job < b->job);
}

static ts_rc heap_push(sim *s, ending e) {
  size_t i;
  if (ts_vec_push(&s->heap, e) != TS_OK) return TS_ENOMEM;
  for (i = s->heap.n - 1; i > 0 && before(&s->heap.v[i], &s->heap.v[(i - 1) / 2]);
       i = (i - 1) / 2) {
    ending tmp = s->heap.v[i];
    s->heap.v[i] = s->heap.v[(i - 1) / 2];
    s->heap.v[(i - 1) / 2] = tmp;
  }
  return TS_OK;
}

static void heap_pop(sim *s) {
  size_t i = 0, n = --s->heap.n;
  s->heap.v[0] = s->heap.v[n];
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < n && before(&s->heap.v[l], &s->heap.v[m])) m = l;
    if (l + 1 < n && before(&s->heap.v[l + 1], &s->heap.v[m])) m = l + 1;
    if (m == i) break;
    ending tmp = s->heap.v[i];
    s->heap.v[i] = s->heap.v[m];
    s->heap.v[m] = tmp;
    i = m;
  }
}

/* Drops runs that ended early (preempted): their attempt moved on. */
static const ending *heap_top(sim *s) {
  while (s->heap.n) {
    const ending *e = &s->heap.v[0];
    const jstate *j = &s->js[e->job];
    if (j->state == J_RUNNING && j->attempt == e->attempt) return e;
    heap_pop(s);
  }
  return NULL;
}

/* ---- objects --------------------------------------------------------------------------- */

static void pod_name(char *out, size_t cap, size_t job, uint32_t attempt, int32_t k) {
  snprintf(out, cap, "sim-%zu-%u-%d", job, attempt, k);
}

static void group_name(char *out, size_t cap, size_t job, uint32_t attempt) {
  snprintf(out, cap, "sim-%zu-%u", job, attempt);
}

/* Thousandths of a GPU a job's pods hold together (whole GPUs or a share each). */
static int64_t job_milli(const sim_job *job) {
  return (int64_t)job->pods * job->gpu_milli;
}

static int wshape_cmp(const void *a, const void *b) {
  const sched_workload_shape *x = a, *y = b;
  if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
  if (x->gpus != y->gpus) return x->gpus < y->gpus ? -1 : 1;
  if (x->milli != y->milli) return x->milli < y->milli ? -1 : 1;
  return strcmp(x->models ? x->models : "", y->models ? y->models : "");
}

/* The trace's jobs as the workload FGD measures fragmentation against (its typical pods), when
 * the caller gave none: every pod of the trace counts once; shapes merged once here rather
 * than by every cycle. */
static ts_rc use_workload(sim *s, const sim_trace *t) {
  size_t n = 0;
  s->cfg_own = *s->cfg;
  s->cfg = &s->cfg_own;
  if (s->cfg_own.workload) return TS_OK;
  if (!(s->workload = ts_calloc(t->n + 1, sizeof *s->workload)))
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  for (size_t i = 0; i < t->n; i++) {
    const sim_job *job = &t->jobs[i];
    s->workload[i] = (sched_workload_shape){.cpu = job->cpu_milli,
                                            .gpus = job->gpus ? job->gpus : job->gpu_milli > 0,
                                            .milli = job->gpus ? 1000 : job->gpu_milli,
                                            .count = job->pods,
                                            .models = job->gpu_spec};
  }
  if (t->n) qsort(s->workload, t->n, sizeof *s->workload, wshape_cmp);
  for (size_t i = 0; i < t->n; i++)
    if (n && !wshape_cmp(&s->workload[n - 1], &s->workload[i]))
      s->workload[n - 1].count += s->workload[i].count;
    else
      s->workload[n++] = s->workload[i];
  s->cfg_own.workload = s->workload, s->cfg_own.nworkload = n;
  return TS_OK;
}

static ts_rc apply(sim *s, json_t *o) {
  ts_rc rc;
  if (!o) return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  rc = model_apply_json(s->m, o, MODEL_ADDED, NULL, NULL, NULL, s->err);
  json_decref(o);
  return rc;
}

/* Node affinity to the GPU models of spec ("A|B"): nvidia.com/gpu.product In [A, B]. */
static json_t *gpu_models(const char *spec) {
  json_t *values = json_array();
  for (const char *p = spec; values && *p;) {
    size_t n = strcspn(p, "|");
    json_array_append_new(values, json_stringn(p, n));
    p += n + (p[n] == '|');
  }
  return json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:o}]}]}}}", "nodeAffinity",
                   "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                   "matchExpressions", "key", "nvidia.com/gpu.product", "operator", "In", "values",
                   values);
}

/* Submits job i at time now: its pods (and PodGroup) join the model, pending. */
static ts_rc submit(sim *s, size_t i, int64_t now) {
  const sim_job *job = &s->t->jobs[i];
  jstate *j = &s->js[i];
  const qinfo *q = &s->qs[j->q];
  char name[96], group[96], ts[40], amount[32];
  json_t *labels;
  ts_rc rc = TS_OK;
  ts_time_format(s->o->epoch_ns + now * SECOND_NS, ts, sizeof ts);
  group_name(group, sizeof group, i, j->attempt);
  if (job->pods > 1)
    rc = apply(s, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i}}", "apiVersion",
                            "scheduling.x-k8s.io/v1alpha1", "kind", "PodGroup", "metadata", "name",
                            group, "namespace", q->ns, "creationTimestamp", ts, "spec", "minMember",
                            job->pods));
  for (int32_t k = 0; rc == TS_OK && k < job->pods; k++) {
    json_t *limits = json_object(), *spec, *annotations = json_object();
    pod_name(name, sizeof name, i, j->attempt, k);
    labels = json_object();
    if (!limits || !labels || !annotations) {
      json_decref(limits);
      json_decref(labels);
      json_decref(annotations);
      return ts_err_set(s->err, TS_ENOMEM, "out of memory");
    }
    if (job->pods > 1)
      json_object_set_new(labels, "scheduling.x-k8s.io/pod-group", json_string(group));
    if (q->local_queue)
      json_object_set_new(labels, "kueue.x-k8s.io/queue-name", json_string(q->local_queue));
    snprintf(amount, sizeof amount, "%d", job->gpus);
    if (job->gpus) json_object_set_new(limits, "nvidia.com/gpu", json_string(amount));
    if (!job->gpus && job->gpu_milli) { /* a share of one GPU, as KAI's gpu-fraction says it */
      snprintf(amount, sizeof amount, "0.%03d", (int)job->gpu_milli);
      json_object_set_new(annotations, "gpu-fraction", json_string(amount));
    }
    snprintf(amount, sizeof amount, "%lldm", (long long)job->cpu_milli);
    if (job->cpu_milli) json_object_set_new(limits, "cpu", json_string(amount));
    snprintf(amount, sizeof amount, "%lldMi", (long long)job->memory_mib);
    if (job->memory_mib) json_object_set_new(limits, "memory", json_string(amount));
    if (!job->gpu_milli && !job->cpu_milli) json_object_set_new(limits, "cpu", json_string("1"));
    if (s->o->predict) { /* the run time, as a user who knows it gives it (predict mode) */
      snprintf(amount, sizeof amount, "%llds", (long long)j->left_s);
      json_object_set_new(annotations, "tessera.dev/expected-duration", json_string(amount));
    }
    spec = json_pack("{s:s, s:[{s:s, s:s, s:{s:o}}]}", "schedulerName", s->cfg->scheduler_name,
                     "containers", "name", "c", "image", "sim", "resources", "limits", limits);
    if (spec && job->has_priority)
      json_object_set_new(spec, "priority", json_integer(job->priority));
    if (spec && job->gpu_spec) json_object_set_new(spec, "affinity", gpu_models(job->gpu_spec));
    if (spec && job->gpu_milli) /* as ExtendedResourceToleration admission (or KAI) adds it */
      json_object_set_new(spec, "tolerations",
                          json_pack("[{s:s, s:s, s:s}]", "key", "nvidia.com/gpu", "operator",
                                    "Exists", "effect", "NoSchedule"));
    rc = apply(s,
               json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:o, s:o}, s:o}", "apiVersion", "v1", "kind",
                         "Pod", "metadata", "name", name, "namespace", q->ns, "creationTimestamp",
                         ts, "labels", labels, "annotations", annotations, "spec", spec));
  }
  j->state = J_PENDING;
  j->bound = 0;
  j->queued_s = now;
  s->pending++;
  return rc;
}

/* Removes the pods (and PodGroup) of job i's current attempt. */
static void withdraw(sim *s, size_t i) {
  const sim_job *job = &s->t->jobs[i];
  jstate *j = &s->js[i];
  const char *ns = s->qs[j->q].ns;
  char name[96], key[200];
  for (int32_t k = 0; k < job->pods; k++) {
    pod_name(name, sizeof name, i, j->attempt, k);
    (void)model_remove(s->m, MODEL_POD, ns, name);
    snprintf(key, sizeof key, "%s/%s", ns, name);
    sched_state_forget_eviction(s->st, key);
  }
  if (job->pods > 1) {
    group_name(name, sizeof name, i, j->attempt);
    (void)model_remove(s->m, MODEL_POD_GROUP, ns, name);
  }
}

/* The job of one of our pods ("sim-<index>-<attempt>-<k>"), or SIZE_MAX. */
static size_t job_of(const sim *s, const model_pod *p, uint32_t *attempt) {
  const char *n = p->obj.name;
  char *end;
  unsigned long long i;
  if (strncmp(n, "sim-", 4) || !(n[4] >= '0' && n[4] <= '9')) return SIZE_MAX;
  i = strtoull(n + 4, &end, 10);
  if (*end != '-' || i >= s->t->n) return SIZE_MAX;
  *attempt = (uint32_t)strtoul(end + 1, NULL, 10);
  return (size_t)i;
}

/* ---- events ---------------------------------------------------------------------------- */

/* The GPUs queue q holds change by delta thousandths: the next sample records it. Out of
 * memory for the list of changed queues: the queue's change is recorded at a later sample. */
static void queue_gpus(sim *s, uint32_t q, int64_t delta) {
  s->qgpus[q] += delta;
  if (!s->qdirty[q] && ts_vec_push(&s->dirty, q) == TS_OK) s->qdirty[q] = 1;
}

static ts_rc finish(sim *s, size_t i, int64_t now) {
  jstate *j = &s->js[i];
  const sim_job *job = &s->t->jobs[i];
  double jct = (double)(now - job->submit_s);
  withdraw(s, i);
  j->state = J_DONE;
  queue_gpus(s, j->q, -job_milli(job));
  s->r->jobs[i].end_s = now;
  s->running--;
  s->r->queues[j->q].done++;
  s->r->all.done++;
  if (ts_vec_push(&s->qs[j->q].jct, jct) != TS_OK || ts_vec_push(&s->all.jct, jct) != TS_OK)
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  return TS_OK;
}

static double held_hours(const sim_job *job, int64_t secs) {
  return (double)job_milli(job) / 1000 * (double)secs / 3600.0;
}

/* A job's run was cut by an eviction at now: it goes back to the queue. */
static ts_rc preempted(sim *s, size_t i, int64_t now) {
  jstate *j = &s->js[i];
  const sim_job *job = &s->t->jobs[i];
  if (j->state == J_PENDING && j->bound) { /* some of its pods were bound: they go too */
    withdraw(s, i);
    s->pending--;
    j->attempt++;
    return submit(s, i, now);
  }
  if (j->state != J_RUNNING) return TS_OK; /* another of its pods ended the run already */
  s->r->queues[j->q].gpu_hours -= held_hours(job, j->end_s - now); /* started() counted it all */
  s->r->all.gpu_hours -= held_hours(job, j->end_s - now);
  j->left_s = s->o->resume ? j->end_s - now : job->duration_s;
  s->r->queues[j->q].preemptions++;
  s->r->all.preemptions++;
  s->r->jobs[i].preemptions++;
  queue_gpus(s, j->q, -job_milli(job));
  withdraw(s, i);
  s->running--;
  j->attempt++;
  return submit(s, i, now);
}

static ts_rc started(sim *s, size_t i, int64_t now) {
  jstate *j = &s->js[i];
  double wait = (double)(now - s->t->jobs[i].submit_s);
  s->pending--;
  s->running++;
  j->state = J_RUNNING;
  j->start_s = now;
  j->end_s = now + j->left_s;
  queue_gpus(s, j->q, job_milli(&s->t->jobs[i]));
  if (!j->started) s->r->jobs[i].first_start_s = now;
  s->r->jobs[i].last_start_s = now;
  for (int32_t k = 0; s->o->predict && k < s->t->jobs[i].pods; k++) { /* status.startTime */
    char name[96];
    model_pod *p;
    pod_name(name, sizeof name, i, j->attempt, k);
    if ((p = (model_pod *)model_get(s->m, MODEL_POD, s->qs[j->q].ns, name)))
      p->start_ns = s->o->epoch_ns + now * SECOND_NS;
  }
  s->r->jobs[i].waiting = NULL;
  j->started = true;
  s->r->queues[j->q].gpu_hours += held_hours(&s->t->jobs[i], j->left_s);
  s->r->all.gpu_hours += held_hours(&s->t->jobs[i], j->left_s);
  if (ts_vec_push(&s->qs[j->q].wait, wait) != TS_OK || ts_vec_push(&s->all.wait, wait) != TS_OK)
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  return heap_push(s, (ending){j->end_s, (uint32_t)i, j->attempt}) == TS_OK
             ? TS_OK
             : ts_err_set(s->err, TS_ENOMEM, "out of memory");
}

/* One cycle at now, its decisions applied; *evicted says whether any pod was evicted. */
static ts_rc cycle(sim *s, int64_t now, bool *evicted) {
  sched_result res;
  ts_rc rc = sched_cycle(s->m, s->cfg, s->st, s->o->epoch_ns + now * SECOND_NS, &res, s->err);
  *evicted = false;
  if (rc != TS_OK) return rc;
  s->r->cycles++;
  s->evicted.n = 0;
  for (size_t d = 0; rc == TS_OK && d < res.ndecisions; d++) {
    const sched_decision *x = &res.decisions[d];
    uint32_t attempt;
    size_t i = job_of(s, x->pod, &attempt);
    if (i == SIZE_MAX || attempt != s->js[i].attempt) continue;
    if (x->kind == SCHED_BIND) {
      rc = sched_decision_apply(s->m, x);
      s->r->bound++;
      if (rc == TS_OK && ++s->js[i].bound == s->t->jobs[i].pods) rc = started(s, i, now);
    } else if (x->kind == SCHED_PENDING) {
      s->r->jobs[i].waiting = sched_pending_why_name(x->why);
    } else if (x->kind == SCHED_EVICT) {
      s->r->evicted++;
      if (ts_vec_push(&s->evicted, (uint32_t)i) != TS_OK) rc = TS_ENOMEM;
    }
  }
  sched_result_free(&res);
  for (size_t k = 0; rc == TS_OK && k < s->evicted.n; k++) { /* after: decisions point at pods */
    rc = preempted(s, s->evicted.v[k], now);
    *evicted = true;
  }
  if (rc == TS_ENOMEM) ts_err_set(s->err, rc, "out of memory");
  return rc;
}

/* A point for each queue whose GPUs changed since the last sample (at: this sample). */
static ts_rc queue_points(sim *s, uint32_t at) {
  sim_result *r = s->r;
  for (size_t i = 0; i < s->dirty.n; i++) {
    uint32_t q = s->dirty.v[i];
    s->qdirty[q] = 0;
    if (s->qgpus[q] == s->qlast[q]) continue;
    if (r->nqueue_points == s->points_cap) {
      size_t ncap = s->points_cap ? s->points_cap * 2 : 1024;
      sim_queue_point *np = ts_realloc(r->queue_points, ncap * sizeof *np);
      if (!np) return ts_err_set(s->err, TS_ENOMEM, "out of memory");
      r->queue_points = np, s->points_cap = ncap;
    }
    r->queue_points[r->nqueue_points++] = (sim_queue_point){at, q, (double)s->qgpus[q] / 1000};
    s->qlast[q] = s->qgpus[q];
  }
  s->dirty.n = 0;
  return TS_OK;
}

void sim_queue_series(const sim_result *r, size_t q, double *out) {
  double now = 0;
  size_t k = 0;
  if (q == SIZE_MAX) { /* every queue: the sum, from each queue's last value */
    double *last = ts_calloc(r->nqueues + 1, sizeof *last);
    for (size_t i = 0; i < r->nsamples; i++) {
      for (; k < r->nqueue_points && r->queue_points[k].sample <= i; k++) {
        const sim_queue_point *p = &r->queue_points[k];
        now += p->gpus - (last ? last[p->queue] : 0);
        if (last) last[p->queue] = p->gpus;
      }
      out[i] = last ? now : 0;
    }
    ts_free(last);
    return;
  }
  for (size_t i = 0; i < r->nsamples; i++) {
    for (; k < r->nqueue_points && r->queue_points[k].sample <= i; k++)
      if (r->queue_points[k].queue == q) now = r->queue_points[k].gpus;
    out[i] = now;
  }
}

static ts_rc sample(sim *s, int64_t now) {
  sim_sample x = {
      .t_s = now, .pending_jobs = (int32_t)s->pending, .running_jobs = (int32_t)s->running};
  sim_sample *v;
  int64_t all_used = 0, all_frag = 0;
  for (size_t n = 0; n < s->nnodes; n++) { /* in thousandths: shared GPUs count their shares */
    const model_node *nd = s->nodes[n];
    int64_t used = model_node_used(nd, s->gpu) * 1000, alloc = model_node_alloc(nd, s->gpu) * 1000;
    for (uint32_t g = 0; g < nd->ngpu_shares; g++)
      if (nd->gpu_shares[g]) used -= 1000 - (int64_t)nd->gpu_shares[g];
    all_used += used;
    if (used > 0 && alloc > used) all_frag += alloc - used;
  }
  x.gpus_used = (double)all_used / 1000, x.gpus_idle_frag = (double)all_frag / 1000;
  size_t at = s->r->nsamples;
  if (at && s->r->samples[at - 1].t_s == now) {
    at--; /* a second sample at the same time replaces the first */
  } else if (at >= 1024 && (at & (at - 1)) == 0) { /* grow at powers of two */
    if (!(v = ts_realloc(s->r->samples, 2 * at * sizeof *v)))
      return ts_err_set(s->err, TS_ENOMEM, "out of memory");
    s->r->samples = v;
  }
  s->r->samples[at] = x;
  s->r->nsamples = at + 1;
  return queue_points(s, (uint32_t)at);
}

/* ---- set-up and summary ---------------------------------------------------------------- */

static void ns_of(const char *queue, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = queue; *p && n + 1 < cap; p++) {
    char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
    out[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
  }
  out[n] = 0;
  if (!n) snprintf(out, cap, "default");
}

/* The nominal quota of nvidia.com/gpu of cq over its flavors, or -1 when it names none. */
static double nominal_gpus(const model_cluster_queue *cq) {
  const char *gpu = ts_intern_cstr("nvidia.com/gpu");
  double sum = -1;
  for (uint32_t g = 0; cq && g < cq->ngroups; g++)
    for (uint32_t f = 0; f < cq->groups[g].nflavors; f++)
      for (uint32_t r = 0; r < cq->groups[g].flavors[f].nresources; r++)
        if (cq->groups[g].flavors[f].resources[r].resource == gpu)
          sum = (sum < 0 ? 0 : sum) +
                ts_quantity_approx(&cq->groups[g].flavors[f].resources[r].nominal);
  return sum;
}

/* The ClusterQueue queue k's LocalQueue points to, its fair-sharing weight and GPU quota. */
static void cluster_queue(sim *s, size_t k) {
  const model_local_queue *lq =
      s->qs[k].local_queue ? (const model_local_queue *)model_get(s->m, MODEL_LOCAL_QUEUE,
                                                                  s->qs[k].ns, s->qs[k].local_queue)
                           : NULL;
  const model_cluster_queue *cq = lq ? (const model_cluster_queue *)model_get(
                                           s->m, MODEL_CLUSTER_QUEUE, NULL, lq->cluster_queue)
                                     : NULL;
  s->r->queues[k].weight = cq ? ts_quantity_approx(&cq->fair_weight) : 1.0;
  s->r->queues[k].cluster_queue = cq ? lq->cluster_queue : NULL;
  s->r->queues[k].nominal_gpus = nominal_gpus(cq);
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The queues of the trace (in name order) and what their pods name. */
static ts_rc queues(sim *s) {
  const char **names = ts_malloc((s->t->n + 1) * sizeof *names);
  size_t n = 0;
  ts_map idx;
  ts_rc rc = names ? TS_OK : TS_ENOMEM;
  ts_map_init(&idx);
  for (size_t i = 0; rc == TS_OK && i < s->t->n; i++) {
    const char *q = s->t->jobs[i].queue ? s->t->jobs[i].queue : "";
    if (ts_map_get(&idx, q, strlen(q))) continue;
    names[n++] = q;
    rc = ts_map_put(&idx, q, strlen(q), (void *)1, NULL);
  }
  if (rc == TS_OK && n) {
    qsort(names, n, sizeof *names, name_cmp);
    s->qs = ts_calloc(n, sizeof *s->qs);
    s->r->queues = ts_calloc(n, sizeof *s->r->queues);
    if (!s->qs || !s->r->queues) rc = TS_ENOMEM;
  }
  for (size_t k = 0; rc == TS_OK && k < n; k++) {
    char ns[64];
    model_obj *o;
    size_t it = 0;
    ns_of(names[k], ns, sizeof ns);
    s->qs[k].ns = ts_intern_cstr(ns);
    s->r->queues[k].queue = names[k];
    while (model_next(s->m, MODEL_LOCAL_QUEUE, &it, &o)) /* the first by name */
      if (!strcmp(o->ns, ns) &&
          (!s->qs[k].local_queue || strcmp(o->name, s->qs[k].local_queue) < 0))
        s->qs[k].local_queue = ts_intern_cstr(o->name);
    cluster_queue(s, k);
    rc = ts_map_put(&idx, names[k], strlen(names[k]), (void *)(uintptr_t)(k + 1), NULL);
  }
  for (size_t i = 0; rc == TS_OK && i < s->t->n; i++) {
    const char *q = s->t->jobs[i].queue ? s->t->jobs[i].queue : "";
    s->js[i].q = (uint32_t)((uintptr_t)ts_map_get(&idx, q, strlen(q)) - 1);
  }
  s->r->nqueues = n;
  ts_map_free(&idx);
  ts_free(names);
  return rc == TS_OK ? TS_OK : ts_err_set(s->err, rc, "out of memory");
}

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The nearest-rank percentile p of v (sorted here), 0 when empty. */
static double pct(double *v, size_t n, double p) {
  size_t k;
  if (!n) return 0;
  k = (size_t)ceil(p / 100.0 * (double)n);
  return v[k ? k - 1 : 0];
}

static void stats(qinfo *q, sim_stats *out) {
  if (q->wait.n) qsort(q->wait.v, q->wait.n, sizeof *q->wait.v, dbl_cmp); /* NULL when empty */
  if (q->jct.n) qsort(q->jct.v, q->jct.n, sizeof *q->jct.v, dbl_cmp);
  out->wait_p50 = pct(q->wait.v, q->wait.n, 50);
  out->wait_p95 = pct(q->wait.v, q->wait.n, 95);
  out->wait_p99 = pct(q->wait.v, q->wait.n, 99);
  out->jct_p50 = pct(q->jct.v, q->jct.n, 50);
  out->jct_p95 = pct(q->jct.v, q->jct.n, 95);
  out->jct_p99 = pct(q->jct.v, q->jct.n, 99);
}

/* The schedulable nodes (they do not change during a run) and their GPUs. */
static ts_rc setup_cluster(sim *s) {
  model_obj *o;
  size_t it = 0;
  if ((s->gpu = model_resource_id(model_resources_of(s->m), "nvidia.com/gpu")) < 0 ||
      !(s->nodes = ts_calloc(model_count(s->m, MODEL_NODE) + 1, sizeof *s->nodes)))
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  while (model_next(s->m, MODEL_NODE, &it, &o))
    if (!((model_node *)o)->unschedulable) {
      s->nodes[s->nnodes++] = (model_node *)o;
      s->r->gpus_total += model_node_alloc((model_node *)o, s->gpu);
    }
  return TS_OK;
}

/* The jobs' state, the queues, the result's arrays. */
static ts_rc setup_jobs(sim *s) {
  ts_rc rc;
  if (!(s->r->jobs = ts_calloc(s->t->n + 1, sizeof *s->r->jobs)))
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  for (size_t i = 0; i < s->t->n; i++) {
    s->r->jobs[i].first_start_s = s->r->jobs[i].last_start_s = s->r->jobs[i].end_s = -1;
    s->r->jobs[i].predicted_start_s = -1;
  }
  if (!(s->r->samples = ts_malloc(1024 * sizeof *s->r->samples)))
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  if (!(s->st = sched_state_new()) || !(s->js = ts_calloc(s->t->n + 1, sizeof *s->js)))
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  if ((rc = queues(s)) != TS_OK) return rc;
  if (!(s->qgpus = ts_calloc(s->r->nqueues + 1, sizeof *s->qgpus)) ||
      !(s->qlast = ts_calloc(s->r->nqueues + 1, sizeof *s->qlast)) ||
      !(s->qdirty = ts_calloc(s->r->nqueues + 1, sizeof *s->qdirty)))
    return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  return TS_OK;
}

static ts_rc summarise(sim *s) {
  double area = 0;
  for (size_t i = 0; i < s->t->n; i++) { /* never started: waited at least until the end */
    const jstate *j = &s->js[i];
    double w = (double)(s->r->end_s - s->t->jobs[i].submit_s);
    if (j->state == J_FUTURE || j->started) continue;
    if (ts_vec_push(&s->qs[j->q].wait, w) != TS_OK || ts_vec_push(&s->all.wait, w) != TS_OK)
      return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  }
  for (size_t k = 0; k < s->r->nqueues; k++) stats(&s->qs[k], &s->r->queues[k]);
  stats(&s->all, &s->r->all);
  s->r->all.queue = "";
  s->r->all.nominal_gpus = -1;
  for (size_t i = 0; i < s->t->n; i++) {
    const jstate *j = &s->js[i];
    if (j->state == J_FUTURE) continue; /* counted: submitted jobs */
    s->r->queues[j->q].jobs++;
    s->r->all.jobs++;
    if (!j->started) s->r->queues[j->q].never_started++, s->r->all.never_started++;
    if (j->state == J_RUNNING && j->end_s > s->r->end_s) { /* counted to its end: cut at end_s */
      double over = held_hours(&s->t->jobs[i], j->end_s - s->r->end_s);
      s->r->queues[j->q].gpu_hours -= over;
      s->r->all.gpu_hours -= over;
    }
  }
  for (size_t k = 0; k + 1 < s->r->nsamples; k++)
    area += s->r->samples[k].gpus_used * (double)(s->r->samples[k + 1].t_s - s->r->samples[k].t_s);
  if (s->r->gpus_total && s->r->end_s > 0)
    s->r->utilisation = area / ((double)s->r->gpus_total * (double)s->r->end_s);
  return TS_OK;
}

static void teardown(sim *s) {
  ts_free(s->workload);
  for (size_t k = 0; s->qs && k < s->r->nqueues; k++) {
    ts_vec_free(&s->qs[k].wait);
    ts_vec_free(&s->qs[k].jct);
  }
  ts_vec_free(&s->all.wait);
  ts_vec_free(&s->all.jct);
  ts_vec_free(&s->heap);
  ts_vec_free(&s->evicted);
  ts_free(s->qs);
  ts_free(s->js);
  ts_free(s->nodes);
  ts_free(s->qgpus);
  ts_free(s->qlast);
  ts_free(s->qdirty);
  ts_vec_free(&s->dirty);
  sched_state_free(s->st);
}

/* Predict mode: job i, submitted at now and its cycles run, gets the start its first pod's
 * estimate gives (now when it started already). */
static ts_rc predict(sim *s, size_t i, int64_t now) {
  sim_estimate_opts eo = {.max_events = PREDICT_EVENTS};
  sim_estimate_result r;
  char name[96];
  if (s->js[i].started) return s->r->jobs[i].predicted_start_s = now, TS_OK;
  pod_name(name, sizeof name, i, s->js[i].attempt, 0);
  if (sim_estimate(s->m, s->cfg, s->o->epoch_ns + now * SECOND_NS, s->qs[s->js[i].q].ns, name, &eo,
                   &r, s->err) != TS_OK)
    return s->err->code ? s->err->code : TS_ENOMEM;
  if (r.started) s->r->jobs[i].predicted_start_s = (r.start_ns - s->o->epoch_ns) / SECOND_NS;
  return TS_OK;
}

ts_rc sim_run(model *m, const sched_config *cfg, const sim_trace *t, const sim_opts *o,
              sim_result *out, ts_err *err) {
  sim s = {.m = m, .cfg = cfg, .t = t, .o = o, .r = out, .err = err};
  ts_rc rc;
  int64_t now = t->n ? t->jobs[0].submit_s : 0;
  memset(out, 0, sizeof *out);
  if ((rc = setup_cluster(&s)) != TS_OK || (rc = use_workload(&s, t)) != TS_OK ||
      (rc = setup_jobs(&s)) != TS_OK)
    goto done;
  for (;;) {
    const ending *e;
    bool evicted = true;
    if (o->until_s > 0 && now > o->until_s) break;
    while ((e = heap_top(&s)) && e->end_s <= now) { /* runs that end now */
      size_t i = e->job;
      heap_pop(&s);
      if ((rc = finish(&s, i, now)) != TS_OK) goto done;
    }
    size_t arrived = s.next;
    for (; s.next < t->n && t->jobs[s.next].submit_s <= now; s.next++) { /* arrivals */
      s.js[s.next].left_s = t->jobs[s.next].duration_s;
      if ((rc = submit(&s, s.next, now)) != TS_OK) goto done;
    }
    for (int c = 0; evicted && c < CYCLES_PER_EVENT; c++)
      if ((rc = cycle(&s, now, &evicted)) != TS_OK) goto done;
    for (size_t i = arrived; o->predict && i < s.next; i++)
      if ((rc = predict(&s, i, now)) != TS_OK) goto done;
    if ((rc = sample(&s, now)) != TS_OK) goto done;
    out->end_s = now;
    if (o->progress) o->progress(o->progress_ud, now, s.next, t->n);
    e = heap_top(&s);
    if (!e && s.next == t->n) break; /* nothing will change any more */
    if (e && (s.next == t->n || e->end_s < t->jobs[s.next].submit_s))
      now = e->end_s;
    else
      now = t->jobs[s.next].submit_s;
  }
  rc = summarise(&s);
done:
  teardown(&s);
  if (rc != TS_OK) sim_result_free(out);
  return rc;
}

void sim_result_free(sim_result *r) {
  ts_free(r->queues);
  ts_free(r->jobs);
  ts_free(r->samples);
  ts_free(r->queue_points);
  memset(r, 0, sizeof *r);
}

/* ---- fill mode ------------------------------------------------------------------------- */

#define FILL_TUNE_RATIO 1.3 /* the FGD paper's workloads: 130% of the cluster's GPUs */

/* A random index below n (n > 0). */
static size_t random_below(uint64_t *x, size_t n) {
  return (size_t)(ts_random_next(x) % n);
}

typedef struct named {
  const char *id; /* the job's */
  size_t i;       /* its trace index */
} named;

static int by_name(const void *a, const void *b) {
  const named *x = a, *y = b;
  int c = strcmp(x->id, y->id);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The jobs fill mode tries, in order. Seed 0: the trace's order. A seed: as the FGD paper's
 * experiments draw them (its simulator with shufflePod and a workload tuning ratio of 1.3): the
 * jobs by name, shuffled, then copies of jobs drawn at random appended while one more would keep
 * the GPUs asked within 130% of the cluster's (the simulator tests each copy with one GPU's
 * share, not the pod's total: kept), or jobs drawn at random removed until they are. Shallow
 * copies (ids borrowed); from[k]: trace index. */
static ts_rc fill_order(const sim_trace *t, uint64_t seed, int64_t gpus_total, sim_trace *inst,
                        size_t **from) {
  double target = FILL_TUNE_RATIO * (double)gpus_total * 1000, total = 0;
  size_t cap = t->n + 1, n = 0, *name = NULL;
  named *sorted = NULL;
  uint64_t x = seed;
  memset(inst, 0, sizeof *inst);
  for (size_t i = 0; i < t->n; i++) total += (double)job_milli(&t->jobs[i]);
  if (seed && total < target) { /* room for the copies: each asks at least one thousandth */
    double extra = target - total;
    cap += extra > (double)SIZE_MAX / 4 ? SIZE_MAX / 4 : (size_t)extra;
  }
  *from = ts_malloc(cap * sizeof **from);
  if (!*from || !(name = ts_malloc((t->n + 1) * sizeof *name))) return ts_free(name), TS_ENOMEM;
  for (size_t i = 0; i < t->n; i++) name[i] = (*from)[i] = i;
  n = t->n;
  if (seed) {
    if (!(sorted = ts_malloc((t->n + 1) * sizeof *sorted))) return ts_free(name), TS_ENOMEM;
    for (size_t i = 0; i < t->n; i++) sorted[i] = (named){t->jobs[i].id, i};
    qsort(sorted, t->n, sizeof *sorted, by_name);
    for (size_t i = 0; i < t->n; i++) name[i] = (*from)[i] = sorted[i].i;
    ts_free(sorted);
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates, as Go's rand.Shuffle */
      size_t j = random_below(&x, i), tmp = (*from)[i - 1];
      (*from)[i - 1] = (*from)[j], (*from)[j] = tmp;
    }
    while (n && total > target) { /* tuned down */
      size_t k = random_below(&x, n);
      total -= (double)job_milli(&t->jobs[(*from)[k]]);
      memmove(*from + k, *from + k + 1, (n - k - 1) * sizeof **from);
      n--;
    }
    while (t->n && n < cap - 1) { /* tuned up */
      const sim_job *j = &t->jobs[name[random_below(&x, t->n)]];
      double one = j->gpus ? 1000 : (double)j->gpu_milli;
      if (total + one > target) break;
      total += (double)job_milli(j);
      (*from)[n++] = (size_t)(j - t->jobs);
    }
  }
  ts_free(name);
  if (!(inst->jobs = ts_malloc((n + 1) * sizeof *inst->jobs))) return TS_ENOMEM;
  for (size_t k = 0; k < n; k++) inst->jobs[k] = t->jobs[(*from)[k]];
  inst->n = n;
  inst->format = t->format;
  return TS_OK;
}

ts_rc sim_fill(model *m, const sched_config *cfg, const sim_trace *t, const sim_opts *o,
               sim_fill_result *out, ts_err *err) {
  sim_result r = {0};
  sim_trace inst;
  sim s = {.m = m, .cfg = cfg, .t = &inst, .o = o, .r = &r, .err = err};
  size_t *from = NULL;
  double arrived = 0;
  int64_t allocated = 0;
  ts_rc rc;
  bool gpus = false;
  memset(out, 0, sizeof *out);
  out->first_failure = SIZE_MAX;
  memset(&inst, 0, sizeof inst);
  for (size_t i = 0; i < t->n && !gpus; i++) gpus = job_milli(&t->jobs[i]) > 0;
  if (!gpus) /* drawing jobs until they ask for 150% of the GPUs would never end */
    return ts_err_set(err, TS_EINVAL,
                      "no job of the trace asks for a GPU: fill mode measures how much of the "
                      "cluster's GPUs can be allocated");
  if ((rc = setup_cluster(&s)) != TS_OK || (rc = use_workload(&s, t)) != TS_OK) goto done;
  s.cfg_own.tie_seed = o->seed; /* drawn as the paper's: its ties are random too */
  if (fill_order(t, o->seed, r.gpus_total, &inst, &from) != TS_OK) {
    rc = ts_err_set(err, TS_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = setup_jobs(&s)) != TS_OK) goto done;
  out->gpus_total = r.gpus_total;
  out->arrived = ts_malloc((inst.n + 1) * sizeof *out->arrived);
  out->allocated = ts_malloc((inst.n + 1) * sizeof *out->allocated);
  if (!out->arrived || !out->allocated) {
    rc = ts_err_set(err, TS_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < inst.n; i++) {
    const sim_job *job = &inst.jobs[i];
    bool evicted;
    s.js[i].left_s = INT64_MAX / 4; /* never ends */
    if ((rc = submit(&s, i, (int64_t)i)) != TS_OK ||
        (rc = cycle(&s, (int64_t)i, &evicted)) != TS_OK)
      goto done;
    out->cycles++;
    arrived += (double)job_milli(job) / 1000;
    if (s.js[i].state == J_RUNNING) {
      out->placed++;
      allocated += job_milli(job);
    } else {
      if (out->first_failure == SIZE_MAX) {
        out->first_failure = from[i];
        out->allocated_at_failure =
            r.gpus_total ? (double)allocated / 1000 / (double)r.gpus_total : 0;
      }
      out->failed++;
      withdraw(&s, i);
      s.pending--;
      s.js[i].state = J_DONE;
    }
    out->arrived[out->npoints] = arrived;
    out->allocated[out->npoints++] = (double)allocated / 1000;
    if (o->progress) o->progress(o->progress_ud, (int64_t)i, i + 1, inst.n);
  }
done:
  teardown(&s);
  sim_result_free(&r);
  ts_free(inst.jobs); /* the ids are the trace's */
  ts_free(from);
  if (rc != TS_OK) sim_fill_result_free(out);
  return rc;
}

void sim_fill_result_free(sim_fill_result *r) {
  ts_free(r->arrived);
  ts_free(r->allocated);
  memset(r, 0, sizeof *r);
}
