/* bench/bench_kc.c - bindings written per second through kubeclient's writer to the fake API
 * server (tests/support/fakeapi.c) on loopback over TLS: 2,000 pending pods, every binding
 * issued at once and multiplexed by libcurl. The fake server speaks HTTP/1.1 only, so libcurl
 * opens a pool of connections rather than one HTTP/2 connection. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "kubeclient/kc.h"
#include "tests/support/fakeapi.h"

#define NPODS 2000

static int done, ok;

static void on_bound(void *ud, kc_wresult r, const kc_write_info *info) {
  (void)ud, (void)info;
  done++;
  ok += r == KC_W_OK;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void) {
  fa_server *s = fa_start();
  uv_loop_t *loop = uv_default_loop();
  kc_auth auth;
  kc_client *c;
  kc_writer *w;
  kc_gate gate = {true};
  ts_err err;
  double t0, secs;
  if (!s) return 1;
  fa_put(s, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
  for (int i = 0; i < NPODS; i++) {
    char y[256];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t}\nspec: {}\n", i);
    fa_put(s, y);
  }
  if (kc_auth_load(fa_kubeconfig(s), NULL, &auth, &err) != TS_OK ||
      !(c = kc_client_new(loop, &auth, &err))) {
    fprintf(stderr, "bench_kc: %s\n", err.text);
    return 1;
  }
  w = kc_writer_new(c, &gate, "bench", 0);
  t0 = now_s();
  for (int i = 0; i < NPODS; i++) {
    char name[32];
    snprintf(name, sizeof name, "p%d", i);
    kc_bind(w, "t", name, "", "n1", on_bound, NULL);
  }
  while (done < NPODS) uv_run(loop, UV_RUN_ONCE);
  secs = now_s() - t0;
  printf("bindings through kubeclient to the fake API server (TLS, HTTP/1.1, loopback): %d of %d "
         "bound in %.3f s: %.0f bindings/s; %d requests\n",
         ok, NPODS, secs, NPODS / secs, fa_count(s, "POST /api/v1/namespaces/t/pods/"));
  kc_writer_free(w);
  kc_client_free(c);
  uv_run(loop, UV_RUN_DEFAULT);
  kc_auth_free(&auth);
  fa_stop(s);
  return ok == NPODS ? 0 : 1;
}
