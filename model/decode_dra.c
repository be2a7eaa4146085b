/* model/decode_dra.c - ResourceSlice, DeviceClass, ResourceClaim and ResourceClaimTemplate in
 * resource.k8s.io v1beta1, v1beta2 and v1, into one internal form.
 *
 * The versions differ in shape only: v1beta1 wraps device fields in `basic` and puts request
 * fields on the request itself; v1beta2 and v1 are flat and wrap requests in `exactly` or
 * `firstAvailable`. */
#include "model/model_int.h"

#include <string.h>

#define DRA_MAX_REQUESTS  32  /* requests per claim, as the API server validates */
#define DRA_MAX_SELECTORS 32  /* selectors per request or class */
#define DRA_MAX_DEVICES   128 /* devices per slice (v1) */

static bool is_v1beta1(const mdec *d) {
  return !strcmp(d->version, "v1beta1");
}

/* Splits a possibly qualified name: "gpu.nvidia.com/memory" or "memory" (driver's domain). */
static ts_rc qualified(mdec *d, const char *full, const char *driver, const char **domain,
                       const char **name) {
  const char *slash = strchr(full, '/');
  if (slash) {
    *domain = ts_intern(full, (size_t)(slash - full));
    *name = ts_intern_cstr(slash + 1);
  } else {
    *domain = driver;
    *name = ts_intern_cstr(full);
  }
  if (!*domain || !*name) return model__fail(d, TS_ENOMEM, "out of memory");
  if (!**name || (slash && slash == full))
    return model__fail(d, TS_EINVAL, "must be a C identifier, optionally with a domain prefix");
  return TS_OK;
}

static ts_rc attribute(mdec *d, json_t *v, const char *key, const char *driver, model_attr *a) {
  static const char *const types[] = {"bool", "int", "string", "version"};
  int set = 0;
  ts_rc rc;
  if ((rc = qualified(d, key, driver, &a->domain, &a->name)) != TS_OK) return rc;
  if (!json_is_object(v)) return model__fail(d, TS_EINVAL, "must be an object");
  for (int i = 0; i < 4; i++) {
    json_t *x = json_object_get(v, types[i]);
    if (!x || json_is_null(x)) continue;
    set++;
    a->kind = (model_attr_kind)i;
  }
  if (set != 1) return model__fail(d, TS_EINVAL, "exactly one value must be specified");
  switch (a->kind) {
  case MODEL_ATTR_BOOL:
    return model__bool(d, v, "bool", &a->b, NULL);
  case MODEL_ATTR_INT:
    return model__int(d, v, "int", &a->i, NULL);
  case MODEL_ATTR_STRING:
    return model__strdup(d, v, "string", &a->s, false);
  default:
    return model__strdup(d, v, "version", &a->s, true);
  }
}

