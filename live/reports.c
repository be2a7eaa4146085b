/* live/reports.c - PodScheduled=False reports of pending pods: one per pod and distinct
 * message, written after the cycle's other writes have answered. */
#include "live/live_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PodScheduled=False once per distinct message. */
/* True when two messages differ at most in their numbers ("0/12 nodes are available: 5
 * Insufficient cpu" and "0/12 nodes are available: 7 Insufficient cpu"). */
static bool same_but_counts(const char *a, const char *b) {
  while (*a && *b) {
    bool da = *a >= '0' && *a <= '9', db = *b >= '0' && *b <= '9';
    if (da != db) return false;
    if (da) {
      while (*a >= '0' && *a <= '9') a++;
      while (*b >= '0' && *b <= '9') b++;
      continue;
    }
    if (*a++ != *b++) return false;
  }
  return *a == *b;
}

#define COUNTS_REFRESH_NS (60 * 1000000000LL)   /* a message whose counts alone changed */
#define PLACES_EVERY_NS   (60 * 1000000000LL)   /* places worked out this often, */
#define PLACES_NEW_NS     (5 * 1000000000LL)    /* or this often when a pod waits unreported */
#define ESTIMATE_EVERY_NS (15 * 1000000000LL)   /* the forward run at most this often */
#define PLACES_REFRESH_NS (300 * 1000000000LL)  /* a message whose place alone changed */
#define MOVED_NS          (1800 * 1000000000LL) /* an estimate that moved at least this much */

/* The pods' places in their queues at one cycle: the explainer of its result, and how many
 * workloads wait per queue (key "c<cq>" or "l<ns>/<lq>", keys in the arena). */
struct live_places {
  sched_explainer *x;
  ts_map n;
  ts_arena keys;
  const ts_map *starts; /* the last estimate's (l->starts) */
  int64_t now_ns;       /* the cycle's clock */
};

static void started(void *sud, const model_pod *p, int64_t at_ns) {
  live *l = sud;
  int64_t *at;
  if (!p->obj.uid || !*p->obj.uid || !(at = ts_malloc(sizeof *at))) return;
  *at = at_ns;
  if (live__oput(&l->starts, p->obj.uid, at, NULL) != TS_OK) ts_free(at);
}

/* When the last estimate starts p, or NULL. */
static const int64_t *start_of(const live_places *c, const model_pod *p) {
  return p->obj.uid && *p->obj.uid ? live__oget(c->starts, p->obj.uid) : NULL;
}

static const char *count_key(char kind, const char *a, const char *b, char *buf, size_t cap) {
  snprintf(buf, cap, "%c%s%s%s", kind, a, b ? "/" : "", b ? b : "");
  return buf;
}

static unsigned long count_of(const live_places *c, const char *key) {
  const unsigned long *n = ts_map_get(&c->n, key, strlen(key));
  return n ? *n : 0;
}

/* One more for key (the map borrows a copy of it, made once, with the count beside it). */
static bool count_add(live_places *c, const char *key) {
  unsigned long *n = ts_map_get(&c->n, key, strlen(key));
  const char *k;
  if (n) return ++*n, true;
  if (!(n = ts_arena_alloc(&c->keys, sizeof *n)) ||
      !(k = ts_arena_strndup(&c->keys, key, strlen(key))))
    return false;
  *n = 1;
  return ts_map_put(&c->n, k, strlen(k), n, NULL) == TS_OK;
}

void live__places_free(live_places *c) {
  if (!c) return;
  sched_explainer_free(c->x);
  ts_map_free(&c->n);
  ts_arena_free(&c->keys);
  ts_free(c);
}

/* ---- run times of finished pods ------------------------------------------------------ */

#define HISTORY_RUNS 16   /* run times kept per queue and shape, the latest */
#define HISTORY_KEYS 4096 /* queues and shapes kept */

typedef struct run_history {
  uint32_t n, next;         /* kept, and the slot the next replaces */
  int64_t ns[HISTORY_RUNS]; /* run times */
} run_history;

/* "cq:NAME|HASH" (else "ns:NAME|HASH"): p's ClusterQueue (or namespace) and requests. */
static void history_key(const live *l, const model_pod *p, char *out, size_t cap) {
  const char *cq = sched_pod_queue(l->m, p);
  uint64_t h = ts_hash(p->requests.v, p->requests.n * sizeof *p->requests.v);
  snprintf(out, cap, "%s:%s|%016llx", cq ? "cq" : "ns", cq ? cq : p->obj.ns, (unsigned long long)h);
}

