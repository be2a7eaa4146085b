/* queueing/cycle.c - one admission cycle, as Kueue's scheduler.schedule does it.
 *
 *   1. heads: at most one workload per active ClusterQueue;
 *   2. nominate: namespace selector, then flavor assignment (with partial admission and
 *      preemption targets when it does not fit as is);
 *   3. order: classical (no borrowing first, then priority, then time; hierarchical cohorts:
 *      a lower borrowing level first) or fair sharing (a tournament on the dominant resource
 *      share after admission, cohort by cohort);
 *   4. process in that order against the usage left by earlier heads: admit (after the
 *      scheduler's commit hook), issue preemptions, or skip;
 *   5. requeue what was not admitted.
 *
 * The tree serves as the cycle's snapshot: its usage is saved first and restored at the end,
 * when the workloads admitted in the cycle are charged for good. */
#include "queueing/q_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CYCLE_ARENA_CHUNK (256 * 1024)

typedef enum estatus { E_NOT_NOMINATED, E_SKIPPED, E_ASSUMED, E_PREEMPTING } estatus;

typedef struct entry {
  q_workload *wl;       /* the head */
  q__cq *cq;            /* its ClusterQueue */
  bool nominated;       /* passed the checks; has an assignment */
  const int16_t *start; /* where its flavor searches resume (LastAssignment), or NULL */
  q__asg asg;           /* flavor assignment */
  q__target *tg;        /* preemption targets */
  uint32_t ntg;         /* entries */
  estatus status;       /* what processing did */
  q__requeue why;       /* requeue reason */
  q_outcome outcome;    /* reported outcome */
  const char *msg;      /* reported reason */
  q__adm *adm;          /* admitted: the record charged at the end */
  q__drs *drs;          /* fair sharing: share seen by each ancestor, by ancestor depth */
  bool *borrows;        /* fair sharing: by ancestor depth, the node below it would borrow on the
                           flavor-resources this head uses */
  bool done;            /* processed */
} entry;

typedef struct cyc {
  q__ctx c;                     /* context */
  q_queues *qs;                 /* queues */
  q_memo *memo;                 /* flavor-search progress of the queued workloads */
  entry *e;                     /* one per head */
  size_t n;                     /* entries */
  entry **order;                /* processing order */
  size_t norder;                /* entries */
  q__adm **victims;             /* preempted in this cycle */
  size_t nvictims;              /* entries */
  const q_workload **victim_of; /* preemptor of each victim */
  q_preempt_reason *victim_why; /* reason of each victim */
  ts_err *err;                  /* caller's error */
  q__head *h;                   /* the heads popped */
  size_t nh;                    /* entries */
} cyc;

static const q_hooks no_hooks;

/* ---- nominate -------------------------------------------------------------------------- */

/* The FRs that need preemption in an assignment. */
static uint32_t preempt_frs(cyc *y, const q__asg *a, uint32_t *frs) {
  uint32_t n = 0;
  for (uint32_t p = 0; p < a->nps; p++)
    for (uint32_t k = 0; k < a->ps[p].nrf; k++) {
      const q_rflavor *rf = &a->ps[p].rf[k];
      uint32_t fr;
      bool dup = false;
      if (rf->mode != Q_PREEMPT) continue;
      fr = q__fr(y->c.t, (uint32_t)q__flavor_index(y->c.t, rf->flavor), rf->resource);
      for (uint32_t i = 0; i < n; i++) dup = dup || frs[i] == fr;
      if (!dup) frs[n++] = fr;
    }
  return n;
}

static ts_rc targets_for(cyc *y, q__cq *cq, const q_workload *wl, const q__asg *a, q__target **tg,
                         uint32_t *n) {
  uint32_t *frs = ts_arena_alloc(y->c.arena, (y->c.t->nfr + 1) * sizeof *frs);
  q__pctx p;
  if (!frs) return TS_ENOMEM;
  p = (q__pctx){&y->c, wl, cq, frs, 0, a->fr, a->amount, a->nuse};
  p.nfrs = preempt_frs(y, a, frs);
  return q__targets(&p, tg, n);
}