static ts_rc attributes(mdec *d, json_t *dev, const char *driver, model_device *x) {
  ts_rc rc;
  json_t *obj = model__object(d, dev, "attributes", &rc), *v;
  const char *k;
  size_t mark;
  if (rc != TS_OK || !obj) return rc;
  if ((rc = model__alloc_array(d, json_object_size(obj), sizeof *x->attrs, (void **)&x->attrs)))
    return rc;
  mark = model__push(d, "attributes");
  json_object_foreach(obj, k, v) {
    size_t m2 = model__push_key(d, k);
    model_attr *a = &x->attrs[x->nattrs++];
    if ((rc = attribute(d, v, k, driver, a)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc capacities(mdec *d, json_t *dev, const char *driver, model_device *x) {
  ts_rc rc;
  json_t *obj = model__object(d, dev, "capacity", &rc), *v;
  const char *k;
  size_t mark;
  if (rc != TS_OK || !obj) return rc;
  if ((rc = model__alloc_array(d, json_object_size(obj), sizeof *x->caps, (void **)&x->caps)))
    return rc;
  mark = model__push(d, "capacity");
  json_object_foreach(obj, k, v) {
    size_t m2 = model__push_key(d, k);
    model_capacity *c = &x->caps[x->ncaps++];
    if ((rc = qualified(d, k, driver, &c->domain, &c->name)) != TS_OK) return rc;
    if (!json_is_object(v)) return model__fail(d, TS_EINVAL, "must be an object");
    if (!json_object_get(v, "value")) return model__fail_at(d, "value", "is required");
    if ((rc = model__quantity(d, v, "value", &c->value, NULL)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

/* {name: {value: Q}} into counters. */
static ts_rc counters(mdec *d, json_t *parent, model_counter_set *set) {
  ts_rc rc;
  json_t *obj = model__object(d, parent, "counters", &rc), *v;
  const char *k;
  size_t mark;
  if (rc != TS_OK || !obj) return rc;
  rc = model__alloc_array(d, json_object_size(obj), sizeof *set->counters, (void **)&set->counters);
  if (rc != TS_OK) return rc;
  mark = model__push(d, "counters");
  json_object_foreach(obj, k, v) {
    size_t m2 = model__push_key(d, k);
    model_counter *c = &set->counters[set->ncounters++];
    if (!(c->name = ts_intern_cstr(k))) return model__fail(d, TS_ENOMEM, "out of memory");
    if (!json_is_object(v)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__quantity(d, v, "value", &c->value, NULL)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

/* sharedCounters ([{name, counters}]) or consumesCounters ([{counterSet, counters}]). */
static ts_rc counter_sets(mdec *d, json_t *parent, const char *key, const char *name_key,
                          model_counter_set **out, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof **out, (void **)out))) return rc;
  mark = model__push(d, key);
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_counter_set *s = &(*out)[(*n)++];
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__intern(d, e, name_key, &s->name, true)) || (rc = counters(d, e, s))) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static void counter_sets_free(model_counter_set *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) ts_free(s[i].counters);
  ts_free(s);
}

static ts_rc device_taints(mdec *d, json_t *dev, model_device *x) {
  model_taint *t = NULL;
  uint32_t n = 0;
  ts_rc rc = model__taints(d, dev, "taints", &t, &n);
  if (rc == TS_OK && n) {
    x->taints = ts_calloc(n, sizeof *x->taints);
    if (!x->taints) rc = model__fail(d, TS_ENOMEM, "out of memory");
    for (uint32_t i = 0; x->taints && i < n; i++)
      x->taints[i] = (model_device_taint){t[i].key, t[i].value, t[i].effect};
    if (x->taints) x->ntaints = n;
  }
  ts_free(t);
  return rc;
}

/* The fields of a device (the device in v1/v1beta2, its `basic` in v1beta1). */
static ts_rc device_fields(mdec *d, json_t *f, const char *driver, model_device *x) {
  bool amp = false, has_amp = false;
  ts_rc rc;
  if ((rc = attributes(d, f, driver, x)) || (rc = capacities(d, f, driver, x)) ||
      (rc = counter_sets(d, f, "consumesCounters", "counterSet", &x->consumes, &x->nconsumes)) ||
      (rc = device_taints(d, f, x)) ||
      (rc = model__intern(d, f, "nodeName", &x->node_name, false)) ||
      (rc = model__node_selector(d, f, "nodeSelector", &x->node_selector)) ||
      (rc = model__bool(d, f, "allNodes", &x->all_nodes, NULL)) ||
      (rc = model__bool(d, f, "allowMultipleAllocations", &amp, &has_amp)) ||
      (rc = model__bool(d, f, "bindsToNode", &x->binds_to_node, NULL)) ||
      (rc = model__strdups(d, f, "bindingConditions", &x->binding_conditions,
                           &x->nbinding_conditions)) ||
      (rc = model__strdups(d, f, "bindingFailureConditions", &x->binding_failure_conditions,
                           &x->nbinding_failure_conditions)))
    return rc;
  x->allow_multiple = has_amp ? amp : -1;
  return TS_OK;
}

static ts_rc device(mdec *d, json_t *e, const char *driver, model_device *x) {
  ts_rc rc;
  json_t *f = e;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "name", &x->name, true)) != TS_OK) return rc;
  if (is_v1beta1(d)) {
    size_t mark;
    f = model__object(d, e, "basic", &rc);
    if (rc != TS_OK) return rc;
    if (!f) return TS_OK; /* a device with no basic fields */
    mark = model__push(d, "basic");
    rc = device_fields(d, f, driver, x);
    if (rc == TS_OK) model__pop(d, mark);
    return rc;
  }
  return device_fields(d, f, driver, x);
}

static void device_free(model_device *x) {
  for (uint32_t i = 0; i < x->nattrs; i++) ts_free(x->attrs[i].s);
  ts_free(x->attrs);
  ts_free(x->caps);
  counter_sets_free(x->consumes, x->nconsumes);
  ts_free(x->taints);
  model__node_selector_free(&x->node_selector);
  model__strdups_free(x->binding_conditions, x->nbinding_conditions);
  model__strdups_free(x->binding_failure_conditions, x->nbinding_failure_conditions);
}

static ts_rc slice_devices(mdec *d, json_t *spec, model_slice *s) {
  ts_rc rc;
  json_t *arr = model__array(d, spec, "devices", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if (json_array_size(arr) > DRA_MAX_DEVICES && !d->opts->lenient)
    return model__fail_at(d, "devices", "must have at most %d items", DRA_MAX_DEVICES);
  rc = model__alloc_array(d, json_array_size(arr), sizeof *s->devices, (void **)&s->devices);
  if (rc != TS_OK) return rc;
  mark = model__push(d, "devices");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_device *x = &s->devices[s->ndevices++];
    if ((rc = device(d, e, s->driver, x)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc slice_pool(mdec *d, json_t *spec, model_slice *s) {
  ts_rc rc;
  json_t *pool = model__object(d, spec, "pool", &rc);
  bool has = false;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!pool) return model__fail_at(d, "pool", "is required");
  mark = model__push(d, "pool");
  if ((rc = model__intern(d, pool, "name", &s->pool, true)) ||
      (rc = model__int(d, pool, "generation", &s->pool_generation, NULL)) ||
      (rc = model__int(d, pool, "resourceSliceCount", &s->pool_slice_count, &has)))
    return rc;
  if (!has || s->pool_slice_count < 1)
    return model__fail_at(d, "resourceSliceCount", "must be greater than zero");
  model__pop(d, mark);
  return TS_OK;
}

ts_rc model__decode_slice(mdec *d, json_t *root, model_obj *o) {
  model_slice *s = (model_slice *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc);
  size_t mark;
  int where;
  if (rc != TS_OK) return rc;
  if (!spec) return model__fail(d, TS_EINVAL, "spec: is required");
  mark = model__push(d, "spec");
  if ((rc = model__intern(d, spec, "driver", &s->driver, true)) || (rc = slice_pool(d, spec, s)) ||
      (rc = model__intern(d, spec, "nodeName", &s->node_name, false)) ||
      (rc = model__node_selector(d, spec, "nodeSelector", &s->node_selector)) ||
      (rc = model__bool(d, spec, "allNodes", &s->all_nodes, NULL)) ||
      (rc = model__bool(d, spec, "perDeviceNodeSelection", &s->per_device_node_selection, NULL)) ||
      (rc = counter_sets(d, spec, "sharedCounters", "name", &s->counter_sets, &s->ncounter_sets)))
    return rc;
  if (s->node_name && !*s->node_name) s->node_name = NULL;
  where = (s->node_name != NULL) + (s->node_selector.nterms > 0) + s->all_nodes +
          s->per_device_node_selection;
  if (where != 1)
    return model__fail(d, TS_EINVAL,
                       "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                       "`perDeviceNodeSelection` is required");
  if ((rc = slice_devices(d, spec, s)) != TS_OK) return rc;
  model__pop(d, mark);
  return TS_OK;
}

void model__free_slice(model_obj *o) {
  model_slice *s = (model_slice *)o;
  if (s->derived && s->derived_free) s->derived_free(s->derived);
  model__node_selector_free(&s->node_selector);
  counter_sets_free(s->counter_sets, s->ncounter_sets);
  for (uint32_t i = 0; i < s->ndevices; i++) device_free(&s->devices[i]);
  ts_free(s->devices);
}

/* ---- selectors and configs ------------------------------------------------------------- */

static ts_rc selectors(mdec *d, json_t *parent, model_device_selector **out, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, "selectors", &rc), *e, *cel;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if (json_array_size(arr) > DRA_MAX_SELECTORS)
    return model__fail_at(d, "selectors", "must have at most %d items", DRA_MAX_SELECTORS);
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof **out, (void **)out))) return rc;
  mark = model__push(d, "selectors");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_device_selector *s = &(*out)[(*n)++];
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    cel = model__object(d, e, "cel", &rc);
    if (rc != TS_OK) return rc;
    if (!cel) {
      if (!d->opts->lenient) return model__fail_at(d, "cel", "is required");
      s->kind = MODEL_SELECTOR_UNKNOWN;
    } else {
      size_t m3 = model__push(d, "cel");
      if ((rc = model__strdup(d, cel, "expression", &s->cel, true)) != TS_OK) return rc;
      model__pop(d, m3);
    }
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static void selectors_free(model_device_selector *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) ts_free(s[i].cel);
  ts_free(s);
}

static ts_rc opaque(mdec *d, json_t *parent, model_opaque_config *out) {
  ts_rc rc;
  json_t *op = model__object(d, parent, "opaque", &rc), *params;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!op) return model__fail_at(d, "opaque", "is required");
  mark = model__push(d, "opaque");
  if ((rc = model__intern(d, op, "driver", &out->driver, true)) != TS_OK) return rc;
  params = json_object_get(op, "parameters");
  if (!params || json_is_null(params)) return model__fail_at(d, "parameters", "is required");
  out->parameters = json_incref(params);
  model__pop(d, mark);
  return TS_OK;
}

ts_rc model__decode_device_class(mdec *d, json_t *root, model_obj *o) {
  model_device_class *c = (model_device_class *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *arr, *e;
  size_t i, mark, m2;
  if (rc != TS_OK || !spec) return rc;
  mark = model__push(d, "spec");
  if ((rc = selectors(d, spec, &c->selectors, &c->nselectors)) ||
      (rc = model__intern(d, spec, "extendedResourceName", &c->extended_resource, false)))
    return rc;
  arr = model__array(d, spec, "config", &rc);
  if (rc != TS_OK) return rc;
  if (arr) {
    if ((rc =
             model__alloc_array(d, json_array_size(arr), sizeof *c->configs, (void **)&c->configs)))
      return rc;
    m2 = model__push(d, "config");
    json_array_foreach(arr, i, e) {
      size_t m3 = model__push_index(d, i);
      if ((rc = opaque(d, e, &c->configs[c->nconfigs++])) != TS_OK) return rc;
      model__pop(d, m3);
    }
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

void model__free_device_class(model_obj *o) {
  model_device_class *c = (model_device_class *)o;
  selectors_free(c->selectors, c->nselectors);
  for (uint32_t i = 0; i < c->nconfigs; i++) json_decref(c->configs[i].parameters);
  ts_free(c->configs);
}

/* ---- claims ---------------------------------------------------------------------------- */

static ts_rc device_tolerations(mdec *d, json_t *parent, model_subrequest *r) {
  model_toleration *t = NULL;
  uint32_t n = 0;
  ts_rc rc = model__tolerations(d, parent, "tolerations", &t, &n);
  if (rc == TS_OK && n) {
    r->tolerations = ts_calloc(n, sizeof *r->tolerations);
    if (!r->tolerations) rc = model__fail(d, TS_ENOMEM, "out of memory");
    for (uint32_t i = 0; r->tolerations && i < n; i++)
      r->tolerations[i] = (model_device_toleration){t[i].key, t[i].exists, t[i].value, t[i].effect};
    if (r->tolerations) r->ntolerations = n;
  }
  ts_free(t);
  return rc;
}

/* The fields of one device request (exactly, a firstAvailable entry, or a v1beta1 request). */
static ts_rc subrequest(mdec *d, json_t *e, model_subrequest *r, bool need_class) {
  static const char *const modes[] = {"ExactCount", "All"};
  bool has_count = false;
  int mode = 0;
  ts_rc rc;
  if ((rc = model__intern(d, e, "deviceClassName", &r->device_class,
                          need_class && !d->opts->lenient)) ||
      (rc = model__intern(d, e, "allocationMode", &r->mode_text, false)) ||
      (rc = selectors(d, e, &r->selectors, &r->nselectors)) ||
      (rc = model__int(d, e, "count", &r->count, &has_count)) ||
      (rc = model__bool(d, e, "adminAccess", &r->admin_access, NULL)) ||
      (rc = device_tolerations(d, e, r)))
    return rc;
  if (d->opts->lenient && json_is_string(json_object_get(e, "allocationMode")) &&
      strcmp(json_string_value(json_object_get(e, "allocationMode")), "ExactCount") != 0 &&
      strcmp(json_string_value(json_object_get(e, "allocationMode")), "All") != 0) {
    r->mode = MODEL_ALLOC_UNKNOWN;
    return TS_OK;
  }
  if ((rc = model__enum(d, e, "allocationMode", modes, 2, &mode)) != TS_OK) return rc;
  r->mode = (model_alloc_mode)mode;
  /* count 0 is unset (omitempty): the API server defaults it to 1 */
  if (r->mode == MODEL_ALLOC_EXACT_COUNT && (!has_count || r->count == 0)) r->count = 1;
  if (r->mode == MODEL_ALLOC_EXACT_COUNT && r->count < 1 && !d->opts->lenient)
    return model__fail_at(d, "count", "Invalid value: %lld: must be greater than zero",
                          (long long)r->count);
  if (r->mode == MODEL_ALLOC_ALL && has_count && r->count != 0 && !d->opts->lenient)
    return model__fail_at(d, "count", "must not be specified when allocationMode is 'All'");
  return TS_OK;
}

static void subrequest_free(model_subrequest *r) {
  selectors_free(r->selectors, r->nselectors);
  ts_free(r->tolerations);
}

static ts_rc first_available(mdec *d, json_t *arr, model_request *r) {
  json_t *e;
  size_t i, mark;
  ts_rc rc;
  if (!json_array_size(arr))
    return model__fail_at(d, "firstAvailable", "must have at least 1 item");
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof *r->subs, (void **)&r->subs)))
    return rc;
  r->first_available = true;
  mark = model__push(d, "firstAvailable");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_subrequest *s = &r->subs[r->nsubs++];
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__intern(d, e, "name", &s->name, true)) || (rc = subrequest(d, e, s, true)))
      return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc request(mdec *d, json_t *e, model_request *r) {
  ts_rc rc;
  json_t *exactly, *fa;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "name", &r->name, true)) != TS_OK) return rc;
  r->exactly.name = r->name;
  fa = model__array(d, e, "firstAvailable", &rc);
  if (rc != TS_OK) return rc;
  if (is_v1beta1(d)) {
    if (fa) return first_available(d, fa, r);
    return subrequest(d, e, &r->exactly, true);
  }
  exactly = model__object(d, e, "exactly", &rc);
  if (rc != TS_OK) return rc;
  if (!exactly == !fa)
    return model__fail(d, TS_EINVAL, "exactly one of `exactly` or `firstAvailable` is required");
  if (fa) return first_available(d, fa, r);
  {
    size_t mark = model__push(d, "exactly");
    rc = subrequest(d, exactly, &r->exactly, true);
    if (rc == TS_OK) model__pop(d, mark);
  }
  return rc;
}

