/* queueing/preempt.c - choosing victims, as Kueue's preemptor does.
 *
 * Classical preemption: candidates are admitted workloads that use a flavor-resource the
 * preemptor needs and that the queue's policies allow: in the same ClusterQueue
 * (withinClusterQueue), and in ClusterQueues of the cohort tree that use more than their
 * quota (reclaimWithinCohort), either with a hierarchical advantage (the preemptor's subtree
 * would fit the request) or by priority (borrowWithinCohort and maxPriorityThreshold). They
 * are ordered (already evicting first; other queues before the preemptor's own; lower
 * priority; most recently admitted; key) and removed one by one from the usage until the
 * preemptor fits, with or without borrowing; then the victims that are not needed are added
 * back, last removed first. The set is therefore minimal for that order and deterministic.
 *
 * Fair sharing: ClusterQueues are visited from the highest dominant resource share down (a
 * tournament over the cohort tree), and a workload is taken when the preemptor's share after
 * admission would not exceed the target's share after the removal (S2-a), or would stay below
 * the target's initial share (S2-b). A preemptor whose queue stays within its nominal quota
 * takes from the borrowing queues in that order whatever the shares (InCohortReclamation).
 *
 * Every search changes usage only temporarily and restores it before returning. */
#include "queueing/q_int.h"

#include <string.h>

typedef enum variant {
  V_NEVER,
  V_WITHIN_CQ,           /* same ClusterQueue */
  V_HIER_RECLAIM,        /* the preemptor is closer to the quota the candidate uses */
  V_RECLAIM_NO_BORROW,   /* only if the preemptor then does not borrow */
  V_RECLAIM_WHILE_BORROW /* even if the preemptor still borrows */
} variant;

typedef struct cand {
  q__adm *adm;  /* the admitted workload */
  q__node *lca; /* the cohort shared with the preemptor's queue (classical) */
  variant v;    /* classification */
} cand;

typedef struct clist {
  cand *v;  /* arena */
  size_t n; /* used */
} clist;

static q_preempt_reason variant_reason(variant v) {
  switch (v) {
  case V_WITHIN_CQ:
    return Q_IN_CLUSTER_QUEUE;
  case V_RECLAIM_WHILE_BORROW:
    return Q_IN_COHORT_RECLAIM_WHILE_BORR;
  default:
    return Q_IN_COHORT_RECLAMATION;
  }
}

const char *q_preempt_reason_name(q_preempt_reason r) {
  static const char *const names[] = {"InClusterQueue", "InCohortReclamation",
                                      "InCohortFairSharing", "InCohortReclaimWhileBorrowing"};
  return (unsigned)r < 4 ? names[r] : "?";
}

/* ---- ordering -------------------------------------------------------------------------- */

int q__cand_cmp(const q__adm *a, const q__adm *b, const q__cq *cq, int64_t now) {
  bool ain = a->cq == cq, bin = b->cq == cq;
  int64_t ta, tb;
  if (a->evicting != b->evicting) return a->evicting ? -1 : 1;
  if (ain != bin) return ain ? 1 : -1;
  if (a->wl->priority != b->wl->priority) return a->wl->priority < b->wl->priority ? -1 : 1;
  ta = a->wl->admitted_ns ? a->wl->admitted_ns : now;
  tb = b->wl->admitted_ns ? b->wl->admitted_ns : now;
  if (ta != tb) return ta > tb ? -1 : 1;
  return strcmp(a->wl->key, b->wl->key);
}

typedef struct sort_ctx {
  const q__cq *cq; /* the preemptor's queue */
  int64_t now;     /* cycle clock */
} sort_ctx;

static int cand_sort_cmp(const void *a, const void *b, const void *ctx) {
  const sort_ctx *s = ctx;
  return q__cand_cmp(((const cand *)a)->adm, ((const cand *)b)->adm, s->cq, s->now);
}

static void sort_cands(q__pctx *p, clist *l, cand *tmp) {
  sort_ctx s = {p->cq, p->c->now};
  if (l->n > 1) q__sort(l->v, l->n, sizeof *l->v, cand_sort_cmp, &s, tmp);
}

