/* cel/std.c - the standard library: operators, size, conversions, string predicates,
 * regular-expression matching and optionals. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_int.h"

#define A (args)

/* ---- arithmetic --------------------------------------------------------------------------------
 */

static cel_value overflow(cel_run *ev) {
  return cel__err(ev, "return error for overflow");
}

static cel_value add(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_INT: {
    int64_t r;
    if (__builtin_add_overflow(A[0].u.i, A[1].u.i, &r)) return overflow(ev);
    return cel_int(r);
  }
  case CEL_UINT: {
    uint64_t r;
    if (__builtin_add_overflow(A[0].u.u, A[1].u.u, &r)) return overflow(ev);
    return cel_uint(r);
  }
  case CEL_DOUBLE:
    return cel_double(A[0].u.d + A[1].u.d);
  case CEL_STRING:
  case CEL_BYTES: {
    size_t len = A[0].u.s.n + A[1].u.s.n;
    char *p = cel__alloc(ev, len + 1);
    cel_value v;
    if (!p) return cel__err(ev, "memory limit exceeded");
    memcpy(p, A[0].u.s.p, A[0].u.s.n);
    memcpy(p + A[0].u.s.n, A[1].u.s.p, A[1].u.s.n);
    p[len] = '\0';
    cel__charge(ev, len / 10);
    v = cel_string(p, len);
    v.kind = A[0].kind;
    return v;
  }
  case CEL_LIST: {
    size_t len = A[0].u.l->n + A[1].u.l->n;
    cel_value *v = cel__alloc(ev, (len ? len : 1) * sizeof *v);
    cel_list *l = cel__alloc(ev, sizeof *l);
    if (!v || !l) return cel__err(ev, "memory limit exceeded");
    if (A[0].u.l->n) memcpy(v, A[0].u.l->v, A[0].u.l->n * sizeof *v);
    if (A[1].u.l->n) memcpy(v + A[0].u.l->n, A[1].u.l->v, A[1].u.l->n * sizeof *v);
    l->v = v, l->n = len;
    cel__charge(ev, len / 10);
    return cel_list_value(l);
  }
  default:
    return cel__no_overload(ev, "_+_", args, 2);
  }
}

static cel_value sub(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_INT: {
    int64_t r;
    if (__builtin_sub_overflow(A[0].u.i, A[1].u.i, &r)) return overflow(ev);
    return cel_int(r);
  }
  case CEL_UINT: {
    uint64_t r;
    if (__builtin_sub_overflow(A[0].u.u, A[1].u.u, &r)) return overflow(ev);
    return cel_uint(r);
  }
  case CEL_DOUBLE:
    return cel_double(A[0].u.d - A[1].u.d);
  default:
    return cel__no_overload(ev, "_-_", args, 2);
  }
}

static cel_value mul(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_INT: {
    int64_t r;
    if (__builtin_mul_overflow(A[0].u.i, A[1].u.i, &r)) return overflow(ev);
    return cel_int(r);
  }
  case CEL_UINT: {
    uint64_t r;
    if (__builtin_mul_overflow(A[0].u.u, A[1].u.u, &r)) return overflow(ev);
    return cel_uint(r);
  }
  case CEL_DOUBLE:
    return cel_double(A[0].u.d * A[1].u.d);
  default:
    return cel__no_overload(ev, "_*_", args, 2);
  }
}

static cel_value divide(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_INT:
    if (!A[1].u.i) return cel__err(ev, "division by zero");
    if (A[0].u.i == INT64_MIN && A[1].u.i == -1) return overflow(ev);
    return cel_int(A[0].u.i / A[1].u.i);
  case CEL_UINT:
    if (!A[1].u.u) return cel__err(ev, "division by zero");
    return cel_uint(A[0].u.u / A[1].u.u);
  case CEL_DOUBLE:
    return cel_double(A[0].u.d / A[1].u.d);
  default:
    return cel__no_overload(ev, "_/_", args, 2);
  }
}

static cel_value mod(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_INT:
    if (!A[1].u.i) return cel__err(ev, "modulus by zero");
    if (A[0].u.i == INT64_MIN && A[1].u.i == -1) return overflow(ev);
    return cel_int(A[0].u.i % A[1].u.i);
  case CEL_UINT:
    if (!A[1].u.u) return cel__err(ev, "modulus by zero");
    return cel_uint(A[0].u.u % A[1].u.u);
  default:
    return cel__no_overload(ev, "_%_", args, 2);
  }
}

