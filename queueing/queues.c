/* queueing/queues.c - pending workloads per ClusterQueue, as Kueue's queue manager keeps them:
 * an active queue ordered by priority then queue time (then key), and a set of parked
 * ("inadmissible") workloads that wait until quota is released.
 *
 * Requeueing after a cycle follows Kueue: StrictFIFO puts every head back at once, except on
 * a namespace mismatch; BestEffortFIFO parks it, except when it failed only because of an
 * earlier admission in the same cycle, when its flavor search left flavors to try (q_memo),
 * or when it waits for its victims (then it becomes "sticky": it stays ahead of equal
 * workloads until admitted). A wake-up between the pop and the requeue puts it back too.
 *
 * The active queue is a sorted array with the head last: pop is O(1), insertion O(log n)
 * search plus a memmove. */
#include "queueing/q_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cqq {
  const char *name;            /* interned ClusterQueue name */
  bool strict;                 /* StrictFIFO */
  TS_VEC(q_workload *) active; /* queue order reversed: the head is last */
  TS_VEC(q_workload *) parked; /* inadmissible, unordered */
  const char *sticky;          /* key of the sticky workload, or NULL */
  int64_t pop_cycle;           /* pops so far */
  int64_t wake_cycle;          /* pop_cycle at the last wake-up, -1 for never */
} cqq;

struct q_queues {
  ts_map by_name;               /* ClusterQueue name -> cqq */
  TS_VEC(cqq *) list;           /* sorted by name */
  ts_map where;                 /* workload key -> cqq, or &waiting_marker */
  TS_VEC(q_workload *) waiting; /* workloads that cannot be queued yet */
  TS_VEC(q_workload *) scratch; /* q_queues_active's answer */
  TS_VEC(const char *) names;   /* q_queues_cluster_queues' answer */
  q_memo *own;                  /* flavor-search progress, owned */
  q_memo *memo;                 /* the one in use: own, or the caller's */
};

static cqq waiting_marker; /* where-value of waiting workloads */

q_queues *q_queues_new(void) {
  q_queues *qs = ts_calloc(1, sizeof *qs);
  if (!qs) return NULL;
  if (!(qs->own = q_memo_new())) {
    ts_free(qs);
    return NULL;
  }
  qs->memo = qs->own;
  ts_map_init(&qs->by_name);
  ts_map_init(&qs->where);
  return qs;
}

void q_queues_set_memo(q_queues *qs, q_memo *mm) {
  qs->memo = mm ? mm : qs->own;
}

q_memo *q__queues_memo(q_queues *qs) {
  return qs->memo;
}

bool q__queues_has(const q_queues *qs, const char *key) {
  return ts_map_get(&qs->where, key, strlen(key)) != NULL;
}

void q_queues_free(q_queues *qs) {
  if (!qs) return;
  for (size_t i = 0; i < qs->list.n; i++) {
    ts_vec_free(&qs->list.v[i]->active);
    ts_vec_free(&qs->list.v[i]->parked);
    ts_free(qs->list.v[i]);
  }
  ts_vec_free(&qs->list);
  ts_vec_free(&qs->waiting);
  ts_vec_free(&qs->scratch);
  ts_vec_free(&qs->names);
  ts_map_free(&qs->by_name);
  ts_map_free(&qs->where);
  q_memo_free(qs->own);
  ts_free(qs);
}

/* ---- ordering -------------------------------------------------------------------------- */

static bool is_sticky(const cqq *q, const q_workload *w) {
  return q->sticky && !strcmp(q->sticky, w->key);
}

/* < 0 when a is ahead of b: a gang's missing pods first, sticky, then higher priority,
 * earlier time, key. */
static int order(const cqq *q, const q_workload *a, const q_workload *b) {
  bool as = is_sticky(q, a), bs = is_sticky(q, b);
  if (a->resume != b->resume) return a->resume ? -1 : 1;
  if (as != bs) return as ? -1 : 1;
  if (a->priority != b->priority) return a->priority > b->priority ? -1 : 1;
  if (a->queue_ns != b->queue_ns) return a->queue_ns < b->queue_ns ? -1 : 1;
  return strcmp(a->key, b->key);
}

