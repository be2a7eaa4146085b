/* cmd/simulate.c - `tessera simulate`: a job trace through the real cycle in virtual time
 * (sim/sim.h), on a cluster of identical GPU nodes (--nodes) or one loaded from manifests or a
 * snapshot (--cluster), with Kueue (or Volcano, KAI) queues from --queues. Prints a summary
 * (text or JSON) and writes the timeline and per-queue figures to --report DIR. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "sim/sim.h"

#define DAY_S     86400
#define EPOCH_NS  INT64_C(1767225600000000000) /* 2026-01-01T00:00:00Z: the trace's second 0 */
#define MAX_NODES 100000

#define MAX_CONFIGS 4 /* --config given more than once: compared side by side */

typedef struct sim_args {
  const char *trace, *cluster, *config, *queues, *report;
  const char *configs[MAX_CONFIGS]; /* every --config (config: the first) */
  int nconfigs;                     /* entries */
  int nodes, gpus;                  /* --nodes NxG */
  const char *model;                /* --nodes NxG:MODEL */
  const char *node_list;            /* --nodes FILE.csv */
  int64_t until_s;
  uint64_t seed;             /* --seed: fill mode's order */
  uint64_t seed_lo, seed_hi; /* --seeds: each of them (0, 0: one run) */
  bool resume, json, fill, predict;
  cmd_format fmt; /* -o: json or yaml when json is set */
  int policy;     /* --policy: a sched_scoring, -1 (the configuration's) or POLICY_ALL */
} sim_args;

#define POLICY_ALL SCHED_SCORING_COUNT

static void usage(FILE *out) {
  fputs(
      "usage: tessera simulate --trace FILE.csv (--nodes NxG[:MODEL]|FILE.csv | --cluster PATH)\n"
      "                        [--queues PATH] [--config FILE...] [--until T] [--resume]\n"
      "                        [--fill [--seed N | --seeds N|A-B]] [--policy NAME|all]\n"
      "                        [-o text|json|yaml] [--report DIR]\n"
      "  --trace    neutral replay format, a raw Microsoft ITP cluster file or an openb pod list\n"
      "  --nodes    N nodes of G GPUs (nvidia.com/gpu), labelled nvidia.com/gpu.product=MODEL,\n"
      "             or an openb node list (sn,cpu_milli,memory_mib,gpu,model)\n"
      "  --cluster  nodes (and anything else) from manifests or a `tessera snapshot` file\n"
      "  --queues   Kueue, Volcano or KAI queue objects; a job of trace queue Q runs in\n"
      "             namespace Q and names that namespace's first LocalQueue\n"
      "  --until    stop at this virtual time (seconds, or with s, m, h, d)\n"
      "  --resume   a preempted job keeps the run time it had (default: it starts again)\n"
      "  --predict  estimate each job's start when it is submitted, as tessera explain does\n"
      "             (its run time known, as a user who gives it): the error against its start\n"
      "  --report   writes DIR/report.html, summary.json, timeline.csv, queues.csv, jobs.csv\n"
      "             (fill mode: report.html, fill.json, fill.csv); runs side by side (--policy\n"
      "             all, two --config, --seeds): DIR/index.html compares them, each run's\n"
      "             report in a directory of its name\n"
      "  --fill     the FGD paper's fill mode: jobs in trace order (--seed N: shuffled), never\n"
      "             ending, until the cluster is full; the share of GPUs that could be\n"
      "             allocated, and the unallocated GPUs as the GPUs asked grow\n"
      "  --policy   node scoring: binpack, spread, first-fit, best-fit, dot-product,\n"
      "             gpu-packing, fgd, random, gpu-clustering;\n"
      "             all: each on the same inputs, side by side\n"
      "  --seed     fill mode's draw of the jobs, as the FGD paper's experiments draw them:\n"
      "             shuffled, then copies drawn at random up to 130% of the GPUs\n"
      "  --seeds    each of seeds 1..N (or A..B), in parallel on every core: mean and\n"
      "             standard deviation per policy\n"
      "  --config   tessera.yaml; given up to 4 times, each is run on the same inputs and\n"
      "             they are compared side by side\n"
      "  -o, --output  text (default), json or yaml\n",
      out);
}

static const cmd_flag sim_flags[] = {
    {"--trace", NULL, "FILE"},  {"--cluster", NULL, "PATH"}, {"--config", NULL, "FILE"},
    {"--queues", NULL, "PATH"}, {"--report", NULL, "DIR"},   {"--output", "-o", "FORMAT"},
    {"--until", NULL, "T"},     {"--nodes", NULL, "NxG"},    {"--seed", NULL, "N"},
    {"--policy", NULL, "NAME"}, {"--resume", NULL, NULL},    {"--fill", NULL, NULL},
    {"--seeds", NULL, "N|A-B"}, {"--predict", NULL, NULL},   {NULL, NULL, NULL}};

/* -o json or yaml: j as indented JSON or a YAML document, on standard output. */
static void print_doc(const sim_args *a, json_t *j) {
  if (a->fmt == CMD_FMT_YAML) {
    cmd_write_doc(stdout, CMD_FMT_YAML, json_incref(j));
    return;
  }
  json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
  fputc('\n', stdout);
}

static bool parse_until(const char *s, int64_t *out) {
  char *end;
  double v;
  errno = 0;
  v = strtod(s, &end);
  if (errno || end == s || !isfinite(v) || v <= 0) return false;
  if (*end == 'm')
    v *= 60, end++;
  else if (*end == 'h')
    v *= 3600, end++;
  else if (*end == 'd')
    v *= DAY_S, end++;
  else if (*end == 's')
    end++;
  if (*end || v > 1e9) return false; /* the longest span a trace may cover */
  *out = (int64_t)ceil(v);           /* 0.5 is a second, not 0 (no limit) */
  return true;
}

static bool parse_nodes(const char *s, sim_args *a) {
  char *end;
  if (access(s, R_OK) == 0) { /* an openb node list */
    a->node_list = s;
    return true;
  }
  long n = strtol(s, &end, 10), g;
  if (end == s || *end != 'x' || n < 1 || n > MAX_NODES) return false;
  s = end + 1;
  g = strtol(s, &end, 10);
  if (end == s || g < 0 || g > 1024 || (*end && *end != ':') || (*end == ':' && !end[1]))
    return false;
  a->nodes = (int)n, a->gpus = (int)g;
  a->model = *end == ':' ? end + 1 : NULL;
  return true;
}

/* --seeds N (1..N) or A-B, at most SEEDS_MAX of them. */
#define SEEDS_MAX 1000
static bool parse_seeds(const char *v, sim_args *a) {
  char *end;
  unsigned long long lo = strtoull(v, &end, 10), hi = lo;
  if (end == v || (*end && *end != '-')) return false;
  if (*end == '-') {
    const char *h = end + 1;
    hi = strtoull(h, &end, 10);
    if (end == h || *end) return false;
  } else {
    lo = 1;
  }
  if (lo < 1 || hi < lo || hi - lo >= SEEDS_MAX) return false;
  a->seed_lo = lo, a->seed_hi = hi;
  return true;
}