static cel_value neg(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  if (A[0].kind == CEL_INT) {
    if (A[0].u.i == INT64_MIN) return overflow(ev);
    return cel_int(-A[0].u.i);
  }
  if (A[0].kind == CEL_DOUBLE) return cel_double(-A[0].u.d);
  return cel__no_overload(ev, "-_", args, 1);
}

static cel_value not_(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(!A[0].u.b);
}

/* ---- comparison ------------------------------------------------------------------------------ */

static cel_value eq(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(cel__equal(&A[0], &A[1]));
}

static cel_value ne(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(!cel__equal(&A[0], &A[1]));
}

static cel_value order(cel_run *ev, const cel_value *args, const char *op) {
  bool ok;
  int c = cel__compare(&A[0], &A[1], &ok);
  if (!ok) {
    if ((A[0].kind == CEL_DOUBLE && isnan(A[0].u.d)) ||
        (A[1].kind == CEL_DOUBLE && isnan(A[1].u.d)))
      return cel_bool(false);
    if (A[0].kind == CEL_LIST || A[0].kind == CEL_MAP || A[0].kind == CEL_NULL ||
        A[0].kind != A[1].kind || A[0].kind == CEL_TYPE || A[0].kind == CEL_OPTIONAL)
      return cel__no_overload(ev, op, args, 2);
    return cel__no_overload(ev, op, args, 2);
  }
  switch (op[1]) {
  case '<':
    return cel_bool(op[2] == '=' ? c <= 0 : c < 0);
  default:
    return cel_bool(op[2] == '=' ? c >= 0 : c > 0);
  }
}

static cel_value lt(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return order(ev, args, "_<_");
}
static cel_value le(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return order(ev, args, "_<=_");
}
static cel_value gt(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return order(ev, args, "_>_");
}
static cel_value ge(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return order(ev, args, "_>=_");
}

static cel_value in(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  if (A[1].kind == CEL_LIST) {
    cel__charge(ev, A[1].u.l->n);
    for (size_t i = 0; i < A[1].u.l->n; i++)
      if (cel__equal(&A[0], &A[1].u.l->v[i])) return cel_bool(true);
    return cel_bool(false);
  }
  if (A[1].kind == CEL_MAP) return cel_bool(cel__map_has(A[1].u.m, &A[0]));
  return cel__no_overload(ev, "@in", args, 2);
}

/* ---- size and strings ---------------------------------------------------------------------------
 */

static cel_value size(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_STRING:
    return cel_int((int64_t)cel__utf8_len(A[0].u.s.p, A[0].u.s.n));
  case CEL_BYTES:
    return cel_int((int64_t)A[0].u.s.n);
  case CEL_LIST:
    return cel_int((int64_t)A[0].u.l->n);
  case CEL_MAP:
    if (A[0].u.m->ops) {
      const cel_value *k;
      size_t cnt;
      if (!A[0].u.m->ops->keys(ev, A[0].u.m, &k, &cnt))
        return cel__err(ev, "memory limit exceeded");
      return cel_int((int64_t)cnt);
    }
    return cel_int((int64_t)A[0].u.m->n);
  default:
    return cel__no_overload(ev, "size", args, 1);
  }
}

static const char *find_bytes(const char *h, size_t hn, const char *nd, size_t nn) {
  if (!nn) return h;
  for (size_t i = 0; i + nn <= hn; i++)
    if (h[i] == nd[0] && !memcmp(h + i, nd, nn)) return h + i;
  return NULL;
}

static cel_value contains(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  cel__charge(ev, (A[0].u.s.n + A[1].u.s.n) / 10);
  return cel_bool(find_bytes(A[0].u.s.p, A[0].u.s.n, A[1].u.s.p, A[1].u.s.n) != NULL);
}

static cel_value starts(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(A[1].u.s.n <= A[0].u.s.n && !memcmp(A[0].u.s.p, A[1].u.s.p, A[1].u.s.n));
}

static cel_value ends(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(A[1].u.s.n <= A[0].u.s.n &&
                  !memcmp(A[0].u.s.p + A[0].u.s.n - A[1].u.s.n, A[1].u.s.p, A[1].u.s.n));
}

