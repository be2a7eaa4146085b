/* dra/device.c - the DRA device selector environment, a library of cel/ (cel_ext.h): the
 * `device` variable read in place from a dra_device_view, the environments (StoredExpressions,
 * NewExpressions with feature gates), the includes() function, evaluation with Kubernetes' cost
 * limit, and `tessera check` advice. */
#include <stdio.h>
#include <string.h>

#include "cel/cel_ext.h"
#include "dra/dra.h"

#define A           (args)
#define DEVICE_TYPE "kubernetes.DRADevice"

static const dra_device_view *dev_of(const cel_object *o) {
  return o->data;
}

/* A domain's attributes or capacities as a map view. */
typedef struct domain_view {
  const dra_device_view *dev; /* the device */
  const char *domain;         /* the domain (a string of the evaluation) */
  size_t n;                   /* its length */
  bool capacity;              /* capacities rather than attributes */
} domain_view;

static bool same_domain(const dra_device_view *d, const char *dom, const char *want, size_t n) {
  const char *eff = dom && *dom ? dom : d->driver ? d->driver : "";
  return strlen(eff) == n && !memcmp(eff, want, n);
}

static cel_value attr_value(cel_run *ev, const dra_attr_view *a) {
  cel_value v = cel_null();
  switch (a->kind) {
  case DRA_ATTR_BOOL:
    return cel_bool(a->u.b);
  case DRA_ATTR_INT:
    return cel_int(a->u.i);
  case DRA_ATTR_STRING:
    return cel_string(a->u.s, strlen(a->u.s));
  case DRA_ATTR_VERSION:
    v.kind = CEL_SEMVER;
    v.u.v = &a->u.v;
    return v;
  default:
    break;
  }
  {
    cel_value *e = cel_ext_alloc(ev, (a->n ? a->n : 1) * sizeof *e);
    if (!e) return cel_ext_error(ev, "memory limit exceeded");
    for (size_t i = 0; i < a->n; i++) {
      switch (a->kind) {
      case DRA_ATTR_BOOL_LIST:
        e[i] = cel_bool(a->u.bl[i]);
        break;
      case DRA_ATTR_INT_LIST:
        e[i] = cel_int(a->u.il[i]);
        break;
      case DRA_ATTR_STRING_LIST:
        e[i] = cel_string(a->u.sl[i], strlen(a->u.sl[i]));
        break;
      default:
        e[i] = cel_null();
        e[i].kind = CEL_SEMVER;
        e[i].u.v = &a->u.vl[i];
      }
    }
    return cel_ext_list(ev, e, a->n);
  }
}

static bool domain_find(const cel_map *m, const cel_value *key, cel_value *out) {
  const domain_view *d = m->ctx;
  cel_run *ev = (cel_run *)m->k; /* views keep their evaluation in k (unused by views) */
  if (key->kind != CEL_STRING) return false;
  if (d->capacity) {
    for (size_t i = 0; i < d->dev->ncaps; i++) {
      const dra_capacity_view *c = &d->dev->caps[i];
      if (same_domain(d->dev, c->domain, d->domain, d->n) && strlen(c->name) == key->u.s.n &&
          !memcmp(c->name, key->u.s.p, key->u.s.n)) {
        *out = cel_null();
        out->kind = CEL_QUANTITY;
        out->u.q = &c->value;
        return true;
      }
    }
    return false;
  }
  for (size_t i = 0; i < d->dev->nattrs; i++) {
    const dra_attr_view *a = &d->dev->attrs[i];
    if (same_domain(d->dev, a->domain, d->domain, d->n) && strlen(a->name) == key->u.s.n &&
        !memcmp(a->name, key->u.s.p, key->u.s.n)) {
      *out = attr_value(ev, a);
      return true;
    }
  }
  return false;
}

static bool domain_keys(cel_run *ev, const cel_map *m, const cel_value **out, size_t *n) {
  const domain_view *d = m->ctx;
  size_t cap = d->capacity ? d->dev->ncaps : d->dev->nattrs, k = 0;
  cel_value *v = cel_ext_alloc(ev, (cap ? cap : 1) * sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < cap; i++) {
    const char *dom = d->capacity ? d->dev->caps[i].domain : d->dev->attrs[i].domain;
    const char *name = d->capacity ? d->dev->caps[i].name : d->dev->attrs[i].name;
    if (same_domain(d->dev, dom, d->domain, d->n)) v[k++] = cel_string(name, strlen(name));
  }
  *out = v, *n = k;
  return true;
}

