/* Unit tests of live/: the in-cluster loop with a recording writer. They check the order of
 * writes (claims before binds, a gang's binds only when all its claims landed), assumptions
 * surviving stale watch events, roll-back when a write fails, and pending reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "input/input.h"
#include "config/config.h"
#include "live/live.h"
#include "sim/sim.h"
#include "tests/support/promtext.h"

#define MAX_CALLS 64

typedef struct call {
  char text[512]; /* "bind t/p0 -> n1", "reserve t/c0 for p0: gpu-0", ... */
  void *token;    /* to answer with */
  json_t *alloc;  /* reserve: a copy of the allocation written */
} call;

typedef struct rec {
  call calls[MAX_CALLS]; /* in the order they were made */
  int n;                 /* entries */
  bool hold_reports;     /* reports are not answered (counted in held) */
  int held;              /* reports issued and not answered */
  void **binds;          /* with count_binds: tokens of the binds issued (malloc) */
  int nbinds;            /* entries */
  bool count_binds;      /* binds are kept here, not recorded as calls */
} rec;

static void add(rec *r, void *token, const model_allocation *alloc, const char *fmt, ...) {
  va_list ap;
  assert_true(r->n < MAX_CALLS);
  va_start(ap, fmt);
  vsnprintf(r->calls[r->n].text, sizeof r->calls[0].text, fmt, ap);
  va_end(ap);
  r->calls[r->n].token = token;
  r->calls[r->n].alloc = alloc ? model_allocation_json(alloc) : NULL; /* what would be sent */
  r->n++;
}

static void w_reserve(void *ud, void *token, const char *ns, const char *name, const char *uid,
                      const model_allocation *alloc, const char *pod, const char *pod_uid) {
  const char *dev = alloc && alloc->nresults ? alloc->results[0].device : "(none)";
  (void)uid, (void)pod_uid;
  add(ud, token, alloc, "reserve %s/%s for %s: %s", ns, name, pod, alloc ? dev : "(shared)");
}

static void w_unreserve(void *ud, void *token, const char *ns, const char *name,
                        const char *pod_uid) {
  add(ud, token, NULL, "unreserve %s/%s for %s", ns, name, pod_uid);
}

static void w_bind(void *ud, void *token, const char *ns, const char *name, const char *uid,
                   const char *node, int32_t gpu_index) {
  rec *r = ud;
  (void)uid;
  if (r->count_binds) {
    r->binds = realloc(r->binds, (size_t)(r->nbinds + 1) * sizeof *r->binds);
    assert_non_null(r->binds);
    r->binds[r->nbinds++] = token;
    return;
  }
  if (gpu_index >= 0)
    add(ud, token, NULL, "bind %s/%s -> %s gpu %d", ns, name, node, (int)gpu_index);
  else
    add(ud, token, NULL, "bind %s/%s -> %s", ns, name, node);
}

static void w_evict(void *ud, void *token, const char *ns, const char *name, const char *uid,
                    const char *reason) {
  (void)reason;
  (void)uid;
  add(ud, token, NULL, "evict %s/%s", ns, name);
}

static void w_unsched(void *ud, void *token, const char *ns, const char *name, const char *uid,
                      const char *reason, const char *message, bool event) {
  rec *r = ud;
  (void)uid;
  if (!event) { /* a message whose queue positions alone changed */
    add(ud, NULL, NULL, "unschedulable %s/%s (%s, no event): %s", ns, name, reason, message);
    live_report_done(token);
    return;
  }
  if (r->hold_reports) { /* counted, not recorded: there may be many */
    r->held++;
    return;
  }
  add(ud, NULL, NULL, "unschedulable %s/%s (%s): %s", ns, name, reason, message);
  live_report_done(token); /* answered at once */
}

static void w_qstatus(void *ud, void *token, const model_queue_status *st) {
  if (st->cluster_queue)
    add(ud, token, NULL, "status ClusterQueue %s: pending %u, admitted %u, %s", st->name,
        st->pending, st->admitted, st->inactive ? st->inactive : "active");
  else
    add(ud, token, NULL, "status LocalQueue %s/%s: pending %u, admitted %u", st->ns, st->name,
        st->pending, st->admitted);
}

static void rec_clear(rec *r) {
  for (int i = 0; i < r->n; i++) json_decref(r->calls[i].alloc);
  r->n = 0;
}

typedef struct fixture {
  sched_config cfg; /* the scheduling configuration */
  rec r;            /* what the writer was asked */
  live *l;          /* the loop */
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  live_writer w = {w_reserve, w_unreserve, w_bind, w_evict, w_unsched, NULL, w_qstatus, NULL};
  sched_config_default(&f->cfg);
  w.ud = &f->r;
  f->l = live_new(&f->cfg, &w);
  *state = f;
  return f->l ? 0 : -1;
}

static int teardown(void **state) {
  fixture *f = *state;
  rec_clear(&f->r);
  live_free(f->l);
  free(f);
  return 0;
}

/* Feeds the YAML documents as watch events. */
static void feed(fixture *f, model_event ev, const char *yaml) {
  in_docs docs = {0};
  ts_err e;
  ts_err_clear(&e);
  if (in_yaml_parse(yaml, strlen(yaml), &docs, &e) != TS_OK) fail_msg("yaml: %s", e.text);
  for (size_t i = 0; i < docs.n; i++) {
    model_obj *o = NULL;
    model_decode_opts opts = {.resources = model_resources_of(live_model(f->l))};
    if (model_decode(docs.v[i].value, &opts, &o, &e) != TS_OK || !o) fail_msg("decode: %s", e.text);
    if (live_event(f->l, ev, o, &e) != TS_OK) fail_msg("event: %s", e.text);
  }
  in_docs_free(&docs);
}

static bool cycle(fixture *f) {
  bool ran;
  ts_err e;
  ts_err_clear(&e);
  if (live_cycle(f->l, 0, &ran, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  return ran;
}

static bool cycle_at(fixture *f, int64_t now_s) {
  bool ran;
  ts_err e;
  ts_err_clear(&e);
  if (live_cycle(f->l, now_s * 1000000000LL, &ran, &e) != TS_OK) fail_msg("cycle: %s", e.text);
  return ran;
}

static int find_call(const fixture *f, const char *text) {
  for (int i = 0; i < f->r.n; i++)
    if (!strcmp(f->r.calls[i].text, text)) return i;
  return -1;
}

static void expect_calls(const fixture *f, const char *const *want, int n) {
  if (f->r.n != n) {
    for (int i = 0; i < f->r.n; i++) print_message("  call %d: %s\n", i, f->r.calls[i].text);
    fail_msg("%d calls, want %d", f->r.n, n);
  }
  for (int i = 0; i < n; i++) assert_string_equal(f->r.calls[i].text, want[i]);
}

static void answer(fixture *f, const char *text, ts_rc r) {
  int i = find_call(f, text);
  if (i < 0) {
    for (int k = 0; k < f->r.n; k++) print_message("  call %d: %s\n", k, f->r.calls[k].text);
    fail_msg("no call \"%s\"", text);
  }
  live_write_done(f->r.calls[i].token, r);
}

static const model_pod *pod(fixture *f, const char *name) {
  return (const model_pod *)model_get(live_model(f->l), MODEL_POD, "t", name);
}

static const char *node_yaml =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, uid: n1-uid}\n"
    "status: {allocatable: {pods: \"110\", cpu: \"8\", memory: 64Gi, nvidia.com/gpu: \"2\"}}\n";

static const char *pod_fmt =
    "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, uid: %s-uid, "
    "creationTimestamp: \"2026-01-01T00:00:00Z\"%s}\nspec: {schedulerName: tessera, %s"
    "containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"%d\"}, limits: "
    "{nvidia.com/gpu: \"%d\"}}}]}\n";

static void add_pod(fixture *f, model_event ev, const char *name, int gpus, const char *meta,
                    const char *spec) {
  char y[2048];
  snprintf(y, sizeof y, pod_fmt, name, name, meta, spec, gpus, gpus);
  feed(f, ev, y);
}

static void test_live_binds_and_assumes(void **state) {
  fixture *f = *state;
  live_stats st;
  feed(f, MODEL_ADDED, node_yaml);
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  add_pod(f, MODEL_ADDED, "p1", 1, "", "");
  add_pod(f, MODEL_ADDED, "p2", 1, "", "");
  assert_true(live_dirty(f->l));
  assert_true(cycle(f));
  {
    /* Bindings first; the report of p2 waits until they have answered (writes are served in
     * the order they are made, and share the server). */
    const char *want[] = {"bind t/p0 -> n1", "bind t/p1 -> n1"};
    expect_calls(f, want, 2);
  }
  /* Assumed at once; no cycle while binds are in flight. */
  assert_string_equal(pod(f, "p0")->node_name, "n1");
  assert_true(live_busy(f->l));
  assert_false(cycle(f));
  answer(f, "bind t/p0 -> n1", TS_OK);
  assert_int_equal(f->r.n, 2);
  answer(f, "bind t/p1 -> n1", TS_OK);
  assert_int_equal(
      find_call(f, "unschedulable t/p2 (Unschedulable): 0/1 nodes are available: 1 Insufficient "
                   "nvidia.com/gpu."),
      2);
  assert_false(live_busy(f->l));
  /* A stale event (the pod as it was before the binding) does not undo the assumption. */
  add_pod(f, MODEL_MODIFIED, "p0", 1, ", labels: {x: y}", "");
  assert_string_equal(pod(f, "p0")->node_name, "n1");
  rec_clear(&f->r);
  assert_true(cycle(f));
  assert_int_equal(f->r.n, 0); /* p2 is still pending for the same reason: no new report */
  /* The confirming event, then the pod goes: p2 fits now. */
  add_pod(f, MODEL_MODIFIED, "p0", 1, "", "nodeName: n1, ");
  assert_string_equal(pod(f, "p0")->node_name, "n1");
  add_pod(f, MODEL_DELETED, "p0", 1, "", "nodeName: n1, ");
  assert_true(cycle(f));
  {
    const char *want[] = {"bind t/p2 -> n1"};
    expect_calls(f, want, 1);
  }
  /* A bind that fails rolls the assumption back, and the pod is tried again. */
  answer(f, "bind t/p2 -> n1", TS_ECONFLICT);
  assert_null(pod(f, "p2")->node_name);
  live_get_stats(f->l, &st);
  assert_int_equal(st.bound, 2);
  assert_int_equal(st.rolled_back, 1);
  rec_clear(&f->r);
  assert_true(cycle(f));
  assert_int_equal(find_call(f, "bind t/p2 -> n1"), 0);
  answer(f, "bind t/p2 -> n1", TS_OK);
}

/* A pod asking for a resource that no node offers yet waits, saying so, and is bound once a
 * Node offering it arrives: the name gets its id from the Node (pods never give names ids),
 * and the pod decoded earlier picks it up. The GPU pod before it, on a node that arrived
 * first, shows the two kinds of names side by side. */
static void test_live_resource_offered_later(void **state) {
  fixture *f = *state;
  static const char *fpga_pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: f, namespace: t, uid: f-uid, "
      "creationTimestamp: \"2026-01-01T00:00:00Z\"}\nspec: {schedulerName: tessera, "
      "containers: [{name: c, resources: {limits: {vendor.example/fpga: \"2\"}}}]}\n";
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, fpga_pod);
  assert_int_equal(pod(f, "f")->nunresolved, 1);
  assert_true(cycle(f));
  assert_int_equal(
      find_call(f, "unschedulable t/f (Unschedulable): 0/1 nodes are available: 1 Insufficient "
                   "vendor.example/fpga."),
      0);
  rec_clear(&f->r);
  feed(f, MODEL_ADDED,
       "apiVersion: v1\nkind: Node\nmetadata: {name: n2, uid: n2-uid}\n"
       "status: {allocatable: {pods: \"110\", cpu: \"8\", memory: 64Gi, "
       "vendor.example/fpga: \"4\"}}\n");
  assert_int_equal(pod(f, "f")->nunresolved, 0);
  assert_true(cycle(f));
  {
    const char *want[] = {"bind t/f -> n2"};
    expect_calls(f, want, 1);
  }
  answer(f, "bind t/f -> n2", TS_OK);
}