static cel_value matches(cel_run *ev, const cel_value *args, uint32_t n) {
  bool found;
  size_t s, e;
  cel_value r;
  (void)n;
  r = cel__regex_search(ev, &A[0], &A[1], &found, &s, &e);
  return r.kind == CEL_ERROR ? r : cel_bool(found);
}

/* ---- conversions
 * ------------------------------------------------------------------------------------ */

static cel_value to_int(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_INT:
    return A[0];
  case CEL_UINT:
    if (A[0].u.u > (uint64_t)INT64_MAX)
      return cel__err(ev, "range error converting %llu to int", (unsigned long long)A[0].u.u);
    return cel_int((int64_t)A[0].u.u);
  case CEL_DOUBLE:
    if (!(A[0].u.d > -9223372036854775808.0 && A[0].u.d < 9223372036854775808.0))
      return cel__err(ev, "range error converting %g to int", A[0].u.d);
    return cel_int((int64_t)A[0].u.d);
  case CEL_TIMESTAMP:
    return cel_int(A[0].u.t.sec);
  case CEL_STRING: {
    char buf[64], *end;
    long long v;
    if (A[0].u.s.n == 0 || A[0].u.s.n >= sizeof buf) return cel__err(ev, "type conversion error");
    memcpy(buf, A[0].u.s.p, A[0].u.s.n);
    buf[A[0].u.s.n] = '\0';
    errno = 0;
    v = strtoll(buf, &end, 10);
    if (*end || errno || buf[0] == ' ' || buf[0] == '+')
      return cel__err(ev, "type conversion error: invalid int \"%s\"", buf);
    return cel_int(v);
  }
  default:
    return cel__no_overload(ev, "int", args, 1);
  }
}

static cel_value to_uint(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_UINT:
    return A[0];
  case CEL_INT:
    if (A[0].u.i < 0)
      return cel__err(ev, "range error converting %lld to uint", (long long)A[0].u.i);
    return cel_uint((uint64_t)A[0].u.i);
  case CEL_DOUBLE:
    if (!(A[0].u.d > -1.0 && A[0].u.d < 18446744073709551616.0))
      return cel__err(ev, "range error converting %g to uint", A[0].u.d);
    return cel_uint((uint64_t)A[0].u.d);
  case CEL_STRING: {
    char buf[64], *end;
    unsigned long long v;
    if (A[0].u.s.n == 0 || A[0].u.s.n >= sizeof buf) return cel__err(ev, "type conversion error");
    memcpy(buf, A[0].u.s.p, A[0].u.s.n);
    buf[A[0].u.s.n] = '\0';
    errno = 0;
    v = strtoull(buf, &end, 10);
    if (*end || errno || buf[0] == '-' || buf[0] == ' ' || buf[0] == '+')
      return cel__err(ev, "type conversion error: invalid uint \"%s\"", buf);
    return cel_uint(v);
  }
  default:
    return cel__no_overload(ev, "uint", args, 1);
  }
}

static cel_value to_double(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  switch (A[0].kind) {
  case CEL_DOUBLE:
    return A[0];
  case CEL_INT:
    return cel_double((double)A[0].u.i);
  case CEL_UINT:
    return cel_double((double)A[0].u.u);
  case CEL_STRING: {
    char buf[400], *end;
    double v;
    if (A[0].u.s.n == 0 || A[0].u.s.n >= sizeof buf) return cel__err(ev, "type conversion error");
    memcpy(buf, A[0].u.s.p, A[0].u.s.n);
    buf[A[0].u.s.n] = '\0';
    v = strtod(buf, &end);
    if (*end || buf[0] == ' ')
      return cel__err(ev, "type conversion error: invalid double \"%s\"", buf);
    return cel_double(v);
  }
  default:
    return cel__no_overload(ev, "double", args, 1);
  }
}

