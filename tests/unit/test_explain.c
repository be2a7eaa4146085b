/* tests/unit/test_explain.c - the explanation and the estimate on hand-counted cases
 * (tests/data/explain/cluster.yaml says what each pod is for): quota, positions, capacity,
 * devices (tests/data/explain-dra), a gang short of members, gates, a preemption dry run that is
 * the real preemption, and the starts a forward run gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "input/input.h"
#include "dra/dra.h"
#include "queueing/queueing.h"
#include "scheduler/sched.h"
#include "sim/sim.h"

#define FIXTURE "tests/data/explain"

static ts_rc add(void *ud, json_t *obj, const char *file, int line, int index) {
  ts_err e;
  (void)file, (void)line, (void)index;
  ts_err_clear(&e);
  if (model_apply_json(ud, obj, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK)
    fail_msg("%s: %s", FIXTURE, e.text);
  return TS_OK;
}

static void load_error(void *ud, const ts_err *e) {
  (void)ud;
  fail_msg("%s", e->text);
}

static model *load_from(const char *path) {
  model *m = model_new();
  assert_non_null(m);
  assert_int_equal(in_load_path(path, add, load_error, m), TS_OK);
  return m;
}

static model *load(void) {
  return load_from(FIXTURE);
}

static int64_t at(const char *t) {
  int64_t ns;
  assert_int_equal(ts_time_parse(t, &ns), TS_OK);
  return ns;
}

typedef struct fixture {
  model *m;
  sched_config cfg;
  sched_result res;
  sched_state *st;
  sched_explainer *x;
  int64_t now;
} fixture;

static void setup(fixture *f) {
  ts_err e;
  ts_err_clear(&e);
  f->m = load();
  sched_config_default(&f->cfg);
  f->now = at("2026-12-01T12:00:00Z");
  assert_non_null(f->st = sched_state_new());
  assert_int_equal(sched_cycle(f->m, &f->cfg, f->st, f->now, &f->res, &e), TS_OK);
  assert_int_equal(sched_explainer_new(f->m, &f->cfg, &f->res, f->now, &f->x), TS_OK);
}

static void teardown(fixture *f) {
  sched_explainer_free(f->x);
  sched_result_free(&f->res);
  sched_state_free(f->st);
  model_free(f->m);
}

static sched_explanation explain(fixture *f, const char *ns, const char *name) {
  sched_explanation e;
  const model_pod *p = (const model_pod *)model_get(f->m, MODEL_POD, ns, name);
  assert_non_null(p);
  assert_int_equal(sched_explain(f->x, p, &e), TS_OK);
  return e;
}

static int gpu(const model *m) {
  int id = model_resource_id(model_resources_of(m), "nvidia.com/gpu");
  assert_true(id >= 0);
  return id;
}

/* cq-a: nominal 4, run-a holds 2; the cohort all: 8, with run-b's 4 held 6. high (priority
 * 100) is ahead of target, later is behind it (same priority, created after). */
static void test_explain_quota_and_line(void **state) {
  fixture f;
  sched_explanation e;
  (void)state;
  setup(&f);
  e = explain(&f, "team-a", "target");
  assert_int_equal(e.state, SCHED_EXPLAIN_PENDING);
  assert_non_null(e.decision);
  assert_int_equal(e.decision->kind, SCHED_PENDING);
  assert_int_equal(e.decision->why, SCHED_WHY_QUEUED);
  assert_string_equal(e.workload, "pod team-a/target");
  assert_false(e.gang);
  assert_string_equal(e.local_queue, "lq-a");
  assert_string_equal(e.cluster_queue, "cq-a");
  assert_string_equal(e.cohort, "all");
  assert_int_equal(e.pos_cq, 1);
  assert_int_equal(e.pos_lq, 1);
  assert_int_equal(e.pos_cohort, 1);
  assert_int_equal(e.nahead, 1);
  assert_string_equal(e.ahead[0], "pod team-a/high");
  assert_int_equal(e.nquota, 1);
  assert_string_equal(e.quota[0].flavor, "default");
  assert_int_equal(e.quota[0].resource, gpu(f.m));
  /* the quota tree counts thousandths of a GPU */
  assert_int_equal(e.quota[0].request, 4000);
  assert_int_equal(e.quota[0].nominal, 4000);
  assert_int_equal(e.quota[0].usage, 2000);
  assert_int_equal(e.quota[0].borrowable, 0); /* the cohort's 2 free are cq-a's own */
  assert_int_equal(e.quota[0].missing, 2000);
  assert_int_equal(e.nvictims, 0);
  e = explain(&f, "team-a", "later");
  assert_int_equal(e.pos_cq, 2);
  assert_int_equal(e.nahead, 2);
  assert_string_equal(e.ahead[1], "pod team-a/target");
  e = explain(&f, "team-a", "high");
  assert_int_equal(e.pos_cq, 0);
  assert_int_equal(e.nahead, 0);
  teardown(&f);
}