/* ---- policies -------------------------------------------------------------------------- */

/* Kueue's SatisfiesPreemptionPolicy for a candidate of the preemptor. */
static bool satisfies(model_preempt_policy pol, const q_workload *pre, const q_workload *c) {
  switch (pol) {
  case MODEL_PREEMPT_LOWER_PRIORITY:
    return c->priority < pre->priority;
  case MODEL_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
    return c->priority < pre->priority ||
           (c->priority == pre->priority && pre->queue_ns < c->queue_ns);
  case MODEL_PREEMPT_ANY:
    return true;
  default:
    return false;
  }
}

static bool above_threshold(const q__pctx *p, const q_workload *c) {
  const model_cluster_queue *o = p->cq->obj;
  if (c->priority >= p->wl->priority) return true;
  return o->has_borrow_max_priority && c->priority > o->borrow_max_priority;
}

static variant classify(const q__pctx *p, const q__adm *a, bool advantage) {
  const model_cluster_queue *o = p->cq->obj;
  bool same = a->cq == p->cq;
  if (!q__adm_uses(a, p->frs, p->nfrs)) return V_NEVER;
  if (!satisfies(same ? o->within_cq : o->reclaim_cohort, p->wl, a->wl)) return V_NEVER;
  if (same) return V_WITHIN_CQ;
  if (advantage) return V_HIER_RECLAIM;
  if (o->borrow_cohort == MODEL_PREEMPT_NEVER || above_threshold(p, a->wl))
    return V_RECLAIM_NO_BORROW;
  return V_RECLAIM_WHILE_BORROW;
}

/* ---- usage simulation ------------------------------------------------------------------ */

/* Does the preemptor fit now, with or without borrowing? (Kueue's workloadFits) */
static bool fits(const q__pctx *p, bool borrow) {
  for (uint32_t i = 0; i < p->nreq; i++) {
    if (!borrow && q__borrowing_with(&p->cq->node, p->req_fr[i], p->req[i])) return false;
    if (p->req[i] > q__available(&p->cq->node, p->req_fr[i])) return false;
  }
  return true;
}

static void restore(q__pctx *p, const q__target *tg, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) q__adm_charge(p->c->t, tg[i].adm);
}

/* Adds victims back, last removed first, while the preemptor still fits (Kueue's
 * fillBackWorkloads); returns how many remain. */
static uint32_t fill_back(q__pctx *p, q__target *tg, uint32_t n, bool borrow) {
  for (int64_t i = (int64_t)n - 2; i >= 0; i--) {
    q__adm_charge(p->c->t, tg[i].adm);
    if (fits(p, borrow)) {
      tg[i] = tg[n - 1];
      n--;
    } else {
      q__adm_uncharge(p->c->t, tg[i].adm);
    }
  }
  return n;
}

/* ---- classical ------------------------------------------------------------------------- */

/* Candidates of queue x; none when x is another queue that may not be reclaimed from
 * (Volcano's reclaimable: false). */
static void from_cq(const q__pctx *p, q__cq *x, q__node *lca, bool adv, clist *l) {
  if (x != p->cq && x->obj->not_reclaimable) return;
  for (size_t i = 0; i < x->adm.n; i++) {
    variant v = classify(p, x->adm.v[i], adv);
    if (v != V_NEVER) l->v[l->n++] = (cand){x->adm.v[i], lca, v};
  }
}

/* Candidates of the queues under cur that use more than their quota, skipping the subtree
 * already visited and the preemptor's own queue. */
static void subtree(const q__pctx *p, q__node *cur, q__node *root, q__node *skip, bool adv,
                    clist *hier, clist *prio) {
  for (uint32_t k = 0; k < cur->nkids; k++) {
    q__node *kid = cur->kids[k];
    if (kid == skip || kid == &p->cq->node) continue;
    if (q__within_nominal(kid, p->frs, p->nfrs)) continue;
    if (kid->is_cq)
      from_cq(p, (q__cq *)kid, root, adv, adv ? hier : prio);
    else
      subtree(p, kid, root, skip, adv, hier, prio);
  }
}

