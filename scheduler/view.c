/* scheduler/view.c - the cycle's view of nodes: filters, scoring, placements and the
 * reasons a pod fits nowhere, worded as kube-scheduler words them. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCORE_SCALE 1000000 /* utilisations are in millionths */
#define SHARE_BIT   63      /* in a short mask: no GPU has room for the pod's share */

static ts_rc gpu_tags_init(sched_view *v);

static int node_name_cmp(const void *a, const void *b) {
  return strcmp((*(const model_node *const *)a)->obj.name,
                (*(const model_node *const *)b)->obj.name);
}

/* ---- GPUs shared by pods --------------------------------------------------------------- */

/* The shares of each node's GPUs as the model counts them, when some pod of the model asks
 * for a share (nothing to copy otherwise: a cluster without sharing pays nothing). */
static ts_rc share_init(sched_view *v) {
  uint32_t total = 0;
  v->share_res = model_resource_find(model_resources_of(v->m), "nvidia.com/gpu");
  ts_map_init(&v->share_slot);
  if (!model_gpu_share_pods(v->m) || v->share_res < 0) return TS_OK;
  if (!(v->share_at = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *v->share_at)))
    return TS_ENOMEM;
  for (uint32_t k = 0; k < v->n; k++) v->share_at[k] = total, total += v->nodes[k]->ngpu_shares;
  v->share_at[v->n] = total;
  if (!(v->share = ts_arena_alloc(v->arena, ((size_t)total + 1) * sizeof *v->share)))
    return TS_ENOMEM;
  for (uint32_t k = 0; k < v->n; k++) /* a GPU others filled past 1000 is full here */
    for (uint32_t j = 0; j < v->nodes[k]->ngpu_shares; j++)
      v->share[v->share_at[k] + j] =
          (uint16_t)(v->nodes[k]->gpu_shares[j] > 1000 ? 1000 : v->nodes[k]->gpu_shares[j]);
  return TS_OK;
}

/* Node k's GPUs' shares in the view (*n entries), or NULL when it has none. */
uint16_t *sched__shares_of(const sched_view *v, uint32_t k, uint32_t *n) {
  *n = v->share ? v->share_at[k + 1] - v->share_at[k] : 0;
  return *n ? v->share + v->share_at[k] : NULL;
}

/* Whole GPUs node k has free (neither used whole nor shared). */
int64_t sched__whole_free(const sched_view *v, uint32_t k) {
  return v->share_res < 0 ? 0 : v->cap[(size_t)k * (size_t)v->stride + (size_t)v->share_res].free;
}

/* True when GPU j of node k can take a share of s thousandths: it is shared, or it is unshared
 * and the node has a whole GPU free (an unshared GPU may be one used whole: which ones are is
 * the device plugin's business, so any unshared one stands for a free one); and its known shares,
 * the node's shares of unknown GPU (which may be on it) and s make at most 1000. */
bool sched__slot_takes(const sched_view *v, uint32_t k, const uint16_t *sh, uint32_t j, int32_t s) {
  int64_t unknown = v->nodes[k]->gpu_unknown;
  return (sh[j] || sched__whole_free(v, k) >= 1) && sh[j] + unknown + s <= 1000;
}

/* True when node k has a GPU that can take the pod's share (true for a pod sharing none). */
static bool share_fits(const sched_view *v, const model_pod *p, uint32_t k) {
  uint32_t n;
  const uint16_t *sh;
  int32_t s;
  if (!model_pod_shares_gpu(p)) return true;
  sh = sched__shares_of(v, k, &n);
  if ((s = model_pod_gpu_share_on(p, v->nodes[k])) > 1000) return false;
  for (uint32_t j = 0; j < n; j++)
    if (sched__slot_takes(v, k, sh, j, s)) return true;
  return false;
}

/* The GPU of node k the pod's share goes on (share_fits holds), as the policy prefers: FGD the
 * one that fragments the node least; spreading a GPU nobody shares yet, else the emptiest;
 * first fit the lowest-numbered; random one drawn at random (the simulator's "random" GPU
 * selection); the others the fullest GPU with room (a GPU left free stays whole for a
 * whole-GPU pod), else the lowest-numbered unshared one. */
static uint32_t share_pick(const sched_view *v, const model_pod *p, uint32_t k, int32_t s) {
  uint32_t n, best = UINT32_MAX;
  const uint16_t *sh = sched__shares_of(v, k, &n);
  sched_share_rule rule = v->pol->shares;
  uint64_t x = 0, top = 0;
  if (v->fgd_on) return sched__fgd_slot(v, p, k, s);
  if (rule == SCHED_SHARE_RANDOM && v->cfg)
    x = v->cfg->tie_seed ^ ts_hash(p->obj.key, strlen(p->obj.key));
  for (uint32_t j = 0; j < n; j++) {
    if (!sched__slot_takes(v, k, sh, j, s)) continue;
    if (rule == SCHED_SHARE_LOWEST) return j;
    if (rule == SCHED_SHARE_RANDOM) { /* the greatest draw: each GPU that takes it as likely */
      uint64_t d = ts_random_next(&x);
      if (best == UINT32_MAX || d > top) best = j, top = d;
      continue;
    }
    if (best == UINT32_MAX) {
      best = j;
      continue;
    }
    if (rule == SCHED_SHARE_EMPTIEST ? (sh[best] && sh[j] < sh[best]) : (sh[j] > sh[best]))
      best = j;
  }
  return best;
}

int32_t sched__gpu_slot(const sched_view *v, const model_pod *p) {
  uintptr_t at;
  if (!v->share || !model_pod_shares_gpu(p)) return -1; /* no lookup for the others */
  at = (uintptr_t)ts_map_get(&v->share_slot, p->obj.key, strlen(p->obj.key));
  return at ? (int32_t)at - 1 : -1;
}

