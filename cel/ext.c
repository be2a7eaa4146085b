/* cel/ext.c - libraries of host types and functions (cel_ext.h): their environments, their
 * functions as the checker and the evaluator look them up, and the helpers they use. */
#include <stdio.h>
#include <string.h>

#include "cel/cel_int.h"

const cel_type *cel_ext_type(cel_tytab *t, const char *spec) {
  return spec ? cel__ty_parse(t, spec, strlen(spec), false) : NULL;
}

const cel_type *cel_ext_named_dyn(cel_tytab *t, const char *name) {
  return cel__ty_named(t, TY_DYN, name);
}

const cel_type *cel_ext_map_type(cel_tytab *t, const cel_type *key, const cel_type *value) {
  return cel__ty2(t, TY_MAP, key, value);
}

const char *cel_ext_type_name(const cel_type *t) {
  return t && (t->kind == TY_DYN || t->kind == TY_OBJECT) ? t->name : NULL;
}

cel_env *cel_env_new_ext(const cel_ext *x, const void *opts) {
  cel_env *e = cel_env_new();
  if (!e) return NULL;
  e->ext = x, e->ext_opts = opts;
  if (x->nfunctions && !(e->ext_ovl = ts_calloc(x->nfunctions, sizeof *e->ext_ovl))) {
    cel_env_free(e);
    return NULL;
  }
  for (size_t i = 0; i < x->nfunctions; i++) {
    cel_overload *o = &e->ext_ovl[e->next_ovl++];
    o->name = ts_intern_cstr(x->functions[i].name);
    o->sig = x->functions[i].signature;
    o->fn = x->functions[i].fn;
    if (!o->name || !cel__overload_parse(&e->types, o)) {
      fprintf(stderr, "cel: bad signature %s: %s\n", x->functions[i].name, o->sig);
      cel_env_free(e);
      return NULL;
    }
  }
  return e;
}

const void *cel_env_ext_opts(const cel_env *e) {
  return e->ext_opts;
}

const cel_ext_object *cel__ext_object(const cel_env *e, const cel_type *t) {
  if (!e->ext || !t || t->kind != TY_OBJECT) return NULL;
  for (size_t i = 0; i < e->ext->nobjects; i++)
    if (!strcmp(e->ext->objects[i]->name, t->name)) return e->ext->objects[i];
  return NULL;
}

bool cel__ext_has(const cel_env *e, const char *name) {
  bool any = false;
  for (size_t i = 0; i < e->next_ovl && !any; i++) any = e->ext_ovl[i].name == name;
  return any && (!e->ext->function_enabled || e->ext->function_enabled(e, name));
}

void *cel_ext_alloc(cel_run *ev, size_t n) {
  return cel__alloc(ev, n);
}

cel_value cel_ext_error(cel_run *ev, const char *fmt, ...) {
  char msg[TS_ERR_TEXT_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return cel__err(ev, "%s", msg);
}

cel_value cel_ext_list(cel_run *ev, const cel_value *v, size_t n) {
  return cel__list(ev, v, n);
}

bool cel_ext_equal(const cel_value *a, const cel_value *b) {
  return cel__equal(a, b);
}