static ts_rc insert_active(cqq *q, q_workload *w) {
  size_t lo = 0, hi = q->active.n;
  ts_rc rc;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (order(q, q->active.v[mid], w) > 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if ((rc = ts_vec_reserve(&q->active, q->active.n + 1)) != TS_OK) return rc;
  memmove(q->active.v + lo + 1, q->active.v + lo, (q->active.n - lo) * sizeof *q->active.v);
  q->active.v[lo] = w;
  q->active.n++;
  return TS_OK;
}

/* Removes w from a vector of workloads; false when absent. O(n). */
static bool vec_remove(q_workload **v, size_t *n, const q_workload *w, bool keep_order) {
  for (size_t i = 0; i < *n; i++) {
    if (v[i] != w) continue;
    if (keep_order)
      memmove(v + i, v + i + 1, (*n - i - 1) * sizeof *v);
    else
      v[i] = v[*n - 1];
    (*n)--;
    return true;
  }
  return false;
}

/* Changes the sticky workload, re-placing the previous one (whose rank depended on it). */
static ts_rc set_sticky(cqq *q, const char *key) {
  q_workload *old = NULL;
  if (q->sticky == key || (q->sticky && key && !strcmp(q->sticky, key))) return TS_OK;
  if (q->sticky && q->active.n && is_sticky(q, q->active.v[q->active.n - 1]))
    old = q->active.v[--q->active.n];
  q->sticky = key;
  return old ? insert_active(q, old) : TS_OK;
}

/* ---- queues by name -------------------------------------------------------------------- */

static cqq *cqq_find(const q_queues *qs, const char *name) {
  return ts_map_get(&qs->by_name, name, strlen(name));
}

static ts_rc cqq_get(q_queues *qs, const q__cq *cq, cqq **out) {
  cqq *q = cqq_find(qs, cq->node.name);
  size_t i;
  ts_rc rc;
  if (!q) {
    if (!(q = ts_calloc(1, sizeof *q))) return TS_ENOMEM;
    q->name = cq->node.name;
    q->wake_cycle = -1;
    for (i = 0; i < qs->list.n && strcmp(qs->list.v[i]->name, q->name) < 0; i++) {
    }
    if ((rc = ts_vec_reserve(&qs->list, qs->list.n + 1)) != TS_OK ||
        (rc = ts_map_put(&qs->by_name, q->name, strlen(q->name), q, NULL)) != TS_OK) {
      ts_free(q);
      return rc;
    }
    memmove(qs->list.v + i + 1, qs->list.v + i, (qs->list.n - i) * sizeof *qs->list.v);
    qs->list.v[i] = q;
    qs->list.n++;
  }
  q->strict = cq->obj->queueing == MODEL_STRICT_FIFO;
  *out = q;
  return TS_OK;
}

/* The ClusterQueue a workload's LocalQueue points to, or why there is none. */
static q_queued resolve(const q_tree *t, const q_workload *wl, q__cq **cq) {
  char key[512];
  const q__lq *lq;
  *cq = NULL;
  if (!wl->local_queue && wl->cluster_queue) {
    if (!q_tree_has_cq(t, wl->cluster_queue, wl->queue_kind)) return Q_NO_CLUSTER_QUEUE;
    *cq = q__cq_get(t, wl->cluster_queue);
    return Q_QUEUED;
  }
  if (!wl->local_queue) return Q_NO_LOCAL_QUEUE;
  snprintf(key, sizeof key, "%s/%s", wl->ns ? wl->ns : "", wl->local_queue);
  if (!(lq = ts_map_get(&t->lq_by_key, key, strlen(key)))) return Q_NO_LOCAL_QUEUE;
  if (lq->held) return Q_HELD;
  if (!(*cq = q__cq_get(t, lq->cq))) return Q_NO_CLUSTER_QUEUE;
  return Q_QUEUED;
}

const char *q_tree_cq_of(const q_tree *t, const q_workload *wl) {
  char key[512];
  const q__lq *lq;
  if (!wl->local_queue)
    return q_tree_has_cq(t, wl->cluster_queue, wl->queue_kind) ? wl->cluster_queue : NULL;
  snprintf(key, sizeof key, "%s/%s", wl->ns ? wl->ns : "", wl->local_queue);
  lq = ts_map_get(&t->lq_by_key, key, strlen(key));
  return lq ? lq->cq : NULL;
}

static ts_rc set_where(q_queues *qs, const q_workload *wl, cqq *q) {
  return ts_map_put(&qs->where, wl->key, strlen(wl->key), q, NULL);
}

/* Queues wl as resolved in t (active in its queue, or waiting). */
static ts_rc place(q_queues *qs, const q_tree *t, q_workload *wl, q_queued *how) {
  q__cq *cq;
  cqq *q;
  ts_rc rc;
  *how = resolve(t, wl, &cq);
  if (*how != Q_QUEUED) {
    if ((rc = ts_vec_push(&qs->waiting, wl)) != TS_OK) return rc;
    return set_where(qs, wl, &waiting_marker);
  }
  if ((rc = cqq_get(qs, cq, &q)) != TS_OK || (rc = insert_active(q, wl)) != TS_OK) return rc;
  return set_where(qs, wl, q);
}

ts_rc q_queues_add(q_queues *qs, const q_tree *t, q_workload *wl, q_queued *how) {
  q_queued dummy;
  if (ts_map_get(&qs->where, wl->key, strlen(wl->key))) return TS_EEXIST;
  return place(qs, t, wl, how ? how : &dummy);
}

/* Takes wl out of wherever it is (without touching the where map). */
static void unlink_wl(q_queues *qs, cqq *q, q_workload *wl) {
  if (q == &waiting_marker) {
    vec_remove(qs->waiting.v, &qs->waiting.n, wl, true);
    return;
  }
  if (!vec_remove(q->active.v, &q->active.n, wl, true))
    vec_remove(q->parked.v, &q->parked.n, wl, false);
  if (is_sticky(q, wl)) q->sticky = NULL;
}

static q_workload *find_wl(q_queues *qs, cqq *q, const char *key) {
  q_workload **v = q == &waiting_marker ? qs->waiting.v : q->active.v;
  size_t n = q == &waiting_marker ? qs->waiting.n : q->active.n;
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v[i]->key, key)) return v[i];
  for (size_t i = 0; q != &waiting_marker && i < q->parked.n; i++)
    if (!strcmp(q->parked.v[i]->key, key)) return q->parked.v[i];
  return NULL;
}

