/* cel/eval.c - compiling (parse + check) and evaluating programs.
 *
 * Evaluation walks the checked tree. Values made along the way live in the context's arena,
 * reset at the start of each evaluation. Errors are values (CEL_ERROR) that propagate through
 * strict functions and are absorbed by && and || as CEL specifies. Runtime cost is charged per
 * node, per comprehension iteration and by the functions themselves (string sizes, regexes);
 * exceeding the limit or the memory cap ends the evaluation with an error nothing can absorb. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

#define ARENA_CHUNK (64 * 1024) /* evaluation arena chunk: typical selectors fit in one */

/* ---- environments and programs ------------------------------------------------------------------
 */

cel_env *cel_env_new(void) {
  cel_env *e = ts_calloc(1, sizeof *e);
  if (!e) return NULL;
  ts_arena_init(&e->arena, 16 * 1024);
  cel__tytab_init(&e->types, NULL, &e->arena);
  if (!(e->container = ts_intern_cstr("")) || cel__registry_load(e) != TS_OK) {
    cel_env_free(e);
    return NULL;
  }
  return e;
}

void cel_env_free(cel_env *e) {
  if (!e) return;
  ts_vec_free(&e->vars);
  ts_free(e->ext_ovl);
  cel__tytab_free(&e->types);
  ts_arena_free(&e->arena);
  ts_free(e);
}

ts_rc cel_env_declare(cel_env *e, const char *name, const char *type, ts_err *err) {
  const cel_type *t = cel__ty_parse(&e->types, type, strlen(type), false);
  cel_var v;
  if (e->types.failed) return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (!t) return ts_err_set(err, TS_EINVAL, "declaration of %s: invalid type \"%s\"", name, type);
  v.name = ts_intern_cstr(name);
  v.type = t;
  for (size_t i = 0; i < e->vars.n; i++)
    if (e->vars.v[i].name == v.name) {
      e->vars.v[i] = v;
      return TS_OK;
    }
  return ts_vec_push(&e->vars, v) == TS_OK ? TS_OK : ts_err_set(err, TS_ENOMEM, "out of memory");
}

ts_rc cel_env_container(cel_env *e, const char *container, ts_err *err) {
  (void)err;
  e->container = ts_intern_cstr(container ? container : "");
  return TS_OK;
}

ts_rc cel_compile(const cel_env *e, const char *expr, int flags, cel_program **out, ts_err *err) {
  cel_program *p;
  size_t len = strlen(expr);
  size_t max = e->ext && e->ext->max_expr ? e->ext->max_expr : CEL_MAX_EXPR;
  ts_rc rc;
  *out = NULL;
  if (len > max)
    return ts_err_set(err, TS_ELIMIT, "expression is %zu bytes long, more than the %zu allowed",
                      len, max);
  if (!(p = ts_calloc(1, sizeof *p))) return ts_err_set(err, TS_ENOMEM, "out of memory");
  ts_arena_init(&p->arena, 4096);
  cel__tytab_init(&p->types, &e->types, &p->arena);
  p->env = e;
  p->len = len;
  if (!(p->text = ts_arena_strndup(&p->arena, expr, len))) {
    rc = ts_err_set(err, TS_ENOMEM, "out of memory");
    goto fail;
  }
  if ((rc = cel__parse(p->text, len, flags, &p->arena, &p->root, err)) != TS_OK) goto fail;
  if ((rc = cel__check(p, flags, err)) != TS_OK) goto fail;
  *out = p;
  return TS_OK;
fail:
  cel_program_free(p);
  return rc;
}

void cel_program_free(cel_program *p) {
  if (!p) return;
  cel__tytab_free(&p->types);
  ts_arena_free(&p->arena);
  ts_free(p);
}

const char *cel_program_type(const cel_program *p, char *out, size_t cap) {
  ts_buf b;
  ts_buf_init(&b, cap > 1 ? cap - 1 : 1);
  cel__ty_format(p->type, &b);
  snprintf(out, cap, "%.*s", (int)b.len, b.data ? b.data : "dyn");
  ts_buf_free(&b);
  return out;
}

