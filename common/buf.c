/* common/buf.c - growable, capped, always NUL-terminated byte buffers. */
#include "ts.h"

#include <stdio.h>
#include <string.h>

void ts_buf_init(ts_buf *b, size_t max) {
  b->data = NULL;
  b->len = b->cap = 0;
  b->max = max ? max : TS_BUF_DEFAULT_MAX;
}

static ts_rc reserve(ts_buf *b, size_t extra) {
  size_t need, ncap;
  char *nd;
  if (extra > b->max || b->len > b->max - extra) return TS_ELIMIT;
  need = b->len + extra + 1;
  if (need <= b->cap) return TS_OK;
  ncap = b->cap ? b->cap : 64;
  while (ncap < need) ncap *= 2;
  nd = ts_realloc(b->data, ncap);
  if (!nd) return TS_ENOMEM;
  b->data = nd;
  b->cap = ncap;
  return TS_OK;
}

ts_rc ts_buf_append(ts_buf *b, const void *p, size_t n) {
  ts_rc rc = reserve(b, n);
  if (rc != TS_OK) return rc;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return TS_OK;
}

ts_rc ts_buf_puts(ts_buf *b, const char *s) {
  return ts_buf_append(b, s, strlen(s));
}

ts_rc ts_buf_putc(ts_buf *b, char c) {
  return ts_buf_append(b, &c, 1);
}

ts_rc ts_buf_vprintf(ts_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  int n;
  ts_rc rc;
  va_copy(ap2, ap);
  n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return TS_EINVAL;
  rc = reserve(b, (size_t)n);
  if (rc != TS_OK) return rc;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return TS_OK;
}

ts_rc ts_buf_printf(ts_buf *b, const char *fmt, ...) {
  va_list ap;
  ts_rc rc;
  va_start(ap, fmt);
  rc = ts_buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

void ts_buf_reset(ts_buf *b) {
  b->len = 0;
  if (b->data) b->data[0] = '\0';
}

void ts_buf_free(ts_buf *b) {
  ts_free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

char *ts_buf_steal(ts_buf *b) {
  char *d = b->data;
  if (!d) d = ts_strdup("");
  b->data = NULL;
  b->len = b->cap = 0;
  return d;
}

ts_rc ts_buf_put_json_string(ts_buf *b, const char *s) {
  ts_rc rc = ts_buf_putc(b, '"');
  for (; rc == TS_OK && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      rc = ts_buf_append(b, esc, 2);
    } else if (c == '\n') {
      rc = ts_buf_puts(b, "\\n");
    } else if (c == '\t') {
      rc = ts_buf_puts(b, "\\t");
    } else if (c == '\r') {
      rc = ts_buf_puts(b, "\\r");
    } else if (c < 0x20) {
      rc = ts_buf_printf(b, "\\u%04x", c);
    } else {
      rc = ts_buf_putc(b, (char)c);
    }
  }
  return rc == TS_OK ? ts_buf_putc(b, '"') : rc;
}

size_t ts_strlcpy(char *dst, const char *src, size_t cap) {
  size_t n = strlen(src);
  if (cap) {
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(dst, src, k);
    dst[k] = '\0';
  }
  return n;
}

char *ts_arena_printf(ts_arena *a, const char *fmt, ...) {
  va_list ap, again;
  char *d = NULL;
  int n;
  va_start(ap, fmt);
  va_copy(again, ap);
  n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0 && (d = ts_arena_alloc(a, (size_t)n + 1))) vsnprintf(d, (size_t)n + 1, fmt, again);
  va_end(again);
  va_end(ap);
  return d;
}
