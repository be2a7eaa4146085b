/* Arrival order: objects reach Tessera one watch event at a time, in whatever order the
 * cluster delivers them, and a cycle runs after each, as in `tessera run`.
 *
 * Every scenario (the bundled examples, tests/scenarios, and a generated set covering every
 * gang kind with and without a queue and with and without DRA claims) is fed into live/ one
 * object at a time through tests/support/cluster.c, which answers writes as an API server and
 * plays the claim controller and the kubelet; in the file's order, reversed, and shuffled.
 * After every cycle (once its writes have landed):
 *   - no gang has fewer pods bound than its minimum (once Tessera bound one of them);
 *   - no node is over-committed, no device is allocated to two claims, no claim twice, no pod
 *     bound twice or before its claims were reserved (the cluster records these);
 *   - the loop settles: a bounded number of cycles after each object.
 * At the end:
 *   - the final state is a fixed point: a fresh scheduler (one cycle on the final objects)
 *     binds and evicts nothing more;
 *   - where the order cannot matter (the one-shot replay binds every pending pod without
 *     evicting anything), the same pods are bound.
 * ARRIVAL_SHUFFLES (default 4) sets how many shuffled orders each scenario gets. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "input/input.h"
#include "live/live.h"
#include "model/model.h"
#include "scheduler/sched.h"
#include "tests/support/cluster.h"

#define SETTLE_ROUNDS 64 /* cycles allowed after one object before the loop must be quiet */
#define SECOND_NS     1000000000LL

typedef TS_VEC(json_t *) objs;

/* One scenario: its objects in file order and what a one-shot replay decides. */
typedef struct scenario {
  char name[256];               /* for messages */
  objs o;                       /* objects (new references), in file order */
  sched_config cfg;             /* settings (tessera.yaml when the scenario has one) */
  cfg_tessera t;                /* tessera.yaml (owns the devmap cfg points to) */
  bool kinds[MODEL_KIND_COUNT]; /* kinds present */
  int64_t now_ns;               /* the clock to start from: the newest creationTimestamp */
  ts_map members;               /* gang key -> (uintptr_t) pods of the gang in the scenario */
  ts_map one_shot;              /* pod keys bound by the one-shot replay (owned keys) */
  bool order_free;              /* the one-shot replay bound every pending pod, evicting none */
  int pending;                  /* pods to schedule in the scenario */
} scenario;

static dra_cel *cel;
static int nruns, ngangs_checked, nfailed;
static size_t nwrites, nbound, norder_free, nscenarios, nclaims;

/* ---- loading -------------------------------------------------------------------------- */

static ts_rc collect(void *ud, json_t *obj, const char *file, int line, int index) {
  (void)file, (void)line, (void)index;
  return ts_vec_push((objs *)ud, json_incref(obj));
}

static void load_error(void *ud, const ts_err *e) {
  (void)ud;
  fail_msg("loading: %s", e->text);
}

/* The gang a pod belongs to, as the tests read docs/features.md's "Gangs" (independently of
 * scheduler/): key and, from the objects in m, its minimum; INT32_MAX when it must not start (its
 * PodGroup or job is missing). For jobs of a kind the scenario lacks (present[kind] false), -1: the
 * members decide. */
