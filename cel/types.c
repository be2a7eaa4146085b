/* cel/types.c - interned types, their text form, and an environment's function registry.
 *
 * Types are interned in tables (cel_tytab): an environment's, and below it one per program, so
 * that what one program's checking makes is freed with it and no expression can fill a table
 * another expression needs. Types without a name or parameters are constants. The registry is
 * an environment's copy of the standard libraries' overloads, parsed into its types when it is
 * made; lookups afterwards only read it. Nothing here is process-wide. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

/* The constant types: kind k without a name or parameters. */
static const cel_type constants[TY_ERROR + 1] = {
    {TY_DYN, NULL, {NULL, NULL}},       {TY_NULL, NULL, {NULL, NULL}},
    {TY_BOOL, NULL, {NULL, NULL}},      {TY_INT, NULL, {NULL, NULL}},
    {TY_UINT, NULL, {NULL, NULL}},      {TY_DOUBLE, NULL, {NULL, NULL}},
    {TY_STRING, NULL, {NULL, NULL}},    {TY_BYTES, NULL, {NULL, NULL}},
    {TY_LIST, NULL, {NULL, NULL}},      {TY_MAP, NULL, {NULL, NULL}},
    {TY_TYPE, NULL, {NULL, NULL}},      {TY_DURATION, NULL, {NULL, NULL}},
    {TY_TIMESTAMP, NULL, {NULL, NULL}}, {TY_OPTIONAL, NULL, {NULL, NULL}},
    {TY_QUANTITY, NULL, {NULL, NULL}},  {TY_SEMVER, NULL, {NULL, NULL}},
    {TY_OBJECT, NULL, {NULL, NULL}},    {TY_PARAM, NULL, {NULL, NULL}},
    {TY_ERROR, NULL, {NULL, NULL}}};

/* A type's identity, as the bytes a table indexes (no padding). */
typedef struct tykey {
  uintptr_t kind;
  const char *name;
  const cel_type *p[2];
} tykey;

typedef struct tyent {
  tykey key;  /* the index's key */
  cel_type t; /* the type */
} tyent;

void cel__tytab_init(cel_tytab *t, const cel_tytab *parent, ts_arena *arena) {
  t->parent = parent, t->arena = arena, t->failed = false;
  ts_map_init(&t->map);
}

void cel__tytab_free(cel_tytab *t) {
  ts_map_free(&t->map);
}

static const cel_type *intern(cel_tytab *t, ty_kind k, const char *name, const cel_type *a,
                              const cel_type *b) {
  tykey key;
  tyent *e;
  if ((unsigned)k > TY_ERROR) k = TY_DYN;
  if (!name && !a && !b) return &constants[k];
  memset(&key, 0, sizeof key);
  key.kind = (uintptr_t)k, key.name = name, key.p[0] = a, key.p[1] = b;
  for (const cel_tytab *x = t; x; x = x->parent)
    if ((e = ts_map_get(&x->map, (const char *)&key, sizeof key))) return &e->t;
  if (!(e = ts_arena_alloc(t->arena, sizeof *e))) goto fail;
  e->key = key;
  e->t = (cel_type){k, name, {a, b}};
  if (ts_map_put(&t->map, (const char *)&e->key, sizeof e->key, e, NULL) != TS_OK) goto fail;
  return &e->t;
fail: /* out of memory: the caller learns it from t->failed */
  t->failed = true;
  return &constants[TY_DYN];
}

const cel_type *cel__ty(ty_kind k) {
  return &constants[(unsigned)k <= TY_ERROR ? k : TY_DYN];
}

const cel_type *cel__ty1(cel_tytab *t, ty_kind k, const cel_type *a) {
  return intern(t, k, NULL, a, NULL);
}

const cel_type *cel__ty2(cel_tytab *t, ty_kind k, const cel_type *a, const cel_type *b) {
  return intern(t, k, NULL, a, b);
}

