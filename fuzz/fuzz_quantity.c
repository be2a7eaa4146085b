/* libFuzzer target: Kubernetes quantities. Parsing never crashes, and what a parsed quantity
 * prints parses back to the same value (the canonical form round-trips). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ts_quantity q, back, sum;
  char text[TS_QUANTITY_STR_MAX];
  ts_err err;
  int64_t v;
  if (ts_quantity_parse_n((const char *)data, size, &q, &err) != TS_OK) return 0;
  ts_quantity_format(&q, text);
  if (ts_quantity_parse(text, &back, &err) != TS_OK || ts_quantity_cmp(&q, &back) != 0) abort();
  ts_quantity_add(&q, &back, &sum);
  ts_quantity_sub(&q, &back, &sum);
  ts_quantity_mul_int(&q, 7, &sum);
  ts_quantity_value(&q, &v);
  ts_quantity_milli(&q, &v);
  return 0;
}
