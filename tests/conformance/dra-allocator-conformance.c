/* dra-allocator-conformance FILE.json: runs Kubernetes' structured-allocator cases
 * (corpora/dra/allocator_cases.json, schema in its README §2) against dra_allocate and
 * prints the failing cases with expected and actual results, then
 * "N passed, M failed, K skipped". Exit status 0 only when none failed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/wire.h"
#include "scheduler/sched.h"

static dra_cel *cel; /* the CEL evaluator, new for every case as upstream's */

typedef struct world_in {
  model_obj **classes; /* decoded DeviceClasses */
  size_t nclasses;
} world_in;

static const model_device_class *find_class(void *ctx, const char *name) {
  world_in *w = ctx;
  for (size_t i = 0; i < w->nclasses; i++)
    if (!strcmp(w->classes[i]->name, name)) return (const model_device_class *)w->classes[i];
  return NULL;
}

/* Wraps `spec`-level JSON into a v1 object of `kind` named `name` and decodes it leniently. */
static model_obj *decode(const char *kind, const char *name, json_t *spec, ts_err *err) {
  model_decode_opts opts = {.lenient = true};
  json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:O}", "apiVersion", "resource.k8s.io/v1", "kind",
                        kind, "metadata", "name", name, "namespace", "", "spec", spec);
  model_obj *out = NULL;
  if (!strcmp(kind, "Node")) {
    json_object_set_new(o, "apiVersion", json_string("v1"));
    json_object_set(json_object_get(o, "metadata"), "labels", json_object_get(spec, "labels"));
    json_object_del(o, "spec");
  }
  if (model_decode(o, &opts, &out, err) != TS_OK) out = NULL;
  json_decref(o);
  return out;
}

/* The class or slice JSON minus its name, as the spec of a v1 object. */
static json_t *without_name(json_t *x) {
  json_t *c = json_deep_copy(x);
  json_object_del(c, "name");
  return c;
}

/* Our result in the corpus's JSON form: the AllocationResult Tessera writes (dra/encode.c,
 * the one encoder), with an absent node selector as the corpus's null. */
static json_t *result_json(const dra_result *r) {
  model_allocation a;
  json_t *j;
  if (dra_result_allocation(r, &a) != TS_OK) return NULL;
  j = model_allocation_json(&a);
  model_allocation_free(&a);
  if (j && !json_object_get(j, "nodeSelector")) json_object_set_new(j, "nodeSelector", json_null());
  return j;
}

static int json_cmp(const void *a, const void *b) {
  char *x = json_dumps(*(json_t *const *)a, JSON_COMPACT | JSON_SORT_KEYS);
  char *y = json_dumps(*(json_t *const *)b, JSON_COMPACT | JSON_SORT_KEYS);
  int c = strcmp(x, y);
  free(x);
  free(y);
  return c;
}

/* Sorts an array in place by its elements' JSON text (order-insensitive comparisons). */
static void sort_array(json_t *arr) {
  size_t n = json_array_size(arr);
  json_t **v;
  if (n < 2) return;
  v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = json_incref(json_array_get(arr, i));
  qsort(v, n, sizeof *v, json_cmp);
  json_array_clear(arr);
  for (size_t i = 0; i < n; i++) json_array_append_new(arr, v[i]);
  free(v);
}

/* Upstream compares device results, node selector terms, requirements and values without
 * regard to order. */
static void normalize(json_t *result) {
  json_t *terms = json_object_get(json_object_get(result, "nodeSelector"), "nodeSelectorTerms"), *t;
  size_t i;
  sort_array(json_object_get(json_object_get(result, "devices"), "results"));
  json_array_foreach(terms, i, t) {
    const char *keys[] = {"matchExpressions", "matchFields"};
    for (int k = 0; k < 2; k++) {
      json_t *reqs = json_object_get(t, keys[k]), *r;
      size_t j;
      json_array_foreach(reqs, j, r) sort_array(json_object_get(r, "values"));
      sort_array(reqs);
    }
  }
  sort_array(terms);
}

typedef struct tally {
  int passed, failed, skipped;
} tally;

static void report(tally *t, const char *name, const char *want, const char *got) {
  t->failed++;
  printf("FAIL %s\n  want: %s\n  got:  %s\n", name, want, got);
}

