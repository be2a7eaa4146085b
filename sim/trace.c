/* sim/trace.c - job traces: the neutral replay format of ../shared/traces and the raw Microsoft
 * ITP cluster files, told apart by their header. Plain CSV (no quoted fields: neither format
 * has any); every error names the file, the line and the field. */
#include "sim/sim.h"

#include <jansson.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS  16
#define MAX_PODS    100000 /* per job */
#define MAX_SECONDS (INT64_C(1) << 40)
/* The longest span a run may cover: a job's submission (from the trace's start) plus its run.
 * Virtual time becomes nanoseconds after the epoch (creation timestamps, the cycle's clock);
 * 10^9 s (31 years) from 2026 stays far inside int64 nanoseconds, where 7.5e9 s did not. */
#define MAX_SPAN_S INT64_C(1000000000)

static const char *const neutral_cols[] = {"job_id",   "submit_s",     "duration_s",  "queue",
                                           "num_pods", "gpus_per_pod", "gpu_mem_gib", "priority"};
static const char *const itp_cols[] = {"job_id", "submission_time", "duration", "num_gpu"};
static const char *const openb_cols[] = {
    "name", "cpu_milli", "memory_mib",    "num_gpu",       "gpu_milli",     "gpu_spec",
    "qos",  "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
static const char *const node_cols[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};

enum { FMT_NEUTRAL, FMT_ITP, FMT_OPENB, FMT_OPENB5 }; /* openb5: the short lists (no times) */

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

/* A count or amount from lo to hi (int64). */
static ts_rc amount(rd *r, const char *field, const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  long long v;
  errno = 0;
  v = strtoll(s, &end, 10);
  if (!*s || errno || *end || v < lo || v > hi) {
    char what[80];
    snprintf(what, sizeof what, "must be an integer from %lld to %lld", (long long)lo,
             (long long)hi);
    return fail(r, field, what, s);
  }
  *out = v;
  return TS_OK;
}

/* An openb pod: one job of one pod; duration -1 when it was never deleted (set by the caller).
 * The short lists (5 columns) have no times: the pod's row is its submit time, and it never
 * ends. */
static ts_rc openb_row(rd *r, char **f, bool short_list, sim_job *j) {
  int64_t gpus, milli, created = (int64_t)r->line, deleted = -1;
  ts_rc rc;
  if ((rc = amount(r, "cpu_milli", f[1], 0, INT64_C(1) << 40, &j->cpu_milli)) ||
      (rc = amount(r, "memory_mib", f[2], 0, INT64_C(1) << 40, &j->memory_mib)) ||
      (rc = amount(r, "num_gpu", f[3], 0, 1024, &gpus)) ||
      (rc = amount(r, "gpu_milli", f[4], 0, 1000, &milli)))
    return rc;
  if (!short_list && ((rc = seconds(r, "creation_time", f[8], true, &created)) ||
                      (*f[9] && (rc = seconds(r, "deletion_time", f[9], true, &deleted)))))
    return rc;
  if (gpus > 1 && milli != 1000) return fail(r, "gpu_milli", "must be 1000 for several GPUs", f[4]);
  if (gpus && !milli) return fail(r, "gpu_milli", "must not be 0 for a GPU pod", f[4]);
  if (!gpus && milli) return fail(r, "gpu_milli", "must be 0 for a pod without GPUs", f[4]);
  if (deleted >= 0 && deleted < created)
    return fail(r, "deletion_time", "is before creation_time", f[9]);
  j->pods = 1;
  j->gpus = milli == 1000 ? (int32_t)gpus : 0;
  j->gpu_milli = milli == 1000 ? (int32_t)gpus * 1000 : (int32_t)milli;
  j->submit_s = created;
  j->duration_s = deleted < 0 ? -1 : deleted - created;
  if (!(j->queue = ts_intern_cstr(short_list ? "" : f[6])) ||
      (!short_list && *f[5] && !(j->gpu_spec = ts_intern_cstr(f[5]))))
    return ts_err_set(r->err, TS_ENOMEM, "out of memory");
  return TS_OK;
}

static ts_rc row(rd *r, char **f, int n, int fmt, const char *itp_queue, sim_job *j) {
  ts_rc rc;
  bool itp = fmt == FMT_ITP;
  int want = fmt == FMT_OPENB ? 11 : fmt == FMT_OPENB5 ? 5 : itp ? 4 : 8;
  memset(j, 0, sizeof *j);
  if (n != want) {
    char what[64];
    snprintf(what, sizeof what, "has %d fields, want %d", n, want);
    return fail(r, "row", what, f[0]);
  }
  if (!*f[0]) return fail(r, "job_id", "is required", f[0]);
  if (!(j->id = ts_strdup(f[0]))) return ts_err_set(r->err, TS_ENOMEM, "out of memory");
  if (fmt == FMT_OPENB || fmt == FMT_OPENB5) return openb_row(r, f, fmt == FMT_OPENB5, j);
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
  order_key *k;
  sim_job *tmp;
  if (!t->n) return TS_OK; /* a header alone */
  k = ts_malloc((t->n + 1) * sizeof *k);
  tmp = ts_malloc((t->n + 1) * sizeof *tmp);
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
  ts_rc rc;
  memset(out, 0, sizeof *out);
  if (!fp) return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno));
  rc = sim_trace_readf(fp, path, out, err);
  fclose(fp);
  return rc;
}

