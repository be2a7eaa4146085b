/* Unit tests of queueing/ preemption and fair sharing: each withinClusterQueue,
 * reclaimWithinCohort and borrowWithinCohort policy, victim minimality and determinism,
 * overlapping targets, the preemptor keeping its place, fair-sharing order and weights
 * (including weight 0) and fair-sharing preemption. The fixture comes from test_queueing.c. */
#define TQ_FIXTURE_ONLY
#include "tests/unit/test_queueing.c"

/* ---- withinClusterQueue ---------------------------------------------------------------- */

/* One queue of 10 cpu full of two admitted workloads; a new one of priority 5 wants 5. */
static q_result within(fx *f, const char *policy, int p1, int t1, int p2, int t2) {
  char extra[128];
  snprintf(extra, sizeof extra, "preemption: {withinClusterQueue: %s}", policy);
  cq1(f, "a", NULL, "f", "cpu", "10", "", extra);
  build(f);
  admit(f, wl(f, "one", NULL, p1, t1, "cpu=5", 1, 0), "a", "f");
  admit(f, wl(f, "two", NULL, p2, t2, "cpu=5", 1, 0), "a", "f");
  wl(f, "new", "lq-a", 5, 10, "cpu=5", 1, 0);
  return cycle(f);
}

static void test_within_never(void **state) {
  q_result r = within(*state, "Never", 0, 0, 0, 0);
  assert_int_equal(r.decisions[0].outcome, Q_PENDING);
  assert_int_equal(r.nvictims, 0);
  q_result_free(&r);
}

static void test_within_lower_priority(void **state) {
  fx *f = *state;
  q_result r = within(f, "LowerPriority", 5, 0, 1, 0);
  assert_int_equal(r.decisions[0].outcome, Q_PREEMPTING);
  assert_int_equal(r.nvictims, 1);
  assert_string_equal(r.victims[0].wl->key, "t/two"); /* equal priority is safe */
  assert_int_equal(r.victims[0].reason, Q_IN_CLUSTER_QUEUE);
  assert_string_equal(q_preempt_reason_name(r.victims[0].reason), "InClusterQueue");
  q_result_free(&r);
  reset(f);
  r = within(f, "LowerPriority", 5, 0, 5, 20);
  assert_int_equal(r.nvictims, 0);
  assert_int_equal(r.decisions[0].outcome, Q_PENDING);
  q_result_free(&r);
}

static void test_within_lower_or_newer_equal(void **state) {
  fx *f = *state;
  /* both equal priority: "one" is older than the preemptor (safe), "two" newer (victim) */
  q_result r = within(f, "LowerOrNewerEqualPriority", 5, 0, 5, 20);
  assert_int_equal(r.nvictims, 1);
  assert_string_equal(r.victims[0].wl->key, "t/two");
  q_result_free(&r);
}

/* The preempting head keeps its place: it is the head of the next cycle again, and its
 * victims, still charged, are chosen again until they are gone. */
static void test_preemptor_keeps_place(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r = within(f, "LowerPriority", 0, 0, 0, 0);
  q_workload *const *act;
  assert_int_equal(r.nvictims, 1);
  w = (q_workload *)r.decisions[0].wl;
  q_result_free(&r);
  wl(f, "later", "lq-a", 0, 30, "cpu=1", 1, 0);
  assert_true(q_queues_active(f->qs, "a", &act) >= 1);
  assert_ptr_equal(act[0], w);
  r = cycle(f);
  assert_ptr_equal(r.decisions[0].wl, w);
  assert_int_equal(r.decisions[0].outcome, Q_PREEMPTING);
  q_result_free(&r);
  q_tree_remove(f->t, "t/two"); /* the eviction is observed */
  q_tree_remove(f->t, "t/one");
  r = cycle(f);
  assert_ptr_equal(r.decisions[0].wl, w);
  assert_int_equal(r.decisions[0].outcome, Q_ADMITTED);
  q_result_free(&r);
}