bool q_queues_remove(q_queues *qs, const char *key) {
  cqq *q = ts_map_del(&qs->where, key, strlen(key));
  q_workload *wl;
  if (!q) return false;
  if ((wl = find_wl(qs, q, key))) unlink_wl(qs, q, wl);
  if (q != &waiting_marker && q->sticky && !strcmp(q->sticky, key)) q->sticky = NULL;
  return true;
}

/* ---- sync and wake-up ------------------------------------------------------------------ */

/* Re-places the workloads of vector v whose queue changed in t. */
static ts_rc resync_vec(q_queues *qs, const q_tree *t, cqq *q, q_workload **v, size_t *n) {
  for (size_t i = 0; i < *n;) {
    q__cq *cq;
    q_queued how = resolve(t, v[i], &cq);
    q_workload *wl = v[i];
    ts_rc rc;
    if ((how == Q_QUEUED && q != &waiting_marker && cq->node.name == q->name) ||
        (how != Q_QUEUED && q == &waiting_marker)) {
      i++;
      continue;
    }
    vec_remove(v, n, wl, true);
    if (q != &waiting_marker && is_sticky(q, wl)) q->sticky = NULL;
    if ((rc = place(qs, t, wl, &how)) != TS_OK) return rc;
  }
  return TS_OK;
}

ts_rc q_queues_sync(q_queues *qs, const q_tree *t) {
  ts_rc rc = resync_vec(qs, t, &waiting_marker, qs->waiting.v, &qs->waiting.n);
  for (size_t i = 0; rc == TS_OK && i < qs->list.n; i++) {
    cqq *q = qs->list.v[i];
    q__cq *cq = q__cq_get(t, q->name);
    if (cq) q->strict = cq->obj->queueing == MODEL_STRICT_FIFO;
    if ((rc = resync_vec(qs, t, q, q->active.v, &q->active.n)) == TS_OK)
      rc = resync_vec(qs, t, q, q->parked.v, &q->parked.n);
  }
  return rc;
}

static ts_rc wake(cqq *q) {
  ts_rc rc = TS_OK;
  while (rc == TS_OK && q->parked.n) rc = insert_active(q, q->parked.v[--q->parked.n]);
  q->wake_cycle = q->pop_cycle;
  return rc;
}

