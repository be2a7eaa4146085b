/* bench/bench_queueing.c - admission decisions at the shape of Kueue's baseline scheduler
 * benchmark (test/performance/scheduler/configs/baseline/generator.yaml): 5 cohorts of 6
 * ClusterQueues (nominal 20 cpu, borrowingLimit 100, reclaimWithinCohort Any,
 * withinClusterQueue LowerPriority); per queue 350 small workloads (1 cpu, priority 50, run
 * 200 ms, one every 100 ms), 100 medium (5 cpu, priority 100, 500 ms, every 500 ms) and 50
 * large (20 cpu, priority 200, 1 s, every 1.2 s): 15,000 workloads.
 *
 * Time is simulated: workloads arrive, run for their runtime once admitted, and free their
 * quota; preempted workloads go back to their queue. Only the CPU time spent in q_cycle (every
 * admission decision) is measured, not the simulation around it. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "queueing/queueing.h"

#define NCOHORTS 5
#define NCQS     6
#define MS       ((int64_t)1000000)

typedef struct wclass {
  const char *name; /* small / medium / large */
  int count;        /* per ClusterQueue */
  int64_t every_ms; /* creation interval */
  int64_t run_ms;   /* runtime once admitted */
  int32_t priority; /* priority */
  int64_t cpu;      /* request, whole cpus */
} wclass;

static const wclass classes[] = {
    {"small", 350, 100, 200, 50, 1},
    {"medium", 100, 500, 500, 100, 5},
    {"large", 50, 1200, 1000, 200, 20},
};

typedef struct job {
  q_workload wl;  /* the workload */
  q_podset ps;    /* its one pod set */
  model_rq rq;    /* its request */
  char key[64];   /* "ns/name" */
  int64_t arrive; /* creation time */
  int64_t run;    /* runtime */
  int64_t finish; /* when it completes (0 = not running) */
  bool queued;    /* pending in the queues */
  bool done;      /* completed */
  int cls;        /* index in classes */
} job;

typedef struct sim {
  model *m;     /* Kueue objects */
  q_tree *t;    /* quota tree */
  q_queues *qs; /* pending */
  job *jobs;    /* all workloads, by arrival */
  size_t njobs; /* entries */
  size_t next;  /* next to arrive */
  int64_t now;  /* simulated clock */
  double cpu;   /* seconds spent in q_cycle */
  int64_t last; /* last completion */
  size_t cycles, decisions, admitted, preempted, completed;
} sim;

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *text) {
  fprintf(stderr, "bench_queueing: %s: %s\n", what, text);
  exit(1);
}

static void apply(model *m, json_t *o) {
  ts_err e;
  ts_err_clear(&e);
  if (model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK) die("model", e.text);
  json_decref(o);
}

static void build_model(sim *s) {
  s->m = model_new();
  apply(s->m, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta1", "kind",
                        "ResourceFlavor", "metadata", "name", "default"));
  for (int c = 0; c < NCOHORTS; c++)
    for (int q = 0; q < NCQS; q++) {
      char cohort[32], name[32], ns[32];
      snprintf(cohort, sizeof cohort, "cohort-%d", c);
      snprintf(name, sizeof name, "cq-%d-%d", c, q);
      snprintf(ns, sizeof ns, "ns-%d-%d", c, q);
      apply(s->m, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns));
      apply(s->m,
            json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:{}, s:{s:s, s:s}, s:[{s:[s], s:[{s:s, "
                      "s:[{s:s, s:s, s:s}]}]}]}}",
                      "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "ClusterQueue", "metadata",
                      "name", name, "spec", "cohort", cohort, "namespaceSelector", "preemption",
                      "reclaimWithinCohort", "Any", "withinClusterQueue", "LowerPriority",
                      "resourceGroups", "coveredResources", "cpu", "flavors", "name", "default",
                      "resources", "name", "cpu", "nominalQuota", "20", "borrowingLimit", "100"));
      apply(s->m, json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
                            "kueue.x-k8s.io/v1beta1", "kind", "LocalQueue", "metadata", "namespace",
                            ns, "name", "main", "spec", "clusterQueue", name));
    }
}

static int by_arrival(const void *a, const void *b) {
  const job *x = a, *y = b;
  if (x->arrive != y->arrive) return x->arrive < y->arrive ? -1 : 1;
  return strcmp(x->key, y->key);
}

/* Fills the workload of j (after sorting: it points into j itself). */
static void fill(job *j, int32_t priority, int64_t cpu) {
  size_t nslen = strchr(j->key, '/') - j->key;
  j->rq = (model_rq){MODEL_RES_CPU, cpu * 1000};
  j->ps =
      (q_podset){.name = ts_intern_cstr("main"), .count = 1, .requests = &j->rq, .nrequests = 1};
  /* designated: a field added to q_workload (resume) once shifted the handle into it */
  j->wl = (q_workload){.ns = ts_intern(j->key, nslen),
                       .name = j->key + nslen + 1,
                       .key = j->key,
                       .local_queue = ts_intern_cstr("main"),
                       .priority = priority,
                       .queue_ns = j->arrive,
                       .podsets = &j->ps,
                       .npodsets = 1,
                       .user = j};
}

