/* model/decode.c - the decoding machinery: kind dispatch, object metadata, field paths and
 * typed readers whose errors name the object and the field. */
#include "model/model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- kinds ----------------------------------------------------------------------------- */

typedef struct kind_info {
  size_t size;             /* sizeof the kind's struct */
  model__decode_fn decode; /* fills the kind's fields */
  model__free_fn free;     /* frees the kind's fields */
} kind_info;

#define K(id, fn, type) [MODEL_##id] = {sizeof(type), model__decode_##fn, model__free_##fn}
static const kind_info kinds[MODEL_KIND_COUNT] = {
    K(POD, pod, model_pod),
    K(NODE, node, model_node),
    K(NAMESPACE, namespace, model_namespace),
    K(PRIORITY_CLASS, priority_class, model_priority_class),
    K(PDB, pdb, model_pdb),
    K(RESOURCE_SLICE, slice, model_slice),
    K(DEVICE_CLASS, device_class, model_device_class),
    K(RESOURCE_CLAIM, claim, model_claim),
    K(RESOURCE_CLAIM_TEMPLATE, claim_template, model_claim_template),
    K(CLUSTER_QUEUE, cluster_queue, model_cluster_queue),
    K(LOCAL_QUEUE, local_queue, model_local_queue),
    K(RESOURCE_FLAVOR, resource_flavor, model_resource_flavor),
    K(COHORT, cohort, model_cohort),
    K(WORKLOAD_PRIORITY_CLASS, workload_priority_class, model_workload_priority_class),
    K(WORKLOAD, workload, model_workload),
    K(POD_GROUP, pod_group, model_pod_group),
    K(VOLCANO_POD_GROUP, pod_group, model_pod_group),
    K(KAI_POD_GROUP, pod_group, model_pod_group),
    K(VOLCANO_QUEUE, volcano_queue, model_cluster_queue),
    K(KAI_QUEUE, kai_queue, model_cluster_queue),
    K(JOB, job, model_job),
    K(JOBSET, jobset, model_job),
    K(PYTORCH_JOB, training_job, model_job),
    K(TF_JOB, training_job, model_job),
    K(MPI_JOB, training_job, model_job),
    K(XGBOOST_JOB, training_job, model_job),
    K(PADDLE_JOB, training_job, model_job),
    K(JAX_JOB, training_job, model_job),
};
#undef K

static const model_kind_api apis[MODEL_KIND_COUNT] = {
#define MODEL__KIND_API(id, kind, group, resource, versions, ns)                                   \
  {kind, group, resource, versions, ns},
    MODEL_KINDS(MODEL__KIND_API)
#undef MODEL__KIND_API
};

const model_kind_api *model_kind_api_of(model_kind k) {
  return (unsigned)k < MODEL_KIND_COUNT ? &apis[k] : NULL;
}

const char *model_kind_name(model_kind k) {
  return (unsigned)k < MODEL_KIND_COUNT ? apis[k].kind : "Unknown";
}

model_kind model_kind_of(const char *name) {
  for (int i = 0; i < MODEL_KIND_COUNT; i++)
    if (!strcmp(apis[i].kind, name)) return (model_kind)i;
  return MODEL_KIND_COUNT;
}

model_kind model_kind_in_group(const char *group, const char *kind) {
  const char *slash = strchr(group, '/');
  size_t glen = slash ? (size_t)(slash - group) : strlen(group);
  if (slash == NULL && !strcmp(group, "v1")) glen = 0; /* the core group's apiVersion */
  for (int i = 0; i < MODEL_KIND_COUNT; i++)
    if (!strcmp(apis[i].kind, kind) && strlen(apis[i].group) == glen &&
        !memcmp(apis[i].group, group, glen))
      return (model_kind)i;
  return MODEL_KIND_COUNT;
}

static bool word_in(const char *word, size_t n, const char *list) {
  while (*list) {
    size_t k = strcspn(list, " ");
    if (k == n && !memcmp(list, word, n)) return true;
    list += k;
    while (*list == ' ') list++;
  }
  return false;
}