/* Thousandths of node k's GPUs in use (whole ones and shares), after adding add. */
static int64_t share_util_after(const sched_view *v, uint32_t k, int32_t add) {
  uint32_t n;
  const uint16_t *sh = sched__shares_of(v, k, &n);
  const sched_cap *c = &v->cap[(size_t)k * (size_t)v->stride + (size_t)v->share_res];
  int64_t used = (c->alloc - c->free) * 1000 + add;
  double u;
  for (uint32_t j = 0; j < n; j++)
    if (sh[j]) used -= 1000 - sh[j]; /* a shared GPU counts as used: only its shares are */
  u = (double)used * c->inv / 1000;
  return u >= SCORE_SCALE ? SCORE_SCALE : u < 0 ? 0 : (int64_t)u;
}

/* The random order of ties (cfg->tie_seed): from the seed alone, so that every cycle of a run
 * breaks ties the same way, as the FGD paper's simulator does (it prefixes each node's name with
 * its place in a random permutation drawn once, and its scheduler picks the least name among
 * the best). */
static ts_rc tie_order(sched_view *v) {
  uint64_t x = v->cfg->tie_seed;
  v->rank = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *v->rank);
  v->unrank = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *v->unrank);
  if (!v->rank || !v->unrank) return TS_ENOMEM;
  for (uint32_t i = 0; i < v->n; i++) v->unrank[i] = i;
  for (uint32_t i = v->n; i > 1; i--) {
    uint32_t j = (uint32_t)(ts_random_next(&x) % i), t = v->unrank[i - 1];
    v->unrank[i - 1] = v->unrank[j], v->unrank[j] = t;
  }
  for (uint32_t i = 0; i < v->n; i++) v->rank[v->unrank[i]] = i;
  return TS_OK;
}

ts_rc sched__view_init(sched_view *v, const model *m, const sched_config *cfg, int64_t now_ns,
                       ts_arena *scratch, ts_arena *out) {
  size_t nn;
  model_node *const *all = model_nodes(m, &nn);
  memset(v, 0, sizeof *v);
  v->m = m, v->cfg = cfg, v->now_ns = now_ns, v->arena = scratch, v->out = out;
  v->pol = sched__policy(cfg ? cfg->scoring : SCHED_BINPACK);
  v->n = (uint32_t)nn;
  v->stride = model_resource_count(model_resources_of(m));
  v->nodes = ts_arena_alloc(scratch, (v->n + 1) * sizeof *v->nodes);
  v->cap = ts_arena_alloc(scratch, ((size_t)v->n * (size_t)v->stride + 1) * sizeof *v->cap);
  if (!v->nodes || !v->cap) return TS_ENOMEM;
  if (v->n) memcpy(v->nodes, all, v->n * sizeof *v->nodes);
  qsort(v->nodes, v->n, sizeof *v->nodes, node_name_cmp);
  for (uint32_t i = 0; i < v->n; i++)
    for (int r = 0; r < v->stride; r++)
      v->cap[(size_t)i * (size_t)v->stride + (size_t)r].free =
          model_node_alloc(v->nodes[i], r) - model_node_used(v->nodes[i], r);
  for (int r = MODEL_RES_FIRST_OTHER; r < v->stride && v->ngpu < SCHED_MAX_GPU_RESOURCES; r++)
    if (sched_is_gpu_resource(model_resources_of(m), r)) v->gpu[v->ngpu++] = r;
  v->has_gpu = ts_arena_alloc(scratch, v->n + 1);
  v->heap = ts_arena_alloc(scratch, ((size_t)v->n + 1) * sizeof *v->heap);
  v->mark = ts_arena_alloc(scratch, ((size_t)v->n + 1) * sizeof *v->mark);
  v->node_rev = ts_arena_alloc(scratch, ((size_t)v->n + 1) * sizeof *v->node_rev);
  v->scan_nodes = ts_arena_alloc(scratch, ((size_t)v->n + 1) * sizeof *v->scan_nodes);
  if (!v->has_gpu || !v->heap || !v->mark || !v->node_rev || !v->scan_nodes) return TS_ENOMEM;
  memset(v->mark, 0, ((size_t)v->n + 1) * sizeof *v->mark);
  for (uint32_t i = 0; i < v->n; i++) v->node_rev[i] = 1;
  v->dra_fit_last = -1;
  ts_map_init(&v->classes);
  for (uint32_t i = 0; i < v->n; i++) {
    v->has_gpu[i] = 0;
    for (int r = 0; r < v->stride; r++) {
      int64_t a = model_node_alloc(v->nodes[i], r);
      sched_cap *c = &v->cap[(size_t)i * (size_t)v->stride + (size_t)r];
      c->alloc = a;
      c->inv = a > 0 ? (double)SCORE_SCALE / (double)a : 0;
    }
    for (int g = 0; g < v->ngpu; g++) v->has_gpu[i] |= model_node_alloc(v->nodes[i], v->gpu[g]) > 0;
  }
  if (sched__dra_init(v) != TS_OK || share_init(v) != TS_OK) return TS_ENOMEM;
  for (uint32_t i = 0; i < v->n; i++) { /* nodes with DRA devices count as GPU nodes */
    uint32_t used, total;
    sched__dra_usage(v, i, &used, &total);
    v->has_gpu[i] |= total > 0;
  }
  if (cfg && cfg->tie_seed && tie_order(v) != TS_OK) return TS_ENOMEM;
  v->fgd_on = v->pol->fgd || (v->pol->fgd_with_shares && v->share);
  v->score_other = v->fgd_on || v->pol->score || v->share;
  if (v->pol == sched__policy(SCHED_GPU_CLUSTERING) && gpu_tags_init(v) != TS_OK) return TS_ENOMEM;
  return v->fgd_on ? sched__fgd_prepare(v) : TS_OK;
}

static bool is_pending(const model_pod *p, const sched_config *cfg) {
  return p->scheduler_name == cfg->scheduler_name && !p->node_name && !p->obj.deleted_ns &&
         p->phase == MODEL_PHASE_PENDING;
}