void live__record_run(live *l, const model_pod *p) {
  char key[512];
  run_history *h;
  if (!p || p->phase != MODEL_PHASE_SUCCEEDED || p->scheduler_name != l->cfg->scheduler_name ||
      !p->start_ns || p->finished_ns <= p->start_ns)
    return;
  history_key(l, p, key, sizeof key);
  if (!(h = live__oget(&l->history, key))) {
    if (l->history.count >= HISTORY_KEYS || !(h = ts_calloc(1, sizeof *h))) return;
    if (live__oput(&l->history, key, h, NULL) != TS_OK) {
      ts_free(h);
      return;
    }
  }
  h->ns[h->next] = p->finished_ns - p->start_ns;
  h->next = (h->next + 1) % HISTORY_RUNS;
  if (h->n < HISTORY_RUNS) h->n++;
}

static int i64_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

int64_t live_history_duration(const live *l, const model_pod *p) {
  char key[512];
  const run_history *h;
  int64_t v[HISTORY_RUNS];
  history_key(l, p, key, sizeof key);
  if (!(h = live__oget(&l->history, key)) || !h->n) return -1;
  memcpy(v, h->ns, h->n * sizeof *v);
  qsort(v, h->n, sizeof *v, i64_cmp);
  return v[(h->n - 1) / 2]; /* the lower median */
}

typedef struct wl_wait {
  const char *cq; /* interned ClusterQueue */
  double wait;    /* seconds, or -1 without an estimate */
} wl_wait;

/* By ClusterQueue (address), then the estimated ones by wait, the others last. */
static int wl_wait_cmp(const void *a, const void *b) {
  const wl_wait *x = a, *y = b;
  if (x->cq != y->cq) return (uintptr_t)x->cq < (uintptr_t)y->cq ? -1 : 1;
  if ((x->wait < 0) != (y->wait < 0)) return x->wait < 0 ? 1 : -1;
  return x->wait < y->wait ? -1 : x->wait > y->wait;
}

/* Per ClusterQueue, the estimated waits of its waiting workloads (their first pending member's
 * start), for the metrics. */
static void queue_waits(live *l, const live_places *c) {
  size_t it = 0, nq = 0, nw = 0;
  sched_waiting o;
  qmetrics_wait *q;
  wl_wait *all;
  while (sched_explainer_next(c->x, &it, &o)) nw++;
  all = ts_calloc(nw + 1, sizeof *all);
  q = ts_calloc(nw + 1, sizeof *q);
  if (!all || !q) goto out;
  for (it = 0, nw = 0; sched_explainer_next(c->x, &it, &o);) {
    const int64_t *at = start_of(c, o.first);
    if (o.cluster_queue)
      all[nw++] = (wl_wait){o.cluster_queue, at ? (double)(*at - c->now_ns) / 1e9 : -1};
  }
  qsort(all, nw, sizeof *all, wl_wait_cmp); /* each queue's waits together, sorted */
  for (size_t i = 0, end; i < nw; i = end) {
    qmetrics_wait *w = &q[nq++];
    size_t n;
    for (end = i; end < nw && all[end].cq == all[i].cq; end++) {
    }
    for (n = 0; i + n < end && all[i + n].wait >= 0; n++) {
    }
    w->cluster_queue = all[i].cq, w->waiting = (uint32_t)(end - i), w->estimated = (uint32_t)n;
    if (n) { /* nearest rank over the estimated ones, all[i .. i + n) */
      w->p50 = all[i + (size_t)ceil(0.5 * (double)n) - 1].wait;
      w->p90 = all[i + (size_t)ceil(0.9 * (double)n) - 1].wait;
    }
  }
  qmetrics_waits(l->qm, q, nq);
out:
  ts_free(all), ts_free(q);
}

