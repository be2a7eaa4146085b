/* gen/gen.c - generated clusters for benchmarks (`tessera bench`, make bench): the scenarios
 * of kube-scheduler's scheduler_perf and Kueue's baseline at any size, and realistic mixes.
 * Every object goes through model_apply_json as a decoded Kubernetes object would. */
#include "gen/gen.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gen {
  model *m;      /* where objects go */
  ts_err *err;   /* the first error */
  ts_rc rc;      /* TS_OK until one object fails (the rest are skipped) */
  uint32_t seed; /* the generator's random state */
} gen;

static uint32_t rnd(uint32_t *s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

/* Adds a generated object (a new reference, consumed). */
static void add(gen *g, json_t *o) {
  if (g->rc == TS_OK && !o) g->rc = ts_err_set(g->err, TS_ENOMEM, "out of memory");
  if (g->rc == TS_OK && model_apply_json(g->m, o, MODEL_ADDED, NULL, NULL, NULL, g->err) != TS_OK)
    g->rc = g->err->code != TS_OK ? g->err->code : TS_EINVAL;
  json_decref(o);
}

/* ---- SchedulingBasic: plain pods in jobs ---------------------------------------------------
 *
 * Nodes: 60% 8 x A100, 20% 8 x H100 (tainted nvidia.com/gpu:NoSchedule, labelled as the GPU
 * operator does), 20% CPU. Pods: jobs of 1 to 16 identical pods asking for 1, 2, 4 or 8 GPUs
 * (a quarter pinned to H100) or none; "unique" gives every pod a cpu request of its own. */
static void jobs_nodes(gen *g, int n) {
  for (int i = 0; i < n; i++) {
    char name[32];
    const char *product = i < n * 3 / 5 ? "NVIDIA-A100-SXM4-80GB" : "NVIDIA-H100-80GB-HBM3";
    bool gpu = i < n * 4 / 5;
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
    add(g, json_pack("{s:s, s:s, s:{s:s, s:o}, s:o, s:{s:o}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", labels, "spec", spec, "status",
                     "allocatable", alloc));
  }
}

/* One pending pod; unique != 0 gives it a cpu request no other pod has. */
static void jobs_pod(gen *g, int i, int gpus, const char *product, int unique) {
  char name[32], created[40], cpu[32];
  json_t *limits = json_object(), *spec;
  snprintf(name, sizeof name, "pod-%06d", i);
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
  add(g, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion", "v1", "kind", "Pod",
                   "metadata", "name", name, "namespace", i % 2 ? "team-a" : "team-b",
                   "creationTimestamp", created, "spec", spec));
}

static void jobs_pods(gen *g, int npods, bool unique) {
  static const int gpu_sizes[] = {1, 2, 4, 8, 0};
  int i = 0;
  while (i < npods) {
    int job = 1 + (int)(rnd(&g->seed) % 16), gpus = gpu_sizes[rnd(&g->seed) % 5];
    const char *product = rnd(&g->seed) % 4 == 0 ? "NVIDIA-H100-80GB-HBM3" : NULL;
    for (int k = 0; k < job && i < npods; k++, i++)
      jobs_pod(g, i, gpus, gpus ? product : NULL, unique ? i + 1 : 0);
  }
}

/* PyTorchJobs (the job objects and their pods) of 8 to 64 workers on nodes of 8 GPUs in 4 zones
 * and NVLink cliques of 8 nodes, until npods pods. A job's workers are alike (as a
 * PyTorchJob's replicas are) and jobs differ: 1, 2, 4 or 8 GPUs per worker (4 in 10 jobs take
 * one), with 4 cpu and 32 GiB per GPU: 3.2 GPUs per pod on average, so 12,000 pods ask for
 * about 4.8 times the GPUs of 1,000 nodes. */
