/* cel/parse.c - lexer and parser: CEL text into a syntax tree, macros expanded.
 *
 * A hand-written recursive descent over a precedence table for the binary operators (as Lua's
 * lparser does), with the nesting depth bounded so hostile input cannot exhaust the stack.
 * Long chains of && and || are built balanced, as cel-go does, so that evaluation recursion
 * stays shallow too. Errors carry line and column and are worded as cel-go's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/cel_int.h"

typedef enum tok_kind {
  T_EOF,
  T_INT,
  T_UINT,
  T_DOUBLE,
  T_STRING,
  T_BYTES,
  T_IDENT,
  T_PUNCT, /* operators and punctuation: text in tok.p/n */
  T_ERROR,
} tok_kind;

typedef struct tok {
  tok_kind kind; /* what */
  uint32_t pos;  /* byte offset */
  const char *p; /* text */
  uint32_t n;    /* length */
  int64_t i;     /* T_INT (magnitude may be INT64_MIN's when neg_ok) */
  uint64_t u;    /* T_UINT, and T_INT's magnitude */
  double d;      /* T_DOUBLE */
  char *s;       /* T_STRING / T_BYTES: decoded (arena) */
  bool quoted;   /* T_IDENT written in backquotes (a field name) */
  size_t sn;     /* its length */
} tok;

typedef struct parser {
  const char *text; /* the expression */
  size_t len;       /* its length */
  size_t at;        /* lexer position */
  tok t;            /* current token */
  ts_arena *arena;  /* where nodes go */
  ts_err *err;      /* first error */
  bool failed;      /* an error was reported */
  int depth;        /* recursion depth */
  int flags;        /* CEL_NO_MACROS ... */
} parser;

static const char *const reserved[] = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};

ts_rc cel__error_at(ts_err *err, ts_rc code, const char *text, size_t len, uint32_t pos,
                    const char *fmt, ...) {
  char msg[512];
  va_list ap;
  int line = 1, col = 1;
  size_t ls = 0, le;
  char caret[256];
  int c = 0;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < pos && i < len; i++) {
    if (text[i] == '\n')
      line++, col = 1, ls = i + 1;
    else if (((unsigned char)text[i] & 0xC0) != 0x80)
      col++;
  }
  for (le = ls; le < len && text[le] != '\n'; le++) {
  }
  for (c = 0; c < col - 1 && c < (int)sizeof caret - 2; c++) caret[c] = '.';
  caret[c++] = '^';
  caret[c] = '\0';
  ts_err_set(err, code, "ERROR: <input>:%d:%d: %s\n | %.*s\n | %s", line, col, msg,
             (int)(le - ls > 200 ? 200 : le - ls), text + ls, caret);
  if (err) err->line = line, err->column = col;
  return code;
}

static void fail(parser *ps, uint32_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(parser *ps, uint32_t pos, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  if (ps->failed) return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ps->failed = true;
  cel__error_at(ps->err, TS_EPARSE, ps->text, ps->len, pos, "Syntax error: %s", msg);
}

/* ---- lexer ------------------------------------------------------------------------------- */

static bool is_ident_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c) {
  return c >= '0' && c <= '9';
}

static int hexval(int c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

static void put_utf8(ts_buf *b, uint32_t cp) {
  char o[4];
  int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  if (n == 1)
    o[0] = (char)cp;
  else if (n == 2)
    o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F));
  else if (n == 3)
    o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3F)),
    o[2] = (char)(0x80 | (cp & 0x3F));
  else
    o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
  ts_buf_append(b, o, (size_t)n);
}

/* One escape sequence after the backslash at s[*i]; appends to out. False when invalid. */
static bool escape(parser *ps, size_t *i, size_t end, bool bytes, ts_buf *out) {
  const char *s = ps->text;
  char c = s[*i];
  static const char from[] = "abfnrtv\\'\"`?", to[] = "\a\b\f\n\r\t\v\\'\"`?";
  const char *k = strchr(from, c);
  if (c && k) {
    ts_buf_putc(out, to[k - from]);
    (*i)++;
    return true;
  }
  if (c == 'x' || c == 'X' || c == 'u' || c == 'U') {
    int digits = c == 'u' ? 4 : c == 'U' ? 8 : 2;
    uint32_t v = 0;
    if (*i + 1 + (size_t)digits > end) return false;
    for (int d = 1; d <= digits; d++) {
      int h = hexval(s[*i + (size_t)d]);
      if (h < 0) return false;
      v = v * 16 + (uint32_t)h;
    }
    *i += 1 + (size_t)digits;
    if (digits == 2 && bytes) {
      ts_buf_putc(out, (char)v);
      return true;
    }
    if (digits > 2 && bytes) return false;
    if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
    put_utf8(out, v);
    return true;
  }
  if (c >= '0' && c <= '3') {
    uint32_t v = 0;
    if (*i + 3 > end) return false;
    for (int d = 0; d < 3; d++) {
      if (s[*i + (size_t)d] < '0' || s[*i + (size_t)d] > '7') return false;
      v = v * 8 + (uint32_t)(s[*i + (size_t)d] - '0');
    }
    *i += 3;
    if (bytes)
      ts_buf_putc(out, (char)v);
    else
      put_utf8(out, v);
    return true;
  }
  return false;
}

