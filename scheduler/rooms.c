/* scheduler/rooms.c - the GPUs as pending workloads see them: per GPU model, the free GPUs, the
 * largest number free in one node and in one domain of each topology level (the largest gang of
 * one-GPU pods that would fit there now), and the free GPUs no pending shape can use (stranded:
 * on nodes whose filters or other free resources turn every pending GPU pod away). One pass over
 * the nodes, and per node with free GPUs the static filters and fit of each shape until one
 * takes it. Shadow mode weighs its two placements with the same count. */
#include "scheduler/sched_int.h"

#include <stdlib.h>
#include <string.h>

size_t sched_gpu_shapes(const model *m, const model_pod *const *pods, size_t npods,
                        const model_pod **out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < npods && n < cap; i++) {
    const model_pod *p = pods[i];
    bool gpu = false, seen = false;
    for (uint32_t r = 0; r < p->requests.n; r++)
      gpu |= sched_is_gpu_resource(model_resources_of(m), p->requests.v[r].id);
    for (size_t k = 0; gpu && k < n && !seen; k++)
      seen = out[k]->requests.n == p->requests.n &&
             !memcmp(out[k]->requests.v, p->requests.v, p->requests.n * sizeof *p->requests.v) &&
             sched__same_static(out[k], p);
    if (gpu && !seen) out[n++] = p;
  }
  return n;
}

/* A domain's free GPUs of one model (the map's key: model and value addresses, interned). */
typedef struct dom_sum {
  const char *key[2];
  int64_t free;
} dom_sum;

static int room_cmp(const void *a, const void *b) {
  return strcmp(((const sched_gpu_room *)a)->model, ((const sched_gpu_room *)b)->model);
}

/* The room of gpu_model (interned), added when new; NULL when out of memory. */
static sched_gpu_room *room_of(sched_gpu_room **rooms, size_t *n, size_t *cap,
                               const char *gpu_model) {
  for (size_t i = 0; i < *n; i++)
    if ((*rooms)[i].model == gpu_model) return &(*rooms)[i];
  if (*n == *cap) {
    size_t ncap = *cap ? 2 * *cap : 8;
    sched_gpu_room *r = ts_realloc(*rooms, ncap * sizeof *r);
    if (!r) return NULL;
    *rooms = r, *cap = ncap;
  }
  memset(&(*rooms)[*n], 0, sizeof **rooms);
  (*rooms)[*n].model = gpu_model;
  return &(*rooms)[(*n)++];
}

