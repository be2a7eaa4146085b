/* input/json.c - a fast JSON reader that builds jansson values.
 *
 * jansson's own parser reads through a per-character stream callback; this one scans the
 * buffer directly, takes strings without escapes in one copy, and parses integers inline.
 * It accepts exactly RFC 8259 JSON (UTF-8 validated, no NaN, no trailing commas), bounds the
 * nesting depth, and reports errors with line and column. Values are what json_loadb would
 * build (duplicate keys keep the last value, and are counted where the caller asks: in_dup),
 * except that integers beyond int64, which jansson refuses, become reals as they do in Go's
 * decoder. */
#include "input/in_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 512 /* nesting of arrays and objects */

typedef struct reader {
  const unsigned char *p;     /* next byte */
  const unsigned char *end;   /* end of input */
  const unsigned char *start; /* input start, for positions */
  int depth;                  /* current nesting */
  ts_buf scratch;             /* unescaped strings */
  ts_err *err;                /* caller's error */
  int line0, col0;            /* position of start in the whole text */
  int nl;                     /* newlines passed (only whitespace holds them in valid JSON) */
  const unsigned char *bol;   /* after the last of them, NULL before the first */
  bool partial;               /* more text follows end: a failure close to it means "read more" */
  bool truncated;             /* set by fail() in that case (err untouched) */
  in_dup *dup;                /* duplicate keys go here, or NULL */
} reader;

/* The line and column of q in the whole text. O(q - start): for the first duplicate only. */
static void where(const reader *r, const unsigned char *q, int *line, int *col) {
  *line = r->line0, *col = r->col0;
  for (const unsigned char *c = r->start; c < q && c < r->end; c++)
    if (*c == '\n')
      (*line)++, *col = 1;
    else
      (*col)++;
}

void in_dup_text(const in_dup *d, char *out, size_t cap) {
  if (!cap) return;
  out[0] = 0;
  if (!d->n) return;
  if (d->n == 1)
    snprintf(out, cap, "line %d column %d: duplicate key \"%s\" (the last value is used)", d->line,
             d->col, d->key);
  else
    snprintf(out, cap,
             "line %d column %d: duplicate key \"%s\" (the last value is used), and %zu more",
             d->line, d->col, d->key, d->n - 1);
}

static ts_rc fail(reader *r, const char *what) {
  int line = r->line0, col = r->col0;
  if (r->partial && r->end - r->p <= 8) { /* cut inside a value (or a UTF-8 sequence, escape) */
    r->truncated = true;
    return TS_EPARSE;
  }
  for (const unsigned char *q = r->start; q < r->p && q < r->end; q++)
    if (*q == '\n')
      line++, col = 1;
    else
      col++;
  if (r->p >= r->end && strncmp(what, "unexpected end", 14))
    ts_err_set(r->err, TS_EPARSE, "line %d column %d: unexpected end of input: %s", line, col,
               what);
  else
    ts_err_set(r->err, TS_EPARSE, "line %d column %d: %s", line, col, what);
  if (r->err) r->err->line = line, r->err->column = col;
  return TS_EPARSE;
}

/* Whitespace: kubectl indents by 4 per level, so a List's items sit behind runs of 8 to 20
 * spaces; those are passed 8 bytes at a time. */
static void skip_ws(reader *r) {
  const unsigned char *p = r->p, *end = r->end;
  while (p < end) {
    if (*p == ' ') {
      p++;
      while (end - p >= 8 && !memcmp(p, "        ", 8)) p += 8;
    } else if (*p == '\n') {
      r->nl++, r->bol = ++p;
    } else if (*p == '\r' || *p == '\t') {
      p++;
    } else {
      break;
    }
  }
  r->p = p;
}

/* Length of the valid UTF-8 sequence at p (1..4), 0 when invalid. */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  int n;
  unsigned cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, cp = c & 0x07;
  else
    return 0;
  if (end - p < n) return 0;
  for (int i = 1; i < n; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (p[i] & 0x3F);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return n;
}

