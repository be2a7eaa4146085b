/* common/alloc.c - malloc wrappers with an allocation-failure hook for chaos tests. */
#include "ts.h"

#include <stdlib.h>
#include <string.h>

static long fail_countdown = -1; /* allocations left before the injected failure; -1 = off */
static bool fail_happened;       /* an injected failure happened since the last arm */

void ts_alloc_fail_after(long n) {
  fail_countdown = n;
  fail_happened = false;
}

bool ts_alloc_failed(void) {
  return fail_happened;
}

/* True when this allocation must fail. Only the one armed allocation fails. */
static bool should_fail(void) {
  if (fail_countdown < 0) return false;
  if (fail_countdown-- == 0) {
    fail_happened = true;
    return true;
  }
  return false;
}

void *ts_malloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *ts_calloc(size_t n, size_t size) {
  if (should_fail()) return NULL;
  return calloc(n ? n : 1, size ? size : 1);
}

void *ts_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

void ts_free(void *p) {
  free(p);
}

char *ts_strndup(const char *s, size_t n) {
  char *d = ts_malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

char *ts_strdup(const char *s) {
  return ts_strndup(s, strlen(s));
}

void *ts_memdup(const void *p, size_t n) {
  void *d = ts_malloc(n);
  if (d && n) memcpy(d, p, n);
  return d;
}

ts_rc ts__vec_grow(void **v, size_t *cap, size_t need, size_t elem) {
  size_t ncap = *cap ? *cap : 4;
  void *nv;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / elem) return TS_ENOMEM;
    ncap *= 2;
  }
  nv = ts_realloc(*v, ncap * elem);
  if (!nv) return TS_ENOMEM;
  *v = nv;
  *cap = ncap;
  return TS_OK;
}