static void gangs(gen *g, int nodes, int npods) {
  size_t pods = 0;
  for (int i = 0; i < nodes; i++) {
    char name[32], clique[32];
    snprintf(name, sizeof name, "gpu-%04d", i);
    snprintf(clique, sizeof clique, "clique-%03d", i / 8);
    add(g, json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}}, s:{s:{s:s, s:s, s:s, s:s}}}",
                     "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "labels",
                     "kubernetes.io/hostname", name, "topology.kubernetes.io/zone",
                     i % 4 == 0   ? "z0"
                     : i % 4 == 1 ? "z1"
                     : i % 4 == 2 ? "z2"
                                  : "z3",
                     "nvidia.com/gpu.clique", clique, "status", "allocatable", "cpu", "95",
                     "memory", "1100Gi", "pods", "110", "nvidia.com/gpu", "8"));
  }
  for (int j = 0; pods < (size_t)npods; j++) {
    static const int per_pod[] = {1, 1, 1, 1, 2, 2, 4, 4, 8, 8};
    int size = 8 + (int)(rnd(&g->seed) % 57), gpus = per_pod[rnd(&g->seed) % 10];
    char job[32], uid[32], cpu[16], mem[16];
    snprintf(cpu, sizeof cpu, "%d", 4 * gpus);
    snprintf(mem, sizeof mem, "%dGi", 32 * gpus);
    snprintf(job, sizeof job, "job-%05d", j);
    snprintf(uid, sizeof uid, "uid-%05d", j);
    /* the job object: its size is the gang's minimum (without it, the pods would wait) */
    add(g,
        json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{s:{s:i}}}}", "apiVersion", "kubeflow.org/v1",
                  "kind", "PyTorchJob", "metadata", "name", job, "namespace", "team", "uid", uid,
                  "spec", "pytorchReplicaSpecs", "Worker", "replicas", size));
    for (int k = 0; k < size; k++, pods++) {
      char name[48], created[40];
      snprintf(name, sizeof name, "%s-%02d", job, k);
      snprintf(created, sizeof created, "2026-12-02T%02d:%02d:%02dZ", j / 3600 % 24, j / 60 % 60,
               j % 60);
      add(g,
          json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, "
                    "s:{s:s, s:[{s:s, s:{s:{s:s, s:s, s:i}}}]}}",
                    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                    "team", "creationTimestamp", created, "ownerReferences", "apiVersion",
                    "kubeflow.org/v1", "kind", "PyTorchJob", "name", job, "uid", uid, "controller",
                    1, "spec", "schedulerName", "tessera", "containers", "name", "main",
                    "resources", "limits", "cpu", cpu, "memory", mem, "nvidia.com/gpu", gpus));
    }
  }
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
static void mix_nodes(gen *g, int n, bool full) {
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
    add(g, json_pack("{s:s, s:s, s:{s:s, s:o}, s:o, s:{s:o}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", labels, "spec", spec, "status",
                     "allocatable", alloc));
    if (full && gpu)
      add(g, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:[{s:s, s:{s:{s:s, s:s, s:s}}}]}, "
                       "s:{s:s}}",
                       "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                       "running", "spec", "schedulerName", "tessera", "nodeName", name,
                       "containers", "name", "main", "resources", "requests", "cpu", "8", "memory",
                       "64Gi", "nvidia.com/gpu", "2", "status", "phase", "Running"));
  }
}

/* A GPU pod's spec: the toleration of the GPU nodes' taint and, when product is not NULL, a
 * node selector on the product label. */
static void gpu_spec(json_t *spec, const char *product) {
  json_object_set_new(spec, "tolerations",
                      json_pack("[{s:s, s:s}]", "key", "nvidia.com/gpu", "operator", "Exists"));
  if (product)
    json_object_set_new(spec, "nodeSelector",
                        json_pack("{s:s}", "nvidia.com/gpu.product", product));
}

