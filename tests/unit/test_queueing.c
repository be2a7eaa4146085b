/* Unit tests of queueing/: quotas with borrowing and lending limits, nested cohorts, flavor
 * assignment and fungibility, taints, partial admission, queueing strategies, namespace
 * selectors, stop policies, the placement and commit hooks, device-class mapping and bad
 * input. Preemption and fair sharing are in test_queueing_preempt.c.
 *
 * Each test builds a small cluster from YAML (the same decoders as the scheduler), queues
 * workloads, runs cycles and asserts on decisions, usage and queues. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/input.h"
#include "config/config.h"
#include "queueing/q_int.h"

/* ---- fixture (also used by test_queueing_preempt.c, which includes this file with
 * TQ_FIXTURE_ONLY defined) ------------------------------------------------------------- */

#define FX   static __attribute__((unused))
#define T(x) cmocka_unit_test_setup_teardown(x, setup, teardown)

typedef struct fx {
  model *m;     /* Kueue objects */
  q_tree *t;    /* built by build() */
  q_queues *qs; /* pending workloads */
  q_config cfg; /* Kueue defaults unless a test changes them */
  ts_arena a;   /* workloads and their pieces */
} fx;

FX void yaml(fx *f, const char *y) {
  in_docs docs = {0};
  ts_err e;
  ts_err_clear(&e);
  if (in_yaml_parse(y, strlen(y), &docs, &e) != TS_OK) fail_msg("yaml: %s\n%s", e.text, y);
  for (size_t i = 0; i < docs.n; i++)
    if (model_apply_json(f->m, docs.v[i].value, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK)
      fail_msg("apply: %s\n%s", e.text, y);
  in_docs_free(&docs);
}

static void fresh(fx *f) {
  memset(f, 0, sizeof *f);
  f->m = model_new();
  q_config_default(&f->cfg);
  ts_arena_init(&f->a, 8192);
  yaml(f, "apiVersion: v1\nkind: Namespace\nmetadata: {name: t, labels: {dep: eng}}\n");
}

static void release(fx *f) {
  q_queues_free(f->qs);
  q_tree_free(f->t);
  model_free(f->m);
  ts_arena_free(&f->a);
}

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  fresh(f);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  release(*state);
  free(*state);
  return 0;
}

FX void reset(fx *f) {
  release(f);
  fresh(f);
}

FX void lq(fx *f, const char *ns, const char *name, const char *cq) {
  char y[512];
  snprintf(y, sizeof y,
           "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {namespace: %s, "
           "name: %s}\nspec: {clusterQueue: %s}\n",
           ns, name, cq);
  yaml(f, y);
}

/* A ClusterQueue with resource groups (flow YAML) and extra spec entries, plus LocalQueue
 * t/lq-NAME pointing to it. */
FX void cq(fx *f, const char *name, const char *cohort, const char *groups, const char *extra) {
  char y[4096], c[128] = "", lqn[64];
  if (cohort) snprintf(c, sizeof c, "cohort: %s, ", cohort);
  snprintf(y, sizeof y,
           "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: %s}\n"
           "spec: {%sresourceGroups: [%s]%s%s%s}\n",
           name, c, groups, strstr(extra, "namespaceSelector") ? "" : ", namespaceSelector: {}",
           *extra ? ", " : "", extra);
  yaml(f, y);
  snprintf(lqn, sizeof lqn, "lq-%s", name);
  lq(f, "t", lqn, name);
}

/* One flavor, one resource: quota entries such as "borrowingLimit: 5". */
FX void cq1(fx *f, const char *name, const char *cohort, const char *flavor, const char *res,
            const char *nominal, const char *quota, const char *extra) {
  char g[512];
  snprintf(g, sizeof g,
           "{coveredResources: [%s], flavors: [{name: %s, resources: [{name: %s, nominalQuota: "
           "%s%s%s}]}]}",
           res, flavor, res, nominal, *quota ? ", " : "", quota);
  cq(f, name, cohort, g, extra);
}

FX void cohort(fx *f, const char *name, const char *parent, const char *groups) {
  char y[2048], p[128] = "", g[1024] = "";
  if (parent) snprintf(p, sizeof p, "parentName: %s", parent);
  if (groups) snprintf(g, sizeof g, "%sresourceGroups: [%s]", parent ? ", " : "", groups);
  snprintf(y, sizeof y,
           "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: %s}\nspec: "
           "{%s%s}\n",
           name, p, g);
  yaml(f, y);
}

/* Creates the flavors f, f1 and f2 unless a test made them already. */
static void ensure_flavors(fx *f) {
  static const char *const names[] = {"f", "f1", "f2"};
  for (size_t i = 0; i < 3; i++) {
    char y[256];
    if (model_get(f->m, MODEL_RESOURCE_FLAVOR, NULL, names[i])) continue;
    snprintf(y, sizeof y,
             "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: %s}\n",
             names[i]);
    yaml(f, y);
  }
}

FX void build(fx *f) {
  ts_err e;
  ensure_flavors(f);
  ts_err_clear(&e);
  if (q_tree_build(f->m, &f->cfg, &f->t, &e) != TS_OK) fail_msg("build: %s", e.text);
  f->qs = q_queues_new();
}

/* Per-pod requests "cpu=2,example.com/gpu=1" as a sorted model_rq list. */
static void parse_requests(fx *f, const char *reqs, q_podset *ps) {
  model_rq *rq = ts_arena_alloc(&f->a, 8 * sizeof *rq);
  uint32_t n = 0;
  for (const char *p = reqs; *p;) {
    const char *eq = strchr(p, '='), *end = strchr(p, ',');
    char name[128], val[64];
    ts_quantity q;
    int64_t v;
    int id;
    uint32_t at;
    if (!end) end = p + strlen(p);
    snprintf(name, sizeof name, "%.*s", (int)(eq - p), p);
    snprintf(val, sizeof val, "%.*s", (int)(end - eq - 1), eq + 1);
    id = model_resource_id(model_resources_of(f->m), name);
    assert_int_equal(ts_quantity_parse(val, &q, NULL), TS_OK);
    assert_int_equal(q_amount(model_resources_of(f->m), id, &q, &v), TS_OK);
    for (at = n; at > 0 && rq[at - 1].id > id; at--) rq[at] = rq[at - 1];
    rq[at] = (model_rq){(uint16_t)id, v};
    n++;
    p = *end ? end + 1 : end;
  }
  ps->requests = rq, ps->nrequests = n;
}