/* Kueue's collectCandidatesForHierarchicalReclaim: walking up from the queue, the preemptor
 * gains an advantage over a subtree once some level it belongs to could hold its request. */
static ts_rc hierarchical(q__pctx *p, clist *hier, clist *prio) {
  int64_t *rem;
  q__node *prev = NULL;
  bool adv;
  if (!p->cq->node.parent || p->cq->obj->reclaim_cohort == MODEL_PREEMPT_NEVER) return TS_OK;
  if (!(rem = ts_arena_alloc(p->c->arena, (p->nreq + 1) * sizeof *rem))) return TS_ENOMEM;
  adv = q__fits_in_quota(&p->cq->node, p->req_fr, p->req, p->nreq, rem);
  for (q__node *cur = p->cq->node.parent; cur; prev = cur, cur = cur->parent) {
    subtree(p, cur, cur, prev, adv, hier, prio);
    adv = q__fits_in_quota(cur, p->req_fr, rem, p->nreq, rem) || adv;
  }
  return TS_OK;
}

/* Kueue's candidateIsValid: victims of other queues must still be above their quota, and so
 * must every cohort between their queue and the shared cohort. */
static bool valid(const q__pctx *p, const cand *c, bool borrow) {
  const q__node *n = &c->adm->cq->node;
  if (c->adm->cq == p->cq) return true;
  if (borrow && c->v == V_RECLAIM_NO_BORROW) return false;
  if (q__within_nominal(n, p->frs, p->nfrs)) return false;
  for (n = n->parent; n && n != c->lca; n = n->parent)
    if (q__within_nominal(n, p->frs, p->nfrs)) return false;
  return true;
}

/* One run over the ordered candidates; returns the victims (0 when it does not fit). */
static uint32_t attempt(q__pctx *p, const cand *all, size_t n, bool borrow, q__target *tg) {
  uint32_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!valid(p, &all[i], borrow)) continue;
    q__adm_uncharge(p->c->t, all[i].adm);
    tg[k++] = (q__target){all[i].adm, variant_reason(all[i].v)};
    if (fits(p, borrow)) {
      k = fill_back(p, tg, k, borrow);
      restore(p, tg, k);
      return k;
    }
  }
  restore(p, tg, k);
  return 0;
}

static bool under_nominal(const q__pctx *p) {
  for (uint32_t i = 0; i < p->nfrs; i++)
    if (p->cq->node.usage[p->frs[i]] >= p->cq->node.nominal[p->frs[i]]) return false;
  return true;
}

/* Concatenates: evicting ones of each list first, then the others, lists in order. */
static size_t concat(cand *out, const clist *lists, int nl) {
  size_t n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int l = 0; l < nl; l++)
      for (size_t i = 0; i < lists[l].n; i++)
        if (lists[l].v[i].adm->evicting == (pass == 0)) out[n++] = lists[l].v[i];
  return n;
}

/* Carves nl candidate lists of cap entries, a sort buffer and cap targets out of the
 * cycle's scratch memory. */
static ts_rc scratch_lists(q__pctx *p, clist *l, int nl, size_t cap, cand **tmp, q__target **tg) {
  cand *v = q__scratch(p->c, cap * ((size_t)nl + 1) * sizeof *v + cap * sizeof **tg);
  if (!v) return TS_ENOMEM;
  for (int i = 0; i < nl; i++) l[i].n = 0, l[i].v = v + (size_t)i * cap;
  *tmp = v + (size_t)nl * cap;
  *tg = (q__target *)(v + ((size_t)nl + 1) * cap);
  return TS_OK;
}

/* Copies the n victims found into the arena (they outlive the scratch memory). */
static ts_rc keep(q__pctx *p, const q__target *tg, uint32_t n, q__target **out) {
  if (!n) return TS_OK;
  if (!(*out = ts_arena_alloc(p->c->arena, n * sizeof **out))) return TS_ENOMEM;
  memcpy(*out, tg, n * sizeof **out);
  return TS_OK;
}

