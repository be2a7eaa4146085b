/*
 * sim/sim.h - `tessera simulate`: a job trace through the real scheduling cycle in virtual
 * time. Jobs arrive at their submit time as pods (a gang of num_pods: a PodGroup), each cycle
 * is sched_cycle on the model as it stands, a job runs for its duration once all its pods are
 * bound and then leaves; a preempted job's pods are removed and it is submitted again (from the
 * start, or with what it had left). Time jumps from event to event (an arrival, a completion),
 * so a 60-day trace costs one cycle per distinct event time, not per second.
 */
#ifndef SIM_H
#define SIM_H

#include <stdio.h>

#include "common/ts.h"
#include "model/model.h"
#include "scheduler/sched.h"

/* ---- traces ---------------------------------------------------------------------------- */

typedef struct sim_job {
  char *id;             /* owned: job_id */
  int64_t submit_s;     /* seconds from the trace's start */
  int64_t duration_s;   /* run time once started */
  const char *queue;    /* interned queue (team), "" when the trace has none */
  int32_t pods;         /* pods that start together */
  int32_t gpus;         /* whole GPUs per pod */
  int32_t gpu_milli;    /* GPU per pod in thousandths (1000 per whole GPU; < 1000: a share of
                           one, asked for as KAI's gpu-fraction) */
  int64_t cpu_milli;    /* CPU request per pod in millicores (0: not given) */
  int64_t memory_mib;   /* memory request per pod in MiB (0: not given) */
  const char *gpu_spec; /* interned GPU models the pod may use ("A|B"), or NULL */
  bool has_priority;    /* priority given */
  int32_t priority;     /* spec.priority of its pods */
} sim_job;

typedef struct sim_trace {
  sim_job *jobs;      /* owned, in submit order (stable: trace order among equal times) */
  size_t n;           /* entries */
  const char *format; /* "neutral" or "itp" (static) */
} sim_trace;

/* Reads a trace: the neutral format (job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,
 * gpu_mem_gib,priority), a raw Microsoft ITP cluster file (job_id,submission_time,duration,
 * num_gpu: a job of more than 8 GPUs is ceil(n/8) pods of 8, its queue the file's name), or an
 * Alibaba openb pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
 * creation_time,deletion_time,scheduled_time: one pod per row, its qos the queue, its run from
 * creation to deletion, or to the trace's last time when it has none), told apart by the
 * header. Errors name the line and the field. */
ts_rc sim_trace_read(const char *path, sim_trace *out, ts_err *err);
/* The same from an open stream (read to its end, not closed); path names it in errors. */
ts_rc sim_trace_readf(FILE *fp, const char *path, sim_trace *out, ts_err *err);

/* An openb node list (sn,cpu_milli,memory_mib,gpu,model) as Node objects applied to m: each
 * with its CPUs, memory and nvidia.com/gpu, labelled nvidia.com/gpu.product=model. */
ts_rc sim_nodes_read(const char *path, model *m, ts_err *err);
void sim_trace_free(sim_trace *t);

/* ---- runs ------------------------------------------------------------------------------ */

typedef struct sim_opts {
  int64_t until_s;  /* stop at this virtual time (<= 0: when every job is done or stuck) */
  bool resume;      /* a preempted job keeps the run time it had (else it starts again) */
  uint64_t seed;    /* fill mode: shuffle the jobs with this seed (0: trace order) */
  int64_t epoch_ns; /* wall-clock time of the trace's second 0 (creation timestamps) */
  bool predict;     /* estimate each job's start when it is submitted (sim_estimate, its pods
                       annotated with their run time as a user who knows it would): the
                       jobs' predicted_start_s; needs epoch_ns > 0 (a startTime of 0 is
                       none) */
  void (*progress)(void *ud, int64_t t_s, size_t done, size_t total); /* NULL: none */
  void *progress_ud;
} sim_opts;