/* A workload with one pod set, not queued. */
FX q_workload *wl_raw(fx *f, const char *ns, const char *name, const char *lqn, int prio,
                      int time_s, const char *reqs, int count, int min) {
  q_workload *w = ts_arena_alloc(&f->a, sizeof *w);
  char *key = ts_arena_alloc(&f->a, 128);
  memset(w, 0, sizeof *w);
  snprintf(key, 128, "%s/%s", ns, name);
  w->ns = ts_intern_cstr(ns), w->name = key + strlen(ns) + 1, w->key = key;
  w->local_queue = lqn ? ts_intern_cstr(lqn) : NULL;
  w->priority = prio;
  w->queue_ns = (int64_t)time_s * 1000000000;
  w->podsets = ts_arena_alloc(&f->a, 4 * sizeof *w->podsets);
  memset(w->podsets, 0, 4 * sizeof *w->podsets);
  w->npodsets = 1;
  w->podsets[0].name = ts_intern_cstr("main");
  w->podsets[0].count = count, w->podsets[0].min_count = min;
  parse_requests(f, reqs, &w->podsets[0]);
  return w;
}

/* A workload of namespace ns, queued when lqn is not NULL. */
FX q_workload *wl_ns(fx *f, const char *ns, const char *name, const char *lqn, int prio, int time_s,
                     const char *reqs, int count, int min) {
  q_workload *w = wl_raw(f, ns, name, lqn, prio, time_s, reqs, count, min);
  q_queued how;
  if (lqn) {
    assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_OK);
    assert_int_equal(how, Q_QUEUED);
  }
  return w;
}

FX q_workload *wl(fx *f, const char *name, const char *lqn, int prio, int time_s, const char *reqs,
                  int count, int min) {
  return wl_ns(f, "t", name, lqn, prio, time_s, reqs, count, min);
}

FX void add_podset(fx *f, q_workload *w, const char *name, const char *reqs, int count, int min) {
  q_podset *ps = &w->podsets[w->npodsets++];
  ps->name = ts_intern_cstr(name), ps->count = count, ps->min_count = min;
  parse_requests(f, reqs, ps);
}

/* Every requested resource of every pod set on one flavor, full counts. */
FX void set_admission(fx *f, q_workload *w, const char *cqn, const char *flavor) {
  q_admission *a = ts_arena_alloc(&f->a, sizeof *a);
  a->cluster_queue = ts_intern_cstr(cqn);
  a->npodsets = w->npodsets;
  a->podsets = ts_arena_alloc(&f->a, w->npodsets * sizeof *a->podsets);
  for (uint32_t i = 0; i < w->npodsets; i++) {
    q_psa *p = &a->podsets[i];
    p->name = w->podsets[i].name, p->count = w->podsets[i].count, p->mode = Q_FIT;
    p->nrf = w->podsets[i].nrequests;
    p->rf = ts_arena_alloc(&f->a, (p->nrf + 1) * sizeof *p->rf);
    for (uint32_t k = 0; k < p->nrf; k++)
      p->rf[k] = (q_rflavor){w->podsets[i].requests[k].id, ts_intern_cstr(flavor),
                             w->podsets[i].requests[k].v * p->count, Q_FIT};
  }
  w->admission = a;
}

FX void admit(fx *f, q_workload *w, const char *cqn, const char *flavor) {
  ts_err e;
  ts_err_clear(&e);
  set_admission(f, w, cqn, flavor);
  if (q_tree_admit(f->t, w, &e) != TS_OK) fail_msg("admit: %s", e.text);
}

FX q_result cycle_hooks(fx *f, const q_hooks *h) {
  q_result r;
  ts_err e;
  ts_err_clear(&e);
  if (q_cycle(f->t, f->qs, &f->cfg, h, 1000, &r, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  return r;
}

FX q_result cycle(fx *f) {
  return cycle_hooks(f, NULL);
}

FX const q_decision *dec(const q_result *r, const q_workload *w) {
  for (size_t i = 0; i < r->ndecisions; i++)
    if (r->decisions[i].wl == w) return &r->decisions[i];
  fail_msg("no decision for %s", w->key);
  return NULL;
}

FX size_t active_count(fx *f, const char *cqn) {
  q_workload *const *v;
  return q_queues_active(f->qs, cqn, &v);
}

FX size_t parked_count(fx *f, const char *cqn) {
  q_workload *const *v;
  return q_queues_parked(f->qs, cqn, &v);
}

/* A KAI Queue: gpu is its resources.gpu entry (flow YAML); cpu and memory unlimited. */
FX void kai_queue(fx *f, const char *name, const char *parent, const char *gpu) {
  char y[512];
  snprintf(y, sizeof y,
           "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: %s}\nspec:\n%s%s%s"
           "  resources: {gpu: %s, cpu: {quota: -1, limit: -1}, memory: {quota: -1, limit: -1}}\n",
           name, parent ? "  parentQueue: " : "", parent ? parent : "", parent ? "\n" : "", gpu);
  yaml(f, y);
}

#ifndef TQ_FIXTURE_ONLY

/* ---- quota tree ------------------------------------------------------------------------ */

static void test_borrowing_limit(void **state) {
  fx *f = *state;
  q_usage u;
  q_workload *big, *ok;
  q_result r;
  cq1(f, "a", "c", "f", "cpu", "10", "borrowingLimit: 5", "");
  cq1(f, "b", "c", "f", "cpu", "10", "", "");
  build(f);
  assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.potential, 15000); /* 10 own + 5 borrowed, in millicores */
  assert_int_equal(u.available, 15000);
  big = wl(f, "big", "lq-a", 0, 0, "cpu=16", 1, 0);
  ok = wl(f, "ok", "lq-a", 0, 1, "cpu=15", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, big)->outcome, Q_PENDING);
  assert_non_null(strstr(dec(&r, big)->reason, "maximum capacity (15)"));
  q_result_free(&r);
  q_queues_remove(f->qs, big->key);
  r = cycle(f);
  assert_int_equal(dec(&r, ok)->outcome, Q_ADMITTED);
  q_result_free(&r);
  assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.usage, 15000);
  assert_int_equal(u.borrowed, 5000);
  assert_int_equal(q_tree_usage(f->t, "b", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.available, 5000);
}

