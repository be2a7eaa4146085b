/* Blast radius: an error about one object stays inside that object. One cluster holds objects
 * that do not compete with each other (each group of pods has nodes of its own): plain pods, a
 * PodGroup gang, Kueue ClusterQueues with a single pod, two and a pod group, a KAI queue, pods
 * with DRA claims. Each case makes one stage of the cycle fail for one object (decode, the
 * quota tree, admission, flavor assignment, DRA allocation, placement, scoring, the cycle's
 * last safety net) and asserts that the pods of that object are pending with a reason that
 * names it and the error, and that every other pod is decided exactly as without the fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/cluster.h"
#include "input/input.h"
#include "model/model.h"
#include "scheduler/sched.h"

static const char *cluster =
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n---\n"
    /* nodes: one group each */
    "apiVersion: v1\nkind: Node\nmetadata: {name: plain-0, labels: {grp: plain}}\n"
    "status: {allocatable: {cpu: '16', pods: '110', nvidia.com/gpu: '8'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: plain-1, labels: {grp: plain}}\n"
    "status: {allocatable: {cpu: '16', pods: '110', nvidia.com/gpu: '8'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: gang-0, labels: {grp: gang}}\n"
    "status: {allocatable: {cpu: '16', pods: '110', nvidia.com/gpu: '8'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: ka-0, labels: {grp: kueue-a}}\n"
    "status: {allocatable: {cpu: '16', pods: '110', nvidia.com/gpu: '8'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: kb-0, labels: {grp: kueue-b}}\n"
    "status: {allocatable: {cpu: '16', pods: '110', nvidia.com/gpu: '8'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: kai-0, labels: {grp: kai}}\n"
    "status: {allocatable: {cpu: '16', pods: '110', nvidia.com/gpu: '8'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: dra-0, labels: {grp: dra-0}}\n"
    "status: {allocatable: {cpu: '16', pods: '110'}}\n---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: dra-1, labels: {grp: dra-1}}\n"
    "status: {allocatable: {cpu: '16', pods: '110'}}\n---\n"
    /* plain pods */
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:01Z'}\nspec: {schedulerName: tessera, nodeSelector: {grp: plain}, "
    "containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:02Z'}\nspec: {schedulerName: tessera, nodeSelector: {grp: plain}, "
    "containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]}\n---\n"
    /* a PodGroup gang */
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: pg, namespace: "
    "t}\nspec: {minMember: 2}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: pg-0, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:03Z', labels: {scheduling.x-k8s.io/pod-group: pg}}\nspec: "
    "{schedulerName: tessera, nodeSelector: {grp: gang}, containers: [{name: c, resources: "
    "{limits: {nvidia.com/gpu: '4'}}}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: pg-1, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:03Z', labels: {scheduling.x-k8s.io/pod-group: pg}}\nspec: "
    "{schedulerName: tessera, nodeSelector: {grp: gang}, containers: [{name: c, resources: "
    "{limits: {nvidia.com/gpu: '4'}}}]}\n---\n"
    /* Kueue: two ClusterQueues on flavors of their own nodes */
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: fa}\n"
    "spec: {nodeLabels: {grp: kueue-a}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: fb}\n"
    "spec: {nodeLabels: {grp: kueue-b}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq-a}\n"
    "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], "
    "flavors: [{name: fa, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq-b}\n"
    "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], "
    "flavors: [{name: fb, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq-a, namespace: t}\n"
    "spec: {clusterQueue: cq-a}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq-b, namespace: t}\n"
    "spec: {clusterQueue: cq-b}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: ka, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:04Z', labels: {kueue.x-k8s.io/queue-name: lq-a}}\nspec: "
    "{schedulerName: tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
    "'1'}}}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: ka2, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:05Z', labels: {kueue.x-k8s.io/queue-name: lq-a}}\nspec: "
    "{schedulerName: tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
    "'2'}}}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: kb, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:06Z', labels: {kueue.x-k8s.io/queue-name: lq-b}}\nspec: "
    "{schedulerName: tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
    "'1'}}}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: kg-0, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:07Z', labels: {kueue.x-k8s.io/queue-name: lq-b, "
    "kueue.x-k8s.io/pod-group-name: kg}, annotations: {kueue.x-k8s.io/pod-group-total-count: "
    "'2'}}\nspec: {schedulerName: tessera, containers: [{name: c, resources: {limits: "
    "{nvidia.com/gpu: '2'}}}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: kg-1, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:07Z', labels: {kueue.x-k8s.io/queue-name: lq-b, "
    "kueue.x-k8s.io/pod-group-name: kg}, annotations: {kueue.x-k8s.io/pod-group-total-count: "
    "'2'}}\nspec: {schedulerName: tessera, containers: [{name: c, resources: {limits: "
    "{nvidia.com/gpu: '2'}}}]}\n---\n"
    /* a KAI queue */
    "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: kai-q}\nspec: {resources: "
    "{gpu: {quota: 8, limit: -1}, cpu: {quota: -1, limit: -1}, memory: {quota: -1, limit: "
    "-1}}}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: kai-p, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:08Z', labels: {kai.scheduler/queue: kai-q}}\nspec: {schedulerName: "
    "tessera, nodeSelector: {grp: kai}, containers: [{name: c, resources: {limits: "
    "{nvidia.com/gpu: '1'}}}]}\n---\n"
    /* DRA: a claim each, on nodes of their own */
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: dra-0}\nspec: "
    "{driver: gpu.example.com, nodeName: dra-0, pool: {name: dra-0, generation: 1, "
    "resourceSliceCount: 1}, devices: [{name: g0}, {name: g1}]}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: dra-1}\nspec: "
    "{driver: gpu.example.com, nodeName: dra-1, pool: {name: dra-1, generation: 1, "
    "resourceSliceCount: 1}, devices: [{name: g0}, {name: g1}]}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c0, namespace: t}\n"
    "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c1, namespace: t}\n"
    "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu}}]}}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: dra-a, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:09Z'}\nspec: {schedulerName: tessera, nodeSelector: {grp: dra-0}, "
    "containers: [{name: c}], resourceClaims: [{name: g, resourceClaimName: c0}]}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: dra-b, namespace: t, creationTimestamp: "
    "'2026-01-01T00:00:10Z'}\nspec: {schedulerName: tessera, nodeSelector: {grp: dra-1}, "
    "containers: [{name: c}], resourceClaims: [{name: g, resourceClaimName: c1}]}\n";

