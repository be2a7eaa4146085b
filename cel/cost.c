/* cel/cost.c - the static (worst-case) cost estimate of a checked program, as the Kubernetes
 * API server computes it before it admits an expression: cel-go's checker estimate
 * (checker/cost.go) with Kubernetes' library estimator (apiserver/pkg/cel/library/cost.go) and
 * the environment's own size limits (a cel_ext's path_max_size: for DRA, how long a driver name
 * or an attribute can be and how many attributes a device has).
 *
 * The tree here is not cel-go's: macros are single nodes (N_COMP, N_BIND, N_OPTMAP), && || ?:
 * are nodes, literal calls were folded into constants and device.attributes["d"].name became
 * one N_OBJLOOKUP. Each is costed as the tree cel-go would have built: a comprehension as its
 * accumulator loop, a folded call as the call, a lookup as its three steps. Sizes are tracked
 * as cel-go tracks them: literals, results of the functions that declare one, field paths
 * resolved by the environment, scalars, and the variables of comprehensions and binds. */
#include <math.h>
#include <string.h>

#include "cel/cel_int.h"

#define TRAVERSAL   0.1  /* common.StringTraversalCostFactor */
#define REGEX_LEN   0.25 /* common.RegexStringLengthCostFactor */
#define LIST_CREATE 10   /* common.ListCreateBaseCost */
#define MAP_CREATE  30   /* common.MapCreateBaseCost */
#define MAX_PATH    8    /* deeper paths are unknown (no environment declares one) */
#define UNKNOWN     UINT64_MAX

typedef struct size_est {
  uint64_t min, max;
} size_est;

typedef struct path {
  const char *e[MAX_PATH];
  int n; /* 0: no path */
} path;

typedef struct est {
  uint64_t cost;        /* worst case */
  bool sized;           /* size is known from the expression itself */
  size_est size;        /* then this */
  path path;            /* field path from a declared variable, when it has one */
  bool entries;         /* a list or map literal: its entries' sizes */
  size_est key, val;    /* keys (maps) and values (lists and maps) */
  const cel_type *type; /* checked type */
} est;

typedef struct local {
  path path;
  bool sized;
  size_est size;
} local;

typedef struct coster {
  const cel_program *p;
  local locals[CEL_MAX_LOCALS];
} coster;

static uint64_t add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t mul(uint64_t a, uint64_t b) {
  return a && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

/* x * f rounded up, saturating (cel-go's multiplyByCostFactor). */
static uint64_t factor(uint64_t x, double f) {
  double xf = (double)x, r;
  if (x && f > 0 && xf > (double)UINT64_MAX / f) return UINT64_MAX;
  r = ceil(xf * f);
  return r >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)r;
}

static size_est fixed(uint64_t v) {
  size_est s = {v, v};
  return s;
}

static size_est unknown(void) {
  size_est s = {0, UNKNOWN};
  return s;
}

static size_est size_union(size_est a, size_est b) {
  size_est s = {a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max};
  return s;
}

static bool scalar(const cel_type *t) {
  if (!t) return false;
  switch (t->kind) {
  case TY_BOOL:
  case TY_DOUBLE:
  case TY_DURATION:
  case TY_INT:
  case TY_TIMESTAMP:
  case TY_UINT:
    return true;
  case TY_OPTIONAL:
    return scalar(t->p[0]);
  default:
    return false;
  }
}

static path extend(const path *p, const char *e) {
  path r = *p;
  if (!p->n || p->n >= MAX_PATH)
    r.n = 0;
  else
    r.e[r.n++] = e;
  return r;
}

/* What cel-go's computeSize finds: the expression's own size, the environment's limit for its
 * path, 1 for a scalar, or the size a local variable was bound with. */
static bool known_size(const coster *c, const node *n, const est *e, size_est *out) {
  uint64_t max;
  const cel_ext *x = c->p->env->ext;
  if (e->sized) return *out = e->size, true;
  if (e->path.n && x && x->path_max_size &&
      x->path_max_size(c->p->env, e->path.e, (size_t)e->path.n, &max)) {
    out->min = 0, out->max = max;
    return true;
  }
  if (scalar(e->type)) return *out = fixed(1), true;
  if (n && n->kind == N_IDENT && n->local >= 0 && c->locals[n->local].sized)
    return *out = c->locals[n->local].size, true;
  return false;
}

