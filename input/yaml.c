/* input/yaml.c - YAML streams to jansson values, with lines, anchors, aliases, merges. */
#include "input/in_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct anchor {
  char *name;    /* owned */
  json_t *value; /* a reference held by the anchor */
  uint64_t size; /* nodes of the value with its aliases expanded */
  bool done;     /* the value is complete (an alias inside it would make a cycle) */
} anchor;

typedef struct yconv {
  yaml_parser_t parser; /* libyaml parser */
  const char *text;     /* the stream (for the position of an invalid byte) */
  size_t len;           /* its length */
  ts_err *err;          /* caller's error */
  int depth;            /* current nesting */
  int aliases;          /* alias references seen */
  uint64_t decoded;     /* nodes of the document so far, aliases expanded */
  uint64_t aliased;     /* of them, nodes that came from expanding aliases */
  size_t bad_byte;      /* offset of an invalid byte, SIZE_MAX when none */
  TS_VEC(anchor) anchors;
  int *item_lines; /* lines of the document's items[] elements */
  size_t nitems, items_cap;
  in_dup *dup; /* the document's duplicate keys */
} yconv;

static ts_rc parse_node(yconv *c, yaml_event_t *ev, json_t **out, int role);

/* Roles of a node: item lines are recorded for elements of a root mapping's "items". */
enum { ROLE_OTHER, ROLE_ROOT, ROLE_ITEMS, ROLE_ITEM };

static ts_rc fail_at(yconv *c, const yaml_mark_t *m, const char *what) {
  ts_err_set(c->err, TS_EPARSE, "line %d column %d: %s", (int)m->line + 1, (int)m->column + 1,
             what);
  if (c->err) c->err->line = (int)m->line + 1, c->err->column = (int)m->column + 1;
  return TS_EPARSE;
}

static ts_rc next_event(yconv *c, yaml_event_t *ev) {
  if (!yaml_parser_parse(&c->parser, ev)) {
    yaml_mark_t m = c->parser.problem_mark;
    const char *p = c->parser.problem ? c->parser.problem : "invalid YAML";
    if (c->parser.error == YAML_MEMORY_ERROR) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
    if (c->parser.error == YAML_READER_ERROR) { /* libyaml gives an offset, not a mark */
      char what[128];
      size_t off = c->parser.problem_offset < c->len ? c->parser.problem_offset : c->len;
      m.line = m.column = 0;
      for (size_t i = 0; i < off; i++)
        if (c->text[i] == '\n')
          m.line++, m.column = 0;
        else if (((unsigned char)c->text[i] & 0xC0) != 0x80) /* count characters, not bytes */
          m.column++;
      if (c->parser.problem_value >= 0)
        snprintf(what, sizeof what, "%s 0x%02X", p, (unsigned)c->parser.problem_value & 0xFF);
      else
        snprintf(what, sizeof what, "%s", p);
      c->bad_byte = off; /* the documents before it are parsed again (in_yaml_parse) */
      return fail_at(c, &m, what);
    }
    return fail_at(c, &m, p);
  }
  return TS_OK;
}

/* A scalar longer than IN_STRING_MAX is refused (a 200 MB label value is not a label). */
static ts_rc check_length(yconv *c, const yaml_event_t *ev) {
  char what[96];
  if (ev->data.scalar.length <= IN_STRING_MAX) return TS_OK;
  snprintf(what, sizeof what, "a string of %zu bytes is longer than the limit of %d",
           ev->data.scalar.length, IN_STRING_MAX);
  return fail_at(c, &ev->start_mark, what);
}

