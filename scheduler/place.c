/* scheduler/place.c - placing pods and gangs on the cycle's view.
 *
 * A run of same-shape pods filters and scores the candidate nodes once and keeps the feasible
 * ones in a heap ordered by score; a placement changes only the chosen node, so only that node
 * is re-scored and every pod gets the node a full scan would pick.
 *
 * A gang is placed all or nothing on a tentative view: in the narrowest topology domain that
 * fits it (levels from the configuration, narrowest first; the tightest domain first when
 * bin-packing), else across the cluster; whatever was placed for a gang that does not fit is
 * given back before the next gang is tried, so nothing is reserved for it. Domains keep their
 * free capacity summed as pods are placed, so a domain that cannot hold a gang costs a
 * comparison per resource; the members go through classes restricted to the domain
 * (classes.c), so a gang costs what changed since the last gang of its shape there. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the heap of feasible nodes -------------------------------------------------------- */

static bool cand_better(const sched_view *v, const sched_cand *a, const sched_cand *b) {
  return a->score != b->score ? a->score > b->score
                              : sched__rank(v, a->node) < sched__rank(v, b->node);
}

static void heap_down(const sched_view *v, sched_cand *h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, best = i;
    sched_cand t;
    if (l < n && cand_better(v, &h[l], &h[best])) best = l;
    if (r < n && cand_better(v, &h[r], &h[best])) best = r;
    if (best == i) return;
    t = h[i], h[i] = h[best], h[best] = t;
    i = best;
  }
}

/* True when node k can take a pod of the run's shape: free resources and, for pods with
 * claims, an allocation of the claims there. */
static bool fits(sched_view *v, const sched_pending *p, uint32_t k) {
  return sched__resources_fit(v, p->pod, k) && (!p->nclaims || sched__dra_fits(v, p, k));
}

/* Fills the heap with the run's feasible nodes among subset (every node when NULL). */
static size_t fill_heap(sched_view *v, const sched_pending *first, const sched_sig *sig,
                        const sched_shape *shape, const uint32_t *subset, uint32_t nsubset) {
  sched_cand *h = v->heap;
  size_t nh = 0;
  uint32_t count = subset ? nsubset : sig->n;
  for (uint32_t j = 0; j < count; j++) {
    uint32_t k = subset ? subset[j] : sig->nodes[j];
    if ((!subset || sig->pass[k]) && fits(v, first, k))
      h[nh++] = (sched_cand){sched__score(v, shape, k), k};
  }
  for (size_t i = nh / 2; i-- > 0;) heap_down(v, h, nh, i);
  return nh;
}

/* The best feasible node for one pod among subset (every node when NULL), or UINT32_MAX:
 * the heap's first element without building the heap. */
static uint32_t best_node(sched_view *v, const sched_pending *p, const sched_sig *sig,
                          const sched_shape *shape, const uint32_t *subset, uint32_t nsubset) {
  sched_cand best = {0, UINT32_MAX};
  uint32_t count = subset ? nsubset : sig->n;
  for (uint32_t j = 0; j < count; j++) {
    uint32_t k = subset ? subset[j] : sig->nodes[j];
    sched_cand c;
    if ((subset && !sig->pass[k]) || !fits(v, p, k)) continue;
    c = (sched_cand){sched__score(v, shape, k), k};
    if (best.node == UINT32_MAX || cand_better(v, &c, &best)) best = c;
  }
  return best.node;
}

/* True when placing or scoring for p fails (an injected fault: no real error is possible in
 * these stages yet, but the callers handle one as they would). */
static bool failed(sched_view *v, const model_pod *p) {
  return sched__fault(v, SCHED_STAGE_PLACEMENT, p) || sched__fault(v, SCHED_STAGE_SCORING, p);
}

/* Places pods[0..n), all of one shape, on the best nodes among `subset` (all nodes when
 * NULL); placed[i] receives the node of pods[i]. Returns how many were placed: a prefix, as a
 * pod that does not fit means no later pod of the shape fits either. A placement that takes a
 * DRA device other nodes can reach too rebuilds the heap, since it may change them all. */