static const char *dra_yaml =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, uid: n1-uid}\n"
    "status: {allocatable: {pods: \"110\", cpu: \"8\", memory: 64Gi}}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n---\n"
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
    "spec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n"
    "  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n"
    "  devices: [{name: gpu-0}, {name: gpu-1}]\n---\n"
    "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
    "metadata: {name: g, namespace: t}\nspec: {minMember: 2}\n";

static const char *claim_fmt =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: %s, namespace: t, "
    "uid: %s-uid}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}\n";

static void add_claim(fixture *f, const char *name) {
  char y[1024];
  snprintf(y, sizeof y, claim_fmt, name, name);
  feed(f, MODEL_ADDED, y);
}

static void gang_pod(fixture *f, const char *name, const char *claim) {
  char spec[256];
  snprintf(spec, sizeof spec, "resourceClaims: [{name: gpu, resourceClaimName: %s}], ", claim);
  add_pod(f, MODEL_ADDED, name, 0, ", labels: {scheduling.x-k8s.io/pod-group: g}", spec);
}

static const model_claim *claim(fixture *f, const char *name) {
  return (const model_claim *)model_get(live_model(f->l), MODEL_RESOURCE_CLAIM, "t", name);
}

static void test_live_gang_claims_first_and_rollback(void **state) {
  fixture *f = *state;
  json_t *want_alloc;
  json_error_t je;
  feed(f, MODEL_ADDED, dra_yaml);
  add_claim(f, "c0");
  add_claim(f, "c1");
  gang_pod(f, "g0", "c0");
  gang_pod(f, "g1", "c1");
  assert_true(cycle(f));
  {
    const char *want[] = {"reserve t/c0 for g0: gpu-0", "reserve t/c1 for g1: gpu-1"};
    expect_calls(f, want, 2);
  }
  /* The allocation is written as kube-scheduler writes it. */
  want_alloc = json_loads("{\"devices\": {\"results\": [{\"request\": \"gpu\", \"driver\": "
                          "\"gpu.nvidia.com\", \"pool\": \"n1\", \"device\": \"gpu-0\"}]}, "
                          "\"nodeSelector\": {\"nodeSelectorTerms\": [{\"matchFields\": [{\"key\": "
                          "\"metadata.name\", \"operator\": \"In\", \"values\": [\"n1\"]}]}]}}",
                          0, &je);
  assert_true(json_equal(want_alloc, f->r.calls[0].alloc));
  json_decref(want_alloc);
  /* Assumed: both claims allocated and reserved in the model, both pods bound. */
  assert_true(claim(f, "c0")->allocation.present);
  assert_int_equal(claim(f, "c0")->nreserved_for, 1);
  assert_string_equal(pod(f, "g1")->node_name, "n1");
  /* A stale claim event keeps the assumption. */
  add_claim(f, "c0");
  assert_true(claim(f, "c0")->allocation.present);
  /* One claim fails: no pod is bound, the other claim is unreserved, the model rolled back. */
  answer(f, "reserve t/c0 for g0: gpu-0", TS_OK);
  assert_int_equal(f->r.n, 2); /* nothing bound while a claim of the gang is in flight */
  answer(f, "reserve t/c1 for g1: gpu-1", TS_EELSEWHERE);
  {
    const char *want[] = {"reserve t/c0 for g0: gpu-0", "reserve t/c1 for g1: gpu-1",
                          "unreserve t/c0 for g0-uid"};
    expect_calls(f, want, 3);
  }
  assert_null(pod(f, "g0")->node_name);
  assert_null(pod(f, "g1")->node_name);
  assert_false(claim(f, "c0")->allocation.present);
  assert_false(claim(f, "c1")->allocation.present);
  assert_true(live_busy(f->l));
  answer(f, "unreserve t/c0 for g0-uid", TS_OK);
  /* The next cycle plans the gang again; this time both claims land, then both pods bind. */
  rec_clear(&f->r);
  assert_true(cycle(f));
  assert_int_equal(f->r.n, 2);
  answer(f, "reserve t/c0 for g0: gpu-0", TS_OK);
  answer(f, "reserve t/c1 for g1: gpu-1", TS_OK);
  {
    const char *want[] = {"reserve t/c0 for g0: gpu-0", "reserve t/c1 for g1: gpu-1",
                          "bind t/g0 -> n1", "bind t/g1 -> n1"};
    expect_calls(f, want, 4);
  }
  /* A bind that fails (the pod was deleted) unreserves that pod's claim only. */
  answer(f, "bind t/g0 -> n1", TS_OK);
  answer(f, "bind t/g1 -> n1", TS_ENOTFOUND);
  assert_int_equal(find_call(f, "unreserve t/c1 for g1-uid"), 4);
  assert_string_equal(pod(f, "g0")->node_name, "n1");
  answer(f, "unreserve t/c1 for g1-uid", TS_OK);
  assert_false(live_busy(f->l));
}

/* A deletion needs only the key: a re-list's tombstone (kind, apiVersion, namespace, name and
 * nothing else) removes a PodGroup whose decoder would refuse it, and a bound pod's tombstone
 * without a uid still frees what the loop assumed about it. */
/* Label values and selector values belong to their objects: a churn of pods and
 * PodDisruptionBudgets with values never seen again (Job names and uids, a per-job node pool,
 * a per-job PDB selector) leaves the interned strings as they were (issue 32: they stayed for
 * the life of `tessera run`), queue names included. */
static void test_live_label_values_leave(void **state) {
  static const char *const spec_fmt =
      "nodeName: n1, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "{nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [%s]}]}]}}}, ";
  static const char *const pdb_fmt =
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: %s, namespace: t}\n"
      "spec: {minAvailable: 1, selector: {matchLabels: {job-name: %s}}}\n";
  fixture *f = *state;
  char meta[300], name[32], spec[400], pdb[400];
  size_t before;
  feed(f, MODEL_ADDED, node_yaml);
  snprintf(spec, sizeof spec, spec_fmt, "warm");
  snprintf(pdb, sizeof pdb, pdb_fmt, "warm", "warm");
  add_pod(f, MODEL_ADDED, "warm", 0,
          ", labels: {job-name: warm, controller-uid: w, pod-template-hash: w, "
          "kueue.x-k8s.io/queue-name: w}",
          spec);
  feed(f, MODEL_ADDED, pdb);
  (void)cycle(f); /* running pods: nothing to write */
  assert_int_equal(live_remove(f->l, MODEL_POD, "t", "warm"), TS_OK);
  assert_int_equal(live_remove(f->l, MODEL_PDB, "t", "warm"), TS_OK);
  (void)cycle(f);
  before = ts_intern_count();
  for (int i = 0; i < 200; i++) {
    char job[32];
    snprintf(name, sizeof name, "p%d", i);
    snprintf(job, sizeof job, "job-%d", i);
    snprintf(meta, sizeof meta,
             ", labels: {job-name: %s, controller-uid: 7f0c%d-uid, pod-template-hash: h%x, "
             "kueue.x-k8s.io/queue-name: q%d}",
             job, i, i * 7919, i);
    snprintf(spec, sizeof spec, spec_fmt, job);
    add_pod(f, MODEL_ADDED, name, 0, meta, spec);
    snprintf(pdb, sizeof pdb, pdb_fmt, job, job);
    feed(f, MODEL_ADDED, pdb);
    if (i % 2) { /* a change: the new values in, the old ones out */
      snprintf(meta, sizeof meta, ", labels: {job-name: %s, controller-uid: changed-%d}", job, i);
      snprintf(spec, sizeof spec, spec_fmt, name);
      add_pod(f, MODEL_MODIFIED, name, 0, meta, spec);
    }
  }
  assert_true(ts_intern_count() >= before + 600);
  (void)cycle(f); /* running pods: nothing to write */
  for (int i = 0; i < 200; i++) {
    snprintf(name, sizeof name, "p%d", i);
    assert_int_equal(live_remove(f->l, MODEL_POD, "t", name), TS_OK);
    snprintf(name, sizeof name, "job-%d", i);
    assert_int_equal(live_remove(f->l, MODEL_PDB, "t", name), TS_OK);
  }
  (void)cycle(f);
  assert_int_equal(ts_intern_count(), before);
}

