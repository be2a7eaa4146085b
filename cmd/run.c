/* cmd/run.c - `tessera run`: the secondary scheduler in a cluster. kubeclient's informers feed
 * live/ (the model and its assumptions); a timer runs a cycle when something changed, every
 * informer has synced and this replica leads; live/'s writes go to kubeclient's writer, whose
 * answers come back to live/. SIGTERM and SIGINT release the lease and exit.
 *
 * With --shadow it writes nothing at all (no writer, no lease, no status): the timer compares
 * another scheduler's placements with Tessera's instead (sched_shadow_eval) when something
 * changed, at most every SHADOW_EVAL_MS, and tells what differs in the log, the metrics and a
 * report (shadow.c). */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "cmd/cmd.h"
#include "kubeclient/kc.h"
#include "live/live.h"
#include "model/wire.h"
#include "sim/sim.h"

#define CYCLE_TICK_MS  50    /* how often the loop looks for work */
#define IDLE_CYCLE_MS  1000  /* a cycle at least this often (timeouts, backoffs) */
#define KUEUE_CHECK_MS 30000 /* queueStatus auto: how often Kueue's Lease is read */
#define TRIM_MS        10000 /* how often freed heap memory is given back to the system */
#define SHADOW_EVAL_MS                                                                             \
  5000 /* --shadow: a comparison at most this often, when something changed                        \
        */
#define SHADOW_IDLE_MS                                                                             \
  10000                     /* --shadow: and at least this often (pending pods grow older: the     \
                               grace of SCHED_SHADOW_GRACE_NS passes) */
#define SHADOW_LOG_MS 60000 /* --shadow: a summary in the log this often */

typedef enum kueue_seen { KUEUE_UNKNOWN, KUEUE_ABSENT, KUEUE_RUNS, KUEUE_UNREADABLE } kueue_seen;

typedef struct runner {
  uv_loop_t *loop;         /* the loop */
  kc_client *client;       /* API client */
  kc_informers *inf;       /* list and watch */
  kc_leader *leader;       /* leader election, or NULL */
  kc_gate gate;            /* open while this replica leads */
  kc_writer *writer;       /* writes behind the gate */
  run_writes writes;       /* live/'s writes on it */
  health_server *health;   /* /healthz, /readyz, /metrics on healthAddress */
  health_server *metrics;  /* the same on metricsAddress, when it differs */
  kc_tls_server *tls;      /* metricsSecure: the certificate of metricsAddress */
  kc_reviewer *reviewer;   /* metricsSecure: who may read /metrics */
  live *l;                 /* model, assumptions, decisions into writes */
  const sched_config *cfg; /* the cycle's settings (of l) */
  uv_timer_t tick;         /* cycle timer */
  uv_signal_t sigterm;     /* SIGTERM: shut down */
  uv_signal_t sigint;      /* SIGINT: shut down */
  uint64_t last_cycle_ms;  /* loop time of the last cycle */
  uint64_t last_trim_ms;   /* loop time memory was last given back */
  bool stopping;           /* shutdown started */
  int status;              /* exit status */
  uint64_t rejected;       /* objects the model refused */
  cfg_queue_status qs;     /* queueStatus */
  uv_timer_t kueue_check;  /* queueStatus auto: reads Kueue's Lease */
  kc_req *kueue_req;       /* that read, in flight */
  kueue_seen kueue;        /* what the last read said */
  bool led;                /* the gate was open at the last tick */
  bool kueue_admits;       /* queueing.admission: kueue */
  bool shadow;             /* --shadow: compare, write nothing */
  const char *shadow_of;   /* --shadow-scheduler-name (interned), or NULL: every other pod */
  const char *shadow_dir;  /* --shadow-report DIR, or NULL */
  sched_shadow last;       /* the last comparison */
  uint64_t shadows;        /* comparisons made */
  uint64_t shadow_ms;      /* loop time of the last one */
  uint64_t shadow_log_ms;  /* loop time of the last summary logged */
  uint64_t shadow_gen;     /* the model's generation after it */
} runner;

/* ---- informers into live/ ----------------------------------------------------------------- */

/* A watch event: decoded into the model (through live/); the versions of claims and Kueue's
 * queues are the versions their writes use. An object the model refuses is logged and
 * counted. */