static void gang_of(const model *m, const bool *present, const model_pod *p, char *key, size_t cap,
                    int64_t *min) {
  const char *pg =
      model_labels_get(&p->obj.labels, ts_intern_cstr("scheduling.x-k8s.io/pod-group"));
  const char *kq =
      model_labels_get(&p->obj.labels, ts_intern_cstr("kueue.x-k8s.io/pod-group-name"));
  const char *js =
      model_labels_get(&p->obj.labels, ts_intern_cstr("jobset.sigs.k8s.io/jobset-name"));
  const model_job *j;
  if (pg) {
    const model_pod_group *g =
        (const model_pod_group *)model_get(m, MODEL_POD_GROUP, p->obj.ns, pg);
    snprintf(key, cap, "pg:%s/%s", p->obj.ns, pg);
    *min = g ? g->min_member : INT32_MAX;
    return;
  }
  if (kq) {
    const char *n = model_labels_get(&p->obj.annotations,
                                     ts_intern_cstr("kueue.x-k8s.io/pod-group-total-count"));
    snprintf(key, cap, "kq:%s/%s", p->obj.ns, kq);
    *min = n ? atoi(n) : INT32_MAX;
    return;
  }
  if (js) {
    snprintf(key, cap, "js:%s/%s", p->obj.ns, js);
    j = (const model_job *)model_get(m, MODEL_JOBSET, p->obj.ns, js);
    *min = j ? j->min_pods : !present[MODEL_JOBSET] ? -1 : INT32_MAX;
    return;
  }
  for (uint32_t i = 0; i < p->obj.nowners; i++) {
    const model_owner *o = &p->obj.owners[i];
    model_kind k = model_kind_of(o->kind);
    if (!o->controller || k < MODEL_JOB || k == MODEL_KIND_COUNT || k == MODEL_JOBSET) continue;
    snprintf(key, cap, "own:%s/%s/%s", p->obj.ns, o->kind, o->name);
    j = (const model_job *)model_get(m, k, p->obj.ns, o->name);
    *min = j ? j->min_pods : !present[k] ? -1 : INT32_MAX;
    return;
  }
  snprintf(key, cap, "pod:%s", p->obj.key);
  *min = 1;
}

static bool pending_pod(const model_pod *p) {
  return !p->node_name && p->scheduler_name == ts_intern_cstr("tessera") && !p->obj.deleted_ns;
}

/* A model of the objects; kinds without any object cannot be seen (as in replay). */
static model *model_of(json_t *const *v, size_t n) {
  model *m = model_new();
  assert_non_null(m);
  for (size_t i = 0; i < n; i++) {
    ts_err e;
    ts_err_clear(&e);
    model_apply_json(m, v[i], MODEL_ADDED, NULL, NULL, NULL, &e); /* invalid ones are skipped */
  }
  for (int k = 0; k < MODEL_KIND_COUNT; k++)
    if (!model_count(m, (model_kind)k)) model_set_seen(m, (model_kind)k, false);
  return m;
}

/* Adds key (copied) to map with value 0, unless present. */
static void put_key(ts_map *map, const char *key) {
  char *k = ts_map_get(map, key, strlen(key)) ? NULL : ts_strdup(key);
  if (k) assert_int_equal(ts_map_put(map, k, strlen(k), NULL, NULL), TS_OK);
}

/* Counts one more under key. */
static void count_up(ts_map *map, const char *key) {
  size_t it = 0;
  const ts_map_slot *s;
  put_key(map, key);
  while (ts_map_next(map, &it, &s))
    if (s->len == strlen(key) && !memcmp(s->key, key, s->len)) {
      ((ts_map_slot *)s)->value = (void *)((uintptr_t)s->value + 1);
      return;
    }
}

static uintptr_t count_of(const ts_map *map, const char *key) {
  return (uintptr_t)ts_map_get(map, key, strlen(key));
}

static void free_keys(ts_map *map) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(map, &it, &s)) ts_free((void *)s->key);
  ts_map_free(map);
}

/* The one-shot replay of the whole scenario, and how many pods each gang has in it. */
static void one_shot(scenario *sc) {
  model *m = model_of(sc->o.v, sc->o.n);
  sched_config cfg = sc->cfg;
  sched_result r;
  ts_err e;
  size_t it = 0;
  model_obj *o;
  while (model_next(m, MODEL_POD, &it, &o)) {
    const model_pod *p = (const model_pod *)o;
    char key[700];
    int64_t min;
    gang_of(m, sc->kinds, p, key, sizeof key, &min);
    count_up(&sc->members, key);
    if (pending_pod(p)) sc->pending++;
  }
  cfg.instantiate_templates = true;
  if (sched_cycle(m, &cfg, NULL, sc->now_ns, &r, &e) != TS_OK) fail_msg("%s: %s", sc->name, e.text);
  for (size_t i = 0; i < r.ndecisions; i++)
    if (r.decisions[i].kind == SCHED_BIND) put_key(&sc->one_shot, r.decisions[i].pod->obj.key);
  sc->order_free = r.npending == 0 && r.nevicted == 0;
  nscenarios++;
  norder_free += sc->order_free;
  sched_result_free(&r);
  model_free(m);
}

