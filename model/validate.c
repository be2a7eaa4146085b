/* model/validate.c - what kube-apiserver 1.34 and its admission plugins refuse on create, for
 * the kinds Tessera reads, worded as they word it (checked against refusals recorded from a
 * real server: tests/data/validation). Every refusal of an object is reported, as the server
 * lists every cause, not only the first.
 *
 * It reads the object as sent (JSON), before any decoding: the server validates what it is
 * given, and a decoder that stops at the first problem would hide the others. */
#include "model/model_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_SHARED_COUNTERS   32     /* per ResourceSlice, over all its counter sets */
#define MAX_ATTRS_AND_CAPS    32     /* per device */
#define ANNOTATIONS_MAX_BYTES 262144 /* keys and values of metadata.annotations */
#define MAX_REQUESTS          32     /* per claim */
#define MAX_DEVICES           128    /* per ResourceSlice */
#define MAX_CEL_BYTES         10240  /* a selector's expression */

typedef struct vctx {
  const model *m;      /* PriorityClasses for the priority admission (its own pass) */
  model_refusal_fn fn; /* the caller's */
  void *ud;            /* for fn */
  size_t n;            /* refusals so far */
} vctx;

static void refuse(vctx *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(vctx *v, const char *field, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  v->n++;
  v->fn(v->ud, field, msg);
}

static const char *str(json_t *o, const char *key) {
  return json_string_value(json_object_get(o, key));
}

/* ---- metadata ------------------------------------------------------------------------- */

static void labels(vctx *v, json_t *md) {
  const char *k;
  json_t *val;
  const char *why;
  json_object_foreach(json_object_get(md, "labels"), k, val) {
    if ((why = model__qualified_name_error(k)))
      refuse(v, "metadata.labels", "Invalid value: \"%s\": %s", k, why);
    if (json_is_string(val) && (why = model__label_value_error(json_string_value(val))))
      refuse(v, "metadata.labels", "Invalid value: \"%s\": %s", json_string_value(val), why);
  }
}

static void annotations(vctx *v, json_t *md) {
  const char *k;
  json_t *val;
  size_t total = 0;
  json_object_foreach(json_object_get(md, "annotations"), k, val) {
    char lower[512];
    const char *why;
    size_t i;
    for (i = 0; k[i] && i + 1 < sizeof lower; i++)
      lower[i] = (char)(k[i] >= 'A' && k[i] <= 'Z' ? k[i] + 32 : k[i]);
    lower[i] = '\0';
    if ((why = model__qualified_name_error(lower)))
      refuse(v, "metadata.annotations", "Invalid value: \"%s\": %s", k, why);
    total += strlen(k) + (json_is_string(val) ? strlen(json_string_value(val)) : 0);
  }
  if (total > ANNOTATIONS_MAX_BYTES)
    refuse(v, "metadata.annotations", "Too long: may not be more than %d bytes",
           ANNOTATIONS_MAX_BYTES);
}

static void metadata(vctx *v, model_kind kind, json_t *obj) {
  json_t *md = json_object_get(obj, "metadata");
  const char *name = str(md, "name"), *ns = str(md, "namespace"), *why;
  if (name && *name) {
    why = kind == MODEL_NAMESPACE ? model_dns_label_error(name) : model_subdomain_error(name);
    if (why) refuse(v, "metadata.name", "Invalid value: \"%s\": %s", name, why);
  }
  if (ns && *ns && (why = model_dns_label_error(ns)))
    refuse(v, "metadata.namespace", "Invalid value: \"%s\": %s", ns, why);
  labels(v, md);
  annotations(v, md);
}

/* ---- pods ----------------------------------------------------------------------------- */

/* cpu, memory, storage and hugepages are not extended resources; names with a domain outside
 * kubernetes.io are. */
static bool extended(const char *r) {
  const char *slash = strchr(r, '/');
  return slash && strncmp(r, "kubernetes.io/", 14) && !strstr(r, ".kubernetes.io/") &&
         strncmp(r, "requests.", 9);
}

/* One quantity of a container's limits or requests. */
static void quantity(vctx *v, const char *path, const char *which, const char *res, json_t *q) {
  char field[512];
  ts_quantity x;
  const char *s = json_string_value(q);
  char num[64];
  if (!s && json_is_number(q)) snprintf(num, sizeof num, "%g", json_number_value(q)), s = num;
  if (!s || ts_quantity_parse(s, &x, NULL) != TS_OK) return; /* the decoder says why */
  snprintf(field, sizeof field, "%s.%s[%s]", path, which, res);
  if (ts_quantity_sign(&x) < 0)
    refuse(v, field, "Invalid value: \"%s\": must be greater than or equal to 0", s);
  else if (extended(res) && !ts_quantity_is_integer(&x))
    refuse(v, field, "Invalid value: \"%s\": must be an integer", s);
}

static bool parse_q(json_t *q, ts_quantity *out, const char **text, char *buf, size_t cap) {
  const char *s = json_string_value(q);
  if (!s && json_is_number(q)) snprintf(buf, cap, "%g", json_number_value(q)), s = buf;
  *text = s;
  return s && ts_quantity_parse(s, out, NULL) == TS_OK;
}

/* A container's resources, after the server's defaulting (a request defaults to its limit). */
static void resources(vctx *v, const char *path, json_t *c) {
  json_t *res = json_object_get(c, "resources"), *limits = json_object_get(res, "limits");
  json_t *requests = json_object_get(res, "requests"), *q;
  const char *r;
  json_object_foreach(limits, r, q) quantity(v, path, "limits", r, q);
  json_object_foreach(limits, r, q)
    if (!json_object_get(requests, r)) quantity(v, path, "requests", r, q);
  json_object_foreach(requests, r, q) {
    json_t *lim = json_object_get(limits, r);
    ts_quantity a, b;
    const char *ta, *tb;
    char ba[64], bb[64], field[512];
    quantity(v, path, "requests", r, q);
    if (!lim || !parse_q(q, &a, &ta, ba, sizeof ba) || !parse_q(lim, &b, &tb, bb, sizeof bb))
      continue;
    snprintf(field, sizeof field, "%s.requests", path);
    if (extended(r) && ts_quantity_cmp(&a, &b) != 0)
      refuse(v, field, "Invalid value: \"%s\": must be equal to %s limit of %s", ta, r, tb);
    else if (!extended(r) && ts_quantity_cmp(&a, &b) > 0)
      refuse(v, field, "Invalid value: \"%s\": must be less than or equal to %s limit of %s", ta, r,
             tb);
  }
}

static void containers(vctx *v, json_t *spec, const char *key) {
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(spec, key), i, c) {
    char path[128];
    const char *image = json_string_value(json_object_get(c, "image"));
    if (!image || !*image) {
      snprintf(path, sizeof path, "spec.%s[%zu].image", key, i);
      refuse(v, path, "Required value");
    }
    snprintf(path, sizeof path, "spec.%s[%zu].resources", key, i);
    resources(v, path, c);
  }
}

