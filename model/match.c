/* model/match.c - label and node selector matching, taints and tolerations, resource ids. */
#include "model/model_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *model_labels_get(const model_labels *l, const char *key) {
  for (uint32_t i = 0; i < l->n; i++)
    if (l->v[i].key == key) return l->v[i].value;
  return NULL;
}

static bool value_in(const model_req *r, const char *v) {
  for (uint32_t i = 0; i < r->nvalues; i++)
    if (r->values[i] == v) return true;
  return false;
}

/* Kubernetes' labels.Requirement.Matches; v is the label value or NULL when absent. */
static bool req_matches(const model_req *r, const char *v) {
  char *end;
  long long n;
  switch (r->op) {
  case MODEL_OP_IN:
    return v && value_in(r, v);
  case MODEL_OP_NOT_IN:
    return !v || !value_in(r, v);
  case MODEL_OP_EXISTS:
    return v != NULL;
  case MODEL_OP_DOES_NOT_EXIST:
    return v == NULL;
  default:
    if (!v) return false;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || *end || !*v) return false;
    return r->op == MODEL_OP_GT ? n > r->num : n < r->num;
  }
}

bool model_label_selector_match(const model_label_selector *s, const model_labels *labels) {
  if (!s->present) return false;
  for (uint32_t i = 0; i < s->nreqs; i++)
    if (!req_matches(&s->reqs[i], model_labels_get(labels, s->reqs[i].key))) return false;
  return true;
}

/* matchFields on metadata.name: In / NotIn by string comparison, of exactly one value (a
 * field selector of several values cannot be built: kube-scheduler's term matches nothing). */
static bool field_matches(const model_req *r, const char *name) {
  bool in = false;
  if (r->nvalues != 1) return false;
  for (uint32_t i = 0; i < r->nvalues && name && !in; i++) in = !strcmp(r->values[i], name);
  return r->op == MODEL_OP_IN ? in : !in;
}

static bool term_matches(const model_node_term *t, const char *node_name,
                         const model_labels *labels) {
  if (!t->nexprs && !t->nfields) return false; /* an empty term matches no objects */
  for (uint32_t i = 0; i < t->nexprs; i++)
    if (!req_matches(&t->exprs[i], model_labels_get(labels, t->exprs[i].key))) return false;
  for (uint32_t i = 0; i < t->nfields; i++)
    if (!field_matches(&t->fields[i], node_name)) return false;
  return true;
}

bool model_node_selector_match(const model_node_selector *s, const char *node_name,
                               const model_labels *labels) {
  for (uint32_t i = 0; i < s->nterms; i++)
    if (term_matches(&s->terms[i], node_name, labels)) return true;
  return false;
}