/* Finds the kind for (apiVersion, kind); sets *version to the version part. MODEL_KIND_COUNT:
 * skip. */
static model_kind find_kind(const char *api_version, const char *kind, const char **version) {
  const char *slash = strchr(api_version, '/');
  const char *group = slash ? api_version : "";
  size_t glen = slash ? (size_t)(slash - api_version) : 0;
  *version = slash ? slash + 1 : api_version;
  for (int i = 0; i < MODEL_KIND_COUNT; i++) {
    const model_kind_api *k = &apis[i];
    if (strcmp(k->kind, kind) != 0) continue;
    if (strlen(k->group) != glen || memcmp(k->group, group, glen) != 0) continue;
    if (word_in(*version, strlen(*version), k->versions)) return (model_kind)i;
  }
  return MODEL_KIND_COUNT;
}

/* ---- paths and errors ------------------------------------------------------------------ */

/* Appends the pieces (NULL-terminated) to the path, cut at MD_PATH_MAX; returns the mark. */
static size_t push_raw(mdec *d, const char *a, const char *b, const char *c) {
  size_t mark = d->plen;
  const char *pieces[] = {a, b, c};
  for (int k = 0; k < 3 && pieces[k]; k++) {
    d->plen += ts_strlcpy(d->path + d->plen, pieces[k], MD_PATH_MAX - d->plen);
    if (d->plen >= MD_PATH_MAX) d->plen = MD_PATH_MAX - 1;
  }
  return mark;
}

size_t model__push(mdec *d, const char *field) {
  return d->plen ? push_raw(d, ".", field, NULL) : push_raw(d, field, NULL, NULL);
}

size_t model__push_index(mdec *d, size_t i) {
  char num[24];
  snprintf(num, sizeof num, "%zu", i);
  return push_raw(d, "[", num, "]");
}

size_t model__push_key(mdec *d, const char *key) {
  return push_raw(d, "[", key, "]");
}

void model__pop(mdec *d, size_t mark) {
  d->plen = mark;
  d->path[mark] = '\0';
}

static ts_rc vfail(mdec *d, ts_rc code, const char *fmt, va_list ap) {
  char msg[TS_ERR_TEXT_MAX / 2];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (d->ns && *d->ns)
    return ts_err_set(d->err, code, "%s %s/%s: %s: %s", d->kind, d->ns, d->name, d->path, msg);
  return ts_err_set(d->err, code, "%s %s: %s: %s", d->kind, d->name, d->path, msg);
}

ts_rc model__fail(mdec *d, ts_rc code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(d, code, fmt, ap);
  va_end(ap);
  return code;
}

ts_rc model__fail_at(mdec *d, const char *field, const char *fmt, ...) {
  size_t mark = model__push(d, field);
  va_list ap;
  va_start(ap, fmt);
  vfail(d, TS_EINVAL, fmt, ap);
  va_end(ap);
  model__pop(d, mark);
  return TS_EINVAL;
}

/* ---- typed readers --------------------------------------------------------------------- */

static const char *json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "a list";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
  case JSON_REAL:
    return "a number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  default:
    return "null";
  }
}

static json_t *member(json_t *parent, const char *key) {
  json_t *v = json_object_get(parent, key);
  return json_is_null(v) ? NULL : v;
}

static ts_rc wrong_type(mdec *d, const char *key, json_t *v, const char *want) {
  return model__fail_at(d, key, "must be %s, not %s", want, json_type_name(v));
}

json_t *model__object(mdec *d, json_t *parent, const char *key, ts_rc *rc) {
  json_t *v = member(parent, key);
  *rc = TS_OK;
  if (v && !json_is_object(v)) {
    *rc = wrong_type(d, key, v, "an object");
    return NULL;
  }
  return v;
}