size_t model_validate_priority(const model *m, const model_pod *p, model_refusal_fn fn, void *ud) {
  vctx v = {m, fn, ud, 0};
  const char *cls = p->priority_class, *name = p->obj.name ? p->obj.name : "";
  int32_t want;
  if (cls && *cls && strcmp(cls, "system-node-critical") &&
      strcmp(cls, "system-cluster-critical")) {
    const model_priority_class *pc =
        (const model_priority_class *)model_get(m, MODEL_PRIORITY_CLASS, NULL, cls);
    if (!pc) {
      refuse(&v, "", "pods \"%s\" is forbidden: no PriorityClass with name %s was found", name,
             cls);
      return v.n;
    }
    want = pc->value;
  } else if (cls && *cls) {
    want = strcmp(cls, "system-node-critical") ? 2000000000 : 2000001000;
  } else {
    want = model_default_priority(m);
  }
  if (p->has_priority && p->priority != want)
    refuse(&v, "",
           "pods \"%s\" is forbidden: the integer value of priority (%d) must not be provided in "
           "pod spec; priority admission controller computed %d from the given PriorityClass name",
           name, (int)p->priority, (int)want);
  return v.n;
}

static void pod(vctx *v, json_t *obj) {
  json_t *spec = json_object_get(obj, "spec"), *x;
  size_t i;
  containers(v, spec, "containers"); /* the API server's order */
  containers(v, spec, "initContainers");
  json_array_foreach(json_object_get(spec, "tolerations"), i, x) {
    const char *op = str(x, "operator"), *val = str(x, "value");
    char field[64];
    snprintf(field, sizeof field, "spec.tolerations[%zu].operator", i);
    if (op && !strcmp(op, "Exists") && val && *val)
      refuse(v, field, "Invalid value: \"%s\": value must be empty when `operator` is 'Exists'",
             val);
  }
  json_array_foreach(json_object_get(spec, "resourceClaims"), i, x) {
    const char *n = str(x, "name"), *why;
    char field[64];
    snprintf(field, sizeof field, "spec.resourceClaims[%zu].name", i);
    if (n && (why = model_dns_label_error(n)))
      refuse(v, field, "Invalid value: \"%s\": %s", n, why);
  }
}

