/* common/quantity.c - Kubernetes resource quantities: exact parse, arithmetic and the canonical
 * text kubectl prints. Values are mantissa x 10^scale with an int64 mantissa; intermediate
 * results use 128-bit integers so that every operation is exact or reports overflow. */
#include "ts.h"

#include <string.h>

typedef __int128 i128;
typedef unsigned __int128 u128;

#define NANO_SCALE (-9)
#define EXP_MAX    100000 /* bound on a decimal exponent written in the input */
#define SCALE_MAX                                                                                  \
  10000 /* bound on a parsed value's power of ten, so that every value                             \
           prints in a form that parses back */
#define QUANTITY_RE "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"

static const u128 U128_MAX = ~(u128)0;

/* 10^n as u128 for 0 <= n <= 38; 0 when it does not fit. */
static u128 pow10_u128(int n) {
  u128 p = 1;
  if (n < 0 || n > 38) return 0;
  while (n--) p *= 10;
  return p;
}

static int digits_u128(u128 v) {
  int d = 1;
  while (v >= 10) v /= 10, d++;
  return d;
}

/* Strips trailing zeros into the scale; zero becomes 0 x 10^0. */
static void normalize(i128 *m, int64_t *scale) {
  if (*m == 0) {
    *scale = 0;
    return;
  }
  while (*m % 10 == 0) *m /= 10, (*scale)++;
}

/* Stores m x 10^scale into q when it fits; TS_EOVERFLOW otherwise. */
static ts_rc store(i128 m, int64_t scale, ts_qformat format, ts_quantity *q) {
  normalize(&m, &scale);
  if (m > INT64_MAX || m < -(i128)INT64_MAX || scale > INT32_MAX || scale < INT32_MIN)
    return TS_EOVERFLOW;
  q->mant = (int64_t)m;
  q->scale = (int32_t)scale;
  q->format = format;
  return TS_OK;
}

/* Decimal suffixes and their exponents; "" must stay last so that lookups of it work. */
static const struct {
  const char *s;
  int exp;
} dec_suffixes[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},  {"M", 6},
                    {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}, {"", 0}};
static const char *const bin_suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

/* Reads the suffix: sets *base (10 or 2), *exp (power of 10, or of 1024), *format. */
static bool parse_suffix(const char *s, size_t n, int *base, int64_t *exp, ts_qformat *format) {
  size_t i;
  for (i = 0; i < sizeof dec_suffixes / sizeof dec_suffixes[0]; i++) {
    if (strlen(dec_suffixes[i].s) == n && memcmp(s, dec_suffixes[i].s, n) == 0) {
      *base = 10, *exp = dec_suffixes[i].exp, *format = TS_QFMT_DECIMAL_SI;
      return true;
    }
  }
  for (i = 1; i < 7; i++) {
    if (n == 2 && memcmp(s, bin_suffixes[i], 2) == 0) {
      *base = 2, *exp = (int64_t)i, *format = TS_QFMT_BINARY_SI;
      return true;
    }
  }
  if (n >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    bool neg = false;
    int64_t e = 0;
    i = 1;
    if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';
    if (i == n) return false;
    for (; i < n; i++) {
      if (s[i] < '0' || s[i] > '9') return false;
      e = e * 10 + (s[i] - '0');
      if (e > EXP_MAX) return false;
    }
    *base = 10, *exp = neg ? -e : e, *format = TS_QFMT_DECIMAL_EXP;
    return true;
  }
  return false;
}

/* Appends digit d after `zeros` pending zero digits: m = m * 10^(zeros+1) + d. */
static bool push_digit(u128 *m, int *zeros, int d) {
  u128 p = pow10_u128(*zeros + 1);
  if (!p || *m > (U128_MAX - (u128)d) / p) return false;
  *m = *m * p + (u128)d;
  *zeros = 0;
  return true;
}

/* Reads [+-]digits[.digits] into m x 10^scale; returns the number of bytes used, 0 on error,
 * and sets *too_big when the digits do not fit in 128 bits. */
static size_t parse_number(const char *s, size_t n, bool *neg, u128 *m, int64_t *scale,
                           bool *too_big) {
  size_t i = 0;
  int zeros = 0, ndigits = 0;
  int64_t frac = 0;
  bool dot = false;
  *neg = false, *m = 0, *too_big = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) *neg = s[i++] == '-';
  for (; i < n; i++) {
    if (s[i] == '.' && !dot) {
      dot = true;
      continue;
    }
    if (s[i] < '0' || s[i] > '9') break;
    ndigits++;
    if (dot) frac++;
    if (s[i] == '0') {
      zeros++;
    } else if (!push_digit(m, &zeros, s[i] - '0')) {
      *too_big = true;
      return 0;
    }
  }
  if (!ndigits) return 0;
  *scale = (int64_t)zeros - frac;
  if (*m == 0) *scale = 0;
  return i;
}