static void test_live_remove_tombstones(void **state) {
  fixture *f = *state;
  const char *ns, *name;
  json_error_t je;
  json_t *tomb;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED,
       "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, "
       "namespace: t}\nspec: {minMember: 2}\n");
  assert_non_null(model_get(live_model(f->l), MODEL_POD_GROUP, "t", "g"));
  tomb = json_loads("{\"kind\":\"PodGroup\",\"apiVersion\":\"scheduling.x-k8s.io/v1alpha1\","
                    "\"metadata\":{\"namespace\":\"t\",\"name\":\"g\"}}",
                    0, &je);
  assert_non_null(tomb);
  {
    model_obj *o = NULL;
    ts_err e;
    assert_int_not_equal(model_decode(tomb, NULL, &o, &e), TS_OK); /* what went wrong before */
  }
  assert_int_equal(model_decode_key(tomb, &ns, &name), MODEL_POD_GROUP);
  assert_string_equal(ns, "t");
  assert_string_equal(name, "g");
  assert_int_equal(live_remove(f->l, MODEL_POD_GROUP, ns, name), TS_OK);
  assert_null(model_get(live_model(f->l), MODEL_POD_GROUP, "t", "g"));
  assert_int_equal(live_remove(f->l, MODEL_POD_GROUP, ns, name), TS_OK); /* twice: no error */
  json_decref(tomb);
  /* a pod bound by this loop (assumed), then gone in a re-list */
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  assert_true(cycle(f));
  answer(f, "bind t/p0 -> n1", TS_OK);
  assert_string_equal(pod(f, "p0")->node_name, "n1");
  tomb = json_loads("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"t\","
                    "\"name\":\"p0\"}}",
                    0, &je);
  assert_int_equal(model_decode_key(tomb, &ns, &name), MODEL_POD);
  assert_int_equal(live_remove(f->l, MODEL_POD, ns, name), TS_OK);
  json_decref(tomb);
  assert_null(pod(f, "p0"));
  /* the same name again is a new pod: pending, not held on the old assumption */
  rec_clear(&f->r);
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  assert_null(pod(f, "p0")->node_name);
  assert_true(cycle(f));
  assert_true(find_call(f, "bind t/p0 -> n1") >= 0);
  answer(f, "bind t/p0 -> n1", TS_OK); /* every write answers before live_free */
  /* not a kind Tessera reads, or no name: nothing */
  tomb = json_loads("{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"s\"}}", 0,
                    &je);
  assert_int_equal(model_decode_key(tomb, &ns, &name), MODEL_KIND_COUNT);
  json_decref(tomb);
  tomb = json_loads("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{}}", 0, &je);
  assert_int_equal(model_decode_key(tomb, &ns, &name), MODEL_KIND_COUNT);
  json_decref(tomb);
}

static void test_live_abandoned_writes(void **state) {
  fixture *f = *state;
  feed(f, MODEL_ADDED, node_yaml);
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  assert_true(cycle(f));
  /* A replica that lost its lease: the write is abandoned and the assumption dropped. */
  answer(f, "bind t/p0 -> n1", TS_ENOTLEADER);
  assert_null(pod(f, "p0")->node_name);
  assert_false(live_busy(f->l));
}

static void test_live_metrics(void **state) {
  fixture *f = *state;
  ts_buf b;
  feed(f, MODEL_ADDED, node_yaml);
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  add_pod(f, MODEL_ADDED, "p1", 4, "", "");
  assert_true(cycle(f));
  answer(f, "bind t/p0 -> n1", TS_OK);
  ts_buf_init(&b, 1 << 20);
  assert_int_equal(live_metrics(f->l, &b), TS_OK);
  assert_int_equal(ts_buf_putc(&b, '\0'), TS_OK);
  assert_non_null(strstr(b.data, "\ntessera_cycles_total 1\n"));
  assert_non_null(strstr(b.data, "\ntessera_pods_bound_total 1\n"));
  assert_non_null(strstr(b.data, "\ntessera_pending_pods{reason=\"Unschedulable\"} 1\n"));
  assert_non_null(strstr(b.data, "\ntessera_unschedulable_reports_total 1\n"));
  assert_non_null(strstr(b.data, "\ntessera_writes_inflight 0\n"));
  assert_non_null(strstr(b.data, "# TYPE tessera_writes_total counter\n"));
  assert_non_null(strstr(b.data, "tessera_model_objects{kind=\"Pod\",group=\"\"} 2\n"));
  ts_buf_free(&b);
}

/* The /metrics body, NUL-terminated and checked against the text format (free it). */
static char *metrics_text(fixture *f) {
  ts_buf b;
  char why[256];
  ts_buf_init(&b, 1 << 22);
  assert_int_equal(live_metrics(f->l, &b), TS_OK);
  assert_int_equal(ts_buf_putc(&b, '\0'), TS_OK);
  if (!prom_text_valid(b.data, why, sizeof why)) fail_msg("/metrics: %s", why);
  return b.data;
}

static void assert_has(const char *text, const char *line) {
  if (!strstr(text, line)) fail_msg("no \"%s\" in:\n%s", line, text);
}

static const char *kueue_yaml =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
    "spec:\n  cohort: all\n  namespaceSelector: {}\n"
    "  preemption: {withinClusterQueue: LowerPriority}\n"
    "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
    "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 2, borrowingLimit: 1}]}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: lq, namespace: t}\nspec: {clusterQueue: cq}\n";

#define CREATED_S 1767225600 /* pod_fmt's creationTimestamp, 2026-01-01T00:00:00Z */

/* Kueue's metrics follow the workloads: gauges from the cycle, counters when the writes land
 * (an admission when a pod is bound, an eviction when it went; a refused one counts nothing). */
static void test_live_kueue_metrics(void **state) {
  fixture *f = *state;
  char *m;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  add_pod(f, MODEL_ADDED, "low", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}", "priority: 0, ");
  assert_true(cycle_at(f, CREATED_S + 30));
  m = metrics_text(f);
  assert_has(m, "\nkueue_cluster_queue_resource_usage{cohort=\"all\",cluster_queue=\"cq\","
                "flavor=\"gpu\",resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 2\n");
  assert_has(m, "\nkueue_cluster_queue_nominal_quota{cohort=\"all\",cluster_queue=\"cq\","
                "flavor=\"gpu\",resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 2\n");
  assert_has(m, "\nkueue_cluster_queue_borrowing_limit{cohort=\"all\",cluster_queue=\"cq\","
                "flavor=\"gpu\",resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_cluster_queue_lending_limit{cohort=\"all\",cluster_queue=\"cq\","
                "flavor=\"gpu\",resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} +Inf\n");
  assert_has(
      m, "\nkueue_admitted_active_workloads{cluster_queue=\"cq\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_local_queue_admitted_active_workloads{name=\"lq\",namespace=\"t\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_local_queue_resource_usage{name=\"lq\",namespace=\"t\",flavor=\"gpu\","
                "resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 2\n");
  assert_has(
      m, "\ntessera_gpu_allocated{node_pool=\"(no pool label)\"} 2\n"); /* assumed, being written */
  assert_has(m, "\ntessera_gpu_allocatable{node_pool=\"(no pool label)\"} 2\n");
  assert_null(strstr(m, "kueue_admitted_workloads_total{")); /* the bind has not landed */
  free(m);
  answer(f, "bind t/low -> n1", TS_OK);
  m = metrics_text(f);
  assert_has(m, "\nkueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m,
             "\nkueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",priority_class=\"\","
             "replica_role=\"standalone\",le=\"20\"} 0\n");
  assert_has(m,
             "\nkueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",priority_class=\"\","
             "replica_role=\"standalone\",le=\"40\"} 1\n");
  assert_has(m, "\nkueue_admission_wait_time_seconds_sum{cluster_queue=\"cq\",priority_class=\"\","
                "replica_role=\"standalone\"} 30\n");
  free(m);

  /* A higher priority workload preempts it; the first eviction is refused (a budget). */
  add_pod(f, MODEL_ADDED, "high", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}",
          "priority: 100, ");
  rec_clear(&f->r);
  assert_true(cycle_at(f, CREATED_S + 40));
  m = metrics_text(f);
  assert_has(m, "\nkueue_pending_workloads{cluster_queue=\"cq\",status=\"active\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_local_queue_pending_workloads{name=\"lq\",namespace=\"t\","
                "status=\"active\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\ntessera_pending_pods{reason=\"WaitingForQuota\"} 1\n");
  free(m);
  answer(f, "evict t/low", TS_EBUDGET);
  m = metrics_text(f);
  assert_null(strstr(m, "kueue_evicted_workloads_total{"));
  free(m);
  rec_clear(&f->r);
  assert_true(cycle_at(f, CREATED_S + 50)); /* decided again */
  answer(f, "evict t/low", TS_OK);
  m = metrics_text(f);
  assert_has(m, "\nkueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\","
                "underlying_cause=\"\",priority_class=\"\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_preempted_workloads_total{preempting_cluster_queue=\"cq\","
                "reason=\"InClusterQueue\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\ntessera_scheduling_cycle_duration_seconds_count 3\n");
  /* its pod still there: the quota is not released yet */
  assert_null(strstr(m, "kueue_workload_eviction_latency_seconds_count{"));
  free(m);
  add_pod(f, MODEL_DELETED, "low", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}", "priority: 0, ");
  m = metrics_text(f);
  assert_has(m, "\nkueue_workload_eviction_latency_seconds_count{cluster_queue=\"cq\","
                "reason=\"Preempted\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_workload_eviction_latency_seconds_bucket{cluster_queue=\"cq\","
                "reason=\"Preempted\",replica_role=\"standalone\",le=\"1\"} 1\n");
  free(m);
}