static void scenario_init(scenario *sc, const char *name, const char *config) {
  ts_err e;
  memset(sc, 0, sizeof *sc);
  snprintf(sc->name, sizeof sc->name, "%s", name);
  ts_map_init(&sc->members);
  ts_map_init(&sc->one_shot);
  ts_err_clear(&e);
  if (cfg_tessera_setup(config, &sc->t, &e) != TS_OK) fail_msg("%s: %s", name, e.text);
  sc->cfg = sc->t.sched; /* the settings as replay and run take them (devmap owned by t) */
  sc->cfg.dra_eval = dra_cel_eval;
  sc->cfg.dra_eval_ctx = cel;
}

/* Called once the objects are in: kinds, clock, one-shot replay. */
static void scenario_ready(scenario *sc) {
  ts_time_parse("2026-12-01T00:00:00Z", &sc->now_ns);
  for (size_t i = 0; i < sc->o.n; i++) {
    json_t *md = json_object_get(sc->o.v[i], "metadata");
    const char *kind = json_string_value(json_object_get(sc->o.v[i], "kind"));
    const char *ts = json_string_value(json_object_get(md, "creationTimestamp"));
    int64_t t;
    if (kind && model_kind_of(kind) != MODEL_KIND_COUNT) sc->kinds[model_kind_of(kind)] = true;
    if (ts && ts_time_parse(ts, &t) == TS_OK && t > sc->now_ns) sc->now_ns = t;
  }
  one_shot(sc);
}

static void scenario_free(scenario *sc) {
  for (size_t i = 0; i < sc->o.n; i++) json_decref(sc->o.v[i]);
  ts_vec_free(&sc->o);
  free_keys(&sc->members);
  free_keys(&sc->one_shot);
  cfg_tessera_free(&sc->t);
}

/* ---- one run ---------------------------------------------------------------------------- */

typedef struct run {
  scenario *sc;      /* what is fed */
  tc_cluster *c;     /* the cluster */
  live *l;           /* the loop */
  sched_config cfg;  /* its settings */
  int64_t now_ns;    /* its clock */
  const char *order; /* "given", "reverse", "shuffle 3" */
} run;

/* The invariant that matters most: a gang Tessera started has at least its minimum bound. */
static void check_gangs(run *r, const char *after) {
  const model *m = tc_model(r->c);
  ts_map bound;
  size_t it = 0;
  model_obj *o;
  ts_map_init(&bound);
  while (model_next(m, MODEL_POD, &it, &o)) { /* bound pods per gang */
    const model_pod *p = (const model_pod *)o;
    char key[700];
    int64_t min;
    if (!model_pod_counts(p)) continue;
    gang_of(m, r->sc->kinds, p, key, sizeof key, &min);
    count_up(&bound, key);
  }
  it = 0;
  while (model_next(m, MODEL_POD, &it, &o)) {
    const model_pod *p = (const model_pod *)o;
    char key[700];
    int64_t min;
    uintptr_t n;
    if (!model_pod_counts(p) || !tc_bound_by_writer(r->c, p->obj.key)) continue;
    gang_of(m, r->sc->kinds, p, key, sizeof key, &min);
    if (min < 0) min = (int64_t)count_of(&r->sc->members, key);
    n = count_of(&bound, key);
    ngangs_checked++;
    if ((int64_t)n < min)
      tc_violation(r->c, "gang %s has %zu pods bound, below its minimum %lld (after %s)", key,
                   (size_t)n, (long long)min, after);
  }
  free_keys(&bound);
}

