/* dra/alloc.c - DRA structured allocation with the semantics of Kubernetes 1.34's
 * allocator (k8s.io/dynamic-resource-allocation/structured), so that results are identical:
 * the same devices in the same order, the same configs and node selectors, the same errors.
 *
 * The world (one per cycle) numbers every device twice: a flat index per (slice, device) for
 * the selector cache, and an id per "driver/pool/device" for "in use". An allocation gathers
 * the pools reachable from the node, validates the requests, then searches depth first:
 * claims, requests, firstAvailable alternatives and devices in order; the first complete
 * solution wins. */
#include "dra/dra.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRA_REASON_MAX 256

/* ---- the world ------------------------------------------------------------------------- */

typedef struct wpool {
  const char *driver; /* interned */
  const char *name;   /* interned pool name */
  uint32_t *slices;   /* every slice of the pool, by index (arena) */
  uint32_t n, cap;    /* entries */
  uint64_t dup_key;   /* the slice set the duplicate-name check below was made for (0: none) */
  const char *dup;    /* its result: the reason when a device name repeats, else NULL */
} wpool;

struct dra_world {
  dra_features f;                   /* feature gates */
  dra_class_fn cls;                 /* class lookup */
  dra_eval_fn eval;                 /* selector evaluation */
  void *cls_ctx;                    /* for cls */
  void *eval_ctx;                   /* for eval */
  const model_slice *const *slices; /* borrowed, in order */
  size_t nslices;                   /* entries */
  uint32_t *flat_base;              /* per slice: flat index of its device 0 */
  uint32_t nflat;                   /* devices over all slices */
  uint32_t *flat_id;                /* per flat device: its id */
  uint32_t nids;                    /* distinct driver/pool/device ids */
  uint8_t *allocated;               /* per id: in use by another claim */
  uint32_t *slice_pool;             /* per slice: pool index */
  wpool *pools;                     /* every pool */
  uint32_t npools;                  /* entries */
  ts_map ids;                       /* "driver/pool/device" -> id + 1 */
  ts_map pool_ix;                   /* "driver/pool" -> pool + 1 */
  ts_map local;                     /* node name -> ptr_list of slice indexes */
  uint32_t *global;                 /* slices not bound to one node name, in order */
  uint32_t nglobal;                 /* entries */
  ts_map progs;                     /* expression -> program index + 1 */
  struct {                          /* by expression pointer: selectors repeat device after */
    const char *expr;               /* device, so most lookups end here without hashing */
    int8_t *cache;
  } memo[64];
  uint32_t *ctr_base;         /* per slice: first of its counters in ctr_used */
  ts_quantity *ctr_used;      /* per slice counter: consumed by allocated devices */
  uint64_t *ctr_gen;          /* per slice: alloc_gen when ctr_used was computed */
  uint64_t alloc_gen;         /* bumped whenever `allocated` changes */
  int8_t **cache;             /* per program: per flat device: 0 ?, 1 no, 2 yes, 3 error */
  uint32_t nprogs, progs_cap; /* entries */
  ts_arena arena;             /* everything above */
};

typedef struct idx_list {
  uint32_t *v;
  uint32_t n, cap;
} idx_list;

static bool idx_push(ts_arena *a, idx_list *l, uint32_t x) {
  if (l->n == l->cap) {
    uint32_t ncap = l->cap ? l->cap * 2 : 8;
    uint32_t *nv = ts_arena_alloc(a, ncap * sizeof *nv);
    if (!nv) return false;
    if (l->n) memcpy(nv, l->v, l->n * sizeof *nv);
    l->v = nv, l->cap = ncap;
  }
  l->v[l->n++] = x;
  return true;
}

void dra_features_default(dra_features *f) {
  f->admin_access = f->prioritized_list = f->partitionable_devices = true;
  f->device_taints = true;
  f->device_binding = false; /* binding conditions must be waited for before the Binding, which
                                Tessera does not do: such devices are never allocated */
}

static char *key3(ts_arena *a, const char *x, const char *y, const char *z) {
  size_t n = strlen(x) + strlen(y) + (z ? strlen(z) + 1 : 0) + 2;
  char *k = ts_arena_alloc(a, n);
  if (k) snprintf(k, n, z ? "%s/%s/%s" : "%s/%s", x, y, z);
  return k;
}

static bool world_pool(dra_world *w, uint32_t si) {
  const model_slice *s = w->slices[si];
  char *k = key3(&w->arena, s->driver, s->pool, NULL);
  uintptr_t p;
  wpool *wp;
  if (!k) return false;
  p = (uintptr_t)ts_map_get(&w->pool_ix, k, strlen(k));
  if (!p) {
    p = ++w->npools;
    memset(&w->pools[p - 1], 0, sizeof w->pools[p - 1]);
    w->pools[p - 1].driver = s->driver, w->pools[p - 1].name = s->pool;
    if (ts_map_put(&w->pool_ix, k, strlen(k), (void *)p, NULL) != TS_OK) return false;
  }
  wp = &w->pools[p - 1];
  w->slice_pool[si] = (uint32_t)p - 1;
  return idx_push(&w->arena, (idx_list *)&wp->slices, si);
}

static bool world_devices(dra_world *w, uint32_t si) {
  const model_slice *s = w->slices[si];
  w->flat_base[si] = w->nflat;
  for (uint32_t d = 0; d < s->ndevices; d++) {
    char *k = key3(&w->arena, s->driver, s->pool, s->devices[d].name);
    uintptr_t id;
    if (!k) return false;
    id = (uintptr_t)ts_map_get(&w->ids, k, strlen(k));
    if (!id) {
      id = ++w->nids;
      if (ts_map_put(&w->ids, k, strlen(k), (void *)id, NULL) != TS_OK) return false;
    }
    w->flat_id[w->nflat++] = (uint32_t)id - 1;
  }
  return true;
}

static bool world_node_index(dra_world *w, uint32_t si) {
  const model_slice *s = w->slices[si];
  idx_list *l;
  if (!s->node_name) return idx_push(&w->arena, (idx_list *)&w->global, si);
  l = ts_map_get(&w->local, s->node_name, strlen(s->node_name));
  if (!l) {
    if (!(l = ts_arena_alloc(&w->arena, sizeof *l))) return false;
    memset(l, 0, sizeof *l);
    if (ts_map_put(&w->local, s->node_name, strlen(s->node_name), l, NULL) != TS_OK) return false;
  }
  return idx_push(&w->arena, l, si);
}

