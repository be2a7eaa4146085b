/* cel/lex.c - the CEL lexer: tokens of the expression text (identifiers, reserved words,
 * numbers, strings and bytes with every escape and raw and triple-quoted forms, punctuation),
 * with errors at their line and column as cel-go words them. The parser (parse.c) drives it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/lex.h"

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

void cel__lex_fail(parser *ps, uint32_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cel__lex_fail(parser *ps, uint32_t pos, const char *fmt, ...) {
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
      cel__lex_fail(ps, start, "token recognition error at: '%.*s'",
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
      cel__lex_fail(ps, start, "token recognition error at: '%.*s'", (int)(i - start), s + start);
      ps->t.kind = T_ERROR;
      return;
    }
    if (s[i] == '\\' && !raw) {
      i++;
      if (!escape(ps, &i, ps->len, bytes, &out)) {
        ts_buf_free(&out);
        cel__lex_fail(ps, start, "token recognition error at: '%.*s'",
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
      cel__lex_fail(ps, (uint32_t)b, "invalid hex literal");
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
    if (over)
      cel__lex_fail(ps, (uint32_t)b, "invalid %s literal", ps->t.kind == T_UINT ? "uint" : "int");
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
    if (over)
      cel__lex_fail(ps, (uint32_t)b, "invalid %s literal", ps->t.kind == T_UINT ? "uint" : "int");
  }
  ps->at = i;
}

static const char *const puncts[] = {"==", "!=", "<=", ">=", "&&", "||", ".?", "[?", "<",
                                     ">",  "+",  "-",  "*",  "/",  "%",  "!",  "?",  ":",
                                     "(",  ")",  "[",  "]",  "{",  "}",  ",",  "."};

void cel__lex_next(parser *ps) {
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
  cel__lex_fail(ps, (uint32_t)ps->at, "token recognition error at: '%.*s'",
                (int)(((unsigned char)s[ps->at] & 0x80) ? 1 : 1), s + ps->at);
  ps->t.kind = T_ERROR;
  ps->at++;
}

bool cel__lex_is(const parser *ps, const char *p) {
  return ps->t.kind == T_PUNCT && ps->t.n == strlen(p) && !memcmp(ps->t.p, p, ps->t.n);
}

bool cel__lex_is_word(const parser *ps, const char *w) {
  return ps->t.kind == T_IDENT && ps->t.n == strlen(w) && !memcmp(ps->t.p, w, ps->t.n);
}

void cel__lex_tok_text(const parser *ps, char *out, size_t cap) {
  if (ps->t.kind == T_EOF)
    snprintf(out, cap, "<EOF>");
  else
    snprintf(out, cap, "%.*s", (int)(ps->t.n ? ps->t.n : 1), ps->t.p);
}

bool cel__lex_expect(parser *ps, const char *p) {
  char got[64];
  if (cel__lex_is(ps, p)) {
    cel__lex_next(ps);
    return true;
  }
  cel__lex_tok_text(ps, got, sizeof got);
  cel__lex_fail(ps, ps->t.pos, "mismatched input '%s' expecting '%s'", got, p);
  return false;
}