/* ---- contexts
 * ------------------------------------------------------------------------------------------ */

cel_eval_ctx *cel_eval_ctx_new(void) {
  cel_eval_ctx *c = ts_calloc(1, sizeof *c);
  if (!c) return NULL;
  ts_arena_init(&c->arena, ARENA_CHUNK);
  c->mem_limit = CEL_DEFAULT_MEM;
  return c;
}

void cel_eval_ctx_free(cel_eval_ctx *c) {
  if (!c) return;
  cel__re_cache_free(c);
  ts_arena_free(&c->arena);
  ts_free(c);
}

void cel_eval_ctx_limits(cel_eval_ctx *c, uint64_t cost_limit, size_t memory_limit) {
  c->cost_limit = cost_limit;
  c->mem_limit = memory_limit ? memory_limit : CEL_DEFAULT_MEM;
}

uint64_t cel_eval_cost(const cel_eval_ctx *c) {
  return c->cost;
}

/* ---- evaluation
 * ---------------------------------------------------------------------------------- */

static cel_value eval(cel_run *ev, const node *n);

static cel_value limit_error(cel_run *ev) {
  if (ev->ctx->cost_limit && ev->ctx->cost > ev->ctx->cost_limit)
    return cel__err(ev, "operation cancelled: actual cost limit exceeded");
  return cel__err(ev, "operation cancelled: memory limit exceeded");
}

static bool is_err(const cel_value *v) {
  return v->kind == CEL_ERROR;
}

static cel_value opt_of(cel_run *ev, cel_value v) {
  cel_value *p = cel__alloc(ev, sizeof *p), r = cel_null();
  if (!p) return limit_error(ev);
  *p = v;
  r.kind = CEL_OPTIONAL;
  r.u.opt = p;
  return r;
}

static cel_value opt_none(void) {
  cel_value r = cel_null();
  r.kind = CEL_OPTIONAL;
  r.u.opt = NULL;
  return r;
}

static cel_value no_such_key(cel_run *ev, const cel_value *k) {
  if (k->kind == CEL_STRING) return cel__err(ev, "no such key: %.*s", (int)k->u.s.n, k->u.s.p);
  if (k->kind == CEL_INT) return cel__err(ev, "no such key: %lld", (long long)k->u.i);
  if (k->kind == CEL_UINT) return cel__err(ev, "no such key: %llu", (unsigned long long)k->u.u);
  if (k->kind == CEL_BOOL) return cel__err(ev, "no such key: %s", k->u.b ? "true" : "false");
  if (k->kind == CEL_DOUBLE) return cel__err(ev, "no such key: %g", k->u.d);
  return cel__err(ev, "no such key");
}

/* base[key] or base.key (field); opt: the ?. / [?] forms (optional result). */
static cel_value lookup(cel_run *ev, cel_value base, const cel_value *key, bool opt, bool field) {
  cel_value out;
  if (base.kind == CEL_OPTIONAL) { /* selecting into an optional: an optional result */
    if (!base.u.opt) return base;
    return lookup(ev, *base.u.opt, key, true, field);
  }
  if (base.kind == CEL_MAP) {
    if (cel_map_find(base.u.m, key, &out)) return opt ? opt_of(ev, out) : out;
    return opt ? opt_none() : no_such_key(ev, key);
  }
  if (base.kind == CEL_OBJECT && field) {
    bool present;
    out = base.u.o->type->field(ev, base.u.o, key->u.s.p, &present);
    if (opt) return present ? opt_of(ev, out) : opt_none();
    return out;
  }
  if (base.kind == CEL_LIST && !field) {
    int64_t i;
    if (key->kind == CEL_INT)
      i = key->u.i;
    else if (key->kind == CEL_UINT)
      i = key->u.u > (uint64_t)INT64_MAX ? -1 : (int64_t)key->u.u;
    else if (key->kind == CEL_DOUBLE && key->u.d == trunc(key->u.d) && fabs(key->u.d) < 9e18)
      i = (int64_t)key->u.d;
    else
      return cel__err(ev, "invalid_argument: unsupported index type %s", cel_type_name(key));
    if (i < 0 || (uint64_t)i >= base.u.l->n) {
      if (opt) return opt_none();
      return cel__err(ev, "invalid_argument: index out of bounds: %lld", (long long)i);
    }
    return opt ? opt_of(ev, base.u.l->v[i]) : base.u.l->v[i];
  }
  if (field)
    return cel__err(ev, "type '%s' does not support field selection", cel_type_name(&base));
  return cel__err(ev, "no such overload: %s[%s]", cel_type_name(&base), cel_type_name(key));
}