ts_rc sim_trace_readf(FILE *fp, const char *path, sim_trace *out, ts_err *err) {
  char *line = NULL, *f[MAX_FIELDS];
  size_t cap = 0, jcap = 0;
  ssize_t len;
  rd r = {path, 0, err};
  bool header = false;
  int fmt = FMT_NEUTRAL;
  int64_t first = INT64_MAX, last = 0;
  const char *itp_queue = NULL;
  ts_rc rc = TS_OK;
  memset(out, 0, sizeof *out);
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
        fmt = FMT_ITP;
        if (!(itp_queue = file_queue(path))) rc = TS_ENOMEM;
      } else if (header_is(f, n, openb_cols, 11)) {
        fmt = FMT_OPENB;
      } else if (header_is(f, n, openb_cols, 5)) {
        fmt = FMT_OPENB5;
      } else if (!header_is(f, n, neutral_cols, 8)) {
        rc = ts_err_set(
            err, TS_EPARSE,
            "%s:1: header: want job_id,submit_s,duration_s,queue,num_pods,"
            "gpus_per_pod,gpu_mem_gib,priority (neutral), job_id,submission_time,"
            "duration,num_gpu (ITP) or name,cpu_milli,memory_mib,num_gpu,gpu_milli,"
            "gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time (openb, or "
            "its first five columns)",
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
    rc = row(&r, f, n, fmt, itp_queue, &out->jobs[out->n]);
    if (rc == TS_OK || out->jobs[out->n].id) out->n++; /* freed with the trace */
    if (rc == TS_OK) {
      const sim_job *j = &out->jobs[out->n - 1];
      if (j->submit_s < first) first = j->submit_s;
      if (j->submit_s + (j->duration_s > 0 ? j->duration_s : 0) > last)
        last = j->submit_s + (j->duration_s > 0 ? j->duration_s : 0);
    }
  }
  free(line);
  if (rc == TS_OK && !header) rc = ts_err_set(err, TS_EPARSE, "%s: empty trace", path);
  if (rc == TS_OK && fmt == FMT_ITP) /* rebased to 0, as the neutral files are */
    for (size_t i = 0; i < out->n; i++) out->jobs[i].submit_s -= first;
  for (size_t i = 0; rc == TS_OK && i < out->n; i++) {
    const sim_job *j = &out->jobs[i];
    if (j->submit_s > MAX_SPAN_S || (j->duration_s > 0 && j->duration_s > MAX_SPAN_S - j->submit_s))
      rc = ts_err_set(err, TS_ERANGE,
                      "%s: job %s: submitted at %llds and running %llds ends past 10^9 s (31 "
                      "years) from the trace's start, more than a run can cover",
                      path, j->id, (long long)j->submit_s, (long long)j->duration_s);
  }
  for (size_t i = 0; rc == TS_OK && i < out->n; i++) /* openb pods never deleted: to the end */
    if (out->jobs[i].duration_s < 0) out->jobs[i].duration_s = last - out->jobs[i].submit_s;
  if (rc == TS_OK && (rc = sort_jobs(out)) != TS_OK) ts_err_set(err, rc, "out of memory");
  out->format = fmt == FMT_ITP                          ? "itp"
                : fmt == FMT_OPENB || fmt == FMT_OPENB5 ? "openb"
                                                        : "neutral";
  if (rc != TS_OK) sim_trace_free(out);
  return rc;
}

