/* Unit tests of sim/: traces (both formats, every error naming the line and the field) and the
 * event loop on a hand-checked timeline (tests/scenarios/simulate-small: arrival, admission
 * through Kueue queues, a reclaim, the preempted job started again or resumed, completions,
 * utilisation), gangs waiting whole, jobs that never fit, --until, and determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/input.h"
#include "model/model.h"
#include "scheduler/sched.h"
#include "sim/sim.h"

/* How reports and snapshots are written is part of the binary, not of the library. */
#include "cmd/outfile.c"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define SMALL "tests/scenarios/simulate-small/"

static char *write_tmp(const char *name, const char *text) {
  static char path[256];
  FILE *f;
  snprintf(path, sizeof path, "/tmp/tessera-test-sim-%d-%s", (int)getpid(), name);
  f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

static void load_yaml_file(model *m, const char *path) {
  in_docs docs = {0};
  ts_err e;
  char *text;
  size_t n;
  ts_err_clear(&e);
  if (in_read_file(path, &text, &n, &e) != TS_OK) fail_msg("%s", e.text);
  if (in_yaml_parse(text, n, &docs, &e) != TS_OK) fail_msg("%s", e.text);
  for (size_t i = 0; i < docs.n; i++)
    if (model_apply_json(m, docs.v[i].value, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK)
      fail_msg("%s", e.text);
  in_docs_free(&docs);
  ts_free(text);
}

static void add_node(model *m, const char *name, int gpus) {
  char y[512];
  in_docs docs = {0};
  ts_err e;
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\nstatus: {allocatable: {cpu: 128, "
           "memory: 2Ti, pods: 110, nvidia.com/gpu: %d}}\n",
           name, gpus);
  ts_err_clear(&e);
  assert_int_equal(in_yaml_parse(y, strlen(y), &docs, &e), TS_OK);
  assert_int_equal(model_apply_json(m, docs.v[0].value, MODEL_ADDED, NULL, NULL, NULL, &e), TS_OK);
  in_docs_free(&docs);
}

/* Runs a trace on n nodes of g GPUs (and queues when given). */
static void run(const char *trace, int n, int g, const char *queues, const sim_opts *o,
                sim_trace *t, sim_result *r) {
  model *m = model_new();
  sched_config cfg;
  ts_err e;
  char name[32];
  ts_err_clear(&e);
  sched_config_default(&cfg);
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "n%d", i);
    add_node(m, name, g);
  }
  if (queues) load_yaml_file(m, queues);
  if (sim_trace_read(trace, t, &e) != TS_OK) fail_msg("%s", e.text);
  if (sim_run(m, &cfg, t, o, r, &e) != TS_OK) fail_msg("%s", e.text);
  sched_config_free(&cfg);
  model_free(m);
}

static void expect_job(const sim_result *r, size_t i, int64_t first, int64_t last, int64_t end,
                       int32_t preemptions) {
  const sim_job_result *j = &r->jobs[i];
  if (j->first_start_s != first || j->last_start_s != last || j->end_s != end ||
      j->preemptions != preemptions)
    fail_msg("job %zu: started %lld (last %lld), ended %lld, %d preemptions; want %lld (%lld), "
             "%lld, %d",
             i, (long long)j->first_start_s, (long long)j->last_start_s, (long long)j->end_s,
             j->preemptions, (long long)first, (long long)last, (long long)end, preemptions);
}

/* a1 (team-a, 2 x 8 GPUs) runs at 0 on 8 GPUs borrowed from team-b; b1 (team-b, 4 GPUs) comes at
 * 10 and reclaims them: a1 is evicted and b1 starts at 10. a2 (team-a, 4 GPUs) fits at 20 and
 * ends at 50; a1 needs all 16 GPUs again and gets them when b1 ends at 60, running 100 s again
 * (ends 160) or the 90 s it had left (ends 150). The half-GPU job of team-b comes at 25: its
 * quota counts it as one GPU (5 of 8 used), and it runs on a GPU of the other node, 25 to 35. */
/* --predict on one node of 8 GPUs, every job taking it whole: each start estimated when the
 * job comes (its run time known) against the start it got. a starts at once. b (t 10) is
 * estimated at 100, when a ends; c (t 20) at 150, after b. d (t 30, priority 100) is estimated
 * at 100 and starts then, ahead of b and c, which no estimate made before it came could know:
 * b starts at 140, c at 190. */
static void test_predict(void **state) {
  sim_trace t;
  sim_result r;
  /* a clock that is not 0: a pod's startTime of 0 reads as none */
  sim_opts o = {.predict = true, .epoch_ns = INT64_C(1764547200) * 1000000000};
  static const int64_t predicted[] = {0, 100, 150, 100}, started[] = {0, 140, 190, 100};
  (void)state;
  run("tests/scenarios/simulate-predict/trace.csv", 1, 8, NULL, &o, &t, &r);
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(r.jobs[i].predicted_start_s, predicted[i]);
    assert_int_equal(r.jobs[i].first_start_s, started[i]);
  }
  sim_result_free(&r);
  sim_trace_free(&t);
  o.predict = false; /* off: no estimate, and the same run */
  run("tests/scenarios/simulate-predict/trace.csv", 1, 8, NULL, &o, &t, &r);
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(r.jobs[i].predicted_start_s, -1);
    assert_int_equal(r.jobs[i].first_start_s, started[i]);
  }
  sim_result_free(&r);
  sim_trace_free(&t);
}

