/* bench/bench_sched.c - placement speed of plain pods: 10,000 pending pods onto 5,000 nodes,
 * as kube-scheduler's SchedulingBasic benchmark does (5,000 nodes / 10,000 pods).
 *
 * Nodes: 3,000 8 x A100 and 1,000 8 x H100 (tainted nvidia.com/gpu:NoSchedule, labelled as the
 * GPU operator does) and 1,000 CPU nodes. Pods: jobs of 1 to 16 identical pods asking for 1, 2,
 * 4 or 8 GPUs (some pinned to a GPU product), and CPU-only pods. Two pod mixes: "jobs" (pods
 * of a job are consecutive in the queue, as they are in a real queue) and "unique" (every pod
 * a different shape, the worst case for the cycle's per-shape runs). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "scheduler/sched.h"

#define NNODES 5000
#define NPODS  10000
#define REPEAT 5

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add(model *m, json_t *o) {
  ts_err e;
  if (model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK) {
    fprintf(stderr, "bench: %s\n", e.text);
    exit(1);
  }
  json_decref(o);
}

static void add_nodes(model *m) {
  for (int i = 0; i < NNODES; i++) {
    char name[32];
    const char *product = i < 3000 ? "NVIDIA-A100-SXM4-80GB" : "NVIDIA-H100-80GB-HBM3";
    bool gpu = i < 4000;
    json_t *labels, *alloc, *spec = json_object();
    snprintf(name, sizeof name, "node-%05d", i);
    labels = json_pack("{s:s, s:s}", "kubernetes.io/hostname", name, "topology.kubernetes.io/zone",
                       i % 3 ? "zone-a" : "zone-b");
    alloc = json_pack("{s:s, s:s, s:s}", "cpu", gpu ? "95" : "31500m", "memory",
                      gpu ? "1100Gi" : "120Gi", "pods", "110");
    if (gpu) {
      json_object_set_new(labels, "nvidia.com/gpu.product", json_string(product));
      json_object_set_new(labels, "nvidia.com/gpu.present", json_string("true"));
      json_object_set_new(alloc, "nvidia.com/gpu", json_string("8"));
      json_object_set_new(
          spec, "taints",
          json_pack("[{s:s, s:s}]", "key", "nvidia.com/gpu", "effect", "NoSchedule"));
    }
    add(m, json_pack("{s:s, s:s, s:{s:s, s:o}, s:o, s:{s:o}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", labels, "spec", spec, "status",
                     "allocatable", alloc));
  }
}

/* One pending pod; unique != 0 gives it a cpu request no other pod has. */
static void add_pod(model *m, int i, int gpus, const char *product, int unique) {
  char name[32], created[40], cpu[32];
  json_t *limits = json_object(), *spec;
  snprintf(name, sizeof name, "pod-%05d", i);
  snprintf(created, sizeof created, "2026-12-02T%02d:%02d:%02dZ", i / 3600, i / 60 % 60, i % 60);
  snprintf(cpu, sizeof cpu, "%dm", (gpus ? gpus * 8000 : 2000) + unique);
  if (gpus) json_object_set_new(limits, "nvidia.com/gpu", json_integer(gpus));
  spec = json_pack("{s:s, s:[{s:s, s:{s:{s:s, s:s}, s:o}}]}", "schedulerName", "tessera",
                   "containers", "name", "main", "resources", "requests", "cpu", cpu, "memory",
                   gpus ? "64Gi" : "4Gi", "limits", limits);
  if (gpus)
    json_object_set_new(spec, "tolerations",
                        json_pack("[{s:s, s:s}]", "key", "nvidia.com/gpu", "operator", "Exists"));
  if (product)
    json_object_set_new(spec, "nodeSelector",
                        json_pack("{s:s}", "nvidia.com/gpu.product", product));
  add(m, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion", "v1", "kind", "Pod",
                   "metadata", "name", name, "namespace", i % 2 ? "team-a" : "team-b",
                   "creationTimestamp", created, "spec", spec));
}

static void add_pods(model *m, bool unique) {
  static const int gpu_sizes[] = {1, 2, 4, 8, 0};
  int i = 0;
  srand(42);
  while (i < NPODS) {
    int job = 1 + rand() % 16, gpus = gpu_sizes[rand() % 5];
    const char *product = rand() % 4 == 0 ? "NVIDIA-H100-80GB-HBM3" : NULL;
    for (int k = 0; k < job && i < NPODS; k++, i++)
      add_pod(m, i, gpus, gpus ? product : NULL, unique ? i + 1 : 0);
  }
}

