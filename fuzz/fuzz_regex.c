/* libFuzzer target: the regular-expression engine alone (cel/regex.c). The input is a pattern,
 * a newline, then the text searched. Compile errors are fine; crashes, leaks and a search that
 * outruns its step budget without saying so are not. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cel/regex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *in = (const char *)data, *nl = memchr(in, '\n', size);
  size_t plen = nl ? (size_t)(nl - in) : size;
  cel_re *re = NULL;
  ts_err err;
  if (cel_re_compile(in, plen, &re, &err) == TS_OK) {
    void *scratch = malloc(cel_re_scratch_size(re) + 1);
    uint64_t budget = 1000000;
    bool found = false;
    size_t start = 0, end = 0;
    const char *text = nl ? nl + 1 : "";
    size_t tlen = nl ? size - plen - 1 : 0;
    ts_rc rc = cel_re_search(re, text, tlen, scratch, &budget, &found, &start, &end);
    if (rc == TS_OK && found && (start > end || end > tlen)) abort(); /* a match inside the text */
    free(scratch);
    cel_re_free(re);
  }
  return 0;
}