void sim_trace_free(sim_trace *t) {
  for (size_t i = 0; i < t->n; i++) ts_free(t->jobs[i].id);
  ts_free(t->jobs);
  memset(t, 0, sizeof *t);
}

ts_rc sim_nodes_read(const char *path, model *m, ts_err *err) {
  FILE *fp = fopen(path, "r");
  char *line = NULL, *f[MAX_FIELDS];
  size_t cap = 0;
  ssize_t len;
  rd r = {path, 0, err};
  ts_rc rc = TS_OK;
  ts_map rows; /* node name (owned) -> its line */
  if (!fp) return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno));
  ts_map_init(&rows);
  while (rc == TS_OK && (len = getline(&line, &cap, fp)) >= 0) {
    int64_t cpu, mem, gpus;
    uintptr_t first;
    char *name;
    char cpus[32], mib[32], g[16];
    json_t *o;
    int n;
    r.line++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
    if (!len) continue;
    n = split(line, f);
    if (r.line == 1) {
      if (!header_is(f, n, node_cols, 5))
        rc = ts_err_set(err, TS_EPARSE, "%s:1: header: want sn,cpu_milli,memory_mib,gpu,model",
                        path);
      continue;
    }
    if (n != 5) {
      rc = fail(&r, "row", "want 5 fields", line);
      break;
    }
    if ((rc = amount(&r, "cpu_milli", f[1], 1, INT64_C(1) << 40, &cpu)) ||
        (rc = amount(&r, "memory_mib", f[2], 1, INT64_C(1) << 40, &mem)) ||
        (rc = amount(&r, "gpu", f[3], 0, 1024, &gpus)))
      break;
    if ((first = (uintptr_t)ts_map_get(&rows, f[0], strlen(f[0])))) { /* once replaced the first */
      rc = ts_err_set(err, TS_EEXIST,
                      "%s:%zu: sn: node \"%.100s\" is listed again (first on line %zu)", path,
                      r.line, f[0], (size_t)first);
      break;
    }
    if (!(name = ts_strdup(f[0])) ||
        ts_map_put(&rows, name, strlen(name), (void *)(uintptr_t)r.line, NULL) != TS_OK) {
      ts_free(name);
      rc = ts_err_set(err, TS_ENOMEM, "out of memory");
      break;
    }
    snprintf(cpus, sizeof cpus, "%lldm", (long long)cpu);
    snprintf(mib, sizeof mib, "%lldMi", (long long)mem);
    snprintf(g, sizeof g, "%lld", (long long)gpus);
    o = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:{s:s, s:s, s:s, s:s}}}", "apiVersion",
                  "v1", "kind", "Node", "metadata", "name", f[0], "labels",
                  "kubernetes.io/hostname", f[0], "nvidia.com/gpu.product", f[4], "status",
                  "allocatable", "cpu", cpus, "memory", mib, "pods", "110", "nvidia.com/gpu", g);
    if (!o) {
      rc = ts_err_set(err, TS_ENOMEM, "out of memory");
      break;
    }
    rc = model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, err);
    json_decref(o);
    if (rc != TS_OK) {
      char why[TS_ERR_TEXT_MAX];
      snprintf(why, sizeof why, "%s", err->text);
      rc = ts_err_set(err, rc, "%s:%zu: %s", path, r.line, why);
    }
  }
  free(line);
  fclose(fp);
  {
    size_t it = 0;
    const ts_map_slot *sl;
    while (ts_map_next(&rows, &it, &sl)) ts_free((char *)sl->key);
    ts_map_free(&rows);
  }
  if (rc == TS_OK && r.line == 0) rc = ts_err_set(err, TS_EPARSE, "%s: empty node list", path);
  return rc;
}
