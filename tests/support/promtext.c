/* tests/support/promtext.c - Prometheus' text exposition format, checked as a scraper reads
 * it (see promtext.h). Small and for tests: families and series are kept in fixed tables. */
#include "tests/support/promtext.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FAMILIES 512
#define MAX_SERIES   8192
#define NAME_MAX_LEN 200
#define LINE_MAX_LEN 8192

typedef struct family {
  char name[NAME_MAX_LEN];
  char type[16]; /* "" until a TYPE line: untyped */
  bool help, samples;
} family;

typedef struct hist { /* one histogram series (its labels but le) */
  char key[LINE_MAX_LEN];
  double last_le, last_count, inf;
  bool has_inf;
} hist;

typedef struct checker {
  family fam[MAX_FAMILIES];
  int nfam, cur;
  char **series;
  size_t nseries;
  hist *hists;
  size_t nhists;
  int line;
  char *why;
  size_t cap;
} checker;

static bool fail(checker *c, const char *fmt, ...) {
  va_list ap;
  int n = snprintf(c->why, c->cap, "line %d: ", c->line);
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < c->cap) vsnprintf(c->why + n, c->cap - (size_t)n, fmt, ap);
  va_end(ap);
  return false;
}

static bool name_char(int ch, bool first, bool colon) {
  return isalpha(ch) || ch == '_' || (colon && ch == ':') || (!first && isdigit(ch));
}

/* Reads a metric (colon allowed) or label name at *p into out; false when none. */
static bool read_name(const char **p, char *out, size_t cap, bool colon) {
  size_t n = 0;
  if (!name_char((unsigned char)**p, true, colon)) return false;
  while (name_char((unsigned char)**p, n == 0, colon) && n + 1 < cap) out[n++] = *(*p)++;
  out[n] = '\0';
  return !name_char((unsigned char)**p, false, colon);
}

static family *family_get(checker *c, const char *name, bool create) {
  for (int i = 0; i < c->nfam; i++)
    if (!strcmp(c->fam[i].name, name)) return &c->fam[i];
  if (!create || c->nfam == MAX_FAMILIES) return NULL;
  memset(&c->fam[c->nfam], 0, sizeof c->fam[0]);
  snprintf(c->fam[c->nfam].name, NAME_MAX_LEN, "%s", name);
  return &c->fam[c->nfam++];
}

/* The family a line of `name` belongs to, made current; false when its lines are not together. */
static bool enter(checker *c, family *f) {
  int i = (int)(f - c->fam);
  if (i == c->cur) return true;
  if (f->help || f->type[0] || f->samples)
    return fail(c, "the lines of %s are not together (another family came between)", f->name);
  c->cur = i;
  return true;
}

/* The family of a sample: NAME_bucket/_sum/_count of a declared histogram, NAME_sum/_count of
 * a summary, else the name itself. */
static family *family_of(checker *c, const char *name, const char **suffix) {
  static const char *const tails[] = {"_bucket", "_sum", "_count"};
  *suffix = "";
  for (size_t t = 0; t < 3; t++) {
    size_t n = strlen(name), k = strlen(tails[t]);
    char stem[NAME_MAX_LEN];
    family *f;
    if (n <= k || strcmp(name + n - k, tails[t]) || n - k >= sizeof stem) continue;
    memcpy(stem, name, n - k), stem[n - k] = '\0';
    if ((f = family_get(c, stem, false)) &&
        (!strcmp(f->type, "histogram") || (t > 0 && !strcmp(f->type, "summary")))) {
      *suffix = tails[t];
      return f;
    }
  }
  return family_get(c, name, true);
}

static bool parse_value(const char *s, double *v) {
  char *end;
  if (!strcmp(s, "NaN")) return *v = NAN, true;
  if (!strcmp(s, "+Inf")) return *v = INFINITY, true;
  if (!strcmp(s, "-Inf")) return *v = -INFINITY, true;
  *v = strtod(s, &end);
  return end != s && *end == '\0';
}