static void mix_pods(gen *g, int npods, bool full) {
  static const int gpus[] = {1, 1, 1, 2, 2, 4, 8};
  static const char *cpus[] = {"100m", "250m", "500m", "1", "2", "4", "8"};
  static const char *mems[] = {"128Mi", "512Mi", "1Gi", "2Gi", "4Gi", "8Gi", "16Gi"};
  static const int prios[] = {0, 0, 0, 100, 100, 1000};
  uint32_t s = 42;
  int i = 0;
  while (i < npods) {
    int replicas = 1 + (int)(rnd(&s) % 16), start = (int)(rnd(&s) % 3600);
    int ng = rnd(&s) % 5 < 2 ? gpus[rnd(&s) % 7] : 0, prio = prios[rnd(&s) % 6];
    char cpu[16], mem[16], ns[16];
    const char *product = ng && rnd(&s) % 5 == 0 ? "NVIDIA-H100-80GB-HBM3" : NULL;
    if (ng) {
      snprintf(cpu, sizeof cpu, "%d", ng * (4 + 4 * (int)(rnd(&s) % 3)));
      snprintf(mem, sizeof mem, "%dGi", ng * (32 + 32 * (int)(rnd(&s) % 3)));
    } else {
      snprintf(cpu, sizeof cpu, "%s", cpus[rnd(&s) % 7]);
      snprintf(mem, sizeof mem, "%s", mems[rnd(&s) % 7]);
    }
    if (full) { /* more than any node has free */
      if (ng)
        ng = 8;
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
      if (ng) json_object_set_new(requests, "nvidia.com/gpu", json_integer(ng));
      spec = json_pack("{s:s, s:i, s:[{s:s, s:{s:o}}]}", "schedulerName", "tessera", "priority",
                       prio, "containers", "name", "main", "resources", "requests", requests);
      if (ng) gpu_spec(spec, product);
      add(g, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:o}", "apiVersion", "v1", "kind", "Pod",
                       "metadata", "name", name, "namespace", ns, "creationTimestamp", created,
                       "spec", spec));
    }
  }
}

static json_t *node(const char *name) {
  return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s}}}", "apiVersion", "v1",
                   "kind", "Node", "metadata", "name", name, "labels", "kubernetes.io/hostname",
                   name, "status", "allocatable", "cpu", "96", "memory", "1000Gi", "pods", "110");
}

static json_t *gpu_attrs(int index, const char *profile) {
  json_t *a = json_pack("{s:{s:s}, s:{s:s}, s:{s:i}, s:{s:s}}", "productName", "string",
                        "NVIDIA A100-SXM4-80GB", "type", "string", profile ? "mig" : "gpu", "index",
                        "int", index, "driverVersion", "version", "550.54.15");
  if (profile) json_object_set_new(a, "profile", json_pack("{s:s}", "string", profile));
  return a;
}

static void add_class(gen *g) {
  add(g, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
                   "kind", "DeviceClass", "metadata", "name", "gpu.nvidia.com", "spec", "selectors",
                   "cel", "expression", "device.driver == \"gpu.nvidia.com\""));
}

static void add_template(gen *g, const char *name, const char *expr) {
  add(g, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:[{s:{s:s}}]}}]}}}}",
                   "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata",
                   "name", name, "namespace", "bench", "spec", "spec", "devices", "requests",
                   "name", "gpu", "exactly", "deviceClassName", "gpu.nvidia.com", "selectors",
                   "cel", "expression", expr));
}

static void add_pod(gen *g, int i, const char *tmpl) {
  char name[32];
  snprintf(name, sizeof name, "pod-%06d", i);
  add(g, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s}], s:[{s:s, s:s}]}}",
                   "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                   "bench", "creationTimestamp", "2026-01-01T00:00:00Z", "spec", "schedulerName",
                   "tessera", "containers", "name", "c", "resourceClaims", "name", "gpu",
                   "resourceClaimTemplateName", tmpl));
}

/* 500 nodes x 8 whole GPUs and their class. */
static void build_basic_nodes(gen *g, int nodes) {
  add_class(g);
  for (int n = 0; n < nodes; n++) {
    char name[32];
    json_t *devs = json_array();
    snprintf(name, sizeof name, "node-%05d", n);
    add(g, node(name));
    for (int gi = 0; gi < 8; gi++) {
      char dev[16];
      snprintf(dev, sizeof dev, "gpu-%d", gi);
      json_array_append_new(devs,
                            json_pack("{s:s, s:o, s:{s:{s:s}}}", "name", dev, "attributes",
                                      gpu_attrs(gi, NULL), "capacity", "memory", "value", "80Gi"));
    }
    add(g, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion",
                     "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", name,
                     "spec", "driver", "gpu.nvidia.com", "nodeName", name, "pool", "name", name,
                     "generation", 1, "resourceSliceCount", 1, "devices", devs));
  }
}