/* A string or bytes literal starting at ps->at (after any prefix): quote char(s) next. */
static void lex_string(parser *ps, bool raw, bool bytes, uint32_t start) {
  const char *s = ps->text;
  char q = s[ps->at];
  bool triple = ps->at + 2 < ps->len && s[ps->at + 1] == q && s[ps->at + 2] == q;
  size_t i = ps->at + (triple ? 3 : 1);
  ts_buf out;
  ts_buf_init(&out, ps->len * 4 + 16);
  for (;;) {
    if (i >= ps->len) {
      ts_buf_free(&out);
      fail(ps, start, "token recognition error at: '%.*s'",
           (int)(ps->len - start > 20 ? 20 : ps->len - start), s + start);
      ps->t.kind = T_ERROR;
      return;
    }
    if (triple ? (i + 2 < ps->len + 0 && s[i] == q && s[i + 1] == q && s[i + 2] == q) : s[i] == q) {
      i += triple ? 3 : 1;
      break;
    }
    if (!triple && (s[i] == '\n' || s[i] == '\r')) {
      ts_buf_free(&out);
      fail(ps, start, "token recognition error at: '%.*s'", (int)(i - start), s + start);
      ps->t.kind = T_ERROR;
      return;
    }
    if (s[i] == '\\' && !raw) {
      i++;
      if (!escape(ps, &i, ps->len, bytes, &out)) {
        ts_buf_free(&out);
        fail(ps, start, "token recognition error at: '%.*s'",
             (int)(i - start + 1 > 40 ? 40 : i - start + 1), s + start);
        ps->t.kind = T_ERROR;
        return;
      }
      continue;
    }
    if (s[i] == '\\' && raw && i + 1 < ps->len && (s[i + 1] == q || s[i + 1] == '\\')) {
      ts_buf_putc(&out, s[i]); /* a raw string keeps the backslash, and the quote after it */
      ts_buf_putc(&out, s[i + 1]);
      i += 2;
      continue;
    }
    ts_buf_putc(&out, s[i++]);
  }
  ps->t.kind = bytes ? T_BYTES : T_STRING;
  ps->t.s = ts_arena_alloc(ps->arena, out.len + 1);
  if (ps->t.s) {
    if (out.len) memcpy(ps->t.s, out.data, out.len);
    ps->t.s[out.len] = '\0';
  }
  ps->t.sn = out.len;
  ts_buf_free(&out);
  ps->at = i;
}

static void lex_number(parser *ps) {
  const char *s = ps->text;
  size_t i = ps->at, b = i;
  bool real = false;
  if (s[i] == '0' && i + 1 < ps->len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    uint64_t v = 0;
    bool over = false;
    i += 2;
    if (i >= ps->len || hexval(s[i]) < 0) {
      fail(ps, (uint32_t)b, "invalid hex literal");
      ps->t.kind = T_ERROR;
      return;
    }
    for (; i < ps->len && hexval(s[i]) >= 0; i++) {
      if (v >> 60) over = true;
      v = v * 16 + (uint64_t)hexval(s[i]);
    }
    ps->t.u = v;
    if (i < ps->len && (s[i] == 'u' || s[i] == 'U')) {
      ps->t.kind = T_UINT;
      i++;
    } else {
      ps->t.kind = T_INT;
    }
    if (over) fail(ps, (uint32_t)b, "invalid %s literal", ps->t.kind == T_UINT ? "uint" : "int");
    ps->at = i;
    return;
  }
  while (i < ps->len && is_digit(s[i])) i++;
  if (i + 1 < ps->len && s[i] == '.' && is_digit(s[i + 1])) {
    real = true;
    i++;
    while (i < ps->len && is_digit(s[i])) i++;
  }
  if (i < ps->len && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < ps->len && (s[j] == '+' || s[j] == '-')) j++;
    if (j < ps->len && is_digit(s[j])) {
      real = true;
      i = j;
      while (i < ps->len && is_digit(s[i])) i++;
    }
  }
  if (real) {
    char buf[400];
    size_t n = i - b < sizeof buf - 1 ? i - b : sizeof buf - 1;
    memcpy(buf, s + b, n);
    buf[n] = '\0';
    ps->t.kind = T_DOUBLE;
    ps->t.d = strtod(buf, NULL);
    ps->at = i;
    return;
  }
  {
    uint64_t v = 0;
    bool over = false;
    for (size_t k = b; k < i; k++) {
      if (v > (UINT64_MAX - 9) / 10 &&
          (v > UINT64_MAX / 10 || (uint64_t)(s[k] - '0') > UINT64_MAX - v * 10))
        over = true;
      v = v * 10 + (uint64_t)(s[k] - '0');
    }
    ps->t.u = v;
    if (i < ps->len && (s[i] == 'u' || s[i] == 'U')) {
      ps->t.kind = T_UINT;
      i++;
    } else {
      ps->t.kind = T_INT;
    }
    if (over) fail(ps, (uint32_t)b, "invalid %s literal", ps->t.kind == T_UINT ? "uint" : "int");
  }
  ps->at = i;
}