static const cel_map_ops domain_ops = {domain_find, domain_keys, NULL};

/* device.attributes / device.capacity: domain -> domain view (any domain, possibly empty). */
typedef struct top_view {
  const dra_device_view *dev; /* the device */
  bool capacity;              /* capacities */
} top_view;

static bool top_find(const cel_map *m, const cel_value *key, cel_value *out) {
  const top_view *t = m->ctx;
  cel_run *ev = (cel_run *)m->k;
  domain_view *d;
  cel_map *dm;
  if (key->kind != CEL_STRING) return false;
  d = cel_ext_alloc(ev, sizeof *d);
  dm = cel_ext_alloc(ev, sizeof *dm);
  if (!d || !dm) return false;
  d->dev = t->dev, d->domain = key->u.s.p, d->n = key->u.s.n, d->capacity = t->capacity;
  memset(dm, 0, sizeof *dm);
  dm->ops = &domain_ops, dm->ctx = d, dm->k = (const cel_value *)ev;
  *out = cel_map_value(dm);
  return true;
}

static bool top_keys(cel_run *ev, const cel_map *m, const cel_value **out, size_t *n) {
  const top_view *t = m->ctx;
  size_t cap = t->capacity ? t->dev->ncaps : t->dev->nattrs, k = 0;
  cel_value *v = cel_ext_alloc(ev, (cap ? cap : 1) * sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < cap; i++) {
    const char *dom = t->capacity ? t->dev->caps[i].domain : t->dev->attrs[i].domain;
    cel_value s;
    bool dup = false;
    if (!dom || !*dom) dom = t->dev->driver ? t->dev->driver : "";
    s = cel_string(dom, strlen(dom));
    for (size_t j = 0; j < k && !dup; j++) dup = cel_ext_equal(&v[j], &s);
    if (!dup) v[k++] = s;
  }
  *out = v, *n = k;
  return true;
}

/* A domain is "in" device.attributes only when some attribute has it. */
static bool top_has(const cel_map *m, const cel_value *key) {
  const top_view *t = m->ctx;
  size_t cap = t->capacity ? t->dev->ncaps : t->dev->nattrs;
  if (key->kind != CEL_STRING) return false;
  for (size_t i = 0; i < cap; i++) {
    const char *dom = t->capacity ? t->dev->caps[i].domain : t->dev->attrs[i].domain;
    if (same_domain(t->dev, dom, key->u.s.p, key->u.s.n)) return true;
  }
  return false;
}

static const cel_map_ops top_ops = {top_find, top_keys, top_has};

/* device.attributes[domain].name (capacity: device.capacity[...]) without building views. */
static cel_value lookup(cel_run *ev, const cel_object *o, const char *field, const char *domain,
                        const char *name) {
  const dra_device_view *d = dev_of(o);
  bool capacity = field[0] == 'c';
  size_t dn = strlen(domain);
  if (capacity) {
    for (size_t i = 0; i < d->ncaps; i++)
      if (!strcmp(d->caps[i].name, name) && same_domain(d, d->caps[i].domain, domain, dn)) {
        cel_value v = cel_null();
        v.kind = CEL_QUANTITY;
        v.u.q = &d->caps[i].value;
        return v;
      }
  } else {
    for (size_t i = 0; i < d->nattrs; i++)
      if (!strcmp(d->attrs[i].name, name) && same_domain(d, d->attrs[i].domain, domain, dn))
        return attr_value(ev, &d->attrs[i]);
  }
  return cel_ext_error(ev, "no such key: %s", name);
}

static cel_value field(cel_run *ev, const cel_object *o, const char *field, bool *present) {
  const dra_device_view *d = dev_of(o);
  *present = true;
  if (!strcmp(field, "driver"))
    return cel_string(d->driver ? d->driver : "", d->driver ? strlen(d->driver) : 0);
  if (!strcmp(field, "attributes") || !strcmp(field, "capacity")) {
    top_view *t = cel_ext_alloc(ev, sizeof *t);
    cel_map *m = cel_ext_alloc(ev, sizeof *m);
    if (!t || !m) return cel_ext_error(ev, "memory limit exceeded");
    t->dev = d, t->capacity = field[0] == 'c';
    memset(m, 0, sizeof *m);
    m->ops = &top_ops, m->ctx = t, m->k = (const cel_value *)ev;
    return cel_map_value(m);
  }
  if (!strcmp(field, "allowMultipleAllocations")) {
    *present = d->allow_multiple >= 0;
    return cel_bool(d->allow_multiple == 1);
  }
  *present = false;
  return cel_ext_error(ev, "no such key: %s", field);
}

