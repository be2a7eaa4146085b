/* bench/bench_cel.c - compiling and evaluating typical DRA selectors: microseconds per compile,
 * evaluations per second on one core, and allocations per evaluation (counted with the
 * allocation hook: every allocation after warm-up would fail and show up). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cel/cel.h"
#include "dra/dra.h"

static const struct {
  const char *name, *expr;
} cases[] = {
    {"driver only", "device.driver == \"gpu.nvidia.com\""},
    {"issue 3's selector",
     "device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-80GB\" && "
     "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"},
    {"product + memory",
     "device.driver == \"gpu.nvidia.com\" && "
     "device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-80GB\" && "
     "device.capacity[\"gpu.nvidia.com\"].memory.compareTo(quantity(\"40Gi\")) >= 0"},
    {"MIG profile + driver version",
     "device.attributes[\"gpu.nvidia.com\"].type == \"mig\" && "
     "device.attributes[\"gpu.nvidia.com\"].profile == \"3g.40gb\" && "
     "device.attributes[\"gpu.nvidia.com\"].driverVersion."
     "isGreaterThan(semver(\"535.0.0\"))"},
    {"regex on product", "device.attributes[\"gpu.nvidia.com\"].productName.matches(\"^NVIDIA "
                         "(A100|H100)\")"},
    {"exists over names", "device.attributes[\"gpu.nvidia.com\"].exists(k, k == \"profile\")"},
};

int main(void) {
  dra_attr_view attrs[5];
  dra_capacity_view caps[1];
  dra_device_view dev;
  cel_eval_ctx *ctx = cel_eval_ctx_new();
  dra_env *env;
  ts_err err;
  attrs[0] =
      (dra_attr_view){NULL, "productName", DRA_ATTR_STRING, 0, {.s = "NVIDIA A100-SXM4-80GB"}};
  attrs[1] = (dra_attr_view){NULL, "type", DRA_ATTR_STRING, 0, {.s = "mig"}};
  attrs[2] = (dra_attr_view){NULL, "profile", DRA_ATTR_STRING, 0, {.s = "3g.40gb"}};
  attrs[3] = (dra_attr_view){NULL, "index", DRA_ATTR_INT, 0, {.i = 2}};
  attrs[4] = (dra_attr_view){NULL, "driverVersion", DRA_ATTR_VERSION, 0, {.i = 0}};
  cel_semver_parse("550.54.15", 9, false, &attrs[4].u.v, &err);
  caps[0] = (dra_capacity_view){NULL, "memory", {0}};
  ts_quantity_parse("40Gi", &caps[0].value, &err);
  dev = (dra_device_view){"gpu.nvidia.com", attrs, 5, caps, 1, -1};
  if (!(env = dra_env_new(NULL))) return 1;
  printf("DRA selectors: compile once, evaluate against a device view (one core)\n");
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    cel_program *p = NULL;
    double t0 = ts_time_mono_s(), compile_us, secs;
    int reps = 2000, evals = 2000000;
    bool match = false, failed = false;
    for (int i = 0; i < reps; i++) {
      cel_program_free(p);
      if (dra_selector_compile(env, cases[c].expr, &p, &err) != TS_OK) {
        printf("%s: %s\n", cases[c].name, err.text);
        return 1;
      }
    }
    compile_us = (ts_time_mono_s() - t0) / reps * 1e6;
    dra_selector_eval(p, ctx, &dev, &match, &err); /* warm-up */
    ts_alloc_fail_after(0);
    t0 = ts_time_mono_s();
    for (int i = 0; i < evals; i++)
      failed |= dra_selector_eval(p, ctx, &dev, &match, &err) != TS_OK;
    secs = ts_time_mono_s() - t0;
    ts_alloc_fail_after(-1);
    printf("  %-30s compile %6.1f us   %6.2f M evals/s  %6.0f ns/eval  allocations/eval %s%s\n",
           cases[c].name, compile_us, evals / secs / 1e6, secs / evals * 1e9,
           ts_alloc_failed() ? ">0" : "0", failed ? "  (EVALUATION FAILED)" : "");
    cel_program_free(p);
  }
  cel_eval_ctx_free(ctx);
  dra_env_free(env);
  return 0;
}