static const char *const puncts[] = {"==", "!=", "<=", ">=", "&&", "||", ".?", "[?", "<",
                                     ">",  "+",  "-",  "*",  "/",  "%",  "!",  "?",  ":",
                                     "(",  ")",  "[",  "]",  "{",  "}",  ",",  "."};

static void next(parser *ps) {
  const char *s = ps->text;
  for (;;) { /* whitespace and comments */
    while (ps->at < ps->len && (s[ps->at] == ' ' || s[ps->at] == '\t' || s[ps->at] == '\n' ||
                                s[ps->at] == '\r' || s[ps->at] == '\f'))
      ps->at++;
    if (ps->at + 1 < ps->len && s[ps->at] == '/' && s[ps->at + 1] == '/') {
      while (ps->at < ps->len && s[ps->at] != '\n') ps->at++;
      continue;
    }
    break;
  }
  memset(&ps->t, 0, sizeof ps->t);
  ps->t.pos = (uint32_t)ps->at;
  ps->t.p = s + ps->at;
  if (ps->at >= ps->len) {
    ps->t.kind = T_EOF;
    return;
  }
  if (is_ident_start((unsigned char)s[ps->at])) {
    size_t i = ps->at;
    bool raw = false, bytes = false;
    while (i < ps->len && (is_ident_start((unsigned char)s[i]) || is_digit(s[i]))) i++;
    /* string prefixes: r, b, rb, br (any case) directly before a quote */
    if (i - ps->at <= 2 && i < ps->len && (s[i] == '"' || s[i] == '\'')) {
      bool ok = true;
      for (size_t k = ps->at; k < i; k++) {
        char c = s[k];
        if (c == 'r' || c == 'R')
          raw = raw ? (ok = false) : true;
        else if (c == 'b' || c == 'B')
          bytes = bytes ? (ok = false) : true;
        else
          ok = false;
      }
      if (ok) {
        uint32_t start = (uint32_t)ps->at;
        ps->at = i;
        lex_string(ps, raw, bytes, start);
        ps->t.pos = start;
        return;
      }
    }
    ps->t.kind = T_IDENT;
    ps->t.n = (uint32_t)(i - ps->at);
    ps->at = i;
    return;
  }
  if (s[ps->at] == '"' || s[ps->at] == '\'') {
    lex_string(ps, false, false, (uint32_t)ps->at);
    return;
  }
  if (s[ps->at] == '`') { /* a quoted field name: .`content-type` */
    size_t e = ps->at + 1;
    while (e < ps->len && s[e] != '`' && s[e] != '\n') e++;
    if (e < ps->len && s[e] == '`' && e > ps->at + 1) {
      ps->t.kind = T_IDENT;
      ps->t.p = s + ps->at + 1;
      ps->t.n = (uint32_t)(e - ps->at - 1);
      ps->t.quoted = true;
      ps->at = e + 1;
      return;
    }
  }
  if (is_digit(s[ps->at]) ||
      (s[ps->at] == '.' && ps->at + 1 < ps->len && is_digit(s[ps->at + 1]))) {
    lex_number(ps);
    return;
  }
  for (size_t k = 0; k < sizeof puncts / sizeof *puncts; k++) {
    size_t n = strlen(puncts[k]);
    if (ps->at + n <= ps->len && !memcmp(s + ps->at, puncts[k], n)) {
      ps->t.kind = T_PUNCT;
      ps->t.n = (uint32_t)n;
      ps->at += n;
      return;
    }
  }
  fail(ps, (uint32_t)ps->at, "token recognition error at: '%.*s'",
       (int)(((unsigned char)s[ps->at] & 0x80) ? 1 : 1), s + ps->at);
  ps->t.kind = T_ERROR;
  ps->at++;
}