static void test_lending_limit(void **state) {
  fx *f = *state;
  q_usage u;
  q_workload *w;
  q_result r;
  cq1(f, "a", "c", "f", "cpu", "10", "lendingLimit: 4", "");
  cq1(f, "b", "c", "f", "cpu", "0", "", "");
  build(f);
  assert_int_equal(q_tree_usage(f->t, "b", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.potential, 4000); /* only what a lends */
  w = wl(f, "w", "lq-b", 0, 0, "cpu=5", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  q_result_free(&r);
  q_queues_remove(f->qs, w->key);
  w = wl(f, "w4", "lq-b", 0, 0, "cpu=4", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  q_result_free(&r);
  assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.available, 6000); /* its guaranteed part is untouched */
  assert_int_equal(u.potential, 10000);
  q_tree_remove(f->t, w->key);
  assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.available, 10000);
}

/* root (own quota 10) > child (x 5, y 5) and z (0) directly under root: x borrows from its
 * closer cohort, so it goes first although z has a higher priority and is older. */
/* Two queues of a cohort whose nominal quotas add up past int64: the cohort's capacity
 * saturates ("unlimited") instead of wrapping negative, so a workload of one cpu is admitted. */
static void test_cohort_capacity_saturates(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r;
  cq1(f, "a", "c", "f", "cpu", "9223372036854775807m", "", "");
  cq1(f, "b", "c", "f", "cpu", "9223372036854775807m", "", "");
  build(f);
  w = wl(f, "w", "lq-a", 0, 0, "cpu=1", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  q_result_free(&r);
}

static void test_nested_cohorts(void **state) {
  fx *f = *state;
  q_workload *x, *z;
  q_result r;
  q_usage u;
  cohort(f, "root", NULL,
         "{coveredResources: [cpu], flavors: [{name: f, resources: [{name: "
         "cpu, nominalQuota: 10}]}]}");
  cohort(f, "child", "root", NULL);
  cq1(f, "x", "child", "f", "cpu", "5", "", "");
  cq1(f, "y", "child", "f", "cpu", "5", "", "");
  cq1(f, "z", "root", "f", "cpu", "0", "", "");
  build(f);
  assert_int_equal(q_tree_check(f->t, NULL), TS_OK);
  assert_int_equal(q_tree_usage(f->t, "z", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.potential, 20000);
  x = wl(f, "x1", "lq-x", 0, 10, "cpu=8", 1, 0);
  z = wl(f, "z1", "lq-z", 100, 0, "cpu=13", 1, 0);
  r = cycle(f);
  assert_ptr_equal(r.decisions[0].wl, x);
  assert_int_equal(dec(&r, x)->outcome, Q_ADMITTED);
  assert_int_equal(dec(&r, z)->outcome, Q_PENDING);
  assert_string_equal(dec(&r, z)->reason,
                      "Workload no longer fits after processing another workload");
  q_result_free(&r);
}

/* ---- flavor assignment ----------------------------------------------------------------- */

static const char *two_flavors = "{coveredResources: [cpu], flavors: [{name: f1, resources: "
                                 "[{name: cpu, nominalQuota: 5}]}, {name: f2, resources: [{name: "
                                 "cpu, nominalQuota: 10}]}]}";

static const char *fungible(fx *f, const char *fungibility) {
  q_workload *w;
  q_result r;
  static char flavor[16];
  cq(f, "a", "c", two_flavors, fungibility);
  cq1(f, "b", "c", "f1", "cpu", "10", "", "");
  build(f);
  w = wl(f, "w", "lq-a", 0, 0, "cpu=8", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  snprintf(flavor, sizeof flavor, "%s", dec(&r, w)->admission.podsets[0].rf[0].flavor);
  q_result_free(&r);
  return flavor;
}

static void test_fungibility_borrow_stop(void **state) {
  assert_string_equal(fungible(*state, ""), "f1"); /* MayStopSearch: borrow on f1 */
}

static void test_fungibility_borrow_next(void **state) {
  assert_string_equal(fungible(*state, "flavorFungibility: {whenCanBorrow: TryNextFlavor}"), "f2");
}

/* One queue: f1 is full of a lower-priority workload, f2 is free. */
static q_result fungible_preempt(fx *f, const char *fungibility, q_workload **w) {
  char extra[256];
  snprintf(extra, sizeof extra, "preemption: {withinClusterQueue: LowerPriority}, %s", fungibility);
  cq(f, "a", NULL,
     "{coveredResources: [cpu], flavors: [{name: f1, resources: [{name: cpu, nominalQuota: "
     "10}]}, {name: f2, resources: [{name: cpu, nominalQuota: 10}]}]}",
     extra);
  build(f);
  admit(f, wl(f, "low", NULL, 0, 0, "cpu=10", 1, 0), "a", "f1");
  *w = wl(f, "high", "lq-a", 10, 0, "cpu=5", 1, 0);
  return cycle(f);
}

static void test_fungibility_preempt(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r = fungible_preempt(f, "flavorFungibility: {whenCanPreempt: MayStopSearch}", &w);
  assert_int_equal(dec(&r, w)->outcome, Q_PREEMPTING);
  assert_int_equal(r.nvictims, 1);
  assert_string_equal(r.victims[0].wl->key, "t/low");
  q_result_free(&r);
  reset(f);
  r = fungible_preempt(f, "flavorFungibility: {whenCanPreempt: TryNextFlavor}", &w);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  assert_string_equal(dec(&r, w)->admission.podsets[0].rf[0].flavor, "f2");
  assert_int_equal(r.nvictims, 0);
  q_result_free(&r);
}

static void test_flavor_taints(void **state) {
  fx *f = *state;
  q_workload *plain, *tol;
  q_result r;
  static const model_toleration t = {NULL, false, NULL, MODEL_EFFECT_NO_SCHEDULE};
  model_toleration *tp;
  yaml(f, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f1}\n"
          "spec: {nodeTaints: [{key: gpu, value: a100, effect: NoSchedule}]}\n");
  cq(f, "a", NULL, two_flavors, "");
  build(f);
  plain = wl(f, "plain", "lq-a", 0, 0, "cpu=1", 1, 0);
  tol = wl_raw(f, "t", "tol", "lq-a", 0, 0, "cpu=1", 1, 0);
  tp = ts_arena_alloc(&f->a, sizeof *tp);
  *tp = t;
  tp->key = ts_intern_cstr("gpu"), tp->value = ts_intern_cstr("a100");
  tol->podsets[0].tolerations = tp, tol->podsets[0].ntolerations = 1;
  r = cycle(f);
  assert_string_equal(dec(&r, plain)->admission.podsets[0].rf[0].flavor, "f2");
  q_result_free(&r);
  assert_int_equal(q_queues_add(f->qs, f->t, tol, NULL), TS_OK);
  r = cycle(f);
  assert_string_equal(dec(&r, tol)->admission.podsets[0].rf[0].flavor, "f1");
  q_result_free(&r);
}

static void test_pods_resource(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r;
  cq(f, "a", NULL,
     "{coveredResources: [cpu, pods], flavors: [{name: f, resources: [{name: cpu, "
     "nominalQuota: 100}, {name: pods, nominalQuota: 3}]}]}",
     "");
  build(f);
  w = wl(f, "w", "lq-a", 0, 0, "cpu=1", 4, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  assert_non_null(strstr(dec(&r, w)->reason, "insufficient quota for pods in flavor f"));
  q_result_free(&r);
}

static void test_partial_admission(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r;
  const q_admission *a;
  cq1(f, "a", NULL, "f", "cpu", "8", "", "");
  build(f);
  w = wl(f, "w", "lq-a", 0, 0, "cpu=2", 4, 2);
  add_podset(f, w, "small", "cpu=1", 4, 1);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  a = &dec(&r, w)->admission;
  assert_int_equal(a->podsets[0].count, 3); /* 3 x 2 + 2 x 1 = 8 */
  assert_int_equal(a->podsets[1].count, 2);
  assert_int_equal(a->podsets[0].rf[0].total, 6000);
  q_result_free(&r);
}

static void test_partial_admission_gate_off(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r;
  cq1(f, "a", NULL, "f", "cpu", "8", "", "");
  build(f);
  f->cfg.partial_admission = false;
  w = wl(f, "w", "lq-a", 0, 0, "cpu=2", 4, 2);
  add_podset(f, w, "small", "cpu=1", 4, 1);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  q_result_free(&r);
}

/* ---- queueing -------------------------------------------------------------------------- */

static void strategy_setup(fx *f, const char *strategy, q_workload **big, q_workload **small) {
  char extra[64];
  snprintf(extra, sizeof extra, "queueingStrategy: %s", strategy);
  cq1(f, "a", NULL, "f", "cpu", "10", "", extra);
  build(f);
  admit(f, wl(f, "running", NULL, 0, 0, "cpu=8", 1, 0), "a", "f");
  *big = wl(f, "big", "lq-a", 10, 0, "cpu=5", 1, 0);
  *small = wl(f, "small", "lq-a", 0, 1, "cpu=2", 1, 0);
}

static void test_strict_fifo(void **state) {
  fx *f = *state;
  q_workload *big, *small;
  q_result r;
  strategy_setup(f, "StrictFIFO", &big, &small);
  for (int i = 0; i < 2; i++) {
    r = cycle(f);
    assert_int_equal(r.ndecisions, 1);
    assert_ptr_equal(r.decisions[0].wl, big); /* the head blocks the queue */
    assert_false(r.decisions[0].parked);
    q_result_free(&r);
  }
  assert_int_equal(active_count(f, "a"), 2);
  assert_null(q_tree_admission(f->t, small->key));
}

static void test_best_effort_fifo(void **state) {
  fx *f = *state;
  q_workload *big, *small;
  q_result r;
  strategy_setup(f, "BestEffortFIFO", &big, &small);
  r = cycle(f);
  assert_ptr_equal(r.decisions[0].wl, big);
  assert_true(r.decisions[0].parked);
  q_result_free(&r);
  r = cycle(f);
  assert_int_equal(dec(&r, small)->outcome, Q_ADMITTED);
  q_result_free(&r);
  assert_int_equal(parked_count(f, "a"), 1);
  q_tree_remove(f->t, "t/running");
  q_queues_wake(f->qs, f->t, "a");
  assert_int_equal(parked_count(f, "a"), 0);
  r = cycle(f);
  assert_int_equal(dec(&r, big)->outcome, Q_ADMITTED);
  q_result_free(&r);
}

static void test_namespace_selector(void **state) {
  fx *f = *state;
  q_workload *w;
  q_result r;
  yaml(f, "apiVersion: v1\nkind: Namespace\nmetadata: {name: sales, labels: {dep: sales}}\n");
  cq1(f, "a", NULL, "f", "cpu", "10", "",
      "queueingStrategy: StrictFIFO, namespaceSelector: {matchLabels: {dep: eng}}");
  lq(f, "sales", "main", "a");
  build(f);
  w = wl_ns(f, "sales", "w", "main", 0, 0, "cpu=1", 1, 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_INADMISSIBLE);
  assert_true(dec(&r, w)->parked); /* parked even under StrictFIFO */
  assert_non_null(strstr(dec(&r, w)->reason, "namespace sales is not selected"));
  q_result_free(&r);
  assert_int_equal(parked_count(f, "a"), 1);
}

static void test_stop_policy(void **state) {
  fx *f = *state;
  q_workload *w, *h;
  q_result r;
  const char *const *p, *why;
  size_t np;
  q_queued how;
  cq1(f, "a", NULL, "f", "cpu", "10", "", "stopPolicy: Hold");
  cq1(f, "b", NULL, "f", "cpu", "10", "", "");
  yaml(f, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {namespace: t, "
          "name: held}\nspec: {clusterQueue: b, stopPolicy: Hold}\n");
  yaml(f, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {namespace: t, "
          "name: held-nowhere}\nspec: {clusterQueue: ghost, stopPolicy: Hold}\n");
  cq1(f, "c", NULL, "nope", "cpu", "10", "", "stopPolicy: HoldAndDrain");
  build(f);
  /* Kueue says Stopped first, whatever else is wrong (inactiveReason's order), for a
   * ClusterQueue and a LocalQueue alike */
  assert_string_equal(q_tree_cq_inactive(f->t, "c", &why), "Stopped");
  assert_non_null(strstr(why, "spec.stopPolicy: HoldAndDrain: the queue is stopped; "));
  assert_non_null(strstr(why, "nope"));
  {
    ts_arena a;
    q_report rep;
    ts_arena_init(&a, 0);
    assert_int_equal(q_report_build(f->t, f->qs, &a, &rep), TS_OK);
    for (size_t i = 0; i < rep.nlqs; i++)
      if (!strcmp(rep.lqs[i].name, "held-nowhere") || !strcmp(rep.lqs[i].name, "held"))
        assert_string_equal(rep.lqs[i].inactive, "Stopped");
      else if (!strcmp(rep.lqs[i].name, "lq-c"))
        assert_string_equal(rep.lqs[i].inactive, "ClusterQueueIsInactive");
    ts_arena_free(&a);
  }
  np = q_tree_problems(f->t, &p); /* stopping a queue is a choice, not a problem */
  assert_int_equal(np, 2);        /* the missing flavor and the missing ClusterQueue are */
  assert_false(q_tree_cq_active(f->t, "a"));
  assert_string_equal(q_tree_cq_inactive(f->t, "a", &why), "Stopped");
  assert_string_equal(why, "spec.stopPolicy: Hold: the queue is stopped");
  w = wl(f, "w", "lq-a", 0, 0, "cpu=1", 1, 0);
  r = cycle(f);
  assert_int_equal(r.ndecisions, 0); /* a stopped queue has no head */
  q_result_free(&r);
  assert_int_equal(active_count(f, "a"), 1);
  h = wl_raw(f, "t", "h", "held", 0, 0, "cpu=1", 1, 0);
  assert_int_equal(q_queues_add(f->qs, f->t, h, &how), TS_OK);
  assert_int_equal(how, Q_HELD);
  (void)w;
}

static void test_missing_queues_then_sync(void **state) {
  fx *f = *state;
  q_workload *w;
  q_queued how;
  q_tree *t2;
  cq1(f, "a", NULL, "f", "cpu", "10", "", "");
  lq(f, "t", "orphan", "nope");
  build(f);
  w = wl_raw(f, "t", "w", "later", 0, 0, "cpu=1", 1, 0);
  assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_OK);
  assert_int_equal(how, Q_NO_LOCAL_QUEUE);
  w = wl_raw(f, "t", "o", "orphan", 0, 0, "cpu=1", 1, 0);
  assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_OK);
  assert_int_equal(how, Q_NO_CLUSTER_QUEUE);
  assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_EEXIST);
  lq(f, "t", "later", "a");
  assert_int_equal(q_tree_build(f->m, NULL, &t2, NULL), TS_OK);
  q_tree_free(f->t);
  f->t = t2;
  assert_int_equal(q_queues_sync(f->qs, f->t), TS_OK);
  assert_int_equal(active_count(f, "a"), 1);
}

/* ---- hooks ----------------------------------------------------------------------------- */

typedef struct veto {
  const char *refuse; /* flavor to veto, "*" for all */
  int calls;          /* placeable calls */
  q_mode mode;        /* mode of the last call */
  int32_t count;      /* count of the last call */
  bool commit_ok;     /* what commit answers */
  int commits;        /* commit calls */
} veto;

static bool placeable(void *ctx, const q_candidate *c, char *why, size_t cap) {
  veto *v = ctx;
  v->calls++, v->mode = c->mode, v->count = c->count;
  if (strcmp(v->refuse, "*") && strcmp(v->refuse, c->flavor)) return true;
  snprintf(why, cap, "no node with 8 free GPUs");
  return false;
}

static bool commit(void *ctx, const q_workload *wl, const q_admission *a, char *why, size_t cap) {
  veto *v = ctx;
  (void)wl, (void)a;
  v->commits++;
  if (!v->commit_ok) snprintf(why, cap, "gpu-3 was taken");
  return v->commit_ok;
}

static void test_veto_hook(void **state) {
  fx *f = *state;
  veto v = {"f1", 0, Q_NO_FIT, 0, true, 0};
  q_hooks h = {placeable, commit, &v};
  q_workload *w;
  q_result r;
  cq(f, "a", NULL, two_flavors, "");
  build(f);
  w = wl(f, "w", "lq-a", 0, 0, "cpu=2", 2, 0);
  r = cycle_hooks(f, &h);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  assert_string_equal(dec(&r, w)->admission.podsets[0].rf[0].flavor, "f2");
  assert_int_equal(v.calls, 2);
  assert_int_equal(v.mode, Q_FIT);
  assert_int_equal(v.count, 2);
  assert_int_equal(v.commits, 1);
  q_result_free(&r);
  v.refuse = "*";
  w = wl(f, "w2", "lq-a", 0, 0, "cpu=2", 1, 0);
  r = cycle_hooks(f, &h);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  assert_non_null(strstr(dec(&r, w)->reason, "flavor f1: no node with 8 free GPUs"));
  assert_non_null(strstr(dec(&r, w)->reason, "flavor f2: no node with 8 free GPUs"));
  q_result_free(&r);
}

static void test_commit_refused(void **state) {
  fx *f = *state;
  veto v = {"", 0, Q_NO_FIT, 0, false, 0};
  q_hooks h = {NULL, commit, &v};
  q_workload *w;
  q_result r;
  q_usage u;
  cq1(f, "a", NULL, "f", "cpu", "10", "", "");
  build(f);
  w = wl(f, "w", "lq-a", 0, 0, "cpu=2", 1, 0);
  r = cycle_hooks(f, &h);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  assert_string_equal(dec(&r, w)->reason, "Workload cannot be placed: gpu-3 was taken");
  assert_false(dec(&r, w)->parked);
  q_result_free(&r);
  assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &u), TS_OK);
  assert_int_equal(u.usage, 0);
  assert_null(q_tree_admission(f->t, w->key));
  assert_int_equal(active_count(f, "a"), 1);
}

/* ---- Kueue's LastAssignment: the flavor search resumes where it stopped ------------------ */

/* Flavors f1 {pool: a} (cpu 4) and f2 {pool: b} (cpu 8) in queue a; W has pod set p0
 * (cpu 4, any pool) and p1 (cpu 4, pool a only). */
static q_workload *resume_setup(fx *f) {
  static model_kv sel;
  static model_labels pool_a;
  q_workload *w;
  yaml(f, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: f1}\n"
          "spec: {nodeLabels: {pool: a}}\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: "
          "ResourceFlavor\nmetadata: {name: f2}\nspec: {nodeLabels: {pool: b}}\n");
  cq(f, "a", NULL,
     "{coveredResources: [cpu], flavors: [{name: f1, resources: [{name: cpu, nominalQuota: 4}]}, "
     "{name: f2, resources: [{name: cpu, nominalQuota: 8}]}]}",
     "");
  build(f);
  sel = (model_kv){ts_intern_cstr("pool"), ts_intern_cstr("a")};
  pool_a = (model_labels){&sel, 1};
  w = wl_raw(f, "t", "w", "lq-a", 0, 0, "cpu=4", 1, 0);
  w->podsets[0].name = ts_intern_cstr("p0");
  add_podset(f, w, "p1", "cpu=4", 1, 0);
  w->podsets[1].node_selector = &pool_a;
  return w;
}

