/* common/prom.c - Prometheus' text exposition format (ts.h): the one way /metrics families are
 * printed. Values are spelled as the Go client spells them (strconv.FormatFloat 'g', -1: the
 * shortest text that reads back to the same double), so that Tessera's and Kueue's series of
 * the same name read the same. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ts.h"

void ts_prom_printf(ts_prom *p, const char *fmt, ...) {
  va_list ap;
  if (p->rc != TS_OK) return;
  va_start(ap, fmt);
  p->rc = ts_buf_vprintf(p->b, fmt, ap);
  va_end(ap);
}

static void put(ts_prom *p, const char *s, size_t n) {
  if (p->rc == TS_OK) p->rc = ts_buf_append(p->b, s, n);
}

void ts_prom_value(ts_prom *p, double v) {
  char text[48];
  int digits = 1, exp;
  if (isnan(v)) return put(p, "NaN", 3);
  if (isinf(v)) return put(p, v > 0 ? "+Inf" : "-Inf", 4);
  for (; digits < 17; digits++) { /* the fewest significant digits that read back */
    snprintf(text, sizeof text, "%.*e", digits - 1, v);
    if (strtod(text, NULL) == v) break;
  }
  snprintf(text, sizeof text, "%.*e", digits - 1, v);
  exp = atoi(strchr(text, 'e') + 1);
  if (exp >= -4 && exp < 6) /* Go's 'g' with the shortest precision: %e outside [1e-4, 1e6) */
    snprintf(text, sizeof text, "%.*f", digits - 1 - exp > 0 ? digits - 1 - exp : 0, v);
  put(p, text, strlen(text));
}

void ts_prom_head(ts_prom *p, const ts_prom_family *f) {
  ts_prom_printf(p, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

static void escaped(ts_prom *p, const char *value) {
  const char *s = value ? value : "", *q;
  while (*(q = s + strcspn(s, "\\\"\n"))) {
    put(p, s, (size_t)(q - s));
    put(p, *q == '\\' ? "\\\\" : *q == '"' ? "\\\"" : "\\n", 2);
    s = q + 1;
  }
  put(p, s, (size_t)(q - s));
}

void ts_prom_label(ts_prom *p, const char *name, const char *value) {
  if (p->b->len) put(p, ",", 1);
  put(p, name, strlen(name));
  put(p, "=\"", 2);
  escaped(p, value);
  put(p, "\"", 1);
}

void ts_prom_sample(ts_prom *p, const ts_prom_family *f, const char *const *values, double v) {
  put(p, f->name, strlen(f->name));
  if (f->labels[0]) {
    put(p, "{", 1);
    for (int i = 0; i < TS_PROM_LABELS_MAX && f->labels[i]; i++) {
      if (i) put(p, ",", 1);
      put(p, f->labels[i], strlen(f->labels[i]));
      put(p, "=\"", 2);
      escaped(p, values ? values[i] : NULL);
      put(p, "\"", 1);
    }
    put(p, "}", 1);
  }
  put(p, " ", 1);
  ts_prom_value(p, v);
  put(p, "\n", 1);
}

void ts_prom_one(ts_prom *p, const ts_prom_family *f, double v) {
  ts_prom_head(p, f);
  ts_prom_sample(p, f, NULL, v);
}

void ts_prom_histogram(ts_prom *p, const ts_prom_family *f, const char *labels, const double *le,
                       int nle, const uint64_t *counts, uint64_t n, double sum) {
  const char *comma = *labels ? "," : "";
  uint64_t cum = 0;
  for (int k = 0; k < nle; k++) {
    cum += counts[k];
    ts_prom_printf(p, "%s_bucket{%s%sle=\"", f->name, labels, comma);
    ts_prom_value(p, le[k]);
    ts_prom_printf(p, "\"} %llu\n", (unsigned long long)cum);
  }
  ts_prom_printf(p, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", f->name, labels, comma,
                 (unsigned long long)n);
  ts_prom_printf(p, *labels ? "%s_sum{%s} " : "%s_sum%s ", f->name, labels);
  ts_prom_value(p, sum);
  ts_prom_printf(p, *labels ? "\n%s_count{%s} %llu\n" : "\n%s_count%s %llu\n", f->name, labels,
                 (unsigned long long)n);
}
