/* cmd/shadow.c - what `tessera run --shadow` tells of a comparison (sched_shadow): a summary
 * for the log, the tessera_shadow_* metrics, and a report written to a directory as JSON and
 * as one self-contained HTML page (inline CSS, no script, as simulate --report). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static const char *who(const char *scheduler) {
  return scheduler ? scheduler : "every other scheduler";
}

void shadow_log(const sched_shadow *s, const char *scheduler) {
  ts_log(TS_LOG_INFO,
         "shadow of %s: %zu pods, %zu placed (Tessera: %zu); gangs partially placed %zu "
         "(Tessera: %zu), split over domains %zu; pending that Tessera would place now %zu; "
         "placed that Tessera would have left pending %zu; GPUs stranded %lld of %lld free "
         "(Tessera: %lld of %lld); Tessera would preempt %zu pods",
         who(scheduler), s->pods, s->bound[0], s->bound[1], s->partial[0], s->partial[1], s->split,
         s->placeable, s->unplaceable, (long long)s->stranded_gpus[0], (long long)s->free_gpus[0],
         (long long)s->stranded_gpus[1], (long long)s->free_gpus[1], s->preempt);
  for (size_t i = 0; i < s->nqueues; i++) {
    const sched_shadow_queue *q = &s->queues[i];
    if (q->admitted[0] == q->admitted[1] && !q->would_admit && !q->would_preempt) continue;
    ts_log(TS_LOG_INFO,
           "shadow of %s: queue %s: %zu workloads, %zu placed whole (Tessera: %zu); Tessera "
           "would admit %zu and preempt %zu now",
           who(scheduler), q->name, q->workloads, q->admitted[0], q->admitted[1], q->would_admit,
           q->would_preempt);
  }
}

/* The tessera_shadow_* families. */
enum {
  SH_EVALUATIONS,
  SH_LAST,
  SH_PODS,
  SH_GANGS,
  SH_PARTIAL,
  SH_SPLIT,
  SH_PLACEABLE,
  SH_UNPLACEABLE,
  SH_PREEMPTIONS,
  SH_GPUS,
  SH_FREE,
  SH_STRANDED,
  SH_Q_ADMITTED,
  SH_Q_WOULD_ADMIT,
  SH_Q_WOULD_PREEMPT,
  SH_COUNT
};
static const ts_prom_family shadow_families[SH_COUNT] = {
    [SH_EVALUATIONS] = {"tessera_shadow_evaluations_total",
                        "counter",
                        "Comparisons made (tessera run --shadow).",
                        {NULL}},
    [SH_LAST] = {"tessera_shadow_last_evaluation_timestamp_seconds",
                 "gauge",
                 "When the last comparison was made (Unix time).",
                 {NULL}},
    [SH_PODS] = {"tessera_shadow_pods",
                 "gauge",
                 "The other scheduler's pods, placed or pending: as it placed them "
                 "(placement=\"actual\") and as Tessera would have (placement=\"tessera\").",
                 {"placement", "state", NULL}},
    [SH_GANGS] = {"tessera_shadow_gangs",
                  "gauge",
                  "Gangs of more than one pod among them.",
                  {NULL}},
    [SH_PARTIAL] = {"tessera_shadow_partial_gangs",
                    "gauge",
                    "Gangs with some pods placed and others that must start with them pending "
                    "(past 10 s).",
                    {"placement", NULL}},
    [SH_SPLIT] = {"tessera_shadow_split_gangs",
                  "gauge",
                  "Gangs the other scheduler spread over more domains of the narrowest topology "
                  "level in which Tessera kept them whole.",
                  {NULL}},
    [SH_PLACEABLE] = {"tessera_shadow_placeable_pods",
                      "gauge",
                      "Pods it left pending (past 10 s) that Tessera would place now.",
                      {NULL}},
    [SH_UNPLACEABLE] = {"tessera_shadow_unplaceable_pods",
                        "gauge",
                        "Pods it placed that Tessera would have left pending.",
                        {NULL}},
    [SH_PREEMPTIONS] = {"tessera_shadow_preemptions",
                        "gauge",
                        "Pods Tessera would evict now to make room.",
                        {NULL}},
    [SH_GPUS] = {"tessera_shadow_gpus", "gauge", "GPUs of the schedulable nodes.", {NULL}},
    [SH_FREE] = {"tessera_shadow_gpus_free",
                 "gauge",
                 "Free GPUs, by placement.",
                 {"placement", NULL}},
    [SH_STRANDED] = {"tessera_shadow_gpus_stranded",
                     "gauge",
                     "Free GPUs on nodes where none of the pending GPU pods' shapes fits, by "
                     "placement.",
                     {"placement", NULL}},
    [SH_Q_ADMITTED] = {"tessera_shadow_queue_admitted_workloads",
                       "gauge",
                       "Workloads of each queue placed whole, by placement.",
                       {"queue", "placement", NULL}},
    [SH_Q_WOULD_ADMIT] = {"tessera_shadow_queue_would_admit_workloads",
                          "gauge",
                          "Workloads of each queue Tessera would admit now.",
                          {"queue", NULL}},
    [SH_Q_WOULD_PREEMPT] = {"tessera_shadow_queue_would_preempt_workloads",
                            "gauge",
                            "Workloads of each queue Tessera would preempt now.",
                            {"queue", NULL}},
};