const char *model_effect_name(model_effect e) {
  static const char *const names[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
  return (unsigned)e < 4 ? names[e] : "";
}

bool model_tolerates(const model_toleration *t, const model_taint *taint) {
  if (t->effect != MODEL_EFFECT_ANY && t->effect != taint->effect) return false;
  if (*t->key && t->key != taint->key) return false;
  if (t->exists) return true;
  return t->value == taint->value;
}

const model_taint *model_untolerated_taint(const model_taint *taints, uint32_t ntaints,
                                           const model_toleration *tols, uint32_t ntols) {
  for (uint32_t i = 0; i < ntaints; i++) {
    const model_taint *t = &taints[i];
    bool ok = false;
    if (t->effect == MODEL_EFFECT_PREFER_NO_SCHEDULE) continue;
    for (uint32_t j = 0; j < ntols && !ok; j++) ok = model_tolerates(&tols[j], t);
    if (!ok) return t;
  }
  return NULL;
}

/* ---- resource ids ---------------------------------------------------------------------- */

struct model_resources {
  char **names;   /* id -> owned name */
  int count;      /* ids in use */
  int cap;        /* entries of names */
  ts_map by_name; /* name -> id + 1 (as a pointer value); keys are names[id] */
};

static const char *const builtin_names[MODEL_RES_FIRST_OTHER] = {
    "cpu", "memory", "ephemeral-storage", "pods", "a resource no node offers"};

model_resources *model_resources_new(void) {
  model_resources *t = ts_calloc(1, sizeof *t);
  if (!t) return NULL;
  ts_map_init(&t->by_name);
  for (int i = 0; i < MODEL_RES_FIRST_OTHER; i++)
    if (model_resource_id(t, builtin_names[i]) != i) {
      model_resources_free(t);
      return NULL;
    }
  return t;
}

void model_resources_free(model_resources *t) {
  if (!t) return;
  for (int i = 0; i < t->count; i++) ts_free(t->names[i]);
  ts_free(t->names);
  ts_map_free(&t->by_name);
  ts_free(t);
}

void model_resources_truncate(model_resources *t, int count) {
  if (!t || count < MODEL_RES_FIRST_OTHER) return;
  while (t->count > count) {
    char *n = t->names[--t->count];
    ts_map_del(&t->by_name, n, strlen(n));
    ts_free(n);
  }
}

int model_resource_find(const model_resources *t, const char *name) {
  void *v;
  if (!t) {
    for (int i = 0; i < MODEL_RES_UNOFFERED; i++)
      if (!strcmp(builtin_names[i], name)) return i;
    return -1;
  }
  v = ts_map_get(&t->by_name, name, strlen(name));
  if (!v || (int)((uintptr_t)v - 1) == MODEL_RES_UNOFFERED) return -1; /* not a name to use */
  return (int)((uintptr_t)v - 1);
}

int model_resource_id(model_resources *t, const char *name) {
  int id = model_resource_find(t, name);
  char *copy;
  if (id >= 0 || !t) return id;
  if (t->count >= MODEL_MAX_RESOURCE_IDS) return -1;
  if (t->count == t->cap) {
    int cap = t->cap ? 2 * t->cap : 16;
    char **v = ts_realloc(t->names, (size_t)cap * sizeof *v);
    if (!v) return -1;
    t->names = v, t->cap = cap;
  }
  if (!(copy = ts_strdup(name))) return -1;
  if (ts_map_put(&t->by_name, copy, strlen(copy), (void *)(uintptr_t)(t->count + 1), NULL) !=
      TS_OK) {
    ts_free(copy);
    return -1;
  }
  t->names[t->count] = copy;
  return t->count++;
}

const char *model_resource_name(const model_resources *t, int id) {
  if (!t) return id >= 0 && id < MODEL_RES_FIRST_OTHER ? builtin_names[id] : NULL;
  return id >= 0 && id < t->count ? t->names[id] : NULL;
}

int model_resource_count(const model_resources *t) {
  return t ? t->count : MODEL_RES_FIRST_OTHER;
}

ts_rc model_resource_amount(int id, const ts_quantity *q, int64_t *out) {
  return id == MODEL_RES_CPU ? ts_quantity_milli(q, out) : ts_quantity_value(q, out);
}

void model_resource_format(const model_resources *t, int id, int64_t amount, char *out) {
  ts_quantity q;
  if (id == MODEL_RES_CPU) {
    q = ts_quantity_from_milli(amount, TS_QFMT_DECIMAL_SI);
  } else {
    bool bytes =
        id == MODEL_RES_MEMORY || id == MODEL_RES_EPHEMERAL ||
        (model_resource_name(t, id) && !strncmp(model_resource_name(t, id), "hugepages-", 10));
    q = ts_quantity_from_int(amount, bytes ? TS_QFMT_BINARY_SI : TS_QFMT_DECIMAL_SI);
  }
  ts_quantity_format(&q, out);
}

int64_t model_rlist_get(const model_rlist *l, int id) {
  for (uint32_t i = 0; i < l->n; i++)
    if (l->v[i].id == id) return l->v[i].v;
  return 0;
}

/* ---- claim specs by value ----------------------------------------------------------------- */

static bool same_names(const char *const *a, const char *const *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (a[i] != b[i]) return false; /* interned */
  return true;
}

static bool same_sub(const model_subrequest *a, const model_subrequest *b) {
  if (a->name != b->name || a->device_class != b->device_class || a->mode != b->mode ||
      a->mode_text != b->mode_text || a->count != b->count || a->admin_access != b->admin_access ||
      a->nselectors != b->nselectors || a->ntolerations != b->ntolerations)
    return false;
  for (uint32_t i = 0; i < a->nselectors; i++)
    if (a->selectors[i].kind != b->selectors[i].kind ||
        strcmp(a->selectors[i].cel ? a->selectors[i].cel : "",
               b->selectors[i].cel ? b->selectors[i].cel : ""))
      return false;
  for (uint32_t i = 0; i < a->ntolerations; i++) {
    const model_device_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
    if (x->key != y->key || x->exists != y->exists || x->value != y->value ||
        x->effect != y->effect)
      return false;
  }
  return true;
}

static bool same_opaque(const model_opaque_config *a, const model_opaque_config *b) {
  return a->driver == b->driver &&
         (a->parameters == b->parameters ||
          (a->parameters && b->parameters && json_equal(a->parameters, b->parameters)));
}

bool model_claim_spec_equal(const model_claim_spec *a, const model_claim_spec *b) {
  if (a == b) return true;
  if (!a || !b || a->nrequests != b->nrequests || a->nconstraints != b->nconstraints ||
      a->nconfigs != b->nconfigs)
    return false;
  for (uint32_t i = 0; i < a->nrequests; i++) {
    const model_request *x = &a->requests[i], *y = &b->requests[i];
    if (x->name != y->name || x->first_available != y->first_available || x->nsubs != y->nsubs)
      return false;
    if (!x->first_available && !same_sub(&x->exactly, &y->exactly)) return false;
    for (uint32_t k = 0; x->first_available && k < x->nsubs; k++)
      if (!same_sub(&x->subs[k], &y->subs[k])) return false;
  }
  for (uint32_t i = 0; i < a->nconstraints; i++) {
    const model_constraint *x = &a->constraints[i], *y = &b->constraints[i];
    if (x->nrequests != y->nrequests || x->match_attribute != y->match_attribute ||
        x->distinct_attribute != y->distinct_attribute ||
        !same_names(x->requests, y->requests, x->nrequests))
      return false;
  }
  for (uint32_t i = 0; i < a->nconfigs; i++) {
    const model_claim_config *x = &a->configs[i], *y = &b->configs[i];
    if (x->nrequests != y->nrequests || !same_names(x->requests, y->requests, x->nrequests) ||
        !same_opaque(&x->opaque, &y->opaque))
      return false;
  }
  return true;
}
