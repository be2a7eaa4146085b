/* dra-cel-conformance FILE.json: runs Kubernetes' DRA CEL selector cases
 * (tests/data/corpora/dra/README.md §1) against dra_selector_compile / dra_selector_eval. A case
 * whose listTypeAttributes gate is null runs with the gate off and on, as upstream does. Prints the
 * failing cases, then "N passed, M failed, K skipped". Exit status 0 only when none failed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "dra/dra.h"

#define MAX_ATTRS 64
#define MAX_LIST  128

typedef struct device_in {
  dra_device_view dev;               /* the view */
  dra_attr_view attrs[MAX_ATTRS];    /* attributes */
  dra_capacity_view caps[MAX_ATTRS]; /* capacities */
  bool bools[MAX_ATTRS][MAX_LIST];   /* list storage */
  int64_t ints[MAX_ATTRS][MAX_LIST];
  const char *strs[MAX_ATTRS][MAX_LIST];
  cel_semver vers[MAX_ATTRS][MAX_LIST];
} device_in;

/* "domain/name" or "name" into the attribute's domain and name. */
static void split_name(const char *full, const char **domain, const char **name) {
  const char *slash = strrchr(full, '/');
  if (!slash) {
    *domain = NULL, *name = full;
    return;
  }
  *domain = ts_intern(full, (size_t)(slash - full));
  *name = slash + 1;
}

static bool build(json_t *d, device_in *in, char *why, size_t cap) {
  const char *key;
  json_t *v, *am = json_object_get(d, "allowMultipleAllocations");
  ts_err err;
  memset(in, 0, sizeof *in);
  in->dev.driver = json_string_value(json_object_get(d, "driver"));
  in->dev.allow_multiple = json_is_boolean(am) ? json_is_true(am) : -1;
  json_object_foreach(json_object_get(d, "attributes"), key, v) {
    size_t k = in->dev.nattrs++;
    dra_attr_view *a = &in->attrs[k];
    json_t *x, *e;
    size_t i;
    if (k >= MAX_ATTRS) return snprintf(why, cap, "too many attributes"), false;
    split_name(key, &a->domain, &a->name);
    if ((x = json_object_get(v, "bool")))
      a->kind = DRA_ATTR_BOOL, a->u.b = json_is_true(x);
    else if ((x = json_object_get(v, "int")))
      a->kind = DRA_ATTR_INT, a->u.i = json_integer_value(x);
    else if ((x = json_object_get(v, "string")))
      a->kind = DRA_ATTR_STRING, a->u.s = json_string_value(x);
    else if ((x = json_object_get(v, "version"))) {
      a->kind = DRA_ATTR_VERSION;
      if (cel_semver_parse(json_string_value(x), json_string_length(x), false, &a->u.v, &err) !=
          TS_OK)
        return snprintf(why, cap, "%s", err.text), false;
    } else if ((x = json_object_get(v, "bools"))) {
      a->kind = DRA_ATTR_BOOL_LIST, a->u.bl = in->bools[k];
      json_array_foreach(x, i, e)
        if (i < MAX_LIST) in->bools[k][a->n++] = json_is_true(e);
    } else if ((x = json_object_get(v, "ints"))) {
      a->kind = DRA_ATTR_INT_LIST, a->u.il = in->ints[k];
      json_array_foreach(x, i, e)
        if (i < MAX_LIST) in->ints[k][a->n++] = json_integer_value(e);
    } else if ((x = json_object_get(v, "strings"))) {
      a->kind = DRA_ATTR_STRING_LIST, a->u.sl = in->strs[k];
      json_array_foreach(x, i, e)
        if (i < MAX_LIST) in->strs[k][a->n++] = json_string_value(e);
    } else if ((x = json_object_get(v, "versions"))) {
      a->kind = DRA_ATTR_VERSION_LIST, a->u.vl = in->vers[k];
      json_array_foreach(x, i, e) {
        if (i >= MAX_LIST) break;
        if (cel_semver_parse(json_string_value(e), json_string_length(e), false,
                             &in->vers[k][a->n++], &err) != TS_OK)
          return snprintf(why, cap, "%s", err.text), false;
      }
    } else {
      return snprintf(why, cap, "attribute %s: unknown value form", key), false;
    }
  }
  json_object_foreach(json_object_get(d, "capacity"), key, v) {
    size_t k = in->dev.ncaps++;
    if (k >= MAX_ATTRS) return snprintf(why, cap, "too many capacities"), false;
    split_name(key, &in->caps[k].domain, &in->caps[k].name);
    if (ts_quantity_parse(json_string_value(json_object_get(v, "value")), &in->caps[k].value,
                          &err) != TS_OK)
      return snprintf(why, cap, "capacity %s: %s", key, err.text), false;
  }
  in->dev.attrs = in->attrs, in->dev.caps = in->caps;
  return true;
}

