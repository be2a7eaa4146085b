/* Unit tests of scheduler/: each filter, scoring (bin-pack and spread), pod order, the
 * wording of reasons, and randomized comparisons of the cycle with a plain per-pod full scan
 * and of the class path with the run-by-run path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/cluster.h"
#include "gen/gen.h"
#include "input/input.h"
#include "config/config.h"
#include "model/model.h"
#include "queueing/queueing.h"
#include "scheduler/sched_int.h"

static void apply(model *m, const char *yaml) {
  in_docs docs = {0};
  ts_err e;
  ts_err_clear(&e);
  if (in_yaml_parse(yaml, strlen(yaml), &docs, &e) != TS_OK) fail_msg("yaml: %s", e.text);
  for (size_t i = 0; i < docs.n; i++)
    if (model_apply_json(m, docs.v[i].value, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK)
      fail_msg("apply: %s", e.text);
  in_docs_free(&docs);
}

static void add_node(model *m, const char *name, const char *labels, const char *taints,
                     const char *alloc, bool unschedulable) {
  char y[2048];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s}}\n"
           "spec: {unschedulable: %s, taints: [%s]}\nstatus: {allocatable: {pods: \"110\", %s}}\n",
           name, labels, unschedulable ? "true" : "false", taints, alloc);
  apply(m, y);
}

/* A pod: extra is spec YAML in flow style entries ("priority: 5, nodeSelector: {...}"). */
static void add_pod(model *m, const char *name, const char *created, const char *requests,
                    const char *extra) {
  char y[2048];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
           "\"%s\"}\nspec: {schedulerName: tessera, %s%scontainers: [{name: c, resources: "
           "{requests: {%s}, limits: {%s}}}]}\n",
           name, created, extra, *extra ? ", " : "", requests, requests);
  apply(m, y);
}

/* What the differential tests turn off in the cycles run() and run_dra() make (sched_tuning). */
static sched_tuning tuning;

/* Every cycle's groups as sched_result promises them (the writer and replay read them). */
static void groups_ok(const sched_result *r) {
  char why[300];
  if (!tc_groups_ok(r, why, sizeof why)) fail_msg("groups: %s", why);
}

static sched_result run(model *m, sched_scoring scoring) {
  sched_config cfg;
  sched_result r;
  ts_err e;
  sched_config_default(&cfg);
  cfg.scoring = scoring;
  cfg.tuning = tuning;
  if (sched_cycle(m, &cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  groups_ok(&r);
  return r;
}

static const sched_decision *decision(const sched_result *r, const char *pod) {
  for (size_t i = 0; i < r->ndecisions; i++)
    if (!strcmp(r->decisions[i].pod->obj.name, pod)) return &r->decisions[i];
  fail_msg("no decision for %s", pod);
  return NULL;
}

static const char *node_of(const sched_result *r, const char *pod) {
  const sched_decision *d = decision(r, pod);
  return d->kind == SCHED_BIND ? d->node->obj.name : "(pending)";
}

static void test_filters_and_reasons(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  add_node(m, "cordoned", "gpu: \"yes\"", "", "cpu: \"8\", nvidia.com/gpu: \"8\"", true);
  add_node(m, "tainted", "gpu: \"yes\"",
           "{key: nvidia.com/gpu, value: present, effect: NoSchedule}",
           "cpu: \"8\", nvidia.com/gpu: \"8\"", false);
  add_node(m, "soft", "gpu: \"yes\"", "{key: soft, effect: PreferNoSchedule}",
           "cpu: \"1\", nvidia.com/gpu: \"1\"", false);
  add_node(m, "plain", "gpu: \"no\"", "", "cpu: \"8\"", false);
  add_pod(m, "a", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 2, cpu: \"2\"",
          "nodeSelector: {gpu: \"yes\"}");
  add_pod(m, "b", "2026-01-01T00:00:01Z", "cpu: \"1\"", "nodeSelector: {gpu: \"yes\"}");
  add_pod(m, "c", "2026-01-01T00:00:02Z", "cpu: \"2\"", "nodeSelector: {gpu: \"yes\"}");
  r = run(m, SCHED_BINPACK);
  /* PreferNoSchedule does not block; an untolerated NoSchedule and a cordon do. kube-scheduler
   * sorts "COUNT REASON" strings. */
  assert_string_equal(decision(&r, "a")->reason,
                      "0/4 nodes are available: 1 Insufficient cpu, 1 Insufficient nvidia.com/gpu, "
                      "1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had "
                      "untolerated taint {nvidia.com/gpu: present}, 1 node(s) were unschedulable.");
  assert_string_equal(node_of(&r, "b"), "soft");
  assert_string_equal(decision(&r, "c")->reason,
                      "0/4 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's "
                      "node affinity/selector, 1 node(s) had untolerated taint {nvidia.com/gpu: "
                      "present}, 1 node(s) were unschedulable.");
  assert_int_equal(r.nbound, 1);
  assert_int_equal(r.npending, 2);
  sched_result_free(&r);
  model_free(m);
}

/* Scheduling gates, as kube-scheduler reads them: a gated pod is not scheduled and not
 * unschedulable; a gang with a gated member waits whole, saying which; a gated pod in a Kueue
 * queue is not its head (the next one is admitted); once the gates go, it is placed. */
static void test_scheduling_gates(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  add_node(m, "n1", "", "", "cpu: \"8\", nvidia.com/gpu: \"8\"", false);
  add_pod(m, "gated", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 1",
          "schedulingGates: [{name: a.example.com/x}, {name: b.example.com/y}]");
  add_pod(m, "free", "2026-01-01T00:00:01Z", "nvidia.com/gpu: 1", "");
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, "
           "namespace: t}\nspec: {minMember: 2}\n");
  for (int i = 0; i < 2; i++) {
    char y[1024];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: pg-%d, namespace: t, labels: "
             "{scheduling.x-k8s.io/pod-group: pg}, creationTimestamp: \"2026-01-01T00:00:02Z\"}\n"
             "spec: {schedulerName: tessera, %scontainers: [{name: c, resources: {limits: "
             "{nvidia.com/gpu: \"1\"}}}]}\n",
             i, i ? "schedulingGates: [{name: g}], " : "");
    apply(m, y);
  }
  apply(m, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
           "spec: {namespaceSelector: {}, queueingStrategy: StrictFIFO, resourceGroups: "
           "[{coveredResources: [nvidia.com/gpu], flavors: [{name: f, resources: [{name: "
           "nvidia.com/gpu, nominalQuota: 1}]}]}]}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: "
           "t}\nspec: {clusterQueue: cq}\n");
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: q-next, namespace: t, labels: "
           "{kueue.x-k8s.io/queue-name: lq}, creationTimestamp: \"2026-01-01T00:00:04Z\"}\nspec: "
           "{schedulerName: tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
           "\"1\"}}}]}\n");
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: q-gated, namespace: t, labels: "
           "{kueue.x-k8s.io/queue-name: lq}, creationTimestamp: \"2026-01-01T00:00:03Z\"}\nspec: "
           "{schedulerName: tessera, schedulingGates: [{name: kueue.x-k8s.io/admission}], "
           "containers: [{name: c, resources: {limits: {nvidia.com/gpu: \"1\"}}}]}\n");
  r = run(m, SCHED_BINPACK);
  assert_int_equal(decision(&r, "gated")->why, SCHED_WHY_GATED);
  assert_string_equal(decision(&r, "gated")->reason,
                      "waiting for scheduling gates: [a.example.com/x b.example.com/y]");
  assert_string_equal(node_of(&r, "free"), "n1");
  for (int i = 0; i < 2; i++) {
    const sched_decision *d = decision(&r, i ? "pg-1" : "pg-0");
    assert_int_equal(d->kind, SCHED_PENDING);
    assert_int_equal(d->why, SCHED_WHY_GATED);
    assert_string_equal(d->reason,
                        "PodGroup t/pg: pod t/pg-1 is waiting for scheduling gates: [g]");
  }
  assert_int_equal(decision(&r, "q-gated")->why, SCHED_WHY_GATED);
  assert_string_equal(node_of(&r, "q-next"), "n1"); /* StrictFIFO: a gated pod is no head */
  { /* the result carries the gangs: the PodGroup's two decisions in one group; q-next's group
       with its Kueue admission */
    const sched_group *g = &r.groups[decision(&r, "pg-0")->group];
    assert_int_equal(decision(&r, "pg-1")->group, decision(&r, "pg-0")->group);
    assert_int_equal(g->n, 2);
    assert_int_equal(g->nbound, 0);
    assert_string_equal(g->gang, "PodGroup t/pg");
    g = &r.groups[decision(&r, "q-next")->group];
    assert_int_equal(g->n, 1);
    assert_int_equal(g->nbound, 1);
    assert_true(g->event >= 0);
    assert_int_equal(r.events[g->event].kind, SCHED_WL_ADMITTED);
    assert_string_equal(r.events[g->event].cluster_queue, "cq");
    assert_int_equal(r.groups[decision(&r, "free")->group].event, -1);
  }
  sched_result_free(&r);
  /* The gates go: placed. */
  add_pod(m, "gated", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 1", "");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(node_of(&r, "gated"), "n1");
  sched_result_free(&r);
  model_free(m);
}

static void test_tolerations_affinity_pods(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  add_node(m, "n1", "zone: a, gpus: \"8\"", "{key: nvidia.com/gpu, effect: NoSchedule}",
           "cpu: \"8\", nvidia.com/gpu: \"8\"", false);
  add_node(m, "n2", "zone: b, gpus: \"4\"", "", "cpu: \"8\", nvidia.com/gpu: \"4\"", true);
  add_pod(m, "tol", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 1",
          "tolerations: [{key: nvidia.com/gpu, operator: Exists}]");
  add_pod(m, "cordon-ok", "2026-01-01T00:00:01Z", "cpu: \"1\"",
          "tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists, effect: "
          "NoSchedule}]");
  add_pod(
      m, "aff", "2026-01-01T00:00:02Z", "cpu: \"1\"",
      "tolerations: [{operator: Exists}], affinity: {nodeAffinity: "
      "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
      "[{key: gpus, operator: Gt, values: [\"6\"]}]}]}}}");
  add_pod(m, "byname", "2026-01-01T00:00:03Z", "cpu: \"1\"",
          "tolerations: [{operator: Exists}], affinity: {nodeAffinity: "
          "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: "
          "[{key: metadata.name, operator: In, values: [n2]}]}]}}}");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(node_of(&r, "tol"), "n1");
  assert_string_equal(node_of(&r, "cordon-ok"), "n2");
  assert_string_equal(node_of(&r, "aff"), "n1");
  assert_string_equal(node_of(&r, "byname"), "n2");
  sched_result_free(&r);
  model_free(m);
  /* Pod count limits: "Too many pods". */
  m = model_new();
  apply(m, "apiVersion: v1\nkind: Node\nmetadata: {name: tiny}\nstatus: {allocatable: {cpu: \"8\", "
           "pods: \"1\"}}\n");
  add_pod(m, "p1", "2026-01-01T00:00:00Z", "cpu: \"1\"", "");
  add_pod(m, "p2", "2026-01-01T00:00:01Z", "cpu: \"1\"", "");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(node_of(&r, "p1"), "tiny");
  assert_string_equal(decision(&r, "p2")->reason, "0/1 nodes are available: 1 Too many pods.");
  sched_result_free(&r);
  model_free(m);
}

static void test_scoring(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  add_node(m, "empty", "", "", "cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"", false);
  add_node(m, "half", "", "", "cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"8\"", false);
  add_node(m, "cpuonly", "", "", "cpu: \"64\", memory: 512Gi", false);
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: running, namespace: t}\nspec:\n"
           "  nodeName: half\n  containers: [{resources: {limits: {nvidia.com/gpu: 4}}}]\n"
           "status: {phase: Running}\n");
  add_pod(m, "g", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 2", "");
  add_pod(m, "c", "2026-01-01T00:00:01Z", "cpu: \"4\"", "");
  r = run(m, SCHED_BINPACK);
  /* Bin-packing fills the partly used GPU node; a CPU pod stays off GPU nodes. */
  assert_string_equal(node_of(&r, "g"), "half");
  assert_string_equal(node_of(&r, "c"), "cpuonly");
  sched_result_free(&r);
  r = run(m, SCHED_SPREAD);
  assert_string_equal(node_of(&r, "g"), "empty");
  assert_string_equal(node_of(&r, "c"), "cpuonly");
  sched_result_free(&r);
  model_free(m);
}

static void test_order(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  apply(m,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: hi}\nvalue: 100\n"
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: dflt}\n"
        "value: 10\nglobalDefault: true\n");
  add_node(m, "one", "", "", "nvidia.com/gpu: \"1\"", false);
  add_pod(m, "old-low", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 1", "priority: 1");
  add_pod(m, "new-default", "2026-01-01T00:00:05Z", "nvidia.com/gpu: 1", "");
  add_pod(m, "new-high", "2026-01-01T00:00:09Z", "nvidia.com/gpu: 1", "priorityClassName: hi");
  assert_int_equal(sched_pod_priority(m, (model_pod *)model_get(m, MODEL_POD, "t", "new-default")),
                   10);
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.ndecisions, 3);
  assert_string_equal(r.decisions[0].pod->obj.name, "new-high");
  assert_int_equal(r.decisions[0].kind, SCHED_BIND);
  assert_string_equal(r.decisions[1].pod->obj.name, "new-default");
  assert_string_equal(r.decisions[2].pod->obj.name, "old-low");
  assert_int_equal(r.decisions[2].kind, SCHED_PENDING);
  sched_result_free(&r);
  model_free(m);
  /* No nodes at all. */
  m = model_new();
  add_pod(m, "lonely", "2026-01-01T00:00:00Z", "cpu: \"1\"", "");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(r.decisions[0].reason, "no nodes available to schedule pods");
  sched_result_free(&r);
  model_free(m);
}

static int ref_bound, ref_pending; /* totals over the randomized rounds */