json_t *model__array(mdec *d, json_t *parent, const char *key, ts_rc *rc) {
  json_t *v = member(parent, key);
  *rc = TS_OK;
  if (v && !json_is_array(v)) {
    *rc = wrong_type(d, key, v, "a list");
    return NULL;
  }
  return v;
}

ts_rc model__string(mdec *d, json_t *parent, const char *key, const char **out, bool required) {
  json_t *v = member(parent, key);
  if (!v || (required && json_is_string(v) && !*json_string_value(v))) {
    if (required) return model__fail_at(d, key, "is required");
    return TS_OK;
  }
  if (!json_is_string(v)) return wrong_type(d, key, v, "a string");
  *out = json_string_value(v);
  return TS_OK;
}

ts_rc model__intern(mdec *d, json_t *parent, const char *key, const char **out, bool required) {
  const char *s = NULL;
  ts_rc rc = model__string(d, parent, key, &s, required);
  if (rc != TS_OK || !s) return rc;
  *out = ts_intern_cstr(s);
  return *out ? TS_OK : model__fail(d, TS_ENOMEM, "out of memory");
}

ts_rc model__strdup(mdec *d, json_t *parent, const char *key, char **out, bool required) {
  const char *s = NULL;
  ts_rc rc = model__string(d, parent, key, &s, required);
  if (rc != TS_OK || !s) return rc;
  *out = ts_strdup(s);
  return *out ? TS_OK : model__fail(d, TS_ENOMEM, "out of memory");
}

ts_rc model__int(mdec *d, json_t *parent, const char *key, int64_t *out, bool *present) {
  json_t *v = member(parent, key);
  if (present) *present = v != NULL;
  if (!v) return TS_OK;
  if (json_is_integer(v)) {
    *out = json_integer_value(v);
    return TS_OK;
  }
  if (json_is_real(v)) {
    double r = json_real_value(v);
    if (r >= -9.2e18 && r <= 9.2e18 && r == (double)(int64_t)r) { /* range first: no UB */
      *out = (int64_t)r;
      return TS_OK;
    }
    return model__fail_at(d, key, "must be an integer");
  }
  return wrong_type(d, key, v, "an integer");
}

ts_rc model__int32(mdec *d, json_t *parent, const char *key, int32_t *out, bool *present) {
  int64_t v = 0;
  bool p = false;
  ts_rc rc = model__int(d, parent, key, &v, &p);
  if (present) *present = p;
  if (rc != TS_OK || !p) return rc;
  if (v < INT32_MIN || v > INT32_MAX) return model__fail_at(d, key, "must fit in 32 bits");
  *out = (int32_t)v;
  return TS_OK;
}

ts_rc model__bool(mdec *d, json_t *parent, const char *key, bool *out, bool *present) {
  json_t *v = member(parent, key);
  if (present) *present = v != NULL;
  if (!v) return TS_OK;
  if (!json_is_boolean(v)) return wrong_type(d, key, v, "a boolean");
  *out = json_is_true(v);
  return TS_OK;
}

ts_rc model__quantity_value(mdec *d, json_t *v, ts_quantity *out) {
  ts_err qe;
  char num[64];
  const char *s = num;
  ts_err_clear(&qe);
  if (json_is_string(v))
    s = json_string_value(v);
  else if (json_is_integer(v))
    snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v))
    snprintf(num, sizeof num, "%.17g", json_real_value(v));
  else
    return model__fail(d, TS_EINVAL, "must be a quantity, not %s", json_type_name(v));
  if (ts_quantity_parse(s, out, &qe) != TS_OK) return model__fail(d, qe.code, "%s", qe.text);
  return TS_OK;
}

ts_rc model__quantity(mdec *d, json_t *parent, const char *key, ts_quantity *out, bool *present) {
  json_t *v = member(parent, key);
  size_t mark;
  ts_rc rc;
  if (present) *present = v != NULL;
  if (!v) return TS_OK;
  mark = model__push(d, key);
  rc = model__quantity_value(d, v, out);
  model__pop(d, mark);
  return rc;
}

