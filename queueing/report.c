/* queueing/report.c - what the queues hold, per ClusterQueue and LocalQueue: the numbers
 * Kueue writes in their status and exports as metrics (pending active / inadmissible,
 * workloads holding quota, usage against nominal quota and limits, the weighted share). */
#include "queueing/q_int.h"

#include <stdlib.h>
#include <string.h>

/* A LocalQueue's key in the index: its two interned names, side by side. */
typedef struct lq_key {
  const char *ns, *name;
} lq_key;

static q_lq_report *lq_find(const ts_map *index, q_lq_report *lqs, const char *ns,
                            const char *name) {
  lq_key k = {ns, name};
  void *v = ts_map_get(index, (const char *)&k, sizeof k);
  return v ? &lqs[(uintptr_t)v - 1] : NULL;
}

static int lq_cmp(const void *a, const void *b) {
  const q_lq_report *x = a, *y = b;
  int c = strcmp(x->ns, y->ns);
  return c ? c : strcmp(x->name, y->name);
}

static int cq_cmp(const void *a, const void *b) {
  return strcmp(((const q_cq_report *)a)->name, ((const q_cq_report *)b)->name);
}

/* The root of n's tree, NULL when n has no cohort above it and is a queue. */
static const char *root_of(const q__node *n) {
  if (n->is_cq && !n->parent) return NULL;
  while (n->parent) n = n->parent;
  return n->name;
}

static ts_rc cq_report(const q_tree *t, const q__cq *cq, ts_arena *a, q_cq_report *out) {
  uint32_t n = 0;
  out->name = cq->node.name;
  out->cohort = cq->obj ? cq->obj->cohort : NULL; /* Volcano's, KAI's: their parent or root */
  out->root = out->cohort ? root_of(&cq->node) : NULL;
  out->generation = cq->obj ? cq->obj->obj.generation : 0;
  out->kind = cq->obj ? cq->obj->obj.kind : MODEL_CLUSTER_QUEUE;
  out->admitted = (uint32_t)cq->adm.n;
  out->weighted_share = q_tree_share(t, cq->node.name);
  out->inactive = cq->node.active ? NULL : cq->inactive;
  out->problem = NULL; /* copied: the tree's problems go with the tree */
  if (!cq->node.active && cq->problem &&
      !(out->problem = ts_arena_strndup(a, cq->problem, strlen(cq->problem))))
    return TS_ENOMEM;
  for (uint32_t g = 0; g < cq->ngroups; g++) n += cq->groups[g].nflavors * cq->groups[g].nres;
  if (!(out->frs = ts_arena_alloc(a, (n + 1) * sizeof *out->frs))) return TS_ENOMEM;
  for (uint32_t g = 0; g < cq->ngroups; g++)
    for (uint32_t f = 0; f < cq->groups[g].nflavors; f++)
      for (uint32_t r = 0; r < cq->groups[g].nres; r++) {
        int res = cq->groups[g].res[r];
        uint32_t fr = q__fr(t, cq->groups[g].flavors[f], res);
        q_fr_report *x = &out->frs[out->nfrs++];
        memset(x, 0, sizeof *x);
        x->flavor = t->fname[cq->groups[g].flavors[f]];
        x->resource = res;
        x->usage = cq->node.usage[fr];
        x->nominal = cq->node.nominal[fr];
        x->borrowed = x->usage > x->nominal ? x->usage - x->nominal : 0;
        x->has_borrowing_limit = cq->node.blimit[fr] != Q__NONE;
        x->borrowing_limit = x->has_borrowing_limit ? cq->node.blimit[fr] : 0;
        x->has_lending_limit = cq->node.llimit[fr] != Q__NONE;
        x->lending_limit = x->has_lending_limit ? cq->node.llimit[fr] : 0;
      }
  return TS_OK;
}

/* Adds an admitted workload's usage to its LocalQueue's flavor-resources (sums[lq * nfr]). */
static void lq_charge(const q__adm *r, int64_t *sums) {
  for (uint32_t i = 0; i < r->nuse; i++) sums[r->fr[i]] += r->amount[i];
}

/* The LocalQueues' flavor-resources: those their workloads use, in FR order. */
static ts_rc lq_frs(const q_tree *t, ts_arena *a, q_lq_report *lq, const int64_t *sums) {
  uint32_t n = 0;
  for (uint32_t fr = 0; fr < t->nfr; fr++) n += sums[fr] != 0;
  if (!(lq->frs = ts_arena_alloc(a, (n + 1) * sizeof *lq->frs))) return TS_ENOMEM;
  for (uint32_t fr = 0; fr < t->nfr; fr++) {
    q_fr_report *x;
    if (!sums[fr]) continue;
    x = &lq->frs[lq->nfrs++];
    memset(x, 0, sizeof *x);
    x->flavor = t->fname[q__fr_flavor(t, fr)];
    x->resource = q__fr_res(t, fr);
    x->usage = sums[fr];
  }
  return TS_OK;
}