/* The reference: every pod scans every node (no runs, no heap). */
static void reference(const model *m, sched_scoring scoring, const char **out, size_t n) {
  sched_config cfg;
  sched_view v;
  ts_arena a, o;
  sched_result r = run((model *)m, scoring);
  sched_config_default(&cfg);
  cfg.scoring = scoring;
  ts_arena_init(&a, 0);
  ts_arena_init(&o, 0);
  assert_int_equal(sched__view_init(&v, m, &cfg, 0, &a, &o), TS_OK);
  assert_int_equal(r.ndecisions, n);
  for (size_t i = 0; i < r.ndecisions; i++) {
    const model_pod *p = r.decisions[i].pod;
    int64_t best = 0;
    int found = -1;
    sched_shape shape;
    sched_pending pp = {.pod = p};
    sched__shape_init(&v, p, &shape);
    for (uint32_t k = 0; k < v.n; k++) {
      int64_t s;
      if (sched__static_fit(&v, &pp, k) != SCHED_FIT || !sched__resources_fit(&v, p, k)) continue;
      s = sched__score(&v, &shape, k);
      if (found < 0 || s > best) best = s, found = (int)k;
    }
    out[i] = found < 0 ? "(pending)" : v.nodes[found]->obj.name;
    found < 0 ? ref_pending++ : ref_bound++;
    if (found >= 0) sched__place(&v, p, (uint32_t)found);
    if (strcmp(out[i], node_of(&r, p->obj.name)) != 0)
      fail_msg("pod %s: cycle chose %s, full scan %s", p->obj.name, node_of(&r, p->obj.name),
               out[i]);
  }
  sched_result_free(&r);
  sched__view_free(&v);
  ts_arena_free(&a);
  ts_arena_free(&o);
}

static void test_runs_match_full_scan(void **state) {
  static const char *shapes[] = {"nvidia.com/gpu: 1, cpu: \"4\", memory: 16Gi",
                                 "nvidia.com/gpu: 2, cpu: \"8\"",
                                 "nvidia.com/gpu: 8, cpu: \"32\", memory: 256Gi",
                                 "cpu: \"2\", memory: 4Gi", "nvidia.com/gpu: 4"};
  (void)state;
  srand(7);
  for (int round = 0; round < 25; round++) {
    model *m = model_new();
    const char *out[400];
    int npods = 0;
    for (int k = 0; k < 30; k++) {
      char name[32], labels[64], alloc[128];
      int gpus = (rand() % 3) * 4;
      snprintf(name, sizeof name, "node-%02d", k);
      snprintf(labels, sizeof labels, "zone: z%d", rand() % 3);
      snprintf(alloc, sizeof alloc, "cpu: \"%d\", memory: %dGi%s%d", 16 + rand() % 64,
               64 + rand() % 512, gpus ? ", nvidia.com/gpu: " : ", x: ", gpus ? gpus : 1);
      add_node(m, name, labels, "", alloc, rand() % 10 == 0);
    }
    for (int g = 0; g < 12; g++) {
      const char *shape = shapes[rand() % 5];
      int count = 1 + rand() % 25;
      char extra[64];
      snprintf(extra, sizeof extra, rand() % 3 ? "priority: %d" : "nodeSelector: {zone: z%d}",
               rand() % 3);
      for (int i = 0; i < count && npods < 400; i++, npods++) {
        char name[32], created[32];
        snprintf(name, sizeof name, "p%03d", npods);
        snprintf(created, sizeof created, "2026-01-01T00:%02d:%02dZ", npods / 60, npods % 60);
        add_pod(m, name, created, shape, extra);
      }
    }
    reference(m, (sched_scoring)(round % SCHED_SCORING_COUNT), out, (size_t)npods); /* each */
    model_free(m);
  }
  /* The rounds exercise both outcomes, many times. */
  assert_true(ref_bound > 1000);
  assert_true(ref_pending > 100);
}

/* A pod with labels, annotations and an owner: meta is the YAML flow body of metadata
 * after name and namespace ("labels: {...}, annotations: {...}"). */
static void add_member(model *m, const char *name, const char *meta, const char *requests,
                       const char *extra) {
  char y[2048];
  snprintf(
      y, sizeof y,
      "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
      "\"2026-01-01T00:00:00Z\", %s}\nspec: {schedulerName: tessera, %s%scontainers: [{name: c, "
      "resources: {requests: {%s}, limits: {%s}}}]}\n",
      name, meta, extra, *extra ? ", " : "", requests, requests);
  apply(m, y);
}

/* The job object that owns a gang's pods, in namespace t, running `pods` pods at once: a
 * batch Job (parallelism), a JobSet (one replicated job) or a Kubeflow training job (workers). */
static void add_job(model *m, const char *kind, const char *name, int pods) {
  char y[1024];
  if (!strcmp(kind, "Job"))
    snprintf(y, sizeof y,
             "apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s, namespace: t, uid: u-%s}\n"
             "spec: {parallelism: %d}\n",
             name, name, pods);
  else if (!strcmp(kind, "JobSet"))
    snprintf(y, sizeof y,
             "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: %s, "
             "namespace: t}\nspec: {replicatedJobs: [{name: w, replicas: 1, template: {spec: "
             "{parallelism: %d}}}]}\n",
             name, pods);
  else
    snprintf(y, sizeof y,
             "apiVersion: kubeflow.org/v1\nkind: %s\nmetadata: {name: %s, namespace: t}\n"
             "spec: {pytorchReplicaSpecs: {Worker: {replicas: %d}}}\n",
             kind, name, pods);
  apply(m, y);
}

static void gpu_node(model *m, const char *name, const char *labels, int gpus) {
  char l[256], a[128];
  snprintf(l, sizeof l, "kubernetes.io/hostname: %s, %s", name, labels);
  snprintf(a, sizeof a, "cpu: \"64\", memory: 512Gi, nvidia.com/gpu: \"%d\"", gpus);
  add_node(m, name, l, "", a, false);
}

static int count_on(const sched_result *r, const char *node) {
  int n = 0;
  for (size_t i = 0; i < r->ndecisions; i++)
    if (r->decisions[i].kind == SCHED_BIND && !strcmp(r->decisions[i].node->obj.name, node)) n++;
  return n;
}

/* The FGD paper's baselines on three nodes: a (8 GPUs, 2 used), b (8 GPUs, 6 used), c (4 GPUs,
 * none used), and a pod of 2 GPUs. First fit: a, the first by name. Best fit: b, left with the
 * least free. Dot product: c, where its request is the largest share and the most is free
 * (GPU 0.5 x 1 against 0.25 x 0.75 and 0.25 x 0.25). Bin-packing b, spreading a (a and c end
 * half used; a comes first). And each name parses back to its policy. */
/* The baselines as the FGD paper's simulator scores them, counted by hand for a pod of 2 GPUs
 * and 1 core on a (8 GPUs, 6 free), b (8, 2 free) and c (4, 4 free), 64 cores free each:
 * best fit 100 x (1 - (63000/128000 + (free - 2000)/8000) / 2): a 50, b 75, c 62; dot product
 * 100 x (1 - (64000/128000 x 1000/128000 + free/8000 x 2000/8000) / 2): a 90, b 96, c 93. */
static void test_scoring_baselines(void **state) {
  static const struct {
    sched_scoring s;
    const char *name, *node;
  } want[] = {{SCHED_FIRST_FIT, "first-fit", "a"},
              {SCHED_BEST_FIT, "best-fit", "b"},
              {SCHED_DOT_PRODUCT, "dot-product", "b"},
              {SCHED_BINPACK, "binpack", "b"},
              {SCHED_SPREAD, "spread", "a"}};
  model *m = model_new();
  (void)state;
  gpu_node(m, "a", "pool: x", 8);
  gpu_node(m, "b", "pool: x", 8);
  gpu_node(m, "c", "pool: x", 4);
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: on-a, namespace: t}\nspec: {nodeName: a, "
           "containers: [{resources: {limits: {nvidia.com/gpu: 2}}}]}\nstatus: {phase: Running}\n");
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: on-b, namespace: t}\nspec: {nodeName: b, "
           "containers: [{resources: {limits: {nvidia.com/gpu: 6}}}]}\nstatus: {phase: Running}\n");
  add_pod(m, "p", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 2, cpu: \"1\"", "");
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    sched_result r = run(m, want[i].s);
    sched_scoring back;
    if (strcmp(node_of(&r, "p"), want[i].node))
      fail_msg("%s: p on %s, want %s", want[i].name, node_of(&r, "p"), want[i].node);
    assert_string_equal(sched_scoring_name(want[i].s), want[i].name);
    assert_true(sched_scoring_parse(want[i].name, &back) && back == want[i].s);
    sched_result_free(&r);
  }
  {
    sched_scoring back = SCHED_BINPACK;
    assert_false(sched_scoring_parse("worst-fit", &back));
  }
  model_free(m);
}

/* GPU clustering as the FGD paper's simulator scores it (GpuClusteringScore), hand-counted:
 * 25 x (8000 - the node's free GPU thousandths) / 8000, integer, plus 75 when the node runs only
 * pods asking for GPUs as the pod does, 50 when such pods among others, 25 when none, 0 when
 * only others. Nodes of 8 GPUs running pods of: a 1, 2 and 3 GPUs; b 2; c 6; d none; e 2 and 2.
 * p0 (4 GPUs) fits b (others: 0 + 6), d (none: 25 + 0) and e (others: 0 + 12): d. p (2 GPUs):
 * a 50 + 18 = 68, b 75 + 6 = 81, c 0 + 18, d (now running p0) 0 + 12, e 75 + 12 = 87: e, where
 * first fit takes a. q (a share; no node runs one): a, c and e (now 2 free) 0 + 18, b 6, d 12:
 * a, the first by name (d would read 37 had p0 not been counted). A pod without GPUs scores 0
 * everywhere: the first by name. */
static void test_scoring_gpu_clustering(void **state) {
  static const struct {
    const char *node, *name;
    int gpus;
  } running[] = {{"a", "a1", 1}, {"a", "a2", 2}, {"a", "a3", 3}, {"b", "b1", 2},
                 {"c", "c1", 6}, {"e", "e1", 2}, {"e", "e2", 2}};
  model *m = model_new();
  sched_result r;
  sched_scoring back;
  (void)state;
  for (const char *n = "abcde"; *n; n++) {
    char name[2] = {*n, 0};
    gpu_node(m, name, "pool: x", 8);
  }
  for (size_t i = 0; i < sizeof running / sizeof *running; i++) {
    char y[512];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t}\nspec: {nodeName: %s, "
             "containers: [{resources: {limits: {nvidia.com/gpu: %d}}}]}\nstatus: {phase: "
             "Running}\n",
             running[i].name, running[i].node, running[i].gpus);
    apply(m, y);
  }
  add_pod(m, "p0", "2026-01-01T00:00:00Z", "nvidia.com/gpu: 4, cpu: \"1\"", "");
  add_pod(m, "p", "2026-01-01T00:00:01Z", "nvidia.com/gpu: 2, cpu: \"1\"", "");
  apply(m,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: q, namespace: t, creationTimestamp: "
        "\"2026-01-01T00:00:02Z\", annotations: {gpu-fraction: \"0.5\"}}\nspec: "
        "{schedulerName: tessera, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n");
  add_pod(m, "z", "2026-01-01T00:00:03Z", "cpu: \"1\"", "");
  r = run(m, SCHED_GPU_CLUSTERING);
  assert_string_equal(node_of(&r, "p0"), "d");
  assert_string_equal(node_of(&r, "p"), "e");
  assert_string_equal(node_of(&r, "q"), "a");
  assert_string_equal(node_of(&r, "z"), "a");
  sched_result_free(&r);
  r = run(m, SCHED_FIRST_FIT);
  assert_string_equal(node_of(&r, "p"), "a");
  sched_result_free(&r);
  assert_string_equal(sched_scoring_name(SCHED_GPU_CLUSTERING), "gpu-clustering");
  assert_true(sched_scoring_parse("gpu-clustering", &back) && back == SCHED_GPU_CLUSTERING);
  model_free(m);
}

/* On a cluster of GPU nodes only, bin-packing puts a pod without GPUs where the fewest GPUs are
 * free (b: all 8 used), so that it does not strand the GPUs of a node that has some (a: none
 * used, first by name); spreading does not. */
static void test_cpu_pod_on_gpu_nodes(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  gpu_node(m, "a", "pool: x", 8);
  gpu_node(m, "b", "pool: x", 8);
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: on-b, namespace: t}\nspec: {nodeName: b, "
           "containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]}\nstatus: {phase: Running}\n");
  add_pod(m, "cpu", "2026-01-01T00:00:00Z", "cpu: \"8\"", "");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(node_of(&r, "cpu"), "b");
  sched_result_free(&r);
  r = run(m, SCHED_SPREAD);
  assert_string_equal(node_of(&r, "cpu"), "a");
  sched_result_free(&r);
  model_free(m);
}

static void test_gang_all_or_nothing(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  /* Fragmented: 4 nodes with 2 GPUs free each (8 free in all). */
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%d", i);
    gpu_node(m, name, "zone: a", 2);
  }
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: big, "
           "namespace: t}\nspec: {minMember: 2}\n");
  /* Quota-wise 8 GPUs are free, but no node has 4: the gang must not start half. */
  add_member(m, "big-0", "labels: {scheduling.x-k8s.io/pod-group: big}", "nvidia.com/gpu: 4", "");
  add_member(m, "big-1", "labels: {scheduling.x-k8s.io/pod-group: big}", "nvidia.com/gpu: 4", "");
  /* A later single pod uses what the gang could not: nothing was reserved. */
  add_member(m, "small", "creationTimestamp: \"2026-01-01T00:00:09Z\"", "nvidia.com/gpu: 2", "");
  r = run(m, SCHED_BINPACK);
  assert_int_equal(decision(&r, "big-0")->kind, SCHED_PENDING);
  assert_int_equal(decision(&r, "big-1")->kind, SCHED_PENDING);
  assert_string_equal(decision(&r, "big-0")->gang, "PodGroup t/big");
  assert_string_equal(decision(&r, "big-0")->reason,
                      "PodGroup t/big: 2 pods must start together and only 0 fit; t/big-0: 0/4 "
                      "nodes are available: 4 Insufficient nvidia.com/gpu.");
  assert_int_equal(decision(&r, "small")->kind, SCHED_BIND);
  sched_result_free(&r);
  model_free(m);
}