static bool is(const parser *ps, const char *p) {
  return ps->t.kind == T_PUNCT && ps->t.n == strlen(p) && !memcmp(ps->t.p, p, ps->t.n);
}

static bool is_word(const parser *ps, const char *w) {
  return ps->t.kind == T_IDENT && ps->t.n == strlen(w) && !memcmp(ps->t.p, w, ps->t.n);
}

static void tok_text(const parser *ps, char *out, size_t cap) {
  if (ps->t.kind == T_EOF)
    snprintf(out, cap, "<EOF>");
  else
    snprintf(out, cap, "%.*s", (int)(ps->t.n ? ps->t.n : 1), ps->t.p);
}

static bool expect(parser *ps, const char *p) {
  char got[64];
  if (is(ps, p)) {
    next(ps);
    return true;
  }
  tok_text(ps, got, sizeof got);
  fail(ps, ps->t.pos, "mismatched input '%s' expecting '%s'", got, p);
  return false;
}

/* ---- nodes ------------------------------------------------------------------------------- */

static node *mk(parser *ps, node_kind k, uint32_t pos) {
  node *n = ts_arena_alloc(ps->arena, sizeof *n);
  if (!n) {
    if (!ps->failed) ts_err_set(ps->err, TS_ENOMEM, "out of memory");
    ps->failed = true;
    return NULL;
  }
  memset(n, 0, sizeof *n);
  n->kind = k;
  n->pos = pos;
  n->local = -1;
  n->var = -1;
  return n;
}

static node **args_copy(parser *ps, node **v, uint32_t n) {
  node **a = ts_arena_alloc(ps->arena, (n + 1) * sizeof *a);
  if (!a) {
    ps->failed = true;
    ts_err_set(ps->err, TS_ENOMEM, "out of memory");
    return NULL;
  }
  if (n) memcpy(a, v, n * sizeof *a);
  return a;
}

static node *call(parser *ps, const char *name, uint32_t pos, node *target, node **args,
                  uint32_t n) {
  node *c;
  if (ps->failed) return NULL; /* an argument failed to parse: no node with a hole in it */
  if (!(c = mk(ps, N_CALL, pos))) return NULL;
  c->name = ts_intern_cstr(name);
  c->target = target;
  c->args = args_copy(ps, args, n);
  c->nargs = n;
  return c;
}

static node *binary(parser *ps, const char *op, uint32_t pos, node *a, node *b) {
  node *args[2] = {a, b};
  if (ps->failed || !a || !b) return NULL;
  if (!strcmp(op, "&&") || !strcmp(op, "||")) {
    node *n = mk(ps, op[0] == '&' ? N_AND : N_OR, pos);
    if (!n) return NULL;
    n->args = args_copy(ps, args, 2);
    n->nargs = 2;
    return n;
  }
  {
    char name[8];
    if (!strcmp(op, "in")) return call(ps, "@in", pos, NULL, args, 2);
    snprintf(name, sizeof name, "_%s_", op);
    return call(ps, name, pos, NULL, args, 2);
  }
}

/* ---- grammar ------------------------------------------------------------------------------ */

static node *expr(parser *ps);

static bool enter(parser *ps) {
  if (++ps->depth > CEL_MAX_DEPTH) {
    fail(ps, ps->t.pos, "expression nests too deeply (more than %d levels)", CEL_MAX_DEPTH);
    return false;
  }
  return true;
}

static void leave(parser *ps) {
  ps->depth--;
}

/* ExprList = Expr {"," Expr}; opt_flags for list literals' [?x] entries; first_opt when the
 * first entry's "?" came with the "[" (the lexer reads "[?" as one token). */
static uint32_t expr_list(parser *ps, const char *close, node **out, uint32_t cap,
                          uint8_t *opt_flags, bool first_opt) {
  uint32_t n = 0;
  if (is(ps, close) && !first_opt) return 0;
  for (;;) {
    bool optional = n == 0 && first_opt;
    if (opt_flags && !optional && is(ps, "?")) {
      optional = true;
      next(ps);
    }
    if (n == cap) {
      fail(ps, ps->t.pos, "too many elements (more than %u)", cap);
      return n;
    }
    if (opt_flags) opt_flags[n] = optional;
    out[n++] = expr(ps);
    if (ps->failed) return n;
    if (!is(ps, ",")) break;
    next(ps);
    if (is(ps, close)) break; /* trailing comma */
  }
  return n;
}

