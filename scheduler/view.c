/* scheduler/view.c - the cycle's view of nodes: filters, scoring, placements and the
 * reasons a pod fits nowhere, worded as kube-scheduler words them. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCORE_SCALE 1000000 /* utilisations are in millionths */

static int node_name_cmp(const void *a, const void *b) {
  return strcmp((*(const model_node *const *)a)->obj.name,
                (*(const model_node *const *)b)->obj.name);
}

ts_rc sched__view_init(sched_view *v, const model *m, const sched_config *cfg, int64_t now_ns,
                       ts_arena *scratch, ts_arena *out) {
  memset(v, 0, sizeof *v);
  v->m = m, v->cfg = cfg, v->now_ns = now_ns, v->arena = scratch, v->out = out;
  v->n = (uint32_t)m->nodes.n;
  v->stride = model_resource_count();
  v->nodes = ts_arena_alloc(scratch, (v->n + 1) * sizeof *v->nodes);
  v->free = ts_arena_alloc(scratch, ((size_t)v->n * (size_t)v->stride + 1) * sizeof *v->free);
  if (!v->nodes || !v->free) return TS_ENOMEM;
  if (v->n) memcpy(v->nodes, m->nodes.v, v->n * sizeof *v->nodes);
  qsort(v->nodes, v->n, sizeof *v->nodes, node_name_cmp);
  for (uint32_t i = 0; i < v->n; i++)
    for (int r = 0; r < v->stride; r++)
      v->free[(size_t)i * (size_t)v->stride + (size_t)r] =
          v->nodes[i]->alloc[r] - v->nodes[i]->used[r];
  for (int r = MODEL_RES_FIRST_OTHER; r < v->stride && v->ngpu < SCHED_MAX_GPU_RESOURCES; r++)
    if (sched_is_gpu_resource(r)) v->gpu[v->ngpu++] = r;
  return TS_OK;
}