ts_rc model__enum(mdec *d, json_t *parent, const char *key, const char *const *names, int n,
                  int *out) {
  const char *s = NULL;
  ts_rc rc = model__string(d, parent, key, &s, false);
  if (rc != TS_OK || !s) return rc;
  for (int i = 0; i < n; i++) {
    if (names[i] && !strcmp(names[i], s)) {
      *out = i;
      return TS_OK;
    }
  }
  {
    char allowed[256] = "";
    size_t len = 0;
    for (int i = 0; i < n; i++) {
      if (!names[i]) continue;
      len += (size_t)snprintf(allowed + len, sizeof allowed - len, "%s\"%s\"", len ? ", " : "",
                              names[i]);
      if (len >= sizeof allowed) break;
    }
    return model__fail_at(d, key, "unsupported value \"%s\": supported values: %s", s, allowed);
  }
}

ts_rc model__alloc_array(mdec *d, size_t n, size_t sz, void **out) {
  *out = NULL;
  if (!n) return TS_OK;
  *out = ts_calloc(n, sz);
  return *out ? TS_OK : model__fail(d, TS_ENOMEM, "out of memory");
}

/* A list of interned strings: pinned, or counted (ts_intern_ref). */
static ts_rc strings(mdec *d, json_t *parent, const char *key, const char ***out, uint32_t *n,
                     bool counted) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *v;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  rc = model__alloc_array(d, json_array_size(arr), sizeof(char *), (void **)out);
  if (rc != TS_OK) return rc;
  *n = (uint32_t)json_array_size(arr);
  mark = model__push(d, key);
  json_array_foreach(arr, i, v) {
    if (!json_is_string(v)) {
      model__push_index(d, i);
      rc = model__fail(d, TS_EINVAL, "must be a string, not %s", json_type_name(v));
      break;
    }
    (*out)[i] = counted ? ts_intern_ref(json_string_value(v), json_string_length(v))
                        : ts_intern(json_string_value(v), json_string_length(v));
    if (!(*out)[i]) {
      rc = model__fail(d, TS_ENOMEM, "out of memory");
      break;
    }
  }
  model__pop(d, mark);
  return rc;
}

ts_rc model__strings(mdec *d, json_t *parent, const char *key, const char ***out, uint32_t *n) {
  return strings(d, parent, key, out, n, false);
}

ts_rc model__values(mdec *d, json_t *parent, const char *key, const char ***out, uint32_t *n) {
  return strings(d, parent, key, out, n, true);
}

ts_rc model__strdups(mdec *d, json_t *parent, const char *key, char ***out, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, parent, key, &rc), *v;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  rc = model__alloc_array(d, json_array_size(arr), sizeof(char *), (void **)out);
  if (rc != TS_OK) return rc;
  *n = (uint32_t)json_array_size(arr);
  mark = model__push(d, key);
  json_array_foreach(arr, i, v) {
    if (!json_is_string(v)) {
      model__push_index(d, i);
      rc = model__fail(d, TS_EINVAL, "must be a string, not %s", json_type_name(v));
      break;
    }
    if (!((*out)[i] = ts_strdup(json_string_value(v)))) {
      rc = model__fail(d, TS_ENOMEM, "out of memory");
      break;
    }
  }
  model__pop(d, mark);
  return rc;
}

void model__strdups_free(char **v, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) ts_free(v[i]);
  ts_free(v);
}

/* ---- metadata -------------------------------------------------------------------------- */

ts_rc model__time(mdec *d, json_t *md, const char *key, int64_t *out) {
  const char *s = NULL;
  ts_rc rc = model__string(d, md, key, &s, false);
  if (rc != TS_OK || !s) return rc;
  if (ts_time_parse(s, out) != TS_OK)
    return model__fail_at(d, key, "invalid RFC 3339 time \"%s\"", s);
  return TS_OK;
}