/* An attempt at some counts: Fit, or Preempt with targets. */
static ts_rc try_counts(cyc *y, entry *e, const int32_t *counts, bool *ok) {
  q__asg a;
  q__target *tg = NULL;
  uint32_t n = 0;
  ts_rc rc = q__assign(&y->c, e->cq, e->wl, counts, e->start, &a);
  *ok = false;
  if (rc != TS_OK || a.mode == Q_NO_FIT) return rc;
  if (a.mode == Q_PREEMPT && (rc = targets_for(y, e->cq, e->wl, &a, &tg, &n)) != TS_OK) return rc;
  if (a.mode == Q_FIT || n) e->asg = a, e->tg = tg, e->ntg = n, *ok = true;
  return TS_OK;
}

/* Kueue's order-based PodSetReducer: shrink from the last pod set, binary search on the
 * total cut, then give back what the order cut needlessly. */
typedef struct reducer {
  const q_workload *wl; /* the workload */
  int32_t *full;        /* full counts */
  int32_t *delta;       /* count - minCount */
  int32_t *cur;         /* counts being probed */
  int64_t total;        /* sum of delta */
} reducer;

static void distribute(reducer *r, int64_t amount) {
  for (int64_t i = (int64_t)r->wl->npodsets - 1; i >= 0; i--) {
    int64_t cut = r->delta[i] < amount ? r->delta[i] : amount;
    r->cur[i] = r->full[i] - (int32_t)cut;
    amount -= cut;
  }
}

static ts_rc give_back(cyc *y, entry *e, reducer *r, int32_t *best) {
  uint32_t reduced = 0;
  ts_rc rc = TS_OK;
  bool ok;
  for (uint32_t i = 0; i < r->wl->npodsets; i++) reduced += best[i] < r->full[i];
  if (reduced < 2) return try_counts(y, e, best, &ok);
  memcpy(r->cur, best, r->wl->npodsets * sizeof *best);
  for (uint32_t i = 0; rc == TS_OK && i < r->wl->npodsets; i++) {
    int32_t lo = best[i] + 1, hi = r->full[i];
    if (best[i] == r->full[i]) continue;
    while (rc == TS_OK && lo <= hi) { /* largest count in [lo, hi] that fits */
      int32_t mid = lo + (hi - lo) / 2;
      r->cur[i] = mid;
      if ((rc = try_counts(y, e, r->cur, &ok)) != TS_OK) break;
      if (ok)
        best[i] = mid, lo = mid + 1;
      else
        hi = mid - 1;
    }
    r->cur[i] = best[i];
  }
  return rc == TS_OK ? try_counts(y, e, best, &ok) : rc;
}

static ts_rc reduce(cyc *y, entry *e, bool *found) {
  const q_workload *wl = e->wl;
  size_t sz = (wl->npodsets + 1) * sizeof(int32_t);
  reducer r = {wl, ts_arena_alloc(y->c.arena, sz), ts_arena_alloc(y->c.arena, sz),
               ts_arena_alloc(y->c.arena, sz), 0};
  int32_t *best = ts_arena_alloc(y->c.arena, sz);
  int64_t lo = 0, hi;
  ts_rc rc = TS_OK;
  bool ok;
  *found = false;
  if (!r.full || !r.delta || !r.cur || !best) return TS_ENOMEM;
  for (uint32_t i = 0; i < wl->npodsets; i++) {
    const q_podset *ps = &wl->podsets[i];
    r.full[i] = ps->count;
    r.delta[i] = ps->min_count > 0 && ps->min_count < ps->count ? ps->count - ps->min_count : 0;
    r.total += r.delta[i];
  }
  if (!r.total) return TS_OK;
  for (hi = r.total + 1; rc == TS_OK && lo < hi;) { /* smallest cut that fits */
    int64_t mid = lo + (hi - lo) / 2;
    distribute(&r, mid);
    if ((rc = try_counts(y, e, r.cur, &ok)) != TS_OK) break;
    if (ok) {
      hi = mid;
      memcpy(best, r.cur, sz - sizeof(int32_t));
    } else {
      lo = mid + 1;
    }
  }
  if (rc != TS_OK || lo > r.total) return rc;
  *found = true;
  return give_back(y, e, &r, best);
}