static void test_gang_identification(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  gpu_node(m, "n0", "zone: a", 8);
  gpu_node(m, "n1", "zone: a", 8);
  /* A PodGroup that does not exist blocks its pods. */
  add_member(m, "orphan-0", "labels: {scheduling.x-k8s.io/pod-group: nope}", "cpu: \"1\"", "");
  add_member(m, "vorphan-0", "annotations: {scheduling.k8s.io/group-name: vnope}", "cpu: \"1\"",
             "");
  add_member(m, "korphan-0", "annotations: {pod-group-name: knope}", "cpu: \"1\"", "");
  /* A Kueue pod group of 3 with only 2 pods: waits, holding nothing. */
  add_member(m, "kq-0",
             "labels: {kueue.x-k8s.io/pod-group-name: kq}, annotations: "
             "{kueue.x-k8s.io/pod-group-total-count: \"3\"}",
             "nvidia.com/gpu: 1", "");
  add_member(m, "kq-1",
             "labels: {kueue.x-k8s.io/pod-group-name: kq}, annotations: "
             "{kueue.x-k8s.io/pod-group-total-count: \"3\"}",
             "nvidia.com/gpu: 1", "");
  /* A bad count is said plainly. */
  add_member(m, "kqbad-0",
             "labels: {kueue.x-k8s.io/pod-group-name: kqbad}, annotations: "
             "{kueue.x-k8s.io/pod-group-total-count: many}",
             "cpu: \"1\"", "");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(decision(&r, "orphan-0")->reason,
                      "PodGroup t/nope: its PodGroup does not exist");
  assert_string_equal(decision(&r, "vorphan-0")->reason,
                      "Volcano PodGroup t/vnope: its PodGroup does not exist");
  assert_string_equal(decision(&r, "korphan-0")->reason,
                      "KAI PodGroup t/knope: its PodGroup does not exist");
  assert_string_equal(decision(&r, "kq-0")->reason,
                      "Kueue pod group t/kq has 2 of its 3 pods; waiting for the rest");
  assert_int_equal(decision(&r, "kq-1")->kind, SCHED_PENDING);
  assert_string_equal(decision(&r, "kqbad-0")->reason,
                      "Kueue pod group t/kqbad: annotation kueue.x-k8s.io/pod-group-total-count is "
                      "missing or not a positive integer");
  assert_int_equal(r.nbound, 0);
  sched_result_free(&r);
  /* The third pod arrives: the group starts, on one node (the narrowest domain). */
  add_member(m, "kq-2",
             "labels: {kueue.x-k8s.io/pod-group-name: kq}, annotations: "
             "{kueue.x-k8s.io/pod-group-total-count: \"3\"}",
             "nvidia.com/gpu: 1", "");
  r = run(m, SCHED_BINPACK);
  assert_int_equal(decision(&r, "kq-2")->kind, SCHED_BIND);
  assert_int_equal(count_on(&r, "n0") + count_on(&r, "n1"), 3);
  assert_true(count_on(&r, "n0") == 3 || count_on(&r, "n1") == 3);
  sched_result_free(&r);
  model_free(m);
}

static void test_gang_topology(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  /* Two NVLink cliques: c1 tighter (3 GPUs used on one node) than c2 (empty). */
  gpu_node(m, "a0", "zone: z1, nvidia.com/gpu.clique: c1", 8);
  gpu_node(m, "a1", "zone: z1, nvidia.com/gpu.clique: c1", 8);
  gpu_node(m, "b0", "zone: z1, nvidia.com/gpu.clique: c2", 8);
  gpu_node(m, "b1", "zone: z1, nvidia.com/gpu.clique: c2", 8);
  apply(m,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: busy, namespace: t}\nspec:\n  nodeName: a0\n"
        "  containers: [{resources: {limits: {nvidia.com/gpu: 3}}}]\nstatus: {phase: Running}\n");
  /* A PyTorchJob of 1 master + 7 workers, 1 GPU each: fits on one node, a1 (empty) or b0/b1;
   * the tightest domain that fits at the narrowest level is a single node: a1 (a0 has 5). */
  add_job(m, "PyTorchJob", "ft", 8);
  for (int i = 0; i < 8; i++) {
    char name[32];
    snprintf(name, sizeof name, "ft-%d", i);
    add_member(m, name,
               "ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: ft, "
               "uid: u1, controller: true}]",
               "nvidia.com/gpu: 1", "");
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 8);
  assert_int_equal(count_on(&r, "a1"), 8);
  assert_string_equal(decision(&r, "ft-0")->gang, "PyTorchJob t/ft");
  sched_result_free(&r);
  /* 12 pods do not fit one node: the clique with room for all, the tighter one first (c1 has
   * 13 free, c2 16). */
  add_job(m, "PyTorchJob", "ft", 12);
  for (int i = 8; i < 12; i++) {
    char name[32];
    snprintf(name, sizeof name, "ft-%d", i);
    add_member(m, name,
               "ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: ft, "
               "uid: u1, controller: true}]",
               "nvidia.com/gpu: 1", "");
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 12);
  assert_int_equal(count_on(&r, "a0") + count_on(&r, "a1"), 12);
  sched_result_free(&r);
  model_free(m);
}

static void test_gang_required_topology(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  gpu_node(m, "z1-0", "zone: z1", 4);
  gpu_node(m, "z2-0", "zone: z2", 4);
  add_job(m, "JobSet", "js", 2);
  for (int i = 0; i < 2; i++) {
    char name[16];
    snprintf(name, sizeof name, "req-%d", i);
    add_member(m, name,
               "labels: {jobset.sigs.k8s.io/jobset-name: js}, annotations: "
               "{kueue.x-k8s.io/podset-required-topology: zone}",
               "nvidia.com/gpu: 3", "");
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 0);
  assert_string_equal(decision(&r, "req-0")->reason,
                      "JobSet t/js: 2 pods must start together within one zone domain and no "
                      "domain has room for them");
  sched_result_free(&r);
  model_free(m);
}

static void test_gang_min_member(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  gpu_node(m, "n0", "zone: a", 2);
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, "
           "namespace: t}\nspec: {minMember: 2}\n");
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "g-%d", i);
    add_member(m, name, "labels: {scheduling.x-k8s.io/pod-group: g}", "nvidia.com/gpu: 1", "");
  }
  /* minMember 2 of 3 pods: the two that fit start; the third waits for room. */
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 2);
  assert_int_equal(r.npending, 1);
  assert_string_equal(decision(&r, "g-2")->reason,
                      "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
  sched_result_free(&r);
  model_free(m);
}

/* ---- DRA in the cycle ------------------------------------------------------------------ */

/* A test double for CEL: `device.driver == "X"`, `type == "T"` (the device's attribute
 * "type" in the driver's domain), `true`, and `fail` (a runtime error). The real engine is
 * tested by the CEL suites; this tests the cycle's use of allocations. */
static ts_rc test_eval(void *ctx, const char *e, const model_slice *s, uint32_t index, bool *m,
                       ts_err *err) {
  const model_device *d = &s->devices[index];
  char want[64];
  (void)ctx;
  if (!strcmp(e, "true")) return *m = true, TS_OK;
  if (!strcmp(e, "fail")) return ts_err_set(err, TS_EINVAL, "no such key: fail");
  if (sscanf(e, "device.driver == \"%63[^\"]\"", want) == 1)
    return *m = !strcmp(s->driver, want), TS_OK;
  if (sscanf(e, "type == \"%63[^\"]\"", want) == 1) {
    *m = false;
    for (uint32_t i = 0; i < d->nattrs; i++)
      if (!strcmp(d->attrs[i].name, "type")) *m = !strcmp(d->attrs[i].s, want);
    return TS_OK;
  }
  return ts_err_set(err, TS_EINVAL, "test_eval: unknown expression %s", e);
}

static sched_result run_dra(model *m) {
  sched_config cfg;
  sched_result r;
  ts_err e;
  sched_config_default(&cfg);
  cfg.dra_eval = test_eval;
  cfg.instantiate_templates = true;
  cfg.tuning = tuning;
  if (sched_cycle(m, &cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  groups_ok(&r);
  return r;
}

/* A node with a slice of n GPUs; with mig, GPU 0 also offers two half-GPU partitions that
 * share its counters with the whole GPU. */
static void dra_node(model *m, const char *name, int n, bool mig) {
  char y[8192];
  int len;
  add_node(m, name, "", "", "cpu: \"64\", memory: 512Gi", false);
  len =
      snprintf(y, sizeof y,
               "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: %s-gpus}\n"
               "spec:\n  driver: gpu.nvidia.com\n  nodeName: %s\n"
               "  pool: {name: %s, generation: 1, resourceSliceCount: 1}\n"
               "  sharedCounters:\n  - {name: gpu-0, counters: {mem: {value: 80Gi}}}\n  devices:\n",
               name, name, name);
  for (int i = 0; i < n; i++)
    len += snprintf(
        y + len, sizeof y - (size_t)len,
        "  - name: gpu-%d\n    attributes: {type: {string: gpu}}\n%s", i,
        i == 0 && mig
            ? "    consumesCounters: [{counterSet: gpu-0, counters: {mem: {value: 80Gi}}}]\n"
            : "");
  for (int i = 0; mig && i < 2; i++)
    len += snprintf(y + len, sizeof y - (size_t)len,
                    "  - name: gpu-0-mig-%d\n    attributes: {type: {string: mig}}\n"
                    "    consumesCounters: [{counterSet: gpu-0, counters: {mem: {value: 40Gi}}}]\n",
                    i);
  apply(m, y);
}

static void dra_pod(model *m, const char *name, const char *claim_ref) {
  char y[1024];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:00Z\"}\nspec: {schedulerName: tessera, containers: [{name: c}], "
           "resourceClaims: [{name: gpu, %s}]}\n",
           name, claim_ref);
  apply(m, y);
}

static const char *dra_setup =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
    "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.nvidia.com\"'}}]}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: one-gpu, "
    "namespace: t}\n"
    "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, "
    "selectors: [{cel: {expression: 'type == \"gpu\"'}}]}}]}}}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two-mig, "
    "namespace: t}\n"
    "spec: {spec: {devices: {requests: [{name: mig, exactly: {deviceClassName: gpu, count: 2, "
    "selectors: [{cel: {expression: 'type == \"mig\"'}}]}}]}}}\n";

/* A run that stays pending is remembered by shape; a later run of that shape reuses its
 * reason only while no node has changed. Here a CPU pod fills node a's cpu between two
 * pending runs of one shape, and the second run must say so (it once could have reused the
 * first run's words). */
static void test_pending_runs_remembered(void **state) {
  static const char *pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
      "\"2026-01-01T00:00:%02dZ\"}\nspec: {schedulerName: tessera, containers: [{name: c, "
      "resources: {requests: {cpu: \"%d\"}}}]%s}\n";
  static const struct {
    const char *name;
    int cpu;
    bool claim;
  } pods[] = {{"g1", 1, true},    {"g2", 1, true}, {"g3", 1, true},
              {"cpu", 63, false}, {"g4", 1, true}, {"g5", 1, true}};
  model *m = model_new();
  sched_result r;
  (void)state;
  apply(m, dra_setup);
  dra_node(m, "a", 1, false);
  dra_node(m, "b", 1, false);
  for (int i = 0; i < 6; i++) {
    char y[1024];
    snprintf(y, sizeof y, pod, pods[i].name, i, pods[i].cpu,
             pods[i].claim ? ", resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]"
                           : "");
    apply(m, y);
  }
  r = run_dra(m);
  assert_int_equal(r.ndecisions, 6);
  assert_int_equal(r.decisions[2].kind, SCHED_PENDING); /* g3: both GPUs taken */
  assert_string_equal(r.decisions[2].reason,
                      "0/2 nodes are available: 2 cannot allocate all claims. claim t/g3-gpu: "
                      "request \"gpu\" matches no free device on any eligible node");
  assert_int_equal(r.decisions[3].kind, SCHED_BIND); /* the CPU pod fills a node's cpu */
  assert_int_equal(r.decisions[4].kind, SCHED_PENDING);
  assert_string_equal(r.decisions[4].reason,
                      "0/2 nodes are available: 1 Insufficient cpu, 1 cannot allocate all "
                      "claims. claim t/g4-gpu: request \"gpu\" matches no free device on any "
                      "eligible node");
  assert_int_equal(r.decisions[5].kind, SCHED_PENDING);
  assert_non_null(strstr(r.decisions[5].reason, "1 Insufficient cpu, 1 cannot allocate all "
                                                "claims. claim t/g5-gpu:"));
  sched_result_free(&r);
  model_free(m);
}

static void test_dra_templates_binpack(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  apply(m, dra_setup);
  dra_node(m, "a", 2, false);
  dra_node(m, "b", 2, false);
  for (int i = 0; i < 5; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    dra_pod(m, name, "resourceClaimTemplateName: one-gpu");
  }
  r = run_dra(m);
  /* Bin-packing fills node a's two GPUs, then b's; the fifth pod finds no device. */
  assert_string_equal(node_of(&r, "p0"), "a");
  assert_string_equal(node_of(&r, "p1"), "a");
  assert_string_equal(node_of(&r, "p2"), "b");
  assert_string_equal(node_of(&r, "p3"), "b");
  assert_int_equal(decision(&r, "p0")->nclaims, 1);
  assert_string_equal(decision(&r, "p0")->claims[0].name, "p0-gpu");
  assert_non_null(decision(&r, "p0")->claims[0].tmpl);
  assert_int_equal(decision(&r, "p0")->claims[0].result.ndevices, 1);
  assert_string_equal(decision(&r, "p0")->claims[0].result.devices[0].device->name, "gpu-0");
  assert_string_equal(decision(&r, "p1")->claims[0].result.devices[0].device->name, "gpu-1");
  assert_string_equal(decision(&r, "p0")->claims[0].result.devices[0].request, "gpu");
  assert_int_equal(decision(&r, "p0")->claims[0].result.node_selector.nterms, 1);
  assert_string_equal(decision(&r, "p4")->reason,
                      "0/2 nodes are available: 2 cannot allocate all claims. claim t/p4-gpu: "
                      "request \"gpu\" matches no free device on any eligible node");
  sched_result_free(&r);
  model_free(m);
}

static void test_dra_partitions(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  apply(m, dra_setup);
  dra_node(m, "a", 2, true);
  dra_pod(m, "mig", "resourceClaimTemplateName: two-mig");
  dra_pod(m, "whole-0", "resourceClaimTemplateName: one-gpu");
  dra_pod(m, "whole-1", "resourceClaimTemplateName: one-gpu");
  r = run_dra(m);
  /* The two MIG partitions use all of GPU 0's counters: the whole GPU 0 cannot be given too,
   * so the first whole-GPU pod gets gpu-1 and the second none. */
  assert_int_equal(decision(&r, "mig")->claims[0].result.ndevices, 2);
  assert_string_equal(decision(&r, "mig")->claims[0].result.devices[0].device->name, "gpu-0-mig-0");
  assert_string_equal(decision(&r, "whole-0")->claims[0].result.devices[0].device->name, "gpu-1");
  assert_int_equal(decision(&r, "whole-1")->kind, SCHED_PENDING);
  sched_result_free(&r);
  model_free(m);
}

static void test_dra_claims(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  apply(m, dra_setup);
  dra_node(m, "a", 1, false);
  dra_node(m, "b", 1, false);
  /* A shared claim already allocated on b: its pod goes to b, whatever b's devices. */
  apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared, "
           "namespace: t}\n"
           "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n"
           "status:\n  allocation:\n    devices: {results: [{request: gpu, driver: gpu.nvidia.com, "
           "pool: b, device: gpu-0}]}\n    nodeSelector: {nodeSelectorTerms: [{matchFields: "
           "[{key: metadata.name, operator: In, values: [b]}]}]}\n");
  dra_pod(m, "user", "resourceClaimName: shared");
  dra_pod(m, "missing", "resourceClaimName: nope");
  dra_pod(m, "new", "resourceClaimTemplateName: one-gpu");
  apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: bad, "
           "namespace: t}\n"
           "spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, "
           "selectors: [{cel: {expression: fail}}]}}]}}}\n");
  dra_pod(m, "broken", "resourceClaimTemplateName: bad");
  r = run_dra(m);
  assert_string_equal(node_of(&r, "user"), "b");
  assert_true(decision(&r, "user")->claims[0].allocated);
  assert_string_equal(decision(&r, "missing")->reason, "resourceclaim \"nope\" not found");
  /* b's only device is taken by the shared claim: the new claim gets a's. */
  assert_string_equal(node_of(&r, "new"), "a");
  /* A CEL error is the reason, not "no match". */
  assert_non_null(strstr(decision(&r, "broken")->reason,
                         "claim t/broken-gpu: selector #0: CEL runtime error: no such key: fail"));
  sched_result_free(&r);
  model_free(m);
}