static void bench(const char *label, bool unique) {
  model *m = model_new();
  sched_config cfg;
  double best = 1e9;
  size_t bound = 0, pending = 0;
  add_nodes(m);
  add_pods(m, unique);
  sched_config_default(&cfg);
  for (int r = 0; r < REPEAT; r++) {
    sched_result res;
    ts_err e;
    double t0 = now_s(), t;
    if (sched_cycle(m, &cfg, NULL, 0, &res, &e) != TS_OK) {
      fprintf(stderr, "bench: %s\n", e.text);
      exit(1);
    }
    t = now_s() - t0;
    if (t < best) best = t;
    bound = res.nbound, pending = res.npending;
    sched_result_free(&res);
  }
  printf("%-7s %d pods on %d nodes: %7.1f ms per cycle, %9.0f pods/s (%zu bound, %zu pending; "
         "best of %d)\n",
         label, NPODS, NNODES, best * 1e3, NPODS / best, bound, pending, REPEAT);
  model_free(m);
}

/* Gangs: 1,000 PyTorchJobs (the job objects and their pods) of 8 to 64 pods (1 GPU each) onto
 * 1,000 nodes of 8 GPUs in 4 zones
 * and 125 NVLink cliques of 8 nodes. Demand (about 36,000 GPUs) exceeds the 8,000 GPUs, so
 * the cycle also proves, gang by gang, that the rest cannot start. */
static void bench_gangs(void) {
  model *m = model_new();
  sched_config cfg;
  double best = 1e9;
  size_t bound = 0, pending = 0, pods = 0;
  srand(7);
  for (int i = 0; i < 1000; i++) {
    char name[32], clique[32];
    snprintf(name, sizeof name, "gpu-%04d", i);
    snprintf(clique, sizeof clique, "clique-%03d", i / 8);
    add(m, json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}}, s:{s:{s:s, s:s, s:s, s:s}}}",
                     "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "labels",
                     "kubernetes.io/hostname", name, "topology.kubernetes.io/zone",
                     i % 4 == 0   ? "z0"
                     : i % 4 == 1 ? "z1"
                     : i % 4 == 2 ? "z2"
                                  : "z3",
                     "nvidia.com/gpu.clique", clique, "status", "allocatable", "cpu", "95",
                     "memory", "1100Gi", "pods", "110", "nvidia.com/gpu", "8"));
  }
  for (int g = 0; g < 1000; g++) {
    int size = 8 + rand() % 57;
    char job[32], uid[32];
    snprintf(job, sizeof job, "job-%04d", g);
    snprintf(uid, sizeof uid, "uid-%04d", g);
    /* the job object: its size is the gang's minimum (without it, the pods would wait) */
    add(m,
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{s:{s:i}}}}", "apiVersion", "kubeflow.org/v1",
                  "kind", "PyTorchJob", "metadata", "name", job, "namespace", "team", "uid", uid,
                  "spec", "pytorchReplicaSpecs", "Worker", "replicas", size));
    for (int k = 0; k < size; k++, pods++) {
      char name[48], created[40];
      snprintf(name, sizeof name, "%s-%02d", job, k);
      snprintf(created, sizeof created, "2026-12-02T%02d:%02d:%02dZ", g / 3600, g / 60 % 60,
               g % 60);
      add(m,
          json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, "
                    "s:{s:s, s:[{s:s, s:{s:{s:s, s:s, s:i}}}]}}",
                    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                    "team", "creationTimestamp", created, "ownerReferences", "apiVersion",
                    "kubeflow.org/v1", "kind", "PyTorchJob", "name", job, "uid", uid, "controller",
                    1, "spec", "schedulerName", "tessera", "containers", "name", "main",
                    "resources", "limits", "cpu", "4", "memory", "32Gi", "nvidia.com/gpu", 1));
    }
  }
  sched_config_default(&cfg);
  for (int r = 0; r < REPEAT; r++) {
    sched_result res;
    ts_err e;
    double t0 = now_s(), t;
    if (sched_cycle(m, &cfg, NULL, 0, &res, &e) != TS_OK) {
      fprintf(stderr, "bench: %s\n", e.text);
      exit(1);
    }
    t = now_s() - t0;
    if (t < best) best = t;
    bound = res.nbound, pending = res.npending;
    sched_result_free(&res);
  }
  printf("gangs   1000 gangs of 8-64 pods (%zu pods) on 1000 nodes x 8 GPUs: %7.1f ms per cycle, "
         "%9.0f pods placed/s, %9.0f pods decided/s (%zu bound, %zu pending; best of %d)\n",
         pods, best * 1e3, (double)bound / best, (double)pods / best, bound, pending, REPEAT);
  model_free(m);
}

int main(void) {
  printf(
      "one cycle placing every pending pod, on one core (kube-scheduler SchedulingBasic shape)\n");
  bench("jobs", false);
  bench("unique", true);
  bench_gangs();
  return 0;
}
