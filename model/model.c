/* model/model.c - the object store and its indexes: by kind and key, by uid, pods by node
 * name (with per-node resource sums), nodes by label, slices by node and by pool. */
#include "model/model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pods that name a node, whether or not the node is known yet. */
struct model_pod_bucket {
  const char *node_name; /* interned; the map key */
  ts_list pods;          /* model_pod.node_link, insertion order */
  model_node *node;      /* the node when known */
};

/* A vector of object pointers under an owned string key (label and slice indexes). */
typedef struct ptr_vec {
  char *key; /* owned map key */
  TS_VEC(void *) v;
} ptr_vec;

model *model_new(void) {
  model *m = ts_calloc(1, sizeof *m);
  if (!m) return NULL;
  for (int k = 0; k < MODEL_KIND_COUNT; k++) ts_map_init(&m->by_key[k]);
  ts_map_init(&m->by_uid);
  ts_map_init(&m->buckets);
  ts_map_init(&m->node_label_index);
  ts_map_init(&m->slices_by_node);
  ts_map_init(&m->slices_by_pool);
  ts_list_init(&m->unresolved);
  if (!(m->res = model_resources_new())) {
    model_free(m);
    return NULL;
  }
  m->res_resolved = model_resource_count(m->res);
  return m;
}

model_resources *model_resources_of(const model *m) {
  return m->res;
}

static void ptr_index_free(ts_map *map) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(map, &it, &s)) {
    ptr_vec *pv = s->value;
    ts_free(pv->key);
    ts_vec_free(&pv->v);
    ts_free(pv);
  }
  ts_map_free(map);
}

void model_free(model *m) {
  size_t it;
  const ts_map_slot *s;
  if (!m) return;
  for (int k = 0; k < MODEL_KIND_COUNT; k++) {
    it = 0;
    while (ts_map_next(&m->by_key[k], &it, &s)) model_obj_free(s->value);
    ts_map_free(&m->by_key[k]);
  }
  it = 0;
  while (ts_map_next(&m->buckets, &it, &s)) ts_free(s->value);
  ts_map_free(&m->buckets);
  ts_map_free(&m->by_uid);
  ptr_index_free(&m->node_label_index);
  ptr_index_free(&m->slices_by_node);
  model_resources_free(m->res);
  ptr_index_free(&m->slices_by_pool);
  ts_vec_free(&m->nodes);
  ts_free(m);
}

/* ---- generic pointer indexes ----------------------------------------------------------- */

static ts_rc ptr_index_add(ts_map *map, const char *key, void *p) {
  ptr_vec *pv = ts_map_get(map, key, strlen(key));
  if (!pv) {
    pv = ts_calloc(1, sizeof *pv);
    if (!pv || !(pv->key = ts_strdup(key))) {
      ts_free(pv);
      return TS_ENOMEM;
    }
    if (ts_map_put(map, pv->key, strlen(pv->key), pv, NULL) != TS_OK) {
      ts_free(pv->key);
      ts_free(pv);
      return TS_ENOMEM;
    }
  }
  return ts_vec_push(&pv->v, p);
}

/* Removes p keeping the order of the rest; drops the entry when it becomes empty. */
static void ptr_index_del(ts_map *map, const char *key, void *p) {
  ptr_vec *pv = ts_map_get(map, key, strlen(key));
  if (!pv) return;
  for (size_t i = 0; i < pv->v.n; i++) {
    if (pv->v.v[i] != p) continue;
    memmove(&pv->v.v[i], &pv->v.v[i + 1], (pv->v.n - i - 1) * sizeof(void *));
    pv->v.n--;
    break;
  }
  if (!pv->v.n) {
    ts_map_del(map, pv->key, strlen(pv->key));
    ts_free(pv->key);
    ts_vec_free(&pv->v);
    ts_free(pv);
  }
}

