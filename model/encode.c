/* model/encode.c - the bodies Tessera writes about pods, Events, Leases and Kueue's queues
 * (model/wire.h); claims are in encode_claim.c. */
#include "model/wire.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* RFC 3339 in UTC; micro: with microseconds (metav1.MicroTime). */
static void rfc3339(int64_t ns, bool micro, char *out, size_t cap) {
  char s[40];
  int64_t frac = ns % 1000000000LL;
  if (frac < 0) frac += 1000000000LL;
  ts_time_format(ns - frac, s, sizeof s);
  if (micro && strlen(s) > 1) /* "...:05Z" -> "...:05.123456Z" */
    snprintf(out, cap, "%.*s.%06lldZ", (int)strlen(s) - 1, s, (long long)(frac / 1000));
  else
    snprintf(out, cap, "%s", s);
}

/* ---- pods ---------------------------------------------------------------------------------- */

json_t *model_binding_json(const char *ns, const char *name, const char *uid, const char *node,
                           int32_t gpu_index) {
  json_t *b = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
                        "Binding", "metadata", "name", name, "namespace", ns, "target",
                        "apiVersion", "v1", "kind", "Node", "name", node);
  json_t *md = json_object_get(b, "metadata");
  if (b && uid && *uid) json_object_set_new(md, "uid", json_string(uid));
  if (b && gpu_index >= 0) {
    char idx[16];
    snprintf(idx, sizeof idx, "%d", (int)gpu_index);
    json_object_set_new(md, "annotations", json_pack("{s:s}", "tessera.dev/gpu-index", idx));
  }
  return b;
}

json_t *model_eviction_json(const char *ns, const char *name, const char *uid) {
  return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1", "kind",
                   "Eviction", "metadata", "name", name, "namespace", ns, "deleteOptions",
                   "preconditions", "uid", uid ? uid : "");
}

json_t *model_pod_unscheduled_patch(const char *reason, const char *message, int64_t now_ns) {
  char now[40];
  rfc3339(now_ns, false, now, sizeof now);
  return json_pack("{s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type",
                   "PodScheduled", "status", "False", "reason", reason ? reason : "Unschedulable",
                   "message", message ? message : "", "lastTransitionTime", now);
}

/* ---- events -------------------------------------------------------------------------------- */

/* kube-scheduler's Event name: "<name>.<wall clock in hex nanoseconds>" (a generateName ending
 * in '.' is refused). The name part is cut so that the result stays a valid RFC 1123 subdomain
 * of at most 253 characters. */
static void event_name(const char *name, int64_t now_ns, char *out, size_t cap) {
  char hex[24];
  size_t keep = strlen(name);
  snprintf(hex, sizeof hex, ".%llx", (unsigned long long)now_ns);
  if (keep > 253 - strlen(hex)) keep = 253 - strlen(hex);
  while (keep && (name[keep - 1] == '.' || name[keep - 1] == '-')) keep--;
  snprintf(out, cap, "%.*s%s", (int)keep, name, hex);
}

/* note cut to the API server's limit for Event notes, at a UTF-8 boundary. */
static void event_note(const char *note, char *out, size_t cap) {
  size_t n = strlen(note ? note : "");
  if (n > MODEL_EVENT_NOTE_MAX) {
    n = MODEL_EVENT_NOTE_MAX - 3;
    while (n && ((unsigned char)note[n] & 0xC0) == 0x80) n--;
    snprintf(out, cap, "%.*s...", (int)n, note);
  } else {
    snprintf(out, cap, "%s", note ? note : "");
  }
}

json_t *model_event_json(const model_object_ref *about, const char *instance, const char *type,
                         const char *reason, const char *note, int64_t now_ns) {
  const char *ns = about->ns && *about->ns ? about->ns : "default"; /* cluster-scoped: default */
  char name[TS_NAME_MAX], when[48], text[MODEL_EVENT_NOTE_MAX + 1];
  json_t *b;
  event_name(about->name, now_ns, name, sizeof name);
  rfc3339(now_ns, true, when, sizeof when);
  event_note(note, text, sizeof text);
  b = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:s, "
                "s:{s:s, s:s, s:s, s:s}}",
                "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata", "name", name,
                "namespace", ns, "eventTime", when, "reportingController", "tessera",
                "reportingInstance", instance, "action", "Scheduling", "reason", reason, "note",
                text, "type", type, "regarding", "apiVersion", about->api_version, "kind",
                about->kind, "name", about->name, "uid", about->uid ? about->uid : "");
  if (b && about->ns && *about->ns)
    json_object_set_new(json_object_get(b, "regarding"), "namespace", json_string(about->ns));
  return b;
}