static bool all_digits(const char *s, int base) {
  if (!*s) return false;
  for (; *s; s++) {
    int ok = base == 16 ? ((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
                           (*s >= 'A' && *s <= 'F'))
                        : (*s >= '0' && *s < '0' + base);
    if (!ok) return false;
  }
  return true;
}

/* Integer per YAML 1.2 core: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+. */
static json_t *resolve_int(const char *s) {
  const char *d = s + (*s == '-' || *s == '+');
  long long v;
  int base = 10;
  if (d[0] == '0' && (d[1] == 'x' || d[1] == 'o') && d == s) {
    base = d[1] == 'x' ? 16 : 8;
    d += 2;
  }
  if (!all_digits(d, base)) return NULL;
  errno = 0;
  v = strtoll(base == 10 ? s : d, NULL, base);
  if (errno == ERANGE) return json_real(strtod(s, NULL)); /* too big for int64 */
  return json_integer(v);
}

/* Float per YAML 1.2 core, including .inf and .nan. */
static json_t *resolve_float(const char *s) {
  static const char *const infs[] = {".inf", ".Inf", ".INF"};
  static const char *const nans[] = {".nan", ".NaN", ".NAN"};
  const char *d = s + (*s == '-' || *s == '+');
  char *end;
  bool digit = false;
  for (int i = 0; i < 3; i++) {
    if (!strcmp(d, infs[i])) return json_real(*s == '-' ? -INFINITY : INFINITY);
    if (!strcmp(s, nans[i])) return json_string(s); /* JSON has no NaN: keep the text */
  }
  for (const char *p = d; *p; p++) {
    if (*p >= '0' && *p <= '9')
      digit = true;
    else if (*p != '.' && *p != 'e' && *p != 'E' && *p != '-' && *p != '+')
      return NULL;
  }
  if (!digit || !strpbrk(d, ".eE")) return NULL;
  strtod(s, &end);
  return *end ? NULL : json_real(strtod(s, NULL));
}

static bool one_of(const char *s, const char *const *list) {
  for (; *list; list++)
    if (!strcmp(s, *list)) return true;
  return false;
}

/* Resolves a scalar by its style and tag, as Kubernetes' YAML conversion does. */
static json_t *resolve_scalar(const yaml_event_t *ev) {
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  const char *s = (const char *)ev->data.scalar.value;
  const char *tag = (const char *)ev->data.scalar.tag;
  json_t *v;
  if (tag && !strcmp(tag, YAML_STR_TAG)) return json_stringn(s, ev->data.scalar.length);
  if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE && !tag)
    return json_stringn(s, ev->data.scalar.length);
  if (strlen(s) != ev->data.scalar.length) return json_stringn(s, ev->data.scalar.length);
  if (one_of(s, nulls)) return json_null();
  if (one_of(s, trues)) return json_true();
  if (one_of(s, falses)) return json_false();
  if ((v = resolve_int(s)) || (v = resolve_float(s))) return v;
  return json_stringn(s, ev->data.scalar.length);
}

/* done: v is complete (a scalar); otherwise its size is set when it is (finish_anchor). */
static ts_rc remember_anchor(yconv *c, const yaml_char_t *name, json_t *v, bool done) {
  anchor a;
  if (!name) return TS_OK;
  a.name = ts_strdup((const char *)name);
  a.size = 1, a.done = done;
  a.value = json_incref(v); /* the anchor keeps its value alive (merges and duplicate keys
                               free values the document no longer holds) */
  if (!a.name || ts_vec_push(&c->anchors, a) != TS_OK) {
    ts_free(a.name);
    json_decref(a.value);
    return ts_err_set(c->err, TS_ENOMEM, "out of memory");
  }
  return TS_OK;
}

/* The share of a document's nodes that may come from expanding aliases, as go-yaml (and so
 * kubectl and the API server) allows: 99% up to 400,000 nodes, falling to 10% at 4,000,000. */
static double allowed_alias_ratio(uint64_t decoded) {
  if (decoded <= 400000) return 0.99;
  if (decoded >= 4000000) return 0.10;
  return 0.99 - 0.89 * ((double)(decoded - 400000) / 3600000.0);
}

