/* cel/cel_int.h - internals shared by the files of cel/: tokens, the syntax tree, types,
 * the function registry and the evaluator's state. */
#ifndef CEL_INT_H
#define CEL_INT_H

#include <setjmp.h>

#include "cel/cel.h"
#include "cel/cel_ext.h"

#define CEL_MAX_DEPTH   250         /* nesting of the syntax tree (recursion bound) */
#define CEL_MAX_EXPR    100000      /* bytes of an expression (a library may set less) */
#define CEL_MAX_ARGS    32          /* arguments of one call */
#define CEL_DEFAULT_MEM (64u << 20) /* bytes an evaluation may allocate */
#define CEL_MAX_LOCALS  64          /* comprehension and bind variables in scope */
#define CEL_RE_BUDGET   10000000    /* regex VM steps per evaluation */

/* ---- types (for the checker and the function registry) --------------------------------- */

typedef enum ty_kind {
  TY_DYN,
  TY_NULL,
  TY_BOOL,
  TY_INT,
  TY_UINT,
  TY_DOUBLE,
  TY_STRING,
  TY_BYTES,
  TY_LIST, /* p[0] element */
  TY_MAP,  /* p[0] key, p[1] value */
  TY_TYPE, /* p[0] the type (may be NULL: any type) */
  TY_DURATION,
  TY_TIMESTAMP,
  TY_OPTIONAL, /* p[0] */
  TY_QUANTITY,
  TY_SEMVER,
  TY_OBJECT, /* name: a host object type (a library's, cel_ext.h) */
  TY_PARAM,  /* name: a type parameter of an overload */
  TY_ERROR,
} ty_kind;

typedef struct cel_type {
  ty_kind kind;                /* which */
  const char *name;            /* interned: TY_OBJECT and TY_PARAM names */
  const struct cel_type *p[2]; /* parameters */
} cel_type;

/* A table of interned types: within a table and its parents, equal types are the same
 * pointer. An environment holds one (its declarations and its function registry's
 * signatures); each program holds one whose parent is its environment's (the types its
 * checking makes), so what one program's checking makes lives and dies with it. Types
 * without a name or parameters are constants shared by every table. */
typedef struct cel_tytab {
  const struct cel_tytab *parent; /* consulted first, never added to, or NULL */
  ts_arena *arena;                /* where new types live (borrowed) */
  ts_map map;                     /* a type's identity -> the type */
  bool failed;                    /* out of memory: a type was degraded to dyn */
} cel_tytab;

void cel__tytab_init(cel_tytab *t, const cel_tytab *parent, ts_arena *arena);
void cel__tytab_free(cel_tytab *t); /* the index; the types go with the arena */
const cel_type *cel__ty(ty_kind k); /* the constant type of kind k, no parameters */
const cel_type *cel__ty1(cel_tytab *t, ty_kind k, const cel_type *a);
const cel_type *cel__ty2(cel_tytab *t, ty_kind k, const cel_type *a, const cel_type *b);
const cel_type *cel__ty_named(cel_tytab *t, ty_kind k, const char *name);
/* Parses "map(string, list(int))", "A" (a parameter when params), "google.protobuf.Duration".
 * NULL when invalid. */
const cel_type *cel__ty_parse(cel_tytab *t, const char *s, size_t n, bool params);
void cel__ty_format(const cel_type *t, ts_buf *out);
/* The type name of a kind as type() reports it. */
const char *cel__kind_type_name(cel_kind k);

/* ---- syntax tree ------------------------------------------------------------------------- */

typedef enum node_kind {
  N_LIT,       /* lit */
  N_IDENT,     /* name (resolved: var >= 0 global, local >= 0) */
  N_SELECT,    /* a.name; test_only for has(a.name); opt for a.?name */
  N_INDEX,     /* a[b] (args[0] = b); opt for a[?b] */
  N_CALL,      /* name(args) or target.name(args) */
  N_LIST,      /* [args...]; optional[i] for [?x] */
  N_MAP,       /* {args[2i]: args[2i+1]}; optional[i] for {?k: v} */
  N_COND,      /* args[0] ? args[1] : args[2] */
  N_AND,       /* args[0] && args[1] */
  N_OR,        /* args[0] || args[1] */
  N_COMP,      /* comprehension (macro) */
  N_BIND,      /* cel.bind(v1, args[0], args[1]) */
  N_OPTMAP,    /* target.optMap(v1, args[0]) / optFlatMap (flat) */
  N_OBJLOOKUP, /* object.field["v2"].name read in one step by the host type (cel_ext_object) */
} node_kind;