#define MAX_LITERAL 4096 /* elements of one list or map literal */

static node *list_lit(parser *ps, uint32_t pos, bool first_opt) {
  node **tmp = ts_malloc(MAX_LITERAL * sizeof *tmp);
  uint8_t *flags = ts_malloc(MAX_LITERAL);
  node *l = mk(ps, N_LIST, pos);
  uint32_t n = 0;
  bool any = false;
  if (tmp && flags && l) n = expr_list(ps, "]", tmp, MAX_LITERAL, flags, first_opt);
  if (!ps->failed && l) {
    l->args = args_copy(ps, tmp, n);
    l->nargs = n;
    for (uint32_t i = 0; i < n; i++) any |= flags[i];
    if (any && (l->optional = ts_arena_alloc(ps->arena, n))) memcpy(l->optional, flags, n);
    expect(ps, "]");
  }
  ts_free(tmp);
  ts_free(flags);
  return ps->failed ? NULL : l;
}

static node *map_lit(parser *ps, uint32_t pos) {
  node **tmp = ts_malloc(2 * MAX_LITERAL * sizeof *tmp);
  uint8_t *flags = ts_malloc(MAX_LITERAL);
  node *m = mk(ps, N_MAP, pos);
  uint32_t n = 0;
  bool any = false;
  if (!tmp || !flags || !m) goto out;
  while (!is(ps, "}") && !ps->failed) {
    bool optional = false;
    if (n == MAX_LITERAL) {
      fail(ps, ps->t.pos, "too many entries (more than %d)", MAX_LITERAL);
      break;
    }
    if (is(ps, "?")) optional = true, next(ps);
    flags[n] = optional;
    any |= optional;
    tmp[2 * n] = expr(ps);
    if (ps->failed || !expect(ps, ":")) break;
    tmp[2 * n + 1] = expr(ps);
    n++;
    if (!is(ps, ",")) break;
    next(ps);
  }
  if (!ps->failed) {
    m->args = args_copy(ps, tmp, 2 * n);
    m->nargs = 2 * n;
    if (any && (m->optional = ts_arena_alloc(ps->arena, n))) memcpy(m->optional, flags, n);
    expect(ps, "}");
  }
out:
  ts_free(tmp);
  ts_free(flags);
  return ps->failed ? NULL : m;
}

static node *literal(parser *ps) {
  node *n = mk(ps, N_LIT, ps->t.pos);
  if (!n) return NULL;
  switch (ps->t.kind) {
  case T_INT:
    if (ps->t.u > (uint64_t)INT64_MAX) fail(ps, ps->t.pos, "invalid int literal");
    n->lit = cel_int((int64_t)ps->t.u);
    break;
  case T_UINT:
    n->lit = cel_uint(ps->t.u);
    break;
  case T_DOUBLE:
    n->lit = cel_double(ps->t.d);
    break;
  case T_STRING:
    if (!cel__utf8_valid(ps->t.s, ps->t.sn)) fail(ps, ps->t.pos, "invalid UTF-8 in string literal");
    n->lit = cel_string(ps->t.s, ps->t.sn);
    break;
  case T_BYTES:
    n->lit = cel_bytes(ps->t.s, ps->t.sn);
    break;
  default:
    break;
  }
  next(ps);
  return n;
}

/* Member tails: .name, .name(args), .?name, [e], [?e]. */
static node *member_tail(parser *ps, node *e);