/* Kueue's getInitialAssignments: the full counts, or reduced ones under partial admission. */
static ts_rc assignments(cyc *y, entry *e) {
  q__asg full;
  bool found = false, reducible = false;
  ts_rc rc = q__assign(&y->c, e->cq, e->wl, NULL, e->start, &full);
  if (rc != TS_OK) return rc;
  e->asg = full, e->tg = NULL, e->ntg = 0;
  if (full.mode == Q_FIT) return TS_OK;
  if (full.mode == Q_PREEMPT) {
    if ((rc = targets_for(y, e->cq, e->wl, &full, &e->tg, &e->ntg)) != TS_OK) return rc;
    if (e->ntg) return TS_OK;
  }
  for (uint32_t i = 0; i < e->wl->npodsets; i++)
    reducible = reducible || (e->wl->podsets[i].min_count > 0 &&
                              e->wl->podsets[i].min_count < e->wl->podsets[i].count);
  if (y->c.cfg->partial_admission && reducible && (rc = reduce(y, e, &found)) != TS_OK) return rc;
  if (!found) e->asg = full, e->tg = NULL, e->ntg = 0;
  return TS_OK;
}

/* An error (not out of memory) while evaluating one head: it is left out of this cycle and
 * parked with a message naming it, what failed and why; the other heads go on. */
static void contain(cyc *y, entry *e, const char *what, ts_rc rc) {
  e->nominated = false;
  e->status = E_NOT_NOMINATED;
  e->why = Q__RQ_ERROR;
  e->outcome = Q_INADMISSIBLE;
  e->msg = q__msg(&y->c, "%s of workload %s failed: %s", what, e->wl->name, ts_strerror(rc));
}

static ts_rc nominate(cyc *y, entry *e) {
  static const model_labels none;
  ts_rc rc;
  const model_obj *ns = model_get(y->c.t->m, MODEL_NAMESPACE, NULL, e->wl->ns);
  const model_labels *labels = ns ? &ns->labels : &none;
  if (!model_label_selector_match(&e->cq->obj->ns_selector, labels)) {
    e->why = Q__RQ_NS_MISMATCH;
    e->outcome = Q_INADMISSIBLE;
    e->msg = q__msg(&y->c, "namespace %s is not selected by ClusterQueue %s (namespaceSelector)",
                    e->wl->ns, e->cq->node.name);
    return TS_OK;
  }
  e->nominated = true;
  e->start = q__memo_start(y->memo, e->cq, e->wl);
  rc = assignments(y, e);
  if (rc == TS_OK || rc == TS_ENOMEM) return rc;
  contain(y, e, "flavor assignment", rc); /* this workload alone; the cycle goes on */
  return TS_OK;
}

/* ---- order ----------------------------------------------------------------------------- */

static int prio_time_key(const cyc *y, const entry *a, const entry *b) {
  if (y->c.cfg->priority_sorting_in_cohort && a->wl->priority != b->wl->priority)
    return a->wl->priority > b->wl->priority ? -1 : 1;
  if (a->wl->queue_ns != b->wl->queue_ns) return a->wl->queue_ns < b->wl->queue_ns ? -1 : 1;
  return strcmp(a->wl->key, b->wl->key);
}

/* Kueue's classical iterator: no borrowing (or a closer cohort) first, priority, time. */
static int classical_cmp(const void *a, const void *b, const void *ctx) {
  const entry *x = *(entry *const *)a, *z = *(entry *const *)b;
  if (x->wl->resume != z->wl->resume) return x->wl->resume ? -1 : 1; /* admitted already */
  if (x->asg.borrow != z->asg.borrow) return x->asg.borrow < z->asg.borrow ? -1 : 1;
  return prio_time_key(ctx, x, z);
}

