/* libFuzzer target: job traces as tessera simulate reads them (neutral, ITP, openb). On success
 * the jobs are in submit order, each with at least one pod and a GPU request that is whole
 * GPUs or a share of one; on failure nothing is left allocated. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sim_trace t;
  ts_err err;
  FILE *fp;
  if (!size) return 0;
  if (!(fp = fmemopen((void *)data, size, "r"))) return 0;
  if (sim_trace_readf(fp, "fuzz.csv", &t, &err) == TS_OK) {
    for (size_t i = 0; i < t.n; i++) {
      const sim_job *j = &t.jobs[i];
      if (j->pods < 1 || j->duration_s < 0 || (i && j->submit_s < t.jobs[i - 1].submit_s)) abort();
      if (j->gpus ? j->gpu_milli != j->gpus * 1000 : j->gpu_milli >= 1000) abort();
    }
    sim_trace_free(&t);
  } else if (t.jobs || t.n) {
    abort();
  }
  fclose(fp);
  return 0;
}