/* A slice of n devices on node `name`, device i carrying the int attribute "group" = i % groups. */
static void dra_wide_node(model *m, const char *name, int n, int groups) {
  ts_buf b;
  ts_buf_init(&b, 0);
  add_node(m, name, "", "", "cpu: \"64\", memory: 512Gi", false);
  ts_buf_printf(&b,
                "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: %s-gpus}\n"
                "spec:\n  driver: gpu.nvidia.com\n  nodeName: %s\n"
                "  pool: {name: %s, generation: 1, resourceSliceCount: 1}\n  devices:\n",
                name, name, name);
  for (int i = 0; i < n; i++)
    ts_buf_printf(&b, "  - {name: gpu-%d, attributes: {group: {int: %d}}}\n", i, i % groups);
  apply(m, b.data);
  ts_buf_free(&b);
}

/* The search stays bounded: alternatives over the device limit give way at once (upstream's
 * errAllocationResultMaxSizeExceeded, and combinations rather than permutations), and any
 * search that would still explode stops at its budget with a reason that says so. */
static void test_dra_bounded_search(void **state) {
  model *m = model_new();
  sched_result r;
  const sched_decision *d;
  (void)state;
  apply(m, dra_setup);
  dra_wide_node(m, "wide", 64, 8);
  /* Two requests preferring 32 devices each, else 16: 32 + 32 and 32 + 16 are over the limit of
   * 32 per claim, so both take their second alternative. This ran for minutes. */
  apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: greedy, "
           "namespace: t}\nspec:\n  devices:\n    requests:\n"
           "    - {name: r1, firstAvailable: [{name: big, deviceClassName: gpu, count: 32}, "
           "{name: small, deviceClassName: gpu, count: 16}]}\n"
           "    - {name: r2, firstAvailable: [{name: big, deviceClassName: gpu, count: 32}, "
           "{name: small, deviceClassName: gpu, count: 16}]}\n");
  dra_pod(m, "greedy", "resourceClaimName: greedy");
  r = run_dra(m);
  d = decision(&r, "greedy");
  assert_int_equal(d->kind, SCHED_BIND);
  assert_int_equal(d->claims[0].result.ndevices, 32);
  assert_string_equal(d->claims[0].result.devices[0].request, "r1/small");
  assert_string_equal(d->claims[0].result.devices[31].request, "r2/small");
  sched_result_free(&r);
  /* 16 devices of distinct groups where there are 8 groups: no solution, and trying every
   * combination would take billions of steps. */
  model_remove(m, MODEL_POD, "t", "greedy");
  apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: distinct, "
           "namespace: t}\nspec:\n  devices:\n    requests:\n"
           "    - {name: r, exactly: {deviceClassName: gpu, count: 16}}\n"
           "    constraints: [{distinctAttribute: gpu.nvidia.com/group}]\n");
  dra_pod(m, "distinct", "resourceClaimName: distinct");
  dra_wide_node(m, "wide-2", 64, 8);
  r = run_dra(m);
  d = decision(&r, "distinct");
  assert_int_equal(d->kind, SCHED_PENDING);
  assert_non_null(strstr(d->reason, "0/2 nodes are available: 2 cannot allocate all claims."));
  assert_non_null(strstr(d->reason, "the search for devices gave up after 200000 steps"));
  sched_result_free(&r);
  model_free(m);
}

/* Feature gates as upstream (1.34) reads them: with DRAPartitionableDevices off, a device
 * consuming counters is never allocated, but the other devices are, those of a slice with
 * shared counters too (once the whole slice was skipped); with DRADeviceBindingConditions off, a
 * device with binding conditions is never allocated. */
static void test_dra_feature_gates(void **state) {
  (void)state;
  for (int gates_on = 0; gates_on < 2; gates_on++) {
    model *m = model_new();
    sched_config cfg;
    sched_result r;
    ts_err e;
    apply(m, dra_setup);
    add_node(m, "n", "", "", "cpu: \"64\", memory: 512Gi", false);
    apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: a}\nspec:\n"
             "  driver: gpu.nvidia.com\n  nodeName: n\n  pool: {name: a, generation: 1, "
             "resourceSliceCount: 1}\n  sharedCounters: [{name: gpu-0, counters: {mem: {value: "
             "80Gi}}}]\n  devices:\n  - {name: mig-0, attributes: {type: {string: gpu}}, "
             "consumesCounters: [{counterSet: gpu-0, counters: {mem: {value: 40Gi}}}]}\n"
             "  - {name: whole-0, attributes: {type: {string: gpu}}}\n"
             "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: b}\n"
             "spec:\n  driver: gpu.nvidia.com\n  nodeName: n\n  pool: {name: b, generation: 1, "
             "resourceSliceCount: 1}\n  devices:\n"
             "  - {name: gated, attributes: {type: {string: gpu}}, bindingConditions: [ready], "
             "bindingFailureConditions: [failed]}\n"
             "  - {name: plain, attributes: {type: {string: gpu}}}\n");
    for (int i = 0; i < 3; i++) {
      char name[16];
      snprintf(name, sizeof name, "p%d", i);
      dra_pod(m, name, "resourceClaimTemplateName: one-gpu");
    }
    sched_config_default(&cfg);
    cfg.dra_eval = test_eval;
    cfg.instantiate_templates = true;
    cfg.dra.partitionable_devices = cfg.dra.device_binding = gates_on;
    assert_int_equal(sched_cycle(m, &cfg, NULL, 0, &r, &e), TS_OK);
    /* Gates on: three of the four devices; off: whole-0 and plain, never mig-0 or gated. */
    assert_int_equal(r.nbound, gates_on ? 3 : 2);
    if (!gates_on) {
      for (size_t i = 0; i < r.ndecisions; i++)
        if (r.decisions[i].kind == SCHED_BIND) {
          const char *dev = r.decisions[i].claims[0].result.devices[0].device->name;
          if (strcmp(dev, "plain") && strcmp(dev, "whole-0")) fail_msg("allocated %s", dev);
        }
    }
    sched_result_free(&r);
    model_free(m);
  }
}

/* Two pending pods share one claim nobody allocated yet: it is allocated once, both pods go
 * where it is, and the other node's device stays free for a third pod. */
static void test_dra_shared_in_cycle(void **state) {
  model *m = model_new();
  sched_result r;
  const sched_claim *first, *second;
  (void)state;
  apply(m, dra_setup);
  dra_node(m, "a", 1, false);
  dra_node(m, "b", 1, false);
  apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: both, "
           "namespace: t}\n"
           "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n");
  dra_pod(m, "s0", "resourceClaimName: both");
  dra_pod(m, "s1", "resourceClaimName: both");
  dra_pod(m, "own", "resourceClaimTemplateName: one-gpu");
  r = run_dra(m);
  assert_string_equal(node_of(&r, "s0"), node_of(&r, "s1"));
  first = &decision(&r, "s0")->claims[0];
  second = &decision(&r, "s1")->claims[0];
  assert_false(first->reused);
  assert_true(second->reused);
  assert_ptr_equal(first->result.devices[0].device, second->result.devices[0].device);
  assert_int_equal(decision(&r, "own")->kind, SCHED_BIND);
  assert_string_not_equal(node_of(&r, "own"), node_of(&r, "s0"));
  sched_result_free(&r);
  model_free(m);
}

/* The allocator's answers are remembered per claim shape and node until the node changes; a
 * device every node reaches changes every node when taken or given back. Here a gang of four
 * one-GPU pods tries n0's two GPUs and the shared one, finds no fourth and gives all back,
 * having learnt on the way that n1 (no GPU of its own) cannot serve the shape; the later pod,
 * which only n1 admits, must find the shared GPU free again. */
static void test_dra_fit_remembered(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  apply(m, dra_setup);
  dra_node(m, "n0", 2, false);
  add_node(m, "n1", "only: here", "", "cpu: \"64\", memory: 512Gi", false);
  apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: net}\n"
           "spec:\n  driver: gpu.nvidia.com\n  allNodes: true\n"
           "  pool: {name: net, generation: 1, resourceSliceCount: 1}\n  devices:\n"
           "  - {name: net-0, attributes: {type: {string: gpu}}}\n");
  add_job(m, "Job", "g", 4);
  for (int i = 0; i < 4; i++) {
    char y[1024];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: g-%d, namespace: t, creationTimestamp: "
             "\"2026-01-01T00:00:00Z\", ownerReferences: [{apiVersion: batch/v1, kind: Job, "
             "name: g, uid: u-g, controller: true}]}\nspec: {schedulerName: tessera, containers: "
             "[{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]}\n",
             i);
    apply(m, y);
  }
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: late, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:10Z\"}\nspec: {schedulerName: tessera, nodeSelector: {only: here}, "
           "containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: "
           "one-gpu}]}\n");
  for (int cache = 0; cache < 2; cache++) {
    tuning.no_dra_fit_cache = !cache;
    r = run_dra(m);
    assert_int_equal(decision(&r, "g-0")->kind, SCHED_PENDING);
    assert_int_equal(decision(&r, "late")->kind, SCHED_BIND);
    assert_string_equal(node_of(&r, "late"), "n1");
    assert_string_equal(decision(&r, "late")->claims[0].result.devices[0].device->name, "net-0");
    sched_result_free(&r);
  }
  tuning.no_dra_fit_cache = false;
  model_free(m);
}

/* ---- waitForPodsReady ------------------------------------------------------------------ */

#define MIN_NS (60LL * 1000000000LL)

static void bound_member(model *m, const char *name, bool ready) {
  char y[1024];
  snprintf(
      y, sizeof y,
      "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, ownerReferences: "
      "[{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: job, uid: u, controller: true}]}\n"
      "spec: {schedulerName: tessera, nodeName: n0, containers: [{name: c, resources: "
      "{limits: {nvidia.com/gpu: 1}}}]}\n"
      "status:\n  phase: %s\n  conditions:\n"
      "  - {type: PodScheduled, status: \"True\", lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n"
      "  - {type: Ready, status: \"%s\"}\n",
      name, ready ? "Running" : "Pending", ready ? "True" : "False");
  apply(m, y);
}

