/* Unit tests of config/: YAML to JSON conversion, JSON parsing, path loading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/input.h"
#include "config/config.h"
#include "queueing/queueing.h"

static json_t *one(const char *yaml) {
  in_docs docs = {0};
  ts_err e;
  json_t *v;
  ts_err_clear(&e);
  if (in_yaml_parse(yaml, strlen(yaml), &docs, &e) != TS_OK) fail_msg("yaml: %s", e.text);
  assert_int_equal(docs.n, 1);
  v = json_incref(docs.v[0].value);
  in_docs_free(&docs);
  return v;
}

static void test_scalars(void **state) {
  json_t *v = one("a: 1\nb: \"1\"\nc: true\nd: 'false'\ne: ~\nf: 1.5\ng: 0x1f\nh: hello\n"
                  "i: 40Gi\nj: !!str 12\nk: -7\nl: 12345678901234567890123\nm: ''\n");
  (void)state;
  assert_int_equal(json_integer_value(json_object_get(v, "a")), 1);
  assert_string_equal(json_string_value(json_object_get(v, "b")), "1");
  assert_true(json_is_true(json_object_get(v, "c")));
  assert_string_equal(json_string_value(json_object_get(v, "d")), "false");
  assert_true(json_is_null(json_object_get(v, "e")));
  assert_true(json_real_value(json_object_get(v, "f")) == 1.5);
  assert_int_equal(json_integer_value(json_object_get(v, "g")), 31);
  assert_string_equal(json_string_value(json_object_get(v, "h")), "hello");
  assert_string_equal(json_string_value(json_object_get(v, "i")), "40Gi");
  assert_string_equal(json_string_value(json_object_get(v, "j")), "12");
  assert_int_equal(json_integer_value(json_object_get(v, "k")), -7);
  assert_true(json_is_real(json_object_get(v, "l")));
  assert_string_equal(json_string_value(json_object_get(v, "m")), "");
  json_decref(v);
}

static void test_structure_and_lines(void **state) {
  const char *y = "# comment\n---\napiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata:\n"
                  "    name: a\n- kind: Pod\n  metadata: {name: b}\n---\n---\nkind: Node\n";
  in_docs docs = {0};
  ts_err e;
  (void)state;
  assert_int_equal(in_yaml_parse(y, strlen(y), &docs, &e), TS_OK);
  assert_int_equal(docs.n, 2); /* the empty document is skipped */
  assert_int_equal(docs.v[0].line, 3);
  assert_int_equal(docs.v[0].nitems, 2);
  assert_int_equal(docs.v[0].item_lines[0], 6);
  assert_int_equal(docs.v[0].item_lines[1], 9);
  assert_int_equal(docs.v[1].line, 13);
  assert_string_equal(
      json_string_value(json_object_get(
          json_object_get(json_array_get(json_object_get(docs.v[0].value, "items"), 1), "metadata"),
          "name")),
      "b");
  in_docs_free(&docs);
}

static void test_anchor_outlives_its_place(void **state) {
  /* Found by fuzzing: an anchored value that a merge key or a duplicate key drops from the
   * document must stay valid for later aliases. */
  json_t *v = one("a: &x {k: 1}\na: 2\nb: *x\n");
  (void)state;
  assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "b"), "k")), 1);
  json_decref(v);
  v = one("m:\n  <<: &y {k: 1}\nn: *y\n");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "n"), "k")), 1);
  json_decref(v);
}

static void test_anchors_merge(void **state) {
  json_t *v = one("base: &b {cpu: '1', memory: 1Gi}\nx: *b\ny:\n  <<: *b\n  cpu: '2'\n");
  (void)state;
  assert_string_equal(json_string_value(json_object_get(json_object_get(v, "x"), "memory")), "1Gi");
  assert_string_equal(json_string_value(json_object_get(json_object_get(v, "y"), "cpu")), "2");
  assert_string_equal(json_string_value(json_object_get(json_object_get(v, "y"), "memory")), "1Gi");
  json_decref(v);
}

static void expect_error(const char *yaml, int line, const char *substr) {
  in_docs docs = {0};
  ts_err e;
  ts_err_clear(&e);
  assert_int_not_equal(in_yaml_parse(yaml, strlen(yaml), &docs, &e), TS_OK);
  if (line) assert_int_equal(e.line, line);
  if (!strstr(e.text, substr)) fail_msg("error \"%s\" lacks \"%s\"", e.text, substr);
  in_docs_free(&docs);
}

static void test_errors(void **state) {
  ts_buf b;
  (void)state;
  expect_error("a: 1\nb: [1, 2\n", 0, "line");
  expect_error("a: *nope\n", 1, "unknown anchor");
  expect_error("a: b: c\n", 1, "line 1");
  expect_error("? [a]\n: 1\n", 1, "scalars");
  /* Deep nesting is refused, not a stack overflow. */
  ts_buf_init(&b, 0);
  for (int i = 0; i < 300; i++) ts_buf_puts(&b, "[");
  for (int i = 0; i < 300; i++) ts_buf_puts(&b, "]");
  expect_error(b.data, 1, "nesting too deep");
  /* More than IN_YAML_MAX_ALIASES aliases are refused even when they expand to little. */
  ts_buf_reset(&b);
  ts_buf_puts(&b, "a: &a x\nlit: [");
  for (int i = 0; i < 500; i++) ts_buf_puts(&b, "y, ");
  ts_buf_puts(&b, "y]\n");
  for (int i = 0; i < 20; i++) {
    ts_buf_printf(&b, "b%d: [*a", i);
    for (int j = 0; j < 600; j++) ts_buf_puts(&b, ", *a");
    ts_buf_puts(&b, "]\n");
  }
  expect_error(b.data, 0, "too many alias references");
  ts_buf_free(&b);
}

