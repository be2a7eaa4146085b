/* libFuzzer target: RFC 3339 times (ts_time_parse). A time that parses formats (to the second)
 * and parses back to the same second. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/ts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char s[128], out[64];
  int64_t ns, again, sec;
  if (size >= sizeof s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  if (ts_time_parse(s, &ns) != TS_OK) return 0;
  ts_time_format(ns, out, sizeof out);
  sec = ns - ((ns % 1000000000LL) + 1000000000LL) % 1000000000LL; /* floor to the second */
  if (ts_time_parse(out, &again) != TS_OK || again != sec) abort();
  return 0;
}