/* ---- Kueue v0.19.2's families, compared with its source ------------------------------- */

typedef struct upstream_family {
  char name[96], type[16], labels[160], le[400];
} upstream_family;

/* A file of tests/data/metrics/: name type labels (- for none) [buckets]. */
static size_t upstream_load(const char *path, upstream_family *v, size_t cap) {
  FILE *f = fopen(path, "r");
  char line[1024];
  size_t n = 0;
  assert_non_null(f);
  while (fgets(line, sizeof line, f) && n < cap) {
    upstream_family *u = &v[n];
    if (line[0] == '#' || line[0] == '\n') continue;
    u->le[0] = '\0';
    if (sscanf(line, "%95s %15s %159s %399s", u->name, u->type, u->labels, u->le) < 3) continue;
    if (!strcmp(u->labels, "-")) u->labels[0] = '\0';
    n++;
  }
  fclose(f);
  return n;
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The label names of the sample line at p (up to its '}'), sorted and comma-joined into out,
 * "le" left out; its le value into le (or ""). */
static void sample_labels(const char *p, char *out, size_t cap, char *le, size_t lecap) {
  char names[16][64];
  const char *v[16];
  size_t n = 0, len = 0;
  const char *q = strchr(p, '{'), *end;
  le[0] = out[0] = '\0';
  if (!q || !(end = strchr(q, '}'))) return;
  for (q++; q < end && n < 16;) {
    const char *eq = strchr(q, '=');
    const char *close;
    if (!eq || eq > end) break;
    close = strchr(eq + 2, '"'); /* values here carry no escaped quote */
    if ((size_t)(eq - q) == 2 && !strncmp(q, "le", 2))
      snprintf(le, lecap, "%.*s", (int)(close - eq - 2), eq + 2);
    else
      snprintf(names[n], sizeof names[n], "%.*s", (int)(eq - q), q), v[n] = names[n], n++;
    q = close + 1;
    if (*q == ',') q++;
  }
  qsort(v, n, sizeof *v, str_cmp);
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "," : "", v[i]);
}

/* Every family of text whose name starts with prefix is one of up's, of its type, every sample
 * with exactly its labels and a histogram with exactly its buckets; returns the families seen. */
static size_t upstream_match(const char *text, const char *prefix_, const upstream_family *up,
                             size_t nup) {
  size_t seen = 0;
  char type_prefix[64];
  snprintf(type_prefix, sizeof type_prefix, "# TYPE %s", prefix_);
  for (const char *t = text; (t = strstr(t, type_prefix)); t++) {
    char name[96], type[16], prefix[110];
    const upstream_family *u = NULL;
    sscanf(t, "# TYPE %95s %15s", name, type);
    for (size_t i = 0; i < nup && !u; i++)
      if (!strcmp(up[i].name, name)) u = &up[i];
    if (!u) fail_msg("%s is not an upstream metric", name);
    if (strcmp(u->type, type)) fail_msg("%s is a %s, Kueue's a %s", name, type, u->type);
    seen++;
    snprintf(prefix, sizeof prefix, "\n%s", name);
    {
      char les[400] = "";
      size_t nle = 0;
      for (const char *p = text; (p = strstr(p, prefix)); p++) {
        const char *rest = p + strlen(prefix);
        char labs[200], le[32];
        if (*rest != '{' && strncmp(rest, "_bucket{", 8) && strncmp(rest, "_sum{", 5) &&
            strncmp(rest, "_count{", 7))
          continue;
        sample_labels(p + 1, labs, sizeof labs, le, sizeof le);
        if (strcmp(labs, u->labels))
          fail_msg("%s: labels {%s}, Kueue's {%s}", name, labs, u->labels);
        if (le[0] && strcmp(le, "+Inf")) { /* the first series' bounds, in order */
          char tok[40], all[420];
          snprintf(tok, sizeof tok, ",%s,", le);
          snprintf(all, sizeof all, ",%s,", les);
          if (!strstr(all, tok))
            nle += (size_t)snprintf(les + nle, sizeof les - nle, "%s%s", nle ? "," : "", le);
        }
      }
      if (!strcmp(type, "histogram") && les[0] && strcmp(les, u->le))
        fail_msg("%s: buckets %s, Kueue's %s", name, les, u->le);
    }
  }
  return seen;
}

static const char *cohort_yaml =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: org}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: team}\n"
    "spec: {parentName: org}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
    "spec:\n  cohort: team\n  namespaceSelector: {}\n"
    "  preemption: {withinClusterQueue: LowerPriority}\n"
    "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
    "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 1}]}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: lender}\n"
    "spec:\n  cohort: org\n  namespaceSelector: {}\n"
    "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
    "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 1}]}\n---\n"
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: prod}\n"
    "value: 100\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: lq, namespace: t}\nspec: {clusterQueue: cq}\n";

/* Kueue v0.19.2's names, types, labels and buckets, from its source (tests/data/metrics): a
 * cluster with cohorts two deep, fair sharing on, a workload that borrows, one admitted with a
 * priority class, one pending, one preempted. */
static void test_live_kueue_metrics_upstream(void **state) {
  fixture *f = *state;
  static upstream_family up[128];
  size_t nup = upstream_load("tests/data/metrics/kueue-v0.19.2.txt", up, 128), seen;
  char *m;
  assert_true(nup >= 60);
  f->cfg.queueing.fair_sharing = true;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, cohort_yaml);
  add_pod(f, MODEL_ADDED, "low", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}", "priority: 0, ");
  assert_true(cycle_at(f, CREATED_S + 30));
  answer(f, "bind t/low -> n1", TS_OK);
  add_pod(f, MODEL_ADDED, "high", 1, ", labels: {kueue.x-k8s.io/queue-name: lq}",
          "priorityClassName: prod, priority: 100, ");
  assert_true(cycle_at(f, CREATED_S + 40));
  answer(f, "evict t/low", TS_OK);
  m = metrics_text(f);
  seen = upstream_match(m, "kueue_", up, nup);
  /* borrowing 1 GPU of the 2 the root lends, weight 1: 500 per mille */
  assert_has(m, "\nkueue_cluster_queue_weighted_share{cluster_queue=\"cq\",cohort=\"team\","
                "replica_role=\"standalone\"} 500\n");
  assert_has(m, "\nkueue_cluster_queue_info{cluster_queue=\"cq\",parent_cohort=\"team\","
                "root_cohort=\"org\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_cohort_info{cohort=\"team\",parent_cohort=\"org\",root_cohort=\"org\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_cohort_subtree_quota{cohort=\"org\",flavor=\"gpu\","
                "resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 2\n");
  assert_has(m, "\nkueue_cohort_subtree_resource_reservations{cohort=\"org\",flavor=\"gpu\","
                "resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 2\n");
  assert_has(m, "\nkueue_cluster_queue_resource_pending{cluster_queue=\"cq\","
                "resource=\"nvidia.com/gpu\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\","
                "underlying_cause=\"\",priority_class=\"\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_admission_attempts_total{result=\"inadmissible\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_cohort_subtree_admitted_workloads_total{cohort=\"org\","
                "priority_class=\"\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_local_queue_admitted_workloads_total{name=\"lq\",namespace=\"t\","
                "priority_class=\"\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_admission_attempts_total{result=\"success\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\","
                "priority_class=\"\",replica_role=\"standalone\",le=\"40960\"} 1\n");
  free(m);
  assert_true(seen >= 30);
}

/* kube-scheduler's families, compared with its source (tests/data/metrics), and what they
 * count: an attempt per decided pod, scheduled when the binding lands (with the SLI from its
 * first attempt), the pending pods by kube-scheduler's queue. */
static void test_live_scheduler_metrics_upstream(void **state) {
  fixture *f = *state;
  static upstream_family up[16];
  size_t nup = upstream_load("tests/data/metrics/kube-scheduler-v1.34.txt", up, 16);
  char *m;
  assert_int_equal(nup, 4);
  feed(f, MODEL_ADDED, node_yaml);
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  add_pod(f, MODEL_ADDED, "big", 4, "", "");
  add_pod(f, MODEL_ADDED, "gated", 1, "", "schedulingGates: [{name: example.com/hold}], ");
  m = metrics_text(f);
  assert_has(m, "\nscheduler_pending_pods{queue=\"active\"} 2\n"); /* not yet attempted */
  assert_null(strstr(m, "scheduler_schedule_attempts_total"));     /* nothing counted yet */
  free(m);
  assert_true(cycle(f));
  m = metrics_text(f);
  assert_has(m, "\nscheduler_pending_pods{queue=\"active\"} 0\n");
  assert_has(m, "\nscheduler_pending_pods{queue=\"unschedulable\"} 1\n");
  assert_has(m, "\nscheduler_pending_pods{queue=\"gated\"} 1\n");
  assert_has(m, "\nscheduler_schedule_attempts_total{result=\"unschedulable\","
                "profile=\"tessera\"} 1\n");
  free(m);
  answer(f, "bind t/p0 -> n1", TS_OK);
  assert_true(cycle(f)); /* the binding changed the cluster: big is attempted again */
  assert_true(cycle(f)); /* nothing changed: re-evaluated, not counted as an attempt */
  m = metrics_text(f);
  assert_has(m, "\nscheduler_schedule_attempts_total{result=\"unschedulable\","
                "profile=\"tessera\"} 2\n");
  assert_has(m, "\nscheduler_schedule_attempts_total{result=\"scheduled\","
                "profile=\"tessera\"} 1\n");
  assert_has(m, "\nscheduler_pod_scheduling_sli_duration_seconds_count{attempts=\"1\"} 1\n");
  assert_has(m, "\nscheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1\n");
  assert_has(m, "\ntessera_binding_duration_seconds_count 1\n");
  assert_int_equal(upstream_match(m, "scheduler_", up, nup), 4);
  free(m);
}