/* Multiplies by 1024^k; false on overflow. */
static bool mul_pow1024(u128 *m, int64_t k) {
  while (k-- > 0) {
    if (*m > U128_MAX / 1024) return false;
    *m *= 1024;
  }
  return true;
}

/* Rounds m x 10^scale up (away from zero) to nano precision. */
static void round_nano(u128 *m, int64_t *scale) {
  int64_t drop;
  u128 p;
  if (*scale >= NANO_SCALE || *m == 0) return;
  drop = NANO_SCALE - *scale;
  p = pow10_u128(drop > 38 ? 39 : (int)drop);
  if (!p) {
    *m = 1; /* the divisor exceeds any 128-bit mantissa: the value rounds up to 1n */
  } else {
    *m = *m / p + (*m % p != 0);
  }
  *scale = NANO_SCALE;
}

/* True when |m x 10^scale| > INT64_MAX. */
static bool exceeds_int64(u128 m, int64_t scale) {
  if (m == 0) return false;
  if (scale < 0) {
    u128 p = pow10_u128(-scale > 38 ? 39 : (int)-scale);
    return p && m / p > (u128)INT64_MAX;
  }
  if (digits_u128(m) + scale > 19) return true;
  return m * pow10_u128((int)scale) > (u128)INT64_MAX;
}

ts_rc ts_quantity_parse_n(const char *s, size_t len, ts_quantity *out, ts_err *err) {
  bool neg, too_big;
  u128 m;
  int64_t scale, exp;
  int base;
  ts_qformat format;
  size_t used = parse_number(s, len, &neg, &m, &scale, &too_big);
  if (too_big) return ts_err_set(err, TS_EOVERFLOW, "quantity \"%.*s\" is too large", (int)len, s);
  if (!used)
    return ts_err_set(err, TS_EINVAL, "quantity \"%.*s\" must match the regular expression '%s'",
                      (int)len, s, QUANTITY_RE);
  if (!parse_suffix(s + used, len - used, &base, &exp, &format))
    return ts_err_set(err, TS_EINVAL, "quantity \"%.*s\": unable to parse the suffix \"%.*s\"",
                      (int)len, s, (int)(len - used), s + used);
  if (base == 10 && m) scale += exp;
  if (base == 2 && !mul_pow1024(&m, exp))
    return ts_err_set(err, TS_EOVERFLOW, "quantity \"%.*s\" is too large", (int)len, s);
  round_nano(&m, &scale);
  if (m && scale > SCALE_MAX)
    return ts_err_set(err, TS_EOVERFLOW, "quantity \"%.*s\" is too large", (int)len, s);
  if (format == TS_QFMT_BINARY_SI && exceeds_int64(m, scale)) {
    m = (u128)INT64_MAX; /* Kubernetes caps binary quantities at 2^63-1 */
    scale = 0;
  }
  if (format == TS_QFMT_BINARY_SI && m && (scale < 0 && m < pow10_u128((int)-scale)))
    format = TS_QFMT_DECIMAL_SI; /* 0 < |v| < 1: printed as decimal, as upstream */
  if (m > (U128_MAX >> 1))       /* does not even fit a signed 128-bit mantissa */
    return ts_err_set(err, TS_EOVERFLOW, "quantity \"%.*s\" is too large", (int)len, s);
  if (store(neg ? -(i128)m : (i128)m, scale, format, out) != TS_OK)
    return ts_err_set(err, TS_EOVERFLOW, "quantity \"%.*s\" has too many digits", (int)len, s);
  return TS_OK;
}

ts_rc ts_quantity_parse(const char *s, ts_quantity *out, ts_err *err) {
  return ts_quantity_parse_n(s, strlen(s), out, err);
}

ts_quantity ts_quantity_from_int(int64_t v, ts_qformat format) {
  ts_quantity q;
  i128 m = v;
  int64_t scale = 0;
  normalize(&m, &scale);
  q.mant = (int64_t)m, q.scale = (int32_t)scale, q.format = format;
  return q;
}

