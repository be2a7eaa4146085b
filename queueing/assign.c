/* queueing/assign.c - flavor assignment, as Kueue's flavorassigner does it.
 *
 * Pod sets are assigned in order; within a pod set each resource group is assigned once: its
 * flavors are tried in the ClusterQueue's order, and for each flavor every requested resource
 * of the group gets a mode (fit, preempt, reclaim, no candidates, no fit) and a borrowing
 * level. flavorFungibility decides whether the first workable flavor ends the search
 * (MayStopSearch) or the next one is tried (TryNextFlavor); the best one seen wins otherwise.
 * Quota taken by earlier pod sets of the same workload counts against later ones. The
 * scheduler's placement hook may veto a flavor, which then counts as no fit.
 *
 * Cost per pod set: O(flavors x resources x tree depth), plus a preemption simulation for a
 * flavor-resource that only fits by preempting. */
#include "queueing/q_int.h"

#include <stdio.h>
#include <string.h>

#define WHY_MAX 2048 /* reasons collected for one pod set */

/* A flavor's mode: preemption need and borrowing level (Kueue's granularMode). */
typedef struct gmode {
  q__pmode p; /* preemption mode */
  int borrow; /* borrowing level, 0 = none */
} gmode;

static const gmode WORST = {Q__P_NOFIT, 1 << 30};

/* One resource a pod set asks for. */
typedef struct preq {
  uint16_t id;   /* resource id */
  int64_t total; /* per-pod request x count */
} preq;

/* State of one assignment. */
typedef struct ast {
  q__ctx *c;            /* cycle */
  q__cq *cq;            /* the queue */
  const q_workload *wl; /* the workload */
  int64_t *acc;         /* [nfr] usage of the pod sets assigned so far */
  bool *touched;        /* [nfr] FRs in acc */
  const int16_t *start; /* [pod sets x groups] where each search starts, or NULL */
  int16_t *next;        /* [pod sets x groups] where it resumes next time */
  char why[WHY_MAX];    /* reasons of the current pod set */
  size_t wlen;          /* bytes in why */
  ts_rc rc;             /* first failure (out of memory) */
} ast;