static bool comment(checker *c, const char *p) {
  char kw[8] = "", name[NAME_MAX_LEN];
  family *f;
  if (sscanf(p, "# %7s", kw) != 1 || (strcmp(kw, "HELP") && strcmp(kw, "TYPE")))
    return true; /* any other comment */
  p += 2 + strlen(kw);
  if (*p++ != ' ' || !read_name(&p, name, sizeof name, true))
    return fail(c, "# %s without a valid metric name", kw);
  if (!(f = family_get(c, name, true))) return fail(c, "too many families");
  if (!enter(c, f)) return false;
  if (!strcmp(kw, "HELP")) {
    if (f->help) return fail(c, "a second HELP for %s", name);
    f->help = true;
    return true;
  }
  if (f->type[0]) return fail(c, "a second TYPE for %s", name);
  if (f->samples) return fail(c, "TYPE of %s after its samples", name);
  if (*p++ != ' ' || (strcmp(p, "counter") && strcmp(p, "gauge") && strcmp(p, "histogram") &&
                      strcmp(p, "summary") && strcmp(p, "untyped")))
    return fail(c, "TYPE of %s is not counter, gauge, histogram, summary or untyped", name);
  snprintf(f->type, sizeof f->type, "%s", p);
  return true;
}

/* Reads {labels} at *p: canonical text of the label set (sorted by name) into key, the value
 * of `want` (le or quantile) into wanted (NULL when absent); the rest (without want) into rest. */
static bool labels(checker *c, const char **p, char *key, char *rest, const char *want,
                   char *wanted, size_t cap) {
  char names[64][NAME_MAX_LEN], *values[64];
  int n = 0;
  bool ok = true;
  key[0] = rest[0] = '\0';
  if (wanted) wanted[0] = '\0';
  if (**p != '{') return true;
  (*p)++;
  while (ok && **p != '}') {
    char v[LINE_MAX_LEN];
    size_t k = 0;
    if (n == 64) {
      ok = fail(c, "too many labels");
      break;
    }
    if (!read_name(p, names[n], NAME_MAX_LEN, false)) {
      ok = fail(c, "a label name is not valid");
      break;
    }
    if (!strncmp(names[n], "__", 2)) ok = fail(c, "label name %s is reserved", names[n]);
    for (int i = 0; ok && i < n; i++)
      if (!strcmp(names[i], names[n])) ok = fail(c, "label %s twice", names[n]);
    if (ok && (*(*p)++ != '=' || *(*p)++ != '"')) ok = fail(c, "label %s: expected =\"", names[n]);
    for (; ok && **p != '"'; (*p)++) {
      if (!**p) {
        ok = fail(c, "label %s: the value is not closed", names[n]);
        break;
      }
      if (**p == '\\') {
        (*p)++;
        if (**p != '\\' && **p != '"' && **p != 'n') {
          ok = fail(c, "label %s: \\%c is not an escape of the format", names[n], **p);
          break;
        }
      }
      if (k + 1 < sizeof v) v[k++] = **p;
    }
    if (!ok) break;
    v[k] = '\0';
    (*p)++;
    if (!(values[n] = strdup(v))) {
      ok = fail(c, "out of memory");
      break;
    }
    n++;
    if (**p == ',')
      (*p)++;
    else if (**p != '}') {
      ok = fail(c, "expected , or } after label %s", names[n - 1]);
      break;
    }
  }
  if (ok) (*p)++;
  for (int i = 0; ok && i < n; i++) { /* canonical order: by name */
    int least = -1;
    for (int j = 0; j < n; j++)
      if (names[j][0] && (least < 0 || strcmp(names[j], names[least]) < 0)) least = j;
    if (want && !strcmp(names[least], want)) {
      if (wanted) snprintf(wanted, cap, "%s", values[least]);
    } else {
      snprintf(rest + strlen(rest), cap - strlen(rest), "%s=\"%s\",", names[least], values[least]);
    }
    snprintf(key + strlen(key), cap - strlen(key), "%s=\"%s\",", names[least], values[least]);
    names[least][0] = '\0';
  }
  for (int i = 0; i < n; i++) free(values[i]);
  return ok;
}

static hist *hist_get(checker *c, const char *key) {
  hist *h;
  for (size_t i = 0; i < c->nhists; i++)
    if (!strcmp(c->hists[i].key, key)) return &c->hists[i];
  if (!(h = realloc(c->hists, (c->nhists + 1) * sizeof *h))) return NULL;
  c->hists = h;
  h = &c->hists[c->nhists++];
  memset(h, 0, sizeof *h);
  snprintf(h->key, sizeof h->key, "%s", key);
  h->last_le = -INFINITY;
  return h;
}