/* Shape 1: 500 nodes x 8 whole GPUs, pods with claims from one template. */
static void build_basic(gen *g, int nodes, int npods) {
  build_basic_nodes(g, nodes);
  add_template(g, "one-a100",
               "device.attributes[\"gpu.nvidia.com\"].productName == "
               "\"NVIDIA A100-SXM4-80GB\" && device.capacity[\"gpu.nvidia.com\"]."
               "memory.compareTo(quantity(\"40Gi\")) >= 0");
  for (int i = 0; i < npods; i++) add_pod(g, i, "one-a100");
}

/* Shape 1 with named claims, as `tessera run` sees a cluster: the claim controller has made a
 * ResourceClaim per pod (from its job's template), so no two pods share a claim object. Jobs of
 * 1 to 16 pods in 4 namespaces, each job with one of four specs (one or two GPUs, at least 40
 * or 80 GiB, by product or by memory alone), jobs one after another as they are created. */
static void build_named(gen *g, int nodes, int npods) {
  static const struct {
    int count;
    const char *expr;
  } specs[] = {
      {1, "device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-80GB\" && "
          "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"},
      {2, "device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-80GB\" && "
          "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"},
      {1, "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"80Gi\")) >= 0"},
      {1, "device.attributes[\"gpu.nvidia.com\"].productName.startsWith(\"NVIDIA A100\")"},
  };
  build_basic_nodes(g, nodes);
  for (int i = 0; i < npods;) {
    int job = 1 + (int)(rnd(&g->seed) % 16), k = (int)(rnd(&g->seed) % 4);
    char ns[16];
    snprintf(ns, sizeof ns, "team-%d", (int)(rnd(&g->seed) % 4));
    for (int r = 0; r < job && i < npods; r++, i++) {
      char name[32], claim[40];
      snprintf(name, sizeof name, "pod-%06d", i);
      snprintf(claim, sizeof claim, "pod-%06d-gpu-x7k2q", i);
      add(g, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:[{s:s, s:{s:s, s:i, s:[{s:{s:s}}]}}]}}}",
                       "apiVersion", "resource.k8s.io/v1", "kind", "ResourceClaim", "metadata",
                       "name", claim, "namespace", ns, "spec", "devices", "requests", "name", "gpu",
                       "exactly", "deviceClassName", "gpu.nvidia.com", "count", specs[k].count,
                       "selectors", "cel", "expression", specs[k].expr));
      add(g, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s}], s:[{s:s, s:s}]}}",
                       "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns,
                       "creationTimestamp", "2026-01-01T00:00:00Z", "spec", "schedulerName",
                       "tessera", "containers", "name", "c", "resourceClaims", "name", "gpu",
                       "resourceClaimName", claim));
    }
  }
}

static const struct {
  const char *profile; /* MIG profile */
  int count;           /* partitions per GPU */
  int slices;          /* compute slices each (of 7) */
} mig[] = {{"1g.10gb", 7, 1}, {"2g.20gb", 3, 2}, {"3g.40gb", 2, 3}, {"7g.80gb", 1, 7}};