/* Cycles until the loop is quiet; every cycle's writes land before the next. */
static void settle(run *r, const char *after) {
  for (int round = 0; round < SETTLE_ROUNDS; round++) {
    bool ran = false;
    ts_err e;
    ts_err_clear(&e);
    if (live_cycle(r->l, r->now_ns, &ran, &e) != TS_OK)
      return tc_violation(r->c, "cycle failed after %s: %s", after, e.text);
    tc_flush(r->c);
    check_gangs(r, after);
    r->now_ns += SECOND_NS;
    tc_set_time(r->c, r->now_ns);
    if (!live_dirty(r->l) && !live_busy(r->l)) return;
  }
  tc_violation(r->c, "still busy %d cycles after %s", SETTLE_ROUNDS, after);
}

static void add_to(void *ud, json_t *obj) {
  ts_err e;
  ts_err_clear(&e);
  model_apply_json(ud, obj, MODEL_ADDED, NULL, NULL, NULL, &e);
}

/* A fresh scheduler on the final objects decides nothing new. */
static void check_fixed_point(run *r) {
  model *m = model_new();
  sched_result res;
  ts_err e;
  assert_non_null(m);
  tc_each(r->c, add_to, m);
  for (int k = 0; k < MODEL_KIND_COUNT; k++)
    if (!r->sc->kinds[k]) model_set_seen(m, (model_kind)k, false);
  if (sched_cycle(m, &r->cfg, NULL, r->now_ns, &res, &e) != TS_OK) {
    tc_violation(r->c, "final cycle failed: %s", e.text);
  } else {
    for (size_t i = 0; i < res.ndecisions; i++) {
      const sched_decision *d = &res.decisions[i];
      if (d->kind == SCHED_BIND)
        tc_violation(r->c, "not settled: a fresh cycle binds %s to %s", d->pod->obj.key,
                     d->node->obj.name);
      else if (d->kind == SCHED_EVICT)
        tc_violation(r->c, "not settled: a fresh cycle evicts %s: %s", d->pod->obj.key, d->reason);
    }
    sched_result_free(&res);
  }
  model_free(m);
}

/* Where the order cannot matter, the pods bound are the one-shot replay's. */
static void check_same_as_one_shot(run *r) {
  size_t it = 0;
  const ts_map_slot *s;
  const model *m = tc_model(r->c);
  if (!r->sc->order_free) return;
  while (ts_map_next(&r->sc->one_shot, &it, &s)) {
    const model_pod *p;
    char ns[300], name[300];
    const char *slash = strchr(s->key, '/');
    snprintf(ns, sizeof ns, "%.*s", (int)(slash - s->key), s->key);
    snprintf(name, sizeof name, "%s", slash + 1);
    p = (const model_pod *)model_get(m, MODEL_POD, ns, name);
    if (!p || !p->node_name)
      tc_violation(r->c, "the one-shot replay binds %s; fed in this order it stays pending",
                   s->key);
  }
}

static void report(run *r) {
  const char *const *v;
  size_t n = tc_violations(r->c, &v);
  for (size_t i = 0; i < n && i < 10; i++)
    print_error("%s [%s]: %s\n", r->sc->name, r->order, v[i]);
  if (n) print_error("%s [%s]: %zu violations\n", r->sc->name, r->order, n);
  nfailed += n > 0;
}

