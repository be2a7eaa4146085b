/* cel-conformance FILE.jsonl: runs the cel-spec conformance vectors (schema in
 * tests/data/corpora/cel/README.md) against cel/. Prints each failing id with what was expected
 * and what came out, then "N passed, M failed, K skipped" (skips counted by stated reason).
 * Exit status 0 only when none failed. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel.h"
#include "dra/dra.h"

typedef struct tally {
  int passed, failed, skipped;
  int skip_ext, skip_v3; /* skips by reason */
} tally;

/* ---- typed values from the vectors ------------------------------------------------------------
 */

static bool b64(const char *s, ts_arena *a, const char **out, size_t *n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t len = strlen(s), k = 0;
  char *o = ts_arena_alloc(a, len + 1);
  uint32_t acc = 0;
  int bits = 0;
  if (!o) return false;
  for (size_t i = 0; i < len && s[i] != '='; i++) {
    const char *p = strchr(tab, s[i]);
    if (!p) return false;
    acc = acc << 6 | (uint32_t)(p - tab);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      o[k++] = (char)(acc >> bits & 0xFF);
    }
  }
  *out = o, *n = k;
  return true;
}

static bool typed(json_t *j, ts_arena *a, cel_value *out) {
  json_t *x;
  if ((x = json_object_get(j, "int"))) {
    *out = cel_int(strtoll(json_string_value(x), NULL, 10));
  } else if ((x = json_object_get(j, "uint"))) {
    *out = cel_uint(strtoull(json_string_value(x), NULL, 10));
  } else if ((x = json_object_get(j, "double"))) {
    const char *s = json_string_value(x);
    *out = cel_double(s ? (!strcmp(s, "NaN")        ? NAN
                           : !strcmp(s, "Infinity") ? INFINITY
                                                    : -INFINITY)
                        : json_number_value(x));
  } else if ((x = json_object_get(j, "string"))) {
    *out = cel_string(json_string_value(x), json_string_length(x));
  } else if ((x = json_object_get(j, "bytes_b64"))) {
    const char *p;
    size_t n;
    if (!b64(json_string_value(x), a, &p, &n)) return false;
    *out = cel_bytes(p, n);
  } else if ((x = json_object_get(j, "bool"))) {
    *out = cel_bool(json_is_true(x));
  } else if (json_object_get(j, "null")) {
    *out = cel_null();
  } else if ((x = json_object_get(j, "list"))) {
    cel_list *l = ts_arena_alloc(a, sizeof *l);
    cel_value *v = ts_arena_alloc(a, (json_array_size(x) + 1) * sizeof *v);
    if (!l || !v) return false;
    for (size_t i = 0; i < json_array_size(x); i++)
      if (!typed(json_array_get(x, i), a, &v[i])) return false;
    l->v = v, l->n = json_array_size(x);
    *out = cel_list_value(l);
  } else if ((x = json_object_get(j, "map"))) {
    cel_map *m = ts_arena_alloc(a, sizeof *m);
    size_t n = json_array_size(x);
    cel_value *k = ts_arena_alloc(a, (n + 1) * sizeof *k),
              *v = ts_arena_alloc(a, (n + 1) * sizeof *v);
    if (!m || !k || !v) return false;
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < n; i++)
      if (!typed(json_array_get(json_array_get(x, i), 0), a, &k[i]) ||
          !typed(json_array_get(json_array_get(x, i), 1), a, &v[i]))
        return false;
    m->k = k, m->v = v, m->n = n;
    *out = cel_map_value(m);
  } else if ((x = json_object_get(j, "type"))) {
    memset(out, 0, sizeof *out);
    out->kind = CEL_TYPE;
    out->u.type = ts_intern_cstr(json_string_value(x));
  } else if ((x = json_object_get(j, "duration")) || (x = json_object_get(j, "timestamp"))) {
    /* parsed through CEL itself */
    char expr[200];
    cel_env *e = cel_env_new();
    cel_program *p = NULL;
    cel_eval_ctx *c = cel_eval_ctx_new();
    ts_err err;
    bool ok;
    snprintf(expr, sizeof expr, "%s('%s')",
             json_object_get(j, "duration") ? "duration" : "timestamp", json_string_value(x));
    ok = cel_compile(e, expr, 0, &p, &err) == TS_OK && cel_eval(p, c, NULL, 0, out, &err) == TS_OK;
    cel_program_free(p);
    cel_eval_ctx_free(c);
    cel_env_free(e);
    return ok;
  } else {
    return false;
  }
  return true;
}

/* Strict equality for results: kinds must agree (an int is not a uint), NaN equals NaN. */
static bool same(const cel_value *a, const cel_value *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case CEL_DOUBLE:
    if (isnan(a->u.d) && isnan(b->u.d)) return true;
    return a->u.d == b->u.d && signbit(a->u.d) == signbit(b->u.d);
  case CEL_LIST:
    if (a->u.l->n != b->u.l->n) return false;
    for (size_t i = 0; i < a->u.l->n; i++)
      if (!same(&a->u.l->v[i], &b->u.l->v[i])) return false;
    return true;
  case CEL_MAP:
    if (a->u.m->n != b->u.m->n) return false;
    for (size_t i = 0; i < a->u.m->n; i++) {
      cel_value v;
      if (!cel_map_find(b->u.m, &a->u.m->k[i], &v) || !same(&a->u.m->v[i], &v)) return false;
    }
    return true;
  default:
    return cel_value_equal(a, b);
  }
}