/* The devices of one GPU: the whole GPU and every partition, all consuming its counters. */
static void gpu_devices(json_t *devs, int g) {
  char dev[48], set[16];
  snprintf(set, sizeof set, "gpu-%d", g);
  snprintf(dev, sizeof dev, "gpu-%d", g);
  json_array_append_new(devs,
                        json_pack("{s:s, s:o, s:{s:{s:s}}, s:[{s:s, s:{s:{s:s}, s:{s:s}}}]}",
                                  "name", dev, "attributes", gpu_attrs(g, NULL), "capacity",
                                  "memory", "value", "80Gi", "consumesCounters", "counterSet", set,
                                  "counters", "slices", "value", "7", "memory", "value", "80Gi"));
  for (size_t p = 0; p < sizeof mig / sizeof mig[0]; p++)
    for (int k = 0; k < mig[p].count; k++) {
      char sl[8], mem[16];
      snprintf(dev, sizeof dev, "gpu-%d-mig-%s-%d", g, mig[p].profile, k);
      for (char *c = dev; *c; c++)
        if (*c == '.') *c = '-';
      snprintf(sl, sizeof sl, "%d", mig[p].slices);
      snprintf(mem, sizeof mem, "%dGi", mig[p].slices == 7 ? 80 : mig[p].slices * 10);
      json_array_append_new(
          devs, json_pack("{s:s, s:o, s:{s:{s:s}}, s:[{s:s, s:{s:{s:s}, s:{s:s}}}]}", "name", dev,
                          "attributes", gpu_attrs(g, mig[p].profile), "capacity", "memory", "value",
                          mem, "consumesCounters", "counterSet", set, "counters", "slices", "value",
                          sl, "memory", "value", mem));
    }
}

/* Shape 2: 100 nodes x 8 partitionable A100-80GB; pods mixed. */
static void build_mig(gen *g, int nodes, int npods) {
  add_class(g);
  add_template(g, "whole", "device.attributes[\"gpu.nvidia.com\"].type == \"gpu\"");
  for (size_t p = 0; p < sizeof mig / sizeof mig[0]; p++) {
    char name[32], expr[200];
    snprintf(name, sizeof name, "mig-%c", mig[p].profile[0]);
    snprintf(expr, sizeof expr,
             "device.attributes[\"gpu.nvidia.com\"].type == \"mig\" && "
             "device.attributes[\"gpu.nvidia.com\"].profile == \"%s\"",
             mig[p].profile);
    add_template(g, name, expr);
  }
  for (int n = 0; n < nodes; n++) {
    char name[32];
    json_t *devs = json_array(), *counters = json_array();
    snprintf(name, sizeof name, "node-%05d", n);
    add(g, node(name));
    for (int gi = 0; gi < 8; gi++) {
      char set[16];
      snprintf(set, sizeof set, "gpu-%d", gi);
      json_array_append_new(counters,
                            json_pack("{s:s, s:{s:{s:s}, s:{s:s}}}", "name", set, "counters",
                                      "slices", "value", "7", "memory", "value", "80Gi"));
      gpu_devices(devs, gi);
    }
    add(g,
        json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o, s:o}}", "apiVersion",
                  "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", name, "spec",
                  "driver", "gpu.nvidia.com", "nodeName", name, "pool", "name", name, "generation",
                  1, "resourceSliceCount", 1, "sharedCounters", counters, "devices", devs));
  }
  /* 2,000 pods: a quarter whole GPUs, the rest MIG slices of the four profiles. */
  for (int i = 0; i < npods; i++) {
    static const char *const t[] = {"whole", "mig-1", "mig-2", "mig-3",
                                    "mig-7", "mig-1", "mig-3", "whole"};
    add_pod(g, i, t[i % 8]);
  }
}

/* ---- the table ------------------------------------------------------------------------------ */

/* ---- production: the shape of a recorded cluster -----------------------------------------
 *
 * What a busy production cluster has and `mix` lacks: running load, three pods per node on
 * average. Every node runs two DaemonSet pods (a node exporter and a log agent; on GPU nodes the
 * device plugin takes the agent's place), pinned as the DaemonSet controller pins them, by a
 * required node affinity with matchFields on metadata.name, tolerating every taint; one node in
 * two also runs a workload pod (ReplicaSet or Job). Nodes: 60% 8-GPU (a quarter H100, tainted
 * nvidia.com/gpu), 40% CPU, three zones, a dedicated taint on 2%, 1% cordoned. Three priority
 * classes, `standard` the cluster default. Pending pods: ReplicaSets and Jobs in 20 namespaces
 * (owner references as their controllers write them), a third with a required zone affinity
 * In two of the three zones, a quarter of GPU pods with a product node selector, priority as
 * the Priority admission sets it from the class. */
static const char *const prod_classes[][2] = {
    {"batch-low", "0"}, {"standard", "100"}, {"critical", "1000"}};

