/* cmd/simulate_html.c - the report of `tessera simulate` as one self-contained HTML page: inline
 * CSS and SVG, no script, no external file, so that a browser opens it offline. Each plot is a
 * step function of the run's samples averaged over equal slices of time (time-weighted), so a
 * 60-day run draws as many points as a 1-hour one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "sim/sim.h"

#define W       900 /* plot width and height, in SVG units */
#define H       240
#define ML      56 /* margins: left (y labels), right, top, bottom (x labels) */
#define MR      16
#define MT      12
#define MB      28
#define BUCKETS 450 /* points per series */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
#define NCOLORS (sizeof palette / sizeof *palette)

void cmd_html_esc(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '<')
      fputs("&lt;", f);
    else if (*s == '>')
      fputs("&gt;", f);
    else if (*s == '&')
      fputs("&amp;", f);
    else if (*s == '"')
      fputs("&quot;", f);
    else
      fputc(*s, f);
  }
}

/* Series `which` at every sample (out: nsamples entries): 0 GPUs used, 1 free GPUs on used
 * nodes, 2 jobs pending, 3 jobs running. */
static void sample_series(const sim_result *r, int which, double *out) {
  for (size_t i = 0; i < r->nsamples; i++) {
    const sim_sample *x = &r->samples[i];
    out[i] = which == 0   ? x->gpus_used
             : which == 1 ? x->gpus_idle_frag
             : which == 2 ? (double)x->pending_jobs
                          : (double)x->running_jobs;
  }
}

/* out[b]: the time-weighted mean of v (one value per sample) over slice b of [0, end].
 * O(samples + BUCKETS). */
static void buckets(const sim_result *r, const double *v, double *out) {
  double span = r->end_s > 0 ? (double)r->end_s : 1, width = span / BUCKETS;
  size_t i = 0;
  for (int b = 0; b < BUCKETS; b++) {
    double lo = b * width, hi = lo + width, area = 0;
    while (i + 1 < r->nsamples && (double)r->samples[i + 1].t_s <= lo) i++;
    for (size_t k = i; k < r->nsamples && (double)r->samples[k].t_s < hi; k++) {
      double from = fmax(lo, (double)r->samples[k].t_s);
      double to = k + 1 < r->nsamples ? fmin(hi, (double)r->samples[k + 1].t_s) : hi;
      if (to > from) area += (to - from) * v[k];
    }
    out[b] = area / width;
  }
}

/* A round step for an axis from 0 to v: 1, 2 or 5 times a power of ten, cutting it into at
 * most 6 parts. */
static double nice_step(double v) {
  double p = pow(10, floor(log10((v > 0 ? v : 1) / 6)));
  for (int i = 0;; i++) {
    double m = (i == 0 ? 1 : i == 1 ? 2 : i == 2 ? 5 : 10) * p;
    if (v / m <= 6 || i == 3) return m;
  }
}

/* The top of an axis that must show v: v rounded up to a whole round step. */
static double nice_max(double v) {
  double step = nice_step(v > 0 ? v : 1);
  return ceil((v > 0 ? v : 1) / step - 1e-9) * step;
}

static double pxx(double x, double xmax) {
  return ML + (W - ML - MR) * x / (xmax > 0 ? xmax : 1);
}

static double px(const sim_result *r, double t_s) {
  return pxx(t_s, (double)r->end_s);
}

static double py(double v, double ymax) {
  return MT + (H - MT - MB) * (1 - v / ymax);
}

/* An SVG plot's frame: the y axis from 0 to ymax at round steps (unit: ylabel), its grid. */
static void frame(FILE *f, double ymax, const char *ylabel) {
  double step = nice_step(ymax);
  fprintf(f, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\">\n", W, H, W, H);
  for (double v = 0; v <= ymax * (1 + 1e-9); v += step) {
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", ML, W - MR,
            py(v, ymax), py(v, ymax));
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"yl\">%g</text>\n", ML - 6, py(v, ymax) + 4, v);
  }
  fprintf(f, "<text x=\"12\" y=\"%d\" class=\"ylabel\" transform=\"rotate(-90 12 %d)\">", H / 2,
          H / 2);
  cmd_html_esc(f, ylabel);
  fputs("</text>\n", f);
}