static cel_value eval_select(cel_run *ev, const node *n) {
  cel_value base = eval(ev, n->target), key;
  if (is_err(&base)) return base;
  key = cel_string(n->name, strlen(n->name));
  if (n->test_only) {
    cel_value out;
    if (base.kind == CEL_OPTIONAL) {
      if (!base.u.opt) return cel_bool(false);
      base = *base.u.opt;
    }
    (void)out;
    if (base.kind == CEL_MAP) return cel_bool(cel__map_has(base.u.m, &key));
    if (base.kind == CEL_OBJECT) {
      bool present;
      base.u.o->type->field(ev, base.u.o, n->name, &present);
      return cel_bool(present);
    }
    return cel__err(ev, "invalid type for field selection.");
  }
  return lookup(ev, base, &key, n->opt, true);
}

static cel_value eval_index(cel_run *ev, const node *n) {
  cel_value base = eval(ev, n->target), key;
  if (is_err(&base)) return base;
  key = eval(ev, n->args[0]);
  if (is_err(&key)) return key;
  return lookup(ev, base, &key, n->opt, false);
}

static cel_value eval_call(cel_run *ev, const node *n) {
  cel_value args[CEL_MAX_ARGS + 1];
  uint32_t na = 0;
  if (n->target) {
    args[na] = eval(ev, n->target);
    if (is_err(&args[na])) return args[na];
    na++;
  }
  for (uint32_t i = 0; i < n->nargs; i++) {
    args[na] = eval(ev, n->args[i]);
    if (is_err(&args[na])) return args[na];
    na++;
  }
  if (!cel__charge(ev, 1)) return limit_error(ev);
  for (uint32_t i = 0; i < n->novl; i++) {
    const cel_overload *o = n->ovl[i];
    uint32_t k = 0;
    while (k < na && cel__value_fits(&args[k], o->params[k])) k++;
    if (k == na) return o->fn(ev, args, na);
  }
  if (!n->novl && !cel__function_exists(ev->prog->env, n->name))
    return cel__err(ev, "unbound function: %s", n->name);
  return cel__no_overload(ev, n->name, args, na);
}

static cel_value eval_list(cel_run *ev, const node *n) {
  cel_value *v = n->nargs ? cel__alloc(ev, n->nargs * sizeof *v) : NULL;
  cel_list *l = cel__alloc(ev, sizeof *l);
  size_t k = 0;
  if ((n->nargs && !v) || !l) return limit_error(ev);
  for (uint32_t i = 0; i < n->nargs; i++) {
    cel_value x = eval(ev, n->args[i]);
    if (is_err(&x)) return x;
    if (n->optional && n->optional[i]) {
      if (x.kind != CEL_OPTIONAL)
        return cel__err(ev, "cannot initialize optional list element from non-optional value");
      if (!x.u.opt) continue;
      x = *x.u.opt;
    }
    v[k++] = x;
  }
  l->v = v, l->n = k;
  return cel_list_value(l);
}