static json_t *prod_owner(const char *kind, const char *name) {
  char uid[64];
  snprintf(uid, sizeof uid, "uid-%s-%s", kind, name);
  return json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
                   strcmp(kind, "Job") ? "apps/v1" : "batch/v1", "kind", kind, "name", name, "uid",
                   uid, "controller", 1, "blockOwnerDeletion", 1);
}

static json_t *prod_pod(const char *ns, const char *name, const char *owner_kind, const char *owner,
                        json_t *spec, bool running) {
  json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:o}, s:o}", "apiVersion", "v1", "kind",
                          "Pod", "metadata", "name", name, "namespace", ns, "creationTimestamp",
                          "2026-12-02T00:00:00Z", "ownerReferences", prod_owner(owner_kind, owner),
                          "spec", spec);
  json_object_set_new(spec, "schedulerName", json_string("tessera"));
  if (running) json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Running"));
  return pod;
}

static json_t *prod_requests(const char *cpu, const char *mem, int gpus) {
  json_t *r = json_pack("{s:s, s:s}", "cpu", cpu, "memory", mem);
  if (gpus) json_object_set_new(r, "nvidia.com/gpu", json_integer(gpus));
  return json_pack("[{s:s, s:s, s:{s:o}}]", "name", "main", "image", "registry.local/app:1",
                   "resources", "requests", r);
}

static void prod_daemon(gen *g, const char *node, const char *ds) {
  char name[96];
  json_t *spec;
  snprintf(name, sizeof name, "%s-%s", ds, node);
  spec = json_pack("{s:s, s:o, s:[{s:s}], s:{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}}", "nodeName",
                   node, "containers", prod_requests("100m", "128Mi", 0), "tolerations", "operator",
                   "Exists", "affinity", "nodeAffinity",
                   "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
                   "matchFields", "key", "metadata.name", "operator", "In", "values", node);
  json_object_set_new(spec, "priority", json_integer(1000));
  json_object_set_new(spec, "priorityClassName", json_string("critical"));
  add(g, prod_pod("kube-system", name, "DaemonSet", ds, spec, true));
}