/* Room for each slice's consumed counters (flattened: set by set, counter by counter). */
static bool world_counters(dra_world *w) {
  uint32_t total = 0;
  w->ctr_base = ts_arena_alloc(&w->arena, (w->nslices + 1) * sizeof *w->ctr_base);
  w->ctr_gen = ts_arena_alloc(&w->arena, (w->nslices + 1) * sizeof *w->ctr_gen);
  if (!w->ctr_base || !w->ctr_gen) return false;
  for (size_t i = 0; i < w->nslices; i++) {
    w->ctr_base[i] = total, w->ctr_gen[i] = 0;
    for (uint32_t k = 0; k < w->slices[i]->ncounter_sets; k++)
      total += w->slices[i]->counter_sets[k].ncounters;
  }
  w->ctr_used = ts_arena_alloc(&w->arena, (total + 1) * sizeof *w->ctr_used);
  return w->ctr_used != NULL;
}

dra_world *dra_world_new(const model_slice *const *slices, size_t nslices,
                         const dra_features *features, dra_class_fn cls, void *cls_ctx,
                         dra_eval_fn eval, void *eval_ctx) {
  dra_world *w = ts_calloc(1, sizeof *w);
  size_t ndev = 0;
  if (!w) return NULL;
  ts_arena_init(&w->arena, 64 * 1024);
  ts_map_init(&w->ids), ts_map_init(&w->pool_ix), ts_map_init(&w->local), ts_map_init(&w->progs);
  w->f = *features, w->cls = cls, w->eval = eval, w->cls_ctx = cls_ctx, w->eval_ctx = eval_ctx;
  w->slices = slices, w->nslices = nslices;
  for (size_t i = 0; i < nslices; i++) ndev += slices[i]->ndevices;
  w->flat_base = ts_arena_alloc(&w->arena, (nslices + 1) * sizeof *w->flat_base);
  w->slice_pool = ts_arena_alloc(&w->arena, (nslices + 1) * sizeof *w->slice_pool);
  w->flat_id = ts_arena_alloc(&w->arena, (ndev + 1) * sizeof *w->flat_id);
  w->pools = ts_arena_alloc(&w->arena, (nslices + 1) * sizeof *w->pools);
  if (!w->flat_base || !w->slice_pool || !w->flat_id || !w->pools) goto fail;
  for (uint32_t i = 0; i < nslices; i++)
    if (!world_devices(w, i) || !world_pool(w, i) || !world_node_index(w, i)) goto fail;
  w->allocated = ts_arena_alloc(&w->arena, w->nids + 1);
  if (!w->allocated || !world_counters(w)) goto fail;
  memset(w->allocated, 0, w->nids + 1);
  w->alloc_gen = 1;
  return w;
fail:
  dra_world_free(w);
  return NULL;
}

void dra_world_free(dra_world *w) {
  if (!w) return;
  for (uint32_t i = 0; i < w->nprogs; i++) ts_free(w->cache[i]);
  ts_free(w->cache);
  ts_map_free(&w->ids), ts_map_free(&w->pool_ix), ts_map_free(&w->local), ts_map_free(&w->progs);
  ts_arena_free(&w->arena);
  ts_free(w);
}

static int64_t device_id(const dra_world *w, const char *driver, const char *pool,
                         const char *device) {
  char k[1024];
  uintptr_t id;
  snprintf(k, sizeof k, "%s/%s/%s", driver, pool, device);
  id = (uintptr_t)ts_map_get(&w->ids, k, strlen(k));
  return id ? (int64_t)id - 1 : -1;
}

void dra_world_mark(dra_world *w, const char *driver, const char *pool, const char *device) {
  int64_t id = device_id(w, driver, pool, device);
  if (id >= 0) w->allocated[id] = 1;
  w->alloc_gen++;
}

void dra_mark_result(dra_world *w, const dra_result *r, bool on) {
  for (uint32_t i = 0; i < r->ndevices; i++) {
    const dra_device *d = &r->devices[i];
    int64_t id;
    if (d->admin_access) continue;
    id = device_id(w, d->slice->driver, d->slice->pool, d->device->name);
    if (id >= 0) w->allocated[id] = on;
  }
  w->alloc_gen++;
}

bool dra_result_local(const dra_result *r) {
  for (uint32_t i = 0; i < r->ndevices; i++) {
    const model_slice *s = r->devices[i].slice;
    if (!(s->per_device_node_selection ? r->devices[i].device->node_name : s->node_name))
      return false;
  }
  return true;
}

void dra_node_usage(const dra_world *w, const char *node, uint32_t *used, uint32_t *total) {
  const idx_list *l = ts_map_get(&w->local, node, strlen(node));
  *used = *total = 0;
  for (uint32_t i = 0; l && i < l->n; i++) {
    uint32_t si = l->v[i];
    for (uint32_t d = 0; d < w->slices[si]->ndevices; d++) {
      (*total)++;
      *used += w->allocated[w->flat_id[w->flat_base[si] + d]];
    }
  }
}

/* ---- one allocation -------------------------------------------------------------------- */

typedef struct cpool {
  uint32_t wpool;     /* index in w->pools */
  uint32_t *slices;   /* relevant slices (arena) */
  uint32_t n, cap;    /* entries */
  int64_t generation; /* of the slices kept */
  bool incomplete;    /* not every slice of the pool is present */
  bool invalid;       /* duplicate device names */
  const char *reason; /* why invalid (interned) */
} cpool;

typedef struct entry {
  const model_subrequest *r;     /* the request or sub-request */
  const model_request *parent;   /* the request holding firstAvailable, or NULL */
  const char *result_name;       /* interned "req" or "req/sub" */
  const model_device_class *cls; /* the class */
  uint32_t num;                  /* devices to allocate */
  uint32_t *all;                 /* flat devices for allocationMode All (arena) */
} entry;

typedef struct cons {
  const model_constraint *c;               /* the constraint */
  const char *domain, *name;               /* attribute, split */
  const model_attr *first;                 /* value of the first device in the set */
  uint32_t count;                          /* devices in the set */
  const model_attr *seen[DRA_MAX_RESULTS]; /* distinctAttribute: values so far */
} cons;

typedef struct cstate {
  const model_claim_spec *spec; /* the claim */
  const char *name;             /* for messages */
  entry **entries;              /* per request: 1 entry, or one per alternative */
  uint32_t *selected;           /* per request: chosen alternative */
  cons *cons;                   /* constraints */
  dra_result *res;              /* the caller's result */
} cstate;

typedef struct using {
  uint32_t id;    /* device id */
  uint32_t claim; /* claim index it is being allocated for */
}
using;