/* urgent (priority 1000) preempts low (priority 0) in cq-c: the explanation names exactly the
 * pods the cycle evicts for it, and no other pod is named for anyone else. cq-c has no
 * cohort: nothing to borrow. */
static void test_explain_preemption_is_the_cycles(void **state) {
  fixture f;
  sched_explanation e;
  size_t evicted = 0;
  (void)state;
  setup(&f);
  for (size_t i = 0; i < f.res.ndecisions; i++)
    if (f.res.decisions[i].kind == SCHED_EVICT) {
      evicted++;
      assert_string_equal(f.res.decisions[i].pod->obj.key, "team-c/low");
      assert_string_equal(f.res.decisions[i].preemptor->obj.key, "team-c/urgent");
    }
  assert_int_equal(evicted, 1);
  e = explain(&f, "team-c", "urgent");
  assert_int_equal(e.nvictims, 1);
  assert_string_equal(e.victims[0]->obj.key, "team-c/low");
  assert_null(e.cohort);
  assert_int_equal(e.pos_cohort, -1);
  assert_int_equal(e.nquota, 1);
  assert_int_equal(e.quota[0].borrowable, -1);
  e = explain(&f, "team-a", "high");
  assert_int_equal(e.nvictims, 0);
  teardown(&f);
}

/* huge asks 16 GPUs, no node has more than 6 free (n2: 8 less low's 2; n1: 8 less 2 and 4). */
static void test_explain_capacity(void **state) {
  fixture f;
  sched_explanation e;
  (void)state;
  setup(&f);
  e = explain(&f, "solo", "huge");
  assert_int_equal(e.decision->why, SCHED_WHY_UNSCHEDULABLE);
  assert_null(e.cluster_queue);
  assert_int_equal(e.pos_cq, -1);
  assert_int_equal(e.nodes, 2);
  assert_int_equal(e.nodes_passing, 2);
  assert_int_equal(e.ncapacity, 1); /* a single pod: a node only */
  assert_null(e.capacity[0].level);
  assert_string_equal(e.capacity[0].domain, "n2");
  assert_int_equal(e.capacity[0].free, 6);
  assert_int_equal(e.capacity[0].demand, 16);
  teardown(&f);
}

/* Devices (tests/data/explain-dra): the node's driver publishes two GPUs; pair's claim takes
 * both, four's claim `quad` asks for four in its request `gpus`: the explanation's decision is
 * Unschedulable and names the claim and the request. */