static void on_event(void *ud, kc_event_type t, json_t *obj, const kc_resource *res) {
  runner *r = ud;
  model_obj *o = NULL;
  ts_err err;
  model_event ev = t == KC_ADDED ? MODEL_ADDED : t == KC_MODIFIED ? MODEL_MODIFIED : MODEL_DELETED;
  ts_err_clear(&err);
  if (ev == MODEL_DELETED) { /* the key is enough: a re-list's tombstone has nothing else */
    const char *ns, *name;
    model_kind kind = model_decode_key(obj, &ns, &name);
    if (kind == MODEL_KIND_COUNT) return;
    if (live_remove(r->l, kind, ns, name) == TS_OK) return;
    r->rejected++;
    ts_log(TS_LOG_WARN, "cannot forget %s %s/%s: out of memory", res ? res->id : "object", ns,
           name);
    return;
  }
  if (res && !strcmp(res->group, "kueue.x-k8s.io")) /* queue status goes in this version */
    ts_strlcpy(r->writes.kueue_version, res->version, sizeof r->writes.kueue_version);
  if (res && !strcmp(res->id, "resourceclaims")) /* claim writes too */
    ts_strlcpy(r->writes.claim_version, res->version, sizeof r->writes.claim_version);
  model_decode_opts opts = {.resources = model_resources_of(live_model(r->l))};
  if (model_decode(obj, &opts, &o, &err) == TS_OK && o) {
    if (live_event(r->l, ev, o, &err) == TS_OK) return;
  } else if (!o && err.code == TS_OK) {
    return; /* not a kind Tessera reads */
  }
  r->rejected++;
  ts_log(TS_LOG_WARN, "ignoring %s: %s", res ? res->id : "object", err.text);
}

static void on_skipped(void *ud, const char *group, const char *kind) {
  live_kind_unseen(((runner *)ud)->l, group, kind);
}

static void on_synced(void *ud) {
  (void)ud;
  ts_log(TS_LOG_INFO, "every informer has synced; scheduling starts when this replica leads");
}

/* ---- queueStatus auto: is Kueue's controller running? ------------------------------------ */

static void kueue_decided(runner *r, kueue_seen now, const char *detail) {
  static const char *const said[] = {
      [KUEUE_ABSENT] = "Kueue's controller is not running (no current Lease %s/%s): Tessera "
                       "writes ClusterQueue and LocalQueue status",
      [KUEUE_RUNS] = "Kueue's controller holds its Lease %s/%s: ClusterQueue and LocalQueue "
                     "status is left to it",
      [KUEUE_UNREADABLE] = "cannot read Kueue's Lease %s/%s (%s): ClusterQueue and LocalQueue "
                           "status is not written; set queueStatus.mode to write or off"};
  if (now == r->kueue) return;
  r->kueue = now;
  ts_log(now == KUEUE_UNREADABLE ? TS_LOG_WARN : TS_LOG_INFO, said[now], r->qs.kueue_namespace,
         CFG_KUEUE_LEASE, detail);
  live_set_queue_status(r->l, now == KUEUE_ABSENT ? r->qs.interval_ms * 1000000LL : -1);
  if (now == KUEUE_RUNS && !r->kueue_admits)
    ts_log(TS_LOG_WARN, "Kueue's controller runs and queueing.admission is tessera: both admit "
                        "against the same quotas (Kueue ungates, then Tessera admits again); set "
                        "queueing.admission: kueue to let Kueue admit and Tessera place");
  else if (now == KUEUE_ABSENT && r->kueue_admits)
    ts_log(TS_LOG_WARN, "queueing.admission is kueue, but Kueue's controller is not running: "
                        "pods of LocalQueues wait until it admits their Workloads");
}

static void on_kueue_lease(void *ud, const kc_response *resp) {
  runner *r = ud;
  char detail[64];
  r->kueue_req = NULL;
  snprintf(detail, sizeof detail, "HTTP %ld", resp->status);
  if (resp->status == 404) {
    kueue_decided(r, KUEUE_ABSENT, detail);
  } else if (resp->status == 401 || resp->status == 403) {
    kueue_decided(r, KUEUE_UNREADABLE, detail);
  } else if (resp->status == 200) { /* held, and renewed within twice its duration: it runs */
    kueue_decided(
        r, model_lease_held(resp->body, resp->len, ts_time_now_ns()) ? KUEUE_RUNS : KUEUE_ABSENT,
        detail);
  } /* else no answer: what was decided stands until the next read */
}