static ts_rc decode_owners(mdec *d, json_t *md, model_obj *o) {
  ts_rc rc;
  json_t *arr = model__array(d, md, "ownerReferences", &rc), *v;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  rc = model__alloc_array(d, json_array_size(arr), sizeof *o->owners, (void **)&o->owners);
  if (rc != TS_OK) return rc;
  o->nowners = (uint32_t)json_array_size(arr);
  mark = model__push(d, "ownerReferences");
  json_array_foreach(arr, i, v) {
    model_owner *w = &o->owners[i];
    size_t m2 = model__push_index(d, i);
    if ((rc = model__intern(d, v, "apiVersion", &w->api_version, false)) ||
        (rc = model__intern(d, v, "kind", &w->kind, true)) ||
        (rc = model__strdup(d, v, "name", &w->name, true)) ||
        (rc = model__strdup(d, v, "uid", &w->uid, false)) ||
        (rc = model__bool(d, v, "controller", &w->controller, NULL)))
      break;
    model__pop(d, m2);
  }
  if (rc == TS_OK) model__pop(d, mark);
  return rc;
}

/* A manifest with metadata.generateName and no name (as `kubectl create` takes): the name is
 * the prefix plus five characters derived from the object's content, so that replays of the
 * same input give the same name. */
static ts_rc generated_name(mdec *d, json_t *root, json_t *md, char *out, size_t cap) {
  static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  const char *prefix = NULL;
  char *dump;
  uint64_t h;
  size_t n;
  ts_rc rc = model__string(d, md, "generateName", &prefix, false);
  out[0] = '\0';
  if (rc != TS_OK || !prefix || !*prefix) return rc;
  dump = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
  if (!dump) return model__fail(d, TS_ENOMEM, "out of memory");
  h = ts_hash(dump, strlen(dump));
  free(dump);
  n = ts_strlcpy(out, prefix, cap - 6);
  if (n > cap - 7) n = cap - 7;
  for (int i = 0; i < 5; i++, h /= 27) out[n + (size_t)i] = alphabet[h % 27];
  out[n + 5] = '\0';
  return TS_OK;
}

/* Decodes metadata into the header; names the object in d for later messages. */
static ts_rc decode_meta(mdec *d, json_t *root, model_obj *o, bool namespaced) {
  char gen[256] = "";
  ts_rc rc;
  json_t *md = model__object(d, root, "metadata", &rc);
  const char *name = NULL, *ns = NULL, *rv = NULL, *uid = NULL;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!md) return model__fail(d, TS_EINVAL, "metadata: is required");
  json_t *nm = json_object_get(md, "name");
  if (json_is_string(nm)) d->name = json_string_value(nm);
  mark = model__push(d, "metadata");
  if (!json_is_string(nm) || !*json_string_value(nm)) {
    if ((rc = generated_name(d, root, md, gen, sizeof gen)) != TS_OK) return rc;
    if (*gen) d->name = gen;
  }
  if (*gen)
    name = gen;
  else if ((rc = model__string(d, md, "name", &name, true)) != TS_OK)
    return rc;
  if (namespaced) {
    if ((rc = model__string(d, md, "namespace", &ns, false)) != TS_OK) return rc;
    if (!ns || !*ns) ns = "default"; /* as kubectl applies a manifest without a namespace */
  }
  d->ns = ns ? ns : "";
  if ((rc = model__string(d, md, "uid", &uid, false)) ||
      (rc = model__string(d, md, "resourceVersion", &rv, false)) ||
      (rc = model__int(d, md, "generation", &o->generation, NULL)) ||
      (rc = model__time(d, md, "creationTimestamp", &o->created_ns)) ||
      (rc = model__time(d, md, "deletionTimestamp", &o->deleted_ns)) ||
      (rc = model__labels(d, md, "labels", false, &o->labels)) ||
      (rc = model__labels(d, md, "annotations", true, &o->annotations)) ||
      (rc = decode_owners(d, md, o)))
    return rc;
  model__pop(d, mark);
  o->ns = ts_intern_cstr(d->ns);
  o->name = ts_strdup(name);
  o->uid = ts_strdup(uid ? uid : "");
  o->resource_version = ts_strdup(rv ? rv : "");
  if (namespaced) {
    size_t n = strlen(ns) + strlen(name) + 2;
    o->key = ts_malloc(n);
    if (o->key) snprintf(o->key, n, "%s/%s", ns, name);
  } else {
    o->key = ts_strdup(name);
  }
  if (!o->ns || !o->name || !o->uid || !o->resource_version || !o->key)
    return model__fail(d, TS_ENOMEM, "out of memory");
  d->name = o->name; /* a generated name lives on this frame; the object's copy lives on */
  return TS_OK;
}

