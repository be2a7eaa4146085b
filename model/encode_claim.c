/* model/encode_claim.c - what Tessera writes on a ResourceClaim: its AllocationResult, and the
 * steps from the claim as read to "finalizer, allocation and reservation written" and back, as
 * kube-scheduler's DRA plugin takes them (model/wire.h). */
#include "model/wire.h"

#include <string.h>

static const char *op_name(model_sel_op op) {
  return (unsigned)op <= MODEL_OP_LT ? model_sel_op_names[op] : "In";
}

static json_t *strings(const char *const *v, uint32_t n) {
  json_t *a = json_array();
  for (uint32_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(v[i]));
  return a;
}

static json_t *requirements(const model_req *r, uint32_t n) {
  json_t *a = json_array();
  for (uint32_t i = 0; a && i < n; i++) {
    json_t *o = json_pack("{s:s, s:s}", "key", r[i].key, "operator", op_name(r[i].op));
    if (o && r[i].nvalues) json_object_set_new(o, "values", strings(r[i].values, r[i].nvalues));
    json_array_append_new(a, o);
  }
  return a;
}

/* core/v1 NodeSelector; NULL when there is no constraint. */
static json_t *node_selector(const model_node_selector *s) {
  json_t *terms;
  if (!s->nterms) return NULL;
  terms = json_array();
  for (uint32_t i = 0; terms && i < s->nterms; i++) {
    json_t *t = json_object();
    if (s->terms[i].nexprs)
      json_object_set_new(t, "matchExpressions",
                          requirements(s->terms[i].exprs, s->terms[i].nexprs));
    if (s->terms[i].nfields)
      json_object_set_new(t, "matchFields", requirements(s->terms[i].fields, s->terms[i].nfields));
    json_array_append_new(terms, t);
  }
  return json_pack("{s:o}", "nodeSelectorTerms", terms);
}

static json_t *result(const model_device_result *d) {
  json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "request", d->request, "driver", d->driver, "pool",
                        d->pool, "device", d->device);
  if (!o) return NULL;
  if (d->admin_access) json_object_set_new(o, "adminAccess", json_true());
  if (d->nbinding_conditions) {
    json_object_set_new(o, "bindingConditions",
                        strings(d->binding_conditions, d->nbinding_conditions));
    json_object_set_new(o, "bindingFailureConditions",
                        strings(d->binding_failure_conditions, d->nbinding_failure_conditions));
  }
  return o;
}

static json_t *config(const model_alloc_config *c) {
  json_t *o =
      json_pack("{s:s}", "source", c->source == MODEL_FROM_CLASS ? "FromClass" : "FromClaim");
  json_t *op;
  if (!o) return NULL;
  if (c->nrequests) json_object_set_new(o, "requests", strings(c->requests, c->nrequests));
  if (c->opaque.driver || c->opaque.parameters) {
    op = json_pack("{s:s}", "driver", c->opaque.driver ? c->opaque.driver : "");
    if (op && c->opaque.parameters) json_object_set(op, "parameters", c->opaque.parameters);
    json_object_set_new(o, "opaque", op);
  }
  return o;
}

json_t *model_allocation_json(const model_allocation *a) {
  json_t *results = json_array(), *configs = json_array(), *devices, *out, *ns;
  for (uint32_t i = 0; results && i < a->nresults; i++)
    json_array_append_new(results, result(&a->results[i]));
  for (uint32_t i = 0; configs && i < a->nconfigs; i++)
    json_array_append_new(configs, config(&a->configs[i]));
  devices = json_pack("{s:o}", "results", results);
  if (devices && json_array_size(configs))
    json_object_set_new(devices, "config", configs);
  else
    json_decref(configs);
  out = json_pack("{s:o}", "devices", devices);
  if (out && (ns = node_selector(&a->node_selector))) json_object_set_new(out, "nodeSelector", ns);
  return out;
}

/* ---- reserve and unreserve ----------------------------------------------------------------- */

static bool has_finalizer(const json_t *claim) {
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(json_object_get(claim, "metadata"), "finalizers"), i, f)
    if (!strcmp(json_string_value(f) ?: "", MODEL_CLAIM_FINALIZER)) return true;
  return false;
}

static bool reserved(const json_t *claim, const char *uid) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(json_object_get(claim, "status"), "reservedFor"), i, c)
    if (!strcmp(json_string_value(json_object_get(c, "uid")) ?: "", uid)) return true;
  return false;
}