static ts_rc resolve_alias(yconv *c, yaml_event_t *ev, json_t **out) {
  const char *name = (const char *)ev->data.alias.anchor;
  if (++c->aliases > IN_YAML_MAX_ALIASES)
    return fail_at(c, &ev->start_mark, "too many alias references");
  for (size_t i = c->anchors.n; i-- > 0;) {
    anchor *a = &c->anchors.v[i];
    if (strcmp(a->name, name)) continue;
    if (!a->done) {
      char what[160];
      snprintf(what, sizeof what, "alias *%.100s is inside its own anchor (a recursive structure)",
               name);
      return fail_at(c, &ev->start_mark, what);
    }
    /* The document is as big as it is once expanded: bound that, not only the alias count. */
    c->decoded = (uint64_t)ts_add_sat((int64_t)c->decoded, (int64_t)a->size);
    c->aliased = (uint64_t)ts_add_sat((int64_t)c->aliased, (int64_t)a->size);
    if (c->aliased > 100 && c->decoded > 1000 &&
        (double)c->aliased / (double)c->decoded > allowed_alias_ratio(c->decoded))
      return fail_at(c, &ev->start_mark,
                     "excessive aliasing: the document would expand to more nodes than allowed");
    *out = json_incref(a->value);
    return TS_OK;
  }
  return fail_at(c, &ev->start_mark, "alias refers to an unknown anchor");
}

static ts_rc push_item_line(yconv *c, int line) {
  if (c->nitems == c->items_cap) {
    size_t ncap = c->items_cap ? c->items_cap * 2 : 64;
    int *n = ts_realloc(c->item_lines, ncap * sizeof *n);
    if (!n) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
    c->item_lines = n, c->items_cap = ncap;
  }
  c->item_lines[c->nitems++] = line;
  return TS_OK;
}

/* sequence ::= SEQUENCE-START node* SEQUENCE-END */
static ts_rc parse_sequence(yconv *c, json_t *arr, int role) {
  for (;;) {
    yaml_event_t ev;
    json_t *v = NULL;
    ts_rc rc = next_event(c, &ev);
    if (rc != TS_OK) return rc;
    if (ev.type == YAML_SEQUENCE_END_EVENT) {
      yaml_event_delete(&ev);
      return TS_OK;
    }
    if (role == ROLE_ITEMS && (rc = push_item_line(c, (int)ev.start_mark.line + 1)) != TS_OK) {
      yaml_event_delete(&ev);
      return rc;
    }
    rc = parse_node(c, &ev, &v, ROLE_OTHER);
    yaml_event_delete(&ev);
    if (rc != TS_OK) return rc;
    if (json_array_append_new(arr, v)) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
  }
}

/* Applies a merge key: copies keys of src (a mapping or a list of them) that obj lacks. */
static void merge_into(json_t *obj, json_t *src) {
  const char *k;
  json_t *v;
  size_t i;
  if (json_is_array(src)) {
    json_array_foreach(src, i, v) merge_into(obj, v);
    return;
  }
  json_object_foreach(src, k, v) {
    if (!json_object_get(obj, k)) json_object_set(obj, k, v);
  }
}