static void arrive(scenario *sc, const size_t *order, const char *label, uint64_t seed) {
  run r = {sc, tc_new(seed), NULL, sc->cfg, sc->now_ns, label};
  live_writer w;
  assert_non_null(r.c);
  r.cfg.instantiate_templates = false; /* the cluster's claim controller makes the claims */
  w = tc_writer(r.c);
  r.l = live_new(&r.cfg, &w);
  assert_non_null(r.l);
  tc_attach(r.c, r.l);
  tc_set_time(r.c, r.now_ns);
  for (int k = 0; k < MODEL_KIND_COUNT; k++) /* as informers of absent resources are skipped */
    if (!sc->kinds[k])
      live_kind_unseen(r.l, model_kind_api_of((model_kind)k)->group,
                       model_kind_name((model_kind)k));
  for (size_t i = 0; i < sc->o.n; i++) {
    json_t *obj = sc->o.v[order[i]];
    char after[600];
    snprintf(after, sizeof after, "%s %s", json_string_value(json_object_get(obj, "kind")) ?: "?",
             json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")) ?: "?");
    tc_apply(r.c, obj);
    tc_flush(r.c);
    settle(&r, after);
  }
  check_fixed_point(&r);
  check_same_as_one_shot(&r);
  nruns++;
  nwrites += tc_writes(r.c);
  {
    size_t it = 0;
    model_obj *o;
    const model *m = tc_model(r.c);
    while (model_next(m, MODEL_POD, &it, &o)) nbound += tc_bound_by_writer(r.c, o->key);
    it = 0;
    while (model_next(m, MODEL_RESOURCE_CLAIM, &it, &o))
      nclaims += ((const model_claim *)o)->allocation.present;
  }
  report(&r);
  live_free(r.l);
  tc_free(r.c);
}

/* The given order, reversed, and ARRIVAL_SHUFFLES shuffles. */
static void every_order(scenario *sc) {
  size_t n = sc->o.n, *order = calloc(n + 1, sizeof *order);
  const char *env = getenv("ARRIVAL_SHUFFLES");
  int shuffles = env ? atoi(env) : 4;
  assert_non_null(order);
  for (size_t i = 0; i < n; i++) order[i] = i;
  arrive(sc, order, "given", 0);
  for (size_t i = 0; i < n; i++) order[i] = n - 1 - i;
  arrive(sc, order, "reverse", 7);
  for (int k = 1; k <= shuffles; k++) {
    uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)k;
    char label[32];
    for (size_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = n; i > 1; i--) { /* Fisher-Yates with a fixed seed per shuffle */
      size_t j, t;
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      j = (size_t)(x % i);
      t = order[i - 1], order[i - 1] = order[j], order[j] = t;
    }
    snprintf(label, sizeof label, "shuffle %d", k);
    arrive(sc, order, label, (uint64_t)k);
  }
  free(order);
}

/* ---- the scenarios ---------------------------------------------------------------------- */

static void run_path(const char *name, const char *path, const char *config) {
  scenario sc;
  scenario_init(&sc, name, config);
  if (in_load_path(path, collect, load_error, &sc.o) != TS_OK) fail_msg("%s: cannot load", path);
  scenario_ready(&sc);
  every_order(&sc);
  scenario_free(&sc);
}

static bool exists(const char *path) {
  FILE *f = fopen(path, "r");
  if (f) fclose(f);
  return f != NULL;
}

static void test_examples(void **state) {
  (void)state;
  nfailed = 0;
  run_path("examples/cluster", "examples/cluster", NULL);
  run_path("examples/kueue", "examples/kueue", NULL);
  run_path("examples/dra", "examples/dra", NULL);
  if (nfailed) fail_msg("%d runs with violations", nfailed);
}

static void test_scenarios(void **state) {
  DIR *d = opendir("tests/scenarios");
  struct dirent *e;
  (void)state;
  nfailed = 0;
  assert_non_null(d);
  while ((e = readdir(d))) {
    char cluster[600], config[600], name[600];
    if (e->d_name[0] == '.') continue;
    snprintf(cluster, sizeof cluster, "tests/scenarios/%s/cluster.yaml", e->d_name);
    snprintf(config, sizeof config, "tests/scenarios/%s/tessera.yaml", e->d_name);
    snprintf(name, sizeof name, "tests/scenarios/%s", e->d_name);
    if (!exists(cluster)) continue;
    run_path(name, cluster, exists(config) ? config : NULL);
  }
  closedir(d);
  if (nfailed) fail_msg("%d runs with violations", nfailed);
}

/* ---- generated scenarios ---------------------------------------------------------------- */

/* A small deterministic generator. */
typedef struct gen {
  scenario *sc;
  uint64_t x;
} gen;