typedef enum comp_kind {
  C_ALL,
  C_EXISTS,
  C_EXISTS_ONE,
  C_MAP,             /* list.map(x, e) or map(x, p, e) when filter */
  C_FILTER,          /* filter(x, p) */
  C_TRANSFORM_LIST,  /* transformList(i, v, [p,] e) */
  C_TRANSFORM_MAP,   /* transformMap(k, v, [p,] e) */
  C_TRANSFORM_ENTRY, /* transformMapEntry(k, v, [p,] e) */
} comp_kind;

struct cel_overload;

typedef struct node {
  node_kind kind;      /* what */
  uint32_t pos;        /* byte offset in the expression */
  cel_value lit;       /* N_LIT */
  const char *name;    /* interned: identifier, field, function, variable */
  struct node *target; /* select / index operand, call receiver, comprehension range */
  struct node **args;  /* operands */
  uint32_t nargs;      /* entries */
  uint8_t *optional;   /* N_LIST / N_MAP: optional entries */
  bool test_only;      /* N_SELECT from has() */
  bool opt;            /* ?. and [? */
  bool flat;           /* N_OPTMAP: optFlatMap */
  bool folded;         /* N_LIT: a call of literals evaluated by the checker (its cost is 1) */
  comp_kind ck;        /* N_COMP */
  const char *v2;      /* N_COMP: second variable (two-variable forms); N_OBJLOOKUP: key */
  const char *field;   /* N_OBJLOOKUP: the object's field, interned */
  struct node *filter; /* N_COMP: predicate or filter, NULL when none */
  int local;           /* N_IDENT: local slot, or -1; N_COMP/N_BIND: first slot */
  int var;             /* N_IDENT: declared variable index, or -1 */
  const struct cel_overload *const *ovl; /* N_CALL: candidate overloads (registry) */
  uint32_t novl;                         /* entries */
  const cel_type *type;                  /* checked type */
} node;

/* ---- functions ------------------------------------------------------------------------------ */

typedef struct cel_run cel_run;

/* An implementation: args[0..n) (the receiver first for methods). Returns the result or an
 * error value (cel__err). */
typedef cel_value (*cel_impl)(cel_run *ev, const cel_value *args, uint32_t n);

typedef struct cel_overload {
  const char *name; /* function name ("size", "_+_") */
  const char *sig;  /* "string.(string)->bool" (method) or "(list(A))->int" */
  cel_impl fn;      /* implementation */
  /* parsed by the registry */
  bool method;               /* called as receiver.name(...) */
  uint32_t nparams;          /* including the receiver */
  const cel_type *params[6]; /* parameter types */
  const cel_type *result;    /* result type */
} cel_overload;

/* Whether overload o applies to arguments of these checked types (receiver first). */
bool cel__overload_applies(const cel_overload *o, const struct cel_type *const *at, uint32_t na);

/* The standard libraries: each returns its table of overloads (static, read-only: an
 * environment copies them and parses the copies' signatures into its own types). */
const cel_overload *cel__std_table(size_t *n);
const cel_overload *cel__strings_table(size_t *n);
const cel_overload *cel__time_table(size_t *n);
const cel_overload *cel__k8s_table(size_t *n);
/* Fills e's registry with the standard libraries (at its creation). */
ts_rc cel__registry_load(cel_env *e);
/* Overloads of name with nargs arguments (receiver included), method or global style, as e
 * sees them (its library's, when it has an enabled function of that name, else the
 * registry's); an array in arena a. */
const cel_overload *const *cel__lookup(const cel_env *e, ts_arena *a, const char *name, bool method,
                                       uint32_t nargs, uint32_t *count);
/* The first of e's global overloads of name with n arguments whose parameters these values
 * fit, or NULL (the evaluator's dispatch on values, for functions that call others). */
const cel_overload *cel__overload_for(const cel_env *e, const char *name, const cel_value *args,
                                      uint32_t n);
/* True when e knows a function of that name in either style with any arity. */
bool cel__function_exists(const cel_env *e, const char *name);
/* Runtime: whether v can be passed as a parameter of type t. */
bool cel__value_fits(const cel_value *v, const cel_type *t);

/* Parses o->sig into o's parameters and result (types interned in t); false when it does not
 * parse. */
bool cel__overload_parse(cel_tytab *t, cel_overload *o);

/* ---- programs ------------------------------------------------------------------------------ */

typedef struct cel_var {
  const char *name;     /* interned, possibly qualified */
  const cel_type *type; /* declared type */
} cel_var;

struct cel_env {
  ts_arena arena;        /* its types and its registry */
  cel_tytab types;       /* its declarations' and its registry's types */
  cel_overload *std;     /* the standard libraries' overloads, parsed (arena) */
  size_t nstd;           /* entries */
  TS_VEC(cel_var) vars;  /* declared variables */
  const char *container; /* interned, "" when none */
  const cel_ext *ext;    /* its library, or NULL */
  const void *ext_opts;  /* the library's options */
  cel_overload *ext_ovl; /* the library's functions, parsed (owned) */
  size_t next_ovl;       /* entries */
};