uint32_t sched__place_run(sched_view *v, sched_pending *pods, uint32_t n, const uint32_t *subset,
                          uint32_t nsubset, uint32_t *placed) {
  const sched_pending *first = &pods[0];
  const sched_sig *sig = sched__static_nodes(v, first);
  sched_cand *h = v->heap;
  sched_shape shape;
  size_t nh;
  uint32_t i = 0;
  if (!sig || first->blocked || failed(v, first->pod)) return 0;
  sched__shape_init(v, first->pod, &shape);
  shape.dra_devices = sched__dra_devices(first);
  if (n == 1) { /* a run of one: a linear scan for the best node is enough */
    uint32_t k = best_node(v, first, sig, &shape, subset, nsubset);
    bool shared;
    if (k == UINT32_MAX || (pods[0].nclaims && !sched__dra_commit(v, &pods[0], k, &shared)))
      return 0;
    placed[0] = k;
    sched__place(v, pods[0].pod, k);
    return 1;
  }
  nh = fill_heap(v, first, sig, &shape, subset, nsubset);
  while (i < n && nh) {
    uint32_t k = h[0].node;
    bool shared = false;
    if (i && failed(v, pods[i].pod)) break; /* its attempt ends the prefix */
    if (pods[i].nclaims && !sched__dra_commit(v, &pods[i], k, &shared)) {
      h[0] = h[--nh]; /* cannot happen after fits(); drop the node rather than loop */
      heap_down(v, h, nh, 0);
      continue;
    }
    placed[i] = k;
    sched__place(v, pods[i].pod, k);
    if (++i == n) break;
    /* From here the next pod's own claims decide: the first's are allocated now (and, for a
     * named claim, recorded as taken in this cycle). They ask for the same as its. */
    if (shared) {
      nh = fill_heap(v, &pods[i], sig, &shape, subset, nsubset);
      continue;
    }
    if (fits(v, &pods[i], k))
      h[0].score = sched__score(v, &shape, k);
    else
      h[0] = h[--nh];
    heap_down(v, h, nh, 0);
  }
  return i;
}

/* True when the two pods' claims filter alike on every node: the same allocated claims, or
 * unallocated claims asking for the same thing. Claims made from one template share its spec;
 * existing claims (as the claim controller makes them in a cluster, one per pod) compare by
 * value when no other pending pod names them (a claim two pods share is allocated once, and
 * its state changes when the first is placed). */
bool sched__same_claims(const sched_view *v, const sched_pending *a, const sched_pending *b) {
  if (a->nclaims != b->nclaims || a->blocked || b->blocked) return false;
  for (uint32_t i = 0; i < a->nclaims; i++) {
    const sched_claim *x = &a->claims[i], *y = &b->claims[i];
    if (x->allocated != y->allocated) return false;
    if (x->allocated) {
      if (x->claim != y->claim) return false;
      continue;
    }
    if (x->claim && x->claim == y->claim) return false; /* one allocation for both: not alike */
    if (x->spec == y->spec) continue;
    if (v->cfg->tuning.claims_by_ref || !x->refs || !y->refs || *x->refs != 1 || *y->refs != 1 ||
        !model_claim_spec_equal(x->spec, y->spec))
      return false;
  }
  return true;
}

/* True when two pods filter and score identically on every node. */
bool sched__same_shape(const sched_view *v, const sched_pending *a, const sched_pending *b) {
  const model_pod *x = a->pod, *y = b->pod;
  if (!sched__same_claims(v, a, b)) return false;
  if ((a->flavors ? a->flavors->key : NULL) != (b->flavors ? b->flavors->key : NULL)) return false;
  if (x->unoffered != y->unoffered) return false; /* named in the reasons */
  if (x->gpu_share != y->gpu_share || x->gpu_memory != y->gpu_memory) return false;
  if (x->requests.n != y->requests.n ||
      memcmp(x->requests.v, y->requests.v, x->requests.n * sizeof *x->requests.v) != 0)
    return false;
  return sched__same_static(x, y);
}

/* ---- gangs ----------------------------------------------------------------------------- */