/* includes(): a scalar equals, a list (of at most 48 values) contains. */
static cel_value includes(cel_run *ev, const cel_value *args, uint32_t n) {
  (void)n;
  if (A[0].kind == CEL_LIST) {
    if (A[0].u.l->n > DRA_SELECTOR_MAX_INCLUDE)
      return cel_ext_error(ev,
                           "'includes' function cannot be applied to lists longer than %d values",
                           DRA_SELECTOR_MAX_INCLUDE);
    for (size_t i = 0; i < A[0].u.l->n; i++)
      if (cel_ext_equal(&A[0].u.l->v[i], &A[1])) return cel_bool(true);
    return cel_bool(false);
  }
  return cel_bool(cel_ext_equal(&A[0], &A[1]));
}

/* ---- the library: the device type, includes(), the gates ------------------------------- */

static const dra_selector_opts *opts_of(const cel_env *e) {
  return cel_env_ext_opts(e);
}

/* Whether e declares device.allowMultipleAllocations (DRAConsumableCapacity, or stored). */
static bool has_multi(const cel_env *e) {
  const dra_selector_opts *o = opts_of(e);
  return o->env == DRA_SELECTOR_STORED || o->consumable_capacity;
}

/* The fields of `device`, as the environment's gates declare them. */
static const cel_type *field_type(const cel_env *e, cel_tytab *t, const char *name) {
  if (!strcmp(name, "driver")) return cel_ext_type(t, "string");
  if (!strcmp(name, "attributes")) { /* map(string, map(string, <an attribute>)) */
    const cel_type *s = cel_ext_type(t, "string");
    return cel_ext_map_type(t, s, cel_ext_map_type(t, s, cel_ext_named_dyn(t, "dra.attribute")));
  }
  if (!strcmp(name, "capacity")) return cel_ext_type(t, "map(string, map(string, quantity))");
  if (!strcmp(name, "allowMultipleAllocations") && has_multi(e)) return cel_ext_type(t, "bool");
  return NULL;
}

static bool lookup_field(const char *name) {
  return !strcmp(name, "attributes") || !strcmp(name, "capacity");
}

static const cel_ext_object device_type = {DEVICE_TYPE, field_type, field, lookup_field, lookup};
static const cel_ext_object *const objects[] = {&device_type};
static const cel_ext_function functions[] = {{"includes", "A.(B)->bool", includes}};

/* includes() and list attributes only with DRAListTypeAttributes. */
static bool function_enabled(const cel_env *e, const char *name) {
  (void)name;
  return opts_of(e)->list_attributes;
}

static const char *iterate_error(const cel_env *e, const cel_type *t) {
  const char *n = cel_ext_type_name(t);
  if (!n || strcmp(n, "dra.attribute") || opts_of(e)->list_attributes) return NULL;
  return "device attributes are not lists: list attributes need the DRAListTypeAttributes "
         "feature";
}

/* Sizes for the cost estimate, as Kubernetes declares them for `device` (resource.k8s.io
 * limits): a driver name or attribute domain of 63 bytes, an attribute or capacity id of 32,
 * 32 attributes and capacities per device, an attribute value of 64. */
enum {
  P_DEVICE,
  P_DRIVER,
  P_MULTI,
  P_ATTRS,
  P_ATTR_MAP,
  P_ATTR,
  P_CAPS,
  P_CAP_MAP,
  P_QUANTITY,
  P_DOMAIN,
  P_ID,
  P_NONE
};

