/* The quota tree against input chosen to break it: nesting limits that must not depend on the
 * order names sort in, chains and cycles of hundreds of thousands of cohorts (no recursion the
 * input can deepen, cost linear in the queues), quotas whose sums pass int64, quotas out of
 * range, and an injected fault in one object's build, which must stay in that object. The
 * fixture comes from test_queueing.c. */
#define TQ_FIXTURE_ONLY
#include "tests/unit/test_queueing.c"

#include <jansson.h>

/* Applies one object built with jansson (faster than YAML for chains of 200,000). */
static void put(fx *f, json_t *o) {
  ts_err e;
  ts_err_clear(&e);
  if (!o) fail_msg("json_pack");
  if (model_apply_json(f->m, o, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK)
    fail_msg("apply: %s", e.text);
  json_decref(o);
}

/* The name of cohort i of a chain of n (0 is the root): names sort root-first or leaf-first. */
static void chain_name(char *out, size_t cap, int i, int n, bool root_first) {
  snprintf(out, cap, "c%07d", root_first ? i : n - i);
}

/* A chain of n Kueue Cohorts and a ClusterQueue "leaf" under the deepest, and a ClusterQueue
 * "ok" under the cohort at depth 32 (the deepest allowed). */
static void kueue_chain(fx *f, int n, bool root_first) {
  char name[32], parent[32], ok[32];
  for (int i = 0; i < n; i++) {
    chain_name(name, sizeof name, i, n, root_first);
    chain_name(parent, sizeof parent, i - 1, n, root_first);
    put(f, i ? json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2",
                         "kind", "Cohort", "metadata", "name", name, "spec", "parentName", parent)
             : json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
                         "Cohort", "metadata", "name", name));
  }
  chain_name(name, sizeof name, n - 1, n, root_first);
  cq1(f, "leaf", name, "f", "cpu", "10", "", "");
  chain_name(ok, sizeof ok, n > 32 ? 32 : n - 1, n, root_first);
  cq1(f, "ok", ok, "f", "cpu", "10", "", "");
}

/* The depth limit holds at the same cohort whatever order the names sort in, and at any
 * length: 40 levels or 200,000 (which once overflowed the stack), each reported once. */
static void test_nesting_limit_any_order(void **state) {
  fx *f = *state;
  static const int lengths[] = {40, 5000, 200000};
  for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++)
    for (int order = 0; order < 2; order++) {
      char want[128], deep[32];
      int n = lengths[l];
      reset(f);
      kueue_chain(f, n, order == 0);
      build(f);
      chain_name(deep, sizeof deep, 33, n, order == 0); /* the first past depth 32 */
      snprintf(want, sizeof want, "Cohort %s: spec.parentName: nesting deeper than 32", deep);
      assert_int_equal(f->t->problems.n, 2);
      assert_string_equal(f->t->problems.v[0], want);
      chain_name(deep, sizeof deep, n - 1, n, order == 0);
      snprintf(want, sizeof want,
               "ClusterQueue leaf: spec.cohort: cohort \"%s\" is nested deeper than 32", deep);
      assert_string_equal(f->t->problems.v[1], want);
      assert_false(q_tree_cq_active(f->t, "leaf"));
      assert_string_equal(q_tree_cq_inactive(f->t, "leaf", NULL), "CohortTooDeep");
      assert_true(q_tree_cq_active(f->t, "ok")); /* depth 32 is allowed */
      q_tree_free(f->t), f->t = NULL;
    }
}

/* A cycle of 100,000 cohorts: one problem, cut short, and everything under it inactive. */
static void test_long_cycle(void **state) {
  fx *f = *state;
  const int n = 100000;
  char name[32], parent[32];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "c%07d", i);
    snprintf(parent, sizeof parent, "c%07d", (i + 1) % n);
    put(f, json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
                     "Cohort", "metadata", "name", name, "spec", "parentName", parent));
  }
  cq1(f, "under", "c0050000", "f", "cpu", "10", "", "");
  cq1(f, "free", NULL, "f", "cpu", "10", "", "");
  build(f);
  assert_int_equal(f->t->problems.n, 2);
  assert_non_null(strstr(f->t->problems.v[0],
                         "Cohort c0000000: spec.parentName: cycle c0000000 -> c0000001 -> "));
  assert_non_null(strstr(f->t->problems.v[0], " -> ..."));
  assert_true(strlen(f->t->problems.v[0]) < Q__MSG_MAX);
  assert_string_equal(f->t->problems.v[1],
                      "ClusterQueue under: spec.cohort: cohort \"c0050000\" is in or under a "
                      "cycle");
  assert_false(q_tree_cq_active(f->t, "under"));
  assert_true(q_tree_cq_active(f->t, "free"));
}

/* A KAI queue chain of 10,000 levels (a parent per level): built in one pass (the children of
 * each parent are found through an index, not by scanning every queue: that was 15 s a cycle),
 * the leaf reported as nested too deep in the words of KAI's field. */