void shadow_metrics(const sched_shadow *s, uint64_t evaluations, ts_buf *b) {
  static const char *const place[2] = {"actual", "tessera"};
  const ts_prom_family *f = shadow_families;
  ts_prom p = {b, TS_OK};
  ts_prom_one(&p, &f[SH_EVALUATIONS], (double)evaluations);
  if (!evaluations) return;
  ts_prom_one(&p, &f[SH_LAST], (double)(s->at_ns / 1000000000LL));
  ts_prom_head(&p, &f[SH_PODS]);
  for (int w = 0; w < 2; w++) {
    ts_prom_sample(&p, &f[SH_PODS], (const char *[]){place[w], "bound"}, (double)s->bound[w]);
    ts_prom_sample(&p, &f[SH_PODS], (const char *[]){place[w], "pending"}, (double)s->pending[w]);
  }
  ts_prom_one(&p, &f[SH_GANGS], (double)s->gangs);
  ts_prom_head(&p, &f[SH_PARTIAL]);
  for (int w = 0; w < 2; w++) ts_prom_sample(&p, &f[SH_PARTIAL], &place[w], (double)s->partial[w]);
  ts_prom_one(&p, &f[SH_SPLIT], (double)s->split);
  ts_prom_one(&p, &f[SH_PLACEABLE], (double)s->placeable);
  ts_prom_one(&p, &f[SH_UNPLACEABLE], (double)s->unplaceable);
  ts_prom_one(&p, &f[SH_PREEMPTIONS], (double)s->preempt);
  ts_prom_one(&p, &f[SH_GPUS], (double)s->gpus);
  ts_prom_head(&p, &f[SH_FREE]);
  for (int w = 0; w < 2; w++) ts_prom_sample(&p, &f[SH_FREE], &place[w], (double)s->free_gpus[w]);
  ts_prom_head(&p, &f[SH_STRANDED]);
  for (int w = 0; w < 2; w++)
    ts_prom_sample(&p, &f[SH_STRANDED], &place[w], (double)s->stranded_gpus[w]);
  ts_prom_head(&p, &f[SH_Q_ADMITTED]);
  for (size_t i = 0; i < s->nqueues; i++)
    for (int w = 0; w < 2; w++)
      ts_prom_sample(&p, &f[SH_Q_ADMITTED], (const char *[]){s->queues[i].name, place[w]},
                     (double)s->queues[i].admitted[w]);
  ts_prom_head(&p, &f[SH_Q_WOULD_ADMIT]);
  for (size_t i = 0; i < s->nqueues; i++)
    ts_prom_sample(&p, &f[SH_Q_WOULD_ADMIT], &s->queues[i].name, (double)s->queues[i].would_admit);
  ts_prom_head(&p, &f[SH_Q_WOULD_PREEMPT]);
  for (size_t i = 0; i < s->nqueues; i++)
    ts_prom_sample(&p, &f[SH_Q_WOULD_PREEMPT], &s->queues[i].name,
                   (double)s->queues[i].would_preempt);
}

