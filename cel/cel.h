/*
 * cel/cel.h - the Common Expression Language, as cel-go evaluates it with the libraries
 * Kubernetes enables: strings (version 2), lists, sets, optionals, two-variable comprehensions,
 * bindings, regular expressions with a linear-time engine, quantity and semver. Libraries of
 * host types and functions (DRA's `device`, in dra/) plug in through cel_ext.h.
 *
 * Compile once (parse, check, plan) into an immutable program; evaluate it many times with a
 * per-thread context whose arena is reset at each evaluation, so that evaluation allocates
 * nothing in steady state. Every evaluation is bounded: a runtime cost limit (Kubernetes'
 * accounting), a memory cap and a step budget for regular expressions.
 */
#ifndef CEL_H
#define CEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ts.h"

/* ---- values ------------------------------------------------------------------------------ */

typedef enum cel_kind {
  CEL_NULL,
  CEL_BOOL,
  CEL_INT,
  CEL_UINT,
  CEL_DOUBLE,
  CEL_STRING,
  CEL_BYTES,
  CEL_LIST,
  CEL_MAP,
  CEL_TYPE,
  CEL_DURATION,  /* seconds and nanoseconds */
  CEL_TIMESTAMP, /* seconds since the epoch and nanoseconds */
  CEL_OPTIONAL,
  CEL_QUANTITY, /* Kubernetes quantity */
  CEL_SEMVER,   /* semantic version */
  CEL_OBJECT,   /* a host object with fields (a library's type, cel_ext.h) */
  CEL_ERROR,
} cel_kind;

typedef struct cel_list cel_list;
typedef struct cel_map cel_map;
typedef struct cel_object cel_object;

typedef struct cel_semver {
  uint64_t major, minor, patch; /* numbers */
  const char *pre;              /* pre-release ("" when none), borrowed */
  uint32_t npre;                /* its length */
} cel_semver;

typedef struct cel_value {
  cel_kind kind; /* which member is set */
  union {
    bool b;          /* CEL_BOOL */
    int64_t i;       /* CEL_INT */
    uint64_t u;      /* CEL_UINT */
    double d;        /* CEL_DOUBLE */
    struct {         /* CEL_STRING (UTF-8), CEL_BYTES, CEL_ERROR (message) */
      const char *p; /* borrowed */
      size_t n;      /* bytes */
    } s;
    const cel_list *l; /* CEL_LIST */
    const cel_map *m;  /* CEL_MAP */
    const char *type;  /* CEL_TYPE: interned type name ("int", "list") */
    struct {           /* CEL_DURATION, CEL_TIMESTAMP */
      int64_t sec;     /* seconds */
      int32_t nsec;    /* 0..999999999 (duration: same sign as sec) */
    } t;
    const struct cel_value *opt; /* CEL_OPTIONAL: the value, NULL for none */
    const ts_quantity *q;        /* CEL_QUANTITY */
    const cel_semver *v;         /* CEL_SEMVER */
    const cel_object *o;         /* CEL_OBJECT */
  } u;
} cel_value;

/* Lists and maps built by callers (bindings) live in memory the caller owns. */
struct cel_list {
  const cel_value *v; /* elements */
  size_t n;           /* entries */
};

typedef struct cel_map_ops cel_map_ops;
struct cel_map {
  const cel_value *k, *v; /* keys and values (plain maps) */
  size_t n;               /* entries */
  const cel_map_ops *ops; /* NULL for plain maps; else a view computed on access */
  const void *ctx;        /* for ops */
};

/* Values by copy; nothing to free. */
cel_value cel_null(void);
cel_value cel_bool(bool b);
cel_value cel_int(int64_t i);
cel_value cel_uint(uint64_t u);
cel_value cel_double(double d);
cel_value cel_string(const char *s, size_t n); /* borrowed */
cel_value cel_bytes(const char *s, size_t n);  /* borrowed */
cel_value cel_list_value(const cel_list *l);   /* borrowed */
cel_value cel_map_value(const cel_map *m);     /* borrowed */

