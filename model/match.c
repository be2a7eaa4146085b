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

static const char *res_names[MODEL_MAX_RESOURCES]; /* id -> interned name */
static int res_count;                              /* ids in use */

static void res_init(void) {
  if (res_count) return;
  res_names[MODEL_RES_CPU] = ts_intern_cstr("cpu");
  res_names[MODEL_RES_MEMORY] = ts_intern_cstr("memory");
  res_names[MODEL_RES_EPHEMERAL] = ts_intern_cstr("ephemeral-storage");
  res_names[MODEL_RES_PODS] = ts_intern_cstr("pods");
  res_names[MODEL_RES_UNOFFERED] = ts_intern_cstr("a resource no node offers");
  res_count = MODEL_RES_FIRST_OTHER;
}

void model__resource_rollback(int count) {
  if (count >= MODEL_RES_FIRST_OTHER && count < res_count) res_count = count;
}

int model_resource_id(const char *name) {
  const char *in;
  res_init();
  in = ts_intern_cstr(name);
  if (!in) return -1;
  for (int i = 0; i < res_count; i++)
    if (res_names[i] == in) return i;
  if (res_count == MODEL_MAX_RESOURCES) return -1;
  res_names[res_count] = in;
  return res_count++;
}

const char *model_resource_name(int id) {
  res_init();
  return id >= 0 && id < res_count ? res_names[id] : NULL;
}

int model_resource_count(void) {
  res_init();
  return res_count;
}

ts_rc model_resource_amount(int id, const ts_quantity *q, int64_t *out) {
  return id == MODEL_RES_CPU ? ts_quantity_milli(q, out) : ts_quantity_value(q, out);
}

void model_resource_format(int id, int64_t amount, char *out) {
  ts_quantity q;
  if (id == MODEL_RES_CPU) {
    q = ts_quantity_from_milli(amount, TS_QFMT_DECIMAL_SI);
  } else {
    bool bytes = id == MODEL_RES_MEMORY || id == MODEL_RES_EPHEMERAL ||
                 !strncmp(model_resource_name(id), "hugepages-", 10);
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
