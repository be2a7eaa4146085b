/* queueing/foreign.c - Volcano's and KAI Scheduler's queues in the quota tree.
 *
 * The model decodes each such Queue as the ClusterQueue that means the same
 * (model/decode_queues.c). Here they take their place in the tree: a queue that another queue of
 * its kind names as parent is a Cohort (only leaf queues hold jobs, in both projects), every
 * other one a ClusterQueue; a queue without a parent goes under its kind's root cohort, named
 * by the API group, whose own quota is the cluster's capacity beyond its children's quotas
 * (tree.c, q__foreign_roots). Both projects divide the cluster among their queues, where Kueue
 * divides only the quotas; the root makes what nobody's quota holds borrowable by all.
 *
 * A parent's own quota counts what its children's do not: nominal = max(0, parent - sum of the
 * children's), and its borrowing limit what its limit leaves above max(parent, children's). */
#include "queueing/q_int.h"

#include <string.h>

const char *q__kind_label(model_kind k) {
  switch (k) {
  case MODEL_VOLCANO_QUEUE:
    return "Volcano Queue";
  case MODEL_KAI_QUEUE:
    return "KAI Queue";
  case MODEL_COHORT:
    return "Cohort";
  default:
    return "ClusterQueue";
  }
}

static ts_rc push(q_tree *t, model_obj ***v, size_t *n, size_t *cap, model_obj *o) {
  if (*n == *cap) {
    size_t ncap = *cap ? *cap * 2 : 16;
    model_obj **nv = ts_arena_alloc(&t->arena, ncap * sizeof *nv);
    if (!nv) return TS_ENOMEM;
    if (*n) memcpy(nv, *v, *n * sizeof *nv);
    *v = nv, *cap = ncap;
  }
  (*v)[(*n)++] = o;
  return TS_OK;
}

/* The quota of resource res in a queue's only flavor, or NULL. */
static const model_quota *quota_of(const model_cluster_queue *q, const char *res) {
  for (uint32_t g = 0; g < q->ngroups; g++)
    for (uint32_t f = 0; f < q->groups[g].nflavors; f++)
      for (uint32_t r = 0; r < q->groups[g].flavors[f].nresources; r++)
        if (q->groups[g].flavors[f].resources[r].resource == res)
          return &q->groups[g].flavors[f].resources[r];
  return NULL;
}

static ts_quantity zero(void) {
  return ts_quantity_from_int(0, TS_QFMT_DECIMAL_SI);
}

/* The queues of one kind grouped by parent: kids[at[i] .. at[i] + n[i]) are the children of
 * the queue whose name is the key, found in O(1), so that the tree is built in O(queues). */
typedef struct kidmap {
  ts_map by_parent;       /* parent name -> 1 + index into at/cnt */
  const model_obj **kids; /* the queues, grouped by parent (arena) */
  uint32_t *at, *cnt;     /* per parent: first kid and how many (arena) */
} kidmap;

static int by_parent_cmp(const void *a, const void *b) {
  const model_cluster_queue *x = *(const model_cluster_queue *const *)a;
  const model_cluster_queue *y = *(const model_cluster_queue *const *)b;
  return strcmp(x->cohort ? x->cohort : "", y->cohort ? y->cohort : "");
}

static ts_rc kidmap_build(q_tree *t, model_obj **v, size_t n, kidmap *km) {
  size_t np = 0;
  ts_map_init(&km->by_parent);
  km->kids = q__zalloc(t, (n + 1) * sizeof *km->kids);
  km->at = q__zalloc(t, (n + 1) * sizeof *km->at);
  km->cnt = q__zalloc(t, (n + 1) * sizeof *km->cnt);
  if (!km->kids || !km->at || !km->cnt) return TS_ENOMEM;
  if (n) memcpy(km->kids, v, n * sizeof *v);
  qsort(km->kids, n, sizeof *km->kids, by_parent_cmp);
  for (size_t i = 0; i < n; i++) {
    const char *p = ((const model_cluster_queue *)km->kids[i])->cohort;
    if (!p) continue;
    if (np && !strcmp(((const model_cluster_queue *)km->kids[km->at[np - 1]])->cohort, p)) {
      km->cnt[np - 1]++;
      continue;
    }
    km->at[np] = (uint32_t)i, km->cnt[np] = 1;
    if (ts_map_put(&km->by_parent, p, strlen(p), (void *)(uintptr_t)(++np), NULL) != TS_OK)
      return TS_ENOMEM;
  }
  return TS_OK;
}

/* The children of the queue named name: *n of them from the returned pointer. */
static const model_obj *const *kids_of(const kidmap *km, const char *name, uint32_t *n) {
  uintptr_t k = (uintptr_t)ts_map_get(&km->by_parent, name, strlen(name));
  *n = k ? km->cnt[k - 1] : 0;
  return k ? km->kids + km->at[k - 1] : NULL;
}

/* Parent p (its children in km) as a Cohort under parent, its quotas net of its children's.
 * Sums of the children's quotas never fail: past what a quantity holds they round (a quota
 * beyond any cluster's capacity is "more than anything" whatever its last digits). */
