/* Tests of kubeclient's writer against the fake API server: a binding whose answer was lost is
 * recognised as landed from the decoded 409 Status (the recorded exchange 059), its retry keeps
 * the uid precondition, every write ends exactly once even when memory runs out, writes cut by
 * an HTTP/2 GOAWAY are sent again, Events carry a name the API server accepts, and refused
 * writes are counted per verb, resource and status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "input/input.h"
#include "kubeclient/kc.h"
#include "model/wire.h"
#include "tests/support/fakeapi.h"

typedef struct env {
  fa_server *s;
  uv_loop_t loop;
  kc_auth auth;
  kc_client *c;
  kc_writer *w;
  kc_gate gate;
} env;

typedef struct outcome {
  int calls;   /* callbacks received */
  int oks;     /* of them TS_OK */
  ts_rc r;     /* the last result */
  long status; /* its HTTP status */
} outcome;

static void on_done(void *ud, ts_rc r, const kc_write_info *info) {
  outcome *o = ud;
  o->calls++;
  o->oks += r == TS_OK;
  o->r = r;
  o->status = info ? info->status : 0;
}

/* ---- the writes as `tessera run` makes them: bodies from model/wire.h ---------------------- */

static void bind_pod(kc_writer *w, const char *ns, const char *name, const char *uid,
                     const char *node, kc_write_cb cb, void *ud) {
  json_t *b = model_binding_json(ns, name, uid, node, -1);
  if (b)
    kc_bind(w, ns, name, uid, node, b, cb, ud);
  else
    kc_write_fail(w, cb, ud);
  json_decref(b);
}

static void evict_pod(kc_writer *w, const char *ns, const char *name, const char *uid,
                      kc_write_cb cb, void *ud) {
  json_t *b = model_eviction_json(ns, name, uid);
  if (b)
    kc_evict(w, ns, name, uid, b, cb, ud);
  else
    kc_write_fail(w, cb, ud);
  json_decref(b);
}

static void unschedulable(kc_writer *w, const char *ns, const char *name, const char *reason,
                          const char *message, kc_write_cb cb, void *ud) {
  json_t *b = model_pod_unscheduled_patch(reason, message, 1);
  char path[256];
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status", ns, name);
  if (b)
    kc_patch(w, "patch pods/status", path, KC_STRATEGIC_MERGE_PATCH, ns, name, b, cb, ud);
  else
    kc_write_fail(w, cb, ud);
  json_decref(b);
}

static void emit(kc_writer *w, const char *ns, const char *name, const char *uid, const char *type,
                 const char *reason, const char *note) {
  model_object_ref pod = {"v1", "Pod", ns, name, uid};
  json_t *b;
  struct timespec t;
  if (!kc_event_allowed(w, uid)) return;
  clock_gettime(CLOCK_REALTIME, &t);
  b = model_event_json(&pod, "test", type, reason, note,
                       (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec);
  if (b) kc_event_post(w, b);
  json_decref(b);
}

/* A claim write of t/missing (c borrowed until cb). */
static void claim(kc_writer *w, model_claim_write *c, kc_write_cb cb, void *ud) {
  kc_update(w, "update resourceclaims", "t", "missing",
            "/apis/resource.k8s.io/v1/namespaces/t/resourceclaims/missing", c->unreserve,
            model_claim_step, c, cb, ud);
}

static void start(env *e, bool http2) {
  ts_err err;
  memset(e, 0, sizeof *e);
  assert_non_null(e->s = fa_start_http2(http2));
  assert_int_equal(uv_loop_init(&e->loop), 0);
  assert_int_equal(kc_auth_load(fa_kubeconfig(e->s), NULL, &e->auth, &err), TS_OK);
  assert_non_null(e->c = kc_client_new(&e->loop, &e->auth, &err));
  e->gate.open = true;
  assert_non_null(e->w = kc_writer_new(e->c, &e->gate, KC_EVENT_INTERVAL_MS));
}

static void stop(env *e) {
  kc_writer_free(e->w);
  kc_client_free(e->c);
  uv_run(&e->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&e->loop), 0);
  kc_auth_free(&e->auth);
  fa_stop(e->s);
}