static void queue(fx *f, q_workload *w) {
  q_queued how;
  assert_int_equal(q_queues_add(f->qs, f->t, w, &how), TS_OK);
  assert_int_equal(how, Q_QUEUED);
}

/* p0 stops on f1 (it fits there), which leaves p1 nothing: NoFit, but with a flavor left to
 * try the workload stays active (not parked, although BestEffortFIFO parks a NoFit), and the
 * next cycle puts p0 on f2 and p1 on f1. Kueue does the same; a search that always started
 * over would park the workload for good. */
static void test_last_assignment_resumes(void **state) {
  fx *f = *state;
  q_workload *w = resume_setup(f);
  q_result r;
  queue(f, w);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  assert_non_null(strstr(dec(&r, w)->reason, "pod set p1"));
  assert_false(dec(&r, w)->parked);
  q_result_free(&r);
  assert_int_equal(active_count(f, "a"), 1);
  assert_int_equal(parked_count(f, "a"), 0);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
  assert_string_equal(dec(&r, w)->admission.podsets[0].rf[0].flavor, "f2");
  assert_string_equal(dec(&r, w)->admission.podsets[1].rf[0].flavor, "f1");
  q_result_free(&r);
}

/* The progress survives queues and trees rebuilt between cycles when the caller lends one
 * memo (as the scheduler does); a workload that left the queues loses its record. */