static ts_rc as_cohort(q_tree *t, const model_cluster_queue *p, const kidmap *km,
                       const char *parent, model_obj **out) {
  model_cohort *c = q__zalloc(t, sizeof *c);
  uint32_t nk;
  const model_obj *const *kids = kids_of(km, p->obj.name, &nk);
  if (!c) return TS_ENOMEM;
  c->obj = p->obj;
  c->parent = parent;
  c->has_fair_weight = p->has_fair_weight;
  c->fair_weight = p->fair_weight;
  c->ngroups = p->ngroups;
  if (!(c->groups = q__zalloc(t, (p->ngroups + 1) * sizeof *c->groups))) return TS_ENOMEM;
  for (uint32_t g = 0; g < p->ngroups; g++) {
    const model_resource_group *pg = &p->groups[g];
    model_resource_group *cg = &c->groups[g];
    *cg = *pg;
    if (!(cg->flavors = q__zalloc(t, (pg->nflavors + 1) * sizeof *cg->flavors))) return TS_ENOMEM;
    for (uint32_t f = 0; f < pg->nflavors; f++) {
      const model_flavor_quotas *pf = &pg->flavors[f];
      model_flavor_quotas *cf = &cg->flavors[f];
      *cf = *pf;
      if (!(cf->resources = q__zalloc(t, (pf->nresources + 1) * sizeof *cf->resources)))
        return TS_ENOMEM;
      for (uint32_t r = 0; r < pf->nresources; r++) {
        const model_quota *pq = &pf->resources[r];
        model_quota *cq = &cf->resources[r];
        ts_quantity sum = zero(), held, cap;
        *cq = *pq;
        for (uint32_t i = 0; i < nk; i++) {
          const model_quota *kq = quota_of((const model_cluster_queue *)kids[i], pq->resource);
          if (kq) sum = ts_quantity_add_sat(&sum, &kq->nominal);
        }
        held = ts_quantity_cmp(&pq->nominal, &sum) >= 0 ? pq->nominal : sum;
        cq->nominal = ts_quantity_sub0(&pq->nominal, &sum);
        if (pq->has_borrowing) {
          cap = ts_quantity_add_sat(&pq->nominal, &pq->borrowing);
          cq->borrowing = ts_quantity_sub0(&cap, &held);
        }
        if (pq->has_lending && ts_quantity_cmp(&cq->lending, &cq->nominal) > 0)
          cq->lending = cq->nominal;
      }
    }
  }
  *out = (model_obj *)c;
  return TS_OK;
}

/* Why a queue is left out (its name is taken), or NULL. */
static const char *taken(const model *m, model_kind kind, const char *name) {
  if (model_get(m, MODEL_CLUSTER_QUEUE, NULL, name)) return "a ClusterQueue";
  if (model_get(m, MODEL_COHORT, NULL, name)) return "a Cohort";
  if (kind == MODEL_KAI_QUEUE && model_get(m, MODEL_VOLCANO_QUEUE, NULL, name))
    return "a Volcano Queue";
  return NULL;
}

static ts_rc one_kind(q_tree *t, model_kind kind, q__foreign *out, size_t *cqcap, size_t *chcap) {
  model_obj **v = NULL;
  size_t n = 0;
  kidmap km;
  ts_rc rc = model_list(t->m, kind, &v, &n);
  const char *root = ts_intern_cstr(model_queue_flavor(kind));
  const char *pfield = kind == MODEL_KAI_QUEUE ? "spec.parentQueue" : "spec.parent";
  ts_map_init(&km.by_parent);
  if (rc == TS_OK && n && !root) rc = TS_ENOMEM;
  if (rc == TS_OK) rc = kidmap_build(t, v, n, &km);
  for (size_t i = 0; rc == TS_OK && i < n; i++) {
    const model_cluster_queue *q = (const model_cluster_queue *)v[i];
    const char *parent = q->cohort, *other = taken(t->m, kind, q->obj.name);
    model_obj *o;
    if (other) {
      rc = q__problem(t, "%s %s: metadata.name: %s has this name; the queue is left out",
                      q__kind_label(kind), q->obj.name, other);
      continue;
    }
    if (parent && !model_get(t->m, kind, NULL, parent)) {
      rc = q__problem(t, "%s %s: %s: Queue \"%s\" not found; the queue is put under %s",
                      q__kind_label(kind), q->obj.name, pfield, parent, root);
      parent = NULL;
      if (rc != TS_OK) break;
    }
    if (!parent) parent = root;
    if (ts_map_get(&km.by_parent, q->obj.name, strlen(q->obj.name))) {
      if ((rc = as_cohort(t, q, &km, parent, &o)) == TS_OK)
        rc = push(t, &out->cohorts, &out->ncohorts, chcap, o);
    } else {
      model_cluster_queue *c = q__zalloc(t, sizeof *c);
      if (!c) {
        rc = TS_ENOMEM;
        break;
      }
      *c = *q; /* shallow: the groups stay the model's */
      c->cohort = parent;
      rc = push(t, &out->cqs, &out->ncqs, cqcap, (model_obj *)c);
    }
  }
  if (rc == TS_OK && n) {
    model_resource_flavor *rf = q__zalloc(t, sizeof *rf);
    if (!rf) rc = TS_ENOMEM;
    if (rc == TS_OK) {
      rf->obj.kind = MODEL_RESOURCE_FLAVOR;
      rf->obj.name = ts_arena_strndup(&t->arena, root, strlen(root));
      rf->obj.key = rf->obj.name;
      rf->obj.ns = "";
      rc = q__add_flavor(t, root, rf); /* no labels, no taints: every node */
    }
    t->froot[kind == MODEL_KAI_QUEUE] = root;
  }
  ts_map_free(&km.by_parent);
  ts_free(v);
  return rc;
}

ts_rc q__foreign_build(q_tree *t, q__foreign *out) {
  size_t cqcap = 0, chcap = 0;
  ts_rc rc;
  memset(out, 0, sizeof *out);
  if ((rc = one_kind(t, MODEL_VOLCANO_QUEUE, out, &cqcap, &chcap)) != TS_OK) return rc;
  return one_kind(t, MODEL_KAI_QUEUE, out, &cqcap, &chcap);
}