/* A pod of the test's Kueue workload as the kubelet would report it: bound to n1, phase, and
 * the PodScheduled / Ready transitions at CREATED_S + sched / + ready (0: no Ready). */
static void kubelet_reports(fixture *f, const char *phase, int sched, int ready) {
  char y[2048], rd[300] = "";
  char t1[40], t2[40];
  ts_time_format((int64_t)(CREATED_S + sched) * 1000000000LL, t1, sizeof t1);
  ts_time_format((int64_t)(CREATED_S + ready) * 1000000000LL, t2, sizeof t2);
  if (ready)
    snprintf(rd, sizeof rd, ", {type: Ready, status: \"True\", lastTransitionTime: \"%s\"}", t2);
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: t, uid: w-uid, "
           "creationTimestamp: \"2026-01-01T00:00:00Z\", labels: {kueue.x-k8s.io/queue-name: lq}}\n"
           "spec: {schedulerName: tessera, nodeName: n1, priorityClassName: prod, priority: 100, "
           "containers: [{name: c, resources: {requests: {nvidia.com/gpu: \"1\"}, limits: "
           "{nvidia.com/gpu: \"1\"}}}]}\n"
           "status: {phase: %s, conditions: [{type: PodScheduled, status: \"True\", "
           "lastTransitionTime: \"%s\"}%s]}\n",
           phase, t1, rd);
  feed(f, MODEL_MODIFIED, y);
}

/* waitForPodsReady on; the Kueue workload w (1 GPU, class prod) admitted at CREATED_S + 30
 * and its binding landed. */
static void admitted_and_bound(fixture *f) {
  f->cfg.wait_for_pods_ready = true;
  f->cfg.pods_ready_timeout_ns = 300 * 1000000000LL;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  feed(f, MODEL_ADDED,
       "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\n"
       "metadata: {name: prod}\nvalue: 100\n");
  add_pod(f, MODEL_ADDED, "w", 1, ", labels: {kueue.x-k8s.io/queue-name: lq}",
          "priorityClassName: prod, priority: 100, ");
  assert_true(cycle_at(f, CREATED_S + 30));
  answer(f, "bind t/w -> n1", TS_OK);
}

/* Kueue's ready and finished families, from the workload's life as the cycles see it: ready
 * once (creation to ready, admission to ready), never again while it runs; finished once its
 * pods ended. Names, labels and buckets as Kueue v0.19.2's. */
static void test_live_kueue_ready_finished(void **state) {
  fixture *f = *state;
  static upstream_family up[128];
  size_t nup = upstream_load("tests/data/metrics/kueue-v0.19.2.txt", up, 128);
  char *m;
  admitted_and_bound(f);
  kubelet_reports(f, "Running", 31, 0); /* bound, not ready yet */
  assert_true(cycle_at(f, CREATED_S + 35));
  m = metrics_text(f);
  assert_null(strstr(m, "kueue_ready_wait_time_seconds_count"));
  free(m);
  kubelet_reports(f, "Running", 31, 40); /* ready at +40 */
  assert_true(cycle_at(f, CREATED_S + 45));
  assert_true(cycle_at(f, CREATED_S + 50)); /* still ready: not counted again */
  m = metrics_text(f);
  assert_has(m, "\nkueue_ready_wait_time_seconds_sum{cluster_queue=\"cq\",priority_class=\"prod\","
                "replica_role=\"standalone\"} 40\n");
  assert_has(m, "\nkueue_ready_wait_time_seconds_count{cluster_queue=\"cq\",priority_class="
                "\"prod\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_admitted_until_ready_wait_time_seconds_sum{cluster_queue=\"cq\","
                "priority_class=\"prod\",replica_role=\"standalone\"} 9\n");
  assert_has(m, "\nkueue_local_queue_ready_wait_time_seconds_count{name=\"lq\",namespace=\"t\","
                "priority_class=\"prod\",replica_role=\"standalone\"} 1\n");
  assert_null(strstr(m, "kueue_finished_workloads_total{"));
  assert_null(strstr(m, "kueue_finished_workloads{")); /* running: not finished */
  free(m);
  kubelet_reports(f, "Succeeded", 31, 40); /* it ended */
  assert_true(cycle_at(f, CREATED_S + 60));
  assert_true(cycle_at(f, CREATED_S + 70)); /* ended still: not counted again */
  m = metrics_text(f);
  assert_has(m, "\nkueue_finished_workloads_total{cluster_queue=\"cq\",priority_class=\"prod\","
                "replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_local_queue_finished_workloads_total{name=\"lq\",namespace=\"t\","
                "priority_class=\"prod\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_finished_workloads{cluster_queue=\"cq\",replica_role=\"standalone\"} 1\n");
  assert_has(m, "\nkueue_local_queue_finished_workloads{name=\"lq\",namespace=\"t\","
                "replica_role=\"standalone\"} 1\n");
  assert_true(upstream_match(m, "kueue_", up, nup) >= 25);
  free(m);
}

/* A ready workload preempted: Kueue's pods_ready_to_evicted_time_seconds, from ready to the
 * eviction, once the eviction landed. */
static void test_live_kueue_ready_to_evicted(void **state) {
  fixture *f = *state;
  char *m;
  admitted_and_bound(f);
  kubelet_reports(f, "Running", 31, 40);
  assert_true(cycle_at(f, CREATED_S + 45));
  add_pod(f, MODEL_ADDED, "big", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}",
          "priority: 1000, ");
  rec_clear(&f->r);
  assert_true(cycle_at(f, CREATED_S + 100));
  answer(f, "evict t/w", TS_OK);
  m = metrics_text(f);
  assert_has(m, "\nkueue_pods_ready_to_evicted_time_seconds_sum{cluster_queue=\"cq\","
                "reason=\"Preempted\",underlying_cause=\"\",replica_role=\"standalone\"} "
                "60\n");
  assert_has(m, "\nkueue_pods_ready_to_evicted_time_seconds_bucket{cluster_queue=\"cq\","
                "reason=\"Preempted\",underlying_cause=\"\",replica_role=\"standalone\","
                "le=\"40\"} 0\n");
  free(m);
}

/* When Kueue's controller admits (queueing.admission: kueue) it exports the kueue_* families
 * itself: Tessera exports none of them (the same names from two jobs would be summed twice),
 * and keeps its own and kube-scheduler's. */
static void test_live_kueue_metrics_left_to_kueue(void **state) {
  fixture *f = *state;
  char *m;
  f->cfg.kueue_admits = true;
  live_free(f->l);
  {
    live_writer w = {w_reserve, w_unreserve, w_bind, w_evict, w_unsched, NULL, w_qstatus, NULL};
    w.ud = &f->r;
    assert_non_null(f->l = live_new(&f->cfg, &w));
  }
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  add_pod(f, MODEL_ADDED, "p0", 1, "", "");
  assert_true(cycle(f));
  answer(f, "bind t/p0 -> n1", TS_OK);
  m = metrics_text(f);
  assert_null(strstr(m, "kueue_"));
  assert_has(m, "\ntessera_gpu_allocated{node_pool=\"(no pool label)\"} 1\n");
  assert_has(m,
             "\nscheduler_schedule_attempts_total{result=\"scheduled\",profile=\"tessera\"} 1\n");
  free(m);
}

/* A follower exports no cluster gauge (GPUs, pending pods, queues): two replicas' sums stay the
 * leader's; becoming one drops what the last cycle rendered. Counters stay. */
static void test_live_metrics_follower(void **state) {
  fixture *f = *state;
  char *m;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  live_set_role(f->l, QMETRICS_LEADER);
  add_pod(f, MODEL_ADDED, "low", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}", "priority: 0, ");
  assert_true(cycle_at(f, CREATED_S + 30));
  answer(f, "bind t/low -> n1", TS_OK);
  m = metrics_text(f);
  assert_has(m,
             "\nkueue_admitted_active_workloads{cluster_queue=\"cq\",replica_role=\"leader\"} 1\n");
  assert_has(m, "\ntessera_gpu_allocated{node_pool=\"(no pool label)\"} 2\n");
  free(m);
  live_set_role(f->l, QMETRICS_FOLLOWER);
  m = metrics_text(f);
  assert_null(strstr(m, "kueue_admitted_active_workloads"));
  assert_null(strstr(m, "kueue_cluster_queue_nominal_quota"));
  assert_null(strstr(m, "tessera_gpu_allocated"));
  assert_null(strstr(m, "tessera_pending_pods"));
  assert_has(m, "\nkueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\","
                "replica_role=\"leader\"} 1\n");
  free(m);
}

static void answer_status(fixture *f, const char *text, ts_rc r) {
  int i = find_call(f, text);
  if (i < 0) fail_msg("no call \"%s\"", text);
  live_queue_status_done(f->r.calls[i].token, r);
}

/* Queue status is written only when turned on, when it changed, at most once per interval per
 * queue (and again, changed or not, after a reset: leading again); a failed write is tried
 * again after the interval; a queue that went is forgotten. */
/* The cycle just run wrote both queues' status, empty; the writes succeed. */
static void both_empty_written(fixture *f) {
  const char *want[] = {"status ClusterQueue cq: pending 0, admitted 0, active",
                        "status LocalQueue t/lq: pending 0, admitted 0"};
  expect_calls(f, want, 2);
  answer_status(f, want[0], TS_OK);
  answer_status(f, want[1], TS_OK);
  rec_clear(&f->r);
}

