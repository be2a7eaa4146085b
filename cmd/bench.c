/* cmd/bench.c - `tessera bench [SCENARIO...] [--nodes N] [--pods M] [--repeat R] [--seed S]
 * [--output text|json]`: builds each scenario's cluster in memory (gen/) at the size asked for
 * and times the scheduling cycle on it, as `tessera replay` and `tessera run` run it (DRA
 * selectors through CEL, claims made from templates). `tessera bench --snapshot PATH
 * [--config FILE]` does the same on a recorded cluster (what `tessera replay` reads), its load
 * timed apart. A platform team sizes Tessera for its own cluster shape with it; make bench
 * calls it for the figures in bench/results/. */
#include <sys/stat.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "gen/gen.h"
#include "scheduler/sched.h"

static void usage(FILE *f) {
  size_t n;
  const gen_scenario *s = gen_scenarios(&n);
  fputs("usage: tessera bench [SCENARIO...] [--nodes N] [--pods M] [--repeat R] [--seed S] "
        "[-o text|json|yaml]\n"
        "       tessera bench --snapshot PATH [--config FILE] [--repeat R] [-o text|json|yaml]\n"
        "  --nodes, --pods  the scenario's size (else its own)\n"
        "  --repeat         cycles timed (best and median reported; 3)\n"
        "  --seed           the generator's seed\n"
        "  --snapshot       a recorded cluster instead of scenarios (tessera snapshot, kubectl)\n"
        "  --config         tessera.yaml, with --snapshot\n"
        "  --explain        also time tessera explain's explainer over every pending pod\n"
        "  -o, --output     text (default), json (a line per scenario) or yaml\n\n"
        "scenarios (default size):\n",
        f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "  %-10s %s (%d nodes, %d pods)\n", s[i].name, s[i].what, s[i].nodes, s[i].pods);
}

static const cmd_flag bench_flags[] = {
    {"--output", "-o", "FORMAT"}, {"--snapshot", NULL, "PATH"}, {"--config", NULL, "FILE"},
    {"--nodes", NULL, "N"},       {"--pods", NULL, "M"},        {"--repeat", NULL, "R"},
    {"--seed", NULL, "S"},        {"--explain", NULL, NULL},    {NULL, NULL, NULL}};

static int dcmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct bench_args {
  const char *names[16]; /* scenarios asked for */
  int nnames;            /* entries (0: every one) */
  int nodes, pods;       /* sizes (0: the scenario's) */
  int repeat;            /* cycles timed */
  unsigned seed;         /* generator seed (0: default) */
  bool json;             /* -o json or yaml */
  cmd_format fmt;        /* which */
  const char *snapshot;  /* --snapshot PATH: a recorded cluster instead of scenarios */
  const char *config;    /* --config FILE (with --snapshot) */
  bool explain;          /* --explain */
} bench_args;