typedef struct alloc {
  dra_world *w;               /* the world */
  const char *node;           /* interned node name or NULL */
  const model_labels *labels; /* node labels */
  cpool *pools;               /* reachable pools, first-seen order */
  uint32_t npools;            /* entries */
  cstate *claims;             /* claims */
  size_t nclaims;             /* entries */
  using *allocating;          /* devices taken by the attempt (arena) */
  uint32_t nallocating;       /* entries */
  uint32_t using_cap;         /* capacity: DRA_MAX_RESULTS per claim */
  ts_arena *arena;            /* caller's memory */
  ts_err *err;                /* caller's error */
  bool over;                  /* the search reached the device limit of a claim (upstream's
                                 errAllocationResultMaxSizeExceeded): backtrack further */
  uint64_t steps, budget;     /* search steps taken, and allowed (DRA_SEARCH_BUDGET) */
} alloc;

static bool node_matches(const alloc *a, const char *name, bool all,
                         const model_node_selector *sel) {
  if (name) return a->node && !strcmp(name, a->node);
  if (all) return true;
  if (sel->nterms) {
    model_labels none = {0};
    return a->node && model_node_selector_match(sel, a->node, a->labels ? a->labels : &none);
  }
  return false;
}

static bool slice_reaches(const alloc *a, const model_slice *s) {
  if (s->node_name || s->all_nodes || s->node_selector.nterms)
    return node_matches(a, s->node_name, s->all_nodes, &s->node_selector);
  if (!s->per_device_node_selection) return false;
  for (uint32_t d = 0; d < s->ndevices; d++) {
    const model_device *dev = &s->devices[d];
    if (node_matches(a, dev->node_name, dev->all_nodes, &dev->node_selector)) return true;
  }
  return false;
}

static cpool *pool_for(alloc *a, uint32_t wp) {
  for (uint32_t i = 0; i < a->npools; i++)
    if (a->pools[i].wpool == wp) return &a->pools[i];
  memset(&a->pools[a->npools], 0, sizeof a->pools[a->npools]);
  a->pools[a->npools].wpool = wp;
  return &a->pools[a->npools++];
}

/* Adds a reachable slice to its pool, keeping only the newest generation. */
static bool add_slice(alloc *a, uint32_t si) {
  const model_slice *s = a->w->slices[si];
  cpool *p = pool_for(a, a->w->slice_pool[si]);
  if (p->n && s->pool_generation < p->generation) return true;
  if (p->n && s->pool_generation > p->generation) p->n = 0;
  p->generation = s->pool_generation;
  return idx_push(a->arena, (idx_list *)&p->slices, si);
}

static int ptr_cmp(const void *x, const void *y) {
  uintptr_t a = (uintptr_t) * (const char *const *)x, b = (uintptr_t) * (const char *const *)y;
  return (a > b) - (a < b);
}

/* A device name used twice in the pool's slices makes it invalid. Names are interned, so
 * sorting their pointers finds repeats; the result is kept per pool for the slice set it was
 * computed on (the same set comes back for every candidate node and pod). */
static void duplicates(alloc *a, cpool *p) {
  dra_world *w = (dra_world *)a->w;
  wpool *wp = &w->pools[p->wpool];
  uint64_t key = 1469598103934665603ULL;
  size_t n = 0, k = 0;
  const char **names;
  for (uint32_t i = 0; i < p->n; i++) {
    key = (key ^ (p->slices[i] + 1)) * 1099511628211ULL;
    n += w->slices[p->slices[i]]->ndevices;
  }
  if (wp->dup_key == key) {
    p->invalid = wp->dup != NULL;
    p->reason = wp->dup;
    return;
  }
  if (!(names = ts_arena_alloc(a->arena, (n + 1) * sizeof *names))) return;
  for (uint32_t i = 0; i < p->n; i++) {
    const model_slice *s = w->slices[p->slices[i]];
    for (uint32_t d = 0; d < s->ndevices; d++) names[k++] = s->devices[d].name;
  }
  qsort(names, n, sizeof *names, ptr_cmp);
  wp->dup = NULL;
  for (size_t i = 1; i < n && !wp->dup; i++)
    if (names[i] == names[i - 1]) {
      char why[DRA_REASON_MAX];
      snprintf(why, sizeof why, "duplicate device name %s", names[i]);
      wp->dup = ts_intern_cstr(why);
    }
  wp->dup_key = key;
  p->invalid = wp->dup != NULL;
  p->reason = wp->dup;
}

/* Incomplete and obsolete pools, and duplicate device names, as upstream's GatherPools. */
static void check_pool(alloc *a, cpool *p, bool *drop) {
  const dra_world *w = a->w;
  const wpool *wp = &w->pools[p->wpool];
  int64_t want = w->slices[p->slices[0]]->pool_slice_count;
  uint32_t same = 0;
  *drop = false;
  if (p->n != want) {
    for (uint32_t i = 0; i < wp->n; i++) {
      int64_t g = w->slices[wp->slices[i]]->pool_generation;
      if (g > p->generation) {
        *drop = true; /* a newer generation is being published: ignore the old one */
        return;
      }
      same += g == p->generation;
    }
    p->incomplete = same != want;
    if (p->incomplete) return;
  }
  duplicates(a, p);
}

static ts_rc gather_pools(alloc *a) {
  const dra_world *w = a->w;
  idx_list none = {0}, *local = a->node ? ts_map_get(&w->local, a->node, strlen(a->node)) : NULL;
  uint32_t i = 0, j = 0, k = 0;
  if (!local) local = &none;
  /* At most one pool per reachable slice. */
  a->pools = ts_arena_alloc(a->arena, (local->n + w->nglobal + 1) * sizeof *a->pools);
  if (!a->pools) return TS_ENOMEM;
  while (i < local->n || j < w->nglobal) { /* merge both lists in slice order */
    uint32_t si = j >= w->nglobal || (i < local->n && local->v[i] < w->global[j]) ? local->v[i++]
                                                                                  : w->global[j++];
    const model_slice *s = w->slices[si];
    if (!w->f.partitionable_devices && s->per_device_node_selection) continue; /* as 1.34 */
    if (slice_reaches(a, s) && !add_slice(a, si)) return TS_ENOMEM;
  }
  for (i = 0; i < a->npools; i++) {
    bool drop;
    check_pool(a, &a->pools[i], &drop);
    if (!drop) a->pools[k++] = a->pools[i];
  }
  a->npools = k;
  return TS_OK;
}

/* ---- selectors ------------------------------------------------------------------------- */