ts_rc sched__view_pods(sched_view *v) {
  size_t it = 0, n = model_count(v->m, MODEL_POD), all = 0;
  model_obj *o, **pods;
  if (v->pods_listed) return TS_OK;
  v->pending = ts_arena_alloc(v->arena, (n + 1) * sizeof *v->pending);
  v->running = ts_arena_alloc(v->arena, (n + 1) * sizeof *v->running);
  pods = ts_arena_alloc(v->arena, (n + 1) * sizeof *pods);
  if (!v->pending || !v->running || !pods) return TS_ENOMEM;
  v->npending = v->nrunning = 0;
  while (all < n && model_next(v->m, MODEL_POD, &it, &o)) pods[all++] = o; /* no pod read yet */
  for (size_t i = 0; i < all; i++) {
    const model_pod *p = (const model_pod *)pods[i];
    if (i + 8 < all) __builtin_prefetch(pods[i + 8]);
    if (is_pending(p, v->cfg))
      v->pending[v->npending++] = p;
    else if (model_pod_counts(p))
      v->running[v->nrunning++] = p;
  }
  v->pods_listed = true;
  return TS_OK;
}

void sched__view_free(sched_view *v) {
  sched__kueue_free(v);
  ts_map_free(&v->share_slot);
  sched__dra_free(v);
  sched__classes_free(v);
}

static bool tolerates_unschedulable(const model_pod *p) {
  static const char *once[2];
  model_taint t = {ts_intern_once(&once[0], "node.kubernetes.io/unschedulable"),
                   ts_intern_once(&once[1], ""), MODEL_EFFECT_NO_SCHEDULE};
  for (uint32_t i = 0; i < p->ntolerations; i++)
    if (model_tolerates(&p->tolerations[i], &t)) return true;
  return false;
}

static bool node_selector_fits(const model_pod *p, const model_node *n) {
  for (uint32_t i = 0; i < p->node_selector.n; i++)
    if (model_labels_get(&n->obj.labels, p->node_selector.v[i].key) != p->node_selector.v[i].value)
      return false;
  return !p->affinity.nterms ||
         model_node_selector_match(&p->affinity, n->obj.name, &n->obj.labels);
}

/* Kueue adds the tolerations of the flavors it admits a pod on to the pod. */
const model_taint *sched__untolerated(const sched_pending *pp, const model_node *n) {
  const model_pod *p = pp->pod;
  const sched_flavors *fl = pp->flavors;
  for (uint32_t i = 0; i < n->ntaints; i++) {
    const model_taint *t = &n->taints[i];
    bool ok = t->effect == MODEL_EFFECT_PREFER_NO_SCHEDULE;
    for (uint32_t j = 0; j < p->ntolerations && !ok; j++)
      ok = model_tolerates(&p->tolerations[j], t);
    for (uint32_t f = 0; fl && f < fl->n && !ok; f++)
      for (uint32_t j = 0; j < fl->v[f]->ntolerations && !ok; j++)
        ok = model_tolerates(&fl->v[f]->tolerations[j], t);
    if (!ok) return t;
  }
  return NULL;
}

static bool flavors_fit(const sched_flavors *fl, const model_node *n) {
  for (uint32_t f = 0; fl && f < fl->n; f++)
    for (uint32_t i = 0; i < fl->v[f]->node_labels.n; i++)
      if (model_labels_get(&n->obj.labels, fl->v[f]->node_labels.v[i].key) !=
          fl->v[f]->node_labels.v[i].value)
        return false;
  return true;
}

sched_fit sched__static_fit(const sched_view *v, const sched_pending *p, uint32_t node) {
  const model_node *n = v->nodes[node];
  if (n->unschedulable && !tolerates_unschedulable(p->pod)) return SCHED_UNSCHEDULABLE;
  if (sched__untolerated(p, n)) return SCHED_TAINT;
  if (!node_selector_fits(p->pod, n) || !flavors_fit(p->flavors, n)) return SCHED_AFFINITY;
  return SCHED_FIT;
}

static bool same_reqs(const model_req *a, const model_req *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].nvalues != b[i].nvalues ||
        a[i].num != b[i].num)
      return false;
    for (uint32_t j = 0; j < a[i].nvalues; j++)
      if (a[i].values[j] != b[i].values[j]) return false;
  }
  return true;
}

static bool same_affinity(const model_node_selector *a, const model_node_selector *b) {
  if (a->nterms != b->nterms) return false;
  for (uint32_t i = 0; i < a->nterms; i++) {
    const model_node_term *x = &a->terms[i], *y = &b->terms[i];
    if (x->nexprs != y->nexprs || x->nfields != y->nfields) return false;
    if (!same_reqs(x->exprs, y->exprs, x->nexprs) || !same_reqs(x->fields, y->fields, x->nfields))
      return false;
  }
  return true;
}

bool sched__same_static(const model_pod *a, const model_pod *b) {
  if (a->node_selector.n != b->node_selector.n || a->ntolerations != b->ntolerations) return false;
  if (a->node_selector.n &&
      memcmp(a->node_selector.v, b->node_selector.v, a->node_selector.n * sizeof(model_kv)) != 0)
    return false;
  if (a->ntolerations &&
      memcmp(a->tolerations, b->tolerations, a->ntolerations * sizeof *a->tolerations) != 0)
    return false;
  return same_affinity(&a->affinity, &b->affinity);
}

/* A cheap hash of the static signature (interned pointers and counts). */
uint64_t sched__static_hash(const model_pod *p) {
  uint64_t h = p->node_selector.n * 31 + p->ntolerations * 17 + p->affinity.nterms;
  for (uint32_t i = 0; i < p->node_selector.n; i++)
    h = h * 1099511628211ULL ^ (uintptr_t)p->node_selector.v[i].value;
  for (uint32_t i = 0; i < p->ntolerations; i++)
    h = h * 1099511628211ULL ^ (uintptr_t)p->tolerations[i].key ^ p->tolerations[i].effect;
  return h;
}