static void test_last_assignment_rebuilt(void **state) {
  fx *f = *state;
  q_memo *mm = q_memo_new();
  q_workload *w = resume_setup(f);
  q_result r;
  ts_err e;
  q_queues_set_memo(f->qs, mm);
  queue(f, w);
  r = cycle(f);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  q_result_free(&r);
  for (int round = 0; round < 2; round++) {
    q_queues_free(f->qs);
    q_tree_free(f->t);
    ts_err_clear(&e);
    assert_int_equal(q_tree_build(f->m, NULL, &f->t, &e), TS_OK);
    f->qs = q_queues_new();
    q_queues_set_memo(f->qs, mm);
    if (round == 0) { /* w is not queued in this cycle: its record goes */
      r = cycle(f);
      assert_int_equal(r.ndecisions, 0);
      q_result_free(&r);
      continue;
    }
    queue(f, w);
    r = cycle(f);
    assert_int_equal(dec(&r, w)->outcome, Q_PENDING); /* started over: p0 on f1 again */
    q_result_free(&r);
    q_queues_free(f->qs);
    q_tree_free(f->t);
    assert_int_equal(q_tree_build(f->m, NULL, &f->t, &e), TS_OK);
    f->qs = q_queues_new();
    q_queues_set_memo(f->qs, mm);
    queue(f, w);
    r = cycle(f); /* resumed on the new tree and queues */
    assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
    assert_string_equal(dec(&r, w)->admission.podsets[0].rf[0].flavor, "f2");
    q_result_free(&r);
  }
  q_queues_set_memo(f->qs, NULL);
  q_memo_free(mm);
}

