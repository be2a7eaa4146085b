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

/* ---- a realistic plain mix, at any size --------------------------------------------------
 *
 * Nodes: 60% GPU nodes (8 GPUs; 3 A100 for each H100; tainted nvidia.com/gpu:NoSchedule; 96
 * or 128 cpu, 1-2 TiB), 40% CPU nodes of three sizes, in 3 zones. Pending pods: jobs of 1 to
 * 16 identical replicas of varied shapes (1/2/4/8 GPUs with 4-12 cpu and 32-96 GiB per GPU,
 * a fifth pinned to a product; CPU pods of 100m-8 cpu and 128 MiB-16 GiB) from 12 namespaces,
 * three priorities, each job created at a random second of an hour and its replicas within a
 * few seconds of it, so that jobs interleave in the queue as they do in a busy cluster. With
 * `full`, every GPU node already runs a 2-GPU pod and every pending pod asks for more than
 * any node has free (8 GPUs, or 200 cpu): a backlog that waits. */
static uint32_t rnd(uint32_t *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static void mix_nodes(model *m, int n, bool full) {
  static const char *cpu_sizes[][2] = {{"16", "64Gi"}, {"32", "128Gi"}, {"64", "256Gi"}};
  uint32_t s = 11;
  for (int i = 0; i < n; i++) {
    char name[32], zone[16];
    bool gpu = i % 5 < 3;
    json_t *labels, *alloc, *spec = json_object();
    snprintf(name, sizeof name, "node-%06d", i);
    snprintf(zone, sizeof zone, "zone-%d", i % 3);
    labels = json_pack("{s:s, s:s}", "kubernetes.io/hostname", name, "topology.kubernetes.io/zone",
                       zone);
    if (gpu) {
      bool big = rnd(&s) % 2;
      alloc = json_pack("{s:s, s:s, s:s, s:s}", "cpu", big ? "128" : "96", "memory",
                        big ? "2Ti" : "1Ti", "pods", "110", "nvidia.com/gpu", "8");
      json_object_set_new(labels, "nvidia.com/gpu.product",
                          json_string(i % 4 ? "NVIDIA-A100-SXM4-80GB" : "NVIDIA-H100-80GB-HBM3"));
      json_object_set_new(
          spec, "taints",
          json_pack("[{s:s, s:s}]", "key", "nvidia.com/gpu", "effect", "NoSchedule"));
    } else {
      int k = (int)(rnd(&s) % 3);
      alloc = json_pack("{s:s, s:s, s:s}", "cpu", cpu_sizes[k][0], "memory", cpu_sizes[k][1],
                        "pods", "110");
    }
    add(m, json_pack("{s:s, s:s, s:{s:s, s:o}, s:o, s:{s:o}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", labels, "spec", spec, "status",
                     "allocatable", alloc));
    if (full && gpu)
      add(m, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:[{s:s, s:{s:{s:s, s:s, s:s}}}]}, "
                       "s:{s:s}}",
                       "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                       "running", "spec", "schedulerName", "tessera", "nodeName", name,
                       "containers", "name", "main", "resources", "requests", "cpu", "8", "memory",
                       "64Gi", "nvidia.com/gpu", "2", "status", "phase", "Running"));
  }
}