/* Runs the loop until o has its answer (10 s at most). */
static void wait_for(env *e, outcome *o, int n) {
  for (int i = 0; i < 100000 && o->calls < n; i++) uv_run(&e->loop, UV_RUN_ONCE);
  assert_int_equal(o->calls, n);
}

/* Runs the loop until the server has answered n requests starting with prefix (5 s at most). */
static bool serve_until(env *e, const char *prefix, int n) {
  for (int i = 0; i < 500 && fa_count(e->s, prefix) < n; i++) {
    uv_run(&e->loop, UV_RUN_NOWAIT);
    usleep(10000);
  }
  return fa_count(e->s, prefix) >= n;
}

static void put_pod(env *e, const char *ns, const char *name, const char *uid, const char *node) {
  char y[512];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: %s, uid: %s}\n"
           "spec: {%s%s}\n",
           name, ns, uid, node ? "nodeName: " : "", node ? node : "");
  assert_true(fa_put(e->s, y));
}

/* The response body of a recorded exchange, as JSON text (malloc'd). */
static char *recorded_body(const char *file) {
  char path[256];
  json_error_t je;
  json_t *x;
  char *text;
  snprintf(path, sizeof path, "tests/data/k8s/exchanges/%s", file);
  x = json_load_file(path, 0, &je);
  if (!x) fail_msg("%s: %s", path, je.text);
  text = json_dumps(json_object_get(json_object_get(x, "response"), "body"), JSON_COMPACT);
  json_decref(x);
  return text;
}

/* A retried binding that landed the first time gets 409 "already assigned to node X" (the
 * recorded answer, whose raw body escapes the quotes): success when X is our node. */
static void test_bind_conflict_recorded(void **state) {
  env e;
  outcome o = {0};
  char *body = recorded_body("059-post-binding-again-409.json");
  (void)state;
  start(&e, false);
  put_pod(&e, "team-a", "train-0", "f1856ec5-9892-4684-94a8-4a96e7a99a5f", NULL);
  fa_fault_body(e.s, "POST", "/api/v1/namespaces/team-a/pods/train-0/binding", 409, 2, body);
  bind_pod(e.w, "team-a", "train-0", "f1856ec5-9892-4684-94a8-4a96e7a99a5f", "node-a1", on_done,
           &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_OK);
  bind_pod(e.w, "team-a", "train-0", "f1856ec5-9892-4684-94a8-4a96e7a99a5f", "node-a2", on_done,
           &o);
  wait_for(&e, &o, 2);
  assert_int_equal(o.r, TS_ECONFLICT); /* bound elsewhere: not ours */
  free(body);
  stop(&e);
}

/* The answer of a binding is lost after it landed: the retry says so (409 decoded), and it
 * still carries the uid precondition, so a pod recreated under the same name is never bound. */
static void test_bind_lost_answer(void **state) {
  env e;
  outcome o = {0};
  (void)state;
  for (int h2 = 0; h2 < 2; h2++) {
    start(&e, h2);
    put_pod(&e, "t", "p0", "uid-p0", NULL);
    put_pod(&e, "t", "p1", "uid-p1", NULL);
    fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p0/binding", FA_LOST, 1, NULL);
    o.calls = 0;
    bind_pod(e.w, "t", "p0", "uid-p0", "n1", on_done, &o);
    wait_for(&e, &o, 1);
    assert_int_equal(o.r, TS_OK);
    assert_int_equal(fa_count(e.s, "POST /api/v1/namespaces/t/pods/p0/binding"), 2);
    /* No answer, and the retry meets a pod whose uid is not the one we decided for. */
    fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p1/binding", 0, 1, NULL);
    o.calls = 0;
    bind_pod(e.w, "t", "p1", "uid-of-a-deleted-p1", "n1", on_done, &o);
    wait_for(&e, &o, 1);
    assert_int_equal(o.r, TS_ECONFLICT);
    assert_int_equal(fa_count(e.s, "POST /api/v1/namespaces/t/pods/p1/binding 409"), 1);
    stop(&e);
  }
}

