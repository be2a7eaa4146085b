/* scheduler/fgd.c - fragmentation gradient descent (FGD; Weng et al., "Beware of
 * Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
 * ATC '23), written from the paper and the measure its simulator computes.
 *
 * A node's GPU fragmentation, measured by one shape of pod, is the free GPU capacity that such
 * a pod could not use there: all of it when the pod does not fit the node (too few millicores,
 * or too few GPUs with room for its per-GPU demand), else the free parts of the GPUs too small
 * for its per-GPU demand. Weighted by how often each typical shape occurs in the workload, this
 * is the node's expected fragmentation; FGD places a pod where (and, for a share, on the GPU
 * where) it grows least, scored as the simulator scores it (fgd_points). The typical shapes
 * are the workload's most common shapes, CPU-only ones included, taken one at a time until they
 * cover 95% of its pods (the paper's experiments), their frequencies renormalised; like the
 * paper's simulator, the measure reads millicores and GPUs, not memory, and only nvidia.com/gpu
 * (the GPUs a pod may share). A shape is also the GPU models its pods may use (openb's gpu_spec:
 * a required node affinity In on nvidia.com/gpu.product), as the simulator keys its typical
 * pods: on a node of another model (or without one) a GPU shape can use nothing, and all the
 * node's free GPU is fragmentation to it (its "no access"). */
#include "scheduler/sched_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TYPICAL_COVER 0.95 /* the typical shapes cover this share of the workload's pods */
#define TYPICAL_STEP  1    /* taken this many at a time */

struct sched_fgd_shape {
  const char **models; /* interned GPU models it may use (arena), NULL for any */
  uint32_t nmodels;    /* entries */
  int64_t cpu;         /* millicores */
  int32_t gpus;        /* GPUs */
  int32_t milli;       /* thousandths of each (0: mib says) */
  int32_t mib;         /* a share as GPU memory */
  double w;            /* frequency among the typical shapes (they sum to 1) */
};

typedef sched_workload_shape wshape;

static int shape_cmp(const void *a, const void *b) {
  const wshape *x = a, *y = b;
  if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
  if (x->gpus != y->gpus) return x->gpus < y->gpus ? -1 : 1;
  if (x->milli != y->milli) return x->milli < y->milli ? -1 : 1;
  if (x->mib != y->mib) return x->mib < y->mib ? -1 : 1;
  return strcmp(x->models ? x->models : "", y->models ? y->models : "");
}

static const char *product_key(void) {
  static const char *once;
  return ts_intern_once(&once, "nvidia.com/gpu.product");
}

/* The GPU models a pod may use, "A|B" (scratch arena), when its required node affinity is one
 * term naming nvidia.com/gpu.product In some values (as a trace's gpu_spec becomes); else NULL
 * (any, or a constraint the measure does not model). */
static const char *pod_models(const sched_view *v, const model_pod *p) {
  const model_node_selector *a = &p->affinity;
  ts_buf b;
  const char *out = NULL;
  if (a->nterms != 1) return NULL;
  for (uint32_t i = 0; i < a->terms[0].nexprs; i++) {
    const model_req *r = &a->terms[0].exprs[i];
    if (r->key != product_key() || r->op != MODEL_OP_IN || !r->nvalues) continue;
    ts_buf_init(&b, 256);
    for (uint32_t k = 0; k < r->nvalues; k++) ts_buf_printf(&b, "%s%s", k ? "|" : "", r->values[k]);
    out = b.data ? ts_arena_strndup(v->arena, b.data, b.len) : NULL;
    ts_buf_free(&b);
    return out;
  }
  return NULL;
}

/* The interned models of "A|B" into t (arena); false when out of memory. */
static bool split_models(sched_view *v, const char *models, struct sched_fgd_shape *t) {
  uint32_t n = 1;
  t->models = NULL, t->nmodels = 0;
  if (!models || !*models) return true;
  for (const char *c = models; *c; c++) n += *c == '|';
  if (!(t->models = ts_arena_alloc(v->arena, (n + 1) * sizeof *t->models))) return false;
  for (const char *c = models; *c;) {
    size_t len = strcspn(c, "|");
    char one[256];
    if (len && len < sizeof one) {
      memcpy(one, c, len), one[len] = '\0';
      t->models[t->nmodels++] = ts_intern_cstr(one);
    }
    c += len + (c[len] == '|');
  }
  return true;
}

static int count_cmp(const void *a, const void *b) {
  const wshape *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return shape_cmp(a, b); /* the same order every time */
}

/* The shape of a pod: its whole nvidia.com/gpu (or a share of one) and its millicores; false
 * for a pod without either. */
