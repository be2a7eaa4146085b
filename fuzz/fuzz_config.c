/* libFuzzer target: tessera.yaml decoding (config/tessera.c). */
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cfg_tessera c;
  ts_err err;
  cfg_tessera_default(&c);
  cfg_tessera_parse((const char *)data, size, &c, &err);
  cfg_tessera_free(&c);
  return 0;
}