static void *const *ptr_index_get(const ts_map *map, const char *key, size_t *n) {
  ptr_vec *pv = ts_map_get(map, key, strlen(key));
  *n = pv ? pv->v.n : 0;
  return pv ? pv->v.v : NULL;
}

static void label_key(char *out, size_t cap, const char *k, const char *v) {
  snprintf(out, cap, "%s=%s", k, v);
}

/* ---- pods and nodes -------------------------------------------------------------------- */

static model_pod_bucket *bucket_get(model *m, const char *node_name, bool create) {
  model_pod_bucket *b = ts_map_get(&m->buckets, node_name, strlen(node_name));
  if (b || !create) return b;
  b = ts_calloc(1, sizeof *b);
  if (!b) return NULL;
  b->node_name = node_name;
  ts_list_init(&b->pods);
  if (ts_map_put(&m->buckets, node_name, strlen(node_name), b, NULL) != TS_OK) {
    ts_free(b);
    return NULL;
  }
  return b;
}

static void bucket_maybe_drop(model *m, model_pod_bucket *b) {
  if (b->node || !ts_list_empty(&b->pods)) return;
  ts_map_del(&m->buckets, b->node_name, strlen(b->node_name));
  ts_free(b);
}

/* Adds (sign 1) or removes (-1) a pod's requests from its node's usage. A total past int64
 * saturates (the node is full for that resource: nothing more is placed there) and is
 * recounted from the node's pods once a pod leaves. */
/* Another counted pod of p's KAI GPU group on node n whose share is counted at slot (a GPU
 * index, or MODEL_GPU_UNKNOWN with want_holder: one that counts the group's used GPU; without:
 * one that does not), or NULL. O(pods of the node). */
static model_pod *group_peer(const model_node *n, const model_pod *p, int32_t slot, bool holder) {
  ts_list *it;
  if (!p->gpu_group || !n->bucket) return NULL;
  ts_list_foreach(it, &n->bucket->pods) {
    model_pod *q = ts_container_of(it, model_pod, node_link);
    if (q == p || q->node != n || q->gpu_group != p->gpu_group || q->gpu_charged <= 0) continue;
    if (slot >= 0 ? q->gpu_slot >= 0 : q->gpu_slot == slot && q->gpu_holds == holder) return q;
  }
  return NULL;
}

static void used_gpus(model_node *n, int delta) {
  if (n->usage_overflow) return; /* recounted when a pod leaves */
  if (delta > 0 && !ts_add_ok(n->used[n->gpu_res], delta, &n->used[n->gpu_res]))
    n->used[n->gpu_res] = INT64_MAX, n->usage_overflow = true;
  else if (delta < 0)
    n->used[n->gpu_res] += delta;
}

/* Counts (sign 1) or stops counting (-1) a share pod's share on the node's GPUs. The GPU is the
 * one its index names (Tessera's tessera.dev/gpu-index, KAI's runai-gpu), else the one a pod of
 * its KAI GPU group is known to be on, and the share is counted there whatever that GPU already
 * holds (a GPU that others filled past 1000 stays full). Without one, the share is counted
 * against every GPU (gpu_unknown: no GPU takes a share that would pass 1000 with it) and as one
 * used GPU, once per GPU group. A GPU with a known share counts as one used nvidia.com/gpu until
 * its last share goes. */
