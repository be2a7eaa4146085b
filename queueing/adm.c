/* queueing/adm.c - admitted workloads as the tree keeps them: one record per workload with its
 * usage per flavor-resource and a copy of its admission, charged to its ClusterQueue and the
 * cohorts above it. One allocation per admission; removal is O(1) plus the charge walk. */
#include "queueing/q_int.h"

#include <stdlib.h>
#include <string.h>

/* Sums the admission's usage per FR into acc (nfr entries); resources or flavors the tree
 * does not know carry no quota and are skipped. Returns the number of distinct FRs. */
static uint32_t sum_usage(const q_tree *t, const q_admission *a, int64_t *acc, bool *seen) {
  uint32_t n = 0;
  for (uint32_t p = 0; p < a->npodsets; p++)
    for (uint32_t r = 0; r < a->podsets[p].nrf; r++) {
      const q_rflavor *rf = &a->podsets[p].rf[r];
      int f = q__flavor_index(t, rf->flavor);
      uint32_t fr;
      if (f < 0 || q__slot(t, rf->resource) < 0) continue;
      fr = q__fr(t, (uint32_t)f, rf->resource);
      if (!seen[fr]) seen[fr] = true, n++;
      acc[fr] = ts_add_sat(acc[fr], rf->total);
    }
  return n;
}

static size_t total_rf(const q_admission *a) {
  size_t n = 0;
  for (uint32_t p = 0; p < a->npodsets; p++) n += a->podsets[p].nrf;
  return n;
}

/* Copies the admission into the record's block, interning its names. */
static ts_rc copy_admission(q__adm *r, const q_admission *a, q_psa *ps, q_rflavor *rf) {
  r->a.cluster_queue = r->cq->node.name;
  r->a.podsets = ps;
  r->a.npodsets = a->npodsets;
  for (uint32_t p = 0; p < a->npodsets; p++) {
    ps[p] = a->podsets[p];
    ps[p].name = a->podsets[p].name ? ts_intern_cstr(a->podsets[p].name) : NULL;
    ps[p].rf = rf;
    for (uint32_t k = 0; k < a->podsets[p].nrf; k++) {
      rf[k] = a->podsets[p].rf[k];
      if (!(rf[k].flavor = ts_intern_cstr(rf[k].flavor))) return TS_ENOMEM;
    }
    rf += a->podsets[p].nrf;
  }
  return TS_OK;
}

static void fill_use(const q_tree *t, q__adm *r, const int64_t *acc, const bool *seen) {
  for (uint32_t fr = 0; fr < t->nfr; fr++)
    if (seen[fr]) r->fr[r->nuse] = fr, r->amount[r->nuse++] = acc[fr];
}

ts_rc q__adm_new(q_tree *t, q__cq *cq, const q_workload *wl, const q_admission *a, q__adm **out,
                 ts_err *err) {
  ts_rc rc = TS_ENOMEM;
  int64_t *acc = ts_calloc(t->nfr + 1, sizeof *acc);
  bool *seen = ts_calloc(t->nfr + 1, sizeof *seen);
  uint32_t nuse;
  size_t nrf = total_rf(a), size;
  q__adm *r = NULL;
  *out = NULL;
  if (!acc || !seen) goto out;
  nuse = sum_usage(t, a, acc, seen);
  size = sizeof *r + nuse * sizeof(int64_t) + a->npodsets * sizeof(q_psa) +
         nrf * sizeof(q_rflavor) + nuse * sizeof(uint32_t);
  if (!(r = ts_calloc(1, size))) goto out;
  r->wl = wl;
  r->cq = cq;
  r->amount = (int64_t *)(r + 1);
  r->fr = (uint32_t *)((char *)r + size - nuse * sizeof(uint32_t));
  fill_use(t, r, acc, seen);
  if ((rc = copy_admission(r, a, (q_psa *)(r->amount + nuse),
                           (q_rflavor *)((q_psa *)(r->amount + nuse) + a->npodsets))))
    goto out;
  r->evicting = wl->evicting;
  *out = r;
  r = NULL;
out:
  ts_free(r);
  ts_free(acc);
  ts_free(seen);
  if (rc != TS_OK) ts_err_set(err, rc, "admitting %s: %s", wl->key, ts_strerror(rc));
  return rc;
}

