/* input/yaml.c - YAML streams to jansson values, with lines, anchors, aliases, merges. */
#include "input/input.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct anchor {
  char *name;    /* owned */
  json_t *value; /* a reference held by the anchor */
} anchor;

typedef struct yconv {
  yaml_parser_t parser; /* libyaml parser */
  ts_err *err;          /* caller's error */
  int depth;            /* current nesting */
  int aliases;          /* alias references seen */
  TS_VEC(anchor) anchors;
  int *item_lines; /* lines of the document's items[] elements */
  size_t nitems, items_cap;
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
    const yaml_mark_t *m = &c->parser.problem_mark;
    const char *p = c->parser.problem ? c->parser.problem : "invalid YAML";
    if (c->parser.error == YAML_MEMORY_ERROR) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
    return fail_at(c, m, p);
  }
  return TS_OK;
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

static ts_rc remember_anchor(yconv *c, const yaml_char_t *name, json_t *v) {
  anchor a;
  if (!name) return TS_OK;
  a.name = ts_strdup((const char *)name);
  a.value = json_incref(v); /* the anchor keeps its value alive (merges and duplicate keys
                               free values the document no longer holds) */
  if (!a.name || ts_vec_push(&c->anchors, a) != TS_OK) {
    ts_free(a.name);
    json_decref(a.value);
    return ts_err_set(c->err, TS_ENOMEM, "out of memory");
  }
  return TS_OK;
}

static ts_rc resolve_alias(yconv *c, yaml_event_t *ev, json_t **out) {
  const char *name = (const char *)ev->data.alias.anchor;
  if (++c->aliases > IN_YAML_MAX_ALIASES)
    return fail_at(c, &ev->start_mark, "too many alias references");
  for (size_t i = c->anchors.n; i-- > 0;) {
    if (!strcmp(c->anchors.v[i].name, name)) {
      *out = json_incref(c->anchors.v[i].value);
      return TS_OK;
    }
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
    json_t *v = NULL;
    char *key;
    int vrole;
    ts_rc rc = next_event(c, &kev);
    if (rc != TS_OK) return rc;
    if (kev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&kev);
      return TS_OK;
    }
    if (kev.type != YAML_SCALAR_EVENT) {
      rc = fail_at(c, &kev.start_mark, "mapping keys must be scalars");
      yaml_event_delete(&kev);
      return rc;
    }
    key = ts_strdup((const char *)kev.data.scalar.value);
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
    } else if (rc == TS_OK && json_object_set_new(obj, key, v)) {
      rc = ts_err_set(c->err, TS_ENOMEM, "out of memory");
    }
    ts_free(key);
    if (rc != TS_OK) return rc;
  }
}

/* node ::= scalar | alias | sequence | mapping; ev is the node's first event (borrowed). */
static ts_rc parse_node(yconv *c, yaml_event_t *ev, json_t **out, int role) {
  ts_rc rc = TS_OK;
  *out = NULL;
  switch (ev->type) {
  case YAML_SCALAR_EVENT:
    *out = resolve_scalar(ev);
    if (!*out) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
    return remember_anchor(c, ev->data.scalar.anchor, *out);
  case YAML_ALIAS_EVENT:
    return resolve_alias(c, ev, out);
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT:
    break;
  default:
    return fail_at(c, &ev->start_mark, "unexpected YAML event");
  }
  if (++c->depth > IN_YAML_MAX_DEPTH) return fail_at(c, &ev->start_mark, "nesting too deep");
  *out = ev->type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
  if (!*out) return ts_err_set(c->err, TS_ENOMEM, "out of memory");
  if (ev->type == YAML_SEQUENCE_START_EVENT) {
    rc = remember_anchor(c, ev->data.sequence_start.anchor, *out);
    if (rc == TS_OK) rc = parse_sequence(c, *out, role);
  } else {
    rc = remember_anchor(c, ev->data.mapping_start.anchor, *out);
    if (rc == TS_OK) rc = parse_mapping(c, *out, role);
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
  c->nitems = 0;
  rc = parse_node(c, &ev, &d.value, ROLE_ROOT);
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

ts_rc in_yaml_parse(const char *text, size_t len, in_docs *docs, ts_err *err) {
  yconv c = {0};
  ts_rc rc = TS_OK;
  c.err = err;
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
  return rc;
}

ts_rc in_json_doc(const char *text, size_t len, in_docs *docs, ts_err *err) {
  in_doc d = {0};
  ts_rc rc = in_json_parse(text, len, &d.value, err);
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