static ts_rc requests(mdec *d, json_t *devices, model_claim_spec *s) {
  ts_rc rc;
  json_t *arr = model__array(d, devices, "requests", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if (json_array_size(arr) > DRA_MAX_REQUESTS)
    return model__fail_at(d, "requests", "must have at most %d items", DRA_MAX_REQUESTS);
  if ((rc =
           model__alloc_array(d, json_array_size(arr), sizeof *s->requests, (void **)&s->requests)))
    return rc;
  mark = model__push(d, "requests");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_request *r = &s->requests[s->nrequests++];
    if ((rc = request(d, e, r)) != TS_OK) return rc;
    for (size_t j = 0; j < i; j++)
      if (s->requests[j].name == r->name)
        return model__fail_at(d, "name", "duplicate name \"%s\"", r->name);
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc constraint(mdec *d, json_t *e, model_constraint *c) {
  ts_rc rc;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__strings(d, e, "requests", &c->requests, &c->nrequests)) ||
      (rc = model__intern(d, e, "matchAttribute", &c->match_attribute, false)) ||
      (rc = model__intern(d, e, "distinctAttribute", &c->distinct_attribute, false)))
    return rc;
  if (!c->match_attribute == !c->distinct_attribute && !d->opts->lenient)
    return model__fail(d, TS_EINVAL,
                       "exactly one of `matchAttribute` or `distinctAttribute` is required");
  if (c->match_attribute && !strchr(c->match_attribute, '/') && !d->opts->lenient)
    return model__fail_at(d, "matchAttribute", "must include a domain");
  return TS_OK;
}