static ts_rc classical(q__pctx *p, q__target **out, uint32_t *nout) {
  size_t cap = p->c->t->adm_by_key.count + 1, n;
  clist l[4]; /* hierarchy, priority, same queue, all */
  bool forbidden = p->cq->obj->borrow_cohort == MODEL_PREEMPT_NEVER, opts[2];
  int nopts;
  ts_rc rc;
  q__target *tg;
  cand *tmp;
  if ((rc = scratch_lists(p, l, 4, cap, &tmp, &tg)) != TS_OK) return rc;
  if (p->cq->obj->within_cq != MODEL_PREEMPT_NEVER) from_cq(p, p->cq, NULL, false, &l[2]);
  if ((rc = hierarchical(p, &l[0], &l[1])) != TS_OK) return rc;
  for (int i = 0; i < 3; i++) sort_cands(p, &l[i], tmp);
  n = concat(l[3].v, l, 3);
  if (!l[0].n && !l[1].n) {
    opts[0] = true, nopts = 1;
  } else if (forbidden && !under_nominal(p)) {
    opts[0] = true, nopts = 1;
  } else if (forbidden && !l[0].n) {
    opts[0] = false, opts[1] = true, nopts = 2;
  } else {
    opts[0] = true, opts[1] = false, nopts = 2;
  }
  *nout = 0;
  for (int i = 0; i < nopts && !*nout; i++) *nout = attempt(p, l[3].v, n, opts[i], tg);
  return keep(p, tg, *nout, out);
}

/* ---- fair sharing ---------------------------------------------------------------------- */

static bool cq_borrowing(const q__cq *x, const uint32_t *frs, uint32_t nfrs) {
  if (!x->node.parent) return false;
  for (uint32_t i = 0; i < nfrs; i++)
    if (q__borrowing_with(&x->node, frs[i], 0)) return true;
  return false;
}

/* Kueue's findCandidates: the queue's own workloads per withinClusterQueue, and the
 * workloads of borrowing queues of the whole cohort tree per reclaimWithinCohort. */
static void flat_candidates(const q__pctx *p, clist *l) {
  const model_cluster_queue *o = p->cq->obj;
  q_tree *t = p->c->t;
  q__node *root = q__root(&p->cq->node);
  for (size_t i = 0; o->within_cq != MODEL_PREEMPT_NEVER && i < p->cq->adm.n; i++) {
    q__adm *a = p->cq->adm.v[i];
    if (satisfies(o->within_cq, p->wl, a->wl) && q__adm_uses(a, p->frs, p->nfrs))
      l->v[l->n++] = (cand){a, NULL, V_WITHIN_CQ};
  }
  if (!p->cq->node.parent || o->reclaim_cohort == MODEL_PREEMPT_NEVER) return;
  for (uint32_t c = 0; c < t->ncqs; c++) {
    q__cq *x = t->cqs[c];
    if (x == p->cq || x->obj->not_reclaimable || q__root(&x->node) != root ||
        !cq_borrowing(x, p->frs, p->nfrs))
      continue;
    for (size_t i = 0; i < x->adm.n; i++) {
      q__adm *a = x->adm.v[i];
      if (satisfies(o->reclaim_cohort, p->wl, a->wl) && q__adm_uses(a, p->frs, p->nfrs))
        l->v[l->n++] = (cand){a, NULL, V_RECLAIM_NO_BORROW};
    }
  }
}

/* Kueue's TargetClusterQueueOrdering: candidate queues, visited from the highest share. */
typedef struct ford {
  q__pctx *p;      /* the search */
  q__adm ***list;  /* [ncqs] candidates per queue, in candidate order */
  uint32_t *head;  /* [ncqs] next candidate */
  uint32_t *len;   /* [ncqs] candidates */
  bool *pruned_cq; /* [ncqs] */
  bool *pruned_co; /* [ncohorts] */
  bool *on_path;   /* [ncohorts] ancestors of the preemptor's queue */
} ford;

static bool has_wl(const ford *o, const q__cq *x) {
  return o->head[x->node.index] < o->len[x->node.index];
}

