/* sim/estimate.c - when a pending pod will start: the cluster run forward in virtual time.
 *
 * Running pods end at their expected time: start (status.startTime, else now) plus the
 * duration the user gave (annotation tessera.dev/expected-duration, a Go duration) or else
 * spec.activeDeadlineSeconds (the latest it can run: an upper bound). A pod with neither runs
 * past the horizon. At now and at each end, the same scheduling cycle runs on the model and
 * its decisions are applied (bindings, preemptions); pods it starts end by the same rule.
 * The run stops when the pod is bound, at the horizon, after max_events ends, or when its
 * time budget is spent. Nothing new arrives: the estimate is what the queue and the cluster
 * as they are now give.
 *
 * The run changes the model in place (bindings, evictions, ended pods' phase) and journals
 * each change; the journal is undone in reverse at the end, so the caller's model (a live
 * one included) is given back as it was, pod for pod, without a copy.
 */
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

#define SECOND_NS INT64_C(1000000000)
#define AGAIN     4 /* cycles at one time at most */

typedef struct ending {
  int64_t at;   /* ns */
  uint32_t pod; /* index in pods */
} ending;

/* A pod as it was before the run first changed it. */
typedef struct was {
  model_pod *p;
  const char *node;
  int32_t gpu_index;
  model_pod_phase phase;
} was;

typedef struct est {
  model *m;
  model_pod **pods; /* running pods with an end */
  int64_t *end;     /* each one's current end, or -1 when it no longer runs */
  uint32_t n, cap;
  ending *heap;
  uint32_t nheap, heap_cap;
  ts_map index; /* pod address -> 1 + its index in pods */
  was *journal; /* every pod changed, once, in the order of its first change */
  uint32_t njournal, journal_cap;
  ts_map changed;      /* pod address -> 1 (journalled) */
  ts_map changed_once; /* pod address -> 1: its start was told (opts.started) */
  ts_arena keys;       /* the maps' keys: copies of pod addresses (a map borrows its keys) */
} est;

/* A stable copy of p's address, to key a map by; NULL when out of memory. */
static const char *key_of(est *e, const model_pod *p) {
  const model_pod **k = ts_arena_alloc(&e->keys, sizeof *k);
  if (k) *k = p;
  return (const char *)k;
}

/* The duration a pod is expected to run, in ns; -1 when unknown; *deadline: it is the
 * pod's activeDeadlineSeconds. */
static int64_t own_duration(const model_pod *p, bool *deadline) {
  static const char *key;
  const char *v =
      model_labels_get(&p->obj.annotations, ts_intern_once(&key, "tessera.dev/expected-duration"));
  int64_t ms;
  *deadline = false;
  if (v && ts_duration_parse(v, &ms) == TS_OK && ms > 0) return ms * 1000000;
  if (p->active_deadline_s > 0) return *deadline = true, p->active_deadline_s * SECOND_NS;
  return -1;
}

/* The pod's own duration, else its history's (o->history: *history set); -1 when unknown. */
static int64_t duration(const sim_estimate_opts *o, const model_pod *p, bool *deadline,
                        bool *history) {
  int64_t d = own_duration(p, deadline);
  *history = false;
  if (d < 0 && o && o->history && (d = o->history(o->hud, p)) > 0) *history = true;
  return d > 0 ? d : -1;
}

int64_t sim_expected_duration_ns(const model_pod *p) {
  bool deadline;
  return own_duration(p, &deadline);
}

static void heap_up(est *e, uint32_t i) {
  while (i && e->heap[(i - 1) / 2].at > e->heap[i].at) {
    ending t = e->heap[i];
    e->heap[i] = e->heap[(i - 1) / 2], e->heap[(i - 1) / 2] = t;
    i = (i - 1) / 2;
  }
}

static void heap_down(est *e, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, m = i;
    ending t;
    if (l < e->nheap && e->heap[l].at < e->heap[m].at) m = l;
    if (r < e->nheap && e->heap[r].at < e->heap[m].at) m = r;
    if (m == i) return;
    t = e->heap[i], e->heap[i] = e->heap[m], e->heap[m] = t;
    i = m;
  }
}