static cel_value eval_map(cel_run *ev, const node *n) {
  uint32_t ne = n->nargs / 2;
  cel_value *k = ne ? cel__alloc(ev, ne * sizeof *k) : NULL,
            *v = ne ? cel__alloc(ev, ne * sizeof *v) : NULL;
  cel_map *m = cel__alloc(ev, sizeof *m);
  size_t cnt = 0;
  if ((ne && (!k || !v)) || !m) return limit_error(ev);
  memset(m, 0, sizeof *m);
  for (uint32_t i = 0; i < ne; i++) {
    cel_value key = eval(ev, n->args[2 * i]), val, dummy;
    if (is_err(&key)) return key;
    if (key.kind != CEL_INT && key.kind != CEL_UINT && key.kind != CEL_BOOL &&
        key.kind != CEL_STRING)
      return cel__err(ev, "unsupported key type: %s", cel_type_name(&key));
    val = eval(ev, n->args[2 * i + 1]);
    if (is_err(&val)) return val;
    if (n->optional && n->optional[i]) {
      if (val.kind != CEL_OPTIONAL)
        return cel__err(ev, "cannot initialize optional entry from non-optional value");
      if (!val.u.opt) continue;
      val = *val.u.opt;
    }
    m->k = k, m->v = v, m->n = cnt;
    if (cel_map_find(m, &key, &dummy)) return cel__err(ev, "Failed with repeated key");
    k[cnt] = key, v[cnt] = val, cnt++;
  }
  m->k = k, m->v = v, m->n = cnt;
  return cel_map_value(m);
}

/* a && b (and) or a || b: errors are absorbed by the deciding value on either side. */
static cel_value eval_logic(cel_run *ev, const node *n) {
  bool decide = n->kind == N_OR; /* the value that decides: true for ||, false for && */
  cel_value a = eval(ev, n->args[0]), b;
  if (ev->limit_hit) return limit_error(ev);
  if (a.kind == CEL_BOOL && a.u.b == decide) return a;
  b = eval(ev, n->args[1]);
  if (ev->limit_hit) return limit_error(ev);
  if (b.kind == CEL_BOOL && b.u.b == decide) return b;
  if (is_err(&a)) return a;
  if (is_err(&b)) return b;
  if (a.kind != CEL_BOOL || b.kind != CEL_BOOL) {
    cel_value args[2] = {a, b};
    return cel__no_overload(ev, decide ? "_||_" : "_&&_", args, 2);
  }
  return cel_bool(!decide);
}

static const char *go_type(const cel_value *v) {
  switch (v->kind) {
  case CEL_BOOL:
    return "types.Bool";
  case CEL_INT:
    return "types.Int";
  case CEL_UINT:
    return "types.Uint";
  case CEL_DOUBLE:
    return "types.Double";
  case CEL_STRING:
    return "types.String";
  case CEL_BYTES:
    return "types.Bytes";
  case CEL_NULL:
    return "types.Null";
  case CEL_SEMVER:
    return "cel.Semver";
  case CEL_QUANTITY:
    return "cel.Quantity";
  case CEL_DURATION:
    return "types.Duration";
  case CEL_TIMESTAMP:
    return "types.Timestamp";
  default:
    return cel_type_name(v);
  }
}

/* The growing result of a map / filter / transform comprehension. */
typedef struct acc {
  cel_value *k, *v; /* keys (maps) and values */
  size_t n, cap;    /* entries */
} acc;

static bool acc_push(cel_run *ev, acc *a, const cel_value *k, const cel_value *v) {
  if (a->n == a->cap) {
    size_t ncap = a->cap ? a->cap * 2 : 8;
    cel_value *nv = cel__alloc(ev, ncap * sizeof *nv),
              *nk = k ? cel__alloc(ev, ncap * sizeof *nk) : NULL;
    if (!nv || (k && !nk)) return false;
    if (a->n) memcpy(nv, a->v, a->n * sizeof *nv);
    if (k && a->n) memcpy(nk, a->k, a->n * sizeof *nk);
    a->v = nv, a->k = nk, a->cap = ncap;
  }
  if (k) a->k[a->n] = *k;
  a->v[a->n++] = *v;
  return true;
}

static cel_value acc_map(cel_run *ev, acc *a) {
  cel_map *m = cel__alloc(ev, sizeof *m);
  if (!m) return limit_error(ev);
  memset(m, 0, sizeof *m);
  m->k = a->k, m->v = a->v, m->n = a->n;
  return cel_map_value(m);
}