static void test_live_queue_status(void **state) {
  fixture *f = *state;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  assert_true(cycle_at(f, 100));
  expect_calls(f, NULL, 0); /* off by default */
  live_set_queue_status(f->l, 10 * 1000000000LL);
  assert_true(cycle_at(f, 100));
  both_empty_written(f);
  assert_true(cycle_at(f, 101));
  expect_calls(f, NULL, 0);      /* unchanged */
  live_queue_status_reset(f->l); /* leading again: written once more, unchanged as it is */
  assert_true(cycle_at(f, 101));
  both_empty_written(f);
  assert_true(cycle_at(f, 101));
  expect_calls(f, NULL, 0);
  add_pod(f, MODEL_ADDED, "p", 1, ", labels: {kueue.x-k8s.io/queue-name: lq}", "");
  assert_true(cycle_at(f, 102));
  {
    const char *want[] = {"bind t/p -> n1"}; /* changed, but written 1 s ago */
    expect_calls(f, want, 1);
  }
  answer(f, "bind t/p -> n1", TS_OK);
  rec_clear(&f->r);
  assert_true(cycle_at(f, 111));
  {
    const char *want[] = {"status ClusterQueue cq: pending 0, admitted 1, active",
                          "status LocalQueue t/lq: pending 0, admitted 1"};
    expect_calls(f, want, 2);
  }
  answer_status(f, "status ClusterQueue cq: pending 0, admitted 1, active", TS_EHTTP);
  answer_status(f, "status LocalQueue t/lq: pending 0, admitted 1", TS_OK);
  rec_clear(&f->r);
  assert_true(cycle_at(f, 116));
  expect_calls(f, NULL, 0); /* the failed one waits for its interval */
  assert_true(cycle_at(f, 121));
  {
    const char *want[] = {"status ClusterQueue cq: pending 0, admitted 1, active"};
    expect_calls(f, want, 1);
  }
  /* The ClusterQueue goes while its write is in flight (the write then ends): its LocalQueue
   * says so. */
  assert_int_equal(live_remove(f->l, MODEL_CLUSTER_QUEUE, NULL, "cq"), TS_OK);
  {
    void *token = f->r.calls[0].token;
    const char *want[] = {"status LocalQueue t/lq: pending 0, admitted 0"};
    rec_clear(&f->r);
    assert_true(cycle_at(f, 122));
    expect_calls(f, want, 1);
    live_queue_status_done(token, TS_OK);
    answer_status(f, want[0], TS_OK);
  }
  rec_clear(&f->r);
  live_set_queue_status(f->l, -1);
  feed(f, MODEL_MODIFIED, kueue_yaml); /* back: nothing written, it is off */
  assert_true(cycle_at(f, 140));
  expect_calls(f, NULL, 0);
}

/* The pending gauge names the kind of reason; a LocalQueue whose ClusterQueue does not exist
 * is Active=False. */
static void test_live_pending_reasons(void **state) {
  fixture *f = *state;
  char *m;
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED,
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
       "metadata: {name: lq, namespace: t}\nspec: {clusterQueue: \"no\\\"where\"}\n");
  add_pod(f, MODEL_ADDED, "big", 4, "", "");
  add_pod(f, MODEL_ADDED, "q", 1, ", labels: {kueue.x-k8s.io/queue-name: lq}", "");
  add_pod(f, MODEL_ADDED, "g", 1,
          ", labels: {kueue.x-k8s.io/pod-group-name: g}, annotations: "
          "{kueue.x-k8s.io/pod-group-total-count: \"2\"}",
          "");
  assert_true(cycle(f));
  m = metrics_text(f);
  assert_has(m, "\ntessera_pending_pods{reason=\"Unschedulable\"} 1\n");
  assert_has(m, "\ntessera_pending_pods{reason=\"Blocked\"} 1\n"); /* no ClusterQueue */
  assert_has(m, "\ntessera_pending_pods{reason=\"WaitingForQuota\"} 0\n");
  assert_has(m, "\ntessera_pending_pods{reason=\"WaitingForGang\"} 1\n");
  assert_has(m, "\ntessera_pending_pods{reason=\"Backoff\"} 0\n");
  assert_has(m, "\nkueue_local_queue_status{name=\"lq\",namespace=\"t\",active=\"False\","
                "replica_role=\"standalone\"} 1\n");
  free(m);
}

/* The condition's reason is the kind of reason, and only pods that nodes would help are
 * "Unschedulable" (cluster-autoscaler and Karpenter add nodes for exactly those): a pod too
 * big for any node, and a queued pod whose quota holds but whose flavor's nodes cannot hold it;
 * not a pod over its queue's quota (WaitingForQuota), a gang short of members (WaitingForGang),
 * a pod whose LocalQueue's ClusterQueue is missing (Blocked), a gated pod (SchedulingGated, not
 * scheduled). Once its last gate goes, the gated pod is bound in the next cycle. */
static void test_live_reasons_for_autoscalers(void **state) {
  fixture *f = *state;
  feed(f, MODEL_ADDED, node_yaml);  /* one node, 2 GPUs */
  feed(f, MODEL_ADDED, kueue_yaml); /* cq: 2 GPUs, LocalQueue t/lq */
  feed(f, MODEL_ADDED,
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: roomy}\n"
       "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], "
       "flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 16}]}]}]}\n---\n"
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq-roomy, "
       "namespace: t}\nspec: {clusterQueue: roomy}\n---\n"
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq-none, "
       "namespace: t}\nspec: {clusterQueue: none}\n");
  add_pod(f, MODEL_ADDED, "big", 4, "", "");
  add_pod(f, MODEL_ADDED, "gated", 0, "", "schedulingGates: [{name: example.com/wait}], ");
  add_pod(f, MODEL_ADDED, "q1", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}", "priority: 9, ");
  add_pod(f, MODEL_ADDED, "q2", 1, ", labels: {kueue.x-k8s.io/queue-name: lq}", "");
  add_pod(f, MODEL_ADDED, "wide", 3, ", labels: {kueue.x-k8s.io/queue-name: lq-roomy}", "");
  add_pod(f, MODEL_ADDED, "lost", 1, ", labels: {kueue.x-k8s.io/queue-name: lq-none}", "");
  add_pod(f, MODEL_ADDED, "g0", 1,
          ", labels: {kueue.x-k8s.io/pod-group-name: g}, annotations: "
          "{kueue.x-k8s.io/pod-group-total-count: \"2\"}",
          "");
  assert_true(cycle(f));
  assert_true(find_call(f, "bind t/q1 -> n1") >= 0);
  answer(f, "bind t/q1 -> n1", TS_OK); /* the reports follow the cycle's bindings */
  assert_true(find_call(f, "unschedulable t/big (Unschedulable): 0/1 nodes are available: 1 "
                           "Insufficient nvidia.com/gpu.") >= 0);
  assert_true(find_call(f, "unschedulable t/gated (SchedulingGated): waiting for scheduling "
                           "gates: [example.com/wait]") >= 0);
  {
    static const char *const want[][2] = {{"q2", "WaitingForQuota"},
                                          {"wide", "Unschedulable"}, /* quota holds, node not */
                                          {"lost", "Blocked"},
                                          {"g0", "WaitingForGang"}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
      char head[64];
      bool found = false;
      snprintf(head, sizeof head, "unschedulable t/%s (%s): ", want[k][0], want[k][1]);
      for (int i = 0; i < f->r.n; i++) found |= !strncmp(f->r.calls[i].text, head, strlen(head));
      if (!found) fail_msg("no report \"%s...\"", head);
    }
  }
  /* The gate goes (the pod updated): bound in the next cycle. */
  add_pod(f, MODEL_MODIFIED, "gated", 0, "", "");
  rec_clear(&f->r);
  assert_true(cycle(f));
  assert_true(find_call(f, "bind t/gated -> n1") >= 0);
  answer(f, "bind t/gated -> n1", TS_OK);
}

static void test_allocation_json(void **state) {
  fixture *f = *state;
  (void)f;
  /* Configs, admin access and a label node selector (network-attached devices). */
  model_slice slice = {0};
  model_device dev = {0};
  const char *reqs[] = {"gpu"};
  model_opaque_config opaque = {"gpu.nvidia.com", json_pack("{s:i}", "sharing", 2)};
  dra_config cfg = {MODEL_FROM_CLASS, reqs, 1, &opaque};
  const char *vals[] = {"a", "b"};
  model_req req = {"zone", MODEL_OP_IN, vals, 2, 0};
  model_node_term term = {&req, 1, NULL, 0};
  dra_result r = {0};
  json_t *got, *want;
  json_error_t je;
  slice.driver = "gpu.nvidia.com";
  slice.pool = "fabric";
  dev.name = "nic-3";
  r.devices[0] = (dra_device){"gpu", &slice, &dev, true};
  r.ndevices = 1;
  r.configs = &cfg;
  r.nconfigs = 1;
  r.node_selector = (model_node_selector){&term, 1};
  {
    model_allocation a;
    assert_int_equal(dra_result_allocation(&r, &a), TS_OK);
    got = model_allocation_json(&a);
    model_allocation_free(&a);
  }
  want = json_loads(
      "{\"devices\": {\"results\": [{\"request\": \"gpu\", \"driver\": \"gpu.nvidia.com\", "
      "\"pool\": \"fabric\", \"device\": \"nic-3\", \"adminAccess\": true}], \"config\": "
      "[{\"source\": \"FromClass\", \"requests\": [\"gpu\"], \"opaque\": {\"driver\": "
      "\"gpu.nvidia.com\", \"parameters\": {\"sharing\": 2}}}]}, \"nodeSelector\": "
      "{\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"zone\", \"operator\": \"In\", "
      "\"values\": [\"a\", \"b\"]}]}]}}",
      0, &je);
  assert_non_null(want);
  assert_true(json_equal(got, want));
  json_decref(got);
  json_decref(want);
  json_decref(opaque.parameters);
}

/* One PodScheduled=False write per pod and distinct reason: a reason whose node counts alone
 * changed (pods placed elsewhere, a node added) is written again at most once a minute; a
 * different reason at once. */
