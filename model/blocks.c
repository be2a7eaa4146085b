/* model/blocks.c - decoders of the building blocks several kinds share: labels, label and
 * node selectors, taints, tolerations and resource lists. */
#include "model/model_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

static int kv_cmp(const void *a, const void *b) {
  return strcmp(((const model_kv *)a)->key, ((const model_kv *)b)->key);
}

ts_rc model__labels(mdec *d, json_t *parent, const char *key, bool owned_values,
                    model_labels *out) {
  ts_rc rc;
  json_t *obj = model__object(d, parent, key, &rc), *v;
  const char *k;
  size_t mark;
  if (rc != TS_OK || !obj || !json_object_size(obj)) return rc;
  rc = model__alloc_array(d, json_object_size(obj), sizeof *out->v, (void **)&out->v);
  if (rc != TS_OK) return rc;
  mark = model__push(d, key);
  json_object_foreach(obj, k, v) {
    model_kv *kv = &out->v[out->n];
    if (owned_values && !strcmp(k, LAST_APPLIED)) continue;
    if (!json_is_string(v)) {
      model__push_key(d, k);
      return model__fail(d, TS_EINVAL, "must be a string");
    }
    kv->key = ts_intern_cstr(k);
    /* a label value belongs to its object (Job uids, pod-template hashes, job names come and
     * go): counted, it leaves with the last object holding it */
    kv->value = owned_values ? ts_strdup(json_string_value(v))
                             : ts_intern_ref(json_string_value(v), json_string_length(v));
    if (!kv->key || !kv->value) return model__fail(d, TS_ENOMEM, "out of memory");
    out->n++;
  }
  model__pop(d, mark);
  qsort(out->v, out->n, sizeof *out->v, kv_cmp);
  return TS_OK;
}

void model__labels_free(model_labels *l, bool owned_values) {
  for (uint32_t i = 0; i < l->n; i++)
    if (owned_values)
      ts_free((char *)l->v[i].value);
    else
      ts_intern_unref(l->v[i].value);
  ts_free(l->v);
  l->v = NULL;
  l->n = 0;
}

const char *const model_sel_op_names[MODEL_OP_LT + 1] = {"In",           "NotIn", "Exists",
                                                         "DoesNotExist", "Gt",    "Lt"};

/* Reads one {key, operator, values} requirement; allow_num admits Gt / Lt. */
static ts_rc decode_req(mdec *d, json_t *e, model_req *r, bool allow_num, bool field) {
  const char *const *ops = model_sel_op_names;
  int op = -1;
  ts_rc rc;
  if ((rc = model__intern(d, e, "key", &r->key, true)) != TS_OK) return rc;
  if (!json_object_get(e, "operator")) return model__fail_at(d, "operator", "is required");
  if ((rc = model__enum(d, e, "operator", ops, allow_num ? 6 : 4, &op)) != TS_OK) return rc;
  r->op = (model_sel_op)op;
  if ((rc = model__values(d, e, "values", &r->values, &r->nvalues)) != TS_OK) return rc;
  if (field && strcmp(r->key, "metadata.name") != 0)
    return model__fail_at(d, "key", "not a supported field selector: \"%s\"", r->key);
  if (field && r->op != MODEL_OP_IN && r->op != MODEL_OP_NOT_IN)
    return model__fail_at(d, "operator", "not a valid selector operator for fields");
  if (field && r->nvalues != 1) /* kube-scheduler would match nothing: the server refuses it */
    return model__fail_at(d, "values",
                          "must be only one value when `operator` is 'In' or "
                          "'NotIn' for node field selector");
  if (!field && !d->opts->lenient) {
    const char *why = model__qualified_name_error(r->key);
    if (why) return model__fail_at(d, "key", "Invalid value: \"%s\": %s", r->key, why);
  }
  switch (r->op) {
  case MODEL_OP_IN:
  case MODEL_OP_NOT_IN:
    if (!r->nvalues)
      return model__fail_at(d, "values", "must be specified when `operator` is 'In' or 'NotIn'");
    for (uint32_t i = 0; !field && !d->opts->lenient && i < r->nvalues; i++) {
      const char *why = model__label_value_error(r->values[i]);
      char at[32];
      if (!why) continue;
      snprintf(at, sizeof at, "values[%u]", i);
      return model__fail_at(d, at, "Invalid value: \"%s\": %s", r->values[i], why);
    }
    break;
  case MODEL_OP_EXISTS:
  case MODEL_OP_DOES_NOT_EXIST:
    if (r->nvalues)
      return model__fail_at(d, "values",
                            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    break;
  default: {
    char *end;
    if (r->nvalues != 1)
      return model__fail_at(d, "values",
                            "must be specified single value when `operator` is 'Lt' or 'Gt'");
    errno = 0;
    r->num = strtoll(r->values[0], &end, 10);
    if (errno || *end || !*r->values[0])
      return model__fail_at(d, "values", "must be an integer for 'Gt' or 'Lt': \"%s\"",
                            r->values[0]);
  }
  }
  return TS_OK;
}

/* Frees requirements; their values are references of ts_intern_ref (pinned ones: no-op). */
static void reqs_free(model_req *r, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t k = 0; k < r[i].nvalues && r[i].values; k++) ts_intern_unref(r[i].values[k]);
    ts_free(r[i].values);
  }
  ts_free(r);
}

