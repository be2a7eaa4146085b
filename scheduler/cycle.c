/* scheduler/cycle.c - one scheduling cycle for plain pods.
 *
 * Pending pods are taken in order. Consecutive pods of the same shape (same requests, node
 * selector, affinity and tolerations) form a run: the run filters and scores every node once
 * and keeps the feasible nodes in a heap ordered by score. A placement changes only the chosen
 * node, so after each placement only that node is re-scored; the heap always holds exact
 * scores and each pod gets the node a full scan would pick. Cost: O(nodes) per run plus
 * O(log nodes) per pod, instead of O(nodes) per pod. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_config_default(sched_config *cfg) {
  cfg->scheduler_name = ts_intern_cstr("tessera");
  cfg->scoring = SCHED_BINPACK;
}

bool sched_is_gpu_resource(int id) {
  const char *n = model_resource_name(id);
  size_t len;
  if (!n) return false;
  len = strlen(n);
  return (len >= 4 && !strcmp(n + len - 4, "/gpu")) || !strncmp(n, "nvidia.com/mig-", 15);
}

/* ---- pending pods ---------------------------------------------------------------------- */

int32_t sched_pod_priority(const model *m, const model_pod *p) {
  const model_priority_class *pc;
  size_t it = 0;
  const ts_map_slot *s;
  if (p->has_priority) return p->priority;
  if (p->priority_class) {
    pc = (const model_priority_class *)model_get(m, MODEL_PRIORITY_CLASS, NULL, p->priority_class);
    if (pc) return pc->value;
  }
  while (ts_map_next(&m->by_key[MODEL_PRIORITY_CLASS], &it, &s)) {
    pc = s->value;
    if (pc->global_default) return pc->value;
  }
  return 0;
}

static bool is_pending(const model_pod *p, const sched_config *cfg) {
  return p->scheduler_name == cfg->scheduler_name && !p->node_name && !p->obj.deleted_ns &&
         p->phase == MODEL_PHASE_PENDING;
}

typedef struct pending {
  const model_pod *pod; /* the pod */
  int32_t priority;     /* effective priority */
} pending;

static int pending_cmp(const void *a, const void *b) {
  const pending *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->pod->obj.created_ns != y->pod->obj.created_ns)
    return x->pod->obj.created_ns < y->pod->obj.created_ns ? -1 : 1;
  return strcmp(x->pod->obj.key, y->pod->obj.key);
}

/* Collects the pending pods of this scheduler, in scheduling order (arena memory). */
static ts_rc collect_pending(sched_view *v, pending **out, size_t *n) {
  const ts_map *pods = &v->m->by_key[MODEL_POD];
  size_t it = 0, k = 0;
  const ts_map_slot *s;
  pending *arr = ts_arena_alloc(v->arena, (pods->count + 1) * sizeof *arr);
  if (!arr) return TS_ENOMEM;
  while (ts_map_next(pods, &it, &s)) {
    const model_pod *p = s->value;
    if (is_pending(p, v->cfg)) arr[k++] = (pending){p, sched_pod_priority(v->m, p)};
  }
  qsort(arr, k, sizeof *arr, pending_cmp);
  *out = arr;
  *n = k;
  return TS_OK;
}

/* ---- shapes ---------------------------------------------------------------------------- */

/* True when two pods filter and score identically on every node. */
static bool same_shape(const model_pod *a, const model_pod *b) {
  if (a->nclaims || b->nclaims) return false;
  if (a->requests.n != b->requests.n ||
      memcmp(a->requests.v, b->requests.v, a->requests.n * sizeof *a->requests.v) != 0)
    return false;
  return sched__same_static(a, b);
}

/* ---- the heap of feasible nodes -------------------------------------------------------- */

typedef struct cand {
  int64_t score; /* higher is better */
  uint32_t node; /* index in the name-sorted view; lower wins ties */
} cand;

static bool cand_better(const cand *a, const cand *b) {
  return a->score != b->score ? a->score > b->score : a->node < b->node;
}

