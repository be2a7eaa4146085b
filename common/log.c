/* common/log.c - leveled logging to stderr (used by cmd/ and kubeclient/, never by parsers). */
#include "ts.h"

#include <stdio.h>

static ts_log_level log_level = TS_LOG_INFO;

void ts_log_set_level(ts_log_level l) {
  log_level = l;
}

void ts_log(ts_log_level l, const char *fmt, ...) {
  static const char *const names[] = {"debug", "info", "warn", "error"};
  va_list ap;
  if (l < log_level) return;
  fprintf(stderr, "tessera: %s: ", names[l]);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