/* ---- victims: minimal and deterministic ------------------------------------------------ */

static q_result minimal(fx *f) {
  cq1(f, "a", NULL, "f", "cpu", "10", "", "preemption: {withinClusterQueue: LowerPriority}");
  build(f);
  admit(f, wl(f, "small-a", NULL, 1, 0, "cpu=2", 1, 0), "a", "f");
  admit(f, wl(f, "small-b", NULL, 2, 0, "cpu=2", 1, 0), "a", "f");
  admit(f, wl(f, "big", NULL, 3, 0, "cpu=6", 1, 0), "a", "f");
  wl(f, "new", "lq-a", 10, 0, "cpu=6", 1, 0);
  return cycle(f);
}

static void test_victims_minimal(void **state) {
  fx *f = *state;
  q_result r = minimal(f);
  /* lowest priority first: small-a, small-b, big are removed until it fits; then the two
   * small ones are added back, as big alone makes room */
  assert_int_equal(r.nvictims, 1);
  assert_string_equal(r.victims[0].wl->key, "t/big");
  assert_int_equal(r.decisions[0].nvictims, 1);
  q_result_free(&r);
  for (int i = 0; i < 3; i++) {
    reset(f);
    r = minimal(f);
    assert_int_equal(r.nvictims, 1);
    assert_string_equal(r.victims[0].wl->key, "t/big");
    q_result_free(&r);
  }
}

/* Two heads of two queues want the same victim: the second is skipped this cycle. */
static void test_overlapping_targets(void **state) {
  fx *f = *state;
  q_workload *x, *y;
  q_result r;
  const char *pre = "preemption: {reclaimWithinCohort: Any}";
  cq1(f, "a", "c", "f", "cpu", "5", "", pre);
  cq1(f, "b", "c", "f", "cpu", "5", "", pre);
  cq1(f, "z", "c", "f", "cpu", "0", "", "");
  build(f);
  admit(f, wl(f, "hog", NULL, 0, 0, "cpu=10", 1, 0), "z", "f");
  x = wl(f, "x", "lq-a", 0, 0, "cpu=5", 1, 0);
  y = wl(f, "y", "lq-b", 0, 1, "cpu=5", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, x)->outcome, Q_PREEMPTING);
  assert_int_equal(dec(&r, y)->outcome, Q_PENDING);
  assert_string_equal(dec(&r, y)->reason,
                      "Workload has overlapping preemption targets with another workload");
  assert_int_equal(r.nvictims, 1);
  assert_int_equal(r.victims[0].reason, Q_IN_COHORT_RECLAMATION);
  q_result_free(&r);
}

/* ---- reclaimWithinCohort --------------------------------------------------------------- */

/* a and b have 10 each; b borrows 5 with one workload of priority p; a wants 10. */
static q_result reclaim(fx *f, const char *policy, int p) {
  char extra[128];
  snprintf(extra, sizeof extra, "preemption: {reclaimWithinCohort: %s}", policy);
  cq1(f, "a", "c", "f", "cpu", "10", "", extra);
  cq1(f, "b", "c", "f", "cpu", "10", "", "");
  build(f);
  admit(f, wl(f, "b-big", NULL, p, 0, "cpu=15", 1, 0), "b", "f");
  wl(f, "new", "lq-a", 0, 0, "cpu=10", 1, 0);
  return cycle(f);
}

static void test_reclaim_policies(void **state) {
  fx *f = *state;
  q_result r = reclaim(f, "Never", -5);
  assert_int_equal(r.nvictims, 0);
  q_result_free(&r);
  reset(f);
  r = reclaim(f, "LowerPriority", 5); /* higher priority than the preemptor: safe */
  assert_int_equal(r.nvictims, 0);
  q_result_free(&r);
  reset(f);
  r = reclaim(f, "LowerPriority", -5);
  assert_int_equal(r.nvictims, 1);
  assert_int_equal(r.victims[0].reason, Q_IN_COHORT_RECLAMATION);
  q_result_free(&r);
  reset(f);
  r = reclaim(f, "Any", 5);
  assert_int_equal(r.nvictims, 1);
  assert_string_equal(r.victims[0].wl->key, "t/b-big");
  q_result_free(&r);
}