/* One run of a case in env; NULL when it behaved as expected, else what happened. */
static const char *run_in(const dra_env *env, cel_eval_ctx *ctx, json_t *c, device_in *in,
                          char *got, size_t cap) {
  json_t *expect = json_object_get(c, "expect"), *x;
  const char *expr = json_string_value(json_object_get(c, "expression"));
  cel_program *p = NULL;
  ts_err err;
  bool match = false;
  ts_err_clear(&err);
  if (dra_selector_compile(env, expr, &p, &err) != TS_OK) {
    x = json_object_get(expect, "compileError");
    if (json_is_string(x) && strstr(err.text, json_string_value(x))) return NULL;
    snprintf(got, cap, "compile error: %s", err.text);
    return got;
  }
  if (json_object_get(expect, "compileError")) {
    cel_program_free(p);
    return snprintf(got, cap, "compiled"), got;
  }
  if (dra_selector_eval(p, ctx, &in->dev, &match, &err) != TS_OK) {
    cel_program_free(p);
    x = json_object_get(expect, "matchError");
    if (json_is_string(x) && strstr(err.text, json_string_value(x))) return NULL;
    snprintf(got, cap, "evaluation error: %s", err.text);
    return got;
  }
  cel_program_free(p);
  x = json_object_get(expect, "match");
  if (json_is_boolean(x) && json_is_true(x) == match) return NULL;
  snprintf(got, cap, "match %s", match ? "true" : "false");
  return got;
}

/* One run of a case with the gates given, in an environment of its own. */
static const char *run(json_t *c, const dra_selector_opts *opts, device_in *in, char *got,
                       size_t cap) {
  dra_env *env = dra_env_new(opts);
  cel_eval_ctx *ctx = cel_eval_ctx_new();
  const char *r =
      env && ctx ? run_in(env, ctx, c, in, got, cap) : (snprintf(got, cap, "out of memory"), got);
  cel_eval_ctx_free(ctx);
  dra_env_free(env);
  return r;
}

int main(int argc, char **argv) {
  json_error_t je;
  json_t *root, *c;
  size_t i;
  int passed = 0, failed = 0, skipped = 0;
  static device_in in;
  if (argc != 2) {
    fprintf(stderr, "usage: dra-cel-conformance FILE.json\n");
    return 2;
  }
  if (!(root = json_load_file(argv[1], 0, &je))) {
    fprintf(stderr, "%s:%d: %s\n", argv[1], je.line, je.text);
    return 2;
  }
  json_array_foreach(json_object_get(root, "cases"), i, c) {
    json_t *env = json_object_get(c, "env"), *feat = json_object_get(env, "features");
    json_t *lists = json_object_get(feat, "listTypeAttributes");
    dra_selector_opts o;
    char why[TS_ERR_TEXT_MAX + 256], got[2048];
    const char *bad = NULL;
    o.env = !strcmp(json_string_value(json_object_get(env, "envType")), "NewExpressions")
                ? DRA_SELECTOR_NEW
                : DRA_SELECTOR_STORED;
    o.consumable_capacity = json_is_true(json_object_get(feat, "consumableCapacity"));
    if (!build(json_object_get(c, "device"), &in, why, sizeof why)) {
      printf("FAIL %s: the case's device: %s\n", json_string_value(json_object_get(c, "name")),
             why);
      failed++;
      continue;
    }
    for (int gate = json_is_null(lists) ? 0 : 1; gate < 2 && !bad; gate++) {
      o.list_attributes = json_is_null(lists) ? gate == 1 : json_is_true(lists);
      bad = run(c, &o, &in, got, sizeof got);
    }
    if (!bad) {
      passed++;
    } else {
      failed++;
      printf("FAIL %s\n  expression: %s\n  want: %s\n  got:  %s\n",
             json_string_value(json_object_get(c, "name")),
             json_string_value(json_object_get(c, "expression")),
             json_dumps(json_object_get(c, "expect"), JSON_COMPACT), bad);
    }
  }
  json_decref(root);
  printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed ? 1 : 0;
}