static int hex4(const unsigned char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    int c = p[i], d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

static ts_rc put_utf8(reader *r, unsigned cp) {
  char b[4];
  int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  if (n == 1)
    b[0] = (char)cp;
  else if (n == 2)
    b[0] = (char)(0xC0 | cp >> 6), b[1] = (char)(0x80 | (cp & 0x3F));
  else if (n == 3)
    b[0] = (char)(0xE0 | cp >> 12), b[1] = (char)(0x80 | (cp >> 6 & 0x3F)),
    b[2] = (char)(0x80 | (cp & 0x3F));
  else
    b[0] = (char)(0xF0 | cp >> 18), b[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
    b[2] = (char)(0x80 | (cp >> 6 & 0x3F)), b[3] = (char)(0x80 | (cp & 0x3F));
  return ts_buf_append(&r->scratch, b, (size_t)n) == TS_OK ? TS_OK : fail(r, "string too long");
}

/* One escape after the backslash at r->p[-1]. */
static ts_rc escape(reader *r) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  const char *k;
  int cp, lo;
  if (r->p >= r->end) return fail(r, "unterminated string");
  if ((k = strchr(from, *r->p)) && *r->p) {
    r->p++;
    return ts_buf_putc(&r->scratch, to[k - from]) == TS_OK ? TS_OK : fail(r, "string too long");
  }
  if (*r->p != 'u' || r->end - r->p < 5 || (cp = hex4(r->p + 1)) < 0)
    return fail(r, "invalid escape");
  r->p += 5;
  if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
    if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || (lo = hex4(r->p + 2)) < 0xDC00 ||
        lo > 0xDFFF)
      return fail(r, "invalid \\u surrogate pair");
    r->p += 6;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    return fail(r, "invalid \\u surrogate pair");
  }
  if (cp == 0) return fail(r, "\\u0000 is not allowed");
  return put_utf8(r, (unsigned)cp);
}

/* A string after its opening quote: *s and *n point at the (unescaped) bytes. */
static ts_rc string(reader *r, const char **s, size_t *n) {
  const unsigned char *begin = r->p;
  bool copied = false;
  for (;;) {
    const unsigned char *q = r->p;
    while (q < r->end && *q != '"' && *q != '\\' && *q >= 0x20 && *q < 0x80) q++;
    if (copied && ts_buf_append(&r->scratch, r->p, (size_t)(q - r->p)) != TS_OK)
      return fail(r, "string too long");
    r->p = q;
    if (q >= r->end) return fail(r, "unterminated string");
    if (*q == '"') break;
    if (*q < 0x20) return fail(r, "control character in string");
    if (!copied) { /* switch to the scratch buffer at the first escape or non-ASCII byte */
      ts_buf_reset(&r->scratch);
      if (ts_buf_append(&r->scratch, begin, (size_t)(q - begin)) != TS_OK)
        return fail(r, "string too long");
      copied = true;
    }
    if (*q == '\\') {
      r->p++;
      if (escape(r) != TS_OK) return TS_EPARSE;
    } else {
      int len = utf8_len(q, r->end);
      if (!len) return fail(r, "invalid UTF-8");
      if (ts_buf_append(&r->scratch, q, (size_t)len) != TS_OK) return fail(r, "string too long");
      r->p += len;
    }
  }
  if (copied)
    *s = r->scratch.data ? r->scratch.data : "", *n = r->scratch.len;
  else
    *s = (const char *)begin, *n = (size_t)(r->p - begin);
  if (*n > IN_STRING_MAX) {
    char what[96];
    snprintf(what, sizeof what, "a string of %zu bytes is longer than the limit of %d", *n,
             IN_STRING_MAX);
    r->p = begin;
    return fail(r, what);
  }
  r->p++; /* the closing quote */
  return TS_OK;
}