/* Primary = ["."] IDENT ["(" args ")"] | "(" Expr ")" | list | map | literal */
static node *primary(parser *ps) {
  uint32_t pos = ps->t.pos;
  char got[64];
  if (ps->t.kind == T_INT || ps->t.kind == T_UINT || ps->t.kind == T_DOUBLE ||
      ps->t.kind == T_STRING || ps->t.kind == T_BYTES)
    return literal(ps);
  if (is(ps, "(")) {
    node *e;
    next(ps);
    e = expr(ps);
    expect(ps, ")");
    return e;
  }
  if (is(ps, "[") || is(ps, "[?")) { /* [?x, ...]: the first entry is optional */
    bool first_opt = is(ps, "[?");
    next(ps);
    return list_lit(ps, pos, first_opt);
  }
  if (is(ps, "{")) {
    next(ps);
    return map_lit(ps, pos);
  }
  if (is(ps, ".") || ps->t.kind == T_IDENT) {
    bool root = is(ps, ".");
    char name[256];
    if (root) {
      next(ps);
      if (ps->t.kind != T_IDENT) {
        tok_text(ps, got, sizeof got);
        fail(ps, ps->t.pos, "mismatched input '%s' expecting IDENTIFIER", got);
        return NULL;
      }
    }
    snprintf(name, sizeof name, "%s%.*s", root ? "." : "", (int)ps->t.n, ps->t.p);
    if (is_word(ps, "true") || is_word(ps, "false") || is_word(ps, "null")) {
      node *n = mk(ps, N_LIT, pos);
      if (n) n->lit = is_word(ps, "null") ? cel_null() : cel_bool(is_word(ps, "true"));
      next(ps);
      return n;
    }
    for (size_t k = 0; k < sizeof reserved / sizeof *reserved; k++)
      if (is_word(ps, reserved[k])) {
        fail(ps, ps->t.pos, "reserved identifier: %s", reserved[k]);
        return NULL;
      }
    if (is_word(ps, "in")) {
      fail(ps, ps->t.pos, "mismatched input 'in' expecting an expression");
      return NULL;
    }
    next(ps);
    if (is(ps, "(")) {
      node *tmp[CEL_MAX_ARGS];
      uint32_t n;
      next(ps);
      n = expr_list(ps, ")", tmp, CEL_MAX_ARGS, NULL, false);
      if (!expect(ps, ")")) return NULL;
      return call(ps, root ? name + 1 : name, pos, NULL, tmp, n);
    }
    {
      node *id = mk(ps, N_IDENT, pos);
      if (id) id->name = ts_intern_cstr(name);
      return id;
    }
  }
  tok_text(ps, got, sizeof got);
  if (ps->t.kind != T_ERROR)
    fail(ps, ps->t.pos,
         "mismatched input '%s' expecting {'[', '{', '(', '.', '-', '!', 'true', "
         "'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
         got);
  return NULL;
}

/* ---- macros ------------------------------------------------------------------------------ */

static bool simple_name(parser *ps, node *n, const char *what) {
  if (n && n->kind == N_IDENT && n->name[0] != '.' && !strchr(n->name, '.')) return true;
  fail(ps, n ? n->pos : ps->t.pos, "%s: argument must be a simple name", what);
  return false;
}

static node *comp(parser *ps, node *c, comp_kind k, node *range, const char *v1, const char *v2,
                  node *filter, node *body) {
  node *n = mk(ps, N_COMP, c->pos);
  if (!n) return NULL;
  n->ck = k;
  n->target = range;
  n->name = v1;
  n->v2 = v2;
  n->filter = filter;
  n->args = args_copy(ps, &body, 1);
  n->nargs = 1;
  return n;
}

/* Expands a macro call (c is a parsed call); returns c itself when it is not a macro. */
static node *macro(parser *ps, node *c) {
  const char *f = c->name;
  uint32_t n = c->nargs;
  node **a = c->args;
  if (ps->flags & CEL_NO_MACROS) return c;
  if (!c->target && !strcmp(f, "has") && n == 1) {
    if (a[0]->kind != N_SELECT || a[0]->opt) {
      fail(ps, a[0]->pos, "invalid argument to has() macro");
      return NULL;
    }
    a[0]->test_only = true;
    return a[0];
  }
  if (!c->target) return c;
  if (c->target->kind == N_IDENT && !strcmp(c->target->name, "cel") && !strcmp(f, "bind") &&
      n == 3) {
    node *b;
    if (!simple_name(ps, a[0], "cel.bind() macro") || !(b = mk(ps, N_BIND, c->pos))) return NULL;
    b->name = a[0]->name;
    b->args = args_copy(ps, a + 1, 2);
    b->nargs = 2;
    return b;
  }
  if ((!strcmp(f, "all") || !strcmp(f, "exists") || !strcmp(f, "exists_one") ||
       !strcmp(f, "existsOne")) &&
      (n == 2 || n == 3)) {
    comp_kind k = f[0] == 'a' ? C_ALL : !strcmp(f, "exists") ? C_EXISTS : C_EXISTS_ONE;
    if (!simple_name(ps, a[0], f) || (n == 3 && !simple_name(ps, a[1], f))) return NULL;
    return comp(ps, c, k, c->target, a[0]->name, n == 3 ? a[1]->name : NULL, NULL, a[n - 1]);
  }
  if (!strcmp(f, "map") && (n == 2 || n == 3)) {
    if (!simple_name(ps, a[0], "map")) return NULL;
    return comp(ps, c, C_MAP, c->target, a[0]->name, NULL, n == 3 ? a[1] : NULL, a[n - 1]);
  }
  if (!strcmp(f, "filter") && n == 2) {
    if (!simple_name(ps, a[0], "filter")) return NULL;
    return comp(ps, c, C_FILTER, c->target, a[0]->name, NULL, a[1], a[0]);
  }
  if ((!strcmp(f, "transformList") || !strcmp(f, "transformMap") ||
       !strcmp(f, "transformMapEntry")) &&
      (n == 3 || n == 4)) {
    comp_kind k = !strcmp(f, "transformList")  ? C_TRANSFORM_LIST
                  : !strcmp(f, "transformMap") ? C_TRANSFORM_MAP
                                               : C_TRANSFORM_ENTRY;
    if (!simple_name(ps, a[0], f) || !simple_name(ps, a[1], f)) return NULL;
    return comp(ps, c, k, c->target, a[0]->name, a[1]->name, n == 4 ? a[2] : NULL, a[n - 1]);
  }
  if ((!strcmp(f, "optMap") || !strcmp(f, "optFlatMap")) && n == 2) {
    node *m;
    if (!simple_name(ps, a[0], f) || !(m = mk(ps, N_OPTMAP, c->pos))) return NULL;
    m->target = c->target;
    m->name = a[0]->name;
    m->flat = f[3] == 'F';
    m->args = args_copy(ps, a + 1, 1);
    m->nargs = 1;
    return m;
  }
  return c;
}

