/* Unit tests of GPU sharing: KAI's gpu-fraction / gpu-memory annotations as the model reads
 * them, per-GPU accounting of bound pods, placement on a GPU under each scoring policy, FGD,
 * the reasons, quota, and a randomized comparison of the cycle with a per-pod full scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/cluster.h"
#include "input/input.h"
#include "model/model.h"
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

/* A node with gpus nvidia.com/gpu (and GPU memory mib, as GPU feature discovery labels it;
 * 0: no label) and cpu millicores. */
static void node(model *m, const char *name, int gpus, int mib, int cpu) {
  char y[1024], label[64] = "";
  if (mib) snprintf(label, sizeof label, "nvidia.com/gpu.memory: \"%d\"", mib);
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {%s}}\n"
           "status: {allocatable: {pods: \"110\", cpu: %dm, memory: 512Gi, nvidia.com/gpu: "
           "\"%d\"}}\n",
           name, label, cpu, gpus);
  apply(m, y);
}

/* A pod in namespace t: annotations is the flow body of metadata.annotations, requests of the
 * container, bound to node_name unless NULL; labels of metadata too. */
static void pod_l(model *m, const char *name, int sec, const char *labels, const char *annotations,
                  const char *requests, const char *node_name) {
  char y[2048], bind[128] = "";
  if (node_name) snprintf(bind, sizeof bind, "nodeName: %s, ", node_name);
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, creationTimestamp: "
           "\"2026-01-01T00:00:%02dZ\", labels: {%s}, annotations: {%s}}\nspec: {schedulerName: "
           "tessera, %scontainers: [{name: c, resources: {requests: {%s}, limits: {%s}}}]}\n%s",
           name, sec, labels, annotations, bind, requests, requests,
           node_name ? "status: {phase: Running}\n" : "");
  apply(m, y);
}

static void pod(model *m, const char *name, int sec, const char *annotations, const char *requests,
                const char *node_name) {
  pod_l(m, name, sec, "", annotations, requests, node_name);
}

static model_pod *get_pod(model *m, const char *name) {
  model_pod *p = (model_pod *)model_get(m, MODEL_POD, "t", name);
  if (!p) fail_msg("no pod %s", name);
  return p;
}

static model_node *get_node(model *m, const char *name) {
  model_node *n = (model_node *)model_get(m, MODEL_NODE, "", name);
  if (!n) fail_msg("no node %s", name);
  return n;
}

static int64_t gpus_used(model *m, const char *name) {
  model_node *n = get_node(m, name);
  return model_node_used(n, n->gpu_res);
}

