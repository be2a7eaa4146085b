/* cmd/cmd.h - the subcommands of the tessera binary. Each takes argc/argv after the
 * subcommand name and returns the process exit status. */
#ifndef CMD_H
#define CMD_H

#include <jansson.h>
#include <stdio.h>
#include <uv.h>

#include "config/config.h"
#include "kubeclient/kc.h"
#include "live/live.h"
#include "input/input.h"
#include "model/model.h"
#include "queueing/queueing.h"
#include "scheduler/sched.h"

/* `tessera replay|check|run ARGS` (argv after the subcommand): the process exit status (0 ok,
 * 1 failed or found problems, 2 usage or configuration error). */
int cmd_replay(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_rbac(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_explain(int argc, char **argv);

/* flags.c: the command line as Kubernetes tools read it. A subcommand lists its flags; the
 * parser takes `--flag value` and `--flag=value` alike (and `-o json`, `-o=json`, `-ojson` for a
 * one-letter alias), a boolean bare or as `--flag=true|false`, and handles the flags every
 * subcommand has: `-h`/`--help` (the usage on stdout, status 0), `-v`, `-v=N`, `--v=N`
 * (log verbosity; debug lines from 2, `-v` alone is 2) and `--logging-format=text|json`.
 * Anything else starting with '-' is an error naming it. */
typedef struct cmd_flag {
  const char *name;  /* "--config" */
  const char *alias; /* "-o", or NULL */
  const char *value; /* the value's name in the usage ("FILE"), NULL for a boolean */
} cmd_flag;
typedef struct cmd_arg {
  int flag;          /* index in the table, -1 for a positional argument */
  const char *value; /* the value; a boolean's is "true" or "false" */
} cmd_arg;
#define CMD_ARGS_MAX 256
enum { CMD_PARSED = 0, CMD_HELP = 1, CMD_USAGE = 2 };
/* Parses argv (after the subcommand) against flags (terminated by a zero entry) into
 * out[CMD_ARGS_MAX], in order; *n entries. CMD_HELP: usage(stdout) was called; CMD_USAGE: the
 * error and usage(stderr) were printed. */
int cmd_flags_parse(const char *cmd, void (*usage)(FILE *), const cmd_flag *flags, int argc,
                    char **argv, cmd_arg *out, int *n);
/* The exit status a parse result stands for when it is not CMD_PARSED: 0 for help, 2. */
int cmd_flags_exit(int parsed);
/* A usage error: "tessera CMD: " and the message on stderr, then usage(stderr); returns
 * CMD_USAGE (which is also the exit status, 2). */
int cmd_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* yaml_out.c: output formats. A value of -o / --output among choices ("text", "json",
 * "yaml"); CMD_FMT_BAD when it is none of them. */
typedef enum cmd_format { CMD_FMT_TEXT, CMD_FMT_JSON, CMD_FMT_YAML, CMD_FMT_BAD } cmd_format;
cmd_format cmd_format_parse(const char *value, bool text_allowed);
/* Writes j: one compact JSON line, or one YAML document ("---" first), as fmt says; takes the
 * reference. 0, or -1 when out of memory or the stream failed. */
int cmd_write_doc(FILE *f, cmd_format fmt, json_t *j);

/* outfile.c: a file written whole or not at all. cmd_out_open creates PATH.tmp-XXXXXX beside
 * PATH (O_EXCL, mode 0644) and returns its stream (NULL with errno set); cmd_out_commit flushes,
 * syncs and renames it over PATH (a symlink at PATH is replaced, never followed), 0 or -1 with
 * errno (the temporary file is then removed and PATH untouched); cmd_out_abort drops it. */
typedef struct cmd_out {
  FILE *f;         /* the temporary file's stream, NULL once committed or aborted */
  char path[4096]; /* where it goes */
  char tmp[4110];  /* the temporary file */
} cmd_out;
FILE *cmd_out_open(cmd_out *o, const char *path);
int cmd_out_commit(cmd_out *o);
void cmd_out_abort(cmd_out *o);
/* Writes s as HTML text (<, >, & and " escaped). */
void cmd_html_esc(FILE *f, const char *s);
/* Writes s as one CSV cell: quoted when it holds a comma, quote or line break, and with a
 * leading ' when it starts with =, +, -, @, tab or CR, so that a spreadsheet opening the file
 * takes it as text, never as a formula (OWASP's advice on CSV injection). */
void cmd_csv_cell(FILE *f, const char *s);

/* run_writer.c: live/'s writes through kubeclient's writer, with the bodies of model/wire.h. */
typedef struct run_writes {
  kc_writer *writer;          /* set before the first write */
  char identity[TS_NAME_MAX]; /* reportingInstance of Events */
  char claim_version[16];     /* resource.k8s.io version the claims are watched in */
  char kueue_version[16];     /* kueue.x-k8s.io version the queues are watched in */
} run_writes;
/* live/'s writer on rw (borrowed for the writer's life). */
live_writer run_writes_live(run_writes *rw);
/* The Lease's wire format, for leader election. */
extern const kc_lease_codec run_lease_codec;
/* TokenReview and SubjectAccessReview (model/wire.h) for the reviewer of /metrics. */
extern const kc_review_codec run_review_codec;
/* shadow.c: what `tessera run --shadow` tells of a comparison of the pods of `scheduler`
 * (NULL: every other scheduler): a summary in the log, the tessera_shadow_* metrics (after
 * `evaluations` comparisons; s may be empty when there were none), and DIR/shadow.json and
 * DIR/shadow.html, each written whole or not at all (-1 with err naming the file). */
void shadow_log(const sched_shadow *s, const char *scheduler);
void shadow_metrics(const sched_shadow *s, uint64_t evaluations, ts_buf *b);
json_t *shadow_json(const sched_shadow *s, const char *scheduler);
int shadow_report(const char *dir, const sched_shadow *s, const char *scheduler, ts_err *err);
/* version.c: the git commit this binary was built from ("unknown" without git) and the build
 * date (ISO 8601, UTC). */
const char *tessera_commit(void);
const char *tessera_build_date(void);

/* health.c: /healthz (200 while the loop runs), /readyz (200 when ready(ud, why, cap), else
 * 503 "not ready: WHY") and /metrics (metrics(ud, buf)) on addr:port (IPv4 or IPv6), one
 * request per connection: its head within HEALTH_HEAD_MS, the whole connection within
 * HEALTH_IDLE_MS; at most HEALTH_CONN_MAX open, HEALTH_PER_CLIENT per peer address, a new
 * connection making room by closing the oldest (health.c says why). Over HTTPS with tls; with
 * a reviewer, /metrics only for a bearer token it allows (401, 403 otherwise), and
 * /explain/NS/NAME for one allowed to get pod NS/NAME. Returns new,
 * NULL with err when it cannot listen. health_server_stop closes it, connections in progress
 * included (NULL is a no-op). */
#define HEALTH_HEAD_MS    1000
#define HEALTH_IDLE_MS    5000
#define HEALTH_CONN_MAX   64
#define HEALTH_PER_CLIENT 8
typedef struct health_opts {
  const char *addr;                               /* IP address ("" or NULL: 0.0.0.0) */
  int port;                                       /* port */
  bool (*ready)(void *ud, char *why, size_t cap); /* /readyz; NULL: always ready */
  void (*metrics)(void *ud, ts_buf *out);         /* /metrics; NULL: not served (404) */
  void *ud;                                       /* for both */
  kc_tls_server *tls;                             /* HTTPS with it (borrowed), or NULL */
  kc_reviewer *reviewer;                          /* who may read /metrics (borrowed), or NULL:
                                                     anyone */
  /* /explain/NAMESPACE/NAME where /metrics is served, for who may get that pod (a
   * SubjectAccessReview of it, with a reviewer): the explanation (JSON) into out, and the
   * status (200, or 404 when there is no such pod); NULL: not served */
  void (*explain)(void *ud, const char *ns, const char *name, ts_buf *out, int *status);
  /* Kueue's visibility API where /metrics is served (pendingworkloads of a ClusterQueue, ns "",
   * or of LocalQueue ns/name), for who may get that subresource (a SubjectAccessReview, as
   * Kueue's aggregated API has): the PendingWorkloadsSummary (JSON) into out, the status;
   * NULL: not served */
  void (*pending)(void *ud, const char *version, const char *ns, const char *name, long long limit,
                  long long offset, ts_buf *out, int *status);
} health_opts;
typedef struct health_server health_server;
health_server *health_server_start(uv_loop_t *loop, const health_opts *o, ts_err *err);
void health_server_stop(health_server *h);
/* Connections closed to make room for newer ones (too many open, or from one address). */
uint64_t health_server_refused(const health_server *h);
/* The request read so far, req[0..n): HEALTH_REQ_INCOMPLETE, HEALTH_REQ_TOO_LARGE, or
 * HEALTH_REQ_OK with the path of a GET into path (cap bytes; "" for another method or a path
 * that does not fit). */
enum { HEALTH_REQ_INCOMPLETE, HEALTH_REQ_OK, HEALTH_REQ_TOO_LARGE };
int health_parse_request(const char *req, size_t n, char *path, size_t cap);
/* The bearer token of a complete request head's Authorization header (the scheme's name in
 * any case) into token (cap bytes): 0, or -1 (token "") when there is none, it does not fit,
 * or it holds a byte that is not visible ASCII (RFC 6750). */
int health_parse_bearer(const char *req, size_t n, char *token, size_t cap);

/* validate.c: the API server's refusals of an object (model_validate) printed as load errors
 * at `at` ("file:line"), each counted in *errors; returns how many. Then, once every object is
 * in m, the Priority admission on its pods (model_validate_priority), the refused pods removed
 * from m when remove. */
size_t cmd_validate(json_t *obj, const char *at, int *errors);
/* The problems of m's Kueue objects that make queues inactive (cohort cycles, chains deeper
 * than the limit, missing flavors, LocalQueues naming no ClusterQueue), each printed as a load
 * error ("file:line: ClusterQueue x: field: message") and counted in *errors; returns how
 * many. A stopped queue (stopPolicy) is the administrator's choice, not a problem. */
size_t cmd_queue_problems(const model *m, int *errors);
/* The Priority admission's refusals of the model's pods, printed and counted as load errors.
 * With remove (replay), pods refused are removed from the model, and pods that carry
 * spec.priority are recorded state, not judged (tessera run takes them as they are). */
void cmd_validate_priorities(model *m, int *errors, bool remove);

/* load.c: loads the objects of path (a file or a directory) into m as replay does: each
 * checked as the API server would, decoded and applied, problems printed as load errors
 * ("file:line: ...") and counted; then the Priority admission and the queues' problems, and
 * every kind with no object marked unseen (the snapshot is all there is). TS_OK, or the
 * reader's error for a path that cannot be read (printed already) or TS_ENOMEM. */
typedef struct cmd_load_counts {
  int objects;      /* loaded */
  int errors;       /* objects or files that failed to load */
  json_t *config;   /* a `tessera snapshot`'s tessera.yaml (SchedulerConfiguration; reference
                       held, json_decref it), or NULL */
  int64_t taken_ns; /* a `tessera snapshot`'s time (its Snapshot record), or 0 */
  char kai_scheduler[TS_NAME_MAX]; /* a KAI snapshot's scheduler name, or "" */
} cmd_load_counts;
ts_rc cmd_load(const char *path, model *m, cmd_load_counts *c);
/* The configuration a replay of what cmd_load loaded uses: the --config file when one was
 * given (flag_given; t holds it already), else the snapshot's own tessera.yaml when it has
 * one (it replaces t), else t as it is (the defaults) deciding, for a KAI snapshot, the pods of
 * KAI's scheduler name. Frees nothing of c. */
ts_rc cmd_load_config(cmd_load_counts *c, bool flag_given, cfg_tessera *t, ts_err *err);
/* What replay, bench --snapshot and explain run on: path loaded into m (cmd_load), the
 * configuration a replay uses (cmd_load_config, into t), set for a cycle with no claim
 * controller (claims made from templates, CEL evaluated through cel), and the cycle's clock.
 * TS_OK; cmd_load's error (printed already) or cmd_load_config's (in err). c->config is
 * released. */
ts_rc cmd_load_offline(const char *path, model *m, bool config_given, cfg_tessera *t, dra_cel *cel,
                       cmd_load_counts *c, int64_t *clock, ts_err *err);
/* The cycle's clock for what cmd_load loaded: when the snapshot was taken (tessera snapshot),
 * else its newest creationTimestamp. */
int64_t cmd_load_clock(const model *m, const cmd_load_counts *c);
/* The informers' resources: every kind the model reads, in the model's table order. */
void cmd_model_kinds(kc_resource_spec out[MODEL_KIND_COUNT]);
/* The clock of a snapshot: its newest creationTimestamp (0 when none). */
int64_t cmd_snapshot_time(const model *m);

/* expect.c: checks a replay's decisions against expectations (YAML); prints one line per
 * expectation; returns the number not met, or -1 when the file is unusable. */
int replay_expect(const char *path, const model *m, const sched_result *res, FILE *out);

/* replay_queues.c: per ClusterQueue after the cycle (text to out, or into summary). */
void replay_queues(FILE *out, json_t *summary, const model *m, const sched_config *cfg,
                   const sched_result *res);

/* replay_dra.c: DRA output of replay. */
void replay_print_claims(FILE *out, const sched_decision *d);
json_t *replay_claims_json(const sched_decision *d); /* returns new */
/* Devices in use per node after the cycle (text to out, or into summary when non-NULL). */
/* explain.c: an explanation as one JSON document (returns new), its estimate added to it,
 * and its text form (of this document or a server's). */
struct sched_explanation;
struct sim_estimate_result;
json_t *explain_json(const model *m, const struct sched_explanation *e, const char *only_ns);
/* The explanation of pod ns/name of m from a dry-run cycle with cfg at now_ns (new), with the
 * estimate of a forward run when eo is given (m is lent to it and given back as it was), or
 * NULL with err and *status 404 (no such pod) or 500. With only_ns, workloads and pods of other
 * namespaces are not named (what a reader of that pod may see). */
struct sim_estimate_opts;
json_t *explain_pod(model *m, const sched_config *cfg, int64_t now_ns, const char *ns,
                    const char *name, const char *only_ns, const struct sim_estimate_opts *eo,
                    int *status, ts_err *err);
void explain_add_estimate(json_t *o, const struct sim_estimate_result *est, int64_t now_ns);
void explain_print(FILE *f, json_t *o);
/* Kueue's visibility API from a dry-run cycle: the pending workloads of ClusterQueue name (ns
 * NULL or "") or of LocalQueue ns/name, as a PendingWorkloadsSummary of apiVersion `version`,
 * from offset, at most limit (Kueue's defaults and bounds: 1000, 100,000); *status 200, 404
 * (a Status, as Kueue's server says NotFound) or 500 (NULL, with err). */
json_t *pending_workloads(const model *m, const sched_config *cfg, int64_t now_ns,
                          const char *version, const char *ns, const char *name, long long limit,
                          long long offset, int *status, ts_err *err);
void replay_dra_summary(FILE *out, json_t *summary, const model *m, const sched_result *res);

/* simulate_html.c: the report of a simulation as one self-contained HTML page (inline SVG, no
 * script) written to f; 0, or -1 (out of memory, a write error). */
struct sim_trace;
struct sim_result;
int simulate_html(FILE *f, const char *trace, const struct sim_trace *t, const struct sim_result *r,
                  bool resume, bool fair_sharing);
#define SIM_HTML_BUCKETS 450 /* points of a time series drawn */
/* r's GPUs in use, time-weighted over SIM_HTML_BUCKETS equal slices of [0, end] (out). */
void simulate_html_used(const struct sim_result *r, double *out);
/* A curve of fill mode: n points (x, y), y NAN where not reached, sd NULL or y's deviation. */
typedef struct sim_html_curve {
  const char *label;
  const double *x, *y, *sd;
  size_t n;
} sim_html_curve;
/* Fill mode's page: the curves on one plot (error bars with sd), and a table of the jobs
 * placed (placed_sd NULL for single runs) and the curves at 100, 110 and 120%. */
int simulate_fill_html(FILE *f, const char *trace, const char *what, const sim_html_curve *c,
                       size_t n, const double *placed, const double *placed_sd);
/* Runs of one trace side by side: n labelled runs' GPUs in use (simulate_html_used, each over
 * [0, end_s[k]]) on one plot, and their summaries (rows: summary JSON in the same order)
 * as tables, overall and wait per queue. */
int simulate_compare_html(FILE *f, const char *trace, size_t n, const char *const *labels,
                          const double *const *used, const int64_t *end_s, int64_t gpus_total,
                          json_t *rows);

#endif