/* Decodes parent[key], a list of requirements, appending to *reqs. */
static ts_rc decode_reqs(mdec *d, json_t *parent, const char *key, bool allow_num, bool field,
                         model_req **reqs, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *e;
  size_t i, mark;
  model_req *nr;
  if (rc != TS_OK || !arr || !json_array_size(arr)) return rc;
  nr = ts_realloc(*reqs, (*n + json_array_size(arr)) * sizeof *nr);
  if (!nr) return model__fail(d, TS_ENOMEM, "out of memory");
  *reqs = nr;
  mark = model__push(d, key);
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_req *r = &nr[(*n)++];
    memset(r, 0, sizeof *r);
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = decode_req(d, e, r, allow_num, field)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

ts_rc model__label_selector(mdec *d, json_t *parent, const char *key, model_label_selector *out) {
  ts_rc rc;
  json_t *sel = model__object(d, parent, key, &rc), *ml, *v;
  const char *k;
  size_t mark;
  if (rc != TS_OK || !sel) return rc;
  out->present = true;
  mark = model__push(d, key);
  ml = model__object(d, sel, "matchLabels", &rc);
  if (rc != TS_OK) return rc;
  if (ml && json_object_size(ml)) {
    out->reqs = ts_calloc(json_object_size(ml), sizeof *out->reqs);
    if (!out->reqs) return model__fail(d, TS_ENOMEM, "out of memory");
    json_object_foreach(ml, k, v) {
      model_req *r = &out->reqs[out->nreqs++];
      if (!json_is_string(v)) {
        model__push(d, "matchLabels");
        model__push_key(d, k);
        return model__fail(d, TS_EINVAL, "must be a string");
      }
      r->key = ts_intern_cstr(k);
      r->op = MODEL_OP_IN;
      r->values = ts_malloc(sizeof *r->values);
      if (!r->key || !r->values) return model__fail(d, TS_ENOMEM, "out of memory");
      r->values[0] = ts_intern_ref(json_string_value(v), json_string_length(v));
      r->nvalues = 1;
      if (!r->values[0]) return model__fail(d, TS_ENOMEM, "out of memory");
    }
  }
  rc = decode_reqs(d, sel, "matchExpressions", false, false, &out->reqs, &out->nreqs);
  if (rc == TS_OK) model__pop(d, mark);
  return rc;
}

void model__label_selector_free(model_label_selector *s) {
  reqs_free(s->reqs, s->nreqs);
  s->reqs = NULL;
  s->nreqs = 0;
}

ts_rc model__node_selector(mdec *d, json_t *parent, const char *key, model_node_selector *out) {
  ts_rc rc;
  json_t *sel = model__object(d, parent, key, &rc), *terms, *t;
  size_t i, mark, m2;
  if (rc != TS_OK || !sel) return rc;
  mark = model__push(d, key);
  terms = model__array(d, sel, "nodeSelectorTerms", &rc);
  if (rc != TS_OK) return rc;
  if (!terms || !json_array_size(terms))
    return model__fail_at(d, "nodeSelectorTerms", "must have at least one node selector term");
  rc = model__alloc_array(d, json_array_size(terms), sizeof *out->terms, (void **)&out->terms);
  if (rc != TS_OK) return rc;
  out->nterms = (uint32_t)json_array_size(terms);
  m2 = model__push(d, "nodeSelectorTerms");
  json_array_foreach(terms, i, t) {
    model_node_term *term = &out->terms[i];
    size_t m3 = model__push_index(d, i);
    if (!json_is_object(t)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = decode_reqs(d, t, "matchExpressions", true, false, &term->exprs, &term->nexprs)) ||
        (rc = decode_reqs(d, t, "matchFields", false, true, &term->fields, &term->nfields)))
      return rc;
    model__pop(d, m3);
  }
  model__pop(d, m2);
  model__pop(d, mark);
  return TS_OK;
}