static void make_jobs(sim *s) {
  size_t n = 0;
  s->njobs = (size_t)NCOHORTS * NCQS * (350 + 100 + 50);
  if (!(s->jobs = calloc(s->njobs, sizeof *s->jobs))) die("jobs", "out of memory");
  for (int c = 0; c < NCOHORTS; c++)
    for (int q = 0; q < NCQS; q++)
      for (size_t k = 0; k < sizeof classes / sizeof *classes; k++)
        for (int i = 0; i < classes[k].count; i++, n++) {
          job *j = &s->jobs[n];
          snprintf(j->key, sizeof j->key, "ns-%d-%d/%s-%d", c, q, classes[k].name, i);
          j->arrive = (int64_t)i * classes[k].every_ms * MS;
          j->run = classes[k].run_ms * MS;
          j->cls = (int)k;
        }
  qsort(s->jobs, s->njobs, sizeof *s->jobs, by_arrival);
  for (size_t i = 0; i < s->njobs; i++) {
    const wclass *k = &classes[s->jobs[i].cls];
    fill(&s->jobs[i], k->priority, k->cpu);
  }
}

static void enqueue(sim *s, job *j) {
  if (q_queues_add(s->qs, s->t, &j->wl, NULL) != TS_OK) die("queue", j->key);
  j->queued = true;
}

/* Arrivals and completions up to now. */
static void advance(sim *s) {
  while (s->next < s->njobs && s->jobs[s->next].arrive <= s->now) enqueue(s, &s->jobs[s->next++]);
  for (size_t i = 0; i < s->next; i++) {
    job *j = &s->jobs[i];
    if (!j->finish || j->finish > s->now) continue;
    j->finish = 0, j->done = true, s->completed++, s->last = s->now;
    const q_admission *a = q_tree_admission(s->t, j->key);
    const char *cq = a ? a->cluster_queue : NULL;
    q_tree_remove(s->t, j->key);
    if (cq) q_queues_wake(s->qs, s->t, cq);
  }
}

/* The next arrival or completion after now. */
static int64_t next_event(const sim *s) {
  int64_t t = s->next < s->njobs ? s->jobs[s->next].arrive : INT64_MAX;
  for (size_t i = 0; i < s->next; i++)
    if (s->jobs[i].finish && s->jobs[i].finish < t) t = s->jobs[i].finish;
  return t;
}

static void preempt(sim *s, const q_victim *v) {
  job *j = v->wl->user;
  const q_admission *a = q_tree_admission(s->t, j->key);
  const char *cq = a ? a->cluster_queue : NULL;
  if (q_tree_remove(s->t, j->key) != TS_OK) return; /* victim of an earlier cycle already */
  j->finish = 0;
  j->wl.admission = NULL;
  s->preempted++;
  enqueue(s, j);
  if (cq) q_queues_wake(s->qs, s->t, cq);
}

/* One cycle; returns the number of decisions that changed something. */
static size_t cycle(sim *s, const q_config *cfg) {
  q_result r;
  ts_err e;
  size_t changed = 0;
  double t0 = cpu_s();
  ts_err_clear(&e);
  if (q_cycle(s->t, s->qs, cfg, NULL, s->now, &r, &e) != TS_OK) die("cycle", e.text);
  s->cpu += cpu_s() - t0;
  s->cycles++;
  s->decisions += r.ndecisions;
  for (size_t i = 0; i < r.ndecisions; i++) {
    job *j = r.decisions[i].wl->user;
    if (r.decisions[i].outcome == Q_ADMITTED) {
      j->finish = s->now + j->run, j->queued = false, s->admitted++, changed++;
      j->wl.admitted_ns = s->now;
    }
  }
  for (size_t i = 0; i < r.nvictims; i++) preempt(s, &r.victims[i]), changed++;
  q_result_free(&r);
  return changed;
}

static void run(const char *label, bool fair) {
  sim s;
  q_config cfg;
  ts_err e;
  memset(&s, 0, sizeof s);
  q_config_default(&cfg);
  cfg.fair_sharing = fair;
  build_model(&s);
  make_jobs(&s);
  ts_err_clear(&e);
  if (q_tree_build(s.m, NULL, &s.t, &e) != TS_OK || !(s.qs = q_queues_new())) die("tree", e.text);
  while (s.completed < s.njobs) {
    advance(&s);
    if (cycle(&s, &cfg)) continue;
    if ((s.now = next_event(&s)) == INT64_MAX) break;
  }
  printf("%-9s %zu workloads, 30 ClusterQueues in 5 cohorts: %zu admitted, %zu preempted, "
         "%zu completed\n",
         label, s.njobs, s.admitted, s.preempted, s.completed);
  printf("%-9s %zu cycles, %zu head decisions, simulated makespan %.1f s\n", label, s.cycles,
         s.decisions, (double)s.last / 1e9);
  printf("%-9s CPU time in q_cycle: %.3f s in total, %.2f us per decision, %.1f us per cycle\n",
         label, s.cpu, s.cpu * 1e6 / (double)(s.decisions ? s.decisions : 1),
         s.cpu * 1e6 / (double)(s.cycles ? s.cycles : 1));
  q_queues_free(s.qs);
  q_tree_free(s.t);
  model_free(s.m);
  free(s.jobs);
}

int main(void) {
  printf("Kueue baseline shape, simulated time; target: every admission decision <= 1 s CPU\n");
  run("classic", false);
  run("fair", true);
  return 0;
}
