/* cmd/replay.c - `tessera replay PATH`: load a recorded cluster, run the scheduling cycle
 * offline, print every decision and a summary. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "config/config.h"
#include "model/model.h"
#include "queueing/queueing.h"
#include "scheduler/sched.h"

/* What --stats reports: where the command's time and memory went. */
typedef struct replay_stats {
  double start;     /* monotonic seconds at the start */
  double load_s;    /* reading, decoding and checking the snapshot */
  double cycle_s;   /* the scheduling cycle */
  long long bytes;  /* size of PATH when it is a file, else -1 */
  long long loaded; /* resident memory once loaded (the model), bytes */
  size_t decisions; /* decisions of the cycle */
} replay_stats;

/* Peak resident memory of the process so far, in bytes. */
static long long peak_rss(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? (long long)ru.ru_maxrss * 1024 : -1;
}

/* Resident memory of the process now, in bytes. */
static long long rss_now(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long long size = 0, resident = -1;
  if (f) {
    if (fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
    fclose(f);
  }
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

typedef struct replay {
  model *m;                /* the cluster */
  replay_stats *stats;     /* --stats, or NULL */
  int errors;              /* objects or files that failed to load */
  int objects;             /* objects loaded */
  bool json;               /* -o json or yaml: a document per decision, and the summary */
  cmd_format fmt;          /* which */
  FILE *out;               /* decisions and summary */
  const sched_config *cfg; /* the cycle's settings */
} replay;

static void print_json(const replay *r, json_t *o) {
  cmd_write_doc(r->out, r->fmt, o);
}

static void print_decision(const replay *r, const sched_decision *d) {
  if (!r->json) {
    if (d->kind == SCHED_BIND && d->gpu_shared)
      fprintf(r->out, "bind %s -> %s (GPU %u shared)\n", d->pod->obj.key, d->node->obj.name,
              d->gpu_index);
    else if (d->kind == SCHED_BIND)
      fprintf(r->out, "bind %s -> %s\n", d->pod->obj.key, d->node->obj.name);
    else
      fprintf(r->out, "%s %s: %s\n", d->kind == SCHED_EVICT ? "evict" : "pending", d->pod->obj.key,
              d->reason);
    if (d->kind == SCHED_BIND) replay_print_claims(r->out, d);
    return;
  }
  if (d->kind == SCHED_BIND) {
    json_t *o = json_pack("{s:s, s:s, s:s}", "action", "bind", "pod", d->pod->obj.key, "node",
                          d->node->obj.name);
    if (d->nclaims) json_object_set_new(o, "claims", replay_claims_json(d));
    if (d->gpu_shared) json_object_set_new(o, "gpuIndex", json_integer(d->gpu_index));
    print_json(r, o);
  } else
    print_json(r,
               json_pack("{s:s, s:s, s:s}", "action", d->kind == SCHED_EVICT ? "evict" : "pending",
                         "pod", d->pod->obj.key, "reason", d->reason));
}

static void print_summary(const replay *r, const sched_result *res) {
  static sched_pool pools[256];
  int gpu[SCHED_POOL_GPUS], ngpu = sched_gpu_resources(r->m, gpu);
  size_t n = sched_pools(r->m, gpu, ngpu, pools, 256);
  const model_resources *t = model_resources_of(r->m);
  json_t *js = NULL, *jp = NULL;
  if (r->json) {
    js = json_pack("{s:i, s:i, s:i, s:i}", "objects", r->objects, "bound", (int)res->nbound,
                   "pending", (int)res->npending, "errors", r->errors);
    jp = json_array();
  } else {
    fprintf(r->out, "\nsummary: %zu pods bound, %zu pending", res->nbound, res->npending);
    if (res->nevicted) fprintf(r->out, ", %zu evicted", res->nevicted);
    fprintf(r->out, "; %d objects loaded", r->objects);
    if (r->errors) fprintf(r->out, ", %d rejected", r->errors);
    fprintf(r->out, "\nGPUs allocated per node pool:\n");
  }
  int lines = 0;
  for (size_t i = 0; i < n; i++) {
    for (int g = 0; g < ngpu; g++) {
      if (!pools[i].alloc[g]) continue;
      lines++;
      if (r->json)
        json_array_append_new(jp,
                              json_pack("{s:s, s:i, s:s, s:I, s:I}", "pool", pools[i].name, "nodes",
                                        pools[i].nodes, "resource", model_resource_name(t, gpu[g]),
                                        "allocated", (json_int_t)pools[i].used[g], "allocatable",
                                        (json_int_t)pools[i].alloc[g]));
      else
        fprintf(r->out, "  %-28s %3d nodes  %-18s %4lld / %-4lld (%.0f%%)\n", pools[i].name,
                pools[i].nodes, model_resource_name(t, gpu[g]), (long long)pools[i].used[g],
                (long long)pools[i].alloc[g],
                100.0 * (double)pools[i].used[g] / (double)pools[i].alloc[g]);
    }
  }
  if (!lines && !r->json) fprintf(r->out, "  none: no node offers GPUs as an extended resource\n");
  replay_dra_summary(r->out, js, r->m, res);
  replay_queues(r->out, js, r->m, r->cfg, res);
  if (r->json && r->stats) {
    const replay_stats *st = r->stats;
    json_object_set_new(
        js, "stats",
        json_pack("{s:f, s:I, s:f, s:I, s:f, s:I, s:I}", "load_seconds", st->load_s, "input_bytes",
                  (json_int_t)st->bytes, "cycle_seconds", st->cycle_s, "decisions",
                  (json_int_t)st->decisions, "decisions_per_second",
                  st->cycle_s > 0 ? (double)st->decisions / st->cycle_s : 0.0, "loaded_rss_bytes",
                  (json_int_t)st->loaded, "peak_rss_bytes", (json_int_t)peak_rss()));
  }
  if (r->json) {
    json_object_set_new(js, "gpus", jp);
    print_json(r, json_pack("{s:o}", "summary", js));
  }
}

static void usage(FILE *f) {
  fputs("usage: tessera replay PATH [--config FILE] [--expect FILE] [-o text|json|yaml] "
        "[--spread] [--stats]\n"
        "  PATH           a recorded cluster: JSON, YAML, or a directory of them\n"
        "  --config       tessera.yaml (else the snapshot's own, else the defaults)\n"
        "  --expect       expectations to check the decisions against\n"
        "  -o, --output   text (default), json (a line per decision, then the summary) or yaml\n"
        "  --spread       score nodes by spreading instead of bin-packing\n"
        "  --stats        load, cycle and output times and memory, on standard error\n",
        f);
}

static const cmd_flag replay_flags[] = {{"--config", NULL, "FILE"},   {"--expect", NULL, "FILE"},
                                        {"--output", "-o", "FORMAT"}, {"--spread", NULL, NULL},
                                        {"--stats", NULL, NULL},      {NULL, NULL, NULL}};

typedef struct replay_args {
  const char *path;   /* the snapshot */
  const char *expect; /* --expect FILE, or NULL */
  const char *config; /* --config FILE, or NULL */
  bool spread;        /* --spread */
  cmd_format fmt;     /* -o */
  bool stats;         /* --stats */
} replay_args;

/* CMD_PARSED, or what to exit with. */
static int parse_args(int argc, char **argv, replay_args *a) {
  static cmd_arg v[CMD_ARGS_MAX];
  int n, rc = cmd_flags_parse("replay", usage, replay_flags, argc, argv, v, &n);
  memset(a, 0, sizeof *a);
  if (rc != CMD_PARSED) return rc;
  for (int i = 0; i < n; i++) {
    const char *x = v[i].value;
    if (v[i].flag == 0)
      a->config = x;
    else if (v[i].flag == 1)
      a->expect = x;
    else if (v[i].flag == 2 && (a->fmt = cmd_format_parse(x, true)) == CMD_FMT_BAD)
      return cmd_usage_error("replay", usage, "-o %s: the output is text, json or yaml", x);
    else if (v[i].flag == 3)
      a->spread = strcmp(x, "false") != 0;
    else if (v[i].flag == 4)
      a->stats = strcmp(x, "false") != 0;
    else if (v[i].flag < 0 && a->path)
      return cmd_usage_error("replay", usage, "one PATH only (%s, then %s)", a->path, x);
    else if (v[i].flag < 0)
      a->path = x;
  }
  return a->path ? CMD_PARSED : cmd_usage_error("replay", usage, "no PATH");
}

/* Applies the cycle's decisions to the model (what the cluster would then show) and prints
 * them; returns the exit status. */
static int report(replay *r, const replay_args *a, sched_result *res) {
  int status = 0;
  for (size_t i = 0; i < res->ndecisions; i++) {
    const sched_decision *d = &res->decisions[i];
    print_decision(r, d);
    sched_decision_apply(r->m, d);
  }
  print_summary(r, res);
  if (r->errors) status = 1;
  if (a->expect && replay_expect(a->expect, r->m, res, r->out) != 0) status = 1;
  return status;
}

/* The --stats line (standard error, so that the decisions stay as they are). */
static void print_stats(const replay_stats *st) {
  double total = ts_time_mono_s() - st->start;
  fprintf(stderr, "stats: load %.3f s", st->load_s);
  if (st->bytes >= 0)
    fprintf(stderr, " (%.1f MB, %.1f MB/s)", (double)st->bytes / 1e6,
            st->load_s > 0 ? (double)st->bytes / 1e6 / st->load_s : 0.0);
  fprintf(stderr,
          ", cycle %.3f s (%zu decisions, %.0f/s), output %.3f s, total %.3f s, resident once "
          "loaded %.1f MB, peak RSS %.1f MB\n",
          st->cycle_s, st->decisions, st->cycle_s > 0 ? (double)st->decisions / st->cycle_s : 0.0,
          total - st->load_s - st->cycle_s, total, (double)st->loaded / 1e6,
          (double)peak_rss() / 1e6);
}

int cmd_replay(int argc, char **argv) {
  replay r = {0};
  replay_stats stats = {0};
  replay_args a;
  struct stat pst;
  cfg_tessera t;
  sched_result res;
  sched_state *state;
  cmd_load_counts counts = {0, 0};
  int64_t clock = 0;
  dra_cel *cel;
  ts_err err;
  int status = 1;
  if ((status = parse_args(argc, argv, &a)) != CMD_PARSED) return cmd_flags_exit(status);
  status = 1;
  stats.start = ts_time_mono_s();
  stats.bytes = stat(a.path, &pst) == 0 && S_ISREG(pst.st_mode) ? (long long)pst.st_size : -1;
  if (a.stats) r.stats = &stats;
  ts_err_clear(&err);
  if (cfg_tessera_setup(a.config, &t, &err) != TS_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 2;
  }
  r.out = stdout, r.json = a.fmt != CMD_FMT_TEXT, r.fmt = a.fmt, r.cfg = &t.sched;
  if (!(cel = dra_cel_new())) goto fail_config;
  if (!(r.m = model_new())) goto fail_cel;
  if (cmd_load_offline(a.path, r.m, a.config != NULL, &t, cel, &counts, &clock, &err) != TS_OK) {
    if (err.code) fprintf(stderr, "%s: %s\n", a.path, err.text), status = 2; /* the config */
    goto fail_model;
  }
  if (a.spread) t.sched.scoring = SCHED_SPREAD;
  r.objects = counts.objects, r.errors = counts.errors;
  if (!(state = sched_state_new())) {
    fprintf(stderr, "tessera: out of memory\n");
    goto fail_model;
  }
  stats.load_s = ts_time_mono_s() - stats.start; /* config, files, decoding and checks */
  stats.loaded = rss_now();
  if (sched_cycle(r.m, &t.sched, state, clock, &res, &err) != TS_OK) {
    fprintf(stderr, "tessera: %s\n", err.text);
    goto fail_state;
  }
  stats.cycle_s = ts_time_mono_s() - stats.start - stats.load_s;
  stats.decisions = res.ndecisions;
  status = report(&r, &a, &res);
  fflush(r.out);
  if (a.stats) print_stats(&stats);
  sched_result_free(&res);
fail_state:
  sched_state_free(state);
fail_model:
  model_free(r.m);
fail_cel:
  dra_cel_free(cel);
fail_config:
  cfg_tessera_free(&t);
  return status;
}