static sched_result run_cfg(model *m, const sched_config *cfg) {
  sched_result r;
  ts_err e;
  if (sched_cycle(m, cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  {
    char why[300];
    if (!tc_groups_ok(&r, why, sizeof why)) fail_msg("groups: %s", why);
  }
  return r;
}

static sched_result run(model *m, sched_scoring scoring) {
  sched_config cfg;
  sched_config_default(&cfg);
  cfg.scoring = scoring;
  return run_cfg(m, &cfg);
}

static const sched_decision *decision(const sched_result *r, const char *pod_name) {
  for (size_t i = 0; i < r->ndecisions; i++)
    if (!strcmp(r->decisions[i].pod->obj.name, pod_name)) return &r->decisions[i];
  fail_msg("no decision for %s", pod_name);
  return NULL;
}

/* "node/GPU" of a BIND on a shared GPU, "node" of another BIND, else "(pending)". */
static const char *where(const sched_result *r, const char *pod_name) {
  static char buf[8][64];
  static int next;
  const sched_decision *d = decision(r, pod_name);
  char *b = buf[next++ % 8];
  if (d->kind != SCHED_BIND) return "(pending)";
  if (d->gpu_shared)
    snprintf(b, 64, "%s/%u", d->node->obj.name, d->gpu_index);
  else
    snprintf(b, 64, "%s", d->node->obj.name);
  return b;
}

static void test_annotations(void **state) {
  static const struct {
    const char *annotations, *requests;
    int32_t share, mib;
    const char *problem; /* a substring of share_problem, or NULL */
  } cases[] = {
      {"gpu-fraction: \"0.5\"", "cpu: 1", 500, 0, NULL},
      {"gpu-fraction: \"0.3\"", "cpu: 1", 300, 0, NULL},    /* 0.3 x 1000 is not exact */
      {"gpu-fraction: \"0.3333\"", "cpu: 1", 334, 0, NULL}, /* rounded up */
      {"gpu-fraction: \".25\"", "cpu: 1", 250, 0, NULL},
      {"gpu-memory: \"20000\"", "cpu: 1", 0, 20000, NULL},
      {"gpu-fraction: \"1\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"0\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"half\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"0.5x\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"-0.5\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      /* Go's strconv.ParseFloat, which KAI reads it with: exponents, a sign, hex floats with a
       * p exponent and underscores after 0x are numbers; spaces, C's hex without p, NaN and
       * infinities are not (NaN passes KAI's range check, but no share can be counted for it).
       * Below a thousandth rounds up to one: once 1e-10 was 0, and the pod was no share. */
      {"gpu-fraction: \"1e-10\"", "cpu: 1", 1, 0, NULL},
      {"gpu-fraction: \"5e-1\"", "cpu: 1", 500, 0, NULL},
      {"gpu-fraction: \"+0.5\"", "cpu: 1", 500, 0, NULL},
      {"gpu-fraction: \"0x1p-1\"", "cpu: 1", 500, 0, NULL},
      {"gpu-fraction: \"0x_1p-2\"", "cpu: 1", 250, 0, NULL},
      {"gpu-fraction: \"0.9999\"", "cpu: 1", 1000, 0, NULL},
      {"gpu-fraction: \"0.0001\"", "cpu: 1", 1, 0, NULL},
      {"gpu-fraction: \"5.e-1\"", "cpu: 1", 500, 0, NULL},
      {"gpu-fraction: \" 0.5\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"0.5 \"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"0x0.8\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"0_5\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"0x1_p-1\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"NaN\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"+nan\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"-Inf\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"1e-400\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \".\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-fraction: \"5e\"", "cpu: 1", 0, 0, "annotations[gpu-fraction]: must be a number"},
      {"gpu-memory: \"0\"", "cpu: 1", 0, 0, "annotations[gpu-memory]: must be a positive"},
      {"gpu-memory: \"20Gi\"", "cpu: 1", 0, 0, "annotations[gpu-memory]: must be a positive"},
      {"gpu-memory: \"99999999999\"", "cpu: 1", 0, 0, "annotations[gpu-memory]: must be"},
      {"gpu-fraction: \"0.5\", gpu-memory: \"100\"", "cpu: 1", 0, 0,
       "annotations[gpu-memory]: cannot request both gpu-fraction and gpu-memory"},
      {"gpu-fraction: \"0.5\"", "nvidia.com/gpu: 1", 0, 0,
       "annotations[gpu-fraction]: cannot have both a GPU share and a whole nvidia.com/gpu"},
      {"gpu-fraction: \"0.5\", gpu-fraction-num-devices: \"2\"", "cpu: 1", 0, 0,
       "annotations[gpu-fraction-num-devices]: a share of several GPUs is not supported"},
      {"", "cpu: 1", 0, 0, NULL},
  };
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    model *m = model_new();
    model_pod *p;
    node(m, "n", 1, 0, 8000); /* nvidia.com/gpu has an id */
    pod(m, "p", 0, cases[i].annotations, cases[i].requests, NULL);
    p = get_pod(m, "p");
    if (cases[i].problem) {
      if (!p->share_problem || !strstr(p->share_problem, cases[i].problem))
        fail_msg("case %zu: problem %s, want %s", i, p->share_problem ? p->share_problem : "none",
                 cases[i].problem);
      assert_false(model_pod_shares_gpu(p) && p->gpu_share + p->gpu_memory == 0);
    } else {
      if (p->share_problem) fail_msg("case %zu: unexpected problem %s", i, p->share_problem);
      assert_int_equal(p->gpu_share, cases[i].share);
      assert_int_equal(p->gpu_memory, cases[i].mib);
    }
    model_free(m);
  }
}

/* A bound pod's share is counted on the GPU its index names (tessera.dev/gpu-index, KAI's
 * runai-gpu), whatever that GPU holds already; a share whose GPU is not known is counted against
 * every GPU (gpu_unknown) and as one used GPU, once per KAI GPU group (runai-gpu-group), whose
 * members share one GPU; a shared GPU is one used nvidia.com/gpu until its last share goes. */
static void test_node_accounting(void **state) {
  model *m = model_new();
  model_node *n;
  (void)state;
  node(m, "n", 2, 40000, 8000);
  n = get_node(m, "n");
  assert_int_equal(n->ngpu_shares, 2);
  pod(m, "a", 0, "gpu-fraction: \"0.5\", tessera.dev/gpu-index: \"1\"", "cpu: 1", "n");
  assert_int_equal(n->gpu_shares[1], 500);
  assert_int_equal(gpus_used(m, "n"), 1);
  pod(m, "b", 1, "gpu-memory: \"20000\"", "cpu: 1", "n"); /* no index: half of any GPU */
  assert_int_equal(get_pod(m, "b")->gpu_slot, MODEL_GPU_UNKNOWN);
  assert_int_equal(n->gpu_unknown, 500);
  assert_int_equal(gpus_used(m, "n"), 2);
  pod(m, "c", 2, "gpu-fraction: \"0.6\", runai-gpu: \"1\"", "cpu: 1", "n"); /* KAI's index */
  assert_int_equal(get_pod(m, "c")->gpu_slot, 1);
  assert_int_equal(n->gpu_shares[1], 1100); /* counted where it is, past 1000: full */
  assert_int_equal(gpus_used(m, "n"), 2);
  pod(m, "d", 3, "tessera.dev/gpu-index: \"junk\", gpu-fraction: \"0.2\"", "cpu: 1", "n");
  assert_int_equal(get_pod(m, "d")->gpu_index, -1);
  assert_int_equal(n->gpu_unknown, 700);
  assert_int_equal(gpus_used(m, "n"), 3); /* each share of unknown GPU may hold its own */
  assert_int_equal(model_remove(m, MODEL_POD, "t", "a"), TS_OK);
  assert_int_equal(n->gpu_shares[1], 600);
  assert_int_equal(model_remove(m, MODEL_POD, "t", "c"), TS_OK);
  assert_int_equal(n->gpu_shares[1], 0);
  assert_int_equal(gpus_used(m, "n"), 2);
  assert_int_equal(model_remove(m, MODEL_POD, "t", "b"), TS_OK);
  assert_int_equal(model_remove(m, MODEL_POD, "t", "d"), TS_OK);
  assert_int_equal(n->gpu_unknown, 0);
  assert_int_equal(gpus_used(m, "n"), 0);
  /* KAI's GPU groups: members share one GPU. Unknown: one used GPU for the group, kept while a
   * member is left; known through one member: the others are counted there too. */
  pod_l(m, "g1", 4, "runai-gpu-group: aa", "gpu-fraction: \"0.3\"", "cpu: 1", "n");
  pod_l(m, "g2", 5, "runai-gpu-group: aa", "gpu-fraction: \"0.4\"", "cpu: 1", "n");
  assert_int_equal(n->gpu_unknown, 700);
  assert_int_equal(n->gpu_unknown_gpus, 1);
  assert_int_equal(gpus_used(m, "n"), 1);
  assert_int_equal(model_remove(m, MODEL_POD, "t", "g1"), TS_OK); /* the holder leaves */
  assert_int_equal(gpus_used(m, "n"), 1);
  assert_true(get_pod(m, "g2")->gpu_holds);
  assert_int_equal(model_remove(m, MODEL_POD, "t", "g2"), TS_OK);
  assert_int_equal(gpus_used(m, "n"), 0);
  pod_l(m, "k1", 6, "runai-gpu-group: bb", "gpu-fraction: \"0.3\", runai-gpu: \"1\"", "cpu: 1",
        "n");
  pod_l(m, "k2", 7, "runai-gpu-group: bb", "gpu-fraction: \"0.3\"", "cpu: 1", "n");
  assert_int_equal(get_pod(m, "k2")->gpu_slot, 1);
  assert_int_equal(n->gpu_shares[1], 600);
  assert_int_equal(gpus_used(m, "n"), 1);
  /* A pod that finished holds nothing. */
  pod(m, "e", 8, "gpu-fraction: \"0.2\"", "cpu: 1", NULL);
  assert_int_equal(model_pod_bind_gpu(m, get_pod(m, "e"), ts_intern_cstr("n"), 1), TS_OK);
  assert_int_equal(n->gpu_shares[1], 800);
  assert_int_equal(model_pod_bind(m, get_pod(m, "e"), NULL), TS_OK);
  assert_int_equal(n->gpu_shares[1], 600);
  model_free(m);
}

/* Shares placed by others, as the audit found them: a pod KAI put on GPU 1 (its runai-gpu
 * annotation) was counted on GPU 0, so a new 0.6 went onto GPU 1 (1.2 in all); two 0.6 shares
 * bound by nodeName on a one-GPU node were counted as one, and a 0.4 was placed (1.6). Now no
 * share goes where the known shares, plus those of unknown GPU, would pass one GPU. */
static void test_foreign_shares(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  node(m, "two", 2, 0, 8000);
  pod_l(m, "kai", 0, "runai-gpu-group: g", "gpu-fraction: \"0.6\", runai-gpu: \"1\"", "cpu: 1",
        "two");
  pod(m, "new", 1, "gpu-fraction: \"0.6\"", "cpu: 1", NULL);
  r = run(m, SCHED_BINPACK);
  assert_string_equal(where(&r, "new"), "two/0");
  sched_result_free(&r);
  model_free(m);

  m = model_new();
  node(m, "one", 1, 0, 8000);
  pod(m, "x", 0, "gpu-fraction: \"0.6\"", "cpu: 1", "one");
  pod(m, "y", 1, "gpu-fraction: \"0.6\"", "cpu: 1", "one");
  pod(m, "z", 2, "gpu-fraction: \"0.4\"", "cpu: 1", NULL);
  for (int s = 0; s < SCHED_SCORING_COUNT; s++) {
    r = run(m, (sched_scoring)s);
    assert_string_equal(where(&r, "z"), "(pending)");
    sched_result_free(&r);
  }
  model_free(m);

  m = model_new(); /* known shares past 1000 on the only GPU: nothing more goes there */
  node(m, "one", 1, 0, 8000);
  pod(m, "x", 0, "gpu-fraction: \"0.6\", tessera.dev/gpu-index: \"0\"", "cpu: 1", "one");
  pod(m, "y", 1, "gpu-fraction: \"0.6\", runai-gpu: \"0\"", "cpu: 1", "one");
  pod(m, "z", 2, "gpu-fraction: \"0.001\"", "cpu: 1", NULL);
  for (int s = 0; s < SCHED_SCORING_COUNT; s++) {
    r = run(m, (sched_scoring)s);
    assert_string_equal(where(&r, "z"), "(pending)");
    sched_result_free(&r);
  }
  model_free(m);
}

/* Fifty pods of gpu-fraction 1e-10 once rounded to no share at all: all fifty were bound to a
 * node without GPUs, and a ClusterQueue of no GPU quota admitted twenty of twenty. */
static void test_tiny_fraction(void **state) {
  model *m = model_new();
  sched_result r;
  char name[32];
  (void)state;
  node(m, "cpu-only", 0, 0, 64000);
  for (int i = 0; i < 50; i++) {
    snprintf(name, sizeof name, "tiny-%d", i);
    pod(m, name, i % 60, "gpu-fraction: \"1e-10\"", "cpu: 100m", NULL);
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 0);
  assert_int_equal(r.npending, 50);
  sched_result_free(&r);
  model_free(m);

  m = model_new();
  node(m, "gpu", 8, 0, 64000);
  apply(m, "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
           "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu, "
           "nvidia.com/gpu], flavors: [{name: f, resources: [{name: cpu, nominalQuota: 100}, "
           "{name: nvidia.com/gpu, nominalQuota: 0}]}]}]}\n---\n"
           "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, "
           "namespace: t}\nspec: {clusterQueue: cq}\n");
  for (int i = 0; i < 20; i++) {
    snprintf(name, sizeof name, "q-%d", i);
    pod_l(m, name, i, "kueue.x-k8s.io/queue-name: lq", "gpu-fraction: \"1e-10\"", "cpu: 100m",
          NULL);
  }
  r = run(m, SCHED_BINPACK);
  assert_int_equal(r.nbound, 0);
  assert_int_equal(r.npending, 20);
  assert_non_null(strstr(decision(&r, "q-0")->reason, "nvidia.com/gpu"));
  sched_result_free(&r);
  model_free(m);
}

/* Bin-packing (FGD's measure here, as pods share GPUs): shares fill a GPU before opening
 * another; a GPU given to shares is not a free whole GPU; the reasons say which pods fit
 * nowhere and why. */
static void test_binpack_places_shares(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  node(m, "n1", 2, 40960, 32000);
  node(m, "n2", 1, 0, 32000);
  pod(m, "half-1", 1, "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  pod(m, "half-2", 2, "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  pod(m, "half-3", 3, "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  pod(m, "mem-4", 4, "gpu-memory: \"20480\"", "cpu: 1", NULL);
  pod(m, "whole-5", 5, "", "cpu: 1, nvidia.com/gpu: 1", NULL);
  pod(m, "bad-6", 6, "gpu-fraction: \"1.5\"", "cpu: 1", NULL);
  pod(m, "whole-7", 7, "", "cpu: 1, nvidia.com/gpu: 1", NULL);
  pod(m, "mem-8", 8, "gpu-memory: \"40961\"", "cpu: 1", NULL);
  pod(m, "tenth-9", 9, "gpu-fraction: \"0.1\"", "cpu: 1", NULL);
  r = run(m, SCHED_BINPACK);
  /* The first share goes to n2: the gpu-memory pods cannot use n2's GPU (n2 does not say how
   * much memory its GPUs have), so it is fragmentation for them already; its GPU takes the
   * second share too. */
  assert_string_equal(where(&r, "half-1"), "n2/0");
  assert_string_equal(where(&r, "half-2"), "n2/0");
  assert_string_equal(where(&r, "half-3"), "n1/0");
  assert_string_equal(where(&r, "mem-4"), "n1/0"); /* 20480 of 40960 MiB: the other half */
  assert_string_equal(where(&r, "whole-5"), "n1");
  assert_string_equal(where(&r, "bad-6"), "(pending)");
  assert_non_null(strstr(decision(&r, "bad-6")->reason,
                         "metadata.annotations[gpu-fraction]: must be a number greater than 0"));
  assert_string_equal(decision(&r, "whole-7")->reason,
                      "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.");
  /* More memory than n1's GPUs have; n2 does not say how much its GPUs have. */
  assert_string_equal(decision(&r, "mem-8")->reason,
                      "0/2 nodes are available: 2 node(s) had no GPU with room for the pod's GPU "
                      "share.");
  assert_string_equal(decision(&r, "tenth-9")->reason,
                      "0/2 nodes are available: 2 node(s) had no GPU with room for the pod's GPU "
                      "share.");
  /* Applied, the model counts what the cycle placed, on the same GPUs. */
  for (size_t i = 0; i < r.ndecisions; i++)
    assert_int_equal(sched_decision_apply(m, &r.decisions[i]), TS_OK);
  assert_int_equal(get_node(m, "n1")->gpu_shares[0], 1000);
  assert_int_equal(get_node(m, "n2")->gpu_shares[0], 1000);
  assert_int_equal(gpus_used(m, "n1"), 2);
  sched_result_free(&r);
  r = run(m, SCHED_BINPACK); /* nothing frees: the next cycle keeps them pending */
  assert_string_equal(where(&r, "tenth-9"), "(pending)");
  sched_result_free(&r);
  model_free(m);
}

/* Which GPU of a node a share goes on, per policy: GPUs 0 and 1 hold 0.3 and 0.7. */
static void test_policies_choose_gpus(void **state) {
  static const struct {
    sched_scoring s;
    const char *want;
  } cases[] = {
      {SCHED_BINPACK, "n/1"},     /* the fullest with room */
      {SCHED_BEST_FIT, "n/1"},    /* same */
      {SCHED_FIRST_FIT, "n/0"},   /* the lowest-numbered with room */
      {SCHED_SPREAD, "n/2"},      /* an unshared one */
      {SCHED_GPU_PACKING, "n/1"}, /* the fullest with room */
      {SCHED_FGD, "n/1"},         /* closes GPU 1; GPU 0 keeps room for the typical 0.3 */
  };
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    model *m = model_new();
    sched_result r;
    node(m, "n", 4, 0, 64000);
    pod(m, "a", 0, "gpu-fraction: \"0.3\", tessera.dev/gpu-index: \"0\"", "cpu: 1", "n");
    pod(m, "b", 1, "gpu-fraction: \"0.7\", tessera.dev/gpu-index: \"1\"", "cpu: 1", "n");
    pod(m, "p", 2, "gpu-fraction: \"0.3\"", "cpu: 1", NULL);
    r = run(m, cases[i].s);
    if (strcmp(where(&r, "p"), cases[i].want))
      fail_msg("%s: %s, want %s", sched_scoring_name(cases[i].s), where(&r, "p"), cases[i].want);
    sched_result_free(&r);
    model_free(m);
  }
}

/* GPU packing's tiers: a share on a GPU already shared; else a node with GPUs in use; else the
 * empty node with the fewest GPUs (first fit would take big). */
static void test_gpu_packing_tiers(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  node(m, "a", 4, 0, 64000);
  node(m, "big", 8, 0, 64000);
  node(m, "small", 2, 0, 64000);
  pod(m, "x", 0, "gpu-fraction: \"0.7\", tessera.dev/gpu-index: \"0\"", "cpu: 1", "a");
  pod(m, "s1", 1, "gpu-fraction: \"0.3\"", "cpu: 1", NULL);
  pod(m, "s2", 2, "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  pod(m, "w1", 3, "", "cpu: 1, nvidia.com/gpu: 1", NULL);
  pod(m, "w2", 4, "", "cpu: 1, nvidia.com/gpu: 2", NULL);
  r = run(m, SCHED_GPU_PACKING);
  assert_string_equal(where(&r, "s1"), "a/0");   /* fills x's GPU */
  assert_string_equal(where(&r, "s2"), "a/1");   /* no shared GPU has room: a node in use */
  assert_string_equal(where(&r, "w1"), "a");     /* a node in use */
  assert_string_equal(where(&r, "w2"), "small"); /* a has one GPU left: the smaller empty node */
  sched_result_free(&r);
  r = run(m, SCHED_FIRST_FIT);
  assert_string_equal(where(&r, "w2"), "big");
  sched_result_free(&r);
  model_free(m);
}

/* FGD: the workload's typical pod asks for 4 cores and a whole GPU. A share with 2 cores fits
 * the fuller node a, but leaves it 3 cores, with which no typical pod can use its 3.5 free GPUs;
 * on b it strands only half a GPU. Measured against the model's own pods (the share alone, and a
 * pod without GPUs), a keeps room for them: bin-packing takes a. Given the workload, FGD takes
 * b; so does it when such pods wait in the model. */
static void test_fgd_keeps_gpus_usable(void **state) {
  static const sched_workload_shape typical[] = {{4000, 1, 1000, 0, 10}, {0, 0, 0, 0, 5}};
  sched_config cfg;
  model *m = model_new();
  sched_result r;
  (void)state;
  node(m, "a", 4, 0, 8000);
  node(m, "b", 4, 0, 32000);
  pod(m, "cpu-hog", 0, "", "cpu: 3", "a");
  pod(m, "p", 1, "gpu-fraction: \"0.5\"", "cpu: 2", NULL);
  r = run(m, SCHED_BINPACK);
  assert_string_equal(where(&r, "p"), "a/0");
  sched_result_free(&r);
  sched_config_default(&cfg);
  cfg.scoring = SCHED_FGD;
  cfg.workload = typical, cfg.nworkload = 2; /* the CPU-only shape is not typical */
  r = run_cfg(m, &cfg);
  assert_string_equal(where(&r, "p"), "b/0");
  sched_result_free(&r);
  /* Without a workload given, FGD reads the model's pods: here the pending share and the
   * typical pods waiting beside it. */
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "w%d", i);
    pod(m, name, 10 + i, "", "cpu: 4, nvidia.com/gpu: 1, memory: 600Gi", NULL); /* fit nowhere */
  }
  r = run(m, SCHED_FGD);
  assert_string_equal(where(&r, "p"), "b/0");
  sched_result_free(&r);
  model_free(m);
}

/* FGD keys its typical shapes by the GPU models their pods may use, as the paper's simulator
 * does: a whole-GPU pod that must run on A100 can use nothing on a T4 node, so the T4 node's
 * free GPUs are all fragmentation to it ("no access"). A pod of 1 GPU without a constraint, on
 * node a (A100, 8 free): the typical pod fits before and after, fragmentation 0 -> 0, 50
 * points; on b (T4): 8000 -> 7000 thousandths, 100 / (1 + e^-1) = 73 points: b. Without the
 * model in the shape both read 0 -> 0 and the name decides: a. Read from the model's pods (four
 * A100 pods that fit nowhere, weight 0.8, and the pod, 0.2): a 50, b 100 / (1 + e^-0.8) = 68:
 * b. */
static void test_fgd_gpu_models(void **state) {
  static const sched_workload_shape with[] = {{0, 1, 1000, 0, 1, "A100"}},
                                    without[] = {{0, 1, 1000, 0, 1, NULL}};
  sched_config cfg;
  model *m = model_new();
  sched_result r;
  (void)state;
  for (int i = 0; i < 2; i++) {
    char y[512];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {nvidia.com/gpu.product: "
             "%s}}\nstatus: {allocatable: {pods: \"110\", cpu: 64000m, memory: 512Gi, "
             "nvidia.com/gpu: \"8\"}}\n",
             i ? "b" : "a", i ? "T4" : "A100");
    apply(m, y);
  }
  pod(m, "p", 0, "", "cpu: 1, nvidia.com/gpu: 1", NULL);
  sched_config_default(&cfg);
  cfg.scoring = SCHED_FGD;
  cfg.workload = with, cfg.nworkload = 1;
  r = run_cfg(m, &cfg);
  assert_string_equal(r.decisions[0].node->obj.name, "b");
  sched_result_free(&r);
  cfg.workload = without;
  r = run_cfg(m, &cfg);
  assert_string_equal(r.decisions[0].node->obj.name, "a");
  sched_result_free(&r);
  for (int i = 0; i < 4; i++) {
    char y[1024];
    snprintf(
        y, sizeof y,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w%d, namespace: t, creationTimestamp: "
        "\"2026-01-01T00:00:1%dZ\"}\nspec: {schedulerName: tessera, affinity: {nodeAffinity: "
        "{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
        "[{matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [A100]}]}]}}}, "
        "containers: [{name: c, resources: {requests: {cpu: \"1\", memory: 600Gi, "
        "nvidia.com/gpu: \"1\"}, limits: {nvidia.com/gpu: \"1\"}}}]}\n",
        i, i);
    apply(m, y);
  }
  r = run(m, SCHED_FGD);
  for (size_t i = 0; i < r.ndecisions; i++)
    if (!strcmp(r.decisions[i].pod->obj.name, "p"))
      assert_string_equal(r.decisions[i].node->obj.name, "b");
  assert_int_equal(r.nbound, 1);
  sched_result_free(&r);
  model_free(m);
}

/* Nodes of equal score: the first by name, or with a tie seed the first in a random order of
 * the nodes drawn from the seed alone, the same in every cycle (as the FGD paper's simulator
 * breaks them): identical empty nodes, whole-GPU pods one cycle at a time; a seed packs them
 * all on one node, and different seeds choose different nodes. */
static void test_tie_order(void **state) {
  static const sched_workload_shape typical[] = {{4000, 1, 1000, 0, 3}, {2000, 0, 0, 0, 1}};
  char seen[8] = "";
  (void)state;
  for (uint64_t seed = 0; seed < 8; seed++) {
    model *m = model_new();
    sched_config cfg;
    const char *first = NULL;
    for (int i = 0; i < 6; i++) {
      char name[16];
      snprintf(name, sizeof name, "n%d", i);
      node(m, name, 8, 0, 64000);
    }
    sched_config_default(&cfg);
    cfg.scoring = SCHED_FGD, cfg.tie_seed = seed;
    cfg.workload = typical, cfg.nworkload = 2;
    for (int i = 0; i < 3; i++) { /* one pod per cycle, each bound before the next */
      char name[16];
      sched_result r;
      snprintf(name, sizeof name, "p%d", i);
      pod(m, name, i, "", "cpu: 4, nvidia.com/gpu: 1", NULL);
      r = run_cfg(m, &cfg);
      assert_int_equal(r.nbound, 1);
      if (!first) first = ts_intern_cstr(r.decisions[0].node->obj.name);
      assert_string_equal(r.decisions[0].node->obj.name, first); /* the same node every cycle */
      assert_int_equal(sched_decision_apply(m, &r.decisions[0]), TS_OK);
      sched_result_free(&r);
    }
    if (!seed) assert_string_equal(first, "n0"); /* no seed: by name */
    seen[seed] = first[1];
    model_free(m);
  }
  { /* the seeds do not all choose one node */
    bool differ = false;
    for (int i = 2; i < 8; i++) differ |= seen[i] != seen[1];
    assert_true(differ);
  }
}

/* random: each pod's node drawn from its name (and the seed): the same pod lands on the same
 * node run after run, and eight pods on eight identical nodes do not all land on one. */
static void test_random_policy(void **state) {
  const char *first[8];
  int distinct = 0;
  (void)state;
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 8; i++) {
      model *m = model_new();
      sched_config cfg;
      sched_result r;
      char name[16];
      for (int k = 0; k < 8; k++) {
        snprintf(name, sizeof name, "n%d", k);
        node(m, name, 8, 0, 64000);
      }
      snprintf(name, sizeof name, "p%d", i);
      pod(m, name, 0, "", "cpu: 4, nvidia.com/gpu: 1", NULL);
      sched_config_default(&cfg);
      cfg.scoring = SCHED_RANDOM, cfg.tie_seed = 3;
      r = run_cfg(m, &cfg);
      assert_int_equal(r.nbound, 1);
      if (!round) {
        first[i] = ts_intern_cstr(r.decisions[0].node->obj.name);
        for (int j = 0; j < i && first[i]; j++)
          if (first[j] == first[i]) first[i] = first[i], distinct--;
        distinct++;
      } else {
        assert_string_equal(r.decisions[0].node->obj.name, first[i]); /* repeats */
      }
      sched_result_free(&r);
      model_free(m);
    }
  assert_true(distinct >= 3);
}

/* Quota counts a share exactly: a ClusterQueue with one GPU admits two half-GPU pods, not a
 * third; its status reads 1 GPU used, and half of one after the first pod goes. */
static void test_quota_counts_shares(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  node(m, "n", 4, 0, 64000);
  apply(m, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f}\n"
           "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
           "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu, "
           "nvidia.com/gpu], flavors: [{name: f, resources: [{name: cpu, nominalQuota: 100}, "
           "{name: nvidia.com/gpu, nominalQuota: 1}]}]}]}\n"
           "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, "
           "namespace: t}\nspec: {clusterQueue: cq}\n");
  pod_l(m, "s1", 1, "kueue.x-k8s.io/queue-name: lq", "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  pod_l(m, "s2", 2, "kueue.x-k8s.io/queue-name: lq", "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  pod_l(m, "s3", 3, "kueue.x-k8s.io/queue-name: lq", "gpu-fraction: \"0.25\"", "cpu: 1", NULL);
  r = run(m, SCHED_BINPACK);
  assert_string_equal(where(&r, "s1"), "n/0");
  assert_string_equal(where(&r, "s2"), "n/0");
  assert_string_equal(where(&r, "s3"), "(pending)");
  assert_int_equal(decision(&r, "s3")->why, SCHED_WHY_QUEUED);
  assert_non_null(strstr(decision(&r, "s3")->reason,
                         "insufficient unused quota for nvidia.com/gpu in flavor f, 250m more"));
  for (size_t i = 0; i < r.ndecisions; i++)
    assert_int_equal(sched_decision_apply(m, &r.decisions[i]), TS_OK);
  sched_result_free(&r);
  assert_int_equal(model_remove(m, MODEL_POD, "t", "s1"), TS_OK);
  r = run(m, SCHED_BINPACK); /* half a GPU of quota free: the quarter fits (FGD keeps GPU 0's
                                half for a typical half and opens GPU 1) */
  assert_string_equal(where(&r, "s3"), "n/1");
  sched_result_free(&r);
  model_free(m);
}

/* A KAI queue's fractional GPU quota (1.5 GPUs, limit 1.5) holds three half-GPU pods. */
static void test_kai_fractional_quota(void **state) {
  model *m = model_new();
  sched_result r;
  (void)state;
  node(m, "n", 4, 0, 64000);
  apply(m, "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n"
           "  resources: {gpu: {quota: 1.5, limit: 1.5}, cpu: {quota: -1, limit: -1}, memory: "
           "{quota: -1, limit: -1}}\n");
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "h%d", i);
    pod_l(m, name, i, "kai.scheduler/queue: q", "gpu-fraction: \"0.5\"", "cpu: 1", NULL);
  }
  r = run(m, SCHED_FIRST_FIT);
  assert_string_equal(where(&r, "h0"), "n/0");
  assert_string_equal(where(&r, "h1"), "n/0");
  assert_string_equal(where(&r, "h2"), "n/1");
  assert_string_equal(where(&r, "h3"), "(pending)");
  sched_result_free(&r);
  model_free(m);
}

