/* cmd/run_writer.c - live/'s writes through kubeclient's writer: each body encoded by
 * model/wire.h (the one room that knows Kubernetes' wire format), sent by kubeclient, whose
 * answers go back to live/. Also the Lease codec leader election reads and writes with. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/wire.h"

/* A write's end: ud is live/'s token (kubeclient logs and counts failures itself). */
static void write_done(void *ud, ts_rc res, const kc_write_info *info) {
  (void)info;
  live_write_done(ud, res);
}

/* An Event about about, when the writer's budget allows one. */
static void event(run_writes *rw, const model_object_ref *about, const char *type,
                  const char *reason, const char *note) {
  json_t *b;
  if (!kc_event_allowed(rw->writer, about->uid)) return;
  if ((b = model_event_json(about, rw->identity, type, reason, note, ts_time_now_ns())))
    kc_event_post(rw->writer, b);
  json_decref(b);
}

/* ---- claims: read, then step towards the state wanted (model_claim_step) ------------------ */

typedef struct claim_write {
  model_claim_write w; /* what to write (its strings point into this struct) */
  void *token;         /* live/'s */
  char pod_name[TS_NAME_MAX], pod_uid[TS_NAME_MAX], claim_uid[TS_NAME_MAX];
} claim_write;

static void claim_done(void *ud, ts_rc res, const kc_write_info *info) {
  claim_write *c = ud;
  json_decref((json_t *)c->w.alloc);
  write_done(c->token, res, info);
  ts_free(c);
}

static void claim(run_writes *rw, void *token, const char *ns, const char *name,
                  const char *claim_uid, const model_allocation *alloc, const char *pod,
                  const char *pod_uid, bool unreserve) {
  claim_write *c = ts_calloc(1, sizeof *c);
  char path[1024];
  if (!c || (alloc && !(c->w.alloc = model_allocation_json(alloc)))) {
    ts_free(c); /* no memory: the write fails, the gang rolls back */
    kc_write_fail(rw->writer, write_done, token);
    return;
  }
  c->token = token, c->w.unreserve = unreserve;
  ts_strlcpy(c->pod_name, pod ? pod : "", sizeof c->pod_name);
  ts_strlcpy(c->pod_uid, pod_uid, sizeof c->pod_uid);
  ts_strlcpy(c->claim_uid, claim_uid ? claim_uid : "", sizeof c->claim_uid);
  c->w.pod_name = c->pod_name, c->w.pod_uid = c->pod_uid, c->w.claim_uid = c->claim_uid;
  snprintf(path, sizeof path, "/apis/resource.k8s.io/%s/namespaces/%s/resourceclaims/%s",
           rw->claim_version, ns, name);
  kc_update(rw->writer, "update resourceclaims", ns, name, path, unreserve, model_claim_step, &c->w,
            claim_done, c);
}

static void w_reserve(void *ud, void *token, const char *ns, const char *name, const char *uid,
                      const model_allocation *alloc, const char *pod, const char *pod_uid) {
  claim(ud, token, ns, name, uid, alloc, pod, pod_uid, false);
}

static void w_unreserve(void *ud, void *token, const char *ns, const char *name,
                        const char *pod_uid) {
  claim(ud, token, ns, name, NULL, NULL, NULL, pod_uid, true);
}

/* ---- pods ----------------------------------------------------------------------------------- */

static void w_bind(void *ud, void *token, const char *ns, const char *name, const char *uid,
                   const char *node, int32_t gpu_index) {
  run_writes *rw = ud;
  json_t *b = model_binding_json(ns, name, uid, node, gpu_index);
  if (b)
    kc_bind(rw->writer, ns, name, uid, node, b, write_done, token);
  else
    kc_write_fail(rw->writer, write_done, token);
  json_decref(b);
}

typedef struct eviction {
  run_writes *rw;
  void *token;
  char ns[TS_NAME_MAX], name[TS_NAME_MAX], uid[TS_NAME_MAX];
  char reason[];
} eviction;

/* An accepted eviction is told about with a Preempted Event carrying the reason. */
static void evicted(void *ud, ts_rc res, const kc_write_info *info) {
  eviction *e = ud;
  if (res == TS_OK && e->reason[0]) {
    model_object_ref pod = {"v1", "Pod", e->ns, e->name, e->uid};
    event(e->rw, &pod, "Normal", "Preempted", e->reason);
  }
  write_done(e->token, res, info);
  ts_free(e);
}