static ts_rc claim_config(mdec *d, json_t *e, model_claim_config *c) {
  ts_rc rc;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__strings(d, e, "requests", &c->requests, &c->nrequests))) return rc;
  return opaque(d, e, &c->opaque);
}

/* Decodes list parent[key] with fn into an array of elements of size sz. */
static ts_rc list_of(mdec *d, json_t *parent, const char *key, size_t sz, void **out, uint32_t *n,
                     ts_rc (*fn)(mdec *, json_t *, void *)) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sz, out))) return rc;
  mark = model__push(d, key);
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    (*n)++;
    if ((rc = fn(d, e, (char *)*out + i * sz)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc constraint_fn(mdec *d, json_t *e, void *out) {
  return constraint(d, e, out);
}

static ts_rc claim_config_fn(mdec *d, json_t *e, void *out) {
  return claim_config(d, e, out);
}

/* Decodes a claim spec: parent["spec"]["devices"]. */
static ts_rc claim_spec(mdec *d, json_t *spec, model_claim_spec *s) {
  ts_rc rc;
  json_t *devices = model__object(d, spec, "devices", &rc);
  size_t mark;
  if (rc != TS_OK || !devices) return rc;
  mark = model__push(d, "devices");
  if ((rc = requests(d, devices, s)) ||
      (rc = list_of(d, devices, "constraints", sizeof *s->constraints, (void **)&s->constraints,
                    &s->nconstraints, constraint_fn)) ||
      (rc = list_of(d, devices, "config", sizeof *s->configs, (void **)&s->configs, &s->nconfigs,
                    claim_config_fn)))
    return rc;
  model__pop(d, mark);
  return TS_OK;
}

static void claim_spec_free(model_claim_spec *s) {
  for (uint32_t i = 0; i < s->nrequests; i++) {
    model_request *r = &s->requests[i];
    subrequest_free(&r->exactly);
    for (uint32_t j = 0; j < r->nsubs; j++) subrequest_free(&r->subs[j]);
    ts_free(r->subs);
  }
  ts_free(s->requests);
  for (uint32_t i = 0; i < s->nconstraints; i++) ts_free(s->constraints[i].requests);
  ts_free(s->constraints);
  for (uint32_t i = 0; i < s->nconfigs; i++) {
    ts_free(s->configs[i].requests);
    json_decref(s->configs[i].opaque.parameters);
  }
  ts_free(s->configs);
}

static ts_rc device_result(mdec *d, json_t *e, void *out) {
  model_device_result *r = out;
  ts_rc rc;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "request", &r->request, true)) ||
      (rc = model__intern(d, e, "driver", &r->driver, true)) ||
      (rc = model__intern(d, e, "pool", &r->pool, true)) ||
      (rc = model__intern(d, e, "device", &r->device, true)) ||
      (rc = model__bool(d, e, "adminAccess", &r->admin_access, NULL)) ||
      (rc = model__strings(d, e, "bindingConditions", &r->binding_conditions,
                           &r->nbinding_conditions)) ||
      (rc = model__strings(d, e, "bindingFailureConditions", &r->binding_failure_conditions,
                           &r->nbinding_failure_conditions)))
    return rc;
  return TS_OK;
}