typedef struct seen {
  char names[16][64];
  int lines[16];
  int n, errors;
  char last_error[512];
} seen;

static ts_rc on_obj(void *ud, json_t *obj, const char *file, int line, int index) {
  seen *s = ud;
  json_t *md = json_object_get(obj, "metadata");
  (void)file, (void)index;
  snprintf(s->names[s->n], 64, "%s", json_string_value(json_object_get(md, "name")));
  s->lines[s->n++] = line;
  return TS_OK;
}

static void on_err(void *ud, const ts_err *e) {
  seen *s = ud;
  s->errors++;
  ts_strlcpy(s->last_error, e->text, sizeof s->last_error);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_load_path(void **state) {
  char dir[] = "/tmp/tessera-cfg-XXXXXX", p[256];
  seen s = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof p, "%s/b.yaml", dir);
  write_file(p, "kind: Pod\nmetadata: {name: y1}\n---\nkind: Pod\nmetadata: {name: y2}\n");
  snprintf(p, sizeof p, "%s/a.json", dir);
  write_file(p, "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"j1\"}},"
                "{\"metadata\":{\"name\":\"j2\"}}]}");
  snprintf(p, sizeof p, "%s/sub", dir);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/sub/c.yml", dir);
  write_file(p, "kind: Node\nmetadata: {name: n1}\n---\nbad: [\n");
  snprintf(p, sizeof p, "%s/notes.txt", dir);
  write_file(p, "ignored");
  assert_int_equal(in_load_path(dir, on_obj, on_err, &s), TS_OK);
  /* Sorted order: a.json, b.yaml, sub/c.yml; the broken document is an error that names the
   * file and line, and the rest still loads. */
  assert_int_equal(s.n, 5);
  assert_string_equal(s.names[0], "j1");
  assert_string_equal(s.names[1], "j2");
  assert_string_equal(s.names[2], "y1");
  assert_string_equal(s.names[3], "y2");
  assert_int_equal(s.lines[3], 4);
  assert_string_equal(s.names[4], "n1");
  assert_int_equal(s.errors, 1);
  assert_non_null(strstr(s.last_error, "sub/c.yml: line 5"));
  assert_int_equal(in_load_path("/nonexistent/x", on_obj, on_err, &s), TS_EIO);
  snprintf(p, sizeof p, "rm -rf %s", dir);
  assert_int_equal(system(p), 0);
}

/* The expanded size of a document is bounded, not only its alias count: nine levels of nine
 * aliases (387 million leaves from a few hundred bytes) are refused where they are written,
 * before anything walks them; an alias inside its own anchor is an error, not a cycle that
 * leaks and loops; ordinary reuse of anchors still works. */
static void test_alias_expansion_bounded(void **state) {
  ts_buf b;
  json_t *v;
  (void)state;
  ts_buf_init(&b, 0);
  ts_buf_puts(&b, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
  for (char l = 'b'; l <= 'i'; l++)
    ts_buf_printf(&b, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", l, l, l - 1, l - 1,
                  l - 1, l - 1, l - 1, l - 1, l - 1, l - 1, l - 1);
  expect_error(b.data, 0, "excessive aliasing");
  ts_buf_free(&b);
  expect_error("a: &a [*a]\n", 1, "alias *a is inside its own anchor (a recursive structure)");
  expect_error("a: &a {b: {c: *a}}\n", 1, "alias *a is inside its own anchor");
  v = one("base: &b {cpu: 1, mem: 2}\nx: {<<: *b, cpu: 3}\ny: [*b, *b, *b]\n");
  assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "x"), "cpu")), 3);
  assert_int_equal(json_array_size(json_object_get(v, "y")), 3);
  json_decref(v);
}

/* An invalid byte is reported where it is (libyaml gives offset, not line), and the documents
 * before the one that holds it are kept. A string over IN_STRING_MAX is an error in YAML
 * and in JSON. */
static void test_bad_bytes_and_long_strings(void **state) {
  const char *y = "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n---\n"
                  "kind: Pod\nmetadata: {name: \"c\xff\"}\n";
  in_docs docs = {0};
  ts_err e;
  char *big;
  json_t *v = NULL;
  size_t n = IN_STRING_MAX + 10;
  (void)state;
  assert_int_equal(in_yaml_parse(y, strlen(y), &docs, &e), TS_EPARSE);
  assert_string_equal(e.text, "line 8 column 20: invalid leading UTF-8 octet 0xFF");
  assert_int_equal(docs.n, 2);
  in_docs_free(&docs);
  big = malloc(n + 32);
  assert_non_null(big);
  memcpy(big, "a: ", 3);
  memset(big + 3, 'x', n);
  big[n + 3] = '\0';
  memset(&docs, 0, sizeof docs);
  assert_int_equal(in_yaml_parse(big, strlen(big), &docs, &e), TS_EPARSE);
  assert_non_null(strstr(e.text, "is longer than the limit of 4194304"));
  in_docs_free(&docs);
  big[0] = '"';
  memset(big + 1, 'x', n);
  big[n + 1] = '"', big[n + 2] = '\0';
  assert_int_equal(in_json_parse(big, strlen(big), &v, &e), TS_EPARSE);
  assert_non_null(strstr(e.text, "is longer than the limit of 4194304"));
  assert_null(v);
  free(big);
  { /* an invalid byte, then a "--" at the very end of a text that is not terminated: the
       search for the document's "---" stays within the text (found by fuzz_config) */
    char *t = malloc(5);
    assert_non_null(t);
    memcpy(t, "\xfe\xff\n--", 5);
    memset(&docs, 0, sizeof docs);
    assert_int_equal(in_yaml_parse(t, 5, &docs, &e), TS_EPARSE);
    in_docs_free(&docs);
    free(t);
  }
}