live_places *live__places(live *l, const sched_result *res, int64_t now_ns) {
  live_places *c;
  sched_waiting o;
  size_t it = 0;
  char key[700];
  bool ok = true;
  if (!res->npending || (l->places_ns && now_ns - l->places_ns < PLACES_NEW_NS)) return NULL;
  if (l->places_ns && now_ns - l->places_ns < PLACES_EVERY_NS) { /* unless a pod is new */
    bool fresh = l->places_owed;
    for (size_t i = 0; !fresh && i < res->ndecisions; i++) {
      const char *uid = res->decisions[i].pod->obj.uid;
      fresh =
          res->decisions[i].kind == SCHED_PENDING && uid && *uid && !live__oget(&l->reported, uid);
    }
    if (!fresh) return NULL;
  }
  if (!(c = ts_calloc(1, sizeof *c))) return NULL;
  ts_map_init(&c->n);
  ts_arena_init(&c->keys, 16 * 1024);
  c->now_ns = now_ns, c->starts = &l->starts;
  if (sched_explainer_new(l->m, l->cfg, res, now_ns, &c->x) != TS_OK) ok = false;
  while (ok && sched_explainer_next(c->x, &it, &o)) { /* each waiting workload, per queue */
    if (o.cluster_queue) ok = count_add(c, count_key('c', o.cluster_queue, NULL, key, sizeof key));
    if (ok && o.local_queue)
      ok = count_add(c, count_key('l', o.ns, o.local_queue, key, sizeof key));
  }
  if (!ok) {
    live__places_free(c);
    return NULL;
  }
  /* the estimate runs the model forward and gives it back (bounded by the estimator), at
   * most every 15 s: the refreshes between, for new pods, keep its starts */
  if (l->estimate && (!l->estimate_ns || now_ns - l->estimate_ns >= ESTIMATE_EVERY_NS)) {
    live__oclear(&l->starts, ts_free);
    if (l->estimate(l->estimate_ud, l->m, l->cfg, now_ns, started, l) != TS_OK)
      live__oclear(&l->starts, ts_free); /* no estimate this time */
    l->estimate_ns = now_ns;
    queue_waits(l, c);
    l->places_ns = now_ns, l->places_owed = false;
  } else {
    /* the new pods' estimates come with the refresh after the next forward run is due */
    l->places_ns = now_ns, l->places_owed = l->estimate != NULL;
  }
  return c;
}

/* The pod's place in its queues, " Place in queue: 3 of 12 in ClusterQueue team-a (2 of 5 in
 * LocalQueue team-a/main).", into out (after a full stop when the reason has none: dot);
 * "" when it waits in none. */
static void place_text(const live_places *c, const model_pod *p, bool dot, char *out, size_t cap,
                       int64_t *start_ns) {
  sched_waiting w;
  char key[700];
  int n;
  *out = '\0';
  *start_ns = -1;
  if (!sched_explainer_waiting(c->x, p, &w) || !w.cluster_queue || w.pos_cq < 0) return;
  n = snprintf(out, cap, "%s Place in queue: %d of %lu in ClusterQueue %s", dot ? "." : "",
               w.pos_cq + 1, count_of(c, count_key('c', w.cluster_queue, NULL, key, sizeof key)),
               w.cluster_queue);
  if (n > 0 && (size_t)n < cap && w.local_queue && w.pos_lq >= 0)
    n += snprintf(out + n, cap - (size_t)n, " (%d of %lu in LocalQueue %s/%s)", w.pos_lq + 1,
                  count_of(c, count_key('l', w.ns, w.local_queue, key, sizeof key)), w.ns,
                  w.local_queue);
  if (n > 0 && (size_t)n + 1 < cap) out[n++] = '.', out[n] = '\0';
  {
    const int64_t *at = start_of(c, p);
    int64_t m = at ? (*at - c->now_ns) / (60 * 1000000000LL) : 0; /* minutes */
    if (!at || n <= 0 || (size_t)n >= cap) return;
    *start_ns = *at;
    if (m < 10)
      snprintf(out + n, cap - (size_t)n, " Estimated start: within 10 minutes.");
    else if (m < 120)
      snprintf(out + n, cap - (size_t)n, " Estimated start: in about %lld minutes.",
               (long long)((m + 5) / 10 * 10));
    else if (m < 48 * 60)
      snprintf(out + n, cap - (size_t)n, " Estimated start: in about %lld hours.",
               (long long)((m + 30) / 60));
    else
      snprintf(out + n, cap - (size_t)n, " Estimated start: in about %lld days.",
               (long long)((m + 720) / 1440));
  }
}

/* Reason parts a and b (la, lb bytes) differ at most in their numbers. */
static bool reasons_alike(const char *a, size_t la, const char *b, size_t lb) {
  char *x = ts_malloc(la + 1);
  bool same;
  if (!x) return false;
  memcpy(x, a, la), x[la] = '\0';
  same = lb == strlen(b) && same_but_counts(x, b);
  ts_free(x);
  return same;
}