static void run_case(json_t *c, tally *t) {
  const char *name = json_string_value(json_object_get(c, "name"));
  json_t *feat = json_object_get(c, "features"), *expect = json_object_get(c, "expect"), *x;
  json_t *want_err = json_object_get(expect, "error"), *want = json_object_get(expect, "results");
  dra_features f = {0};
  world_in in = {0};
  model_obj **slices = NULL, **claims = NULL, *node = NULL;
  const model_claim_spec **specs = NULL;
  const char **names = NULL;
  size_t nslices = json_array_size(json_object_get(c, "slices"));
  size_t nclaims = json_array_size(json_object_get(c, "claims")), i;
  dra_world *w = NULL;
  dra_result *res = NULL;
  ts_arena arena;
  ts_err err;
  bool ok = false, bad = false;
  ts_rc rc;
  ts_arena_init(&arena, 0);
  ts_err_clear(&err);
  if (json_is_true(json_object_get(feat, "consumableCapacity"))) {
    t->skipped++;
    printf("SKIP %s: DRAConsumableCapacity is not implemented\n", name);
    return;
  }
  f.admin_access = json_is_true(json_object_get(feat, "adminAccess"));
  f.prioritized_list = json_is_true(json_object_get(feat, "prioritizedList"));
  f.partitionable_devices = json_is_true(json_object_get(feat, "partitionableDevices"));
  f.device_taints = json_is_true(json_object_get(feat, "deviceTaints"));
  f.device_binding = json_is_true(json_object_get(feat, "deviceBinding"));
  in.nclasses = json_array_size(json_object_get(c, "classes"));
  in.classes = calloc(in.nclasses + 1, sizeof *in.classes);
  slices = calloc(nslices + 1, sizeof *slices);
  claims = calloc(nclaims + 1, sizeof *claims);
  specs = calloc(nclaims + 1, sizeof *specs);
  names = calloc(nclaims + 1, sizeof *names);
  res = calloc(nclaims + 1, sizeof *res);
  json_array_foreach(json_object_get(c, "classes"), i, x) {
    json_t *spec = without_name(x);
    in.classes[i] =
        decode("DeviceClass", json_string_value(json_object_get(x, "name")), spec, &err);
    json_decref(spec);
    bad |= !in.classes[i];
  }
  json_array_foreach(json_object_get(c, "slices"), i, x) {
    json_t *spec = without_name(x);
    slices[i] = decode("ResourceSlice", json_string_value(json_object_get(x, "name")), spec, &err);
    json_decref(spec);
    bad |= !slices[i];
  }
  json_array_foreach(json_object_get(c, "claims"), i, x) {
    json_t *spec = json_pack("{s:O}", "devices", json_object_get(x, "devices"));
    claims[i] = decode("ResourceClaim", json_string_value(json_object_get(x, "name")), spec, &err);
    json_decref(spec);
    if (claims[i]) specs[i] = &((model_claim *)claims[i])->spec, names[i] = claims[i]->name;
    bad |= !claims[i];
  }
  if (json_is_object(json_object_get(c, "node"))) {
    json_t *n = json_object_get(c, "node");
    node = decode("Node", json_string_value(json_object_get(n, "name")), n, &err);
    bad |= !node;
  }
  if (bad) {
    report(t, name, "the case's objects to decode", err.text);
    goto out;
  }
  w = dra_world_new((const model_slice *const *)slices, nslices, &f, find_class, &in, dra_cel_eval,
                    cel);
  json_array_foreach(json_object_get(c, "allocatedDevices"), i, x) {
    char d[3][256];
    if (sscanf(json_string_value(x), "%255[^/]/%255[^/]/%255s", d[0], d[1], d[2]) == 3)
      dra_world_mark(w, d[0], d[1], d[2]);
  }
  rc = dra_allocate(w, node ? node->name : NULL, node ? &node->labels : NULL, specs, names, nclaims,
                    &arena, res, &ok, &err);
  if (json_is_string(want_err)) {
    if (rc != TS_OK && strstr(err.text, json_string_value(want_err)))
      t->passed++;
    else
      report(t, name, json_string_value(want_err), rc != TS_OK ? err.text : "no error");
    goto out;
  }
  if (rc != TS_OK) {
    report(t, name, "no error", err.text);
    goto out;
  }
  if (!nclaims) ok = false; /* nothing to allocate: upstream returns no results */
  if (!json_is_array(want) || !ok) {
    if (!json_is_array(want) == !ok)
      t->passed++;
    else
      report(t, name, json_is_array(want) ? "an allocation" : "no allocation",
             ok ? "an allocation" : "no allocation");
    goto out;
  }
  {
    json_t *got = json_array(), *exp = json_deep_copy(want), *g;
    char *gs, *es;
    for (i = 0; i < nclaims; i++) json_array_append_new(got, result_json(&res[i]));
    json_array_foreach(got, i, g) normalize(g);
    json_array_foreach(exp, i, g) normalize(g);
    gs = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    es = json_dumps(exp, JSON_COMPACT | JSON_SORT_KEYS);
    if (json_equal(got, exp))
      t->passed++;
    else
      report(t, name, es, gs);
    free(gs);
    free(es);
    json_decref(got);
    json_decref(exp);
  }
out:
  dra_world_free(w);
  for (i = 0; i < in.nclasses; i++) model_obj_free(in.classes[i]);
  for (i = 0; i < nslices; i++) model_obj_free(slices[i]);
  for (i = 0; i < nclaims; i++) model_obj_free(claims[i]);
  model_obj_free(node);
  free(in.classes), free(slices), free(claims), free(specs), free(names), free(res);
  ts_arena_free(&arena);
}

int main(int argc, char **argv) {
  json_error_t je;
  json_t *doc, *cases, *c;
  tally t = {0};
  size_t i;
  if (argc != 2) {
    fprintf(stderr, "usage: dra-allocator-conformance allocator_cases.json\n");
    return 2;
  }
  if (!(doc = json_load_file(argv[1], 0, &je))) {
    fprintf(stderr, "%s:%d: %s\n", argv[1], je.line, je.text);
    return 2;
  }
  cases = json_object_get(doc, "cases");
  json_array_foreach(cases, i, c) {
    if (!(cel = dra_cel_new())) return 2;
    run_case(c, &t);
    dra_cel_free(cel);
  }
  printf("%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped);
  json_decref(doc);
  return t.failed ? 1 : 0;
}