ts_rc sched_gpu_rooms(const model *m, const sched_config *cfg, int64_t now_ns,
                      const model_pod *const *shapes, size_t nshapes, sched_gpu_room **out,
                      size_t *nout) {
  static const char *product_once;
  const char *product = ts_intern_once(&product_once, "nvidia.com/gpu.product");
  sched_view v;
  ts_arena scratch, res_arena;
  ts_map sums; /* (model, domain value) of one level -> dom_sum */
  sched_gpu_room *rooms = NULL;
  size_t n = 0, cap = 0;
  int64_t *node_free = NULL;
  const char **node_model = NULL;
  int levels = cfg->ntopology < SCHED_MAX_TOPOLOGY ? cfg->ntopology : SCHED_MAX_TOPOLOGY;
  ts_rc rc;
  *out = NULL, *nout = 0;
  ts_arena_init(&scratch, 64 * 1024);
  ts_arena_init(&res_arena, 4 * 1024);
  ts_map_init(&sums);
  rc = sched__view_init(&v, m, cfg, now_ns, &scratch, &res_arena);
  if (rc == TS_OK &&
      (!(node_free = ts_arena_alloc(&scratch, ((size_t)v.n + 1) * sizeof *node_free)) ||
       !(node_model = ts_arena_alloc(&scratch, ((size_t)v.n + 1) * sizeof *node_model))))
    rc = TS_ENOMEM;
  for (uint32_t k = 0; rc == TS_OK && k < v.n; k++) { /* nodes: free, largest, stranded */
    int64_t alloc = 0, free = 0;
    bool usable = false;
    sched_gpu_room *r;
    node_free[k] = -1;
    if (v.nodes[k]->unschedulable) continue;
    for (int g = 0; g < v.ngpu; g++) {
      const sched_cap *c = &v.cap[(size_t)k * (size_t)v.stride + (size_t)v.gpu[g]];
      alloc += c->alloc, free += c->free > 0 ? c->free : 0;
    }
    if (!alloc) continue;
    node_model[k] = model_labels_get(&v.nodes[k]->obj.labels, product);
    if (!node_model[k]) node_model[k] = ts_intern_cstr("");
    if (!(r = room_of(&rooms, &n, &cap, node_model[k]))) {
      rc = TS_ENOMEM;
      break;
    }
    node_free[k] = free;
    r->gpus += alloc, r->free += free;
    if (free > r->largest[0]) r->largest[0] = free;
    for (size_t i = 0; i < nshapes && !usable && free > 0; i++) {
      sched_pending sp = {.pod = shapes[i]};
      usable = sched__static_fit(&v, &sp, k) == SCHED_FIT && sched__resources_fit(&v, shapes[i], k);
    }
    if (nshapes && !usable) r->stranded += free;
  }
  for (int l = 0; rc == TS_OK && l < levels; l++) { /* each level's domains, per model */
    const char *key = cfg->topology[l];
    size_t it = 0;
    const ts_map_slot *slot;
    ts_map_free(&sums);
    ts_map_init(&sums);
    for (uint32_t k = 0; rc == TS_OK && k < v.n; k++) {
      const char *val;
      dom_sum probe, *d;
      if (node_free[k] < 0 || !(val = model_labels_get(&v.nodes[k]->obj.labels, key))) continue;
      probe.key[0] = node_model[k], probe.key[1] = val;
      if (!(d = ts_map_get(&sums, (const char *)probe.key, sizeof probe.key))) {
        if (!(d = ts_arena_alloc(&scratch, sizeof *d))) {
          rc = TS_ENOMEM;
          break;
        }
        *d = (dom_sum){{node_model[k], val}, 0};
        if (ts_map_put(&sums, (const char *)d->key, sizeof d->key, d, NULL) != TS_OK) {
          rc = TS_ENOMEM;
          break;
        }
      }
      d->free += node_free[k];
    }
    while (rc == TS_OK && ts_map_next(&sums, &it, &slot)) {
      const dom_sum *d = slot->value;
      sched_gpu_room *r = room_of(&rooms, &n, &cap, d->key[0]);
      if (r && d->free > r->largest[1 + l]) r->largest[1 + l] = d->free;
    }
  }
  ts_map_free(&sums);
  sched__view_free(&v);
  ts_arena_free(&scratch);
  ts_arena_free(&res_arena);
  if (rc != TS_OK) {
    ts_free(rooms);
    return rc;
  }
  if (n) qsort(rooms, n, sizeof *rooms, room_cmp);
  *out = rooms, *nout = n;
  return TS_OK;
}

ts_rc sched_gpu_rooms_after(const model *m, const sched_config *cfg, int64_t now_ns,
                            const sched_result *res, sched_gpu_room **out, size_t *nout,
                            size_t *nshapes) {
  const model_pod *shapes[SCHED_ROOM_SHAPES], **pending;
  size_t n = 0;
  ts_rc rc;
  *out = NULL, *nout = 0, *nshapes = 0;
  if (!(pending = ts_malloc((res->ndecisions + 1) * sizeof *pending))) return TS_ENOMEM;
  for (size_t i = 0; i < res->ndecisions; i++)
    if (res->decisions[i].kind == SCHED_PENDING) pending[n++] = res->decisions[i].pod;
  *nshapes = sched_gpu_shapes(m, pending, n, shapes, SCHED_ROOM_SHAPES);
  ts_free(pending);
  rc = sched_gpu_rooms(m, cfg, now_ns, shapes, *nshapes, out, nout);
  return rc;
}
