/* cel/strings.c - cel-go's strings extension at version 2 (the one Kubernetes enables):
 * charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join,
 * strings.quote and format. Indexes count code points, not bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_int.h"

#define A (args)

static cel_value out_of_range(cel_run *ev, int64_t i) {
  return cel__err(ev, "index out of range: %lld", (long long)i);
}

static cel_value char_at(cel_run *ev, const cel_value *args, uint32_t n) {
  size_t len = cel__utf8_len(A[0].u.s.p, A[0].u.s.n);
  const char *p, *q;
  (void)n;
  if (A[1].u.i < 0 || (uint64_t)A[1].u.i > len) return out_of_range(ev, A[1].u.i);
  if ((size_t)A[1].u.i == len) return cel_string("", 0);
  p = cel__utf8_at(A[0].u.s.p, A[0].u.s.n, (size_t)A[1].u.i);
  q = cel__utf8_at(A[0].u.s.p, A[0].u.s.n, (size_t)A[1].u.i + 1);
  return cel_string(p, (size_t)(q - p));
}

/* Code point index of the first (or last) occurrence of needle at or after (before) from. */
static cel_value index_of(cel_run *ev, const cel_value *args, uint32_t n, bool last) {
  const char *h = A[0].u.s.p, *nd = A[1].u.s.p;
  size_t hn = A[0].u.s.n, nn = A[1].u.s.n, len = cel__utf8_len(h, hn);
  int64_t from = n == 3 ? A[2].u.i : (last ? (int64_t)len : 0);
  int64_t best = -1;
  size_t cp = 0;
  cel__charge(ev, (hn + nn) / 10);
  if (from < 0 || (uint64_t)from > len) return out_of_range(ev, from);
  for (size_t i = 0; i <= hn; i++) {
    if (i < hn && ((unsigned char)h[i] & 0xC0) == 0x80) continue;
    if (last ? (int64_t)cp > from : (int64_t)cp < from) {
      cp++;
      continue;
    }
    if (i + nn <= hn && !memcmp(h + i, nd, nn)) {
      best = (int64_t)cp;
      if (!last) break;
    }
    cp++;
  }
  return cel_int(best);
}

static cel_value index_first(cel_run *ev, const cel_value *args, uint32_t n) {
  return index_of(ev, args, n, false);
}

static cel_value index_last(cel_run *ev, const cel_value *args, uint32_t n) {
  return index_of(ev, args, n, true);
}

static cel_value casing(cel_run *ev, const cel_value *args, bool upper) {
  cel_value r = cel__str(ev, A[0].u.s.p, A[0].u.s.n);
  char *p = (char *)r.u.s.p;
  if (r.kind == CEL_ERROR) return r;
  for (size_t i = 0; i < r.u.s.n; i++) {
    if (upper && p[i] >= 'a' && p[i] <= 'z') p[i] = (char)(p[i] - 32);
    if (!upper && p[i] >= 'A' && p[i] <= 'Z') p[i] = (char)(p[i] + 32);
  }
  return r;
}

static cel_value lower(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return casing(ev, args, false);
}

static cel_value upper(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return casing(ev, args, true);
}