/* Axes of a plot of time from 0 to end_s (ticks at round spans: 10 minutes to 2 weeks). */
static void time_axes(FILE *f, int64_t end_s, double ymax, const char *ylabel) {
  static const int64_t steps[] = {600, 3600, 6 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400};
  int64_t step = steps[0];
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
    if (end_s / steps[i] >= 3) step = steps[i];
  frame(f, ymax, ylabel);
  for (int64_t t = 0; t <= end_s; t += step) {
    double x = pxx((double)t, (double)end_s);
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"tick\"/>", x, x, H - MB,
            H - MB + 4);
    if (step >= 86400)
      fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">day %lld</text>\n", x, H - 8,
              (long long)(t / 86400));
    else
      fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%.1f h</text>\n", x, H - 8,
              (double)t / 3600);
  }
}

static void axes(FILE *f, const sim_result *r, double ymax, const char *ylabel) {
  time_axes(f, r->end_s, ymax, ylabel);
}

/* Axes of a plot of x from 0 to xmax at round steps, labelled with unit after each value. */
static void x_axes(FILE *f, double xmax, const char *unit, double ymax, const char *ylabel) {
  double step = nice_step(xmax);
  frame(f, ymax, ylabel);
  for (double x = 0; x <= xmax * (1 + 1e-9); x += step) {
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" class=\"tick\"/>", pxx(x, xmax),
            pxx(x, xmax), H - MB, H - MB + 4);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"xl\">%g", pxx(x, xmax), H - 8, x);
    cmd_html_esc(f, unit);
    fputs("</text>\n", f);
  }
}

static void series(FILE *f, const sim_result *r, const double *vals, double ymax,
                   const char *color) {
  double v[BUCKETS], width = (r->end_s > 0 ? (double)r->end_s : 1) / BUCKETS;
  buckets(r, vals, v);
  fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
  for (int b = 0; b < BUCKETS; b++)
    fprintf(f, "%s%.1f,%.1f", b ? " " : "", px(r, (b + 0.5) * width), py(v[b], ymax));
  fputs("\"/>\n", f);
}

static void hline(FILE *f, double y, double ymax, const char *color, const char *cls) {
  fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" class=\"%s\"/>\n", ML,
          W - MR, py(y, ymax), py(y, ymax), color, cls);
}

static double series_max(const sim_result *r, const double *v) {
  double m = 0;
  for (size_t i = 0; i < r->nsamples; i++) m = fmax(m, v[i]);
  return m;
}

/* The queues drawn one by one: the NCOLORS - 1 that held the most GPU-hours (the first of
 * equals), in queue order, or all of them when there are no more than NCOLORS; the others are
 * drawn together as one line. O(NCOLORS x queues). */
static size_t shown_queues(const sim_result *r, size_t *shown) {
  size_t n = 0, cap = r->nqueues <= NCOLORS ? r->nqueues : NCOLORS - 1;
  while (n < cap) {
    size_t best = SIZE_MAX;
    for (size_t q = 0; q < r->nqueues; q++) {
      bool taken = false;
      for (size_t k = 0; k < n && !taken; k++) taken = shown[k] == q;
      if (!taken && (best == SIZE_MAX || r->queues[q].gpu_hours > r->queues[best].gpu_hours))
        best = q;
    }
    shown[n++] = best;
  }
  for (size_t i = 1; i < n; i++) /* queue order */
    for (size_t k = i; k > 0 && shown[k - 1] > shown[k]; k--) {
      size_t t = shown[k];
      shown[k] = shown[k - 1], shown[k - 1] = t;
    }
  return n;
}

static void legend(FILE *f, const char *color, const char *what, bool dashed) {
  fprintf(f, "<span class=\"key\"><span class=\"sw%s\" style=\"border-color:%s\"></span>",
          dashed ? " dash" : "", color);
  cmd_html_esc(f, what);
  fputs("</span>", f);
}

static void stats_row(FILE *f, const sim_stats *s, const char *name) {
  fputs("<tr><td>", f);
  cmd_html_esc(f, name);
  fprintf(f,
          "</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%.0f</td><td>%.1f</td>"
          "<td>%.1f</td><td>%.1f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td>",
          s->jobs, s->done, s->never_started, s->preemptions, s->gpu_hours, s->wait_p50 / 60,
          s->wait_p95 / 60, s->wait_p99 / 60, s->jct_p50 / 3600, s->jct_p95 / 3600,
          s->jct_p99 / 3600);
  if (s->nominal_gpus >= 0)
    fprintf(f, "<td>%g</td></tr>\n", s->nominal_gpus);
  else
    fputs("<td>-</td></tr>\n", f);
}