/* CMD_PARSED, CMD_HELP or CMD_USAGE (said). */
static int parse_args(int argc, char **argv, sim_args *a) {
  static cmd_arg args[CMD_ARGS_MAX];
  char *end = NULL;
  sched_scoring sc;
  int n, parsed = cmd_flags_parse("simulate", usage, sim_flags, argc, argv, args, &n);
  memset(a, 0, sizeof *a);
  a->policy = -1;
  if (parsed != CMD_PARSED) return parsed;
  for (int i = 0; i < n; i++) {
    const char *f = args[i].flag < 0 ? "" : sim_flags[args[i].flag].name, *v = args[i].value;
    if (args[i].flag < 0)
      return cmd_usage_error("simulate", usage, "unexpected argument \"%s\"", v);
    if (!strcmp(f, "--resume") || !strcmp(f, "--fill") || !strcmp(f, "--predict")) {
      *(f[2] == 'r' ? &a->resume : f[2] == 'f' ? &a->fill : &a->predict) = strcmp(v, "false") != 0;
      continue;
    }
    if (!strcmp(f, "--trace"))
      a->trace = v;
    else if (!strcmp(f, "--cluster"))
      a->cluster = v;
    else if (!strcmp(f, "--config") && a->nconfigs == MAX_CONFIGS)
      return cmd_usage_error("simulate", usage, "--config %s: at most %d configurations", v,
                             MAX_CONFIGS);
    else if (!strcmp(f, "--config"))
      a->configs[a->nconfigs++] = v, a->config = a->configs[0];
    else if (!strcmp(f, "--queues"))
      a->queues = v;
    else if (!strcmp(f, "--report"))
      a->report = v;
    else if (!strcmp(f, "--output") && (a->fmt = cmd_format_parse(v, true)) != CMD_FMT_BAD)
      a->json = a->fmt != CMD_FMT_TEXT;
    else if (!strcmp(f, "--until") && parse_until(v, &a->until_s))
      ;
    else if (!strcmp(f, "--nodes") && parse_nodes(v, a))
      ;
    else if (!strcmp(f, "--seed") && (a->seed = strtoull(v, &end, 10)) > 0 && !*end)
      ;
    else if (!strcmp(f, "--seeds") && parse_seeds(v, a))
      ;
    else if (!strcmp(f, "--policy") && !strcmp(v, "all"))
      a->policy = POLICY_ALL;
    else if (!strcmp(f, "--policy") && sched_scoring_parse(v, &sc))
      a->policy = (int)sc;
    else
      return cmd_usage_error("simulate", usage, "%s %s: not understood", f, v);
  }
  if (a->seed_lo && (!a->fill || a->seed || a->nconfigs > 1))
    return cmd_usage_error("simulate", usage,
                           "--seeds goes with --fill, without --seed or a second --config");
  if (!a->trace || (!a->nodes && !a->node_list && !a->cluster) ||
      ((a->nodes || a->node_list) && a->cluster)) {
    return cmd_usage_error("simulate", usage,
                           "give --trace, and --nodes or --cluster (one of them)");
  }
  return CMD_PARSED;
}

/* n identical nodes of g GPUs, 128 CPUs and 2Ti each (ITP's and openb's jobs ask for GPUs). */
static ts_rc add_nodes(model *m, const sim_args *a, ts_err *err) {
  char name[32], gpus[16];
  snprintf(gpus, sizeof gpus, "%d", a->gpus);
  for (int i = 0; i < a->nodes; i++) {
    json_t *labels, *o;
    ts_rc rc;
    snprintf(name, sizeof name, "sim-node-%05d", i);
    labels = json_pack("{s:s}", "kubernetes.io/hostname", name);
    if (labels && a->model)
      json_object_set_new(labels, "nvidia.com/gpu.product", json_string(a->model));
    o = json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:{s:s, s:s, s:s, s:s}}}", "apiVersion", "v1",
                  "kind", "Node", "metadata", "name", name, "labels", labels, "status",
                  "allocatable", "cpu", "128", "memory", "2Ti", "pods", "110", "nvidia.com/gpu",
                  gpus);
    if (!o) return ts_err_set(err, TS_ENOMEM, "out of memory");
    rc = model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, err);
    json_decref(o);
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* A progress line on a terminal, at most five times a second. */
typedef struct progress {
  double last;
  int64_t span_s;
} progress;

static void on_progress(void *ud, int64_t t_s, size_t done, size_t total) {
  progress *p = ud;
  double now = ts_time_mono_s();
  if (now - p->last < 0.2 && done < total) return;
  p->last = now;
  fprintf(stderr, "\rsimulate: day %.1f of %.1f, %zu of %zu jobs submitted   ", (double)t_s / DAY_S,
          (double)p->span_s / DAY_S, done, total);
}

static json_t *stats_json(const sim_stats *s) {
  json_t *o =
      json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:{s:f, s:f, s:f}, s:{s:f, s:f, s:f}}", "queue",
                s->queue, "jobs", (json_int_t)s->jobs, "done", (json_int_t)s->done, "neverStarted",
                (json_int_t)s->never_started, "preemptions", (json_int_t)s->preemptions, "gpuHours",
                s->gpu_hours, "waitSeconds", "p50", s->wait_p50, "p95", s->wait_p95, "p99",
                s->wait_p99, "jctSeconds", "p50", s->jct_p50, "p95", s->jct_p95, "p99", s->jct_p99);
  if (o && s->nominal_gpus >= 0) json_object_set_new(o, "nominalGpus", json_real(s->nominal_gpus));
  return o;
}

#define PREDICT_MIN_WAIT_S 600 /* the accuracy counts jobs that waited longer than this */

/* --predict: how far the starts estimated at submission were from the real ones. */
typedef struct accuracy {
  size_t waited;          /* jobs started after waiting over PREDICT_MIN_WAIT_S */
  size_t estimated;       /* of them, those that got an estimate */
  double p50, p90;        /* |estimate - start| / wait, of those (fractions) */
  double late_p50;        /* (estimate - start) / wait, median: > 0 when estimates are late */
  size_t exact_immediate; /* jobs that started at once, predicted so */
} accuracy;

