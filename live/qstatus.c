/* live/qstatus.c - ClusterQueue and LocalQueue status, as Kueue writes it: a queue's status
 * is written after a cycle when it changed and its last write is at least the interval old. */
#include "live/live_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One queue's report, as this loop compares it with what it wrote. */
typedef struct live_queue_status {
  const q_cq_report *cq;            /* a ClusterQueue's, or NULL */
  const q_lq_report *lq;            /* a LocalQueue's, or NULL */
  const model_resources *resources; /* names and formats of the report's resource ids */
  int64_t transition_ns;            /* when its Active condition last changed, as this loop saw */
  bool fair_sharing;                /* fair sharing is on: write fairSharing.weightedShare */
} live_queue_status;

/* Frees the status memory; one with a write in flight is freed when the write ends. */
void live__free_qstatus(live *l) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&l->qstatus, &it, &s)) {
    qstat *q = s->value;
    if (q->inflight)
      q->gone = true;
    else
      ts_free(q);
  }
  ts_map_free(&l->qstatus);
}

/* ---- queue status --------------------------------------------------------------------- */

void live_set_queue_status(live *l, int64_t interval_ns) {
  l->qstatus_ns = interval_ns;
}

void live_queue_status_reset(live *l) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&l->qstatus, &it, &s)) {
    qstat *q = s->value;
    q->written = 0, q->sent = false;
    q->reset = q->inflight; /* an answer of the old term does not count */
  }
}

static uint64_t mix(uint64_t h, const void *p, size_t n) {
  return (h ^ ts_hash(p, n)) * 0x9e3779b97f4a7c15ULL + 1;
}

/* A hash of what a status write would say (interned names hash by address: stable). */
static uint64_t hash_frs(uint64_t h, const q_fr_report *x, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    int64_t v[3] = {x[i].resource, x[i].usage, x[i].borrowed};
    h = mix(h, &x[i].flavor, sizeof x[i].flavor);
    h = mix(h, v, sizeof v);
  }
  return h;
}

static uint64_t hash_status(const live_queue_status *st, bool active) {
  uint64_t h = mix(0, &active, sizeof active);
  if (st->cq) {
    const q_cq_report *c = st->cq;
    uint32_t v[3] = {c->pending_active, c->pending_inadmissible, c->admitted};
    int64_t share = isinf(c->weighted_share) ? INT64_MAX : (int64_t)ceil(c->weighted_share);
    h = mix(h, v, sizeof v);
    h = mix(h, &c->generation, sizeof c->generation);
    h = mix(h, &c->inactive, sizeof c->inactive); /* static strings */
    if (c->problem) h = mix(h, c->problem, strlen(c->problem));
    if (st->fair_sharing) h = mix(h, &share, sizeof share);
    h = hash_frs(h, c->frs, c->nfrs);
  } else {
    const q_lq_report *q = st->lq;
    uint32_t v[3] = {q->pending_active, q->pending_inadmissible, q->admitted};
    h = mix(h, v, sizeof v);
    h = mix(h, &q->generation, sizeof q->generation);
    h = mix(h, &q->inactive, sizeof q->inactive);
    h = hash_frs(h, q->frs, q->nfrs);
  }
  return h ? h : 1; /* 0 means "nothing written" */
}

/* The report as Kueue's status (model/wire.h), to the writer; out of memory, it fails as a
 * write would. */