/* ---- snapshots ---------------------------------------------------------------------------- */

/* Drops what may hold credentials, in place; returns how many values were dropped. */
static size_t scrub(json_t *v) {
  size_t n = 0, i;
  const char *k;
  json_t *x;
  if (json_is_array(v)) {
    json_array_foreach(v, i, x) n += scrub(x);
    return n;
  }
  if (!json_is_object(v)) return 0;
  json_object_foreach(v, k, x) {
    if (!strcmp(k, "env") && json_is_array(x)) {
      json_t *e;
      json_array_foreach(x, i, e)
        if (json_is_object(e) && !json_object_del(e, "value")) n++;
    } else {
      n += scrub(x);
    }
  }
  return n;
}

static void strip_metadata(json_t *o) {
  json_t *md = json_object_get(o, "metadata");
  json_object_del(md, "managedFields");
  json_object_del(json_object_get(md, "annotations"),
                  "kubectl.kubernetes.io/last-applied-configuration");
}

char *model_scrubbed_text(const json_t *obj, uint32_t *scrubbed) {
  json_t *copy = json_deep_copy(obj);
  char *text;
  if (!copy) return NULL;
  strip_metadata(copy);
  *scrubbed = (uint32_t)scrub(copy);
  text = json_dumps(copy, JSON_COMPACT);
  json_decref(copy);
  return text;
}

/* ---- leases -------------------------------------------------------------------------------- */

bool model_lease_read(const json_t *lease, model_lease *out) {
  const json_t *spec = json_object_get(lease, "spec");
  memset(out, 0, sizeof *out);
  if (!json_is_object(lease)) return false;
  out->holder = json_string_value(json_object_get(spec, "holderIdentity")) ?: "";
  out->renew_time = json_string_value(json_object_get(spec, "renewTime")) ?: "";
  if (*out->renew_time && ts_time_parse(out->renew_time, &out->renew_ns) != TS_OK)
    out->renew_ns = 0;
  out->duration_s = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
  return true;
}

bool model_lease_held(const char *body, size_t len, int64_t now_ns) {
  json_t *lease = json_loadb(body, len, 0, NULL);
  model_lease l;
  bool held = lease && model_lease_read(lease, &l) && l.holder[0] && l.renew_ns &&
              now_ns - l.renew_ns <= 2 * (l.duration_s > 0 ? l.duration_s : 15) * 1000000000LL;
  json_decref(lease);
  return held;
}

json_t *model_lease_json(const json_t *old, const char *ns, const char *name, const char *holder,
                         int64_t duration_s, bool acquire, int64_t now_ns) {
  char now[48];
  json_t *b =
      old ? json_deep_copy(old)
          : json_pack("{s:s, s:s, s:{s:s, s:s}, s:{}}", "apiVersion", "coordination.k8s.io/v1",
                      "kind", "Lease", "metadata", "name", name, "namespace", ns, "spec");
  json_t *spec = json_object_get(b, "spec");
  json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
  if (!b) return NULL;
  rfc3339(now_ns, true, now, sizeof now);
  if (!json_is_object(spec)) json_object_set_new(b, "spec", spec = json_object());
  json_object_set_new(spec, "holderIdentity", json_string(holder));
  json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration_s));
  json_object_set_new(spec, "renewTime", json_string(now));
  if (acquire) {
    json_object_set_new(spec, "acquireTime", json_string(now));
    json_object_set_new(spec, "leaseTransitions", json_integer(old ? transitions + 1 : 0));
  }
  return b;
}

json_t *model_lease_release_patch(int64_t now_ns) {
  char now[48];
  rfc3339(now_ns, true, now, sizeof now);
  return json_pack("{s:{s:s, s:i, s:s}}", "spec", "holderIdentity", "", "leaseDurationSeconds", 1,
                   "renewTime", now);
}

/* ---- Kueue queue status -------------------------------------------------------------------- */

