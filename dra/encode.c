/* dra/encode.c - an allocation as written: the typed status.allocation of a result, and its
 * resource.k8s.io AllocationResult JSON, the one encoder behind every allocation Tessera
 * writes and behind the allocator conformance runner. */
#include "dra/dra.h"

#include <string.h>

/* The device's strings interned (the slice may go before the allocation does), in the
 * arena-free scratch array out (cap entries). */
static const char **interned(char *const *v, uint32_t n, const char **out) {
  for (uint32_t i = 0; i < n; i++) out[i] = ts_intern_cstr(v[i]);
  return n ? out : NULL;
}

ts_rc dra_result_allocation(const dra_result *r, model_allocation *out) {
  model_allocation a = {0};
  const char **names = NULL;
  size_t nnames = 0, at = 0;
  ts_rc rc = TS_OK;
  a.present = true;
  for (uint32_t i = 0; i < r->ndevices; i++)
    nnames += r->devices[i].device->nbinding_conditions +
              r->devices[i].device->nbinding_failure_conditions;
  if (r->ndevices && !(a.results = ts_calloc(r->ndevices, sizeof *a.results))) return TS_ENOMEM;
  if (nnames && !(names = ts_malloc(nnames * sizeof *names))) rc = TS_ENOMEM;
  for (uint32_t i = 0; rc == TS_OK && i < r->ndevices; i++, a.nresults++) {
    const dra_device *d = &r->devices[i];
    const model_device *dev = d->device;
    model_device_result *x = &a.results[i];
    *x = (model_device_result){d->request, d->slice->driver, d->slice->pool, dev->name,
                               d->admin_access};
    x->binding_conditions = interned(dev->binding_conditions, dev->nbinding_conditions, names + at);
    x->nbinding_conditions = dev->nbinding_conditions;
    at += dev->nbinding_conditions;
    x->binding_failure_conditions =
        interned(dev->binding_failure_conditions, dev->nbinding_failure_conditions, names + at);
    x->nbinding_failure_conditions = dev->nbinding_failure_conditions;
    at += dev->nbinding_failure_conditions;
  }
  if (r->nconfigs && !(a.configs = ts_calloc(r->nconfigs, sizeof *a.configs))) rc = TS_ENOMEM;
  for (uint32_t i = 0; rc == TS_OK && i < r->nconfigs; i++, a.nconfigs++) {
    const dra_config *c = &r->configs[i];
    a.configs[i].source = c->source;
    a.configs[i].requests = (const char **)c->requests, a.configs[i].nrequests = c->nrequests;
    if (c->opaque) a.configs[i].opaque = *c->opaque;
  }
  a.node_selector = r->node_selector;
  /* a shallow view so far: the copy owns what it points to */
  if (rc == TS_OK) rc = model_allocation_copy(out, &a);
  ts_free(names);
  ts_free(a.results);
  ts_free(a.configs);
  return rc;
}

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

json_t *dra_allocation_json(const model_allocation *a) {
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
