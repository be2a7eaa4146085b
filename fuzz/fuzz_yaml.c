/* libFuzzer target: YAML streams to JSON values (input/yaml.c). No crash, leak or hang on any
 * input; depth and alias references stay bounded. */
#include <stddef.h>
#include <stdint.h>

#include "input/input.h"
#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  in_docs docs = {0};
  ts_err err;
  in_yaml_parse((const char *)data, size, &docs, &err);
  in_docs_free(&docs);
  return 0;
}