/* A commit hook that refuses workload t/w on flavor f1 (its nodes were taken meanwhile). */
static bool commit_not_f1(void *ctx, const q_workload *wl, const q_admission *a, char *why,
                          size_t cap) {
  (void)ctx;
  if (strcmp(wl->key, "t/w") || strcmp(a->podsets[0].rf[0].flavor, "f1")) return true;
  snprintf(why, cap, "the nodes of f1 were taken");
  return false;
}

/* W fits on f1 (its first flavor) but is skipped there; the next attempt resumes at f2 when
 * it comes in the next cycle, or later while the queue's generation has not moved. After an
 * admitted workload left the queue and more than one cycle passed, it starts over at f1. */
static void skipped_then(fx *f, bool remove_one, const char *want_flavor) {
  q_hooks h = {NULL, commit_not_f1, NULL};
  q_workload *w, *x, *old;
  q_result r;
  cq(f, "a", NULL, two_flavors, "");
  build(f);
  old = wl(f, "old", NULL, 0, 0, "cpu=1", 1, 0);
  admit(f, old, "a", "f2");
  w = wl(f, "w", "lq-a", 0, 0, "cpu=2", 1, 0);
  r = cycle_hooks(f, &h);
  assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  assert_string_equal(dec(&r, w)->reason, "Workload cannot be placed: the nodes of f1 were taken");
  q_result_free(&r);
  if (remove_one) assert_int_equal(q_tree_remove(f->t, old->key), TS_OK);
  x = wl(f, "x", "lq-a", 10, 0, "cpu=1", 1, 0); /* ahead of w: w waits one cycle */
  r = cycle_hooks(f, &h);
  assert_int_equal(dec(&r, x)->outcome, Q_ADMITTED);
  q_result_free(&r);
  r = cycle_hooks(f, &h);
  if (want_flavor) {
    assert_int_equal(dec(&r, w)->outcome, Q_ADMITTED);
    assert_string_equal(dec(&r, w)->admission.podsets[0].rf[0].flavor, want_flavor);
  } else {
    assert_int_equal(dec(&r, w)->outcome, Q_PENDING);
  }
  q_result_free(&r);
}

static void test_last_assignment_skipped(void **state) {
  skipped_then(*state, false, "f2");
}

