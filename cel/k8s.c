/* cel/k8s.c - the libraries Kubernetes adds to CEL: quantity, semver, lists (isSorted, sum,
 * min, max, indexOf, lastIndexOf), sets, regex find/findAll; and the regex glue of matches(). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

#define A        (args)
#define RE_CACHE 256 /* compiled patterns kept */

/* ---- regex cache and search ------------------------------------------------------------------ */

typedef struct cel_re_entry {
  char *pattern; /* owned */
  size_t n;      /* its length */
  cel_re *re;    /* compiled, or NULL */
  char *error;   /* owned compile error, or NULL */
} re_entry;

void cel__re_cache_free(cel_eval_ctx *c) {
  for (size_t i = 0; c->re_cache && i < RE_CACHE; i++) {
    ts_free(c->re_cache[i].pattern);
    cel_re_free(c->re_cache[i].re);
    ts_free(c->re_cache[i].error);
  }
  ts_free(c->re_cache);
  c->re_cache = NULL;
}

/* The compiled pattern (or its error text) from the context's cache, compiled on first use;
 * NULL when the cache is full (or out of memory) and the pattern is not in it. The cache
 * belongs to the evaluation context, as its arena does: one per thread, no lock. */
static const re_entry *compiled(cel_eval_ctx *c, const char *p, size_t n) {
  re_entry *e = NULL;
  if (!c->re_cache && !(c->re_cache = ts_calloc(RE_CACHE, sizeof *c->re_cache))) return NULL;
  for (size_t i = 0; i < RE_CACHE && !e; i++) {
    if (c->re_cache[i].pattern && c->re_cache[i].n == n && !memcmp(c->re_cache[i].pattern, p, n))
      e = &c->re_cache[i];
    else if (!c->re_cache[i].pattern) {
      ts_err err;
      e = &c->re_cache[i];
      if (!(e->pattern = ts_malloc(n + 1))) return NULL;
      memcpy(e->pattern, p, n);
      e->pattern[n] = '\0';
      e->n = n;
      ts_err_clear(&err);
      if (cel_re_compile(p, n, &e->re, &err) != TS_OK) e->error = ts_strdup(err.text);
    }
  }
  return e;
}

cel_value cel__regex_search(cel_run *ev, const cel_value *text, const cel_value *pattern,
                            bool *found, size_t *start, size_t *end) {
  const re_entry *e = compiled(ev->ctx, pattern->u.s.p, pattern->u.s.n);
  cel_re *tmp = NULL;
  const cel_re *re;
  void *scratch;
  ts_rc rc;
  ts_err err;
  *found = false;
  if (e && !e->re) return cel__err(ev, "%s", e->error ? e->error : "invalid regular expression");
  if (e) {
    re = e->re;
  } else { /* the cache is full: compile for this call only */
    ts_err_clear(&err);
    if (cel_re_compile(pattern->u.s.p, pattern->u.s.n, &tmp, &err) != TS_OK)
      return cel__err(ev, "%s", err.text);
    re = tmp;
  }
  cel__charge(ev, (text->u.s.n * (pattern->u.s.n + 1)) / 4 / 10 + 1);
  if (!(scratch = cel__alloc(ev, cel_re_scratch_size(re)))) {
    cel_re_free(tmp);
    return cel__err(ev, "memory limit exceeded");
  }
  rc = cel_re_search(re, text->u.s.p, text->u.s.n, scratch, &ev->ctx->re_budget, found, start, end);
  cel_re_free(tmp);
  if (rc != TS_OK) return cel__err(ev, "regular expression too expensive for this input");
  return cel_null();
}

static cel_value find(cel_run *ev, const cel_value *args, uint32_t n) {
  bool found;
  size_t s, e;
  cel_value r = cel__regex_search(ev, &A[0], &A[1], &found, &s, &e);
  (void)n;
  if (r.kind == CEL_ERROR) return r;
  return found ? cel_string(A[0].u.s.p + s, e - s) : cel_string("", 0);
}

static cel_value find_all(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_value parts[1024];
  size_t np = 0, at = 0;
  int64_t limit = n == 3 ? A[2].u.i : -1;
  while (at <= A[0].u.s.n && np < 1024 && (limit < 0 || (int64_t)np < limit)) {
    bool found;
    size_t s, e;
    cel_value rest = cel_string(A[0].u.s.p + at, A[0].u.s.n - at);
    cel_value r = cel__regex_search(ev, &rest, &A[1], &found, &s, &e);
    if (r.kind == CEL_ERROR) return r;
    if (!found) break;
    parts[np++] = cel_string(A[0].u.s.p + at + s, e - s);
    at += e > s ? e : e + 1; /* an empty match moves on by one */
  }
  return cel__list(ev, parts, np);
}

/* ---- quantity ------------------------------------------------------------------------------- */