static ts_rc alloc_config(mdec *d, json_t *e, void *out) {
  static const char *const sources[] = {"FromClass", "FromClaim"};
  model_alloc_config *c = out;
  int src = 0;
  ts_rc rc;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if (!json_object_get(e, "source")) return model__fail_at(d, "source", "is required");
  if ((rc = model__enum(d, e, "source", sources, 2, &src)) ||
      (rc = model__strings(d, e, "requests", &c->requests, &c->nrequests)))
    return rc;
  c->source = (model_config_source)src;
  return opaque(d, e, &c->opaque);
}

static ts_rc allocation(mdec *d, json_t *status, model_allocation *a) {
  ts_rc rc;
  json_t *alloc = model__object(d, status, "allocation", &rc), *devices;
  size_t mark, m2;
  if (rc != TS_OK || !alloc) return rc;
  a->present = true;
  mark = model__push(d, "allocation");
  devices = model__object(d, alloc, "devices", &rc);
  if (rc != TS_OK) return rc;
  if (devices) {
    m2 = model__push(d, "devices");
    if ((rc = list_of(d, devices, "results", sizeof *a->results, (void **)&a->results, &a->nresults,
                      device_result)) ||
        (rc = list_of(d, devices, "config", sizeof *a->configs, (void **)&a->configs, &a->nconfigs,
                      alloc_config)))
      return rc;
    model__pop(d, m2);
  }
  if ((rc = model__node_selector(d, alloc, "nodeSelector", &a->node_selector))) return rc;
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc consumer(mdec *d, json_t *e, void *out) {
  model_consumer *c = out;
  ts_rc rc;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "apiGroup", &c->api_group, false)) ||
      (rc = model__intern(d, e, "resource", &c->resource, true)) ||
      (rc = model__strdup(d, e, "name", &c->name, true)) ||
      (rc = model__strdup(d, e, "uid", &c->uid, true)))
    return rc;
  if (!c->api_group) c->api_group = ts_intern_cstr("");
  return TS_OK;
}