static void test_kai_chain(void **state) {
  fx *f = *state;
  const int n = 10000;
  char name[32], parent[32];
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "q%05d", n - i); /* leaf-last names sort first */
    snprintf(parent, sizeof parent, "q%05d", n - i + 1);
    put(f,
        json_pack("{s:s, s:s, s:{s:s}, s:{s:s*, s:{s:{s:i, s:i}, s:{s:i, s:i}, s:{s:i, s:i}}}}",
                  "apiVersion", "scheduling.run.ai/v2", "kind", "Queue", "metadata", "name", name,
                  "spec", "parentQueue", i ? parent : NULL, "resources", "gpu", "quota", 1, "limit",
                  -1, "cpu", "quota", -1, "limit", -1, "memory", "quota", -1, "limit", -1));
  }
  build(f);
  assert_int_equal(f->t->problems.n, 2);
  /* the root is q10000; the queue at depth 33 under the KAI root cohort (depth 0) is q09968 */
  assert_string_equal(f->t->problems.v[0],
                      "KAI Queue q09968: spec.parentQueue: nesting deeper than 32");
  assert_string_equal(f->t->problems.v[1], "KAI Queue q00001: spec.parentQueue: parent queue "
                                           "\"q00002\" is nested deeper than 32");
  assert_false(q_tree_cq_active(f->t, "q00001"));
}

/* Children whose quotas add up past int64, each inside its project's range: ten KAI queues of
 * 999,999,999,999,999.9 GPUs, three Volcano queues deserving 2^63 - 1 cores. Once every cycle
 * failed with "arithmetic overflow"; now the sums saturate and nothing is refused. */
static void test_quota_sums_saturate(void **state) {
  fx *f = *state;
  char name[32];
  kai_queue(f, "top", NULL, "{quota: 1, limit: -1}");
  for (int i = 0; i < 10; i++) {
    snprintf(name, sizeof name, "k%d", i);
    kai_queue(f, name, "top", "{quota: 999999999999999.9, limit: 999999999999999.9}");
  }
  yaml(f, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: vtop}\n"
          "spec: {deserved: {cpu: \"1\"}, capability: {cpu: \"9223372036854775807\"}}\n");
  for (int i = 0; i < 3; i++) {
    char y[512];
    snprintf(y, sizeof y,
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: v%d}\n"
             "spec: {parent: vtop, deserved: {cpu: \"9223372036854775807\", nvidia.com/gpu: "
             "\"9223372036854775807\"}}\n",
             i);
    yaml(f, y);
  }
  build(f);
  for (size_t i = 0; i < f->t->problems.n; i++) print_message("%s\n", f->t->problems.v[i]);
  assert_int_equal(f->t->problems.n, 0);
  assert_true(q_tree_cq_active(f->t, "k0"));
  assert_true(q_tree_cq_active(f->t, "v2"));
}

/* A Kueue quota past what the tree counts (10^17 GPUs: 10^20 thousandths) is refused for its
 * queue alone, naming the field; the other queue keeps working. */
static void test_quota_out_of_range(void **state) {
  fx *f = *state;
  cq1(f, "huge", NULL, "f", "nvidia.com/gpu", "1e17", "", "");
  cq1(f, "fine", NULL, "f", "nvidia.com/gpu", "8", "", "");
  build(f);
  assert_int_equal(f->t->problems.n, 1);
  assert_string_equal(f->t->problems.v[0], "ClusterQueue huge: spec.resourceGroups: nominalQuota "
                                           "of nvidia.com/gpu: out of range");
  assert_string_equal(q_tree_cq_inactive(f->t, "huge", NULL), "InvalidQuota");
  assert_true(q_tree_cq_active(f->t, "fine"));
}

/* An error building one queue or cohort (injected) stays there: that queue, or the queues
 * under that cohort, are inactive with the error; everything else is built as without it. */
static void test_tree_fault_contained(void **state) {
  fx *f = *state;
  const char *problem = NULL;
  cohort(f, "org", NULL, NULL);
  cohort(f, "bad", "org", NULL);
  cq1(f, "a", "org", "f", "cpu", "10", "", "");
  cq1(f, "b", "org", "f", "cpu", "10", "", "");
  cq1(f, "c", "bad", "f", "cpu", "10", "", "");
  f->cfg.fault = (q_fault){Q_FAULT_TREE, "a"};
  build(f);
  assert_int_equal(f->t->problems.n, 1);
  assert_string_equal(f->t->problems.v[0], "ClusterQueue a: spec.resourceGroups: injected fault");
  assert_string_equal(q_tree_cq_inactive(f->t, "a", &problem), "InvalidQuota");
  assert_string_equal(problem, "spec.resourceGroups: injected fault");
  assert_true(q_tree_cq_active(f->t, "b"));
  assert_true(q_tree_cq_active(f->t, "c"));
  q_queues_free(f->qs), f->qs = NULL;
  q_tree_free(f->t), f->t = NULL;
  f->cfg.fault = (q_fault){Q_FAULT_TREE, "bad"};
  build(f);
  assert_int_equal(f->t->problems.n, 2);
  assert_string_equal(f->t->problems.v[0], "Cohort bad: spec.resourceGroups: injected fault");
  assert_string_equal(f->t->problems.v[1],
                      "ClusterQueue c: spec.cohort: cohort \"bad\" is inactive (Cohort bad: "
                      "spec.resourceGroups: injected fault)");
  assert_string_equal(q_tree_cq_inactive(f->t, "c", NULL), "CohortInvalid");
  assert_true(q_tree_cq_active(f->t, "a"));
  assert_true(q_tree_cq_active(f->t, "b"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_nesting_limit_any_order), T(test_long_cycle),         T(test_kai_chain),
      T(test_quota_sums_saturate),     T(test_quota_out_of_range), T(test_tree_fault_contained),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