static cel_value to_string(cel_run *ev, const cel_value *args, uint32_t n) {
  ts_buf b;
  cel_value r;
  char t[64];
  (void)n;
  switch (A[0].kind) {
  case CEL_STRING:
    return A[0];
  case CEL_BOOL:
    return cel_string(A[0].u.b ? "true" : "false", A[0].u.b ? 4 : 5);
  case CEL_INT:
    snprintf(t, sizeof t, "%lld", (long long)A[0].u.i);
    return cel__str(ev, t, strlen(t));
  case CEL_UINT:
    snprintf(t, sizeof t, "%llu", (unsigned long long)A[0].u.u);
    return cel__str(ev, t, strlen(t));
  case CEL_BYTES:
    if (!cel__utf8_valid(A[0].u.s.p, A[0].u.s.n))
      return cel__err(ev, "invalid UTF-8 in bytes, cannot convert to string");
    r = A[0];
    r.kind = CEL_STRING;
    return r;
  case CEL_DOUBLE:
  case CEL_TIMESTAMP:
  case CEL_DURATION:
    ts_buf_init(&b, 128);
    if (A[0].kind == CEL_DOUBLE) {
      double d = A[0].u.d;
      if (isnan(d))
        ts_buf_puts(&b, "NaN");
      else if (isinf(d))
        ts_buf_puts(&b, d > 0 ? "+Inf" : "-Inf");
      else {
        char x[64];
        int prec;
        for (prec = 1; prec <= 17; prec++) {
          snprintf(x, sizeof x, "%.*g", prec, d);
          if (strtod(x, NULL) == d) break;
        }
        /* Go's 'g' with shortest precision uses an exponent from 21 digits up */
        if (fabs(d) >= 1e21 || (fabs(d) < 1e-4 && d != 0)) {
          char *e = strchr(x, 'e');
          if (e && (e[2] == '0')) memmove(e + 2, e + 3, strlen(e + 3) + 1);
          ts_buf_puts(&b, x);
        } else {
          snprintf(x, sizeof x, "%.*f", 20, d);
          { /* trim to the shortest round-tripping fixed form */
            char y[64];
            for (int fp = 0; fp <= 20; fp++) {
              snprintf(y, sizeof y, "%.*f", fp, d);
              if (strtod(y, NULL) == d) break;
            }
            ts_buf_puts(&b, y);
          }
        }
      }
    } else if (A[0].kind == CEL_TIMESTAMP) {
      cel__format_timestamp(A[0].u.t.sec, A[0].u.t.nsec, &b);
    } else {
      cel__format_duration(A[0].u.t.sec, A[0].u.t.nsec, &b);
    }
    r = cel__str(ev, b.data ? b.data : "", b.len);
    ts_buf_free(&b);
    return r;
  default:
    return cel__no_overload(ev, "string", args, 1);
  }
}

static cel_value to_bytes(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_value r = A[0];
  (void)ev, (void)n;
  r.kind = CEL_BYTES;
  return r;
}

static cel_value to_bool(cel_run *ev, const cel_value *args, uint32_t n) {
  static const char *const yes[] = {"1", "t", "true", "TRUE", "True"};
  static const char *const no[] = {"0", "f", "false", "FALSE", "False"};
  (void)n;
  if (A[0].kind == CEL_BOOL) return A[0];
  for (size_t i = 0; i < 5; i++) {
    if (A[0].u.s.n == strlen(yes[i]) && !memcmp(A[0].u.s.p, yes[i], A[0].u.s.n))
      return cel_bool(true);
    if (A[0].u.s.n == strlen(no[i]) && !memcmp(A[0].u.s.p, no[i], A[0].u.s.n))
      return cel_bool(false);
  }
  return cel__err(ev, "Type conversion error: invalid bool \"%.*s\"", (int)A[0].u.s.n, A[0].u.s.p);
}

static cel_value dyn_(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return A[0];
}

static cel_value type_of(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_value r = cel_null();
  (void)ev, (void)n;
  r.kind = CEL_TYPE;
  r.u.type = ts_intern_cstr(cel_type_name(&A[0]));
  return r;
}

/* ---- optionals ------------------------------------------------------------------------------- */

static cel_value opt_of(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_value *p = cel__alloc(ev, sizeof *p), r = cel_null();
  (void)n;
  if (!p) return cel__err(ev, "memory limit exceeded");
  *p = A[0];
  r.kind = CEL_OPTIONAL;
  r.u.opt = p;
  return r;
}

static bool zero(const cel_value *v) {
  switch (v->kind) {
  case CEL_NULL:
    return true;
  case CEL_BOOL:
    return !v->u.b;
  case CEL_INT:
    return !v->u.i;
  case CEL_UINT:
    return !v->u.u;
  case CEL_DOUBLE:
    return v->u.d == 0;
  case CEL_STRING:
  case CEL_BYTES:
    return !v->u.s.n;
  case CEL_LIST:
    return !v->u.l->n;
  case CEL_MAP:
    return !v->u.m->ops && !v->u.m->n;
  case CEL_DURATION:
  case CEL_TIMESTAMP:
    return !v->u.t.sec && !v->u.t.nsec;
  default:
    return false;
  }
}

