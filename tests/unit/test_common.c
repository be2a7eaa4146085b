/* Unit tests of common/: errors, allocation hook, arena, interning, buffers, map, time and
 * quantities (every suffix, rounding, overflow, canonical form). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ts.h"

static void test_errors(void **state) {
  ts_err e;
  (void)state;
  assert_string_equal(ts_errname(TS_EINVAL), "EINVAL");
  assert_string_equal(ts_strerror(TS_ENOMEM), "out of memory");
  assert_string_equal(ts_errname((ts_rc)999), "EUNKNOWN");
  ts_err_clear(&e);
  assert_int_equal(ts_err_set(&e, TS_EINVAL, "count: must be at least %d", 1), TS_EINVAL);
  ts_err_prefix(&e, "ResourceClaim %s/%s", "team-a", "train");
  assert_string_equal(e.text, "ResourceClaim team-a/train: count: must be at least 1");
  assert_int_equal(ts_err_set(NULL, TS_EIO, "x"), TS_EIO);
}

static void test_alloc_hook(void **state) {
  void *p;
  (void)state;
  ts_alloc_fail_after(1);
  p = ts_malloc(8);
  assert_non_null(p);
  assert_null(ts_malloc(8));
  assert_true(ts_alloc_failed());
  {
    char *s = ts_strdup("x"); /* only the one armed allocation fails */
    assert_non_null(s);
    ts_free(s);
  }
  ts_alloc_fail_after(-1);
  ts_free(p);
}

static void test_arena(void **state) {
  ts_arena a;
  char *s;
  (void)state;
  ts_arena_init(&a, 64);
  for (int i = 0; i < 100; i++) {
    void *p = ts_arena_alloc(&a, 24);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 16, 0);
  }
  assert_non_null(ts_arena_alloc(&a, 1000)); /* larger than a chunk */
  s = ts_arena_strndup(&a, "hello world", 5);
  assert_string_equal(s, "hello");
  ts_arena_reset(&a);
  assert_int_equal(a.used, 0);
  assert_non_null(ts_arena_alloc(&a, 8));
  ts_arena_free(&a);
}

static void test_intern(void **state) {
  char buf[16];
  const char *a, *b, *c;
  (void)state;
  a = ts_intern_cstr("nvidia.com/gpu");
  snprintf(buf, sizeof buf, "nvidia.com/%s", "gpu");
  b = ts_intern_cstr(buf);
  c = ts_intern("nvidia.com/gpux", 14);
  assert_ptr_equal(a, b);
  assert_ptr_equal(a, c);
  assert_ptr_not_equal(a, ts_intern_cstr("cpu"));
}

/* Counted references: the copy goes with the last one, unless something pinned it. */
static void test_intern_counted(void **state) {
  size_t n0 = ts_intern_count(), b0 = ts_intern_bytes();
  const char *x, *y, *p;
  (void)state;
  x = ts_intern_ref("job-12345", 9);
  y = ts_intern_ref("job-12345", 9);
  assert_ptr_equal(x, y);
  assert_ptr_equal(x, ts_intern_ref("job-12345x", 9)); /* by length, as ts_intern */
  assert_int_equal(ts_intern_count(), n0 + 1);
  assert_true(ts_intern_bytes() > b0);
  ts_intern_unref(x), ts_intern_unref(y);
  assert_int_equal(ts_intern_count(), n0 + 1); /* one reference left */
  ts_intern_unref(x);
  assert_int_equal(ts_intern_count(), n0); /* the last one: freed */
  assert_int_equal(ts_intern_bytes(), b0);
  /* pinned while counted: kept for good, and unref is then a no-op */
  x = ts_intern_ref("zone-a", 6);
  p = ts_intern_cstr("zone-a");
  assert_ptr_equal(x, p);
  ts_intern_unref(x);
  ts_intern_unref(x);
  assert_string_equal(p, "zone-a");
  assert_ptr_equal(ts_intern_cstr("zone-a"), p);
  assert_int_equal(ts_intern_count(), n0 + 1);
  ts_intern_unref(NULL);
}

