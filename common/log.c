/* common/log.c - leveled logging to stderr, as text lines or JSON lines (used by cmd/ and
 * kubeclient/, never by parsers). */
#include "ts.h"

#include <stdio.h>
#include <time.h>

static ts_log_level log_level = TS_LOG_INFO;
static bool stamps;                            /* text: RFC 3339 UTC time with milliseconds */
static ts_log_format log_format = TS_LOG_TEXT; /* text or JSON lines */

void ts_log_set_timestamps(bool on) {
  stamps = on;
}

void ts_log_set_level(ts_log_level l) {
  log_level = l;
}

void ts_log_set_format(ts_log_format f) {
  log_format = f;
}

/* s as the inside of a JSON string. */
static void json_text(FILE *f, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else if (*p == '\t')
      fputs("\\t", f);
    else if (*p < 0x20 || *p == 0x7f)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
}

static void vlog(ts_log_level l, const char *object, const char *fmt, va_list ap) {
  static const char *const names[] = {"debug", "info", "warn", "error"};
  struct timespec now;
  char msg[8192];
  if (l < log_level) return;
  clock_gettime(CLOCK_REALTIME, &now);
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (log_format == TS_LOG_JSON) {
    fprintf(stderr, "{\"ts\":%lld.%03ld,\"level\":\"%s\",\"msg\":\"", (long long)now.tv_sec,
            now.tv_nsec / 1000000, names[l]);
    json_text(stderr, msg);
    if (object) {
      fputs("\",\"object\":\"", stderr);
      json_text(stderr, object);
    }
    fputs("\"}\n", stderr);
    return;
  }
  if (stamps) {
    struct tm tm;
    char at[32];
    gmtime_r(&now.tv_sec, &tm);
    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ldZ ", at, now.tv_nsec / 1000000);
  }
  fprintf(stderr, "tessera: %s: %s\n", names[l], msg);
}

void ts_log(ts_log_level l, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(l, NULL, fmt, ap);
  va_end(ap);
}

void ts_log_obj(ts_log_level l, const char *object, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog(l, object, fmt, ap);
  va_end(ap);
}