/* CMD_PARSED, CMD_HELP or CMD_USAGE (said). */
static int parse(int argc, char **argv, bench_args *a) {
  static cmd_arg args[CMD_ARGS_MAX];
  int n, parsed = cmd_flags_parse("bench", usage, bench_flags, argc, argv, args, &n);
  memset(a, 0, sizeof *a);
  a->repeat = 3;
  if (parsed != CMD_PARSED) return parsed;
  for (int i = 0; i < n; i++) {
    const char *f = args[i].flag < 0 ? NULL : bench_flags[args[i].flag].name, *v = args[i].value;
    char *end = NULL;
    long x;
    if (args[i].flag == 0) {
      if ((a->fmt = cmd_format_parse(v, true)) == CMD_FMT_BAD)
        return cmd_usage_error("bench", usage, "-o %s: the output is text, json or yaml", v);
      a->json = a->fmt != CMD_FMT_TEXT;
      continue;
    }
    if (args[i].flag == 1 || args[i].flag == 2) {
      *(args[i].flag == 1 ? &a->snapshot : &a->config) = v;
      continue;
    }
    if (args[i].flag == 7) {
      a->explain = strcmp(v, "false") != 0;
      continue;
    }
    if (f) {
      x = strtol(v, &end, 10);
      if (!*v || *end || x < 0 || x > 10000000) {
        return cmd_usage_error("bench", usage, "%s: \"%s\" is not a number from 0 to 10000000", f,
                               v);
      }
      if (!strcmp(f, "--nodes")) a->nodes = (int)x;
      if (!strcmp(f, "--pods")) a->pods = (int)x;
      if (!strcmp(f, "--repeat")) a->repeat = x ? (int)x : 1;
      if (!strcmp(f, "--seed")) a->seed = (unsigned)x;
      continue;
    }
    if (a->nnames == 16) return cmd_usage_error("bench", usage, "at most 16 scenarios");
    if (!gen_find(v)) return cmd_usage_error("bench", usage, "no scenario \"%s\"", v);
    a->names[a->nnames++] = v;
  }
  if (a->snapshot && (a->nnames || a->nodes || a->pods || a->seed)) {
    return cmd_usage_error("bench", usage,
                           "--snapshot measures a recorded cluster: no scenario, --nodes, --pods "
                           "or --seed with it");
  }
  if (a->config && !a->snapshot) {
    return cmd_usage_error("bench", usage,
                           "--config goes with --snapshot (scenarios use the defaults)");
  }
  return CMD_PARSED;
}

/* What was measured, for the report. */
typedef struct measured {
  const char *name; /* scenario, or "snapshot" */
  const char *path; /* the snapshot's path, or NULL */
  int nodes, pods;  /* size asked for (scenarios); nodes in the model (snapshot) */
  double setup_s;   /* building the cluster, or loading the snapshot */
  long long bytes;  /* the snapshot file's size, -1 for a directory or a scenario */
  int64_t clock;    /* the cycle's clock: a snapshot's (cmd_load_clock), 0 for a scenario */
} measured;

/* --explain: one more cycle (not timed), then the explainer built from it and every pending
 * pod explained, as `tessera explain` and /explain do it (without the estimate). */
static int measure_explain(const measured *w, const model *m, const sched_config *cfg,
                           const bench_args *a) {
  sched_state *st = sched_state_new();
  sched_result res;
  sched_explainer *x = NULL;
  size_t pods = 0;
  double t0, build_s = 0, each_s = 0;
  ts_err err;
  ts_err_clear(&err);
  if (!st || sched_cycle(m, cfg, st, w->clock, &res, &err) != TS_OK) {
    fprintf(stderr, "tessera bench: %s: %s\n", w->name, st ? err.text : "out of memory");
    sched_state_free(st);
    return 1;
  }
  t0 = ts_time_mono_s();
  if (sched_explainer_new(m, cfg, &res, w->clock, &x) == TS_OK) {
    build_s = ts_time_mono_s() - t0;
    t0 = ts_time_mono_s();
    for (size_t i = 0; i < res.ndecisions; i++) {
      sched_explanation e;
      if (res.decisions[i].kind != SCHED_PENDING) continue;
      if (sched_explain(x, res.decisions[i].pod, &e) != TS_OK) break;
      pods++;
    }
    each_s = ts_time_mono_s() - t0;
  }
  sched_explainer_free(x);
  sched_result_free(&res);
  sched_state_free(st);
  if (a->json)
    cmd_write_doc(stdout, a->fmt,
                  json_pack("{s:s, s:s, s:i, s:I, s:f, s:f}", "scenario", w->name, "measure",
                            "explain", "nodes", w->nodes, "pods_explained", (json_int_t)pods,
                            "build_seconds", build_s, "explain_seconds", each_s));
  else
    printf("%-9s %6d nodes: explained %zu pending pods in %.1f ms (explainer built in %.1f ms; "
           "%.1f us per pod)\n",
           w->name, w->nodes, pods, each_s * 1e3, build_s * 1e3,
           pods ? each_s * 1e6 / (double)pods : 0.0);
  return 0;
}