/* What one step does next. */
typedef enum step {
  DONE,       /* nothing left to write */
  PUT,        /* PUT *body to the claim */
  PUT_STATUS, /* PUT *body to its status subresource */
  ELSEWHERE,  /* allocated differently meanwhile: give up */
} step;

/* *body = the claim with the finalizer added (or, remove: without it). */
static step with_finalizer(const json_t *claim, bool remove, json_t **body) {
  json_t *copy = json_deep_copy(claim), *md, *fin, *x;
  size_t i;
  if (!copy) return PUT; /* *body NULL: out of memory */
  md = json_object_get(copy, "metadata");
  if (remove) {
    json_t *keep = json_array();
    json_array_foreach(json_object_get(md, "finalizers"), i, x)
      if (strcmp(json_string_value(x) ?: "", MODEL_CLAIM_FINALIZER)) json_array_append(keep, x);
    json_object_set_new(md, "finalizers", keep);
  } else {
    if (!json_is_array(fin = json_object_get(md, "finalizers")))
      json_object_set_new(md, "finalizers", fin = json_array());
    json_array_append_new(fin, json_string(MODEL_CLAIM_FINALIZER));
  }
  *body = copy;
  return PUT;
}

static step reserve_step(const json_t *claim, const json_t *alloc, const char *pod_name,
                         const char *pod_uid, json_t **body) {
  json_t *st = json_object_get(claim, "status"), *copy, *rf;
  const json_t *had = json_object_get(st, "allocation");
  *body = NULL;
  if (had && alloc && !json_equal(had, alloc)) return ELSEWHERE;
  if (!has_finalizer(claim) && (alloc || !had)) return with_finalizer(claim, false, body);
  if (reserved(claim, pod_uid) && (had || !alloc)) return DONE;
  if (!(copy = json_deep_copy(claim))) return PUT_STATUS;
  if (!json_is_object(st = json_object_get(copy, "status")))
    json_object_set_new(copy, "status", st = json_object());
  if (!had && alloc) json_object_set_new(st, "allocation", json_deep_copy(alloc));
  if (!json_is_array(rf = json_object_get(st, "reservedFor")))
    json_object_set_new(st, "reservedFor", rf = json_array());
  if (!reserved(claim, pod_uid))
    json_array_append_new(
        rf, json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", pod_name, "uid", pod_uid));
  *body = copy;
  return PUT_STATUS;
}

static step unreserve_step(const json_t *claim, const char *pod_uid, json_t **body) {
  json_t *st = json_object_get(claim, "status"), *copy, *keep, *x;
  size_t i;
  *body = NULL;
  if (reserved(claim, pod_uid)) {
    if (!(copy = json_deep_copy(claim))) return PUT_STATUS;
    st = json_object_get(copy, "status");
    keep = json_array();
    json_array_foreach(json_object_get(st, "reservedFor"), i, x)
      if (strcmp(json_string_value(json_object_get(x, "uid")) ?: "", pod_uid))
        json_array_append(keep, x);
    if (json_array_size(keep))
      json_object_set_new(st, "reservedFor", keep);
    else
      json_decref(keep), json_object_del(st, "reservedFor"), json_object_del(st, "allocation");
    *body = copy;
    return PUT_STATUS;
  }
  if (!json_array_size(json_object_get(st, "reservedFor")) && !json_object_get(st, "allocation") &&
      has_finalizer(claim))
    return with_finalizer(claim, true, body);
  return DONE;
}

ts_rc model_claim_step(void *ud, const json_t *claim, json_t **body, bool *status) {
  const model_claim_write *w = ud;
  const char *uid = json_string_value(json_object_get(json_object_get(claim, "metadata"), "uid"));
  step s;
  *body = NULL, *status = false;
  if (w->claim_uid && *w->claim_uid && uid && strcmp(uid, w->claim_uid)) return TS_ENOTFOUND;
  s = w->unreserve ? unreserve_step(claim, w->pod_uid, body)
                   : reserve_step(claim, w->alloc, w->pod_name, w->pod_uid, body);
  *status = s == PUT_STATUS;
  if (s == ELSEWHERE) return TS_EELSEWHERE;
  return s != DONE && !*body ? TS_ENOMEM : TS_OK;
}