static int8_t *program_cache(dra_world *w, const char *expr) {
  uintptr_t p;
  char *k;
  size_t slot = ((uintptr_t)expr >> 4) % 64;
  if (w->memo[slot].expr == expr) return w->memo[slot].cache;
  if ((p = (uintptr_t)ts_map_get(&w->progs, expr, strlen(expr)))) {
    w->memo[slot].expr = expr, w->memo[slot].cache = w->cache[p - 1];
    return w->cache[p - 1];
  }
  if (w->nprogs == w->progs_cap) {
    uint32_t ncap = w->progs_cap ? w->progs_cap * 2 : 8;
    int8_t **nc = ts_realloc(w->cache, ncap * sizeof *nc);
    if (!nc) return NULL;
    w->cache = nc, w->progs_cap = ncap;
  }
  k = ts_arena_strndup(&w->arena, expr, strlen(expr));
  if (!k || !(w->cache[w->nprogs] = ts_calloc(w->nflat + 1, 1))) return NULL;
  if (ts_map_put(&w->progs, k, strlen(k), (void *)(uintptr_t)(w->nprogs + 1), NULL) != TS_OK) {
    ts_free(w->cache[w->nprogs]);
    return NULL;
  }
  return w->cache[w->nprogs++];
}

/* Evaluates the selectors (of a class when cls is set, else of the request) on a device. */
static ts_rc selectors_match(alloc *a, const cstate *c, const model_device_class *cls,
                             const model_device_selector *sel, uint32_t nsel, uint32_t si,
                             uint32_t d, bool *match) {
  dra_world *w = a->w;
  uint32_t flat = w->flat_base[si] + d;
  *match = true;
  for (uint32_t i = 0; i < nsel && *match; i++) {
    int8_t *cache = program_cache(w, sel[i].cel);
    ts_err e;
    ts_rc rc = TS_OK;
    bool m = false;
    if (!cache) return ts_err_set(a->err, TS_ENOMEM, "out of memory");
    if (cache[flat] == 1 || cache[flat] == 2) {
      *match = cache[flat] == 2;
      continue;
    }
    ts_err_clear(&e);
    rc = w->eval ? w->eval(w->eval_ctx, sel[i].cel, w->slices[si], d, &m, &e)
                 : ts_err_set(&e, TS_EUNSUPPORTED, "no CEL evaluator");
    if (rc != TS_OK) {
      const char *kind = rc == TS_EPARSE ? "compile" : "runtime";
      cache[flat] = 3;
      if (cls)
        return ts_err_set(a->err, rc, "class %s: selector #%u: CEL %s error: %s", cls->obj.name, i,
                          kind, e.text);
      return ts_err_set(a->err, rc, "claim %s: selector #%u: CEL %s error: %s", c->name, i, kind,
                        e.text);
    }
    cache[flat] = m ? 2 : 1;
    *match = m;
  }
  return TS_OK;
}

static ts_rc selectable(alloc *a, const cstate *c, const entry *e, uint32_t si, uint32_t d,
                        bool *ok) {
  const model_slice *s = a->w->slices[si];
  const model_device *dev = &s->devices[d];
  ts_rc rc;
  *ok = false;
  if (!a->w->f.device_binding && dev->nbinding_conditions) return TS_OK; /* gate off: never */
  if (e->cls && ((rc = selectors_match(a, c, e->cls, e->cls->selectors, e->cls->nselectors, si, d,
                                       ok)) != TS_OK ||
                 !*ok))
    return rc;
  if ((rc = selectors_match(a, c, NULL, e->r->selectors, e->r->nselectors, si, d, ok)) != TS_OK ||
      !*ok)
    return rc;
  if (s->per_device_node_selection)
    *ok = node_matches(a, dev->node_name, dev->all_nodes, &dev->node_selector);
  return TS_OK;
}

/* ---- validation of requests ------------------------------------------------------------ */

static ts_rc validate_entry(alloc *a, cstate *c, entry *e) {
  const model_subrequest *r = e->r;
  const char *rname = r->name;
  for (uint32_t i = 0; i < r->nselectors; i++)
    if (r->selectors[i].kind != MODEL_SELECTOR_CEL)
      return ts_err_set(
          a->err, TS_EINVAL,
          "claim %s, request %s, selector #%u: CEL expression empty (unsupported selector type?)",
          c->name, rname, i);
  if (!a->w->f.admin_access && r->admin_access)
    return ts_err_set(
        a->err, TS_EINVAL,
        "claim %s, request %s: admin access is requested, but the feature is disabled", c->name,
        rname);
  if (!r->device_class || !*r->device_class)
    return ts_err_set(a->err, TS_EINVAL,
                      "claim %s, request %s: missing device class name (unsupported request type?)",
                      c->name, rname);
  e->cls = a->w->cls ? a->w->cls(a->w->cls_ctx, r->device_class) : NULL;
  if (!e->cls)
    return ts_err_set(a->err, TS_ENOTFOUND,
                      "claim %s, request %s: could not retrieve device class %s: "
                      "deviceclass.resource.k8s.io \"%s\" not found",
                      c->name, rname, r->device_class, r->device_class);
  if (r->mode == MODEL_ALLOC_EXACT_COUNT) {
    e->num = r->count > 0 && r->count < (1 << 30) ? (uint32_t)r->count : 0;
    return TS_OK;
  }
  if (r->mode != MODEL_ALLOC_ALL)
    return ts_err_set(a->err, TS_EINVAL, "claim %s, request %s: unsupported count mode %s", c->name,
                      rname, r->mode_text ? r->mode_text : "");
  e->all = ts_arena_alloc(a->arena, DRA_MAX_RESULTS * 2 * sizeof *e->all);
  if (!e->all) return ts_err_set(a->err, TS_ENOMEM, "out of memory");
  for (uint32_t p = 0; p < a->npools; p++) {
    const cpool *pool = &a->pools[p];
    const wpool *wp = &a->w->pools[pool->wpool];
    if (pool->incomplete)
      return ts_err_set(a->err, TS_EINVAL,
                        "claim %s, request %s: asks for all devices, but resource pool %s/%s is "
                        "currently being updated",
                        c->name, rname, wp->driver, wp->name);
    if (pool->invalid)
      return ts_err_set(a->err, TS_EINVAL,
                        "claim %s, request %s: asks for all devices, but resource pool %s/%s is "
                        "currently invalid",
                        c->name, rname, wp->driver, wp->name);
    for (uint32_t i = 0; i < pool->n; i++) {
      uint32_t si = pool->slices[i];
      for (uint32_t d = 0; d < a->w->slices[si]->ndevices; d++) {
        bool ok;
        ts_rc rc = selectable(a, c, e, si, d, &ok);
        if (rc != TS_OK) return rc;
        if (!ok) continue;
        if (e->num == DRA_MAX_RESULTS * 2) {
          e->num++;
          continue;
        } /* over the limit anyway */
        e->all[e->num++] = a->w->flat_base[si] + d;
      }
    }
  }
  return TS_OK;
}

static const char *sub_name(ts_arena *arena, const char *req, const char *sub) {
  char buf[512];
  (void)arena;
  snprintf(buf, sizeof buf, "%s/%s", req, sub);
  return ts_intern_cstr(buf);
}