void model__obj_fini(model_obj *o) {
  ts_free(o->name);
  ts_free(o->uid);
  ts_free(o->resource_version);
  ts_free(o->key);
  model__labels_free(&o->labels, false);
  model__labels_free(&o->annotations, true);
  for (uint32_t i = 0; i < o->nowners; i++) {
    ts_free(o->owners[i].name);
    ts_free(o->owners[i].uid);
  }
  ts_free(o->owners);
}

void model_obj_free(model_obj *o) {
  if (!o) return;
  kinds[o->kind].free(o);
  model__obj_fini(o);
  ts_free(o);
}

model_kind model_decode_key(json_t *json, const char **ns, const char **name) {
  const char *api_version = json_string_value(json_object_get(json, "apiVersion"));
  const char *kind = json_string_value(json_object_get(json, "kind")), *version = "";
  json_t *md = json_object_get(json, "metadata");
  model_kind mk;
  *ns = "", *name = NULL;
  if (!kind || !api_version || (mk = find_kind(api_version, kind, &version)) == MODEL_KIND_COUNT)
    return MODEL_KIND_COUNT;
  *name = json_string_value(json_object_get(md, "name"));
  if (apis[mk].namespaced) {
    *ns = json_string_value(json_object_get(md, "namespace"));
    if (!*ns || !**ns) *ns = "default";
  }
  return *name && **name ? mk : MODEL_KIND_COUNT;
}

ts_rc model_decode(json_t *json, const model_decode_opts *opts, model_obj **out, ts_err *err) {
  static const model_decode_opts defaults = {0};
  const char *api_version, *kind, *version = "";
  model_kind mk;
  const kind_info *k;
  mdec d = {0};
  model_obj *o;
  ts_rc rc;
  int mark;
  *out = NULL;
  if (!json_is_object(json)) return ts_err_set(err, TS_EINVAL, "object: must be a JSON object");
  api_version = json_string_value(json_object_get(json, "apiVersion"));
  kind = json_string_value(json_object_get(json, "kind"));
  if (!kind || !api_version) return TS_OK; /* not a Kubernetes object we can recognise */
  if ((mk = find_kind(api_version, kind, &version)) == MODEL_KIND_COUNT) return TS_OK;
  k = &kinds[mk];
  d.err = err, d.opts = opts ? opts : &defaults, d.kind = kind, d.version = version;
  d.name = "(unnamed)", d.ns = "";
  d.res = d.opts->resources;
  d.base = model_resource_count(d.res);
  o = ts_calloc(1, k->size);
  if (!o) return ts_err_set(err, TS_ENOMEM, "out of memory");
  o->kind = mk;
  o->api_version = ts_intern_cstr(api_version);
  mark = model_resource_count(d.res);
  rc = decode_meta(&d, json, o, apis[mk].namespaced);
  if (rc == TS_OK) rc = k->decode(&d, json, o);
  if (rc != TS_OK) {
    model_obj_free(o);
    model_resources_truncate(d.res, mark); /* a rejected object leaves no names behind */
    return rc;
  }
  *out = o;
  return TS_OK;
}
