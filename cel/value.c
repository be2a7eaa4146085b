/* cel/value.c - values: constructors, equality and ordering as CEL defines them, map lookup,
 * text form, UTF-8 helpers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_int.h"

cel_value cel_null(void) {
  cel_value v;
  memset(&v, 0, sizeof v);
  v.kind = CEL_NULL;
  return v;
}

cel_value cel_bool(bool b) {
  cel_value v = cel_null();
  v.kind = CEL_BOOL, v.u.b = b;
  return v;
}

cel_value cel_int(int64_t i) {
  cel_value v = cel_null();
  v.kind = CEL_INT, v.u.i = i;
  return v;
}

cel_value cel_uint(uint64_t u) {
  cel_value v = cel_null();
  v.kind = CEL_UINT, v.u.u = u;
  return v;
}

cel_value cel_double(double d) {
  cel_value v = cel_null();
  v.kind = CEL_DOUBLE, v.u.d = d;
  return v;
}

cel_value cel_string(const char *s, size_t n) {
  cel_value v = cel_null();
  v.kind = CEL_STRING, v.u.s.p = s ? s : "", v.u.s.n = n;
  return v;
}

cel_value cel_bytes(const char *s, size_t n) {
  cel_value v = cel_string(s, n);
  v.kind = CEL_BYTES;
  return v;
}

cel_value cel_list_value(const cel_list *l) {
  cel_value v = cel_null();
  v.kind = CEL_LIST, v.u.l = l;
  return v;
}

cel_value cel_map_value(const cel_map *m) {
  cel_value v = cel_null();
  v.kind = CEL_MAP, v.u.m = m;
  return v;
}

/* ---- UTF-8 ---------------------------------------------------------------------------------- */

static size_t seq_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t k;
  uint32_t cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    k = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF)
    k = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4)
    k = 4, cp = c & 0x07;
  else
    return 0;
  if (n < k) return 0;
  for (size_t i = 1; i < k; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3F);
  }
  if ((k == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
      (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return k;
}

bool cel__utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t k = seq_len(p + i, n - i);
    if (!k) return false;
    i += k;
  }
  return true;
}

size_t cel__utf8_len(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
  return c;
}

const char *cel__utf8_at(const char *s, size_t n, size_t idx) {
  size_t c = 0, i = 0;
  for (; i < n; i++) {
    if (((unsigned char)s[i] & 0xC0) == 0x80) continue;
    if (c++ == idx) return s + i;
  }
  return s + n;
}

/* ---- errors and memory ------------------------------------------------------------------------
 */

void *cel__alloc(cel_run *ev, size_t n) {
  void *p;
  if (ev->limit_hit) return NULL;
  if (ev->ctx->arena.used + n > ev->ctx->mem_limit) {
    ev->limit_hit = true;
    return NULL;
  }
  p = ts_arena_alloc(&ev->ctx->arena, n ? n : 1);
  if (!p) ev->limit_hit = true;
  return p;
}

cel_value cel__err(cel_run *ev, const char *fmt, ...) {
  char buf[600];
  va_list ap;
  cel_value v = cel_null();
  char *p;
  size_t n;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  n = strlen(buf);
  p = ts_arena_alloc(&ev->ctx->arena, n + 1); /* errors are made even over the memory cap */
  v.kind = CEL_ERROR;
  v.u.s.p = p ? memcpy(p, buf, n + 1) : "out of memory";
  v.u.s.n = p ? n : strlen("out of memory");
  return v;
}

bool cel__charge(cel_run *ev, uint64_t c) {
  ev->ctx->cost += c;
  if (ev->ctx->cost_limit && ev->ctx->cost > ev->ctx->cost_limit) {
    ev->limit_hit = true;
    return false;
  }
  return true;
}

cel_value cel__no_overload(cel_run *ev, const char *fn, const cel_value *args, uint32_t n) {
  char types[300];
  size_t at = 0;
  types[0] = '\0';
  for (uint32_t i = 0; i < n && at < sizeof types - 40; i++)
    at += (size_t)snprintf(types + at, sizeof types - at, "%s%s", i ? ", " : "",
                           cel_type_name(&args[i]));
  return cel__err(ev, "no such overload: %s(%s)", fn, types);
}