/* A copy of src[0..n) into *dst, taking a reference of each value; on failure what was
 * copied is in *dst (*ndst entries) for reqs_free. */
static ts_rc reqs_copy(model_req **dst, uint32_t *ndst, const model_req *src, uint32_t n) {
  *dst = NULL, *ndst = 0;
  if (!n) return TS_OK;
  if (!(*dst = ts_calloc(n, sizeof **dst))) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    model_req *r = &(*dst)[(*ndst)++];
    *r = src[i];
    r->values = NULL, r->nvalues = 0;
    if (src[i].nvalues && !(r->values = ts_malloc(src[i].nvalues * sizeof *r->values)))
      return TS_ENOMEM;
    for (uint32_t k = 0; k < src[i].nvalues; k++, r->nvalues++)
      if (!(r->values[k] = ts_intern_ref(src[i].values[k], strlen(src[i].values[k]))))
        return TS_ENOMEM;
  }
  return TS_OK;
}

ts_rc model__node_selector_copy(model_node_selector *dst, const model_node_selector *src) {
  ts_rc rc = TS_OK;
  memset(dst, 0, sizeof *dst);
  if (!src->nterms) return TS_OK;
  if (!(dst->terms = ts_calloc(src->nterms, sizeof *dst->terms))) return TS_ENOMEM;
  dst->nterms = src->nterms;
  for (uint32_t i = 0; rc == TS_OK && i < src->nterms; i++) {
    const model_node_term *t = &src->terms[i];
    rc = reqs_copy(&dst->terms[i].exprs, &dst->terms[i].nexprs, t->exprs, t->nexprs);
    if (rc == TS_OK)
      rc = reqs_copy(&dst->terms[i].fields, &dst->terms[i].nfields, t->fields, t->nfields);
  }
  if (rc != TS_OK) model__node_selector_free(dst);
  return rc;
}

void model__node_selector_free(model_node_selector *s) {
  for (uint32_t i = 0; i < s->nterms; i++) {
    reqs_free(s->terms[i].exprs, s->terms[i].nexprs);
    reqs_free(s->terms[i].fields, s->terms[i].nfields);
  }
  ts_free(s->terms);
  s->terms = NULL;
  s->nterms = 0;
}

static const char *const effect_names[] = {NULL, "NoSchedule", "PreferNoSchedule", "NoExecute"};

ts_rc model__taints(mdec *d, json_t *parent, const char *key, model_taint **out, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *t;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof **out, (void **)out)) != TS_OK)
    return rc;
  *n = (uint32_t)json_array_size(arr);
  mark = model__push(d, key);
  json_array_foreach(arr, i, t) {
    model_taint *x = &(*out)[i];
    int eff = 0;
    size_t m2 = model__push_index(d, i);
    x->value = ts_intern_cstr("");
    if (!json_is_object(t)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__intern(d, t, "key", &x->key, true)) ||
        (rc = model__intern(d, t, "value", &x->value, false)))
      return rc;
    if (!json_object_get(t, "effect")) return model__fail_at(d, "effect", "is required");
    if ((rc = model__enum(d, t, "effect", effect_names, 4, &eff)) != TS_OK) return rc;
    x->effect = (model_effect)eff;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

ts_rc model__tolerations(mdec *d, json_t *parent, const char *key, model_toleration **out,
                         uint32_t *n) {
  static const char *const op_names[] = {"Equal", "Exists"};
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *t;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof **out, (void **)out)) != TS_OK)
    return rc;
  *n = (uint32_t)json_array_size(arr);
  mark = model__push(d, key);
  json_array_foreach(arr, i, t) {
    model_toleration *x = &(*out)[i];
    int op = 0, eff = 0;
    size_t m2 = model__push_index(d, i);
    x->key = x->value = ts_intern_cstr("");
    if (!json_is_object(t)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__intern(d, t, "key", &x->key, false)) ||
        (rc = model__intern(d, t, "value", &x->value, false)) ||
        (rc = model__enum(d, t, "operator", op_names, 2, &op)) ||
        (rc = model__enum(d, t, "effect", effect_names, 4, &eff)))
      return rc;
    x->exists = op == 1;
    x->effect = (model_effect)eff;
    if (x->exists && *x->value)
      return model__fail_at(d, "operator", "value must be empty when `operator` is 'Exists'");
    if (!*x->key && !x->exists)
      return model__fail_at(d, "operator", "operator must be Exists when `key` is empty");
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

int model__rq_cmp(const void *a, const void *b) {
  return (int)((const model_rq *)a)->id - (int)((const model_rq *)b)->id;
}