/* Every pod of the cluster, and what the cycle decides for it without a fault. */
static const char *const pods[] = {"p1", "p2",   "pg-0", "pg-1",  "ka",    "ka2",
                                   "kb", "kg-0", "kg-1", "kai-p", "dra-a", "dra-b"};
#define NPODS (sizeof pods / sizeof *pods)
static const char *const baseline[NPODS] = {"plain-0", "plain-0", "gang-0", "gang-0",
                                            "ka-0",    "ka-0",    "kb-0",   "kb-0",
                                            "kb-0",    "kai-0",   "dra-0",  "dra-1"};

/* One decision as text: "bind NODE" or "pending WHY: REASON". */
typedef struct outcome {
  char text[NPODS][1200];
  bool seen[NPODS];
} outcome;

/* Loads the cluster, the object of kind/name (if any) corrupted as a decoder cannot read it:
 * its spec a number. */
static model *load(const char *kind, const char *name) {
  in_docs docs = {0};
  model *m = model_new();
  ts_err e;
  ts_err_clear(&e);
  if (in_yaml_parse(cluster, strlen(cluster), &docs, &e) != TS_OK) fail_msg("yaml: %s", e.text);
  for (size_t i = 0; i < docs.n; i++) {
    json_t *o = docs.v[i].value;
    const char *k = json_string_value(json_object_get(o, "kind"));
    const char *n = json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
    bool bad = kind && !strcmp(k, kind) && !strcmp(n, name);
    if (bad) json_object_set_new(o, "spec", json_integer(7));
    ts_err_clear(&e);
    if (model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK) {
      if (!bad) fail_msg("apply %s %s: %s", k, n, e.text);
      assert_non_null(strstr(e.text, "spec")); /* the error names the field */
    } else if (bad) {
      fail_msg("%s %s with a numeric spec was accepted", k, n);
    }
  }
  in_docs_free(&docs);
  return m;
}