/* Fair sharing: each head's share after its admission, seen from every ancestor cohort. */
static void compute_drs(cyc *y, const q__node *root) {
  for (size_t i = 0; i < y->n; i++) {
    entry *e = &y->e[i];
    q__drs d;
    if (e->done || !e->nominated || q__root(&e->cq->node) != root) continue;
    for (uint32_t k = 0; k < e->asg.nuse; k++)
      q__add_usage(&e->cq->node, e->asg.fr[k], e->asg.amount[k]);
    d = q__share(y->c.t, &e->cq->node);
    for (q__node *below = &e->cq->node, *a = below->parent; a; below = a, a = a->parent) {
      e->drs[a->depth] = d;
      e->borrows[a->depth] = false;
      for (uint32_t k = 0; k < e->asg.nuse && !e->borrows[a->depth]; k++)
        e->borrows[a->depth] = q__borrowing_with(below, e->asg.fr[k], 0);
      d = q__share(y->c.t, a);
    }
    for (uint32_t k = 0; k < e->asg.nuse; k++)
      q__remove_usage(&e->cq->node, e->asg.fr[k], e->asg.amount[k]);
  }
}

/* Kueue's entryComparer: FairSharingPrioritizeNonBorrowing (a head whose subtree would not
 * borrow from this cohort on its flavors goes first), then the share, priority, time. */
static bool fs_less(const cyc *y, const entry *a, const entry *b, const q__node *cohort) {
  int c;
  if (a->wl->resume != b->wl->resume) return a->wl->resume; /* admitted already */
  if (y->c.cfg->prioritize_non_borrowing && a->borrows[cohort->depth] != b->borrows[cohort->depth])
    return !a->borrows[cohort->depth];
  c = q__drs_cmp(a->drs[cohort->depth], b->drs[cohort->depth]);
  if (c) return c < 0;
  return prio_time_key(y, a, b) < 0;
}

/* Kueue's runTournament: the winner of each child cohort and the head of each child queue
 * compete on the share they would have after admission, then priority, then time. */
static entry *tournament(cyc *y, entry **by_cq, const q__node *cohort) {
  entry *best = NULL;
  for (uint32_t k = 0; k < cohort->nkids; k++) {
    const q__node *kid = cohort->kids[k];
    entry *e = kid->is_cq ? by_cq[kid->index] : tournament(y, by_cq, kid);
    if (!e || e->done) continue;
    if (!best || fs_less(y, e, best, cohort)) best = e;
  }
  return best;
}

static entry *fs_pop(cyc *y, entry **by_cq) {
  entry *first = NULL, *w;
  for (size_t i = 0; i < y->n && !first; i++)
    if (!y->e[i].done && y->e[i].nominated) first = &y->e[i];
  if (!first) return NULL;
  if (!first->cq->node.parent) return first;
  compute_drs(y, q__root(&first->cq->node));
  w = tournament(y, by_cq, q__root(&first->cq->node));
  return w ? w : first;
}

/* ---- process --------------------------------------------------------------------------- */

static bool is_victim(const cyc *y, const q__adm *a) {
  for (size_t i = 0; i < y->nvictims; i++)
    if (y->victims[i] == a) return true;
  return false;
}

/* Does the head still fit once this cycle's victims and its own targets are gone? */
static bool still_fits(cyc *y, entry *e) {
  bool ok = true;
  for (size_t i = 0; i < y->nvictims; i++) q__adm_uncharge(y->c.t, y->victims[i]);
  for (uint32_t i = 0; i < e->ntg; i++) q__adm_uncharge(y->c.t, e->tg[i].adm);
  for (uint32_t k = 0; k < e->asg.nuse && ok; k++)
    ok = q__available(&e->cq->node, e->asg.fr[k]) >= e->asg.amount[k];
  for (uint32_t i = 0; i < e->ntg; i++) q__adm_charge(y->c.t, e->tg[i].adm);
  for (size_t i = 0; i < y->nvictims; i++) q__adm_charge(y->c.t, y->victims[i]);
  return ok;
}

static void add_usage(q__cq *cq, const q__asg *a) {
  for (uint32_t k = 0; k < a->nuse; k++) q__add_usage(&cq->node, a->fr[k], a->amount[k]);
}

/* Kueue's reserveCapacityForUnreclaimablePreempt: a head that needs preemption but found no
 * victim holds what it could get, so that lower heads cannot take it meanwhile, unless its
 * queue can always reclaim (reclaimWithinCohort: Any). */