static void charge_share(model_node *n, model_pod *p, int sign) {
  model_pod *q;
  int32_t s, k;
  if (sign < 0) {
    if (p->gpu_charged <= 0) return;
    if (p->gpu_slot >= 0 && (uint32_t)p->gpu_slot < n->ngpu_shares) {
      n->gpu_shares[p->gpu_slot] -= (uint32_t)p->gpu_charged;
      if (!n->gpu_shares[p->gpu_slot]) used_gpus(n, -1);
    } else if (p->gpu_slot == MODEL_GPU_UNKNOWN) {
      n->gpu_unknown -= (uint32_t)p->gpu_charged;
      if (p->gpu_holds && (q = group_peer(n, p, MODEL_GPU_UNKNOWN, false)))
        q->gpu_holds = true; /* the group still holds its GPU */
      else if (p->gpu_holds)
        used_gpus(n, -1), n->gpu_unknown_gpus--;
    }
    p->gpu_slot = -1, p->gpu_charged = 0, p->gpu_holds = false;
    return;
  }
  p->gpu_slot = -1, p->gpu_charged = 0, p->gpu_holds = false;
  if (!model_pod_shares_gpu(p) || p->share_problem || !n->ngpu_shares) return;
  if ((s = model_pod_gpu_share_on(p, n)) > 1000) s = 1000; /* bound there all the same */
  k = p->gpu_index;
  if (k < 0 && (q = group_peer(n, p, 0, false))) k = q->gpu_slot;
  p->gpu_charged = s;
  if (k >= 0 && (uint32_t)k < n->ngpu_shares) {
    if (!n->gpu_shares[k]) used_gpus(n, 1);
    n->gpu_shares[k] += (uint32_t)s;
    p->gpu_slot = k;
    return;
  }
  n->gpu_unknown += (uint32_t)s;
  p->gpu_slot = MODEL_GPU_UNKNOWN;
  if (group_peer(n, p, MODEL_GPU_UNKNOWN, true)) return; /* its group's GPU is counted */
  p->gpu_holds = true;
  n->gpu_unknown_gpus++;
  used_gpus(n, 1);
}

static void charge(model_node *n, model_pod *p, int sign) {
  charge_share(n, p, sign);
  for (uint32_t i = 0; i < p->requests.n; i++) {
    int64_t *u;
    if (p->requests.v[i].id >= n->nres) continue; /* the node offers none: nothing to count */
    u = &n->used[p->requests.v[i].id];
    if (sign > 0 && !ts_add_ok(*u, p->requests.v[i].v, u))
      *u = INT64_MAX, n->usage_overflow = true;
    else if (sign < 0 && !n->usage_overflow)
      *u -= p->requests.v[i].v;
  }
  n->npods += (uint32_t)sign;
}

/* The usage of a node whose totals overflowed, from its counted pods. */
static void recount(model_node *n) {
  ts_list *it;
  if (n->nres) memset(n->used, 0, n->nres * sizeof *n->used);
  if (n->ngpu_shares) memset(n->gpu_shares, 0, n->ngpu_shares * sizeof *n->gpu_shares);
  n->gpu_unknown = n->gpu_unknown_gpus = 0;
  n->usage_overflow = false;
  n->npods = 0;
  if (!n->bucket) return;
  ts_list_foreach(it, &n->bucket->pods) { /* no stale share is taken for a group's peer */
    model_pod *p = ts_container_of(it, model_pod, node_link);
    p->gpu_slot = -1, p->gpu_charged = 0, p->gpu_holds = false;
  }
  ts_list_foreach(it, &n->bucket->pods) {
    model_pod *p = ts_container_of(it, model_pod, node_link);
    if (p->node == n) charge(n, p, 1);
  }
}

/* Moves the pod's requests for names that now have an id into its requests. Out of memory
 * leaves them unresolved (the pod fits nowhere until the next try). */
static void resolve_requests(const model_resources *t, model_pod *p) {
  uint32_t found = 0, keep = 0, n = 0;
  int64_t unoffered = 0;
  model_rq *v;
  for (uint32_t i = 0; i < p->nunresolved; i++)
    found += model_resource_find(t, p->unresolved[i].name) >= 0;
  if (!found || !(v = ts_malloc((p->requests.n + found) * sizeof *v))) return;
  for (uint32_t i = 0; i < p->requests.n; i++)
    if (p->requests.v[i].id != MODEL_RES_UNOFFERED) v[n++] = p->requests.v[i];
  for (uint32_t i = 0; i < p->nunresolved; i++) {
    int id = model_resource_find(t, p->unresolved[i].name);
    if (id >= 0) {
      v[n++] = (model_rq){(uint16_t)id, p->unresolved[i].v};
    } else {
      unoffered = ts_add_sat(unoffered, p->unresolved[i].v);
      p->unresolved[keep++] = p->unresolved[i];
    }
  }
  if (keep) v[n++] = (model_rq){MODEL_RES_UNOFFERED, unoffered};
  qsort(v, n, sizeof *v, model__rq_cmp);
  ts_free(p->requests.v);
  p->requests.v = v, p->requests.n = n;
  p->nunresolved = keep;
  p->unoffered = keep ? p->unresolved[0].name : NULL;
}