uint32_t sched__place_members(sched_view *v, const sched_gang *g, const uint32_t *subset,
                              uint32_t nsubset, bool whole, uint32_t *placed) {
  uint32_t total = 0, i = 0;
  for (uint32_t k = 0; k < g->npods; k++) placed[k] = UINT32_MAX;
  while (i < g->npods) {
    uint32_t j = i + 1, got;
    while (j < g->npods && sched__same_shape(v, &g->pods[i], &g->pods[j])) j++;
    got = sched__place_run(v, g->pods + i, j - i, subset, nsubset, placed + i);
    for (uint32_t k = i + got; k < j; k++) placed[k] = UINT32_MAX;
    total += got;
    if (whole && got < j - i) return total;
    i = j;
  }
  return total;
}

/* Subsets smaller than this are scanned (a node, a clique): an index would cost more. */
#define CLASS_MIN_NODES 64

/* A run of gang members of one shape placed through the class of that shape within `within`
 * (see sched__class_within): each pick is the node a full scan of the subset would pick, as
 * in place_run, and costs what changed since the class's last pick. When the class has no
 * index (over the memory budget), the rest of the run is placed by place_run. */
static uint32_t place_run_within(sched_view *v, sched_pending *pods, uint32_t n, const void *within,
                                 const uint32_t *subset, uint32_t nsubset, uint32_t *placed) {
  sched_class *c;
  uint32_t i = 0;
  if ((subset && nsubset < CLASS_MIN_NODES) || !sched__class_eligible(v, &pods[0]) ||
      !(c = sched__class_within(v, &pods[0], within, subset, nsubset)) || c->unindexed)
    return sched__place_run(v, pods, n, subset, nsubset, placed);
  if (failed(v, pods[0].pod)) return 0;
  for (; i < n; i++) {
    uint32_t k;
    if (i && failed(v, pods[i].pod)) break; /* its attempt ends the prefix */
    if (c->unindexed) return i + sched__place_run(v, pods + i, n - i, subset, nsubset, placed + i);
    if ((k = sched__class_pick(v, c)) == UINT32_MAX) break;
    placed[i] = k;
    sched__place(v, pods[i].pod, k);
  }
  return i;
}

/* sched__place_members, each run of like members through its class within `within`. */
static uint32_t place_members_within(sched_view *v, const sched_gang *g, const void *within,
                                     const uint32_t *subset, uint32_t nsubset, bool whole,
                                     uint32_t *placed) {
  uint32_t total = 0, i = 0;
  for (uint32_t k = 0; k < g->npods; k++) placed[k] = UINT32_MAX;
  while (i < g->npods) {
    uint32_t j = i + 1, got;
    while (j < g->npods && sched__same_shape(v, &g->pods[i], &g->pods[j])) j++;
    got = place_run_within(v, g->pods + i, j - i, within, subset, nsubset, placed + i);
    for (uint32_t k = i + got; k < j; k++) placed[k] = UINT32_MAX;
    total += got;
    if (whole && got < j - i) return total;
    i = j;
  }
  return total;
}

void sched__unplace_members(sched_view *v, const sched_gang *g, const uint32_t *placed) {
  for (uint32_t i = 0; i < g->npods; i++) {
    if (placed[i] == UINT32_MAX) continue;
    sched__unplace(v, g->pods[i].pod, placed[i]);
    sched__dra_release(v, &g->pods[i]);
  }
}

typedef sched_domain domain;
typedef sched_level level;

static int domain_value_cmp(const void *a, const void *b) {
  return strcmp(((const domain *)a)->value, ((const domain *)b)->value);
}

/* ---- one-node domains in the order of a free amount --------------------------------------
 *
 * A gang that fits one node goes to the one-node domain with the least free amount of its main
 * resource that holds it (the most when spreading), the lowest index among equals. Treaps per
 * resource keep the domains in that order as pods are placed, one per group of alike nodes, so
 * that the first that passes the gang's filters is found by walking from the demand's amount
 * up in each group some node of which passes them: it costs a path per such group, not the
 * domains its filters reject. (One treap for every node cost those: nodes of a zone or model
 * that many gangs may not use stay unfilled at the front of the order, and at 20,000 nodes a
 * walk passed over a thousand of them on average.) */
#define MAX_GROUPS 256 /* groups of a level kept apart; nodes past them share by hash */
#define NIL        UINT32_MAX