/* ---- DRA ------------------------------------------------------------------------------ */

/* An attribute or capacity name: an optional domain, then a C identifier. */
static void attribute_names(vctx *v, json_t *dev, size_t d, const char *key) {
  const char *k, *why;
  json_t *x;
  json_object_foreach(json_object_get(dev, key), k, x) {
    const char *slash = strrchr(k, '/'), *name = slash ? slash + 1 : k;
    char field[512];
    (void)x;
    if (!(why = model__c_identifier_error(name))) continue;
    snprintf(field, sizeof field, "spec.devices[%zu].%s[%s]", d, key, k);
    refuse(v, field, "Invalid value: \"%s\": %s", name, why);
  }
}

static bool has_counter_set(json_t *spec, const char *name) {
  size_t i;
  json_t *s;
  json_array_foreach(json_object_get(spec, "sharedCounters"), i, s)
    if (str(s, "name") && !strcmp(str(s, "name"), name)) return true;
  return false;
}

static void slice(vctx *v, json_t *obj) {
  json_t *spec = json_object_get(obj, "spec"), *s, *dev, *cc;
  size_t i, d, total = 0;
  json_array_foreach(json_object_get(spec, "sharedCounters"), i, s)
    total += json_object_size(json_object_get(s, "counters"));
  if (total > MAX_SHARED_COUNTERS)
    refuse(v, "spec.sharedCounters",
           "Invalid value: %zu: the total number of shared counters must not exceed %d", total,
           MAX_SHARED_COUNTERS);
  if (json_array_size(json_object_get(spec, "devices")) > MAX_DEVICES)
    refuse(v, "spec.devices", "Too many: %zu: must have at most %d items",
           json_array_size(json_object_get(spec, "devices")), MAX_DEVICES);
  json_array_foreach(json_object_get(spec, "devices"), d, dev) {
    json_t *basic = json_object_get(dev, "basic"); /* v1beta1 wraps a device's fields */
    json_t *fields = basic ? basic : dev;
    size_t n = json_object_size(json_object_get(fields, "attributes")) +
               json_object_size(json_object_get(fields, "capacity"));
    char field[128];
    snprintf(field, sizeof field, "spec.devices[%zu]", d);
    if (n > MAX_ATTRS_AND_CAPS)
      refuse(v, field,
             "Invalid value: %zu: the total number of attributes and capacities must not exceed %d",
             n, MAX_ATTRS_AND_CAPS);
    attribute_names(v, fields, d, "attributes");
    attribute_names(v, fields, d, "capacity");
    json_array_foreach(json_object_get(fields, "consumesCounters"), i, cc) {
      const char *set = str(cc, "counterSet");
      if (!set || has_counter_set(spec, set)) continue;
      snprintf(field, sizeof field, "spec.devices[%zu].consumesCounters[%zu].counterSet", d, i);
      refuse(v, field,
             "Invalid value: \"%s\": must reference a counterSet defined in the ResourceSlice "
             "sharedCounters",
             set);
    }
  }
}

/* Selectors' CEL expressions: at most 10 KiB each (prefix: the path of the selectors). */
static void selectors(vctx *v, json_t *list, const char *prefix) {
  size_t j;
  json_t *s;
  json_array_foreach(list, j, s) {
    const char *expr = str(json_object_get(s, "cel"), "expression");
    char field[512];
    if (!expr || strlen(expr) <= MAX_CEL_BYTES) continue;
    snprintf(field, sizeof field, "%s[%zu].cel.expression", prefix, j);
    refuse(v, field, "Too long: may not be more than %d bytes", MAX_CEL_BYTES);
  }
}

/* A claim's (or template's) requests; v1beta1 has the request's fields inline, but the server
 * converts before validating, so its paths are v1's (requests[i].exactly.count) either way. */