/* Validates the requests of a claim and counts the fewest devices it needs. */
static ts_rc validate_claim(alloc *a, cstate *c, uint32_t *min_devices) {
  const model_claim_spec *s = c->spec;
  *min_devices = 0;
  c->entries = ts_arena_alloc(a->arena, (s->nrequests + 1) * sizeof *c->entries);
  c->selected = ts_arena_alloc(a->arena, (s->nrequests + 1) * sizeof *c->selected);
  c->cons = ts_arena_alloc(a->arena, (s->nconstraints + 1) * sizeof *c->cons);
  if (!c->entries || !c->selected || !c->cons)
    return ts_err_set(a->err, TS_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < s->nrequests; i++) {
    const model_request *r = &s->requests[i];
    uint32_t n = r->first_available ? r->nsubs : 1, fewest = UINT32_MAX;
    if (r->first_available && !a->w->f.prioritized_list)
      return ts_err_set(
          a->err, TS_EINVAL,
          "claim %s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled",
          c->name, r->name);
    c->entries[i] = ts_arena_alloc(a->arena, (n + 1) * sizeof **c->entries);
    if (!c->entries[i]) return ts_err_set(a->err, TS_ENOMEM, "out of memory");
    c->selected[i] = 0;
    for (uint32_t k = 0; k < n; k++) {
      entry *e = &c->entries[i][k];
      ts_rc rc;
      memset(e, 0, sizeof *e);
      e->r = r->first_available ? &r->subs[k] : &r->exactly;
      e->parent = r->first_available ? r : NULL;
      e->result_name = r->first_available ? sub_name(a->arena, r->name, e->r->name) : r->name;
      if ((rc = validate_entry(a, c, e)) != TS_OK) return rc;
      if (e->num < fewest) fewest = e->num;
    }
    *min_devices += fewest;
  }
  if (*min_devices > DRA_MAX_RESULTS)
    return ts_err_set(a->err, TS_ELIMIT,
                      "claim %s: number of requested devices %u exceeds the claim limit of %d",
                      c->name, *min_devices, DRA_MAX_RESULTS);
  for (uint32_t i = 0; i < s->nconstraints; i++) {
    const model_constraint *k = &s->constraints[i];
    const char *full = k->match_attribute ? k->match_attribute : k->distinct_attribute;
    const char *slash;
    memset(&c->cons[i], 0, sizeof c->cons[i]);
    c->cons[i].c = k;
    if (!full)
      return ts_err_set(a->err, TS_EINVAL,
                        "claim %s, constraint #%u: empty constraint (unsupported constraint type?)",
                        c->name, i);
    slash = strchr(full, '/');
    c->cons[i].domain = slash ? ts_intern(full, (size_t)(slash - full)) : NULL;
    c->cons[i].name = ts_intern_cstr(slash ? slash + 1 : full);
  }
  return TS_OK;
}

/* ---- constraints ----------------------------------------------------------------------- */

static bool cons_applies(const cons *k, const entry *e) {
  if (!k->c->nrequests) return true;
  for (uint32_t i = 0; i < k->c->nrequests; i++) {
    const char *n = k->c->requests[i];
    if (n == (e->parent ? e->parent->name : e->r->name) || (e->parent && n == e->result_name))
      return true;
  }
  return false;
}

/* The attribute a fully qualified constraint name refers to on a device of `driver`. */
static const model_attr *lookup_attr(const cons *k, const model_device *d, const char *driver) {
  if (!k->domain) return NULL;
  for (uint32_t i = 0; i < d->nattrs; i++)
    if (d->attrs[i].name == k->name && d->attrs[i].domain == k->domain) return &d->attrs[i];
  (void)driver;
  return NULL;
}

static bool attr_equal(const model_attr *x, const model_attr *y) {
  if (x->kind != y->kind) return false;
  switch (x->kind) {
  case MODEL_ATTR_BOOL:
    return x->b == y->b;
  case MODEL_ATTR_INT:
    return x->i == y->i;
  default:
    return !strcmp(x->s ? x->s : "", y->s ? y->s : "");
  }
}

static bool cons_add(cons *k, const entry *e, const model_device *d, const char *driver) {
  const model_attr *v;
  if (!cons_applies(k, e)) return true;
  if (!(v = lookup_attr(k, d, driver))) return false;
  if (k->c->distinct_attribute && !k->c->match_attribute) {
    for (uint32_t i = 0; i < k->count && i < DRA_MAX_RESULTS; i++)
      if (attr_equal(k->seen[i], v)) return false;
    if (k->count < DRA_MAX_RESULTS) k->seen[k->count] = v;
  } else if (k->count && !attr_equal(k->first, v)) {
    return false;
  }
  if (!k->count) k->first = v;
  k->count++;
  return true;
}

static void cons_remove(cons *k, const entry *e) {
  if (cons_applies(k, e)) k->count--;
}

/* ---- devices in use, counters, taints -------------------------------------------------- */

static bool allocating_for(const alloc *a, uint32_t id, int64_t claim) {
  for (uint32_t i = 0; i < a->nallocating; i++)
    if (a->allocating[i].id == id && (claim < 0 || a->allocating[i].claim == (uint32_t)claim))
      return true;
  return false;
}

static bool in_use(const alloc *a, uint32_t id) {
  return a->w->allocated[id] || allocating_for(a, id, -1);
}

/* Index in the slice's flattened counters of counter `name` of set `set`, or -1. */
static int64_t counter_index(const model_slice *s, const char *set, const char *name) {
  uint32_t at = 0;
  for (uint32_t k = 0; k < s->ncounter_sets; k++) {
    const model_counter_set *cs = &s->counter_sets[k];
    if (cs->name == set)
      for (uint32_t m = 0; m < cs->ncounters; m++)
        if (cs->counters[m].name == name) return at + m;
    at += cs->ncounters;
  }
  return -1;
}

/* Adds (or, with sign < 0, would need) what device d of slice s consumes into used[]. */
static bool consume(const model_slice *s, const model_device *d, ts_quantity *used) {
  for (uint32_t c = 0; c < d->nconsumes; c++)
    for (uint32_t n = 0; n < d->consumes[c].ncounters; n++) {
      int64_t i = counter_index(s, d->consumes[c].name, d->consumes[c].counters[n].name);
      if (i >= 0 && ts_quantity_add(&used[i], &d->consumes[c].counters[n].value, &used[i]) != TS_OK)
        return false;
    }
  return true;
}

/* The counters slice si's allocated devices consume, recomputed when allocations changed.
 * Cost: O(devices of the slice) once per change, instead of per candidate device. */