static node *member_tail(parser *ps, node *e) {
  while (!ps->failed && e) {
    uint32_t pos = ps->t.pos;
    char got[64];
    if (is(ps, ".") || is(ps, ".?")) {
      bool opt = is(ps, ".?");
      char name[256];
      next(ps);
      if (ps->t.kind != T_IDENT) {
        tok_text(ps, got, sizeof got);
        fail(ps, ps->t.pos, "mismatched input '%s' expecting IDENTIFIER", got);
        return NULL;
      }
      snprintf(name, sizeof name, "%.*s", (int)ps->t.n, ps->t.p);
      next(ps);
      if (!opt && is(ps, "(")) {
        node *tmp[CEL_MAX_ARGS];
        uint32_t n;
        next(ps);
        n = expr_list(ps, ")", tmp, CEL_MAX_ARGS, NULL, false);
        if (!expect(ps, ")")) return NULL;
        e = call(ps, name, pos, e, tmp, n);
        if (e) e = macro(ps, e);
        continue;
      }
      {
        node *s = mk(ps, N_SELECT, pos);
        if (!s) return NULL;
        s->target = e;
        s->name = ts_intern_cstr(name);
        s->opt = opt;
        e = s;
      }
      continue;
    }
    if (is(ps, "[") || is(ps, "[?")) {
      node *x = mk(ps, N_INDEX, pos);
      bool opt = is(ps, "[?");
      node *k;
      next(ps);
      k = expr(ps);
      if (!x || ps->failed || !expect(ps, "]")) return NULL;
      x->target = e;
      x->args = args_copy(ps, &k, 1);
      x->nargs = 1;
      x->opt = opt;
      e = x;
      continue;
    }
    break;
  }
  return e;
}

/* Unary = Member | "!" {"!"} Member | "-" {"-"} Member */
static node *unary(parser *ps) {
  uint32_t pos = ps->t.pos;
  node *e;
  if (!enter(ps)) return NULL;
  if (is(ps, "!") || is(ps, "-")) {
    bool neg = is(ps, "-");
    next(ps);
    if (neg && (ps->t.kind == T_INT || ps->t.kind == T_DOUBLE) && ps->text[ps->t.pos - 1] == '-') {
      /* -literal: a negative literal (so that -9223372036854775808 is an int) */
      node *n = mk(ps, N_LIT, pos);
      if (n && ps->t.kind == T_INT) {
        if (ps->t.u > (uint64_t)INT64_MAX + 1) fail(ps, ps->t.pos, "invalid int literal");
        n->lit = cel_int((int64_t)(0 - ps->t.u));
      } else if (n) {
        n->lit = cel_double(-ps->t.d);
      }
      next(ps);
      e = member_tail(ps, n);
      leave(ps);
      return e;
    }
    e = unary(ps);
    if (e) e = call(ps, neg ? "-_" : "!_", pos, NULL, &e, 1);
    leave(ps);
    return e;
  }
  e = member_tail(ps, primary(ps));
  if (e && e->kind == N_CALL && !e->target) e = macro(ps, e);
  leave(ps);
  return e;
}