static void claim_spec(vctx *v, json_t *spec, const char *prefix) {
  json_t *r, *reqs = json_object_get(json_object_get(spec, "devices"), "requests");
  size_t i;
  char path[256];
  if (json_array_size(reqs) > MAX_REQUESTS) {
    snprintf(path, sizeof path, "%sdevices.requests", prefix);
    refuse(v, path, "Too many: %zu: must have at most %d items", json_array_size(reqs),
           MAX_REQUESTS);
  }
  json_array_foreach(reqs, i, r) {
    json_t *sub;
    size_t k;
    snprintf(path, sizeof path, "%sdevices.requests[%zu].exactly.selectors", prefix, i);
    selectors(v,
              json_object_get(json_object_get(r, "exactly") ? json_object_get(r, "exactly") : r,
                              "selectors"),
              path);
    json_array_foreach(json_object_get(r, "firstAvailable"), k, sub) {
      snprintf(path, sizeof path, "%sdevices.requests[%zu].firstAvailable[%zu].selectors", prefix,
               i, k);
      selectors(v, json_object_get(sub, "selectors"), path);
    }
  }
  json_array_foreach(reqs, i, r) {
    json_t *exact = json_object_get(r, "exactly"),
           *count = json_object_get(exact ? exact : r, "count");
    const char *mode = str(exact ? exact : r, "allocationMode");
    char field[256];
    if (json_is_integer(count) && json_integer_value(count) < 0 &&
        (!mode || !strcmp(mode, "ExactCount"))) {
      snprintf(field, sizeof field, "%sdevices.requests[%zu].exactly.count", prefix, i);
      refuse(v, field, "Invalid value: %lld: must be greater than zero",
             (long long)json_integer_value(count));
    }
    if (!mode || !strcmp(mode, "All") || !strcmp(mode, "ExactCount")) continue;
    snprintf(field, sizeof field, "%sdevices.requests[%zu].exactly.allocationMode", prefix, i);
    refuse(v, field, "Unsupported value: \"%s\": supported values: \"All\", \"ExactCount\"", mode);
  }
}

/* ---- Kueue ------------------------------------------------------------------------------ */

/* The CRD's rule: limits other than nominal quota need a cohort (v1beta2 cohortName, v1beta1
 * cohort). */
static void cluster_queue(vctx *v, json_t *obj) {
  json_t *spec = json_object_get(obj, "spec"), *g, *f, *r;
  const char *cohort = str(spec, "cohortName");
  bool borrowing = false, lending = false;
  size_t i, j, k;
  if (!cohort) cohort = str(spec, "cohort");
  if (cohort && *cohort) return;
  json_array_foreach(json_object_get(spec, "resourceGroups"), i, g)
    json_array_foreach(json_object_get(g, "flavors"), j, f)
      json_array_foreach(json_object_get(f, "resources"), k, r) {
        borrowing = borrowing || json_object_get(r, "borrowingLimit");
        lending = lending || json_object_get(r, "lendingLimit");
      }
  if (borrowing)
    refuse(v, "spec", "Invalid value: \"object\": borrowingLimit must be nil when cohort is empty");
  if (lending)
    refuse(v, "spec", "Invalid value: \"object\": lendingLimit must be nil when cohort is empty");
}

size_t model_validate(json_t *obj, model_refusal_fn fn, void *ud) {
  vctx v = {NULL, fn, ud, 0};
  model_kind k = model_kind_in_group(str(obj, "apiVersion") ? str(obj, "apiVersion") : "",
                                     str(obj, "kind") ? str(obj, "kind") : "");
  if (k == MODEL_KIND_COUNT || !json_is_object(json_object_get(obj, "metadata"))) return 0;
  metadata(&v, k, obj);
  switch (k) {
  case MODEL_POD:
    pod(&v, obj);
    break;
  case MODEL_RESOURCE_SLICE:
    slice(&v, obj);
    break;
  case MODEL_RESOURCE_CLAIM:
    claim_spec(&v, json_object_get(obj, "spec"), "spec.");
    break;
  case MODEL_RESOURCE_CLAIM_TEMPLATE:
    claim_spec(&v, json_object_get(json_object_get(obj, "spec"), "spec"), "spec.spec.");
    break;
  case MODEL_CLUSTER_QUEUE:
    cluster_queue(&v, obj);
    break;
  case MODEL_DEVICE_CLASS:
    selectors(&v, json_object_get(json_object_get(obj, "spec"), "selectors"), "spec.selectors");
    break;
  default:
    break;
  }
  return v.n;
}