static int dbl_cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double quantile(double *v, size_t n, double q) {
  if (!n) return 0;
  qsort(v, n, sizeof *v, dbl_cmp);
  return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static accuracy accuracy_of(const sim_trace *t, const sim_result *r) {
  accuracy acc = {0};
  double *err = ts_malloc((t->n + 1) * sizeof *err),
         *signed_err = ts_malloc((t->n + 1) * sizeof *err);
  for (size_t i = 0; err && signed_err && i < t->n; i++) {
    const sim_job_result *j = &r->jobs[i];
    double wait = (double)(j->first_start_s - t->jobs[i].submit_s);
    if (j->first_start_s < 0) continue;
    if (wait == 0 && j->predicted_start_s == t->jobs[i].submit_s) acc.exact_immediate++;
    if (wait <= PREDICT_MIN_WAIT_S) continue;
    acc.waited++;
    if (j->predicted_start_s < 0) continue;
    signed_err[acc.estimated] = (double)(j->predicted_start_s - j->first_start_s) / wait;
    err[acc.estimated] =
        signed_err[acc.estimated] < 0 ? -signed_err[acc.estimated] : signed_err[acc.estimated];
    acc.estimated++;
  }
  if (err && signed_err) {
    acc.late_p50 = quantile(signed_err, acc.estimated, 0.5);
    acc.p50 = quantile(err, acc.estimated, 0.5);
    acc.p90 = quantile(err, acc.estimated, 0.9);
  }
  ts_free(err), ts_free(signed_err);
  return acc;
}

static json_t *summary_json(const sim_args *a, const sim_trace *t, const sim_result *r,
                            double run_s) {
  json_t *qs = json_array(), *o;
  for (size_t i = 0; qs && i < r->nqueues; i++)
    json_array_append_new(qs, stats_json(&r->queues[i]));
  o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:s, s:o, s:o}", "trace",
                a->trace, "format", t->format, "jobs", (json_int_t)t->n, "gpus",
                (json_int_t)r->gpus_total, "simulatedSeconds", (json_int_t)r->end_s, "utilisation",
                r->utilisation, "runSeconds", run_s, "cycles", (json_int_t)r->cycles, "podsBound",
                (json_int_t)r->bound, "podsEvicted", (json_int_t)r->evicted, "preempted",
                a->resume ? "resume" : "restart", "all", stats_json(&r->all), "queues", qs);
  if (o && a->predict) {
    accuracy acc = accuracy_of(t, r);
    json_object_set_new(o, "prediction",
                        json_pack("{s:i, s:I, s:I, s:f, s:f, s:f, s:I}", "minWaitSeconds",
                                  PREDICT_MIN_WAIT_S, "waited", (json_int_t)acc.waited, "estimated",
                                  (json_int_t)acc.estimated, "absErrorOfWaitP50", acc.p50,
                                  "absErrorOfWaitP90", acc.p90, "signedErrorOfWaitP50",
                                  acc.late_p50, "startedAtOncePredicted",
                                  (json_int_t)acc.exact_immediate));
  }
  return o;
}

static void print_stats_row(const sim_stats *s) {
  printf("  %-16s %6zu %6zu %7zu %6zu %9.0f %7.0f %7.0f %7.0f %7.1f %7.1f %7.1f\n",
         *s->queue ? s->queue : "(all)", s->jobs, s->done, s->never_started, s->preemptions,
         s->gpu_hours, s->wait_p50 / 60, s->wait_p95 / 60, s->wait_p99 / 60, s->jct_p50 / 3600,
         s->jct_p95 / 3600, s->jct_p99 / 3600);
}

static void print_text(const sim_args *a, const sim_trace *t, const sim_result *r, double run_s) {
  printf("trace %s (%s): %zu jobs; cluster %lld GPUs\n", a->trace, t->format, t->n,
         (long long)r->gpus_total);
  printf("simulated %.1f days in %.2f s: %zu cycles, %zu pods bound, %zu evicted (preempted jobs "
         "%s)\n",
         (double)r->end_s / DAY_S, run_s, r->cycles, r->bound, r->evicted,
         a->resume ? "resume" : "start again");
  printf("GPU utilisation %.1f%% (time-weighted)\n", 100 * r->utilisation);
  printf("  %-16s %6s %6s %7s %6s %9s %-23s %-23s\n", "", "", "", "never", "pre-", "",
         "   wait (minutes)", "   completion (hours)");
  printf("  %-16s %6s %6s %7s %6s %9s %7s %7s %7s %7s %7s %7s\n", "queue", "jobs", "done",
         "started", "empted", "GPU-hours", "p50", "p95", "p99", "p50", "p95", "p99");
  for (size_t i = 0; i < r->nqueues; i++) print_stats_row(&r->queues[i]);
  if (r->nqueues > 1) print_stats_row(&r->all);
  if (a->predict) {
    accuracy acc = accuracy_of(t, r);
    printf("predicted starts: %zu jobs waited over %d min, %zu of them got an estimate at "
           "submission; its error, as a share of the wait: median %.0f%%, p90 %.0f%% (signed "
           "median %+.0f%%: positive is late); %zu jobs started at once, as predicted\n",
           acc.waited, PREDICT_MIN_WAIT_S / 60, acc.estimated, 100 * acc.p50, 100 * acc.p90,
           100 * acc.late_p50, acc.exact_immediate);
  }
}

/* The report's files, each written whole or not at all (cmd_out), none followed through a
 * symlink planted in dir; text from the trace (job ids, queues) is written as CSV text. */