const cel_type *cel__ty_named(cel_tytab *t, ty_kind k, const char *name) {
  return intern(t, k, ts_intern_cstr(name), NULL, NULL);
}

static const struct {
  const char *name;
  ty_kind kind;
} simple[] = {{"dyn", TY_DYN},
              {"null_type", TY_NULL},
              {"bool", TY_BOOL},
              {"int", TY_INT},
              {"uint", TY_UINT},
              {"double", TY_DOUBLE},
              {"string", TY_STRING},
              {"bytes", TY_BYTES},
              {"google.protobuf.Duration", TY_DURATION},
              {"google.protobuf.Timestamp", TY_TIMESTAMP},
              {"duration", TY_DURATION},
              {"timestamp", TY_TIMESTAMP},
              {"kubernetes.Quantity", TY_QUANTITY},
              {"quantity", TY_QUANTITY},
              {"kubernetes.Semver", TY_SEMVER},
              {"semver", TY_SEMVER},
              {"error", TY_ERROR},
              {"list", TY_LIST},
              {"map", TY_MAP},
              {"type", TY_TYPE},
              {"optional_type", TY_OPTIONAL}};

typedef struct tyreader {
  cel_tytab *t;  /* where the types go */
  const char *s; /* text */
  size_t n, i;   /* length, position */
  bool params;   /* single capital letters are type parameters */
  int depth;     /* nesting */
} tyreader;

static void ty_ws(tyreader *r) {
  while (r->i < r->n && r->s[r->i] == ' ') r->i++;
}

static const cel_type *ty_read(tyreader *r) {
  size_t b;
  char name[128];
  const cel_type *a = NULL, *c = NULL;
  ty_kind k = TY_DYN;
  bool found = false;
  if (++r->depth > 16) return NULL;
  ty_ws(r);
  b = r->i;
  while (r->i < r->n && r->s[r->i] != '(' && r->s[r->i] != ')' && r->s[r->i] != ',' &&
         r->s[r->i] != ' ')
    r->i++;
  if (r->i == b || r->i - b >= sizeof name) return NULL;
  memcpy(name, r->s + b, r->i - b);
  name[r->i - b] = '\0';
  ty_ws(r);
  if (r->i < r->n && r->s[r->i] == '(') {
    r->i++;
    if (!(a = ty_read(r))) return NULL;
    ty_ws(r);
    if (r->i < r->n && r->s[r->i] == ',') {
      r->i++;
      if (!(c = ty_read(r))) return NULL;
      ty_ws(r);
    }
    if (r->i >= r->n || r->s[r->i] != ')') return NULL;
    r->i++;
  }
  r->depth--;
  if (r->params && name[0] >= 'A' && name[0] <= 'Z' && !name[1])
    return cel__ty_named(r->t, TY_PARAM, name);
  for (size_t i = 0; i < sizeof simple / sizeof *simple; i++)
    if (!strcmp(simple[i].name, name)) k = simple[i].kind, found = true;
  if (!found) return a ? NULL : cel__ty_named(r->t, TY_OBJECT, name);
  if (k == TY_LIST || k == TY_OPTIONAL || k == TY_TYPE)
    return a && c ? NULL : cel__ty1(r->t, k, a ? a : (k == TY_TYPE ? NULL : cel__ty(TY_DYN)));
  if (k == TY_MAP)
    return (a && !c) ? NULL
                     : cel__ty2(r->t, TY_MAP, a ? a : cel__ty(TY_DYN), c ? c : cel__ty(TY_DYN));
  return a ? NULL : cel__ty(k);
}

const cel_type *cel__ty_parse(cel_tytab *t, const char *s, size_t n, bool params) {
  tyreader r = {t, s, n, 0, params, 0};
  const cel_type *ty = ty_read(&r);
  ty_ws(&r);
  return ty && r.i == n ? ty : NULL;
}