static void on_kueue_check(uv_timer_t *t) {
  runner *r = t->data;
  char path[1024];
  if (r->stopping || r->kueue_req) return;
  snprintf(path, sizeof path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s",
           r->qs.kueue_namespace, CFG_KUEUE_LEASE);
  r->kueue_req = kc_request(r->client, "GET", path, NULL, NULL, on_kueue_lease, r);
}

/* queueStatus: write turns the writes on, off leaves them off, auto reads Kueue's Lease now
 * and every KUEUE_CHECK_MS. */
static void start_queue_status(runner *r, const cfg_queue_status *qs) {
  r->qs = *qs;
  if (qs->mode == CFG_STATUS_WRITE) {
    ts_log(TS_LOG_INFO, "queueStatus: write: Tessera writes ClusterQueue and LocalQueue status");
    live_set_queue_status(r->l, qs->interval_ms * 1000000LL);
  } else if (qs->mode == CFG_STATUS_OFF) {
    ts_log(TS_LOG_INFO, "queueStatus: off: ClusterQueue and LocalQueue status is not written");
  } else {
    uv_timer_start(&r->kueue_check, on_kueue_check, 0, KUEUE_CHECK_MS);
  }
}

/* ---- the loop ----------------------------------------------------------------------------- */

/* --shadow: a comparison when something changed (at most every SHADOW_EVAL_MS) or
 * SHADOW_IDLE_MS passed; the report written after each, the summary logged every
 * SHADOW_LOG_MS. */
static void shadow_tick(runner *r, uint64_t now) {
  sched_shadow s;
  ts_err err;
  bool changed = model_generation(live_model(r->l)) != r->shadow_gen;
  if (r->stopping || !kc_informers_synced(r->inf)) return;
  if (r->shadows &&
      (now - r->shadow_ms < SHADOW_EVAL_MS || (!changed && now - r->shadow_ms < SHADOW_IDLE_MS)))
    return;
  ts_err_clear(&err);
  r->shadow_ms = now;
  if (live_shadow(r->l, r->shadow_of, ts_time_now_ns(), &s, &err) != TS_OK) {
    ts_log(TS_LOG_ERROR, "%s", err.text);
    return;
  }
  r->shadow_gen = model_generation(live_model(r->l));
  sched_shadow_free(&r->last);
  r->last = s, r->shadows++;
  if (r->shadow_dir && shadow_report(r->shadow_dir, &r->last, r->shadow_of, &err) != 0)
    ts_log(TS_LOG_WARN, "shadow report: %s", err.text); /* said each time: the disk may fill */
  if (r->shadows == 1 || now - r->shadow_log_ms >= SHADOW_LOG_MS) {
    shadow_log(&r->last, r->shadow_of);
    r->shadow_log_ms = now;
  }
}

/* tune_malloc keeps freed memory in the heap (replay's and a cycle's bursts reuse it); a
 * process that runs for months gives it back now and then, so that its resident memory
 * follows what it holds, not its highest burst. */
static void trim(runner *r, uint64_t now) {
#ifdef __GLIBC__
  if (now - r->last_trim_ms < TRIM_MS) return;
  r->last_trim_ms = now;
  malloc_trim(0);
#else
  (void)r, (void)now;
#endif
}

static void on_tick(uv_timer_t *t) {
  runner *r = t->data;
  uint64_t now = uv_now(r->loop);
  bool ran = false;
  ts_err err;
  trim(r, now);
  if (r->gate.open != r->led) { /* leading again: another replica may have written status */
    if (r->gate.open) live_queue_status_reset(r->l);
    if (r->leader) live_set_role(r->l, r->gate.open ? QMETRICS_LEADER : QMETRICS_FOLLOWER);
    r->led = r->gate.open;
  }
  if (r->shadow) {
    shadow_tick(r, now);
    return;
  }
  if (r->stopping || !kc_informers_synced(r->inf) || !r->gate.open || live_busy(r->l)) return;
  if (!live_dirty(r->l) && now - r->last_cycle_ms < IDLE_CYCLE_MS) return;
  ts_err_clear(&err);
  if (live_cycle(r->l, ts_time_now_ns(), &ran, &err) != TS_OK)
    ts_log(TS_LOG_ERROR, "cycle failed: %s", err.text);
  if (ran) r->last_cycle_ms = now;
}