static void reserve(entry *e) {
  const q__node *n = &e->cq->node;
  if (e->cq->obj->reclaim_cohort == MODEL_PREEMPT_ANY) return;
  for (uint32_t k = 0; k < e->asg.nuse; k++) {
    uint32_t fr = e->asg.fr[k];
    int64_t u = e->asg.amount[k], r;
    if (e->asg.borrow > 0)
      r = n->blimit[fr] == Q__NONE ? u : n->nominal[fr] + n->blimit[fr] - n->usage[fr];
    else
      r = n->nominal[fr] - n->usage[fr];
    if (r > u) r = u;
    if (r > 0) q__add_usage(&e->cq->node, fr, r);
  }
}

static void skip(entry *e, const char *msg) {
  e->status = E_SKIPPED;
  e->outcome = Q_PENDING;
  e->msg = msg;
}

static void preempting(cyc *y, entry *e) {
  for (uint32_t i = 0; i < e->ntg; i++) {
    y->victims[y->nvictims] = e->tg[i].adm;
    y->victim_of[y->nvictims] = e->wl;
    y->victim_why[y->nvictims++] = e->tg[i].reason;
  }
  add_usage(e->cq, &e->asg);
  e->status = E_PREEMPTING;
  e->why = Q__RQ_PENDING_PREEMPTION;
  e->outcome = Q_PREEMPTING;
  e->msg = q__msg(&y->c, "%s. Pending the preemption of %u workload(s)",
                  e->asg.msg ? e->asg.msg : "quota is in use", e->ntg);
}

static q_admission admission_of(const entry *e) {
  return (q_admission){e->cq->node.name, e->asg.ps, e->asg.nps};
}

static ts_rc admit(cyc *y, entry *e) {
  char why[256];
  q_admission a = admission_of(e);
  ts_rc rc;
  why[0] = 0;
  if (y->c.hooks->commit && !y->c.hooks->commit(y->c.hooks->ctx, e->wl, &a, why, sizeof why)) {
    why[sizeof why - 1] = 0;
    skip(e, q__msg(&y->c, "Workload cannot be placed: %s", why[0] ? why : "refused"));
    return TS_OK;
  }
  if ((rc = q__adm_new(y->c.t, e->cq, e->wl, &a, &e->adm, y->err)) != TS_OK) return rc;
  add_usage(e->cq, &e->asg);
  e->status = E_ASSUMED;
  e->outcome = Q_ADMITTED;
  return TS_OK;
}

static ts_rc process(cyc *y, entry *e) {
  e->outcome = Q_PENDING;
  e->msg = e->asg.msg;
  if (e->asg.mode == Q_NO_FIT) {
    e->why = Q__RQ_NO_FIT;
    return TS_OK;
  }
  if (e->asg.mode == Q_PREEMPT && !e->ntg) {
    e->why = Q__RQ_NO_CANDIDATES;
    reserve(e);
    return TS_OK;
  }
  for (uint32_t i = 0; i < e->ntg; i++)
    if (is_victim(y, e->tg[i].adm)) {
      skip(e, "Workload has overlapping preemption targets with another workload");
      return TS_OK;
    }
  if (!still_fits(y, e)) {
    skip(e, "Workload no longer fits after processing another workload");
    return TS_OK;
  }
  if (e->asg.mode == Q_PREEMPT) {
    preempting(y, e);
    return TS_OK;
  }
  return admit(y, e);
}

/* ---- the cycle ------------------------------------------------------------------------- */

static ts_rc setup(cyc *y, q__head *h, size_t n) {
  size_t cap = y->c.t->adm_by_key.count + 1;
  ts_arena *a = y->c.arena;
  y->e = ts_arena_alloc(a, (n + 1) * sizeof *y->e);
  y->order = ts_arena_alloc(a, (n + 1) * sizeof *y->order);
  y->victims = ts_arena_alloc(a, cap * sizeof *y->victims);
  y->victim_of = ts_arena_alloc(a, cap * sizeof *y->victim_of);
  y->victim_why = ts_arena_alloc(a, cap * sizeof *y->victim_why);
  if (!y->e || !y->order || !y->victims || !y->victim_of || !y->victim_why) return TS_ENOMEM;
  memset(y->e, 0, (n + 1) * sizeof *y->e);
  for (size_t i = 0; i < n; i++) {
    entry *e = &y->e[i];
    e->wl = h[i].wl, e->cq = h[i].cq, e->why = Q__RQ_GENERIC;
    e->drs = ts_arena_alloc(a, (size_t)(e->cq->node.depth + 1) * sizeof *e->drs);
    e->borrows = ts_arena_alloc(a, (size_t)(e->cq->node.depth + 1) * sizeof *e->borrows);
    if (!e->drs || !e->borrows) return TS_ENOMEM;
  }
  y->n = n;
  return TS_OK;
}

