/* libFuzzer target: CEL parse + check + evaluate, in the general environment and as a DRA
 * selector against a device, plus `tessera check` advice. Errors are fine; crashes, leaks,
 * hangs (the cost limit and regex budget bound every evaluation) are not. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "dra/dra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static cel_env *env;
  static dra_env *denv;
  static cel_eval_ctx *ctx;
  char *expr;
  cel_program *p = NULL;
  cel_value out;
  ts_err err;
  dra_attr_view attrs[3];
  dra_capacity_view caps[1];
  dra_device_view dev;
  bool match;
  if (size > 4096) return 0;
  if (!env) {
    env = cel_env_new();
    ctx = cel_eval_ctx_new();
    cel_env_declare(env, "x", "int", &err);
    cel_env_declare(env, "m", "map(string, dyn)", &err);
  }
  cel_eval_ctx_limits(ctx, 1000000, 16 << 20);
  expr = malloc(size + 1);
  memcpy(expr, data, size);
  expr[size] = '\0';
  if (cel_compile(env, expr, 0, &p, &err) == TS_OK) {
    cel_binding b[1] = {{"x", cel_int(7)}};
    cel_eval(p, ctx, b, 1, &out, &err);
    cel_program_free(p);
  }
  p = NULL;
  if (cel_compile(env, expr, CEL_NO_CHECK, &p, &err) == TS_OK) {
    cel_eval(p, ctx, NULL, 0, &out, &err);
    cel_program_free(p);
  }
  attrs[0] = (dra_attr_view){NULL, "productName", DRA_ATTR_STRING, 0, {.s = "NVIDIA A100"}};
  attrs[1] = (dra_attr_view){"gpu.nvidia.com", "index", DRA_ATTR_INT, 0, {.i = 1}};
  attrs[2] = (dra_attr_view){NULL, "driverVersion", DRA_ATTR_VERSION, 0, {.i = 0}};
  cel_semver_parse("550.54.15", 9, false, &attrs[2].u.v, &err);
  caps[0] = (dra_capacity_view){NULL, "memory", {0}};
  ts_quantity_parse("80Gi", &caps[0].value, &err);
  dev = (dra_device_view){"gpu.nvidia.com", attrs, 3, caps, 1, 1};
  p = NULL;
  if (!denv) denv = dra_env_new(NULL);
  if (denv && dra_selector_compile(denv, expr, &p, &err) == TS_OK) {
    dra_selector_eval(p, ctx, &dev, &match, &err);
    cel_program_free(p);
  }
  dra_selector_check(expr, "gpu.nvidia.com", &err);
  free(expr);
  return 0;
}