static sched_result cycle_at(model *m, sched_state *st, int64_t now) {
  sched_config cfg;
  sched_result r;
  ts_err e;
  sched_config_default(&cfg);
  cfg.wait_for_pods_ready = true;
  if (sched_cycle(m, &cfg, st, now, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  return r;
}

static void test_wait_for_pods_ready(void **state) {
  model *m = model_new();
  sched_state *st = sched_state_new();
  int64_t t0;
  sched_result r;
  (void)state;
  assert_int_equal(ts_time_parse("2026-01-01T00:00:00Z", &t0), TS_OK);
  gpu_node(m, "n0", "zone: a", 8);
  add_job(m, "PyTorchJob", "job", 2);
  bound_member(m, "job-0", true);
  bound_member(m, "job-1", false);
  /* Within the timeout nothing happens. */
  r = cycle_at(m, st, t0 + 4 * MIN_NS);
  assert_int_equal(r.nevicted, 0);
  sched_result_free(&r);
  /* Past it, the whole gang is evicted, and requeued with a backoff of one minute. */
  r = cycle_at(m, st, t0 + 6 * MIN_NS);
  assert_int_equal(r.nevicted, 2);
  assert_int_equal(r.decisions[0].kind, SCHED_EVICT);
  assert_string_equal(r.decisions[0].pod->obj.name, "job-0");
  assert_non_null(strstr(r.decisions[0].reason, "not all Running and Ready within 5m0s"));
  assert_non_null(strstr(r.decisions[0].reason, "backoff of 1m0s"));
  sched_result_free(&r);
  /* The job controller recreates the pods: the gang waits out its backoff. */
  model_remove(m, MODEL_POD, "t", "job-0");
  model_remove(m, MODEL_POD, "t", "job-1");
  for (int i = 0; i < 2; i++) {
    char name[32];
    snprintf(name, sizeof name, "job-%d-b", i);
    add_member(m, name,
               "ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: job, "
               "uid: u, controller: true}]",
               "nvidia.com/gpu: 1", "");
  }
  r = cycle_at(m, st, t0 + 6 * MIN_NS + 30LL * 1000000000LL);
  assert_int_equal(r.nbound, 0);
  assert_non_null(strstr(decision(&r, "job-0-b")->reason,
                         "requeued after its pods were not all ready in time (eviction 1)"));
  sched_result_free(&r);
  r = cycle_at(m, st, t0 + 7 * MIN_NS + 1);
  assert_int_equal(r.nbound, 2);
  sched_result_free(&r);
  sched_state_free(st);
  model_free(m);
}

/* ---- Kueue admission with placement ---------------------------------------------------- */

static const char *queues_yaml =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"
    "spec: {nodeLabels: {pool: gpu}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
    "  namespaceSelector: {}\n  preemption: {withinClusterQueue: LowerPriority}\n"
    "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
    "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: %d}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: t}\n"
    "spec: {clusterQueue: cq}\n";

/* A pod of the batch Job `job` (which runs one pod unless the test adds it). */
static void queued_member(model *m, const char *name, const char *job, int gpus, int prio,
                          const char *node) {
  char y[1200];
  if (!model_get(m, MODEL_JOB, "t", job)) add_job(m, "Job", job, 1);
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:00Z\", labels: {kueue.x-k8s.io/queue-name: lq}, ownerReferences: "
           "[{apiVersion: batch/v1, kind: Job, name: %s, uid: u-%s, controller: true}]}\n"
           "spec: {schedulerName: tessera, priority: %d, %s%s%scontainers: [{name: c, resources: "
           "{limits: {nvidia.com/gpu: %d}}}]}\n%s",
           name, job, job, prio, node ? "nodeName: " : "", node ? node : "", node ? ", " : "", gpus,
           node ? "status: {phase: Running}\n" : "");
  apply(m, y);
}

/* queueing.admission: kueue. Kueue admits, Tessera places: the admitted pod set goes whole on
 * its flavor's nodes, as many pods in each topology domain as Kueue assigned (a pod whose
 * nodeSelector names a domain counts for it), with no quota of Tessera's (the ClusterQueue
 * holds 1 GPU and 8 are placed); what Kueue has not admitted waits, saying so. */
static void kueue_pod(model *m, const char *name, const char *owner_uid, const char *labels,
                      int gpus, const char *extra) {
  char y[2048];
  snprintf(
      y, sizeof y,
      "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, uid: pod-%s, "
      "creationTimestamp: \"2026-01-01T00:00:00Z\", labels: {kueue.x-k8s.io/queue-name: lq%s%s}"
      "%s%s%s}\nspec: {schedulerName: tessera, %s%scontainers: [{name: c, resources: {limits: "
      "{nvidia.com/gpu: \"%d\"}}}]}\n",
      name, name, *labels ? ", " : "", labels,
      owner_uid ? ", ownerReferences: [{apiVersion: "
                  "batch/v1, kind: Job, name: train, controller: true, uid: "
                : "",
      owner_uid ? owner_uid : "", owner_uid ? "}]" : "", extra, *extra ? ", " : "", gpus);
  apply(m, y);
}

static void test_kueue_admits(void **state) {
  model *m = model_new();
  sched_config cfg;
  sched_result r;
  ts_err e;
  (void)state;
  gpu_node(m, "a1", "rack: r1, gpu: a100", 4);
  gpu_node(m, "a2", "rack: r1, gpu: a100", 4);
  gpu_node(m, "a3", "rack: r2, gpu: a100", 4);
  gpu_node(m, "h1", "rack: r2, gpu: h100", 4);
  apply(m, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n"
           "spec: {nodeLabels: {gpu: a100}}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h100}\n"
           "spec: {nodeLabels: {gpu: h100}}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
           "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], "
           "flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 1}]}]}]}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: "
           "t}\nspec: {clusterQueue: cq}\n");
  /* A Job of 4 pods of 2 GPUs, admitted on a100 with 2 pods on a1 and 2 on a3; train-0's
   * nodeSelector names a3 (as Kueue's TopologyUngater writes it). */
  apply(m,
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: t, uid: u-train}\n"
        "spec: {parallelism: 4}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: job-train-1, "
        "namespace: t, ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: "
        "u-train, controller: true}]}\nspec: {queueName: lq, podSets: [{name: main, count: 4}]}\n"
        "status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n"
        "    - name: main\n      count: 4\n      flavors: {nvidia.com/gpu: a100}\n"
        "      topologyAssignment:\n        levels: [rack, kubernetes.io/hostname]\n"
        "        slices:\n        - domainCount: 2\n          podCounts: {universal: 2}\n"
        "          valuesPerLevel: [{individual: {prefix: r, roots: ['1', '2']}}, "
        "{individual: {prefix: a, roots: ['1', '3']}}]\n"
        "  conditions: [{type: QuotaReserved, status: 'True'}, {type: Admitted, status: "
        "'True'}]\n");
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "train-%d", i);
    kueue_pod(m, name, "u-train", "kueue.x-k8s.io/podset: main", 2,
              i ? "" : "nodeSelector: {kubernetes.io/hostname: a3}");
  }
  /* A plain pod admitted on h100 (its Workload owns it), one too big for its flavor, one
   * Kueue has not admitted, one without a Workload, one still gated by Kueue's topology gate. */
  apply(m,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: pod-solo, "
        "namespace: t, ownerReferences: [{apiVersion: v1, kind: Pod, name: solo, uid: pod-solo}]}\n"
        "spec: {queueName: lq, podSets: [{name: main, count: 1}]}\nstatus:\n  admission:\n"
        "    clusterQueue: cq\n    podSetAssignments: [{name: main, flavors: {nvidia.com/gpu: "
        "h100}}]\n  conditions: [{type: Admitted, status: 'True'}]\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: pod-big, "
        "namespace: t, ownerReferences: [{apiVersion: v1, kind: Pod, name: big, uid: pod-big}]}\n"
        "spec: {queueName: lq, podSets: [{name: main, count: 1}]}\nstatus:\n  admission:\n"
        "    clusterQueue: cq\n    podSetAssignments: [{name: main, flavors: {nvidia.com/gpu: "
        "a100}}]\n  conditions: [{type: Admitted, status: 'True'}]\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: pod-wait, "
        "namespace: t, ownerReferences: [{apiVersion: v1, kind: Pod, name: wait, uid: pod-wait}]}\n"
        "spec: {queueName: lq, podSets: [{name: main, count: 1}]}\nstatus:\n  conditions:\n"
        "  - {type: QuotaReserved, status: 'False', reason: Pending, message: \"couldn't assign "
        "flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, "
        "1 more needed\"}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: pod-tas, "
        "namespace: t, ownerReferences: [{apiVersion: v1, kind: Pod, name: tas, uid: pod-tas}]}\n"
        "spec: {queueName: lq, podSets: [{name: main, count: 1}]}\nstatus:\n  admission:\n"
        "    clusterQueue: cq\n    podSetAssignments: [{name: main, flavors: {nvidia.com/gpu: "
        "a100}}]\n  conditions: [{type: Admitted, status: 'True'}]\n");
  kueue_pod(m, "solo", NULL, "", 4, "");
  kueue_pod(m, "big", NULL, "", 8, "");
  kueue_pod(m, "wait", NULL, "", 1, "");
  kueue_pod(m, "orphan", NULL, "", 1, "");
  kueue_pod(m, "tas", NULL, "", 1, "schedulingGates: [{name: kueue.x-k8s.io/topology}]");
  sched_config_default(&cfg);
  cfg.kueue_admits = true;
  if (sched_cycle(m, &cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  assert_string_equal(node_of(&r, "train-0"), "a3");
  assert_int_equal(count_on(&r, "a1"), 2);
  assert_int_equal(count_on(&r, "a3"), 2);
  assert_int_equal(count_on(&r, "a2"), 0); /* bin-packing alone would have used it */
  assert_string_equal(node_of(&r, "solo"), "h1");
  assert_int_equal(decision(&r, "big")->why, SCHED_WHY_UNSCHEDULABLE);
  assert_non_null(strstr(decision(&r, "big")->reason,
                         "Workload t/pod-big admitted by Kueue to ClusterQueue cq: 1 pods must "
                         "start together and only 0 fit; t/big: 0/4 nodes are available"));
  assert_int_equal(decision(&r, "wait")->why, SCHED_WHY_QUEUED);
  assert_string_equal(decision(&r, "wait")->reason,
                      "waits for Kueue to admit Workload t/pod-wait (LocalQueue t/lq): couldn't "
                      "assign flavors to pod set main: insufficient unused quota for "
                      "nvidia.com/gpu in flavor a100, 1 more needed");
  assert_int_equal(decision(&r, "orphan")->why, SCHED_WHY_QUEUED);
  assert_non_null(strstr(decision(&r, "orphan")->reason, "no Workload for it yet"));
  assert_int_equal(decision(&r, "tas")->why, SCHED_WHY_GATED);
  for (size_t i = 0; i < r.nevents; i++) /* Kueue counts its admissions, not Tessera */
    assert_int_not_equal(r.events[i].kind, SCHED_WL_ADMITTED);
  for (size_t i = 0; i < r.ndecisions; i++)
    assert_int_equal(sched_decision_apply(m, &r.decisions[i]), TS_OK);
  sched_result_free(&r);
  /* A pod of the Job is replaced (train-1 on a1 gone, train-4 comes): it goes where the
   * assignment still has room (a1), even when spreading would pick the empty a2. */
  {
    in_docs docs = {0};
    const char *del = "apiVersion: v1\nkind: Pod\nmetadata: {name: train-1, namespace: t}\n";
    ts_err_clear(&e);
    assert_int_equal(in_yaml_parse(del, strlen(del), &docs, &e), TS_OK);
    assert_int_equal(model_apply_json(m, docs.v[0].value, MODEL_DELETED, NULL, NULL, NULL, &e),
                     TS_OK);
    in_docs_free(&docs);
  }
  kueue_pod(m, "train-4", "u-train", "kueue.x-k8s.io/podset: main", 2, "");
  cfg.scoring = SCHED_SPREAD;
  if (sched_cycle(m, &cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  assert_int_equal(r.nbound, 1);
  assert_string_equal(node_of(&r, "train-4"), "a1");
  sched_result_free(&r);
  model_free(m);
}

/* Shadow: a first-fit scheduler's placements against Tessera's, on the cluster of e2e 13: 4
 * nodes of 4 GPUs in 2 racks; first-fit put a-0 (3 GPUs) on n1, gang b (2 x 3) on n2 and n3
 * (two racks), gang c (2 x 3) half on n4, and left c-1 and d-0 (2 GPUs) pending. Tessera would
 * have kept b in rack r2, left c whole pending and placed d-0: one partial gang (0 for
 * Tessera), one split, 4 GPUs stranded (3 for Tessera), c-0 placed where Tessera would not. The
 * model is given back as it was. */
static void shadow_pod(model *m, const char *name, const char *group, int gpus, const char *node) {
  char y[1024];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:00Z\"%s%s%s}\nspec: {schedulerName: fifo%s%s, containers: [{name: "
           "c, resources: {limits: {nvidia.com/gpu: \"%d\"}}}]}\n",
           name, group ? ", labels: {scheduling.x-k8s.io/pod-group: " : "", group ? group : "",
           group ? "}" : "", node ? ", nodeName: " : "", node ? node : "", gpus);
  apply(m, y);
}

static void test_shadow(void **state) {
  model *m = model_new();
  sched_config cfg;
  sched_shadow sh;
  ts_err e;
  int64_t now = 1767225600LL * 1000000000LL + 120 * 1000000000LL; /* 2 minutes after creation */
  (void)state;
  gpu_node(m, "n1", "rack: r1", 4);
  gpu_node(m, "n2", "rack: r1", 4);
  gpu_node(m, "n3", "rack: r2", 4);
  gpu_node(m, "n4", "rack: r2", 4);
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: b, "
           "namespace: t}\nspec: {minMember: 2}\n---\napiVersion: scheduling.x-k8s.io/v1alpha1\n"
           "kind: PodGroup\nmetadata: {name: c, namespace: t}\nspec: {minMember: 2}\n");
  shadow_pod(m, "a-0", NULL, 3, "n1");
  shadow_pod(m, "b-0", "b", 3, "n2");
  shadow_pod(m, "b-1", "b", 3, "n3");
  shadow_pod(m, "c-0", "c", 3, "n4");
  shadow_pod(m, "c-1", "c", 3, NULL);
  shadow_pod(m, "d-0", NULL, 2, NULL);
  add_pod(m, "mine", "2026-01-01T00:00:00Z", "cpu: 1", ""); /* Tessera's own: not compared */
  sched_config_default(&cfg);
  cfg.topology[0] = ts_intern_cstr("rack");
  cfg.topology[1] = ts_intern_cstr("kubernetes.io/hostname");
  cfg.ntopology = 2;
  for (int round = 0; round < 2; round++) { /* the same twice: the model was given back */
    if (sched_shadow_eval(m, &cfg, ts_intern_cstr("fifo"), now, &sh, &e) != TS_OK)
      fail_msg("shadow: %s", e.text);
    assert_int_equal(sh.pods, 6);
    assert_int_equal(sh.bound[0], 4);
    assert_int_equal(sh.bound[1], 4); /* a-0, b (rack r2), d-0 */
    assert_int_equal(sh.pending[1], 2);
    assert_int_equal(sh.gangs, 2);
    assert_int_equal(sh.partial[0], 1);
    assert_int_equal(sh.partial[1], 0);
    assert_int_equal(sh.split, 1);
    assert_int_equal(sh.unplaceable, 1);
    assert_int_equal(sh.placeable, 0);
    assert_int_equal(sh.gpus, 16);
    assert_int_equal(sh.free_gpus[0], 4);
    assert_int_equal(sh.stranded_gpus[0], 4);
    assert_int_equal(sh.free_gpus[1], 5);
    assert_int_equal(sh.stranded_gpus[1], 3);
    assert_int_equal(sh.counts[SCHED_SHADOW_PARTIAL], 1);
    for (size_t i = 0; i < sh.nexamples; i++) {
      const sched_shadow_example *x = &sh.examples[i];
      if (x->kind == SCHED_SHADOW_PARTIAL) assert_string_equal(x->what, "PodGroup t/c");
      if (x->kind == SCHED_SHADOW_SPLIT) {
        assert_string_equal(x->what, "PodGroup t/b");
        assert_string_equal(x->detail,
                            "its 2 pods are on 2 domains of rack; Tessera would keep them in one");
      }
      if (x->kind == SCHED_SHADOW_UNPLACEABLE) assert_string_equal(x->what, "pod t/c-0");
    }
    sched_shadow_free(&sh);
    { /* given back: placements, phases, scheduler names */
      const model_pod *c0 = (const model_pod *)model_get(m, MODEL_POD, "t", "c-0");
      const model_pod *d0 = (const model_pod *)model_get(m, MODEL_POD, "t", "d-0");
      assert_string_equal(c0->node_name, "n4");
      assert_null(d0->node_name);
      assert_string_equal(d0->scheduler_name, "fifo");
    }
  }
  /* b-0 goes: n2 is free, and Tessera would complete gang c there now (d-0 then fits nowhere). */
  {
    in_docs docs = {0};
    const char *del = "apiVersion: v1\nkind: Pod\nmetadata: {name: b-0, namespace: t}\n";
    ts_err_clear(&e);
    assert_int_equal(in_yaml_parse(del, strlen(del), &docs, &e), TS_OK);
    assert_int_equal(model_apply_json(m, docs.v[0].value, MODEL_DELETED, NULL, NULL, NULL, &e),
                     TS_OK);
    in_docs_free(&docs);
  }
  if (sched_shadow_eval(m, &cfg, ts_intern_cstr("fifo"), now, &sh, &e) != TS_OK)
    fail_msg("shadow: %s", e.text);
  assert_int_equal(sh.placeable, 1);
  assert_int_equal(sh.partial[0], 1); /* c; b has no pod pending: it waits for a new one */
  assert_string_equal(sh.examples[0].what, "pod t/c-1");
  assert_non_null(strstr(sh.examples[0].detail, "Tessera would bind it to n2 now"));
  sched_shadow_free(&sh);
  model_free(m);
}

static void test_admission_needs_placement(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 16);
  apply(m, q);
  /* Quota: 16 GPUs. Cluster: 4 nodes with 4 GPUs each, 2 used on each: 8 free in pieces of 2. */
  for (int i = 0; i < 4; i++) {
    char name[32], used[32];
    snprintf(name, sizeof name, "n%d", i);
    snprintf(used, sizeof used, "used-%d", i);
    gpu_node(m, name, "pool: gpu", 4);
    queued_member(m, used, used, 2, 0, name);
  }
  /* Quota allows 8 more (16 - 8), but a gang of two 4-GPU pods fits on no node: Kueue would
   * admit it and leave it Pending; Tessera does not admit it. */
  add_job(m, "Job", "big", 2);
  add_job(m, "Job", "small", 2);
  queued_member(m, "big-0", "big", 4, 0, NULL);
  queued_member(m, "big-1", "big", 4, 0, NULL);
  /* Two 2-GPU pods fit: admitted and placed. */
  queued_member(m, "small-0", "small", 2, 0, NULL);
  queued_member(m, "small-1", "small", 2, 0, NULL);
  r = run(m, SCHED_BINPACK);
  assert_int_equal(decision(&r, "big-0")->kind, SCHED_PENDING);
  assert_non_null(
      strstr(decision(&r, "big-0")->reason, "0 of its 2 pods fit on the nodes of flavor gpu"));
  assert_int_equal(decision(&r, "small-0")->kind, SCHED_BIND);
  assert_int_equal(decision(&r, "small-1")->kind, SCHED_BIND);
  assert_string_equal(decision(&r, "small-0")->gang, "Job t/small");
  sched_result_free(&r);
  model_free(m);
}

