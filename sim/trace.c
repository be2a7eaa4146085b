/* sim/trace.c - job traces: the neutral replay format of ../shared/traces and the raw Microsoft
 * ITP cluster files, told apart by their header. Plain CSV (no quoted fields: neither format
 * has any); every error names the file, the line and the field. */
#include "sim/sim.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS  16
#define MAX_PODS    100000 /* per job */
#define MAX_SECONDS (INT64_C(1) << 40)

static const char *const neutral_cols[] = {"job_id",   "submit_s",     "duration_s",  "queue",
                                           "num_pods", "gpus_per_pod", "gpu_mem_gib", "priority"};
static const char *const itp_cols[] = {"job_id", "submission_time", "duration", "num_gpu"};

typedef struct rd {
  const char *path;
  size_t line;
  ts_err *err;
} rd;

/* Splits line (modified) at commas into f; returns the count, or -1 when there are too many. */
static int split(char *line, char **f) {
  int n = 0;
  for (char *p = line;; p++) {
    if (n == MAX_FIELDS) return -1;
    f[n++] = p;
    p = strchr(p, ',');
    if (!p) break;
    *p = 0;
  }
  return n;
}

static ts_rc fail(rd *r, const char *field, const char *what, const char *value) {
  return ts_err_set(r->err, TS_EPARSE, "%s:%zu: %s: %s \"%.40s\"", r->path, r->line, field, what,
                    value);
}

/* A whole number of seconds (a decimal point with zeros after it is allowed). */
static ts_rc seconds(rd *r, const char *field, const char *s, bool required, int64_t *out) {
  char *end;
  double v;
  *out = 0;
  if (!*s) return required ? fail(r, field, "is required", s) : TS_OK;
  errno = 0;
  v = strtod(s, &end);
  if (errno || *end || !isfinite(v) || v < 0 || v >= (double)MAX_SECONDS)
    return fail(r, field, "must be a number of seconds from 0 to 2^40", s);
  *out = (int64_t)llround(v);
  return TS_OK;
}

static ts_rc integer(rd *r, const char *field, const char *s, long lo, long hi, int32_t *out) {
  char *end;
  long v;
  errno = 0;
  v = strtol(s, &end, 10);
  if (!*s || errno || *end || v < lo || v > hi) {
    char what[64];
    snprintf(what, sizeof what, "must be an integer from %ld to %ld", lo, hi);
    return fail(r, field, what, s);
  }
  *out = (int32_t)v;
  return TS_OK;
}

/* GPUs per pod: whole GPUs, or a share of one (0 < g < 1, to the thousandth). */
static ts_rc gpus(rd *r, const char *field, const char *s, sim_job *j) {
  char *end;
  double v;
  errno = 0;
  v = *s ? strtod(s, &end) : 0;
  if (*s && (errno || *end || !isfinite(v) || v < 0 || v > 1024))
    return fail(r, field, "must be a number of GPUs from 0 to 1024", s);
  if (v > 1 && v != floor(v)) return fail(r, field, "above 1 GPU must be whole GPUs", s);
  j->gpu_milli = (int32_t)llround(v * 1000);
  j->gpus = v >= 1 ? (int32_t)v : 0;
  if (v > 0 && j->gpu_milli == 0) return fail(r, field, "is less than a thousandth of a GPU", s);
  return TS_OK;
}

static bool header_is(char **f, int n, const char *const *cols, int ncols) {
  if (n != ncols) return false;
  for (int i = 0; i < n; i++)
    if (strcmp(f[i], cols[i])) return false;
  return true;
}

static const char *file_queue(const char *path) { /* "cluster04" of ".../cluster04.csv" */
  const char *base = strrchr(path, '/');
  char buf[256];
  size_t n;
  base = base ? base + 1 : path;
  n = strcspn(base, ".");
  snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), base);
  return ts_intern_cstr(buf);
}

static ts_rc row(rd *r, char **f, int n, bool itp, const char *itp_queue, sim_job *j) {
  ts_rc rc;
  int want = itp ? 4 : 8;
  memset(j, 0, sizeof *j);
  if (n != want) {
    char what[64];
    snprintf(what, sizeof what, "has %d fields, want %d", n, want);
    return fail(r, "row", what, f[0]);
  }
  if (!*f[0]) return fail(r, "job_id", "is required", f[0]);
  if (!(j->id = ts_strdup(f[0]))) return ts_err_set(r->err, TS_ENOMEM, "out of memory");
  if (itp) {
    int32_t g;
    if ((rc = seconds(r, "submission_time", f[1], true, &j->submit_s)) ||
        (rc = seconds(r, "duration", f[2], true, &j->duration_s)) ||
        (rc = integer(r, "num_gpu", f[3], 1, 8 * MAX_PODS, &g)))
      return rc;
    j->queue = itp_queue;
    j->pods = g <= 8 ? 1 : (g + 7) / 8; /* ElasticFlow's 8-GPU nodes */
    j->gpus = g <= 8 ? g : 8;
    j->gpu_milli = j->gpus * 1000;
    return TS_OK;
  }
  if ((rc = seconds(r, "submit_s", f[1], true, &j->submit_s)) ||
      (rc = seconds(r, "duration_s", f[2], true, &j->duration_s)))
    return rc;
  if (strlen(f[3]) > 63) return fail(r, "queue", "is longer than 63 characters", f[3]);
  if (!(j->queue = ts_intern_cstr(f[3]))) return ts_err_set(r->err, TS_ENOMEM, "out of memory");
  j->pods = 1;
  if (*f[4] && (rc = integer(r, "num_pods", f[4], 1, MAX_PODS, &j->pods))) return rc;
  if ((rc = gpus(r, "gpus_per_pod", f[5], j))) return rc;
  if (*f[7]) {
    if ((rc = integer(r, "priority", f[7], -2147483647L - 1, 1000000000L, &j->priority))) return rc;
    j->has_priority = true;
  }
  return TS_OK;
}