static int write_report(const char *dir, json_t *summary, const sim_trace *t, const sim_result *r) {
  char path[4096];
  cmd_out o;
  FILE *f;
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "tessera simulate: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  snprintf(path, sizeof path, "%s/summary.json", dir);
  if (!(f = cmd_out_open(&o, path))) goto fail;
  if (json_dumpf(summary, f, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || cmd_out_commit(&o)) goto fail;
  snprintf(path, sizeof path, "%s/timeline.csv", dir);
  if (!(f = cmd_out_open(&o, path))) goto fail;
  fprintf(f, "t_s,gpus_used,gpus_idle_on_used_nodes,pending_jobs,running_jobs\n");
  for (size_t i = 0; i < r->nsamples; i++)
    fprintf(f, "%lld,%.10g,%.10g,%d,%d\n", (long long)r->samples[i].t_s, r->samples[i].gpus_used,
            r->samples[i].gpus_idle_frag, r->samples[i].pending_jobs, r->samples[i].running_jobs);
  if (cmd_out_commit(&o)) goto fail;
  snprintf(path, sizeof path, "%s/queues.csv", dir);
  if (!(f = cmd_out_open(&o, path))) goto fail;
  fprintf(f, "queue,jobs,done,never_started,preemptions,gpu_hours,wait_p50_s,wait_p95_s,"
             "wait_p99_s,jct_p50_s,jct_p95_s,jct_p99_s,nominal_gpus\n");
  for (size_t i = 0; i <= r->nqueues; i++) {
    const sim_stats *s = i < r->nqueues ? &r->queues[i] : &r->all;
    cmd_csv_cell(f, i < r->nqueues ? s->queue : "(all)");
    fprintf(f, ",%zu,%zu,%zu,%zu,%.3f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,", s->jobs, s->done,
            s->never_started, s->preemptions, s->gpu_hours, s->wait_p50, s->wait_p95, s->wait_p99,
            s->jct_p50, s->jct_p95, s->jct_p99);
    if (s->nominal_gpus >= 0) fprintf(f, "%.10g", s->nominal_gpus);
    fputc('\n', f);
  }
  if (cmd_out_commit(&o)) goto fail;
  snprintf(path, sizeof path, "%s/report.html", dir);
  if (!(f = cmd_out_open(&o, path))) goto fail;
  if (simulate_html(f, json_string_value(json_object_get(summary, "trace")), t, r,
                    !strcmp(json_string_value(json_object_get(summary, "preempted")), "resume"),
                    json_is_true(json_object_get(summary, "fairSharing"))) ||
      cmd_out_commit(&o))
    goto fail;
  snprintf(path, sizeof path, "%s/jobs.csv", dir);
  if (!(f = cmd_out_open(&o, path))) goto fail;
  fprintf(f, "job_id,queue,submit_s,first_start_s,last_start_s,end_s,preemptions,gpus,"
             "waiting_for,predicted_start_s\n");
  for (size_t i = 0; i < t->n; i++) {
    const sim_job_result *j = &r->jobs[i];
    cmd_csv_cell(f, t->jobs[i].id);
    fputc(',', f);
    cmd_csv_cell(f, t->jobs[i].queue);
    fprintf(f, ",%lld,%lld,%lld,%lld,%d,%.10g,", (long long)t->jobs[i].submit_s,
            (long long)j->first_start_s, (long long)j->last_start_s, (long long)j->end_s,
            j->preemptions, (double)t->jobs[i].pods * t->jobs[i].gpu_milli / 1000);
    cmd_csv_cell(f, j->waiting ? j->waiting : ""); /* a reason has commas */
    fprintf(f, ",%lld\n", (long long)j->predicted_start_s);
  }
  if (cmd_out_commit(&o)) goto fail;
  return 0;
fail:
  fprintf(stderr, "tessera simulate: %s: %s\n", path, strerror(errno ? errno : EIO));
  cmd_out_abort(&o);
  return 1;
}

/* ---- fill mode ------------------------------------------------------------------------ */

#define FILL_LEVELS 11 /* arrivals at 50%, 60%, ... 150% of the cluster's GPUs */

/* The unallocated share of the GPUs when the GPUs asked first reach pct% of the cluster's, or
 * -1 when they never do. */
static double unallocated_at(const sim_fill_result *f, double pct) {
  double want = (double)f->gpus_total * pct / 100;
  for (size_t i = 0; i < f->npoints; i++)
    if (f->arrived[i] >= want) return 1 - f->allocated[i] / (double)f->gpus_total;
  return -1;
}

static json_t *fill_json(const sim_args *a, const sim_trace *t, const sim_fill_result *f) {
  json_t *curve = json_array(), *o;
  for (int k = 0; curve && k < FILL_LEVELS; k++) {
    double u = unallocated_at(f, 50 + 10 * k);
    json_array_append_new(
        curve, u < 0 ? json_pack("{s:i, s:n}", "arrivedPercent", 50 + 10 * k, "unallocatedPercent")
                     : json_pack("{s:i, s:f}", "arrivedPercent", 50 + 10 * k, "unallocatedPercent",
                                 100 * u));
  }
  o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o}", "mode", "fill", "trace", a->trace,
                "format", t->format, "jobs", (json_int_t)t->n, "gpus", (json_int_t)f->gpus_total,
                "placed", (json_int_t)f->placed, "failed", (json_int_t)f->failed, "seed",
                (json_int_t)a->seed, "curve", curve);
  if (o && f->first_failure != SIZE_MAX)
    json_object_set_new(o, "firstFailure",
                        json_pack("{s:s, s:f}", "job", t->jobs[f->first_failure].id,
                                  "allocatedPercent", 100 * f->allocated_at_failure));
  return o;
}

static void fill_text(const sim_args *a, const sim_trace *t, const sim_fill_result *f) {
  printf("fill %s (%s) on %lld GPUs, %s: %zu jobs placed, %zu did not fit\n", a->trace, t->format,
         (long long)f->gpus_total, a->seed ? "jobs drawn at random" : "jobs in trace order",
         f->placed, f->failed);
  if (f->first_failure != SIZE_MAX)
    printf("first job that did not fit: %s, with %.1f%% of the GPUs allocated\n",
           t->jobs[f->first_failure].id, 100 * f->allocated_at_failure);
  printf("GPUs asked, %% of the cluster's:");
  for (int k = 0; k < FILL_LEVELS; k++) printf(" %5d", 50 + 10 * k);
  printf("\nunallocated GPUs, %%:          ");
  for (int k = 0; k < FILL_LEVELS; k++) {
    double u = unallocated_at(f, 50 + 10 * k);
    if (u < 0)
      printf("     -");
    else
      printf(" %5.1f", 100 * u);
  }
  printf("\n");
}

#define CURVE_POINTS 151 /* fill curves are drawn at every 1% of the GPUs asked, 0..150% */

static const double *curve_x(void) {
  static double x[CURVE_POINTS];
  for (int k = 0; k < CURVE_POINTS; k++) x[k] = k;
  return x;
}

/* Fill mode once: prints (unless quiet) and writes report (when not NULL); its summary, or
 * NULL (*status says why); curve (CURVE_POINTS, or NULL): the unallocated %, NAN where the
 * GPUs asked never reached. */