static bool pod_shape(const sched_view *v, const model_pod *p, wshape *out) {
  memset(out, 0, sizeof *out);
  out->cpu = model_rlist_get(&p->requests, MODEL_RES_CPU);
  out->count = 1;
  if (model_pod_shares_gpu(p) && !p->share_problem)
    out->gpus = 1, out->milli = p->gpu_share, out->mib = p->gpu_memory;
  else if (v->share_res >= 0 &&
           (out->gpus = (int32_t)model_rlist_get(&p->requests, v->share_res)) > 0)
    out->milli = 1000;
  if (out->gpus) out->models = pod_models(v, p);
  return true;
}

ts_rc sched__fgd_prepare(sched_view *v) {
  const sched_config *cfg = v->cfg;
  size_t n = 0, cap, kept = 0, taken = 0;
  double total = 0, covered = 0;
  wshape *all;
  ts_rc rc;
  if (v->fgd_ready) return TS_OK;
  if (!cfg->workload && (rc = sched__view_pods(v)) != TS_OK) return rc;
  cap = cfg->workload ? cfg->nworkload : v->npending + v->nrunning;
  if (!(all = ts_arena_alloc(v->arena, (cap + 1) * sizeof *all))) return TS_ENOMEM;
  if (cfg->workload) {
    for (size_t i = 0; i < cfg->nworkload; i++)
      if (cfg->workload[i].count > 0) all[n++] = cfg->workload[i];
  } else {
    for (size_t i = 0; i < v->npending; i++) n += pod_shape(v, v->pending[i], &all[n]);
    for (size_t i = 0; i < v->nrunning; i++) n += pod_shape(v, v->running[i], &all[n]);
  }
  qsort(all, n, sizeof *all, shape_cmp); /* the same shapes merged */
  for (size_t i = 0; i < n; i++) {
    total += all[i].count;
    if (kept && !shape_cmp(&all[kept - 1], &all[i]))
      all[kept - 1].count += all[i].count;
    else
      all[kept++] = all[i];
  }
  qsort(all, kept, sizeof *all, count_cmp);
  while (taken < kept && covered < TYPICAL_COVER * total)
    for (size_t step = 0; step < TYPICAL_STEP && taken < kept; step++)
      covered += all[taken++].count;
  v->fgd = ts_arena_alloc(v->arena, (taken + 1) * sizeof *v->fgd);
  v->fgd_model = ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *v->fgd_model);
  if (!v->fgd || !v->fgd_model) return TS_ENOMEM;
  for (size_t i = 0; i < taken; i++) {
    v->fgd[i] = (struct sched_fgd_shape){
        NULL, 0, all[i].cpu, all[i].gpus, all[i].milli, all[i].mib, all[i].count / covered};
    if (all[i].gpus && !split_models(v, all[i].models, &v->fgd[i])) return TS_ENOMEM;
  }
  for (uint32_t k = 0; k < v->n; k++)
    v->fgd_model[k] = model_labels_get(&v->nodes[k]->obj.labels, product_key());
  v->nfgd = (uint32_t)taken;
  v->fgd_ready = true;
  return TS_OK;
}

/* The thousandths of one of node k's GPUs a typical shape takes. */
static int32_t milli_on(const sched_view *v, const struct sched_fgd_shape *t, uint32_t k) {
  const model_node *n = v->nodes[k];
  if (!t->mib) return t->milli;
  if (n->gpu_memory <= 0 || t->mib > n->gpu_memory) return 1001;
  return (int32_t)(((int64_t)t->mib * 1000 + n->gpu_memory - 1) / n->gpu_memory);
}

/* The expected fragmentation (thousandths of a GPU) of node k with cpu millicores free, shares
 * sh (n GPUs) and whole GPUs free. */
static double node_frag(const sched_view *v, uint32_t k, int64_t cpu, const uint16_t *sh,
                        uint32_t n, int64_t whole) {
  double free_all = (double)whole * 1000, f = 0;
  for (uint32_t j = 0; j < n; j++)
    if (sh[j]) free_all += 1000 - sh[j];
  if (free_all <= 0) return 0;
  for (uint32_t t = 0; t < v->nfgd; t++) {
    const struct sched_fgd_shape *m = &v->fgd[t];
    int32_t milli;
    int64_t room;     /* GPUs with room for its per-GPU demand */
    double small = 0; /* free parts too small for it */
    bool access = !m->nmodels;
    for (uint32_t i = 0; !access && i < m->nmodels; i++) access = m->models[i] == v->fgd_model[k];
    if (!m->gpus || !access) { /* a pod without GPUs can use none, nor one of other models */
      f += m->w * free_all;
      continue;
    }
    milli = milli_on(v, m, k);
    room = milli <= 1000 ? whole : 0;
    for (uint32_t j = 0; j < n; j++) {
      if (!sh[j]) continue;
      if (1000 - sh[j] >= milli)
        room++;
      else
        small += 1000 - sh[j];
    }
    f += m->w * (cpu >= m->cpu && room >= m->gpus ? small : free_all);
  }
  return f;
}