/* Links back to a directory (a -> ., b -> .) once made the walk read ~2^33 directories, and
 * one such link loaded every file 33 times: each directory and file is read once. */
static void test_load_path_links(void **state) {
  char dir[] = "/tmp/tessera-cfg-XXXXXX", p[256], q[256];
  seen s = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof p, "%s/a.yaml", dir);
  write_file(p, "kind: Pod\nmetadata: {name: once}\n");
  snprintf(p, sizeof p, "%s/a", dir);
  assert_int_equal(symlink(".", p), 0);
  snprintf(p, sizeof p, "%s/b", dir);
  assert_int_equal(symlink(".", p), 0);
  snprintf(p, sizeof p, "%s/sub", dir);
  mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/sub/up", dir);
  assert_int_equal(symlink("..", p), 0);
  snprintf(p, sizeof p, "%s/sub/same.yaml", dir);
  snprintf(q, sizeof q, "%s/a.yaml", dir);
  assert_int_equal(symlink(q, p), 0);
  assert_int_equal(in_load_path(dir, on_obj, on_err, &s), TS_OK);
  assert_int_equal(s.n, 1);
  assert_string_equal(s.names[0], "once");
  assert_int_equal(s.errors, 0);
  snprintf(p, sizeof p, "rm -rf %s", dir);
  assert_int_equal(system(p), 0);
}

static void test_json_item_lines(void **state) {
  char dir[] = "/tmp/tessera-cfg-XXXXXX", p[256];
  seen s = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof p, "%s/list.json", dir);
  write_file(p, "{\"kind\": \"List\", \"metadata\": {\"x\": [{\"items\": 1}]},\n"
                " \"items\": [\n  {\"metadata\": {\"name\": \"a\"}},\n"
                "  {\"metadata\":\n   {\"name\": \"b \\\" [ {\"}}\n]}\n");
  assert_int_equal(in_load_path(p, on_obj, on_err, &s), TS_OK);
  assert_int_equal(s.errors, 0);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.lines[0], 3);
  assert_int_equal(s.lines[1], 4);
  assert_string_equal(s.names[1], "b \" [ {");
  snprintf(p, sizeof p, "rm -rf %s", dir);
  assert_int_equal(system(p), 0);
}

/* Collects what in_json_stream passes: each object as JSON text, with line and index. */
typedef struct collected {
  char *text[8];
  int line[8], index[8], n, errors;
  char error[512];
} collected;

static ts_rc collect(void *ud, json_t *obj, const char *file, int line, int index) {
  collected *c = ud;
  (void)file;
  assert_true(c->n < 8);
  c->text[c->n] = json_dumps(obj, JSON_SORT_KEYS | JSON_COMPACT);
  c->line[c->n] = line, c->index[c->n++] = index;
  return TS_OK;
}

static void collect_error(void *ud, const ts_err *e) {
  collected *c = ud;
  c->errors++;
  ts_strlcpy(c->error, e->text, sizeof c->error);
}

static void collected_free(collected *c) {
  for (int i = 0; i < c->n; i++) free(c->text[i]);
  memset(c, 0, sizeof *c);
}

/* Duplicate keys in one object, in every form a file comes in: each is reported once, with
 * its position and TS_EEXIST (the API server warns and keeps the last value; kubectl --validate=
 * strict refuses), before the object, which holds the last value. */
