/* libFuzzer target: the request parser of the /healthz, /readyz and /metrics endpoints
 * (cmd/health.c, part of the binary, included here). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/health.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[256];
  int r;
  if (size > REQ_MAX) return 0;
  r = health_parse_request((const char *)data, size, path, sizeof path);
  if (r != HEALTH_REQ_INCOMPLETE && r != HEALTH_REQ_OK && r != HEALTH_REQ_TOO_LARGE) abort();
  if (strlen(path) >= sizeof path) abort();
  return 0;
}