const sched_sig *sched__static_nodes(sched_view *v, const sched_pending *pp) {
  const model_pod *p = pp->pod;
  const char *fkey = pp->flavors ? pp->flavors->key : NULL;
  uint64_t h = sched__static_hash(p);
  sched_sig *sig;
  for (int i = 0; i < v->nsigs; i++)
    if (v->sigs[i].hash == h && v->sigs[i].flavors == fkey && sched__same_static(v->sigs[i].pod, p))
      return &v->sigs[i];
  if (v->nsigs < SCHED_MAX_SIGS) {
    sig = &v->sigs[v->nsigs];
    sig->nodes = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *sig->nodes);
    sig->pass = ts_arena_alloc(v->arena, (size_t)v->n + 1);
    if (!sig->nodes || !sig->pass) return NULL;
    v->nsigs++;
  } else {
    sig = &v->sigs[v->next_evict]; /* reuse a slot and its buffer */
    v->next_evict = (v->next_evict + 1) % SCHED_MAX_SIGS;
  }
  sig->pod = p, sig->hash = h, sig->n = 0, sig->flavors = fkey;
  sig->reasons = NULL, sig->nreasons = 0, sig->reasons_done = false;
  sig->glevel = NULL, sig->gpass = NULL;
  for (uint32_t k = 0; k < v->n; k++) {
    sig->pass[k] = sched__static_fit(v, pp, k) == SCHED_FIT;
    if (sig->pass[k]) sig->nodes[sig->n++] = k;
  }
  return sig;
}

static inline bool requests_fit(const sched_view *v, const model_pod *p, uint32_t node) {
  const sched_cap *cap = v->cap + (size_t)node * (size_t)v->stride;
  for (uint32_t i = 0; i < p->requests.n; i++)
    if (p->requests.v[i].v > cap[p->requests.v[i].id].free) return false;
  return true;
}

__attribute__((noinline)) static bool fits_shared(const sched_view *v, const model_pod *p,
                                                  uint32_t node) {
  return requests_fit(v, p, node) && share_fits(v, p, node);
}

/* Without pods sharing GPUs, a leaf: the shared case is a jump at the start (a frame kept for
 * a call after the loop cost 5% of a cycle's instructions). */
bool sched__resources_fit(const sched_view *v, const model_pod *p, uint32_t node) {
  if (v->share) return fits_shared(v, p, node);
  return requests_fit(v, p, node);
}

/* Utilisation of resource r on node after adding req, in millionths (0 when none exists). */
static int64_t util_after(const sched_view *v, uint32_t node, int r, int64_t req) {
  const sched_cap *c = &v->cap[(size_t)node * (size_t)v->stride + (size_t)r];
  int64_t used = c->alloc - c->free + req;
  double u = (double)used * c->inv;
  return u >= SCORE_SCALE ? SCORE_SCALE : (int64_t)u;
}

void sched__shape_init(const sched_view *v, const model_pod *p, sched_shape *s) {
  memset(s, 0, sizeof *s);
  s->pod = p;
  s->cpu = model_rlist_get(&p->requests, MODEL_RES_CPU);
  s->mem = model_rlist_get(&p->requests, MODEL_RES_MEMORY);
  s->share = model_pod_shares_gpu(p) && v->share_res >= 0;
  for (int g = 0; g < v->ngpu; g++) {
    int64_t req = model_rlist_get(&p->requests, v->gpu[g]);
    if (!req) continue;
    s->gpu[s->ngpu] = v->gpu[g];
    s->gpu_req[s->ngpu++] = req;
  }
}

/* The FGD paper's GPU packing, as its simulator scores it, for pods asking for nvidia.com/gpu or
 * a share of one (others score 0: ties go by node name): a share that fits a GPU already
 * shared, the one with the least room left first; else a node with some GPU in use (fewer
 * whole GPUs taken first); else an empty node, the one with the fewest GPUs first. */
static int64_t gpu_packing(const sched_view *v, const sched_shape *s, uint32_t k) {
  uint32_t n, opened = 0;
  const uint16_t *sh = sched__shares_of(v, k, &n);
  int64_t whole = 0, free_whole = sched__whole_free(v, k), alloc, best = -1;
  int32_t share = s->share ? model_pod_gpu_share_on(s->pod, v->nodes[k]) : 0;
  if (v->share_res < 0) return 0;
  for (int g = 0; g < s->ngpu; g++)
    if (s->gpu[g] == v->share_res) whole = s->gpu_req[g];
  if (!whole && !s->share) return 0;
  alloc = v->cap[(size_t)k * (size_t)v->stride + (size_t)v->share_res].alloc;
  for (uint32_t j = 0; j < n; j++) {
    opened += sh[j] > 0;
    if (share && sh[j] && sh[j] + share <= 1000 && (best < 0 || 1000 - sh[j] < best))
      best = 1000 - sh[j]; /* the room left on the fullest shared GPU that takes it */
  }
  if (best >= 0) return 300000 + (1000 - best);
  if (free_whole == alloc && !opened) return free_whole < 100000 ? 100000 - free_whole : 0;
  return 200000 - (s->share ? 1 : whole);
}

/* Score = tier (a pod without GPUs avoids GPU nodes), then GPU utilisation over the GPU
 * resources the pod asks for (for a pod without GPUs, bin-packing: the node's GPU utilisation),
 * then the mean of cpu and memory utilisation; bin-packing
 * prefers high utilisation, spreading low. Utilisations are integers (millionths) so that
 * equal scores tie exactly and the node name decides. The baselines (first fit, best fit, dot
 * product, GPU packing) score as the FGD paper's simulator scores them, without the tier. */
__attribute__((always_inline)) static inline int64_t
score(const sched_view *v, const sched_shape *s, uint32_t node, bool shares) {
  int64_t gpu = 0, cpumem, tier = s->ngpu || s->dra_devices || !v->has_gpu[node];
  int parts = s->ngpu;
  for (int g = 0; g < s->ngpu; g++) gpu += util_after(v, node, s->gpu[g], s->gpu_req[g]);
  if (shares && s->share) { /* the node's GPUs in use with the share, as fractions */
    tier = 1;
    gpu += share_util_after(v, node, model_pod_gpu_share_on(s->pod, v->nodes[node]));
    parts++;
  }
  if (s->dra_devices) { /* devices the node's DRA slices have in use after the placement */
    uint32_t used, total;
    sched__dra_usage(v, node, &used, &total);
    gpu += total ? (used + s->dra_devices >= total ? SCORE_SCALE
                                                   : (used + s->dra_devices) * SCORE_SCALE / total)
                 : 0;
    parts++;
  }
  if (parts > 1) gpu /= parts;
  /* Bin-packing a pod without GPUs onto GPU nodes (when it must): the one with the fewest GPUs
   * free, so that its CPU and memory do not strand the GPUs of a node that still has some. On
   * openb's GPU nodes this took the GPUs left unallocated by a full cluster from 9.3% to 1.9%
   * (docs/simulate.md). */
  if (!parts && v->has_gpu[node] && v->pol->fill_gpu_nodes)
    for (int g = 0; g < v->ngpu; g++) {
      int64_t u = util_after(v, node, v->gpu[g], 0);
      if (v->cap[(size_t)node * (size_t)v->stride + (size_t)v->gpu[g]].alloc > 0 && u > gpu)
        gpu = u;
    }
  cpumem =
      (util_after(v, node, MODEL_RES_CPU, s->cpu) + util_after(v, node, MODEL_RES_MEMORY, s->mem)) /
      2;
  if (v->pol->spread) gpu = SCORE_SCALE - gpu, cpumem = SCORE_SCALE - cpumem;
  return tier << 61 | gpu << 30 | cpumem;
}