static void test_small_timeline(void **state) {
  sim_trace t;
  sim_result r;
  sim_opts o = {0};
  (void)state;
  run(SMALL "trace.csv", 2, 8, SMALL "queues.yaml", &o, &t, &r);
  assert_int_equal(t.n, 4);
  expect_job(&r, 0, 0, 60, 160, 1);
  expect_job(&r, 1, 10, 10, 60, 0);
  expect_job(&r, 2, 20, 20, 50, 0);
  expect_job(&r, 3, 25, 25, 35, 0);
  assert_int_equal(r.end_s, 160);
  assert_int_equal(r.gpus_total, 16);
  assert_int_equal(r.evicted, 2);
  assert_int_equal(r.bound, 7); /* a1 twice, b1, a2, the share */
  /* 16x10 + 4x10 + 8x5 + 8x25 + 4x10 + 16x100 + 0.5x10 GPU-seconds over 16 GPUs x 160 s */
  assert_true(r.utilisation > 2085.0 / 2560 - 1e-9 && r.utilisation < 2085.0 / 2560 + 1e-9);
  assert_int_equal(r.nqueues, 2);
  assert_string_equal(r.queues[0].queue, "team-a");
  assert_int_equal(r.queues[0].preemptions, 1);
  assert_int_equal(r.queues[0].done, 2);
  /* a1 held 16 GPUs for 10 s and 100 s, a2 4 for 30 s */
  assert_true(r.queues[0].gpu_hours > (16.0 * 110 + 4 * 30) / 3600 - 1e-9 &&
              r.queues[0].gpu_hours < (16.0 * 110 + 4 * 30) / 3600 + 1e-9);
  assert_true(r.queues[0].wait_p50 == 0 && r.queues[0].wait_p99 == 60); /* a2 0, a1 60 */
  assert_true(r.queues[0].jct_p50 == 30 && r.queues[0].jct_p99 == 160);
  assert_int_equal(r.samples[1].t_s, 10);
  assert_int_equal(r.samples[1].gpus_used, 4);
  assert_int_equal(r.samples[1].gpus_idle_frag, 4); /* b1's node has 4 free, the other 8 */
  assert_int_equal(r.samples[3].t_s, 25);
  assert_true(r.samples[3].gpus_used == 8.5);      /* b1, a2 and half a GPU */
  assert_true(r.samples[3].gpus_idle_frag == 7.5); /* the share's node: 7 GPUs and a half */
  { /* GPUs per queue, kept as changes only: team-a 16 (0), 0 (10), 4 (20), 0 (50), 16 (60) */
    double a[64], b[64], all[64];
    assert_true(r.nsamples < 64);
    sim_queue_series(&r, 0, a);
    sim_queue_series(&r, 1, b);
    sim_queue_series(&r, SIZE_MAX, all);
    for (size_t i = 0; i < r.nsamples; i++) {
      int64_t t_s = r.samples[i].t_s;
      double want_a = t_s < 10    ? 16
                      : t_s < 20  ? 0
                      : t_s < 50  ? 4
                      : t_s < 60  ? 0
                      : t_s < 160 ? 16
                                  : 0;
      if (a[i] != want_a) fail_msg("team-a at %lld: %g, want %g", (long long)t_s, a[i], want_a);
      if (all[i] != a[i] + b[i]) fail_msg("all at %lld: %g", (long long)t_s, all[i]);
    }
    assert_true(b[3] == 4.5); /* at 25: b1 and the share */
    assert_true(r.nqueue_points <= 2 * r.nsamples);
  }
  sim_result_free(&r);
  sim_trace_free(&t);
  o.resume = true;
  run(SMALL "trace.csv", 2, 8, SMALL "queues.yaml", &o, &t, &r);
  expect_job(&r, 0, 0, 60, 150, 1);
  sim_result_free(&r);
  sim_trace_free(&t);
}

