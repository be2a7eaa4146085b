/* cel/time.c - timestamps and durations as CEL defines them (google.protobuf.Timestamp and
 * Duration): RFC 3339 and Go duration text, arithmetic with range checks, and the calendar
 * accessors with an optional time zone.
 *
 * Time zones: fixed offsets ("+05:30", "-02:30") and a built-in table of common IANA names with
 * their current daylight-saving rules (US, EU, south-east Australia, New Zealand). There is no tz
 * database: historical rule changes are not modelled, and an unknown name is an error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_int.h"

#define A (args)

/* ---- civil calendar (Howard Hinnant's algorithms) ------------------------------------------- */

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

/* ---- parsing and formatting ------------------------------------------------------------------ */

static bool digits(const char *s, size_t n, size_t at, int count, int *out) {
  int v = 0;
  if (at + (size_t)count > n) return false;
  for (int i = 0; i < count; i++) {
    char c = s[at + (size_t)i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

bool cel__parse_timestamp(const char *s, size_t n, int64_t *sec, int32_t *nsec) {
  int y, mo, d, h, mi, se, oh = 0, om = 0;
  size_t i = 19;
  int32_t ns = 0;
  int64_t off = 0;
  if (!digits(s, n, 0, 4, &y) || n < 20 || s[4] != '-' || !digits(s, n, 5, 2, &mo) || s[7] != '-' ||
      !digits(s, n, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') || !digits(s, n, 11, 2, &h) ||
      s[13] != ':' || !digits(s, n, 14, 2, &mi) || s[16] != ':' || !digits(s, n, 17, 2, &se))
    return false;
  if (i < n && s[i] == '.') {
    int k = 0;
    i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (k < 9) ns = ns * 10 + (s[i] - '0'), k++;
      i++;
    }
    if (!k) return false;
    while (k++ < 9) ns *= 10;
  }
  if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
    i++;
  } else if (i < n && (s[i] == '+' || s[i] == '-')) {
    if (!digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' ||
        !digits(s, n, i + 4, 2, &om))
      return false;
    off = (oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return false;
  }
  if (i != n || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return false;
  {
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (d > mdays[mo - 1]) return false;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return false;
  }
  *sec = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + se - off;
  *nsec = ns;
  return true;
}

void cel__format_timestamp(int64_t sec, int32_t nsec, ts_buf *out) {
  int64_t days = floor_div(sec, 86400), rem = sec - days * 86400, y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  ts_buf_printf(out, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, m, d, (int)(rem / 3600),
                (int)(rem % 3600 / 60), (int)(rem % 60));
  if (nsec) {
    char f[16];
    int k = 9;
    snprintf(f, sizeof f, "%09d", nsec);
    while (k > 0 && f[k - 1] == '0') k--;
    f[k] = '\0';
    ts_buf_printf(out, ".%s", f);
  }
  ts_buf_putc(out, 'Z');
}

/* Go's time.ParseDuration. */
bool cel__parse_duration(const char *s, size_t n, int64_t *sec, int32_t *nsec) {
  static const struct {
    const char *unit;
    int64_t ns;
  } units[] = {{"ns", 1},       {"us", 1000},        {"\xC2\xB5s", 1000},  {"\xCE\xBCs", 1000},
               {"ms", 1000000}, {"s", 1000000000LL}, {"m", 60000000000LL}, {"h", 3600000000000LL}};
  size_t i = 0;
  bool neg = false;
  __int128 total = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
  if (i == n) return false;
  if (n - i == 1 && s[i] == '0') {
    *sec = 0, *nsec = 0;
    return true;
  }
  while (i < n) {
    __int128 whole = 0, frac = 0, scale = 1;
    bool any = false;
    size_t u;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      whole = whole * 10 + (s[i++] - '0');
      any = true;
      if (whole > ((__int128)1 << 100)) return false;
    }
    if (i < n && s[i] == '.') {
      i++;
      while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (scale < (__int128)1000000000000000000LL) frac = frac * 10 + (s[i] - '0'), scale *= 10;
        i++;
        any = true;
      }
    }
    if (!any) return false;
    for (u = 0; u < sizeof units / sizeof *units; u++) {
      size_t ul = strlen(units[u].unit);
      if (i + ul <= n && !memcmp(s + i, units[u].unit, ul) &&
          !(ul == 1 && s[i] == 'm' && i + 1 < n && s[i + 1] == 's')) {
        i += ul;
        break;
      }
    }
    if (u == sizeof units / sizeof *units) return false;
    total += whole * units[u].ns + frac * units[u].ns / scale;
    if (total > (__int128)CEL_DUR_MAX * 1000000000 * 2) return false;
  }
  if (neg) total = -total;
  *sec = (int64_t)(total / 1000000000);
  *nsec = (int32_t)(total % 1000000000);
  return true;
}

void cel__format_duration(int64_t sec, int32_t nsec, ts_buf *out) {
  if (!nsec) {
    ts_buf_printf(out, "%llds", (long long)sec);
    return;
  }
  {
    char f[16];
    int k = 9;
    bool neg = sec < 0 || nsec < 0;
    snprintf(f, sizeof f, "%09d", nsec < 0 ? -nsec : nsec);
    while (k > 0 && f[k - 1] == '0') k--;
    f[k] = '\0';
    ts_buf_printf(out, "%s%lld.%ss", neg ? "-" : "", (long long)(sec < 0 ? -sec : sec), f);
  }
}

/* ---- constructors ------------------------------------------------------------------------------
 */

static cel_value ts_value(cel_run *ev, int64_t sec, int32_t nsec) {
  cel_value v = cel_null();
  if (sec < CEL_TS_MIN || sec > CEL_TS_MAX) return cel__err(ev, "timestamp out of range");
  v.kind = CEL_TIMESTAMP;
  v.u.t.sec = sec, v.u.t.nsec = nsec;
  return v;
}

static cel_value dur_value(cel_run *ev, int64_t sec, int32_t nsec) {
  cel_value v = cel_null();
  if (sec > 0 && nsec < 0) sec--, nsec += 1000000000;
  if (sec < 0 && nsec > 0) sec++, nsec -= 1000000000;
  if (sec < -CEL_DUR_MAX || sec > CEL_DUR_MAX) return cel__err(ev, "duration out of range");
  v.kind = CEL_DURATION;
  v.u.t.sec = sec, v.u.t.nsec = nsec;
  return v;
}

static cel_value timestamp_fn(cel_run *ev, const cel_value *args, uint32_t n) {
  int64_t s;
  int32_t ns;
  (void)n;
  if (A[0].kind == CEL_TIMESTAMP) return A[0];
  if (A[0].kind == CEL_INT) return ts_value(ev, A[0].u.i, 0);
  if (!cel__parse_timestamp(A[0].u.s.p, A[0].u.s.n, &s, &ns))
    return cel__err(ev, "type conversion error: invalid timestamp \"%.*s\"", (int)A[0].u.s.n,
                    A[0].u.s.p);
  return ts_value(ev, s, ns);
}

static cel_value duration_fn(cel_run *ev, const cel_value *args, uint32_t n) {
  int64_t s;
  int32_t ns;
  (void)n;
  if (A[0].kind == CEL_DURATION) return A[0];
  if (!cel__parse_duration(A[0].u.s.p, A[0].u.s.n, &s, &ns))
    return cel__err(ev, "type conversion error: invalid duration \"%.*s\"", (int)A[0].u.s.n,
                    A[0].u.s.p);
  return dur_value(ev, s, ns);
}

/* ---- arithmetic
 * ---------------------------------------------------------------------------------- */

static cel_value t_add(cel_run *ev, const cel_value *args, uint32_t n) {
  const cel_value *a = &A[0], *b = &A[1];
  int64_t s;
  int32_t ns;
  (void)n;
  if (a->kind == CEL_DURATION && b->kind == CEL_TIMESTAMP) a = &A[1], b = &A[0];
  if (__builtin_add_overflow(a->u.t.sec, b->u.t.sec, &s)) return cel__err(ev, "range error");
  ns = a->u.t.nsec + b->u.t.nsec;
  if (a->kind == CEL_TIMESTAMP) {
    if (ns >= 1000000000) s++, ns -= 1000000000;
    if (ns < 0) s--, ns += 1000000000;
    return ts_value(ev, s, ns);
  }
  if (ns >= 1000000000) s++, ns -= 1000000000;
  if (ns <= -1000000000) s--, ns += 1000000000;
  return dur_value(ev, s, ns);
}

static cel_value t_sub(cel_run *ev, const cel_value *args, uint32_t n) {
  int64_t s;
  int32_t ns;
  (void)n;
  if (__builtin_sub_overflow(A[0].u.t.sec, A[1].u.t.sec, &s)) return cel__err(ev, "range error");
  ns = A[0].u.t.nsec - A[1].u.t.nsec;
  if (A[0].kind == CEL_TIMESTAMP && A[1].kind == CEL_DURATION) {
    if (ns < 0) s--, ns += 1000000000;
    if (ns >= 1000000000) s++, ns -= 1000000000;
    return ts_value(ev, s, ns);
  }
  if (ns >= 1000000000) s++, ns -= 1000000000;
  if (ns <= -1000000000) s--, ns += 1000000000;
  if (A[0].kind == CEL_TIMESTAMP && (s > 9223372035LL || s < -9223372035LL))
    return cel__err(ev, "range error: the difference does not fit a duration"); /* Go's int64 ns */
  return dur_value(ev, s, ns);
}

/* ---- time zones --------------------------------------------------------------------------------
 */

typedef enum dst_rule { DST_NONE, DST_US, DST_EU, DST_AU, DST_NZ } dst_rule;

static const struct {
  const char *name;
  int std;       /* standard offset, minutes east of UTC */
  dst_rule rule; /* daylight saving (one hour more) */
} zones[] = {
    {"UTC", 0, DST_NONE},
    {"GMT", 0, DST_NONE},
    {"Etc/UTC", 0, DST_NONE},
    {"Etc/GMT", 0, DST_NONE},
    {"US/Eastern", -300, DST_US},
    {"US/Central", -360, DST_US},
    {"US/Mountain", -420, DST_US},
    {"US/Pacific", -480, DST_US},
    {"US/Alaska", -540, DST_US},
    {"US/Hawaii", -600, DST_NONE},
    {"US/Arizona", -420, DST_NONE},
    {"America/New_York", -300, DST_US},
    {"America/Detroit", -300, DST_US},
    {"America/Chicago", -360, DST_US},
    {"America/Denver", -420, DST_US},
    {"America/Phoenix", -420, DST_NONE},
    {"America/Los_Angeles", -480, DST_US},
    {"America/Anchorage", -540, DST_US},
    {"America/Toronto", -300, DST_US},
    {"America/Vancouver", -480, DST_US},
    {"America/Halifax", -240, DST_US},
    {"America/St_Johns", -210, DST_US},
    {"America/Mexico_City", -360, DST_NONE},
    {"America/Bogota", -300, DST_NONE},
    {"America/Lima", -300, DST_NONE},
    {"America/Sao_Paulo", -180, DST_NONE},
    {"America/Argentina/Buenos_Aires", -180, DST_NONE},
    {"Europe/London", 0, DST_EU},
    {"Europe/Dublin", 0, DST_EU},
    {"Europe/Lisbon", 0, DST_EU},
    {"Europe/Paris", 60, DST_EU},
    {"Europe/Berlin", 60, DST_EU},
    {"Europe/Madrid", 60, DST_EU},
    {"Europe/Rome", 60, DST_EU},
    {"Europe/Amsterdam", 60, DST_EU},
    {"Europe/Brussels", 60, DST_EU},
    {"Europe/Vienna", 60, DST_EU},
    {"Europe/Zurich", 60, DST_EU},
    {"Europe/Stockholm", 60, DST_EU},
    {"Europe/Oslo", 60, DST_EU},
    {"Europe/Copenhagen", 60, DST_EU},
    {"Europe/Warsaw", 60, DST_EU},
    {"Europe/Prague", 60, DST_EU},
    {"Europe/Budapest", 60, DST_EU},
    {"Europe/Athens", 120, DST_EU},
    {"Europe/Helsinki", 120, DST_EU},
    {"Europe/Kiev", 120, DST_EU},
    {"Europe/Kyiv", 120, DST_EU},
    {"Europe/Bucharest", 120, DST_EU},
    {"Europe/Istanbul", 180, DST_NONE},
    {"Europe/Moscow", 180, DST_NONE},
    {"Africa/Cairo", 120, DST_NONE},
    {"Africa/Johannesburg", 120, DST_NONE},
    {"Africa/Lagos", 60, DST_NONE},
    {"Africa/Nairobi", 180, DST_NONE},
    {"Asia/Dubai", 240, DST_NONE},
    {"Asia/Karachi", 300, DST_NONE},
    {"Asia/Kolkata", 330, DST_NONE},
    {"Asia/Calcutta", 330, DST_NONE},
    {"Asia/Kathmandu", 345, DST_NONE},
    {"Asia/Dhaka", 360, DST_NONE},
    {"Asia/Bangkok", 420, DST_NONE},
    {"Asia/Jakarta", 420, DST_NONE},
    {"Asia/Shanghai", 480, DST_NONE},
    {"Asia/Hong_Kong", 480, DST_NONE},
    {"Asia/Singapore", 480, DST_NONE},
    {"Asia/Taipei", 480, DST_NONE},
    {"Asia/Manila", 480, DST_NONE},
    {"Asia/Seoul", 540, DST_NONE},
    {"Asia/Tokyo", 540, DST_NONE},
    {"Australia/Perth", 480, DST_NONE},
    {"Australia/Darwin", 570, DST_NONE},
    {"Australia/Adelaide", 570, DST_AU},
    {"Australia/Brisbane", 600, DST_NONE},
    {"Australia/Sydney", 600, DST_AU},
    {"Australia/Melbourne", 600, DST_AU},
    {"Australia/Canberra", 600, DST_AU},
    {"Australia/Hobart", 600, DST_AU},
    {"Pacific/Auckland", 720, DST_NZ},
    {"Pacific/Honolulu", -600, DST_NONE},
};

/* Day number of the n-th (n >= 1; 0 = last) weekday wd (0 = Sunday) of month m of year y. */
static int64_t nth_weekday(int64_t y, unsigned m, int nth, int wd) {
  int64_t first = days_from_civil(y, m, 1), day;
  int fwd = (int)((first % 7 + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
  if (nth > 0) return first + (wd - fwd + 7) % 7 + (nth - 1) * 7;
  day = days_from_civil(m == 12 ? y + 1 : y, m == 12 ? 1 : m + 1, 1) - 1;
  fwd = (int)((day % 7 + 7 + 4) % 7);
  return day - (fwd - wd + 7) % 7;
}

/* Whether DST is in force at UTC second t for a zone of standard offset std (minutes). */
static bool in_dst(dst_rule rule, int std, int64_t t) {
  int64_t y, start, end;
  unsigned m, d;
  int64_t local = t + std * 60;
  civil_from_days(floor_div(local, 86400), &y, &m, &d);
  switch (rule) {
  case DST_US: /* 2nd Sunday of March 02:00 standard to 1st Sunday of November 02:00 daylight */
    start = nth_weekday(y, 3, 2, 0) * 86400 + 7200 - std * 60;
    end = nth_weekday(y, 11, 1, 0) * 86400 + 3600 - std * 60;
    return t >= start && t < end;
  case DST_EU: /* last Sunday of March 01:00 UTC to last Sunday of October 01:00 UTC */
    start = nth_weekday(y, 3, 0, 0) * 86400 + 3600;
    end = nth_weekday(y, 10, 0, 0) * 86400 + 3600;
    return t >= start && t < end;
  case DST_AU: /* 1st Sunday of October 02:00 standard to 1st Sunday of April 03:00 daylight */
    start = nth_weekday(y, 10, 1, 0) * 86400 + 7200 - std * 60;
    end = nth_weekday(y, 4, 1, 0) * 86400 + 7200 - std * 60;
    return t < end || t >= start;
  case DST_NZ: /* last Sunday of September 02:00 to 1st Sunday of April 03:00 daylight */
    start = nth_weekday(y, 9, 0, 0) * 86400 + 7200 - std * 60;
    end = nth_weekday(y, 4, 1, 0) * 86400 + 7200 - std * 60;
    return t < end || t >= start;
  default:
    return false;
  }
}

/* The offset in seconds of zone name at UTC second t; false when the zone is unknown. */
static bool zone_offset(const char *name, size_t n, int64_t t, int64_t *off) {
  int h, m;
  size_t at = 0;
  int sign = 1;
  if (n && (name[0] == '+' || name[0] == '-')) sign = name[0] == '-' ? -1 : 1, at = 1;
  if (n - at == 5 && name[at + 2] == ':' && digits(name, n, at, 2, &h) &&
      digits(name, n, at + 3, 2, &m)) {
    *off = sign * (h * 3600 + m * 60);
    return true;
  }
  for (size_t i = 0; i < sizeof zones / sizeof *zones; i++)
    if (strlen(zones[i].name) == n && !memcmp(zones[i].name, name, n)) {
      *off = zones[i].std * 60 + (in_dst(zones[i].rule, zones[i].std, t) ? 3600 : 0);
      return true;
    }
  return false;
}

/* ---- accessors ----------------------------------------------------------------------------- */

typedef enum part {
  P_YEAR,
  P_MONTH,
  P_DOY,
  P_DOM,
  P_DATE,
  P_DOW,
  P_HOURS,
  P_MINUTES,
  P_SECONDS,
  P_MILLIS
} part;

static cel_value ts_part(cel_run *ev, const cel_value *args, uint32_t n, part p) {
  int64_t t = A[0].u.t.sec, off = 0, days, rem, y;
  unsigned m, d;
  if (n == 2 && !zone_offset(A[1].u.s.p, A[1].u.s.n, t, &off))
    return cel__err(ev, "unknown time zone \"%.*s\"", (int)A[1].u.s.n, A[1].u.s.p);
  t += off;
  days = floor_div(t, 86400);
  rem = t - days * 86400;
  civil_from_days(days, &y, &m, &d);
  switch (p) {
  case P_YEAR:
    return cel_int(y);
  case P_MONTH:
    return cel_int((int64_t)m - 1);
  case P_DOY:
    return cel_int(days - days_from_civil(y, 1, 1));
  case P_DOM:
    return cel_int((int64_t)d - 1);
  case P_DATE:
    return cel_int((int64_t)d);
  case P_DOW:
    return cel_int((days % 7 + 7 + 4) % 7);
  case P_HOURS:
    return cel_int(rem / 3600);
  case P_MINUTES:
    return cel_int(rem % 3600 / 60);
  case P_SECONDS:
    return cel_int(rem % 60);
  case P_MILLIS:
    return cel_int(A[0].u.t.nsec / 1000000);
  }
  return cel_int(0);
}

#define TS_ACCESSOR(fname, p)                                                                      \
  static cel_value fname(cel_run *ev, const cel_value *args, uint32_t n) {                         \
    return ts_part(ev, args, n, p);                                                                \
  }
TS_ACCESSOR(get_year, P_YEAR)
TS_ACCESSOR(get_month, P_MONTH)
TS_ACCESSOR(get_doy, P_DOY)
TS_ACCESSOR(get_dom, P_DOM)
TS_ACCESSOR(get_date, P_DATE)
TS_ACCESSOR(get_dow, P_DOW)

static cel_value hms(cel_run *ev, const cel_value *args, uint32_t n, part p) {
  if (A[0].kind == CEL_DURATION) {
    int64_t s = A[0].u.t.sec;
    switch (p) {
    case P_HOURS:
      return cel_int(s / 3600);
    case P_MINUTES:
      return cel_int(s / 60);
    case P_SECONDS:
      return cel_int(s);
    default:
      return cel_int(A[0].u.t.nsec / 1000000);
    }
  }
  return ts_part(ev, args, n, p);
}

#define HMS_ACCESSOR(fname, p)                                                                     \
  static cel_value fname(cel_run *ev, const cel_value *args, uint32_t n) {                         \
    return hms(ev, args, n, p);                                                                    \
  }
HMS_ACCESSOR(get_hours, P_HOURS)
HMS_ACCESSOR(get_minutes, P_MINUTES)
HMS_ACCESSOR(get_seconds, P_SECONDS)
HMS_ACCESSOR(get_millis, P_MILLIS)

#define TS "google.protobuf.Timestamp"
#define DU "google.protobuf.Duration"
#define TZ(name, fn)                                                                               \
  {name, TS ".()->int", fn, 0, 0, {0}, 0}, {                                                       \
    name, TS ".(string)->int", fn, 0, 0, {0}, 0                                                    \
  }

static const cel_overload tab[] = {
    {"timestamp", "(string)->" TS, timestamp_fn, 0, 0, {0}, 0},
    {"timestamp", "(int)->" TS, timestamp_fn, 0, 0, {0}, 0},
    {"timestamp", "(" TS ")->" TS, timestamp_fn, 0, 0, {0}, 0},
    {"duration", "(string)->" DU, duration_fn, 0, 0, {0}, 0},
    {"duration", "(" DU ")->" DU, duration_fn, 0, 0, {0}, 0},
    {"_+_", "(" TS ", " DU ")->" TS, t_add, 0, 0, {0}, 0},
    {"_+_", "(" DU ", " TS ")->" TS, t_add, 0, 0, {0}, 0},
    {"_+_", "(" DU ", " DU ")->" DU, t_add, 0, 0, {0}, 0},
    {"_-_", "(" TS ", " TS ")->" DU, t_sub, 0, 0, {0}, 0},
    {"_-_", "(" TS ", " DU ")->" TS, t_sub, 0, 0, {0}, 0},
    {"_-_", "(" DU ", " DU ")->" DU, t_sub, 0, 0, {0}, 0},
    TZ("getFullYear", get_year),
    TZ("getMonth", get_month),
    TZ("getDayOfYear", get_doy),
    TZ("getDayOfMonth", get_dom),
    TZ("getDate", get_date),
    TZ("getDayOfWeek", get_dow),
    TZ("getHours", get_hours),
    TZ("getMinutes", get_minutes),
    TZ("getSeconds", get_seconds),
    TZ("getMilliseconds", get_millis),
    {"getHours", DU ".()->int", get_hours, 0, 0, {0}, 0},
    {"getMinutes", DU ".()->int", get_minutes, 0, 0, {0}, 0},
    {"getSeconds", DU ".()->int", get_seconds, 0, 0, {0}, 0},
    {"getMilliseconds", DU ".()->int", get_millis, 0, 0, {0}, 0},
};

const cel_overload *cel__time_table(size_t *n) {
  *n = sizeof tab / sizeof *tab;
  return tab;
}