static void test_buf(void **state) {
  ts_buf b;
  char *s;
  (void)state;
  ts_buf_init(&b, 16);
  assert_int_equal(ts_buf_puts(&b, "0123456789"), TS_OK);
  assert_int_equal(ts_buf_printf(&b, "%d", 12345), TS_OK);
  assert_string_equal(b.data, "012345678912345");
  assert_int_equal(ts_buf_puts(&b, "ab"), TS_ELIMIT); /* the cap is enforced */
  assert_int_equal(b.len, 15);
  ts_buf_reset(&b);
  ts_buf_put_json_string(&b, "a\"b\n\x01");
  assert_string_equal(b.data, "\"a\\\"b\\n\\u0001\"");
  s = ts_buf_steal(&b);
  assert_null(b.data);
  ts_free(s);
}

static void test_map(void **state) {
  ts_map m;
  char keys[2000][16];
  void *old;
  size_t it = 0, seen = 0;
  const ts_map_slot *slot;
  (void)state;
  ts_map_init(&m);
  for (int i = 0; i < 2000; i++) {
    snprintf(keys[i], sizeof keys[i], "key-%d", i);
    assert_int_equal(ts_map_put(&m, keys[i], strlen(keys[i]), (void *)(intptr_t)(i + 1), &old),
                     TS_OK);
    assert_null(old);
  }
  assert_int_equal(m.count, 2000);
  assert_int_equal((intptr_t)ts_map_get(&m, "key-1234", 8), 1235);
  ts_map_put(&m, keys[7], strlen(keys[7]), (void *)(intptr_t)77, &old);
  assert_int_equal((intptr_t)old, 8);
  /* Delete every other key; the rest must stay reachable (backward shift is right). */
  for (int i = 0; i < 2000; i += 2) assert_non_null(ts_map_del(&m, keys[i], strlen(keys[i])));
  assert_int_equal(m.count, 1000);
  for (int i = 0; i < 2000; i++) {
    void *v = ts_map_get(&m, keys[i], strlen(keys[i]));
    if (i % 2 == 0)
      assert_null(v);
    else
      assert_non_null(v);
  }
  assert_null(ts_map_del(&m, "absent", 6));
  while (ts_map_next(&m, &it, &slot)) seen++;
  assert_int_equal(seen, 1000);
  ts_map_free(&m);
}

static void test_time(void **state) {
  int64_t ns;
  char out[32];
  (void)state;
  assert_int_equal(ts_time_parse("1970-01-01T00:00:00Z", &ns), TS_OK);
  assert_int_equal(ns, 0);
  assert_int_equal(ts_time_parse("2026-12-02T12:00:00Z", &ns), TS_OK);
  assert_int_equal(ns / 1000000000LL, 1796212800LL);
  ts_time_format(ns, out, sizeof out);
  assert_string_equal(out, "2026-12-02T12:00:00Z");
  assert_int_equal(ts_time_parse("2026-12-02T13:30:00.5+01:30", &ns), TS_OK);
  assert_int_equal(ns, 1796212800LL * 1000000000LL + 500000000LL);
  assert_int_equal(ts_time_parse("2026-02-30T00:00:00Z", &ns), TS_EINVAL);
  assert_int_equal(ts_time_parse("2026-12-02 12:00:00Z", &ns), TS_EINVAL);
  assert_int_equal(ts_time_parse("2026-12-02T12:00:00", &ns), TS_EINVAL);
  assert_int_equal(ts_time_parse("", &ns), TS_EINVAL);
  assert_int_equal(ts_time_parse("9999-01-01T00:00:00Z", &ns), TS_ERANGE); /* found by fuzzing */
}

/* Parses s and checks its canonical text. */
static void canon(const char *s, const char *want) {
  ts_quantity q;
  ts_err e;
  char out[TS_QUANTITY_STR_MAX];
  ts_err_clear(&e);
  if (ts_quantity_parse(s, &q, &e) != TS_OK) fail_msg("parse %s: %s", s, e.text);
  ts_quantity_format(&q, out);
  if (strcmp(out, want) != 0) fail_msg("%s formatted as %s, want %s", s, out, want);
}