static bool path_max_size(const cel_env *e, const char *const *path, size_t n, uint64_t *max) {
  static const uint64_t sizes[] = {0, 63, 1, 32, 32, 64, 32, 32, 0, 63, 32};
  int at = P_DEVICE;
  if (!n || strcmp(path[0], "device")) return false;
  for (size_t i = 1; i < n && at != P_NONE; i++) {
    const char *s = path[i];
    bool keys = !strcmp(s, "@keys"), values = !strcmp(s, "@values") || !strcmp(s, "@items");
    switch (at) {
    case P_DEVICE:
      at = keys || values                                           ? P_NONE
           : !strcmp(s, "driver")                                   ? P_DRIVER
           : !strcmp(s, "attributes")                               ? P_ATTRS
           : !strcmp(s, "capacity")                                 ? P_CAPS
           : !strcmp(s, "allowMultipleAllocations") && has_multi(e) ? P_MULTI
                                                                    : P_NONE;
      break;
    case P_ATTRS:
    case P_CAPS: /* domain -> map; a field of the outer map is not an attribute */
      at = keys ? P_DOMAIN : values ? (at == P_ATTRS ? P_ATTR_MAP : P_CAP_MAP) : P_NONE;
      break;
    case P_ATTR_MAP: /* any name reads an attribute */
      at = keys ? P_ID : P_ATTR;
      break;
    case P_CAP_MAP:
      at = keys ? P_ID : values ? P_QUANTITY : P_NONE;
      break;
    default:
      at = P_NONE;
    }
  }
  if (at == P_NONE) return false;
  *max = sizes[at];
  return true;
}

/* includes() walks at most DRA_SELECTOR_MAX_INCLUDE values. */
static bool call_cost(const cel_env *e, const char *name, uint64_t *cost) {
  (void)e;
  if (strcmp(name, "includes")) return false;
  *cost = DRA_SELECTOR_MAX_INCLUDE;
  return true;
}

static const cel_ext library = {
    objects,       1,        functions, 1, function_enabled, iterate_error, DRA_SELECTOR_MAX_EXPR,
    path_max_size, call_cost};

/* ---- environments ---------------------------------------------------------------------- */

struct dra_env {
  dra_selector_opts opts; /* the gates (the library reads them through the environment) */
  cel_env *cel;           /* the environment */
};

dra_env *dra_env_new(const dra_selector_opts *o) {
  dra_env *e = ts_calloc(1, sizeof *e);
  ts_err err;
  if (!e) return NULL;
  e->opts = o ? *o : (dra_selector_opts){DRA_SELECTOR_STORED, true, true};
  if (e->opts.env == DRA_SELECTOR_STORED) /* everything declared, whatever the gates */
    e->opts.consumable_capacity = e->opts.list_attributes = true;
  ts_err_clear(&err);
  if (!(e->cel = cel_env_new_ext(&library, &e->opts)) ||
      cel_env_declare(e->cel, "device", DEVICE_TYPE, &err) != TS_OK) {
    dra_env_free(e);
    return NULL;
  }
  return e;
}

void dra_env_free(dra_env *e) {
  if (!e) return;
  cel_env_free(e->cel);
  ts_free(e);
}

ts_rc dra_selector_compile(const dra_env *e, const char *expr, cel_program **out, ts_err *err) {
  char type[128];
  ts_rc rc;
  if ((rc = cel_compile(e->cel, expr, CEL_KUBERNETES, out, err)) != TS_OK) return rc;
  cel_program_type(*out, type, sizeof type);
  if (strcmp(type, "bool") && strcmp(type, "dyn")) {
    cel_program_free(*out);
    *out = NULL;
    return ts_err_set(err, TS_ETYPE, "must evaluate to bool or the unknown type, not %s", type);
  }
  return TS_OK;
}

ts_rc dra_selector_eval(const cel_program *p, cel_eval_ctx *ctx, const dra_device_view *dev,
                        bool *match, ts_err *err) {
  cel_object obj = {&device_type, dev};
  cel_binding b;
  cel_value out;
  ts_rc rc;
  b.name = "device";
  b.value = cel_null();
  b.value.kind = CEL_OBJECT;
  b.value.u.o = &obj;
  cel_eval_ctx_limits(ctx, DRA_SELECTOR_MAX_COST, 0);
  *match = false;
  if ((rc = cel_eval(p, ctx, &b, 1, &out, err)) != TS_OK) return rc;
  if (out.kind != CEL_BOOL)
    return ts_err_set(err, TS_ETYPE, "CEL result of type %s could not be converted to bool",
                      cel_type_name(&out));
  *match = out.u.b;
  return TS_OK;
}

/* ---- advice for `tessera check` ---------------------------------------------------------------
 */

/* Rewrites device.attributes["NAME"] (NAME without a domain) as Kubernetes reads selectors:
 * memory-like names are capacities, others attributes of the driver's domain. */