void q_queues_wake(q_queues *qs, const q_tree *t, const char *cq) {
  q__cq *c = cq ? q__cq_get(t, cq) : NULL;
  q__node *root = c ? q__root(&c->node) : NULL;
  for (size_t i = 0; i < qs->list.n; i++) {
    cqq *q = qs->list.v[i];
    q__cq *x = q__cq_get(t, q->name);
    if (cq && strcmp(q->name, cq) && !(root && x && q__root(&x->node) == root)) continue;
    (void)wake(q); /* out of memory leaves the rest parked; they are retried next time */
  }
}

/* ---- reading --------------------------------------------------------------------------- */

size_t q_queues_active(q_queues *qs, const char *cq, q_workload *const **out) {
  cqq *q = cq ? cqq_find(qs, cq) : NULL;
  *out = NULL;
  if (!q || ts_vec_reserve(&qs->scratch, q->active.n + 1) != TS_OK) return 0;
  for (size_t i = 0; i < q->active.n; i++) qs->scratch.v[i] = q->active.v[q->active.n - 1 - i];
  qs->scratch.n = q->active.n;
  *out = qs->scratch.v;
  return q->active.n;
}

static int key_cmp(const void *a, const void *b) {
  return strcmp((*(q_workload *const *)a)->key, (*(q_workload *const *)b)->key);
}

size_t q_queues_parked(q_queues *qs, const char *cq, q_workload *const **out) {
  cqq *q = cq ? cqq_find(qs, cq) : NULL;
  *out = NULL;
  if (!q) return 0;
  if (q->parked.n > 1) qsort(q->parked.v, q->parked.n, sizeof *q->parked.v, key_cmp);
  *out = q->parked.v;
  return q->parked.n;
}

size_t q_queues_cluster_queues(q_queues *qs, const char *const **out) {
  qs->names.n = 0;
  *out = NULL;
  for (size_t i = 0; i < qs->list.n; i++) {
    cqq *q = qs->list.v[i];
    if ((q->active.n || q->parked.n) && ts_vec_push(&qs->names, q->name) != TS_OK) return 0;
  }
  *out = qs->names.v;
  return qs->names.n;
}

/* ---- the cycle's side ------------------------------------------------------------------ */

ts_rc q__queues_heads(q_queues *qs, const q_tree *t, ts_arena *a, q__head **out, size_t *n) {
  q__head *h = ts_arena_alloc(a, (qs->list.n + 1) * sizeof *h);
  *n = 0;
  *out = h;
  if (!h) return TS_ENOMEM;
  for (size_t i = 0; i < qs->list.n; i++) {
    cqq *q = qs->list.v[i];
    q__cq *cq = q__cq_get(t, q->name);
    if (!cq || !cq->node.active) continue;
    q->pop_cycle++;
    if (!q->active.n) continue;
    h[(*n)++] = (q__head){q->active.v[--q->active.n], cq};
  }
  return TS_OK;
}

bool q__queues_requeue(q_queues *qs, q_workload *wl, q__requeue why, bool pending_flavors) {
  cqq *q = ts_map_get(&qs->where, wl->key, strlen(wl->key));
  bool now;
  if (!q || q == &waiting_marker) return false;
  if (q->strict)
    now = why != Q__RQ_NS_MISMATCH && why != Q__RQ_ERROR;
  else
    now = why == Q__RQ_FAILED_AFTER_NOMINATION || why == Q__RQ_PENDING_PREEMPTION;
  now = now || pending_flavors; /* Kueue: flavors left to try are tried in the next cycle */
  if (!q->strict && why == Q__RQ_PENDING_PREEMPTION)
    (void)set_sticky(q, wl->key);
  else if (is_sticky(q, wl))
    q->sticky = NULL;
  if (now || q->wake_cycle >= q->pop_cycle) {
    if (insert_active(q, wl) == TS_OK) return false;
  }
  if (ts_vec_push(&q->parked, wl) != TS_OK) {
    (void)ts_map_del(&qs->where, wl->key, strlen(wl->key)); /* lost: out of memory */
    return false;
  }
  return true;
}

void q__queues_done(q_queues *qs, q_workload *wl) {
  cqq *q = ts_map_del(&qs->where, wl->key, strlen(wl->key));
  if (q && q != &waiting_marker && is_sticky(q, wl)) q->sticky = NULL;
}