/* Kueue's order: a stopped LocalQueue says so first. */
static const char *lq_inactive(const q_tree *t, const model_local_queue *lq) {
  const q__cq *cq = q__cq_get(t, lq->cluster_queue);
  if (lq->stop_policy != MODEL_STOP_NONE) return "Stopped";
  if (!cq) return "ClusterQueueDoesNotExist";
  if (!cq->node.active) return "ClusterQueueIsInactive";
  return NULL;
}

/* Adds what a pending workload requests (every pod of every pod set) to res[slot]. */
static void add_requests(const q_tree *t, const q_workload *w, int64_t *res) {
  for (uint32_t p = 0; p < w->npodsets; p++)
    for (uint32_t r = 0; r < w->podsets[p].nrequests; r++) {
      int slot = q__slot(t, w->podsets[p].requests[r].id);
      if (slot >= 0)
        res[slot] = ts_add_sat(
            res[slot], ts_mul_sat(w->podsets[p].requests[r].v, (int64_t)w->podsets[p].count));
    }
}

/* A ClusterQueue's pending requests: the resources its groups cover (0 included), then the
 * other covered resources its workloads request. res: [t->nres] sums by slot. */
static ts_rc pending_res(const q_tree *t, const q__cq *cq, const int64_t *res, ts_arena *a,
                         q_cq_report *out) {
  uint8_t *own = ts_arena_alloc(a, t->nres + 1);
  if (!own || !(out->pending_res = ts_arena_alloc(a, (t->nres + 1) * sizeof *out->pending_res)))
    return TS_ENOMEM;
  memset(own, 0, t->nres + 1);
  for (uint32_t g = 0; g < cq->ngroups; g++)
    for (uint32_t r = 0; r < cq->groups[g].nres; r++) {
      int slot = q__slot(t, cq->groups[g].res[r]);
      if (slot < 0 || own[slot]) continue;
      own[slot] = 1;
      out->pending_res[out->npending_res++] = (q_res_amount){cq->groups[g].res[r], res[slot]};
    }
  for (uint32_t s = 0; s < t->nres; s++)
    if (!own[s] && res[s])
      out->pending_res[out->npending_res++] = (q_res_amount){t->res_id[s], res[s]};
  return TS_OK;
}

/* Pending workloads of every ClusterQueue, into their queue's and LocalQueue's counts and the
 * queue's pending requests. An inactive queue's active workloads count as inadmissible, as
 * Kueue counts them. */
static ts_rc count_pending(const q_tree *t, q_queues *qs, q_cq_report *cqs, size_t ncqs,
                           const ts_map *index, q_lq_report *lqs, ts_arena *a) {
  int64_t *res = ts_calloc(t->nres + 1, sizeof *res);
  ts_rc rc = TS_OK;
  if (!res) return TS_ENOMEM;
  for (size_t i = 0; rc == TS_OK && i < ncqs; i++) {
    const q__cq *cq = q__cq_get(t, cqs[i].name);
    bool inactive = cqs[i].inactive != NULL;
    for (int parked = 0; parked < 2; parked++) {
      q_workload *const *w;
      size_t n =
          parked ? q_queues_parked(qs, cqs[i].name, &w) : q_queues_active(qs, cqs[i].name, &w);
      if (parked || inactive)
        cqs[i].pending_inadmissible += (uint32_t)n;
      else
        cqs[i].pending_active += (uint32_t)n;
      for (size_t k = 0; k < n; k++) {
        q_lq_report *lq = lq_find(index, lqs, w[k]->ns, w[k]->local_queue);
        add_requests(t, w[k], res);
        if (!lq) continue;
        if (parked || inactive)
          lq->pending_inadmissible++;
        else
          lq->pending_active++;
      }
    }
    if (cq) rc = pending_res(t, cq, res, a, &cqs[i]);
    memset(res, 0, (t->nres + 1) * sizeof *res);
  }
  ts_free(res);
  return rc;
}