/* mapping ::= MAPPING-START (scalar-key node)* MAPPING-END */
static ts_rc parse_mapping(yconv *c, json_t *obj, int role) {
  for (;;) {
    yaml_event_t kev;
    yaml_mark_t kmark;
    json_t *v = NULL;
    char *key;
    int vrole;
    ts_rc rc = next_event(c, &kev);
    if (rc != TS_OK) return rc;
    if (kev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&kev);
      return TS_OK;
    }
    if (kev.type != YAML_SCALAR_EVENT || check_length(c, &kev) != TS_OK) {
      rc = kev.type != YAML_SCALAR_EVENT
               ? fail_at(c, &kev.start_mark, "mapping keys must be scalars")
               : TS_EPARSE;
      yaml_event_delete(&kev);
      return rc;
    }
    key = ts_strdup((const char *)kev.data.scalar.value);
    kmark = kev.start_mark;
    yaml_event_delete(&kev);
    if (!key) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
    vrole = role == ROLE_ROOT && !strcmp(key, "items") ? ROLE_ITEMS : ROLE_OTHER;
    rc = next_event(c, &kev);
    if (rc == TS_OK) {
      rc = parse_node(c, &kev, &v, vrole);
      yaml_event_delete(&kev);
    }
    if (rc == TS_OK && !strcmp(key, "<<") && (json_is_object(v) || json_is_array(v))) {
      merge_into(obj, v);
      json_decref(v);
    } else if (rc == TS_OK) {
      size_t size = json_object_size(obj);
      if (json_object_set_new(obj, key, v))
        rc = ts_err_set(c->err, TS_ENOMEM, "out of memory");
      else if (json_object_size(obj) == size && c->dup && c->dup->n++ == 0) /* replaced */
        c->dup->line = (int)kmark.line + 1, c->dup->col = (int)kmark.column + 1,
        ts_strlcpy(c->dup->key, key, sizeof c->dup->key);
    }
    ts_free(key);
    if (rc != TS_OK) return rc;
  }
}

/* node ::= scalar | alias | sequence | mapping; ev is the node's first event (borrowed). */
static ts_rc parse_node(yconv *c, yaml_event_t *ev, json_t **out, int role) {
  ts_rc rc = TS_OK;
  uint64_t before = c->decoded;
  size_t at = c->anchors.n;
  const yaml_char_t *name;
  *out = NULL;
  switch (ev->type) {
  case YAML_SCALAR_EVENT:
    if (check_length(c, ev) != TS_OK) return TS_EPARSE;
    c->decoded++;
    *out = resolve_scalar(ev);
    if (!*out) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
    return remember_anchor(c, ev->data.scalar.anchor, *out, true);
  case YAML_ALIAS_EVENT:
    return resolve_alias(c, ev, out);
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT:
    break;
  default:
    return fail_at(c, &ev->start_mark, "unexpected YAML event");
  }
  if (++c->depth > IN_YAML_MAX_DEPTH) return fail_at(c, &ev->start_mark, "nesting too deep");
  c->decoded++;
  *out = ev->type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
  if (!*out) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
  name = ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
                                               : ev->data.mapping_start.anchor;
  rc = remember_anchor(c, name, *out, false);
  if (rc == TS_OK && ev->type == YAML_SEQUENCE_START_EVENT)
    rc = parse_sequence(c, *out, role);
  else if (rc == TS_OK)
    rc = parse_mapping(c, *out, role);
  if (rc == TS_OK && name) { /* complete: aliases may refer to it now */
    c->anchors.v[at].size = c->decoded - before;
    c->anchors.v[at].done = true;
  }
  c->depth--;
  if (rc != TS_OK) json_decref(*out), *out = NULL;
  return rc;
}

static void clear_anchors(yconv *c) {
  for (size_t i = 0; i < c->anchors.n; i++) {
    ts_free(c->anchors.v[i].name);
    json_decref(c->anchors.v[i].value);
  }
  c->anchors.n = 0;
}

/* document ::= DOCUMENT-START node DOCUMENT-END; appends non-empty documents. */
static ts_rc parse_document(yconv *c, in_docs *docs) {
  yaml_event_t ev;
  in_doc d = {0};
  ts_rc rc = next_event(c, &ev);
  if (rc != TS_OK) return rc;
  d.line = (int)ev.start_mark.line + 1;
  c->dup = &d.dup;
  c->nitems = 0;
  c->decoded = c->aliased = 0;
  rc = parse_node(c, &ev, &d.value, ROLE_ROOT);
  c->dup = NULL; /* d is this call's */
  yaml_event_delete(&ev);
  if (rc == TS_OK) rc = next_event(c, &ev); /* DOCUMENT-END */
  if (rc == TS_OK) yaml_event_delete(&ev);
  clear_anchors(c);
  if (rc != TS_OK || json_is_null(d.value)) {
    json_decref(d.value);
    return rc;
  }
  if (c->nitems) {
    d.item_lines = ts_memdup(c->item_lines, c->nitems * sizeof(int));
    d.nitems = d.item_lines ? c->nitems : 0;
  }
  if (ts_vec_push(docs, d) != TS_OK) {
    json_decref(d.value);
    ts_free(d.item_lines);
    return ts_err_set(c->err, TS_ENOMEM, "out of memory");
  }
  return TS_OK;
}