static ts_rc number(reader *r, json_t **out) {
  const unsigned char *b = r->p;
  bool neg = false, real = false;
  uint64_t v = 0;
  bool big = false;
  if (*r->p == '-') neg = true, r->p++;
  if (r->p >= r->end || *r->p < '0' || *r->p > '9') return fail(r, "invalid number");
  if (*r->p == '0' && r->p + 1 < r->end && r->p[1] >= '0' && r->p[1] <= '9')
    return fail(r, "leading zeros are not allowed");
  for (; r->p < r->end && *r->p >= '0' && *r->p <= '9'; r->p++) {
    if (v > (UINT64_MAX - 9) / 10) big = true;
    v = v * 10 + (uint64_t)(*r->p - '0');
  }
  if (r->p < r->end && *r->p == '.') {
    real = true;
    if (++r->p >= r->end || *r->p < '0' || *r->p > '9') return fail(r, "invalid number");
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
  }
  if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
    real = true;
    if (++r->p < r->end && (*r->p == '+' || *r->p == '-')) r->p++;
    if (r->p >= r->end || *r->p < '0' || *r->p > '9') return fail(r, "invalid number");
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
  }
  if (!real && !big && v <= (uint64_t)INT64_MAX + neg) {
    *out = json_integer(neg ? (json_int_t)(0 - v) : (json_int_t)v);
    return TS_OK;
  }
  ts_buf_reset(&r->scratch); /* strtod needs a terminated copy */
  if (ts_buf_append(&r->scratch, b, (size_t)(r->p - b)) != TS_OK ||
      ts_buf_putc(&r->scratch, '\0') != TS_OK)
    return fail(r, "number too long");
  errno = 0;
  {
    double d = strtod(r->scratch.data, NULL);
    if (errno == ERANGE && isinf(d)) return fail(r, "real number overflow");
    *out = json_real(d);
  }
  return TS_OK;
}

static ts_rc value(reader *r, json_t **out);

static void free_key(char *key, char *kbuf) {
  if (key != kbuf) ts_free(key);
}

/* object ::= '{' (string ':' value (',' string ':' value)*)? '}' */
static ts_rc object(reader *r, json_t **out) {
  json_t *o = json_object();
  if (!o) return ts_err_set(r->err, TS_ENOMEM, "out of memory");
  skip_ws(r);
  if (r->p < r->end && *r->p == '}') return r->p++, *out = o, TS_OK;
  for (;;) {
    const char *k;
    size_t kn, size;
    char kbuf[256], *key;
    const unsigned char *at;
    json_t *v = NULL;
    skip_ws(r);
    if (r->p >= r->end || *r->p != '"') return json_decref(o), fail(r, "expected a string key");
    at = r->p++;
    if (string(r, &k, &kn) != TS_OK) return json_decref(o), TS_EPARSE;
    key =
        kn < sizeof kbuf ? kbuf : ts_malloc(kn + 1); /* the scratch buffer is reused by the value */
    if (!key) return json_decref(o), ts_err_set(r->err, TS_ENOMEM, "out of memory");
    memcpy(key, k, kn);
    key[kn] = '\0';
    skip_ws(r);
    if (r->p >= r->end || *r->p != ':')
      return free_key(key, kbuf), json_decref(o), fail(r, "expected ':'");
    r->p++;
    if (value(r, &v) != TS_OK) return free_key(key, kbuf), json_decref(o), TS_EPARSE;
    size = json_object_size(o);
    if (json_object_setn_new_nocheck(o, key, kn, v)) {
      free_key(key, kbuf);
      json_decref(o);
      return ts_err_set(r->err, TS_ENOMEM, "out of memory");
    }
    if (r->dup && json_object_size(o) == size && r->dup->n++ == 0) { /* replaced: a duplicate */
      where(r, at, &r->dup->line, &r->dup->col);
      ts_strlcpy(r->dup->key, key, sizeof r->dup->key);
    }
    free_key(key, kbuf);
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == '}') {
      r->p++;
      break;
    }
    json_decref(o);
    return fail(r, "expected ',' or '}'");
  }
  *out = o;
  return TS_OK;
}

/* array ::= '[' (value (',' value)*)? ']' */
static ts_rc array(reader *r, json_t **out) {
  json_t *a = json_array();
  if (!a) return ts_err_set(r->err, TS_ENOMEM, "out of memory");
  skip_ws(r);
  if (r->p < r->end && *r->p == ']') return r->p++, *out = a, TS_OK;
  for (;;) {
    json_t *v = NULL;
    if (value(r, &v) != TS_OK) return json_decref(a), TS_EPARSE;
    if (json_array_append_new(a, v))
      return json_decref(a), ts_err_set(r->err, TS_ENOMEM, "out of memory");
    skip_ws(r);
    if (r->p < r->end && *r->p == ',') {
      r->p++;
      continue;
    }
    if (r->p < r->end && *r->p == ']') {
      r->p++;
      break;
    }
    json_decref(a);
    return fail(r, "expected ',' or ']'");
  }
  *out = a;
  return TS_OK;
}