/* ---- Volcano's and KAI's queues ------------------------------------------------------- */

#define VOLCANO_FLAVOR "scheduling.volcano.sh"

/* A workload queued directly in a Volcano or KAI queue (no LocalQueue). */
static q_workload *wl_direct(fx *f, const char *name, const char *queue, int prio,
                             const char *reqs) {
  q_workload *w = wl_raw(f, "t", name, NULL, prio, 0, reqs, 1, 0);
  q_queued how;
  w->cluster_queue = ts_intern_cstr(queue);
  w->queue_kind = MODEL_VOLCANO_QUEUE;
  assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_OK);
  assert_int_equal(how, Q_QUEUED);
  return w;
}

/* Volcano queues a and b deserve 10 cpu each; b borrows 5 with a workload of higher priority;
 * a asks for its 10 back. b's reclaimable decides, with and without fair sharing. */
static q_result volcano_reclaim(fx *f, const char *reclaimable, bool fair) {
  char y[512];
  snprintf(y, sizeof y,
           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: a}\n"
           "spec: {deserved: {cpu: 10}}\n---\n"
           "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: b}\n"
           "spec: {deserved: {cpu: 10}%s%s}\n",
           *reclaimable ? ", reclaimable: " : "", reclaimable);
  yaml(f, y);
  f->cfg.fair_sharing = fair;
  build(f);
  admit(f, wl_raw(f, "t", "b-big", NULL, 100, 0, "cpu=15", 1, 0), "b", VOLCANO_FLAVOR);
  wl_direct(f, "new", "a", 0, "cpu=10");
  return cycle(f);
}

static void test_volcano_reclaimable(void **state) {
  fx *f = *state;
  for (int fair = 0; fair < 2; fair++) {
    q_result r = volcano_reclaim(f, "", fair);
    assert_int_equal(r.nvictims, 1); /* reclaimWithinCohort Any: priority does not protect */
    assert_string_equal(r.victims[0].wl->key, "t/b-big");
    q_result_free(&r);
    reset(f);
    r = volcano_reclaim(f, "true", fair);
    assert_int_equal(r.nvictims, 1);
    q_result_free(&r);
    reset(f);
    r = volcano_reclaim(f, "false", fair);
    assert_int_equal(r.nvictims, 0);
    assert_int_equal(r.decisions[0].outcome, Q_PENDING);
    q_result_free(&r);
    reset(f);
  }
}

/* The node of name in t: a ClusterQueue or a cohort. */
static q__node *tree_node(fx *f, const char *name) {
  q__cq *cq = q__cq_get(f->t, name);
  q__node *n = cq ? &cq->node : ts_map_get(&f->t->cohort_by_name, name, strlen(name));
  if (!n) fail_msg("no node %s", name);
  return n;
}

static int64_t gpus(fx *f, q__node *n, const int64_t *v) {
  int res = model_resource_find(model_resources_of(f->m), "nvidia.com/gpu");
  int fl = q__flavor_index(f->t, "scheduling.run.ai");
  (void)n;
  assert_true(res >= 0 && fl >= 0);
  assert_int_equal(v[q__fr(f->t, (uint32_t)fl, res)] % 1000, 0); /* whole GPUs here */
  return v[q__fr(f->t, (uint32_t)fl, res)] / 1000; /* the tree counts thousandths of a GPU */
}

/* KAI's hierarchy: a parent queue is a cohort holding what its children's quotas do not, its
 * limit caps the subtree, and the root holds the cluster beyond every quota. */