/* Where the document holding offset off starts: the last "---" line before it, or 0. text has
 * len bytes (not terminated): a marker must lie within them. */
static size_t document_start(const char *text, size_t len, size_t off) {
  for (size_t i = off; i-- > 0;)
    if ((i == 0 || text[i - 1] == '\n') && i + 3 <= len && !memcmp(text + i, "---", 3) &&
        (i + 3 >= off || strchr(" \t\r\n", text[i + 3])))
      return i;
  return 0;
}

/* The documents of text into docs; *bad_byte: offset of an invalid byte, SIZE_MAX if none. */
static ts_rc parse_stream(const char *text, size_t len, in_docs *docs, ts_err *err,
                          size_t *bad_byte) {
  yconv c = {0};
  ts_rc rc = TS_OK;
  c.err = err, c.text = text, c.len = len, c.bad_byte = SIZE_MAX;
  if (!yaml_parser_initialize(&c.parser)) return ts_err_set(err, TS_ENOMEM, "out of memory");
  yaml_parser_set_input_string(&c.parser, (const unsigned char *)text, len);
  for (;;) {
    yaml_event_t ev;
    if ((rc = next_event(&c, &ev)) != TS_OK) break;
    if (ev.type == YAML_STREAM_END_EVENT) {
      yaml_event_delete(&ev);
      break;
    }
    if (ev.type == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&ev);
      if ((rc = parse_document(&c, docs)) != TS_OK) break;
      continue;
    }
    yaml_event_delete(&ev); /* STREAM-START */
  }
  clear_anchors(&c);
  ts_vec_free(&c.anchors);
  ts_free(c.item_lines);
  yaml_parser_delete(&c.parser);
  *bad_byte = c.bad_byte;
  return rc;
}

ts_rc in_yaml_parse(const char *text, size_t len, in_docs *docs, ts_err *err) {
  size_t n0 = docs->n, end, bad;
  ts_err local, *e = err ? err : &local;
  ts_rc rc = parse_stream(text, len, docs, e, &bad);
  /* libyaml decodes ahead of the parser: an invalid byte fails documents before it. Parse the
   * text up to the document that holds the byte again, keeping the real error. */
  if (rc == TS_EPARSE && bad != SIZE_MAX && (end = document_start(text, len, bad)) > 0) {
    ts_err first = *e, again;
    while (docs->n > n0) {
      docs->n--;
      json_decref(docs->v[docs->n].value);
      ts_free(docs->v[docs->n].item_lines);
    }
    if (parse_stream(text, end, docs, &again, &bad) == TS_ENOMEM) rc = TS_ENOMEM, first = again;
    *e = first;
  }
  return rc;
}

ts_rc in_json_doc(const char *text, size_t len, in_docs *docs, ts_err *err) {
  in_doc d = {0};
  ts_rc rc = in__json_parse_dup(text, len, &d.dup, &d.value, err);
  if (rc != TS_OK) return rc;
  d.line = 1;
  if (ts_vec_push(docs, d) != TS_OK) {
    json_decref(d.value);
    return ts_err_set(err, TS_ENOMEM, "out of memory");
  }
  return TS_OK;
}

void in_docs_free(in_docs *docs) {
  for (size_t i = 0; i < docs->n; i++) {
    json_decref(docs->v[i].value);
    ts_free(docs->v[i].item_lines);
  }
  ts_vec_free(docs);
}