/* Whether domain a comes before domain b in o. */
static bool order_before(const sched_order *o, uint32_t a, uint32_t b) {
  return o->key[a] != o->key[b] ? o->key[a] < o->key[b] : a < b;
}

/* A domain's heap priority: a fixed mix of its index (the shape of the tree is random, the
 * order it keeps is not). */
static uint32_t order_prio(uint32_t d) {
  uint64_t x = (uint64_t)d * 0x9e3779b97f4a7c15ULL;
  return (uint32_t)((x ^ x >> 29) * 0xbf58476d1ce4e5b9ULL >> 32);
}

/* Splits tree t around domain d (not in it): *lo those before d, *hi those after. */
static void order_split(sched_order *o, uint32_t t, uint32_t d, uint32_t *lo, uint32_t *hi) {
  if (t == NIL) {
    *lo = *hi = NIL;
  } else if (order_before(o, t, d)) {
    *lo = t;
    order_split(o, o->right[t], d, &o->right[t], hi);
  } else {
    *hi = t;
    order_split(o, o->left[t], d, lo, &o->left[t]);
  }
}

/* Joins trees a and b, every domain of a before every one of b. */
static uint32_t order_merge(sched_order *o, uint32_t a, uint32_t b) {
  if (a == NIL) return b;
  if (b == NIL) return a;
  if (order_prio(a) > order_prio(b)) {
    o->right[a] = order_merge(o, o->right[a], b);
    return a;
  }
  o->left[b] = order_merge(o, a, o->left[b]);
  return b;
}

static uint32_t order_insert(sched_order *o, uint32_t t, uint32_t d) {
  if (t == NIL || order_prio(d) > order_prio(t)) {
    order_split(o, t, d, &o->left[d], &o->right[d]);
    return d;
  }
  if (order_before(o, d, t))
    o->left[t] = order_insert(o, o->left[t], d);
  else
    o->right[t] = order_insert(o, o->right[t], d);
  return t;
}

/* Removes d, which must be in t under its current amount. */
static uint32_t order_erase(sched_order *o, uint32_t t, uint32_t d) {
  if (t == d) return order_merge(o, o->left[t], o->right[t]);
  if (order_before(o, d, t))
    o->left[t] = order_erase(o, o->left[t], d);
  else
    o->right[t] = order_erase(o, o->right[t], d);
  return t;
}

void sched__levels_charge(sched_view *v, uint32_t node, int r, int64_t delta) {
  for (int i = 0; i < v->nlevels; i++) {
    level *l = &v->levels[i];
    sched_order *o = l->order ? l->order[r] : NULL;
    uint32_t d = l->dom_of[node], *root;
    int64_t *s;
    if (d == UINT32_MAX) continue;
    s = &l->d[d].sum[r];
    *s += delta;
    if (*s > l->max[r]) l->max[r] = *s;
    if (!o) continue;
    root = &o->root[l->group[d]];
    *root = order_erase(o, *root, d);
    o->key[d] = o->spread ? -*s : *s;
    *root = order_insert(o, *root, d);
  }
}

/* Each one-node domain's group: its node's labels but the level's own, taints and whether it
 * is cordoned, alike; false when out of memory. */