static void test_kai_tree(void **state) {
  fx *f = *state;
  q__node *dept, *a, *root, *lone;
  yaml(f, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
          "status: {allocatable: {cpu: 64, memory: 512Gi, nvidia.com/gpu: 32}}\n---\n"
          "apiVersion: v1\nkind: Node\nmetadata: {name: cordoned}\nspec: {unschedulable: true}\n"
          "status: {allocatable: {cpu: 64, memory: 512Gi, nvidia.com/gpu: 8}}\n");
  kai_queue(f, "dept", NULL, "{quota: 10, limit: 12}");
  kai_queue(f, "team-a", "dept", "{quota: 4, limit: -1}");
  kai_queue(f, "team-b", "dept", "{quota: 2, limit: -1}");
  kai_queue(f, "lone", NULL, "{quota: 8, limit: -1}");
  kai_queue(f, "orphan", "nosuch", "{quota: 1, limit: 1}");
  build(f);
  dept = tree_node(f, "dept");
  a = tree_node(f, "team-a");
  root = tree_node(f, "scheduling.run.ai");
  lone = tree_node(f, "lone");
  assert_false(dept->is_cq);
  assert_true(a->is_cq && lone->is_cq);
  assert_null(q__cq_get(f->t, "dept")); /* only leaf queues hold jobs */
  assert_ptr_equal(a->parent, dept);
  assert_ptr_equal(dept->parent, root);
  assert_ptr_equal(lone->parent, root);
  assert_ptr_equal(tree_node(f, "orphan")->parent, root); /* a missing parent: under the root */
  assert_int_equal(gpus(f, dept, dept->nominal), 4);      /* 10 - (4 + 2) */
  assert_int_equal(gpus(f, dept, dept->blimit), 2);       /* 12 - max(10, 6) */
  assert_int_equal(gpus(f, dept, dept->subtree), 10);
  assert_int_equal(gpus(f, root, root->nominal), 13); /* 32 (not the cordoned 8) - (10 + 8 + 1) */
  assert_int_equal(gpus(f, root, root->subtree), 32);
  assert_true(f->t->problems.n == 1 && strstr(f->t->problems.v[0], "KAI Queue orphan: "
                                                                   "spec.parentQueue: Queue "
                                                                   "\"nosuch\" not found"));
}

/* A KAI queue whose name a Volcano queue took is left out: its workloads are not admitted
 * through the Volcano queue of that name. */
static void test_queue_name_taken(void **state) {
  fx *f = *state;
  q_workload *w;
  q_queued how;
  yaml(f, "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n");
  kai_queue(f, "q", NULL, "{quota: 4, limit: -1}");
  build(f);
  assert_true(q_tree_has_cq(f->t, "q", MODEL_VOLCANO_QUEUE));
  assert_false(q_tree_has_cq(f->t, "q", MODEL_KAI_QUEUE));
  assert_true(f->t->problems.n == 1 &&
              strstr(f->t->problems.v[0], "KAI Queue q: metadata.name: a Volcano Queue"));
  w = wl_raw(f, "t", "kai-job", NULL, 0, 0, "cpu=1", 1, 0);
  w->cluster_queue = ts_intern_cstr("q");
  w->queue_kind = MODEL_KAI_QUEUE;
  assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_OK);
  assert_int_equal(how, Q_NO_CLUSTER_QUEUE);
  assert_null(q_tree_cq_of(f->t, w));
  w->queue_kind = MODEL_VOLCANO_QUEUE;
  assert_string_equal(q_tree_cq_of(f->t, w), "q");
}