/* Journals p as it is now, the first time the run is about to change it. */
static ts_rc journal(est *e, model_pod *p) {
  const char *k;
  if (ts_map_get(&e->changed, (const char *)&p, sizeof p)) return TS_OK;
  if (e->njournal == e->journal_cap) {
    uint32_t ncap = e->journal_cap ? 2 * e->journal_cap : 64;
    was *j = ts_realloc(e->journal, ncap * sizeof *j);
    if (!j) return TS_ENOMEM;
    e->journal = j, e->journal_cap = ncap;
  }
  e->journal[e->njournal++] = (was){p, p->node_name, p->gpu_index, p->phase};
  if (!(k = key_of(e, p)) || ts_map_put(&e->changed, k, sizeof p, (void *)1, NULL) != TS_OK)
    return TS_ENOMEM;
  return TS_OK;
}

/* Gives every journalled pod back as it was, the last changed first. */
static void undo(est *e) {
  for (uint32_t i = e->njournal; i-- > 0;) {
    was *w = &e->journal[i];
    (void)model_pod_bind_gpu(e->m, w->p, w->node, w->gpu_index);
    if (w->p->phase != w->phase) (void)model_pod_set_phase(e->m, w->p, w->phase);
  }
}

/* Records that p (bound) ends at `at`. */
static ts_rc will_end(est *e, model_pod *p, int64_t at) {
  uintptr_t i = (uintptr_t)ts_map_get(&e->index, (const char *)&p, sizeof p);
  if (!i) {
    if (e->n == e->cap) {
      uint32_t ncap = e->cap ? 2 * e->cap : 256;
      model_pod **pods = ts_realloc(e->pods, ncap * sizeof *pods);
      int64_t *end;
      if (!pods) return TS_ENOMEM;
      e->pods = pods;
      if (!(end = ts_realloc(e->end, ncap * sizeof *end))) return TS_ENOMEM;
      e->end = end, e->cap = ncap;
    }
    const char *k = key_of(e, p);
    i = ++e->n;
    e->pods[i - 1] = p;
    if (!k || ts_map_put(&e->index, k, sizeof p, (void *)i, NULL) != TS_OK) return TS_ENOMEM;
  }
  e->end[i - 1] = at;
  if (e->nheap == e->heap_cap) {
    uint32_t ncap = e->heap_cap ? 2 * e->heap_cap : 256;
    ending *h = ts_realloc(e->heap, ncap * sizeof *h);
    if (!h) return TS_ENOMEM;
    e->heap = h, e->heap_cap = ncap;
  }
  e->heap[e->nheap++] = (ending){at, (uint32_t)i - 1};
  heap_up(e, e->nheap - 1);
  return TS_OK;
}

/* p was evicted: it no longer ends (its heap entry is skipped). */
static void stopped(est *e, const model_pod *p) {
  uintptr_t i = (uintptr_t)ts_map_get(&e->index, (const char *)&p, sizeof p);
  if (i) e->end[i - 1] = -1;
}

static bool is_target(const model_pod *p, const char *ns, const char *name) {
  return name && !strcmp(p->obj.ns, ns) && !strcmp(p->obj.name, name);
}

/* One cycle at t, applied (each pod journalled first); *bound when the target was bound (no
 * target: when the cycle left nothing pending), *changed when a pod was bound or evicted. */
static ts_rc cycle(est *e, const sched_config *cfg, sched_state *st, int64_t t, const char *ns,
                   const char *name, const sim_estimate_opts *o, sim_estimate_result *out,
                   bool *bound, bool *changed, ts_err *err) {
  sched_result res;
  ts_rc rc = sched_cycle(e->m, cfg, st, t, &res, err);
  if (rc != TS_OK) return rc;
  out->cycles++;
  if (!name && !res.npending) *bound = true; /* every pod that waited has started */
  for (size_t i = 0; rc == TS_OK && i < res.ndecisions; i++) {
    const sched_decision *d = &res.decisions[i];
    model_pod *p = (model_pod *)d->pod;
    int64_t dur;
    bool deadline, hist;
    if (d->kind == SCHED_PENDING) continue;
    *changed = true;
    if (d->kind == SCHED_EVICT) out->evictions++, stopped(e, p);
    if ((rc = journal(e, p)) != TS_OK || (rc = sched_decision_apply(e->m, d)) != TS_OK) break;
    if (d->kind != SCHED_BIND) continue;
    if (is_target(p, ns, name)) *bound = true;
    if (o && o->started && !ts_map_get(&e->changed_once, (const char *)&p, sizeof p))
      o->started(o->ud, p, t); /* (the first binding only: a pod evicted in the run may
                                  start again) */
    if (o && o->started) {
      const char *k = key_of(e, p);
      if (!k || ts_map_put(&e->changed_once, k, sizeof p, (void *)1, NULL) != TS_OK) {
        rc = TS_ENOMEM;
        break;
      }
    }
    if ((dur = duration(o, p, &deadline, &hist)) > 0)
      out->deadline_ends += deadline, out->history_ends += hist, rc = will_end(e, p, t + dur);
    else
      out->unknown_started++;
  }
  sched_result_free(&res);
  if (rc != TS_OK && !err->code) ts_err_set(err, rc, "estimate: %s", ts_strerror(rc));
  return rc;
}