static size_est size_of(const coster *c, const node *n, const est *e) {
  size_est s;
  return known_size(c, n, e, &s) ? s : unknown();
}

static void walk(coster *c, const node *n, est *out);

static size_t runes(const cel_value *v) {
  size_t k = 0;
  for (size_t i = 0; i < v->u.s.n; i++) k += ((unsigned char)v->u.s.p[i] & 0xC0) != 0x80;
  return k;
}

static void literal(const node *n, est *out) {
  out->cost = n->folded ? 1 : 0; /* a folded call: quantity("1Gi") was a call of cost 1 */
  if (n->folded) return;
  out->sized = true;
  switch (n->lit.kind) {
  case CEL_STRING:
    out->size = fixed(runes(&n->lit));
    break;
  case CEL_BYTES:
    out->size = fixed(n->lit.u.s.n);
    break;
  default:
    out->size = fixed(1);
  }
}

static bool is(const cel_type *t, ty_kind k) {
  return t && t->kind == k;
}

static bool named(const char *name, const char *const *set) {
  for (; *set; set++)
    if (!strcmp(name, *set)) return true;
  return false;
}

/* One call's cost (arguments included, target not) and result size, as Kubernetes' library
 * estimator and then cel-go's functionCost price overload o. */
static uint64_t call_cost(const coster *c, const node *n, const cel_overload *o, const est *t,
                          const est *a, uint64_t args, bool *sized, size_est *size) {
  static const char *const list_fns[] = {"isSorted", "sum",         "max", "min",
                                         "indexOf",  "lastIndexOf", NULL};
  static const char *const same_size[] = {"lowerAscii", "upperAscii", "substring", "trim", NULL};
  static const char *const nominal[] = {"sign",
                                        "asInteger",
                                        "isInteger",
                                        "asApproximateFloat",
                                        "isGreaterThan",
                                        "isLessThan",
                                        "compareTo",
                                        "add",
                                        "sub",
                                        "major",
                                        "minor",
                                        "patch",
                                        NULL};
  const char *f = o->name;
  const cel_ext *x = c->p->env->ext;
  const node *tn = n->target;
  uint64_t fixed_cost;
  size_est ts = tn ? size_of(c, tn, t) : unknown();
  uint32_t na = n->nargs;
  *sized = false;
  /* the environment's own functions */
  if (x && x->call_cost && x->call_cost(c->p->env, f, &fixed_cost)) return add(fixed_cost, args);
  /* Kubernetes' library estimator */
  if (tn && named(f, list_fns)) {
    if (is(t->type, TY_LIST)) {
      est el = {0};
      uint64_t el_cost = 1;
      el.path = extend(&t->path, "@items"), el.type = t->type->p[0];
      if (is(el.type, TY_STRING) || is(el.type, TY_BYTES))
        el_cost = add(el_cost, factor(size_of(c, NULL, &el).max, TRAVERSAL));
      return add(mul(ts.max, el_cost), args);
    }
    return add(factor(ts.max, TRAVERSAL), args);
  }
  if (tn && named(f, same_size)) {
    *sized = true, *size = ts;
    return add(factor(ts.max, TRAVERSAL), args);
  }
  if (tn && !strcmp(f, "replace") && na >= 2) {
    size_est from = size_of(c, n->args[0], &a[0]), with = size_of(c, n->args[1], &a[1]);
    uint64_t count, kept = 0;
    if (from.min == 0)
      count = ts.max < UINT64_MAX ? ts.max + 1 : ts.max, kept = ts.max;
    else if (with.max <= from.min)
      count = 0, kept = ts.max;
    else
      count = (uint64_t)ceil((double)ts.max / (double)from.min);
    *sized = true, size->min = 0, size->max = add(mul(count, with.max), kept);
    return add(factor(ts.max, 2 * TRAVERSAL), args);
  }
  if (tn && !strcmp(f, "split")) {
    uint64_t max = ts.max;
    if (na > 1 && n->args[1]->kind == N_LIT && n->args[1]->lit.kind == CEL_INT &&
        !n->args[1]->folded)
      max = (uint64_t)n->args[1]->lit.u.i;
    *sized = true, size->min = 0, size->max = max;
    return add(factor(ts.max, 2 * TRAVERSAL), args);
  }
  if (tn && !strcmp(f, "join")) {
    size_est sz = {0, 0};
    if (is(t->type, TY_LIST)) {
      est el = {0};
      size_est es;
      el.path = extend(&t->path, "@items"), el.type = t->type->p[0];
      es = size_of(c, NULL, &el);
      sz.min = mul(ts.min, es.min), sz.max = mul(ts.max, es.max);
    }
    if (na > 0) {
      size_est sep = size_of(c, n->args[0], &a[0]);
      sz.min = add(sz.min, mul(sep.min, ts.min ? ts.min - 1 : 0));
      sz.max = add(sz.max, mul(sep.max, ts.max ? ts.max - 1 : 0));
    }
    *sized = true, *size = sz;
    return add(factor(sz.max, TRAVERSAL), args);
  }
  if (tn && (!strcmp(f, "find") || !strcmp(f, "findAll")) && na >= 1) {
    uint64_t str = factor(add(ts.max, 1), TRAVERSAL);
    uint64_t re = factor(size_of(c, n->args[0], &a[0]).max, REGEX_LEN);
    *sized = true, size->min = 0, size->max = ts.max;
    return add(mul(str, re), args);
  }
  if (named(f, nominal)) return add(1, args);
  if (!strcmp(f, "_==_") && na == 2 && a[0].type == a[1].type &&
      (is(a[0].type, TY_QUANTITY) || is(a[0].type, TY_SEMVER)))
    return add(1, args);
  /* cel-go's own */
  if (!strcmp(f, "format") && tn) return add(factor(ts.max, TRAVERSAL), args);
  if (!strcmp(f, "bytes") && na == 1 && is(o->params[0], TY_STRING)) {
    size_est s = size_of(c, n->args[0], &a[0]);
    *sized = true, size->min = s.min, size->max = mul(s.max, 4);
    return add(factor(s.max, TRAVERSAL), args);
  }
  if (!strcmp(f, "string") && na == 1 && is(o->params[0], TY_BYTES)) {
    size_est s = size_of(c, n->args[0], &a[0]);
    *sized = true, size->min = s.min / 4, size->max = s.max;
    return add(factor(s.max, TRAVERSAL), args);
  }
  if (!strcmp(f, "strings.quote") && na == 1) {
    size_est s = size_of(c, n->args[0], &a[0]);
    *sized = true, size->min = add(s.min, 2), size->max = add(mul(s.max, 2), 2);
    return add(factor(s.max, TRAVERSAL), args);
  }
  if ((!strcmp(f, "startsWith") || !strcmp(f, "endsWith")) && tn && na == 1 &&
      is(o->params[0], TY_STRING))
    return add(factor(size_of(c, n->args[0], &a[0]).max, TRAVERSAL), args);
  if (!strcmp(f, "@in") && na == 2 && is(o->params[1], TY_LIST))
    return add(size_of(c, n->args[1], &a[1]).max, args);
  if (!strcmp(f, "matches") && ((tn && na == 1) || (!tn && na == 2))) {
    size_est s = tn ? ts : size_of(c, n->args[0], &a[0]);
    const node *rn = tn ? n->args[0] : n->args[1];
    uint64_t str = factor(add(s.max, 1), TRAVERSAL);
    uint64_t re = factor(size_of(c, rn, tn ? &a[0] : &a[1]).max, REGEX_LEN);
    return add(mul(str, re), args);
  }
  if (!strcmp(f, "contains") && tn && na == 1 && is(o->params[0], TY_STRING))
    return add(mul(factor(ts.max, TRAVERSAL), factor(size_of(c, n->args[0], &a[0]).max, TRAVERSAL)),
               args);
  if (!strcmp(f, "_+_") && na == 2 &&
      (is(o->params[0], TY_STRING) || is(o->params[0], TY_BYTES) || is(o->params[0], TY_LIST))) {
    size_est l = size_of(c, n->args[0], &a[0]), r = size_of(c, n->args[1], &a[1]);
    *sized = true, size->min = add(l.min, r.min), size->max = add(l.max, r.max);
    if (is(o->params[0], TY_LIST)) return add(1, args);
    return add(factor(size->max, TRAVERSAL), args);
  }
  if (na == 2 &&
      (!strcmp(f, "_==_") || !strcmp(f, "_!=_") ||
       ((!strcmp(f, "_<_") || !strcmp(f, "_<=_") || !strcmp(f, "_>_") || !strcmp(f, "_>=_")) &&
        (is(o->params[0], TY_STRING) || is(o->params[0], TY_BYTES))))) {
    uint64_t l = size_of(c, n->args[0], &a[0]).max, r = size_of(c, n->args[1], &a[1]).max;
    return add(factor(l < r ? l : r, TRAVERSAL), args);
  }
  return add(1, args);
}