static void run(model *m, const sched_config *cfg, outcome *out) {
  sched_result r;
  ts_err e;
  memset(out, 0, sizeof *out);
  ts_err_clear(&e);
  if (sched_cycle(m, cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("cycle failed: %s", e.text);
  { /* the groups hold through a contained failure too */
    char why[300];
    if (!tc_groups_ok(&r, why, sizeof why)) fail_msg("groups: %s", why);
  }
  for (size_t i = 0; i < r.ndecisions; i++) {
    const sched_decision *d = &r.decisions[i];
    for (size_t k = 0; k < NPODS; k++) {
      if (strcmp(d->pod->obj.name, pods[k])) continue;
      if (out->seen[k]) fail_msg("two decisions for %s", pods[k]);
      out->seen[k] = true;
      if (d->kind == SCHED_BIND)
        snprintf(out->text[k], sizeof out->text[k], "bind %s", d->node->obj.name);
      else
        snprintf(out->text[k], sizeof out->text[k], "%s %s: %s",
                 d->kind == SCHED_PENDING ? "pending" : "evict", sched_pending_why_name(d->why),
                 d->reason);
    }
  }
  sched_result_free(&r);
}

/* One fault: the pods it may change (comma-separated, surrounded by commas), and what each of
 * them must show ("bind NODE", or a part of its pending text; NULL: no decision at all). */
typedef struct fault_case {
  const char *what;       /* for failure messages */
  const char *kind, *obj; /* decode: the object corrupted */
  q_fault qf;             /* queueing's fault */
  sched_fault sf;         /* the scheduler's fault */
  const char *affected;   /* ",pod,pod," */
  const char *expect[4];  /* per affected pod, in the order listed */
} fault_case;

static const fault_case cases[] = {
    {"decode Pod p1", "Pod", "p1", {0}, {0}, ",p1,", {NULL}},
    {"decode Node plain-0",
     "Node",
     "plain-0",
     {0},
     {0},
     ",p1,p2,",
     {"bind plain-1", "bind plain-1"}},
    {"decode ClusterQueue cq-a",
     "ClusterQueue",
     "cq-a",
     {0},
     {0},
     ",ka,ka2,",
     {"the ClusterQueue of LocalQueue t/lq-a does not exist",
      "the ClusterQueue of LocalQueue t/lq-a does not exist"}},
    {"decode ResourceClaim c0", "ResourceClaim", "c0", {0}, {0}, ",dra-a,", {"pending Blocked"}},
    {"decode PodGroup pg", "PodGroup", "pg", {0}, {0}, ",pg-0,pg-1,", {"pending", "pending"}},
    {"tree ClusterQueue cq-a",
     NULL,
     NULL,
     {Q_FAULT_TREE, "cq-a"},
     {0},
     ",ka,ka2,",
     {"ClusterQueue cq-a is inactive (InvalidQuota): spec.resourceGroups: injected fault",
      "ClusterQueue cq-a is inactive (InvalidQuota): spec.resourceGroups: injected fault"}},
    {"tree KAI Queue kai-q",
     NULL,
     NULL,
     {Q_FAULT_TREE, "kai-q"},
     {0},
     ",kai-p,",
     {"KAI Queue kai-q is inactive (InvalidQuota): spec.resources: injected fault"}},
    {"admission of ka",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_ADMISSION, "t/ka"},
     ",ka,",
     {"pending SchedulerError: admission of pod t/ka failed: injected fault"}},
    {"flavor assignment of ka",
     NULL,
     NULL,
     {Q_FAULT_ASSIGN, "pod:t/ka"},
     {0},
     ",ka,",
     {"pending SchedulerError: flavor assignment of workload t/ka failed: injected fault"}},
    {"DRA of dra-a",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_DRA, "t/dra-a"},
     ",dra-a,",
     {"claim allocation of pod t/dra-a failed: injected fault"}},
    {"placement of p1",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_PLACEMENT, "t/p1"},
     ",p1,",
     {"pending SchedulerError: placement of pod t/p1 failed: injected fault"}},
    {"placement of pg-0",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_PLACEMENT, "t/pg-0"},
     ",pg-0,pg-1,",
     {"pending SchedulerError: PodGroup t/pg: placement of pod t/pg-0 failed: injected fault",
      "pending SchedulerError: PodGroup t/pg: placement of pod t/pg-0 failed: injected fault"}},
    {"placement of kg-1 (a Kueue pod group)",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_PLACEMENT, "t/kg-1"},
     ",kg-0,kg-1,",
     {"placement of pod t/kg-1 failed: injected fault",
      "placement of pod t/kg-1 failed: injected fault"}},
    {"scoring of p2",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_SCORING, "t/p2"},
     ",p2,",
     {"pending SchedulerError: scoring of pod t/p2 failed: injected fault"}},
    {"scoring of ka2 (a Kueue workload)",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_SCORING, "t/ka2"},
     ",ka2,",
     {"scoring of pod t/ka2 failed: injected fault"}},
    {"scoring of dra-b",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_SCORING, "t/dra-b"},
     ",dra-b,",
     {"pending SchedulerError: scoring of pod t/dra-b failed: injected fault"}},
    {"deciding pg",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_DECISION, "t/pg-1"},
     ",pg-0,pg-1,",
     {"pending SchedulerError: deciding PodGroup t/pg failed: injected fault",
      "pending SchedulerError: deciding PodGroup t/pg failed: injected fault"}},
    {"deciding p2",
     NULL,
     NULL,
     {0},
     {SCHED_STAGE_DECISION, "t/p2"},
     ",p2,",
     {"pending SchedulerError: deciding t/p2 failed: injected fault"}},
};

