/* common/log.c - leveled logging to stderr (used by cmd/ and kubeclient/, never by parsers). */
#include "ts.h"

#include <stdio.h>
#include <time.h>

static ts_log_level log_level = TS_LOG_INFO;
static bool stamps; /* RFC 3339 UTC time with milliseconds before each line */

void ts_log_set_timestamps(bool on) {
  stamps = on;
}

void ts_log_set_level(ts_log_level l) {
  log_level = l;
}

void ts_log(ts_log_level l, const char *fmt, ...) {
  static const char *const names[] = {"debug", "info", "warn", "error"};
  va_list ap;
  if (l < log_level) return;
  if (stamps) {
    struct timespec now;
    struct tm tm;
    char at[32];
    clock_gettime(CLOCK_REALTIME, &now);
    gmtime_r(&now.tv_sec, &tm);
    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ldZ ", at, now.tv_nsec / 1000000);
  }
  fprintf(stderr, "tessera: %s: ", names[l]);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}