/* Without queues: a gang waits whole until both its pods fit; a job bigger than the cluster
 * never starts and the run still ends; --until stops early. */
static void test_gangs_and_stuck(void **state) {
  sim_trace t;
  sim_result r;
  sim_opts o = {0};
  const char *trace =
      write_tmp("gangs.csv", "job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,"
                             "gpu_mem_gib,priority\n"
                             "x,0,100,,1,6,,\n"
                             "gang,5,10,,2,4,,\n"
                             "huge,6,10,,1,16,,\n");
  (void)state;
  run(trace, 2, 8, NULL, &o, &t, &r);
  expect_job(&r, 0, 0, 0, 100, 0);
  expect_job(&r, 1, 5, 5, 15, 0); /* 2 + 8 free: one pod each */
  expect_job(&r, 2, -1, -1, -1, 0);
  assert_int_equal(r.all.never_started, 1);
  assert_int_equal(r.end_s, 100);
  assert_string_equal(r.queues[0].queue, "");
  sim_result_free(&r);
  sim_trace_free(&t);
  o.until_s = 50;
  run(trace, 2, 8, NULL, &o, &t, &r);
  assert_int_equal(r.jobs[0].end_s, -1); /* still running when the run stopped */
  assert_int_equal(r.end_s, 15);
  assert_true(r.all.gpu_hours > (6.0 * 15 + 8 * 10) / 3600 - 1e-9 &&
              r.all.gpu_hours < (6.0 * 15 + 8 * 10) / 3600 + 1e-9); /* cut at the end */
  sim_result_free(&r);
  sim_trace_free(&t);
  unlink(trace);
}

static void test_itp_format(void **state) {
  sim_trace t;
  ts_err e;
  const char *path = write_tmp("cluster07.csv", "job_id,submission_time,duration,num_gpu\n"
                                                "late,900,60,16\n"
                                                "early,500,30,2\n");
  (void)state;
  ts_err_clear(&e);
  assert_int_equal(sim_trace_read(path, &t, &e), TS_OK);
  assert_string_equal(t.format, "itp");
  assert_int_equal(t.n, 2);
  assert_string_equal(t.jobs[0].id, "early"); /* by submit time, rebased to 0 */
  assert_int_equal(t.jobs[0].submit_s, 0);
  assert_int_equal(t.jobs[1].submit_s, 400);
  assert_int_equal(t.jobs[1].pods, 2); /* 16 GPUs: two pods of 8 */
  assert_int_equal(t.jobs[1].gpus, 8);
  assert_int_equal(t.jobs[0].pods, 1);
  assert_int_equal(t.jobs[0].gpus, 2);
  assert_true(strstr(t.jobs[0].queue, "cluster07") != NULL);
  sim_trace_free(&t);
  unlink(path);
}

static void expect_bad(const char *text, const char *want) {
  sim_trace t;
  ts_err e;
  const char *path = write_tmp("bad.csv", text);
  ts_err_clear(&e);
  assert_int_not_equal(sim_trace_read(path, &t, &e), TS_OK);
  if (!strstr(e.text, want)) fail_msg("error \"%s\" does not say \"%s\"", e.text, want);
  assert_null(t.jobs);
  unlink(path);
}

static void test_trace_errors(void **state) {
  const char *h = "job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,gpu_mem_gib,priority\n";
  char buf[512];
  (void)state;
  expect_bad("a,b,c\n", ":1: header: want job_id,submit_s");
  expect_bad("", "empty trace");
  snprintf(buf, sizeof buf, "%sj,-5,10,q,1,1,,\n", h);
  expect_bad(buf, ":2: submit_s: must be a number of seconds from 0 to 2^40 \"-5\"");
  snprintf(buf, sizeof buf, "%sj,0,10,q,0,1,,\n", h);
  expect_bad(buf, ":2: num_pods: must be an integer from 1 to 100000 \"0\"");
  snprintf(buf, sizeof buf, "%sj,0,10,q,1,1.5,,\n", h);
  expect_bad(buf, ":2: gpus_per_pod: above 1 GPU must be whole GPUs \"1.5\"");
  snprintf(buf, sizeof buf, "%sj,0,10,q,1,1,,high\n", h);
  expect_bad(buf, ":2: priority: must be an integer");
  snprintf(buf, sizeof buf, "%sj,0,10,q,1\n", h);
  expect_bad(buf, ":2: row: has 5 fields, want 8");
  snprintf(buf, sizeof buf, "%s,0,10,q,1,1,,\n", h);
  expect_bad(buf, ":2: job_id: is required");
  snprintf(buf, sizeof buf, "%s\"j\",0,10,q,1,1,,\n", h);
  expect_bad(buf, ":2: row: has a quoted field");
  expect_bad("job_id,submission_time,duration,num_gpu\nj,1,2,0\n",
             ":2: num_gpu: must be an integer from 1 to 800000 \"0\"");
}