/* The index of pod in the case's affected list, or -1. */
static int affected_at(const fault_case *c, const char *pod) {
  char key[64];
  const char *at;
  int n = 0;
  snprintf(key, sizeof key, ",%s,", pod);
  if (!(at = strstr(c->affected, key))) return -1;
  for (const char *p = c->affected + 1; p <= at; p++) n += *p == ',';
  return n;
}

/* Every pod decided as without any fault. */
static void expect_baseline(const outcome *o) {
  for (size_t k = 0; k < NPODS; k++) {
    char want[64];
    snprintf(want, sizeof want, "bind %s", baseline[k]);
    if (!o->seen[k] || strcmp(o->text[k], want)) fail_msg("%s: %s", pods[k], o->text[k]);
  }
}

static void test_baseline(void **state) {
  model *m = load(NULL, NULL);
  sched_config cfg;
  outcome o;
  (void)state;
  sched_config_default(&cfg);
  run(m, &cfg, &o);
  expect_baseline(&o);
  sched_config_free(&cfg);
  model_free(m);
}

static void test_faults_contained(void **state) {
  (void)state;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const fault_case *fc = &cases[c];
    model *m = load(fc->kind, fc->obj);
    sched_config cfg;
    outcome o;
    sched_config_default(&cfg);
    cfg.queueing.fault = fc->qf;
    cfg.tuning.fault = fc->sf;
    run(m, &cfg, &o);
    for (size_t k = 0; k < NPODS; k++) {
      int a = affected_at(fc, pods[k]);
      char want[64];
      if (a < 0) { /* everyone else: as without the fault */
        snprintf(want, sizeof want, "bind %s", baseline[k]);
        if (!o.seen[k] || strcmp(o.text[k], want))
          fail_msg("%s: %s changed: %s", fc->what, pods[k], o.seen[k] ? o.text[k] : "(none)");
      } else if (!fc->expect[a]) {
        if (o.seen[k]) fail_msg("%s: %s decided: %s", fc->what, pods[k], o.text[k]);
      } else if (!o.seen[k] || !strstr(o.text[k], fc->expect[a])) {
        fail_msg("%s: %s: want \"%s\", got \"%s\"", fc->what, pods[k], fc->expect[a],
                 o.seen[k] ? o.text[k] : "(none)");
      }
    }
    sched_config_free(&cfg);
    model_free(m);
  }
}

/* Queues whose children's quotas add up past int64 (three Volcano queues of 2^63 - 1 cores and
 * GPUs, ten KAI queues of 10^15 GPUs, each inside its project's range) once failed every cycle
 * with "arithmetic overflow": nothing was bound anywhere, not even a pod of no queue. */
static void test_quota_overflow_binds_others(void **state) {
  model *m = load(NULL, NULL);
  sched_config cfg;
  outcome o;
  in_docs docs = {0};
  ts_err e;
  char y[8192];
  int len = 0;
  (void)state;
  len += snprintf(y + len, sizeof y - (size_t)len,
                  "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                  "vtop}\nspec: {deserved: {cpu: '1'}}\n---\n"
                  "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: ktop}\n"
                  "spec: {resources: {gpu: {quota: 1, limit: -1}}}\n");
  for (int i = 0; i < 3; i++)
    len += snprintf(y + len, sizeof y - (size_t)len,
                    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: "
                    "{name: v%d}\nspec: {parent: vtop, deserved: {cpu: '9223372036854775807', "
                    "nvidia.com/gpu: '9223372036854775807'}}\n",
                    i);
  for (int i = 0; i < 10; i++)
    len += snprintf(y + len, sizeof y - (size_t)len,
                    "---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: k%d}\n"
                    "spec: {parentQueue: ktop, resources: {gpu: {quota: 1000000000000000, limit: "
                    "-1}, cpu: {quota: -1, limit: -1}, memory: {quota: -1, limit: -1}}}\n",
                    i);
  ts_err_clear(&e);
  if (in_yaml_parse(y, strlen(y), &docs, &e) != TS_OK) fail_msg("yaml: %s", e.text);
  for (size_t i = 0; i < docs.n; i++)
    if (model_apply_json(m, docs.v[i].value, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK)
      fail_msg("apply: %s", e.text);
  in_docs_free(&docs);
  sched_config_default(&cfg);
  run(m, &cfg, &o);
  expect_baseline(&o);
  sched_config_free(&cfg);
  model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_baseline),
      cmocka_unit_test(test_faults_contained),
      cmocka_unit_test(test_quota_overflow_binds_others),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