/* After the table gained ids: resolves what the model's pods could not, recounting the usage
 * of the nodes they are bound to. */
static void resolve_all(model *m) {
  ts_list *it, *next;
  m->res_resolved = model_resource_count(m->res);
  for (it = m->unresolved.next; it != &m->unresolved; it = next) {
    model_pod *p = ts_container_of(it, model_pod, unresolved_link);
    model_node *n = p->node;
    next = it->next;
    if (n) charge(n, p, -1);
    resolve_requests(m->res, p);
    if (n) charge(n, p, 1);
    if (n && n->usage_overflow) recount(n);
    if (!p->nunresolved) ts_list_remove(&p->unresolved_link);
  }
}

static ts_rc pod_index(model *m, model_pod *p) {
  model_pod_bucket *b;
  m->nshare_pods += model_pod_shares_gpu(p);
  if (p->nunresolved) { /* decoded before a name got its id, or still without one */
    resolve_requests(m->res, p);
    if (p->nunresolved) ts_list_insert_tail(&m->unresolved, &p->unresolved_link);
  }
  if (!p->node_name) return TS_OK;
  b = bucket_get(m, p->node_name, true);
  if (!b) return TS_ENOMEM;
  ts_list_insert_tail(&b->pods, &p->node_link);
  if (b->node && model_pod_counts(p)) {
    p->node = b->node;
    charge(b->node, p, 1);
  }
  return TS_OK;
}

static void pod_unindex(model *m, model_pod *p) {
  model_pod_bucket *b;
  model_node *was = p->node;
  m->nshare_pods -= model_pod_shares_gpu(p);
  if (p->nunresolved) ts_list_remove(&p->unresolved_link);
  if (!p->node_name) return;
  b = bucket_get(m, p->node_name, false);
  if (p->node) charge(p->node, p, -1);
  p->node = NULL;
  ts_list_remove(&p->node_link);
  if (was && was->usage_overflow) recount(was);
  if (b) bucket_maybe_drop(m, b);
}

static ts_rc node_index(model *m, model_node *n) {
  const char *name = ts_intern_cstr(n->obj.name);
  model_pod_bucket *b = name ? bucket_get(m, name, true) : NULL;
  ts_list *it;
  char key[1024];
  int64_t gpus;
  if (!b) return TS_ENOMEM;
  n->gpu_res = model_resource_find(m->res, "nvidia.com/gpu");
  gpus = n->gpu_res >= 0 ? model_node_alloc(n, n->gpu_res) : 0;
  if (gpus > 0 && !n->gpu_shares) { /* per-GPU shares: the node's GPUs, up to a bound */
    n->ngpu_shares = (uint32_t)(gpus < MODEL_MAX_SHARED_GPUS ? gpus : MODEL_MAX_SHARED_GPUS);
    if (!(n->gpu_shares = ts_calloc(n->ngpu_shares, sizeof *n->gpu_shares))) return TS_ENOMEM;
  }
  n->bucket = b;
  b->node = n;
  ts_list_foreach(it, &b->pods) {
    model_pod *p = ts_container_of(it, model_pod, node_link);
    if (!model_pod_counts(p)) continue;
    p->node = n;
    charge(n, p, 1);
  }
  n->index = (uint32_t)m->nodes.n;
  if (ts_vec_push(&m->nodes, n) != TS_OK) return TS_ENOMEM;
  for (uint32_t i = 0; i < n->obj.labels.n; i++) {
    label_key(key, sizeof key, n->obj.labels.v[i].key, n->obj.labels.v[i].value);
    if (ptr_index_add(&m->node_label_index, key, n) != TS_OK) return TS_ENOMEM;
  }
  return TS_OK;
}