static ts_quantity *slice_used(const dra_world *cw, uint32_t si) {
  dra_world *w = (dra_world *)cw;
  const model_slice *s = w->slices[si];
  ts_quantity *used = w->ctr_used + w->ctr_base[si];
  if (w->ctr_gen[si] == w->alloc_gen) return used;
  for (uint32_t k = 0, at = 0; k < s->ncounter_sets; k++)
    for (uint32_t m = 0; m < s->counter_sets[k].ncounters; m++, at++)
      used[at] = ts_quantity_from_int(0, s->counter_sets[k].counters[m].value.format);
  for (uint32_t o = 0; o < s->ndevices; o++)
    if (w->allocated[w->flat_id[w->flat_base[si] + o]]) consume(s, &s->devices[o], used);
  w->ctr_gen[si] = w->alloc_gen;
  return used;
}

/* Shared counters of the device's slice minus what allocated devices of it, and the devices
 * being allocated in this attempt, consume. */
static bool counters_available(const alloc *a, uint32_t si, uint32_t d) {
  const dra_world *w = a->w;
  const model_slice *s = w->slices[si];
  const model_device *dev = &s->devices[d];
  const ts_quantity *used = slice_used(w, si);
  for (uint32_t c = 0; c < dev->nconsumes; c++) {
    const model_counter_set *want = &dev->consumes[c];
    const model_counter_set *set = NULL;
    for (uint32_t k = 0; k < s->ncounter_sets && !set; k++)
      if (s->counter_sets[k].name == want->name) set = &s->counter_sets[k];
    for (uint32_t n = 0; n < want->ncounters; n++) {
      int64_t i = counter_index(s, want->name, want->counters[n].name);
      ts_quantity avail = {0};
      if (!set || i < 0) return false;
      for (uint32_t m = 0; m < set->ncounters; m++) /* the set's value of this counter */
        if (set->counters[m].name == want->counters[n].name) avail = set->counters[m].value;
      if (ts_quantity_sub(&avail, &used[i], &avail) != TS_OK) return false;
      for (size_t cl = 0; cl < a->nclaims; cl++) { /* devices chosen so far in this attempt */
        const dra_result *r = a->claims[cl].res;
        for (uint32_t x = 0; r && x < r->ndevices; x++) {
          const model_device *o = r->devices[x].device;
          if (r->devices[x].slice != s || r->devices[x].admin_access) continue;
          for (uint32_t oc = 0; oc < o->nconsumes; oc++) {
            if (o->consumes[oc].name != want->name) continue;
            for (uint32_t un = 0; un < o->consumes[oc].ncounters; un++)
              if (o->consumes[oc].counters[un].name == want->counters[n].name &&
                  ts_quantity_sub(&avail, &o->consumes[oc].counters[un].value, &avail) != TS_OK)
                return false;
          }
        }
      }
      if (ts_quantity_cmp(&avail, &want->counters[n].value) < 0) return false;
    }
  }
  return true;
}

static bool tolerated(const model_device_taint *t, const model_subrequest *r) {
  for (uint32_t i = 0; i < r->ntolerations; i++) {
    const model_device_toleration *x = &r->tolerations[i];
    if (x->effect != MODEL_EFFECT_ANY && x->effect != t->effect) continue;
    if (*x->key && x->key != t->key) continue;
    if (x->exists || x->value == t->value) return true;
  }
  return false;
}

static bool taints_tolerated(const model_device *d, const model_subrequest *r) {
  for (uint32_t i = 0; i < d->ntaints; i++)
    if (!tolerated(&d->taints[i], r)) return false;
  return true;
}

/* ---- the search ------------------------------------------------------------------------ */

/* Where a request's search for its next device starts: devices of one request are taken in
 * pool, slice, device order, so that the search tries combinations, not permutations. */
typedef struct loc {
  uint32_t pool, slice, device; /* indexes in a->pools, the pool's slices, the slice */
} loc;

typedef struct pos {
  uint32_t claim, request, sub, device; /* what is being allocated */
} pos;

static ts_rc allocate_one(alloc *a, pos p, bool in_sub, loc from, bool *done);

/* Tries one selectable device; *added when it was taken (undo with release). `must`: All. */
static ts_rc take_device(alloc *a, pos p, uint32_t si, uint32_t d, bool must, bool *added) {
  cstate *c = &a->claims[p.claim];
  entry *e = &c->entries[p.request][p.sub];
  const model_slice *s = a->w->slices[si];
  const model_device *dev = &s->devices[d];
  uint32_t id = a->w->flat_id[a->w->flat_base[si] + d];
  dra_result *res = c->res;
  uint32_t k;
  *added = false;
  if (e->r->admin_access ? allocating_for(a, id, p.claim) : in_use(a, id)) return TS_OK;
  if (dev->nconsumes && !a->w->f.partitionable_devices) return TS_OK; /* gate off: never */
  if (dev->nconsumes && !counters_available(a, si, d)) return TS_OK;
  if (a->w->f.device_taints && !taints_tolerated(dev, e->r)) return TS_OK;
  for (k = 0; k < c->spec->nconstraints; k++) {
    if (cons_add(&c->cons[k], e, dev, s->driver)) continue;
    if (must)
      return ts_err_set(a->err, TS_EINVAL,
                        "claim %s, request %s: cannot add device %s/%s/%s because a claim "
                        "constraint would not be satisfied",
                        c->name, e->r->name, s->driver, s->pool, dev->name);
    while (k-- > 0) cons_remove(&c->cons[k], e);
    return TS_OK;
  }
  if (a->nallocating == a->using_cap || res->ndevices == DRA_MAX_RESULTS) {
    for (k = 0; k < c->spec->nconstraints; k++) cons_remove(&c->cons[k], e);
    return TS_OK;
  }
  a->allocating[a->nallocating++] = (using){id, p.claim};
  res->devices[res->ndevices++] = (dra_device){e->result_name, s, dev, e->r->admin_access};
  *added = true;
  return TS_OK;
}

static void release_device(alloc *a, pos p) {
  cstate *c = &a->claims[p.claim];
  entry *e = &c->entries[p.request][p.sub];
  for (uint32_t k = 0; k < c->spec->nconstraints; k++) cons_remove(&c->cons[k], e);
  a->nallocating--;
  c->res->ndevices--;
}

/* One alternative after the other for a request with firstAvailable. An alternative that
 * would take the claim over the device limit gives way to the next (which may need fewer);
 * when every one of them did, the limit is reached whatever is tried here, and the caller
 * backtracks further (upstream's errAllocationResultMaxSizeExceeded). */