typedef struct order_key {
  int64_t submit_s;
  size_t at; /* trace order */
} order_key;

static int key_cmp(const void *a, const void *b) {
  const order_key *x = a, *y = b;
  if (x->submit_s != y->submit_s) return x->submit_s < y->submit_s ? -1 : 1;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* By submit time, equal times in the trace's order. */
static ts_rc sort_jobs(sim_trace *t) {
  order_key *k = ts_malloc((t->n + 1) * sizeof *k);
  sim_job *tmp = ts_malloc((t->n + 1) * sizeof *tmp);
  if (!k || !tmp) {
    ts_free(k);
    ts_free(tmp);
    return TS_ENOMEM;
  }
  for (size_t i = 0; i < t->n; i++) k[i] = (order_key){t->jobs[i].submit_s, i};
  qsort(k, t->n, sizeof *k, key_cmp);
  for (size_t i = 0; i < t->n; i++) tmp[i] = t->jobs[k[i].at];
  memcpy(t->jobs, tmp, t->n * sizeof *tmp);
  ts_free(k);
  ts_free(tmp);
  return TS_OK;
}

ts_rc sim_trace_read(const char *path, sim_trace *out, ts_err *err) {
  FILE *fp = fopen(path, "r");
  char *line = NULL, *f[MAX_FIELDS];
  size_t cap = 0, jcap = 0;
  ssize_t len;
  rd r = {path, 0, err};
  bool itp = false, header = false;
  int64_t first = INT64_MAX;
  const char *itp_queue = NULL;
  ts_rc rc = TS_OK;
  memset(out, 0, sizeof *out);
  if (!fp) return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno));
  while (rc == TS_OK && (len = getline(&line, &cap, fp)) >= 0) {
    int n;
    r.line++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (!len) continue;
    if (strchr(line, '"')) {
      rc = fail(&r, "row", "has a quoted field, which neither trace format uses", line);
      break;
    }
    if ((n = split(line, f)) < 0) {
      rc = fail(&r, "row", "has too many fields", line);
      break;
    }
    if (!header) {
      header = true;
      if (header_is(f, n, itp_cols, 4)) {
        itp = true;
        if (!(itp_queue = file_queue(path))) rc = TS_ENOMEM;
      } else if (!header_is(f, n, neutral_cols, 8)) {
        rc = ts_err_set(err, TS_EPARSE,
                        "%s:1: header: want job_id,submit_s,duration_s,queue,num_pods,"
                        "gpus_per_pod,gpu_mem_gib,priority (neutral) or job_id,submission_time,"
                        "duration,num_gpu (ITP)",
                        path);
      }
      continue;
    }
    if (out->n == jcap) {
      size_t ncap = jcap ? jcap * 2 : 1024;
      sim_job *nj = ts_realloc(out->jobs, ncap * sizeof *nj);
      if (!nj) {
        rc = ts_err_set(err, TS_ENOMEM, "out of memory");
        break;
      }
      out->jobs = nj, jcap = ncap;
    }
    rc = row(&r, f, n, itp, itp_queue, &out->jobs[out->n]);
    if (rc == TS_OK || out->jobs[out->n].id) out->n++; /* freed with the trace */
    if (rc == TS_OK && out->jobs[out->n - 1].submit_s < first)
      first = out->jobs[out->n - 1].submit_s;
  }
  free(line);
  fclose(fp);
  if (rc == TS_OK && !header) rc = ts_err_set(err, TS_EPARSE, "%s: empty trace", path);
  if (rc == TS_OK && itp) /* rebased to 0, as the neutral files are */
    for (size_t i = 0; i < out->n; i++) out->jobs[i].submit_s -= first;
  if (rc == TS_OK && (rc = sort_jobs(out)) != TS_OK) ts_err_set(err, rc, "out of memory");
  out->format = itp ? "itp" : "neutral";
  if (rc != TS_OK) sim_trace_free(out);
  return rc;
}

void sim_trace_free(sim_trace *t) {
  for (size_t i = 0; i < t->n; i++) ts_free(t->jobs[i].id);
  ts_free(t->jobs);
  memset(t, 0, sizeof *t);
}