static cel_value replace(cel_run *ev, const cel_value *args, uint32_t n) {
  const char *s = A[0].u.s.p, *from = A[1].u.s.p, *to = A[2].u.s.p;
  size_t sn = A[0].u.s.n, fn = A[1].u.s.n, tn = A[2].u.s.n;
  int64_t limit = n == 4 ? A[3].u.i : -1, done = 0;
  ts_buf b;
  cel_value r;
  ts_buf_init(&b, ev->ctx->mem_limit);
  cel__charge(ev, (sn + tn) / 10);
  for (size_t i = 0; i <= sn;) {
    if ((limit < 0 || done < limit) && i + fn <= sn && !memcmp(s + i, from, fn)) {
      ts_buf_append(&b, to, tn);
      done++;
      if (fn) {
        i += fn;
        continue;
      }
      if (i == sn) break;
    } else if (i == sn) {
      break;
    }
    { /* copy one code point */
      size_t k = 1;
      while (i + k < sn && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
      ts_buf_append(&b, s + i, k);
      i += k;
    }
  }
  r = cel__str(ev, b.data ? b.data : "", b.len);
  ts_buf_free(&b);
  return r;
}

static cel_value split(cel_run *ev, const cel_value *args, uint32_t n) {
  const char *s = A[0].u.s.p, *sep = A[1].u.s.p;
  size_t sn = A[0].u.s.n, pn = A[1].u.s.n;
  int64_t limit = n == 3 ? A[2].u.i : -1;
  cel_value parts[1024];
  size_t np = 0, start = 0;
  cel__charge(ev, sn / 10);
  if (limit == 0) return cel__list(ev, NULL, 0);
  if (!pn) { /* every code point */
    for (size_t i = 0; i < sn && np < 1024;) {
      size_t k = 1;
      while (i + k < sn && ((unsigned char)s[i + k] & 0xC0) == 0x80) k++;
      if (limit > 0 && (int64_t)np == limit - 1) k = sn - i;
      parts[np++] = cel_string(s + i, k);
      i += k;
    }
    return cel__list(ev, parts, np);
  }
  for (size_t i = 0; i + pn <= sn && np < 1023;) {
    if ((limit < 0 || (int64_t)np < limit - 1) && !memcmp(s + i, sep, pn)) {
      parts[np++] = cel_string(s + start, i - start);
      i += pn;
      start = i;
    } else {
      i++;
    }
  }
  parts[np++] = cel_string(s + start, sn - start);
  return cel__list(ev, parts, np);
}

static cel_value substring(cel_run *ev, const cel_value *args, uint32_t n) {
  size_t len = cel__utf8_len(A[0].u.s.p, A[0].u.s.n);
  int64_t b = A[1].u.i, e = n == 3 ? A[2].u.i : (int64_t)len;
  const char *p, *q;
  if (b < 0 || (uint64_t)b > len) return out_of_range(ev, b);
  if (e < 0 || (uint64_t)e > len) return out_of_range(ev, e);
  if (b > e)
    return cel__err(ev, "invalid substring range. start: %lld, end: %lld", (long long)b,
                    (long long)e);
  p = cel__utf8_at(A[0].u.s.p, A[0].u.s.n, (size_t)b);
  q = cel__utf8_at(A[0].u.s.p, A[0].u.s.n, (size_t)e);
  return cel_string(p, (size_t)(q - p));
}

/* Decodes the code point at s (valid UTF-8); *len its bytes. */
static uint32_t decode(const unsigned char *s, size_t n, size_t *len) {
  uint32_t c = s[0];
  size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  if (k > n) k = 1;
  if (k == 1) {
    *len = 1;
    return c;
  }
  c &= k == 2 ? 0x1F : k == 3 ? 0x0F : 0x07;
  for (size_t i = 1; i < k; i++) c = c << 6 | (s[i] & 0x3F);
  *len = k;
  return c;
}

/* Unicode White_Space, as Go's unicode.IsSpace. */
static bool space(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

static cel_value trim(cel_run *ev, const cel_value *args, uint32_t n) {
  const unsigned char *s = (const unsigned char *)A[0].u.s.p;
  size_t b = 0, e = A[0].u.s.n, len;
  (void)ev, (void)n;
  while (b < e && space(decode(s + b, e - b, &len))) b += len;
  while (e > b) {
    size_t k = e - 1;
    while (k > b && (s[k] & 0xC0) == 0x80) k--;
    if (!space(decode(s + k, e - k, &len))) break;
    e = k;
  }
  return cel_string((const char *)s + b, e - b);
}

static cel_value join(cel_run *ev, const cel_value *args, uint32_t n) {
  const cel_list *l = A[0].u.l;
  ts_buf b;
  cel_value r;
  ts_buf_init(&b, ev->ctx->mem_limit);
  for (size_t i = 0; i < l->n; i++) {
    if (l->v[i].kind != CEL_STRING) {
      ts_buf_free(&b);
      return cel__no_overload(ev, "join", &l->v[i], 1);
    }
    if (i && n == 2) ts_buf_append(&b, A[1].u.s.p, A[1].u.s.n);
    ts_buf_append(&b, l->v[i].u.s.p, l->v[i].u.s.n);
  }
  cel__charge(ev, b.len / 10);
  r = cel__str(ev, b.data ? b.data : "", b.len);
  ts_buf_free(&b);
  return r;
}

void cel__quote(const char *s, size_t n, ts_buf *out) {
  ts_buf_putc(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '\a':
      ts_buf_puts(out, "\\a");
      break;
    case '\b':
      ts_buf_puts(out, "\\b");
      break;
    case '\f':
      ts_buf_puts(out, "\\f");
      break;
    case '\n':
      ts_buf_puts(out, "\\n");
      break;
    case '\r':
      ts_buf_puts(out, "\\r");
      break;
    case '\t':
      ts_buf_puts(out, "\\t");
      break;
    case '\v':
      ts_buf_puts(out, "\\v");
      break;
    case '\\':
      ts_buf_puts(out, "\\\\");
      break;
    case '"':
      ts_buf_puts(out, "\\\"");
      break;
    default:
      if (c < 0x20 || c == 0x7F)
        ts_buf_printf(out, "\\x%02x", c);
      else
        ts_buf_putc(out, (char)c);
    }
  }
  ts_buf_putc(out, '"');
}

static cel_value quote(cel_run *ev, const cel_value *args, uint32_t n) {
  ts_buf b;
  cel_value r;
  (void)n;
  ts_buf_init(&b, ev->ctx->mem_limit);
  cel__quote(A[0].u.s.p, A[0].u.s.n, &b); /* CEL strings are valid UTF-8 */
  r = cel__str(ev, b.data, b.len);
  ts_buf_free(&b);
  return r;
}

/* ---- format ---------------------------------------------------------------------------------- */

static const char *clause_type(const cel_value *v) {
  return cel_type_name(v);
}

static void fmt_value(const cel_value *v, ts_buf *out, bool top);

static int key_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* %s of a value: strings bare, doubles as Go prints them, lists and maps recursively. */
static void fmt_value(const cel_value *v, ts_buf *out, bool top) {
  (void)top;
  switch (v->kind) {
  case CEL_STRING:
  case CEL_BYTES:
    ts_buf_append(out, v->u.s.p, v->u.s.n);
    break;
  case CEL_DOUBLE:
    if (isnan(v->u.d))
      ts_buf_puts(out, "NaN");
    else if (isinf(v->u.d))
      ts_buf_puts(out, v->u.d > 0 ? "Infinity" : "-Infinity");
    else {
      char b[64];
      for (int p = 1; p <= 17; p++) {
        snprintf(b, sizeof b, "%.*g", p, v->u.d);
        if (strtod(b, NULL) == v->u.d) break;
      }
      ts_buf_puts(out, b);
    }
    break;
  case CEL_LIST:
    ts_buf_putc(out, '[');
    for (size_t i = 0; i < v->u.l->n; i++) {
      if (i) ts_buf_puts(out, ", ");
      fmt_value(&v->u.l->v[i], out, false);
    }
    ts_buf_putc(out, ']');
    break;
  case CEL_MAP: {
    size_t n = v->u.m->ops ? 0 : v->u.m->n;
    char **items = ts_calloc(n + 1, sizeof *items);
    ts_buf_putc(out, '{');
    for (size_t i = 0; items && i < n; i++) {
      ts_buf e;
      ts_buf_init(&e, 1 << 20);
      fmt_value(&v->u.m->k[i], &e, false);
      ts_buf_puts(&e, ": ");
      fmt_value(&v->u.m->v[i], &e, false);
      ts_buf_putc(&e, '\0');
      items[i] = e.data;
    }
    if (items) qsort(items, n, sizeof *items, key_cmp);
    for (size_t i = 0; items && i < n; i++) {
      if (i) ts_buf_puts(out, ", ");
      ts_buf_puts(out, items[i] ? items[i] : "");
      ts_free(items[i]);
    }
    ts_free(items);
    ts_buf_putc(out, '}');
    break;
  }
  case CEL_TIMESTAMP:
    cel__format_timestamp(v->u.t.sec, v->u.t.nsec, out);
    break;
  case CEL_DURATION:
    cel__format_duration(v->u.t.sec, v->u.t.nsec, out);
    break;
  case CEL_UINT:
    ts_buf_printf(out, "%llu", (unsigned long long)v->u.u);
    break;
  default:
    cel_value_format(v, out);
  }
}

static bool integral(const cel_value *v) {
  return v->kind == CEL_INT || v->kind == CEL_UINT;
}

static void radix(uint64_t u, bool negative, int base, bool up, ts_buf *out) {
  char b[80];
  int i = 79;
  const char *digits = up ? "0123456789ABCDEF" : "0123456789abcdef";
  b[i] = '\0';
  do {
    b[--i] = digits[u % (uint64_t)base];
    u /= (uint64_t)base;
  } while (u);
  if (negative) b[--i] = '-';
  ts_buf_puts(out, b + i);
}

/* One clause (verb with optional precision) applied to v; NULL or an error text. */
static const char *clause(char verb, int prec, const cel_value *v, ts_buf *out, char *msg,
                          size_t cap) {
  switch (verb) {
  case 's':
    fmt_value(v, out, true);
    return NULL;
  case 'd':
    if (v->kind == CEL_DOUBLE && (isnan(v->u.d) || isinf(v->u.d))) {
      fmt_value(v, out, true);
      return NULL;
    }
    if (!integral(v)) {
      snprintf(msg, cap,
               "error during formatting: decimal clause can only be used on integers, was given %s",
               clause_type(v));
      return msg;
    }
    if (v->kind == CEL_INT)
      radix(v->u.i < 0 ? 0 - (uint64_t)v->u.i : (uint64_t)v->u.i, v->u.i < 0, 10, false, out);
    else
      radix(v->u.u, false, 10, false, out);
    return NULL;
  case 'f':
  case 'e': {
    double d;
    char b[400];
    if (v->kind == CEL_DOUBLE)
      d = v->u.d;
    else if (v->kind == CEL_INT)
      d = (double)v->u.i;
    else if (v->kind == CEL_UINT)
      d = (double)v->u.u;
    else {
      snprintf(msg, cap,
               "error during formatting: %s clause can only be used on doubles, was given %s",
               verb == 'f' ? "fixed-point" : "scientific", clause_type(v));
      return msg;
    }
    if (isnan(d) || isinf(d)) {
      fmt_value(&(cel_value){.kind = CEL_DOUBLE, .u.d = d}, out, true);
      return NULL;
    }
    snprintf(b, sizeof b, verb == 'f' ? "%.*f" : "%.*e", prec < 0 ? 6 : prec, d);
    ts_buf_puts(out, b);
    return NULL;
  }
  case 'b':
    if (v->kind == CEL_BOOL) {
      ts_buf_putc(out, v->u.b ? '1' : '0');
      return NULL;
    }
    if (!integral(v)) {
      snprintf(msg, cap,
               "error during formatting: only integers and bools can be formatted as binary, was "
               "given %s",
               clause_type(v));
      return msg;
    }
    if (v->kind == CEL_INT)
      radix(v->u.i < 0 ? 0 - (uint64_t)v->u.i : (uint64_t)v->u.i, v->u.i < 0, 2, false, out);
    else
      radix(v->u.u, false, 2, false, out);
    return NULL;
  case 'o':
    if (!integral(v)) {
      snprintf(msg, cap,
               "error during formatting: octal clause can only be used on integers, was given %s",
               clause_type(v));
      return msg;
    }
    if (v->kind == CEL_INT)
      radix(v->u.i < 0 ? 0 - (uint64_t)v->u.i : (uint64_t)v->u.i, v->u.i < 0, 8, false, out);
    else
      radix(v->u.u, false, 8, false, out);
    return NULL;
  case 'x':
  case 'X':
    if (v->kind == CEL_STRING || v->kind == CEL_BYTES) {
      for (size_t i = 0; i < v->u.s.n; i++)
        ts_buf_printf(out, verb == 'x' ? "%02x" : "%02X", (unsigned char)v->u.s.p[i]);
      return NULL;
    }
    if (!integral(v)) {
      snprintf(msg, cap,
               "error during formatting: only integers, byte buffers, and strings can be formatted "
               "as hex, was given %s",
               clause_type(v));
      return msg;
    }
    if (v->kind == CEL_INT)
      radix(v->u.i < 0 ? 0 - (uint64_t)v->u.i : (uint64_t)v->u.i, v->u.i < 0, 16, verb == 'X', out);
    else
      radix(v->u.u, false, 16, verb == 'X', out);
    return NULL;
  default:
    snprintf(msg, cap, "could not parse formatting clause: unrecognized formatting clause \"%c\"",
             verb);
    return msg;
  }
}

cel_value cel__format(cel_run *ev, const char *f, size_t n, const cel_list *args) {
  ts_buf b;
  size_t argi = 0;
  char msg[300];
  cel_value r;
  ts_buf_init(&b, ev->ctx->mem_limit);
  for (size_t i = 0; i < n; i++) {
    int prec = -1;
    const char *e;
    if (f[i] != '%') {
      ts_buf_putc(&b, f[i]);
      continue;
    }
    if (++i >= n) {
      ts_buf_free(&b);
      return cel__err(ev, "could not parse formatting clause: unexpected end of string");
    }
    if (f[i] == '%') {
      ts_buf_putc(&b, '%');
      continue;
    }
    if (f[i] == '.') {
      prec = 0;
      i++;
      while (i < n && f[i] >= '0' && f[i] <= '9' && prec < 1000) prec = prec * 10 + (f[i++] - '0');
      if (i >= n) {
        ts_buf_free(&b);
        return cel__err(ev, "could not parse formatting clause: unexpected end of string");
      }
    }
    if (argi >= args->n) {
      ts_buf_free(&b);
      return cel__err(ev, "index %zu out of range", argi);
    }
    if ((e = clause(f[i], prec, &args->v[argi++], &b, msg, sizeof msg))) {
      ts_buf_free(&b);
      return cel__err(ev, "%s", e);
    }
  }
  cel__charge(ev, b.len / 10);
  r = cel__str(ev, b.data ? b.data : "", b.len);
  ts_buf_free(&b);
  return r;
}

static cel_value format(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return cel__format(ev, A[0].u.s.p, A[0].u.s.n, A[1].u.l);
}

static const cel_overload tab[] = {
    {"charAt", "string.(int)->string", char_at, 0, 0, {0}, 0},
    {"indexOf", "string.(string)->int", index_first, 0, 0, {0}, 0},
    {"indexOf", "string.(string, int)->int", index_first, 0, 0, {0}, 0},
    {"lastIndexOf", "string.(string)->int", index_last, 0, 0, {0}, 0},
    {"lastIndexOf", "string.(string, int)->int", index_last, 0, 0, {0}, 0},
    {"lowerAscii", "string.()->string", lower, 0, 0, {0}, 0},
    {"upperAscii", "string.()->string", upper, 0, 0, {0}, 0},
    {"replace", "string.(string, string)->string", replace, 0, 0, {0}, 0},
    {"replace", "string.(string, string, int)->string", replace, 0, 0, {0}, 0},
    {"split", "string.(string)->list(string)", split, 0, 0, {0}, 0},
    {"split", "string.(string, int)->list(string)", split, 0, 0, {0}, 0},
    {"substring", "string.(int)->string", substring, 0, 0, {0}, 0},
    {"substring", "string.(int, int)->string", substring, 0, 0, {0}, 0},
    {"trim", "string.()->string", trim, 0, 0, {0}, 0},
    {"join", "list(string).()->string", join, 0, 0, {0}, 0},
    {"join", "list(string).(string)->string", join, 0, 0, {0}, 0},
    {"strings.quote", "(string)->string", quote, 0, 0, {0}, 0},
    {"format", "string.(list(dyn))->string", format, 0, 0, {0}, 0},
};

const cel_overload *cel__strings_table(size_t *n) {
  *n = sizeof tab / sizeof *tab;
  return tab;
}