static bool level_groups(sched_view *v, level *l) {
  uint64_t *hash = ts_arena_alloc(v->arena, ((size_t)l->n + 1) * sizeof *hash);
  ts_map ids; /* hash -> 1 + group */
  bool ok = true;
  if (!hash || !(l->group = ts_arena_alloc(v->arena, ((size_t)l->n + 1) * sizeof *l->group)))
    return false;
  ts_map_init(&ids);
  l->ngroups = 0;
  for (uint32_t d = 0; ok && d < l->n; d++) {
    const model_node *nd = v->nodes[l->d[d].nodes[0]];
    uint64_t h = nd->unschedulable ? 0x9e3779b97f4a7c15ULL : 1;
    uintptr_t id;
    for (uint32_t i = 0; i < nd->obj.labels.n; i++)
      if (nd->obj.labels.v[i].key != l->key)
        h = (h ^ (uintptr_t)nd->obj.labels.v[i].key) * 1099511628211ULL ^
            (uintptr_t)nd->obj.labels.v[i].value;
    for (uint32_t i = 0; i < nd->ntaints; i++)
      h = ((h ^ (uintptr_t)nd->taints[i].key) * 1099511628211ULL ^ (uintptr_t)nd->taints[i].value) *
              31 +
          nd->taints[i].effect;
    hash[d] = h = ts_hash(&h, sizeof h);
    if ((id = (uintptr_t)ts_map_get(&ids, (const char *)&hash[d], sizeof h))) {
      l->group[d] = (uint32_t)id - 1;
    } else if (l->ngroups < MAX_GROUPS) {
      l->group[d] = l->ngroups++;
      ok = ts_map_put(&ids, (const char *)&hash[d], sizeof h, (void *)(uintptr_t)l->ngroups,
                      NULL) == TS_OK;
    } else {
      l->group[d] = (uint32_t)(h % MAX_GROUPS);
    }
  }
  ts_map_free(&ids);
  return ok;
}

/* Per group of l, whether some node of it passes sig's filters (kept in sig); NULL when out
 * of memory. */
static const uint8_t *groups_passing(sched_view *v, level *l, const sched_sig *sig) {
  sched_sig *s = &v->sigs[sig - v->sigs]; /* the view's own entry */
  if (s->glevel == l) return s->gpass;
  if (!(s->gpass = ts_arena_alloc(v->arena, (size_t)l->ngroups + 1))) return NULL;
  memset(s->gpass, 0, (size_t)l->ngroups + 1);
  for (uint32_t j = 0; j < s->n; j++) {
    uint32_t d = l->dom_of[s->nodes[j]];
    if (d != UINT32_MAX) s->gpass[l->group[d]] = 1;
  }
  s->glevel = l;
  return s->gpass;
}

typedef struct {
  int64_t key;
  uint32_t group, d;
} keyed;

static int keyed_cmp(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->d < y->d ? -1 : x->d > y->d;
}

/* The one-node domains of l in the order of their free amount of r, a tree per group, made on
 * first use (sorted, then each group's made a tree in one pass over a stack of its right
 * spine); false when out of memory. */
static bool order_of(sched_view *v, level *l, int r) {
  sched_order *o;
  size_t bytes = ((size_t)l->n + 1) * sizeof(uint32_t);
  keyed *sorted;
  if (!l->order) {
    if (!level_groups(v, l) ||
        !(l->order = ts_arena_alloc(v->arena, (size_t)v->stride * sizeof *l->order)))
      return false;
    memset(l->order, 0, (size_t)v->stride * sizeof *l->order);
  }
  if (l->order[r]) return true;
  if (!(o = ts_arena_alloc(v->arena, sizeof *o)) || !(o->left = ts_arena_alloc(v->arena, bytes)) ||
      !(o->right = ts_arena_alloc(v->arena, bytes)) ||
      !(o->stack = ts_arena_alloc(v->arena, bytes)) ||
      !(o->root = ts_arena_alloc(v->arena, ((size_t)l->ngroups + 1) * sizeof *o->root)) ||
      !(o->key = ts_arena_alloc(v->arena, ((size_t)l->n + 1) * sizeof *o->key)) ||
      !(sorted = ts_arena_alloc(v->arena, ((size_t)l->n + 1) * sizeof *sorted)))
    return false;
  o->spread = v->pol->spread;
  for (uint32_t g = 0; g < l->ngroups; g++) o->root[g] = NIL;
  for (uint32_t d = 0; d < l->n; d++) {
    o->key[d] = o->spread ? -l->d[d].sum[r] : l->d[d].sum[r];
    sorted[d] = (keyed){o->key[d], l->group[d], d}, o->left[d] = o->right[d] = NIL;
  }
  qsort(sorted, l->n, sizeof *sorted, keyed_cmp);
  for (uint32_t i = 0, top = 0; i < l->n; i++) { /* the right spine on the stack, the root at
                                                     its bottom */
    uint32_t d = sorted[i].d, last = NIL;
    while (top && order_prio(o->stack[top - 1]) < order_prio(d)) last = o->stack[--top];
    o->left[d] = last;
    if (top) o->right[o->stack[top - 1]] = d;
    o->stack[top++] = d;
    if (i + 1 == l->n || sorted[i + 1].group != sorted[i].group) /* the group's last */
      o->root[sorted[i].group] = o->stack[0], top = 0;
  }
  l->order[r] = o;
  return true;
}