/* Parent queues naming each other: a cycle, reported; the queue under it is inactive. */
static void test_kai_cycle(void **state) {
  fx *f = *state;
  kai_queue(f, "a", "b", "{quota: 1, limit: -1}");
  kai_queue(f, "b", "a", "{quota: 1, limit: -1}");
  kai_queue(f, "leaf", "a", "{quota: 1, limit: -1}");
  build(f);
  assert_int_equal(f->t->problems.n, 2);
  assert_non_null(strstr(f->t->problems.v[0], "KAI Queue a: spec.parentQueue: cycle a -> b -> a"));
  assert_non_null(strstr(f->t->problems.v[1],
                         "KAI Queue leaf: spec.parentQueue: parent queue \"a\" is "
                         "in or under a cycle"));
  assert_true(q_tree_has_cq(f->t, "leaf", MODEL_KAI_QUEUE));
  assert_false(q_tree_cq_active(f->t, "leaf"));
}

/* ---- borrowWithinCohort ---------------------------------------------------------------- */

/* b borrows 6 with two workloads of priority -10; a wants 12 (2 more than its nominal), so
 * it must borrow while preempting. */
static q_result borrow(fx *f, const char *bwc) {
  char extra[256];
  snprintf(extra, sizeof extra, "preemption: {reclaimWithinCohort: Any%s%s}", *bwc ? ", " : "",
           bwc);
  cq1(f, "a", "c", "f", "cpu", "10", "", extra);
  cq1(f, "b", "c", "f", "cpu", "10", "", "");
  build(f);
  admit(f, wl(f, "b1", NULL, -10, 0, "cpu=8", 1, 0), "b", "f");
  admit(f, wl(f, "b2", NULL, -10, 0, "cpu=8", 1, 0), "b", "f");
  wl(f, "new", "lq-a", 0, 0, "cpu=12", 1, 0);
  return cycle(f);
}

static void test_borrow_within_cohort(void **state) {
  fx *f = *state;
  q_result r = borrow(f, "");
  assert_int_equal(r.nvictims, 0); /* may not borrow while reclaiming */
  q_result_free(&r);
  reset(f);
  r = borrow(f, "borrowWithinCohort: {policy: LowerPriority}");
  assert_int_equal(r.decisions[0].outcome, Q_PREEMPTING);
  assert_int_equal(r.nvictims, 1);
  assert_int_equal(r.victims[0].reason, Q_IN_COHORT_RECLAIM_WHILE_BORR);
  q_result_free(&r);
  reset(f);
  /* candidates above maxPriorityThreshold may only be reclaimed without borrowing */
  r = borrow(f, "borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: -20}");
  assert_int_equal(r.nvictims, 0);
  q_result_free(&r);
}

/* ---- fair sharing ---------------------------------------------------------------------- */

/* lender L (6) and two borrowers a, b (0) with weights; each head wants 4: one fits. */
static q_result fair_order(fx *f, const char *wa, const char *wb, int pa, int pb) {
  char ea[64], eb[64];
  snprintf(ea, sizeof ea, "fairSharing: {weight: %s}", wa);
  snprintf(eb, sizeof eb, "fairSharing: {weight: %s}", wb);
  f->cfg.fair_sharing = true;
  cq1(f, "L", "c", "f", "cpu", "6", "", "");
  cq1(f, "a", "c", "f", "cpu", "0", "", ea);
  cq1(f, "b", "c", "f", "cpu", "0", "", eb);
  build(f);
  wl(f, "wa", "lq-a", pa, 1, "cpu=4", 1, 0);
  wl(f, "wb", "lq-b", pb, 0, "cpu=4", 1, 0);
  return cycle(f);
}

static const char *fair_winner(fx *f, const char *wa, const char *wb, int pa, int pb) {
  static char key[64];
  q_result r = fair_order(f, wa, wb, pa, pb);
  key[0] = 0;
  for (size_t i = 0; i < r.ndecisions; i++)
    if (r.decisions[i].outcome == Q_ADMITTED)
      snprintf(key, sizeof key, "%s", r.decisions[i].wl->key);
  assert_int_equal(r.ndecisions, 2);
  assert_ptr_equal(r.decisions[0].wl->key, q_tree_admitted(f->t, 0, NULL)->key);
  q_result_free(&r);
  reset(f);
  return key;
}