/* FGD, the baselines, and spreading with pods sharing GPUs: out of the common path. */
__attribute__((noinline)) static int64_t score_other(const sched_view *v, const sched_shape *s,
                                                     uint32_t node) {
  if (v->fgd_on) return sched__fgd_score(v, s, node);
  if (v->pol->score) return v->pol->score(v, s, node);
  return score(v, s, node, true);
}

/* ---- the policies ---------------------------------------------------------------------- */

static int64_t first_fit_score(const sched_view *v, const sched_shape *s, uint32_t node) {
  (void)v, (void)s, (void)node;
  return 0; /* no preference: the node name decides */
}

/* ---- the FGD paper's baselines, as its simulator's plugins score them -------------------- */

#define SIM_MAX_CPU 128000.0 /* the simulator's MaxSpecCpu (millicores) and MaxSpecGpu (GPU */
#define SIM_MAX_GPU 8000.0   /* thousandths), which normalise both scores */
#define SIM_OFFSET  1000     /* keeps a negative score (a node above those specs) in the field */

/* Node k's free GPU in thousandths (whole free GPUs, and what shared GPUs have left), and what
 * a pod of shape s asks of it there. */
static void gpu_milli(const sched_view *v, const sched_shape *s, uint32_t k, double *free,
                      double *req) {
  *free = 0, *req = 0;
  if (v->share_res >= 0) {
    uint32_t n;
    const uint16_t *sh = sched__shares_of(v, k, &n);
    *free = (double)sched__whole_free(v, k) * 1000;
    for (uint32_t j = 0; sh && j < n; j++)
      if (sh[j]) *free += 1000 - sh[j];
  } else {
    for (int g = 0; g < v->ngpu; g++)
      *free += (double)v->cap[(size_t)k * (size_t)v->stride + (size_t)v->gpu[g]].free * 1000;
  }
  for (int g = 0; g < s->ngpu; g++) *req += (double)s->gpu_req[g] * 1000;
  if (s->share) *req = model_pod_gpu_share_on(s->pod, v->nodes[k]);
}

/* Best fit (BestFitScore): 100 x (1 - what the node has left after the pod, cpu and GPU each
 * over its maximum spec, weighted half and half), an integer; memory is not read. The
 * simulator then scales the scores of all nodes to 0..100, which keeps their order and ties
 * (there are at most 101 distinct ones), so it is left out. */
static int64_t best_fit_score(const sched_view *v, const sched_shape *s, uint32_t node) {
  double gfree, greq, cfree = (double)v->cap[(size_t)node * (size_t)v->stride + MODEL_RES_CPU].free;
  gpu_milli(v, s, node, &gfree, &greq);
  double left = 0.5 * (cfree - (double)s->cpu) / SIM_MAX_CPU + 0.5 * (gfree - greq) / SIM_MAX_GPU;
  return ((int64_t)((1.0 - left) * 100) + SIM_OFFSET) << 30;
}

/* Dot product (DotProductScore, Tetris; as the paper runs it, GPUs merged into one dimension and
 * both normalised by the maximum spec): 100 x (1 - the mean of free x request over cpu and GPU),
 * an integer: the node whose free resources align least with the request. */
static int64_t dot_product_score(const sched_view *v, const sched_shape *s, uint32_t node) {
  double gfree, greq, cfree = (double)v->cap[(size_t)node * (size_t)v->stride + MODEL_RES_CPU].free;
  gpu_milli(v, s, node, &gfree, &greq);
  double dot = (cfree / SIM_MAX_CPU) * ((double)s->cpu / SIM_MAX_CPU) +
               (gfree / SIM_MAX_GPU) * (greq / SIM_MAX_GPU);
  return ((int64_t)((1.0 - dot / 2) * 100) + SIM_OFFSET) << 30;
}

/* Random (RandomScore: one feasible node drawn per pod gets the top score): a number drawn
 * from the pod's name, the node and the tie seed; the greatest wins, so each feasible node is
 * as likely. The policy scores pods one at a time (per_pod), so s->pod is the pod itself. */
static int64_t random_score(const sched_view *v, const sched_shape *s, uint32_t node) {
  uint64_t x = v->cfg->tie_seed ^ ts_hash(s->pod->obj.key, strlen(s->pod->obj.key)) ^
               ((uint64_t)node * UINT64_C(0x9E3779B97F4A7C15));
  return (int64_t)(ts_random_next(&x) >> 44) << 30; /* 20 bits: the GPU field */
}

static int64_t gpu_packing_score(const sched_view *v, const sched_shape *s, uint32_t node) {
  return gpu_packing(v, s, node) << 30;
}

/* GPU clustering's tag of a pod (its simulator's GPU affinity): 0 for a share of a GPU, n for n
 * whole GPUs (SCHED_GPU_TAGS - 1 for that many or more), -1 for none. */
static int gpu_tag(int64_t whole, bool share) {
  if (share) return 0;
  if (whole <= 0) return -1;
  return whole < SCHED_GPU_TAGS - 1 ? (int)whole : SCHED_GPU_TAGS - 1;
}