/* Binary operators by precedence (higher binds tighter). */
static int precedence(parser *ps, const char **op) {
  static const struct {
    const char *op;
    int prec;
  } ops[] = {{"||", 1}, {"&&", 2}, {"==", 3}, {"!=", 3}, {"<", 3}, {"<=", 3}, {">", 3},
             {">=", 3}, {"+", 4},  {"-", 4},  {"*", 5},  {"/", 5}, {"%", 5}};
  if (is_word(ps, "in")) {
    *op = "in";
    return 3;
  }
  if (ps->t.kind != T_PUNCT) return 0;
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (is(ps, ops[i].op)) {
      *op = ops[i].op;
      return ops[i].prec;
    }
  return 0;
}

/* Builds a balanced tree of one logical operator from a flat list of operands. */
static node *balance(parser *ps, const char *op, node **v, uint32_t *pos, uint32_t lo,
                     uint32_t hi) {
  uint32_t mid;
  if (hi - lo == 1) return v[lo];
  mid = (lo + hi) / 2;
  return binary(ps, op, pos[mid], balance(ps, op, v, pos, lo, mid),
                balance(ps, op, v, pos, mid, hi));
}

#define MAX_CHAIN 4096 /* operands of one && / || chain */

static node *binop(parser *ps, int limit);

/* A chain of && or || at precedence prec, built balanced. */
static node *logical_chain(parser *ps, node *first, const char *op, int prec) {
  node **v = ts_malloc(MAX_CHAIN * sizeof *v);
  uint32_t *pos = ts_malloc(MAX_CHAIN * sizeof *pos);
  uint32_t n = 0;
  node *r = NULL;
  const char *o2;
  if (!v || !pos) {
    ts_free(v), ts_free(pos);
    fail(ps, ps->t.pos, "out of memory");
    return NULL;
  }
  v[n++] = first;
  while (!ps->failed && precedence(ps, &o2) == prec && n < MAX_CHAIN) {
    pos[n] = ps->t.pos;
    next(ps);
    v[n++] = binop(ps, prec + 1);
  }
  if (n == MAX_CHAIN) fail(ps, ps->t.pos, "too many operands of %s", op);
  if (!ps->failed) r = balance(ps, op, v, pos, 0, n);
  ts_free(v);
  ts_free(pos);
  return r;
}

/* Precedence climbing over the binary operators of precedence >= limit. */
static node *binop(parser *ps, int limit) {
  node *l;
  const char *op;
  int prec;
  if (!enter(ps)) return NULL;
  l = unary(ps);
  while (l && !ps->failed && (prec = precedence(ps, &op)) >= limit) {
    uint32_t pos = ps->t.pos;
    if (prec <= 2) {
      l = logical_chain(ps, l, op, prec);
      continue;
    }
    next(ps);
    l = binary(ps, op, pos, l, binop(ps, prec + 1));
  }
  leave(ps);
  return ps->failed ? NULL : l;
}

/* Expr = ConditionalOr ["?" ConditionalOr ":" Expr] */
static node *expr(parser *ps) {
  node *c, *n;
  uint32_t pos;
  if (!enter(ps)) return NULL;
  c = binop(ps, 1);
  if (!c || !is(ps, "?")) {
    leave(ps);
    return c;
  }
  pos = ps->t.pos;
  next(ps);
  n = mk(ps, N_COND, pos);
  if (n) {
    node *a[3];
    a[0] = c;
    a[1] = binop(ps, 1);
    if (expect(ps, ":")) a[2] = expr(ps);
    if (!ps->failed) {
      n->args = args_copy(ps, a, 3);
      n->nargs = 3;
    }
  }
  leave(ps);
  return ps->failed ? NULL : n;
}

ts_rc cel__parse(const char *text, size_t len, int flags, ts_arena *arena, node **out,
                 ts_err *err) {
  parser ps;
  node *root;
  char got[64];
  memset(&ps, 0, sizeof ps);
  ps.text = text, ps.len = len, ps.arena = arena, ps.err = err, ps.flags = flags;
  *out = NULL;
  next(&ps);
  root = expr(&ps);
  if (!ps.failed && ps.t.kind != T_EOF) {
    tok_text(&ps, got, sizeof got);
    fail(&ps, ps.t.pos, "mismatched input '%s' expecting <EOF>", got);
  }
  if (ps.failed || !root) {
    if (!ps.failed) fail(&ps, 0, "empty expression");
    return err && err->code ? err->code : TS_EPARSE;
  }
  *out = root;
  return TS_OK;
}