static void test_explain_devices(void **state) {
  sched_config cfg;
  sched_result res;
  sched_explainer *x;
  sched_explanation e;
  ts_err err;
  model *m = load_from("tests/data/explain-dra");
  const model_pod *four = (const model_pod *)model_get(m, MODEL_POD, "team-a", "four");
  dra_cel *cel = dra_cel_new();
  (void)state;
  ts_err_clear(&err);
  sched_config_default(&cfg);
  cfg.dra_eval = dra_cel_eval, cfg.dra_eval_ctx = cel; /* the DeviceClass's CEL selector */
  assert_int_equal(sched_cycle(m, &cfg, NULL, at("2026-12-01T12:00:00Z"), &res, &err), TS_OK);
  assert_int_equal(sched_explainer_new(m, &cfg, &res, at("2026-12-01T12:00:00Z"), &x), TS_OK);
  assert_int_equal(sched_explain(x, four, &e), TS_OK);
  assert_int_equal(e.state, SCHED_EXPLAIN_PENDING);
  assert_int_equal(e.decision->why, SCHED_WHY_UNSCHEDULABLE);
  assert_non_null(strstr(e.decision->reason, "cannot allocate all claims. claim team-a/quad: "
                                             "request \"gpus\" matches no free device"));
  assert_int_equal(e.nodes_passing, 1);
  for (size_t i = 0; i < res.ndecisions; i++)
    if (!strcmp(res.decisions[i].pod->obj.name, "pair"))
      assert_int_equal(res.decisions[i].kind, SCHED_BIND);
  sched_explainer_free(x);
  sched_result_free(&res);
  model_free(m);
  dra_cel_free(cel);
}

/* Job train wants 3 pods together and 2 exist; gated waits for its gate. */
static void test_explain_gang_and_gates(void **state) {
  fixture f;
  sched_explanation e;
  (void)state;
  setup(&f);
  e = explain(&f, "solo", "train-1");
  assert_int_equal(e.decision->why, SCHED_WHY_GANG);
  assert_true(e.gang);
  assert_string_equal(e.workload, "Job solo/train");
  assert_int_equal(e.min, 3);
  assert_int_equal(e.pending, 2);
  assert_int_equal(e.bound, 0);
  /* a node for one member (1 GPU), then each level for the gang's 2 GPUs, narrowest first */
  assert_int_equal(e.ncapacity, 3);
  assert_int_equal(e.capacity[0].demand, 1);
  assert_string_equal(e.capacity[1].level, "kubernetes.io/hostname");
  assert_int_equal(e.capacity[1].demand, 2);
  assert_string_equal(e.capacity[2].level, "topology.kubernetes.io/zone");
  assert_string_equal(e.capacity[2].domain, "zone-b");
  assert_int_equal(e.capacity[2].free, 6);
  e = explain(&f, "solo", "gated");
  assert_int_equal(e.decision->why, SCHED_WHY_GATED);
  assert_int_equal(e.pod->ngates, 1);
  e = explain(&f, "team-a", "run-a");
  assert_int_equal(e.state, SCHED_EXPLAIN_BOUND);
  teardown(&f);
}

static sim_estimate_result estimate(const char *ns, const char *name) {
  model *m = load();
  sched_config cfg;
  sim_estimate_result r;
  ts_err e;
  ts_err_clear(&e);
  sched_config_default(&cfg);
  assert_int_equal(sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), ns, name, NULL, &r, &e),
                   TS_OK);
  model_free(m);
  return r;
}

/* Forward: run-a ends at 12:30 (started 11:30, expected 1h): high takes cq-a's 4. run-b ends
 * at 13:50 (started 11:50, activeDeadlineSeconds 7200): cq-b's 4 are lent and target starts.
 * urgent starts at once, in the cycle after low leaves. huge never fits; later waits behind
 * target with nothing left that ends. */
static void test_estimate_starts(void **state) {
  sim_estimate_result r;
  (void)state;
  r = estimate("team-a", "target");
  assert_true(r.started);
  assert_int_equal(r.start_ns, at("2026-12-01T13:50:00Z"));
  assert_int_equal(r.known_ends, 2);
  assert_int_equal(r.unknown_ends, 1); /* low */
  assert_int_equal(r.deadline_ends, 1);
  assert_int_equal(r.events, 2);
  r = estimate("team-a", "high");
  assert_true(r.started);
  assert_int_equal(r.start_ns, at("2026-12-01T12:30:00Z"));
  r = estimate("team-c", "urgent");
  assert_true(r.started);
  assert_int_equal(r.start_ns, at("2026-12-01T12:00:00Z"));
  assert_int_equal(r.evictions, 1);
  r = estimate("solo", "huge");
  assert_false(r.started);
  assert_string_equal(r.stop, "nothing left running has a known end");
  r = estimate("team-a", "later");
  assert_false(r.started);
}