struct cel_program {
  ts_arena arena;       /* the tree and its strings */
  node *root;           /* the expression */
  const cel_env *env;   /* borrowed */
  cel_tytab types;      /* the types its checking made (parent: the environment's) */
  const cel_type *type; /* checked result type */
  int nlocals;          /* local slots needed */
  char *text;           /* the expression (arena) */
  size_t len;           /* its length */
};

/* Parses text into a tree in arena. Errors name line and column. */
ts_rc cel__parse(const char *text, size_t len, int flags, ts_arena *arena, node **out, ts_err *err);
/* Resolves names, assigns local slots, checks types (unless CEL_NO_CHECK). */
ts_rc cel__check(cel_program *p, int flags, ts_err *err);
/* Formats an error at a byte position of the program's text: "ERROR: <input>:1:5: msg\n | expr\n
 * | ....^". */
ts_rc cel__error_at(ts_err *err, ts_rc code, const char *text, size_t len, uint32_t pos,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- evaluation ----------------------------------------------------------------------------- */

struct cel_eval_ctx {
  ts_arena arena;                   /* values made by the evaluation; reset each time */
  uint64_t cost;                    /* cost so far */
  uint64_t cost_limit;              /* 0 = none */
  size_t mem_limit;                 /* arena bytes */
  uint64_t re_budget;               /* regex steps left */
  cel_value locals[CEL_MAX_LOCALS]; /* comprehension and bind variables */
  struct cel_re_entry *re_cache;    /* patterns compiled by its evaluations (k8s.c), or NULL */
};

/* Frees c's compiled patterns (k8s.c). */
void cel__re_cache_free(cel_eval_ctx *c);

struct cel_run {
  cel_eval_ctx *ctx;         /* context */
  const cel_program *prog;   /* program */
  const cel_binding *vars;   /* bindings */
  size_t nvars;              /* entries */
  const cel_value *var_vals; /* per declared variable (resolved), or NULL */
  bool limit_hit;            /* a cost or memory limit ended the evaluation */
};

/* An error value with a formatted message (arena). */
cel_value cel__err(cel_run *ev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Memory in the evaluation arena (NULL and limit_hit when over the cap). */
void *cel__alloc(cel_run *ev, size_t n);
/* Adds to the runtime cost; false when the limit is exceeded. */
bool cel__charge(cel_run *ev, uint64_t c);
cel_value cel__no_overload(cel_run *ev, const char *fn, const cel_value *args, uint32_t n);

/* Helpers for implementations. */
cel_value cel__str(cel_run *ev, const char *s, size_t n);           /* copies into the arena */
cel_value cel__list(cel_run *ev, const cel_value *v, size_t n);     /* copies */
int cel__compare(const cel_value *a, const cel_value *b, bool *ok); /* -1/0/1; ok false: n/a */
bool cel__equal(const cel_value *a, const cel_value *b);
size_t cel__utf8_len(const char *s, size_t n); /* code points */
bool cel__utf8_valid(const char *s, size_t n);
const char *cel__utf8_at(const char *s, size_t n, size_t idx); /* byte of code point idx */

/* Time helpers (time.c). */
bool cel__parse_timestamp(const char *s, size_t n, int64_t *sec, int32_t *nsec);
bool cel__parse_duration(const char *s, size_t n, int64_t *sec, int32_t *nsec);
void cel__format_timestamp(int64_t sec, int32_t nsec, ts_buf *out);
void cel__format_duration(int64_t sec, int32_t nsec, ts_buf *out);
#define CEL_TS_MIN  (-62135596800LL) /* 0001-01-01T00:00:00Z */
#define CEL_TS_MAX  253402300799LL   /* 9999-12-31T23:59:59Z */
#define CEL_DUR_MAX 315576000000LL   /* 10000 years in seconds */

/* Strings (strings.c). */
cel_value cel__format(cel_run *ev, const char *fmt, size_t n, const cel_list *args);
void cel__quote(const char *s, size_t n, ts_buf *out);

/* Regular expressions (regex.c). */
#include "cel/regex.h"
/* Compiles pattern (cached in the evaluation arena per program constant when possible). */
cel_value cel__regex_search(cel_run *ev, const cel_value *text, const cel_value *pattern,
                            bool *found, size_t *start, size_t *end);

/* Whether key is in m ('in' and has()). */
bool cel__map_has(const cel_map *m, const cel_value *key);

int cel__semver_cmp(const cel_semver *a, const cel_semver *b);

/* Libraries (ext.c): the host object type of t in e (NULL when none); whether e's library has
 * an enabled function of that name. */
const cel_ext_object *cel__ext_object(const cel_env *e, const cel_type *t);
bool cel__ext_has(const cel_env *e, const char *name);

#endif