static void why(ast *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends a reason, ", "-separated, truncating silently at WHY_MAX. */
static void why(ast *s, const char *fmt, ...) {
  va_list ap;
  int n;
  if (s->wlen + 3 >= WHY_MAX) return;
  if (s->wlen) s->why[s->wlen++] = ',', s->why[s->wlen++] = ' ';
  va_start(ap, fmt);
  n = vsnprintf(s->why + s->wlen, WHY_MAX - s->wlen, fmt, ap);
  va_end(ap);
  s->wlen = n < 0 ? s->wlen : s->wlen + (size_t)n;
  if (s->wlen >= WHY_MAX) s->wlen = WHY_MAX - 1;
}

static const char *amount_str(const ast *s, int res, int64_t v, char *buf) {
  q_format(model_resources_of(s->c->t->m), res, v, buf);
  return buf;
}

/* ---- modes ----------------------------------------------------------------------------- */

/* Kueue's isPreferred with the default preference (borrowing over preemption). */
static bool preferred(gmode a, gmode b) {
  if (a.p == Q__P_NOFIT) return false;
  if (b.p == Q__P_NOFIT) return true;
  if ((a.p == Q__P_NOCAND) != (b.p == Q__P_NOCAND)) return a.p != Q__P_NOCAND;
  if (a.p != b.p) return a.p > b.p;
  return a.borrow < b.borrow;
}

/* Kueue's shouldTryNextFlavor. */
static bool try_next(gmode m, const q__cq *cq) {
  if (m.p == Q__P_NOFIT || m.p == Q__P_NOCAND) return true;
  if ((m.p == Q__P_PREEMPT || m.p == Q__P_RECLAIM) &&
      cq->obj->when_can_preempt == MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR)
    return true;
  return m.borrow != 0 && cq->obj->when_can_borrow == MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR;
}

static bool can_preempt_while_borrowing(const ast *s) {
  const model_cluster_queue *o = s->cq->obj;
  return o->borrow_cohort != MODEL_PREEMPT_NEVER ||
         (s->c->cfg->fair_sharing && o->reclaim_cohort != MODEL_PREEMPT_NEVER);
}

/* Kueue's fitsResourceQuota: how req more of fr (on top of what earlier pod sets assumed)
 * could be had in this queue. */
static gmode fits_quota(ast *s, uint32_t fr, int64_t assumed, int64_t req) {
  const q__node *n = &s->cq->node;
  int res = q__fr_res(s->c->t, fr);
  const char *fl = s->c->t->fname[q__fr_flavor(s->c->t, fr)],
             *rn = model_resource_name(model_resources_of(s->c->t->m), res);
  int64_t avail = q__available(n, fr), cap = q__potential(n, fr), val = ts_add_sat(assumed, req);
  char b1[TS_QUANTITY_STR_MAX], b2[TS_QUANTITY_STR_MAX], b3[TS_QUANTITY_STR_MAX];
  bool partial;
  gmode m = {Q__P_NOFIT, 0};
  if (val > cap) {
    why(s,
        "insufficient quota for %s in flavor %s, previously considered podsets requests (%s) + "
        "current podset request (%s) > maximum capacity (%s)",
        rn, fl, amount_str(s, res, assumed, b1), amount_str(s, res, req, b2),
        amount_str(s, res, cap, b3));
    return m;
  }
  m.borrow = q__find_height(n, fr, val, &partial);
  if (val <= avail) return (gmode){Q__P_FIT, m.borrow};
  why(s, "insufficient unused quota for %s in flavor %s, %s more needed", rn, fl,
      amount_str(s, res, val - avail, b1));
  if (n->nominal[fr] >= val || partial || can_preempt_while_borrowing(s)) {
    ts_rc rc = q__simulate_preemption(s->c, s->cq, s->wl, fr, val, &m.p, &m.borrow);
    if (rc != TS_OK && s->rc == TS_OK) s->rc = rc;
  }
  return m;
}

/* ---- flavor checks --------------------------------------------------------------------- */

static bool tolerated(const q_podset *ps, const model_resource_flavor *rf, const model_taint *x) {
  for (uint32_t i = 0; i < ps->ntolerations; i++)
    if (model_tolerates(&ps->tolerations[i], x)) return true;
  for (uint32_t i = 0; i < rf->ntolerations; i++)
    if (model_tolerates(&rf->tolerations[i], x)) return true;
  return false;
}

/* Taints of the flavor against the pod set's tolerations, and the pod set's nodeSelector
 * restricted to the label keys the flavor defines. */
static bool flavor_matches(ast *s, const q_podset *ps, uint32_t f) {
  const model_resource_flavor *rf = s->c->t->fobj[f];
  const char *name = s->c->t->fname[f];
  if (!rf) {
    why(s, "flavor %s not found", name);
    return false;
  }
  for (uint32_t i = 0; i < rf->nnode_taints; i++) {
    const model_taint *x = &rf->node_taints[i];
    if (x->effect != MODEL_EFFECT_NO_SCHEDULE && x->effect != MODEL_EFFECT_NO_EXECUTE) continue;
    if (tolerated(ps, rf, x)) continue;
    why(s, "untolerated taint %s=%s:%s in flavor %s", x->key, x->value,
        model_effect_name(x->effect), name);
    return false;
  }
  for (uint32_t i = 0; ps->node_selector && i < ps->node_selector->n; i++) {
    const model_kv *kv = &ps->node_selector->v[i];
    const char *have = model_labels_get(&rf->node_labels, kv->key);
    if (have && have != kv->value) {
      why(s, "flavor %s doesn't match node affinity", name);
      return false;
    }
  }
  return true;
}

/* Asks the scheduler whether the pod set's pods could be placed on this flavor's nodes. */
static bool placeable(ast *s, uint32_t psi, int32_t count, uint32_t f, gmode m) {
  char buf[256];
  q_candidate cand;
  if (!s->c->hooks->placeable) return true;
  cand.wl = s->wl, cand.podset = psi, cand.count = count;
  cand.flavor = s->c->t->fname[f], cand.rf = s->c->t->fobj[f];
  cand.mode = m.p == Q__P_FIT ? Q_FIT : Q_PREEMPT;
  buf[0] = 0;
  if (s->c->hooks->placeable(s->c->hooks->ctx, &cand, buf, sizeof buf)) return true;
  buf[sizeof buf - 1] = 0;
  why(s, "flavor %s: %s", cand.flavor, buf[0] ? buf : "pods cannot be placed");
  return false;
}

/* ---- groups ---------------------------------------------------------------------------- */

/* The best flavor of group g for the pod set's requests (tmp: room for nrq modes); rmode[k]
 * receives each request's mode and *maxb the largest borrowing level among them. The search starts
 * where the last one stopped (*next in, Kueue's LastAssignment) and *next receives where the next
 * one starts: after the flavor it stopped at, or at the first once it reached the last. Returns the
 * flavor index, or -1 when no flavor works. */
static int find_flavor(ast *s, uint32_t psi, int32_t count, int g, const preq *rq, uint32_t nrq,
                       q_mode *rmode, q_mode *tmp, int *maxb, int16_t *next) {
  const q__group *grp = &s->cq->groups[g];
  gmode best = WORST;
  int best_f = -1;
  uint32_t fi = *next > 0 && (uint32_t)*next < grp->nflavors ? (uint32_t)*next : 0, tried = fi;
  for (; fi < grp->nflavors && s->rc == TS_OK; fi++) {
    uint32_t f = grp->flavors[fi];
    gmode rep = {Q__P_FIT, 0};
    int mb = 0;
    tried = fi;
    if (!flavor_matches(s, &s->wl->podsets[psi], f)) continue;
    for (uint32_t k = 0; k < nrq; k++) tmp[k] = Q_FIT;
    for (uint32_t k = 0; k < nrq && rep.p != Q__P_NOFIT; k++) {
      uint32_t fr;
      gmode m;
      if (q__group_of(s->cq, rq[k].id) != g) continue;
      fr = q__fr(s->c->t, f, rq[k].id);
      m = fits_quota(s, fr, s->acc[fr], rq[k].total);
      if (preferred(rep, m)) rep = m;
      if (m.borrow > mb) mb = m.borrow;
      tmp[k] = m.p == Q__P_FIT ? Q_FIT : Q_PREEMPT;
    }
    if (rep.p != Q__P_NOFIT && !placeable(s, psi, count, f, rep)) rep.p = Q__P_NOFIT;
    if (!try_next(rep, s->cq) || preferred(rep, best)) {
      best = rep, best_f = (int)f, *maxb = mb;
      memcpy(rmode, tmp, nrq * sizeof *tmp);
      if (!try_next(rep, s->cq)) break;
    }
  }
  *next = best.p == Q__P_NOFIT || tried + 1 >= grp->nflavors ? 0 : (int16_t)(tried + 1);
  return best.p == Q__P_NOFIT ? -1 : best_f;
}

/* The pod set's requests x count, with "pods" = count when the queue covers pods (rq: room
 * for nrequests + 1). */
static uint32_t podset_requests(const q__cq *cq, const q_podset *ps, int32_t count, preq *rq) {
  uint32_t n = 0;
  bool pods = q__group_of(cq, MODEL_RES_PODS) >= 0, done = false;
  for (uint32_t i = 0; i < ps->nrequests; i++) {
    uint16_t id = ps->requests[i].id;
    if (pods && !done && id >= MODEL_RES_PODS) {
      rq[n++] = (preq){MODEL_RES_PODS, count};
      done = true;
      if (id == MODEL_RES_PODS) continue;
    }
    rq[n++] = (preq){id, ts_mul_sat(ps->requests[i].v, count)};
  }
  if (pods && !done) rq[n++] = (preq){MODEL_RES_PODS, count};
  return n;
}

/* Fills rf with the chosen flavor for every request of group g and charges acc. */
static void take_group(ast *s, q_psa *psa, int g, uint32_t f, const preq *rq, uint32_t nrq,
                       const q_mode *rmode) {
  for (uint32_t k = 0; k < nrq; k++) {
    uint32_t fr;
    if (q__group_of(s->cq, rq[k].id) != g) continue;
    fr = q__fr(s->c->t, f, rq[k].id);
    psa->rf[psa->nrf++] = (q_rflavor){rq[k].id, s->c->t->fname[f], rq[k].total, rmode[k]};
    s->acc[fr] = ts_add_sat(s->acc[fr], rq[k].total);
    s->touched[fr] = true;
    if (rmode[k] < psa->mode) psa->mode = rmode[k];
  }
}

/* Assigns one pod set; false when some group has no workable flavor. */
static bool assign_podset(ast *s, uint32_t psi, int32_t count, q_psa *psa, int *borrow) {
  size_t cap = (size_t)s->wl->podsets[psi].nrequests + 1;
  preq *rq = ts_arena_alloc(s->c->arena, cap * sizeof *rq);
  q_mode *rmode = ts_arena_alloc(s->c->arena, 2 * cap * sizeof *rmode);
  uint32_t nrq = 0, done = 0;
  int16_t *next = s->next + (size_t)psi * s->cq->ngroups;
  const int16_t *start = s->start ? s->start + (size_t)psi * s->cq->ngroups : NULL;
  psa->name = s->wl->podsets[psi].name, psa->count = count, psa->mode = Q_FIT;
  if (rq && rmode) nrq = podset_requests(s->cq, &s->wl->podsets[psi], count, rq);
  if (!rq || !rmode || !(psa->rf = ts_arena_alloc(s->c->arena, (nrq + 1) * sizeof *psa->rf))) {
    s->rc = TS_ENOMEM;
    return false;
  }
  for (uint32_t k = 0; k < nrq; k++) {
    int g = q__group_of(s->cq, rq[k].id), f, mb = 0;
    if (g < 0) {
      if (rq[k].total == 0 || s->cq->obj->uncovered_free) continue;
      why(s, "resource %s unavailable in ClusterQueue",
          model_resource_name(model_resources_of(s->c->t->m), rq[k].id));
      return false;
    }
    if (done & (1u << g)) continue;
    next[g] = start ? start[g] : 0;
    if ((f = find_flavor(s, psi, count, g, rq, nrq, rmode, rmode + cap, &mb, &next[g])) < 0)
      return false;
    take_group(s, psa, g, (uint32_t)f, rq, nrq, rmode);
    if (mb > *borrow) *borrow = mb;
    done |= 1u << g;
  }
  return true;
}

/* Total usage per FR from acc, in FR order. */
static ts_rc collect_usage(ast *s, q__asg *out) {
  uint32_t n = 0, nfr = s->c->t->nfr;
  for (uint32_t fr = 0; fr < nfr; fr++) n += s->touched[fr];
  out->fr = ts_arena_alloc(s->c->arena, (n + 1) * sizeof *out->fr);
  out->amount = ts_arena_alloc(s->c->arena, (n + 1) * sizeof *out->amount);
  if (!out->fr || !out->amount) return TS_ENOMEM;
  for (uint32_t fr = 0; fr < nfr; fr++)
    if (s->touched[fr]) out->fr[out->nuse] = fr, out->amount[out->nuse++] = s->acc[fr];
  return TS_OK;
}

static ts_rc init_state(ast *s, q__ctx *c, q__cq *cq, const q_workload *wl, const int16_t *start,
                        q__asg *out) {
  size_t nfr = c->t->nfr + 1, nnext = (size_t)wl->npodsets * cq->ngroups + 1;
  s->c = c, s->cq = cq, s->wl = wl, s->rc = TS_OK, s->wlen = 0, s->start = start;
  s->acc = ts_arena_alloc(c->arena, nfr * sizeof *s->acc);
  s->touched = ts_arena_alloc(c->arena, nfr * sizeof *s->touched);
  s->next = ts_arena_alloc(c->arena, nnext * sizeof *s->next);
  if (!s->acc || !s->touched || !s->next) return TS_ENOMEM;
  memset(s->next, 0, nnext * sizeof *s->next); /* groups not searched start over next time */
  out->next = s->next, out->ngroups = cq->ngroups;
  memset(s->acc, 0, nfr * sizeof *s->acc);
  memset(s->touched, 0, nfr * sizeof *s->touched);
  return TS_OK;
}

/* Records the reasons of pod set psi in the assignment's message. */
static void add_msg(ast *s, q__asg *out, uint32_t psi) {
  if (!s->wlen) return;
  s->why[s->wlen] = 0;
  out->msg = out->msg ? q__msg(s->c, "%s; couldn't assign flavors to pod set %s: %s", out->msg,
                               s->wl->podsets[psi].name, s->why)
                      : q__msg(s->c, "couldn't assign flavors to pod set %s: %s",
                               s->wl->podsets[psi].name, s->why);
}

ts_rc q__assign(q__ctx *c, q__cq *cq, const q_workload *wl, const int32_t *counts,
                const int16_t *start, q__asg *out) {
  ast s; /* about 2 KB of stack */
  ts_rc rc;
  memset(out, 0, sizeof *out);
  out->mode = Q_FIT;
  if (c->cfg->fault.stage == Q_FAULT_ASSIGN && c->cfg->fault.object &&
      !strcmp(c->cfg->fault.object, wl->key))
    return TS_EFAULT; /* injected: as an unexpected error of the search would */
  if ((rc = init_state(&s, c, cq, wl, start, out)) != TS_OK) return rc;
  out->nps = wl->npodsets;
  if (!(out->ps = ts_arena_alloc(c->arena, (wl->npodsets + 1) * sizeof *out->ps))) return TS_ENOMEM;
  memset(out->ps, 0, (wl->npodsets + 1) * sizeof *out->ps);
  for (uint32_t i = 0; i < wl->npodsets; i++) {
    int32_t count = counts ? counts[i] : wl->podsets[i].count;
    bool ok;
    s.wlen = 0;
    ok = assign_podset(&s, i, count, &out->ps[i], &out->borrow);
    if (s.rc != TS_OK) return s.rc;
    if (!ok) { /* Kueue keeps no progress for a pod set without flavors */
      memset(s.next + (size_t)i * cq->ngroups, 0, cq->ngroups * sizeof *s.next);
      out->ps[i].mode = Q_NO_FIT, out->ps[i].nrf = 0, out->mode = Q_NO_FIT;
      add_msg(&s, out, i);
      return TS_OK;
    }
    if (out->ps[i].mode < out->mode) out->mode = out->ps[i].mode;
    if (out->ps[i].mode != Q_FIT) add_msg(&s, out, i);
  }
  return collect_usage(&s, out);
}