static void text(const cel_value *v, char *out, size_t cap) {
  ts_buf b;
  ts_buf_init(&b, cap - 1);
  cel_value_format(v, &b);
  snprintf(out, cap, "%.*s", (int)b.len, b.data ? b.data : "");
  ts_buf_free(&b);
}

static void fail(tally *t, const char *id, const char *expr, const char *want, const char *got) {
  t->failed++;
  printf("FAIL %s\n  expr: %s\n  want: %s\n  got:  %s\n", id, expr, want, got);
}

static void run(tally *t, json_t *r) {
  const char *id = json_string_value(json_object_get(r, "id"));
  const char *file = json_string_value(json_object_get(r, "file"));
  const char *section = json_string_value(json_object_get(r, "section"));
  const char *expr = json_string_value(json_object_get(r, "expr"));
  json_t *expect = json_object_get(r, "expect"), *x;
  bool want_error = json_is_true(json_object_get(expect, "error"));
  int flags = (json_is_true(json_object_get(r, "disable_check")) ? CEL_NO_CHECK : 0) |
              (json_is_true(json_object_get(r, "disable_macros")) ? CEL_NO_MACROS : 0);
  cel_env *env;
  cel_program *p = NULL;
  cel_eval_ctx *ctx;
  cel_binding vars[32];
  size_t nvars = 0, i;
  const char *name;
  cel_value out, want;
  ts_arena a;
  ts_err err;
  char got[2048], wanted[2048];
  if (!strcmp(file, "math_ext") || !strcmp(file, "network_ext") || !strcmp(file, "encoders_ext")) {
    t->skipped++, t->skip_ext++;
    return;
  }
  if (!strcmp(file, "string_ext") && !strcmp(section, "reverse")) {
    t->skipped++, t->skip_v3++;
    return;
  }
  env = cel_env_new();
  ctx = cel_eval_ctx_new();
  ts_arena_init(&a, 4096);
  ts_err_clear(&err);
  cel_env_container(env, json_string_value(json_object_get(r, "container")), &err);
  json_array_foreach(json_object_get(r, "type_env"), i, x) {
    if (json_object_get(x, "ident"))
      cel_env_declare(env, json_string_value(json_object_get(x, "name")),
                      json_string_value(json_object_get(x, "ident")), &err);
  }
  json_object_foreach(json_object_get(r, "bindings"), name, x) {
    if (nvars == 32) break;
    vars[nvars].name = name;
    if (json_object_get(x, "error")) {
      continue; /* an error binding: the variable stays unbound, so using it fails */
    }
    if (!typed(x, &a, &vars[nvars].value)) {
      fail(t, id, expr, "a binding the runner can build", name);
      goto out;
    }
    {
      bool declared = false;
      json_t *d;
      json_array_foreach(json_object_get(r, "type_env"), i, d)
        declared |= !strcmp(json_string_value(json_object_get(d, "name")), name);
      if (!declared) cel_env_declare(env, name, "dyn", &err);
    }
    nvars++;
  }
  if (cel_compile(env, expr, flags, &p, &err) != TS_OK) {
    if (want_error)
      t->passed++;
    else
      fail(t, id, expr, json_dumps(json_object_get(expect, "value"), JSON_COMPACT), err.text);
    goto out;
  }
  if (cel_eval(p, ctx, vars, nvars, &out, &err) != TS_OK) {
    if (want_error)
      t->passed++;
    else
      fail(t, id, expr, "a value", err.text);
    goto out;
  }
  text(&out, got, sizeof got);
  if (want_error) {
    fail(t, id, expr, "an error", got);
    goto out;
  }
  if (!typed(json_object_get(expect, "value"), &a, &want)) {
    fail(t, id, expr, "an expected value the runner can build", got);
    goto out;
  }
  if (same(&out, &want)) {
    t->passed++;
  } else {
    text(&want, wanted, sizeof wanted);
    fail(t, id, expr, wanted, got);
  }
out:
  cel_program_free(p);
  cel_eval_ctx_free(ctx);
  cel_env_free(env);
  ts_arena_free(&a);
}

int main(int argc, char **argv) {
  FILE *f;
  char *line = NULL;
  size_t cap = 0;
  tally t = {0};
  if (argc != 2) {
    fprintf(stderr, "usage: cel-conformance FILE.jsonl\n");
    return 2;
  }
  if (!(f = fopen(argv[1], "r"))) {
    perror(argv[1]);
    return 2;
  }
  while (getline(&line, &cap, f) > 0) {
    json_error_t je;
    json_t *r = json_loads(line, 0, &je);
    if (!r) continue;
    run(&t, r);
    json_decref(r);
  }
  free(line);
  fclose(f);
  printf("skipped: %d math/network/encoders extension vectors (not in Kubernetes' CEL "
         "environment), %d strings-v3 vectors (Kubernetes enables strings v2)\n",
         t.skip_ext, t.skip_v3);
  printf("%d passed, %d failed, %d skipped\n", t.passed, t.failed, t.skipped);
  return t.failed ? 1 : 0;
}