static cel_value q_value(cel_run *ev, const ts_quantity *q) {
  ts_quantity *p = cel__alloc(ev, sizeof *p);
  cel_value v = cel_null();
  if (!p) return cel__err(ev, "memory limit exceeded");
  *p = *q;
  v.kind = CEL_QUANTITY;
  v.u.q = p;
  return v;
}

static cel_value quantity(cel_run *ev, const cel_value *args, uint32_t n) {
  ts_quantity q;
  ts_err err;
  (void)n;
  if (ts_quantity_parse_n(A[0].u.s.p, A[0].u.s.n, &q, &err) != TS_OK)
    return cel__err(ev, "quantities must match the regular expression "
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  return q_value(ev, &q);
}

static cel_value is_quantity(cel_run *ev, const cel_value *args, uint32_t n) {
  ts_quantity q;
  ts_err err;
  (void)ev, (void)n;
  return cel_bool(ts_quantity_parse_n(A[0].u.s.p, A[0].u.s.n, &q, &err) == TS_OK);
}

static cel_value q_cmp(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_int(ts_quantity_cmp(A[0].u.q, A[1].u.q));
}

static cel_value q_gt(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(ts_quantity_cmp(A[0].u.q, A[1].u.q) > 0);
}

static cel_value q_lt(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(ts_quantity_cmp(A[0].u.q, A[1].u.q) < 0);
}

static cel_value q_arith(cel_run *ev, const cel_value *args, bool plus) {
  ts_quantity b, r;
  if (A[1].kind == CEL_INT)
    b = ts_quantity_from_int(A[1].u.i, A[0].u.q->format);
  else
    b = *A[1].u.q;
  if ((plus ? ts_quantity_add(A[0].u.q, &b, &r) : ts_quantity_sub(A[0].u.q, &b, &r)) != TS_OK)
    return cel__err(ev, "quantity arithmetic overflow");
  return q_value(ev, &r);
}

static cel_value q_add(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return q_arith(ev, args, true);
}

static cel_value q_sub(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return q_arith(ev, args, false);
}

static cel_value q_sign(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_int(ts_quantity_sign(A[0].u.q));
}

static cel_value q_is_int(cel_run *ev, const cel_value *args, uint32_t n) {
  int64_t v;
  (void)ev, (void)n;
  return cel_bool(ts_quantity_is_integer(A[0].u.q) && ts_quantity_value(A[0].u.q, &v) == TS_OK);
}

static cel_value q_as_int(cel_run *ev, const cel_value *args, uint32_t n) {
  int64_t v;
  (void)n;
  if (!ts_quantity_is_integer(A[0].u.q) || ts_quantity_value(A[0].u.q, &v) != TS_OK)
    return cel__err(ev, "cannot convert value to integer");
  return cel_int(v);
}

static cel_value q_as_float(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_double(ts_quantity_approx(A[0].u.q));
}

/* ---- semver -----------------------------------------------------------------------------------
 */

static bool number(const char *s, size_t n, bool relaxed, uint64_t *out) {
  uint64_t v = 0;
  if (!n || (n > 1 && s[0] == '0' && !relaxed)) return false;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

static bool ident_ok(const char *s, size_t n, bool numeric_rule) {
  bool digits = true;
  if (!n) return false;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-'))
      return false;
    digits &= c >= '0' && c <= '9';
  }
  return !(numeric_rule && digits && n > 1 && s[0] == '0');
}

ts_rc cel_semver_parse(const char *s, size_t n, bool relaxed, cel_semver *out, ts_err *err) {
  size_t i = 0, end = n;
  uint64_t part[3] = {0, 0, 0};
  int k = 0;
  const char *plus = memchr(s, '+', n), *dash;
  memset(out, 0, sizeof *out);
  out->pre = "";
  if (relaxed && i < n && s[i] == 'v') i++;
  if (plus) { /* build metadata: validated, ignored */
    const char *b = plus + 1, *e = s + n;
    while (b <= e) {
      const char *dot = memchr(b, '.', (size_t)(e - b));
      if (!dot) dot = e;
      if (!ident_ok(b, (size_t)(dot - b), false)) goto bad;
      b = dot + 1;
    }
    end = (size_t)(plus - s);
  }
  dash = memchr(s + i, '-', end - i);
  {
    size_t core_end = dash ? (size_t)(dash - s) : end;
    while (i <= core_end && k < 3) {
      const char *dot = memchr(s + i, '.', core_end - i);
      size_t e = dot ? (size_t)(dot - s) : core_end;
      if (!number(s + i, e - i, relaxed, &part[k++])) goto bad;
      i = e + 1;
      if (!dot) break;
    }
    if (i <= core_end && k == 3 && i - 1 != core_end) goto bad;
    if (k < 3 && !relaxed) goto bad;
  }
  if (dash) {
    const char *b = dash + 1, *e = s + end;
    out->pre = b;
    out->npre = (uint32_t)(e - b);
    while (b <= e) {
      const char *dot = memchr(b, '.', (size_t)(e - b));
      if (!dot) dot = e;
      if (!ident_ok(b, (size_t)(dot - b), true)) goto bad;
      b = dot + 1;
    }
  }
  out->major = part[0], out->minor = part[1], out->patch = part[2];
  return TS_OK;
bad:
  return ts_err_set(err, TS_EINVAL, "invalid semantic version \"%.*s\"", (int)n, s);
}

static cel_value semver(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_semver *v = cel__alloc(ev, sizeof *v);
  cel_value r = cel_null();
  ts_err err;
  if (!v) return cel__err(ev, "memory limit exceeded");
  if (cel_semver_parse(A[0].u.s.p, A[0].u.s.n, n == 2 && A[1].u.b, v, &err) != TS_OK)
    return cel__err(ev, "%s", err.text);
  r.kind = CEL_SEMVER;
  r.u.v = v;
  return r;
}

static cel_value is_semver(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_semver v;
  ts_err err;
  (void)ev;
  return cel_bool(cel_semver_parse(A[0].u.s.p, A[0].u.s.n, n == 2 && A[1].u.b, &v, &err) == TS_OK);
}

static cel_value v_major(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_int((int64_t)A[0].u.v->major);
}
static cel_value v_minor(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_int((int64_t)A[0].u.v->minor);
}
static cel_value v_patch(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_int((int64_t)A[0].u.v->patch);
}
static cel_value v_cmp(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_int(cel__semver_cmp(A[0].u.v, A[1].u.v));
}
static cel_value v_gt(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(cel__semver_cmp(A[0].u.v, A[1].u.v) > 0);
}
static cel_value v_lt(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)ev, (void)n;
  return cel_bool(cel__semver_cmp(A[0].u.v, A[1].u.v) < 0);
}