static void call(coster *c, const node *n, est *out) {
  est t = {0}, a[CEL_MAX_ARGS];
  const cel_type *at[CEL_MAX_ARGS + 1];
  uint32_t na = 0;
  uint64_t args = 0, best = 0;
  bool any = false, any_size = false;
  size_est size = {0, 0};
  if (n->target) walk(c, n->target, &t), at[na++] = n->target->type;
  for (uint32_t i = 0; i < n->nargs && i < CEL_MAX_ARGS; i++) {
    memset(&a[i], 0, sizeof a[i]);
    walk(c, n->args[i], &a[i]);
    args = add(args, a[i].cost);
    at[na++] = n->args[i]->type;
  }
  for (uint32_t i = 0; i < n->novl; i++) {
    bool sized;
    size_est s;
    uint64_t k;
    if (!cel__overload_applies(n->ovl[i], at, na)) continue;
    k = call_cost(c, n, n->ovl[i], &t, a, args, &sized, &s);
    if (!any || k > best) best = k;
    if (sized) size = any_size ? size_union(size, s) : s, any_size = true;
    any = true;
  }
  out->cost = add(t.cost, any ? best : add(1, args));
  out->sized = any_size, out->size = size;
}

/* Iteration variables: single (list items or map keys) or two (index or key, then value). */
static void bind_iter_vars(coster *c, const node *n, const est *r) {
  bool list = is(r->type, TY_LIST);
  local *v1 = &c->locals[n->local], *v2 = n->v2 ? &c->locals[n->local + 1] : NULL;
  memset(v1, 0, sizeof *v1);
  if (!v2) {
    v1->path = extend(&r->path, list ? "@items" : "@keys");
    if (r->entries) v1->sized = true, v1->size = list ? r->val : r->key;
    return;
  }
  memset(v2, 0, sizeof *v2);
  if (!list) {
    v1->path = extend(&r->path, "@keys");
    if (r->entries) v1->sized = true, v1->size = r->key;
  }
  v2->path = extend(&r->path, list ? "@items" : "@values");
  if (r->entries) v2->sized = true, v2->size = r->val;
}

