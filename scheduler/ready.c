/* scheduler/ready.c - Kueue's waitForPodsReady for gangs: a gang whose pods are not all Running
 * and Ready within the timeout after binding is evicted, and held back with exponential
 * backoff (base x 2^(n-1), capped) before it may start again. The backoff, the evictions
 * issued and the flavor-search progress of queued workloads (Kueue's LastAssignment) are what
 * the scheduler remembers between cycles (sched_state). */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct backoff {
  char *key;          /* owned: the gang key */
  int32_t evictions;  /* times the gang was evicted */
  int64_t requeue_at; /* it may start again from then */
} backoff;

/* A running workload admitted to a queue, as last seen (for its FINISHED event). */
typedef struct wl_rec {
  char *cq, *lq, *ns, *pc; /* owned: ClusterQueue, LocalQueue ("" none), namespace, class */
  uint64_t seen;           /* the cycle that last saw it running */
  char key[];              /* the gang key */
} wl_rec;

/* A gang that became ready. */
typedef struct ready_rec {
  int64_t at;    /* when (its pods' latest Ready transition) */
  uint64_t seen; /* the cycle that last watched it */
} ready_rec;

struct sched_state {
  ts_map backoff;  /* gang key -> backoff */
  ts_map evicting; /* pod key -> the same key (owned): evictions issued, not yet seen */
  q_memo *memo;    /* flavor-search progress, created on first use */
  ts_map ready;    /* gang key (owned) -> ready_rec: gangs seen ready (waitForPodsReady) */
  ts_map admitted; /* gang key -> wl_rec: running admitted workloads */
  uint64_t cycle;  /* cycles run (sched__ready_check counts them) */
};

static void wl_rec_free(wl_rec *w) {
  if (!w) return;
  ts_free(w->cq), ts_free(w->lq), ts_free(w->ns), ts_free(w->pc);
  ts_free(w);
}

q_memo *sched__memo(sched_state *st) {
  if (st && !st->memo) st->memo = q_memo_new();
  return st ? st->memo : NULL;
}

sched_state *sched_state_new(void) {
  sched_state *s = ts_calloc(1, sizeof *s);
  if (s) ts_map_init(&s->backoff), ts_map_init(&s->evicting);
  if (s) ts_map_init(&s->ready), ts_map_init(&s->admitted);
  return s;
}

bool sched__evicting(const sched_state *st, const model_pod *p) {
  return st && (p->obj.deleted_ns || ts_map_get(&st->evicting, p->obj.key, strlen(p->obj.key)));
}

/* Forgets evictions the model shows now (the pod is gone or being deleted). */
void sched__evictions_seen(sched_state *st, const model *m) {
  size_t it = 0;
  const ts_map_slot *s;
  char *gone[256];
  size_t n;
  if (!st) return;
  do { /* deleting while iterating is not allowed: collect, then delete, until none left */
    n = 0;
    it = 0;
    while (n < 256 && ts_map_next(&st->evicting, &it, &s)) {
      const model_pod *p = (const model_pod *)model_get_key(m, MODEL_POD, s->key);
      if (!p || p->obj.deleted_ns || !p->node_name) gone[n++] = (char *)s->value;
    }
    for (size_t i = 0; i < n; i++) {
      ts_map_del(&st->evicting, gone[i], strlen(gone[i]));
      ts_free(gone[i]);
    }
  } while (n == 256);
}

ts_rc sched__evictions_issued(sched_state *st, const sched_result *r) {
  for (size_t i = 0; st && i < r->ndecisions; i++) {
    const char *key = r->decisions[i].pod->obj.key;
    char *copy;
    if (r->decisions[i].kind != SCHED_EVICT || ts_map_get(&st->evicting, key, strlen(key)))
      continue;
    if (!(copy = ts_strdup(key)) ||
        ts_map_put(&st->evicting, copy, strlen(copy), copy, NULL) != TS_OK) {
      ts_free(copy);
      return TS_ENOMEM;
    }
  }
  return TS_OK;
}

void sched_state_forget_eviction(sched_state *s, const char *pod_key) {
  if (s) ts_free(ts_map_del(&s->evicting, pod_key, strlen(pod_key)));
}

void sched_state_free(sched_state *s) {
  size_t it = 0;
  const ts_map_slot *slot;
  if (!s) return;
  while (ts_map_next(&s->backoff, &it, &slot)) {
    backoff *b = slot->value;
    ts_free(b->key);
    ts_free(b);
  }
  ts_map_free(&s->backoff);
  it = 0;
  while (ts_map_next(&s->evicting, &it, &slot)) ts_free(slot->value);
  ts_map_free(&s->evicting);
  q_memo_free(s->memo);
  it = 0;
  while (ts_map_next(&s->ready, &it, &slot)) ts_free((void *)slot->key), ts_free(slot->value);
  ts_map_free(&s->ready);
  it = 0;
  while (ts_map_next(&s->admitted, &it, &slot)) wl_rec_free(slot->value);
  ts_map_free(&s->admitted);
  ts_free(s);
}