/* ---- lists and sets ------------------------------------------------------------------------ */

static cel_value is_sorted(cel_run *ev, const cel_value *args, uint32_t n) {
  const cel_list *l = A[0].u.l;
  (void)n;
  cel__charge(ev, l->n);
  for (size_t i = 1; i < l->n; i++) {
    bool ok;
    int c = cel__compare(&l->v[i - 1], &l->v[i], &ok);
    if (!ok) return cel__no_overload(ev, "isSorted", &l->v[i], 1);
    if (c > 0) return cel_bool(false);
  }
  return cel_bool(true);
}

static cel_value sum(cel_run *ev, const cel_value *args, uint32_t n) {
  const cel_list *l = A[0].u.l;
  cel_value acc = cel_int(0);
  (void)n;
  cel__charge(ev, l->n);
  if (!l->n) return acc;
  acc = l->v[0];
  for (size_t i = 1; i < l->n; i++) {
    cel_value two[2] = {acc, l->v[i]};
    if (l->v[i].kind != acc.kind) return cel__no_overload(ev, "sum", &l->v[i], 1);
    if (acc.kind == CEL_DURATION) {
      acc.u.t.sec += l->v[i].u.t.sec, acc.u.t.nsec += l->v[i].u.t.nsec;
      if (acc.u.t.nsec >= 1000000000) acc.u.t.sec++, acc.u.t.nsec -= 1000000000;
      continue;
    }
    if (acc.kind != CEL_INT && acc.kind != CEL_UINT && acc.kind != CEL_DOUBLE)
      return cel__no_overload(ev, "sum", &acc, 1);
    {
      const cel_overload *o = cel__overload_for(ev->prog->env, "_+_", two, 2);
      cel_value r = o ? o->fn(ev, two, 2) : cel_null();
      if (r.kind == CEL_ERROR) return r;
      acc = r;
    }
  }
  return acc;
}

static cel_value extreme(cel_run *ev, const cel_value *args, bool max, const char *fn) {
  const cel_list *l = A[0].u.l;
  cel_value best;
  if (!l->n) return cel__err(ev, "%s called on empty list", fn);
  best = l->v[0];
  for (size_t i = 1; i < l->n; i++) {
    bool ok;
    int c = cel__compare(&l->v[i], &best, &ok);
    if (!ok) return cel__no_overload(ev, fn, &l->v[i], 1);
    if (max ? c > 0 : c < 0) best = l->v[i];
  }
  return best;
}

static cel_value lmin(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return extreme(ev, args, false, "min");
}

static cel_value lmax(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return extreme(ev, args, true, "max");
}

static cel_value l_index(cel_run *ev, const cel_value *args, bool last) {
  const cel_list *l = A[0].u.l;
  int64_t r = -1;
  cel__charge(ev, l->n);
  for (size_t i = 0; i < l->n; i++)
    if (cel__equal(&l->v[i], &A[1])) {
      r = (int64_t)i;
      if (!last) break;
    }
  return cel_int(r);
}