static void test_quantity_canonical(void **state) {
  (void)state;
  /* Every decimal suffix. */
  canon("1n", "1n");
  canon("1u", "1u");
  canon("500m", "500m");
  canon("1", "1");
  canon("1k", "1k");
  canon("1M", "1M");
  canon("1G", "1G");
  canon("1T", "1T");
  canon("1P", "1P");
  canon("1E", "1E");
  /* Every binary suffix. */
  canon("1Ki", "1Ki");
  canon("1Mi", "1Mi");
  canon("40Gi", "40Gi");
  canon("1Ti", "1Ti");
  canon("1Pi", "1Pi");
  canon("1Ei", "1Ei");
  /* Kubernetes' documented examples and the ones kubectl shows. */
  canon("1.5", "1500m");
  canon("1.5Gi", "1536Mi");
  canon("0.5Gi", "512Mi");
  canon("1024Mi", "1Gi");
  canon("1000m", "1");
  canon("1000", "1k");
  canon("1100", "1100");
  canon("12e2", "1200");
  canon("1e3", "1e3");
  canon("5e-3", "5e-3");
  canon("1E3", "1e3");
  canon("0.1", "100m");
  canon("0.0001", "100u");
  canon("+2", "2");
  canon("-1.5", "-1500m");
  canon("0", "0");
  canon("-0", "0");
  canon("0Gi", "0");
  canon("00100", "100");
  canon("1.", "1");
  canon(".5", "500m");
  canon("100Ki", "100Ki");
  canon("1023Ki", "1023Ki");
  canon("1025", "1025"); /* binary format is kept only for integers >= 1024 */
  canon("512Ki", "512Ki");
  canon("0.5Ki", "512");            /* < 1024: printed as decimal */
  canon("1.1Gi", "1181116006400m"); /* not integral: decimal, nothing lost */
  canon("0.5Mi", "512Ki");
  /* Finer than nano rounds up to nano, away from zero. */
  canon("0.0000000001", "1n");
  canon("1.0000000001", "1000000001n");
  canon("-0.0000000001", "-1n");
  canon("1e-20", "1e-9"); /* exponent format is kept */
  /* Binary quantities are capped at 2^63-1, as in Kubernetes. */
  canon("8Ei", "9223372036854775807");
  canon("123456789012345678", "123456789012345678");
}

static void bad(const char *s, ts_rc want, const char *substr) {
  ts_quantity q;
  ts_err e;
  ts_err_clear(&e);
  if (ts_quantity_parse(s, &q, &e) != want) fail_msg("parse of \"%s\" should fail", s);
  if (!strstr(e.text, substr)) fail_msg("error for \"%s\" is \"%s\"", s, e.text);
}

static void test_quantity_invalid(void **state) {
  (void)state;
  bad("", TS_EINVAL, "regular expression");
  bad(".", TS_EINVAL, "regular expression");
  bad("abc", TS_EINVAL, "regular expression");
  bad("1K", TS_EINVAL, "suffix \"K\"");
  bad("1Kb", TS_EINVAL, "suffix");
  bad("1e", TS_EINVAL, "suffix");
  bad("1e+", TS_EINVAL, "suffix");
  bad("1ee3", TS_EINVAL, "suffix");
  bad("1Ki5", TS_EINVAL, "suffix");
  bad(" 1", TS_EINVAL, "regular expression");
  bad("1 ", TS_EINVAL, "suffix");
  bad("1..2", TS_EINVAL, "suffix");
  bad("--1", TS_EINVAL, "regular expression");
  bad("99999999999999999999999999999999999999999", TS_EOVERFLOW, "too large");
  bad("99999999999999999999", TS_EOVERFLOW, "too many digits");
  bad("400000e000000000000000000100000", TS_EOVERFLOW, "too large"); /* found by fuzz_quantity */
}

static ts_quantity q_of(const char *s) {
  ts_quantity q;
  assert_int_equal(ts_quantity_parse(s, &q, NULL), TS_OK);
  return q;
}