void cel__ty_format(const cel_type *t, ts_buf *out) {
  static const char *const names[] = {"dyn",
                                      "null_type",
                                      "bool",
                                      "int",
                                      "uint",
                                      "double",
                                      "string",
                                      "bytes",
                                      "list",
                                      "map",
                                      "type",
                                      "google.protobuf.Duration",
                                      "google.protobuf.Timestamp",
                                      "optional_type",
                                      "kubernetes.Quantity",
                                      "kubernetes.Semver",
                                      "",
                                      "",
                                      "*error*"};
  if (!t) {
    ts_buf_puts(out, "dyn");
    return;
  }
  if (t->kind == TY_OBJECT || t->kind == TY_PARAM) {
    ts_buf_puts(out, t->name);
    return;
  }
  ts_buf_puts(out, names[t->kind]);
  if (t->kind == TY_LIST || t->kind == TY_OPTIONAL || (t->kind == TY_TYPE && t->p[0])) {
    ts_buf_putc(out, '(');
    cel__ty_format(t->p[0], out);
    ts_buf_putc(out, ')');
  } else if (t->kind == TY_MAP) {
    ts_buf_putc(out, '(');
    cel__ty_format(t->p[0], out);
    ts_buf_puts(out, ", ");
    cel__ty_format(t->p[1], out);
    ts_buf_putc(out, ')');
  }
}

const char *cel__kind_type_name(cel_kind k) {
  switch (k) {
  case CEL_NULL:
    return "null_type";
  case CEL_BOOL:
    return "bool";
  case CEL_INT:
    return "int";
  case CEL_UINT:
    return "uint";
  case CEL_DOUBLE:
    return "double";
  case CEL_STRING:
    return "string";
  case CEL_BYTES:
    return "bytes";
  case CEL_LIST:
    return "list";
  case CEL_MAP:
    return "map";
  case CEL_TYPE:
    return "type";
  case CEL_DURATION:
    return "google.protobuf.Duration";
  case CEL_TIMESTAMP:
    return "google.protobuf.Timestamp";
  case CEL_OPTIONAL:
    return "optional_type";
  case CEL_QUANTITY:
    return "kubernetes.Quantity";
  case CEL_SEMVER:
    return "kubernetes.Semver";
  case CEL_OBJECT:
    return "object"; /* a value knows its type's name: cel_type_name */
  case CEL_ERROR:
    return "error";
  }
  return "dyn";
}

/* ---- the registry -------------------------------------------------------------------------- */

/* Parses "string.(string, int)->bool" or "(list(A))->int" into o. */
bool cel__overload_parse(cel_tytab *t, cel_overload *o) {
  const char *s = o->sig, *arrow = strstr(s, ")->"), *open, *p;
  if (!arrow) return false;
  o->nparams = 0;
  if (s[0] == '(') {
    open = s;
  } else { /* a method: "receiver.(params)->result" */
    if (!(open = strstr(s, ".(")) || open > arrow) return false;
    o->method = true;
    if (!(o->params[o->nparams++] = cel__ty_parse(t, s, (size_t)(open - s), true))) return false;
    open++;
  }
  p = open + 1;
  while (p < arrow) {
    const char *q = p;
    int depth = 0;
    while (q < arrow && (depth || *q != ',')) {
      if (*q == '(') depth++;
      if (*q == ')') depth--;
      q++;
    }
    while (*p == ' ') p++;
    if (q > p) {
      if (o->nparams == 6 ||
          !(o->params[o->nparams++] = cel__ty_parse(t, p, (size_t)(q - p), true)))
        return false;
    }
    p = q + (q < arrow);
  }
  o->result = cel__ty_parse(t, arrow + 3, strlen(arrow + 3), true);
  return o->result != NULL;
}

