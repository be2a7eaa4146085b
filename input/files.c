/* input/files.c - loading snapshot files and directories into objects. */
#include "input/in_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

ts_rc in_read_file(const char *path, char **out, size_t *len, ts_err *err) {
  FILE *f = fopen(path, "rb");
  ts_buf b;
  char chunk[65536];
  size_t n;
  ts_rc rc = TS_OK;
  struct stat st;
  if (!f) return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno));
  if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
    fclose(f);
    return ts_err_set(err, TS_EIO, "%s: is a directory", path);
  }
  ts_buf_init(&b, IN_FILE_MAX);
  while (rc == TS_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
    rc = ts_buf_append(&b, chunk, n);
  if (rc == TS_OK && ferror(f))
    rc = ts_err_set(err, TS_EIO, "%s: read error", path);
  else if (rc == TS_ELIMIT)
    ts_err_set(err, rc, "%s: larger than %d bytes", path, IN_FILE_MAX);
  else if (rc != TS_OK)
    ts_err_set(err, rc, "%s: %s", path, ts_strerror(rc));
  fclose(f);
  if (rc != TS_OK) {
    ts_buf_free(&b);
    return rc;
  }
  *len = b.len;
  *out = b.len ? ts_buf_steal(&b) : ts_strdup(""); /* an empty file is empty text */
  return *out ? TS_OK : ts_err_set(err, TS_ENOMEM, "out of memory");
}

static bool has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), k = strlen(suf);
  return n >= k && !strcmp(s + n - k, suf);
}

static bool looks_like_json(const char *path, const char *text) {
  if (has_suffix(path, ".json")) return true;
  if (has_suffix(path, ".yaml") || has_suffix(path, ".yml")) return false;
  while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n') text++;
  return *text == '{' || *text == '[';
}

/* Passes a document to fn: each item of a List, or the object itself. */
static ts_rc emit_doc(const in_doc *d, const char *file, in_object_fn fn, void *ud) {
  json_t *kind = json_object_get(d->value, "kind");
  json_t *items = json_object_get(d->value, "items");
  const char *k = json_string_value(kind);
  if (k && has_suffix(k, "List") && (json_is_array(items) || json_is_null(items))) {
    size_t i;
    json_t *item, *api = json_object_get(d->value, "apiVersion");
    json_array_foreach(items, i, item) {
      int line = i < d->nitems ? d->item_lines[i] : 0;
      ts_rc rc;
      /* Items of built-in List kinds (PodList, ...) omit kind and apiVersion. */
      if (json_is_object(item) && !json_object_get(item, "kind") && strcmp(k, "List") != 0) {
        json_object_set_new(item, "kind", json_stringn(k, strlen(k) - 4));
        if (api && !json_object_get(item, "apiVersion")) json_object_set(item, "apiVersion", api);
      }
      rc = fn(ud, item, file, line, (int)i);
      if (rc != TS_OK) return rc;
    }
    return TS_OK;
  }
  return fn(ud, d->value, file, d->line, -1);
}

/* Lines where the elements of the top-level "items" array start, for a JSON text that
 * jansson already parsed (so it is valid JSON): a scan that tracks strings and depth. */
static void json_item_lines(const char *t, size_t len, in_doc *d) {
  size_t cap = 0, i;
  int depth = 0, line = 1, key_depth = -1;
  bool in_items = false, want_value = false;
  for (i = 0; i < len; i++) {
    char c = t[i];
    if (c == '\n') {
      line++;
    } else if (c == '"') {
      size_t start = ++i;
      while (i < len && t[i] != '"') i += t[i] == '\\' ? 2 : 1;
      if (depth == 1 && i - start == 5 && !memcmp(t + start, "items", 5)) key_depth = 1;
    } else if (c == ':' && key_depth == 1 && depth == 1) {
      want_value = true, key_depth = -1;
    } else if (c == '[' || c == '{') {
      if (in_items && depth == 2 && c == '{') {
        if (d->nitems == cap) {
          size_t ncap = cap ? cap * 2 : 256;
          int *n = ts_realloc(d->item_lines, ncap * sizeof *n);
          if (!n) return;
          d->item_lines = n, cap = ncap;
        }
        d->item_lines[d->nitems++] = line;
      }
      if (want_value && c == '[') in_items = true;
      want_value = false;
      depth++;
    } else if (c == ']' || c == '}') {
      if (--depth == 1) in_items = false;
    } else if (c == ',' && depth == 1) {
      want_value = false;
    }
  }
}