static void test_live_report_counts(void **state) {
  fixture *f = *state;
  live_stats st;
  feed(f, MODEL_ADDED, node_yaml);
  add_pod(f, MODEL_ADDED, "big", 4, "", "");
  assert_true(cycle_at(f, 100));
  assert_int_equal(
      find_call(f, "unschedulable t/big (Unschedulable): 0/1 nodes are available: 1 Insufficient "
                   "nvidia.com/gpu."),
      0);
  rec_clear(&f->r);
  feed(f, MODEL_ADDED,
       "apiVersion: v1\nkind: Node\nmetadata: {name: n2, uid: n2-uid}\n"
       "status: {allocatable: {pods: \"110\", nvidia.com/gpu: \"2\"}}\n");
  assert_true(cycle_at(f, 130));
  assert_int_equal(f->r.n, 0); /* "0/2 ... 2 Insufficient": counts only, 30 s later */
  assert_true(cycle_at(f, 161));
  expect_calls(f,
               (const char *[]){
                   "unschedulable t/big (Unschedulable): 0/2 nodes are available: 2 Insufficient "
                   "nvidia.com/gpu."},
               1);
  rec_clear(&f->r);
  feed(f, MODEL_MODIFIED,
       "apiVersion: v1\nkind: Node\nmetadata: {name: n2, uid: n2-uid}\n"
       "spec: {unschedulable: true}\nstatus: {allocatable: {pods: \"110\", nvidia.com/gpu: "
       "\"2\"}}\n");
  assert_true(cycle_at(f, 162));
  expect_calls(f,
               (const char *[]){
                   "unschedulable t/big (Unschedulable): 0/2 nodes are available: 1 Insufficient "
                   "nvidia.com/gpu, 1 node(s) were unschedulable."},
               1);
  live_get_stats(f->l, &st);
  assert_int_equal(st.unschedulable, 3);
}

/* A queued pod's message carries its place in its queues (issue 36), worked out at most once a
 * minute; a change of place alone is written at most every 5 minutes, without an Event (every
 * admission ahead moves every workload behind). cq holds 2 GPUs: a (2 GPUs, priority 9) is
 * admitted, b and c (1 GPU each, b older) wait: 1 and 2 of 2. b goes: c is 1 of 1, written
 * when 5 minutes have passed since its last message, with no Event. */
/* A pod of one GPU in LocalQueue t/lq, created sec seconds after pod_fmt's. */
static void queued_later(fixture *f, const char *name, int sec) {
  char y[1024];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, uid: %s-uid, "
           "creationTimestamp: \"2026-01-01T00:00:%02dZ\", labels: {kueue.x-k8s.io/queue-name: "
           "lq}}\nspec: {schedulerName: tessera, containers: [{name: c, resources: {requests: "
           "{nvidia.com/gpu: \"1\"}, limits: {nvidia.com/gpu: \"1\"}}}]}\n",
           name, name, sec);
  feed(f, MODEL_ADDED, y);
}

#define WAIT_REASON                                                                                \
  "couldn't assign flavors to pod set ps-0: insufficient unused quota for nvidia.com/gpu in "      \
  "flavor gpu, 1 more needed"
#define WAIT_QUOTA WAIT_REASON "."
static void test_live_report_places(void **state) {
  fixture *f = *state;
  const char *q = ", labels: {kueue.x-k8s.io/queue-name: lq}";
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  add_pod(f, MODEL_ADDED, "a", 2, q, "priority: 9, ");
  add_pod(f, MODEL_ADDED, "b", 1, q, "");
  queued_later(f, "c", 5);
  assert_true(cycle_at(f, 100));
  answer(f, "bind t/a -> n1", TS_OK);
  { /* b and c wait for quota in cq: the per-queue gauge counts them, by kind of reason */
    char *m = metrics_text(f);
    assert_has(m, "\ntessera_cluster_queue_pending_workloads{cluster_queue=\"cq\",reason="
                  "\"WaitingForQuota\",replica_role=\"standalone\"} 2\n");
    assert_has(m, "\ntessera_cluster_queue_pending_workloads{cluster_queue=\"cq\",reason="
                  "\"Unschedulable\",replica_role=\"standalone\"} 0\n");
    assert_true(!strstr(m, "reason=\"NoQueueName\",replica_role"));
    free(m);
  }
  assert_true(find_call(f, "unschedulable t/b (WaitingForQuota): " WAIT_QUOTA
                           " Place in queue: 1 of 2 in ClusterQueue cq (1 of 2 in LocalQueue "
                           "t/lq).") >= 0);
  assert_true(find_call(f, "unschedulable t/c (WaitingForQuota): " WAIT_QUOTA
                           " Place in queue: 2 of 2 in ClusterQueue cq (2 of 2 in LocalQueue "
                           "t/lq).") >= 0);
  add_pod(f, MODEL_MODIFIED, "a", 2, q, "priority: 9, nodeName: n1, ");
  add_pod(f, MODEL_DELETED, "b", 1, q, "");
  rec_clear(&f->r);
  assert_true(cycle_at(f, 130)); /* the place is not worked out again yet */
  assert_true(cycle_at(f, 161)); /* it is, but the last message is 61 s old */
  assert_int_equal(f->r.n, 0);
  assert_true(cycle_at(f, 401));
  expect_calls(f,
               (const char *[]){"unschedulable t/c (WaitingForQuota, no event): " WAIT_QUOTA
                                " Place in queue: 1 of 1 in ClusterQueue cq (1 of 1 in "
                                "LocalQueue t/lq)."},
               1);
  /* d arrives 2 s after the places were worked out: reported at once without its place (with
   * the Event), which follows within 5 s (without one). */
  queued_later(f, "d", 9);
  rec_clear(&f->r);
  assert_true(cycle_at(f, 403));
  expect_calls(f, (const char *[]){"unschedulable t/d (WaitingForQuota): " WAIT_REASON}, 1);
  rec_clear(&f->r);
  assert_true(cycle_at(f, 406));
  expect_calls(f,
               (const char *[]){"unschedulable t/d (WaitingForQuota, no event): " WAIT_QUOTA
                                " Place in queue: 2 of 2 in ClusterQueue cq (2 of 2 in "
                                "LocalQueue t/lq)."},
               1);
}

static ts_rc estimate_all(void *ud, model *m, const sched_config *cfg, int64_t now_ns,
                          live_started_fn started, void *sud) {
  sim_estimate_opts eo = {.max_events = 200, .started = started, .ud = sud};
  sim_estimate_result est;
  ts_err e;
  (void)ud;
  ts_err_clear(&e);
  return sim_estimate(m, cfg, now_ns, NULL, NULL, &eo, &est, &e);
}

/* With an estimator (tessera run gives sim_estimate's forward run), the place carries the
 * estimated start: r holds cq's 2 GPUs and is expected to run 45 minutes from its start, 15
 * minutes ago; then b and c (1 GPU each) start: in about 30 minutes. d asks for more than the
 * queue can ever hold: no estimate. The model is given back as it was. */
static void test_live_report_estimate(void **state) {
  fixture *f = *state;
  const char *q = ", labels: {kueue.x-k8s.io/queue-name: lq}";
  char y[1024];
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  live_set_estimator(f->l, estimate_all, NULL);
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: t, uid: r-uid, "
           "creationTimestamp: \"2026-01-01T00:00:00Z\", labels: {kueue.x-k8s.io/queue-name: "
           "lq}, annotations: {tessera.dev/expected-duration: 45m}}\nspec: {schedulerName: "
           "tessera, nodeName: n1, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "
           "\"2\"}, limits: {nvidia.com/gpu: \"2\"}}}]}\nstatus: {phase: Running, startTime: "
           "\"2026-01-01T00:45:00Z\"}\n");
  feed(f, MODEL_ADDED, y);
  add_pod(f, MODEL_ADDED, "b", 1, q, "");
  add_pod(f, MODEL_ADDED, "c", 1, q, "");
  add_pod(f, MODEL_ADDED, "d", 4, q, "");
  assert_true(cycle_at(f, CREATED_S + 3600)); /* 01:00: r started at 00:45 */
  assert_true(find_call(f, "unschedulable t/b (WaitingForQuota): " WAIT_QUOTA
                           " Place in queue: 1 of 3 in ClusterQueue cq (1 of 3 in LocalQueue "
                           "t/lq). Estimated start: in about 30 minutes.") >= 0);
  for (int i = 0; i < f->r.n; i++) /* d never fits: no estimate */
    if (strstr(f->r.calls[i].text, "t/d ")) assert_null(strstr(f->r.calls[i].text, "Estimated"));
  assert_null(pod(f, "b")->node_name); /* the forward run's bindings were undone */
  assert_string_equal(pod(f, "r")->node_name, "n1");
  assert_int_equal(pod(f, "r")->phase, MODEL_PHASE_RUNNING);
  { /* the next cycle's gauges carry the estimate: b and c in 30 minutes, d none */
    char *m;
    assert_true(cycle_at(f, CREATED_S + 3601));
    m = metrics_text(f);
    assert_has(m, "\ntessera_cluster_queue_estimated_workloads{cluster_queue=\"cq\","
                  "replica_role=\"standalone\"} 2\n");
    assert_has(m, "\ntessera_cluster_queue_estimated_wait_seconds{cluster_queue=\"cq\","
                  "quantile=\"0.9\",replica_role=\"standalone\"} 1800\n");
    free(m);
  }
  /* r is now expected to run 3 hours (until 03:45): at the next refresh b's estimate moves by
   * 2 h 15 min, more than half its wait and than 30 minutes: written at once, with the Event */
  feed(f, MODEL_MODIFIED, strstr(y, "45m") ? (memcpy(strstr(y, "45m"), "3h ", 3), y) : y);
  rec_clear(&f->r);
  assert_true(cycle_at(f, CREATED_S + 3600 + 90));
  assert_true(find_call(f, "unschedulable t/b (WaitingForQuota): " WAIT_QUOTA
                           " Place in queue: 1 of 3 in ClusterQueue cq (1 of 3 in LocalQueue "
                           "t/lq). Estimated start: in about 3 hours.") >= 0);
}