static void node_unindex(model *m, model_node *n) {
  model_pod_bucket *b = n->bucket;
  ts_list *it;
  char key[1024];
  if (b) {
    ts_list_foreach(it, &b->pods) {
      model_pod *p = ts_container_of(it, model_pod, node_link);
      p->node = NULL, p->gpu_slot = -1, p->gpu_charged = 0, p->gpu_holds = false;
    }
    b->node = NULL;
    bucket_maybe_drop(m, b);
  }
  if (n->index < m->nodes.n && m->nodes.v[n->index] == n) {
    m->nodes.v[n->index] = m->nodes.v[--m->nodes.n];
    m->nodes.v[n->index]->index = n->index;
  }
  for (uint32_t i = 0; i < n->obj.labels.n; i++) {
    label_key(key, sizeof key, n->obj.labels.v[i].key, n->obj.labels.v[i].value);
    ptr_index_del(&m->node_label_index, key, n);
  }
}

/* ---- slices ---------------------------------------------------------------------------- */

static void pool_key(char *out, size_t cap, const char *driver, const char *pool) {
  snprintf(out, cap, "%s/%s", driver, pool);
}

static ts_rc slice_index(model *m, model_slice *s) {
  char key[1024];
  pool_key(key, sizeof key, s->driver, s->pool);
  if (ptr_index_add(&m->slices_by_pool, key, s) != TS_OK) return TS_ENOMEM;
  if (s->node_name && ptr_index_add(&m->slices_by_node, s->node_name, s) != TS_OK) return TS_ENOMEM;
  return TS_OK;
}

static void slice_unindex(model *m, model_slice *s) {
  char key[1024];
  pool_key(key, sizeof key, s->driver, s->pool);
  ptr_index_del(&m->slices_by_pool, key, s);
  if (s->node_name) ptr_index_del(&m->slices_by_node, s->node_name, s);
}

/* ---- insert and remove ----------------------------------------------------------------- */

static ts_rc index_obj(model *m, model_obj *o) {
  switch (o->kind) {
  case MODEL_POD:
    return pod_index(m, (model_pod *)o);
  case MODEL_NODE:
    return node_index(m, (model_node *)o);
  case MODEL_RESOURCE_SLICE:
    return slice_index(m, (model_slice *)o);
  default:
    return TS_OK;
  }
}

static void unindex_obj(model *m, model_obj *o) {
  switch (o->kind) {
  case MODEL_POD:
    pod_unindex(m, (model_pod *)o);
    break;
  case MODEL_NODE:
    node_unindex(m, (model_node *)o);
    break;
  case MODEL_RESOURCE_SLICE:
    slice_unindex(m, (model_slice *)o);
    break;
  default:
    break;
  }
}

/* Takes o out of every index and map, and frees it. */
static void drop(model *m, model_obj *o) {
  unindex_obj(m, o);
  ts_map_del(&m->by_key[o->kind], o->key, strlen(o->key));
  if (*o->uid && ts_map_get(&m->by_uid, o->uid, strlen(o->uid)) == o)
    ts_map_del(&m->by_uid, o->uid, strlen(o->uid));
  model_obj_free(o);
  m->generation++;
}