static cel_value l_indexof(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return l_index(ev, args, false);
}

static cel_value l_lastindexof(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  return l_index(ev, args, true);
}

static bool in_list(const cel_list *l, const cel_value *v) {
  for (size_t i = 0; i < l->n; i++)
    if (cel__equal(&l->v[i], v)) return true;
  return false;
}

static cel_value set_contains(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  cel__charge(ev, A[0].u.l->n * A[1].u.l->n);
  for (size_t i = 0; i < A[1].u.l->n; i++)
    if (!in_list(A[0].u.l, &A[1].u.l->v[i])) return cel_bool(false);
  return cel_bool(true);
}

static cel_value set_equivalent(cel_run *ev, const cel_value *args, uint32_t n) {
  cel_value swapped[2] = {A[1], A[0]};
  cel_value a = set_contains(ev, args, n);
  return a.u.b ? set_contains(ev, swapped, n) : a;
}

static cel_value set_intersects(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  cel__charge(ev, A[0].u.l->n * A[1].u.l->n);
  for (size_t i = 0; i < A[1].u.l->n; i++)
    if (in_list(A[0].u.l, &A[1].u.l->v[i])) return cel_bool(true);
  return cel_bool(false);
}

#define Q "kubernetes.Quantity"
#define V "kubernetes.Semver"

static const cel_overload tab[] = {
    {"find", "string.(string)->string", find, 0, 0, {0}, 0},
    {"findAll", "string.(string)->list(string)", find_all, 0, 0, {0}, 0},
    {"findAll", "string.(string, int)->list(string)", find_all, 0, 0, {0}, 0},
    {"quantity", "(string)->" Q, quantity, 0, 0, {0}, 0},
    {"isQuantity", "(string)->bool", is_quantity, 0, 0, {0}, 0},
    {"compareTo", Q ".(" Q ")->int", q_cmp, 0, 0, {0}, 0},
    {"isGreaterThan", Q ".(" Q ")->bool", q_gt, 0, 0, {0}, 0},
    {"isLessThan", Q ".(" Q ")->bool", q_lt, 0, 0, {0}, 0},
    {"add", Q ".(" Q ")->" Q, q_add, 0, 0, {0}, 0},
    {"add", Q ".(int)->" Q, q_add, 0, 0, {0}, 0},
    {"sub", Q ".(" Q ")->" Q, q_sub, 0, 0, {0}, 0},
    {"sub", Q ".(int)->" Q, q_sub, 0, 0, {0}, 0},
    {"sign", Q ".()->int", q_sign, 0, 0, {0}, 0},
    {"isInteger", Q ".()->bool", q_is_int, 0, 0, {0}, 0},
    {"asInteger", Q ".()->int", q_as_int, 0, 0, {0}, 0},
    {"asApproximateFloat", Q ".()->double", q_as_float, 0, 0, {0}, 0},
    {"semver", "(string)->" V, semver, 0, 0, {0}, 0},
    {"semver", "(string, bool)->" V, semver, 0, 0, {0}, 0},
    {"isSemver", "(string)->bool", is_semver, 0, 0, {0}, 0},
    {"isSemver", "(string, bool)->bool", is_semver, 0, 0, {0}, 0},
    {"major", V ".()->int", v_major, 0, 0, {0}, 0},
    {"minor", V ".()->int", v_minor, 0, 0, {0}, 0},
    {"patch", V ".()->int", v_patch, 0, 0, {0}, 0},
    {"compareTo", V ".(" V ")->int", v_cmp, 0, 0, {0}, 0},
    {"isGreaterThan", V ".(" V ")->bool", v_gt, 0, 0, {0}, 0},
    {"isLessThan", V ".(" V ")->bool", v_lt, 0, 0, {0}, 0},
    {"isSorted", "list(A).()->bool", is_sorted, 0, 0, {0}, 0},
    {"sum", "list(A).()->A", sum, 0, 0, {0}, 0},
    {"min", "list(A).()->A", lmin, 0, 0, {0}, 0},
    {"max", "list(A).()->A", lmax, 0, 0, {0}, 0},
    {"indexOf", "list(A).(A)->int", l_indexof, 0, 0, {0}, 0},
    {"lastIndexOf", "list(A).(A)->int", l_lastindexof, 0, 0, {0}, 0},
    {"sets.contains", "(list(A), list(A))->bool", set_contains, 0, 0, {0}, 0},
    {"sets.equivalent", "(list(A), list(A))->bool", set_equivalent, 0, 0, {0}, 0},
    {"sets.intersects", "(list(A), list(A))->bool", set_intersects, 0, 0, {0}, 0},
};

const cel_overload *cel__k8s_table(size_t *n) {
  *n = sizeof tab / sizeof *tab;
  return tab;
}