static ts_rc try_alternatives(alloc *a, pos p, bool *done) {
  cstate *c = &a->claims[p.claim];
  const model_request *r = &c->spec->requests[p.request];
  bool all_over = true;
  for (uint32_t k = 0; k < r->nsubs; k++) {
    ts_rc rc;
    p.sub = k;
    if ((rc = allocate_one(a, p, true, (loc){0, 0, 0}, done)) != TS_OK) return rc;
    if (a->over) {
      a->over = false;
      continue;
    }
    all_over = false;
    if (*done) {
      c->selected[p.request] = k;
      return TS_OK;
    }
  }
  *done = false;
  a->over = all_over;
  return TS_OK;
}

/* allocationMode All: the devices are known; take them in order. */
static ts_rc take_all(alloc *a, pos p, bool in_sub, bool *done) {
  entry *e = &a->claims[p.claim].entries[p.request][p.sub];
  uint32_t flat = e->all[p.device], si = 0;
  bool added;
  ts_rc rc;
  while (si + 1 < a->w->nslices && a->w->flat_base[si + 1] <= flat) si++;
  if ((rc = take_device(a, p, si, flat - a->w->flat_base[si], true, &added)) != TS_OK) return rc;
  *done = false;
  if (!added) return TS_OK;
  p.device++;
  if ((rc = allocate_one(a, p, in_sub, (loc){0, 0, 0}, done)) != TS_OK) return rc;
  if (!*done) release_device(a, p);
  return TS_OK;
}

/* One eligible device at pool i, slice k, device d for the required device at p: taken, then
 * the rest searched from the next device on. */
static ts_rc try_device(alloc *a, pos p, bool in_sub, uint32_t i, uint32_t k, uint32_t d,
                        bool *done) {
  entry *e = &a->claims[p.claim].entries[p.request][p.sub];
  uint32_t si = a->pools[i].slices[k], id = a->w->flat_id[a->w->flat_base[si] + d];
  bool ok, added;
  ts_rc rc;
  *done = false;
  if (e->r->admin_access ? allocating_for(a, id, p.claim) : in_use(a, id)) return TS_OK;
  if ((rc = selectable(a, &a->claims[p.claim], e, si, d, &ok)) != TS_OK || !ok) return rc;
  if ((rc = take_device(a, p, si, d, false, &added)) != TS_OK || !added) return rc;
  p.device++;
  rc = allocate_one(a, p, in_sub, (loc){i, k, d + 1}, done);
  p.device--;
  if (rc == TS_OK && !*done) release_device(a, p);
  return rc;
}

/* Every eligible device for the required device at p from `from` on, depth first. */
static ts_rc search_devices(alloc *a, pos p, bool in_sub, loc from, bool *done) {
  *done = false;
  for (uint32_t i = from.pool; i < a->npools; i++) {
    const cpool *pool = &a->pools[i];
    if (pool->invalid)
      return ts_err_set(a->err, TS_EINVAL, "pool %s is invalid: %s", a->w->pools[pool->wpool].name,
                        pool->reason ? pool->reason : "");
    if (pool->incomplete) continue;
    for (uint32_t k = i == from.pool ? from.slice : 0; k < pool->n; k++) {
      uint32_t si = pool->slices[k];
      uint32_t d0 = i == from.pool && k == from.slice ? from.device : 0;
      for (uint32_t d = d0; d < a->w->slices[si]->ndevices; d++) {
        ts_rc rc = try_device(a, p, in_sub, i, k, d, done);
        if (rc != TS_OK || *done || a->over) return rc;
      }
    }
  }
  return TS_OK;
}

/* The budget of one allocation: every step of the search counts, and a claim set whose search
 * takes longer is not allocated (a clear error, as a CEL error is), so that no tenant's claim
 * can stall the cycle. Upstream bounds it by time (the filter's timeout); steps keep replay
 * deterministic. */
static ts_rc spend(alloc *a) {
  if (++a->steps <= a->budget) return TS_OK;
  return ts_err_set(a->err, TS_ELIMIT,
                    "the search for devices gave up after %llu steps: the claims' requests and "
                    "constraints leave too many combinations to try",
                    (unsigned long long)a->budget);
}

static ts_rc allocate_one(alloc *a, pos p, bool in_sub, loc from, bool *done) {
  cstate *c;
  entry *e;
  ts_rc rc;
  *done = false;
  if ((rc = spend(a)) != TS_OK) return rc;
  if (p.claim >= a->nclaims) return *done = true, TS_OK;
  c = &a->claims[p.claim];
  if (p.request >= c->spec->nrequests) {
    rc = allocate_one(a, (pos){p.claim + 1, 0, 0, 0}, false, (loc){0, 0, 0}, done);
    a->over = false; /* a later claim's limit: other choices here may still leave room */
    return rc;
  }
  if (!in_sub && c->spec->requests[p.request].first_available) return try_alternatives(a, p, done);
  e = &c->entries[p.request][p.sub];
  if (e->r->mode == MODEL_ALLOC_ALL && !e->num) return TS_OK;
  if (p.device >= e->num)
    return allocate_one(a, (pos){p.claim, p.request + 1, 0, 0}, false, (loc){0, 0, 0}, done);
  if (c->res->ndevices + e->num - p.device > DRA_MAX_RESULTS) {
    a->over = true; /* over the limit whatever is chosen here: backtrack further */
    return TS_OK;
  }
  if (e->r->mode == MODEL_ALLOC_ALL) return take_all(a, p, in_sub, done);
  return search_devices(a, p, in_sub, from, done);
}

/* ---- results --------------------------------------------------------------------------- */

static bool has_name(const model_claim_config *cfg, const char *name) {
  for (uint32_t i = 0; i < cfg->nrequests; i++)
    if (cfg->requests[i] == name) return true;
  return false;
}

static bool push_config(alloc *a, dra_result *res, uint32_t *cap, dra_config c) {
  if (res->nconfigs == *cap) {
    uint32_t ncap = *cap ? *cap * 2 : 4;
    dra_config *n = ts_arena_alloc(a->arena, ncap * sizeof *n);
    if (!n) return false;
    if (res->nconfigs) memcpy(n, res->configs, res->nconfigs * sizeof *n);
    res->configs = n, *cap = ncap;
  }
  res->configs[res->nconfigs++] = c;
  return true;
}

/* Configs as upstream writes them: each request's class configs, then the claim's configs
 * that apply to all requests, to a request by name (once per such request), or to the chosen
 * alternative "req/sub". */