static void comprehension(coster *c, const node *n, est *out) {
  est r = {0}, body = {0}, filter = {0};
  uint64_t init = 0, loop = 0, step, result = 1, p = 0, e;
  size_est count;
  walk(c, n->target, &r);
  count = size_of(c, n->target, &r);
  if (n->local >= 0 && n->local + (n->v2 ? 1 : 0) < CEL_MAX_LOCALS) bind_iter_vars(c, n, &r);
  if (n->filter) walk(c, n->filter, &filter), p = filter.cost;
  walk(c, n->args[0], &body);
  e = body.cost;
  switch (n->ck) {
  case C_ALL: /* loop @not_strictly_false(acc), step acc && e */
    loop = 2, step = add(1, e);
    break;
  case C_EXISTS: /* loop @not_strictly_false(!acc), step acc || e */
    loop = 3, step = add(1, e);
    break;
  case C_EXISTS_ONE: /* step e ? acc + 1 : acc, result acc == 1 */
    step = add(e, 2), result = 2;
    break;
  case C_FILTER: /* init [], step p ? acc + [x] : acc */
    init = LIST_CREATE, step = add(p, 13);
    break;
  case C_MAP: /* init [], step acc + [e] (behind p ? ... : acc with a filter) */
  case C_TRANSFORM_LIST:
    init = LIST_CREATE, step = add(12, e);
    if (n->filter) step = add(p, step);
    break;
  case C_TRANSFORM_MAP:   /* init {}, step cel.@mapInsert(acc, k, e) */
  case C_TRANSFORM_ENTRY: /* init {}, step cel.@mapInsert(acc, e) */
    init = MAP_CREATE, step = add(n->ck == C_TRANSFORM_MAP ? 3 : 2, e);
    if (n->filter) step = add(p, step);
    break;
  default:
    step = add(1, e);
  }
  out->cost = add(add(add(r.cost, init), result), mul(count.max, add(loop, step)));
  out->sized = true;
  out->size = init ? count : fixed(1); /* built containers hold at most one entry per item */
}

