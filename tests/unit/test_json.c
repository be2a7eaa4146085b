/* Unit tests of input/json.c: in_json_parse builds exactly what jansson's json_loadb builds
 * for valid JSON, refuses what RFC 8259 refuses with a line and column, and stays bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "input/input.h"
#include "common/ts.h"

/* Parses with both parsers and checks the values are equal. */
static void same_as_jansson(const char *text) {
  json_error_t je;
  json_t *want = json_loadb(text, strlen(text), JSON_DECODE_ANY, &je), *got = NULL;
  ts_err err;
  if (!want) fail_msg("jansson refused %s: %s", text, je.text);
  if (in_json_parse(text, strlen(text), &got, &err) != TS_OK)
    fail_msg("refused %s: %s", text, err.text);
  if (!json_equal(want, got)) fail_msg("values differ for %s", text);
  json_decref(want);
  json_decref(got);
}

static void test_json_valid(void **state) {
  (void)state;
  static const char *cases[] = {
      "{}",
      "[]",
      "0",
      "-0",
      "1.5",
      "-12e3",
      "1E+2",
      "\"\"",
      "true",
      "false",
      "null",
      "{\"a\": [1, 2, {\"b\": null}], \"c\": \"d\"}",
      "{\"a\":1,\"a\":2}",                             /* the last duplicate wins */
      "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",                /* every short escape */
      "\"\\u00e9\\u4e2d\\ud83d\\ude00\"",              /* BMP and a surrogate pair */
      "\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"", /* raw UTF-8 */
      "9223372036854775807",
      "-9223372036854775808", /* int64 limits */
      " \t\r\n[ 1 , 2 ] \n",
      "{\"metadata\":{\"name\":\"p\",\"labels\":{\"k\":\"v\"}},\"spec\":{\"x\":[true,false]}}",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) same_as_jansson(cases[i]);
  /* Beyond int64 jansson refuses; Go (and so the API server) reads a float: so do we. */
  json_t *v;
  ts_err err;
  assert_int_equal(in_json_parse("18446744073709551616", 20, &v, &err), TS_OK);
  assert_true(json_is_real(v) && json_real_value(v) == 18446744073709551616.0);
  json_decref(v);
}

/* The error for text, which must be refused, contains want. */
static void refused(const char *text, size_t len, const char *want) {
  json_t *v = (json_t *)1;
  ts_err err;
  assert_int_equal(in_json_parse(text, len, &v, &err), TS_EPARSE);
  assert_null(v);
  if (!strstr(err.text, want))
    fail_msg("error for %s is \"%s\", want \"%s\"", text, err.text, want);
}

static void test_json_invalid(void **state) {
  (void)state;
  refused("{\"a\": 1,}", 9, "line 1 column 9: expected a string key");
  refused("[1, 2", 5, "unexpected end of input: expected ',' or ']'");
  refused("{\n  \"a\": tru\n}", 14, "line 2 column 8: invalid literal");
  refused("01", 2, "leading zeros");
  refused("1.", 2, "invalid number");
  refused("-", 1, "invalid number");
  refused("NaN", 3, "unexpected character");
  refused("\"a\nb\"", 5, "control character");
  refused("\"\\x\"", 4, "invalid escape");
  refused("\"\\ud83d\"", 8, "surrogate");
  refused("\"\\ude00\"", 8, "surrogate");
  refused("\"\\u0000\"", 8, "\\u0000");
  refused("\"\xc3\x28\"", 4, "invalid UTF-8");
  refused("\"\xed\xa0\x80\"", 5, "invalid UTF-8"); /* an encoded surrogate */
  refused("\"\xc0\xaf\"", 4, "invalid UTF-8");     /* overlong */
  refused("1 2", 3, "end of input expected");
  refused("", 0, "unexpected end of input");
  refused("[1e999]", 7, "overflow");
  refused("\"abc", 4, "unterminated string");
}

static void test_json_bounds(void **state) {
  (void)state;
  char deep[2 * 600 + 1];
  json_t *v = NULL;
  ts_err err;
  memset(deep, '[', 600);
  memset(deep + 600, ']', 600);
  deep[1200] = '\0';
  assert_int_equal(in_json_parse(deep, 1200, &v, &err), TS_EPARSE);
  assert_non_null(strstr(err.text, "nesting too deep"));
  assert_int_equal(in_json_parse(deep + 100, 1000, &v, &err), TS_OK); /* 500 levels are fine */
  json_decref(v);
  /* Input is bounded by its length, not by a terminator: "[1]" inside a larger buffer. */
  assert_int_equal(in_json_parse("[1]]]", 3, &v, &err), TS_OK);
  assert_int_equal(json_array_size(v), 1);
  json_decref(v);
  /* A failed scratch allocation (string with an escape) is an error, not a crash. */
  for (long n = 0; n < 4; n++) {
    ts_alloc_fail_after(n);
    ts_rc rc = in_json_parse("{\"a\\n\": \"b\\n\"}", 14, &v, &err);
    ts_alloc_fail_after(-1);
    if (rc == TS_OK)
      json_decref(v);
    else
      assert_int_not_equal(rc, TS_OK);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_valid),
      cmocka_unit_test(test_json_invalid),
      cmocka_unit_test(test_json_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