/* process, with an error other than out of memory contained to the head. */
static ts_rc process_one(cyc *y, entry *e) {
  ts_rc rc = process(y, e);
  if (rc == TS_OK || rc == TS_ENOMEM) return rc;
  skip(e, q__msg(&y->c, "admission of workload %s failed: %s", e->wl->name, ts_strerror(rc)));
  e->why = Q__RQ_ERROR;
  return TS_OK;
}

static ts_rc run_classical(cyc *y) {
  entry **tmp;
  ts_rc rc = TS_OK;
  for (size_t i = 0; i < y->n; i++)
    if (y->e[i].nominated) y->order[y->norder++] = &y->e[i];
  if (!(tmp = ts_arena_alloc(y->c.arena, (y->norder + 1) * sizeof *tmp))) return TS_ENOMEM;
  q__sort(y->order, y->norder, sizeof *y->order, classical_cmp, y, tmp);
  for (size_t i = 0; rc == TS_OK && i < y->norder; i++) rc = process_one(y, y->order[i]);
  return rc;
}

static ts_rc run_fair(cyc *y) {
  entry **by_cq = ts_arena_alloc(y->c.arena, (y->c.t->ncqs + 1) * sizeof *by_cq);
  entry *e;
  ts_rc rc = TS_OK;
  if (!by_cq) return TS_ENOMEM;
  memset(by_cq, 0, (y->c.t->ncqs + 1) * sizeof *by_cq);
  for (size_t i = 0; i < y->n; i++)
    if (y->e[i].nominated) by_cq[y->e[i].cq->node.index] = &y->e[i];
  while (rc == TS_OK && (e = fs_pop(y, by_cq))) {
    e->done = true;
    y->order[y->norder++] = e;
    rc = process_one(y, e);
  }
  return rc;
}

/* Charges this cycle's admissions for good and marks its victims. After a failure to link
 * one record, it and the later ones are dropped (requeued, not charged). */
static ts_rc settle(cyc *y, const int64_t *saved) {
  ts_rc rc = TS_OK;
  q__usage_restore(y->c.t, saved);
  for (size_t i = 0; i < y->n; i++) {
    entry *e = &y->e[i];
    if (!e->adm) continue;
    if (rc == TS_OK && (rc = q__adm_link(y->c.t, e->adm)) == TS_OK) {
      q__adm_charge(y->c.t, e->adm);
      continue;
    }
    ts_free(e->adm);
    e->adm = NULL, e->status = E_SKIPPED, e->outcome = Q_PENDING;
    e->msg = "Workload could not be admitted: out of memory";
  }
  for (size_t i = 0; i < y->nvictims; i++) y->victims[i]->evicting = true;
  return rc;
}

/* Kueue's LastAssignment after processing: forgotten once admitted or preempting (the next
 * search starts over), else the progress of this attempt (kept even when skipped). Out of
 * memory only loses the progress. */
static void remember(cyc *y, entry *e) {
  if (e->status == E_ASSUMED || e->status == E_PREEMPTING)
    q__memo_forget(y->memo, e->wl->key);
  else if (e->nominated && q__memo_record(y->memo, e->cq, e->wl, &e->asg) != TS_OK)
    q__memo_forget(y->memo, e->wl->key);
}