static void walk(coster *c, const node *n, est *out) {
  memset(out, 0, sizeof *out);
  if (!n) return;
  out->type = n->type;
  switch (n->kind) {
  case N_LIT:
    literal(n, out);
    break;
  case N_IDENT:
    out->cost = 1;
    if (n->local >= 0 && n->local < CEL_MAX_LOCALS)
      out->path = c->locals[n->local].path;
    else if (n->var >= 0)
      out->path.e[0] = n->name, out->path.n = 1;
    break;
  case N_SELECT: {
    est t;
    walk(c, n->target, &t);
    if (n->test_only) { /* has(): the presence test costs one, like a select */
      out->cost = add(t.cost, 1);
    } else if (n->opt) { /* a.?b is the call _?._(a, "b") */
      out->cost = add(t.cost, 1);
    } else {
      const cel_type *tt = n->target->type;
      bool step = is(tt, TY_MAP) || is(tt, TY_OBJECT) || is(tt, TY_PARAM);
      out->cost = add(t.cost, step ? 1 : 0);
      out->path = extend(&t.path, n->name);
    }
    break;
  }
  case N_OBJLOOKUP: { /* object.field["v2"].name: select, index, select */
    est t;
    path p;
    walk(c, n->target, &t);
    out->cost = add(t.cost, 3);
    p = extend(&t.path, n->field);
    p = extend(&p, "@values");
    out->path = extend(&p, n->name);
    break;
  }
  case N_INDEX: {
    est t, k;
    walk(c, n->target, &t);
    walk(c, n->args[0], &k);
    out->cost = add(add(t.cost, k.cost), 1);
    if (!n->opt) out->path = extend(&t.path, is(n->target->type, TY_LIST) ? "@items" : "@values");
    break;
  }
  case N_CALL:
    call(c, n, out);
    break;
  case N_LIST:
  case N_MAP: {
    bool map = n->kind == N_MAP;
    out->cost = map ? MAP_CREATE : LIST_CREATE;
    out->sized = out->entries = true;
    out->size = fixed(map ? n->nargs / 2 : n->nargs);
    out->key = out->val = fixed(0);
    for (uint32_t i = 0; i < n->nargs; i++) {
      est x;
      size_est s;
      walk(c, n->args[i], &x);
      out->cost = add(out->cost, x.cost);
      s = size_of(c, n->args[i], &x);
      if (map && i % 2 == 0)
        out->key = i ? size_union(out->key, s) : s;
      else
        out->val = (map ? i > 1 : i > 0) ? size_union(out->val, s) : s;
    }
    break;
  }
  case N_COND: {
    est x[3];
    for (int i = 0; i < 3; i++) walk(c, n->args[i], &x[i]);
    out->cost = add(x[0].cost, x[1].cost > x[2].cost ? x[1].cost : x[2].cost);
    out->sized = true;
    out->size = size_union(size_of(c, n->args[1], &x[1]), size_of(c, n->args[2], &x[2]));
    break;
  }
  case N_AND:
  case N_OR: {
    est l, r;
    walk(c, n->args[0], &l);
    walk(c, n->args[1], &r);
    out->cost = add(l.cost, r.cost);
    break;
  }
  case N_COMP:
    comprehension(c, n, out);
    break;
  case N_BIND: { /* a comprehension over [] whose accumulator is the variable */
    est init, res;
    walk(c, n->args[0], &init);
    if (n->local >= 0 && n->local < CEL_MAX_LOCALS) {
      local *v = &c->locals[n->local];
      v->path = init.path;
      v->sized = known_size(c, n->args[0], &init, &v->size);
    }
    walk(c, n->args[1], &res);
    out->cost = add(add(LIST_CREATE, init.cost), res.cost);
    out->sized = known_size(c, n->args[1], &res, &out->size);
    break;
  }
  case N_OPTMAP: { /* t.hasValue() ? optional.of(cel.bind(v, t.value(), e)) : optional.none() */
    est t, e;
    walk(c, n->target, &t);
    if (n->local >= 0 && n->local < CEL_MAX_LOCALS) memset(&c->locals[n->local], 0, sizeof(local));
    walk(c, n->args[0], &e);
    out->cost = add(add(mul(t.cost, 2), e.cost), n->flat ? 12 : 13);
    break;
  }
  }
}

uint64_t cel_program_cost_estimate(const cel_program *p) {
  coster c;
  est e;
  memset(&c, 0, sizeof c);
  c.p = p;
  walk(&c, p->root, &e);
  return e.cost;
}
