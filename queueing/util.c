/* queueing/util.c - small helpers of the queueing module: sentences in the cycle arena and a
 * stable merge sort that takes a context. */
#include "queueing/q_int.h"

#include <stdio.h>
#include <string.h>

static bool gpu_milli(const model_resources *t, int id) {
  const char *name = id >= MODEL_RES_FIRST_OTHER ? model_resource_name(t, id) : NULL;
  return name && !strcmp(name, "nvidia.com/gpu");
}

int64_t q_scale(const model_resources *t, int id) {
  return gpu_milli(t, id) ? 1000 : 1;
}

ts_rc q_amount(const model_resources *t, int id, const ts_quantity *q, int64_t *out) {
  return gpu_milli(t, id) ? ts_quantity_milli(q, out) : model_resource_amount(id, q, out);
}

void q_format(const model_resources *t, int id, int64_t amount, char *out) {
  ts_quantity q;
  if (!gpu_milli(t, id)) {
    model_resource_format(t, id, amount, out);
    return;
  }
  q = ts_quantity_from_milli(amount, TS_QFMT_DECIMAL_SI);
  ts_quantity_format(&q, out);
}

const char *q__msg(q__ctx *c, const char *fmt, ...) {
  char buf[Q__MSG_MAX * 4];
  char *s;
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return "";
  if ((size_t)n >= sizeof buf) n = (int)sizeof buf - 1;
  s = ts_arena_strndup(c->arena, buf, (size_t)n);
  return s ? s : "";
}

/* Merges the sorted runs a[0..na) and b[0..nb) into out. */
static void merge(char *out, const char *a, size_t na, const char *b, size_t nb, size_t size,
                  q__cmp_fn cmp, const void *ctx) {
  while (na && nb) {
    if (cmp(b, a, ctx) < 0) {
      memcpy(out, b, size), b += size, nb--;
    } else {
      memcpy(out, a, size), a += size, na--;
    }
    out += size;
  }
  if (na) memcpy(out, a, na * size);
  if (nb) memcpy(out, b, nb * size);
}

void q__sort(void *base, size_t n, size_t size, q__cmp_fn cmp, const void *ctx, void *tmp) {
  char *v = base, *w = tmp;
  /* Bottom-up: runs of width 1, 2, 4, ... alternate between v and w. */
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      merge(w + lo * size, v + lo * size, mid - lo, v + mid * size, hi - mid, size, cmp, ctx);
    }
    char *x = v;
    v = w, w = x;
  }
  if (v != base) memcpy(base, v, n * size);
}

void *q__scratch(q__ctx *c, size_t n) {
  void *p;
  if (n <= c->scratch_size) return c->scratch;
  if (n < 2 * c->scratch_size) n = 2 * c->scratch_size;
  if (!(p = ts_realloc(c->scratch, n))) return NULL;
  c->scratch = p, c->scratch_size = n;
  return p;
}