static void test_last_assignment_outdated(void **state) {
  skipped_then(*state, true, NULL);
}

/* ---- device classes -------------------------------------------------------------------- */

static void test_device_classes(void **state) {
  q_devmap m = {0};
  ts_err e;
  int64_t out[Q_DEVMAP_MAX_RESOURCES] = {0};
  const int gpu = 0; /* the first quota resource mapped */
  q_device_request whole[] = {{ts_intern_cstr("gpu.nvidia.com"), 2}};
  q_device_request mig[] = {{ts_intern_cstr("mig-1g.nvidia.com"), 3},
                            {ts_intern_cstr("mig-1g.nvidia.com"), 4}};
  q_device_request bad[] = {{ts_intern_cstr("fpga.example.com"), 1}};
  (void)state;
  ts_err_clear(&e);
  assert_int_equal(q_devmap_add(&m, "gpu.nvidia.com", "nvidia.com/gpu", "1", &e), TS_OK);
  assert_int_equal(q_devmap_add(&m, "mig-1g.nvidia.com", "nvidia.com/gpu", "0.125", &e), TS_OK);
  assert_int_equal(q_devmap_add(&m, "gpu.nvidia.com", "nvidia.com/gpu", "1", &e), TS_EINVAL);
  assert_string_equal(e.text, "deviceClassMappings[gpu.nvidia.com]: mapped more than once");
  assert_int_equal(q_devmap_add(&m, "x.example.com", "nvidia.com/gpu", "0", &e), TS_EINVAL);
  assert_string_equal(e.text, "deviceClassMappings[x.example.com].weight: must be greater than 0");
  assert_int_equal(q_devmap_quota(&m, whole, 1, out, &e), TS_OK);
  assert_int_equal(out[gpu], 2000); /* nvidia.com/gpu in thousandths (q_amount) */
  /* 7 slices x 1/8 = 0.875 GPU of quota, exactly */
  assert_int_equal(q_devmap_quota(&m, mig, 2, out, &e), TS_OK);
  assert_int_equal(out[gpu], 2875);
  assert_int_equal(q_devmap_quota(&m, bad, 1, out, &e), TS_ENOTFOUND);
  assert_non_null(strstr(e.text, "DeviceClass fpga.example.com: not mapped"));
  assert_int_equal(out[gpu], 2875);
  q_devmap_free(&m);
}

static void test_device_claim(void **state) {
  fx *f = *state;
  q_devmap m = {0};
  ts_err e;
  int64_t out[Q_DEVMAP_MAX_RESOURCES] = {0};
  const model_claim *c;
  ts_err_clear(&e);
  assert_int_equal(q_devmap_add(&m, "gpu.nvidia.com", "nvidia.com/gpu", NULL, &e), TS_OK);
  yaml(f, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {namespace: t, "
          "name: c}\nspec: {devices: {requests: [{name: g, exactly: {deviceClassName: "
          "gpu.nvidia.com, count: 4}}, {name: any, firstAvailable: [{name: big, "
          "deviceClassName: gpu.nvidia.com, count: 2}, {name: small, deviceClassName: "
          "mig.nvidia.com}]}]}}\n");
  c = (const model_claim *)model_get(f->m, MODEL_RESOURCE_CLAIM, "t", "c");
  assert_non_null(c);
  assert_int_equal(q_devmap_claim(&m, &c->spec, out, &e), TS_OK);
  assert_int_equal(m.nres, 1);
  assert_string_equal(m.res[0], "nvidia.com/gpu");
  assert_int_equal(out[0], 6000);
  q_devmap_free(&m);
}

/* ---- bad input ------------------------------------------------------------------------- */

static void test_cohort_cycle(void **state) {
  fx *f = *state;
  ts_err e;
  const char *const *p;
  size_t np;
  cohort(f, "a", "b", NULL);
  cohort(f, "b", "a", NULL);
  cq1(f, "x", "a", "f", "cpu", "10", "", "");
  cq1(f, "y", NULL, "f", "cpu", "10", "", "");
  build(f);
  ts_err_clear(&e);
  assert_int_equal(q_tree_check(f->t, &e), TS_EINVAL);
  assert_string_equal(e.text, "Cohort a: spec.parentName: cycle a -> b -> a");
  np = q_tree_problems(f->t, &p);
  assert_int_equal(np, 2);
  assert_string_equal(p[1], "ClusterQueue x: spec.cohort: cohort \"a\" is in or under a cycle");
  assert_false(q_tree_cq_active(f->t, "x"));
  assert_true(q_tree_cq_active(f->t, "y")); /* everything else keeps working */
}

static void test_missing_flavor(void **state) {
  fx *f = *state;
  ts_err e;
  cq(f, "a", NULL,
     "{coveredResources: [cpu], flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1}]}, "
     "{name: nope, resources: [{name: cpu, nominalQuota: 1}]}]}",
     "");
  build(f);
  ts_err_clear(&e);
  assert_int_equal(q_tree_check(f->t, &e), TS_EINVAL);
  assert_string_equal(e.text, "ClusterQueue a: spec.resourceGroups[0].flavors[1].name: "
                              "ResourceFlavor \"nope\" not found");
  assert_false(q_tree_cq_active(f->t, "a"));
}

static void test_admit_errors(void **state) {
  fx *f = *state;
  ts_err e;
  q_workload *w;
  cq1(f, "a", NULL, "f", "cpu", "10", "", "");
  build(f);
  w = wl(f, "w", NULL, 0, 0, "cpu=1", 1, 0);
  set_admission(f, w, "ghost", "f");
  ts_err_clear(&e);
  assert_int_equal(q_tree_admit(f->t, w, &e), TS_ENOTFOUND);
  assert_string_equal(e.text, "workload t/w: status.admission.clusterQueue: ClusterQueue "
                              "\"ghost\" not found");
  set_admission(f, w, "a", "f");
  assert_int_equal(q_tree_admit(f->t, w, &e), TS_OK);
  assert_int_equal(q_tree_admit(f->t, w, &e), TS_EEXIST);
  assert_int_equal(q_tree_remove(f->t, w->key), TS_OK);
  assert_int_equal(q_tree_remove(f->t, w->key), TS_ENOTFOUND);
}

/* ---- allocation failures --------------------------------------------------------------- */

/* Fails the Nth allocation of q_tree_build for every N: a clean TS_ENOMEM, no leak (ASan). */
static void test_alloc_failures_build(void **state) {
  fx *f = *state;
  q_tree *t = NULL;
  cohort(f, "root", NULL, NULL);
  cq1(f, "a", "root", "f", "cpu", "10", "lendingLimit: 5", "");
  cq1(f, "b", "root", "f", "cpu", "10", "", "");
  ensure_flavors(f);
  for (long n = 0;; n++) {
    ts_rc rc;
    bool failed;
    ts_alloc_fail_after(n);
    rc = q_tree_build(f->m, NULL, &t, NULL);
    failed = ts_alloc_failed();
    ts_alloc_fail_after(-1);
    if (!failed) {
      assert_int_equal(rc, TS_OK);
      break;
    }
    assert_int_equal(rc, TS_ENOMEM);
    assert_null(t);
  }
  q_tree_free(t);
}

/* Every workload is either admitted (and charged) or queued, exactly once. */
static void check_consistent(fx *f, q_workload **w, size_t n) {
  size_t queued =
      active_count(f, "a") + parked_count(f, "a") + active_count(f, "b") + parked_count(f, "b");
  size_t admitted = 0;
  int64_t want_a = 10000, want_b = 0;
  q_usage ua, ub;
  for (size_t i = 0; i < n; i++) {
    if (!q_tree_admission(f->t, w[i]->key)) continue;
    admitted++;
    if (!strcmp(w[i]->key, "t/high"))
      want_a += 5000;
    else
      want_b += 4000;
  }
  assert_int_equal(admitted + queued, n);
  assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &ua), TS_OK);
  assert_int_equal(q_tree_usage(f->t, "b", "f", MODEL_RES_CPU, &ub), TS_OK);
  assert_int_equal(ua.usage, want_a);
  assert_int_equal(ub.usage, want_b);
}