static void mix_pods(model *m, int npods, bool full) {
  static const int gpus[] = {1, 1, 1, 2, 2, 4, 8};
  static const char *cpus[] = {"100m", "250m", "500m", "1", "2", "4", "8"};
  static const char *mems[] = {"128Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi"};
  static const int prios[] = {0, 0, 0, 100, 100, 1000};
  uint32_t s = 42;
  int i = 0;
  while (i < npods) {
    int replicas = 1 + (int)(rnd(&s) % 16), start = (int)(rnd(&s) % 3600);
    int g = rnd(&s) % 5 < 2 ? gpus[rnd(&s) % 7] : 0, prio = prios[rnd(&s) % 6];
    char cpu[16], mem[16], ns[16];
    const char *product = g && rnd(&s) % 5 == 0 ? "NVIDIA-H100-80GB-HBM3" : NULL;
    if (g) {
      snprintf(cpu, sizeof cpu, "%d", g * (4 + 4 * (int)(rnd(&s) % 3)));
      snprintf(mem, sizeof mem, "%dGi", g * (32 + 32 * (int)(rnd(&s) % 3)));
    } else {
      snprintf(cpu, sizeof cpu, "%s", cpus[rnd(&s) % 7]);
      snprintf(mem, sizeof mem, "%s", mems[rnd(&s) % 7]);
    }
    if (full) { /* more than any node has free */
      if (g)
        g = 8;
      else
        snprintf(cpu, sizeof cpu, "%d", 200 + (int)(rnd(&s) % 50));
    }
    snprintf(ns, sizeof ns, "team-%02d", (int)(rnd(&s) % 12));
    for (int k = 0; k < replicas && i < npods; k++, i++) {
      char name[32], created[40];
      int t = start + k / 4;
      json_t *requests = json_pack("{s:s, s:s}", "cpu", cpu, "memory", mem), *spec;
      snprintf(name, sizeof name, "pod-%07d", i);
      snprintf(created, sizeof created, "2026-12-02T%02d:%02d:%02dZ", t / 3600, t / 60 % 60,
               t % 60);
      if (g) json_object_set_new(requests, "nvidia.com/gpu", json_integer(g));
      spec = json_pack("{s:s, s:i, s:[{s:s, s:{s:o}}]}", "schedulerName", "tessera", "priority",
                       prio, "containers", "name", "main", "resources", "requests", requests);
      if (g)
        json_object_set_new(
            spec, "tolerations",
            json_pack("[{s:s, s:s}]", "key", "nvidia.com/gpu", "operator", "Exists"));
      if (product)
        json_object_set_new(spec, "nodeSelector",
                            json_pack("{s:s}", "nvidia.com/gpu.product", product));
      add(m, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion", "v1", "kind", "Pod",
                       "metadata", "name", name, "namespace", ns, "creationTimestamp", created,
                       "spec", spec));
    }
  }
}

/* One cycle over a generated cluster, best of `repeat`. */
static void bench_mix(const char *label, int nnodes, int npods, bool full, int repeat) {
  model *m = model_new();
  sched_config cfg;
  double best = 1e9;
  size_t bound = 0, pending = 0;
  mix_nodes(m, nnodes, full);
  mix_pods(m, npods, full);
  sched_config_default(&cfg);
  for (int r = 0; r < repeat; r++) {
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
  printf("%-7s %6d pods on %6d nodes: %8.1f ms per cycle, %9.0f pods decided/s (%zu bound, "
         "%zu pending; best of %d)\n",
         label, npods, nnodes, best * 1e3, npods / best, bound, pending, repeat);
  model_free(m);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL; /* run only the benches of this name */
  printf(
      "one cycle placing every pending pod, on one core (kube-scheduler SchedulingBasic shape)\n");
  if (!only || !strcmp(only, "jobs")) bench("jobs", false);
  if (!only || !strcmp(only, "unique")) bench("unique", true);
  if (!only || !strcmp(only, "gangs")) bench_gangs();
  if (!only || !strcmp(only, "mix")) {
    static const int sizes[] = {1000, 2000, 5000, 10000, 20000, 50000};
    printf("realistic plain mix (varied shapes, interleaved jobs), 2 pending pods per node:\n");
    int size = argc > 2 ? atoi(argv[2]) : 0; /* one size only */
    for (int i = 0; i < 6; i++)
      if (!size || size == sizes[i])
        bench_mix("mix", sizes[i], 2 * sizes[i], false, sizes[i] <= 5000 ? 5 : 3);
  }
  if (!only || !strcmp(only, "backlog")) {
    printf("backlog: every pending pod waits (the cluster is full for it):\n");
    bench_mix("backlog", 10000, 9000, true, 3);
  }
  return 0;
}