/* A binding whose every answer was lost, but which landed: the pod is read, and the write is
 * reported as done rather than failed (a failure would undo the placement and let a later cycle
 * bind the pod elsewhere). One that did not land stays a failure; a pod that turns out bound
 * to another node is a conflict. */
static void test_bind_outcome_checked(void **state) {
  env e;
  outcome o = {0};
  (void)state;
  start(&e, true);
  put_pod(&e, "t", "p0", "uid-p0", NULL);
  fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p0/binding", FA_LOST, 3, NULL);
  bind_pod(e.w, "t", "p0", "uid-p0", "n1", on_done, &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_OK);
  assert_int_equal(fa_count(e.s, "GET /api/v1/namespaces/t/pods/p0"), 1);
  /* Never served, and the pod not bound when read: sent once more to the same node (it may
   * still have been on its way), and that one binds. Failing instead let a later cycle choose
   * another node while the first binding landed (one in an hour of the soak). */
  put_pod(&e, "t", "p3", "uid-p3", NULL);
  fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p3/binding", 0, 3, NULL);
  o.calls = 0;
  bind_pod(e.w, "t", "p3", "uid-p3", "n1", on_done, &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_OK);
  assert_int_equal(fa_count(e.s, "GET /api/v1/namespaces/t/pods/p3"), 1);
  assert_int_equal(fa_count(e.s, "POST /api/v1/namespaces/t/pods/p3/binding 201"), 1);
  /* Never served, not even the last try: a failure. */
  put_pod(&e, "t", "p1", "uid-p1", NULL);
  fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p1/binding", 0, 4, NULL);
  o.calls = 0;
  bind_pod(e.w, "t", "p1", "uid-p1", "n1", on_done, &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_EHTTP);
  assert_int_equal(o.status, 0);
  assert_int_equal(fa_count(e.s, "GET /api/v1/namespaces/t/pods/p1"), 1);
  /* A 503 after which the pod is found bound to another node: a conflict. */
  put_pod(&e, "t", "p2", "uid-p2", "n2");
  fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p2/binding", 503, 1, "busy");
  o.calls = 0;
  bind_pod(e.w, "t", "p2", "uid-p2", "n1", on_done, &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_ECONFLICT);
  assert_int_equal(o.status, 503);
  stop(&e);
}

/* Every write ends exactly once, whichever allocation fails (while it starts or later). */
static void test_alloc_failures(void **state) {
  env e;
  bool failed = true;
  (void)state;
  start(&e, false);
  put_pod(&e, "t", "p0", "uid-p0", NULL);
  for (long n = 0; failed; n++) {
    outcome o = {0};
    model_claim_write cr = {.pod_name = "p0", .pod_uid = "uid-p0"};
    model_claim_write cu = {.pod_uid = "uid-p0", .unreserve = true};
    ts_alloc_fail_after(n);
    bind_pod(e.w, "t", "p0", "uid-p0", "n1", on_done, &o);
    evict_pod(e.w, "t", "nobody", "", on_done, &o);
    claim(e.w, &cr, on_done, &o);
    kc_write_fail(e.w, on_done, &o);
    claim(e.w, &cu, on_done, &o);
    unschedulable(e.w, "t", "p0", "Unschedulable", "no room", on_done, &o);
    wait_for(&e, &o, 6);
    failed = ts_alloc_failed();
    ts_alloc_fail_after(-1);
    for (int i = 0; i < 1000; i++) uv_run(&e.loop, UV_RUN_NOWAIT);
    assert_int_equal(o.calls, 6); /* and never twice */
  }
  stop(&e);
}