/* The domains' sums of free capacity, their bound, and each node's domain. */
static bool level_sums(sched_view *v, level *l) {
  size_t stride = (size_t)v->stride;
  if (!(l->dom_of = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *l->dom_of)) ||
      !(l->max = ts_arena_alloc(v->arena, stride * sizeof *l->max)) ||
      !(l->cands = ts_arena_alloc(v->arena, ((size_t)l->n + 1) * sizeof *l->cands)))
    return false;
  memset(l->dom_of, 0xff, ((size_t)v->n + 1) * sizeof *l->dom_of);
  memset(l->max, 0, stride * sizeof *l->max);
  for (uint32_t i = 0; i < l->n; i++) {
    domain *d = &l->d[i];
    if (!(d->sum = ts_arena_alloc(v->arena, stride * sizeof *d->sum))) return false;
    memset(d->sum, 0, stride * sizeof *d->sum);
    for (uint32_t k = 0; k < d->n; k++) {
      const sched_cap *c = &v->cap[(size_t)d->nodes[k] * stride];
      l->dom_of[d->nodes[k]] = i;
      for (size_t r = 0; r < stride; r++) d->sum[r] += c[r].free;
    }
    for (size_t r = 0; r < stride; r++)
      if (d->sum[r] > l->max[r]) l->max[r] = d->sum[r];
  }
  l->single = true;
  for (uint32_t i = 0; i < l->n && l->single; i++) l->single = l->d[i].n == 1;
  return true;
}

sched_level *sched__level_of(sched_view *v, const char *key) {
  level *l;
  ts_map by_value; /* interned value (its address) -> 1 + its domain's index */
  uint32_t *of;
  for (int i = 0; i < v->nlevels; i++)
    if (v->levels[i].key == key) return &v->levels[i];
  if (v->nlevels == SCHED_MAX_TOPOLOGY + 1) return NULL;
  l = &v->levels[v->nlevels];
  memset(l, 0, sizeof *l);
  l->key = key;
  l->d = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *l->d);
  of = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *of);
  if (!l->d || !of) return NULL;
  ts_map_init(&by_value);
  for (uint32_t k = 0; k < v->n; k++) { /* each node's domain, and each domain's count */
    const char *val = model_labels_get(&v->nodes[k]->obj.labels, key);
    uintptr_t at;
    of[k] = UINT32_MAX;
    if (!val) continue;
    if (!(at = (uintptr_t)ts_map_get(&by_value, (const char *)&val, sizeof val))) {
      at = ++l->n;
      l->d[at - 1] = (domain){.value = val};
      if (ts_map_put(&by_value, (const char *)&l->d[at - 1].value, sizeof val, (void *)at, NULL) !=
          TS_OK) { /* the key: the domain's copy of the address (the map borrows it) */
        ts_map_free(&by_value);
        return NULL;
      }
    }
    of[k] = (uint32_t)at - 1;
    l->d[at - 1].n++;
  }
  ts_map_free(&by_value);
  for (uint32_t i = 0; i < l->n; i++) {
    if (!(l->d[i].nodes = ts_arena_alloc(v->arena, ((size_t)l->d[i].n + 1) * sizeof(uint32_t))))
      return NULL;
    l->d[i].n = 0;
  }
  for (uint32_t k = 0; k < v->n; k++)
    if (of[k] != UINT32_MAX) l->d[of[k]].nodes[l->d[of[k]].n++] = k;
  qsort(l->d, l->n, sizeof *l->d, domain_value_cmp);
  if (!level_sums(v, l)) return NULL;
  v->nlevels++;
  return l;
}

/* The resource that decides a gang's domain order: its first GPU resource, else cpu. */
static int main_resource(const sched_view *v, const sched_gang *g) {
  for (uint32_t i = 0; i < g->npods; i++)
    for (int k = 0; k < v->ngpu; k++)
      if (model_rlist_get(&g->pods[i].pod->requests, v->gpu[k])) return v->gpu[k];
  return MODEL_RES_CPU;
}