static cel_value eval_comp(cel_run *ev, const node *n) {
  cel_value range = eval(ev, n->target), err = cel_null();
  const cel_value *keys = NULL;
  size_t count;
  bool is_map, seen_err = false, two = n->v2 != NULL;
  int64_t found = 0;
  acc out = {0};
  cel_value *slot = &ev->ctx->locals[n->local];
  if (is_err(&range)) return range;
  if (range.kind == CEL_LIST) {
    is_map = false, count = range.u.l->n, keys = range.u.l->v;
  } else if (range.kind == CEL_MAP) {
    is_map = true;
    if (range.u.m->ops) {
      if (!range.u.m->ops->keys(ev, range.u.m, &keys, &count)) return limit_error(ev);
    } else {
      keys = range.u.m->k, count = range.u.m->n;
    }
  } else {
    return cel__err(ev, "got '%s', expected iterable type", go_type(&range));
  }
  for (size_t i = 0; i < count; i++) {
    cel_value x, k = is_map ? keys[i] : cel_int((int64_t)i), v = keys[i], keep;
    if (!cel__charge(ev, 1) || ev->limit_hit) return limit_error(ev);
    if (is_map && two && !cel_map_find(range.u.m, &k, &v)) continue;
    slot[0] = two ? k : v;
    if (two) slot[1] = v;
    if (n->filter && n->ck != C_FILTER) {
      cel_value f = eval(ev, n->filter);
      if (is_err(&f)) return f;
      if (f.kind != CEL_BOOL)
        return cel__err(ev, "no such overload: filter on %s", cel_type_name(&f));
      if (!f.u.b) continue;
    }
    x = eval(ev, n->ck == C_FILTER ? n->filter : n->args[0]);
    if (ev->limit_hit) return limit_error(ev);
    switch (n->ck) {
    case C_ALL:
    case C_EXISTS: {
      bool decide = n->ck == C_EXISTS;
      if (x.kind == CEL_BOOL) {
        if (x.u.b == decide) return x;
      } else if (!seen_err) {
        seen_err = true;
        err = is_err(&x) ? x : cel__no_overload(ev, decide ? "_||_" : "_&&_", &x, 1);
      }
      break;
    }
    case C_EXISTS_ONE:
      if (is_err(&x)) return x;
      if (x.kind != CEL_BOOL) return cel__no_overload(ev, "exists_one", &x, 1);
      found += x.u.b;
      break;
    case C_MAP:
    case C_TRANSFORM_LIST:
      if (is_err(&x)) return x;
      if (!acc_push(ev, &out, NULL, &x)) return limit_error(ev);
      break;
    case C_FILTER:
      if (is_err(&x)) return x;
      if (x.kind != CEL_BOOL) return cel__no_overload(ev, "filter", &x, 1);
      keep = is_map ? k : v;
      if (x.u.b && !acc_push(ev, &out, NULL, &keep)) return limit_error(ev);
      break;
    case C_TRANSFORM_MAP:
      if (is_err(&x)) return x;
      if (!acc_push(ev, &out, &k, &x)) return limit_error(ev);
      break;
    case C_TRANSFORM_ENTRY:
      if (is_err(&x)) return x;
      if (x.kind != CEL_MAP || x.u.m->ops || x.u.m->n != 1)
        return cel__err(ev, "transformMapEntry: expected a map of one entry, got %s",
                        cel_type_name(&x));
      {
        cel_map tmp;
        cel_value dummy;
        memset(&tmp, 0, sizeof tmp);
        tmp.k = out.k, tmp.v = out.v, tmp.n = out.n;
        if (out.n && cel_map_find(&tmp, &x.u.m->k[0], &dummy))
          return cel__err(ev, "insert failed: key %s already exists", cel_type_name(&x.u.m->k[0]));
        if (!acc_push(ev, &out, &x.u.m->k[0], &x.u.m->v[0])) return limit_error(ev);
      }
      break;
    }
  }
  switch (n->ck) {
  case C_ALL:
  case C_EXISTS:
    return seen_err ? err : cel_bool(n->ck == C_ALL);
  case C_EXISTS_ONE:
    return cel_bool(found == 1);
  case C_MAP:
  case C_TRANSFORM_LIST:
  case C_FILTER:
    return cel__list(ev, out.v, out.n);
  default:
    return acc_map(ev, &out);
  }
}