/* "5m0s" style durations for messages. */
static void duration(int64_t ns, char *out, size_t cap) {
  int64_t s = ns / 1000000000LL;
  if (s >= 3600)
    snprintf(out, cap, "%lldh%lldm%llds", (long long)(s / 3600), (long long)(s / 60 % 60),
             (long long)(s % 60));
  else
    snprintf(out, cap, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
}

const char *sched__ready_hold(sched_view *v, sched_state *st, const char *key) {
  backoff *b;
  char when[40], msg[256];
  if (!st || !st->backoff.count) return NULL; /* asked per pending gang: most cycles hold none */
  b = ts_map_get(&st->backoff, key, strlen(key));
  if (!b || b->requeue_at <= v->now_ns) return NULL;
  ts_time_format(b->requeue_at, when, sizeof when);
  snprintf(msg, sizeof msg,
           "requeued after its pods were not all ready in time (eviction %d); waits until %s",
           b->evictions, when);
  return ts_arena_strndup(v->out, msg, strlen(msg));
}

/* A bound gang under watch: when it was bound and whether every pod is ready. */
typedef struct watched {
  const char *key;        /* gang key (arena) */
  int64_t bound_at;       /* latest PodScheduled=True transition; 0 = unknown */
  int64_t first_bound;    /* earliest PodScheduled=True transition (its admission), 0 unknown */
  int64_t ready_at;       /* latest Ready=True transition of its pods */
  int64_t created;        /* earliest creation of its pods */
  bool ready;             /* every member Running and Ready */
  const model_pod **pods; /* members (arena) */
  uint32_t n, cap;        /* entries */
} watched;

static bool pod_ready(const model_pod *p) {
  const model_condition *c = model_pod_condition(p, "Ready");
  return p->phase == MODEL_PHASE_RUNNING && c && !strcmp(c->status, "True");
}

static ts_rc watch_pod(sched_view *v, ts_map *index, const model_pod *p) {
  char key[TS_KEY_MAX];
  watched *w;
  const model_condition *c = model_pod_condition(p, "PodScheduled");
  sched__gang_key(v->m, p, key, sizeof key);
  w = ts_map_get(index, key, strlen(key));
  if (!w) {
    w = ts_arena_alloc(v->arena, sizeof *w);
    if (!w) return TS_ENOMEM;
    memset(w, 0, sizeof *w);
    w->key = ts_arena_strndup(v->arena, key, strlen(key));
    w->ready = true;
    if (!w->key || ts_map_put(index, w->key, strlen(w->key), w, NULL) != TS_OK) return TS_ENOMEM;
  }
  if (w->n == w->cap) {
    uint32_t ncap = w->cap ? w->cap * 2 : 8;
    const model_pod **np = ts_arena_alloc(v->arena, ncap * sizeof *np);
    if (!np) return TS_ENOMEM;
    if (w->n) memcpy(np, w->pods, w->n * sizeof *np);
    w->pods = np, w->cap = ncap;
  }
  w->pods[w->n++] = p;
  w->ready &= pod_ready(p);
  {
    const model_condition *r = model_pod_condition(p, "Ready");
    if (r && r->last_transition_ns > w->ready_at) w->ready_at = r->last_transition_ns;
    if (p->obj.created_ns && (!w->created || p->obj.created_ns < w->created))
      w->created = p->obj.created_ns;
    if (c && !strcmp(c->status, "True") && c->last_transition_ns &&
        (!w->first_bound || c->last_transition_ns < w->first_bound))
      w->first_bound = c->last_transition_ns;
  }
  if (!c || strcmp(c->status, "True") || !c->last_transition_ns)
    w->bound_at = -1;
  else if (w->bound_at >= 0 && c->last_transition_ns > w->bound_at)
    w->bound_at = c->last_transition_ns;
  return TS_OK;
}

static int pod_key_cmp(const void *a, const void *b) {
  return strcmp((*(const model_pod *const *)a)->obj.key, (*(const model_pod *const *)b)->obj.key);
}

static int watched_cmp(const void *a, const void *b) {
  return strcmp((*(watched *const *)a)->key, (*(watched *const *)b)->key);
}

/* Kueue's eviction event of a queued gang whose first EVICT decision comes next. */
static ts_rc ready_event(sched_view *v, const watched *w, sched_result *r) {
  const model_pod *p = w->pods[0];
  sched_qref ref;
  sched_wl_event ev = {.kind = SCHED_WL_EVICTED,
                       .ns = ts_intern_cstr(p->obj.ns),
                       .reason = "PodsReadyTimeout",
                       .cause = "WaitForStart",
                       .ready_evicted_ns = -1, /* it never was */
                       .decision = r->ndecisions,
                       .count = w->n};
  if (!sched__queue_ref(v->m, p, &ref)) return TS_OK; /* not a queued workload */
  ev.local_queue = ref.local_queue;
  ev.priority_class = sched__wl_priority_class(p, &ref);
  if (!(ev.cluster_queue = sched__queue_cq(v->m, p->obj.ns, &ref))) return TS_OK;
  return sched__event(v, r, &ev);
}

/* Evicts a timed-out gang: one EVICT decision per pod, and the backoff recorded. */
static ts_rc evict(sched_view *v, sched_state *st, watched *w, sched_result *r) {
  backoff *b = ts_map_get(&st->backoff, w->key, strlen(w->key));
  int64_t wait;
  char t1[32], t2[32], msg[512];
  const char *reason;
  ts_rc rc;
  if (!b) {
    if (!(b = ts_calloc(1, sizeof *b)) || !(b->key = ts_strdup(w->key)) ||
        ts_map_put(&st->backoff, b->key, strlen(b->key), b, NULL) != TS_OK) {
      if (b) ts_free(b->key);
      ts_free(b);
      return TS_ENOMEM;
    }
  }
  b->evictions++;
  wait = v->cfg->requeue_base_ns;
  for (int i = 1; i < b->evictions && wait < v->cfg->requeue_max_ns; i++) wait *= 2;
  if (wait > v->cfg->requeue_max_ns) wait = v->cfg->requeue_max_ns;
  b->requeue_at = v->now_ns + wait;
  duration(v->cfg->pods_ready_timeout_ns, t1, sizeof t1);
  duration(wait, t2, sizeof t2);
  snprintf(msg, sizeof msg,
           "PodsReadyTimeout: the pods of the gang were not all Running and Ready within %s after "
           "binding; evicted and requeued with a backoff of %s",
           t1, t2);
  if (!(reason = ts_arena_strndup(v->out, msg, strlen(msg)))) return TS_ENOMEM;
  qsort(w->pods, w->n, sizeof *w->pods, pod_key_cmp);
  if (w->n && (rc = ready_event(v, w, r)) != TS_OK) return rc;
  for (uint32_t i = 0; i < w->n; i++) {
    rc =
        sched__decide(v, r, (sched_decision){SCHED_EVICT, w->pods[i], NULL, reason, NULL, NULL, 0});
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* A watched gang ready for the first time: remembered, and Kueue's READY event when it is a
 * queued workload (its wait from creation or requeue, and from admission, to ready). */
static ts_rc became_ready(sched_view *v, sched_state *st, const watched *w, sched_result *r) {
  ready_rec *rr = ts_map_get(&st->ready, w->key, strlen(w->key));
  const model_pod *p = w->pods[0];
  const backoff *b;
  sched_qref ref;
  sched_wl_event ev = {.kind = SCHED_WL_READY, .decision = r->ndecisions};
  int64_t queued = w->created;
  char *key;
  if (rr) {
    rr->seen = st->cycle;
    return TS_OK;
  }
  key = NULL;
  if (!(rr = ts_calloc(1, sizeof *rr)) || !(key = ts_strdup(w->key)) ||
      ts_map_put(&st->ready, key, strlen(key), rr, NULL) != TS_OK) {
    ts_free(rr), ts_free(key);
    return TS_ENOMEM;
  }
  rr->at = w->ready_at ? w->ready_at : v->now_ns, rr->seen = st->cycle;
  if (!sched__queue_ref(v->m, p, &ref)) return TS_OK; /* not a queued workload */
  if (!(ev.cluster_queue = sched__queue_cq(v->m, p->obj.ns, &ref))) return TS_OK;
  if ((b = ts_map_get(&st->backoff, w->key, strlen(w->key))) && b->requeue_at > queued)
    queued = b->requeue_at; /* requeued after an eviction: its wait starts again */
  ev.ns = ts_intern_cstr(p->obj.ns);
  ev.local_queue = ref.local_queue;
  ev.priority_class = sched__wl_priority_class(p, &ref);
  ev.waited_ns = queued ? rr->at - queued : 0;
  ev.admitted_ready_ns = w->first_bound ? rr->at - w->first_bound : 0;
  return sched__event(v, r, &ev);
}

/* Forgets the ready gangs not watched in this cycle (gone, or no longer running). */
static void ready_prune(sched_state *st) {
  const char *gone[256];
  size_t n;
  do {
    size_t it = 0;
    const ts_map_slot *s;
    n = 0;
    while (n < 256 && ts_map_next(&st->ready, &it, &s))
      if (((ready_rec *)s->value)->seen != st->cycle) gone[n++] = s->key;
    for (size_t i = 0; i < n; i++) {
      char *k = (char *)gone[i];
      ready_rec *rr = ts_map_get(&st->ready, k, strlen(k));
      ts_map_del(&st->ready, k, strlen(k));
      ts_free(rr), ts_free(k);
    }
  } while (n == 256);
}

int64_t sched__ready_since(const sched_state *st, const char *gang_key) {
  const ready_rec *rr = st ? ts_map_get(&st->ready, gang_key, strlen(gang_key)) : NULL;
  return rr ? rr->at : 0;
}

ts_rc sched__admitted_seen(sched_view *v, const model_pod *p, const char *cluster_queue,
                           const sched_qref *ref) {
  sched_state *st = v->state;
  char key[TS_KEY_MAX];
  wl_rec *w;
  size_t n;
  if (!st || !cluster_queue) return TS_OK;
  sched__gang_key(v->m, p, key, sizeof key);
  n = strlen(key);
  if ((w = ts_map_get(&st->admitted, key, n))) {
    w->seen = st->cycle;
    return TS_OK;
  }
  if (!(w = ts_calloc(1, sizeof *w + n + 1))) return TS_ENOMEM;
  memcpy(w->key, key, n + 1);
  w->cq = ts_strdup(cluster_queue), w->lq = ts_strdup(ref->local_queue ? ref->local_queue : "");
  w->ns = ts_strdup(p->obj.ns), w->pc = ts_strdup(sched__wl_priority_class(p, ref));
  w->seen = st->cycle;
  if (!w->cq || !w->lq || !w->ns || !w->pc ||
      ts_map_put(&st->admitted, w->key, n, w, NULL) != TS_OK) {
    wl_rec_free(w);
    return TS_ENOMEM;
  }
  return TS_OK;
}

ts_rc sched__finished_check(sched_view *v, sched_result *r) {
  sched_state *st = v->state;
  wl_rec *gone[256];
  size_t n, it;
  const ts_map_slot *s;
  ts_map ended; /* gang key -> (void *)1: gangs with a pod that ended */
  bool indexed = false;
  ts_rc rc = TS_OK;
  if (!st) return TS_OK;
  ts_map_init(&ended);
  do {
    n = 0, it = 0;
    while (n < 256 && ts_map_next(&st->admitted, &it, &s))
      if (((wl_rec *)s->value)->seen != st->cycle) gone[n++] = s->value;
    if (n && !indexed) { /* the gangs with ended pods, once, when a workload stopped running */
      model_obj *o;
      indexed = true;
      for (size_t pit = 0; rc == TS_OK && model_next(v->m, MODEL_POD, &pit, &o);) {
        const model_pod *p = (const model_pod *)o;
        char key[TS_KEY_MAX];
        if (p->phase != MODEL_PHASE_SUCCEEDED && p->phase != MODEL_PHASE_FAILED) continue;
        sched__gang_key(v->m, p, key, sizeof key);
        if (!ts_map_get(&ended, key, strlen(key))) {
          char *k = ts_arena_strndup(v->arena, key, strlen(key));
          rc = k ? ts_map_put(&ended, k, strlen(k), (void *)1, NULL) : TS_ENOMEM;
        }
      }
    }
    for (size_t i = 0; i < n; i++) {
      wl_rec *w = gone[i];
      if (rc == TS_OK && ts_map_get(&ended, w->key, strlen(w->key))) {
        sched_wl_event ev = {.kind = SCHED_WL_FINISHED,
                             .cluster_queue = ts_intern_cstr(w->cq),
                             .ns = ts_intern_cstr(w->ns),
                             .local_queue = *w->lq ? ts_intern_cstr(w->lq) : NULL,
                             .priority_class = ts_intern_cstr(w->pc),
                             .decision = r->ndecisions};
        rc = sched__event(v, r, &ev);
      }
      ts_map_del(&st->admitted, w->key, strlen(w->key));
      wl_rec_free(w);
    }
  } while (n == 256);
  ts_map_free(&ended);
  return rc;
}

ts_rc sched__ready_check(sched_view *v, sched_state *st, sched_result *r) {
  ts_map index;
  size_t it = 0, nw = 0;
  const ts_map_slot *s;
  watched **all;
  ts_rc rc;
  if (st) st->cycle++;
  if (!v->cfg->wait_for_pods_ready || !st) return TS_OK;
  if ((rc = sched__view_pods(v)) != TS_OK) return rc;
  ts_map_init(&index);
  for (size_t i = 0; rc == TS_OK && i < v->nrunning; i++) {
    const model_pod *p = v->running[i];
    if (!p->obj.deleted_ns && p->scheduler_name == v->cfg->scheduler_name &&
        !sched__kueue_managed(v, p)) /* Kueue's own waitForPodsReady evicts those */
      rc = watch_pod(v, &index, p);
  }
  all = ts_arena_alloc(v->arena, (index.count + 1) * sizeof *all);
  if (rc == TS_OK && !all) rc = TS_ENOMEM;
  for (it = 0; rc == TS_OK && ts_map_next(&index, &it, &s);) all[nw++] = s->value;
  if (rc == TS_OK) qsort(all, nw, sizeof *all, watched_cmp);
  for (size_t i = 0; rc == TS_OK && i < nw; i++) {
    watched *w = all[i];
    if (w->ready) rc = became_ready(v, st, w, r);
    if (w->ready || w->bound_at <= 0 || v->now_ns - w->bound_at < v->cfg->pods_ready_timeout_ns)
      continue;
    rc = evict(v, st, w, r);
  }
  if (rc == TS_OK) ready_prune(st);
  ts_map_free(&index);
  return rc;
}

/* A gang of queued pods as sched_finished_workloads sees it. */
typedef struct fin_gang {
  bool alive;             /* a pod of it has not ended */
  const model_pod *first; /* one of its pods that ended */
} fin_gang;

/* Adds one to key's count in counts (a new sched_count when it has none). */
static ts_rc bump(ts_map *counts, const char *key) {
  size_t n = strlen(key);
  sched_count *c = ts_map_get(counts, key, n);
  if (c) {
    c->n++;
    return TS_OK;
  }
  if (!(c = ts_calloc(1, sizeof *c + n + 1))) return TS_ENOMEM;
  memcpy(c->key, key, n + 1);
  c->n = 1;
  if (ts_map_put(counts, c->key, n, c, NULL) != TS_OK) {
    ts_free(c);
    return TS_ENOMEM;
  }
  return TS_OK;
}

ts_rc sched_finished_workloads(const model *m, const sched_config *cfg, ts_map *by_cq,
                               ts_map *by_lq) {
  ts_map gangs;
  ts_arena a;
  model_obj *o;
  size_t it = 0;
  const ts_map_slot *s;
  ts_rc rc = TS_OK;
  ts_map_init(&gangs);
  ts_arena_init(&a, 0);
  for (size_t pit = 0; rc == TS_OK && model_next(m, MODEL_POD, &pit, &o);) {
    const model_pod *p = (const model_pod *)o;
    bool ended = p->phase == MODEL_PHASE_SUCCEEDED || p->phase == MODEL_PHASE_FAILED;
    char key[TS_KEY_MAX];
    sched_qref ref;
    fin_gang *g;
    if (p->scheduler_name != cfg->scheduler_name || !sched__queue_ref(m, p, &ref)) continue;
    sched__gang_key(m, p, key, sizeof key);
    if (!(g = ts_map_get(&gangs, key, strlen(key)))) {
      char *k = ts_arena_strndup(&a, key, strlen(key));
      if (!k || !(g = ts_arena_alloc(&a, sizeof *g)) ||
          ts_map_put(&gangs, k, strlen(k), g, NULL) != TS_OK) {
        rc = TS_ENOMEM;
        break;
      }
      memset(g, 0, sizeof *g);
    }
    if (!ended)
      g->alive = true;
    else if (!g->first)
      g->first = p;
  }
  while (rc == TS_OK && ts_map_next(&gangs, &it, &s)) {
    const fin_gang *g = s->value;
    sched_qref ref;
    const char *cq;
    char lq[TS_KEY_MAX];
    if (g->alive || !g->first || !sched__queue_ref(m, g->first, &ref)) continue;
    if (!(cq = sched__queue_cq(m, g->first->obj.ns, &ref))) continue;
    rc = bump(by_cq, cq);
    if (rc == TS_OK && ref.local_queue) {
      snprintf(lq, sizeof lq, "%s/%s", g->first->obj.ns, ref.local_queue);
      rc = bump(by_lq, lq);
    }
  }
  ts_map_free(&gangs);
  ts_arena_free(&a);
  return rc;
}
