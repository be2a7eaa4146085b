/* bench/bench_kc.c - bindings written per second through kubeclient's writer to the fake API
 * server (tests/support/fakeapi.c) on loopback over TLS: 2,000 pending pods, every binding
 * issued at once, each encoded as `tessera run` encodes it (model_binding_json, in the timed
 * loop): with the pod's uid as precondition, and for every fourth pod (one sharing a GPU) the
 * tessera.dev/gpu-index annotation. A binding counts only when the writer confirmed it and the
 * server holds the pod on the node, with its annotation where one was sent. Over HTTP/2
 * libcurl multiplexes them on one connection; over HTTP/1.1 it uses a pool of connections. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "kubeclient/kc.h"
#include "model/wire.h"
#include "tests/support/fakeapi.h"

#define NPODS   2000
#define STALL_S 60 /* a run whose bindings are not all answered by then is reported stalled */

static int done, ok, warmed;

static void warm(void *ud, const kc_response *r) {
  (void)ud, (void)r;
  warmed = 1;
}

static void on_bound(void *ud, ts_rc r, const kc_write_info *info) {
  (void)ud, (void)info;
  done++;
  ok += r == TS_OK;
}

/* Requests the server saw over HTTP/2. */
static int count_h2(fa_server *s) {
  char *log = fa_log(s), *p = log;
  int n = 0;
  while ((p = strstr(p, " h2\n"))) n++, p += 4;
  free(log);
  return n;
}

/* A quarter of the pods share a GPU: their Binding carries its index. */
static int32_t gpu_index(int i) {
  return i % 4 == 3 ? (int32_t)(i / 4 % 8) : -1;
}

static void run(bool http2) {
  fa_server *s = fa_start_http2(http2);
  uv_loop_t *loop = uv_default_loop();
  kc_auth auth;
  kc_client *c;
  kc_writer *w;
  kc_gate gate = {true};
  ts_err err;
  double t0, secs;
  int conns, on_server = 0, counted;
  done = ok = warmed = 0;
  if (!s) exit(1);
  fa_put(s, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
  for (int i = 0; i < NPODS; i++) {
    char y[256];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t, uid: uid-p%d}\n"
             "spec: {}\n",
             i, i);
    fa_put(s, y);
  }
  if (kc_auth_load(fa_kubeconfig(s), NULL, &auth, &err) != TS_OK ||
      !(c = kc_client_new(loop, &auth, &err))) {
    fprintf(stderr, "bench_kc: %s\n", err.text);
    exit(1);
  }
  w = kc_writer_new(c, &gate, KC_EVENT_INTERVAL_MS);
  /* As in `tessera run`, where discovery comes first: one request opens the connection and
   * learns whether it multiplexes; the bindings then share it. */
  kc_request(c, "GET", "/apis", NULL, NULL, warm, NULL);
  while (!warmed) uv_run(loop, UV_RUN_ONCE);
  t0 = ts_time_mono_s();
  for (int i = 0; i < NPODS; i++) {
    char name[32], uid[32];
    json_t *b;
    snprintf(name, sizeof name, "p%d", i);
    snprintf(uid, sizeof uid, "uid-p%d", i);
    b = model_binding_json("t", name, uid, "n1", gpu_index(i)); /* as `tessera run` encodes it */
    kc_bind(w, "t", name, uid, "n1", b, on_bound, NULL);
    json_decref(b);
  }
  while (done < NPODS && ts_time_mono_s() - t0 < STALL_S) uv_run(loop, UV_RUN_ONCE);
  secs = ts_time_mono_s() - t0;
  if (done < NPODS)
    printf("%-8s stalled: %d of %d bindings answered in %.0f s (not a figure)\n",
           http2 ? "HTTP/2" : "HTTP/1.1", done, NPODS, secs);
  conns = fa_connections(s);
  { /* the server's own count: pods it holds bound as asked, whatever the writer said */
    char *list = fa_get(s, "/api/v1/namespaces/t/pods");
    json_t *l = list ? json_loads(list, 0, NULL) : NULL, *p;
    size_t k;
    json_array_foreach(json_object_get(l, "items"), k, p) {
      const json_t *md = json_object_get(p, "metadata");
      const char *node = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
      const char *pod = json_string_value(json_object_get(md, "name"));
      const char *idx = json_string_value(
          json_object_get(json_object_get(md, "annotations"), "tessera.dev/gpu-index"));
      int gpu = pod ? gpu_index(atoi(pod + 1)) : -1;
      if (node && !strcmp(node, "n1") && (gpu < 0 || (idx && atoi(idx) == gpu))) on_server++;
    }
    json_decref(l);
    free(list);
  }
  counted = ok < on_server ? ok : on_server; /* only bindings that happened */
  printf("%-8s %d of %d bound in %.3f s (the writer confirmed %d, the server holds %d): %6.0f "
         "bindings/s over %d connection%s (%d requests marked h2)\n",
         http2 ? "HTTP/2" : "HTTP/1.1", counted, NPODS, secs, ok, on_server, counted / secs, conns,
         conns == 1 ? "" : "s", fa_count(s, "POST /api/v1/namespaces/t/pods/") ? count_h2(s) : 0);
  kc_writer_free(w);
  kc_client_free(c);
  uv_run(loop, UV_RUN_DEFAULT);
  kc_auth_free(&auth);
  fa_stop(s);
}

int main(void) {
  printf("bindings through kubeclient's writer to the fake API server (TLS, loopback)\n");
  run(true);
  run(false);
  return 0;
}