ts_quantity ts_quantity_from_milli(int64_t milli, ts_qformat format) {
  ts_quantity q;
  i128 m = milli;
  int64_t scale = -3;
  normalize(&m, &scale);
  q.mant = (int64_t)m, q.scale = (int32_t)scale, q.format = format;
  return q;
}

int ts_quantity_sign(const ts_quantity *q) {
  return (q->mant > 0) - (q->mant < 0);
}

bool ts_quantity_is_zero(const ts_quantity *q) {
  return q->mant == 0;
}

int ts_quantity_cmp(const ts_quantity *a, const ts_quantity *b) {
  int sa = ts_quantity_sign(a), sb = ts_quantity_sign(b);
  u128 ma, mb;
  int64_t oa, ob;
  int mag;
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  ma = (u128)(a->mant < 0 ? -(i128)a->mant : a->mant);
  mb = (u128)(b->mant < 0 ? -(i128)b->mant : b->mant);
  if (a->scale - b->scale <= 18 && b->scale - a->scale <= 18) {
    /* Fast path (no division): bring both to the smaller scale; |mant| < 2^63 and
     * 10^18 < 2^60, so the products fit in 128 bits. */
    if (a->scale > b->scale) ma *= pow10_u128(a->scale - b->scale);
    if (b->scale > a->scale) mb *= pow10_u128(b->scale - a->scale);
    mag = (ma > mb) - (ma < mb);
    return sa > 0 ? mag : -mag;
  }
  /* Order of magnitude first; when equal, the scales differ by at most 18. */
  oa = digits_u128(ma) + (int64_t)a->scale;
  ob = digits_u128(mb) + (int64_t)b->scale;
  if (oa != ob) {
    mag = oa < ob ? -1 : 1;
  } else {
    if (a->scale > b->scale) ma *= pow10_u128(a->scale - b->scale);
    if (b->scale > a->scale) mb *= pow10_u128(b->scale - a->scale);
    mag = (ma > mb) - (ma < mb);
  }
  return sa > 0 ? mag : -mag;
}

/* Brings a and b to the smaller scale; false when that does not fit in 128 bits. */
static bool align(const ts_quantity *a, const ts_quantity *b, i128 *ma, i128 *mb, int64_t *scale) {
  int64_t s = a->scale < b->scale ? a->scale : b->scale;
  u128 pa = pow10_u128((int)((int64_t)a->scale - s)), pb = pow10_u128((int)((int64_t)b->scale - s));
  if (!pa || !pb) return false;
  if (pa > (u128)1 << 62 || pb > (u128)1 << 62) return false; /* |mant| < 2^63: keep < 2^125 */
  *ma = (i128)a->mant * (i128)pa;
  *mb = (i128)b->mant * (i128)pb;
  *scale = s;
  return true;
}

ts_rc ts_quantity_add(const ts_quantity *a, const ts_quantity *b, ts_quantity *out) {
  i128 ma, mb;
  int64_t scale;
  if (b->mant == 0) return *out = *a, TS_OK;
  if (a->mant == 0) return store(b->mant, b->scale, a->format, out);
  if (!align(a, b, &ma, &mb, &scale)) return TS_EOVERFLOW;
  return store(ma + mb, scale, a->format, out);
}

ts_rc ts_quantity_sub(const ts_quantity *a, const ts_quantity *b, ts_quantity *out) {
  ts_quantity nb = *b;
  nb.mant = -nb.mant;
  return ts_quantity_add(a, &nb, out);
}

ts_rc ts_quantity_mul_int(const ts_quantity *a, int64_t k, ts_quantity *out) {
  return store((i128)a->mant * k, a->scale, a->format, out);
}

/* Value x 10^shift rounded away from zero, into int64. */
static ts_rc scaled_value(const ts_quantity *q, int shift, int64_t *out) {
  i128 m = q->mant;
  int64_t s = (int64_t)q->scale + shift;
  if (m == 0) return *out = 0, TS_OK;
  if (s >= 0) {
    u128 p = pow10_u128(s > 38 ? 39 : (int)s);
    if (!p || s > 19) return TS_EOVERFLOW;
    m *= (i128)p;
  } else {
    u128 p = pow10_u128(-s > 38 ? 39 : (int)-s);
    i128 r;
    if (!p) return *out = m > 0 ? 1 : -1, TS_OK;
    r = m % (i128)p;
    m /= (i128)p;
    if (r) m += m >= 0 && r > 0 ? 1 : -1;
  }
  if (m > INT64_MAX || m < INT64_MIN) return TS_EOVERFLOW;
  *out = (int64_t)m;
  return TS_OK;
}