/* Times a->repeat cycles on m and prints one line (or JSON object). */
static int measure(const measured *w, model *m, sched_config *cfg, const bench_args *a) {
  double t0, *t = calloc((size_t)a->repeat, sizeof *t);
  size_t bound = 0, pending = 0, decisions = 0;
  int64_t now = w->clock;
  bool tty = isatty(2);
  struct rusage ru;
  ts_err err;
  ts_err_clear(&err);
  if (!t) {
    fprintf(stderr, "tessera bench: out of memory\n");
    return 1;
  }
  for (int r = 0; r < a->repeat; r++) {
    /* a fresh scheduler's state, as replay's one cycle has: with none, waitForPodsReady's
     * evictions were skipped, so a snapshot was timed doing less than replay does */
    sched_state *state = sched_state_new();
    sched_result res;
    if (tty) fprintf(stderr, "\r%s: cycle %d of %d...\033[K", w->name, r + 1, a->repeat);
    t0 = ts_time_mono_s();
    if (!state || sched_cycle(m, cfg, state, now, &res, &err) != TS_OK) {
      fprintf(stderr, "%stessera bench: %s: %s\n", tty ? "\r\033[K" : "", w->name,
              state ? err.text : "out of memory");
      sched_state_free(state);
      free(t);
      return 1;
    }
    t[r] = ts_time_mono_s() - t0;
    bound = res.nbound, pending = res.npending, decisions = res.ndecisions;
    sched_result_free(&res);
    sched_state_free(state);
  }
  if (tty) fprintf(stderr, "\r\033[K");
  qsort(t, (size_t)a->repeat, sizeof *t, dcmp);
  getrusage(RUSAGE_SELF, &ru);
  if (a->json) {
    json_t *o = json_pack(
        "{s:s, s:i, s:i, s:f, s:f, s:f, s:i, s:I, s:I, s:I, s:f, s:f, s:I}", "scenario", w->name,
        "nodes", w->nodes, "pods", w->pods, w->path ? "load_seconds" : "build_seconds", w->setup_s,
        "cycle_seconds_best", t[0], "cycle_seconds_median", t[a->repeat / 2], "repeat", a->repeat,
        "decisions", (json_int_t)decisions, "bound", (json_int_t)bound, "pending",
        (json_int_t)pending, "decisions_per_second", (double)decisions / t[0], "placed_per_second",
        (double)bound / t[0], "peak_rss_bytes", (json_int_t)ru.ru_maxrss * 1024);
    if (o && w->path) json_object_set_new(o, "snapshot", json_string(w->path));
    if (o && w->bytes >= 0) json_object_set_new(o, "bytes", json_integer(w->bytes));
    cmd_write_doc(stdout, a->fmt, o);
  } else {
    printf("%-9s %6d nodes %7zu pods: cycle %9.1f ms (best of %d; median %.1f), %8.0f "
           "decided/s, %8.0f placed/s (%zu bound, %zu pending); ",
           w->name, w->nodes, w->path ? (size_t)w->pods : decisions, t[0] * 1e3, a->repeat,
           t[a->repeat / 2] * 1e3, (double)decisions / t[0], (double)bound / t[0], bound, pending);
    if (!w->path)
      printf("built in %.2f s\n", w->setup_s);
    else if (w->bytes >= 0)
      printf("loaded in %.2f s (%.1f MB, %.0f MB/s)\n", w->setup_s, (double)w->bytes / 1e6,
             (double)w->bytes / 1e6 / w->setup_s);
    else
      printf("loaded in %.2f s\n", w->setup_s);
  }
  fflush(stdout);
  free(t);
  return 0;
}