static void production(gen *g, int nodes, int npods) {
  uint32_t s = 7;
  for (size_t k = 0; k < 3; k++)
    add(g, json_pack("{s:s, s:s, s:{s:s}, s:I, s:b}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                     "PriorityClass", "metadata", "name", prod_classes[k][0], "value",
                     (json_int_t)atoi(prod_classes[k][1]), "globalDefault", k == 1));
  for (int i = 0; i < nodes; i++) {
    char name[32], zone[16];
    bool gpu = i % 5 < 3, dedicated = i % 50 == 7, cordoned = i % 100 == 13;
    json_t *labels, *alloc, *spec = json_object(), *taints = json_array();
    snprintf(name, sizeof name, "ip-10-%d-%d-%d", i / 65536 % 256, i / 256 % 256, i % 256);
    snprintf(zone, sizeof zone, "zone-%c", 'a' + i % 3);
    labels = json_pack("{s:s, s:s, s:s, s:s}", "kubernetes.io/hostname", name,
                       "topology.kubernetes.io/zone", zone, "kubernetes.io/os", "linux",
                       "node.kubernetes.io/instance-type", gpu ? "p4d.24xlarge" : "m6i.16xlarge");
    if (gpu) {
      alloc = json_pack("{s:s, s:s, s:s, s:s}", "cpu", "95", "memory", "1100Gi", "pods", "110",
                        "nvidia.com/gpu", "8");
      json_object_set_new(labels, "nvidia.com/gpu.product",
                          json_string(i % 4 ? "NVIDIA-A100-SXM4-80GB" : "NVIDIA-H100-80GB-HBM3"));
      json_array_append_new(
          taints, json_pack("{s:s, s:s}", "key", "nvidia.com/gpu", "effect", "NoSchedule"));
    } else {
      alloc = json_pack("{s:s, s:s, s:s}", "cpu", "63500m", "memory", "250Gi", "pods", "110");
    }
    if (dedicated) {
      json_object_set_new(labels, "dedicated", json_string("team-00"));
      json_array_append_new(taints, json_pack("{s:s, s:s, s:s}", "key", "dedicated", "value",
                                              "team-00", "effect", "NoSchedule"));
    }
    if (cordoned) {
      json_object_set_new(spec, "unschedulable", json_true());
      json_array_append_new(taints,
                            json_pack("{s:s, s:s}", "key", "node.kubernetes.io/unschedulable",
                                      "effect", "NoSchedule"));
    }
    json_object_set_new(spec, "taints", taints);
    add(g, json_pack("{s:s, s:s, s:{s:s, s:o}, s:o, s:{s:o}}", "apiVersion", "v1", "kind", "Node",
                     "metadata", "name", name, "labels", labels, "spec", spec, "status",
                     "allocatable", alloc));
    prod_daemon(g, name, "node-exporter");
    prod_daemon(g, name, gpu ? "nvidia-device-plugin" : "fluent-bit");
    if (i % 2 && !cordoned) { /* a workload already running here */
      char pname[64], owner[48], ns[16];
      int ng = gpu ? 1 << (rnd(&s) % 3) : 0;
      json_t *pspec;
      snprintf(ns, sizeof ns, "team-%02d", (int)(rnd(&s) % 20));
      snprintf(owner, sizeof owner, "svc-%d", i / 16);
      snprintf(pname, sizeof pname, "%s-%05x", owner, i);
      pspec = json_pack("{s:s, s:o, s:I, s:s}", "nodeName", name, "containers",
                        prod_requests(ng ? "16" : "2", ng ? "128Gi" : "4Gi", ng), "priority",
                        (json_int_t)100, "priorityClassName", "standard");
      if (gpu)
        json_object_set_new(
            pspec, "tolerations",
            json_pack("[{s:s, s:s}]", "key", "nvidia.com/gpu", "operator", "Exists"));
      if (dedicated)
        json_array_append_new(json_object_get(pspec, "tolerations")
                                  ? json_object_get(pspec, "tolerations")
                                  : (json_object_set_new(pspec, "tolerations", json_array()),
                                     json_object_get(pspec, "tolerations")),
                              json_pack("{s:s, s:s, s:s}", "key", "dedicated", "operator", "Equal",
                                        "value", "team-00"));
      add(g, prod_pod(ns, pname, "ReplicaSet", owner, pspec, true));
    }
  }
  for (int i = 0; i < npods;) { /* pending: ReplicaSets and Jobs */
    int replicas = 1 + (int)(rnd(&s) % 12), cls = (int)(rnd(&s) % 10);
    bool gpu = rnd(&s) % 5 < 2, zoned = rnd(&s) % 3 == 0, product = gpu && rnd(&s) % 4 == 0;
    int ng = gpu ? 1 << (rnd(&s) % 4) : 0, zone = (int)(rnd(&s) % 3);
    const char *kind = gpu || rnd(&s) % 3 == 0 ? "Job" : "ReplicaSet";
    const char *klass = cls == 0 ? "batch-low" : cls == 9 ? "critical" : "standard";
    int prio = cls == 0 ? 0 : cls == 9 ? 1000 : 100;
    char ns[16], owner[48], cpu[16], mem[16];
    if (replicas > npods - i) replicas = npods - i;
    snprintf(ns, sizeof ns, "team-%02d", (int)(rnd(&s) % 20));
    snprintf(owner, sizeof owner, "%s-%d", gpu ? "train" : "web", i);
    if (!strcmp(kind, "Job")) { /* its controller's object: all its pods run at once */
      char uid[64];
      snprintf(uid, sizeof uid, "uid-Job-%s", owner);
      add(g, json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:i, s:i, s:{}}}", "apiVersion",
                       "batch/v1", "kind", "Job", "metadata", "name", owner, "namespace", ns, "uid",
                       uid, "spec", "parallelism", replicas, "completions", replicas, "template"));
    }
    if (gpu) {
      snprintf(cpu, sizeof cpu, "%d", ng * (4 + 4 * (int)(rnd(&s) % 2)));
      snprintf(mem, sizeof mem, "%dGi", ng * 64);
    } else {
      snprintf(cpu, sizeof cpu, "%dm", 250 * (1 + (int)(rnd(&s) % 8)));
      snprintf(mem, sizeof mem, "%dMi", 512 * (1 + (int)(rnd(&s) % 8)));
    }
    for (int k = 0; k < replicas; k++, i++) {
      char name[64];
      json_t *spec = json_pack("{s:o, s:I, s:s}", "containers", prod_requests(cpu, mem, ng),
                               "priority", (json_int_t)prio, "priorityClassName", klass);
      snprintf(name, sizeof name, "%s-%05x", owner, k);
      if (gpu) gpu_spec(spec, product ? "NVIDIA-A100-SXM4-80GB" : NULL);
      if (zoned) {
        char z1[16], z2[16];
        snprintf(z1, sizeof z1, "zone-%c", 'a' + zone);
        snprintf(z2, sizeof z2, "zone-%c", 'a' + (zone + 1) % 3);
        json_object_set_new(spec, "affinity",
                            json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s, s]}]}]}}}", "nodeAffinity",
                                      "requiredDuringSchedulingIgnoredDuringExecution",
                                      "nodeSelectorTerms", "matchExpressions", "key",
                                      "topology.kubernetes.io/zone", "operator", "In", "values", z1,
                                      z2));
      }
      add(g, prod_pod(ns, name, kind, owner, spec, false));
    }
  }
}