/* ---- randomized: the cycle against a full scan per pod ----------------------------------- */

static const char *full_scan(model *m, sched_scoring scoring, const sched_result *r) {
  sched_config cfg;
  sched_view v;
  ts_arena a, o;
  static char why[256];
  sched_config_default(&cfg);
  cfg.scoring = scoring;
  ts_arena_init(&a, 0);
  ts_arena_init(&o, 0);
  assert_int_equal(sched__view_init(&v, m, &cfg, 0, &a, &o), TS_OK);
  why[0] = '\0';
  for (size_t i = 0; i < r->ndecisions && !why[0]; i++) {
    const sched_decision *d = &r->decisions[i];
    const model_pod *p = d->pod;
    int64_t best = 0;
    int found = -1;
    sched_shape shape;
    sched_pending pp = {.pod = p};
    char got[64], want[64];
    if (p->share_problem) continue;
    sched__shape_init(&v, p, &shape);
    for (uint32_t k = 0; k < v.n; k++) {
      int64_t s;
      if (sched__static_fit(&v, &pp, k) != SCHED_FIT || !sched__resources_fit(&v, p, k)) continue;
      s = sched__score(&v, &shape, k);
      if (found < 0 || s > best) best = s, found = (int)k;
    }
    if (found >= 0) sched__place(&v, p, (uint32_t)found);
    snprintf(want, sizeof want, "%s/%d", found < 0 ? "-" : v.nodes[found]->obj.name,
             found < 0 ? -1 : sched__gpu_slot(&v, p));
    snprintf(got, sizeof got, "%s/%d", d->kind == SCHED_BIND ? d->node->obj.name : "-",
             d->kind == SCHED_BIND && d->gpu_shared ? (int)d->gpu_index : -1);
    if (strcmp(got, want))
      snprintf(why, sizeof why, "%s: %s: cycle %s, scan %s", sched_scoring_name(scoring),
               p->obj.name, got, want);
  }
  sched__view_free(&v);
  ts_arena_free(&a);
  ts_arena_free(&o);
  return why[0] ? why : NULL;
}