static void test_admission_quota_and_preemption(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 4);
  apply(m, q);
  gpu_node(m, "n0", "pool: gpu", 8);
  gpu_node(m, "other", "pool: cpu", 8);         /* not a node of the flavor */
  queued_member(m, "low-0", "low", 4, 1, "n0"); /* uses the whole quota */
  queued_member(m, "high-0", "high", 2, 100, NULL);
  queued_member(m, "stray-0", "stray", 1, 0, NULL);
  r = run(m, SCHED_BINPACK);
  /* The quota is full: the higher-priority workload preempts the lower one (withinClusterQueue:
   * LowerPriority) and waits for it to go; the victim's pods are evicted. */
  assert_int_equal(decision(&r, "high-0")->kind, SCHED_PENDING);
  assert_int_equal(decision(&r, "low-0")->kind, SCHED_EVICT);
  assert_non_null(strstr(decision(&r, "low-0")->reason, "preempted to make room for"));
  assert_int_equal(decision(&r, "stray-0")->kind, SCHED_PENDING);
  sched_result_free(&r);
  {
    /* With the scheduler's memory, a second cycle before the eviction is seen does not evict
     * again: the preemptor waits for its victims. */
    sched_state *st = sched_state_new();
    sched_config cfg;
    ts_err e;
    sched_config_default(&cfg);
    assert_int_equal(sched_cycle(m, &cfg, st, 0, &r, &e), TS_OK);
    assert_int_equal(r.nevicted, 1);
    sched_result_free(&r);
    assert_int_equal(sched_cycle(m, &cfg, st, 0, &r, &e), TS_OK);
    assert_int_equal(r.nevicted, 0);
    assert_int_equal(decision(&r, "high-0")->kind, SCHED_PENDING);
    sched_result_free(&r);
    sched_state_free(st);
  }
  model_free(m);
}

/* stopPolicy HoldAndDrain: the queue's running gangs are evicted (once), nothing new starts. */
static void test_admission_hold_and_drain(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  sched_state *st = sched_state_new();
  sched_config cfg;
  ts_err e;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 8);
  apply(m, q);
  gpu_node(m, "n0", "pool: gpu", 8);
  add_job(m, "Job", "run", 2);
  queued_member(m, "run-0", "run", 2, 0, "n0");
  queued_member(m, "run-1", "run", 2, 0, "n0");
  queued_member(m, "new-0", "new", 2, 0, NULL);
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nevicted, 0); /* not stopped: nothing drained */
  assert_int_equal(decision(&r, "new-0")->kind, SCHED_BIND);
  sched_result_free(&r);
  apply(m, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, "
           "namespace: t}\nspec: {clusterQueue: cq, stopPolicy: HoldAndDrain}\n");
  sched_config_default(&cfg);
  assert_int_equal(sched_cycle(m, &cfg, st, 0, &r, &e), TS_OK);
  assert_int_equal(r.nevicted, 2);
  assert_int_equal(decision(&r, "run-0")->kind, SCHED_EVICT);
  assert_string_equal(decision(&r, "run-1")->reason,
                      "LocalQueue t/lq is stopped (stopPolicy HoldAndDrain)");
  assert_int_equal(decision(&r, "new-0")->kind, SCHED_PENDING);
  sched_result_free(&r);
  assert_int_equal(sched_cycle(m, &cfg, st, 0, &r, &e), TS_OK);
  assert_int_equal(r.nevicted, 0); /* issued once */
  sched_result_free(&r);
  sched_state_free(st);
  model_free(m);
}

static void test_admission_charges_devices(void **state) {
  model *m = model_new();
  char q[2048];
  sched_config cfg;
  sched_result r;
  ts_err e;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 1);
  apply(m, q);
  apply(m, dra_setup);
  dra_node(m, "a", 2, false);
  apply(m, "apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {pool: gpu}}\n"
           "status: {allocatable: {cpu: \"64\", memory: 512Gi, pods: \"110\"}}\n");
  for (int i = 0; i < 2; i++) {
    char y[1024];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: d%d, namespace: t, creationTimestamp: "
             "\"2026-01-01T00:00:0%dZ\", labels: {kueue.x-k8s.io/queue-name: lq}}\nspec: "
             "{schedulerName: "
             "tessera, containers: [{name: c}], resourceClaims: [{name: gpu, "
             "resourceClaimTemplateName: one-gpu}]}\n",
             i, i);
    apply(m, y);
  }
  /* One device of class gpu counts as one nvidia.com/gpu of quota; the queue has one. */
  sched_config_default(&cfg);
  assert_int_equal(q_devmap_add(&cfg.queueing.devmap, "gpu", "nvidia.com/gpu", "1", &e), TS_OK);
  cfg.dra_eval = test_eval;
  cfg.instantiate_templates = true;
  assert_int_equal(sched_cycle(m, &cfg, NULL, 0, &r, &e), TS_OK);
  assert_int_equal(decision(&r, "d0")->kind, SCHED_BIND);
  assert_int_equal(decision(&r, "d0")->claims[0].result.ndevices, 1);
  assert_int_equal(decision(&r, "d1")->kind, SCHED_PENDING);
  assert_non_null(
      strstr(decision(&r, "d1")->reason, "insufficient unused quota for nvidia.com/gpu"));
  sched_result_free(&r);
  /* A class with no mapping cannot be charged: the pod says so. */
  q_devmap_free(&cfg.queueing.devmap);
  assert_int_equal(q_devmap_add(&cfg.queueing.devmap, "other", "nvidia.com/gpu", "1", &e), TS_OK);
  assert_int_equal(sched_cycle(m, &cfg, NULL, 0, &r, &e), TS_OK);
  assert_non_null(strstr(decision(&r, "d0")->reason, "cannot be charged to quota"));
  sched_result_free(&r);
  sched_config_free(&cfg);
  model_free(m);
}

/* A queued gang (PodGroup with minMember, pods labelled with a LocalQueue) waits for its
 * minimum as the same gang without a queue does: pods arrive one by one in a cluster. */
static void test_admission_gang_min(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 32);
  apply(m, q);
  gpu_node(m, "n0", "pool: gpu", 8);
  gpu_node(m, "n1", "pool: gpu", 4);
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, "
           "namespace: t}\nspec: {minMember: 8}\n");
  for (int i = 0; i < 8; i++) {
    char name[16];
    snprintf(name, sizeof name, "pg-%d", i);
    add_member(m, name,
               "labels: {scheduling.x-k8s.io/pod-group: pg, kueue.x-k8s.io/queue-name: lq}",
               "nvidia.com/gpu: 1", "");
    r = run(m, SCHED_BINPACK);
    if (i < 7) {
      assert_int_equal(r.nbound, 0);
      assert_non_null(strstr(decision(&r, "pg-0")->reason, "waiting for the rest"));
    } else {
      assert_int_equal(r.nbound, 8);
      assert_int_equal(count_on(&r, "n0"), 8); /* the whole gang on one node */
    }
    sched_result_free(&r);
  }
  /* minMember 4 of 6 pods where only 4 GPUs are free: partial admission down to the minimum. */
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: busy, namespace: u}\nspec: {nodeName: "
           "n0, containers: [{resources: {limits: {nvidia.com/gpu: 8}}}]}\nstatus: {phase: "
           "Running}\n");
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, "
           "namespace: t}\nspec: {minMember: 4}\n");
  for (int i = 0; i < 8; i++) {
    char key[32];
    snprintf(key, sizeof key, "pg-%d", i);
    if (i >= 6) assert_int_equal(model_remove(m, MODEL_POD, "t", key), TS_OK);
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 4);
  assert_int_equal(count_on(&r, "n1"), 4);
  sched_result_free(&r);
  model_free(m);
}

static size_t admitted_events(const sched_result *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->nevents; i++) n += r->events[i].kind == SCHED_WL_ADMITTED;
  return n;
}

/* A queued gang whose missing pods are bound after the rest (a write failed) was admitted once:
 * one admission event for a gang admitted whole, none for the pods that complete one. */
static void test_admission_event_once(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 32);
  apply(m, q);
  gpu_node(m, "n0", "pool: gpu", 8);
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, "
           "namespace: t}\nspec: {minMember: 2}\n");
  add_member(m, "pg-0",
             "labels: {scheduling.x-k8s.io/pod-group: pg, kueue.x-k8s.io/queue-name: lq}",
             "nvidia.com/gpu: 1", "nodeName: n0");
  add_member(m, "pg-1",
             "labels: {scheduling.x-k8s.io/pod-group: pg, kueue.x-k8s.io/queue-name: lq}",
             "nvidia.com/gpu: 1", "");
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 1); /* pg-1 joins pg-0 */
  assert_int_equal(admitted_events(&r), 0);
  sched_result_free(&r);
  apply(m, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: fresh, "
           "namespace: t}\nspec: {minMember: 2}\n");
  for (int i = 0; i < 2; i++)
    add_member(m, i ? "fresh-1" : "fresh-0",
               "labels: {scheduling.x-k8s.io/pod-group: fresh, kueue.x-k8s.io/queue-name: lq}",
               "nvidia.com/gpu: 1", "");
  r = run(m, SCHED_BINPACK);
  assert_int_equal(admitted_events(&r), 1);
  sched_result_free(&r);
  model_free(m);
}