static model *two_nodes(void) { /* n0 and n1, 8 GPUs each */
  model *m = model_new();
  add_node(m, "n0", 8);
  add_node(m, "n1", 8);
  return m;
}

static int double_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Fill mode on two 8-GPU nodes, jobs of 5, 5, 4 and 2 GPUs and half a GPU: the 5s take a node
 * each (3 free on each), the 4 fits nowhere (first failure, 10 of 16 allocated), the 2 and the
 * half still fit. */
static void test_fill(void **state) {
  static const double arrived[] = {5, 10, 14, 16, 16.5}, allocated[] = {5, 10, 10, 12, 12.5};
  const char *trace = write_tmp("fill.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                                            "p0,1000,1024,5,1000\n"
                                            "p1,1000,1024,5,1000\n"
                                            "p2,1000,1024,4,1000\n"
                                            "p3,1000,1024,2,1000\n"
                                            "share,1000,1024,1,500\n");
  model *m = two_nodes();
  sched_config cfg;
  sim_trace t;
  sim_fill_result f, g;
  sim_opts o = {0};
  ts_err e;
  (void)state;
  ts_err_clear(&e);
  sched_config_default(&cfg);
  assert_int_equal(sim_trace_read(trace, &t, &e), TS_OK);
  assert_string_equal(t.format, "openb");
  assert_int_equal(t.jobs[0].cpu_milli, 1000);
  assert_int_equal(t.jobs[4].gpu_milli, 500);
  assert_int_equal(sim_fill(m, &cfg, &t, &o, &f, &e), TS_OK);
  assert_int_equal(f.gpus_total, 16);
  assert_int_equal(f.placed, 4);
  assert_int_equal(f.failed, 1);
  assert_int_equal(f.first_failure, 2);
  assert_true(f.allocated_at_failure == 10.0 / 16);
  assert_int_equal(f.npoints, 5);
  assert_memory_equal(f.arrived, arrived, sizeof arrived);
  assert_memory_equal(f.allocated, allocated, sizeof allocated);
  sim_fill_result_free(&f);
  model_free(m);
  /* Drawn as the FGD paper's experiments draw: the 16.5 GPUs of the trace, each job once and
   * shuffled, then copies while one more GPU (a share: its share) stays within 130% of 16
   * (20.8); the same for the same seed. */
  o.seed = 7;
  m = two_nodes();
  assert_int_equal(sim_fill(m, &cfg, &t, &o, &f, &e), TS_OK);
  model_free(m);
  m = two_nodes();
  assert_int_equal(sim_fill(m, &cfg, &t, &o, &g, &e), TS_OK);
  assert_true(f.npoints > 5);
  {
    double first[5], want[5] = {0.5, 2, 4, 5, 5}, last;
    for (int i = 0; i < 5; i++) first[i] = f.arrived[i] - (i ? f.arrived[i - 1] : 0);
    qsort(first, 5, sizeof *first, double_cmp);
    assert_memory_equal(first, want, sizeof want); /* every job of the trace, once */
    last = f.arrived[f.npoints - 1] - f.arrived[f.npoints - 2];
    assert_true(f.arrived[f.npoints - 2] + (last >= 1 ? 1 : last) <= 20.8);
  }
  assert_int_equal(f.npoints, g.npoints);
  assert_memory_equal(f.arrived, g.arrived, f.npoints * sizeof *f.arrived);
  assert_memory_equal(f.allocated, g.allocated, f.npoints * sizeof *f.allocated);
  assert_true(f.allocated[f.npoints - 1] <= 16);
  sim_fill_result_free(&f);
  sim_fill_result_free(&g);
  model_free(m);
  { /* more GPUs asked than 130%: jobs drawn at random removed until they are not */
    const char *big = write_tmp("fill-big.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                                                "a,1000,1024,5,1000\nb,1000,1024,5,1000\n"
                                                "c,1000,1024,5,1000\nd,1000,1024,5,1000\n"
                                                "e,1000,1024,5,1000\nf,1000,1024,5,1000\n");
    sim_trace tb;
    assert_int_equal(sim_trace_read(big, &tb, &e), TS_OK);
    m = two_nodes();
    assert_int_equal(sim_fill(m, &cfg, &tb, &o, &f, &e), TS_OK);
    assert_int_equal(f.npoints, 4); /* 30 GPUs: two removed, 20 left */
    assert_true(f.arrived[3] == 20);
    sim_fill_result_free(&f);
    model_free(m);
    sim_trace_free(&tb);
    unlink(big);
  }
  sim_trace_free(&t);
  sched_config_free(&cfg);
  unlink(trace);
}