ts_rc model__decode_claim(mdec *d, json_t *root, model_obj *o) {
  model_claim *c = (model_claim *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *status;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (spec) {
    mark = model__push(d, "spec");
    if ((rc = claim_spec(d, spec, &c->spec)) != TS_OK) return rc;
    model__pop(d, mark);
  }
  status = model__object(d, root, "status", &rc);
  if (rc != TS_OK || !status) return rc;
  mark = model__push(d, "status");
  if ((rc = allocation(d, status, &c->allocation)) ||
      (rc = list_of(d, status, "reservedFor", sizeof *c->reserved_for, (void **)&c->reserved_for,
                    &c->nreserved_for, consumer)))
    return rc;
  model__pop(d, mark);
  return TS_OK;
}

void model_allocation_free(model_allocation *a) {
  for (uint32_t i = 0; i < a->nresults; i++) {
    ts_free(a->results[i].binding_conditions);
    ts_free(a->results[i].binding_failure_conditions);
  }
  ts_free(a->results);
  for (uint32_t i = 0; i < a->nconfigs; i++) {
    ts_free(a->configs[i].requests);
    json_decref(a->configs[i].opaque.parameters);
  }
  ts_free(a->configs);
  model__node_selector_free(&a->node_selector);
  memset(a, 0, sizeof *a);
}

static const char **copy_names(const char *const *v, uint32_t n, bool *oom) {
  const char **c;
  if (!n) return NULL;
  if (!(c = ts_malloc(n * sizeof *c))) return *oom = true, NULL;
  memcpy(c, v, n * sizeof *c);
  return c;
}

ts_rc model_allocation_copy(model_allocation *dst, const model_allocation *src) {
  bool oom = false;
  memset(dst, 0, sizeof *dst);
  dst->present = src->present;
  if (src->nresults && !(dst->results = ts_calloc(src->nresults, sizeof *dst->results)))
    return TS_ENOMEM;
  for (uint32_t i = 0; i < src->nresults; i++, dst->nresults++) {
    model_device_result *r = &dst->results[i];
    *r = src->results[i];
    r->binding_conditions = copy_names(r->binding_conditions, r->nbinding_conditions, &oom);
    r->binding_failure_conditions =
        copy_names(r->binding_failure_conditions, r->nbinding_failure_conditions, &oom);
  }
  if (!oom && src->nconfigs && !(dst->configs = ts_calloc(src->nconfigs, sizeof *dst->configs)))
    oom = true;
  for (uint32_t i = 0; !oom && i < src->nconfigs; i++, dst->nconfigs++) {
    model_alloc_config *c = &dst->configs[i];
    *c = src->configs[i];
    c->requests = copy_names(c->requests, c->nrequests, &oom);
    json_incref(c->opaque.parameters);
  }
  if (oom || model__node_selector_copy(&dst->node_selector, &src->node_selector) != TS_OK) {
    model_allocation_free(dst);
    return TS_ENOMEM;
  }
  return TS_OK;
}

static void consumers_free(model_consumer *v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    ts_free(v[i].name);
    ts_free(v[i].uid);
  }
  ts_free(v);
}