static uint32_t roll(gen *g, uint32_t n) {
  g->x ^= g->x << 13, g->x ^= g->x >> 7, g->x ^= g->x << 17;
  return (uint32_t)(g->x % n);
}

static void add(gen *g, json_t *obj) {
  assert_non_null(obj);
  assert_int_equal(ts_vec_push(&g->sc->o, obj), TS_OK);
}

static const char *const gang_kinds[] = {"single", "PodGroup", "KueueGroup",
                                         "JobSet", "Job",      "PyTorchJob"};

/* Nodes: extended-resource GPUs or a DRA slice of 8 devices, in two zones and three cliques. */
static void gen_nodes(gen *g, int n) {
  for (int i = 0; i < n; i++) {
    char name[32], zone[8], clique[8], pool[40];
    bool dra = roll(g, 3) == 0;
    int gpus = roll(g, 2) ? 8 : 4;
    json_t *alloc = json_pack("{s:s, s:s, s:s}", "cpu", "64", "memory", "512Gi", "pods", "110");
    snprintf(name, sizeof name, "node-%d", i);
    snprintf(zone, sizeof zone, "z%d", i % 2);
    snprintf(clique, sizeof clique, "c%d", i % 3);
    if (!dra) json_object_set_new(alloc, "nvidia.com/gpu", json_integer(gpus));
    add(g, json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s, s:s}}, s:{s:o}}", "apiVersion", "v1",
                     "kind", "Node", "metadata", "name", name, "labels", "kubernetes.io/hostname",
                     name, "topology.kubernetes.io/zone", zone, "nvidia.com/gpu.clique", clique,
                     "tessera.test/pool", "gpu", "status", "allocatable", alloc));
    if (!dra) continue;
    snprintf(pool, sizeof pool, "%s-gpus", name);
    {
      json_t *devs = json_array();
      for (int d = 0; d < 8; d++) {
        char dn[16];
        snprintf(dn, sizeof dn, "gpu-%d", d);
        json_array_append_new(devs, json_pack("{s:s, s:{s:{s:s}}}", "name", dn, "attributes",
                                              "model", "string", d < 4 ? "a100" : "h100"));
      }
      add(g, json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:{s:s, s:i, s:i}, s:o}}", "apiVersion",
                       "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata", "name", pool,
                       "spec", "driver", "gpu.example.com", "nodeName", name, "pool", "name", pool,
                       "generation", 1, "resourceSliceCount", 1, "devices", devs));
    }
  }
}

/* Namespaces, priority classes, the device class, queues with a cohort, claim templates. */
static void gen_setup(gen *g) {
  const char *teams[] = {"team-a", "team-b"};
  add(g, json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                   "PriorityClass", "metadata", "name", "high", "value", 100));
  add(g, json_pack("{s:s, s:s, s:{s:s}, s:{s:[{s:{s:s}}]}}", "apiVersion", "resource.k8s.io/v1",
                   "kind", "DeviceClass", "metadata", "name", "gpu.example.com", "spec",
                   "selectors", "cel", "expression", "device.driver == \"gpu.example.com\""));
  add(g, json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}}}", "apiVersion", "kueue.x-k8s.io/v1beta1",
                   "kind", "ResourceFlavor", "metadata", "name", "gpu", "spec", "nodeLabels",
                   "tessera.test/pool", "gpu"));
  for (int t = 0; t < 2; t++) {
    char cq[16];
    snprintf(cq, sizeof cq, "cq-%c", 'a' + t);
    add(g,
        json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Namespace",
                  "metadata", "name", teams[t], "labels", "kubernetes.io/metadata.name", teams[t]));
    add(g,
        json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{}, s:{s:s, s:s}, s:[{s:[s], "
                  "s:[{s:s, s:[{s:s, s:i}]}]}]}}",
                  "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "ClusterQueue", "metadata",
                  "name", cq, "spec", "cohort", "all", "namespaceSelector", "preemption",
                  "withinClusterQueue", "LowerPriority", "reclaimWithinCohort", "Any",
                  "resourceGroups", "coveredResources", "nvidia.com/gpu", "flavors", "name", "gpu",
                  "resources", "name", "nvidia.com/gpu", "nominalQuota", 8 + 8 * (int)roll(g, 3)));
    add(g, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta1",
                     "kind", "LocalQueue", "metadata", "name", "lq", "namespace", teams[t], "spec",
                     "clusterQueue", cq));
    for (int n = 1; n <= 2; n++) {
      char tn[16];
      snprintf(tn, sizeof tn, "gpu-%d", n);
      add(g,
          json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:{s:[{s:s, s:{s:s, s:i}}]}}}}", "apiVersion",
                    "resource.k8s.io/v1", "kind", "ResourceClaimTemplate", "metadata", "name", tn,
                    "namespace", teams[t], "spec", "spec", "devices", "requests", "name", "gpu",
                    "exactly", "deviceClassName", "gpu.example.com", "count", n));
    }
  }
}