static void on_closed(uv_handle_t *h) {
  (void)h;
}

static void shut_down_done(void *ud) {
  runner *r = ud;
  bool had_lease = r->leader != NULL;
  kc_writer_free(r->writer);
  r->writer = NULL;
  kc_leader_free(r->leader);
  kc_cancel(r->kueue_req);
  r->kueue_req = NULL;
  uv_close((uv_handle_t *)&r->kueue_check, on_closed);
  health_server_stop(r->health);
  health_server_stop(r->metrics);
  kc_client_free(r->client);
  uv_close((uv_handle_t *)&r->tick, on_closed);
  uv_close((uv_handle_t *)&r->sigterm, on_closed);
  uv_close((uv_handle_t *)&r->sigint, on_closed);
  ts_log(TS_LOG_INFO, had_lease ? "lease released; exiting" : "exiting");
}

/* Stops what runs (informers at once, the lease released first), then closes the handles so
 * that the loop ends. */
static void shut_down(runner *r) {
  if (r->stopping) return;
  r->stopping = true;
  uv_timer_stop(&r->tick);
  kc_informers_stop(r->inf); /* frees them once their timers close: nothing may read them now */
  r->inf = NULL;
  if (r->leader)
    kc_leader_release(r->leader, shut_down_done, r);
  else
    shut_down_done(r);
}

static void on_signal(uv_signal_t *s, int signum) {
  runner *r = s->data;
  if (!r->stopping) ts_log(TS_LOG_INFO, "signal %d: shutting down", signum);
  shut_down(r);
}

/* /readyz: every informer has listed and none is failing; false from the moment shutdown
 * starts. */
static bool ready(void *ud, char *why, size_t cap) {
  runner *r = ud;
  if (r->stopping) return snprintf(why, cap, "shutting down"), false;
  return !kc_informers_problem(r->inf, why, cap);
}