/* Builds one scenario and times its cycle. */
static int bench_one(const gen_scenario *s, const bench_args *a, dra_cel *cel) {
  measured w = {s->name, NULL, a->nodes ? a->nodes : s->nodes, a->pods ? a->pods : s->pods, 0, -1};
  model *m = model_new();
  sched_config cfg;
  double t0;
  bool tty = isatty(2);
  int status;
  ts_err err;
  ts_err_clear(&err);
  if (!m) {
    fprintf(stderr, "tessera bench: out of memory\n");
    return 1;
  }
  if (tty) fprintf(stderr, "\r%s: building %d nodes, %d pods...\033[K", s->name, w.nodes, w.pods);
  t0 = ts_time_mono_s();
  if (gen_build(s, m, w.nodes, w.pods, a->seed, &err) != TS_OK) {
    fprintf(stderr, "%stessera bench: %s: %s\n", tty ? "\r\033[K" : "", s->name, err.text);
    model_free(m);
    return 1;
  }
  w.setup_s = ts_time_mono_s() - t0;
  sched_config_default(&cfg);
  cfg.instantiate_templates = true; /* no claim controller: claims from templates */
  cfg.dra_eval = dra_cel_eval, cfg.dra_eval_ctx = cel;
  status = measure(&w, m, &cfg, a);
  if (!status && a->explain) status = measure_explain(&w, m, &cfg, a);
  sched_config_free(&cfg);
  model_free(m);
  return status;
}

/* Loads a recorded cluster as `tessera replay` does and times its cycle. */
static int bench_snapshot(const bench_args *a, dra_cel *cel) {
  measured w = {"snapshot", a->snapshot, 0, 0, 0, -1, 0};
  cmd_load_counts counts = {0, 0};
  struct stat st;
  cfg_tessera t;
  model *m = NULL;
  size_t n;
  double t0;
  int status = 1;
  ts_rc rc;
  ts_err err;
  ts_err_clear(&err);
  if (cfg_tessera_setup(a->config, &t, &err) != TS_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 2;
  }
  if (isatty(2)) fprintf(stderr, "\rsnapshot: loading %s...\033[K", a->snapshot);
  t0 = ts_time_mono_s();
  if (!(m = model_new())) {
    fprintf(stderr, "tessera bench: out of memory\n");
    goto out;
  }
  /* as a replay loads it; problems are printed as they are met */
  rc = cmd_load_offline(a->snapshot, m, a->config != NULL, &t, cel, &counts, &w.clock, &err);
  if (rc != TS_OK && err.code) fprintf(stderr, "%s: %s\n", a->snapshot, err.text);
  w.setup_s = ts_time_mono_s() - t0;
  if (isatty(2)) fprintf(stderr, "\r\033[K");
  if (rc == TS_ENOMEM) fprintf(stderr, "tessera bench: out of memory\n");
  if (rc != TS_OK) goto out;
  if (!counts.objects) {
    fprintf(stderr, "tessera bench: %s: no objects loaded\n", a->snapshot);
    goto out;
  }
  w.bytes = stat(a->snapshot, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
  model_nodes(m, &n);
  w.nodes = (int)n, w.pods = (int)model_count(m, MODEL_POD);
  status = measure(&w, m, &t.sched, a);
  if (!status && a->explain) status = measure_explain(&w, m, &t.sched, a);
out:
  model_free(m);
  cfg_tessera_free(&t);
  return status;
}

int cmd_bench(int argc, char **argv) {
  bench_args a;
  size_t n;
  const gen_scenario *all = gen_scenarios(&n);
  dra_cel *cel;
  int status = 0;
  int parsed = parse(argc, argv, &a);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  if (!(cel = dra_cel_new())) {
    fprintf(stderr, "tessera bench: out of memory\n");
    return 1;
  }
  if (!a.json)
    printf("one scheduling cycle per %s on one core; %s, not timed in the cycle\n",
           a.snapshot ? "snapshot" : "scenario",
           a.snapshot ? "loaded as tessera replay loads it" : "cluster built in memory");
  if (a.snapshot) status = bench_snapshot(&a, cel);
  for (size_t i = 0; !a.snapshot && i < (a.nnames ? (size_t)a.nnames : n); i++)
    status |= bench_one(a.nnames ? gen_find(a.names[i]) : &all[i], &a, cel);
  dra_cel_free(cel);
  return status;
}