static bool rewrite(const char *expr, const char *domain, ts_buf *out, ts_buf *why) {
  static const char pre[] = "device.attributes[\"";
  const char *p = expr;
  bool changed = false;
  while (*p) {
    const char *q = strstr(p, pre), *name, *close;
    size_t n;
    if (!q) {
      ts_buf_puts(out, p);
      break;
    }
    ts_buf_append(out, p, (size_t)(q - p));
    name = q + sizeof pre - 1;
    close = strstr(name, "\"]");
    if (!close || memchr(name, '.', (size_t)(close - name)) ||
        memchr(name, '/', (size_t)(close - name))) {
      ts_buf_append(out, q, sizeof pre - 1);
      p = name;
      continue;
    }
    n = (size_t)(close - name);
    changed = true;
    if ((n == 6 && !memcmp(name, "memory", 6)) || (n == 3 && !memcmp(name, "mem", 3))) {
      ts_buf_printf(out, "device.capacity[\"%s\"].memory", domain);
      ts_buf_printf(why,
                    " \"%.*s\" is a capacity, not an attribute: read it as "
                    "device.capacity[\"%s\"].memory and compare it with quantity functions.",
                    (int)n, name, domain);
    } else if (n == 10 && !memcmp(name, "migProfile", 10)) {
      ts_buf_printf(out, "device.attributes[\"%s\"].profile", domain);
      ts_buf_printf(why,
                    " Attributes are keyed by domain, then name: the MIG profile is "
                    "device.attributes[\"%s\"].profile.",
                    domain);
    } else {
      ts_buf_printf(out, "device.attributes[\"%s\"].%.*s", domain, (int)n, name);
      ts_buf_printf(why,
                    " Attributes are keyed by domain, then name: "
                    "device.attributes[\"%s\"].%.*s.",
                    domain, (int)n, name);
    }
    p = close + 2;
  }
  return changed;
}

static ts_rc check(const dra_env *env, const char *expr, const char *driver_hint, ts_err *err) {
  cel_program *p = NULL;
  ts_buf fixed, why;
  ts_err e2;
  ts_rc rc = dra_selector_compile(env, expr, &p, err);
  const char *domain = driver_hint && *driver_hint ? driver_hint : "gpu.nvidia.com";
  if (rc == TS_OK) { /* the API server refuses what may cost more than the limit */
    uint64_t cost = cel_program_cost_estimate(p);
    cel_program_free(p);
    if (cost <= DRA_SELECTOR_MAX_COST) return TS_OK;
    if (cost == UINT64_MAX)
      return ts_err_set(err, TS_ELIMIT,
                        "Forbidden: too complex, exceeds cost limit (the estimated cost has no "
                        "bound: a size the estimate cannot know, limit %d)",
                        DRA_SELECTOR_MAX_COST);
    return ts_err_set(err, TS_ELIMIT,
                      "Forbidden: too complex, exceeds cost limit (estimated cost %llu, limit %d)",
                      (unsigned long long)cost, DRA_SELECTOR_MAX_COST);
  }
  cel_program_free(p);
  if (rc == TS_ENOMEM) return rc;
  ts_buf_init(&fixed, 64 * 1024);
  ts_buf_init(&why, 8 * 1024);
  if (rewrite(expr, domain, &fixed, &why) && ts_buf_putc(&fixed, '\0') == TS_OK &&
      ts_buf_putc(&why, '\0') == TS_OK) {
    cel_program *q = NULL;
    ts_err_clear(&e2);
    dra_selector_compile(env, fixed.data, &q, &e2);
    if (q) { /* explain, and offer the rewrite only once it is known to compile */
      char first[TS_ERR_TEXT_MAX];
      snprintf(first, sizeof first, "%s", err->text);
      ts_err_set(err, rc, "%s\n%s\nA selector that compiles: %s", first, why.data + 1, fixed.data);
      cel_program_free(q);
    }
  }
  ts_buf_free(&fixed);
  ts_buf_free(&why);
  return rc;
}

ts_rc dra_selector_check(const char *expr, const char *driver_hint, ts_err *err) {
  dra_env *env = dra_env_new(NULL);
  ts_rc rc = env ? check(env, expr, driver_hint, err) : ts_err_set(err, TS_ENOMEM, "out of memory");
  dra_env_free(env);
  return rc;
}