/* The object that makes `size` pods one gang (none for a single pod). */
static void gen_owner(gen *g, const char *kind, const char *ns, const char *name, int size,
                      bool queued) {
  json_t *md = json_pack("{s:s, s:s, s:s}", "name", name, "namespace", ns, "uid", name);
  if (queued)
    json_object_set_new(md, "labels", json_pack("{s:s}", "kueue.x-k8s.io/queue-name", "lq"));
  if (!strcmp(kind, "PodGroup"))
    add(g, json_pack("{s:s, s:s, s:o, s:{s:i}}", "apiVersion", "scheduling.x-k8s.io/v1alpha1",
                     "kind", "PodGroup", "metadata", md, "spec", "minMember",
                     size > 2 && roll(g, 3) == 0 ? size - 1 : size));
  else if (!strcmp(kind, "JobSet"))
    add(g, json_pack("{s:s, s:s, s:o, s:{s:[{s:s, s:i, s:{s:{s:i}}}]}}", "apiVersion",
                     "jobset.x-k8s.io/v1alpha2", "kind", "JobSet", "metadata", md, "spec",
                     "replicatedJobs", "name", "w", "replicas", 1, "template", "spec",
                     "parallelism", size));
  else if (!strcmp(kind, "Job"))
    add(g, json_pack("{s:s, s:s, s:o, s:{s:i, s:i}}", "apiVersion", "batch/v1", "kind", "Job",
                     "metadata", md, "spec", "parallelism", size, "completions", size));
  else if (!strcmp(kind, "PyTorchJob"))
    add(g, json_pack("{s:s, s:s, s:o, s:{s:{s:{s:i}, s:{s:i}}}}", "apiVersion", "kubeflow.org/v1",
                     "kind", "PyTorchJob", "metadata", md, "spec", "pytorchReplicaSpecs", "Master",
                     "replicas", 1, "Worker", "replicas", size - 1));
  else
    json_decref(md);
}

/* The metadata that puts a pod in its gang. */
static json_t *gang_meta(const char *kind, const char *gang, int size, bool queued) {
  json_t *labels = json_object(), *md = json_pack("{s:o}", "labels", labels);
  if (queued) json_object_set_new(labels, "kueue.x-k8s.io/queue-name", json_string("lq"));
  if (!strcmp(kind, "PodGroup")) {
    json_object_set_new(labels, "scheduling.x-k8s.io/pod-group", json_string(gang));
  } else if (!strcmp(kind, "KueueGroup")) {
    char n[16];
    snprintf(n, sizeof n, "%d", size);
    json_object_set_new(labels, "kueue.x-k8s.io/pod-group-name", json_string(gang));
    json_object_set_new(md, "annotations",
                        json_pack("{s:s}", "kueue.x-k8s.io/pod-group-total-count", n));
  } else if (!strcmp(kind, "JobSet")) {
    json_object_set_new(labels, "jobset.sigs.k8s.io/jobset-name", json_string(gang));
  } else if (!strcmp(kind, "Job") || !strcmp(kind, "PyTorchJob")) {
    json_object_set_new(md, "ownerReferences",
                        json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion",
                                  !strcmp(kind, "Job") ? "batch/v1" : "kubeflow.org/v1", "kind",
                                  kind, "name", gang, "uid", gang, "controller", 1));
  }
  return md;
}

