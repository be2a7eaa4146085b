/* libFuzzer target: semantic versions as CEL's semver library reads them, strict and relaxed. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cel/cel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cel_semver v;
  ts_err err;
  ts_rc strict = cel_semver_parse((const char *)data, size, false, &v, &err);
  ts_rc relaxed = cel_semver_parse((const char *)data, size, true, &v, &err);
  if (strict == TS_OK && relaxed != TS_OK) abort(); /* relaxed accepts what strict accepts */
  return 0;
}