ts_rc sim_estimate(model *m, const sched_config *cfg, int64_t now_ns, const char *ns,
                   const char *name, const sim_estimate_opts *o, sim_estimate_result *out,
                   ts_err *err) {
  est e = {.m = m};
  sched_state *st = sched_state_new();
  model_obj *obj;
  size_t it = 0;
  int64_t t = now_ns,
          horizon = now_ns + (o && o->horizon_ns > 0 ? o->horizon_ns : 7 * 86400 * SECOND_NS);
  uint32_t max_events = o && o->max_events ? o->max_events : 500;
  double deadline = o && o->budget_s > 0 ? ts_time_mono_s() + o->budget_s : 0;
  bool bound = false;
  ts_rc rc = TS_OK;
  memset(out, 0, sizeof *out);
  out->horizon_ns = horizon - now_ns;
  out->stop = "";
  if (!st) return ts_err_set(err, TS_ENOMEM, "out of memory");
  ts_map_init(&e.index);
  ts_map_init(&e.changed);
  ts_map_init(&e.changed_once);
  ts_arena_init(&e.keys, 16 * 1024);
  while (rc == TS_OK && model_next(m, MODEL_POD, &it, &obj)) {
    model_pod *p = (model_pod *)obj;
    int64_t dur, start;
    bool dl, hist;
    if (!p->node_name || !model_pod_counts(p)) continue;
    if ((dur = duration(o, p, &dl, &hist)) <= 0) {
      out->unknown_ends++;
      continue;
    }
    start = p->start_ns ? p->start_ns : now_ns;
    out->known_ends++, out->deadline_ends += dl, out->history_ends += hist;
    rc = will_end(&e, p, start + dur > now_ns ? start + dur : now_ns);
  }
  if (rc != TS_OK) ts_err_set(err, rc, "out of memory");
  while (rc == TS_OK) {
    /* cycles at t while they change something (a preemption's victims leave in one, its
     * preemptor is placed in the next), a few at most */
    bool changed = true;
    for (int k = 0; rc == TS_OK && !bound && changed && k < AGAIN; k++) {
      changed = false;
      rc = cycle(&e, cfg, st, t, ns, name, o, out, &bound, &changed, err);
    }
    if (rc != TS_OK || bound) break;
    while (e.nheap && e.end[e.heap[0].pod] != e.heap[0].at) { /* stale: evicted meanwhile */
      e.heap[0] = e.heap[--e.nheap];
      heap_down(&e, 0);
    }
    if (!e.nheap) {
      out->stop = "nothing left running has a known end";
      break;
    }
    if (e.heap[0].at > horizon) {
      out->stop = "horizon";
      break;
    }
    if (out->events == max_events) {
      out->stop = "events";
      break;
    }
    if (deadline && ts_time_mono_s() > deadline) {
      out->stop = "budget";
      break;
    }
    out->events++;
    t = e.heap[0].at;
    while (rc == TS_OK && e.nheap && e.heap[0].at <= t) { /* every pod ending at t ends */
      ending x = e.heap[0];
      e.heap[0] = e.heap[--e.nheap];
      heap_down(&e, 0);
      if (e.end[x.pod] != x.at) continue;
      e.end[x.pod] = -1;
      if ((rc = journal(&e, e.pods[x.pod])) == TS_OK)
        rc = model_pod_set_phase(m, e.pods[x.pod], MODEL_PHASE_SUCCEEDED);
      if (rc != TS_OK) ts_err_set(err, rc, "out of memory");
    }
  }
  if (bound) out->started = true, out->start_ns = t;
  undo(&e);
  sched_state_free(st);
  ts_map_free(&e.index);
  ts_map_free(&e.changed);
  ts_map_free(&e.changed_once);
  ts_arena_free(&e.keys);
  ts_free(e.pods), ts_free(e.end), ts_free(e.heap), ts_free(e.journal);
  return rc;
}