static int pod_gpu_tag(const sched_view *v, const model_pod *p) {
  return gpu_tag(v->share_res >= 0 ? model_rlist_get(&p->requests, v->share_res) : 0,
                 model_pod_shares_gpu(p) && v->share_res >= 0);
}

/* The tags of the pods each node runs, counted (GPU clustering's input). */
static ts_rc gpu_tags_init(sched_view *v) {
  size_t bytes = ((size_t)v->n * SCHED_GPU_TAGS + 1) * sizeof *v->gpu_tags;
  if (!(v->gpu_tags = ts_arena_alloc(v->arena, bytes))) return TS_ENOMEM;
  memset(v->gpu_tags, 0, bytes);
  for (uint32_t k = 0; k < v->n; k++)
    for (const model_pod *p = model_node_pods_first(v->m, v->nodes[k]->obj.name); p;
         p = model_node_pods_next(v->m, p)) {
      int t = model_pod_counts(p) ? pod_gpu_tag(v, p) : -1;
      uint16_t *c = &v->gpu_tags[(size_t)k * SCHED_GPU_TAGS + (size_t)(t < 0 ? 0 : t)];
      if (t >= 0 && *c < UINT16_MAX) ++*c;
    }
  return TS_OK;
}

/* A pod of node k placed (d = 1) or given back (-1). */
static void gpu_tags_charge(sched_view *v, const model_pod *p, uint32_t k, int d) {
  int t = v->gpu_tags ? pod_gpu_tag(v, p) : -1;
  uint16_t *c = t < 0 ? NULL : &v->gpu_tags[(size_t)k * SCHED_GPU_TAGS + (size_t)t];
  if (c && (d > 0 ? *c < UINT16_MAX : *c > 0)) *c = (uint16_t)(*c + d);
}

/* GPU clustering (GpuClusteringScore, as the FGD paper's simulator scores it): 0 for a pod
 * without GPUs; else, by the tags of the pods the node runs, 75 when they are all the pod's,
 * 50 when the pod's is among others, 25 when there are none, 0 when only others; plus 25 x
 * the GPU used of 8 GPUs (thousandths, integer arithmetic as its Go). */
static int64_t gpu_clustering_score(const sched_view *v, const sched_shape *s, uint32_t node) {
  int64_t whole = 0, base, score;
  double gfree, greq;
  const uint16_t *c = v->gpu_tags + (size_t)node * SCHED_GPU_TAGS;
  int tag, distinct = 0;
  for (int g = 0; g < s->ngpu; g++)
    if (s->gpu[g] == v->share_res) whole = s->gpu_req[g];
  if ((tag = gpu_tag(whole, s->share)) < 0 || !v->gpu_tags) return (int64_t)SIM_OFFSET << 30;
  for (int t = 0; t < SCHED_GPU_TAGS; t++) distinct += c[t] > 0;
  gpu_milli(v, s, node, &gfree, &greq);
  base = 25 * ((int64_t)SIM_MAX_GPU - (int64_t)gfree) / (int64_t)SIM_MAX_GPU;
  if (c[tag])
    score = base + (distinct == 1 ? 75 : 50);
  else
    score = base + (distinct == 0 ? 25 : 0);
  return (score + SIM_OFFSET) << 30;
}

/* One row per policy, in sched_scoring's order. Bin-packing scores as FGD when pods share
 * GPUs: on openb's three pod lists, where a third to all of the GPU pods share one, FGD left
 * the fewest GPUs unallocated (docs/simulate.md). */
static const sched_policy policies[SCHED_SCORING_COUNT] = {
    [SCHED_BINPACK] = {"binpack", NULL, false, false, true, true, SCHED_SHARE_FULLEST},
    [SCHED_SPREAD] = {"spread", NULL, true, false, false, false, SCHED_SHARE_EMPTIEST},
    [SCHED_FIRST_FIT] = {"first-fit", first_fit_score, false, false, false, false,
                         SCHED_SHARE_LOWEST},
    [SCHED_BEST_FIT] = {"best-fit", best_fit_score, false, false, false, false,
                        SCHED_SHARE_FULLEST},
    [SCHED_DOT_PRODUCT] = {"dot-product", dot_product_score, false, false, false, false,
                           SCHED_SHARE_FULLEST},
    [SCHED_GPU_PACKING] = {"gpu-packing", gpu_packing_score, false, false, false, false,
                           SCHED_SHARE_FULLEST},
    [SCHED_FGD] = {"fgd", NULL, false, true, false, false, SCHED_SHARE_FULLEST},
    [SCHED_RANDOM] = {"random", random_score, false, false, false, false, SCHED_SHARE_RANDOM, true},
    [SCHED_GPU_CLUSTERING] = {"gpu-clustering", gpu_clustering_score, false, false, false, false,
                              SCHED_SHARE_FULLEST},
};

const sched_policy *sched__policy(sched_scoring s) {
  return &policies[(unsigned)s < SCHED_SCORING_COUNT ? s : SCHED_BINPACK];
}

const char *sched_scoring_name(sched_scoring s) {
  return (unsigned)s < SCHED_SCORING_COUNT ? policies[s].name : "?";
}

bool sched_scoring_parse(const char *name, sched_scoring *out) {
  for (int i = 0; i < SCHED_SCORING_COUNT; i++)
    if (!strcmp(name, policies[i].name)) {
      *out = (sched_scoring)i;
      return true;
    }
  return false;
}

int64_t sched__score(const sched_view *v, const sched_shape *s, uint32_t node) {
  if (v->score_other) return score_other(v, s, node);
  return score(v, s, node, false); /* bin-packing or spreading, no pod sharing a GPU */
}

/* The one place a node's free amount of a resource changes in a cycle: the node's capacity
 * row and the sums of the topology domains it is in. */
static void free_add(sched_view *v, uint32_t node, int r, int64_t delta) {
  v->cap[(size_t)node * (size_t)v->stride + (size_t)r].free += delta;
  if (v->nlevels) sched__levels_charge(v, node, r, delta);
}

/* Takes (sign 1) or gives back (-1) the pod's share of GPU j of node k: a GPU that gets its
 * first share stops being a free whole GPU, and is one again when its last share goes. */