/* Loads one file; syntax errors go to on_error and do not stop the walk. */
static ts_rc load_file(const char *path, in_object_fn fn, in_error_fn on_error, void *ud) {
  char *text = NULL;
  size_t len = 0;
  in_docs docs = {0};
  ts_err err;
  ts_rc rc;
  ts_err_clear(&err);
  if (!has_suffix(path, ".json") && !has_suffix(path, ".yaml") && !has_suffix(path, ".yml") &&
      in_is_zip(path)) /* KAI's snapshot (snapshot.zip, or .gzip as its docs name it) */
    return in_kai_snapshot(path, fn, on_error, ud);
  if (!has_suffix(path, ".yaml") && !has_suffix(path, ".yml")) { /* JSON: read in pieces */
    rc = in_json_stream(path, 0, fn, on_error, ud);
    if (rc != TS_EUNSUPPORTED) return rc;
  }
  rc = in_read_file(path, &text, &len, &err);
  if (rc == TS_OK) {
    bool json = looks_like_json(path, text);
    rc = json ? in_json_doc(text, len, &docs, &err) : in_yaml_parse(text, len, &docs, &err);
    if (rc == TS_OK && json && docs.n == 1) json_item_lines(text, len, &docs.v[0]);
    if (rc != TS_OK) ts_err_prefix(&err, "%s", path);
  }
  /* Documents before a syntax error in a YAML stream still load. */
  for (size_t i = 0; i < docs.n; i++) {
    ts_rc frc;
    if (docs.v[i].dup.n && on_error) { /* the API server's warning; strict callers refuse */
      ts_err w;
      char said[300];
      in_dup_text(&docs.v[i].dup, said, sizeof said);
      ts_err_set(&w, TS_EEXIST, "%s: %s", path, said);
      w.line = docs.v[i].dup.line, w.column = docs.v[i].dup.col;
      on_error(ud, &w);
    }
    frc = emit_doc(&docs.v[i], path, fn, ud);
    if (frc != TS_OK) {
      in_docs_free(&docs);
      ts_free(text);
      return frc;
    }
  }
  if (rc != TS_OK && on_error) on_error(ud, &err);
  in_docs_free(&docs);
  ts_free(text);
  return TS_OK;
}

static int name_cmp(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Directories and files already read, by device and inode: links back to a directory (a -> .)
 * would otherwise walk it again and again, and a link to a file would load it twice. */
typedef struct walk {
  in_object_fn fn;      /* the caller's */
  in_error_fn on_error; /* the caller's */
  void *ud;             /* for both */
  ts_map seen;          /* "dev:ino" (owned) -> itself */
} walk;

/* True the first time st's file is met. */
static bool first_visit(walk *w, const struct stat *st) {
  char key[48], *copy;
  int n = snprintf(key, sizeof key, "%llx:%llx", (unsigned long long)st->st_dev,
                   (unsigned long long)st->st_ino);
  if (ts_map_get(&w->seen, key, (size_t)n)) return false;
  if ((copy = ts_strdup(key)) && ts_map_put(&w->seen, copy, (size_t)n, copy, NULL) != TS_OK)
    ts_free(copy);
  return true;
}

static ts_rc load_dir(walk *w, const char *path, int depth) {
  struct dirent **ents = NULL;
  int n = scandir(path, &ents, NULL, name_cmp);
  ts_rc rc = TS_OK;
  if (n < 0) {
    ts_err err;
    ts_err_set(&err, TS_EIO, "%s: %s", path, strerror(errno));
    if (w->on_error) w->on_error(w->ud, &err);
    return TS_OK;
  }
  for (int i = 0; i < n; i++) {
    const char *name = ents[i]->d_name;
    char child[4096];
    struct stat st;
    if (rc != TS_OK || name[0] == '.') continue;
    if ((size_t)snprintf(child, sizeof child, "%s/%s", path, name) >= sizeof child) continue;
    if (stat(child, &st) != 0) continue;
    if (S_ISDIR(st.st_mode) && depth < 32 && first_visit(w, &st))
      rc = load_dir(w, child, depth + 1);
    else if (S_ISREG(st.st_mode) &&
             (has_suffix(name, ".json") || has_suffix(name, ".yaml") || has_suffix(name, ".yml")) &&
             first_visit(w, &st))
      rc = load_file(child, w->fn, w->on_error, w->ud);
  }
  for (int i = 0; i < n; i++) free(ents[i]);
  free(ents);
  return rc;
}

ts_rc in_load_path(const char *path, in_object_fn fn, in_error_fn on_error, void *ud) {
  struct stat st;
  walk w = {fn, on_error, ud, {0}};
  size_t it = 0;
  const ts_map_slot *slot;
  ts_rc rc;
  if (stat(path, &st) != 0) {
    ts_err err;
    ts_err_set(&err, TS_EIO, "%s: %s", path, strerror(errno));
    if (on_error) on_error(ud, &err);
    return TS_EIO;
  }
  if (!S_ISDIR(st.st_mode)) return load_file(path, fn, on_error, ud);
  ts_map_init(&w.seen);
  first_visit(&w, &st);
  rc = load_dir(&w, path, 0);
  while (ts_map_next(&w.seen, &it, &slot)) ts_free(slot->value);
  ts_map_free(&w.seen);
  return rc;
}