static void test_fair_sharing_order(void **state) {
  fx *f = *state;
  assert_string_equal(fair_winner(f, "1", "1", 0, 0), "t/wb"); /* equal: earlier first */
  assert_string_equal(fair_winner(f, "1", "1", 5, 0), "t/wa"); /* equal: priority first */
  assert_string_equal(fair_winner(f, "2", "1", 0, 0), "t/wa"); /* lower weighted share */
  assert_string_equal(fair_winner(f, "1", "2", 9, 0), "t/wb"); /* share beats priority */
  assert_string_equal(fair_winner(f, "0", "1", 9, 0), "t/wb"); /* weight 0 borrows last */
  assert_string_equal(fair_winner(f, "0", "0", 9, 0), "t/wa"); /* both 0: share, priority */
}

static void test_fair_share_value(void **state) {
  fx *f = *state;
  q_result r = fair_order(f, "2", "1", 0, 0);
  q_result_free(&r);
  /* a borrows 4 of the 6 the cohort lends: 4000/6 per mille, halved by weight 2 */
  assert_true(q_tree_share(f->t, "a") > 333.3 && q_tree_share(f->t, "a") < 333.4);
  assert_true(q_tree_share(f->t, "L") == 0.0);
}

/* b borrows 8 with four workloads of 2; a wants 6 of its own 10 back: fair sharing takes
 * b's workloads while a's share after admission stays at or below b's. */
static void test_fair_preemption(void **state) {
  fx *f = *state;
  q_result r;
  f->cfg.fair_sharing = true;
  cq1(f, "a", "c", "f", "cpu", "10", "", "preemption: {reclaimWithinCohort: Any}");
  cq1(f, "b", "c", "f", "cpu", "10", "", "");
  build(f);
  for (int i = 0; i < 9; i++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", i);
    admit(f, wl(f, name, NULL, 0, i, "cpu=2", 1, 0), "b", "f");
  }
  wl(f, "new", "lq-a", 0, 100, "cpu=6", 1, 0);
  r = cycle(f);
  assert_int_equal(r.decisions[0].outcome, Q_PREEMPTING);
  assert_int_equal(r.nvictims, 2); /* a has 2 free; 2 more workloads of 2 make 6 */
  /* a stays within its nominal quota (6 of 10): FairSharingPreemptWithinNominal reclaims
   * whatever the shares, as Kueue v0.19 does (its preemption_fair_test "reclaim nominal quota
   * from borrowers"). */
  assert_int_equal(r.victims[0].reason, Q_IN_COHORT_RECLAMATION);
  assert_int_equal(r.victims[1].reason, Q_IN_COHORT_RECLAMATION);
  q_result_free(&r);
  /* Without the gate, the shares decide (rule S2-a): the same two, by fair sharing. */
  reset(f);
  f->cfg.fair_sharing = true;
  f->cfg.preempt_within_nominal = false;
  cq1(f, "a", "c", "f", "cpu", "10", "", "preemption: {reclaimWithinCohort: Any}");
  cq1(f, "b", "c", "f", "cpu", "10", "", "");
  build(f);
  for (int i = 0; i < 9; i++) {
    char name[16];
    snprintf(name, sizeof name, "b%d", i);
    admit(f, wl(f, name, NULL, 0, i, "cpu=2", 1, 0), "b", "f");
  }
  wl(f, "new", "lq-a", 0, 100, "cpu=6", 1, 0);
  r = cycle(f);
  assert_int_equal(r.nvictims, 2);
  assert_int_equal(r.victims[0].reason, Q_IN_COHORT_FAIR_SHARING);
  q_result_free(&r);
}

/* a and b borrow from lender L (10). b holds 6 in one workload; a wants 5. After taking it,
 * b's share (0) would be below a's (500): S2-a refuses, S2-b accepts (500 < 600 before). */