static q__adm *pop_wl(ford *o, const q__cq *x) {
  return o->list[x->node.index][o->head[x->node.index]++];
}

static ts_rc ford_init(ford *o, q__pctx *p, const cand *c, size_t n) {
  q_tree *t = p->c->t;
  ts_arena *a = p->c->arena;
  o->p = p;
  o->list = ts_arena_alloc(a, (t->ncqs + 1) * sizeof *o->list);
  o->head = ts_arena_alloc(a, (t->ncqs + 1) * sizeof *o->head);
  o->len = ts_arena_alloc(a, (t->ncqs + 1) * sizeof *o->len);
  o->pruned_cq = ts_arena_alloc(a, t->ncqs + 1);
  o->pruned_co = ts_arena_alloc(a, t->ncohorts + 1);
  o->on_path = ts_arena_alloc(a, t->ncohorts + 1);
  if (!o->list || !o->head || !o->len || !o->pruned_cq || !o->pruned_co || !o->on_path)
    return TS_ENOMEM;
  memset(o->len, 0, (t->ncqs + 1) * sizeof *o->len);
  memset(o->head, 0, (t->ncqs + 1) * sizeof *o->head);
  memset(o->pruned_cq, 0, t->ncqs + 1);
  memset(o->pruned_co, 0, t->ncohorts + 1);
  memset(o->on_path, 0, t->ncohorts + 1);
  for (q__node *x = p->cq->node.parent; x; x = x->parent) o->on_path[x->index] = true;
  for (size_t i = 0; i < n; i++) o->len[c[i].adm->cq->node.index]++;
  for (uint32_t i = 0; i < t->ncqs; i++)
    if (o->len[i] && !(o->list[i] = ts_arena_alloc(a, o->len[i] * sizeof **o->list)))
      return TS_ENOMEM;
  memset(o->len, 0, (t->ncqs + 1) * sizeof *o->len);
  for (size_t i = 0; i < n; i++) {
    uint32_t k = c[i].adm->cq->node.index;
    o->list[k][o->len[k]++] = c[i].adm;
  }
  return TS_OK;
}

/* The child queue with the highest share (ties: the better first candidate), or descends
 * into the child cohort with the highest share; NULL when this call only pruned nodes. */
static q__cq *next_target(ford *o, q__node *cohort) {
  const q_tree *t = o->p->c->t;
  q__cq *hq = NULL;
  q__node *hc = NULL;
  q__drs hqd = {-1.0, 1.0, false}, hcd = {-1.0, 1.0, false};
  for (uint32_t k = cohort->nkid_cohorts; k < cohort->nkids; k++) {
    q__cq *x = (q__cq *)cohort->kids[k];
    q__drs d;
    int cmp;
    if (o->pruned_cq[x->node.index]) continue;
    d = q__share(t, &x->node);
    if ((q__drs_zero(d) && x != o->p->cq) || !has_wl(o, x)) {
      o->pruned_cq[x->node.index] = true;
      continue;
    }
    cmp = q__drs_cmp(d, hqd);
    if (cmp > 0 ||
        (cmp == 0 && hq &&
         q__cand_cmp(o->list[x->node.index][o->head[x->node.index]],
                     o->list[hq->node.index][o->head[hq->node.index]], o->p->cq, o->p->c->now) < 0))
      hq = x, hqd = d;
  }
  for (uint32_t k = 0; k < cohort->nkid_cohorts; k++) {
    q__node *c = cohort->kids[k];
    q__drs d;
    if (o->pruned_co[c->index]) continue;
    d = q__share(t, c);
    if (q__drs_zero(d) && !o->on_path[c->index])
      o->pruned_co[c->index] = true;
    else if (q__drs_cmp(d, hcd) >= 0)
      hc = c, hcd = d;
  }
  if (!hq && !hc) {
    o->pruned_co[cohort->index] = true;
    return NULL;
  }
  if (hc && q__drs_cmp(hcd, hqd) >= 0) return next_target(o, hc);
  return hq;
}