json_t *shadow_json(const sched_shadow *s, const char *scheduler) {
  json_t *queues = json_array(), *examples = json_object(), *counts = json_object();
  char when[40];
  for (size_t i = 0; i < s->nqueues; i++) {
    const sched_shadow_queue *q = &s->queues[i];
    json_array_append_new(queues, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "queue", q->name,
                                            "workloads", (json_int_t)q->workloads, "admitted",
                                            (json_int_t)q->admitted[0], "admittedByTessera",
                                            (json_int_t)q->admitted[1], "wouldAdmitNow",
                                            (json_int_t)q->would_admit, "wouldPreemptNow",
                                            (json_int_t)q->would_preempt));
  }
  for (int k = 0; k < SCHED_SHADOW_KIND_COUNT; k++) {
    json_object_set_new(counts, sched_shadow_kind_name((sched_shadow_kind)k),
                        json_integer((json_int_t)s->counts[k]));
    json_object_set_new(examples, sched_shadow_kind_name((sched_shadow_kind)k), json_array());
  }
  for (size_t i = 0; i < s->nexamples; i++)
    json_array_append_new(
        json_object_get(examples, sched_shadow_kind_name(s->examples[i].kind)),
        json_pack("{s:s, s:s}", "what", s->examples[i].what, "detail", s->examples[i].detail));
  ts_time_format(s->at_ns, when, sizeof when);
  return json_pack(
      "{s:s, s:o, s:I, s:{s:I, s:I}, s:{s:I, s:I}, s:I, s:{s:I, s:I}, s:I, s:I, s:I, s:I, "
      "s:{s:I, s:{s:I, s:I}, s:{s:I, s:I}, s:I}, s:o, s:o, s:o}",
      "at", when, "scheduler", scheduler ? json_string(scheduler) : json_null(), "pods",
      (json_int_t)s->pods, "bound", "actual", (json_int_t)s->bound[0], "tessera",
      (json_int_t)s->bound[1], "pending", "actual", (json_int_t)s->pending[0], "tessera",
      (json_int_t)s->pending[1], "gangs", (json_int_t)s->gangs, "partialGangs", "actual",
      (json_int_t)s->partial[0], "tessera", (json_int_t)s->partial[1], "splitGangs",
      (json_int_t)s->split, "placeableNow", (json_int_t)s->placeable, "unplaceable",
      (json_int_t)s->unplaceable, "wouldPreemptPods", (json_int_t)s->preempt, "gpus", "total",
      (json_int_t)s->gpus, "free", "actual", (json_int_t)s->free_gpus[0], "tessera",
      (json_int_t)s->free_gpus[1], "stranded", "actual", (json_int_t)s->stranded_gpus[0], "tessera",
      (json_int_t)s->stranded_gpus[1], "pendingShapes", (json_int_t)s->shapes, "queues", queues,
      "differences", counts, "examples", examples);
}

static void row(FILE *f, const char *what, long long actual, long long tessera, const char *note) {
  fputs("<tr><td>", f);
  cmd_html_esc(f, what);
  fprintf(f, "</td><td>%lld</td><td>", actual);
  if (tessera >= 0) fprintf(f, "%lld", tessera);
  fputs("</td><td class=\"n\">", f);
  cmd_html_esc(f, note);
  fputs("</td></tr>\n", f);
}