/* Queues the report of a pending pod when its message is new: the cycle's reason, then its place
 * in its queues. One per pod and reason; a reason whose node counts alone changed at most once
 * a minute (pods placed elsewhere move the counts of every pending pod, and the why is what
 * matters); a place alone at most every 5 minutes and without an Event (every admission ahead
 * moves the place of every workload behind). */
void live__report_pending(live *l, const live_places *c, const sched_decision *d, int64_t now_ns) {
  const char *uid = d->pod->obj.uid;
  const report_memo *last;
  report_memo *memo;
  char *block, place[1200];
  void *old;
  size_t ns = strlen(d->pod->obj.ns), name = strlen(d->pod->obj.name), u, rlen, plen;
  int64_t start = -1;
  bool event = true;
  if (!uid || !*uid) return;
  last = live__oget(&l->reported, uid);
  rlen = strlen(d->reason);
  if (c) {
    place_text(c, d->pod, rlen && d->reason[rlen - 1] != '.', place, sizeof place, &start);
  } else if (last) { /* between the cycles that work places out, the last one stands */
    ts_strlcpy(place, last->text + last->reason_len, sizeof place);
    start = last->start_ns;
  } else { /* first reported between them: its place comes within PLACES_NEW_NS */
    place[0] = '\0';
    l->places_owed = true;
  }
  plen = strlen(place);
  if (last && last->reason_len == rlen && !memcmp(last->text, d->reason, rlen)) {
    if (!strcmp(last->text + rlen, place)) return;
    /* a first place is written at once; an estimate that moved much too, with an Event (by
     * more than half the wait it gave, and more than 30 minutes) */
    int64_t moved = start - last->start_ns, ahead = last->start_ns - now_ns;
    bool much = start >= 0 && last->start_ns >= 0 && (moved < 0 ? -moved : moved) > MOVED_NS &&
                (moved < 0 ? -moved : moved) > ahead / 2;
    if (!much && last->text[rlen] && !(last->start_ns < 0 && start >= 0) &&
        now_ns - last->at_ns < PLACES_REFRESH_NS)
      return; /* (a first estimate is written at once too) */
    event = much;
  } else if (last && reasons_alike(last->text, last->reason_len, d->reason, rlen) &&
             now_ns - last->at_ns < COUNTS_REFRESH_NS) {
    return;
  }
  u = strlen(uid);
  if (!(block = ts_malloc(ns + name + u + 3))) return;
  if (!(memo = ts_malloc(sizeof *memo + rlen + plen + 1)) ||
      live__oput(&l->reported, uid, memo, &old) != TS_OK) {
    ts_free(memo);
    ts_free(block);
    return;
  }
  memo->at_ns = now_ns;
  memo->reason_len = rlen;
  memo->start_ns = start;
  memcpy(memo->text, d->reason, rlen);
  memcpy(memo->text + rlen, place, plen + 1);
  ts_free(old);
  memcpy(block, d->pod->obj.ns, ns + 1);
  memcpy(block + ns + 1, d->pod->obj.name, name + 1);
  memcpy(block + ns + name + 2, uid, u + 1);
  if (ts_vec_push(&l->reports, ((pend_report){sched_pending_why_name(d->why), memo->text, event,
                                              block, block + ns + 1, block + ns + name + 2})) !=
      TS_OK) {
    ts_free(block);
    return;
  }
}

/* Writes the queued reports. They wait for the cycle's other writes (bindings, claims,
 * evictions) to answer: writes are served in the order they are made and share the server,
 * and a pod that can start matters more than a message about one that cannot. A report whose
 * pod was deleted meanwhile is dropped. */
void live__send_reports(live *l) {
  if (l->sending) return;
  l->sending = true;
  while (l->reports_next < l->reports.n && l->reports_inflight < LIVE_REPORTS_INFLIGHT) {
    pend_report *p = &l->reports.v[l->reports_next++];
    const report_memo *m = live__oget(&l->reported, p->uid);
    if (m && m->text == p->reason) {
      l->st.unschedulable++;
      l->reports_inflight++;
      l->w.unschedulable(l->w.ud, l, p->ns, p->name, p->uid, p->why, p->reason, p->event);
    }
    ts_free(p->ns);
    p->ns = NULL;
  }
  if (l->reports_next == l->reports.n) l->reports.n = l->reports_next = 0;
  l->sending = false;
}

void live_report_done(void *token) {
  live *l = token;
  if (l->reports_inflight) l->reports_inflight--;
  if (!live_busy(l)) live__send_reports(l);
}