void model__free_claim(model_obj *o) {
  model_claim *c = (model_claim *)o;
  claim_spec_free(&c->spec);
  model_allocation_free(&c->allocation);
  consumers_free(c->reserved_for, c->nreserved_for);
  model_allocation_free(&c->watched);
  consumers_free(c->watched_rf, c->nwatched_rf);
}

/* reservedFor plus one pod (strings copied); NULL when out of memory. */
static model_consumer *with_pod(const model_consumer *v, uint32_t n, const char *pod_name,
                                const char *pod_uid) {
  model_consumer *rf = ts_calloc(n + 1, sizeof *rf);
  bool oom = !rf;
  for (uint32_t i = 0; !oom && i <= n; i++) {
    if (i < n)
      rf[i] = v[i];
    else
      rf[i].api_group = ts_intern_cstr(""), rf[i].resource = ts_intern_cstr("pods");
    rf[i].name = ts_strdup(i < n ? v[i].name : pod_name);
    rf[i].uid = ts_strdup(i < n ? v[i].uid : pod_uid);
    oom = !rf[i].name || !rf[i].uid || !rf[i].resource;
  }
  if (oom && rf) consumers_free(rf, n + 1);
  return oom ? NULL : rf;
}

/* The status as it will be once the reserve lands: the watched one is kept aside the first
 * time; the current one gets the allocation (when given) and the pod. */