static void write_status(live *l, qstat *q, const live_queue_status *st) {
  const q_fr_report *frs = st->cq ? st->cq->frs : st->lq->frs;
  uint32_t n = st->cq ? st->cq->nfrs : st->lq->nfrs;
  model_flavor_usage *u = n ? ts_calloc(n, sizeof *u) : NULL;
  model_queue_status m = {.transition_ns = st->transition_ns, .frs = u, .nfrs = n};
  if (n && !u) {
    live_queue_status_done(q, TS_ENOMEM);
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    u[i].flavor = frs[i].flavor;
    u[i].resource = model_resource_name(st->resources, frs[i].resource);
    q_format(st->resources, frs[i].resource, frs[i].usage, u[i].total);
    q_format(st->resources, frs[i].resource, frs[i].borrowed, u[i].borrowed);
  }
  if (st->cq) {
    m.cluster_queue = true, m.name = st->cq->name;
    m.pending = st->cq->pending_active + st->cq->pending_inadmissible;
    m.admitted = st->cq->admitted;
    m.inactive = st->cq->inactive, m.problem = st->cq->problem;
    m.generation = st->cq->generation;
    m.fair_sharing = st->fair_sharing, m.weighted_share = st->cq->weighted_share;
  } else {
    m.ns = st->lq->ns, m.name = st->lq->name;
    m.pending = st->lq->pending_active + st->lq->pending_inadmissible;
    m.admitted = st->lq->admitted, m.inactive = st->lq->inactive;
    m.generation = st->lq->generation;
  }
  l->w.queue_status(l->w.ud, q, &m);
  ts_free(u);
}

/* A queue seen in this cycle's report: its status is written when it changed and its last
 * write is at least the interval old. */
static void queue_seen(live *l, const char *key, live_queue_status *st, bool active,
                       int64_t now_ns) {
  qstat *q = ts_map_get(&l->qstatus, key, strlen(key));
  uint64_t h;
  if (!q) {
    size_t n = strlen(key);
    if (!(q = ts_calloc(1, sizeof *q + n + 1))) return;
    memcpy(q->key, key, n + 1);
    q->active = active, q->transition_ns = now_ns;
    if (ts_map_put(&l->qstatus, q->key, n, q, NULL) != TS_OK) {
      ts_free(q);
      return;
    }
  }
  q->seen = l->st.cycles;
  if (q->active != active) q->active = active, q->transition_ns = now_ns;
  st->transition_ns = q->transition_ns;
  h = hash_status(st, active);
  if (q->inflight || h == q->written || (q->sent && now_ns - q->sent_ns < l->qstatus_ns)) return;
  q->inflight = true, q->sending = h, q->sent_ns = now_ns, q->sent = true;
  l->st.queue_status++;
  write_status(l, q, st);
}

void live_queue_status_done(void *token, ts_rc r) {
  qstat *q = token;
  q->inflight = false;
  if (q->gone) {
    ts_free(q);
    return;
  }
  if (r == TS_OK && !q->reset) q->written = q->sending; /* else tried again after the interval */
  q->reset = false;
}

/* Writes the status of the queues that changed; forgets the queues that are gone. */
void live__write_queue_status(live *l, const sched_result *res, int64_t now_ns) {
  const q_report *r = &res->queues;
  char key[TS_KEY_MAX + 32];
  TS_VEC(qstat *) gone = {0};
  size_t it = 0;
  const ts_map_slot *s;
  if (l->qstatus_ns < 0 || !l->w.queue_status) return;
  for (size_t i = 0; i < r->ncqs; i++) {
    if (r->cqs[i].kind != MODEL_CLUSTER_QUEUE) continue; /* Volcano's and KAI's have their own */
    live_queue_status st = {.cq = &r->cqs[i],
                            .resources = model_resources_of(l->m),
                            .fair_sharing = l->cfg->queueing.fair_sharing};
    snprintf(key, sizeof key, "ClusterQueue %s", r->cqs[i].name);
    queue_seen(l, key, &st, !r->cqs[i].inactive, now_ns);
  }
  for (size_t i = 0; i < r->nlqs; i++) {
    live_queue_status st = {.lq = &r->lqs[i], .resources = model_resources_of(l->m)};
    snprintf(key, sizeof key, "LocalQueue %s/%s", r->lqs[i].ns, r->lqs[i].name);
    queue_seen(l, key, &st, !r->lqs[i].inactive, now_ns);
  }
  while (ts_map_next(&l->qstatus, &it, &s))
    if (((qstat *)s->value)->seen != l->st.cycles) (void)ts_vec_push(&gone, s->value);
  for (size_t i = 0; i < gone.n; i++) {
    ts_map_del(&l->qstatus, gone.v[i]->key, strlen(gone.v[i]->key));
    if (gone.v[i]->inflight)
      gone.v[i]->gone = true;
    else
      ts_free(gone.v[i]);
  }
  ts_vec_free(&gone);
}