/* [{name: flavor, resources: [{name, total[, borrowed]}]}], one entry per flavor in order. */
static json_t *flavors(const model_queue_status *st, bool borrowed) {
  json_t *out = json_array(), *fl = NULL, *res = NULL;
  const char *at = NULL;
  for (uint32_t i = 0; out && i < st->nfrs; i++) {
    const model_flavor_usage *x = &st->frs[i];
    json_t *r;
    if (!fl || strcmp(x->flavor, at)) {
      at = x->flavor;
      res = json_array();
      fl = json_pack("{s:s, s:o}", "name", at, "resources", res);
      if (json_array_append_new(out, fl)) return json_decref(out), NULL;
    }
    r = json_pack("{s:s, s:s}", "name", x->resource, "total", x->total);
    if (r && borrowed) json_object_set_new(r, "borrowed", json_string(x->borrowed));
    if (json_array_append_new(res, r)) return json_decref(out), NULL;
  }
  return out;
}

static json_t *condition(bool active, const char *reason, const char *message, int64_t at_ns,
                         int64_t generation) {
  char t[40];
  rfc3339(at_ns, false, t, sizeof t);
  return json_pack("[{s:s, s:s, s:s, s:s, s:s, s:I}]", "type", "Active", "status",
                   active ? "True" : "False", "reason", reason, "message", message,
                   "lastTransitionTime", t, "observedGeneration", (json_int_t)generation);
}

/* The Active condition's reason: Kueue's own words only. A ClusterQueue inactive for a cause
 * Kueue has no reason for (a cohort cycle, a quota out of range) says Unknown, Kueue's reason
 * when it cannot admit and names no cause; the message says what. */
static const char *active_reason(const model_queue_status *st) {
  const char *why = st->inactive;
  if (!why) return "Ready";
  if (!st->cluster_queue) return why; /* Stopped, ClusterQueueDoesNotExist, ...IsInactive */
  return !strcmp(why, "Stopped") || !strcmp(why, "FlavorNotFound") ? why : "Unknown";
}

/* The Active condition's message, in Kueue's words. */
static const char *active_message(const model_queue_status *st, char *buf, size_t cap) {
  const char *why = st->inactive;
  if (st->cluster_queue) {
    if (!why) return "Can admit new workloads";
    if (!st->problem) return "Can't admit new workloads.";
    snprintf(buf, cap, "Can't admit new workloads: %s.", st->problem);
    return buf;
  }
  return !why                      ? "Can submit new workloads to localQueue"
         : !strcmp(why, "Stopped") ? "LocalQueue is stopped"
                                   : "Can't submit new workloads to clusterQueue";
}

json_t *model_queue_status_patch(const model_queue_status *st, const char *version) {
  json_t *s;
  char msg[1024];
  /* v1beta1 names a LocalQueue's usage flavorUsage */
  const char *usage =
      st->cluster_queue || strcmp(version, "v1beta1") ? "flavorsUsage" : "flavorUsage";
  /* a stopped LocalQueue reports no pending workloads, as Kueue's controller writes it */
  bool stopped_lq = !st->cluster_queue && st->inactive && !strcmp(st->inactive, "Stopped");
  s = json_pack("{s:i, s:i, s:i, s:o, s:o, s:o}", "pendingWorkloads",
                stopped_lq ? (json_int_t)0 : (json_int_t)st->pending, "reservingWorkloads",
                (json_int_t)st->admitted, "admittedWorkloads", (json_int_t)st->admitted,
                "flavorsReservation", flavors(st, st->cluster_queue), usage,
                flavors(st, st->cluster_queue), "conditions",
                condition(!st->inactive, active_reason(st), active_message(st, msg, sizeof msg),
                          st->transition_ns, st->generation));
  /* Kueue rounds the share up (controller/core.WeightedShare); off, it removes the field */
  if (s && st->cluster_queue)
    json_object_set_new(s, "fairSharing",
                        !st->fair_sharing ? json_null()
                                          : json_pack("{s:I}", "weightedShare",
                                                      isinf(st->weighted_share)
                                                          ? (json_int_t)INT64_MAX
                                                          : (json_int_t)ceil(st->weighted_share)));
  return s ? json_pack("{s:o}", "status", s) : NULL;
}

void model_queue_status_path(const model_queue_status *st, const char *version, char *out,
                             size_t cap) {
  if (st->cluster_queue)
    snprintf(out, cap, "/apis/kueue.x-k8s.io/%s/clusterqueues/%s/status", version, st->name);
  else
    snprintf(out, cap, "/apis/kueue.x-k8s.io/%s/namespaces/%s/localqueues/%s/status", version,
             st->ns, st->name);
}