static cel_value eval_optmap(cel_run *ev, const node *n) {
  cel_value t = eval(ev, n->target), r;
  if (is_err(&t)) return t;
  if (t.kind != CEL_OPTIONAL) return cel__no_overload(ev, n->flat ? "optFlatMap" : "optMap", &t, 1);
  if (!t.u.opt) return t;
  ev->ctx->locals[n->local] = *t.u.opt;
  r = eval(ev, n->args[0]);
  if (is_err(&r) || !n->flat) return is_err(&r) ? r : opt_of(ev, r);
  if (r.kind != CEL_OPTIONAL) return cel__no_overload(ev, "optFlatMap", &r, 1);
  return r;
}

static cel_value eval(cel_run *ev, const node *n) {
  cel_value c;
  switch (n->kind) {
  case N_LIT:
    return n->lit;
  case N_IDENT:
    if (!cel__charge(ev, 1)) return limit_error(ev);
    if (n->local >= 0) return ev->ctx->locals[n->local];
    if (n->var >= 0 && ev->var_vals && ev->var_vals[n->var].kind != (cel_kind)-1)
      return ev->var_vals[n->var];
    return cel__err(ev, "no such attribute: %s", n->name);
  case N_SELECT:
    if (!cel__charge(ev, 1)) return limit_error(ev);
    return eval_select(ev, n);
  case N_INDEX:
    if (!cel__charge(ev, 1)) return limit_error(ev);
    return eval_index(ev, n);
  case N_CALL:
    return eval_call(ev, n);
  case N_LIST:
    return eval_list(ev, n);
  case N_MAP:
    return eval_map(ev, n);
  case N_COND:
    c = eval(ev, n->args[0]);
    if (is_err(&c)) return c;
    if (c.kind != CEL_BOOL) return cel__no_overload(ev, "_?_:_", &c, 1);
    return eval(ev, n->args[c.u.b ? 1 : 2]);
  case N_AND:
  case N_OR:
    return eval_logic(ev, n);
  case N_COMP:
    return eval_comp(ev, n);
  case N_BIND:
    ev->ctx->locals[n->local] = eval(ev, n->args[0]); /* an error waits until it is used */
    return eval(ev, n->args[1]);
  case N_OPTMAP:
    return eval_optmap(ev, n);
  case N_OBJLOOKUP:
    if (!cel__charge(ev, 3)) return limit_error(ev); /* the select, index and select it replaces */
    c = eval(ev, n->target);
    if (is_err(&c)) return c;
    if (c.kind != CEL_OBJECT) return cel__err(ev, "no such key: %s", n->v2);
    return c.u.o->type->lookup(ev, c.u.o, n->field, n->v2, n->name);
  }
  return cel__err(ev, "unknown expression");
}

#define MAX_VARS 64 /* declared variables resolved per evaluation without allocating */

ts_rc cel_eval(const cel_program *p, cel_eval_ctx *ctx, const cel_binding *vars, size_t n,
               cel_value *out, ts_err *err) {
  cel_run ev;
  cel_value vals[MAX_VARS];
  size_t nv = p->env->vars.n;
  ts_arena_reset(&ctx->arena);
  ctx->cost = 0;
  ctx->re_budget = CEL_RE_BUDGET;
  memset(&ev, 0, sizeof ev);
  ev.ctx = ctx, ev.prog = p, ev.vars = vars, ev.nvars = n;
  if (nv > MAX_VARS) nv = MAX_VARS;
  for (size_t i = 0; i < nv; i++) {
    vals[i].kind = (cel_kind)-1;
    for (size_t k = 0; k < n; k++)
      if (vars[k].name == p->env->vars.v[i].name || !strcmp(vars[k].name, p->env->vars.v[i].name)) {
        vals[i] = vars[k].value;
        break;
      }
  }
  ev.var_vals = vals;
  *out = eval(&ev, p->root);
  if (ev.limit_hit) *out = limit_error(&ev);
  if (out->kind == CEL_ERROR) {
    ts_err_set(err, TS_EINVAL, "%.*s", (int)out->u.s.n, out->u.s.p);
    return TS_EINVAL;
  }
  return TS_OK;
}