/* The page's head, style and title. */
static void page_head(FILE *f) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<title>tessera simulate</title>\n<style>\n"
        "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:960px}\n"
        "h1{font-size:20px}h2{font-size:16px;margin-top:28px}p.note{color:#555}\n"
        "table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;"
        "text-align:right}td:first-child,th:first-child{text-align:left}\n"
        ".grid{stroke:#e5e5e5}.tick{stroke:#999}.ref{stroke-dasharray:5 4;stroke-width:1.2}\n"
        ".yl{font-size:11px;text-anchor:end;fill:#555}.xl{font-size:11px;text-anchor:middle;"
        "fill:#555}.ylabel{font-size:11px;text-anchor:middle;fill:#555}\n"
        ".key{margin-right:16px;white-space:nowrap}.sw{display:inline-block;width:18px;height:0;"
        "border-top:2px solid;margin-right:5px;vertical-align:middle}.dash{border-top-style:"
        "dashed}\n.quota{stroke-dasharray:1 3;stroke-width:1.8}.dot{border-top-style:dotted}\n"
        ".bar{stroke-width:1.2}\n</style></head><body>\n<h1>tessera simulate</h1>\n",
        f);
}

int simulate_html(FILE *f, const char *trace, const sim_trace *t, const sim_result *r, bool resume,
                  bool fair_sharing) {
  double ymax, wsum = 0, *v = ts_malloc((r->nsamples + 1) * sizeof *v),
               *other = ts_malloc((r->nsamples + 1) * sizeof *other);
  size_t shown[NCOLORS], nshown;
  char buf[160];
  if (!v || !other) {
    ts_free(v), ts_free(other);
    return -1;
  }
  page_head(f);
  fputs("<p>Trace <code>", f);
  cmd_html_esc(f, trace);
  fprintf(f,
          "</code> (%s, %zu jobs) on %lld GPUs: %.1f simulated days, %zu scheduling cycles, %zu "
          "pods bound, %zu evicted; preempted jobs %s. GPU utilisation <b>%.1f%%</b> "
          "(time-weighted).</p>\n",
          t->format, t->n, (long long)r->gpus_total, (double)r->end_s / 86400, r->cycles, r->bound,
          r->evicted, resume ? "resume" : "start again", 100 * r->utilisation);
  ymax = nice_max((double)r->gpus_total);
  fputs("<h2>GPUs in use</h2>\n<p class=\"note\">GPUs held by bound pods, against the cluster's "
        "GPUs (dashed).</p>\n",
        f);
  axes(f, r, ymax, "GPUs");
  hline(f, (double)r->gpus_total, ymax, "#888", "ref");
  sample_series(r, 0, v);
  series(f, r, v, ymax, palette[0]);
  fputs("</svg>\n", f);
  for (size_t q = 0; q < r->nqueues; q++) wsum += r->queues[q].weight;
  nshown = shown_queues(r, shown);
  if (fair_sharing)
    fputs("<h2>GPUs held per queue</h2>\n<p class=\"note\">Each queue's GPUs over time (solid) "
          "and its weight's share of the cluster (dashed): weight / sum of weights &times; GPUs. "
          "A queue above its line is using what others left idle, or more than its share.",
          f);
  else
    fputs("<h2>GPUs held per queue</h2>\n<p class=\"note\">Each queue's GPUs over time. Fair "
          "sharing is off (tessera.yaml), so weights do not act and no share line is drawn.",
          f);
  for (size_t k = 0; k < nshown; k++)
    if (r->queues[shown[k]].nominal_gpus >= 0) {
      fputs(" Dotted: the nominal quota of GPUs of its ClusterQueue (beyond it, a queue is "
            "borrowing).",
            f);
      break;
    }
  if (nshown < r->nqueues)
    fprintf(f,
            " The %zu queues that held the most GPU-hours are drawn one by one, the other %zu "
            "together (queues.csv has every queue).",
            nshown, r->nqueues - nshown);
  fputs("</p>\n<p>", f);
  for (size_t k = 0; k < nshown; k++) {
    size_t q = shown[k];
    snprintf(buf, sizeof buf, "%s (weight %g)", *r->queues[q].queue ? r->queues[q].queue : "(none)",
             r->queues[q].weight);
    legend(f, palette[k % NCOLORS], buf, false);
  }
  if (nshown < r->nqueues) {
    snprintf(buf, sizeof buf, "the other %zu queues", r->nqueues - nshown);
    legend(f, palette[NCOLORS - 1], buf, false);
  }
  fputs("</p>\n", f);
  for (size_t k = 0; k < nshown; k++) /* room for a quota above the cluster's GPUs */
    if (r->queues[shown[k]].nominal_gpus > (double)r->gpus_total)
      ymax = fmax(ymax, nice_max(r->queues[shown[k]].nominal_gpus));
  axes(f, r, ymax, "GPUs");
  for (size_t k = 0; fair_sharing && k < nshown && wsum > 0; k++)
    hline(f, (double)r->gpus_total * r->queues[shown[k]].weight / wsum, ymax, palette[k % NCOLORS],
          "ref");
  for (size_t k = 0; k < nshown; k++)
    if (r->queues[shown[k]].nominal_gpus >= 0)
      hline(f, r->queues[shown[k]].nominal_gpus, ymax, palette[k % NCOLORS], "quota");
  if (nshown < r->nqueues) sim_queue_series(r, SIZE_MAX, other); /* every queue ... */
  for (size_t k = 0; k < nshown; k++) {
    sim_queue_series(r, shown[k], v);
    series(f, r, v, ymax, palette[k % NCOLORS]);
    for (size_t i = 0; nshown < r->nqueues && i < r->nsamples; i++) other[i] -= v[i];
  }
  if (nshown < r->nqueues) series(f, r, other, ymax, palette[NCOLORS - 1]); /* ... but those */
  fputs("</svg>\n", f);
  sample_series(r, 1, v);
  ymax = nice_max(fmax(1, series_max(r, v)));
  fputs("<h2>Fragmentation</h2>\n<p class=\"note\">Free GPUs on nodes that have some GPUs in use: "
        "capacity a job asking for whole nodes cannot use.</p>\n",
        f);
  axes(f, r, ymax, "free GPUs");
  series(f, r, v, ymax, palette[1]);
  fputs("</svg>\n", f);
  sample_series(r, 2, v);
  sample_series(r, 3, other);
  ymax = nice_max(fmax(1, fmax(series_max(r, v), series_max(r, other))));
  fputs("<h2>Jobs waiting and running</h2>\n<p>", f);
  legend(f, palette[3], "waiting (submitted, not running)", false);
  legend(f, palette[2], "running", false);
  fputs("</p>\n", f);
  axes(f, r, ymax, "jobs");
  series(f, r, v, ymax, palette[3]);
  series(f, r, other, ymax, palette[2]);
  fputs("</svg>\n", f);
  fputs("<h2>Per queue</h2>\n<p class=\"note\">Wait: submission to each start of a job; a job "
        "never started waited at least until the end of the run, and counts so. Completion: "
        "submission to its end. Nearest-rank percentiles over the waits and over the jobs that "
        "finished (completion).</p>\n<table><tr><th>queue</th><th>jobs</th><th>done"
        "</th><th>never started</th><th>preempted</th><th>GPU-hours</th><th>wait p50 (min)</th>"
        "<th>p95</th><th>p99</th><th>completion p50 (h)</th><th>p95</th><th>p99</th>"
        "<th>nominal GPUs</th></tr>\n",
        f);
  for (size_t q = 0; q < r->nqueues; q++)
    stats_row(f, &r->queues[q], *r->queues[q].queue ? r->queues[q].queue : "(none)");
  if (r->nqueues > 1) stats_row(f, &r->all, "all");
  fputs("</table>\n</body></html>\n", f);
  ts_free(v), ts_free(other);
  return ferror(f) ? -1 : 0;
}