/* A Volcano PodGroup's priorityClassName is its workload's priority: of two gangs of 4 GPUs in a
 * queue capped at 4, the newer one whose PodGroup names the higher class goes first (by creation
 * time alone the older one would). */
static void test_pod_group_priority_class(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  gpu_node(m, "n0", "pool: gpu", 8);
  apply(m, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
           "value: 1000\n---\n"
           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
           "spec: {capability: {nvidia.com/gpu: 4}}\n---\n"
           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: old, "
           "namespace: t}\nspec: {minMember: 1, queue: q}\n---\n"
           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: new, "
           "namespace: t}\nspec: {minMember: 1, queue: q, priorityClassName: high}\n");
  apply(m, "apiVersion: v1\nkind: Pod\nmetadata: {name: old-0, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:00Z\", annotations: {scheduling.k8s.io/group-name: old}}\nspec: "
           "{schedulerName: tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
           "4}}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: new-0, namespace: t, "
           "creationTimestamp: \"2026-01-01T00:00:05Z\", annotations: "
           "{scheduling.k8s.io/group-name: new}}\nspec: {schedulerName: tessera, containers: "
           "[{name: c, resources: {limits: {nvidia.com/gpu: 4}}}]}\n");
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 1);
  assert_int_equal(decision(&r, "new-0")->kind, SCHED_BIND);
  assert_int_equal(decision(&r, "old-0")->kind, SCHED_PENDING);
  sched_result_free(&r);
  model_free(m);
}

/* Two flavors on two pools (f1 first, with f1_gpus of quota; f2 with 8), a node of 8 GPUs in
 * each, and a Kueue pod group t/grp of `total` pods queued in lq. */
static void podset_cluster(model *m, int f1_gpus) {
  char y[2048];
  snprintf(y, sizeof y,
           "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f1}\n"
           "spec: {nodeLabels: {pool: p1}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: "
           "ResourceFlavor\nmetadata: {name: f2}\nspec: {nodeLabels: {pool: p2}}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
           "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
           "    flavors:\n    - {name: f1, resources: [{name: nvidia.com/gpu, nominalQuota: %d}]}\n"
           "    - {name: f2, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, "
           "namespace: t}\nspec: {clusterQueue: cq}\n",
           f1_gpus);
  apply(m, y);
  gpu_node(m, "n1", "pool: p1", 8);
  gpu_node(m, "n2", "pool: p2", 8);
}

/* A member of t/grp created at second `sec`, with an optional role hash and toleration. */
static void grp_member(model *m, const char *name, int total, int sec, const char *role,
                       const char *tolerate, int gpus) {
  char y[2048], ann[256], tol[128] = "";
  snprintf(ann, sizeof ann, "kueue.x-k8s.io/pod-group-total-count: \"%d\"%s%s", total,
           role ? ", kueue.x-k8s.io/role-hash: " : "", role ? role : "");
  if (tolerate) snprintf(tol, sizeof tol, "tolerations: [{key: %s, operator: Exists}], ", tolerate);
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:%02dZ\", labels: {kueue.x-k8s.io/queue-name: lq, "
           "kueue.x-k8s.io/pod-group-name: grp}, annotations: {%s}}\nspec: {schedulerName: "
           "tessera, %scontainers: [{name: c, resources: {limits: {nvidia.com/gpu: %d}}}]}\n",
           name, sec, ann, tol, gpus);
  apply(m, y);
}

/* Pod sets as Kueue's workload of a pod group has them: one per role (the role-hash
 * annotation its webhook sets), in name order, whatever their sizes; the flavor assigner
 * serves them in that order. Without role hashes, pods of one shape make one pod set even
 * when their creation times interleave with another shape's, so that a role never spreads
 * over two flavors. */
static void test_admission_podset_order(void **state) {
  model *m = model_new();
  sched_result r;
  char name[16];
  (void)state;
  podset_cluster(m, 4);
  for (int i = 0; i < 2; i++) { /* the bigger pods, of the role named last */
    snprintf(name, sizeof name, "b-%d", i);
    grp_member(m, name, 6, i, "bbbb", NULL, 2);
  }
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "a-%d", i);
    grp_member(m, name, 6, 10 + i, "aaaa", NULL, 1);
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 6);
  for (int i = 0; i < 4; i++) {
    snprintf(name, sizeof name, "a-%d", i);
    assert_string_equal(node_of(&r, name), "n1"); /* role aaaa first: f1 */
  }
  assert_string_equal(node_of(&r, "b-0"), "n2");
  assert_string_equal(node_of(&r, "b-1"), "n2");
  sched_result_free(&r);
  model_free(m);

  m = model_new();
  podset_cluster(m, 3);
  for (int i = 0; i < 2; i++) { /* a-0 b-0 a-1 b-1 by creation, equal requests */
    snprintf(name, sizeof name, "a-%d", i);
    grp_member(m, name, 4, 2 * i, NULL, "x", 1);
    snprintf(name, sizeof name, "b-%d", i);
    grp_member(m, name, 4, 2 * i + 1, NULL, "y", 1);
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 4);
  assert_string_equal(node_of(&r, "a-0"), "n1");
  assert_string_equal(node_of(&r, "a-1"), "n1");
  assert_string_equal(node_of(&r, "b-0"), "n2"); /* not b-0 on f1 and b-1 on f2 */
  assert_string_equal(node_of(&r, "b-1"), "n2");
  sched_result_free(&r);
  model_free(m);
}

/* A queued gang of two pod sets (a master and its workers) goes to one topology domain as a
 * whole, not pod set by pod set. */
static void test_admission_gang_topology(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 32);
  apply(m, q);
  gpu_node(m, "a0", "pool: gpu, nvidia.com/gpu.clique: c1", 8);
  gpu_node(m, "a1", "pool: gpu, nvidia.com/gpu.clique: c1", 8);
  gpu_node(m, "b0", "pool: gpu, nvidia.com/gpu.clique: c2", 8);
  for (int i = 0; i < 2; i++) {
    char y[512];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: busy-%d, namespace: u}\nspec: "
             "{nodeName: a%d, containers: [{resources: {limits: {nvidia.com/gpu: 4}}}]}\n"
             "status: {phase: Running}\n",
             i, i);
    apply(m, y);
  }
  add_job(m, "PyTorchJob", "ft", 7);
  for (int i = 0; i < 7; i++) {
    char name[16];
    snprintf(name, sizeof name, "ft-%d", i);
    add_member(m, name,
               "labels: {kueue.x-k8s.io/queue-name: lq}, ownerReferences: [{apiVersion: "
               "kubeflow.org/v1, kind: PyTorchJob, name: ft, uid: u1, controller: true}]",
               i ? "nvidia.com/gpu: 1" : "nvidia.com/gpu: 2", "");
  }
  /* Pod set by pod set, the master (2 GPUs) would go to the fullest node (a0) and the six
   * workers to b0. */
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 7);
  assert_int_equal(count_on(&r, "b0"), 7);
  sched_result_free(&r);
  model_free(m);
}

/* Gangs of jobs take their size from the job object: a PyTorchJob of 4 replicas waits for
 * all 4 pods, with or without a queue; a job that was never seen holds its pods, unless jobs
 * of that kind cannot be seen at all. */
static void test_gang_owner_min(void **state) {
  model *m = model_new();
  char q[2048];
  sched_result r;
  (void)state;
  snprintf(q, sizeof q, queues_yaml, 32);
  apply(m, q);
  gpu_node(m, "n0", "pool: gpu", 8);
  add_job(m, "PyTorchJob", "pt", 4);
  add_job(m, "PyTorchJob", "ptq", 4);
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "pt-%d", i);
    add_member(m, name,
               "ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: pt, uid: "
               "u1, controller: true}]",
               "nvidia.com/gpu: 1", "");
    snprintf(name, sizeof name, "ptq-%d", i);
    add_member(m, name,
               "labels: {kueue.x-k8s.io/queue-name: lq}, ownerReferences: [{apiVersion: "
               "kubeflow.org/v1, kind: PyTorchJob, name: ptq, uid: u2, controller: true}]",
               "nvidia.com/gpu: 1", "");
    r = run(m, SCHED_BINPACK);
    if (i < 3) {
      char want[128];
      snprintf(want, sizeof want, "PyTorchJob t/pt has %d of its 4 pods; waiting for the rest",
               i + 1);
      assert_int_equal(r.nbound, 0);
      assert_string_equal(decision(&r, "pt-0")->reason, want);
      assert_non_null(strstr(decision(&r, "ptq-0")->reason, "waiting for the rest"));
    } else {
      assert_int_equal(r.nbound, 8);
    }
    sched_result_free(&r);
  }
  /* A pod whose Job is not (yet) in the model waits for it. */
  add_member(m, "lone-0",
             "ownerReferences: [{apiVersion: batch/v1, kind: Job, name: lone, uid: u3, "
             "controller: true}]",
             "nvidia.com/gpu: 1", "");
  r = run(m, SCHED_BINPACK);
  assert_string_equal(decision(&r, "lone-0")->reason,
                      "Job t/lone: has not been seen, so how many of its pods must start "
                      "together is unknown; waiting for it");
  sched_result_free(&r);
  /* When Jobs cannot be seen (the API server forbids listing them), the pods are the gang. */
  model_set_seen(m, MODEL_JOB, false);
  r = run(m, SCHED_BINPACK);
  assert_int_equal(decision(&r, "lone-0")->kind, SCHED_BIND);
  sched_result_free(&r);
  model_free(m);
}

/* fairSharing.preemptionStrategies is used by the cycle: a and b borrow from a lender; b runs
 * 6 GPUs, a wants 5. Taking b's workload would leave b below a (S2-a refuses), but a stays
 * below b's share before (S2-b accepts). */
static void test_admission_fs_strategies(void **state) {
  (void)state;
  for (int only_final = 0; only_final < 2; only_final++) {
    model *m = model_new();
    sched_config cfg;
    sched_result r;
    ts_err e;
    apply(m, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"
             "spec: {nodeLabels: {pool: gpu}}\n");
    for (int q = 0; q < 3; q++) {
      char y[1024];
      snprintf(y, sizeof y,
               "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: %s}\n"
               "spec:\n  cohort: c\n  namespaceSelector: {}\n  preemption: {reclaimWithinCohort: "
               "Any}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
               "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: %d}]}\n---\n"
               "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq-%s, "
               "namespace: t}\nspec: {clusterQueue: %s}\n",
               q == 0   ? "lender"
               : q == 1 ? "a"
                        : "b",
               q == 0 ? 10 : 0,
               q == 0   ? "lender"
               : q == 1 ? "a"
                        : "b",
               q == 0   ? "lender"
               : q == 1 ? "a"
                        : "b");
      apply(m, y);
    }
    gpu_node(m, "n0", "pool: gpu", 16);
    add_job(m, "Job", "six", 1);
    add_job(m, "Job", "five", 1);
    apply(m,
          "apiVersion: v1\nkind: Pod\nmetadata: {name: six-0, namespace: t, labels: "
          "{kueue.x-k8s.io/queue-name: lq-b}, ownerReferences: [{apiVersion: batch/v1, kind: Job, "
          "name: six, uid: u-six, controller: true}]}\nspec: {schedulerName: tessera, nodeName: "
          "n0, containers: [{name: c, resources: {limits: {nvidia.com/gpu: 6}}}]}\n"
          "status: {phase: Running}\n");
    apply(m,
          "apiVersion: v1\nkind: Pod\nmetadata: {name: five-0, namespace: t, labels: "
          "{kueue.x-k8s.io/queue-name: lq-a}, ownerReferences: [{apiVersion: batch/v1, kind: Job, "
          "name: five, uid: u-five, controller: true}]}\nspec: {schedulerName: tessera, "
          "containers: [{name: c, resources: {limits: {nvidia.com/gpu: 5}}}]}\n");
    sched_config_default(&cfg);
    cfg.queueing.fair_sharing = true;
    if (only_final) {
      cfg.queueing.fs_strategies[0] = Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
      cfg.queueing.nfs_strategies = 1;
    }
    assert_int_equal(sched_cycle(m, &cfg, NULL, 0, &r, &e), TS_OK);
    if (only_final) {
      assert_int_equal(r.nevicted, 0);
    } else {
      assert_int_equal(r.nevicted, 1);
      assert_non_null(strstr(decision(&r, "six-0")->reason, "(InCohortFairSharing)"));
    }
    sched_result_free(&r);
    model_free(m);
  }
}

/* Fails unless a (scans) and b (classes) made the same decisions, in the same order, for the
 * same reasons; returns how many, *bound of them bindings. */
static size_t same_decisions(const sched_result *a, const sched_result *b, const char *what,
                             size_t *bound) {
  *bound = 0;
  assert_int_equal(a->ndecisions, b->ndecisions);
  for (size_t i = 0; i < a->ndecisions; i++) {
    const sched_decision *x = &a->decisions[i], *y = &b->decisions[i];
    if (x->pod != y->pod || x->kind != y->kind || x->node != y->node ||
        strcmp(x->reason ? x->reason : "", y->reason ? y->reason : ""))
      fail_msg("%s, decision %zu: scans decided %s %s %s (%s), classes %s %s %s (%s)", what, i,
               x->pod->obj.name, x->kind == SCHED_BIND ? "bind" : "pending",
               x->node ? x->node->obj.name : "-", x->reason ? x->reason : "", y->pod->obj.name,
               y->kind == SCHED_BIND ? "bind" : "pending", y->node ? y->node->obj.name : "-",
               y->reason ? y->reason : "");
    *bound += x->kind == SCHED_BIND;
  }
  return a->ndecisions;
}