/* A horizon short of 13:50 stops before target starts; max_events 1 stops after run-a. */
static void test_estimate_bounds(void **state) {
  model *m = load();
  sched_config cfg;
  sim_estimate_result r;
  sim_estimate_opts o = {.horizon_ns = INT64_C(3600) * 1000000000};
  ts_err e;
  (void)state;
  ts_err_clear(&e);
  sched_config_default(&cfg);
  assert_int_equal(
      sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), "team-a", "target", &o, &r, &e), TS_OK);
  assert_false(r.started);
  assert_string_equal(r.stop, "horizon");
  assert_int_equal(r.events, 1);
  model_free(m);
  m = load();
  o = (sim_estimate_opts){.max_events = 1};
  assert_int_equal(
      sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), "team-a", "target", &o, &r, &e), TS_OK);
  assert_false(r.started);
  assert_string_equal(r.stop, "events");
  model_free(m);
}

/* The pods' nodes and phases and the nodes' used GPUs, as one string. */
static char *fingerprint(const model *m) {
  ts_buf b;
  size_t it = 0, nn;
  model_obj *o;
  model_node *const *nodes = model_nodes(m, &nn);
  ts_buf_init(&b, 1 << 20);
  while (model_next(m, MODEL_POD, &it, &o)) {
    const model_pod *p = (const model_pod *)o;
    ts_buf_printf(&b, "%s@%s:%d/%d;", p->obj.key, p->node_name ? p->node_name : "-", (int)p->phase,
                  (int)p->gpu_index);
  }
  for (size_t i = 0; i < nn; i++)
    ts_buf_printf(&b, "%s=%lld;", nodes[i]->obj.name, (long long)model_node_used(nodes[i], gpu(m)));
  ts_buf_putc(&b, '\0');
  return b.data;
}

/* The forward run gives the model back as it was: the same pods on the same nodes in the same
 * phases, and every later estimate on it the same as on a fresh copy (the live endpoint lends
 * the live model). A budget spent stops the run. */
static void test_estimate_gives_the_model_back(void **state) {
  model *m = load();
  sched_config cfg;
  sim_estimate_result r;
  sim_estimate_opts o = {.budget_s = 1e-9};
  ts_err e;
  char *before, *after;
  (void)state;
  ts_err_clear(&e);
  sched_config_default(&cfg);
  before = fingerprint(m);
  assert_int_equal(
      sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), "team-a", "target", NULL, &r, &e), TS_OK);
  assert_int_equal(r.start_ns, at("2026-12-01T13:50:00Z"));
  after = fingerprint(m);
  assert_string_equal(before, after);
  free(after);
  assert_int_equal(
      sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), "team-c", "urgent", NULL, &r, &e), TS_OK);
  assert_int_equal(r.start_ns, at("2026-12-01T12:00:00Z"));
  assert_int_equal(
      sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), "team-a", "high", NULL, &r, &e), TS_OK);
  assert_int_equal(r.start_ns, at("2026-12-01T12:30:00Z"));
  assert_int_equal(
      sim_estimate(m, &cfg, at("2026-12-01T12:00:00Z"), "team-a", "target", &o, &r, &e), TS_OK);
  assert_false(r.started);
  assert_string_equal(r.stop, "budget");
  after = fingerprint(m);
  assert_string_equal(before, after);
  free(after);
  free(before);
  model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_explain_quota_and_line),
      cmocka_unit_test(test_explain_preemption_is_the_cycles),
      cmocka_unit_test(test_explain_capacity),
      cmocka_unit_test(test_explain_devices),
      cmocka_unit_test(test_explain_gang_and_gates),
      cmocka_unit_test(test_estimate_starts),
      cmocka_unit_test(test_estimate_bounds),
      cmocka_unit_test(test_estimate_gives_the_model_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