/* ---- comparisons ---------------------------------------------------------------------- */

void simulate_html_used(const sim_result *r, double *out) {
  double *v = ts_malloc((r->nsamples + 1) * sizeof *v);
  if (!v) {
    for (int b = 0; b < SIM_HTML_BUCKETS; b++) out[b] = NAN;
    return;
  }
  sample_series(r, 0, v);
  buckets(r, v, out);
  ts_free(v);
}

/* The value of curve c at x (a point of it exactly there), or NAN; *sd its deviation (0
 * without). */
static double curve_at(const sim_html_curve *c, double x, double *sd) {
  for (size_t i = 0; i < c->n; i++)
    if (fabs(c->x[i] - x) < 1e-9 && isfinite(c->y[i])) {
      *sd = c->sd ? c->sd[i] : 0;
      return c->y[i];
    }
  *sd = 0;
  return NAN;
}

static void mean_cell(FILE *f, double v, double sd, bool with_sd, const char *fmt) {
  fputs("<td>", f);
  if (!isfinite(v)) {
    fputs("-", f);
  } else {
    fprintf(f, fmt, v);
    if (with_sd) fprintf(f, " &plusmn; %.2f", sd);
  }
  fputs("</td>", f);
}

int simulate_fill_html(FILE *f, const char *trace, const char *what, const sim_html_curve *c,
                       size_t n, const double *placed, const double *placed_sd) {
  double ymax = 1, xmax = 100;
  bool sd = false;
  page_head(f);
  fputs("<p>Trace <code>", f);
  cmd_html_esc(f, trace);
  fputs("</code>, ", f);
  cmd_html_esc(f, what);
  fputs(".</p>\n<h2>Unallocated GPUs as the GPUs asked grow</h2>\n<p class=\"note\">The FGD "
        "paper's measure: jobs arrive and never end; at each point, the share of the cluster's "
        "GPUs no job holds, against the GPUs asked so far (both in % of the cluster's). Lower "
        "is better: the policy left fewer GPUs stranded.",
        f);
  for (size_t k = 0; k < n; k++) sd = sd || c[k].sd;
  if (sd) fputs(" Bars: one standard deviation over the seeds either side of the mean.", f);
  fputs("</p>\n<p>", f);
  for (size_t k = 0; k < n; k++) {
    legend(f, palette[k % NCOLORS], c[k].label, false);
    for (size_t i = 0; i < c[k].n; i++)
      if (isfinite(c[k].y[i])) {
        ymax = fmax(ymax, c[k].y[i] + (c[k].sd ? c[k].sd[i] : 0));
        xmax = fmax(xmax, c[k].x[i]);
      }
  }
  fputs("</p>\n", f);
  ymax = nice_max(ymax), xmax = nice_max(xmax);
  x_axes(f, xmax, "%", ymax, "unallocated GPUs, %");
  for (size_t k = 0; k < n; k++) {
    const char *color = palette[k % NCOLORS];
    bool open = false;
    for (size_t i = 0; i < c[k].n; i++) {
      if (!isfinite(c[k].y[i])) continue;
      if (!open)
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", color);
      fprintf(f, "%s%.1f,%.1f", open ? " " : "", pxx(c[k].x[i], xmax), py(c[k].y[i], ymax));
      open = true;
    }
    if (open) fputs("\"/>\n", f);
    for (size_t i = 0; c[k].sd && i < c[k].n; i++) {
      double x = pxx(c[k].x[i], xmax);
      if (!isfinite(c[k].y[i])) continue;
      fprintf(f,
              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
              "class=\"bar\"/>\n",
              x, x, py(fmax(0, c[k].y[i] - c[k].sd[i]), ymax), py(c[k].y[i] + c[k].sd[i], ymax),
              color);
    }
  }
  fputs("</svg>\n<h2>At 100%, 110% and 120% of the GPUs asked</h2>\n<table><tr><th></th>"
        "<th>jobs placed</th><th>unallocated at 100%</th><th>110%</th><th>120%</th></tr>\n",
        f);
  for (size_t k = 0; k < n; k++) {
    fputs("<tr><td>", f);
    cmd_html_esc(f, c[k].label);
    fputs("</td>", f);
    mean_cell(f, placed[k], placed_sd ? placed_sd[k] : 0, placed_sd != NULL, "%.0f");
    for (int l = 100; l <= 120; l += 10) {
      double s, v = curve_at(&c[k], l, &s);
      mean_cell(f, v, s, c[k].sd != NULL, "%.2f");
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n</body></html>\n", f);
  return ferror(f) ? -1 : 0;
}

static double jnum(const json_t *o, const char *a, const char *b) {
  const json_t *v = json_object_get(o, a);
  if (b) v = json_object_get(v, b);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

int simulate_compare_html(FILE *f, const char *trace, size_t n, const char *const *labels,
                          const double *const *used, const int64_t *end_s, int64_t gpus_total,
                          json_t *rows) {
  int64_t end = 1;
  double ymax = nice_max((double)gpus_total);
  size_t i;
  json_t *row, *q0 = json_object_get(json_array_get(rows, 0), "queues"), *q;
  page_head(f);
  fputs("<p>Trace <code>", f);
  cmd_html_esc(f, trace);
  fprintf(f,
          "</code> on %lld GPUs, replayed in virtual time once per column below, on the same "
          "inputs.</p>\n<h2>GPUs in use</h2>\n<p>",
          (long long)gpus_total);
  for (size_t k = 0; k < n; k++) {
    legend(f, palette[k % NCOLORS], labels[k], false);
    if (end_s[k] > end) end = end_s[k];
  }
  fputs("</p>\n", f);
  time_axes(f, end, ymax, "GPUs");
  hline(f, (double)gpus_total, ymax, "#888", "ref");
  for (size_t k = 0; k < n; k++) {
    double width = (double)(end_s[k] > 0 ? end_s[k] : 1) / SIM_HTML_BUCKETS;
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
            palette[k % NCOLORS]);
    for (int b = 0; b < SIM_HTML_BUCKETS; b++)
      fprintf(f, "%s%.1f,%.1f", b ? " " : "", pxx((b + 0.5) * width, (double)end),
              py(isfinite(used[k][b]) ? used[k][b] : 0, ymax));
    fputs("\"/>\n", f);
  }
  fputs("</svg>\n<h2>All jobs</h2>\n<p class=\"note\">Wait: submission to each start (a job never "
        "started counts until the end of the run); completion: submission to its end.</p>\n"
        "<table><tr><th></th><th>GPU utilisation</th><th>done</th><th>never started</th>"
        "<th>preempted</th><th>wait p50 (min)</th><th>p95</th><th>p99</th><th>completion p50 "
        "(h)</th><th>p95</th></tr>\n",
        f);
  json_array_foreach(rows, i, row) {
    const json_t *all = json_object_get(row, "all");
    fputs("<tr><td>", f);
    cmd_html_esc(f, labels[i]);
    fprintf(f,
            "</td><td>%.1f%%</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.1f</td><td>%.1f"
            "</td><td>%.1f</td><td>%.2f</td><td>%.2f</td></tr>\n",
            100 * jnum(row, "utilisation", NULL), jnum(all, "done", NULL),
            jnum(all, "neverStarted", NULL), jnum(all, "preemptions", NULL),
            jnum(all, "waitSeconds", "p50") / 60, jnum(all, "waitSeconds", "p95") / 60,
            jnum(all, "waitSeconds", "p99") / 60, jnum(all, "jctSeconds", "p50") / 3600,
            jnum(all, "jctSeconds", "p95") / 3600);
  }
  fputs("</table>\n", f);
  if (json_array_size(q0) > 1) {
    size_t k;
    fputs("<h2>Wait per queue</h2>\n<p class=\"note\">Minutes, p50 / p95, per column.</p>\n"
          "<table><tr><th>queue</th>",
          f);
    for (k = 0; k < n; k++) {
      fputs("<th>", f);
      cmd_html_esc(f, labels[k]);
      fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    json_array_foreach(q0, k, q) {
      const char *name = json_string_value(json_object_get(q, "queue"));
      fputs("<tr><td>", f);
      cmd_html_esc(f, name && *name ? name : "(none)");
      fputs("</td>", f);
      json_array_foreach(rows, i, row) {
        const json_t *s = json_array_get(json_object_get(row, "queues"), k);
        fprintf(f, "<td>%.1f / %.1f</td>", jnum(s, "waitSeconds", "p50") / 60,
                jnum(s, "waitSeconds", "p95") / 60);
      }
      fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
  }
  fputs("<p class=\"note\">Each column's own report is in the directory of its name.</p>\n"
        "</body></html>\n",
        f);
  return ferror(f) ? -1 : 0;
}