static bool tolerates_unschedulable(const model_pod *p) {
  model_taint t = {ts_intern_cstr("node.kubernetes.io/unschedulable"), ts_intern_cstr(""),
                   MODEL_EFFECT_NO_SCHEDULE};
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

sched_fit sched__static_fit(const sched_view *v, const model_pod *p, uint32_t node) {
  const model_node *n = v->nodes[node];
  if (n->unschedulable && !tolerates_unschedulable(p)) return SCHED_UNSCHEDULABLE;
  if (model_untolerated_taint(n->taints, n->ntaints, p->tolerations, p->ntolerations))
    return SCHED_TAINT;
  if (!node_selector_fits(p, n)) return SCHED_AFFINITY;
  return SCHED_FIT;
}

bool sched__resources_fit(const sched_view *v, const model_pod *p, uint32_t node) {
  const int64_t *free = v->free + (size_t)node * (size_t)v->stride;
  for (uint32_t i = 0; i < p->requests.n; i++)
    if (p->requests.v[i].v > free[p->requests.v[i].id]) return false;
  return true;
}

/* Utilisation of resource r on node after adding req, in millionths (0 when none exists). */
static int64_t util_after(const sched_view *v, uint32_t node, int r, int64_t req) {
  int64_t alloc = v->nodes[node]->alloc[r];
  int64_t used = alloc - v->free[(size_t)node * (size_t)v->stride + (size_t)r] + req;
  if (alloc <= 0) return 0;
  if (used >= alloc) return SCORE_SCALE;
  return (int64_t)((__int128)used * SCORE_SCALE / alloc);
}

/* Score = tier (a pod without GPUs avoids GPU nodes), then GPU utilisation over the GPU
 * resources the pod asks for, then the mean of cpu and memory utilisation; bin-packing
 * prefers high utilisation, spreading low. */
int64_t sched__score(const sched_view *v, const model_pod *p, uint32_t node) {
  const model_node *n = v->nodes[node];
  bool pod_gpu = false, node_gpu = false;
  int64_t gpu = 0, cpumem, tier;
  int ngpu = 0;
  for (int g = 0; g < v->ngpu; g++) {
    int64_t req = model_rlist_get(&p->requests, v->gpu[g]);
    node_gpu |= n->alloc[v->gpu[g]] > 0;
    if (!req) continue;
    pod_gpu = true;
    gpu += util_after(v, node, v->gpu[g], req);
    ngpu++;
  }
  if (ngpu) gpu /= ngpu;
  cpumem =
      (util_after(v, node, MODEL_RES_CPU, model_rlist_get(&p->requests, MODEL_RES_CPU)) +
       util_after(v, node, MODEL_RES_MEMORY, model_rlist_get(&p->requests, MODEL_RES_MEMORY))) /
      2;
  tier = pod_gpu || !node_gpu;
  if (v->cfg->scoring == SCHED_SPREAD) gpu = SCORE_SCALE - gpu, cpumem = SCORE_SCALE - cpumem;
  return tier << 61 | gpu << 30 | cpumem;
}

void sched__place(sched_view *v, const model_pod *p, uint32_t node) {
  int64_t *free = v->free + (size_t)node * (size_t)v->stride;
  for (uint32_t i = 0; i < p->requests.n; i++) free[p->requests.v[i].id] -= p->requests.v[i].v;
}

/* ---- reasons --------------------------------------------------------------------------- */

typedef struct reason {
  char text[300]; /* "Insufficient nvidia.com/gpu" */
  int count;      /* nodes that gave it */
} reason;

typedef struct histogram {
  reason *v; /* scratch arena */
  size_t n, cap;
} histogram;

static void hist_add(histogram *h, const char *text) {
  for (size_t i = 0; i < h->n; i++)
    if (!strcmp(h->v[i].text, text)) {
      h->v[i].count++;
      return;
    }
  if (h->n == h->cap) return; /* cap reached: every distinct reason is already very rare */
  ts_strlcpy(h->v[h->n].text, text, sizeof h->v[h->n].text);
  h->v[h->n++].count = 1;
}

static void node_reasons(const sched_view *v, const model_pod *p, uint32_t node, histogram *h) {
  const model_node *n = v->nodes[node];
  const int64_t *free = v->free + (size_t)node * (size_t)v->stride;
  char text[300];
  const model_taint *t;
  switch (sched__static_fit(v, p, node)) {
  case SCHED_UNSCHEDULABLE:
    hist_add(h, "node(s) were unschedulable");
    return;
  case SCHED_TAINT:
    t = model_untolerated_taint(n->taints, n->ntaints, p->tolerations, p->ntolerations);
    snprintf(text, sizeof text, "node(s) had untolerated taint {%s: %s}", t->key, t->value);
    hist_add(h, text);
    return;
  case SCHED_AFFINITY:
    hist_add(h, "node(s) didn't match Pod's node affinity/selector");
    return;
  default:
    break;
  }
  for (uint32_t i = 0; i < p->requests.n; i++) {
    if (p->requests.v[i].v <= free[p->requests.v[i].id]) continue;
    if (p->requests.v[i].id == MODEL_RES_PODS)
      snprintf(text, sizeof text, "Too many pods");
    else
      snprintf(text, sizeof text, "Insufficient %s", model_resource_name(p->requests.v[i].id));
    hist_add(h, text);
  }
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

const char *sched__why_pending(const sched_view *v, const model_pod *p) {
  histogram h = {0};
  ts_buf b;
  char **lines;
  const char *msg = NULL;
  if (!v->n) return ts_arena_strndup(v->out, "no nodes available to schedule pods", 35);
  h.cap = 64;
  h.v = ts_arena_alloc(v->arena, h.cap * sizeof *h.v);
  lines = ts_arena_alloc(v->arena, h.cap * sizeof *lines);
  if (!h.v || !lines) return NULL;
  for (uint32_t k = 0; k < v->n; k++) node_reasons(v, p, k, &h);
  /* kube-scheduler sorts the "COUNT REASON" strings as strings. */
  for (size_t i = 0; i < h.n; i++) {
    lines[i] = ts_arena_alloc(v->arena, sizeof h.v[i].text + 16);
    if (!lines[i]) return NULL;
    snprintf(lines[i], sizeof h.v[i].text + 16, "%d %s", h.v[i].count, h.v[i].text);
  }
  qsort(lines, h.n, sizeof *lines, str_cmp);
  ts_buf_init(&b, 0);
  ts_buf_printf(&b, "0/%u nodes are available: ", v->n);
  for (size_t i = 0; i < h.n; i++) ts_buf_printf(&b, "%s%s", i ? ", " : "", lines[i]);
  if (ts_buf_putc(&b, '.') == TS_OK) msg = ts_arena_strndup(v->out, b.data, b.len);
  ts_buf_free(&b);
  return msg;
}
