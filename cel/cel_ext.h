/*
 * cel/cel_ext.h - what a library of host types and functions may use (DRA's `device`
 * environment, in dra/, is one): host object types with typed fields, functions visible only in
 * the library's environments, expression limits, and the evaluation helpers its functions need.
 * The language core (cel.h) knows nothing of any library; a library knows only this header.
 */
#ifndef CEL_EXT_H
#define CEL_EXT_H

#include <stdarg.h>

#include "cel/cel.h"

typedef struct cel_type cel_type;   /* a checked type (interned: compare pointers) */
typedef struct cel_tytab cel_tytab; /* where the checking of one program interns types */
typedef struct cel_run cel_run;     /* one evaluation in progress */

/* ---- types ----------------------------------------------------------------------------- */

/* The type written as CEL writes types ("map(string, quantity)", "bool", "dyn"); NULL when it is
 * not a type. Interned in t (the table a callback is given): equal types are the same pointer. */
const cel_type *cel_ext_type(cel_tytab *t, const char *spec);
/* A dyn type carrying a name ("dra.attribute"): checks as dyn, but a library can recognise it
 * (cel_ext_type_name) to refuse what its values do not support. */
const cel_type *cel_ext_named_dyn(cel_tytab *t, const char *name);
/* map(key, value). */
const cel_type *cel_ext_map_type(cel_tytab *t, const cel_type *key, const cel_type *value);
/* The name of a named dyn or host object type, else NULL. */
const char *cel_ext_type_name(const cel_type *t);

/* ---- host objects ---------------------------------------------------------------------- */

typedef struct cel_ext_object cel_ext_object;

/* A value of a host object type (CEL_OBJECT): its type and the library's data (borrowed for
 * the evaluation). */
struct cel_object {
  const cel_ext_object *type; /* the library's description */
  const void *data;           /* what the library reads */
};

struct cel_ext_object {
  const char *name; /* the type's name in declarations ("kubernetes.DRADevice") */
  /* The type of a field in environment e (its options decide), NULL for no such field; new
   * types are interned in t. */
  const cel_type *(*field_type)(const cel_env *e, cel_tytab *t, const char *field);
  /* The field's value; *present false when the object does not have it (has(), ?.). */
  cel_value (*field)(cel_run *ev, const cel_object *o, const char *field, bool *present);
  /* Optional fast path: o.FIELD["key"].name with a literal key, read in one step, for the
   * fields lookup_field accepts. Same result as the three steps, at the same cost. */
  bool (*lookup_field)(const char *field);
  cel_value (*lookup)(cel_run *ev, const cel_object *o, const char *field, const char *key,
                      const char *name);
};

/* ---- maps computed on access ----------------------------------------------------------- */

/* A map value whose entries are computed when read (cel_map.ops; ctx is the library's). */
struct cel_map_ops {
  bool (*find)(const cel_map *m, const cel_value *key, cel_value *out);
  /* The keys, for iteration and size: *n entries into the evaluation's memory. */
  bool (*keys)(cel_run *ev, const cel_map *m, const cel_value **out, size_t *n);
  /* Membership ('in', has()) when it differs from find (NULL: find). */
  bool (*has)(const cel_map *m, const cel_value *key);
};

/* ---- functions ------------------------------------------------------------------------- */

/* A function's implementation: args[0..n) (the receiver first for methods). Returns the result
 * or an error value (cel_ext_error). */
typedef cel_value (*cel_ext_fn)(cel_run *ev, const cel_value *args, uint32_t n);

typedef struct cel_ext_function {
  const char *name;      /* "includes" */
  const char *signature; /* as the core's: "A.(B)->bool" (method), "(list(A))->int" */
  cel_ext_fn fn;         /* implementation */
} cel_ext_function;

/* ---- a library ------------------------------------------------------------------------- */

typedef struct cel_ext {
  const cel_ext_object *const *objects; /* host object types */
  size_t nobjects;                      /* entries */
  const cel_ext_function *functions;    /* functions only its environments have */
  size_t nfunctions;                    /* entries */
  /* Optional: whether function `name` of the library is available in e (NULL: all are). */
  bool (*function_enabled)(const cel_env *e, const char *name);
  /* Optional: why a value of type t cannot be iterated (a comprehension) in e, or NULL. */
  const char *(*iterate_error)(const cel_env *e, const cel_type *t);
  size_t max_expr; /* bytes of an expression in its environments (0: the core's limit) */
  /* Optional, for cel_program_cost_estimate: the largest size (string length, entries of a list
   * or map) a value at this path can have, false when unknown. A path starts at a declared
   * variable and names fields; "@items", "@keys" and "@values" step into lists and maps. */
  bool (*path_max_size)(const cel_env *e, const char *const *path, size_t n, uint64_t *max);
  /* Optional: the cost of one call of the library's function `name`, arguments aside (false:
   * the core prices it). */
  bool (*call_cost)(const cel_env *e, const char *name, uint64_t *cost);
} cel_ext;

/* A new environment (cel_env_free) with the standard and Kubernetes libraries and library x
 * (borrowed, static); opts (borrowed, static) is the library's, for its callbacks. NULL when
 * out of memory or when a function signature of x does not parse. */
cel_env *cel_env_new_ext(const cel_ext *x, const void *opts);
/* The opts of the environment's library (NULL without one). */
const void *cel_env_ext_opts(const cel_env *e);

/* ---- during an evaluation -------------------------------------------------------------- */

/* Memory of the evaluation (freed with it; counted against its memory limit); NULL when over. */
void *cel_ext_alloc(cel_run *ev, size_t n);
/* An error value with a message (the evaluation stops with it unless a branch discards it). */
cel_value cel_ext_error(cel_run *ev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A list value holding a copy of v[0..n). */
cel_value cel_ext_list(cel_run *ev, const cel_value *v, size_t n);
/* CEL equality (==) of two values. */
bool cel_ext_equal(const cel_value *a, const cel_value *b);

#endif