/* Every cohort: its place in its tree, its share, and what the queues under it hold. */
static ts_rc cohort_reports(const q_tree *t, ts_arena *a, q_report *out) {
  int64_t *resv =
      t->ncohorts && t->nfr ? ts_calloc((size_t)t->ncohorts * t->nfr, sizeof *resv) : NULL;
  ts_rc rc = TS_OK;
  if (t->ncohorts && t->nfr && !resv) return TS_ENOMEM;
  if (!(out->cohorts = ts_arena_alloc(a, (t->ncohorts + 1) * sizeof *out->cohorts))) {
    ts_free(resv);
    return TS_ENOMEM;
  }
  out->ncohorts = t->ncohorts;
  for (uint32_t c = 0; c < t->ncohorts; c++) {
    const q__node *n = t->cohorts[c];
    q_cohort_report *r = &out->cohorts[c];
    memset(r, 0, sizeof *r);
    r->name = n->name;
    r->parent = n->parent ? n->parent->name : NULL;
    r->root = root_of(n);
    r->weighted_share = q__drs_value(q__share(t, n));
  }
  for (uint32_t i = 0; i < t->ncqs; i++) /* each queue's reservations, up its chain */
    for (const q__node *p = t->cqs[i]->node.parent; p; p = p->parent) {
      out->cohorts[p->index].admitted += (uint32_t)t->cqs[i]->adm.n;
      for (uint32_t fr = 0; fr < t->nfr; fr++)
        resv[(size_t)p->index * t->nfr + fr] =
            ts_add_sat(resv[(size_t)p->index * t->nfr + fr], t->cqs[i]->node.usage[fr]);
    }
  for (uint32_t c = 0; rc == TS_OK && c < t->ncohorts; c++) {
    const q__node *n = t->cohorts[c];
    const int64_t *rs = resv ? resv + (size_t)c * t->nfr : NULL;
    q_cohort_report *r = &out->cohorts[c];
    uint32_t k = 0;
    for (uint32_t fr = 0; fr < t->nfr; fr++) k += n->subtree[fr] > 0 || rs[fr] > 0;
    if (!(r->frs = ts_arena_alloc(a, (k + 1) * sizeof *r->frs))) {
      rc = TS_ENOMEM;
      break;
    }
    for (uint32_t fr = 0; fr < t->nfr; fr++) {
      q_fr_report *x;
      if (n->subtree[fr] <= 0 && rs[fr] <= 0) continue;
      x = &r->frs[r->nfrs++];
      memset(x, 0, sizeof *x);
      x->flavor = t->fname[q__fr_flavor(t, fr)];
      x->resource = q__fr_res(t, fr);
      x->nominal = n->subtree[fr] > 0 ? n->subtree[fr] : 0;
      x->usage = rs[fr] > 0 ? rs[fr] : 0;
    }
  }
  ts_free(resv);
  return rc;
}

ts_rc q_report_build(const q_tree *t, q_queues *qs, ts_arena *a, q_report *out) {
  model_obj **v = NULL;
  size_t n = 0;
  ts_map index;
  int64_t *sums = NULL;
  ts_rc rc;
  memset(out, 0, sizeof *out);
  ts_map_init(&index);
  if (!(out->cqs = ts_arena_alloc(a, (t->ncqs + 1) * sizeof *out->cqs))) return TS_ENOMEM;
  for (uint32_t i = 0; i < t->ncqs; i++) {
    memset(&out->cqs[i], 0, sizeof out->cqs[i]);
    if ((rc = cq_report(t, t->cqs[i], a, &out->cqs[i])) != TS_OK) return rc;
  }
  out->ncqs = t->ncqs;
  qsort(out->cqs, out->ncqs, sizeof *out->cqs, cq_cmp); /* t->cqs is sorted: a no-op */
  if ((rc = model_list(t->m, MODEL_LOCAL_QUEUE, &v, &n)) != TS_OK) return rc;
  if (!(out->lqs = ts_arena_alloc(a, (n + 1) * sizeof *out->lqs))) rc = TS_ENOMEM;
  for (size_t i = 0; rc == TS_OK && i < n; i++) {
    const model_local_queue *lq = (const model_local_queue *)v[i];
    memset(&out->lqs[i], 0, sizeof out->lqs[i]);
    out->lqs[i].ns = ts_intern_cstr(lq->obj.ns);
    out->lqs[i].name = ts_intern_cstr(lq->obj.name);
    out->lqs[i].cluster_queue = lq->cluster_queue;
    out->lqs[i].generation = lq->obj.generation;
    out->lqs[i].inactive = lq_inactive(t, lq);
    if (!out->lqs[i].ns || !out->lqs[i].name) rc = TS_ENOMEM;
  }
  ts_free(v);
  if (rc != TS_OK) return rc;
  out->nlqs = n;
  qsort(out->lqs, n, sizeof *out->lqs, lq_cmp);
  for (size_t i = 0; rc == TS_OK && i < n; i++) {
    lq_key *k = ts_arena_alloc(a, sizeof *k);
    if (!k)
      rc = TS_ENOMEM;
    else {
      *k = (lq_key){out->lqs[i].ns, out->lqs[i].name};
      rc = ts_map_put(&index, (const char *)k, sizeof *k, (void *)(uintptr_t)(i + 1), NULL);
    }
  }
  if (rc == TS_OK && n && t->nfr && !(sums = ts_calloc(n * t->nfr, sizeof *sums))) rc = TS_ENOMEM;
  for (uint32_t i = 0; rc == TS_OK && i < t->ncqs; i++) /* workloads holding quota */
    for (size_t k = 0; k < t->cqs[i]->adm.n; k++) {
      const q__adm *r = t->cqs[i]->adm.v[k];
      q_lq_report *lq = lq_find(&index, out->lqs, r->wl->ns, r->wl->local_queue);
      if (!lq) continue;
      lq->admitted++;
      lq_charge(r, sums + (size_t)(lq - out->lqs) * t->nfr);
    }
  for (size_t i = 0; rc == TS_OK && i < n && sums; i++)
    rc = lq_frs(t, a, &out->lqs[i], sums + i * t->nfr);
  if (rc == TS_OK) rc = count_pending(t, qs, out->cqs, out->ncqs, &index, out->lqs, a);
  if (rc == TS_OK) rc = cohort_reports(t, a, out);
  ts_free(sums);
  ts_map_free(&index);
  return rc;
}
