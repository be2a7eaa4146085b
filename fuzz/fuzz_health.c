/* libFuzzer target: the request parser of the /healthz, /readyz and /metrics endpoints and
 * the Authorization header's reader (cmd/health.c, part of the binary, included here). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/health.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char path[256], token[64];
  int r;
  if (size > REQ_MAX) return 0;
  r = health_parse_request((const char *)data, size, path, sizeof path);
  if (r != HEALTH_REQ_INCOMPLETE && r != HEALTH_REQ_OK && r != HEALTH_REQ_TOO_LARGE) abort();
  if (strlen(path) >= sizeof path) abort();
  r = health_parse_bearer((const char *)data, size, token, sizeof token);
  if ((r != 0 && r != -1) || strlen(token) >= sizeof token || (r == 0 && !*token)) abort();
  return 0;
}