static q_decision decision_of(cyc *y, entry *e, size_t *victim0) {
  q_decision d = {e->wl, e->outcome, admission_of(e), e->msg, 0, 0, false, e->why == Q__RQ_ERROR};
  if (e->outcome == Q_PREEMPTING) d.victim0 = *victim0, d.nvictims = e->ntg, *victim0 += e->ntg;
  remember(y, e);
  if (e->status == E_ASSUMED) {
    q__queues_done(y->qs, e->wl);
    return d;
  }
  if (e->status != E_NOT_NOMINATED && e->why == Q__RQ_GENERIC)
    e->why = Q__RQ_FAILED_AFTER_NOMINATION;
  d.parked = q__queues_requeue(y->qs, e->wl, e->why, q__memo_pending(y->memo, e->wl->key));
  return d;
}

/* Requeues the heads and fills the result: decisions in processing order, then the heads
 * that could not be considered. The heads are requeued even when memory runs out. */
static ts_rc finish(cyc *y, q_result *out) {
  size_t k = 0, v0 = 0;
  out->decisions = ts_arena_alloc(y->c.arena, (y->n + 1) * sizeof *out->decisions);
  out->victims = ts_arena_alloc(y->c.arena, (y->nvictims + 1) * sizeof *out->victims);
  for (size_t i = 0; i < y->norder; i++) {
    q_decision d = decision_of(y, y->order[i], &v0);
    if (out->decisions) out->decisions[k++] = d;
  }
  for (size_t i = 0; i < y->n; i++) {
    if (y->e[i].nominated) continue;
    q_decision d = decision_of(y, &y->e[i], &v0);
    if (out->decisions) out->decisions[k++] = d;
  }
  if (!out->decisions || !out->victims) return TS_ENOMEM;
  out->ndecisions = k;
  for (size_t i = 0; i < y->nvictims; i++)
    out->victims[i] = (q_victim){y->victims[i]->wl, y->victim_of[i], y->victim_why[i]};
  out->nvictims = y->nvictims;
  return TS_OK;
}

/* After a failure: frees unlinked records and puts every popped head back in front. */
static void undo(cyc *y) {
  for (size_t i = 0; i < y->n; i++) {
    ts_free(y->e[i].adm);
    y->e[i].adm = NULL;
  }
  for (size_t i = 0; i < y->nh; i++)
    (void)q__queues_requeue(y->qs, y->h[i].wl, Q__RQ_FAILED_AFTER_NOMINATION, false);
}

ts_rc q_cycle(q_tree *t, q_queues *qs, const q_config *cfg, const q_hooks *hooks, int64_t now_ns,
              q_result *out, ts_err *err) {
  cyc y;
  int64_t *saved;
  ts_rc rc;
  memset(out, 0, sizeof *out);
  ts_arena_init(&out->arena, CYCLE_ARENA_CHUNK);
  memset(&y, 0, sizeof y);
  y.c = (q__ctx){t, cfg, hooks ? hooks : &no_hooks, &out->arena, now_ns, NULL, 0};
  y.qs = qs, y.err = err, y.memo = q__queues_memo(qs);
  if ((rc = q__memo_sync(y.memo, t, qs)) != TS_OK) goto out;
  if (!(saved = ts_arena_alloc(&out->arena, (q__usage_words(t) + 1) * sizeof *saved))) {
    rc = TS_ENOMEM;
    goto out;
  }
  q__usage_save(t, saved);
  if ((rc = q__queues_heads(qs, t, &out->arena, &y.h, &y.nh)) != TS_OK) goto out;
  if ((rc = setup(&y, y.h, y.nh)) != TS_OK) goto fail;
  for (size_t i = 0; rc == TS_OK && i < y.n; i++) rc = nominate(&y, &y.e[i]);
  if (rc == TS_OK) rc = cfg->fair_sharing ? run_fair(&y) : run_classical(&y);
  if (rc != TS_OK) goto fail;
  rc = settle(&y, saved);
  {
    ts_rc rc2 = finish(&y, out);
    if (rc == TS_OK) rc = rc2;
  }
  goto out;
fail:
  q__usage_restore(t, saved);
  undo(&y);
out:
  ts_free(y.c.scratch);
  if (rc != TS_OK && (!err || err->code == TS_OK))
    ts_err_set(err, rc, "admission cycle: %s", ts_strerror(rc));
  return rc;
}

void q_result_free(q_result *r) {
  ts_arena_free(&r->arena);
  memset(r, 0, sizeof *r);
}
