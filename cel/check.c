/* cel/check.c - resolution and type checking.
 *
 * One walk over the tree resolves every name (local comprehension and bind variables, declared
 * variables with container-qualified lookup, type names, qualified function names), gives
 * locals their slots, finds each call's candidate overloads, and computes a static type for
 * every node. Types are gradual: dyn where nothing better is known, so only what is certainly
 * wrong is rejected, with cel-go's messages ("undeclared reference to 'x' (in container '')",
 * "found no matching overload for '_+_' applied to '(int, string)'"). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

typedef struct scope_var {
  const char *name;     /* interned */
  const cel_type *type; /* its type */
} scope_var;

typedef struct checker {
  cel_program *p;                   /* the program */
  const cel_env *env;               /* declarations */
  ts_err *err;                      /* first error */
  bool failed;                      /* an error was reported */
  bool typed;                       /* type checking on (not CEL_NO_CHECK) */
  bool homogeneous;                 /* Kubernetes: list and map literals of one type */
  scope_var locals[CEL_MAX_LOCALS]; /* in scope, innermost last */
  int nlocals;                      /* entries */
  int depth;                        /* recursion */
} checker;

static const cel_type *dyn(void) {
  return cel__ty(TY_DYN);
}

static void report(checker *c, uint32_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void report(checker *c, uint32_t pos, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  if (c->failed) return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->failed = true;
  cel__error_at(c->err, TS_ETYPE, c->p->text, c->p->len, pos, "%s", msg);
}

static void type_text(const cel_type *t, char *out, size_t cap) {
  ts_buf b;
  ts_buf_init(&b, cap);
  cel__ty_format(t, &b);
  snprintf(out, cap, "%.*s", (int)b.len, b.data ? b.data : "");
  ts_buf_free(&b);
}

/* ---- names ------------------------------------------------------------------------------------
 */

static int find_local(const checker *c, const char *name) {
  for (int i = c->nlocals - 1; i >= 0; i--)
    if (c->locals[i].name == name) return i;
  return -1;
}

static int find_var(const cel_env *env, const char *name, size_t n) {
  for (size_t i = 0; i < env->vars.n; i++)
    if (strlen(env->vars.v[i].name) == n && !memcmp(env->vars.v[i].name, name, n)) return (int)i;
  return -1;
}

/* A declared variable named name (qualified by the container as cel-go resolves it). */
static int resolve_var(const checker *c, const char *name) {
  const char *cont = c->env->container;
  char full[512];
  size_t cn = strlen(cont);
  if (name[0] == '.') return find_var(c->env, name + 1, strlen(name + 1));
  while (cn) {
    int v;
    snprintf(full, sizeof full, "%.*s.%s", (int)cn, cont, name);
    if ((v = find_var(c->env, full, strlen(full))) >= 0) return v;
    while (cn && cont[cn - 1] != '.') cn--;
    if (cn) cn--; /* drop the last component */
  }
  return find_var(c->env, name, strlen(name));
}

static const char *const type_names[] = {"int",
                                         "uint",
                                         "double",
                                         "bool",
                                         "string",
                                         "bytes",
                                         "list",
                                         "map",
                                         "null_type",
                                         "type",
                                         "google.protobuf.Duration",
                                         "google.protobuf.Timestamp",
                                         "optional_type",
                                         "dyn"};

/* The type a type name denotes: `list` is list(dyn), `map` map(dyn, dyn), as cel-go's
 * standard declarations have them. */
static const cel_type *denoted_type(cel_tytab *t, const char *name) {
  const cel_type *dyn = cel__ty(TY_DYN);
  if (!strcmp(name, "list")) return cel__ty1(t, TY_LIST, dyn);
  if (!strcmp(name, "map")) return cel__ty2(t, TY_MAP, dyn, dyn);
  if (!strcmp(name, "optional_type")) return cel__ty1(t, TY_OPTIONAL, dyn);
  if (!strcmp(name, "type")) return cel__ty1(t, TY_TYPE, NULL);
  return cel__ty_parse(t, name, strlen(name), false);
}

/* A type name used as a value (type(x) == int). Unchecked, `dyn` is no value: cel-go's runtime
 * knows the types of values (its type provider), and no value has type dyn, so a bare `dyn`
 * is an unknown variable there. */
static bool type_literal(const checker *c, node *n) {
  const char *name = n->name[0] == '.' ? n->name + 1 : n->name;
  if (!c->typed && !strcmp(name, "dyn")) return false;
  for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
    if (!strcmp(name, type_names[i])) {
      n->kind = N_LIT;
      memset(&n->lit, 0, sizeof n->lit);
      n->lit.kind = CEL_TYPE;
      n->lit.u.type = ts_intern_cstr(!strcmp(name, "dyn") ? "dyn" : name);
      n->type = cel__ty1(&c->p->types, TY_TYPE, denoted_type(&c->p->types, name)); /* as cel-go */
      return true;
    }
  return false;
}

/* The dotted name of an ident/select chain (a.b.c), or false when it is not one. */
static bool dotted(const node *n, char *out, size_t cap) {
  if (n->kind == N_IDENT) return (size_t)snprintf(out, cap, "%s", n->name) < cap;
  if (n->kind != N_SELECT || n->test_only || n->opt || !dotted(n->target, out, cap)) return false;
  size_t l = strlen(out);
  return (size_t)snprintf(out + l, cap - l, ".%s", n->name) < cap - l;
}

/* ---- types -------------------------------------------------------------------------------- */

typedef struct binding {
  const char *param[4];     /* parameter names */
  const cel_type *bound[4]; /* their types */
  int n;                    /* entries */
} binding;

static const cel_type *subst(cel_tytab *tt, const cel_type *t, const binding *b);

/* Whether argument type a fits parameter type p, binding parameters. */
static bool unify(const cel_type *p, const cel_type *a, binding *b) {
  if (p->kind == TY_PARAM) {
    for (int i = 0; i < b->n; i++)
      if (b->param[i] == p->name) {
        if (b->bound[i]->kind == TY_DYN) b->bound[i] = a;
        return a->kind == TY_DYN || b->bound[i]->kind == TY_DYN || b->bound[i] == a ||
               unify(b->bound[i], a, b);
      }
    if (b->n < 4) b->param[b->n] = p->name, b->bound[b->n++] = a;
    return true;
  }
  if (p->kind == TY_DYN || a->kind == TY_DYN) return true;
  if (p->kind != a->kind) return false;
  if (p->kind == TY_OBJECT) return p->name == a->name;
  for (int i = 0; i < 2; i++) {
    if (!p->p[i] || !a->p[i]) continue;
    if (!unify(p->p[i], a->p[i], b)) return false;
  }
  return true;
}

bool cel__overload_applies(const cel_overload *o, const cel_type *const *at, uint32_t na) {
  binding b = {{0}, {0}, 0};
  for (uint32_t k = 0; k < na && k < o->nparams; k++)
    if (!unify(o->params[k], at[k], &b)) return false;
  return true;
}

static const cel_type *subst(cel_tytab *tt, const cel_type *t, const binding *b) {
  if (!t) return NULL;
  if (t->kind == TY_PARAM) {
    for (int i = 0; i < b->n; i++)
      if (b->param[i] == t->name) return b->bound[i];
    return dyn();
  }
  if (t->kind == TY_LIST || t->kind == TY_OPTIONAL)
    return cel__ty1(tt, t->kind, subst(tt, t->p[0], b));
  if (t->kind == TY_MAP) return cel__ty2(tt, TY_MAP, subst(tt, t->p[0], b), subst(tt, t->p[1], b));
  if (t->kind == TY_TYPE && t->p[0]) return cel__ty1(tt, TY_TYPE, subst(tt, t->p[0], b));
  return t;
}

static const cel_type *join(const cel_type *a, const cel_type *b) {
  if (!a) return b;
  return a == b ? a : dyn();
}

/* ---- the walk ----------------------------------------------------------------------------------
 */

static void walk(checker *c, node *n);

static bool push_local(checker *c, const char *name, const cel_type *t, node *at) {
  if (c->nlocals == CEL_MAX_LOCALS) {
    report(c, at->pos, "too many nested comprehensions (more than %d variables)", CEL_MAX_LOCALS);
    return false;
  }
  c->locals[c->nlocals].name = name;
  c->locals[c->nlocals].type = t;
  c->nlocals++;
  if (c->nlocals > c->p->nlocals) c->p->nlocals = c->nlocals;
  return true;
}

static void ident(checker *c, node *n) {
  int l = n->name[0] == '.' ? -1 : find_local(c, n->name);
  if (l >= 0) {
    n->local = l;
    n->type = c->locals[l].type;
    return;
  }
  if ((n->var = resolve_var(c, n->name)) >= 0) {
    n->type = c->env->vars.v[n->var].type;
    return;
  }
  if (type_literal(c, n)) return;
  if (!c->typed) { /* unchecked: evaluating it is an error, which || and && may absorb */
    n->type = dyn();
    return;
  }
  report(c, n->pos, "undeclared reference to '%s' (in container '%s')",
         n->name[0] == '.' ? n->name + 1 : n->name, c->env->container);
}

/* a.b.c where a.b (or a.b.c) is a declared qualified variable: rewrite the prefix as one
 * identifier. Returns true when it did. */
static bool qualified(checker *c, node *n) {
  char name[512];
  node *x = n;
  if (!dotted(n, name, sizeof name)) return false;
  /* the root identifier as a local wins over any qualified name */
  {
    node *r = n;
    while (r->kind == N_SELECT) r = r->target;
    if (r->name[0] != '.' && find_local(c, r->name) >= 0) return false;
  }
  while (x->kind == N_SELECT) {
    int v = resolve_var(c, name);
    if (v >= 0) {
      x->kind = N_IDENT;
      x->name = ts_intern_cstr(name);
      x->target = NULL;
      x->var = v;
      x->type = c->env->vars.v[v].type;
      return true;
    }
    name[strlen(name) - strlen(x->name) - 1] = '\0';
    x = x->target;
  }
  return false;
}

static void select_type(checker *c, node *n) {
  const cel_type *t = n->target->type;
  const cel_type *r = dyn();
  char tt[128];
  if (!c->typed || !t) {
    n->type = dyn();
    return;
  }
  bool through = false; /* selecting into an optional gives an optional */
  if (t->kind == TY_OPTIONAL) t = t->p[0], through = true;
  switch (t->kind) {
  case TY_DYN:
    break;
  case TY_MAP:
    if (t->p[0]->kind != TY_STRING && t->p[0]->kind != TY_DYN) {
      type_text(t, tt, sizeof tt);
      report(c, n->pos, "type '%s' does not support field selection", tt);
    }
    r = t->p[1];
    break;
  case TY_OBJECT: {
    const cel_ext_object *x = cel__ext_object(c->env, t);
    if (x && !(r = x->field_type(c->env, &c->p->types, n->name))) {
      r = dyn();
      report(c, n->pos, "undefined field '%s'", n->name);
    }
    break;
  }
  default:
    type_text(t, tt, sizeof tt);
    report(c, n->pos, "type '%s' does not support field selection", tt);
  }
  if (n->test_only)
    r = cel__ty(TY_BOOL);
  else if (n->opt || through)
    r = cel__ty1(&c->p->types, TY_OPTIONAL, r);
  n->type = r;
}

static void index_type(checker *c, node *n) {
  const cel_type *t = n->target->type, *k = n->args[0]->type, *r = dyn();
  if (!c->typed) {
    n->type = dyn();
    return;
  }
  bool through = t->kind == TY_OPTIONAL;
  if (through) t = t->p[0];
  if (t->kind == TY_LIST) {
    if (k->kind != TY_INT && k->kind != TY_UINT && k->kind != TY_DYN && k->kind != TY_DOUBLE) {
      char kt[128];
      type_text(k, kt, sizeof kt);
      report(c, n->pos, "found no matching overload for '_[_]' applied to '(list, %s)'", kt);
    }
    r = t->p[0];
  } else if (t->kind == TY_MAP) {
    r = t->p[1];
  } else if (t->kind != TY_DYN) {
    char tt[128];
    type_text(t, tt, sizeof tt);
    report(c, n->pos, "found no matching overload for '_[_]' applied to '(%s, ...)'", tt);
  }
  n->type = n->opt || through ? cel__ty1(&c->p->types, TY_OPTIONAL, r) : r;
}

/* The qualified function name of call n when its target is a namespace (optional.of). */
static bool namespaced(checker *c, node *n) {
  char name[512];
  size_t l;
  if (!n->target || !dotted(n->target, name, sizeof name)) return false;
  {
    node *r = n->target;
    while (r->kind == N_SELECT) r = r->target;
    if (find_local(c, r->name) >= 0 || resolve_var(c, name) >= 0) return false;
    if (r->kind == N_IDENT && resolve_var(c, r->name) >= 0) return false;
  }
  l = strlen(name);
  snprintf(name + l, sizeof name - l, ".%s", n->name);
  if (!cel__function_exists(c->env, name[0] == '.' ? name + 1 : name)) return false;
  n->name = ts_intern_cstr(name[0] == '.' ? name + 1 : name);
  n->target = NULL;
  return true;
}

static void call_type(checker *c, node *n) {
  const cel_type *at[CEL_MAX_ARGS + 1];
  uint32_t na = 0, count;
  const cel_type *r = NULL;
  bool method = n->target != NULL;
  if (method) at[na++] = n->target->type;
  for (uint32_t i = 0; i < n->nargs; i++) at[na++] = n->args[i]->type;
  n->ovl = cel__lookup(c->env, &c->p->arena, n->name, method, na, &count);
  n->novl = count;
  if (!count && c->typed && !cel__function_exists(c->env, n->name)) {
    report(c, n->pos, "undeclared reference to '%s' (in container '%s')", n->name,
           c->env->container);
    return;
  }
  if (!c->typed) {
    n->type = dyn();
    return;
  }
  {
    uint32_t matched = 0, which = 0;
    for (uint32_t i = 0; i < count; i++) {
      binding b = {{0}, {0}, 0};
      bool ok = true;
      for (uint32_t k = 0; ok && k < na; k++) ok = unify(n->ovl[i]->params[k], at[k], &b);
      if (ok) r = join(r, subst(&c->p->types, n->ovl[i]->result, &b)), matched++, which = i;
    }
    if (matched == 1) { /* only one can apply: evaluation goes straight to it */
      n->ovl = &n->ovl[which];
      n->novl = 1;
    }
  }
  if (!r) {
    char args[400];
    size_t at_len = 0;
    args[0] = '\0';
    for (uint32_t k = 0; k < na && at_len < sizeof args - 130; k++) {
      char tt[128];
      type_text(at[k], tt, sizeof tt);
      at_len += (size_t)snprintf(args + at_len, sizeof args - at_len, "%s%s", k ? ", " : "", tt);
    }
    report(c, n->pos, "found no matching overload for '%s' applied to '(%s)'", n->name, args);
    return;
  }
  n->type = r;
}

/* quantity("40Gi"), semver("1.2.3"), timestamp(...), duration(...) of literals are evaluated
 * once here: selectors compare against such constants on every device. An argument that does
 * not parse is left for evaluation to report. */
static void fold(checker *c, node *n) {
  static const char *const pure[] = {"quantity", "semver", "timestamp", "duration"};
  cel_value args[2], r;
  cel_eval_ctx *ctx;
  cel_run ev;
  bool known = false;
  if (n->target || !n->nargs || n->nargs > 2 || !n->novl) return;
  for (size_t i = 0; i < sizeof pure / sizeof *pure; i++) known |= !strcmp(n->name, pure[i]);
  for (uint32_t i = 0; known && i < n->nargs; i++) {
    if (n->args[i]->kind != N_LIT) return;
    args[i] = n->args[i]->lit;
  }
  if (!known || !(ctx = cel_eval_ctx_new())) return;
  memset(&ev, 0, sizeof ev);
  ev.ctx = ctx, ev.prog = c->p;
  for (uint32_t i = 0; i < n->novl; i++) {
    uint32_t k = 0;
    while (k < n->nargs && cel__value_fits(&args[k], n->ovl[i]->params[k])) k++;
    if (k < n->nargs) continue;
    r = n->ovl[i]->fn(&ev, args, n->nargs);
    if (r.kind == CEL_QUANTITY) {
      ts_quantity *q = ts_arena_alloc(&c->p->arena, sizeof *q);
      if (!q) break;
      *q = *r.u.q, r.u.q = q;
    } else if (r.kind == CEL_SEMVER) {
      cel_semver *v = ts_arena_alloc(&c->p->arena, sizeof *v);
      char *pre = ts_arena_strndup(&c->p->arena, r.u.v->pre, r.u.v->npre);
      if (!v || !pre) break;
      *v = *r.u.v, v->pre = pre, r.u.v = v;
    } else if (r.kind != CEL_TIMESTAMP && r.kind != CEL_DURATION) {
      break; /* an error: evaluation reports it */
    }
    n->kind = N_LIT;
    n->lit = r;
    n->folded = true;
    break;
  }
  cel_eval_ctx_free(ctx);
}

/* An optional entry ([?x], {?k: x}) must be an optional (or dyn), as cel-go checks it. */
static bool optional_entry(checker *c, const node *x) {
  char tt[128], want[160];
  if (!c->typed || x->type->kind == TY_OPTIONAL || x->type->kind == TY_DYN) return true;
  type_text(x->type, tt, sizeof tt);
  snprintf(want, sizeof want, "optional_type(%s)", tt);
  report(c, x->pos, "expected type '%s' but found '%s'", want, tt);
  return false;
}

static void literal_types(checker *c, node *n) {
  const cel_type *e = NULL, *k = NULL;
  bool mixed = false;
  uint32_t entries = n->kind == N_LIST ? n->nargs : n->nargs / 2;
  for (uint32_t i = 0; n->optional && i < entries; i++)
    if (n->optional[i] && !optional_entry(c, n->args[n->kind == N_LIST ? i : 2 * i + 1])) return;
  if (n->kind == N_LIST) {
    for (uint32_t i = 0; i < n->nargs; i++) {
      const cel_type *t = n->args[i]->type;
      if (n->optional && n->optional[i] && t->kind == TY_OPTIONAL) t = t->p[0];
      if (e && e != t && t->kind != TY_DYN && e->kind != TY_DYN) mixed = true;
      e = join(e, t);
    }
    if (mixed && c->homogeneous) {
      report(c, n->pos, "expected type of list elements to be the same");
      return;
    }
    n->type = cel__ty1(&c->p->types, TY_LIST, e ? e : dyn());
    return;
  }
  for (uint32_t i = 0; i + 1 < n->nargs; i += 2) {
    const cel_type *kt = n->args[i]->type, *vt = n->args[i + 1]->type;
    if (n->optional && n->optional[i / 2] && vt->kind == TY_OPTIONAL) vt = vt->p[0];
    if ((k && k != kt) || (e && e != vt)) mixed = true;
    k = join(k, kt), e = join(e, vt);
  }
  if (mixed && c->homogeneous) {
    report(c, n->pos, "expected type of map entries to be the same");
    return;
  }
  n->type = cel__ty2(&c->p->types, TY_MAP, k ? k : dyn(), e ? e : dyn());
}

static void comp(checker *c, node *n) {
  const cel_type *rt, *t1 = dyn(), *t2 = dyn();
  int base = c->nlocals;
  walk(c, n->target);
  if (c->failed) return;
  rt = n->target->type ? n->target->type : dyn();
  if (c->env->ext && c->env->ext->iterate_error) {
    const char *why = c->env->ext->iterate_error(c->env, rt);
    if (why) {
      report(c, n->target->pos, "%s", why);
      return;
    }
  }
  if (rt->kind == TY_LIST)
    t1 = n->v2 ? cel__ty(TY_INT) : rt->p[0], t2 = rt->p[0];
  else if (rt->kind == TY_MAP)
    t1 = rt->p[0], t2 = rt->p[1];
  else if (rt->kind != TY_DYN && c->typed) {
    char tt[128];
    type_text(rt, tt, sizeof tt);
    report(c, n->target->pos,
           "expression of type '%s' cannot be the range of a comprehension "
           "(must be list, map, or dynamic)",
           tt);
    return;
  }
  n->local = base;
  if (!push_local(c, n->name, t1, n) || (n->v2 && !push_local(c, n->v2, t2, n))) return;
  if (n->filter) walk(c, n->filter);
  walk(c, n->args[0]);
  c->nlocals = base;
  if (c->failed) return;
  switch (n->ck) {
  case C_ALL:
  case C_EXISTS:
  case C_EXISTS_ONE:
    n->type = cel__ty(TY_BOOL);
    break;
  case C_MAP:
  case C_TRANSFORM_LIST:
    n->type = cel__ty1(&c->p->types, TY_LIST, n->args[0]->type);
    break;
  case C_FILTER:
    n->type = cel__ty1(&c->p->types, TY_LIST, rt->kind == TY_LIST ? rt->p[0] : t1);
    break;
  case C_TRANSFORM_MAP:
    n->type = cel__ty2(&c->p->types, TY_MAP, t1, n->args[0]->type);
    break;
  case C_TRANSFORM_ENTRY:
    n->type = cel__ty2(&c->p->types, TY_MAP, dyn(), dyn());
    break;
  }
  if (c->typed && n->filter && n->filter->type->kind != TY_BOOL &&
      n->filter->type->kind != TY_DYN) {
    char tt[128];
    type_text(n->filter->type, tt, sizeof tt);
    report(c, n->filter->pos, "found no matching overload for '_?_:_' applied to '(%s, ...)'", tt);
  }
  if (c->typed && (n->ck == C_ALL || n->ck == C_EXISTS || n->ck == C_EXISTS_ONE) &&
      n->args[0]->type->kind != TY_BOOL && n->args[0]->type->kind != TY_DYN) {
    char tt[128];
    type_text(n->args[0]->type, tt, sizeof tt);
    report(c, n->args[0]->pos, "found no matching overload for '_&&_' applied to '(bool, %s)'", tt);
  }
}

static void logic(checker *c, node *n) {
  for (uint32_t i = 0; i < n->nargs; i++) walk(c, n->args[i]);
  if (c->failed) return;
  n->type = cel__ty(TY_BOOL);
  if (!c->typed) return;
  for (uint32_t i = 0; i < 2; i++) {
    const cel_type *t = n->args[i]->type;
    if (t->kind != TY_BOOL && t->kind != TY_DYN) {
      char a[128], b[128];
      type_text(n->args[0]->type, a, sizeof a);
      type_text(n->args[1]->type, b, sizeof b);
      report(c, n->pos, "found no matching overload for '%s' applied to '(%s, %s)'",
             n->kind == N_AND ? "_&&_" : "_||_", a, b);
      return;
    }
  }
}

/* object.field["key"].name on a host object whose type reads it in one step (for DRA:
 * device.attributes["domain"].name, the shape of almost every selector) becomes one node. */
static void obj_lookup(checker *c, node *n) {
  node *x = n->target, *f;
  const cel_ext_object *o;
  if (n->test_only || n->opt || x->kind != N_INDEX || x->opt || x->args[0]->kind != N_LIT ||
      x->args[0]->lit.kind != CEL_STRING)
    return;
  f = x->target;
  if (f->kind != N_SELECT || f->test_only || f->opt || !f->target->type ||
      !(o = cel__ext_object(c->env, f->target->type)) || !o->lookup_field || !o->lookup ||
      !o->lookup_field(f->name))
    return;
  n->kind = N_OBJLOOKUP;
  n->field = f->name;
  n->v2 = ts_intern(x->args[0]->lit.u.s.p, x->args[0]->lit.u.s.n);
  n->target = f->target;
}

static void walk(checker *c, node *n) {
  if (c->failed || !n) return;
  if (++c->depth > CEL_MAX_DEPTH * 2) {
    report(c, n->pos, "expression nests too deeply");
    return;
  }
  switch (n->kind) {
  case N_LIT:
    switch (n->lit.kind) {
    case CEL_NULL:
      n->type = cel__ty(TY_NULL);
      break;
    case CEL_BOOL:
      n->type = cel__ty(TY_BOOL);
      break;
    case CEL_INT:
      n->type = cel__ty(TY_INT);
      break;
    case CEL_UINT:
      n->type = cel__ty(TY_UINT);
      break;
    case CEL_DOUBLE:
      n->type = cel__ty(TY_DOUBLE);
      break;
    case CEL_STRING:
      n->type = cel__ty(TY_STRING);
      break;
    case CEL_BYTES:
      n->type = cel__ty(TY_BYTES);
      break;
    default:
      n->type = dyn();
    }
    break;
  case N_IDENT:
    ident(c, n);
    break;
  case N_SELECT:
    if (qualified(c, n)) break;
    {
      char name[512];
      if (dotted(n, name, sizeof name)) {
        const char *saved = n->name;
        n->name = ts_intern_cstr(name);
        if (type_literal(c, n)) break;
        n->name = saved;
      }
    }
    walk(c, n->target);
    if (!c->failed) select_type(c, n);
    if (!c->failed) obj_lookup(c, n);
    break;
  case N_INDEX:
    walk(c, n->target);
    walk(c, n->args[0]);
    if (!c->failed) index_type(c, n);
    break;
  case N_CALL:
    if (!namespaced(c, n) && n->target) walk(c, n->target);
    for (uint32_t i = 0; i < n->nargs; i++) walk(c, n->args[i]);
    if (!c->failed) call_type(c, n);
    if (!c->failed) fold(c, n);
    break;
  case N_LIST:
  case N_MAP:
    for (uint32_t i = 0; i < n->nargs; i++) walk(c, n->args[i]);
    if (!c->failed) literal_types(c, n);
    break;
  case N_COND:
    for (uint32_t i = 0; i < 3; i++) walk(c, n->args[i]);
    if (c->failed) break;
    if (c->typed && n->args[0]->type->kind != TY_BOOL && n->args[0]->type->kind != TY_DYN) {
      char tt[128];
      type_text(n->args[0]->type, tt, sizeof tt);
      report(c, n->pos, "found no matching overload for '_?_:_' applied to '(%s, ...)'", tt);
    }
    n->type = join(n->args[1]->type, n->args[2]->type);
    break;
  case N_AND:
  case N_OR:
    logic(c, n);
    break;
  case N_COMP:
    comp(c, n);
    break;
  case N_BIND: {
    int base = c->nlocals;
    walk(c, n->args[0]);
    if (c->failed) break;
    n->local = base;
    if (!push_local(c, n->name, n->args[0]->type, n)) break;
    walk(c, n->args[1]);
    c->nlocals = base;
    n->type = n->args[1]->type;
    break;
  }
  case N_OBJLOOKUP:
    break; /* made from a checked N_SELECT */
  case N_OPTMAP: {
    int base = c->nlocals;
    const cel_type *t;
    walk(c, n->target);
    if (c->failed) break;
    t = n->target->type;
    n->local = base;
    if (!push_local(c, n->name, t->kind == TY_OPTIONAL ? t->p[0] : dyn(), n)) break;
    walk(c, n->args[0]);
    c->nlocals = base;
    if (c->failed) break;
    n->type = n->flat ? n->args[0]->type : cel__ty1(&c->p->types, TY_OPTIONAL, n->args[0]->type);
    break;
  }
  }
  if (!n->type) n->type = dyn();
  c->depth--;
}

ts_rc cel__check(cel_program *p, int flags, ts_err *err) {
  checker c;
  memset(&c, 0, sizeof c);
  c.p = p, c.env = p->env, c.err = err, c.typed = !(flags & CEL_NO_CHECK);
  c.homogeneous = (flags & CEL_KUBERNETES) != 0;
  walk(&c, p->root);
  if (p->types.failed) return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (c.failed) return err && err->code ? err->code : TS_ETYPE;
  p->type = p->root->type;
  return TS_OK;
}
