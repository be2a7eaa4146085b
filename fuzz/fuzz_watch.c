/* libFuzzer target: watch event lines as the server streams them, fed to a real informer
 * (kubeclient/informer.c): one line per input line. Nothing reaches the network. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kubeclient/kc_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_event(void *ud, kc_event_type t, json_t *obj, const kc_resource *res) {
  (void)ud, (void)t, (void)obj, (void)res;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const kc_resource_spec pods = {"pods", "", "Pod", "v1"};
  static uv_loop_t loop;
  static kc_auth auth;
  static kc_client *c;
  kc_informer_opts o = {&pods, 1, on_event, NULL, NULL, NULL, 0};
  kc_informers *inf;
  ts_err err;
  const char *p = (const char *)data, *end = p + size;
  if (!c) {
    uv_loop_init(&loop);
    snprintf(auth.server, sizeof auth.server, "https://127.0.0.1:1");
    if (!(c = kc_client_new(&loop, &auth, &err))) return 0;
  }
  if (!(inf = kc_informers_start(c, &o, &err))) return 0;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
    kc__informers_feed(inf, 0, p, len);
    p += len + 1;
  }
  kc_informers_stop(inf);
  uv_run(&loop, UV_RUN_NOWAIT); /* closes its timers */
  return 0;
}