/* The class path (every single pod through the index of its shape) decides exactly as the
 * run-by-run path did, on generated clusters where shapes interleave, gangs try and give back
 * placements between single pods, nodes are tainted or cordoned, and some pods ask for
 * resources no node offers: same pods bound to the same nodes, same reasons, same order. */
static void test_classes_match_runs(void **state) {
  static const char *shapes[] = {"nvidia.com/gpu: 1, cpu: \"4\", memory: 16Gi",
                                 "nvidia.com/gpu: 2, cpu: \"8\"",
                                 "nvidia.com/gpu: 8, cpu: \"32\", memory: 256Gi",
                                 "cpu: \"2\", memory: 4Gi",
                                 "cpu: \"500m\", memory: 1Gi",
                                 "nvidia.com/gpu: 4",
                                 "example.com/fpga: 1, cpu: \"1\"",
                                 "cpu: \"40\", memory: 900Gi"};
  int compared = 0, bound = 0, pending = 0;
  (void)state;
  srand(11);
  for (int round = 0; round < 30; round++) {
    model *m = model_new();
    sched_result a, b;
    int npods = 0;
    for (int k = 0; k < 40; k++) {
      char name[32], labels[64], alloc[128];
      int gpus = (rand() % 3) * 4;
      snprintf(name, sizeof name, "node-%02d", k);
      snprintf(labels, sizeof labels, "zone: z%d", rand() % 3);
      snprintf(alloc, sizeof alloc, "cpu: \"%d\", memory: %dGi%s", 8 + rand() % 64,
               32 + rand() % 512,
               gpus == 8 ? ", nvidia.com/gpu: \"8\""
               : gpus    ? ", nvidia.com/gpu: \"4\""
                         : "");
      add_node(m, name, labels,
               rand() % 6 == 0 ? "{key: dedicated, value: ml, effect: NoSchedule}" : "", alloc,
               rand() % 12 == 0);
    }
    for (int j = 0; j < 6; j++) { /* gangs of 3 to 6 pods, created among the singles */
      char job[16];
      snprintf(job, sizeof job, "job-%d", j);
      add_job(m, "Job", job, 3 + rand() % 4);
    }
    while (npods < 300) {
      const char *shape = shapes[rand() % 8];
      int count = 1 + rand() % 6, kind = rand() % 6, job = rand() % 6;
      char extra[96], meta[256];
      snprintf(extra, sizeof extra, "%s",
               kind == 0   ? "nodeSelector: {zone: z1}"
               : kind == 1 ? "tolerations: [{key: dedicated, operator: Exists}]"
               : kind == 2 ? "priority: 7"
                           : "");
      for (int i = 0; i < count && npods < 300; i++, npods++) {
        char name[32];
        int sec = rand() % 3600;
        snprintf(name, sizeof name, "p%03d", npods);
        if (kind == 3)
          snprintf(meta, sizeof meta,
                   "creationTimestamp: \"2026-01-01T%02d:%02d:%02dZ\", ownerReferences: "
                   "[{apiVersion: batch/v1, kind: Job, name: job-%d, uid: u-job-%d, controller: "
                   "true}]",
                   sec / 3600, sec / 60 % 60, sec % 60, job, job);
        else
          snprintf(meta, sizeof meta, "creationTimestamp: \"2026-01-01T%02d:%02d:%02dZ\"",
                   sec / 3600, sec / 60 % 60, sec % 60);
        add_member(m, name, meta, shape, extra);
      }
    }
    for (int scoring = 0; scoring < 2; scoring++) {
      tuning.no_classes = true, tuning.no_pending_memo = true;
      a = run(m, scoring ? SCHED_SPREAD : SCHED_BINPACK);
      tuning.no_classes = false, tuning.no_pending_memo = false;
      b = run(m, scoring ? SCHED_SPREAD : SCHED_BINPACK);
      {
        char what[32];
        size_t nb;
        snprintf(what, sizeof what, "round %d", round);
        compared += same_decisions(&a, &b, what, &nb);
        bound += nb, pending += a.ndecisions - nb;
      }
      sched_result_free(&a);
      sched_result_free(&b);
    }
    model_free(m);
  }
  /* Both outcomes, many times. */
  assert_true(compared == 30 * 2 * 300);
  assert_true(bound > 2000);
  assert_true(pending > 2000);
}

/* Gang members placed through classes restricted to a topology domain (or to every node), and
 * one-node domains found through their order by free amount, decide exactly as scans do: on
 * generated clusters whose zones are large enough to be indexed, with running load, Job gangs,
 * zone affinity and taints (production) and with PyTorchJob gangs over zones and NVLink
 * cliques (gangs), bin-packing and spreading. */
static void test_gang_classes_match_scans(void **state) {
  static const struct {
    const char *name;
    int nodes, pods;
  } runs[] = {{"production", 600, 1500}, {"gangs", 400, 4000}, {"production", 300, 700}};
  size_t compared = 0, bound = 0;
  (void)state;
  for (size_t s = 0; s < sizeof runs / sizeof *runs; s++)
    for (int scoring = 0; scoring < 2; scoring++) {
      model *m = model_new();
      sched_result a, b;
      ts_err e;
      ts_err_clear(&e);
      if (gen_build(gen_find(runs[s].name), m, runs[s].nodes, runs[s].pods, 0, &e) != TS_OK)
        fail_msg("%s: %s", runs[s].name, e.text);
      tuning.no_classes = tuning.no_domain_order = true;
      a = run(m, scoring ? SCHED_SPREAD : SCHED_BINPACK);
      tuning.no_classes = tuning.no_domain_order = false;
      b = run(m, scoring ? SCHED_SPREAD : SCHED_BINPACK);
      {
        size_t nb;
        compared += same_decisions(&a, &b, runs[s].name, &nb);
        bound += nb;
      }
      sched_result_free(&a);
      sched_result_free(&b);
      model_free(m);
    }
  assert_true(compared > 10000);
  assert_true(bound > 5000);
}

/* Fails unless a and b made the same decisions, bound the same devices and gave the same
 * reasons; counts the outcomes. */
static void same_dra_decisions(int round, const sched_result *a, const sched_result *b, int *bound,
                               int *pending) {
  assert_int_equal(a->ndecisions, b->ndecisions);
  for (size_t i = 0; i < a->ndecisions; i++) {
    const sched_decision *x = &a->decisions[i], *y = &b->decisions[i];
    if (x->pod != y->pod || x->kind != y->kind || x->node != y->node ||
        strcmp(x->reason ? x->reason : "", y->reason ? y->reason : ""))
      fail_msg("round %d, decision %zu: one at a time %s %s (%s), by value %s %s (%s)", round, i,
               x->pod->obj.name, x->node ? x->node->obj.name : "-", x->reason ? x->reason : "",
               y->pod->obj.name, y->node ? y->node->obj.name : "-", y->reason ? y->reason : "");
    assert_int_equal(x->nclaims, y->nclaims);
    for (uint32_t c = 0; x->kind == SCHED_BIND && c < x->nclaims; c++) {
      assert_int_equal(x->claims[c].result.ndevices, y->claims[c].result.ndevices);
      for (uint32_t d = 0; d < x->claims[c].result.ndevices; d++)
        assert_ptr_equal(x->claims[c].result.devices[d].device,
                         y->claims[c].result.devices[d].device);
    }
    x->kind == SCHED_BIND ? (*bound)++ : (*pending)++;
  }
}

/* Pods with their own ResourceClaims (as the claim controller makes them in a cluster) that ask
 * for the same thing share a run, comparing claim specs by value, and the allocator's answer
 * per node and claim shape is remembered until the node changes; the decisions, the devices
 * and the reasons (each naming the pod's own claim) are those of one pod at a time asking the
 * allocator on every node. Generated clusters mix named claims of three specs, claims two pods
 * share, template claims, MIG, gangs of claims (trials given back) and, every other round,
 * devices every node reaches (a placement changes every node). */
static void test_named_claims_match(void **state) {
  static const char *specs[] = {
      "{requests: [{name: gpu, exactly: {deviceClassName: gpu, selectors: [{cel: {expression: "
      "'type == \"gpu\"'}}]}}]}",
      "{requests: [{name: gpu, exactly: {deviceClassName: gpu, count: 2, selectors: [{cel: "
      "{expression: 'type == \"gpu\"'}}]}}]}",
      "{requests: [{name: mig, exactly: {deviceClassName: gpu, selectors: [{cel: {expression: "
      "'type == \"mig\"'}}]}}]}"};
  int compared = 0, bound = 0, pending = 0;
  (void)state;
  srand(5);
  for (int round = 0; round < 25; round++) {
    model *m = model_new();
    sched_result a, b;
    bool gangs = round % 3 == 2;
    apply(m, dra_setup);
    for (int k = 0; k < 10; k++) {
      char name[16];
      snprintf(name, sizeof name, "n%02d", k);
      dra_node(m, name, 2 + 2 * (rand() % 3), rand() % 3 == 0);
    }
    if (round % 2) /* devices every node reaches: taking one changes every node */
      apply(m, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: net}\n"
               "spec:\n  driver: gpu.nvidia.com\n  allNodes: true\n"
               "  pool: {name: net, generation: 1, resourceSliceCount: 1}\n  devices:\n"
               "  - {name: net-0, attributes: {type: {string: gpu}}}\n"
               "  - {name: net-1, attributes: {type: {string: gpu}}}\n"
               "  - {name: net-2, attributes: {type: {string: gpu}}}\n");
    for (int j = 0; gangs && j < 3; j++) { /* gangs of 4: a trial that does not fit is given back */
      char job[16];
      snprintf(job, sizeof job, "job-%d", j);
      add_job(m, "Job", job, 4);
    }
    for (int i = 0; i < 80; i++) {
      char y[1024], name[16], claim[32], ref[64], owner[160] = "";
      int kind = rand() % 6, sec = rand() % 600, job = rand() % 12;
      if (gangs && job < 3 && kind != 5)
        snprintf(owner, sizeof owner,
                 ", ownerReferences: [{apiVersion: batch/v1, kind: Job, name: job-%d, uid: "
                 "u-job-%d, controller: true}]",
                 job, job);
      snprintf(name, sizeof name, "p%02d", i);
      snprintf(claim, sizeof claim, "c%02d", kind == 5 && i ? i - 1 : i); /* 5: shares one */
      if (kind != 5 || !i) {
        snprintf(y, sizeof y,
                 "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s, "
                 "namespace: t}\nspec: {devices: %s}\n",
                 claim, specs[kind % 3]);
        apply(m, y);
      }
      if (kind == 4)
        snprintf(ref, sizeof ref, "resourceClaimTemplateName: one-gpu");
      else
        snprintf(ref, sizeof ref, "resourceClaimName: %s", claim);
      snprintf(y, sizeof y,
               "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
               "\"2026-01-01T00:%02d:%02dZ\"%s}\nspec: {schedulerName: tessera, containers: "
               "[{name: c}], resourceClaims: [{name: gpu, %s}]}\n",
               name, sec / 60, sec % 60, owner, ref);
      apply(m, y);
    }
    /* one pod at a time, every node asked; with gangs, pod sets group by value too, so the
     * reference is by value without the remembered answers */
    tuning =
        (sched_tuning){.claims_by_ref = !gangs, .no_pending_memo = true, .no_dra_fit_cache = true};
    a = run_dra(m);
    tuning = (sched_tuning){0};
    b = run_dra(m);
    same_dra_decisions(round, &a, &b, &bound, &pending);
    compared += (int)a.ndecisions;
    sched_result_free(&a);
    sched_result_free(&b);
    model_free(m);
  }
  assert_int_equal(compared, 25 * 80);
  assert_true(bound > 500);
  assert_true(pending > 300);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_filters_and_reasons),
      cmocka_unit_test(test_scheduling_gates),
      cmocka_unit_test(test_tolerations_affinity_pods),
      cmocka_unit_test(test_scoring),
      cmocka_unit_test(test_order),
      cmocka_unit_test(test_runs_match_full_scan),
      cmocka_unit_test(test_classes_match_runs),
      cmocka_unit_test(test_gang_classes_match_scans),
      cmocka_unit_test(test_gang_all_or_nothing),
      cmocka_unit_test(test_gang_identification),
      cmocka_unit_test(test_gang_topology),
      cmocka_unit_test(test_gang_required_topology),
      cmocka_unit_test(test_gang_min_member),
      cmocka_unit_test(test_gang_owner_min),
      cmocka_unit_test(test_dra_templates_binpack),
      cmocka_unit_test(test_dra_partitions),
      cmocka_unit_test(test_dra_claims),
      cmocka_unit_test(test_dra_bounded_search),
      cmocka_unit_test(test_dra_feature_gates),
      cmocka_unit_test(test_dra_shared_in_cycle),
      cmocka_unit_test(test_dra_fit_remembered),
      cmocka_unit_test(test_named_claims_match),
      cmocka_unit_test(test_pending_runs_remembered),
      cmocka_unit_test(test_wait_for_pods_ready),
      cmocka_unit_test(test_admission_needs_placement),
      cmocka_unit_test(test_kueue_admits),
      cmocka_unit_test(test_shadow),
      cmocka_unit_test(test_admission_quota_and_preemption),
      cmocka_unit_test(test_admission_charges_devices),
      cmocka_unit_test(test_admission_hold_and_drain),
      cmocka_unit_test(test_admission_fs_strategies),
      cmocka_unit_test(test_admission_gang_min),
      cmocka_unit_test(test_admission_event_once),
      cmocka_unit_test(test_pod_group_priority_class),
      cmocka_unit_test(test_scoring_baselines),
      cmocka_unit_test(test_scoring_gpu_clustering),
      cmocka_unit_test(test_cpu_pod_on_gpu_nodes),
      cmocka_unit_test(test_admission_gang_topology),
      cmocka_unit_test(test_admission_podset_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