static bool sample(checker *c, const char *p) {
  char name[NAME_MAX_LEN], *key = malloc(LINE_MAX_LEN), *rest = malloc(LINE_MAX_LEN),
                           *series = malloc(2 * LINE_MAX_LEN), want[64], vtext[64];
  const char *suffix;
  double v;
  family *f;
  bool ok = false;
  if (!key || !rest || !series) {
    ok = fail(c, "out of memory");
    goto done;
  }
  if (!read_name(&p, name, sizeof name, true)) {
    fail(c, "not a valid metric name");
    goto done;
  }
  if (!(f = family_of(c, name, &suffix))) {
    fail(c, "too many families");
    goto done;
  }
  if (!enter(c, f)) goto done;
  f->samples = true;
  bool hist_bucket = !strcmp(f->type, "histogram") && !strcmp(suffix, "_bucket");
  bool quantile = !strcmp(f->type, "summary") && !suffix[0];
  if (!labels(c, &p, key, rest,
              hist_bucket ? "le"
              : quantile  ? "quantile"
                          : NULL,
              want, LINE_MAX_LEN))
    goto done;
  if (*p++ != ' ' || sscanf(p, "%63s", vtext) != 1 || !parse_value(vtext, &v)) {
    fail(c, "%s: the value is not a number", name);
    goto done;
  }
  p += strlen(vtext);
  if (*p && (*p != ' ' || strspn(p + 1, "-0123456789") != strlen(p + 1) || !p[1])) {
    fail(c, "%s: text after the value that is not a timestamp", name);
    goto done;
  }
  if (!strcmp(f->type, "histogram") && !suffix[0]) {
    fail(c, "%s is a histogram: its samples are %s_bucket, _sum and _count", name, name);
    goto done;
  }
  if ((hist_bucket || quantile) && !want[0]) {
    fail(c, "%s without its %s label", name, hist_bucket ? "le" : "quantile");
    goto done;
  }
  if (!strcmp(f->type, "counter") && !(v >= 0)) {
    fail(c, "counter %s is %s", name, vtext);
    goto done;
  }
  snprintf(series, 2 * LINE_MAX_LEN, "%s{%s}", name, key);
  for (size_t i = 0; i < c->nseries; i++)
    if (!strcmp(c->series[i], series)) {
      fail(c, "series %s twice", series);
      goto done;
    }
  if (c->nseries == MAX_SERIES) {
    fail(c, "too many series");
    goto done;
  }
  if (!(c->series[c->nseries] = strdup(series))) goto done;
  c->nseries++;
  if (!strcmp(f->type, "histogram") && strcmp(suffix, "_sum")) {
    char hkey[LINE_MAX_LEN];
    double le;
    hist *h;
    snprintf(hkey, sizeof hkey, "%s{%s}", f->name, rest);
    if (!(h = hist_get(c, hkey))) goto done;
    if (hist_bucket) {
      if (!parse_value(want, &le) || isnan(le)) {
        fail(c, "%s: le=\"%s\" is not a number", name, want);
        goto done;
      }
      if (h->has_inf || le <= h->last_le || v < h->last_count) {
        fail(c, "%s: buckets not in order of le, or not cumulative", name);
        goto done;
      }
      h->last_le = le, h->last_count = v;
      if (isinf(le)) h->has_inf = true, h->inf = v;
    } else if (!h->has_inf || h->inf != v) {
      fail(c, "%s: no le=\"+Inf\" bucket before it, or it differs from the count", name);
      goto done;
    }
  }
  ok = true;
done:
  free(key), free(rest), free(series);
  return ok;
}

bool prom_text_valid(const char *text, char *why, size_t cap) {
  checker *c = calloc(1, sizeof *c);
  bool ok = true;
  if (!c || !(c->series = calloc(MAX_SERIES, sizeof *c->series))) {
    snprintf(why, cap, "out of memory");
    free(c);
    return false;
  }
  c->cur = -1, c->why = why, c->cap = cap;
  for (const char *s = text; ok && *s;) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    char line[LINE_MAX_LEN];
    c->line++;
    if (!e)
      ok = fail(c, "the last line does not end with a newline");
    else if (n >= sizeof line)
      ok = fail(c, "longer than %d bytes", LINE_MAX_LEN);
    else {
      memcpy(line, s, n), line[n] = '\0';
      if (n && line[0] == '#')
        ok = comment(c, line);
      else if (n)
        ok = sample(c, line);
    }
    s = e ? e + 1 : s + n;
  }
  for (size_t i = 0; i < c->nseries; i++) free(c->series[i]);
  free(c->series), free(c->hists), free(c);
  return ok;
}