/* True when the domain's free capacity could hold every pending pod (an upper bound). */
static bool domain_may_fit(const sched_view *v, const domain *d, const int64_t *demand) {
  for (int r = 0; r < v->stride; r++)
    if (demand[r] > d->sum[r]) return false;
  return true;
}

/* Whether domain a comes before b: the tighter (the looser when spreading), then by value
 * (the level's domains are sorted by value: their order in it is the order of values). */
static bool domain_before(const domain *a, const domain *b) {
  return a->free != b->free ? a->free < b->free : a < b;
}

static void domain_heap_down(domain **h, uint32_t n, uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, r = l + 1, first = i;
    domain *t;
    if (l < n && domain_before(h[l], h[first])) first = l;
    if (r < n && domain_before(h[r], h[first])) first = r;
    if (first == i) return;
    t = h[i], h[i] = h[first], h[first] = t;
    i = first;
  }
}

/* Whether the gang's first member passes node k and every resource of demand fits there. */
static bool node_holds(const sched_view *v, const sched_sig *sig, uint32_t k,
                       const int64_t *demand) {
  const sched_cap *cap = v->cap + (size_t)k * (size_t)v->stride;
  if (!sig->pass[k]) return false;
  for (int r = 0; r < v->stride; r++)
    if (demand[r] > cap[r].free) return false;
  return true;
}

/* The first one-node domain of l in try_level's order (the least free amount of main that
 * holds the demand, or the most when spreading; then the lowest index): a walk of the order
 * from the demand's amount (from the most free when spreading) to the first that holds the
 * demand. NULL when none (*made true), or when the order cannot be made (out of memory:
 * *made false). */
static domain *first_single(sched_view *v, level *l, const sched_sig *sig, int main,
                            const int64_t *demand, bool *made) {
  sched_order *o;
  const uint8_t *gpass;
  int64_t want = demand[main] > 0 ? demand[main] : 0;
  uint32_t best = NIL;
  if (!(*made = order_of(v, l, main) && (gpass = groups_passing(v, l, sig)))) return NULL;
  o = l->order[main];
  for (uint32_t g = 0; g < l->ngroups; g++) {
    uint32_t depth = 0, t;
    if (!gpass[g]) continue;
    for (t = o->root[g]; t != NIL;) { /* the path to the first amount at least `want` */
      if (o->spread || o->key[t] >= want)
        o->stack[depth++] = t, t = o->left[t];
      else
        t = o->right[t];
    }
    while (depth) {
      domain *d = &l->d[t = o->stack[--depth]];
      /* the rest of the group come after the best found, or (spreading) hold less */
      if ((best != NIL && !order_before(o, t, best)) || d->sum[main] < want) break;
      if (node_holds(v, sig, d->nodes[0], demand)) {
        best = t;
        break;
      }
      for (t = o->right[t]; t != NIL; t = o->left[t]) o->stack[depth++] = t;
    }
  }
  return best == NIL ? NULL : &l->d[best];
}

/* Tries the domains of one level, tightest first (loosest first when spreading). A level
 * none of whose domains can hold the demand is passed over at once; a domain of one node must
 * pass the first member's static filters (every member goes there). Most gangs go in the
 * first domain tried: it is found by one pass, and only if it fails are the others made a
 * heap, taken in order as far as needed. */