cel_value cel__str(cel_run *ev, const char *s, size_t n) {
  char *p = cel__alloc(ev, n + 1);
  if (!p) return cel__err(ev, "memory limit exceeded");
  if (n) memcpy(p, s, n);
  p[n] = '\0';
  return cel_string(p, n);
}

cel_value cel__list(cel_run *ev, const cel_value *v, size_t n) {
  cel_list *l = cel__alloc(ev, sizeof *l);
  cel_value *e = cel__alloc(ev, (n ? n : 1) * sizeof *e);
  if (!l || !e) return cel__err(ev, "memory limit exceeded");
  if (n) memcpy(e, v, n * sizeof *e);
  l->v = e, l->n = n;
  return cel_list_value(l);
}

/* ---- equality and ordering ----------------------------------------------------------------- */

static bool is_num(cel_kind k) {
  return k == CEL_INT || k == CEL_UINT || k == CEL_DOUBLE;
}

/* Compares two numbers of any numeric kinds exactly; NaN is unordered (*ok false). */
static int num_cmp(const cel_value *a, const cel_value *b, bool *ok) {
  *ok = true;
  if (a->kind == b->kind) {
    switch (a->kind) {
    case CEL_INT:
      return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    case CEL_UINT:
      return (a->u.u > b->u.u) - (a->u.u < b->u.u);
    default:
      if (isnan(a->u.d) || isnan(b->u.d)) {
        *ok = false;
        return 0;
      }
      return (a->u.d > b->u.d) - (a->u.d < b->u.d);
    }
  }
  if (a->kind == CEL_DOUBLE || b->kind == CEL_DOUBLE) { /* as cel-go: the integer as a double */
    double x = a->kind == CEL_DOUBLE ? a->u.d
               : a->kind == CEL_INT  ? (double)a->u.i
                                     : (double)a->u.u;
    double y = b->kind == CEL_DOUBLE ? b->u.d
               : b->kind == CEL_INT  ? (double)b->u.i
                                     : (double)b->u.u;
    if (isnan(x) || isnan(y)) {
      *ok = false;
      return 0;
    }
    return (x > y) - (x < y);
  }
  if (a->kind == CEL_INT) /* int vs uint */
    return a->u.i < 0 ? -1 : ((uint64_t)a->u.i > b->u.u) - ((uint64_t)a->u.i < b->u.u);
  return b->u.i < 0 ? 1 : (a->u.u > (uint64_t)b->u.i) - (a->u.u < (uint64_t)b->u.i);
}

static int bytes_cmp(const cel_value *a, const cel_value *b) {
  size_t n = a->u.s.n < b->u.s.n ? a->u.s.n : b->u.s.n;
  int c = n ? memcmp(a->u.s.p, b->u.s.p, n) : 0;
  if (c) return c < 0 ? -1 : 1;
  return (a->u.s.n > b->u.s.n) - (a->u.s.n < b->u.s.n);
}

static int semver_cmp(const cel_semver *a, const cel_semver *b) {
  if (a->major != b->major) return a->major < b->major ? -1 : 1;
  if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
  if (a->patch != b->patch) return a->patch < b->patch ? -1 : 1;
  if (!a->npre || !b->npre) /* a release ranks above its pre-releases */
    return !a->npre && !b->npre ? 0 : !a->npre ? 1 : -1;
  { /* pre-release identifiers, dot by dot */
    const char *p = a->pre, *q = b->pre, *pe = a->pre + a->npre, *qe = b->pre + b->npre;
    while (p < pe && q < qe) {
      const char *pd = memchr(p, '.', (size_t)(pe - p)), *qd = memchr(q, '.', (size_t)(qe - q));
      size_t pn, qn;
      bool pnum = true, qnum = true;
      if (!pd) pd = pe;
      if (!qd) qd = qe;
      pn = (size_t)(pd - p), qn = (size_t)(qd - q);
      for (size_t i = 0; i < pn; i++) pnum &= p[i] >= '0' && p[i] <= '9';
      for (size_t i = 0; i < qn; i++) qnum &= q[i] >= '0' && q[i] <= '9';
      if (pnum && qnum) {
        if (pn != qn) return pn < qn ? -1 : 1;
      } else if (pnum != qnum) {
        return pnum ? -1 : 1;
      }
      {
        size_t n = pn < qn ? pn : qn;
        int c = memcmp(p, q, n);
        if (c) return c < 0 ? -1 : 1;
        if (pn != qn) return pn < qn ? -1 : 1;
      }
      p = pd + (pd < pe), q = qd + (qd < qe);
      if (pd == pe) p = pe;
      if (qd == qe) q = qe;
    }
    return (p < pe) - (q < qe);
  }
}

