/* libFuzzer target: job traces as tessera simulate reads them (neutral, ITP, openb), then run.
 * On success the jobs are in submit order, each with at least one pod and a GPU request that is
 * whole GPUs or a share of one; on failure nothing is left allocated. A trace that reads is
 * then simulated on a small cluster, in virtual time and in fill mode, so that what a trace can
 * hold (times, durations, shares, queues) goes through the event loop too (an overflow there
 * once went unseen: the target only parsed). Traces of more than 64 jobs or 32 pods per job are
 * cut to keep each input quick. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two 8-GPU nodes with cpu and memory, one of model A, one of B. */
static model *cluster(void) {
  model *m = model_new();
  for (int i = 0; m && i < 2; i++) {
    char name[16];
    json_t *o;
    snprintf(name, sizeof name, "n%d", i);
    o = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s, s:s}}}", "apiVersion", "v1",
                  "kind", "Node", "metadata", "name", name, "labels", "nvidia.com/gpu.product",
                  i ? "B" : "A", "status", "allocatable", "cpu", "96", "memory", "512Gi", "pods",
                  "110", "nvidia.com/gpu", "8");
    if (!o || model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, NULL) != TS_OK) abort();
    json_decref(o);
  }
  return m;
}

static void simulate(sim_trace *t) {
  sched_config cfg;
  sim_opts o = {.epoch_ns = INT64_C(1798761600) * 1000000000}; /* 2027-01-01 */
  sim_result r;
  sim_fill_result f;
  ts_err err;
  model *m;
  if (t->n > 64) t->n = 64; /* the rest stays owned by the trace: freed below */
  for (size_t i = 0; i < t->n; i++)
    if (t->jobs[i].pods > 32) t->jobs[i].pods = 32;
  sched_config_default(&cfg);
  if ((m = cluster())) {
    if (sim_run(m, &cfg, t, &o, &r, &err) == TS_OK) {
      if (r.end_s < 0 || r.utilisation < 0 || r.utilisation > 1.000001) abort();
      sim_result_free(&r);
    }
    model_free(m);
  }
  o.seed = 1;
  if ((m = cluster())) {
    if (sim_fill(m, &cfg, t, &o, &f, &err) == TS_OK) {
      if (f.placed + f.failed > f.npoints) abort();
      sim_fill_result_free(&f);
    }
    model_free(m);
  }
  sched_config_free(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sim_trace t;
  ts_err err;
  FILE *fp;
  if (!size) return 0;
  if (!(fp = fmemopen((void *)data, size, "r"))) return 0;
  if (sim_trace_readf(fp, "fuzz.csv", &t, &err) == TS_OK) {
    size_t n = t.n;
    for (size_t i = 0; i < t.n; i++) {
      const sim_job *j = &t.jobs[i];
      if (j->pods < 1 || j->duration_s < 0 || (i && j->submit_s < t.jobs[i - 1].submit_s)) abort();
      if (j->gpus ? j->gpu_milli != j->gpus * 1000 : j->gpu_milli >= 1000) abort();
    }
    simulate(&t);
    t.n = n;
    sim_trace_free(&t);
  } else if (t.jobs || t.n) {
    abort();
  }
  fclose(fp);
  return 0;
}