static ts_rc literal(reader *r, const char *word, json_t *v, json_t **out) {
  size_t n = strlen(word);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n)) return fail(r, "invalid literal");
  r->p += n;
  *out = v;
  return TS_OK;
}

/* value ::= object | array | string | number | true | false | null */
static ts_rc value(reader *r, json_t **out) {
  ts_rc rc;
  skip_ws(r);
  if (r->p >= r->end) return fail(r, "unexpected end of input");
  switch (*r->p) {
  case '{':
  case '[':
    if (++r->depth > JSON_MAX_DEPTH) return fail(r, "nesting too deep");
    rc = *r->p++ == '{' ? object(r, out) : array(r, out);
    r->depth--;
    return rc;
  case '"': {
    const char *s;
    size_t n;
    r->p++;
    if (string(r, &s, &n) != TS_OK) return TS_EPARSE;
    *out = json_stringn_nocheck(s, n);
    return *out ? TS_OK : ts_err_set(r->err, TS_ENOMEM, "out of memory");
  }
  case 't':
    return literal(r, "true", json_true(), out);
  case 'f':
    return literal(r, "false", json_false(), out);
  case 'n':
    return literal(r, "null", json_null(), out);
  default:
    if (*r->p == '-' || (*r->p >= '0' && *r->p <= '9')) {
      if (number(r, out) != TS_OK) return TS_EPARSE;
      return *out ? TS_OK : ts_err_set(r->err, TS_ENOMEM, "out of memory");
    }
    return fail(r, "unexpected character");
  }
}

ts_rc in_json_parse(const char *text, size_t len, json_t **out, ts_err *err) {
  return in_json_parse_at(text, len, 1, 1, out, err);
}

static void reader_init(reader *r, const char *text, size_t len, int line, int col, ts_err *err) {
  memset(r, 0, sizeof *r);
  r->p = r->start = (const unsigned char *)text, r->end = r->p + len, r->err = err;
  r->line0 = line, r->col0 = col;
  ts_buf_init(&r->scratch, (size_t)1 << 30);
}

ts_rc in_json_parse_prefix(const char *text, size_t len, bool more, in_json_pos *pos, json_t **out,
                           ts_err *err) {
  reader r;
  ts_rc rc;
  *out = NULL;
  reader_init(&r, text, len, pos->line, pos->col, err);
  memset(&pos->dup, 0, sizeof pos->dup);
  r.dup = &pos->dup;
  r.partial = more;
  rc = value(&r, out);
  ts_buf_free(&r.scratch);
  if (rc == TS_OK && more && r.p == r.end && !json_is_object(*out) && !json_is_array(*out))
    r.truncated = true; /* a number or literal may go on in the text still to come */
  if (r.truncated) {
    json_decref(*out);
    *out = NULL;
    return TS_EAGAIN;
  }
  if (rc != TS_OK) return rc;
  pos->used = (size_t)(r.p - r.start);
  pos->line = r.line0 + r.nl;
  pos->col = r.bol ? (int)(r.p - r.bol) + 1 : r.col0 + (int)(r.p - r.start);
  return TS_OK;
}

static ts_rc parse_at(const char *text, size_t len, int line, int col, in_dup *dup, json_t **out,
                      ts_err *err);

ts_rc in_json_parse_at(const char *text, size_t len, int line, int col, json_t **out, ts_err *err) {
  return parse_at(text, len, line, col, NULL, out, err);
}

ts_rc in__json_parse_dup(const char *text, size_t len, in_dup *dup, json_t **out, ts_err *err) {
  memset(dup, 0, sizeof *dup);
  return parse_at(text, len, 1, 1, dup, out, err);
}

static ts_rc parse_at(const char *text, size_t len, int line, int col, in_dup *dup, json_t **out,
                      ts_err *err) {
  reader r;
  ts_rc rc;
  *out = NULL;
  reader_init(&r, text, len, line, col, err);
  r.dup = dup;
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) r.p += 3; /* a UTF-8 byte order mark */
  rc = value(&r, out);
  if (rc == TS_OK) {
    skip_ws(&r);
    if (r.p != r.end) {
      json_decref(*out);
      *out = NULL;
      rc = fail(&r, "end of input expected");
    }
  }
  ts_buf_free(&r.scratch);
  return rc;
}