static void test_duplicate_keys(void **state) {
  char dir[] = "/tmp/tessera-cfg-XXXXXX", p[256];
  collected c = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  /* YAML */
  snprintf(p, sizeof p, "%s/d.yaml", dir);
  write_file(p, "kind: Pod\nmetadata:\n  name: a\n  name: b\n---\nkind: Node\nmetadata: {name: "
                "n}\n");
  assert_int_equal(in_load_path(p, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.errors, 1);
  assert_non_null(strstr(c.error, "d.yaml: line 4 column 3: duplicate key \"name\" (the last "
                                  "value is used)"));
  assert_int_equal(c.n, 2);
  assert_string_equal(c.text[0], "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}");
  collected_free(&c);
  /* JSON read whole (not one object at the top: an array is YAML's business, so a JSON text
   * that starts with '[' goes through in_json_doc) */
  snprintf(p, sizeof p, "%s/d.json", dir);
  write_file(p, "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\",\n \"name\": \"b\", \"x\": "
                "1, \"x\": 2}}\n");
  for (size_t chunk = 1; chunk <= 64; chunk *= 4) {
    assert_int_equal(in_json_stream(p, chunk, collect, collect_error, &c), TS_OK);
    assert_int_equal(c.errors, 1);
    assert_non_null(strstr(c.error, "d.json: line 2 column 2: duplicate key \"name\" (the last "
                                    "value is used), and 1 more"));
    assert_int_equal(c.n, 1);
    collected_free(&c);
  }
  /* a List's items, in pieces, kubectl's order: each item with its own position, once */
  write_file(p, "{\"items\": [\n{\"metadata\": {\"name\": \"p\", \"name\": \"q\"}}\n],\n"
                "\"kind\": \"PodList\", \"apiVersion\": \"v1\", \"kind\": \"PodList\"}\n");
  for (size_t chunk = 1; chunk <= 1 << 20; chunk *= 4) {
    assert_int_equal(in_json_stream(p, chunk, collect, collect_error, &c), TS_OK);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.errors, 2); /* the item's "name", the List's "kind" */
    assert_string_equal(c.text[0], "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
                                   "\"name\":\"q\"}}");
    if (!strstr(c.error, "d.json: line 2 column 28: duplicate key \"name\""))
      fail_msg("%zu: %s", chunk, c.error); /* last */
    collected_free(&c);
  }
  /* none: nothing said */
  write_file(p, "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\"}}\n");
  assert_int_equal(in_load_path(p, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.errors, 0);
  collected_free(&c);
}

/* A List read in pieces: kubectl's order (items before kind and apiVersion), a typed List
 * whose items get their kind and apiVersion, strings holding brackets, quotes and escapes, a
 * number at a piece's edge. Every piece size from 1 byte gives the same objects and lines as
 * reading the file whole, and a syntax error in the third item keeps the two before it and
 * says where it is. */
static void test_json_stream(void **state) {
  char dir[] = "/tmp/tessera-cfg-XXXXXX", p[256];
  static const char *list =
      "{\n \"items\": [\n  {\"metadata\": {\"name\": \"a ] } [ {\", \"n\": 12345678}},\n"
      "  {\"metadata\": {\"name\": \"b \\\" \\\\\"}, \"spec\": {\"x\": [1, [2, {\"y\": null}]]}},\n"
      "  {\"kind\": \"Node\", \"metadata\": {\"name\": \"c\"}}\n ],\n"
      " \"kind\": \"PodList\", \"metadata\": {\"resourceVersion\": \"7\"}, \"apiVersion\": "
      "\"v1\"\n}\n";
  static const char *want[3] = {
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"n\":12345678,\"name\":"
      "\"a ] } [ {\"}}",
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
      "\"b \\\" \\\\\"},\"spec\":{\"x\":"
      "[1,[2,{\"y\":null}]]}}",
      "{\"kind\":\"Node\",\"metadata\":{\"name\":\"c\"}}"};
  collected c = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof p, "%s/list.json", dir);
  write_file(p, list);
  for (size_t chunk = 1; chunk <= 80; chunk += chunk < 8 ? 1 : 9) {
    assert_int_equal(in_json_stream(p, chunk, collect, collect_error, &c), TS_OK);
    assert_int_equal(c.errors, 0);
    assert_int_equal(c.n, 3);
    for (int i = 0; i < 3; i++) {
      assert_string_equal(c.text[i], want[i]);
      assert_int_equal(c.index[i], i);
      assert_int_equal(c.line[i], 3 + i);
    }
    collected_free(&c);
  }
  /* Items before the kind: those with a kind of their own are passed as they are read (one
   * pass over a kubectl file); from the first without one, the rest waits for the List's kind
   * and is read again, in order. Every piece size gives the same. */
  write_file(p,
             "{\"apiVersion\": \"v1\", \"items\": [\n{\"kind\": \"Node\", \"metadata\": {\"name\": "
             "\"n\"}},\n{\"metadata\": {\"name\": \"p\"}},\n{\"kind\": \"Node\", \"metadata\": "
             "{\"name\": \"m\"}}\n], \"kind\": \"PodList\"}\n");
  for (size_t chunk = 1; chunk <= 64; chunk *= 2) {
    assert_int_equal(in_json_stream(p, chunk, collect, collect_error, &c), TS_OK);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.text[0], "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}");
    assert_string_equal(c.text[1],
                        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}");
    assert_string_equal(c.text[2], "{\"kind\":\"Node\",\"metadata\":{\"name\":\"m\"}}");
    for (int i = 0; i < 3; i++) assert_int_equal(c.index[i], i), assert_int_equal(c.line[i], 2 + i);
    collected_free(&c);
  }
  /* Objects passed before the kind said the file is not a List: an error, not a re-read. */
  write_file(p, "{\"items\": [{\"kind\": \"Pod\", \"metadata\": {\"name\": \"x\"}}], \"kind\": "
                "\"Thing\"}");
  assert_int_equal(in_json_stream(p, 8, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.errors, 1);
  assert_non_null(strstr(c.error, "not a List"));
  collected_free(&c);
  /* The kind first (as the API server writes a List): items are passed as they are read. */
  write_file(p, "{\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": [{\"kind\": \"Pod\", "
                "\"metadata\": {\"name\": \"x\"}}]}");
  assert_int_equal(in_json_stream(p, 5, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.n, 1);
  assert_string_equal(c.text[0], "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}");
  collected_free(&c);
  /* A syntax error in the third item: the two before it were passed. */
  write_file(p, "{\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": [\n"
                "{\"metadata\": {\"name\": \"one\"}},\n{\"metadata\": {\"name\": \"two\"}},\n"
                "{\"metadata\": {\"name\": tree}}\n]}\n");
  assert_int_equal(in_json_stream(p, 16, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.n, 2);
  assert_int_equal(c.errors, 1);
  assert_non_null(strstr(c.error, "list.json: line 4 column 23: "));
  collected_free(&c);
  /* Truncated: the error is at the end. */
  write_file(
      p, "{\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": [\n{\"metadata\": {\"name\":");
  assert_int_equal(in_json_stream(p, 3, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.n, 0);
  assert_int_equal(c.errors, 1);
  assert_non_null(strstr(c.error, "line 2 column"));
  assert_non_null(strstr(c.error, "end of input"));
  collected_free(&c);
  /* Not a List: one object, whole; an object with a member "items" is left to the whole-file
   * reader; so is a file that is not one object. */
  write_file(p, "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"solo\"}}");
  assert_int_equal(in_json_stream(p, 4, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.n, 1);
  assert_int_equal(c.index[0], -1);
  collected_free(&c);
  write_file(p, "{\"kind\": \"Thing\", \"items\": [1, 2]}");
  assert_int_equal(in_json_stream(p, 4, collect, collect_error, &c), TS_EUNSUPPORTED);
  assert_int_equal(c.n, 0);
  write_file(p, "[{\"kind\": \"Pod\"}]");
  assert_int_equal(in_json_stream(p, 4, collect, collect_error, &c), TS_EUNSUPPORTED);
  /* Trailing text after the object is an error, as in a whole-file read. */
  write_file(p, "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"solo\"}} x");
  assert_int_equal(in_json_stream(p, 4, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.n, 0);
  assert_non_null(strstr(c.error, "end of input expected"));
  collected_free(&c);
  snprintf(p, sizeof p, "rm -rf %s", dir);
  assert_int_equal(system(p), 0);
}

/* One item larger than IN_ITEM_MAX is refused with a clear error, not read into memory
 * without bound; the item before it is passed. */
static void test_json_stream_item_cap(void **state) {
  char dir[] = "/tmp/tessera-cfg-XXXXXX", p[256];
  collected c = {0};
  FILE *f;
  char *piece = malloc(1 << 20);
  (void)state;
  assert_non_null(piece);
  memset(piece, 'x', 1 << 20);
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof p, "%s/big.json", dir);
  assert_non_null(f = fopen(p, "w"));
  fputs("{\"kind\": \"List\", \"apiVersion\": \"v1\", \"items\": [{\"metadata\": {\"name\": "
        "\"small\"}},\n{\"metadata\": {\"name\": \"big\"}, \"data\": [",
        f);
  for (int i = 0; i < 70; i++) {
    fprintf(f, "%s\"", i ? "," : "");
    fwrite(piece, 1, 1 << 20, f);
    fputc('"', f);
  }
  fputs("]}]}\n", f);
  fclose(f);
  free(piece);
  assert_int_equal(in_json_stream(p, 0, collect, collect_error, &c), TS_OK);
  assert_int_equal(c.n, 1);
  assert_int_equal(c.errors, 1);
  assert_non_null(
      strstr(c.error, "big.json: line 2 column 1: a value of more than 67108864 bytes"));
  collected_free(&c);
  snprintf(p, sizeof p, "rm -rf %s", dir);
  assert_int_equal(system(p), 0);
}

static void test_tessera_defaults_and_example(void **state) {
  cfg_tessera c;
  ts_err e;
  (void)state;
  cfg_tessera_default(&c);
  assert_string_equal(c.sched.scheduler_name, "tessera");
  assert_true(c.leader.enable);
  assert_int_equal(c.leader.lease_ms, 15000);
  assert_int_equal(c.leader.renew_ms, 10000);
  assert_int_equal(c.leader.retry_ms, 2000);
  assert_int_equal(c.api.event_interval_ms, 60000);
  assert_int_equal(c.sched.ntopology, 3);
  ts_err_clear(&e);
  if (cfg_tessera_load("examples/tessera.yaml", &c, &e) != TS_OK) fail_msg("%s", e.text);
  assert_int_equal(c.sched.queueing.devmap.n, 2);
  assert_string_equal(c.sched.queueing.devmap.v[1].device_class, "mig-3g.40gb.nvidia.com");
  assert_int_equal(c.sched.queueing.devmap.v[1].weight.mant, 5);
  assert_int_equal(c.sched.queueing.devmap.v[1].weight.scale, -1);
  assert_int_equal(c.sched.pods_ready_timeout_ns, 300 * 1000000000LL);
  assert_int_equal(c.sched.requeue_max_ns, 3600 * 1000000000LL);
  assert_ptr_equal(c.sched.topology[1], ts_intern_cstr("nvidia.com/gpu.clique"));
  assert_int_equal(c.queue_status.mode, CFG_STATUS_AUTO);
  assert_string_equal(c.queue_status.kueue_namespace, "kueue-system");
  assert_int_equal(c.queue_status.interval_ms, 5000);
  cfg_tessera_free(&c);
  cfg_tessera_default(&c);
  {
    const char *y = "queueStatus: {mode: write, kueueNamespace: kueue, interval: 250ms}\n";
    assert_int_equal(cfg_tessera_parse(y, strlen(y), &c, &e), TS_OK);
  }
  assert_int_equal(c.queue_status.mode, CFG_STATUS_WRITE);
  assert_string_equal(c.queue_status.kueue_namespace, "kueue");
  assert_int_equal(c.queue_status.interval_ms, 250);
  cfg_tessera_free(&c);
  cfg_tessera_default(&c);
  {
    const char *y = "schedulerName: gpu-sched\nscoring: spread\ntopology: {levels: [rack]}\n"
                    "api: {eventInterval: \"0\"}\nleaderElection: {enable: false}\n";
    assert_int_equal(cfg_tessera_parse(y, strlen(y), &c, &e), TS_OK);
  }
  assert_string_equal(c.sched.scheduler_name, "gpu-sched");
  assert_int_equal(c.sched.scoring, SCHED_SPREAD);
  assert_int_equal(c.sched.ntopology, 1);
  assert_int_equal(c.api.event_interval_ms, 0); /* no minimum (0 used to mean the default) */
  assert_false(c.leader.enable);
  cfg_tessera_free(&c);
  cfg_tessera_default(&c);
  { /* the FGD paper's GPU clustering, by the name tessera.yaml gives it (test_sched shows what
       it places where) */
    const char *y = "scoring: gpu-clustering\n";
    assert_int_equal(cfg_tessera_parse(y, strlen(y), &c, &e), TS_OK);
  }
  assert_int_equal(c.sched.scoring, SCHED_GPU_CLUSTERING);
  cfg_tessera_free(&c);
}

/* The effective configuration written out (tessera snapshot) parses back to itself: every
 * setting, the defaults and a file that sets everything. */
static void test_config_json_round_trip(void **state) {
  cfg_tessera a, b;
  ts_err e;
  (void)state;
  for (int i = 0; i < 2; i++) {
    json_t *ja, *jb;
    char *text;
    ts_err_clear(&e);
    cfg_tessera_default(&a);
    if (i && cfg_tessera_load("examples/tessera.yaml", &a, &e) != TS_OK) fail_msg("%s", e.text);
    if (i) { /* and settings away from the defaults */
      const char *y = "queueing: {fairSharing: {enable: true, preemptionStrategies: "
                      "[LessThanInitialShare]}, waitForPodsReady: {enable: true, timeout: 90s}}\n"
                      "leaderElection: {renewDeadline: 1500ms, retryPeriod: 200ms}\n"
                      "queueStatus: {mode: off, interval: 1m30s}\nscoring: dot-product\n"
                      "api: {eventInterval: \"0\"}\n";
      assert_int_equal(cfg_tessera_parse(y, strlen(y), &a, &e), TS_OK);
    }
    assert_non_null(ja = cfg_tessera_json(&a));
    text = json_dumps(ja, JSON_COMPACT);
    cfg_tessera_default(&b);
    if (cfg_tessera_parse(text, strlen(text), &b, &e) != TS_OK) fail_msg("%s\n%s", e.text, text);
    jb = cfg_tessera_json(&b);
    if (!json_equal(ja, jb)) fail_msg("not the same after a round trip:\n%s", text);
    if (i) {
      assert_non_null(strstr(text, "\"timeout\":\"1m30s\""));
      assert_non_null(strstr(text, "\"scoring\":\"dot-product\""));
      assert_non_null(strstr(text, "\"renewDeadline\":\"1500ms\""));
      assert_non_null(strstr(text, "\"interval\":\"1m30s\""));
      assert_non_null(strstr(text, "\"weight\":\"500m\""));
      assert_non_null(strstr(text, "\"preemptionStrategies\":[\"LessThanInitialShare\"]"));
      assert_int_equal(b.sched.pods_ready_timeout_ns, 90 * 1000000000LL);
      assert_int_equal(b.queue_status.mode, CFG_STATUS_OFF);
      assert_int_equal(b.leader.renew_ms, 1500);
    }
    free(text);
    json_decref(ja);
    json_decref(jb);
    cfg_tessera_free(&a);
    cfg_tessera_free(&b);
  }
}

static void bad_config(const char *yaml, const char *want) {
  cfg_tessera c;
  ts_err e;
  cfg_tessera_default(&c);
  ts_err_clear(&e);
  if (cfg_tessera_parse(yaml, strlen(yaml), &c, &e) == TS_OK) fail_msg("accepted: %s", yaml);
  cfg_tessera_free(&c);
  if (strcmp(e.text, want) != 0) fail_msg("error\n  got:  %s\n  want: %s", e.text, want);
}

/* fairSharing.preemptionStrategies reaches the cycle, in order (it was parsed and ignored). */
static void test_fair_sharing_strategies(void **state) {
  cfg_tessera t;
  ts_err e;
  const char *y = "queueing: {fairSharing: {enable: true, preemptionStrategies: "
                  "[LessThanInitialShare]}}\n";
  (void)state;
  cfg_tessera_default(&t);
  assert_int_equal(t.sched.queueing.nfs_strategies, 2);
  assert_int_equal(cfg_tessera_parse(y, strlen(y), &t, &e), TS_OK);
  assert_true(t.sched.queueing.fair_sharing);
  assert_int_equal(t.sched.queueing.nfs_strategies, 1);
  assert_int_equal(t.sched.queueing.fs_strategies[0], Q_FS_LESS_THAN_INITIAL_SHARE);
  cfg_tessera_free(&t);
}

/* queueing.admission: who admits (tessera by default, or Kueue's controller), round-tripped
 * through the effective configuration that `tessera snapshot` records. */
static void test_admission_mode(void **state) {
  cfg_tessera t, back;
  ts_err e;
  const char *y = "queueing: {admission: kueue}\n";
  char *text;
  json_t *j;
  (void)state;
  cfg_tessera_default(&t);
  assert_false(t.sched.kueue_admits);
  assert_int_equal(cfg_tessera_parse(y, strlen(y), &t, &e), TS_OK);
  assert_true(t.sched.kueue_admits);
  j = cfg_tessera_json(&t);
  text = json_dumps(j, JSON_COMPACT);
  assert_non_null(strstr(text, "\"admission\":\"kueue\""));
  cfg_tessera_default(&back);
  assert_int_equal(cfg_tessera_parse(text, strlen(text), &back, &e), TS_OK);
  assert_true(back.sched.kueue_admits);
  free(text);
  json_decref(j);
  cfg_tessera_free(&t);
  cfg_tessera_free(&back);
  bad_config("queueing: {admission: both}\n",
             "tessera.yaml: queueing.admission: supported values: \"tessera\", \"kueue\"");
}

/* Endpoint addresses as `run` listens on them: IPv4, IPv6 in brackets, every interface. */
/* leaderElection.leaseNamespace: "" (the default) is Tessera's own namespace ($POD_NAMESPACE,
 * which the chart sets), a name is that namespace, and outside a pod it stays kube-system. */
static void test_lease_namespace(void **state) {
  static const char empty[] = "leaderElection: {leaseNamespace: \"\"}\n",
                    named[] = "leaderElection: {leaseNamespace: locks}\n";
  cfg_tessera c;
  ts_err e;
  char ns[64];
  (void)state;
  cfg_tessera_default(&c);
  assert_string_equal(c.leader.ns, "");
  ts_err_clear(&e);
  assert_int_equal(cfg_tessera_parse(empty, strlen(empty), &c, &e), TS_OK);
  assert_string_equal(c.leader.ns, "");
  setenv("POD_NAMESPACE", "team-sched", 1);
  kc_leader_namespace(&c.leader, ns, sizeof ns);
  assert_string_equal(ns, "team-sched");
  unsetenv("POD_NAMESPACE");
  kc_leader_namespace(&c.leader, ns, sizeof ns);
  if (access("/var/run/secrets/kubernetes.io/serviceaccount/namespace", R_OK))
    assert_string_equal(ns, "kube-system"); /* not in a pod */
  setenv("POD_NAMESPACE", "team-sched", 1);
  assert_int_equal(cfg_tessera_parse(named, strlen(named), &c, &e), TS_OK);
  kc_leader_namespace(&c.leader, ns, sizeof ns);
  assert_string_equal(ns, "locks"); /* named: that one, wherever Tessera runs */
  unsetenv("POD_NAMESPACE");
  cfg_tessera_free(&c);
}

static void test_addresses(void **state) {
  char host[CFG_ADDRESS_MAX];
  int port = 0;
  ts_err e;
  const char *y = "healthAddress: \"[::1]:10259\"\nmetricsAddress: \":9090\"\n";
  cfg_tessera t;
  (void)state;
  assert_int_equal(cfg_address_split("[::1]:10259", host, sizeof host, &port, &e), TS_OK);
  assert_string_equal(host, "::1");
  assert_int_equal(port, 10259);
  assert_int_equal(cfg_address_split("127.0.0.1:1", host, sizeof host, &port, &e), TS_OK);
  assert_string_equal(host, "127.0.0.1");
  assert_int_equal(cfg_address_split(":9090", host, sizeof host, &port, &e), TS_OK);
  assert_string_equal(host, "0.0.0.0");
  assert_int_equal(port, 9090);
  assert_int_equal(cfg_address_split("[fe80::1%eth0]:1", host, sizeof host, &port, &e), TS_EINVAL);
  cfg_tessera_default(&t);
  assert_int_equal(cfg_tessera_parse(y, strlen(y), &t, &e), TS_OK);
  assert_false(t.metrics_secure); /* plain HTTP unless asked */
  cfg_tessera_free(&t);
  { /* metricsSecure and its certificate directory, and back through the effective config */
    const char *sec = "metricsSecure: true\nmetricsCertDir: /etc/tessera/metrics-tls\n";
    json_t *j;
    char *text;
    cfg_tessera_default(&t);
    assert_int_equal(cfg_tessera_parse(sec, strlen(sec), &t, &e), TS_OK);
    assert_true(t.metrics_secure);
    assert_string_equal(t.metrics_cert_dir, "/etc/tessera/metrics-tls");
    j = cfg_tessera_json(&t);
    assert_true(json_is_true(json_object_get(j, "metricsSecure")));
    text = json_dumps(j, 0);
    cfg_tessera_free(&t);
    cfg_tessera_default(&t);
    assert_int_equal(cfg_tessera_parse(text, strlen(text), &t, &e), TS_OK);
    assert_string_equal(t.metrics_cert_dir, "/etc/tessera/metrics-tls");
    free(text), json_decref(j);
    cfg_tessera_free(&t);
    cfg_tessera_default(&t); /* no directory: left out, and read back as none */
    j = cfg_tessera_json(&t);
    assert_null(json_object_get(j, "metricsCertDir"));
    json_decref(j);
    cfg_tessera_free(&t);
  }
}

static void test_tessera_errors(void **state) {
  int64_t ms;
  (void)state;
  bad_config("schedulerNmae: x\n", "tessera.yaml: schedulerNmae: unknown field");
  bad_config("scoring: best\n", "tessera.yaml: scoring: supported values: \"binpack\", \"spread\", "
                                "\"first-fit\", \"best-fit\", \"dot-product\", \"gpu-packing\", "
                                "\"fgd\", \"random\", \"gpu-clustering\"");
  bad_config("leaderElection: {renewDeadline: 20s}\n",
             "tessera.yaml: leaderElection.renewDeadline: must be less than leaseDuration");
  bad_config("leaderElection: {leaseDuration: 15}\n",
             "tessera.yaml: leaderElection.leaseDuration: must be a duration such as \"15s\", "
             "\"500ms\" or \"1m30s\"");
  bad_config("leaderElection: {enable: yes}\n",
             "tessera.yaml: leaderElection.enable: must be true or false");
  bad_config("queueing: {fairSharing: {preemptionStrategies: [Sometimes]}}\n",
             "tessera.yaml: queueing.fairSharing.preemptionStrategies: entry 0: supported values: "
             "\"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\"");
  bad_config("queueing: {fairSharing: {preemptionStrategies: [LessThanInitialShare, "
             "LessThanOrEqualToFinalShare]}}\n",
             "tessera.yaml: queueing.fairSharing.preemptionStrategies: Unsupported value: "
             "supported values: \"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\", "
             "\"LessThanOrEqualToFinalShare,LessThanInitialShare\"");
  bad_config(
      "queueing:\n  deviceClassMappings:\n  - {deviceClassName: a, resource: r, weight: -1}\n",
      "tessera.yaml: queueing.deviceClassMappings[0].weight: must be a positive quantity "
      "such as \"1\" or \"143m\"");
  bad_config("queueing:\n  deviceClassMappings:\n  - {deviceClassName: a}\n",
             "tessera.yaml: queueing.deviceClassMappings[0].resource: is required");
  bad_config("topology: {levels: [a, b, a]}\n",
             "tessera.yaml: topology.levels: \"a\" is listed twice");
  bad_config("metricsSecure: \"yes\"\n", "tessera.yaml: metricsSecure: must be true or false");
  bad_config("metricsCertDir: /etc/tls\n",
             "tessera.yaml: metricsCertDir: is used only with metricsSecure: true");
  bad_config("healthAddress: localhost\n",
             "tessera.yaml: healthAddress: must be HOST:PORT with a port from 1 to 65535, not "
             "\"localhost\"");
  bad_config("healthAddress: localhost:10259\n",
             "tessera.yaml: healthAddress: the host must be an IP address (0.0.0.0, [::]), not "
             "\"localhost\"");
  bad_config("healthAddress: \"::1:10259\"\n",
             "tessera.yaml: healthAddress: an IPv6 address goes in brackets ([::1]:10259), not "
             "\"::1:10259\"");
  bad_config("apiVersion: kubescheduler.config.k8s.io/v1\n",
             "tessera.yaml: apiVersion: must be \"tessera.dev/v1alpha1\", not "
             "\"kubescheduler.config.k8s.io/v1\"");
  bad_config("kind: KubeSchedulerConfiguration\n",
             "tessera.yaml: kind: must be \"SchedulerConfiguration\", not "
             "\"KubeSchedulerConfiguration\"");
  bad_config(
      "leaderElection: {leaseName: Tessera_Lease}\n",
      "tessera.yaml: leaderElection.leaseName: Invalid value: \"Tessera_Lease\": a lowercase "
      "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
      "and must start and end with an alphanumeric character (e.g. 'example.com', regex "
      "used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  bad_config("leaderElection: {leaseNamespace: kube.system}\n",
             "tessera.yaml: leaderElection.leaseNamespace: Invalid value: \"kube.system\": must "
             "not contain dots");
  bad_config("queueStatus: {mode: sometimes}\n",
             "tessera.yaml: queueStatus.mode: supported values: \"auto\", \"write\", \"off\"");
  bad_config("queueStatus: {kueueNamespace: Kueue}\n",
             "tessera.yaml: queueStatus.kueueNamespace: Invalid value: \"Kueue\": a lowercase "
             "RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
             "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  bad_config("queueStatus: {interval: soon}\n",
             "tessera.yaml: queueStatus.interval: must be a duration such as \"15s\", \"500ms\" "
             "or \"1m30s\"");
  bad_config("queueStatus: {every: 1s}\n", "tessera.yaml: queueStatus.every: unknown field");
  bad_config("[1, 2]\n", "tessera.yaml: : must be a mapping of settings");
  bad_config("a: [\n", "tessera.yaml: line 2 column 1: did not find expected node content");
  assert_int_equal(ts_duration_parse("1h30m", &ms), TS_OK);
  assert_int_equal(ms, 5400000);
  assert_int_equal(ts_duration_parse("1.5s", &ms), TS_OK);
  assert_int_equal(ms, 1500);
  assert_int_equal(ts_duration_parse("250ms", &ms), TS_OK);
  assert_int_equal(ms, 250);
  assert_int_equal(ts_duration_parse("5", &ms), TS_EINVAL);
  assert_int_equal(ts_duration_parse("5d", &ms), TS_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scalars),
      cmocka_unit_test(test_structure_and_lines),
      cmocka_unit_test(test_anchors_merge),
      cmocka_unit_test(test_anchor_outlives_its_place),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_load_path),
      cmocka_unit_test(test_json_item_lines),
      cmocka_unit_test(test_json_stream),
      cmocka_unit_test(test_duplicate_keys),
      cmocka_unit_test(test_json_stream_item_cap),
      cmocka_unit_test(test_tessera_defaults_and_example),
      cmocka_unit_test(test_tessera_errors),
      cmocka_unit_test(test_fair_sharing_strategies),
      cmocka_unit_test(test_admission_mode),
      cmocka_unit_test(test_lease_namespace),
      cmocka_unit_test(test_config_json_round_trip),
      cmocka_unit_test(test_addresses),
      cmocka_unit_test(test_alias_expansion_bounded),
      cmocka_unit_test(test_bad_bytes_and_long_strings),
      cmocka_unit_test(test_load_path_links),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
