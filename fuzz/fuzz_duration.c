/* libFuzzer target: Go durations as tessera.yaml takes them (ts_duration_parse). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char s[256];
  int64_t ms;
  if (size >= sizeof s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  ts_duration_parse(s, &ms);
  return 0;
}