static void test_quantity_arith(void **state) {
  ts_quantity a = q_of("1.5Gi"), b = q_of("512Mi"), r;
  char out[TS_QUANTITY_STR_MAX];
  int64_t v;
  (void)state;
  assert_int_equal(ts_quantity_add(&a, &b, &r), TS_OK);
  ts_quantity_format(&r, out);
  assert_string_equal(out, "2Gi");
  assert_int_equal(ts_quantity_sub(&b, &a, &r), TS_OK);
  ts_quantity_format(&r, out);
  assert_string_equal(out, "-1Gi");
  r = ts_quantity_sub0(&b, &a); /* max(0, 512Mi - 1.5Gi) */
  assert_true(ts_quantity_is_zero(&r));
  r = ts_quantity_sub0(&a, &b);
  ts_quantity_format(&r, out);
  assert_string_equal(out, "1Gi");
  a = q_of("100m"), b = q_of("2");
  assert_int_equal(ts_quantity_add(&a, &b, &r), TS_OK);
  ts_quantity_format(&r, out);
  assert_string_equal(out, "2100m");
  assert_int_equal(ts_quantity_mul_int(&a, 7, &r), TS_OK);
  ts_quantity_format(&r, out);
  assert_string_equal(out, "700m");
  /* Comparisons across suffixes and scales. */
  a = q_of("1Gi"), b = q_of("1G");
  assert_int_equal(ts_quantity_cmp(&a, &b), 1);
  a = q_of("1000m"), b = q_of("1");
  assert_int_equal(ts_quantity_cmp(&a, &b), 0);
  a = q_of("-1"), b = q_of("1n");
  assert_int_equal(ts_quantity_cmp(&a, &b), -1);
  a = q_of("1E"), b = q_of("999P");
  assert_int_equal(ts_quantity_cmp(&a, &b), 1);
  a = q_of("40Gi"), b = q_of("42949672960");
  assert_int_equal(ts_quantity_cmp(&a, &b), 0);
  /* Value and MilliValue round up, away from zero. */
  assert_int_equal(ts_quantity_value(&(ts_quantity){15, -1, 0}, &v), TS_OK);
  assert_int_equal(v, 2);
  a = q_of("-1.5");
  assert_int_equal(ts_quantity_value(&a, &v), TS_OK);
  assert_int_equal(v, -2);
  a = q_of("1n");
  assert_int_equal(ts_quantity_milli(&a, &v), TS_OK);
  assert_int_equal(v, 1);
  a = q_of("63500m");
  assert_int_equal(ts_quantity_milli(&a, &v), TS_OK);
  assert_int_equal(v, 63500);
  a = q_of("100E");
  assert_int_equal(ts_quantity_value(&a, &v), TS_EOVERFLOW);
  a = q_of("9223372036854775807"), b = q_of("1");
  assert_int_equal(ts_quantity_add(&a, &b, &r), TS_EOVERFLOW);
  assert_true(ts_quantity_is_integer(&a));
  b = q_of("0.5");
  assert_false(ts_quantity_is_integer(&b));
  assert_true(ts_quantity_approx(&b) == 0.5);
  assert_int_equal(ts_quantity_sign(&b), 1);
}

/* --logging-format=json: one JSON object per line, the message escaped, the object's key when
 * the line is about one; text lines as before; levels below the threshold dropped. */
static void test_log_json(void **state) {
  char path[] = "/tmp/tessera-log-XXXXXX", buf[2048];
  int fd = mkstemp(path), saved = dup(2);
  FILE *f;
  size_t n;
  (void)state;
  assert_true(fd >= 0 && saved >= 0);
  fflush(stderr);
  dup2(fd, 2);
  ts_log_set_format(TS_LOG_JSON);
  ts_log_obj(TS_LOG_WARN, "t/p0", "bind t/p0 failed: \"quoted\"\n\tand tabbed");
  ts_log(TS_LOG_INFO, "plain");
  ts_log(TS_LOG_DEBUG, "dropped");
  ts_log_set_format(TS_LOG_TEXT);
  ts_log(TS_LOG_ERROR, "text again");
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  assert_non_null(f = fopen(path, "r"));
  n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  close(fd);
  unlink(path);
  assert_non_null(strstr(buf,
                         ",\"level\":\"warn\",\"msg\":\"bind t/p0 failed: \\\"quoted\\\"\\n\\tand "
                         "tabbed\",\"object\":\"t/p0\"}\n"));
  assert_non_null(strstr(buf, ",\"level\":\"info\",\"msg\":\"plain\"}\n"));
  assert_true(!strncmp(buf, "{\"ts\":", 6));
  assert_null(strstr(buf, "dropped"));
  assert_non_null(strstr(buf, "tessera: error: text again\n"));
}