void q__adm_charge(q_tree *t, q__adm *r) {
  (void)t;
  for (uint32_t i = 0; i < r->nuse; i++) q__add_usage(&r->cq->node, r->fr[i], r->amount[i]);
}

void q__adm_uncharge(q_tree *t, q__adm *r) {
  (void)t;
  for (uint32_t i = 0; i < r->nuse; i++) q__remove_usage(&r->cq->node, r->fr[i], r->amount[i]);
}

ts_rc q__adm_link(q_tree *t, q__adm *r) {
  ts_rc rc;
  r->slot = (uint32_t)r->cq->adm.n;
  if ((rc = ts_vec_push(&r->cq->adm, r)) != TS_OK) return rc;
  if ((rc = ts_map_put(&t->adm_by_key, r->wl->key, strlen(r->wl->key), r, NULL)) != TS_OK) {
    r->cq->adm.n--;
    return rc;
  }
  t->sorted_ok = false;
  return TS_OK;
}

bool q__adm_uses(const q__adm *r, const uint32_t *frs, uint32_t nfrs) {
  for (uint32_t i = 0; i < r->nuse; i++)
    for (uint32_t k = 0; k < nfrs; k++)
      if (r->fr[i] == frs[k]) return true;
  return false;
}

/* ---- public ---------------------------------------------------------------------------- */

ts_rc q_tree_admit(q_tree *t, const q_workload *wl, ts_err *err) {
  q__cq *cq;
  q__adm *r;
  ts_rc rc;
  if (!wl->admission) return ts_err_set(err, TS_EINVAL, "workload %s: no admission", wl->key);
  if (!(cq = q__cq_get(t, wl->admission->cluster_queue)))
    return ts_err_set(err, TS_ENOTFOUND,
                      "workload %s: status.admission.clusterQueue: "
                      "ClusterQueue \"%s\" not found",
                      wl->key, wl->admission->cluster_queue);
  if (ts_map_get(&t->adm_by_key, wl->key, strlen(wl->key)))
    return ts_err_set(err, TS_EEXIST, "workload %s: admitted already", wl->key);
  if ((rc = q__adm_new(t, cq, wl, wl->admission, &r, err)) != TS_OK) return rc;
  q__adm_charge(t, r);
  if ((rc = q__adm_link(t, r)) != TS_OK) {
    q__adm_uncharge(t, r);
    ts_free(r);
    return ts_err_set(err, rc, "admitting %s: %s", wl->key, ts_strerror(rc));
  }
  return TS_OK;
}

ts_rc q_tree_remove(q_tree *t, const char *key) {
  q__adm *r = ts_map_del(&t->adm_by_key, key, strlen(key));
  q__cq *cq;
  if (!r) return TS_ENOTFOUND;
  cq = r->cq;
  q__adm_uncharge(t, r);
  cq->adm.v[r->slot] = cq->adm.v[cq->adm.n - 1];
  cq->adm.v[r->slot]->slot = r->slot;
  cq->adm.n--;
  cq->removed++;
  t->sorted_ok = false;
  ts_free(r);
  return TS_OK;
}

const q_admission *q_tree_admission(const q_tree *t, const char *key) {
  const q__adm *r = ts_map_get(&t->adm_by_key, key, strlen(key));
  return r ? &r->a : NULL;
}

static int adm_key_cmp(const void *a, const void *b) {
  return strcmp((*(q__adm *const *)a)->wl->key, (*(q__adm *const *)b)->wl->key);
}

const q_workload *q_tree_admitted(q_tree *t, size_t i, const q_admission **adm) {
  if (!t->sorted_ok) {
    size_t it = 0;
    const ts_map_slot *s;
    t->sorted.n = 0;
    if (ts_vec_reserve(&t->sorted, t->adm_by_key.count + 1) != TS_OK) return NULL;
    while (ts_map_next(&t->adm_by_key, &it, &s)) t->sorted.v[t->sorted.n++] = s->value;
    qsort(t->sorted.v, t->sorted.n, sizeof *t->sorted.v, adm_key_cmp);
    t->sorted_ok = true;
  }
  if (i >= t->sorted.n) return NULL;
  if (adm) *adm = &t->sorted.v[i]->a;
  return t->sorted.v[i]->wl;
}