/* The next queue to take candidates from, or NULL when none is left. The caller must pop a
 * workload or drop the queue between calls. */
static q__cq *ford_next(ford *o) {
  q__cq *cq = o->p->cq;
  q__node *root;
  if (!cq->node.parent) return has_wl(o, cq) ? cq : NULL;
  root = q__root(&cq->node);
  while (!o->pruned_co[root->index]) {
    q__cq *x = next_target(o, root);
    if (x) return x;
  }
  return NULL;
}

/* The two nodes just below the lowest cohort shared by the preemptor's queue and x. */
static void almost_lcas(const ford *o, const q__cq *x, const q__node **pre, const q__node **tgt) {
  const q__node *lca = x->node.parent, *n;
  while (lca && !o->on_path[lca->index]) lca = lca->parent;
  for (n = &o->p->cq->node; n->parent != lca; n = n->parent) {
  }
  *pre = n;
  for (n = &x->node; n->parent != lca; n = n->parent) {
  }
  *tgt = n;
}

/* Adds (sign 1) or removes (-1) the preemptor's usage. */
static void preemptor_usage(q__pctx *p, int sign) {
  for (uint32_t i = 0; i < p->nreq; i++) {
    if (sign > 0)
      q__add_usage(&p->cq->node, p->req_fr[i], p->req[i]);
    else
      q__remove_usage(&p->cq->node, p->req_fr[i], p->req[i]);
  }
}

static bool fits_fs(q__pctx *p) {
  bool ok;
  preemptor_usage(p, -1);
  ok = fits(p, true);
  preemptor_usage(p, 1);
  return ok;
}

static bool strategy(q_fs_strategy s, q__drs pnew, q__drs told, q__drs tnew) {
  if (s == Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE) return q__drs_cmp(pnew, tnew) <= 0;
  return q__drs_cmp(pnew, told) < 0;
}

typedef struct fsrun {
  q__target *tg; /* victims so far */
  uint32_t n;    /* entries */
  cand *retry;   /* candidates refused by the first strategy */
  size_t nretry; /* entries */
} fsrun;

static void take(q__pctx *p, fsrun *r, q__adm *a, q_preempt_reason why) {
  q__adm_uncharge(p->c->t, a);
  r->tg[r->n++] = (q__target){a, why};
}

/* Takes workloads from target queue x per strategy s; true when the preemptor fits. */
static bool first_in_queue(ford *o, q__cq *x, q_fs_strategy s, fsrun *r) {
  const q_tree *t = o->p->c->t;
  const q__node *pa, *ta;
  q__drs pnew, told;
  almost_lcas(o, x, &pa, &ta);
  pnew = q__share(t, pa), told = q__share(t, ta);
  while (has_wl(o, x)) {
    q__adm *a = pop_wl(o, x);
    q__drs tnew;
    q__adm_uncharge(o->p->c->t, a);
    tnew = q__share(t, ta);
    q__adm_charge(o->p->c->t, a);
    if (strategy(s, pnew, told, tnew)) {
      take(o->p, r, a, Q_IN_COHORT_FAIR_SHARING);
      return fits_fs(o->p);
    }
    r->retry[r->nretry++] = (cand){a, NULL, V_RECLAIM_NO_BORROW};
  }
  return false;
}

/* Kueue's FairSharingPreemptWithinNominal: with the preemptor's usage added, its queue still
 * borrows nothing on the flavor-resources that need preemption. */
static bool preemptor_within_nominal(const q__pctx *p) {
  if (!p->c->cfg->preempt_within_nominal) return false;
  for (uint32_t i = 0; i < p->nfrs; i++)
    if (q__borrowing_with(&p->cq->node, p->frs[i], 0)) return false;
  return true;
}