/* Per queue (or the whole trace): seconds from submission to start and to completion. */
typedef struct sim_stats {
  const char *queue;                   /* interned; "" for the whole trace */
  const char *cluster_queue;           /* interned ClusterQueue its jobs are charged to, or NULL */
  double weight;                       /* that ClusterQueue's fair-sharing weight (1 without) */
  double nominal_gpus;                 /* its nominalQuota of nvidia.com/gpu over every flavor,
                                          or -1 without a ClusterQueue naming the resource */
  size_t jobs, done, never_started;    /* jobs submitted, finished, never started by the end */
  size_t preemptions;                  /* times a running job of it was preempted */
  double gpu_hours;                    /* GPU-hours its pods held (whole runs and cut ones) */
  double wait_p50, wait_p95, wait_p99; /* submission to (each) start; a job never started
                                          counts the time from submission to the end (it
                                          waited at least that) */
  double jct_p50, jct_p95, jct_p99;    /* submission to completion, finished jobs */
} sim_stats;

/* One point of the timeline, at each event time (after its cycle). */
typedef struct sim_sample {
  int64_t t_s;           /* virtual time */
  double gpus_used;      /* GPUs held by bound pods (a shared GPU counts its shares) */
  double gpus_idle_frag; /* free GPUs on nodes that have some GPUs in use (fragmentation) */
  int32_t pending_jobs;  /* jobs submitted and not running */
  int32_t running_jobs;  /* jobs running */
} sim_sample;

/* A change of the GPUs a queue holds: from sample `sample` on (until its next point), queue
 * `queue` holds `gpus` (before its first point, none). Only changes are kept, so a trace of a
 * queue per job costs memory in proportion to its events, not events x queues. */
typedef struct sim_queue_point {
  uint32_t sample; /* index in sim_result.samples */
  uint32_t queue;  /* index in sim_result.queues */
  double gpus;     /* GPUs held by the queue's running jobs */
} sim_queue_point;

/* What became of one job of the trace (same index). -1: did not happen by the end. */
typedef struct sim_job_result {
  int64_t first_start_s, last_start_s, end_s;
  int64_t predicted_start_s; /* with predict: the start estimated at its submission (its
                                submission when it started in that cycle), -1 when none was
                                found within the estimate's bounds or predict is off */
  int32_t preemptions;       /* runs of it cut by an eviction */
  const char *waiting;       /* not running at the end: the kind of reason its pods were last left
                                pending for ("Unschedulable", "WaitingForQuota", ...; static), else
                                NULL */
} sim_job_result;

typedef struct sim_result {
  int64_t end_s;                 /* virtual time of the last event processed */
  int64_t gpus_total;            /* GPUs of the schedulable nodes */
  double utilisation;            /* time-weighted mean of gpus_used / gpus_total over [0, end_s] */
  size_t cycles;                 /* scheduling cycles run */
  size_t bound, evicted;         /* pods bound, pods evicted */
  sim_stats all;                 /* the whole trace */
  sim_stats *queues;             /* owned, per queue by name */
  size_t nqueues;                /* entries */
  sim_job_result *jobs;          /* owned, one per job of the trace, in its order */
  sim_sample *samples;           /* owned, in time order */
  size_t nsamples;               /* entries */
  sim_queue_point *queue_points; /* owned: per-queue GPUs, by sample (then as they came) */
  size_t nqueue_points;          /* entries */
} sim_result;

/* The GPUs queue q holds at each sample (out: nsamples entries), from the points; q SIZE_MAX:
 * every queue together. O(samples + points). */
void sim_queue_series(const sim_result *r, size_t q, double *out);

/* Runs the trace over m (nodes, queues; pods it adds and removes itself) with cfg, from an
 * empty state. A job of queue Q goes to namespace Q (lowercased; letters, digits and '-'), and
 * names the first LocalQueue of that namespace by name when there is one. The model ends as
 * the run leaves it. */
ts_rc sim_run(model *m, const sched_config *cfg, const sim_trace *t, const sim_opts *o,
              sim_result *out, ts_err *err);
void sim_result_free(sim_result *r);

/* ---- fill mode: how much of the cluster can be allocated (the FGD paper's method) -------- */