/* Values as Prometheus' Go client spells them (strconv 'g', -1), labels escaped, a histogram
 * cumulative, every family's head once. */
static void prom_is(double v, const char *want) {
  ts_buf b;
  ts_prom p = {&b, TS_OK};
  ts_buf_init(&b, 0);
  ts_prom_value(&p, v);
  assert_int_equal(p.rc, TS_OK);
  assert_string_equal(b.data, want);
  ts_buf_free(&b);
}

static void test_prom(void **state) {
  static const ts_prom_family f = {"x_total", "counter", "Xs.", {"a", "b", NULL}},
                              h = {"lat_seconds", "histogram", "Latency.", {NULL}};
  static const double le[] = {0.5, 1, 2.5};
  const uint64_t counts[] = {1, 0, 2};
  ts_buf b, l;
  ts_prom p = {&b, TS_OK}, lp = {&l, TS_OK};
  (void)state;
  prom_is(0, "0");
  prom_is(10, "10");
  prom_is(0.123, "0.123");
  prom_is(40960, "40960");
  prom_is(999999, "999999");
  prom_is(1e6, "1e+06");
  prom_is(1234567, "1.234567e+06");
  prom_is(0.0001, "0.0001");
  prom_is(0.00001, "1e-05");
  prom_is(-2.5, "-2.5");
  prom_is(0.1 + 0.2, "0.30000000000000004");
  prom_is(5242.88, "5242.88");
  prom_is(NAN, "NaN");
  prom_is(INFINITY, "+Inf");
  prom_is(-INFINITY, "-Inf");
  ts_buf_init(&b, 0);
  ts_buf_init(&l, 0);
  ts_prom_head(&p, &f);
  ts_prom_sample(&p, &f, (const char *[]){"q\"u\\o", "line\nbreak"}, 3);
  ts_prom_sample(&p, &f, (const char *[]){NULL, "x"}, 1);
  ts_prom_head(&p, &h);
  ts_prom_label(&lp, "queue", "a");
  ts_prom_histogram(&p, &h, l.data, le, 3, counts, 4, 7.25);
  ts_prom_histogram(&p, &h, "", le, 3, counts, 4, 7.25);
  assert_int_equal(p.rc, TS_OK);
  assert_string_equal(b.data,
                      "# HELP x_total Xs.\n# TYPE x_total counter\n"
                      "x_total{a=\"q\\\"u\\\\o\",b=\"line\\nbreak\"} 3\n"
                      "x_total{a=\"\",b=\"x\"} 1\n"
                      "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
                      "lat_seconds_bucket{queue=\"a\",le=\"0.5\"} 1\n"
                      "lat_seconds_bucket{queue=\"a\",le=\"1\"} 1\n"
                      "lat_seconds_bucket{queue=\"a\",le=\"2.5\"} 3\n"
                      "lat_seconds_bucket{queue=\"a\",le=\"+Inf\"} 4\n"
                      "lat_seconds_sum{queue=\"a\"} 7.25\nlat_seconds_count{queue=\"a\"} 4\n"
                      "lat_seconds_bucket{le=\"0.5\"} 1\nlat_seconds_bucket{le=\"1\"} 1\n"
                      "lat_seconds_bucket{le=\"2.5\"} 3\nlat_seconds_bucket{le=\"+Inf\"} 4\n"
                      "lat_seconds_sum 7.25\nlat_seconds_count 4\n");
  ts_buf_free(&b);
  ts_buf_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_alloc_hook),
      cmocka_unit_test(test_arena),
      cmocka_unit_test(test_intern),
      cmocka_unit_test(test_intern_counted),
      cmocka_unit_test(test_buf),
      cmocka_unit_test(test_map),
      cmocka_unit_test(test_time),
      cmocka_unit_test(test_quantity_canonical),
      cmocka_unit_test(test_quantity_invalid),
      cmocka_unit_test(test_quantity_arith),
      cmocka_unit_test(test_log_json),
      cmocka_unit_test(test_prom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