int cel__semver_cmp(const cel_semver *a, const cel_semver *b) {
  return semver_cmp(a, b);
}

int cel__compare(const cel_value *a, const cel_value *b, bool *ok) {
  *ok = true;
  if (is_num(a->kind) && is_num(b->kind)) return num_cmp(a, b, ok);
  if (a->kind != b->kind) {
    *ok = false;
    return 0;
  }
  switch (a->kind) {
  case CEL_BOOL:
    return (a->u.b > b->u.b) - (a->u.b < b->u.b);
  case CEL_STRING:
  case CEL_BYTES:
    return bytes_cmp(a, b);
  case CEL_DURATION:
  case CEL_TIMESTAMP:
    if (a->u.t.sec != b->u.t.sec) return a->u.t.sec < b->u.t.sec ? -1 : 1;
    return (a->u.t.nsec > b->u.t.nsec) - (a->u.t.nsec < b->u.t.nsec);
  case CEL_QUANTITY:
    return ts_quantity_cmp(a->u.q, b->u.q);
  case CEL_SEMVER:
    return semver_cmp(a->u.v, b->u.v);
  default:
    *ok = false;
    return 0;
  }
}

bool cel__equal(const cel_value *a, const cel_value *b) {
  bool ok;
  if (is_num(a->kind) && is_num(b->kind)) return num_cmp(a, b, &ok) == 0 && ok;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case CEL_NULL:
    return true;
  case CEL_BOOL:
    return a->u.b == b->u.b;
  case CEL_STRING:
  case CEL_BYTES:
    return a->u.s.n == b->u.s.n && !memcmp(a->u.s.p, b->u.s.p, a->u.s.n);
  case CEL_TYPE:
    return a->u.type == b->u.type;
  case CEL_DURATION:
  case CEL_TIMESTAMP:
    return a->u.t.sec == b->u.t.sec && a->u.t.nsec == b->u.t.nsec;
  case CEL_QUANTITY:
    return ts_quantity_cmp(a->u.q, b->u.q) == 0;
  case CEL_SEMVER:
    return semver_cmp(a->u.v, b->u.v) == 0;
  case CEL_OPTIONAL:
    if (!a->u.opt || !b->u.opt) return a->u.opt == b->u.opt;
    return cel__equal(a->u.opt, b->u.opt);
  case CEL_LIST:
    if (a->u.l->n != b->u.l->n) return false;
    for (size_t i = 0; i < a->u.l->n; i++)
      if (!cel__equal(&a->u.l->v[i], &b->u.l->v[i])) return false;
    return true;
  case CEL_MAP: {
    const cel_map *x = a->u.m, *y = b->u.m;
    if (x->ops || y->ops) return x == y;
    if (x->n != y->n) return false;
    for (size_t i = 0; i < x->n; i++) {
      cel_value v;
      if (!cel_map_find(y, &x->k[i], &v) || !cel__equal(&x->v[i], &v)) return false;
    }
    return true;
  }
  case CEL_OBJECT:
    return a->u.o == b->u.o;
  default:
    return false;
  }
}

bool cel_value_equal(const cel_value *a, const cel_value *b) {
  return cel__equal(a, b);
}

bool cel_map_find(const cel_map *m, const cel_value *key, cel_value *out) {
  if (m->ops) return m->ops->find(m, key, out);
  for (size_t i = 0; i < m->n; i++) {
    const cel_value *k = &m->k[i];
    bool eq;
    if (is_num(k->kind) && is_num(key->kind)) {
      bool ok;
      eq = num_cmp(k, key, &ok) == 0 && ok;
    } else {
      eq = k->kind == key->kind && cel__equal(k, key);
    }
    if (eq) {
      *out = m->v[i];
      return true;
    }
  }
  return false;
}

bool cel__map_has(const cel_map *m, const cel_value *key) {
  cel_value out;
  if (m->ops && m->ops->has) return m->ops->has(m, key);
  return cel_map_find(m, key, &out);
}

