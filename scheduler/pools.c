/* scheduler/pools.c - GPUs per node pool: what `tessera replay` prints after its decisions and
 * `tessera run` exports as tessera_gpu_allocated / tessera_gpu_allocatable. */
#include "scheduler/sched_int.h"

#include <stdlib.h>
#include <string.h>

/* Labels that name a node pool, most specific first. */
static const char *const pool_labels[] = {
    "cloud.google.com/gke-nodepool",  "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool", "karpenter.sh/nodepool",
    "nvidia.com/gpu.product",         "node.kubernetes.io/instance-type",
};

const char *sched_node_pool(const model_node *n) {
  static const char *once[sizeof pool_labels / sizeof *pool_labels];
  for (size_t i = 0; i < sizeof pool_labels / sizeof *pool_labels; i++) {
    const char *v = model_labels_get(&n->obj.labels, ts_intern_once(&once[i], pool_labels[i]));
    if (v) return v;
  }
  return "(no pool label)";
}

int sched_gpu_resources(const model *m, int *gpu) {
  const model_resources *t = model_resources_of(m);
  int n = 0;
  for (int r = MODEL_RES_FIRST_OTHER; r < model_resource_count(t) && n < SCHED_POOL_GPUS; r++)
    if (sched_is_gpu_resource(t, r)) gpu[n++] = r;
  return n;
}

static int pool_cmp(const void *a, const void *b) {
  return strcmp(((const sched_pool *)a)->name, ((const sched_pool *)b)->name);
}

size_t sched_pools(const model *m, const int *gpu, int ngpu, sched_pool *pools, size_t cap) {
  size_t n = 0, nn;
  model_node *const *all = model_nodes(m, &nn);
  for (size_t i = 0; i < nn; i++) {
    const model_node *node = all[i];
    const char *name = sched_node_pool(node);
    size_t k = 0;
    while (k < n && pools[k].name != name) k++; /* label values are interned; pools are few */
    if (k == n) {
      if (n == cap) continue;
      memset(&pools[n], 0, sizeof pools[n]);
      pools[n++].name = name;
    }
    pools[k].nodes++;
    for (int g = 0; g < ngpu; g++) {
      pools[k].used[g] = ts_add_sat(pools[k].used[g], model_node_used(node, gpu[g]));
      pools[k].alloc[g] = ts_add_sat(pools[k].alloc[g], model_node_alloc(node, gpu[g]));
    }
  }
  qsort(pools, n, sizeof *pools, pool_cmp);
  return n;
}