static void shadow_html(FILE *f, const sched_shadow *s, const char *scheduler) {
  static const char *const titles[SCHED_SHADOW_KIND_COUNT] = {
      "Gangs placed partially",
      "Gangs split over topology domains",
      "Pending pods Tessera would place now",
      "Placed pods Tessera would have left pending",
      "Queued workloads Tessera would have admitted",
      "Queued workloads Tessera would have kept waiting",
      "Pods Tessera would preempt now"};
  char when[40];
  ts_time_format(s->at_ns, when, sizeof when);
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<title>tessera shadow</title>\n<style>\n"
        "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}\n"
        "h1{font-size:20px}h2{font-size:16px;margin-top:28px}p.note,td.n{color:#555}\n"
        "table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;"
        "text-align:right}td:first-child,th:first-child,td.n{text-align:left}\n"
        "</style></head><body>\n<h1>tessera shadow</h1>\n<p>The pods of <b>",
        f);
  cmd_html_esc(f, who(scheduler));
  fprintf(f,
          "</b> as it placed them, against the same pods placed again by Tessera (one cycle, "
          "with this cluster's queues, topology and scoring), at %s. Tessera wrote nothing to the "
          "cluster.</p>\n<table><tr><th></th><th>as placed</th><th>by Tessera</th><th></th></tr>\n",
          when);
  row(f, "pods", (long long)s->pods, (long long)s->pods, "not finished");
  row(f, "placed", (long long)s->bound[0], (long long)s->bound[1], "");
  row(f, "pending", (long long)s->pending[0], (long long)s->pending[1], "");
  row(f, "gangs of several pods", (long long)s->gangs, (long long)s->gangs, "");
  row(f, "gangs placed partially", (long long)s->partial[0], (long long)s->partial[1],
      "some pods placed, others that must start with them pending");
  row(f, "gangs split over domains", (long long)s->split, 0,
      "more domains of the narrowest level Tessera kept them in");
  row(f, "GPUs", (long long)s->gpus, (long long)s->gpus, "schedulable nodes");
  row(f, "GPUs free", (long long)s->free_gpus[0], (long long)s->free_gpus[1], "");
  row(f, "GPUs stranded", (long long)s->stranded_gpus[0], (long long)s->stranded_gpus[1],
      "free, on nodes where no pending GPU pod's shape fits");
  row(f, "pending pods Tessera would place now", (long long)s->placeable, -1,
      "from the cluster as it is");
  row(f, "placed pods Tessera would have left pending", (long long)s->unplaceable, -1, "");
  row(f, "pods Tessera would preempt now", (long long)s->preempt, -1, "");
  fputs("</table>\n", f);
  if (s->nqueues) {
    fputs("<h2>Queues</h2>\n<table><tr><th>queue</th><th>workloads</th><th>placed whole</th>"
          "<th>by Tessera</th><th>Tessera would admit now</th><th>would preempt now</th></tr>\n",
          f);
    for (size_t i = 0; i < s->nqueues; i++) {
      const sched_shadow_queue *q = &s->queues[i];
      fputs("<tr><td>", f);
      cmd_html_esc(f, q->name);
      fprintf(f, "</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td></tr>\n",
              q->workloads, q->admitted[0], q->admitted[1], q->would_admit, q->would_preempt);
    }
    fputs("</table>\n", f);
  }
  for (int k = 0; k < SCHED_SHADOW_KIND_COUNT; k++) {
    if (!s->counts[k]) continue;
    fprintf(f, "<h2>%s: %zu</h2>\n<table>\n", titles[k], s->counts[k]);
    for (size_t i = 0; i < s->nexamples; i++) {
      if (s->examples[i].kind != (sched_shadow_kind)k) continue;
      fputs("<tr><td>", f);
      cmd_html_esc(f, s->examples[i].what);
      fputs("</td><td class=\"n\">", f);
      cmd_html_esc(f, s->examples[i].detail);
      fputs("</td></tr>\n", f);
    }
    if (s->counts[k] > SCHED_SHADOW_EXAMPLES)
      fprintf(f, "<tr><td class=\"n\" colspan=\"2\">and %zu more</td></tr>\n",
              s->counts[k] - SCHED_SHADOW_EXAMPLES);
    fputs("</table>\n", f);
  }
  fputs("</body></html>\n", f);
}

int shadow_report(const char *dir, const sched_shadow *s, const char *scheduler, ts_err *err) {
  char path[4096];
  cmd_out out;
  FILE *f;
  json_t *j = shadow_json(s, scheduler);
  int bad = !j;
  snprintf(path, sizeof path, "%s/shadow.json", dir);
  if (!bad && (f = cmd_out_open(&out, path))) {
    bad = json_dumpf(j, f, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || fputc('\n', f) == EOF;
    if (bad)
      cmd_out_abort(&out);
    else
      bad = cmd_out_commit(&out) != 0;
  } else {
    bad = 1;
  }
  json_decref(j);
  if (bad) return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno)), -1;
  snprintf(path, sizeof path, "%s/shadow.html", dir);
  if (!(f = cmd_out_open(&out, path)))
    return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno)), -1;
  shadow_html(f, s, scheduler);
  if (cmd_out_commit(&out) != 0)
    return ts_err_set(err, TS_EIO, "%s: %s", path, strerror(errno)), -1;
  return 0;
}