static ts_rc first_strategy(q__pctx *p, const cand *c, size_t n, q_fs_strategy s, fsrun *r,
                            bool *ok) {
  ford o;
  q__cq *x;
  ts_rc rc = ford_init(&o, p, c, n);
  bool within = preemptor_within_nominal(p); /* the preemptor's usage is added already */
  *ok = false;
  while (rc == TS_OK && !*ok && (x = ford_next(&o))) {
    if (x == p->cq) {
      take(p, r, pop_wl(&o, x), Q_IN_CLUSTER_QUEUE);
      *ok = fits_fs(p);
    } else if (within) { /* its nominal quota is its due: shares do not matter */
      take(p, r, pop_wl(&o, x), Q_IN_COHORT_RECLAMATION);
      *ok = fits_fs(p);
    } else {
      *ok = first_in_queue(&o, x, s, r);
    }
  }
  return rc;
}

/* Rule S2-b over the candidates the first strategy refused: one per queue at most. */
static ts_rc second_strategy(q__pctx *p, fsrun *r, bool *ok) {
  ford o;
  q__cq *x;
  ts_rc rc = ford_init(&o, p, r->retry, r->nretry);
  *ok = false;
  while (rc == TS_OK && !*ok && (x = ford_next(&o))) {
    const q__node *pa, *ta;
    almost_lcas(&o, x, &pa, &ta);
    if (strategy(Q_FS_LESS_THAN_INITIAL_SHARE, q__share(p->c->t, pa), q__share(p->c->t, ta),
                 q__share(p->c->t, ta))) {
      take(p, r, pop_wl(&o, x), Q_IN_COHORT_FAIR_SHARING);
      *ok = fits_fs(p);
    }
    o.pruned_cq[x->node.index] = true;
  }
  return rc;
}

static ts_rc fair(q__pctx *p, q__target **out, uint32_t *nout) {
  size_t cap = p->c->t->adm_by_key.count + 1;
  clist l[2]; /* candidates, retries */
  fsrun r = {0};
  bool ok = false;
  ts_rc rc;
  const q_config *cfg = p->c->cfg;
  cand *tmp;
  *nout = 0;
  if ((rc = scratch_lists(p, l, 2, cap, &tmp, &r.tg)) != TS_OK) return rc;
  r.retry = l[1].v;
  flat_candidates(p, &l[0]);
  if (!l[0].n) return TS_OK;
  sort_cands(p, &l[0], tmp);
  preemptor_usage(p, 1);
  rc = first_strategy(p, l[0].v, l[0].n, cfg->nfs_strategies ? cfg->fs_strategies[0] : 0, &r, &ok);
  if (rc == TS_OK && !ok && cfg->nfs_strategies > 1) rc = second_strategy(p, &r, &ok);
  preemptor_usage(p, -1);
  if (rc == TS_OK && ok) *nout = fill_back(p, r.tg, r.n, true);
  restore(p, r.tg, ok ? *nout : r.n);
  return rc == TS_OK ? keep(p, r.tg, *nout, out) : rc;
}

/* ---- entry points ---------------------------------------------------------------------- */

ts_rc q__targets(q__pctx *p, q__target **out, uint32_t *n) {
  *out = NULL, *n = 0;
  return p->c->cfg->fair_sharing ? fair(p, out, n) : classical(p, out, n);
}

ts_rc q__simulate_preemption(q__ctx *c, q__cq *cq, const q_workload *wl, uint32_t fr, int64_t v,
                             q__pmode *mode, int *borrow) {
  q__pctx p = {c, wl, cq, &fr, 1, &fr, &v, 1};
  q__target *tg;
  uint32_t n;
  bool partial, same = false;
  ts_rc rc = q__targets(&p, &tg, &n);
  if (rc != TS_OK) return rc;
  if (!n) {
    *mode = Q__P_NOCAND;
    *borrow = q__find_height(&cq->node, fr, v, &partial);
    return TS_OK;
  }
  for (uint32_t i = 0; i < n; i++) {
    q__adm_uncharge(c->t, tg[i].adm);
    same = same || tg[i].adm->cq == cq;
  }
  *borrow = q__find_height(&cq->node, fr, v, &partial);
  for (uint32_t i = 0; i < n; i++) q__adm_charge(c->t, tg[i].adm);
  *mode = same ? Q__P_PREEMPT : Q__P_RECLAIM;
  return TS_OK;
}
