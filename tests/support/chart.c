/* tests/support/chart.c - the subset of Helm's template language Tessera's chart uses; see
 * chart.h. */
#include "tests/support/chart.h"

#include <ctype.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ts.h"

/* ---- toYaml --------------------------------------------------------------------------- */

/* True when a plain scalar s would read back as something else than this string. */
static bool needs_quotes(const char *s) {
  static const char *const words[] = {"true", "false", "yes", "no",   "on",
                                      "off",  "y",     "n",   "null", "~"};
  const char *p = s;
  if (!*s || strchr("-?:,[]{}#&*!|>'\"%@` ", *s) || s[strlen(s) - 1] == ' ') return true;
  if (strstr(s, ": ") || strstr(s, " #") || strpbrk(s, "\n\t")) return true;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (!strcasecmp(s, words[i])) return true;
  if (*p == '+' || *p == '-') p++;
  if (*p == '.' || isdigit((unsigned char)*p)) { /* 12, 1.5, 1e3, .5, 0x1f: numbers */
    bool digits = false;
    int dots = 0;
    if (!strncmp(p, "0x", 2) || !strncmp(p, "0o", 2)) return true;
    for (; isdigit((unsigned char)*p) || *p == '.' || *p == '_'; p++)
      digits |= *p != '.', dots += *p == '.';
    if (dots > 1) return false; /* 0.1.0 is a string */
    if (digits && (*p == 'e' || *p == 'E')) {
      p++;
      if (*p == '+' || *p == '-') p++;
      while (isdigit((unsigned char)*p)) p++;
    }
    if (!*p && digits) return true;
  }
  return !strcasecmp(s, ".inf") || !strcasecmp(s, "-.inf") || !strcasecmp(s, ".nan");
}

static void scalar(ts_buf *b, json_t *v) {
  char num[64];
  if (json_is_string(v)) {
    if (needs_quotes(json_string_value(v)))
      ts_buf_put_json_string(b, json_string_value(v));
    else
      ts_buf_puts(b, json_string_value(v));
  } else if (json_is_integer(v)) {
    snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
    ts_buf_puts(b, num);
  } else if (json_is_real(v)) {
    snprintf(num, sizeof num, "%.17g", json_real_value(v));
    ts_buf_puts(b, num);
  } else if (json_is_boolean(v)) {
    ts_buf_puts(b, json_is_true(v) ? "true" : "false");
  } else if (json_is_object(v)) {
    ts_buf_puts(b, "{}");
  } else if (json_is_array(v)) {
    ts_buf_puts(b, "[]");
  } else {
    ts_buf_puts(b, "null");
  }
}

static bool nested(json_t *v) {
  return (json_is_object(v) && json_object_size(v)) || (json_is_array(v) && json_array_size(v));
}

static int key_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void block(ts_buf *b, json_t *v, int ind);

/* Appends text with every line indented by ind spaces. */
static void indented(ts_buf *b, const char *text, int ind) {
  bool start = true;
  for (const char *p = text; *p; p++) {
    if (start) {
      for (int i = 0; i < ind; i++) ts_buf_putc(b, ' ');
      start = false;
    }
    ts_buf_putc(b, *p);
    start = *p == '\n';
  }
}