ts_rc ts_quantity_value(const ts_quantity *q, int64_t *out) {
  return scaled_value(q, 0, out);
}

ts_rc ts_quantity_milli(const ts_quantity *q, int64_t *out) {
  return scaled_value(q, 3, out);
}

bool ts_quantity_is_integer(const ts_quantity *q) {
  return q->scale >= 0 || q->mant == 0;
}

double ts_quantity_approx(const ts_quantity *q) {
  double v = (double)q->mant;
  int s = q->scale;
  for (; s > 0; s--) v *= 10;
  for (; s < 0; s++) v /= 10;
  return v;
}

/* Writes a signed 128-bit integer in decimal. */
static size_t put_i128(char *out, i128 v) {
  char tmp[48];
  size_t n = 0, len = 0;
  u128 u = v < 0 ? (u128)(-v) : (u128)v;
  do tmp[n++] = (char)('0' + (int)(u % 10)), u /= 10;
  while (u);
  if (v < 0) out[len++] = '-';
  while (n) out[len++] = tmp[--n];
  out[len] = '\0';
  return len;
}

/* Base-10 canonical form: the exponent is a multiple of 3 and the number an integer. */
static void format_decimal(const ts_quantity *q, char *out) {
  i128 m = q->mant;
  int64_t exp = q->scale;
  int64_t r = exp % 3;
  size_t n;
  size_t i;
  if (r == 1 || r == -2) m *= 10, exp -= 1;
  if (r == 2 || r == -1) m *= 100, exp -= 2;
  n = put_i128(out, m);
  if (q->format == TS_QFMT_DECIMAL_SI) {
    for (i = 0; i < sizeof dec_suffixes / sizeof dec_suffixes[0]; i++) {
      if (dec_suffixes[i].exp == exp) {
        ts_strlcpy(out + n, dec_suffixes[i].s, TS_QUANTITY_STR_MAX - n);
        return;
      }
    }
  }
  /* DecimalExponent, or a decimal exponent beyond E (upstream would print no suffix at all,
   * which changes the value; we print the exponent instead). */
  if (exp != 0) {
    char e[24];
    e[0] = 'e';
    put_i128(e + 1, exp);
    ts_strlcpy(out + n, e, TS_QUANTITY_STR_MAX - n);
  }
}

void ts_quantity_format(const ts_quantity *q, char *out) {
  ts_qformat format = q->format;
  int64_t v;
  int k = 0;
  if (q->mant == 0) {
    ts_strlcpy(out, "0", TS_QUANTITY_STR_MAX);
    return;
  }
  if (format == TS_QFMT_BINARY_SI) {
    ts_quantity lo = ts_quantity_from_int(-1024, format), hi = ts_quantity_from_int(1024, format);
    if ((ts_quantity_cmp(q, &lo) > 0 && ts_quantity_cmp(q, &hi) < 0) ||
        !ts_quantity_is_integer(q) || ts_quantity_value(q, &v) != TS_OK)
      format = TS_QFMT_DECIMAL_SI;
  }
  if (format != TS_QFMT_BINARY_SI) {
    ts_quantity d = *q;
    d.format = format;
    format_decimal(&d, out);
    return;
  }
  while (v % 1024 == 0 && k < 6) v /= 1024, k++;
  ts_strlcpy(out + put_i128(out, v), bin_suffixes[k], 4);
}

ts_quantity ts_quantity_add_sat(const ts_quantity *a, const ts_quantity *b) {
  ts_quantity out, x = *a, y = *b;
  /* Each step drops the last digit of the operand with the finer scale (or of both): at one
   * scale two mantissas below 2^63 sum below 2^64, so a few steps always suffice. */
  while (ts_quantity_add(&x, &y, &out) != TS_OK) {
    ts_quantity *fine = x.scale < y.scale ? &x : &y;
    if (x.scale == y.scale) x.mant /= 10, x.scale++;
    fine->mant /= 10, fine->scale++;
  }
  return out;
}

ts_quantity ts_quantity_sub0(const ts_quantity *a, const ts_quantity *b) {
  ts_quantity out;
  if (ts_quantity_cmp(a, b) <= 0 || ts_quantity_sub(a, b, &out) != TS_OK)
    return ts_quantity_from_int(0, TS_QFMT_DECIMAL_SI);
  return out;
}