static void test_cycle_matches_full_scan(void **state) {
  static const char *shapes[] = {"gpu-fraction: \"0.25\"", "gpu-fraction: \"0.5\"",
                                 "gpu-fraction: \"0.7\"",  "gpu-memory: \"8000\"",
                                 "gpu-memory: \"30000\"",  ""};
  int placed = 0, shared = 0;
  (void)state;
  srand(7);
  for (int round = 0; round < 24; round++) {
    model *m = model_new();
    int npods = 0;
    for (int k = 0; k < 12; k++) {
      char name[16];
      static const int mem[] = {0, 16000, 40000, 81920};
      snprintf(name, sizeof name, "n%02d", k);
      node(m, name, (rand() % 3) * 4, mem[rand() % 4], 8000 + 4000 * (rand() % 8));
    }
    for (int k = 0; k < 6; k++) { /* some GPUs already shared */
      char name[16], an[96], nn[16];
      snprintf(name, sizeof name, "run%d", k);
      snprintf(nn, sizeof nn, "n%02d", rand() % 12);
      snprintf(an, sizeof an, "gpu-fraction: \"0.%d\", tessera.dev/gpu-index: \"%d\"",
               1 + rand() % 9, rand() % 4);
      pod(m, name, 0, an, "cpu: 1", nn);
    }
    for (int g = 0; g < 10; g++) {
      int which = rand() % 6, count = 1 + rand() % 8;
      char req[64];
      snprintf(req, sizeof req, which == 5 ? "cpu: %d, nvidia.com/gpu: %d" : "cpu: %d",
               1 + rand() % 6, 1 + rand() % 2);
      for (int i = 0; i < count; i++, npods++) {
        char name[16];
        snprintf(name, sizeof name, "p%03d", npods);
        pod(m, name, npods % 60, shapes[which], req, NULL);
      }
    }
    for (int s = 0; s < SCHED_SCORING_COUNT; s++) {
      sched_result r = run(m, (sched_scoring)s);
      const char *why = full_scan(m, (sched_scoring)s, &r);
      if (why) fail_msg("round %d: %s", round, why);
      for (size_t i = 0; i < r.ndecisions; i++) {
        placed += r.decisions[i].kind == SCHED_BIND;
        shared += r.decisions[i].gpu_shared;
      }
      sched_result_free(&r);
    }
    model_free(m);
  }
  assert_true(placed > 1000); /* both outcomes, many times */
  assert_true(shared > 500);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_annotations),           cmocka_unit_test(test_node_accounting),
      cmocka_unit_test(test_foreign_shares),        cmocka_unit_test(test_tiny_fraction),
      cmocka_unit_test(test_binpack_places_shares), cmocka_unit_test(test_policies_choose_gpus),
      cmocka_unit_test(test_gpu_packing_tiers),     cmocka_unit_test(test_fgd_keeps_gpus_usable),
      cmocka_unit_test(test_fgd_gpu_models),        cmocka_unit_test(test_tie_order),
      cmocka_unit_test(test_random_policy),         cmocka_unit_test(test_quota_counts_shares),
      cmocka_unit_test(test_kai_fractional_quota),  cmocka_unit_test(test_cycle_matches_full_scan),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