static void share_charge(sched_view *v, const model_pod *p, uint32_t k, uint32_t j, int sign) {
  uint32_t n;
  uint16_t *sh = sched__shares_of(v, k, &n);
  int32_t s = model_pod_gpu_share_on(p, v->nodes[k]);
  if (sign > 0 && !sh[j]) free_add(v, k, v->share_res, -1);
  sh[j] = (uint16_t)(sh[j] + sign * s);
  if (sign < 0 && !sh[j]) free_add(v, k, v->share_res, 1);
}

void sched__place(sched_view *v, const model_pod *p, uint32_t node) {
  for (uint32_t i = 0; i < p->requests.n; i++)
    free_add(v, node, p->requests.v[i].id, -p->requests.v[i].v);
  if (model_pod_shares_gpu(p) && v->share) {
    uint32_t j = share_pick(v, p, node, model_pod_gpu_share_on(p, v->nodes[node]));
    if (j != UINT32_MAX && ts_map_put(&v->share_slot, p->obj.key, strlen(p->obj.key),
                                      (void *)(uintptr_t)(j + 1), NULL) == TS_OK)
      share_charge(v, p, node, j, 1);
  }
  gpu_tags_charge(v, p, node, 1);
  sched__node_changed(v, node, false);
}

void sched__unplace(sched_view *v, const model_pod *p, uint32_t node) {
  int32_t j = sched__gpu_slot(v, p);
  for (uint32_t i = 0; i < p->requests.n; i++)
    free_add(v, node, p->requests.v[i].id, p->requests.v[i].v);
  if (j >= 0) {
    ts_map_del(&v->share_slot, p->obj.key, strlen(p->obj.key));
    share_charge(v, p, node, (uint32_t)j, -1);
  }
  gpu_tags_charge(v, p, node, -1);
  sched__node_changed(v, node, true);
}

/* ---- reasons --------------------------------------------------------------------------- */

typedef sched_reason reason;

typedef struct histogram {
  reason *v; /* scratch arena */
  size_t n, cap;
} histogram;

static void hist_add_n(histogram *h, const char *text, size_t count) {
  for (size_t i = 0; i < h->n; i++)
    if (!strcmp(h->v[i].text, text)) {
      h->v[i].count += count;
      return;
    }
  if (h->n == h->cap) return; /* cap reached: every distinct reason is already very rare */
  ts_strlcpy(h->v[h->n].text, text, sizeof h->v[h->n].text);
  h->v[h->n++].count = count;
}

/* Why node fails the pod's static filters (kube-scheduler's words), or NULL when it passes. */
static void static_reason(sched_view *v, const sched_pending *pp, uint32_t node, histogram *h) {
  const model_taint *t;
  char text[300];
  switch (sched__static_fit(v, pp, node)) {
  case SCHED_UNSCHEDULABLE:
    hist_add_n(h, "node(s) were unschedulable", 1);
    return;
  case SCHED_TAINT:
    t = sched__untolerated(pp, v->nodes[node]);
    snprintf(text, sizeof text, "node(s) had untolerated taint {%s: %s}", t->key, t->value);
    hist_add_n(h, text, 1);
    return;
  case SCHED_AFFINITY:
    hist_add_n(h, "node(s) didn't match Pod's node affinity/selector", 1);
    return;
  default:
    return;
  }
}

/* The reasons of the nodes failing the signature's static filters, computed once per
 * signature: every pod of the signature gets the same. */
static ts_rc static_reasons(sched_view *v, sched_sig *sig, const sched_pending *p) {
  histogram h = {0};
  if (sig->reasons_done) return TS_OK;
  h.cap = 64;
  if (!(h.v = ts_arena_alloc(v->arena, h.cap * sizeof *h.v))) return TS_ENOMEM;
  for (uint32_t k = 0; k < v->n; k++)
    if (!sig->pass[k]) static_reason(v, p, k, &h);
  sig->reasons = h.v, sig->nreasons = h.n, sig->reasons_done = true;
  return TS_OK;
}

/* Adds request i's shortage, count times: "Too many pods", "Insufficient <name>" (for the
 * resources no node offers, one per name, as kube-scheduler lists each). */
static void add_short(const sched_view *v, histogram *h, const model_pod *p, uint32_t i,
                      size_t count) {
  char text[300];
  if (i == SHARE_BIT) {
    hist_add_n(h, "node(s) had no GPU with room for the pod's GPU share", count);
  } else if (p->requests.v[i].id == MODEL_RES_PODS) {
    hist_add_n(h, "Too many pods", count);
  } else if (p->requests.v[i].id == MODEL_RES_UNOFFERED && p->nunresolved) {
    for (uint32_t k = 0; k < p->nunresolved; k++) {
      snprintf(text, sizeof text, "Insufficient %s", p->unresolved[k].name);
      hist_add_n(h, text, count);
    }
  } else {
    snprintf(text, sizeof text, "Insufficient %s",
             model_resource_name(model_resources_of(v->m), p->requests.v[i].id));
    hist_add_n(h, text, count);
  }
}

typedef sched_mask_count mask_count;

static inline uint64_t requests_short(const sched_view *v, const model_pod *p, uint32_t k) {
  const sched_cap *cap = v->cap + (size_t)k * (size_t)v->stride;
  uint64_t mask = 0;
  for (uint32_t i = 0; i < p->requests.n && i < SHARE_BIT; i++)
    if (p->requests.v[i].v > cap[p->requests.v[i].id].free) mask |= (uint64_t)1 << i;
  return mask;
}

/* The short mask with SHARE_BIT set when the pod's share fits no GPU of node k. */
__attribute__((noinline)) static uint64_t short_shared(const sched_view *v, const model_pod *p,
                                                       uint32_t k) {
  return requests_short(v, p, k) | (share_fits(v, p, k) ? 0 : (uint64_t)1 << SHARE_BIT);
}

uint64_t sched__short_mask(const sched_view *v, const model_pod *p, uint32_t k) {
  if (v->share) return short_shared(v, p, k); /* as sched__resources_fit */
  return requests_short(v, p, k);
}

