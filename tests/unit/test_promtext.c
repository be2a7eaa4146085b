/* tests/unit/test_promtext.c - the checker of Prometheus' text format (tests/support/promtext)
 * that the /metrics tests rely on: it accepts what the format allows and names what it does
 * not, so a metrics test that passes it means a scraper reads the body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "tests/support/promtext.h"

static const char good[] =
    "# HELP a_total Things.\n# TYPE a_total counter\na_total{verb=\"get\",code=\"200\"} 3\n"
    "a_total{code=\"200\",verb=\"list\"} 0\n"
    "# some other comment\n\n"
    "# HELP temp A gauge.\n# TYPE temp gauge\ntemp -1.5e3\ntemp{x=\"a\\\\b\\\"c\\nd\"} NaN\n"
    "# TYPE lat histogram\nlat_bucket{le=\"0.1\"} 1\nlat_bucket{le=\"1\"} 4\n"
    "lat_bucket{le=\"+Inf\"} 5\nlat_sum 2.5\nlat_count 5\n"
    "# TYPE s summary\ns{quantile=\"0.5\"} 0.2\ns_sum 1\ns_count 3 1700000000000\n"
    "untyped_one 1\n";

static void expect_bad(const char *text, const char *problem) {
  char why[512] = "";
  bool ok = prom_text_valid(text, why, sizeof why);
  if (ok || !strstr(why, problem))
    fail_msg("expected \"%s\" for:\n%s\ngot %s: %s", problem, text, ok ? "valid" : "invalid", why);
}

static void test_accepts_the_format(void **state) {
  char why[512] = "";
  (void)state;
  if (!prom_text_valid(good, why, sizeof why)) fail_msg("%s", why);
}

static void test_names_what_breaks_it(void **state) {
  (void)state;
  expect_bad("# TYPE a counter\na 1\n# TYPE b gauge\nb 1\na 2\n",
             "line 5: the lines of a are not together");
  expect_bad("a 1\n# TYPE a gauge\n", "TYPE of a after its samples");
  expect_bad("# TYPE a gauge\n# TYPE a gauge\na 1\n", "a second TYPE for a");
  expect_bad("# HELP a x\n# HELP a y\n", "a second HELP for a");
  expect_bad("# TYPE a meter\n", "is not counter, gauge");
  expect_bad("a{x=\"1\"} 1\na{x=\"1\"} 2\n", "series a{x=\"1\",} twice");
  expect_bad("a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n", "twice"); /* label order */
  expect_bad("a{x=\"a\\tb\"} 1\n", "\\t is not an escape");
  expect_bad("a{x=\"open} 1\n", "the value is not closed");
  expect_bad("a{__x=\"1\"} 1\n", "label name __x is reserved");
  expect_bad("a{x=\"1\",x=\"2\"} 1\n", "label x twice");
  expect_bad("1a 1\n", "not a valid metric name");
  expect_bad("a-b 1\n", "the value is not a number");
  expect_bad("a one\n", "a: the value is not a number");
  expect_bad("a 1 x\n", "text after the value");
  expect_bad("# TYPE a counter\na -1\n", "counter a is -1");
  expect_bad("a 1", "does not end with a newline");
  expect_bad("# TYPE h histogram\nh 1\n", "h is a histogram");
  expect_bad("# TYPE h histogram\nh_bucket 1\n", "without its le label");
  expect_bad("# TYPE h histogram\nh_bucket{le=\"1\"} 3\nh_bucket{le=\"2\"} 2\n", "not cumulative");
  expect_bad("# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 2\n", "not in order");
  expect_bad("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n", "no le=\"+Inf\" bucket");
  expect_bad("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n", "differs from the count");
  expect_bad("# TYPE q summary\nq 1\n", "without its quantile label");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_accepts_the_format),
      cmocka_unit_test(test_names_what_breaks_it),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