static json_t *run_fill(const sim_args *a, model *m, const cfg_tessera *cfg, const sim_trace *t,
                        const sim_opts *o, const char *report, bool quiet, double *curve,
                        int *status) {
  double y[CURVE_POINTS];
  sim_fill_result f;
  ts_err err;
  json_t *j;
  *status = 1;
  ts_err_clear(&err);
  if (sim_fill(m, &cfg->sched, t, o, &f, &err) != TS_OK) {
    fprintf(stderr, "%stessera simulate: %s\n", o->progress ? "\n" : "", err.text);
    return NULL;
  }
  if (o->progress) fputc('\n', stderr);
  for (int k = 0; k < CURVE_POINTS; k++) {
    double u = unallocated_at(&f, k);
    y[k] = u < 0 ? NAN : 100 * u;
    if (curve) curve[k] = y[k];
  }
  if ((j = fill_json(a, t, &f))) {
    *status = 0;
    json_object_set_new(j, "policy", json_string(sched_scoring_name(cfg->sched.scoring)));
    if (!quiet && a->json) {
      print_doc(a, j);
    } else if (!quiet) {
      fill_text(a, t, &f);
    }
    if (report) {
      char path[4096];
      cmd_out w = {0};
      FILE *out;
      snprintf(path, sizeof path, "%.2000s", report);
      if (mkdir(report, 0755) != 0 && errno != EEXIST) *status = 1; /* path names it */
      snprintf(path, sizeof path, "%s/fill.json", report);
      if (*status == 0 &&
          (!(out = cmd_out_open(&w, path)) ||
           json_dumpf(j, out, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || cmd_out_commit(&w)))
        *status = 1;
      snprintf(path, sizeof path, "%s/fill.csv", report);
      if (*status == 0 && (out = cmd_out_open(&w, path))) {
        fprintf(out, "jobs_tried,gpus_asked,gpus_allocated\n");
        for (size_t i = 0; i < f.npoints; i++)
          fprintf(out, "%zu,%.10g,%.10g\n", i + 1, f.arrived[i], f.allocated[i]);
        if (cmd_out_commit(&w)) *status = 1;
      } else if (*status == 0) {
        *status = 1;
      }
      snprintf(path, sizeof path, "%s/report.html", report);
      if (*status == 0 && (out = cmd_out_open(&w, path))) {
        sim_html_curve c = {sched_scoring_name(cfg->sched.scoring), curve_x(), y, NULL,
                            CURVE_POINTS};
        double placed = (double)f.placed;
        char what[160];
        snprintf(what, sizeof what, "fill mode on %lld GPUs, %s", (long long)f.gpus_total,
                 a->seed ? "jobs drawn at random" : "jobs in trace order");
        if (simulate_fill_html(out, a->trace, what, &c, 1, &placed, NULL) || cmd_out_commit(&w))
          *status = 1;
      } else if (*status == 0) {
        *status = 1;
      }
      cmd_out_abort(&w);
      if (*status) fprintf(stderr, "tessera simulate: %s: %s\n", path, strerror(errno));
    }
  }
  sim_fill_result_free(&f);
  return j;
}

static bool load(model *m, const char *path, cmd_load_counts *c) {
  if (cmd_load(path, m, c) != TS_OK) return false;
  if (c->errors) fprintf(stderr, "tessera simulate: %s: %d objects not loaded\n", path, c->errors);
  return c->errors == 0;
}

/* A trace run once: prints (unless quiet) and writes report (when not NULL); its summary (with
 * runSeconds), or NULL (*status says why); used (SIM_HTML_BUCKETS, or NULL) its GPUs in use
 * over [0, *end_s]. */
static json_t *run_trace(const sim_args *a, model *m, const cfg_tessera *cfg, const sim_trace *t,
                         const sim_opts *o, const char *report, bool quiet, double *used,
                         int64_t *end_s, int *status) {
  sim_result r;
  ts_err err;
  double start = ts_time_mono_s(), run_s;
  json_t *summary;
  *status = 1;
  ts_err_clear(&err);
  if (sim_run(m, &cfg->sched, t, o, &r, &err) != TS_OK) {
    fprintf(stderr, "%stessera simulate: %s\n", o->progress ? "\n" : "", err.text);
    return NULL;
  }
  if (o->progress) fputc('\n', stderr);
  run_s = ts_time_mono_s() - start;
  if (used) simulate_html_used(&r, used), *end_s = r.end_s;
  if ((summary = summary_json(a, t, &r, run_s))) {
    *status = 0;
    json_object_set_new(summary, "policy", json_string(sched_scoring_name(cfg->sched.scoring)));
    json_object_set_new(summary, "fairSharing", json_boolean(cfg->sched.queueing.fair_sharing));
    if (!quiet && a->json) {
      print_doc(a, summary);
    } else if (!quiet) {
      print_text(a, t, &r, run_s);
    }
    if (report) {
      json_t *copy = json_deep_copy(summary);
      json_object_del(copy, "runSeconds"); /* the report is the same for the same inputs */
      *status = copy ? write_report(report, copy, t, &r) : 1;
      json_decref(copy);
    }
  }
  sim_result_free(&r);
  return summary;
}

/* The cluster of the arguments, in a new model: NULL with *status set when it cannot be. */
static model *build_model(const sim_args *a, cfg_tessera *cfg, int *status) {
  cmd_load_counts cc = {0}, qc = {0};
  model *m = model_new();
  ts_err err;
  ts_err_clear(&err);
  *status = 1;
  if (!m) return NULL;
  if ((a->nodes && add_nodes(m, a, &err) != TS_OK) ||
      (a->node_list && sim_nodes_read(a->node_list, m, &err) != TS_OK)) {
    fprintf(stderr, "tessera simulate: %s\n", err.text);
    *status = 2;
  } else if ((a->cluster && !load(m, a->cluster, &cc)) || (a->queues && !load(m, a->queues, &qc))) {
    *status = 2;
  } else if (a->cluster && cmd_load_config(&cc, a->config != NULL, cfg, &err) != TS_OK) {
    fprintf(stderr, "tessera simulate: %s: %s\n", a->cluster, err.text);
    *status = 2;
  } else {
    *status = 0;
  }
  json_decref(cc.config);
  json_decref(qc.config);
  if (*status) {
    model_free(m);
    return NULL;
  }
  return m;
}

/* ---- --seeds: every seed of every policy, in parallel processes ------------------------ */

#define LEVEL_FIRST 5 /* the curve's 100%, 110% and 120% (fill_json's 50% + 10% steps); */
#define LEVEL_LAST  7 /* the draw stops just short of 130% */

typedef struct seed_run {
  int policy;    /* a sched_scoring, or -1: the configuration's */
  uint64_t seed; /* the draw */
  pid_t pid;     /* its process while it runs */
  FILE *out;     /* where it writes its summary */
  json_t *row;   /* that summary, once read */
} seed_run;

/* In the child: one fill run, its summary as one line of JSON to out; never returns. */
static void seed_child(const sim_args *a, cfg_tessera *cfg, const sim_trace *t, sim_opts o,
                       const seed_run *run) {
  int status = 1;
  model *m = build_model(a, cfg, &status);
  sim_fill_result f;
  sim_args one = *a;
  ts_err err;
  json_t *j;
  if (!m) _exit(1);
  if (run->policy >= 0) cfg->sched.scoring = (sched_scoring)run->policy;
  o.seed = run->seed, o.progress = NULL;
  ts_err_clear(&err);
  if (sim_fill(m, &cfg->sched, t, &o, &f, &err) != TS_OK) {
    fprintf(stderr, "tessera simulate: seed %llu: %s\n", (unsigned long long)run->seed, err.text);
    _exit(1);
  }
  one.seed = run->seed;
  if (!(j = fill_json(&one, t, &f))) _exit(1);
  json_object_set_new(j, "policy", json_string(sched_scoring_name(cfg->sched.scoring)));
  if (json_dumpf(j, run->out, JSON_COMPACT) || fflush(run->out)) _exit(1);
  _exit(0);
}

/* Reads the summary a finished run wrote; false when there is none. */
static bool seed_collect(seed_run *run) {
  json_error_t je;
  rewind(run->out);
  run->row = json_loadf(run->out, 0, &je);
  fclose(run->out);
  run->out = NULL;
  return run->row != NULL;
}

static void mean_sd(const double *v, size_t n, double *mean, double *sd) {
  double s = 0, q = 0;
  for (size_t i = 0; i < n; i++) s += v[i];
  *mean = n ? s / (double)n : 0;
  for (size_t i = 0; i < n; i++) q += (v[i] - *mean) * (v[i] - *mean);
  *sd = n > 1 ? sqrt(q / (double)(n - 1)) : 0;
}

/* The unallocated % of n runs when the GPUs asked reach level k of fill_json's curve (50% +
 * 10% k): mean, sd, and how many runs reached it. */
static size_t level_stats(const seed_run *runs, size_t n, int k, double *v, double *mean,
                          double *sd) {
  size_t got = 0;
  for (size_t i = 0; i < n; i++) {
    const json_t *u = json_object_get(
        json_array_get(json_object_get(runs[i].row, "curve"), (size_t)k), "unallocatedPercent");
    if (json_is_number(u)) v[got++] = json_number_value(u);
  }
  mean_sd(v, got, mean, sd);
  return got;
}

/* One policy's runs summed up: placed and the unallocated share at 100..130%, mean and sd. */
static json_t *seed_summary(const seed_run *runs, size_t n) {
  double *v = ts_calloc(n + 1, sizeof *v), mean, sd;
  json_t *o = json_pack("{s:s, s:[], s:[]}", "policy",
                        json_string_value(json_object_get(runs[0].row, "policy")), "runs",
                        "unallocatedPercent");
  if (!v || !o) return ts_free(v), json_decref(o), NULL;
  for (size_t i = 0; i < n; i++) {
    json_array_append(json_object_get(o, "runs"), runs[i].row);
    v[i] = (double)json_integer_value(json_object_get(runs[i].row, "placed"));
  }
  mean_sd(v, n, &mean, &sd);
  json_object_set_new(o, "placed", json_pack("{s:f, s:f}", "mean", mean, "sd", sd));
  for (int k = LEVEL_FIRST; k <= LEVEL_LAST; k++) {
    size_t got = level_stats(runs, n, k, v, &mean, &sd);
    json_array_append_new(json_object_get(o, "unallocatedPercent"),
                          got ? json_pack("{s:i, s:f, s:f, s:I}", "arrivedPercent", 50 + 10 * k,
                                          "mean", mean, "sd", sd, "runs", (json_int_t)got)
                              : json_pack("{s:i, s:n, s:n, s:i}", "arrivedPercent", 50 + 10 * k,
                                          "mean", "sd", "runs", 0));
  }
  ts_free(v);
  return o;
}

/* True when a job of t shares a GPU: Tessera's bin-packing then scores as FGD, which a table
 * of policies says rather than let two rows look alike by chance. */
static bool trace_shares(const sim_trace *t) {
  for (size_t i = 0; i < t->n; i++)
    if (!t->jobs[i].gpus && t->jobs[i].gpu_milli > 0) return true;
  return false;
}

static void seeds_text(const sim_args *a, const sim_trace *t, json_t *pols, int workers,
                       double secs) {
  size_t i;
  json_t *p;
  printf("%s (%s), %zu jobs, fill mode, seeds %llu-%llu (jobs drawn as the FGD paper's "
         "experiments draw them), %d at a time, %.0f s\n",
         a->trace, t->format, t->n, (unsigned long long)a->seed_lo, (unsigned long long)a->seed_hi,
         workers, secs);
  printf("%-14s %5s %15s   %s\n", "policy", "runs", "placed",
         "unallocated GPUs %, mean ± sd, when the GPUs asked reach 100% / 110% / 120%");
  json_array_foreach(pols, i, p) {
    const json_t *pl = json_object_get(p, "placed"), *u;
    size_t k;
    printf("%-14s %5zu %7.0f ± %5.1f  ", json_string_value(json_object_get(p, "policy")),
           json_array_size(json_object_get(p, "runs")),
           json_real_value(json_object_get(pl, "mean")),
           json_real_value(json_object_get(pl, "sd")));
    json_array_foreach(json_object_get(p, "unallocatedPercent"), k, u) {
      if (json_is_real(json_object_get(u, "mean")))
        printf(" %6.2f ± %4.2f", json_real_value(json_object_get(u, "mean")),
               json_real_value(json_object_get(u, "sd")));
      else
        printf(" %13s", "-");
    }
    printf("\n");
  }
  if (trace_shares(t)) printf("binpack scores as fgd here: pods of the trace share GPUs\n");
}

/* A report file that could not be written: said, the partial file given up; 1. */
static int report_failed(const char *path, cmd_out *w) {
  fprintf(stderr, "tessera simulate: %s: %s\n", path, strerror(errno ? errno : EIO));
  cmd_out_abort(w);
  return 1;
}

/* --seeds --report: DIR/index.html (every policy's mean curve with its deviation, and the
 * table) and DIR/seeds.json (doc); 0, or 1 (said). */
static int seeds_report(const sim_args *a, const seed_run *runs, size_t npol, size_t nseeds,
                        json_t *doc) {
  double x[FILL_LEVELS], y[SCHED_SCORING_COUNT][FILL_LEVELS], sd[SCHED_SCORING_COUNT][FILL_LEVELS];
  double placed[SCHED_SCORING_COUNT], placed_sd[SCHED_SCORING_COUNT], v[SEEDS_MAX + 1];
  sim_html_curve c[SCHED_SCORING_COUNT];
  char path[4096], what[200];
  cmd_out w = {0};
  FILE *f;
  if (mkdir(a->report, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "tessera simulate: %s: %s\n", a->report, strerror(errno));
    return 1;
  }
  for (size_t p = 0; p < npol; p++) {
    const seed_run *r = runs + p * nseeds;
    for (int k = 0; k < FILL_LEVELS; k++) {
      x[k] = 50 + 10 * k;
      if (!level_stats(r, nseeds, k, v, &y[p][k], &sd[p][k])) y[p][k] = NAN;
    }
    for (size_t i = 0; i < nseeds; i++)
      v[i] = (double)json_integer_value(json_object_get(r[i].row, "placed"));
    mean_sd(v, nseeds, &placed[p], &placed_sd[p]);
    c[p] = (sim_html_curve){json_string_value(json_object_get(r[0].row, "policy")), x, y[p], sd[p],
                            FILL_LEVELS};
  }
  snprintf(what, sizeof what,
           "fill mode, seeds %llu-%llu (jobs drawn as the FGD paper's "
           "experiments draw them): the mean of the seeds",
           (unsigned long long)a->seed_lo, (unsigned long long)a->seed_hi);
  snprintf(path, sizeof path, "%.2000s/index.html", a->report);
  if (!(f = cmd_out_open(&w, path)) ||
      simulate_fill_html(f, a->trace, what, c, npol, placed, placed_sd) || cmd_out_commit(&w))
    return report_failed(path, &w);
  snprintf(path, sizeof path, "%.2000s/seeds.json", a->report);
  if (!(f = cmd_out_open(&w, path)) || json_dumpf(doc, f, JSON_INDENT(2) | JSON_SORT_KEYS) ||
      cmd_out_commit(&w))
    return report_failed(path, &w);
  return 0;
}

/* --seeds: every (policy, seed) in a process of its own, as many at a time as there are
 * cores; then per policy the mean and standard deviation. 0, or 1 when a run failed. */
static int run_seeds(const sim_args *a, cfg_tessera *cfg, const sim_trace *t, const sim_opts *o) {
  int first = a->policy == POLICY_ALL ? 0 : a->policy;
  int last = a->policy == POLICY_ALL ? SCHED_SCORING_COUNT - 1 : a->policy;
  size_t nseeds = (size_t)(a->seed_hi - a->seed_lo + 1);
  size_t n = (size_t)(last - first + 1) * nseeds, next = 0, running = 0, done = 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int workers = cores < 1 ? 1 : cores > 256 ? 256 : (int)cores, status = 0;
  seed_run *runs = ts_calloc(n + 1, sizeof *runs);
  double t0 = ts_time_mono_s();
  json_t *pols;
  if (!runs) return fprintf(stderr, "tessera simulate: out of memory\n"), 1;
  for (size_t i = 0; i < n; i++)
    runs[i].policy = first + (int)(i / nseeds), runs[i].seed = a->seed_lo + i % nseeds;
  if ((size_t)workers > n) workers = (int)n;
  fflush(stdout), fflush(stderr);
  while (done < n) {
    while (!status && running < (size_t)workers && next < n) {
      seed_run *r = &runs[next++];
      if (!(r->out = tmpfile()) || (r->pid = fork()) < 0) {
        fprintf(stderr, "tessera simulate: cannot start a run: %s\n", strerror(errno));
        if (r->out) fclose(r->out), r->out = NULL;
        status = 1;
        break;
      }
      if (r->pid == 0) seed_child(a, cfg, t, *o, r);
      running++;
    }
    if (!running) break;
    {
      int st = 0;
      pid_t pid = waitpid(-1, &st, 0);
      if (pid < 0) break;
      for (size_t i = 0; i < next; i++) {
        if (runs[i].pid != pid || !runs[i].out) continue;
        running--, done++;
        if (!WIFEXITED(st) || WEXITSTATUS(st) || !seed_collect(&runs[i])) {
          if (runs[i].out) fclose(runs[i].out), runs[i].out = NULL;
          fprintf(stderr, "tessera simulate: policy %s, seed %llu failed\n",
                  runs[i].policy >= 0 ? sched_scoring_name((sched_scoring)runs[i].policy)
                                      : "(the configuration's)",
                  (unsigned long long)runs[i].seed);
          status = 1;
        }
        break;
      }
    }
  }
  pols = json_array();
  for (size_t i = 0; !status && pols && i < n; i += nseeds)
    json_array_append_new(pols, seed_summary(runs + i, nseeds));
  if (!status && pols) {
    json_t *doc = json_pack("{s:s, s:s, s:I, s:[I, I], s:i, s:O}", "mode", "fill", "trace",
                            a->trace, "jobs", (json_int_t)t->n, "seeds", (json_int_t)a->seed_lo,
                            (json_int_t)a->seed_hi, "parallel", workers, "policies", pols);
    if (!doc)
      status = 1;
    else if (a->json)
      print_doc(a, doc);
    else
      seeds_text(a, t, pols, workers, ts_time_mono_s() - t0);
    if (doc && a->report) {
      json_object_del(doc, "parallel"); /* the same file on any machine */
      status = seeds_report(a, runs, n / nseeds, nseeds, doc);
    }
    json_decref(doc);
  }
  json_decref(pols);
  for (size_t i = 0; i < n; i++) {
    json_decref(runs[i].row);
    if (runs[i].out) fclose(runs[i].out);
  }
  ts_free(runs);
  return status;
}

/* Runs side by side (--policy all, two --config): one line per run, named by labels. */
static void policy_table(const sim_args *a, json_t *rows, char (*labels)[96]) {
  size_t i;
  json_t *row;
  if (a->fill) {
    printf("%-14s %8s %8s %14s  %s\n", a->nconfigs > 1 ? "run" : "policy", "placed", "failed",
           "first failure", "unallocated GPUs % when the GPUs asked reach 100% / 110% / 120%");
    json_array_foreach(rows, i, row) {
      const json_t *curve = json_object_get(row, "curve");
      const json_t *ff = json_object_get(json_object_get(row, "firstFailure"), "allocatedPercent");
      printf("%-14s %8lld %8lld ", labels[i],
             (long long)json_integer_value(json_object_get(row, "placed")),
             (long long)json_integer_value(json_object_get(row, "failed")));
      if (ff)
        printf("%13.1f%%  ", json_real_value(ff));
      else
        printf("%14s  ", "-");
      for (int k = LEVEL_FIRST; k <= LEVEL_LAST; k++) { /* 100, 110, 120 */
        const json_t *u = json_object_get(json_array_get(curve, (size_t)k), "unallocatedPercent");
        if (json_is_real(u))
          printf(" %6.1f", json_real_value(u));
        else
          printf(" %6s", "-");
      }
      printf("\n");
    }
    return;
  }
  printf("%-14s %12s %6s %6s %8s   %-23s %-16s\n", a->nconfigs > 1 ? "run" : "policy",
         "utilisation", "done", "never", "preempt", "wait min p50/p95/p99", "JCT h p50/p95");
  json_array_foreach(rows, i, row) {
    const json_t *all = json_object_get(row, "all"), *w = json_object_get(all, "waitSeconds"),
                 *c = json_object_get(all, "jctSeconds");
    printf("%-14s %11.1f%% %6lld %6lld %8lld   %7.0f %7.0f %7.0f %7.1f %7.1f\n", labels[i],
           100 * json_real_value(json_object_get(row, "utilisation")),
           (long long)json_integer_value(json_object_get(all, "done")),
           (long long)json_integer_value(json_object_get(all, "neverStarted")),
           (long long)json_integer_value(json_object_get(all, "preemptions")),
           json_real_value(json_object_get(w, "p50")) / 60,
           json_real_value(json_object_get(w, "p95")) / 60,
           json_real_value(json_object_get(w, "p99")) / 60,
           json_real_value(json_object_get(c, "p50")) / 3600,
           json_real_value(json_object_get(c, "p95")) / 3600);
  }
}

/* The name of run (config c, policy p) among runs side by side: the policy's, the config
 * file's (its base name, or its place when two share one), or both. */
static void run_label(const sim_args *a, int c, int p, char *out, size_t cap) {
  const char *cfg = a->nconfigs ? a->configs[c] : "", *base = strrchr(cfg, '/');
  bool clash = false;
  base = base ? base + 1 : cfg;
  for (int k = 0; k < a->nconfigs; k++) {
    const char *o = strrchr(a->configs[k], '/');
    clash = clash || (k != c && !strcmp(o ? o + 1 : a->configs[k], base));
  }
  char name[64];
  if (clash)
    snprintf(name, sizeof name, "config%d", c + 1);
  else
    snprintf(name, sizeof name, "%.60s", base);
  if (a->nconfigs > 1 && a->policy == POLICY_ALL)
    snprintf(out, cap, "%s-%s", name, sched_scoring_name((sched_scoring)p));
  else if (a->nconfigs > 1)
    snprintf(out, cap, "%s", name);
  else
    snprintf(out, cap, "%s", p >= 0 ? sched_scoring_name((sched_scoring)p) : "run");
}

/* DIR/index.html for runs side by side; 0, or 1 (said). */
static int compare_report(const sim_args *a, json_t *rows, char (*labels)[96],
                          double (*curves)[CURVE_POINTS], double (*used)[SIM_HTML_BUCKETS],
                          const int64_t *end_s) {
  size_t n = json_array_size(rows);
  const char *names[MAX_CONFIGS * SCHED_SCORING_COUNT];
  const double *series[MAX_CONFIGS * SCHED_SCORING_COUNT];
  sim_html_curve c[MAX_CONFIGS * SCHED_SCORING_COUNT];
  double placed[MAX_CONFIGS * SCHED_SCORING_COUNT];
  char path[4096];
  cmd_out w = {0};
  FILE *f;
  int rc;
  for (size_t i = 0; i < n; i++) {
    names[i] = labels[i], series[i] = used[i];
    c[i] = (sim_html_curve){labels[i], curve_x(), curves[i], NULL, CURVE_POINTS};
    placed[i] = (double)json_integer_value(json_object_get(json_array_get(rows, i), "placed"));
  }
  snprintf(path, sizeof path, "%.2000s/index.html", a->report);
  if (!(f = cmd_out_open(&w, path))) return report_failed(path, &w);
  if (a->fill) {
    char what[160];
    snprintf(what, sizeof what, "fill mode, %s, runs side by side on the same inputs",
             a->seed ? "jobs drawn at random" : "jobs in trace order");
    rc = simulate_fill_html(f, a->trace, what, c, n, placed, NULL);
  } else {
    rc = simulate_compare_html(
        f, a->trace, n, names, series, end_s,
        (int64_t)json_integer_value(json_object_get(json_array_get(rows, 0), "gpus")), rows);
  }
  if (rc || cmd_out_commit(&w)) return report_failed(path, &w);
  return 0;
}

int cmd_simulate(int argc, char **argv) {
  sim_args a;
  sim_trace t;
  cfg_tessera cfg;
  progress pr = {0};
  sim_opts o = {.epoch_ns = EPOCH_NS};
  ts_err err;
  int status = 1, first, last, nconfigs;
  size_t nruns = 0;
  json_t *rows;
  char(*labels)[96] = NULL;
  double(*curves)[CURVE_POINTS] = NULL, (*used)[SIM_HTML_BUCKETS] = NULL;
  int64_t end_s[MAX_CONFIGS * SCHED_SCORING_COUNT] = {0};
  bool side_by_side;
  int parsed = parse_args(argc, argv, &a);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  ts_err_clear(&err);
  for (int c = a.nconfigs - 1; c >= 0; c--) { /* each is read before any run; the first kept */
    if (cfg_tessera_setup(a.configs[c], &cfg, &err) != TS_OK) {
      fprintf(stderr, "%s\n", err.text);
      return 2;
    }
    if (c) cfg_tessera_free(&cfg);
  }
  if (!a.nconfigs && cfg_tessera_setup(NULL, &cfg, &err) != TS_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 2;
  }
  if (sim_trace_read(a.trace, &t, &err) != TS_OK) {
    fprintf(stderr, "tessera simulate: %s\n", err.text);
    cfg_tessera_free(&cfg);
    return 2;
  }
  o.until_s = a.until_s, o.resume = a.resume, o.seed = a.seed, o.predict = a.predict;
  if (isatty(STDERR_FILENO)) {
    pr.span_s = t.n ? t.jobs[t.n - 1].submit_s : 0;
    if (a.until_s > 0 && a.until_s < pr.span_s) pr.span_s = a.until_s;
    o.progress = on_progress, o.progress_ud = &pr;
  }
  if (a.seed_lo) {
    status = run_seeds(&a, &cfg, &t, &o);
    sim_trace_free(&t);
    cfg_tessera_free(&cfg);
    return status;
  }
  first = a.policy == POLICY_ALL ? 0 : a.policy;
  last = a.policy == POLICY_ALL ? SCHED_SCORING_COUNT - 1 : a.policy;
  nconfigs = a.nconfigs > 1 ? a.nconfigs : 1;
  side_by_side = a.policy == POLICY_ALL || a.nconfigs > 1;
  rows = json_array();
  labels = ts_calloc(MAX_CONFIGS * SCHED_SCORING_COUNT, sizeof *labels);
  curves = ts_calloc(MAX_CONFIGS * SCHED_SCORING_COUNT, sizeof *curves);
  used = ts_calloc(MAX_CONFIGS * SCHED_SCORING_COUNT, sizeof *used);
  if (!labels || !curves || !used) json_decref(rows), rows = NULL;
  status = 0;
  for (int c = 0; rows && !status && c < nconfigs; c++) {
    if (c > 0) { /* the next configuration, from its defaults */
      cfg_tessera_free(&cfg);
      if (cfg_tessera_setup(a.configs[c], &cfg, &err) != TS_OK) {
        fprintf(stderr, "%s\n", err.text);
        status = 2;
        break;
      }
    }
    for (int p = first; p <= last; p++) { /* p = -1: the configuration's policy */
      model *m = build_model(&a, &cfg, &status);
      char dir[2048];
      json_t *row;
      if (!m) break;
      if (p >= 0) cfg.sched.scoring = (sched_scoring)p;
      run_label(&a, c, p, labels[nruns], sizeof labels[nruns]);
      if (a.report && side_by_side) {
        if (mkdir(a.report, 0755) != 0 && errno != EEXIST) {
          fprintf(stderr, "tessera simulate: %s: %s\n", a.report, strerror(errno));
          model_free(m);
          status = 1;
          break;
        }
        snprintf(dir, sizeof dir, "%.1900s/%s", a.report, labels[nruns]);
      } else if (a.report) {
        snprintf(dir, sizeof dir, "%.2000s", a.report);
      }
      row = a.fill ? run_fill(&a, m, &cfg, &t, &o, a.report ? dir : NULL, side_by_side,
                              curves[nruns], &status)
                   : run_trace(&a, m, &cfg, &t, &o, a.report ? dir : NULL, side_by_side,
                               used[nruns], &end_s[nruns], &status);
      model_free(m);
      if (!row || status) {
        json_decref(row);
        status = status ? status : 1;
        break;
      }
      if (a.nconfigs > 1) json_object_set_new(row, "config", json_string(a.configs[c]));
      json_array_append_new(rows, row);
      nruns++;
    }
  }
  if (!rows) fprintf(stderr, "tessera simulate: out of memory\n"), status = 1;
  if (status == 0 && side_by_side) {
    if (a.json) {
      json_t *o2 = json_pack("{s:O}", a.nconfigs > 1 ? "runs" : "policies", rows);
      if (o2) print_doc(&a, o2);
      json_decref(o2);
    } else {
      printf("%s (%s), %zu jobs, %s\n", a.trace, t.format, t.n,
             a.fill ? "fill mode" : "replayed in virtual time");
      policy_table(&a, rows, labels);
      if (trace_shares(&t)) printf("binpack scores as fgd here: pods of the trace share GPUs\n");
    }
    if (a.report) status = compare_report(&a, rows, labels, curves, used, end_s);
  }
  json_decref(rows);
  ts_free(labels), ts_free(curves), ts_free(used);
  sim_trace_free(&t);
  cfg_tessera_free(&cfg);
  return status;
}