/* api.requestTimeout: a server slower than it fails the write (after sending it again). */
static void test_request_timeout(void **state) {
  env e;
  outcome o = {0};
  (void)state;
  start(&e, false);
  put_pod(&e, "t", "p0", "uid-p0", NULL);
  kc_client_set_timeout(e.c, 300);
  /* three sends, then the pod is read (not bound yet) and the binding sent once more */
  fa_delay(e.s, "POST", "/api/v1/namespaces/t/pods/p0/binding", 1500, 4);
  bind_pod(e.w, "t", "p0", "uid-p0", "n1", on_done, &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_EHTTP);
  assert_int_equal(o.status, 0); /* timed out: no answer */
  stop(&e);
}

/* kube-apiserver sends GOAWAY now and then (--goaway-chance) and when it stops: writes on the
 * streams it did not serve are sent again on a new connection. */
static void test_goaway(void **state) {
  env e;
  outcome o = {0};
  (void)state;
  start(&e, true);
  for (int i = 0; i < 60; i++) {
    char name[16], uid[16];
    snprintf(name, sizeof name, "p%d", i);
    snprintf(uid, sizeof uid, "u%d", i);
    put_pod(&e, "t", name, uid, NULL);
  }
  fa_goaway(e.s, 10);
  for (int i = 0; i < 60; i++) {
    char name[16], uid[16];
    snprintf(name, sizeof name, "p%d", i);
    snprintf(uid, sizeof uid, "u%d", i);
    bind_pod(e.w, "t", name, uid, "n1", on_done, &o);
  }
  wait_for(&e, &o, 60);
  assert_int_equal(o.oks, 60); /* some answers were lost with the connection: sent again */
  for (int i = 0; i < 60; i++) {
    char path[64], *pod;
    snprintf(path, sizeof path, "/api/v1/namespaces/t/pods/p%d", i);
    pod = fa_get(e.s, path);
    assert_non_null(strstr(pod, "\"nodeName\":\"n1\""));
    free(pod);
  }
  assert_true(fa_connections(e.s) >= 2);
  stop(&e);
}

/* A burst of writes runs KC_MAX_INFLIGHT at a time; the rest wait in order without a libcurl
 * handle (each transfer in flight holds tens of KiB), and every one is served and ends once.
 * A queued write that is cancelled with its client never reaches the server. */
static void test_bounded_inflight(void **state) {
  enum { N = 700 };
  env e;
  outcome o = {0};
  size_t queued, peak = 0;
  (void)state;
  /* HTTP/1.1: the bound is kubeclient's queue, the same for either protocol. Over HTTP/2 the
   * fake server loses answers under a burst of hundreds of streams on this machine kind
   * (bench_kc: 444 of 2,000; this test failed once in a dozen runs), while kube-apiserver
   * v1.34 took 2,000 bindings from `tessera run` over HTTP/2 in 4 s: the fake's problem, to
   * be found with issue 35, not a flaky CI meanwhile. */
  start(&e, false);
  for (int i = 0; i < N; i++) {
    char name[16], uid[16];
    snprintf(name, sizeof name, "p%d", i);
    snprintf(uid, sizeof uid, "u%d", i);
    put_pod(&e, "t", name, uid, NULL);
  }
  for (int i = 0; i < N; i++) {
    char name[16], uid[16];
    snprintf(name, sizeof name, "p%d", i);
    snprintf(uid, sizeof uid, "u%d", i);
    bind_pod(e.w, "t", name, uid, "n1", on_done, &o);
  }
  assert_int_equal(kc_client_inflight(e.c, &queued), KC_MAX_INFLIGHT);
  assert_int_equal(queued, N - KC_MAX_INFLIGHT);
  /* Until every write ended, or a minute (a busy machine serves 700 requests slowly; a count
   * of loop turns ran out before they were all answered once). */
  for (uint64_t end = uv_now(&e.loop) + 60000; o.calls < N && uv_now(&e.loop) < end;) {
    size_t now = kc_client_inflight(e.c, NULL);
    if (now > peak) peak = now;
    uv_run(&e.loop, UV_RUN_ONCE);
  }
  assert_int_equal(o.calls, N);
  assert_int_equal(o.oks, N);
  assert_true(peak <= KC_MAX_INFLIGHT);
  assert_int_equal(kc_client_inflight(e.c, &queued), 0);
  assert_int_equal(queued, 0);
  assert_int_equal(fa_count(e.s, "POST /api/v1/namespaces/t/pods/"), N);
  stop(&e);
  /* Closing the client ends queued writes too, unsent. */
  memset(&o, 0, sizeof o);
  start(&e, true);
  put_pod(&e, "t", "q", "uq", NULL);
  for (int i = 0; i < KC_MAX_INFLIGHT + 5; i++) bind_pod(e.w, "t", "q", "uq", "n1", on_done, &o);
  kc_writer_free(e.w);
  kc_client_free(e.c);
  uv_run(&e.loop, UV_RUN_DEFAULT);
  assert_int_equal(o.calls, KC_MAX_INFLIGHT + 5);
  assert_int_equal(o.oks, 0);
  assert_int_equal(uv_loop_close(&e.loop), 0);
  kc_auth_free(&e.auth);
  fa_stop(e.s);
}