typedef struct sim_fill_result {
  int64_t gpus_total;          /* GPUs of the schedulable nodes */
  size_t placed, failed;       /* jobs placed whole, jobs that did not fit (removed) */
  size_t first_failure;        /* trace index of the first job that did not fit, or SIZE_MAX */
  double allocated_at_failure; /* share of the GPUs allocated just before it (0..1) */
  double *arrived, *allocated; /* owned, per job tried: GPUs asked so far, GPUs allocated */
  size_t npoints;              /* entries */
  size_t cycles;               /* scheduling cycles run */
} sim_fill_result;

/* Fill mode: jobs one at a time, as if they never ended; a job that is not placed whole by its
 * cycle is removed and counted, and the next one comes. With o->seed 0 the jobs come once, in
 * trace order; with a seed they come as the FGD paper's experiments draw them: the jobs by name,
 * shuffled, then random copies appended (or random jobs removed) until the GPUs asked are 130%
 * of the cluster's (a fixed sequence per seed; not Go's, so seed k is not the paper's seed k).
 * Durations and submit times are ignored. GPUs are counted in thousandths (a share of a GPU
 * counts its share). The points are per job tried; first_failure indexes the trace. */
ts_rc sim_fill(model *m, const sched_config *cfg, const sim_trace *t, const sim_opts *o,
               sim_fill_result *out, ts_err *err);
void sim_fill_result_free(sim_fill_result *r);

/* ---- estimates: when a pending pod will start ------------------------------------------- */

typedef struct sim_estimate_opts {
  int64_t horizon_ns;  /* how far ahead to look (<= 0: 7 days) */
  uint32_t max_events; /* ends simulated at most (0: 500) */
  double budget_s;     /* stop after this much time (wall clock; <= 0: no bound) */
  /* Optional: told of every pod pending now that the run binds, and when (the pod as the model
   * holds it; its bindings are undone after the run) */
  void (*started)(void *ud, const model_pod *p, int64_t at_ns);
  void *ud; /* for started */
  /* Optional: a pod's expected run time (ns, or -1) when it gives none itself: the median of
   * finished pods of its queue and shape, kept as history (tessera run) */
  int64_t (*history)(void *hud, const model_pod *p);
  void *hud; /* for history */
} sim_estimate_opts;

typedef struct sim_estimate_result {
  bool started;             /* the pod is bound within the horizon */
  int64_t start_ns;         /* when (the clock of the cycle that bound it) */
  int64_t horizon_ns;       /* looked ahead this far */
  uint32_t cycles;          /* scheduling cycles run */
  uint32_t events;          /* ends simulated */
  uint32_t known_ends;      /* pods running now with an expected end */
  uint32_t deadline_ends;   /* of the known ends (now and in the run), those taken from
                               spec.activeDeadlineSeconds: the latest, not the expected */
  uint32_t history_ends;    /* of the known ends, those taken from the history of finished
                               pods of the same queue and shape (opts.history) */
  uint32_t unknown_ends;    /* pods running now without one: assumed to run past the horizon */
  uint32_t unknown_started; /* pods the run started without one */
  uint32_t evictions;       /* pods the run's preemptions evicted */
  const char *stop;         /* not started: "horizon", "events", "budget" or "nothing left
                               running has a known end" (static) */
} sim_estimate_result;

/* The duration pod p is expected to run, in ns: its annotation tessera.dev/expected-duration
 * (a Go duration), else spec.activeDeadlineSeconds; -1 when neither is given. */
int64_t sim_expected_duration_ns(const model_pod *p);

/* Runs m forward from now_ns (sim/estimate.c says how) until pod ns/name is bound (name NULL:
 * until no pod that was pending waits any more, o->started hearing of each start), then gives
 * m back as it was (every binding, eviction and end undone: a live model may be lent). Fails
 * only when out of memory or the cycle fails. */
ts_rc sim_estimate(model *m, const sched_config *cfg, int64_t now_ns, const char *ns,
                   const char *name, const sim_estimate_opts *o, sim_estimate_result *out,
                   ts_err *err);

#endif
