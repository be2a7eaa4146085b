/* Unit tests of gen/ (the clusters `tessera bench` builds): every scenario builds at a small
 * size without a rejected object, is the same for a seed, and schedules as its shape says
 * (a backlog places nothing, DRA places one pod per free device, gangs start whole). Bad sizes
 * are refused by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "dra/dra.h"
#include "gen/gen.h"
#include "scheduler/sched.h"

static sched_result cycle(const char *name, int nodes, int pods, uint32_t seed, dra_cel *cel) {
  model *m = model_new();
  sched_config cfg;
  sched_result r;
  ts_err e;
  const gen_scenario *s = gen_find(name);
  ts_err_clear(&e);
  assert_non_null(s);
  if (gen_build(s, m, nodes, pods, seed, &e) != TS_OK) fail_msg("%s: %s", name, e.text);
  sched_config_default(&cfg);
  cfg.instantiate_templates = true;
  cfg.dra_eval = dra_cel_eval, cfg.dra_eval_ctx = cel;
  if (sched_cycle(m, &cfg, NULL, 0, &r, &e) != TS_OK) fail_msg("%s: %s", name, e.text);
  ts_free(r.decisions); /* the model goes: keep the counts only */
  r.decisions = NULL;
  model_free(m);
  return r;
}

static void test_scenarios(void **state) {
  size_t n;
  const gen_scenario *all = gen_scenarios(&n);
  dra_cel *cel = dra_cel_new();
  (void)state;
  assert_true(n >= 8);
  for (size_t i = 0; i < n; i++) {
    sched_result r = cycle(all[i].name, 40, 200, 0, cel);
    assert_true(r.ndecisions > 0);
    sched_result_free(&r);
  }
  {
    sched_result r = cycle("backlog", 40, 100, 0, cel);
    assert_int_equal(r.nbound, 0); /* nothing fits */
    assert_int_equal(r.npending, 100);
    sched_result_free(&r);
    r = cycle("dra-named", 10, 100, 0, cel); /* 10 nodes x 8 GPUs: 80 devices, 1-2 per pod */
    assert_true(r.nbound >= 40 && r.nbound <= 80);
    assert_int_equal(r.nbound + r.npending, 100);
    sched_result_free(&r);
    r = cycle("dra", 10, 100, 0, cel);
    assert_int_equal(r.nbound, 80);
    sched_result_free(&r);
  }
  {
    sched_result a = cycle("mix", 100, 300, 7, cel), b = cycle("mix", 100, 300, 7, cel);
    assert_int_equal(a.nbound, b.nbound); /* one seed, one cluster */
    assert_int_equal(a.ndecisions, 300);
    sched_result_free(&a);
    sched_result_free(&b);
  }
  dra_cel_free(cel);
}

static void test_bad_sizes(void **state) {
  model *m = model_new();
  ts_err e;
  (void)state;
  assert_null(gen_find("nosuch"));
  assert_int_equal(gen_build(gen_find("mix"), m, 0, 10, 0, &e), TS_EINVAL);
  assert_non_null(strstr(e.text, "mix: --nodes must be at least 1"));
  assert_int_equal(model_count(m, MODEL_NODE), 0);
  model_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scenarios),
      cmocka_unit_test(test_bad_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