static bool try_level(sched_view *v, const sched_gang *g, level *l, const int64_t *demand,
                      uint32_t *placed) {
  domain **cands = l->cands, *skip = NULL;
  const sched_sig *sig = g->npods ? sched__static_nodes(v, &g->pods[0]) : NULL;
  int main = main_resource(v, g);
  uint32_t nc = 0, first = 0;
  for (int r = 0; r < v->stride; r++)
    if (demand[r] > l->max[r]) return false;
  if (l->single && sig && !v->cfg->tuning.no_domain_order) { /* the first in the order */
    bool made;
    domain *d = first_single(v, l, sig, main, demand, &made);
    if (made && !d) return false;
    if (d) {
      if (place_members_within(v, g, d, d->nodes, d->n, true, placed) == g->npods) return true;
      sched__unplace_members(v, g, placed);
      skip = d;
    }
  }
  if (l->single && sig) { /* one node each: only those the first member passes, read in place */
    for (uint32_t j = 0; j < sig->n; j++) {
      uint32_t k = sig->nodes[j], at = l->dom_of[k];
      domain *d = at == UINT32_MAX ? NULL : &l->d[at];
      if (!d || d == skip || !node_holds(v, sig, k, demand)) continue;
      d->free = v->pol->spread ? -d->sum[main] : d->sum[main];
      if (nc && domain_before(d, cands[first])) first = nc;
      cands[nc++] = d;
    }
  } else {
    for (uint32_t i = 0; i < l->n; i++) {
      domain *d = &l->d[i];
      if ((d->n == 1 && sig && !sig->pass[d->nodes[0]]) || !domain_may_fit(v, d, demand)) continue;
      d->free = v->pol->spread ? -d->sum[main] : d->sum[main];
      if (nc && domain_before(d, cands[first])) first = nc;
      cands[nc++] = d;
    }
  }
  if (!nc) return false;
  if (place_members_within(v, g, cands[first], cands[first]->nodes, cands[first]->n, true,
                           placed) == g->npods)
    return true;
  sched__unplace_members(v, g, placed);
  cands[first] = cands[--nc];
  for (uint32_t i = nc / 2; i-- > 0;) domain_heap_down(cands, nc, i);
  while (nc) {
    domain *d = cands[0];
    if (place_members_within(v, g, d, d->nodes, d->n, true, placed) == g->npods) return true;
    sched__unplace_members(v, g, placed);
    cands[0] = cands[--nc];
    domain_heap_down(cands, nc, 0);
  }
  return false;
}

/* The levels to try, narrowest first: only the required one, else from the preferred one (or
 * the narrowest configured) up to the widest. */
static int levels_to_try(const sched_view *v, const sched_gang *g, const char **out) {
  int n = 0, start = v->cfg->ntopology - 1;
  if (g->required_level) {
    out[0] = g->required_level;
    return 1;
  }
  if (g->preferred_level) {
    out[n++] = g->preferred_level;
    for (int i = 0; i < v->cfg->ntopology; i++)
      if (v->cfg->topology[i] == g->preferred_level) start = i - 1;
  }
  for (int i = start; i >= 0; i--) out[n++] = v->cfg->topology[i];
  return n;
}

/* Places the gang: in one domain if any fits, else across the cluster when allowed. Returns
 * the number of pods placed (placed[] as in place_members); everything is given back when
 * fewer than `needed` could be placed. */
uint32_t sched__place_gang(sched_view *v, const sched_gang *g, uint32_t needed, uint32_t *placed,
                           uint32_t *best) {
  int64_t *demand = ts_arena_alloc(v->arena, (size_t)v->stride * sizeof *demand);
  const char *levels[SCHED_MAX_TOPOLOGY + 1];
  int nlevels;
  uint32_t got;
  if (!demand) return 0;
  memset(demand, 0, (size_t)v->stride * sizeof *demand);
  for (uint32_t i = 0; i < g->npods; i++)
    for (uint32_t k = 0; k < g->pods[i].pod->requests.n; k++)
      demand[g->pods[i].pod->requests.v[k].id] = /* past int64: more than any domain has */
          ts_add_sat(demand[g->pods[i].pod->requests.v[k].id], g->pods[i].pod->requests.v[k].v);
  *best = 0;
  nlevels = g->npods > 1 ? levels_to_try(v, g, levels) : 0;
  for (int i = 0; i < nlevels; i++) {
    level *l = sched__level_of(v, levels[i]);
    if (l && try_level(v, g, l, demand, placed)) return *best = g->npods;
  }
  if (g->required_level) {
    for (uint32_t i = 0; i < g->npods; i++) placed[i] = UINT32_MAX;
    return 0;
  }
  got = *best = place_members_within(v, g, v, NULL, 0, false, placed);
  if (got >= needed && got) return got;
  sched__unplace_members(v, g, placed);
  for (uint32_t i = 0; i < g->npods; i++) placed[i] = UINT32_MAX;
  return 0;
}