ts_rc model_upsert(model *m, model_obj *o) {
  model_obj *old = ts_map_get(&m->by_key[o->kind], o->key, strlen(o->key));
  ts_rc rc;
  o->seq = old ? old->seq : m->seq++;
  o->rev = ++m->revs;
  if (old && o->kind == MODEL_RESOURCE_CLAIM)
    model__claim_carry((model_claim *)old, (model_claim *)o);
  if (old) drop(m, old);
  rc = ts_map_put(&m->by_key[o->kind], o->key, strlen(o->key), o, NULL);
  if (rc != TS_OK) {
    model_obj_free(o);
    return rc;
  }
  if (*o->uid && (rc = ts_map_put(&m->by_uid, o->uid, strlen(o->uid), o, NULL)) != TS_OK) {
    ts_map_del(&m->by_key[o->kind], o->key, strlen(o->key));
    model_obj_free(o);
    return rc;
  }
  rc = index_obj(m, o);
  m->generation++;
  if (rc != TS_OK) drop(m, o); /* out of memory part-way: leave no half-indexed object */
  if (model_resource_count(m->res) != m->res_resolved) resolve_all(m);
  return rc;
}

model_obj *model_get(const model *m, model_kind kind, const char *ns, const char *name) {
  char buf[512], *key = buf;
  size_t nl, nn;
  model_obj *o;
  if (!ns || !*ns)
    return ts_map_get(&m->by_key[kind], name, strlen(name)); /* the name is the key */
  nl = strlen(ns), nn = strlen(name);
  if (nl + nn + 2 > sizeof buf && !(key = ts_malloc(nl + nn + 2))) return NULL;
  memcpy(key, ns, nl), key[nl] = '/', memcpy(key + nl + 1, name, nn + 1);
  o = ts_map_get(&m->by_key[kind], key, nl + 1 + nn);
  if (key != buf) ts_free(key);
  return o;
}

model_obj *model_get_key(const model *m, model_kind kind, const char *key) {
  return ts_map_get(&m->by_key[kind], key, strlen(key));
}

ts_rc model_remove(model *m, model_kind kind, const char *ns, const char *name) {
  model_obj *o = model_get(m, kind, ns, name);
  if (!o) return TS_ENOTFOUND;
  drop(m, o);
  return TS_OK;
}

ts_rc model_apply_json(model *m, json_t *json, model_event ev, const char *origin,
                       const model_decode_opts *opts, bool *skipped, ts_err *err) {
  model_obj *o = NULL;
  model_decode_opts mine = opts ? *opts : (model_decode_opts){0};
  ts_rc rc;
  if (!mine.resources) mine.resources = m->res; /* the model's names */
  rc = model_decode(json, &mine, &o, err);
  if (skipped) *skipped = rc == TS_OK && !o;
  if (rc != TS_OK || !o) return rc;
  o->origin = origin;
  return model_apply(m, o, ev, err);
}

ts_rc model_apply(model *m, model_obj *o, model_event ev, ts_err *err) {
  ts_rc rc;
  if (ev == MODEL_DELETED) {
    rc = model_remove(m, o->kind, o->ns, o->name);
    model_obj_free(o);
    return rc == TS_ENOTFOUND ? TS_OK : rc;
  }
  {
    model_kind kind = o->kind; /* o is stolen by the upsert */
    rc = model_upsert(m, o);
    if (rc != TS_OK) ts_err_set(err, rc, "%s: %s", model_kind_name(kind), ts_strerror(rc));
  }
  return rc;
}

void model_set_seen(model *m, model_kind kind, bool seen) {
  if ((unsigned)kind < MODEL_KIND_COUNT) m->unseen[kind] = !seen;
}

ts_rc model_pod_bind_gpu(model *m, model_pod *p, const char *node_name, int32_t gpu_index) {
  p->gpu_index = gpu_index;
  return model_pod_bind(m, p, node_name);
}

ts_rc model_pod_bind(model *m, model_pod *p, const char *node_name) {
  pod_unindex(m, p);
  p->node_name = node_name;
  m->generation++;
  return pod_index(m, p);
}

ts_rc model_pod_set_phase(model *m, model_pod *p, model_pod_phase phase) {
  pod_unindex(m, p);
  p->phase = phase;
  m->generation++;
  return pod_index(m, p);
}