ts_rc cel__registry_load(cel_env *e) {
  const cel_overload *(*const tables[])(size_t *) = {cel__std_table, cel__strings_table,
                                                     cel__time_table, cel__k8s_table};
  const cel_overload *tab[4];
  size_t n[4], total = 0;
  for (size_t k = 0; k < 4; k++) tab[k] = tables[k](&n[k]), total += n[k];
  if (!(e->std = ts_arena_alloc(&e->arena, total * sizeof *e->std))) return TS_ENOMEM;
  for (size_t k = 0; k < 4; k++)
    for (size_t i = 0; i < n[k]; i++) {
      cel_overload *o = &e->std[e->nstd];
      *o = tab[k][i];
      if (!(o->name = ts_intern_cstr(o->name))) return TS_ENOMEM;
      if (!cel__overload_parse(&e->types, o)) { /* a bug in a table: leave it out, loudly */
        fprintf(stderr, "cel: bad signature %s: %s\n", o->name, o->sig);
        continue;
      }
      e->nstd++;
    }
  return e->types.failed ? TS_ENOMEM : TS_OK;
}

const cel_overload *const *cel__lookup(const cel_env *e, ts_arena *a, const char *name, bool method,
                                       uint32_t nargs, uint32_t *count) {
  const cel_overload *base = e->std, **v;
  size_t n = e->nstd;
  uint32_t k = 0;
  name = ts_intern_cstr(name);
  if (e->ext && cel__ext_has(e, name)) base = e->ext_ovl, n = e->next_ovl;
  *count = 0;
  for (size_t i = 0; i < n; i++) /* counted first: the array holds only these, per call node */
    k += base[i].name == name && base[i].method == method && base[i].nparams == nargs;
  if (!(v = ts_arena_alloc(a, (k + 1) * sizeof *v))) return NULL;
  k = 0;
  for (size_t i = 0; i < n; i++)
    if (base[i].name == name && base[i].method == method && base[i].nparams == nargs)
      v[k++] = &base[i];
  *count = k;
  return v;
}

const cel_overload *cel__overload_for(const cel_env *e, const char *name, const cel_value *args,
                                      uint32_t n) {
  name = ts_intern_cstr(name);
  for (size_t i = 0; i < e->nstd; i++) {
    const cel_overload *o = &e->std[i];
    bool fits = o->name == name && !o->method && o->nparams == n;
    for (uint32_t k = 0; fits && k < n; k++) fits = cel__value_fits(&args[k], o->params[k]);
    if (fits) return o;
  }
  return NULL;
}

bool cel__function_exists(const cel_env *e, const char *name) {
  name = ts_intern_cstr(name);
  if (e->ext && cel__ext_has(e, name)) return true;
  for (size_t i = 0; i < e->nstd; i++)
    if (e->std[i].name == name) return true;
  return false;
}

bool cel__value_fits(const cel_value *v, const cel_type *t) {
  switch (t->kind) {
  case TY_DYN:
  case TY_PARAM:
    return true;
  case TY_NULL:
    return v->kind == CEL_NULL;
  case TY_BOOL:
    return v->kind == CEL_BOOL;
  case TY_INT:
    return v->kind == CEL_INT;
  case TY_UINT:
    return v->kind == CEL_UINT;
  case TY_DOUBLE:
    return v->kind == CEL_DOUBLE;
  case TY_STRING:
    return v->kind == CEL_STRING;
  case TY_BYTES:
    return v->kind == CEL_BYTES;
  case TY_LIST:
    return v->kind == CEL_LIST;
  case TY_MAP:
    return v->kind == CEL_MAP;
  case TY_TYPE:
    return v->kind == CEL_TYPE;
  case TY_DURATION:
    return v->kind == CEL_DURATION;
  case TY_TIMESTAMP:
    return v->kind == CEL_TIMESTAMP;
  case TY_OPTIONAL:
    return v->kind == CEL_OPTIONAL;
  case TY_QUANTITY:
    return v->kind == CEL_QUANTITY;
  case TY_SEMVER:
    return v->kind == CEL_SEMVER;
  case TY_OBJECT:
    return v->kind == CEL_OBJECT;
  case TY_ERROR:
    return v->kind == CEL_ERROR;
  }
  return false;
}
