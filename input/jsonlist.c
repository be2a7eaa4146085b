/* input/jsonlist.c - a JSON object file read in pieces.
 *
 * `kubectl get -A -o json` writes one List of every object; a cluster's is hundreds of MB.
 * Parsed whole it becomes a tree several times the file, before anything is decoded. Here the
 * file is read through a buffer, the top-level object's members are parsed one by one, and
 * each element of "items" is parsed by itself where it lies in the buffer
 * (in_json_parse_prefix finds its end; errors keep their position in the file) and passed on.
 * kubectl puts "items" before "kind": items that carry their own kind (kubectl's always do)
 * are passed at once; from the first that does not, the rest is skipped by a scan and read
 * again from there once the kind is known. Memory: the buffer (grown to the largest item) and
 * one item's tree. */
#include "input/in_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CHUNK ((size_t)1 << 20)

typedef struct src {
  FILE *f;            /* the file */
  const char *path;   /* for messages */
  char *buf;          /* bytes read and not consumed: buf[lo..hi) */
  size_t cap, lo, hi; /* capacity, window */
  size_t chunk;       /* bytes read at a time */
  long long base;     /* file offset of buf[0] */
  bool eof;           /* the file has no more bytes */
  int line, col;      /* position of buf[lo] */
  ts_err *err;        /* where problems go */
  bool mem;           /* a buffer in memory, not a file: its items are always passed on */
  in_error_fn warn;   /* duplicate keys go here (TS_EEXIST), or nowhere when NULL */
  void *warn_ud;      /* for warn */
} src;

/* Reports the duplicate keys of a value just read (see in_error_fn). */
static void warn_dups(const src *s, const in_dup *d) {
  ts_err w;
  char text[300];
  if (!d->n || !s->warn) return;
  in_dup_text(d, text, sizeof text);
  ts_err_set(&w, TS_EEXIST, "%s: %s", s->path, text);
  w.line = d->line, w.column = d->col;
  s->warn(s->warn_ud, &w);
}

/* Reads more bytes, keeping buf[lo..hi). False at the end of the file or on an error (err). */
static bool fill(src *s) {
  size_t n;
  if (s->eof || s->mem) return false;
  if (s->lo) { /* slide the window to the front */
    memmove(s->buf, s->buf + s->lo, s->hi - s->lo);
    s->base += (long long)s->lo;
    s->hi -= s->lo, s->lo = 0;
  }
  if (s->cap - s->hi < s->chunk) {
    size_t ncap = s->cap ? s->cap * 2 : s->chunk + 1;
    char *nb;
    while (ncap - s->hi < s->chunk) ncap *= 2;
    if (ncap > IN_ITEM_MAX + s->chunk + 1) {
      ts_err_set(s->err, TS_ELIMIT, "line %d column %d: a value of more than %d bytes", s->line,
                 s->col, IN_ITEM_MAX);
      return false;
    }
    if (!(nb = realloc(s->buf, ncap))) {
      ts_err_set(s->err, TS_ENOMEM, "out of memory");
      return false;
    }
    s->buf = nb, s->cap = ncap;
  }
  n = fread(s->buf + s->hi, 1, s->chunk, s->f);
  s->hi += n;
  if (n < s->chunk) {
    s->eof = true;
    if (ferror(s->f)) {
      ts_err_set(s->err, TS_EIO, "read error: %s", strerror(errno));
      return false;
    }
  }
  return n > 0;
}

/* The byte at buf[lo + at], reading more when needed; -1 at the end of the file. */
static int peek_at(src *s, size_t at) {
  while (s->lo + at >= s->hi)
    if (!fill(s)) return -1;
  return (unsigned char)s->buf[s->lo + at];
}

/* Consumes n bytes (already in the buffer), keeping the position. */
static void advance(src *s, size_t n) {
  const char *p = s->buf + s->lo, *end = p + n, *nl, *last = NULL;
  while ((nl = memchr(p, '\n', (size_t)(end - p)))) s->line++, last = nl, p = nl + 1;
  s->col = last ? (int)(end - last) : s->col + (int)n;
  s->lo += n;
}

static int skip_ws(src *s) {
  int c;
  while ((c = peek_at(s, 0)) == ' ' || c == '\n' || c == '\r' || c == '\t') advance(s, 1);
  return c;
}

/* Length of the JSON value at buf[lo], found by a scan (strings, escapes, nesting), reading
 * more as needed. What the scan accepts may still be invalid JSON: the parse says. At the end
 * of the file, the length of what there is (the parse reports the truncation). 0 when a read
 * failed or the value is too long (err set). */
