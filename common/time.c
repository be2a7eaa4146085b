/* common/time.c - RFC 3339 timestamps as Kubernetes writes them, and Go durations. */
#include "ts.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  int64_t era;
  unsigned yoe, doy, doe;
  y -= m <= 2;
  era = (y >= 0 ? y : y - 399) / 400;
  yoe = (unsigned)(y - era * 400);
  doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  int64_t era;
  unsigned doe, yoe, doy, mp;
  z += 719468;
  era = (z >= 0 ? z : z - 146096) / 146097;
  doe = (unsigned)(z - era * 146097);
  yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  *y = (int64_t)yoe + era * 400;
  doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y += *m <= 2;
}

static int digits(const char *s, int n) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

static bool leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

ts_rc ts_time_parse(const char *s, int64_t *unix_ns) {
  static const unsigned mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int y, mo, d, h, mi, se, off = 0;
  int64_t frac = 0, days;
  size_t n = strlen(s), i = 19;
  if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
      s[16] != ':')
    return TS_EINVAL;
  y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
  h = digits(s + 11, 2), mi = digits(s + 14, 2), se = digits(s + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 ||
      se > 60)
    return TS_EINVAL;
  if ((unsigned)d > mdays[mo - 1] + (mo == 2 && leap(y))) return TS_EINVAL;
  if (y < 1678 || y > 2261) return TS_ERANGE; /* nanoseconds since 1970 must fit in int64 */
  if (s[i] == '.') {
    int64_t scale = 100000000;
    if (!(s[++i] >= '0' && s[i] <= '9')) return TS_EINVAL;
    for (; s[i] >= '0' && s[i] <= '9'; i++, scale /= 10) frac += (s[i] - '0') * scale;
  }
  if (s[i] == 'Z' || s[i] == 'z') {
    i++;
  } else if (s[i] == '+' || s[i] == '-') {
    int oh = n - i >= 6 && s[i + 3] == ':' ? digits(s + i + 1, 2) : -1;
    int om = oh >= 0 ? digits(s + i + 4, 2) : -1;
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return TS_EINVAL;
    off = (oh * 60 + om) * 60 * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return TS_EINVAL;
  }
  if (i != n) return TS_EINVAL;
  days = days_from_civil(y, (unsigned)mo, (unsigned)d);
  *unix_ns = ((days * 86400 + h * 3600 + mi * 60 + se) - off) * 1000000000LL + frac;
  return TS_OK;
}

void ts_time_format(int64_t unix_ns, char *out, size_t cap) {
  int64_t secs = unix_ns >= 0 ? unix_ns / 1000000000LL : -((-unix_ns + 999999999LL) / 1000000000LL);
  int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400), y;
  int64_t rem = secs - days * 86400;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  snprintf(out, cap, "%04lld-%02u-%02uT%02d:%02d:%02dZ", (long long)y, m, d, (int)(rem / 3600),
           (int)(rem / 60 % 60), (int)(rem % 60));
}

int64_t ts_time_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

double ts_time_mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

ts_rc ts_duration_parse(const char *s, int64_t *ms) {
  static const struct {
    const char *unit;
    double ms;
  } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
  double total = 0;
  if (!*s) return TS_EINVAL;
  if (!strcmp(s, "0")) return *ms = 0, TS_OK;
  while (*s) {
    double n = 0, scale = 1;
    bool digits = false, matched = false;
    for (; isdigit((unsigned char)*s); s++, digits = true) n = n * 10 + (*s - '0');
    if (*s == '.')
      for (s++; isdigit((unsigned char)*s); s++, digits = true) n += (*s - '0') * (scale /= 10);
    if (!digits) return TS_EINVAL;
    for (size_t i = 0; i < sizeof units / sizeof units[0] && !matched; i++) {
      size_t k = strlen(units[i].unit);
      if (!strncmp(s, units[i].unit, k) && !(k == 1 && s[0] == 'm' && s[1] == 's')) {
        total += n * units[i].ms;
        s += k;
        matched = true;
      }
    }
    if (!matched) return TS_EINVAL;
  }
  if (total > 365.0 * 86400000) return TS_ERANGE;
  *ms = (int64_t)total;
  return TS_OK;
}