/* Writes v as CEL literal-like text ("[1, 'a']", "duration(\"1s\")") into out (capped). */
void cel_value_format(const cel_value *v, ts_buf *out);
/* CEL equality (heterogeneous numbers compare by value; NaN != NaN). */
bool cel_value_equal(const cel_value *a, const cel_value *b);
/* Looks up key in map m: *out and true when present. */
bool cel_map_find(const cel_map *m, const cel_value *key, cel_value *out);
/* The name of v's type, as type(v) gives it ("int", "google.protobuf.Duration"). */
const char *cel_type_name(const cel_value *v);

/* ---- environments and programs ---------------------------------------------------------- */

typedef struct cel_env cel_env;
typedef struct cel_program cel_program;
typedef struct cel_eval_ctx cel_eval_ctx;

enum {
  CEL_NO_CHECK = 1 << 0,   /* parse and evaluate without type checking */
  CEL_NO_MACROS = 1 << 1,  /* parse without expanding macros */
  CEL_KUBERNETES = 1 << 2, /* Kubernetes' checker rules (homogeneous aggregate literals) */
};

/* A new environment with the standard library and the Kubernetes libraries. Returns new. */
cel_env *cel_env_new(void);
void cel_env_free(cel_env *e); /* NULL is a no-op; programs compiled in it must be gone */
/* Declares a variable with a type written as CEL writes types ("int", "list(string)",
 * "map(string, dyn)", "google.protobuf.Duration"). Names may be qualified ("a.b.c"). */
ts_rc cel_env_declare(cel_env *e, const char *name, const char *type, ts_err *err);
/* The container (namespace) names resolve in, as cel-go's cel.Container. */
ts_rc cel_env_container(cel_env *e, const char *container, ts_err *err);

/* Compiles expr. On error the message says where (line:column and a caret line) and what,
 * in cel-go's words ("Syntax error: ...", "undeclared reference to 'x' (in container '')").
 * *out is new (cel_program_free); the environment must outlive it. */
ts_rc cel_compile(const cel_env *e, const char *expr, int flags, cel_program **out, ts_err *err);
void cel_program_free(cel_program *p); /* NULL is a no-op */
/* The checked result type of the program ("bool", "dyn", ...) in out (cap bytes, cut to fit);
 * returns out. */
const char *cel_program_type(const cel_program *p, char *out, size_t cap);
/* The worst-case cost of one evaluation, estimated from the checked program as the Kubernetes
 * API server estimates it before admitting an expression (cel-go's checker estimate with
 * Kubernetes' library costs and the environment's size limits); UINT64_MAX when unbounded. */
uint64_t cel_program_cost_estimate(const cel_program *p);

/* An evaluation context: one per thread, reused. Returns new. */
cel_eval_ctx *cel_eval_ctx_new(void);
void cel_eval_ctx_free(cel_eval_ctx *c); /* NULL is a no-op */
/* Limits for the next evaluations: runtime cost (0 = none) and memory in bytes. */
void cel_eval_ctx_limits(cel_eval_ctx *c, uint64_t cost_limit, size_t memory_limit);

typedef struct cel_binding {
  const char *name; /* declared variable name */
  cel_value value;  /* borrowed for the evaluation */
} cel_binding;

/* Evaluates p with the bindings. *out is valid until the next evaluation with ctx. A CEL
 * error (division by zero, no such key, cost limit...) is TS_EINVAL with the message in err;
 * *out is then the error value. */
ts_rc cel_eval(const cel_program *p, cel_eval_ctx *ctx, const cel_binding *vars, size_t n,
               cel_value *out, ts_err *err);
uint64_t cel_eval_cost(const cel_eval_ctx *c); /* cost of the last evaluation */

/* Parses a semantic version ("1.2.3-rc.1+build"); with relaxed, a leading "v" and missing
 * minor/patch are accepted (semver(s, true)). pre points into s. */
ts_rc cel_semver_parse(const char *s, size_t n, bool relaxed, cel_semver *out, ts_err *err);

#endif