/* The families `tessera run` itself exports (live/, kubeclient/ and shadow.c add theirs). */
enum {
  RM_BUILD,
  RM_LEADER,
  RM_EVENTS,
  RM_WRITES_FAILED,
  RM_REFUSED,
  RM_INTERNED,
  RM_INTERNED_BYTES,
  RM_HEAP,
  RM_RSS,
  RM_COUNT
};
static const ts_prom_family run_families[RM_COUNT] = {
    [RM_BUILD] = {"tessera_build_info",
                  "gauge",
                  "The build of this binary (always 1).",
                  {"commit", "build_date", NULL}},
    [RM_LEADER] = {"tessera_leader", "gauge", "1 when this replica leads.", {NULL}},
    [RM_EVENTS] = {"tessera_events_total", "counter", "Events written.", {NULL}},
    [RM_WRITES_FAILED] = {"tessera_writes_failed_total",
                          "counter",
                          "Writes that ended in failure (refused, no answer, no memory); each "
                          "kind is logged once.",
                          {NULL}},
    [RM_REFUSED] = {"tessera_endpoint_connections_refused_total",
                    "counter",
                    "Connections to /healthz, /readyz and /metrics closed to make room for newer "
                    "ones (too many open, or from one address).",
                    {NULL}},
    [RM_INTERNED] = {"tessera_interned_strings",
                     "gauge",
                     "Distinct strings interned (vocabulary pinned for good, label values while "
                     "an object holds them).",
                     {NULL}},
    [RM_INTERNED_BYTES] = {"tessera_interned_bytes", "gauge", "Bytes those strings hold.", {NULL}},
    [RM_HEAP] = {"tessera_heap_inuse_bytes",
                 "gauge",
                 "Heap bytes in use (glibc's mallinfo2: allocated, including large blocks).",
                 {NULL}},
    [RM_RSS] = {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", {NULL}},
};

static void metrics(void *ud, ts_buf *out) {
  runner *r = ud;
  const ts_prom_family *f = run_families;
  ts_prom p = {out, TS_OK};
  /* the gate closes the moment the lease is lost, between ticks: no stale gauge is served */
  if (r->leader) live_set_role(r->l, r->gate.open ? QMETRICS_LEADER : QMETRICS_FOLLOWER);
  ts_prom_head(&p, &f[RM_BUILD]);
  ts_prom_sample(&p, &f[RM_BUILD], (const char *[]){tessera_commit(), tessera_build_date()}, 1);
  live_metrics(r->l, out);
  ts_prom_one(&p, &f[RM_LEADER], r->gate.open ? 1 : 0);
  ts_prom_one(&p, &f[RM_EVENTS], (double)(r->writer ? kc_writer_events_sent(r->writer) : 0));
  ts_prom_one(&p, &f[RM_WRITES_FAILED], (double)(r->writer ? kc_writer_refused(r->writer) : 0));
  ts_prom_one(&p, &f[RM_REFUSED],
              (double)(health_server_refused(r->health) + health_server_refused(r->metrics)));
  if (r->shadow) shadow_metrics(&r->last, r->shadows, out);
  if (r->client) kc_client_metrics(r->client, out);
  if (r->inf) kc_informers_metrics(r->inf, out);
  ts_prom_one(&p, &f[RM_INTERNED], (double)ts_intern_count());
  ts_prom_one(&p, &f[RM_INTERNED_BYTES], (double)ts_intern_bytes());
#ifdef __GLIBC__
  { /* what the heap holds now; resident memory keeps its high-water mark (tune_malloc) */
    struct mallinfo2 mi = mallinfo2();
    ts_prom_one(&p, &f[RM_HEAP], (double)(mi.uordblks + mi.hblkhd));
  }
#endif
  {
    long size = 0, pages = 0, page = sysconf(_SC_PAGESIZE);
    FILE *fp = fopen("/proc/self/statm", "r");
    if (fp && fscanf(fp, "%ld %ld", &size, &pages) == 2 && page > 0)
      ts_prom_one(&p, &f[RM_RSS], (double)pages * (double)page);
    if (fp) fclose(fp);
  }
}

static void usage(FILE *f) {
  fputs("usage: tessera run [--config FILE] [--kubeconfig FILE] [--context NAME] "
        "[--identity NAME] [--no-leader-elect] [-v=N] [--logging-format text|json]\n"
        "       tessera run --shadow [--shadow-scheduler-name NAME] [--shadow-report DIR] "
        "[--config FILE] [--kubeconfig FILE] [--context NAME]\n"
        "  --config                 tessera.yaml\n"
        "  --kubeconfig             credentials (else $KUBECONFIG, ~/.kube/config, in-cluster)\n"
        "  --context                the kubeconfig context (else its current one)\n"
        "  --identity               this replica's name in the Lease (else $POD_NAME, the host)\n"
        "  --no-leader-elect        schedule without taking the Lease (one replica only)\n"
        "  --shadow                 write nothing: compare another scheduler's placements\n"
        "  --shadow-scheduler-name  the scheduler to compare (else every other)\n"
        "  --shadow-report          a directory for shadow.json and its history\n"
        "  -v, -v=N                 log verbosity (2: debug lines)\n"
        "  --logging-format         text (default) or json: one JSON object per line\n",
        f);
}

static const cmd_flag run_flags[] = {{"--config", NULL, "FILE"},
                                     {"--kubeconfig", NULL, "FILE"},
                                     {"--context", NULL, "NAME"},
                                     {"--identity", NULL, "NAME"},
                                     {"--no-leader-elect", NULL, NULL},
                                     {"--shadow", NULL, NULL},
                                     {"--shadow-scheduler-name", NULL, "NAME"},
                                     {"--shadow-report", NULL, "DIR"},
                                     {NULL, NULL, NULL}};

typedef struct run_args {
  const char *config, *kubeconfig, *context, *identity; /* flags, or NULL */
  bool no_leader;                                       /* --no-leader-elect */
  bool shadow;                                          /* --shadow */
  const char *shadow_name, *shadow_dir; /* --shadow-scheduler-name, --shadow-report */
} run_args;

/* CMD_PARSED, CMD_HELP or CMD_USAGE (said). */
static int parse_args(int argc, char **argv, run_args *a) {
  static cmd_arg v[CMD_ARGS_MAX];
  int n, rc = cmd_flags_parse("run", usage, run_flags, argc, argv, v, &n);
  memset(a, 0, sizeof *a);
  if (rc != CMD_PARSED) return rc;
  for (int i = 0; i < n; i++) {
    const char *x = v[i].value;
    bool on = strcmp(x, "false") != 0;
    const char **str[] = {&a->config, &a->kubeconfig, &a->context, &a->identity};
    if (v[i].flag < 0) return cmd_usage_error("run", usage, "unexpected argument \"%s\"", x);
    if (v[i].flag < 4)
      *str[v[i].flag] = x;
    else if (v[i].flag == 4)
      a->no_leader = on;
    else if (v[i].flag == 5)
      a->shadow = on;
    else if (!*x)
      return cmd_usage_error("run", usage, "%s: empty", run_flags[v[i].flag].name);
    else {
      *(v[i].flag == 6 ? &a->shadow_name : &a->shadow_dir) = x;
    }
  }
  if (!a->shadow && (a->shadow_name || a->shadow_dir)) /* those two need --shadow */
    return cmd_usage_error("run", usage,
                           "--shadow-scheduler-name and --shadow-report go with --shadow");
  return CMD_PARSED;
}

/* Who this replica is: --identity, else $POD_NAME (the Helm chart sets it), else the host. */
static const char *identity_of(const run_args *a, char *buf, size_t cap) {
  const char *id = a->identity ? a->identity : getenv("POD_NAME");
  if (id) return id;
  if (gethostname(buf, cap)) snprintf(buf, cap, "tessera");
  buf[cap - 1] = '\0';
  return buf;
}

/* An answer's document (taken) as one line of compact JSON, or the error when it is NULL. */
static void put_doc(ts_buf *out, json_t *doc, const ts_err *err) {
  char *text;
  if (!doc) doc = json_pack("{s:s}", "error", err->text);
  if ((text = json_dumps(doc, JSON_COMPACT))) {
    ts_buf_puts(out, text);
    ts_buf_putc(out, '\n');
    free(text);
  }
  json_decref(doc);
}

/* A running pod's expected run time from the history of finished ones (sim_estimate_opts). */
static int64_t history(void *hud, const model_pod *p) {
  return live_history_duration(hud, p);
}

/* /explain/NS/NAME: a dry-run cycle on the model as the next cycle will see it (with a fresh
 * state: a pod in its requeue backoff is explained as if it had none), naming only what the
 * pod's own namespace holds, and the estimate of a forward run (200 ends, 0.5 s at most). */
static void explain(void *ud, const char *ns, const char *name, ts_buf *out, int *status) {
  runner *r = ud;
  ts_err err;
  json_t *doc;
  ts_err_clear(&err);
  /* the estimate runs the model forward and gives it back before the loop goes on; bounded
   * so that the scheduler waits at most about half a second */
  sim_estimate_opts eo = {.max_events = 200, .budget_s = 0.5, .history = history, .hud = r->l};
  doc =
      explain_pod(live_model_lend(r->l), r->cfg, ts_time_now_ns(), ns, name, ns, &eo, status, &err);
  put_doc(out, doc, &err);
}

/* The estimate behind the pods' messages (live_set_estimator): one forward run for every
 * pending pod, at most once a minute, bounded to 200 ends and 0.2 s of the loop. */
static ts_rc estimate_all(void *ud, model *m, const sched_config *cfg, int64_t now_ns,
                          live_started_fn started, void *sud) {
  sim_estimate_opts eo = {.max_events = 200,
                          .budget_s = 0.2,
                          .started = started,
                          .ud = sud,
                          .history = history,
                          .hud = ud};
  sim_estimate_result est;
  ts_err err;
  ts_err_clear(&err);
  return sim_estimate(m, cfg, now_ns, NULL, NULL, &eo, &est, &err);
}

/* Kueue's visibility API (pendingworkloads of a ClusterQueue or a LocalQueue), from a dry-run
 * cycle as /explain. */
static void pending(void *ud, const char *version, const char *ns, const char *name,
                    long long limit, long long offset, ts_buf *out, int *status) {
  runner *r = ud;
  ts_err err;
  json_t *doc;
  ts_err_clear(&err);
  doc = pending_workloads(live_model(r->l), r->cfg, ts_time_now_ns(), version, ns, name, limit,
                          offset, status, &err);
  put_doc(out, doc, &err);
}

/* An endpoint (/healthz, /readyz, and /metrics when with_metrics) on the address of
 * tessera.yaml, over HTTPS with /metrics for reviewed tokens when secure; NULL when it cannot
 * listen (logged: the scheduler runs without it). */
static health_server *endpoint(runner *r, const char *field, const char *addr, bool with_metrics,
                               bool secure) {
  char host[CFG_ADDRESS_MAX];
  health_opts o = {host, 0, ready, with_metrics ? metrics : NULL, r, NULL, NULL};
  health_server *h = NULL;
  ts_err err;
  ts_err_clear(&err);
  if (secure) o.tls = r->tls, o.reviewer = r->reviewer;
  if (with_metrics) o.explain = explain, o.pending = pending;
  if (cfg_address_split(addr, host, sizeof host, &o.port, &err) != TS_OK ||
      !(h = health_server_start(r->loop, &o, &err)))
    ts_log(TS_LOG_WARN, "%s %s: %s; running without it", field, addr, err.text);
  return h;
}

/* healthAddress and metricsAddress. With metricsSecure, metricsAddress is HTTPS and /metrics
 * needs a token the API server allows; healthAddress (when it differs) serves the probes only,
 * so that /metrics cannot be read around the check. */
static ts_rc start_endpoints(runner *r, const cfg_tessera *t, const char *identity, ts_err *err) {
  bool one = !t->metrics_address[0] || !strcmp(t->metrics_address, t->health_address);
  if (t->metrics_secure) {
    if (!(r->tls = kc_tls_server_new(t->metrics_cert_dir, identity, err)))
      return ts_err_prefix(err, "metricsCertDir"), err->code;
    if (!(r->reviewer = kc_reviewer_new(r->client, &run_review_codec, NULL)))
      return ts_err_set(err, TS_ENOMEM, "out of memory");
    ts_log(TS_LOG_INFO, "/metrics on %s over HTTPS (%s), for tokens the API server allows",
           one ? t->health_address : t->metrics_address,
           t->metrics_cert_dir[0] ? t->metrics_cert_dir : "a self-signed certificate");
  }
  r->health = endpoint(r, "healthAddress", t->health_address, one || !t->metrics_secure,
                       one && t->metrics_secure);
  if (!one) r->metrics = endpoint(r, "metricsAddress", t->metrics_address, true, t->metrics_secure);
  return TS_OK;
}

/* Informers, leader election, the writer, the endpoints, the cycle timer and the signals on
 * r's loop. On failure what started stays for shut_down to stop. */
static ts_rc start(runner *r, const cfg_tessera *t, const run_args *a, const char *identity,
                   ts_err *err) {
  static kc_resource_spec kinds[MODEL_KIND_COUNT], all[MODEL_KIND_COUNT];
  kc_informer_opts io = {kinds, 0, on_event, on_synced, r, on_skipped};
  r->kueue_admits = t->sched.kueue_admits;
  cmd_model_kinds(all); /* every kind the model reads; Kueue's Workloads (many, and large on a
                           busy Kueue cluster) only when Kueue admits */
  for (int k = 0; k < MODEL_KIND_COUNT; k++)
    if (k != MODEL_WORKLOAD || t->sched.kueue_admits) kinds[io.nresources++] = all[k];
  uv_timer_init(r->loop, &r->tick);
  r->tick.data = r;
  uv_timer_init(r->loop, &r->kueue_check);
  r->kueue_check.data = r;
  uv_signal_init(r->loop, &r->sigterm);
  uv_signal_init(r->loop, &r->sigint);
  r->sigterm.data = r->sigint.data = r;
  kc_client_set_timeout(r->client, t->api.request_timeout_ms);
  if (!(r->inf = kc_informers_start(r->client, &io, err))) return err->code;
  if (r->shadow) {
    /* nothing is written: no lease, no writer, the gate stays shut */
  } else if (t->leader.enable && !a->no_leader) {
    if (!(r->leader =
              kc_leader_start(r->client, &t->leader, identity, &run_lease_codec, &r->gate, err)))
      return err->code;
    live_set_role(r->l, QMETRICS_FOLLOWER); /* until it leads */
  } else {
    r->gate.open = true;
  }
  if (!r->shadow && !(r->writes.writer = r->writer =
                          kc_writer_new(r->client, &r->gate, t->api.event_interval_ms)))
    return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (start_endpoints(r, t, identity, err) != TS_OK) return err->code;
  uv_timer_start(&r->tick, on_tick, CYCLE_TICK_MS, CYCLE_TICK_MS);
  if (!r->shadow) start_queue_status(r, &t->queue_status);
  uv_signal_start(&r->sigterm, on_signal, SIGTERM);
  uv_signal_start(&r->sigint, on_signal, SIGINT);
  return TS_OK;
}

int cmd_run(int argc, char **argv) {
  live_writer w;
  run_args a;
  cfg_tessera t;
  dra_cel *cel;
  kc_auth auth;
  runner r = {0};
  char hostname[256];
  const char *identity;
  ts_err err;
  int parsed = parse_args(argc, argv, &a);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  ts_log_set_timestamps(true); /* an operator must see when anything happened */
  ts_log(TS_LOG_INFO, "tessera commit %s, built %s", tessera_commit(), tessera_build_date());
  ts_err_clear(&err);
  if (cfg_tessera_setup(a.config, &t, &err) != TS_OK) {
    ts_log(TS_LOG_ERROR, "%s", err.text);
    return 2;
  }
  t.sched.instantiate_templates = false; /* the claim controller makes claims in a cluster */
  r.status = 1;
  if (!(cel = dra_cel_new())) goto fail_config;
  t.sched.dra_eval = dra_cel_eval, t.sched.dra_eval_ctx = cel;
  if (kc_auth_load(a.kubeconfig, a.context, &auth, &err) != TS_OK) {
    ts_log(TS_LOG_ERROR, "%s", err.text);
    r.status = 2;
    goto fail_cel;
  }
  identity = identity_of(&a, hostname, sizeof hostname);
  r.shadow = a.shadow, r.shadow_dir = a.shadow_dir;
  r.shadow_of = a.shadow_name ? ts_intern_cstr(a.shadow_name) : NULL;
  if (a.shadow_dir) { /* told now, not after the first comparison */
    cmd_out probe;
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/shadow.json", a.shadow_dir);
    if (!(f = cmd_out_open(&probe, path))) {
      ts_log(TS_LOG_ERROR, "--shadow-report %s: %s", a.shadow_dir, strerror(errno));
      r.status = 2;
      goto fail_auth;
    }
    cmd_out_abort(&probe);
  }
  w = run_writes_live(&r.writes);
  ts_strlcpy(r.writes.kueue_version, "v1beta2", sizeof r.writes.kueue_version);
  ts_strlcpy(r.writes.claim_version, "v1", sizeof r.writes.claim_version);
  ts_strlcpy(r.writes.identity, identity, sizeof r.writes.identity);
  if (!(r.l = live_new(&t.sched, &w))) goto fail_auth;
  live_set_estimator(r.l, estimate_all, r.l);
  r.cfg = &t.sched;
  r.loop = uv_default_loop();
  if (!(r.client = kc_client_new(r.loop, &auth, &err))) {
    ts_log(TS_LOG_ERROR, "%s", err.text);
    goto fail_live;
  }
  if (start(&r, &t, &a, identity, &err) != TS_OK) {
    ts_log(TS_LOG_ERROR, "%s", err.text);
    shut_down(&r); /* what started stops as on a signal; the loop then ends */
  } else {
    ts_log(TS_LOG_INFO, "credentials: %s", auth.source);
    if (r.shadow)
      ts_log(TS_LOG_INFO,
             "tessera %s: shadow mode: comparing the placements of the pods of %s with "
             "Tessera's; nothing is written to the cluster%s%s",
             identity, r.shadow_of ? r.shadow_of : "every scheduler but Tessera",
             r.shadow_dir ? "; reports go to " : "", r.shadow_dir ? r.shadow_dir : "");
    else
      ts_log(TS_LOG_INFO, "tessera %s: scheduling pods of schedulerName %s", identity,
             t.sched.scheduler_name);
    r.status = 0;
  }
  uv_run(r.loop, UV_RUN_DEFAULT);
  uv_loop_close(r.loop);
  kc_reviewer_free(r.reviewer); /* after the client: nothing waits for it any more */
  kc_tls_server_free(r.tls);
  if (r.shadows) shadow_log(&r.last, r.shadow_of); /* the last word */
  sched_shadow_free(&r.last);
fail_live:
  live_free(r.l);
fail_auth:
  kc_auth_free(&auth);
fail_cel:
  dra_cel_free(cel);
fail_config:
  cfg_tessera_free(&t);
  return r.status;
}