static cel_value opt_none(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_value r = cel_null();
  (void)ev, (void)args, (void)n;
  r.kind = CEL_OPTIONAL;
  return r;
}

static cel_value opt_nonzero(cel_run *ev, const cel_value *args, uint32_t n) {
  return zero(&A[0]) ? opt_none(ev, args, n) : opt_of(ev, args, n);
}

static cel_value has_value(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(A[0].u.opt != NULL);
}

static cel_value value(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  if (!A[0].u.opt) return cel__err(ev, "optional.none() dereference");
  return *A[0].u.opt;
}

static cel_value or_value(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return A[0].u.opt ? *A[0].u.opt : A[1];
}

static cel_value or_(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return A[0].u.opt ? A[0] : A[1];
}

#define NUM_ORDER(op, fn)                                                                          \
  {op, "(int, int)->bool", fn, 0, 0, {0}, 0}, {op, "(int, uint)->bool", fn, 0, 0, {0}, 0},         \
      {op, "(int, double)->bool", fn, 0, 0, {0}, 0}, {op, "(uint, int)->bool", fn, 0, 0, {0}, 0},  \
      {op, "(uint, uint)->bool", fn, 0, 0, {0}, 0},                                                \
      {op, "(uint, double)->bool", fn, 0, 0, {0}, 0},                                              \
      {op, "(double, int)->bool", fn, 0, 0, {0}, 0},                                               \
      {op, "(double, uint)->bool", fn, 0, 0, {0}, 0},                                              \
      {op, "(double, double)->bool", fn, 0, 0, {0}, 0},                                            \
      {op, "(string, string)->bool", fn, 0, 0, {0}, 0},                                            \
      {op, "(bytes, bytes)->bool", fn, 0, 0, {0}, 0},                                              \
      {op, "(bool, bool)->bool", fn, 0, 0, {0}, 0},                                                \
      {op, "(google.protobuf.Timestamp, google.protobuf.Timestamp)->bool", fn, 0, 0, {0}, 0}, {    \
    op, "(google.protobuf.Duration, google.protobuf.Duration)->bool", fn, 0, 0, {0}, 0             \
  }