/* Fails the Nth allocation of a cycle that admits (one head by borrowing) and parks: the
 * cycle fails cleanly and every workload stays admitted-and-charged or queued. */
static void test_alloc_failures_cycle(void **state) {
  fx *f = *state;
  for (long n = 0;; n++) {
    q_workload *w[3];
    q_result r;
    ts_rc rc;
    bool failed;
    cq1(f, "a", "c", "f", "cpu", "10", "", "preemption: {withinClusterQueue: LowerPriority}");
    cq1(f, "b", "c", "f", "cpu", "10", "", "");
    build(f);
    admit(f, wl(f, "low", NULL, 0, 0, "cpu=10", 1, 0), "a", "f");
    w[0] = wl(f, "high", "lq-a", 5, 0, "cpu=5", 1, 0);
    w[1] = wl(f, "fits", "lq-b", 0, 0, "cpu=4", 1, 0);
    w[2] = wl(f, "later", "lq-b", 0, 1, "cpu=4", 1, 0);
    ts_alloc_fail_after(n);
    rc = q_cycle(f->t, f->qs, &f->cfg, NULL, 0, &r, NULL);
    failed = ts_alloc_failed();
    ts_alloc_fail_after(-1);
    q_result_free(&r);
    check_consistent(f, w, 3);
    if (!failed) {
      assert_int_equal(rc, TS_OK);
      assert_non_null(q_tree_admission(f->t, "t/high"));
      assert_non_null(q_tree_admission(f->t, "t/fits"));
      break;
    }
    assert_int_equal(rc, TS_ENOMEM);
    reset(f);
  }
}

/* The same over preemption searches, classical and fair: victims are reported only when the
 * cycle succeeds, and usage is left exactly as it was. */
static void test_alloc_failures_preempt(void **state) {
  fx *f = *state;
  for (int fair = 0; fair < 2; fair++)
    for (long n = 0;; n++) {
      q_result r;
      q_usage u;
      ts_rc rc;
      bool failed;
      f->cfg.fair_sharing = fair;
      cq1(f, "a", "c", "f", "cpu", "10", "",
          "preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}");
      cq1(f, "b", "c", "f", "cpu", "10", "", "");
      build(f);
      admit(f, wl(f, "mine", NULL, 0, 0, "cpu=6", 1, 0), "a", "f");
      admit(f, wl(f, "theirs", NULL, 0, 0, "cpu=14", 1, 0), "b", "f");
      wl(f, "high", "lq-a", 5, 0, "cpu=8", 1, 0);
      ts_alloc_fail_after(n);
      rc = q_cycle(f->t, f->qs, &f->cfg, NULL, 0, &r, NULL);
      failed = ts_alloc_failed();
      ts_alloc_fail_after(-1);
      assert_int_equal(q_tree_usage(f->t, "a", "f", MODEL_RES_CPU, &u), TS_OK);
      assert_int_equal(u.usage, 6000);
      assert_int_equal(active_count(f, "a") + parked_count(f, "a"), 1);
      if (!failed) {
        assert_int_equal(rc, TS_OK);
        assert_true(r.nvictims >= 1);
        q_result_free(&r);
        reset(f);
        break;
      }
      assert_int_equal(rc, TS_ENOMEM);
      q_result_free(&r);
      reset(f);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_borrowing_limit),
      T(test_lending_limit),
      T(test_nested_cohorts),
      T(test_cohort_capacity_saturates),
      T(test_fungibility_borrow_stop),
      T(test_fungibility_borrow_next),
      T(test_fungibility_preempt),
      T(test_flavor_taints),
      T(test_pods_resource),
      T(test_partial_admission),
      T(test_partial_admission_gate_off),
      T(test_strict_fifo),
      T(test_best_effort_fifo),
      T(test_namespace_selector),
      T(test_stop_policy),
      T(test_missing_queues_then_sync),
      T(test_veto_hook),
      T(test_commit_refused),
      T(test_last_assignment_resumes),
      T(test_last_assignment_rebuilt),
      T(test_last_assignment_skipped),
      T(test_last_assignment_outdated),
      T(test_device_classes),
      T(test_device_claim),
      T(test_cohort_cycle),
      T(test_missing_flavor),
      T(test_admit_errors),
      T(test_alloc_failures_build),
      T(test_alloc_failures_cycle),
      T(test_alloc_failures_preempt),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