/* The fragmentation of node k after a pod taking cpu millicores, `whole` whole GPUs, and (j
 * not UINT32_MAX) a share of s thousandths of GPU j. */
static double frag_after(const sched_view *v, uint32_t k, int64_t cpu, int64_t whole, uint32_t j,
                         int32_t s) {
  uint32_t n;
  const uint16_t *sh = sched__shares_of(v, k, &n);
  uint16_t tmp[MODEL_MAX_SHARED_GPUS];
  int64_t free_whole = sched__whole_free(v, k) - whole;
  int64_t free_cpu = v->cap[(size_t)k * (size_t)v->stride + MODEL_RES_CPU].free - cpu;
  if (j == UINT32_MAX || !sh) return node_frag(v, k, free_cpu, sh, n, free_whole);
  memcpy(tmp, sh, n * sizeof *tmp);
  if (!tmp[j]) free_whole--;
  tmp[j] = (uint16_t)(tmp[j] + s);
  return node_frag(v, k, free_cpu, tmp, n, free_whole);
}

/* FGD's score of a change of fragmentation from before to after (thousandths of a GPU), as
 * the paper's simulator scores it: the decrease through a sigmoid, per GPU, to an integer from
 * 0 to 100 (0.5, no change, is 50). The rounding matters: it makes nodes whose fragmentation
 * would change by a few hundredths of a GPU equal, and equal nodes go in a fixed order (by name,
 * or the run's random order), which packs them. Scoring the exact change instead (Tessera did)
 * spread pods to save those hundredths: on the openb lists, seeds 1-10, it left 5.8% of the GPUs
 * unallocated on default where this leaves 4.9 (the paper: 4.77), 13.6% against 13.5 on
 * gpushare100 and 3.1 against 3.0 on multigpu50 (docs/simulate.md). */
static int64_t fgd_points(double before, double after) {
  return (int64_t)(100.0 / (1.0 + exp((after - before) / 1000.0)));
}

/* The GPU of node k whose taking a share of s (and cpu millicores) scores best (the lowest-
 * numbered among equals, as the simulator picks), that score in *points. GPUs holding the same
 * share are alike: each such value is measured once. */
static uint32_t best_slot(const sched_view *v, uint32_t k, int64_t cpu, int32_t s,
                          int64_t *points) {
  uint32_t n, best = UINT32_MAX;
  const uint16_t *sh = sched__shares_of(v, k, &n);
  double before = frag_after(v, k, 0, 0, UINT32_MAX, 0);
  for (uint32_t j = 0; j < n; j++) {
    int64_t p;
    bool seen = false;
    if (!sched__slot_takes(v, k, sh, j, s)) continue;
    for (uint32_t i = 0; i < j && !seen; i++) seen = sh[i] == sh[j];
    if (seen) continue; /* an earlier GPU with the same share measured the same */
    p = fgd_points(before, frag_after(v, k, cpu, 0, j, s));
    if (best == UINT32_MAX || p > *points) best = j, *points = p;
  }
  return best;
}

uint32_t sched__fgd_slot(const sched_view *v, const model_pod *p, uint32_t k, int32_t s) {
  int64_t points = 0;
  return best_slot(v, k, model_rlist_get(&p->requests, MODEL_RES_CPU), s, &points);
}

int64_t sched__fgd_score(const sched_view *v, const sched_shape *s, uint32_t k) {
  int64_t whole = 0, points = 0;
  for (int g = 0; g < s->ngpu; g++)
    if (s->gpu[g] == v->share_res) whole = s->gpu_req[g];
  if (!s->share || best_slot(v, k, s->cpu, model_pod_gpu_share_on(s->pod, v->nodes[k]), &points) ==
                       UINT32_MAX) /* (a share fits some GPU once the node fits) */
    points = fgd_points(frag_after(v, k, 0, 0, UINT32_MAX, 0),
                        frag_after(v, k, s->cpu, whole, UINT32_MAX, 0));
  /* Equal points go by node name (or the run's random order). Breaking them towards the fuller
   * node, as bin-packing would, packed cpu where GPUs were left: on openb's gpushare100 list the
   * GPUs left unallocated at 100% arrivals went from 13.6% to 21.8%. */
  return points << 30;
}