const char *cel_type_name(const cel_value *v) {
  if (v->kind == CEL_OBJECT && v->u.o && v->u.o->type) return v->u.o->type->name;
  return cel__kind_type_name(v->kind);
}

/* ---- text form
 * ----------------------------------------------------------------------------------- */

static void fmt_double(double d, ts_buf *out) {
  char b[64];
  if (isnan(d)) {
    ts_buf_puts(out, "NaN");
    return;
  }
  if (isinf(d)) {
    ts_buf_puts(out, d > 0 ? "+Inf" : "-Inf");
    return;
  }
  snprintf(b, sizeof b, "%.17g", d);
  { /* shortest text that round-trips */
    for (int prec = 1; prec <= 17; prec++) {
      snprintf(b, sizeof b, "%.*g", prec, d);
      if (strtod(b, NULL) == d) break;
    }
  }
  ts_buf_puts(out, b);
}

void cel_value_format(const cel_value *v, ts_buf *out) {
  char b[64];
  switch (v->kind) {
  case CEL_NULL:
    ts_buf_puts(out, "null");
    break;
  case CEL_BOOL:
    ts_buf_puts(out, v->u.b ? "true" : "false");
    break;
  case CEL_INT:
    snprintf(b, sizeof b, "%lld", (long long)v->u.i), ts_buf_puts(out, b);
    break;
  case CEL_UINT:
    snprintf(b, sizeof b, "%lluu", (unsigned long long)v->u.u), ts_buf_puts(out, b);
    break;
  case CEL_DOUBLE:
    fmt_double(v->u.d, out);
    break;
  case CEL_STRING:
    cel__quote(v->u.s.p, v->u.s.n, out);
    break;
  case CEL_BYTES:
    ts_buf_putc(out, 'b');
    cel__quote(v->u.s.p, v->u.s.n, out);
    break;
  case CEL_LIST:
    ts_buf_putc(out, '[');
    for (size_t i = 0; i < v->u.l->n; i++) {
      if (i) ts_buf_puts(out, ", ");
      cel_value_format(&v->u.l->v[i], out);
    }
    ts_buf_putc(out, ']');
    break;
  case CEL_MAP:
    ts_buf_putc(out, '{');
    for (size_t i = 0; !v->u.m->ops && i < v->u.m->n; i++) {
      if (i) ts_buf_puts(out, ", ");
      cel_value_format(&v->u.m->k[i], out);
      ts_buf_puts(out, ": ");
      cel_value_format(&v->u.m->v[i], out);
    }
    ts_buf_putc(out, '}');
    break;
  case CEL_TYPE:
    ts_buf_puts(out, v->u.type);
    break;
  case CEL_DURATION:
    ts_buf_puts(out, "duration(\"");
    cel__format_duration(v->u.t.sec, v->u.t.nsec, out);
    ts_buf_puts(out, "\")");
    break;
  case CEL_TIMESTAMP:
    ts_buf_puts(out, "timestamp(\"");
    cel__format_timestamp(v->u.t.sec, v->u.t.nsec, out);
    ts_buf_puts(out, "\")");
    break;
  case CEL_OPTIONAL:
    if (!v->u.opt) {
      ts_buf_puts(out, "optional.none()");
    } else {
      ts_buf_puts(out, "optional.of(");
      cel_value_format(v->u.opt, out);
      ts_buf_putc(out, ')');
    }
    break;
  case CEL_QUANTITY: {
    char q[TS_QUANTITY_STR_MAX];
    ts_quantity_format(v->u.q, q);
    ts_buf_printf(out, "quantity(\"%s\")", q);
    break;
  }
  case CEL_SEMVER:
    ts_buf_printf(out, "semver(\"%llu.%llu.%llu%s%.*s\")", (unsigned long long)v->u.v->major,
                  (unsigned long long)v->u.v->minor, (unsigned long long)v->u.v->patch,
                  v->u.v->npre ? "-" : "", (int)v->u.v->npre, v->u.v->pre);
    break;
  case CEL_OBJECT:
    ts_buf_printf(out, "<%s>", cel_type_name(v));
    break;
  case CEL_ERROR:
    ts_buf_printf(out, "error(%.*s)", (int)v->u.s.n, v->u.s.p);
    break;
  }
}