static size_t value_len(src *s) {
  /* 1: matters outside strings ("{}[]), 2: matters inside strings (" and \) */
  static const unsigned char stop[256] = {
      ['"'] = 3, ['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1, ['\\'] = 2};
  int c = peek_at(s, 0), depth = 0;
  bool container = c == '{' || c == '[', string = c == '"', in_str = false;
  size_t i = 0;
  if (c < 0) return 0;
  for (;;) {
    const unsigned char *p = (const unsigned char *)s->buf + s->lo; /* the window moves */
    size_t avail = s->hi - s->lo;
    while (i < avail) {
      unsigned char ch;
      if (in_str) {
        while (i < avail && !(stop[p[i]] & 2)) i++;
        if (i >= avail) break;
        if ((ch = p[i]) == '\\') {
          i += 2;
          continue;
        }
        i++, in_str = false;
        if (string) return i;
      } else if (string || container) {
        while (i < avail && !(stop[p[i]] & 1)) i++;
        if (i >= avail) break;
        ch = p[i++];
        if (ch == '"')
          in_str = true;
        else if (ch == '{' || ch == '[')
          depth++;
        else if (--depth == 0)
          return i;
      } else { /* a number or a literal: up to a delimiter */
        if (strchr(",]} \t\r\n", p[i])) return i;
        i++;
      }
    }
    if (!fill(s)) return s->err->code == TS_OK ? s->hi - s->lo : 0;
  }
}

/* A syntax error at the current position. */
static ts_rc syntax(src *s, const char *what) {
  ts_err_set(s->err, TS_EPARSE, "line %d column %d: %s", s->line, s->col, what);
  s->err->line = s->line, s->err->column = s->col;
  return TS_EPARSE;
}

/* Parses the value at the current position and consumes it. The parse itself finds the end
 * (no scan first): a value cut by the end of the buffer is parsed again once the buffer holds
 * at least twice as much (so a value costs at most about three parses of itself). */
static ts_rc take_value(src *s, json_t **out, in_dup *dup) {
  *out = NULL;
  for (;;) {
    in_json_pos pos = {s->line, s->col, 0};
    size_t avail = s->hi - s->lo, want;
    ts_rc rc = in_json_parse_prefix(s->buf + s->lo, avail, !s->eof && !s->mem, &pos, out, s->err);
    if (rc == TS_OK) {
      s->lo += pos.used, s->line = pos.line, s->col = pos.col;
      if (dup) *dup = pos.dup;
      return TS_OK;
    }
    if (rc != TS_EAGAIN) return rc;
    want = avail + (avail > s->chunk ? avail : s->chunk);
    while (s->hi - s->lo < want && fill(s)) {
    }
    if (s->err->code != TS_OK) return s->err->code;
  }
}

static ts_rc expect(src *s, char want, const char *what) {
  int c = skip_ws(s);
  if (c == want) {
    advance(s, 1);
    return TS_OK;
  }
  if (s->err->code != TS_OK) return s->err->code;
  return syntax(s, c < 0 ? "unexpected end of input" : what);
}

typedef struct list_ctx {
  const char *kind; /* the List's kind ("PodList"), borrowed from top; NULL while unknown */
  json_t *api;      /* its apiVersion, or NULL */
  in_object_fn fn;  /* the caller's */
  void *ud;         /* for fn */
  bool pass;        /* false: only skip the items */
  /* While the kind is unknown (kubectl writes "items" before "kind"), items that carry their
   * own kind are passed at once; at the first that does not, the rest is skipped and read
   * again from here once the kind is known. */
  bool resume;   /* a resume point was set */
  long long off; /* its file offset */
  int line, col; /* its position */
  int index;     /* its index */
  int passed;    /* items passed so far */
} list_ctx;

/* The items array at the current position ('[', or the item at l->index after a seek): each
 * element cut out, parsed and passed on (or skipped). Stops at the first problem, with err
 * set. */
static ts_rc items(src *s, list_ctx *l, ts_rc *stop, bool from_item) {
  int index = from_item ? l->index : 0, c;
  ts_rc rc;
  if (!from_item) {
    if ((rc = expect(s, '[', "'[' expected")) != TS_OK) return rc;
    if ((c = skip_ws(s)) == ']') {
      advance(s, 1);
      return TS_OK;
    }
  }
  for (;; index++) {
    json_t *item;
    in_dup dup;
    int line;
    skip_ws(s);
    line = s->line;
    if (!l->pass) {
      size_t n = value_len(s);
      if (!n) return s->err->code != TS_OK ? s->err->code : expect(s, '{', "an item was expected");
      advance(s, n);
    } else {
      long long off = s->base + (long long)s->lo;
      int col = s->col;
      if ((rc = take_value(s, &item, &dup)) != TS_OK) return rc;
      /* Items of built-in List kinds (PodList, ...) omit kind and apiVersion. */
      if (!l->kind && (!json_is_object(item) || !json_object_get(item, "kind"))) {
        json_decref(item); /* its kind comes after the items: skip the rest, come back here */
        l->resume = true, l->off = off, l->line = line, l->col = col, l->index = index;
        l->pass = false;
        item = NULL;
      }
      if (item && json_is_object(item) && !json_object_get(item, "kind") &&
          strcmp(l->kind, "List") != 0) {
        json_object_set_new(item, "kind", json_stringn(l->kind, strlen(l->kind) - 4));
        if (l->api && !json_object_get(item, "apiVersion"))
          json_object_set(item, "apiVersion", l->api);
      }
      if (item) { /* (one read again later says it then) */
        warn_dups(s, &dup);
        rc = l->fn(l->ud, item, s->path, line, index);
        json_decref(item);
        l->passed++;
        if (rc != TS_OK) return *stop = rc;
      }
    }
    if ((c = skip_ws(s)) == ']') {
      advance(s, 1);
      return TS_OK;
    }
    if ((rc = expect(s, ',', "',' or ']' expected after an item")) != TS_OK) return rc;
  }
}

static bool has_list_suffix(const char *k) {
  size_t n = k ? strlen(k) : 0;
  return n >= 4 && !strcmp(k + n - 4, "List");
}

/* Goes back to a position met earlier (the items of a List whose kind came after them). */
static bool seek(src *s, long long off, int line, int col) {
  if (off >= s->base && off <= s->base + (long long)s->hi) { /* still in the buffer */
    s->lo = (size_t)(off - s->base);
  } else {
    if (fseeko(s->f, (off_t)off, SEEK_SET) != 0) {
      ts_err_set(s->err, TS_EIO, "seek: %s", strerror(errno));
      return false;
    }
    s->base = off, s->lo = s->hi = 0, s->eof = false;
  }
  s->line = line, s->col = col;
  return true;
}

/* The top-level object, member by member. *single receives it when it is not a List. */
static ts_rc top_object(src *s, in_object_fn fn, void *ud, ts_rc *stop, json_t **single,
                        int *top_line) {
  json_t *top = json_object();
  long long items_off = -1;
  int c;
  bool items_done = false;
  list_ctx l = {NULL, NULL, fn, ud, true};
  ts_rc rc = TS_OK;
  if (!top) return ts_err_set(s->err, TS_ENOMEM, "out of memory");
  *top_line = s->line;
  advance(s, 1); /* { */
  if ((c = skip_ws(s)) == '}') advance(s, 1);
  while (c != '}') {
    json_t *key = NULL, *v = NULL;
    in_dup dup;
    int key_line, key_col;
    if (skip_ws(s) != '"') {
      rc = expect(s, '"', "a member name was expected");
      break;
    }
    key_line = s->line, key_col = s->col;
    if ((rc = take_value(s, &key, NULL)) != TS_OK ||
        (rc = expect(s, ':', "':' expected")) != TS_OK) {
      json_decref(key);
      break;
    }
    if (!strcmp(json_string_value(key), "items") && skip_ws(s) == '[') {
      const char *k = json_string_value(json_object_get(top, "kind"));
      l.kind = k, l.api = json_object_get(top, "apiVersion");
      items_off = s->base + (long long)s->lo;
      /* Pass the items at once when the kind (and apiVersion, for a typed List) is known, or
       * when the caller knows what they are (a page of a list in memory); else those that
       * carry their own kind (see list_ctx). */
      items_done = s->mem || (has_list_suffix(k) && (l.api || !strcmp(k, "List")));
      l.pass = true;
      if (s->mem) l.kind = "List"; /* the caller sets kinds */
      if (!items_done) l.kind = NULL;
      rc = items(s, &l, stop, false);
      json_object_del(top, "items");
    } else if ((rc = take_value(s, &v, &dup)) == TS_OK) {
      size_t size = json_object_size(top);
      warn_dups(s, &dup);
      json_object_set_new(top, json_string_value(key), v);
      if (json_object_size(top) == size) { /* a member given twice */
        in_dup d = {1, key_line, key_col, ""};
        ts_strlcpy(d.key, json_string_value(key), sizeof d.key);
        warn_dups(s, &d);
      }
    }
    json_decref(key);
    if (rc != TS_OK) break;
    if ((c = skip_ws(s)) == ',') {
      advance(s, 1);
      continue;
    }
    if ((rc = expect(s, '}', "',' or '}' expected")) != TS_OK) break;
    c = '}';
  }
  if (rc == TS_OK && skip_ws(s) >= 0) rc = syntax(s, "end of input expected");
  if (rc == TS_OK && s->err->code != TS_OK) rc = s->err->code;
  if (rc == TS_OK && items_off >= 0 && !items_done) {
    const char *k = json_string_value(json_object_get(top, "kind"));
    if (!has_list_suffix(k) && !l.passed) { /* an object with a member "items": read it whole */
      json_decref(top);
      return TS_EUNSUPPORTED;
    }
    if (!has_list_suffix(k)) {
      rc = syntax(s, "a member \"items\" in an object that is not a List");
    } else if (l.resume) { /* the items without a kind of their own, from the first of them */
      l.kind = k, l.api = json_object_get(top, "apiVersion"), l.pass = true;
      if (!seek(s, l.off, l.line, l.col)) rc = s->err->code;
      if (rc == TS_OK) rc = items(s, &l, stop, true);
    }
    items_done = true;
  }
  if (rc == TS_OK && items_off < 0 &&
      has_list_suffix(json_string_value(json_object_get(top, "kind"))) &&
      json_is_null(json_object_get(top, "items")))
    items_done = true; /* "items": null: a List of nothing */
  if (rc == TS_OK && ((!items_done && items_off < 0) || s->mem)) {
    *single = top;
    return TS_OK;
  }
  json_decref(top);
  return rc;
}

ts_rc in_json_items(const char *text, size_t len, in_object_fn fn, void *ud, json_t **top,
                    ts_err *err) {
  src s = {0};
  json_t *single = NULL;
  ts_rc rc, stop = TS_OK;
  int line = 1;
  *top = NULL;
  ts_err_clear(err);
  s.path = "", s.err = err, s.line = 1, s.col = 1, s.mem = true, s.eof = true;
  s.buf = (char *)text, s.hi = len, s.cap = len; /* never written: fill() reads no more */
  if (skip_ws(&s) != '{') {
    if (err->code == TS_OK) syntax(&s, "a JSON object was expected");
    return err->code;
  }
  rc = top_object(&s, fn, ud, &stop, &single, &line);
  if (stop != TS_OK) {
    json_decref(single);
    return stop;
  }
  if (rc != TS_OK) {
    json_decref(single);
    return rc;
  }
  *top = single;
  return TS_OK;
}

ts_rc in_json_stream(const char *path, size_t chunk, in_object_fn fn, in_error_fn on_error,
                     void *ud) {
  src s = {0};
  ts_err err;
  json_t *single = NULL;
  ts_rc rc, stop = TS_OK;
  int c, line = 1;
  ts_err_clear(&err);
  s.path = path, s.err = &err, s.line = 1, s.col = 1;
  s.warn = on_error, s.warn_ud = ud;
  s.chunk = chunk ? chunk : DEFAULT_CHUNK;
  if (!(s.f = fopen(path, "rb"))) {
    ts_err_set(&err, TS_EIO, "%s: %s", path, strerror(errno));
    if (on_error) on_error(ud, &err);
    return TS_OK;
  }
  if (peek_at(&s, 0) == 0xEF && peek_at(&s, 1) == 0xBB && peek_at(&s, 2) == 0xBF)
    s.lo += 3; /* a UTF-8 byte order mark */
  if ((c = skip_ws(&s)) == '{')
    rc = top_object(&s, fn, ud, &stop, &single, &line);
  else
    rc = c < 0 && err.code != TS_OK ? err.code : TS_EUNSUPPORTED; /* not one object */
  fclose(s.f);
  free(s.buf);
  if (stop != TS_OK) return stop;
  if (rc == TS_EUNSUPPORTED) return rc;
  if (rc != TS_OK) {
    ts_err_prefix(&err, "%s", path);
    if (on_error) on_error(ud, &err);
    return TS_OK;
  }
  rc = single ? fn(ud, single, path, line, -1) : TS_OK;
  json_decref(single);
  return rc;
}