static void s_jobs(gen *g, int nodes, int pods) {
  jobs_nodes(g, nodes);
  jobs_pods(g, pods, false);
}

static void s_unique(gen *g, int nodes, int pods) {
  jobs_nodes(g, nodes);
  jobs_pods(g, pods, true);
}

static void s_mix(gen *g, int nodes, int pods) {
  mix_nodes(g, nodes, false);
  mix_pods(g, pods, false);
}

static void s_backlog(gen *g, int nodes, int pods) {
  mix_nodes(g, nodes, true);
  mix_pods(g, pods, true);
}

static const gen_scenario scenarios[] = {
    {"jobs", "SchedulingBasic shape: plain pods in jobs of 1-16 identical pods", 5000, 10000,
     s_jobs},
    {"unique", "SchedulingBasic shape, every pod a shape of its own (worst case)", 5000, 10000,
     s_unique},
    {"mix", "realistic plain mix: varied shapes, interleaved jobs, 3 priorities", 5000, 10000,
     s_mix},
    {"backlog", "a full cluster and pending pods that fit nowhere", 10000, 9000, s_backlog},
    {"production",
     "a recorded cluster's shape: 3 running pods per node (2 DaemonSet), owners, "
     "zone affinity, taints, cordons, priority classes",
     5000, 10000, production},
    {"gangs", "PyTorchJob gangs of 8-64 workers of 1-8 GPUs, zones and NVLink cliques", 1000, 12000,
     gangs},
    {"dra", "DRA: 8 GPUs per node in a ResourceSlice, pods with claims from one template", 500,
     5000, build_basic},
    {"dra-named", "DRA: each pod with a ResourceClaim of its own, jobs of 4 different specs", 500,
     5000, build_named},
    {"mig", "DRA: 8 A100 per node, partitionable into MIG slices by shared counters", 100, 2000,
     build_mig},
};

const gen_scenario *gen_scenarios(size_t *n) {
  *n = sizeof scenarios / sizeof scenarios[0];
  return scenarios;
}

const gen_scenario *gen_find(const char *name) {
  for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
    if (!strcmp(scenarios[i].name, name)) return &scenarios[i];
  return NULL;
}

ts_rc gen_build(const gen_scenario *s, model *m, int nodes, int pods, uint32_t seed, ts_err *err) {
  gen g = {m, err, TS_OK, seed ? seed : 42};
  if (nodes < 1 || pods < 0)
    return ts_err_set(err, TS_EINVAL, "%s: --nodes must be at least 1 and --pods at least 0",
                      s->name);
  s->build(&g, nodes, pods);
  return g.rc;
}