static q_result strategies(fx *f, uint32_t n, q_fs_strategy first) {
  f->cfg.fair_sharing = true;
  f->cfg.nfs_strategies = n;
  f->cfg.fs_strategies[0] = first;
  cq1(f, "L", "c", "f", "cpu", "10", "", "");
  cq1(f, "a", "c", "f", "cpu", "0", "", "preemption: {reclaimWithinCohort: Any}");
  cq1(f, "b", "c", "f", "cpu", "0", "", "");
  build(f);
  admit(f, wl(f, "six", NULL, 0, 0, "cpu=6", 1, 0), "b", "f");
  wl(f, "five", "lq-a", 0, 0, "cpu=5", 1, 0);
  return cycle(f);
}

static void test_fair_strategies(void **state) {
  fx *f = *state;
  q_result r = strategies(f, 1, Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE);
  assert_int_equal(r.nvictims, 0);
  q_result_free(&r);
  reset(f);
  r = strategies(f, 2, Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE); /* the default pair */
  assert_int_equal(r.nvictims, 1);
  assert_string_equal(r.victims[0].wl->key, "t/six");
  assert_int_equal(r.victims[0].reason, Q_IN_COHORT_FAIR_SHARING);
  q_result_free(&r);
  reset(f);
  r = strategies(f, 1, Q_FS_LESS_THAN_INITIAL_SHARE);
  assert_int_equal(r.nvictims, 1);
  q_result_free(&r);
}

/* FairSharingPrioritizeNonBorrowing: a's head uses GPUs within a's nominal quota although a
 * borrows cpu (share 200), b's head would borrow a GPU (share 125): a's head goes first. */
static void test_fair_prioritize_non_borrowing(void **state) {
  fx *f = *state;
  for (int gate = 1; gate >= 0; gate--) {
    q_result r;
    reset(f);
    f->cfg.fair_sharing = true;
    f->cfg.prioritize_non_borrowing = gate;
    cq(f, "L", "c",
       "{coveredResources: [cpu, example.com/gpu], flavors: [{name: f, resources: [{name: cpu, "
       "nominalQuota: 10}, {name: example.com/gpu, nominalQuota: 4}]}]}",
       "");
    cq(f, "a", "c",
       "{coveredResources: [cpu, example.com/gpu], flavors: [{name: f, resources: [{name: cpu, "
       "nominalQuota: 0}, {name: example.com/gpu, nominalQuota: 4}]}]}",
       "");
    cq(f, "b", "c",
       "{coveredResources: [cpu, example.com/gpu], flavors: [{name: f, resources: [{name: cpu, "
       "nominalQuota: 0}, {name: example.com/gpu, nominalQuota: 0}]}]}",
       "");
    build(f);
    admit(f, wl(f, "a-old", NULL, 0, 0, "cpu=2", 1, 0), "a", "f");
    wl(f, "a-head", "lq-a", 0, 10, "example.com/gpu=4", 1, 0);
    wl(f, "b-head", "lq-b", 0, 5, "example.com/gpu=1", 1, 0);
    r = cycle(f);
    assert_int_equal(r.ndecisions, 2);
    assert_string_equal(r.decisions[0].wl->key, gate ? "t/a-head" : "t/b-head");
    q_result_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_within_never),
      T(test_within_lower_priority),
      T(test_within_lower_or_newer_equal),
      T(test_preemptor_keeps_place),
      T(test_victims_minimal),
      T(test_overlapping_targets),
      T(test_reclaim_policies),
      T(test_volcano_reclaimable),
      T(test_kai_tree),
      T(test_queue_name_taken),
      T(test_kai_cycle),
      T(test_borrow_within_cohort),
      T(test_fair_sharing_order),
      T(test_fair_share_value),
      T(test_fair_preemption),
      T(test_fair_strategies),
      T(test_fair_prioritize_non_borrowing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