static void heap_down(cand *h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, best = i;
    if (l < n && cand_better(&h[l], &h[best])) best = l;
    if (r < n && cand_better(&h[r], &h[best])) best = r;
    if (best == i) return;
    cand t = h[i];
    h[i] = h[best];
    h[best] = t;
    i = best;
  }
}

/* ---- a run of same-shape pods ---------------------------------------------------------- */

static ts_rc add_decision(sched_view *v, sched_result *r, sched_decision d) {
  if (r->ndecisions == v->decisions_cap) {
    size_t ncap = v->decisions_cap ? v->decisions_cap * 2 : 256;
    sched_decision *nd = ts_arena_alloc(&r->arena, ncap * sizeof *nd);
    if (!nd) return TS_ENOMEM;
    if (r->ndecisions) memcpy(nd, r->decisions, r->ndecisions * sizeof *nd);
    r->decisions = nd;
    v->decisions_cap = ncap;
  }
  r->decisions[r->ndecisions++] = d;
  if (d.kind == SCHED_BIND)
    r->nbound++;
  else
    r->npending++;
  return TS_OK;
}

/* Schedules pods[0..n), all of one shape; h has room for every node. */
static ts_rc run_shape(sched_view *v, const pending *pods, size_t n, cand *h, sched_result *r) {
  const model_pod *first = pods[0].pod;
  const sched_sig *sig = sched__static_nodes(v, first);
  size_t nh = 0, i;
  const char *reason = NULL;
  sched_shape shape;
  ts_rc rc = TS_OK;
  if (!sig) return TS_ENOMEM;
  sched__shape_init(v, first, &shape);
  for (uint32_t j = 0; j < sig->n; j++) {
    uint32_t k = sig->nodes[j];
    if (sched__resources_fit(v, first, k)) h[nh++] = (cand){sched__score(v, &shape, k), k};
  }
  for (i = nh / 2; i-- > 0;) heap_down(h, nh, i);
  for (i = 0; i < n && rc == TS_OK; i++) {
    const model_pod *p = pods[i].pod;
    if (!nh) {
      if (!reason && !(reason = sched__why_pending(v, p))) return TS_ENOMEM;
      rc = add_decision(v, r, (sched_decision){SCHED_PENDING, p, NULL, reason});
      continue;
    }
    sched__place(v, p, h[0].node);
    rc = add_decision(v, r, (sched_decision){SCHED_BIND, p, v->nodes[h[0].node], NULL});
    if (sched__resources_fit(v, first, h[0].node)) {
      h[0].score = sched__score(v, &shape, h[0].node);
    } else {
      h[0] = h[--nh];
    }
    heap_down(h, nh, 0);
  }
  return rc;
}

void sched_result_free(sched_result *r) {
  ts_arena_free(&r->arena);
  memset(r, 0, sizeof *r);
}

ts_rc sched_cycle(const model *m, const sched_config *cfg, int64_t now_ns, sched_result *out,
                  ts_err *err) {
  sched_view v;
  ts_arena scratch;
  pending *pods = NULL;
  cand *heap = NULL;
  size_t n = 0, i = 0;
  ts_rc rc;
  memset(out, 0, sizeof *out);
  ts_arena_init(&out->arena, 64 * 1024);
  ts_arena_init(&scratch, 256 * 1024);
  rc = sched__view_init(&v, m, cfg, now_ns, &scratch, &out->arena);
  if (rc == TS_OK) rc = collect_pending(&v, &pods, &n);
  if (rc == TS_OK && !(heap = ts_arena_alloc(&scratch, ((size_t)v.n + 1) * sizeof *heap)))
    rc = TS_ENOMEM;
  while (rc == TS_OK && i < n) {
    size_t j = i + 1;
    while (j < n && same_shape(pods[i].pod, pods[j].pod)) j++;
    rc = run_shape(&v, pods + i, j - i, heap, out);
    i = j;
  }
  ts_arena_free(&scratch);
  if (rc != TS_OK) {
    sched_result_free(out);
    return ts_err_set(err, rc, "scheduling cycle: %s", ts_strerror(rc));
  }
  return TS_OK;
}