static ts_rc build_configs(alloc *a, cstate *c) {
  const model_claim_spec *s = c->spec;
  dra_result *res = c->res;
  uint32_t cap = 0;
  for (uint32_t i = 0; i < s->nrequests; i++) {
    const entry *e = &c->entries[i][c->selected[i]];
    for (uint32_t k = 0; e->cls && k < e->cls->nconfigs; k++)
      if (!push_config(a, res, &cap, (dra_config){MODEL_FROM_CLASS, NULL, 0, &e->cls->configs[k]}))
        return TS_ENOMEM;
  }
  for (uint32_t k = 0; k < s->nconfigs; k++) {
    const model_claim_config *cfg = &s->configs[k];
    dra_config out = {MODEL_FROM_CLAIM, cfg->requests, cfg->nrequests, &cfg->opaque};
    if (!cfg->nrequests) {
      if (!push_config(a, res, &cap, out)) return TS_ENOMEM;
      continue;
    }
    for (uint32_t i = 0; i < s->nrequests; i++) {
      const model_request *r = &s->requests[i];
      bool hit = has_name(cfg, r->name) ||
                 (r->first_available && has_name(cfg, c->entries[i][c->selected[i]].result_name));
      if (hit && !push_config(a, res, &cap, out)) return TS_ENOMEM;
    }
  }
  return TS_OK;
}

static bool same_req(const model_req *x, const model_req *y) {
  if (x->key != y->key || x->op != y->op || x->nvalues != y->nvalues) return false;
  for (uint32_t i = 0; i < x->nvalues; i++) {
    bool found = false;
    for (uint32_t j = 0; j < y->nvalues && !found; j++) found = x->values[i] == y->values[j];
    if (!found) return false;
  }
  return true;
}

/* Appends the requirements of `from` that `to` lacks. */
static bool merge_reqs(alloc *a, const model_req *from, uint32_t n, model_req **to, uint32_t *nto) {
  for (uint32_t i = 0; i < n; i++) {
    bool dup = false;
    model_req *nv;
    for (uint32_t j = 0; j < *nto && !dup; j++) dup = same_req(&from[i], &(*to)[j]);
    if (dup) continue;
    if (!(nv = ts_arena_alloc(a->arena, (*nto + 1) * sizeof *nv))) return false;
    if (*nto) memcpy(nv, *to, *nto * sizeof *nv);
    nv[(*nto)++] = from[i];
    *to = nv;
  }
  return true;
}

static ts_rc node_local(alloc *a, dra_result *res, const char *node) {
  model_node_term *t = ts_arena_alloc(a->arena, sizeof *t);
  model_req *r = ts_arena_alloc(a->arena, sizeof *r);
  const char **v = ts_arena_alloc(a->arena, sizeof *v);
  if (!t || !r || !v) return TS_ENOMEM;
  *v = ts_intern_cstr(node);
  *r = (model_req){ts_intern_cstr("metadata.name"), MODEL_OP_IN, v, 1, 0};
  *t = (model_node_term){NULL, 0, r, 1};
  res->node_selector = (model_node_selector){t, 1};
  return TS_OK;
}

/* Where the allocated devices are: the node itself when any is node-local (or binds to the
 * node), else the union of the slices' single-term node selectors, else everywhere. */
static ts_rc build_node_selector(alloc *a, dra_result *res) {
  model_node_term term = {0};
  res->node_selector = (model_node_selector){0};
  for (uint32_t i = 0; i < res->ndevices; i++) {
    const model_slice *s = res->devices[i].slice;
    const model_device *d = res->devices[i].device;
    const char *name = s->per_device_node_selection ? d->node_name : s->node_name;
    const model_node_selector *sel =
        s->per_device_node_selection ? &d->node_selector : &s->node_selector;
    if (name) return node_local(a, res, name);
    if (a->w->f.device_binding && d->binds_to_node && a->node) return node_local(a, res, a->node);
    if (sel->nterms > 1)
      return ts_err_set(a->err, TS_EINVAL, "unsupported ResourceSlice.NodeSelector with %u terms",
                        sel->nterms);
    if (sel->nterms == 1 &&
        (!merge_reqs(a, sel->terms[0].fields, sel->terms[0].nfields, &term.fields, &term.nfields) ||
         !merge_reqs(a, sel->terms[0].exprs, sel->terms[0].nexprs, &term.exprs, &term.nexprs)))
      return TS_ENOMEM;
  }
  if (term.nfields || term.nexprs) {
    model_node_term *t = ts_arena_alloc(a->arena, sizeof *t);
    if (!t) return TS_ENOMEM;
    *t = term;
    res->node_selector = (model_node_selector){t, 1};
  }
  return TS_OK;
}

ts_rc dra_allocate(dra_world *w, const char *node_name, const model_labels *node_labels,
                   const model_claim_spec *const *claims, const char *const *claim_names,
                   size_t nclaims, ts_arena *arena, dra_result *results, bool *ok, ts_err *err) {
  alloc a = {0};
  ts_rc rc = TS_OK;
  bool done = false;
  *ok = false;
  if (nclaims > DRA_MAX_CLAIMS)
    return ts_err_set(err, TS_ELIMIT, "more than %d claims for one pod", DRA_MAX_CLAIMS);
  a.w = w, a.node = node_name ? ts_intern_cstr(node_name) : NULL, a.labels = node_labels;
  a.nclaims = nclaims, a.arena = arena, a.err = err;
  a.using_cap = (uint32_t)(DRA_MAX_RESULTS * (nclaims ? nclaims : 1));
  a.claims = ts_arena_alloc(arena, (nclaims + 1) * sizeof *a.claims);
  a.allocating = ts_arena_alloc(arena, a.using_cap * sizeof *a.allocating);
  if (!a.claims || !a.allocating) return ts_err_set(err, TS_ENOMEM, "out of memory");
  if ((rc = gather_pools(&a)) != TS_OK)
    return ts_err_set(err, rc, "gather pool information: %s", ts_strerror(rc));
  for (size_t i = 0; i < nclaims && rc == TS_OK; i++) {
    uint32_t min_devices;
    memset(&a.claims[i], 0, sizeof a.claims[i]);
    a.claims[i].spec = claims[i], a.claims[i].name = claim_names[i], a.claims[i].res = &results[i];
    memset(&results[i], 0, sizeof results[i]);
    rc = validate_claim(&a, &a.claims[i], &min_devices);
  }
  a.budget = DRA_SEARCH_BUDGET;
  if (rc == TS_OK) rc = allocate_one(&a, (pos){0, 0, 0, 0}, false, (loc){0, 0, 0}, &done);
  if (rc != TS_OK || !done) return rc;
  for (size_t i = 0; i < nclaims; i++) {
    if ((rc = build_configs(&a, &a.claims[i])) != TS_OK)
      return ts_err_set(err, rc, "out of memory");
    if ((rc = build_node_selector(&a, &results[i])) != TS_OK) {
      if (rc == TS_ENOMEM)
        ts_err_set(err, rc, "out of memory");
      else
        ts_err_prefix(err, "create NodeSelector for claim %s", claim_names[i]);
      return rc;
    }
  }
  *ok = true;
  return TS_OK;
}