/* One gang: its owner object and its pods (GPUs as an extended resource or through claims). */
static void gen_gang(gen *g, int index) {
  const char *kind = gang_kinds[roll(g, 6)];
  const char *ns = roll(g, 2) ? "team-a" : "team-b";
  int size = !strcmp(kind, "single") ? 1 : 2 + (int)roll(g, 5);
  bool queued = roll(g, 2), dra = roll(g, 3) == 0, high = roll(g, 4) == 0;
  int gpus = 1 + (int)roll(g, dra ? 2 : 4);
  char gang[32];
  snprintf(gang, sizeof gang, "g%d-%s", index, kind);
  for (char *c = gang; *c; c++) *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
  gen_owner(g, kind, ns, gang, size, queued);
  for (int i = 0; i < size; i++) {
    char name[48], tmpl[16];
    json_t *md = gang_meta(kind, gang, size, queued), *spec, *ctr;
    snprintf(name, sizeof name, "%s-%d", gang, i);
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "namespace", json_string(ns));
    ctr = json_pack("{s:s, s:s}", "name", "c", "image", "busybox");
    if (!dra)
      json_object_set_new(ctr, "resources",
                          json_pack("{s:{s:i}}", "limits", "nvidia.com/gpu", gpus));
    spec = json_pack("{s:s, s:[o]}", "schedulerName", "tessera", "containers", ctr);
    if (high) json_object_set_new(spec, "priorityClassName", json_string("high"));
    if (dra) {
      snprintf(tmpl, sizeof tmpl, "gpu-%d", gpus);
      json_object_set_new(
          spec, "resourceClaims",
          json_pack("[{s:s, s:s}]", "name", "gpu", "resourceClaimTemplateName", tmpl));
    }
    add(g, json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", md,
                     "spec", spec));
  }
}

static void test_generated(void **state) {
  const char *env = getenv("ARRIVAL_GENERATED");
  int count = env ? atoi(env) : 24;
  q_devmap_entry map;
  (void)state;
  nfailed = 0;
  for (int k = 1; k <= count; k++) {
    scenario sc;
    gen g = {&sc, 0x2545f4914f6cdd1dULL * (uint64_t)k};
    char name[64];
    snprintf(name, sizeof name, "generated #%d", k);
    scenario_init(&sc, name, NULL);
    /* Devices of the class count as nvidia.com/gpu quota (Kueue's deviceClassMappings). */
    assert_int_equal(
        q_devmap_add(&sc.t.sched.queueing.devmap, "gpu.example.com", "nvidia.com/gpu", "1", NULL),
        TS_OK);
    sc.cfg.queueing.devmap = sc.t.sched.queueing.devmap;
    (void)map;
    gen_setup(&g);
    gen_nodes(&g, 3 + (int)roll(&g, 6));
    for (int i = 0, n = 2 + (int)roll(&g, 6); i < n; i++) gen_gang(&g, i);
    scenario_ready(&sc);
    every_order(&sc);
    scenario_free(&sc);
  }
  if (nfailed) fail_msg("%d runs with violations", nfailed);
}

static int setup(void **state) {
  (void)state;
  ts_log_set_level(TS_LOG_ERROR);
  cel = dra_cel_new();
  return cel ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  dra_cel_free(cel);
  printf("%zu scenarios (%zu where the order cannot matter), %d arrival runs: %zu writes, %zu "
         "pods bound, %zu claims allocated, %d gang checks\n",
         nscenarios, norder_free, nruns, nwrites, nbound, nclaims, ngangs_checked);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_examples),
      cmocka_unit_test(test_scenarios),
      cmocka_unit_test(test_generated),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