/* Adds each short resource of the masks, counted per mask. */
static void add_masks(const sched_view *v, histogram *h, const model_pod *p,
                      const mask_count *masks, size_t n) {
  for (size_t m = 0; m < n; m++)
    for (uint32_t i = 0; i < 64; i++)
      if (masks[m].count && masks[m].mask >> i & 1) add_short(v, h, p, i, masks[m].count);
}

/* Adds the reasons of the nodes passing the static filters: each short resource, counted per
 * set of short resources (few distinct) rather than formatted per node; claims for the nodes
 * where every resource fits. */
static ts_rc resource_reasons(sched_view *v, const sched_sig *sig, const sched_pending *pp,
                              histogram *h) {
  const model_pod *p = pp->pod;
  mask_count *masks =
      v->mask_buf
          ? v->mask_buf
          : (v->mask_buf = ts_arena_alloc(v->arena, SCHED_MAX_MASKS * sizeof *masks)); /* reused */
  size_t nmasks = 0;
  if (!masks) return TS_ENOMEM;
  for (uint32_t j = 0; j < sig->n; j++) {
    uint32_t k = sig->nodes[j];
    uint64_t mask = sched__short_mask(v, p, k);
    size_t m;
    if (!mask) {
      const char *why = pp->nclaims ? sched__dra_node_reason(v, pp, k) : NULL;
      if (why) hist_add_n(h, why, 1);
      continue;
    }
    for (m = 0; m < nmasks && masks[m].mask != mask; m++) {
    }
    if (m == nmasks && nmasks == SCHED_MAX_MASKS) { /* too many kinds: this node on its own */
      for (uint32_t i = 0; i < 64; i++)
        if (mask >> i & 1) add_short(v, h, p, i, 1);
      continue;
    }
    if (m == nmasks) masks[nmasks++] = (mask_count){mask, 0};
    masks[m].count++;
  }
  add_masks(v, h, p, masks, nmasks);
  return TS_OK;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "0/N nodes are available: COUNT REASON, ..." from a histogram, then detail (result arena);
 * prev itself when the message is the same as prev (the pods of a class that stays pending
 * share one copy). The lines are formatted in a buffer of the view, reused by each pod. */
static const char *format_reasons(sched_view *v, const histogram *h, const char *detail,
                                  const char *prev) {
  enum { LINE = sizeof h->v[0].text + 16 };
  ts_buf b;
  const char *msg = NULL;
  if (!v->lines) {
    v->lines = ts_arena_alloc(v->arena, (h->cap + 1) * sizeof *v->lines);
    v->line_text = ts_arena_alloc(v->arena, (h->cap + 1) * LINE);
    if (!v->lines || !v->line_text) return NULL;
  }
  /* kube-scheduler sorts the "COUNT REASON" strings as strings. */
  for (size_t i = 0; i < h->n; i++) {
    v->lines[i] = v->line_text + i * LINE;
    snprintf(v->lines[i], LINE, "%d %s", h->v[i].count, h->v[i].text);
  }
  qsort(v->lines, h->n, sizeof *v->lines, str_cmp);
  ts_buf_init(&b, 0);
  ts_buf_printf(&b, "0/%u nodes are available: ", v->n);
  for (size_t i = 0; i < h->n; i++) ts_buf_printf(&b, "%s%s", i ? ", " : "", v->lines[i]);
  ts_buf_putc(&b, '.');
  if (detail) ts_buf_printf(&b, " %s", detail);
  if (b.data) msg = prev && !strcmp(prev, b.data) ? prev : ts_arena_strndup(v->out, b.data, b.len);
  ts_buf_free(&b);
  return msg;
}

/* The histogram of one pending pod's reasons: one buffer for the cycle, reused by every pod
 * (its message is formatted into the output arena before the next pod's). A buffer per pod
 * from the cycle's arena once took 20 KB per pending pod: 221 MB for a replay of 2,000 nodes
 * with 10,900 pods pending, most of a peak RSS of 3.9x the model at 10,000 nodes. */
static bool hist_init(sched_view *v, histogram *h) {
  memset(h, 0, sizeof *h);
  h->cap = 64;
  if (!v->hist_buf) v->hist_buf = ts_arena_alloc(v->arena, h->cap * sizeof *h->v);
  return (h->v = v->hist_buf) != NULL;
}

const char *sched__why_pending(sched_view *v, const sched_pending *p) {
  histogram h;
  sched_sig *sig;
  const char *detail = NULL;
  if (!v->n) return ts_arena_strndup(v->out, "no nodes available to schedule pods", 35);
  if (!hist_init(v, &h) || !(sig = (sched_sig *)sched__static_nodes(v, p)) ||
      static_reasons(v, sig, p) != TS_OK)
    return NULL;
  for (size_t i = 0; i < sig->nreasons; i++)
    hist_add_n(&h, sig->reasons[i].text, sig->reasons[i].count);
  if (resource_reasons(v, sig, p, &h) != TS_OK) return NULL;
  if (p->dra) {
    for (size_t i = 0; i < h.n && !detail; i++)
      if (!strcmp(h.v[i].text, "cannot allocate all claims")) detail = sched__dra_why(v, p);
    if (v->dra_error && v->dra_error_pod == p->pod) detail = v->dra_error; /* aborted: say why */
  }
  return format_reasons(v, &h, detail, NULL);
}

const sched_sig *sched__static_reasons(sched_view *v, const sched_pending *p) {
  sched_sig *sig = (sched_sig *)sched__static_nodes(v, p);
  return sig && static_reasons(v, sig, p) == TS_OK ? sig : NULL;
}

const char *sched__format_why(sched_view *v, const model_pod *p, const sched_reason *stat,
                              size_t nstat, const sched_mask_count *masks, size_t nmasks,
                              const char *prev) {
  histogram h;
  if (!v->n) return ts_arena_strndup(v->out, "no nodes available to schedule pods", 35);
  if (!hist_init(v, &h)) return NULL;
  for (size_t i = 0; i < nstat; i++) hist_add_n(&h, stat[i].text, stat[i].count);
  add_masks(v, &h, p, masks, nmasks);
  return format_reasons(v, &h, NULL, prev);
}