/* Events are named "<pod>.<hex nanoseconds>" and accepted; a refused write is counted once per
 * answer, by verb, resource and status. */
static void test_events_and_refusals(void **state) {
  env e;
  ts_buf m;
  outcome o = {0};
  (void)state;
  start(&e, false);
  put_pod(&e, "t", "p0", "uid-p0", NULL);
  emit(e.w, "t", "p0", "uid-p0", "Warning", "FailedScheduling", "0/1 nodes");
  unschedulable(e.w, "t", "p0", "Unschedulable", "0/1 nodes", on_done, &o);
  wait_for(&e, &o, 1);
  assert_true(serve_until(&e, "POST /apis/events.k8s.io/v1/namespaces/t/events 201", 1));
  assert_int_equal(kc_writer_refused(e.w), 0);
  /* The same pod a minute later is refused (403) twice: counted twice, logged once. */
  fa_fault(e.s, "POST", "/api/v1/namespaces/t/pods/p0/eviction", 403, 2, "forbidden");
  evict_pod(e.w, "t", "p0", "uid-p0", on_done, &o);
  evict_pod(e.w, "t", "p0", "uid-p0", on_done, &o);
  wait_for(&e, &o, 3);
  assert_int_equal(o.r, TS_EAUTH);
  assert_int_equal(kc_writer_refused(e.w), 2);
  ts_buf_init(&m, 0);
  assert_int_equal(kc_client_metrics(e.c, &m), TS_OK);
  assert_non_null(strstr(
      m.data,
      "tessera_api_requests_total{verb=\"create\",resource=\"pods/eviction\",code=\"403\"} 2"));
  assert_non_null(strstr(
      m.data, "tessera_api_requests_total{verb=\"create\",resource=\"events\",code=\"201\"} 1"));
  assert_non_null(
      strstr(m.data,
             "tessera_api_requests_total{verb=\"patch\",resource=\"pods/status\",code=\"200\"} 1"));
  ts_buf_free(&m);
  /* An accepted eviction (its Preempted Event is `tessera run`'s: test_run). */
  put_pod(&e, "t", "p1", "uid-p1", "n1");
  evict_pod(e.w, "t", "p1", "uid-p1", on_done, &o);
  wait_for(&e, &o, 4);
  assert_int_equal(o.r, TS_OK);
  /* A note over 1 KiB (a pod asking for dozens of resources) is cut: the API server refuses
   * longer ones, so the Event would never land. */
  {
    char note[3000], *list;
    json_t *v, *items, *ev;
    json_error_t je;
    size_t i;
    bool seen = false;
    for (i = 0; i < sizeof note - 1; i++) note[i] = "é"[i % 2]; /* two-byte characters */
    note[sizeof note - 1] = 0;
    put_pod(&e, "t", "p2", "uid-p2", NULL);
    emit(e.w, "t", "p2", "uid-p2", "Warning", "FailedScheduling", note);
    assert_true(serve_until(&e, "POST /apis/events.k8s.io/v1/namespaces/t/events 201", 2));
    list = fa_get(e.s, "/apis/events.k8s.io/v1/namespaces/t/events");
    assert_non_null(v = json_loads(list, 0, &je)); /* valid UTF-8: cut between characters */
    items = json_object_get(v, "items");
    json_array_foreach(items, i, ev) {
      const char *n = json_string_value(json_object_get(ev, "note"));
      if (strcmp(json_string_value(json_object_get(json_object_get(ev, "regarding"), "name")),
                 "p2"))
        continue;
      assert_true(strlen(n) <= MODEL_EVENT_NOTE_MAX);
      assert_string_equal(n + strlen(n) - 3, "...");
      seen = true;
    }
    assert_true(seen);
    json_decref(v);
    free(list);
  }
  stop(&e);
}

