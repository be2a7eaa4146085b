/* live/alloc.c - a claim allocation as the v1 AllocationResult kube-scheduler writes. */
#include "live/live.h"

#include <stdio.h>

static const char *op_name(model_sel_op op) {
  switch (op) {
  case MODEL_OP_IN:
    return "In";
  case MODEL_OP_NOT_IN:
    return "NotIn";
  case MODEL_OP_EXISTS:
    return "Exists";
  case MODEL_OP_DOES_NOT_EXIST:
    return "DoesNotExist";
  case MODEL_OP_GT:
    return "Gt";
  case MODEL_OP_LT:
    return "Lt";
  }
  return "In";
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
    if (r[i].op == MODEL_OP_GT || r[i].op == MODEL_OP_LT) {
      char num[32];
      snprintf(num, sizeof num, "%lld", (long long)r[i].num);
      json_object_set_new(o, "values", json_pack("[s]", num));
    } else if (r[i].nvalues) {
      json_object_set_new(o, "values", strings(r[i].values, r[i].nvalues));
    }
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

json_t *live_allocation_json(const sched_dra_result *r) {
  json_t *results = json_array(), *configs = json_array(), *devices, *out, *ns;
  for (uint32_t i = 0; i < r->ndevices; i++) {
    const sched_dra_device *d = &r->devices[i];
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "request", d->request, "driver", d->slice->driver,
                          "pool", d->slice->pool, "device", d->device->name);
    if (d->admin_access) json_object_set_new(o, "adminAccess", json_true());
    json_array_append_new(results, o);
  }
  for (uint32_t i = 0; i < r->nconfigs; i++) {
    const sched_dra_config *c = &r->configs[i];
    json_t *o =
        json_pack("{s:s}", "source", c->source == MODEL_FROM_CLASS ? "FromClass" : "FromClaim");
    if (c->nrequests) json_object_set_new(o, "requests", strings(c->requests, c->nrequests));
    if (c->opaque) {
      json_t *op = json_pack("{s:s}", "driver", c->opaque->driver ? c->opaque->driver : "");
      if (c->opaque->parameters) json_object_set(op, "parameters", c->opaque->parameters);
      json_object_set_new(o, "opaque", op);
    }
    json_array_append_new(configs, o);
  }
  devices = json_pack("{s:o}", "results", results);
  if (json_array_size(configs))
    json_object_set_new(devices, "config", configs);
  else
    json_decref(configs);
  out = json_pack("{s:o}", "devices", devices);
  if (out && (ns = node_selector(&r->node_selector))) json_object_set_new(out, "nodeSelector", ns);
  return out;
}
