/* libFuzzer target: YAML streams to JSON values (config/yaml.c). No crash, leak or hang on any
 * input; depth and alias references stay bounded. */
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cfg_docs docs = {0};
  ts_err err;
  cfg_yaml_parse((const char *)data, size, &docs, &err);
  cfg_docs_free(&docs);
  return 0;
}