ts_rc model__claim_assume(model_claim *c, const model_allocation *alloc, const char *pod_name,
                          const char *pod_uid) {
  model_allocation next;
  model_consumer *rf = with_pod(c->reserved_for, c->nreserved_for, pod_name, pod_uid);
  if (!rf) return TS_ENOMEM;
  if (model_allocation_copy(&next, alloc ? alloc : &c->allocation) != TS_OK) {
    consumers_free(rf, c->nreserved_for + 1);
    return TS_ENOMEM;
  }
  if (c->assumed) {
    model_allocation_free(&c->allocation);
    consumers_free(c->reserved_for, c->nreserved_for);
  } else { /* the status as watched waits for model__claim_forget */
    c->watched = c->allocation, c->watched_rf = c->reserved_for, c->nwatched_rf = c->nreserved_for;
    c->assumed = true;
  }
  c->allocation = next, c->reserved_for = rf, c->nreserved_for++;
  return TS_OK;
}

void model__claim_carry(model_claim *old, model_claim *c) {
  if (!old->assumed || c->allocation.present || c->assumed) return;
  c->watched = c->allocation, c->watched_rf = c->reserved_for, c->nwatched_rf = c->nreserved_for;
  c->allocation = old->allocation, c->reserved_for = old->reserved_for;
  c->nreserved_for = old->nreserved_for, c->assumed = true;
  memset(&old->allocation, 0, sizeof old->allocation);
  old->reserved_for = NULL, old->nreserved_for = 0;
}

void model__claim_forget(model_claim *c) {
  if (!c->assumed) return;
  model_allocation_free(&c->allocation);
  consumers_free(c->reserved_for, c->nreserved_for);
  c->allocation = c->watched, c->reserved_for = c->watched_rf, c->nreserved_for = c->nwatched_rf;
  memset(&c->watched, 0, sizeof c->watched);
  c->watched_rf = NULL, c->nwatched_rf = 0, c->assumed = false;
}

ts_rc model__decode_claim_template(mdec *d, json_t *root, model_obj *o) {
  model_claim_template *t = (model_claim_template *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *md, *inner;
  size_t mark, m2;
  if (rc != TS_OK) return rc;
  if (!spec) return model__fail(d, TS_EINVAL, "spec: is required");
  mark = model__push(d, "spec");
  md = model__object(d, spec, "metadata", &rc);
  if (rc != TS_OK) return rc;
  if (md) {
    m2 = model__push(d, "metadata");
    if ((rc = model__labels(d, md, "labels", false, &t->claim_labels)) ||
        (rc = model__labels(d, md, "annotations", true, &t->claim_annotations)))
      return rc;
    model__pop(d, m2);
  }
  inner = model__object(d, spec, "spec", &rc);
  if (rc != TS_OK) return rc;
  if (!inner) return model__fail_at(d, "spec", "is required");
  m2 = model__push(d, "spec");
  if ((rc = claim_spec(d, inner, &t->spec)) != TS_OK) return rc;
  model__pop(d, m2);
  model__pop(d, mark);
  return TS_OK;
}

void model__free_claim_template(model_obj *o) {
  model_claim_template *t = (model_claim_template *)o;
  model__labels_free(&t->claim_labels, false);
  model__labels_free(&t->claim_annotations, true);
  claim_spec_free(&t->spec);
}