/* A job that never starts counts in the waits with the time from its submission to the end
 * (it waited at least that), and its result says why it waited: on one 8-GPU node, a (8 GPUs,
 * 0-100 s) runs at once; b (two pods of 8, at 10 s) never fits. Waits 0 and 90. */
static void test_never_started_waits(void **state) {
  const char *trace = write_tmp("never.csv", "job_id,submit_s,duration_s,queue,num_pods,"
                                             "gpus_per_pod,gpu_mem_gib,priority\n"
                                             "a,0,100,q,1,8,,\nb,10,50,q,2,8,,\n");
  sim_trace t;
  sim_result r;
  sim_opts o = {0};
  (void)state;
  run(trace, 1, 8, NULL, &o, &t, &r);
  assert_int_equal(r.end_s, 100);
  assert_int_equal(r.all.never_started, 1);
  assert_true(r.all.wait_p99 == 90); /* was 0: only started jobs counted */
  assert_true(r.all.wait_p50 == 0 || r.all.wait_p50 == 90);
  assert_null(r.jobs[0].waiting);
  assert_non_null(r.jobs[1].waiting);
  assert_string_equal(r.jobs[1].waiting, "Unschedulable");
  sim_result_free(&r);
  sim_trace_free(&t);
  unlink(trace);
}

/* The same inputs give the same run, sample for sample. */
static void test_deterministic(void **state) {
  sim_trace t1, t2;
  sim_result a, b;
  sim_opts o = {0};
  (void)state;
  run(SMALL "trace.csv", 2, 8, SMALL "queues.yaml", &o, &t1, &a);
  run(SMALL "trace.csv", 2, 8, SMALL "queues.yaml", &o, &t2, &b);
  assert_int_equal(a.nsamples, b.nsamples);
  assert_memory_equal(a.samples, b.samples, a.nsamples * sizeof *a.samples);
  assert_memory_equal(a.jobs, b.jobs, t1.n * sizeof *a.jobs);
  sim_result_free(&a);
  sim_result_free(&b);
  sim_trace_free(&t1);
  sim_trace_free(&t2);
}

/* A report or snapshot whose write fails (a full disk: here a file size limit) leaves the file
 * it replaces whole and no temporary file behind; once a snapshot was left cut at 4,096
 * bytes. */
static void test_out_failed_write(void **state) {
  char dir[] = "/tmp/tessera-out-XXXXXX", path[300];
  FILE *f;
  pid_t pid;
  int status, n = 0;
  DIR *d;
  struct dirent *e;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/snapshot.json", dir);
  assert_non_null(f = fopen(path, "w"));
  fputs("the previous snapshot\n", f);
  fclose(f);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit lim = {8192, 8192};
    cmd_out o;
    signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG, as on a full disk with ENOSPC */
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0 || !(f = cmd_out_open(&o, path))) _exit(2);
    for (int i = 0; i < 10000; i++) fputs("{\"kind\": \"Pod\"},\n", f);
    _exit(cmd_out_commit(&o) == 0 ? 1 : 0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_non_null(f = fopen(path, "r"));
  assert_non_null(fgets(path, sizeof path, f));
  fclose(f);
  assert_string_equal(path, "the previous snapshot\n");
  assert_non_null(d = opendir(dir));
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  assert_int_equal(n, 1); /* no temporary file left */
  snprintf(path, sizeof path, "rm -rf %s", dir);
  assert_int_equal(system(path), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_small_timeline),
      cmocka_unit_test(test_predict),
      cmocka_unit_test(test_gangs_and_stuck),
      cmocka_unit_test(test_itp_format),
      cmocka_unit_test(test_trace_errors),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_fill),
      cmocka_unit_test(test_never_started_waits),
      cmocka_unit_test(test_out_failed_write),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