static void w_evict(void *ud, void *token, const char *ns, const char *name, const char *uid,
                    const char *reason) {
  run_writes *rw = ud;
  size_t n = strlen(reason ? reason : "");
  eviction *e = ts_calloc(1, sizeof *e + n + 1);
  json_t *b = e ? model_eviction_json(ns, name, uid) : NULL;
  if (!b) {
    ts_free(e);
    kc_write_fail(rw->writer, write_done, token);
    return;
  }
  e->rw = rw, e->token = token;
  ts_strlcpy(e->ns, ns, sizeof e->ns);
  ts_strlcpy(e->name, name, sizeof e->name);
  ts_strlcpy(e->uid, uid ? uid : "", sizeof e->uid);
  if (n) memcpy(e->reason, reason, n + 1);
  kc_evict(rw->writer, ns, name, uid, b, evicted, e);
  json_decref(b);
}

static void report_done(void *ud, ts_rc res, const kc_write_info *info) {
  (void)res, (void)info;
  live_report_done(ud);
}

static void w_unschedulable(void *ud, void *token, const char *ns, const char *name,
                            const char *uid, const char *reason, const char *message,
                            bool with_event) {
  run_writes *rw = ud;
  char path[1024];
  json_t *b = model_pod_unscheduled_patch(reason, message, ts_time_now_ns());
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status", ns, name);
  if (b)
    kc_patch(rw->writer, "patch pods/status", path, KC_STRATEGIC_MERGE_PATCH, ns, name, b,
             report_done, token);
  else
    kc_write_fail(rw->writer, report_done, token);
  json_decref(b);
  if (with_event && strcmp(reason, "SchedulingGated")) { /* nor does kube-scheduler of gated pods */
    model_object_ref pod = {"v1", "Pod", ns, name, uid};
    event(rw, &pod, "Warning", "FailedScheduling", message);
  }
}

/* ---- Kueue's objects ------------------------------------------------------------------------ */

/* A problem of the Kueue objects: logged, and a Warning Event about the object it names. */
static void w_queue_problem(void *ud, const model_obj *about, const char *problem) {
  ts_log(TS_LOG_WARN, "Kueue objects: %s", problem);
  if (about) {
    model_object_ref ref = {about->api_version, model_kind_name(about->kind), about->ns,
                            about->name, about->uid};
    event(ud, &ref, "Warning", "InvalidConfiguration", problem);
  }
}

static void status_done(void *ud, ts_rc res, const kc_write_info *info) {
  (void)info;
  live_queue_status_done(ud, res);
}

/* A queue's status, as Kueue writes it, in the kueue.x-k8s.io version the queues are watched in. */
static void w_queue_status(void *ud, void *token, const model_queue_status *st) {
  run_writes *rw = ud;
  char path[1024];
  json_t *body = model_queue_status_patch(st, rw->kueue_version);
  if (!body) {
    kc_write_fail(rw->writer, status_done, token);
    return;
  }
  model_queue_status_path(st, rw->kueue_version, path, sizeof path);
  kc_patch(rw->writer,
           st->cluster_queue ? "patch clusterqueues/status" : "patch localqueues/status", path,
           KC_MERGE_PATCH, st->cluster_queue ? "" : st->ns, st->name, body, status_done, token);
  json_decref(body);
}

live_writer run_writes_live(run_writes *rw) {
  return (live_writer){w_reserve,       w_unreserve,     w_bind,         w_evict,
                       w_unschedulable, w_queue_problem, w_queue_status, rw};
}

/* ---- the Lease ------------------------------------------------------------------------------ */

static bool lease_read(const json_t *lease, const char **holder, const char **renew_time,
                       int64_t *duration_s) {
  model_lease l;
  if (!model_lease_read(lease, &l)) return false;
  *holder = l.holder, *renew_time = l.renew_time, *duration_s = l.duration_s;
  return true;
}

const kc_lease_codec run_lease_codec = {lease_read, model_lease_json, model_lease_release_patch};

const kc_review_codec run_review_codec = {model_token_review_json, model_token_review_read,
                                          model_access_review_json, model_access_review_read};