ts_rc model_claim_assume(model *m, const char *ns, const char *name, const model_allocation *alloc,
                         const char *pod_name, const char *pod_uid) {
  model_claim *c = (model_claim *)model_get(m, MODEL_RESOURCE_CLAIM, ns, name);
  ts_rc rc;
  if (!c) return TS_ENOTFOUND;
  if ((rc = model__claim_assume(c, alloc, pod_name, pod_uid)) == TS_OK) m->generation++;
  return rc;
}

void model_claim_forget(model *m, const char *ns, const char *name) {
  model_claim *c = (model_claim *)model_get(m, MODEL_RESOURCE_CLAIM, ns, name);
  if (c && c->assumed) model__claim_forget(c), m->generation++;
}

model_obj *model_get_uid(const model *m, const char *uid) {
  return ts_map_get(&m->by_uid, uid, strlen(uid));
}

size_t model_gpu_share_pods(const model *m) {
  return m->nshare_pods;
}

size_t model_count(const model *m, model_kind kind) {
  return m->by_key[kind].count;
}

bool model_next(const model *m, model_kind kind, size_t *it, model_obj **out) {
  const ts_map_slot *s;
  if (!ts_map_next(&m->by_key[kind], it, &s)) return false;
  *out = s->value;
  return true;
}

model_node *const *model_nodes(const model *m, size_t *n) {
  *n = m->nodes.n;
  return m->nodes.v;
}

bool model_kind_seen(const model *m, model_kind kind) {
  return !m->unseen[kind];
}

uint64_t model_generation(const model *m) {
  return m->generation;
}

int32_t model_default_priority(const model *m) {
  const model_priority_class *best = NULL;
  model_obj *o;
  for (size_t it = 0; model_next(m, MODEL_PRIORITY_CLASS, &it, &o);) {
    const model_priority_class *c = (const model_priority_class *)o;
    if (c->global_default && (!best || c->value < best->value)) best = c;
  }
  return best ? best->value : 0;
}

static int obj_key_cmp(const void *a, const void *b) {
  return strcmp((*(model_obj *const *)a)->key, (*(model_obj *const *)b)->key);
}

ts_rc model_list(const model *m, model_kind kind, model_obj ***out, size_t *n) {
  size_t it = 0, i = 0;
  const ts_map_slot *s;
  *n = m->by_key[kind].count;
  *out = ts_malloc((*n ? *n : 1) * sizeof **out);
  if (!*out) return TS_ENOMEM;
  while (ts_map_next(&m->by_key[kind], &it, &s)) (*out)[i++] = s->value;
  qsort(*out, *n, sizeof **out, obj_key_cmp);
  return TS_OK;
}

model_pod *model_node_pods_first(const model *m, const char *node_name) {
  model_pod_bucket *b = ts_map_get(&m->buckets, node_name, strlen(node_name));
  if (!b || ts_list_empty(&b->pods)) return NULL;
  return ts_container_of(b->pods.next, model_pod, node_link);
}

model_pod *model_node_pods_next(const model *m, const model_pod *p) {
  model_pod_bucket *b = ts_map_get(&m->buckets, p->node_name, strlen(p->node_name));
  if (!b || p->node_link.next == &b->pods) return NULL;
  return ts_container_of(p->node_link.next, model_pod, node_link);
}

model_node *const *model_nodes_with_label(const model *m, const char *key, const char *value,
                                          size_t *n) {
  char k[1024];
  label_key(k, sizeof k, key, value);
  return (model_node *const *)ptr_index_get(&m->node_label_index, k, n);
}

model_slice *const *model_slices_of_node(const model *m, const char *node_name, size_t *n) {
  return (model_slice *const *)ptr_index_get(&m->slices_by_node, node_name, n);
}

model_slice *const *model_slices_of_pool(const model *m, const char *driver, const char *pool,
                                         size_t *n) {
  char key[1024];
  pool_key(key, sizeof key, driver, pool);
  return (model_slice *const *)ptr_index_get(&m->slices_by_pool, key, n);
}