/* A nested map or sequence as lines at indentation ind, each ending in a newline. */
static void block(ts_buf *b, json_t *v, int ind) {
  if (json_is_object(v)) {
    size_t n = 0, i = 0;
    const char **keys = malloc((json_object_size(v) + 1) * sizeof *keys);
    const char *k;
    json_t *x;
    json_object_foreach(v, k, x) keys[n++] = k;
    qsort(keys, n, sizeof *keys, key_cmp);
    for (i = 0; i < n; i++) {
      json_t *val = json_object_get(v, keys[i]);
      json_t *key = json_string(keys[i]);
      for (int s = 0; s < ind; s++) ts_buf_putc(b, ' ');
      scalar(b, key);
      json_decref(key);
      ts_buf_putc(b, ':');
      if (nested(val)) {
        ts_buf_putc(b, '\n');
        block(b, val, json_is_array(val) ? ind : ind + 2); /* sequences at the key's column */
      } else {
        ts_buf_putc(b, ' ');
        scalar(b, val);
        ts_buf_putc(b, '\n');
      }
    }
    free(keys);
    return;
  }
  for (size_t i = 0; i < json_array_size(v); i++) {
    json_t *item = json_array_get(v, i);
    ts_buf inner;
    ts_buf_init(&inner, 0);
    if (nested(item))
      block(&inner, item, 0);
    else
      scalar(&inner, item), ts_buf_putc(&inner, '\n');
    /* "- " then the item's first line; its later lines two further in */
    for (int s = 0; s < ind; s++) ts_buf_putc(b, ' ');
    ts_buf_puts(b, "- ");
    {
      const char *nl = strchr(inner.data, '\n');
      size_t first = nl ? (size_t)(nl - inner.data) + 1 : strlen(inner.data);
      ts_buf_append(b, inner.data, first);
      indented(b, inner.data + first, ind + 2);
    }
    ts_buf_free(&inner);
  }
}

