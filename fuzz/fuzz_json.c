/* libFuzzer target: in_json_parse differentially against jansson. Whatever jansson accepts we
 * accept with an equal value; what we accept and jansson refuses may only be an integer beyond
 * int64 (which we read as a real, as Go does) or a leading UTF-8 byte order mark. jansson stops at
 * a NUL byte; we refuse it, so inputs holding one are only checked for crashes. Never a crash or a
 * leak. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "input/input.h"
#include "common/ts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_error_t je;
  ts_err err;
  json_t *ours = NULL;
  json_t *theirs = json_loadb((const char *)data, size, JSON_DECODE_ANY, &je);
  ts_rc rc = in_json_parse((const char *)data, size, &ours, &err);
  bool nul = memchr(data, 0, size) != NULL;
  if (theirs && rc != TS_OK && !nul && !strstr(err.text, "nesting too deep")) abort();
  if (theirs && ours && !nul && !json_equal(theirs, ours)) abort();
  bool bom = size >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3); /* we skip one; jansson refuses */
  if (!theirs && ours && !bom && !strstr(je.text, "too big")) abort();
  json_decref(theirs);
  json_decref(ours);
  return 0;
}
