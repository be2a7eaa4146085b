/* queueing/node.c - the arithmetic of quota nodes, exactly as Kueue's resource_node.go and
 * fair_sharing.go compute it.
 *
 * A node's SubtreeQuota is its own nominal quota plus what its children lend (their subtree
 * quota above their guaranteed part, which is what a lendingLimit keeps back). Usage is
 * stored locally up to the guaranteed part and bubbles up to the parent beyond it. Every walk
 * is bounded by the cohort depth, which the tree limits to Q__MAX_DEPTH. */
#include "queueing/q_int.h"

#include <math.h>

static int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* The part of the subtree quota that is not lent to the parent. */
int64_t q__guaranteed(const q__node *n, uint32_t fr) {
  if (n->llimit[fr] == Q__NONE) return 0;
  return max64(0, n->subtree[fr] - n->llimit[fr]);
}

/* Guaranteed quota not used yet: available here, invisible to the parent. */
int64_t q__local_available(const q__node *n, uint32_t fr) {
  return max64(0, q__guaranteed(n, fr) - n->usage[fr]);
}

/* What remains for n: what it keeps locally plus what its parent has left, capped by the
 * borrowing limit net of what n already stores in and takes from the parent. */
int64_t q__available_raw(const q__node *n, uint32_t fr) {
  int64_t pa;
  if (!n->parent) return n->subtree[fr] - n->usage[fr];
  pa = q__available_raw(n->parent, fr);
  if (n->blimit[fr] != Q__NONE) {
    int64_t g = q__guaranteed(n, fr);
    int64_t stored = n->subtree[fr] - g, used = max64(0, n->usage[fr] - g);
    pa = min64(ts_add_sat(stored - used, n->blimit[fr]), pa);
  }
  return ts_add_sat(q__local_available(n, fr), pa);
}

int64_t q__available(const q__node *n, uint32_t fr) {
  return max64(0, q__available_raw(n, fr));
}

int64_t q__potential(const q__node *n, uint32_t fr) {
  int64_t a;
  if (!n->parent) return n->subtree[fr];
  a = ts_add_sat(q__guaranteed(n, fr), q__potential(n->parent, fr));
  if (n->blimit[fr] != Q__NONE) a = min64(ts_add_sat(n->subtree[fr], n->blimit[fr]), a);
  return a;
}

void q__add_usage(q__node *n, uint32_t fr, int64_t v) {
  int64_t local = q__local_available(n, fr);
  n->usage[fr] = ts_add_sat(n->usage[fr], v);
  if (n->parent && v > local) q__add_usage(n->parent, fr, v - local);
}

void q__remove_usage(q__node *n, uint32_t fr, int64_t v) {
  int64_t stored = n->usage[fr] - q__guaranteed(n, fr);
  n->usage[fr] -= v;
  if (stored <= 0 || !n->parent) return;
  q__remove_usage(n->parent, fr, min64(v, stored));
}

bool q__borrowing_with(const q__node *n, uint32_t fr, int64_t v) {
  return (n->is_cq ? n->nominal[fr] : n->subtree[fr]) < ts_add_sat(n->usage[fr], v);
}

bool q__within_nominal(const q__node *n, const uint32_t *frs, uint32_t nfrs) {
  for (uint32_t i = 0; i < nfrs; i++)
    if (n->usage[frs[i]] > n->subtree[frs[i]]) return false;
  return true;
}

bool q__fits_in_quota(const q__node *n, const uint32_t *fr, const int64_t *v, uint32_t nv,
                      int64_t *rem) {
  bool fits = true;
  for (uint32_t i = 0; i < nv; i++) {
    if (ts_add_sat(n->usage[fr[i]], v[i]) > n->subtree[fr[i]]) fits = false;
    rem[i] = max64(0, v[i] - q__local_available(n, fr[i]));
  }
  return fits;
}

/* Kueue's FindHeightOfLowestSubtreeThatFits: 0 when the queue holds v itself, else the height
 * of the first ancestor that has room for what remains after each level's local part. */
int q__find_height(const q__node *cq, uint32_t fr, int64_t v, bool *partial) {
  int64_t rem;
  const q__node *p;
  if (!cq->parent || !q__borrowing_with(cq, fr, v)) {
    *partial = cq->parent != NULL;
    return 0;
  }
  rem = v - q__local_available(cq, fr);
  for (p = cq->parent; p; p = p->parent) {
    if (!q__borrowing_with(p, fr, rem)) {
      *partial = p->parent != NULL;
      return p->height;
    }
    rem -= q__local_available(p, fr);
  }
  *partial = false;
  return q__root((q__node *)cq)->height;
}

/* ---- dominant resource share ----------------------------------------------------------- */

/* Per resource, what n uses above its subtree quota, relative to what its parent could lend
 * (per mille); the share is the largest of these ratios. A root has no share. */
q__drs q__share(const q_tree *t, const q__node *n) {
  q__drs d = {0.0, n->weight, false};
  if (!n->parent || !t->nres) return d;
  for (uint32_t r = 0; r < t->nres; r++) { /* FRs of resource r: r, r + nres, ... */
    int64_t borrowed = 0, lend = n->parent->lendable[r];
    double ratio;
    for (uint32_t fr = r; fr < t->nfr; fr += t->nres) {
      int64_t b = n->usage[fr] - n->subtree[fr];
      if (b > 0) borrowed += b, d.borrowing = true;
    }
    if (borrowed <= 0 || lend <= 0) continue;
    ratio = (double)borrowed * 1000.0 / (double)lend;
    if (ratio > d.ratio) d.ratio = ratio;
  }
  return d;
}

static bool zero_weight_borrows(q__drs d) {
  return d.weight == 0.0 && d.borrowing;
}

bool q__drs_zero(q__drs d) {
  return d.ratio == 0.0;
}

double q__drs_value(q__drs d) {
  if (zero_weight_borrows(d)) return INFINITY;
  if (d.ratio == 0.0) return 0.0;
  return d.ratio / d.weight;
}

static int cmp_double(double a, double b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

int q__drs_cmp(q__drs a, q__drs b) {
  bool az = zero_weight_borrows(a), bz = zero_weight_borrows(b);
  if (az && bz) return cmp_double(a.ratio, b.ratio);
  if (az) return 1;
  if (bz) return -1;
  return cmp_double(q__drs_value(a), q__drs_value(b));
}