/* Writes a file under the fake server's directory. */
static void dir_file(const env *e, const char *name, const char *text, int mode) {
  char path[600];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", fa_dir(e->s), name);
  assert_non_null(f = fopen(path, "w"));
  fputs(text, f);
  fclose(f);
  chmod(path, (mode_t)mode);
}

static char *dir_read(const env *e, const char *name) {
  char path[600];
  char *text = NULL;
  size_t len;
  ts_err err;
  snprintf(path, sizeof path, "%s/%s", fa_dir(e->s), name);
  return in_read_file(path, &text, &len, &err) == TS_OK ? text : NULL;
}

static void expect_file(const env *e, const char *name, const char *want) {
  char *text = dir_read(e, name);
  if (!text || strcmp(text, want)) fail_msg("%s: \"%s\", want \"%s\"", name, text, want);
  ts_free(text);
}

/* A kubeconfig whose user is an exec credential plugin (client.authentication.k8s.io/v1, cluster
 * info asked for), as EKS, GKE and AKS write them: the plugin is run at load, its token used
 * until it expires, and run again then, or after a 401 (a token rotated early); the plugin is
 * given the cluster and interactive: false; a plugin that fails is the load's error. */
static void test_exec_credentials(void **state) {
  env e;
  outcome o = {0};
  char *kc, *at, *info, path[600], text[4096];
  kc_auth failing;
  ts_err err;
  (void)state;
  memset(&e, 0, sizeof e);
  assert_non_null(e.s = fa_start_http2(false));
  dir_file(&e, "plugin.sh",
           "#!/bin/sh\n"
           "n=$(cat \"$DIR/runs\" 2>/dev/null || echo 0); echo $((n + 1)) >\"$DIR/runs\"\n"
           "echo \"$KUBERNETES_EXEC_INFO\" >\"$DIR/info\"\n"
           "echo \"$1 $FROM_KUBECONFIG\" >\"$DIR/args\"\n"
           "exp=$(date -u -d \"+$(cat \"$DIR/expires\") seconds\" +%Y-%m-%dT%H:%M:%SZ)\n"
           "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
           "\"ExecCredential\",\"status\":{\"token\":\"%s\",\"expirationTimestamp\":\"%s\"}}' "
           "\"$(cat \"$DIR/plugin-token\")\" \"$exp\"\n",
           0755);
  dir_file(&e, "plugin-token", "tessera-test-token", 0644);
  dir_file(&e, "expires", "2", 0644);
  assert_non_null(kc = dir_read(&e, "kubeconfig"));
  assert_non_null(at = strstr(kc, "    tokenFile: token\n"));
  *at = '\0';
  snprintf(text, sizeof text,
           "%s    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
           "      command: ./plugin.sh\n      args: [token]\n      interactiveMode: Never\n"
           "      provideClusterInfo: true\n"
           "      env: [{name: DIR, value: \"%s\"}, {name: FROM_KUBECONFIG, value: yes}]\n%s",
           kc, fa_dir(e.s), at + strlen("    tokenFile: token\n"));
  ts_free(kc);
  dir_file(&e, "exec-kubeconfig", text, 0600);
  snprintf(path, sizeof path, "%s/exec-kubeconfig", fa_dir(e.s));
  assert_int_equal(uv_loop_init(&e.loop), 0);
  ts_err_clear(&err);
  if (kc_auth_load(path, NULL, &e.auth, &err) != TS_OK) fail_msg("%s", err.text);
  expect_file(&e, "runs", "1\n");
  info = dir_read(&e, "info");
  assert_non_null(strstr(info, "\"kind\":\"ExecCredential\""));
  assert_non_null(strstr(info, "\"interactive\":false"));
  assert_non_null(strstr(info, "\"server\":\"https://127.0.0.1:"));
  assert_non_null(strstr(info, "\"certificate-authority-data\":\"LS0t")); /* "---" */
  ts_free(info);
  expect_file(&e, "args", "token yes\n");
  assert_non_null(e.c = kc_client_new(&e.loop, &e.auth, &err));
  e.gate.open = true;
  assert_non_null(e.w = kc_writer_new(e.c, &e.gate, KC_EVENT_INTERVAL_MS));
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "p%d", i);
    put_pod(&e, "t", name, name, NULL);
  }
  bind_pod(e.w, "t", "p0", "p0", "n1", on_done, &o);
  wait_for(&e, &o, 1);
  assert_int_equal(o.r, TS_OK);
  /* The token expires (2 s) and the server takes only the next: the plugin is run again before
   * the request, which is accepted at once. */
  fa_set_token(e.s, "second");
  dir_file(&e, "plugin-token", "second", 0644);
  dir_file(&e, "expires", "3600", 0644);
  usleep(2200000);
  bind_pod(e.w, "t", "p1", "p1", "n1", on_done, &o);
  wait_for(&e, &o, 2);
  assert_int_equal(o.r, TS_OK);
  expect_file(&e, "runs", "2\n");
  /* Rotated early: the 401 runs it again, and the next request goes through. */
  fa_set_token(e.s, "third");
  dir_file(&e, "plugin-token", "third", 0644);
  bind_pod(e.w, "t", "p2", "p2", "n1", on_done, &o);
  wait_for(&e, &o, 3);
  assert_int_equal(o.status, 401);
  expect_file(&e, "runs", "3\n");
  bind_pod(e.w, "t", "p2", "p2", "n1", on_done, &o);
  wait_for(&e, &o, 4);
  assert_int_equal(o.r, TS_OK);
  /* a plugin that fails: its exit status, at load */
  dir_file(&e, "fail.sh", "#!/bin/sh\necho 'token expired, run login' >&2\nexit 3\n", 0755);
  snprintf(text, sizeof text,
           "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: k, cluster: "
           "{server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: c, context: {cluster: k, user: "
           "u}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/"
           "v1beta1, command: ./fail.sh}}}]\n");
  dir_file(&e, "fail-kubeconfig", text, 0600);
  snprintf(path, sizeof path, "%s/fail-kubeconfig", fa_dir(e.s));
  ts_err_clear(&err);
  assert_int_not_equal(kc_auth_load(path, NULL, &failing, &err), TS_OK);
  if (!strstr(err.text, "users[0].user.exec: the plugin ") ||
      !strstr(err.text, "fail.sh failed (exit status 3"))
    fail_msg("%s", err.text);
  stop(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bind_conflict_recorded), cmocka_unit_test(test_bind_lost_answer),
      cmocka_unit_test(test_alloc_failures),         cmocka_unit_test(test_goaway),
      cmocka_unit_test(test_bounded_inflight),       cmocka_unit_test(test_bind_outcome_checked),
      cmocka_unit_test(test_request_timeout),        cmocka_unit_test(test_events_and_refusals),
      cmocka_unit_test(test_exec_credentials),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
