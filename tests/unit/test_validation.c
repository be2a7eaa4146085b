/* Validation parity: every object of tests/data/validation/cases.yaml against what a real
 * kube-apiserver v1.34 said of it (expected.json, recorded by record.py there): the same verdict
 * and the same refusals, field and message (in any order, as the server lists the causes of a
 * map in no fixed order). The objects are checked as `tessera check` checks them, with the
 * PriorityClass pc-100 (value 100) the recording's cluster had. What only the decoder refuses
 * (it stops at the first problem, in its own words) must agree on the verdict and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/input.h"
#include "model/model.h"

#define DIR "tests/data/validation"

typedef struct got {
  json_t *list; /* [{field, message}] */
} got;

static void on_refusal(void *ud, const char *field, const char *message) {
  json_array_append_new(((got *)ud)->list,
                        json_pack("{s:s, s:s}", "field", field, "message", message));
}

/* The server's refusals as {field, message}: its causes, or for an admission refusal (no
 * causes) its message with an empty field. */
static json_t *want_list(json_t *want) {
  json_t *causes = json_object_get(want, "causes");
  if (json_array_size(causes)) return json_incref(causes);
  if (json_is_true(json_object_get(want, "accepted"))) return json_array();
  return json_pack("[{s:s, s:s}]", "field", "", "message",
                   json_string_value(json_object_get(want, "message")));
}

/* Removes from a (a copy) every element equal to one of b; true when both empty after. */
static bool same_multiset(json_t *a, json_t *b) {
  json_t *rest = json_deep_copy(b);
  bool ok = json_array_size(a) == json_array_size(b);
  size_t i;
  json_t *x;
  json_array_foreach(a, i, x) {
    size_t k;
    json_t *y;
    bool found = false;
    json_array_foreach(rest, k, y)
      if (json_equal(x, y)) {
        json_array_remove(rest, k);
        found = true;
        break;
      }
    ok = ok && found;
  }
  json_decref(rest);
  return ok;
}

/* The decoder's error "Kind ns/name: FIELD: message" as a refusal. */
static void decoder_refusal(got *g, const char *text) {
  const char *a = strstr(text, ": "), *b = a ? strstr(a + 2, ": ") : NULL;
  char field[512];
  snprintf(field, sizeof field, "%.*s", b ? (int)(b - a - 2) : 0, b ? a + 2 : "");
  on_refusal(g, field, b ? b + 2 : text);
}

/* One refusal each, on the same field (the decoder stops at the first and words it its way). */
static bool same_fields(json_t *got_list, json_t *want) {
  return json_array_size(got_list) == 1 && json_array_size(want) >= 1 &&
         json_equal(json_object_get(json_array_get(got_list, 0), "field"),
                    json_object_get(json_array_get(want, 0), "field"));
}

static model *cluster(void) {
  model *m = model_new();
  json_t *pc = json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                         "PriorityClass", "metadata", "name", "pc-100", "value", 100);
  ts_err e;
  assert_int_equal(model_apply_json(m, pc, MODEL_ADDED, NULL, NULL, NULL, &e), TS_OK);
  json_decref(pc);
  return m;
}

static void test_validation_parity(void **state) {
  char *text = NULL;
  size_t len = 0;
  in_docs docs = {0};
  json_error_t je;
  json_t *expected = json_load_file(DIR "/expected.json", 0, &je), *c;
  model *m = cluster();
  ts_err e;
  size_t i;
  int failed = 0, n = 0;
  (void)state;
  assert_non_null(expected);
  assert_int_equal(in_read_file(DIR "/cases.yaml", &text, &len, &e), TS_OK);
  assert_int_equal(in_yaml_parse(text, len, &docs, &e), TS_OK);
  json_array_foreach(docs.v[0].value, i, c) {
    const char *name = json_string_value(json_object_get(c, "name"));
    json_t *want = want_list(json_object_get(expected, name));
    got g = {json_array()};
    model_obj *o = NULL;
    bool decoded = true, agree;
    model_validate(json_object_get(c, "object"), on_refusal, &g);
    if (!json_array_size(g.list)) {
      ts_err_clear(&e);
      model_decode_opts opts = {.resources = model_resources_of(m)};
      if (model_decode(json_object_get(c, "object"), &opts, &o, &e) != TS_OK)
        decoded = false, decoder_refusal(&g, e.text);
      else if (o && o->kind == MODEL_POD)
        model_validate_priority(m, (const model_pod *)o, on_refusal, &g);
    }
    model_obj_free(o);
    n++;
    agree = decoded ? same_multiset(g.list, want) : same_fields(g.list, want);
    if (!agree) {
      char *a = json_dumps(g.list, JSON_INDENT(1)), *b = json_dumps(want, JSON_INDENT(1));
      printf("FAIL %s\n  got:  %s\n  want: %s\n", name, a, b);
      free(a), free(b);
      failed++;
    }
    json_decref(g.list);
    json_decref(want);
  }
  printf("%d cases, %d agree with the API server\n", n, n - failed);
  in_docs_free(&docs);
  ts_free(text);
  json_decref(expected);
  model_free(m);
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validation_parity),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