char *chart_to_yaml(json_t *v) {
  ts_buf b;
  ts_buf_init(&b, 0);
  if (nested(v))
    block(&b, v, 0);
  else
    scalar(&b, v);
  while (b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = '\0';
  return ts_buf_steal(&b);
}

/* ---- templates ------------------------------------------------------------------------ */

typedef struct rctx {
  const char *s;  /* the template */
  size_t pos;     /* where rendering is */
  size_t end_at;  /* where the last {{ end }} or {{ else }} began */
  chart_env *env; /* what templates see */
  json_t *root;   /* $: {Values, Release, Chart} */
  ts_buf out;     /* the result */
  char *why;      /* the first problem */
  size_t cap;     /* its capacity */
  bool failed;    /* a problem was found */
  int depth;      /* include nesting */
} rctx;

static void fail(rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(rctx *c, const char *fmt, ...) {
  va_list ap;
  if (c->failed) return;
  c->failed = true;
  va_start(ap, fmt);
  vsnprintf(c->why, c->cap, fmt, ap);
  va_end(ap);
}

/* A value in a pipeline: JSON (borrowed) or text (owned). */
typedef struct val {
  json_t *j;
  char *s;
} val;

/* A quoted literal "x" into out (the quotes gone); false when term is not one. */
static bool literal(const char *term, char *out, size_t cap) {
  size_t n = strlen(term);
  if (n < 2 || term[0] != '"' || term[n - 1] != '"') return false;
  snprintf(out, cap, "%.*s", (int)(n - 2), term + 1);
  return true;
}

/* .Values.a.b, .Release.X, .Chart.X, $.…, $ or . (dot); NULL when absent. */
static json_t *lookup(rctx *c, const char *term, json_t *dot) {
  char buf[256];
  json_t *v;
  char *save = NULL, *part;
  if (!strcmp(term, ".")) return dot;
  if (!strcmp(term, "$")) return c->root;
  if (term[0] == '$') term++;
  if (strncmp(term, ".Values", 7) && strncmp(term, ".Release", 8) && strncmp(term, ".Chart", 6)) {
    fail(c, "unsupported term \"%s\"", term);
    return NULL;
  }
  snprintf(buf, sizeof buf, "%s", term + 1);
  part = strtok_r(buf, ".", &save);
  v = json_object_get(c->root, part);
  while (v && (part = strtok_r(NULL, ".", &save))) v = json_object_get(v, part);
  return v;
}

static bool truthy(json_t *v) {
  if (!v || json_is_null(v) || json_is_false(v)) return false;
  if (json_is_string(v)) return *json_string_value(v);
  if (json_is_integer(v)) return json_integer_value(v) != 0;
  if (json_is_object(v)) return json_object_size(v) > 0;
  if (json_is_array(v)) return json_array_size(v) > 0;
  return true;
}

static char *text_of(rctx *c, val v, const char *what) {
  ts_buf b;
  if (v.s) return v.s;
  if (!v.j) {
    fail(c, "%s: no value", what);
    return NULL;
  }
  if (json_is_string(v.j)) return strdup(json_string_value(v.j));
  ts_buf_init(&b, 0);
  scalar(&b, v.j);
  return ts_buf_steal(&b);
}

static int render(rctx *c, json_t *dot, bool emit);

/* The body of define name rendered with dot (new text), or NULL. */
static char *include(rctx *c, const char *name, json_t *dot) {
  json_t *body = json_object_get(c->env->defines, name);
  rctx sub;
  if (!body) {
    fail(c, "include \"%s\": no such define", name);
    return NULL;
  }
  if (c->depth > 16) {
    fail(c, "include \"%s\": nested too deep", name);
    return NULL;
  }
  sub = *c;
  sub.s = json_string_value(body), sub.pos = 0, sub.depth = c->depth + 1;
  ts_buf_init(&sub.out, 0);
  if (render(&sub, dot, true) != 0 && !sub.failed) fail(&sub, "define \"%s\": stray end", name);
  if (sub.failed) {
    c->failed = true;
    ts_buf_free(&sub.out);
    return NULL;
  }
  return ts_buf_steal(&sub.out);
}

/* .Files.Get "path": the file of the chart (new text), or NULL. */
static char *file_get(rctx *c, const char *path) {
  char full[600];
  FILE *f;
  ts_buf b;
  int ch;
  if (strstr(path, "..")) {
    fail(c, ".Files.Get \"%s\": outside the chart", path);
    return NULL;
  }
  snprintf(full, sizeof full, "%s/%s", c->env->dir ? c->env->dir : ".", path);
  if (!(f = fopen(full, "r"))) {
    fail(c, ".Files.Get \"%s\": not found", path);
    return NULL;
  }
  ts_buf_init(&b, 0);
  while ((ch = fgetc(f)) != EOF) ts_buf_putc(&b, (char)ch);
  fclose(f);
  return ts_buf_steal(&b);
}

/* Evaluates a pipeline ("toYaml .Values.x | nindent 4") to text; NULL on a problem. */
static char *pipeline(rctx *c, const char *expr, json_t *dot) {
  char buf[512], *save = NULL, *cmd;
  val v = {0};
  bool first = true;
  snprintf(buf, sizeof buf, "%s", expr);
  for (cmd = strtok_r(buf, "|", &save); cmd && !c->failed; cmd = strtok_r(NULL, "|", &save)) {
    char fn[64] = "", arg[256] = "", arg2[256] = "", lit[256];
    int n = sscanf(cmd, " %63s %255s %255s", fn, arg, arg2);
    if (first && (fn[0] == '.' || fn[0] == '$') && strcmp(fn, ".Files.Get") && n == 1) {
      v.j = lookup(c, fn, dot);
      if (!v.j && !c->failed) fail(c, "%s: no value", fn);
    } else if (first && n == 1 && literal(fn, lit, sizeof lit)) {
      v.s = strdup(lit);
    } else if (first && !strcmp(fn, "include") && n == 3 && literal(arg, lit, sizeof lit)) {
      json_t *d = lookup(c, arg2, dot);
      if (!c->failed) v.s = include(c, lit, d);
    } else if (first && !strcmp(fn, ".Files.Get") && n == 2 && literal(arg, lit, sizeof lit)) {
      v.s = file_get(c, lit);
    } else if (!strcmp(fn, "default") && !first && n == 2) { /* the value, else arg */
      bool empty = v.s ? !*v.s : !truthy(v.j);
      if (empty) {
        free(v.s), v.s = NULL, v.j = NULL;
        if (literal(arg, lit, sizeof lit))
          v.s = strdup(lit);
        else if (!(v.j = lookup(c, arg, dot)) && !c->failed)
          fail(c, "default %s: no value", arg);
      }
    } else if (!strcmp(fn, "toYaml")) {
      json_t *j = first ? (n == 2 ? lookup(c, arg, dot) : NULL) : v.j;
      if (!j || v.s) {
        fail(c, "toYaml: %s", v.s ? "takes a value, not text" : "no value");
        break;
      }
      v.s = chart_to_yaml(j), v.j = NULL;
    } else if ((!strcmp(fn, "indent") || !strcmp(fn, "nindent")) && !first && n == 2) {
      char *t = text_of(c, v, fn);
      ts_buf b;
      if (!t) break;
      ts_buf_init(&b, 0);
      if (fn[0] == 'n') ts_buf_putc(&b, '\n');
      indented(&b, t, atoi(arg));
      if (t != v.s) free(t);
      free(v.s);
      v.s = ts_buf_steal(&b), v.j = NULL;
    } else if (!strcmp(fn, "sha256sum") && !first && n == 1) {
      char *t = text_of(c, v, fn), hex[65];
      unsigned char d[SHA256_DIGEST_LENGTH];
      if (!t) break;
      SHA256((const unsigned char *)t, strlen(t), d);
      for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
      if (t != v.s) free(t);
      free(v.s);
      v.s = strdup(hex), v.j = NULL;
    } else if (!strcmp(fn, "quote") && !first && n == 1) {
      char *t = text_of(c, v, fn);
      ts_buf b;
      if (!t) break;
      ts_buf_init(&b, 0);
      ts_buf_put_json_string(&b, t);
      if (t != v.s) free(t);
      free(v.s);
      v.s = ts_buf_steal(&b), v.j = NULL;
    } else {
      fail(c, "unsupported command \"%s\" in {{ %s }}", cmd, expr);
    }
    first = false;
  }
  if (c->failed) {
    free(v.s);
    return NULL;
  }
  return text_of(c, v, expr);
}

/* A term's text for eq: a literal, or a value's scalar text ("" when absent). */
static char *eq_text(rctx *c, const char *term, json_t *dot) {
  char lit[256];
  json_t *j;
  ts_buf b;
  if (literal(term, lit, sizeof lit)) return strdup(lit);
  if (!(j = lookup(c, term, dot))) return strdup("");
  if (json_is_string(j)) return strdup(json_string_value(j));
  ts_buf_init(&b, 0);
  scalar(&b, j);
  return ts_buf_steal(&b);
}

/* An if's or with's condition: X, not X, eq A B. */
static bool condition(rctx *c, const char *expr, json_t *dot, json_t **value) {
  char a[256] = "", b[256] = "", op[16] = "";
  bool negate = false;
  *value = NULL;
  while (*expr == ' ') expr++;
  if (!strncmp(expr, "not ", 4)) /* Helm's `not`: the condition's opposite */
    for (negate = true, expr += 4; *expr == ' ';) expr++;
  if (sscanf(expr, "%15s %255s %255s", op, a, b) == 3 && !strcmp(op, "eq") && !negate) {
    char *x = eq_text(c, a, dot), *y = eq_text(c, b, dot);
    bool same = x && y && !strcmp(x, y);
    free(x), free(y);
    return same;
  }
  if (strchr(expr, '|') || strchr(expr, ' ')) {
    fail(c, "unsupported condition \"%s\"", expr);
    return false;
  }
  *value = lookup(c, expr, dot);
  return truthy(*value) != negate;
}

/* Renders from c->pos until `{{ end }}` (returns 1), `{{ else }}` (2) or the end of the text
 * (0); emit false skips the text and actions (a false if, an empty with). */
static int render(rctx *c, json_t *dot, bool emit) {
  while (!c->failed) {
    const char *open = strstr(c->s + c->pos, "{{"), *close, *a, *z;
    size_t tlen = open ? (size_t)(open - (c->s + c->pos)) : strlen(c->s + c->pos);
    char inner[512];
    bool trim_left, trim_right;
    if (!open) {
      if (emit) ts_buf_append(&c->out, c->s + c->pos, tlen);
      c->pos += tlen;
      return 0;
    }
    if (!(close = strstr(open + 2, "}}"))) {
      fail(c, "an action without }}");
      return -1;
    }
    trim_left = open[2] == '-', trim_right = close[-1] == '-';
    if (trim_left) /* the text before loses its trailing white space */
      while (tlen && isspace((unsigned char)c->s[c->pos + tlen - 1])) tlen--;
    if (emit) ts_buf_append(&c->out, c->s + c->pos, tlen);
    a = open + 2 + trim_left, z = close - trim_right;
    while (a < z && isspace((unsigned char)*a)) a++;
    while (z > a && isspace((unsigned char)z[-1])) z--;
    snprintf(inner, sizeof inner, "%.*s", (int)(z - a), a);
    c->end_at = (size_t)(open - c->s);
    c->pos = (size_t)(close + 2 - c->s);
    if (trim_right)
      while (isspace((unsigned char)c->s[c->pos])) c->pos++;
    if (!strncmp(inner, "/*", 2)) continue; /* a comment */
    if (!strcmp(inner, "end")) return 1;
    if (!strcmp(inner, "else")) return 2;
    if (!strncmp(inner, "define ", 7)) { /* its body, kept for include; renders nothing */
      char name[256] = "", lit[256];
      size_t from = c->pos;
      sscanf(inner + 7, " %255s", name);
      if (!literal(name, lit, sizeof lit)) {
        fail(c, "define %s: the name is a quoted string", name);
        return -1;
      }
      if (render(c, dot, false) != 1) {
        fail(c, "{{ %s }} without {{ end }}", inner);
        return -1;
      }
      {
        size_t to = c->end_at; /* {{- end }} eats the white space before it */
        if (c->s[to + 2] == '-')
          while (to > from && isspace((unsigned char)c->s[to - 1])) to--;
        json_object_set_new(c->env->defines, lit, json_stringn(c->s + from, to - from));
      }
      continue;
    }
    if (!strncmp(inner, "if ", 3) || !strncmp(inner, "with ", 5)) {
      bool with = inner[0] == 'w', yes = false;
      json_t *v = NULL;
      int r;
      if (emit) yes = condition(c, inner + (with ? 5 : 3), dot, &v);
      if (with && emit && strncmp(inner + 5, "not ", 4) == 0) {
        fail(c, "unsupported condition \"%s\"", inner);
        return -1;
      }
      r = render(c, with && yes ? v : dot, emit && yes);
      if (r == 2) r = render(c, dot, emit && !yes); /* the else branch */
      if (r != 1) {
        fail(c, "{{ %s }} without {{ end }}", inner);
        return -1;
      }
      continue;
    }
    if (emit) {
      char *t = pipeline(c, inner, dot);
      if (!t) return -1;
      ts_buf_puts(&c->out, t);
      free(t);
    }
  }
  return -1;
}

char *chart_render(const char *text, chart_env *env, char *why, size_t cap) {
  rctx c = {.s = text, .env = env, .why = why, .cap = cap};
  int r;
  c.root = json_pack("{s:O, s:O, s:o}", "Values", env->values, "Release", env->release, "Chart",
                     env->chart ? json_incref(env->chart) : json_object());
  ts_buf_init(&c.out, 0);
  r = render(&c, c.root, true);
  if (r == 1 && !c.failed) fail(&c, "{{ end }} without {{ if }} or {{ with }}");
  if (r == 2 && !c.failed) fail(&c, "{{ else }} without {{ if }} or {{ with }}");
  json_decref(c.root);
  if (c.failed) {
    ts_buf_free(&c.out);
    return NULL;
  }
  return ts_buf_steal(&c.out);
}
