/* cel/types.c - interned types, their text form, and the function registry.
 *
 * Types are interned in a small process-wide table (equal types share a pointer), built while
 * the registry loads; lookups afterwards only read. The registry maps a function name, call
 * style and arity to its overloads; it is filled once (cel__registry_init) before any compile. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

#define MAX_TYPES 512

static cel_type types[MAX_TYPES];
static size_t ntypes;
static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;

static const cel_type *intern(ty_kind k, const char *name, const cel_type *a, const cel_type *b) {
  const cel_type *r = NULL;
  pthread_mutex_lock(&types_lock);
  for (size_t i = 0; i < ntypes; i++)
    if (types[i].kind == k && types[i].name == name && types[i].p[0] == a && types[i].p[1] == b) {
      r = &types[i];
      break;
    }
  if (!r && ntypes < MAX_TYPES) {
    types[ntypes] = (cel_type){k, name, {a, b}};
    r = &types[ntypes++];
  }
  pthread_mutex_unlock(&types_lock);
  return r ? r : &types[0]; /* table full: degrade to the first type (dyn) */
}

const cel_type *cel__ty(ty_kind k) {
  if (!ntypes) intern(TY_DYN, NULL, NULL, NULL); /* types[0] is dyn */
  return intern(k, NULL, NULL, NULL);
}

const cel_type *cel__ty1(ty_kind k, const cel_type *a) {
  cel__ty(TY_DYN);
  return intern(k, NULL, a, NULL);
}

const cel_type *cel__ty2(ty_kind k, const cel_type *a, const cel_type *b) {
  cel__ty(TY_DYN);
  return intern(k, NULL, a, b);
}

const cel_type *cel__ty_named(ty_kind k, const char *name) {
  cel__ty(TY_DYN);
  return intern(k, ts_intern_cstr(name), NULL, NULL);
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
    return cel__ty_named(TY_PARAM, name);
  for (size_t i = 0; i < sizeof simple / sizeof *simple; i++)
    if (!strcmp(simple[i].name, name)) k = simple[i].kind, found = true;
  if (!found) return a ? NULL : cel__ty_named(TY_OBJECT, name);
  if (k == TY_LIST || k == TY_OPTIONAL || k == TY_TYPE)
    return a && c ? NULL : cel__ty1(k, a ? a : (k == TY_TYPE ? NULL : cel__ty(TY_DYN)));
  if (k == TY_MAP)
    return (a && !c) ? NULL : cel__ty2(TY_MAP, a ? a : cel__ty(TY_DYN), c ? c : cel__ty(TY_DYN));
  return a ? NULL : cel__ty(k);
}

const cel_type *cel__ty_parse(const char *s, size_t n, bool params) {
  tyreader r = {s, n, 0, params, 0};
  const cel_type *t = ty_read(&r);
  ty_ws(&r);
  return t && r.i == n ? t : NULL;
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

#define MAX_OVERLOADS 1024

static const cel_overload *reg[MAX_OVERLOADS];
static size_t nreg;

/* Parses "string.(string, int)->bool" or "(list(A))->int" into o. */
bool cel__overload_parse(cel_overload *o) {
  const char *s = o->sig, *arrow = strstr(s, ")->"), *open, *p;
  if (!arrow) return false;
  o->nparams = 0;
  if (s[0] == '(') {
    open = s;
  } else { /* a method: "receiver.(params)->result" */
    if (!(open = strstr(s, ".(")) || open > arrow) return false;
    o->method = true;
    if (!(o->params[o->nparams++] = cel__ty_parse(s, (size_t)(open - s), true))) return false;
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
      if (o->nparams == 6 || !(o->params[o->nparams++] = cel__ty_parse(p, (size_t)(q - p), true)))
        return false;
    }
    p = q + (q < arrow);
  }
  o->result = cel__ty_parse(arrow + 3, strlen(arrow + 3), true);
  return o->result != NULL;
}

void cel__register(cel_overload *tab, size_t n) {
  for (size_t i = 0; i < n && nreg < MAX_OVERLOADS; i++) {
    tab[i].name = ts_intern_cstr(tab[i].name);
    if (!cel__overload_parse(&tab[i])) {
      fprintf(stderr, "cel: bad signature %s: %s\n", tab[i].name, tab[i].sig);
      continue;
    }
    reg[nreg++] = &tab[i];
  }
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
  cel__ty(TY_DYN);
  cel__std_register();
  cel__strings_register();
  cel__time_register();
  cel__k8s_register();
}

void cel__registry_init(void) {
  pthread_once(&once, init);
}

/* Lookup cache: (name, method, nargs) -> a run of overloads, built on first use. */
typedef struct group {
  const char *name;
  bool method;
  uint32_t nargs;
  const cel_overload **v;
  uint32_t n;
} group;

#define MAX_GROUPS 1024
static group groups[MAX_GROUPS];
static size_t ngroups;
static const cel_overload *group_store[MAX_OVERLOADS * 2];
static size_t nstore;
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;

const cel_overload *const *cel__lookup(const char *name, bool method, uint32_t nargs,
                                       uint32_t *count) {
  const cel_overload *const *r = NULL;
  name = ts_intern_cstr(name);
  cel__registry_init();
  pthread_mutex_lock(&groups_lock);
  for (size_t i = 0; i < ngroups; i++)
    if (groups[i].name == name && groups[i].method == method && groups[i].nargs == nargs) {
      r = groups[i].v;
      *count = groups[i].n;
      break;
    }
  if (!r && ngroups < MAX_GROUPS) {
    group *g = &groups[ngroups];
    g->name = name, g->method = method, g->nargs = nargs, g->v = &group_store[nstore], g->n = 0;
    for (size_t i = 0; i < nreg && nstore < sizeof group_store / sizeof *group_store; i++)
      if (reg[i]->name == name && reg[i]->method == method && reg[i]->nparams == nargs)
        group_store[nstore++] = reg[i], g->n++;
    ngroups++;
    r = g->v;
    *count = g->n;
  }
  pthread_mutex_unlock(&groups_lock);
  if (!r) *count = 0;
  return r;
}

bool cel__function_exists(const char *name) {
  name = ts_intern_cstr(name);
  cel__registry_init();
  for (size_t i = 0; i < nreg; i++)
    if (reg[i]->name == name) return true;
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