/* The id of a name a tenant wrote: the table's, else one of the decode's own. */
static int tenant_resource_id(mdec *d, const char *name) {
  int id = model_resource_find(d->res, name);
  if (id >= 0) return id;
  for (uint32_t i = 0; i < d->nlocal; i++)
    if (!strcmp(d->local[i], name)) return d->base + (int)i;
  if (d->nlocal == MODEL_MAX_OBJECT_NAMES) return -1;
  d->local[d->nlocal] = name;
  return d->base + (int)d->nlocal++;
}

const char *model__no_id(const mdec *d) {
  return d->res ? "no id for this resource name: more than 32768 names, or out of memory"
                : "no id for this resource name: decoded without the model's resource table";
}

const char *model__resource_name(const mdec *d, int id) {
  if (id >= d->base && (uint32_t)(id - d->base) < d->nlocal) return d->local[id - d->base];
  return model_resource_name(d->res, id);
}

ts_rc model__resolve_local(mdec *d, model_rlist *l, model_named_rq **named, uint32_t *nnamed) {
  uint32_t n = 0, k = 0, nlocal = 0;
  size_t bytes = 0;
  int64_t sum = 0;
  char *names;
  for (uint32_t i = 0; i < l->n; i++)
    if (l->v[i].id >= d->base) {
      nlocal++, sum = ts_add_sat(sum, l->v[i].v);
      bytes += strlen(model__resource_name(d, l->v[i].id)) + 1;
    }
  if (!nlocal) return TS_OK;
  if (named) {
    model_named_rq *v = ts_malloc(nlocal * sizeof *v + bytes);
    if (!v) return model__fail(d, TS_ENOMEM, "out of memory");
    names = (char *)(v + nlocal);
    for (uint32_t i = 0; i < l->n; i++) {
      const char *nm;
      size_t len;
      if (l->v[i].id < d->base) continue;
      nm = model__resource_name(d, l->v[i].id), len = strlen(nm) + 1;
      memcpy(names, nm, len);
      v[k++] = (model_named_rq){names, l->v[i].v};
      names += len;
    }
    *named = v, *nnamed = nlocal;
  }
  for (uint32_t i = 0; i < l->n; i++) /* keep the table's ids, then one UNOFFERED entry */
    if (l->v[i].id < d->base && l->v[i].id != MODEL_RES_UNOFFERED)
      l->v[n++] = l->v[i];
    else if (l->v[i].id == MODEL_RES_UNOFFERED)
      sum = ts_add_sat(sum, l->v[i].v);
  l->v[n++] = (model_rq){MODEL_RES_UNOFFERED, sum};
  l->n = n;
  qsort(l->v, l->n, sizeof *l->v, model__rq_cmp);
  return TS_OK;
}

ts_rc model__resource_map(mdec *d, json_t *parent, const char *key, model_rlist *out, bool tenant) {
  ts_rc rc;
  json_t *obj = model__object(d, parent, key, &rc), *v;
  const char *k;
  size_t mark;
  if (rc != TS_OK || !obj || !json_object_size(obj)) return rc;
  rc = model__alloc_array(d, json_object_size(obj), sizeof *out->v, (void **)&out->v);
  if (rc != TS_OK) return rc;
  mark = model__push(d, key);
  json_object_foreach(obj, k, v) {
    model_rq *r = &out->v[out->n];
    ts_quantity q;
    int id = tenant ? tenant_resource_id(d, k) : model_resource_id(d->res, k);
    size_t m2 = model__push_key(d, k);
    if (id < 0 && tenant)
      return model__fail(d, TS_ELIMIT, "more than %d resource names that no node offers",
                         MODEL_MAX_OBJECT_NAMES);
    if (id < 0) return model__fail(d, TS_ELIMIT, "%s", model__no_id(d));
    if ((rc = model__quantity_value(d, v, &q)) != TS_OK) return rc;
    if (ts_quantity_sign(&q) < 0)
      return model__fail(d, TS_EINVAL, "must be greater than or equal to 0");
    r->id = (uint16_t)id;
    if (model_resource_amount(id, &q, &r->v) != TS_OK)
      return model__fail(d, TS_EOVERFLOW, "is too large");
    if (id >= MODEL_RES_UNOFFERED && !ts_quantity_is_integer(&q) && strchr(k, '/') &&
        strncmp(k, "hugepages-", 10) != 0)
      return model__fail(d, TS_EINVAL, "must be an integer");
    out->n++;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  qsort(out->v, out->n, sizeof *out->v, model__rq_cmp);
  return TS_OK;
}