static const cel_overload tab[] = {
    {"_+_", "(int, int)->int", add, 0, 0, {0}, 0},
    {"_+_", "(uint, uint)->uint", add, 0, 0, {0}, 0},
    {"_+_", "(double, double)->double", add, 0, 0, {0}, 0},
    {"_+_", "(string, string)->string", add, 0, 0, {0}, 0},
    {"_+_", "(bytes, bytes)->bytes", add, 0, 0, {0}, 0},
    {"_+_", "(list(A), list(A))->list(A)", add, 0, 0, {0}, 0},
    {"_-_", "(int, int)->int", sub, 0, 0, {0}, 0},
    {"_-_", "(uint, uint)->uint", sub, 0, 0, {0}, 0},
    {"_-_", "(double, double)->double", sub, 0, 0, {0}, 0},
    {"_*_", "(int, int)->int", mul, 0, 0, {0}, 0},
    {"_*_", "(uint, uint)->uint", mul, 0, 0, {0}, 0},
    {"_*_", "(double, double)->double", mul, 0, 0, {0}, 0},
    {"_/_", "(int, int)->int", divide, 0, 0, {0}, 0},
    {"_/_", "(uint, uint)->uint", divide, 0, 0, {0}, 0},
    {"_/_", "(double, double)->double", divide, 0, 0, {0}, 0},
    {"_%_", "(int, int)->int", mod, 0, 0, {0}, 0},
    {"_%_", "(uint, uint)->uint", mod, 0, 0, {0}, 0},
    {"-_", "(int)->int", neg, 0, 0, {0}, 0},
    {"-_", "(double)->double", neg, 0, 0, {0}, 0},
    {"!_", "(bool)->bool", not_, 0, 0, {0}, 0},
    {"_==_", "(A, B)->bool", eq, 0, 0, {0}, 0},
    {"_!=_", "(A, B)->bool", ne, 0, 0, {0}, 0},
    NUM_ORDER("_<_", lt),
    NUM_ORDER("_<=_", le),
    NUM_ORDER("_>_", gt),
    NUM_ORDER("_>=_", ge),
    {"@in", "(A, list(A))->bool", in, 0, 0, {0}, 0},
    {"@in", "(A, map(A, B))->bool", in, 0, 0, {0}, 0},
    {"size", "(string)->int", size, 0, 0, {0}, 0},
    {"size", "(bytes)->int", size, 0, 0, {0}, 0},
    {"size", "(list(A))->int", size, 0, 0, {0}, 0},
    {"size", "(map(A, B))->int", size, 0, 0, {0}, 0},
    {"size", "string.()->int", size, 0, 0, {0}, 0},
    {"size", "bytes.()->int", size, 0, 0, {0}, 0},
    {"size", "list(A).()->int", size, 0, 0, {0}, 0},
    {"size", "map(A, B).()->int", size, 0, 0, {0}, 0},
    {"contains", "string.(string)->bool", contains, 0, 0, {0}, 0},
    {"startsWith", "string.(string)->bool", starts, 0, 0, {0}, 0},
    {"endsWith", "string.(string)->bool", ends, 0, 0, {0}, 0},
    {"matches", "string.(string)->bool", matches, 0, 0, {0}, 0},
    {"matches", "(string, string)->bool", matches, 0, 0, {0}, 0},
    {"int", "(int)->int", to_int, 0, 0, {0}, 0},
    {"int", "(uint)->int", to_int, 0, 0, {0}, 0},
    {"int", "(double)->int", to_int, 0, 0, {0}, 0},
    {"int", "(string)->int", to_int, 0, 0, {0}, 0},
    {"int", "(google.protobuf.Timestamp)->int", to_int, 0, 0, {0}, 0},
    {"uint", "(uint)->uint", to_uint, 0, 0, {0}, 0},
    {"uint", "(int)->uint", to_uint, 0, 0, {0}, 0},
    {"uint", "(double)->uint", to_uint, 0, 0, {0}, 0},
    {"uint", "(string)->uint", to_uint, 0, 0, {0}, 0},
    {"double", "(double)->double", to_double, 0, 0, {0}, 0},
    {"double", "(int)->double", to_double, 0, 0, {0}, 0},
    {"double", "(uint)->double", to_double, 0, 0, {0}, 0},
    {"double", "(string)->double", to_double, 0, 0, {0}, 0},
    {"string", "(string)->string", to_string, 0, 0, {0}, 0},
    {"string", "(bool)->string", to_string, 0, 0, {0}, 0},
    {"string", "(int)->string", to_string, 0, 0, {0}, 0},
    {"string", "(uint)->string", to_string, 0, 0, {0}, 0},
    {"string", "(double)->string", to_string, 0, 0, {0}, 0},
    {"string", "(bytes)->string", to_string, 0, 0, {0}, 0},
    {"string", "(google.protobuf.Timestamp)->string", to_string, 0, 0, {0}, 0},
    {"string", "(google.protobuf.Duration)->string", to_string, 0, 0, {0}, 0},
    {"bytes", "(bytes)->bytes", to_bytes, 0, 0, {0}, 0},
    {"bytes", "(string)->bytes", to_bytes, 0, 0, {0}, 0},
    {"bool", "(bool)->bool", to_bool, 0, 0, {0}, 0},
    {"bool", "(string)->bool", to_bool, 0, 0, {0}, 0},
    {"dyn", "(A)->dyn", dyn_, 0, 0, {0}, 0},
    {"type", "(A)->type(A)", type_of, 0, 0, {0}, 0},
    {"optional.of", "(A)->optional_type(A)", opt_of, 0, 0, {0}, 0},
    {"optional.ofNonZeroValue", "(A)->optional_type(A)", opt_nonzero, 0, 0, {0}, 0},
    {"optional.none", "()->optional_type(dyn)", opt_none, 0, 0, {0}, 0},
    {"hasValue", "optional_type(A).()->bool", has_value, 0, 0, {0}, 0},
    {"value", "optional_type(A).()->A", value, 0, 0, {0}, 0},
    {"orValue", "optional_type(A).(A)->A", or_value, 0, 0, {0}, 0},
    {"or", "optional_type(A).(optional_type(A))->optional_type(A)", or_, 0, 0, {0}, 0},
};

const cel_overload *cel__std_table(size_t *n) {
  *n = sizeof tab / sizeof *tab;
  return tab;
}