static int64_t from_history(void *hud, const model_pod *p) {
  return live_history_duration(hud, p);
}

static ts_rc estimate_hist(void *ud, model *m, const sched_config *cfg, int64_t now_ns,
                           live_started_fn started, void *sud) {
  sim_estimate_opts eo = {
      .max_events = 200, .started = started, .ud = sud, .history = from_history, .hud = ud};
  sim_estimate_result est;
  ts_err e;
  ts_err_clear(&e);
  return sim_estimate(m, cfg, now_ns, NULL, NULL, &eo, &est, &e);
}

/* Run times of finished pods are history (issue 36 §2): r1 of cq ran 40 minutes (startTime
 * 00:00, its container finished at 00:40) and is seen to succeed; r2, of the same queue and
 * requests, started at 01:00 with no duration of its own, is expected to take as long: b,
 * waiting for its quota, starts in about 40 minutes. Another shape has no history. */
static void test_live_run_history(void **state) {
  fixture *f = *state;
  static const char *fmt =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t, uid: %s-uid, "
      "creationTimestamp: \"2026-01-01T00:00:00Z\", labels: {kueue.x-k8s.io/queue-name: lq}}\n"
      "spec: {schedulerName: tessera, nodeName: n1, containers: [{name: c, resources: {requests: "
      "{nvidia.com/gpu: \"2\"}, limits: {nvidia.com/gpu: \"2\"}}}]}\nstatus: {phase: %s, "
      "startTime: \"%s\"%s}\n";
  char y[2048];
  feed(f, MODEL_ADDED, node_yaml);
  feed(f, MODEL_ADDED, kueue_yaml);
  live_set_estimator(f->l, estimate_hist, f->l);
  snprintf(y, sizeof y, fmt, "r1", "r1", "Running", "2026-01-01T00:00:00Z", "");
  feed(f, MODEL_ADDED, y);
  snprintf(y, sizeof y, fmt, "r1", "r1", "Succeeded", "2026-01-01T00:00:00Z",
           ", containerStatuses: [{name: c, state: {terminated: {exitCode: 0, finishedAt: "
           "\"2026-01-01T00:40:00Z\"}}}]");
  feed(f, MODEL_MODIFIED, y);
  assert_int_equal(pod(f, "r1")->finished_ns, (int64_t)(CREATED_S + 2400) * 1000000000LL);
  snprintf(y, sizeof y, fmt, "r2", "r2", "Running", "2026-01-01T01:00:00Z", "");
  feed(f, MODEL_ADDED, y);
  assert_int_equal(live_history_duration(f->l, pod(f, "r2")), 2400LL * 1000000000LL);
  add_pod(f, MODEL_ADDED, "b", 1, ", labels: {kueue.x-k8s.io/queue-name: lq}", "");
  assert_int_equal(live_history_duration(f->l, pod(f, "b")), -1); /* 1 GPU: another shape */
  assert_true(cycle_at(f, CREATED_S + 3600));
  assert_true(find_call(f, "unschedulable t/b (WaitingForQuota): " WAIT_QUOTA
                           " Place in queue: 1 of 1 in ClusterQueue cq (1 of 1 in LocalQueue "
                           "t/lq). Estimated start: in about 40 minutes.") >= 0);
}

/* The GPU room (issue 37: visibility before consolidation), hand-counted. a (A100, zone z1) has 6
 * of 8 GPUs free, b (A100, z1) 1, c (T4, z2) 4. p waits for quota, asking for 2 GPUs of an A100:
 * only a could hold it, so b's GPU and c's 4 are stranded. The most free in one node: 6 A100s,
 * 4 T4s; in one zone: 7 A100s (z1), 4 T4s. */
static void test_live_gpu_room(void **state) {
  fixture *f = *state;
  static const char *node_fmt =
      "apiVersion: v1\nkind: Node\nmetadata: {name: %s, uid: %s-uid, labels: "
      "{nvidia.com/gpu.product: %s, topology.kubernetes.io/zone: %s, kubernetes.io/hostname: "
      "%s}}\nstatus: {allocatable: {pods: \"110\", cpu: \"64\", memory: 256Gi, nvidia.com/gpu: "
      "\"%d\"}}\n";
  static const struct {
    const char *name, *model, *zone;
    int gpus, used;
  } nodes[] = {{"a", "A100", "z1", 8, 2}, {"b", "A100", "z1", 8, 7}, {"c", "T4", "z2", 4, 0}};
  char y[1024], *m;
  for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++) {
    snprintf(y, sizeof y, node_fmt, nodes[i].name, nodes[i].name, nodes[i].model, nodes[i].zone,
             nodes[i].name, nodes[i].gpus);
    feed(f, MODEL_ADDED, y);
    if (!nodes[i].used) continue;
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: run-%s, namespace: t, uid: run-%s}\n"
             "spec: {nodeName: %s, containers: [{name: c, resources: {requests: {nvidia.com/gpu: "
             "\"%d\"}, limits: {nvidia.com/gpu: \"%d\"}}}]}\nstatus: {phase: Running}\n",
             nodes[i].name, nodes[i].name, nodes[i].name, nodes[i].used, nodes[i].used);
    feed(f, MODEL_ADDED, y);
  }
  feed(f, MODEL_ADDED,
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n---\n"
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: none}\n"
       "spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [nvidia.com/gpu], "
       "flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 0}]}]}]}\n---\n"
       "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: t}\n"
       "spec: {clusterQueue: none}\n");
  add_pod(f, MODEL_ADDED, "p", 2, ", labels: {kueue.x-k8s.io/queue-name: lq}",
          "nodeSelector: {nvidia.com/gpu.product: A100}, ");
  assert_true(cycle(f));
  m = metrics_text(f);
  assert_has(m, "\ntessera_gpu_stranded{gpu_model=\"A100\"} 1\n");
  assert_has(m, "\ntessera_gpu_stranded{gpu_model=\"T4\"} 4\n");
  assert_has(m, "\ntessera_gpu_largest_free{gpu_model=\"A100\",level=\"node\"} 6\n");
  assert_has(m, "\ntessera_gpu_largest_free{gpu_model=\"A100\",level=\"topology.kubernetes.io/"
                "zone\"} 7\n");
  assert_has(m, "\ntessera_gpu_largest_free{gpu_model=\"T4\",level=\"topology.kubernetes.io/"
                "zone\"} 4\n");
  assert_has(m, "\ntessera_gpu_largest_free{gpu_model=\"A100\",level=\"kubernetes.io/"
                "hostname\"} 6\n");
  free(m);
}

/* A cycle that leaves many pods pending writes their reports LIVE_REPORTS_INFLIGHT at a time,
 * the next as each ends: 40,000 at once held 150 MB of writes at 100,000 pods. */
static void test_live_reports_bounded(void **state) {
  fixture *f = *state;
  live_stats st;
  feed(f, MODEL_ADDED, node_yaml);
  for (int i = 0; i < LIVE_REPORTS_INFLIGHT + 40; i++) {
    char name[16];
    snprintf(name, sizeof name, "big%d", i);
    add_pod(f, MODEL_ADDED, name, 4, "", "");
  }
  f->r.hold_reports = true;
  assert_true(cycle(f));
  assert_int_equal(f->r.held, LIVE_REPORTS_INFLIGHT);
  for (int i = 0; i < 40; i++) live_report_done(f->l); /* answers: one more each */
  assert_int_equal(f->r.held, LIVE_REPORTS_INFLIGHT + 40);
  for (int i = 0; i < LIVE_REPORTS_INFLIGHT; i++) live_report_done(f->l);
  live_get_stats(f->l, &st);
  assert_int_equal(st.unschedulable, LIVE_REPORTS_INFLIGHT + 40);
}

/* A cycle that binds many pods starts its gangs while fewer than LIVE_WRITES_INFLIGHT writes
 * are in flight, the next as writes answer; no cycle runs until all have started and answered.
 * 59,000 bindings at once held 150 MB of writes at 100,000 pods. */
static void test_live_writes_bounded(void **state) {
  fixture *f = *state;
  enum { N = LIVE_WRITES_INFLIGHT + 100 };
  live_stats st;
  feed(f, MODEL_ADDED,
       "apiVersion: v1\nkind: Node\nmetadata: {name: n1, uid: n1-uid}\n"
       "status: {allocatable: {pods: \"1000\", cpu: \"8\", memory: 64Gi, nvidia.com/gpu: "
       "\"1000\"}}\n");
  for (int i = 0; i < N; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    add_pod(f, MODEL_ADDED, name, 1, "", "");
  }
  f->r.count_binds = true;
  assert_true(cycle(f));
  assert_int_equal(f->r.nbinds, LIVE_WRITES_INFLIGHT);
  assert_true(live_busy(f->l));
  assert_false(cycle(f)); /* no cycle while gangs wait */
  for (int i = 0; i < 100; i++) live_write_done(f->r.binds[i], TS_OK);
  assert_int_equal(f->r.nbinds, N); /* one more for each answer */
  assert_true(live_busy(f->l));
  for (int i = 100; i < N; i++) live_write_done(f->r.binds[i], TS_OK);
  assert_false(live_busy(f->l));
  live_get_stats(f->l, &st);
  assert_int_equal(st.bound, N);
  free(f->r.binds);
  f->r.binds = NULL;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_live_binds_and_assumes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_resource_offered_later, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_report_counts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_report_places, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_report_estimate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_run_history, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_gpu_room, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_reports_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_writes_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_gang_claims_first_and_rollback, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_remove_tombstones, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_label_values_leave, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_abandoned_writes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_metrics, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_kueue_metrics, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_kueue_metrics_upstream, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_metrics_follower, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_kueue_metrics_left_to_kueue, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_kueue_ready_finished, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_kueue_ready_to_evicted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_scheduler_metrics_upstream, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_pending_reasons, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_reasons_for_autoscalers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_live_queue_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_allocation_json, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
