/* cmd/queue_status.c - a ClusterQueue's or LocalQueue's status as Kueue writes it (counts of
 * pending, reserving and admitted workloads, quota reserved and used per flavor and resource,
 * the Active condition with Kueue's reasons), for `tessera run` to patch through the status
 * subresource. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"

static json_t *quantity(const model_resources *rt, int id, int64_t v) {
  char q[TS_QUANTITY_STR_MAX];
  q_format(rt, id, v, q);
  return json_string(q);
}

/* [{name: flavor, resources: [{name, total[, borrowed]}]}], one entry per flavor in order. */
static json_t *flavors(const model_resources *rt, const q_fr_report *x, uint32_t n, bool borrowed) {
  json_t *out = json_array(), *fl = NULL, *res = NULL;
  const char *at = NULL;
  for (uint32_t i = 0; out && i < n; i++) {
    json_t *r;
    if (!fl || x[i].flavor != at) {
      at = x[i].flavor;
      res = json_array();
      fl = json_pack("{s:s, s:o}", "name", at, "resources", res);
      if (json_array_append_new(out, fl)) return json_decref(out), NULL;
    }
    r = json_pack("{s:s, s:o}", "name", model_resource_name(rt, x[i].resource), "total",
                  quantity(rt, x[i].resource, x[i].usage));
    if (r && borrowed)
      json_object_set_new(r, "borrowed", quantity(rt, x[i].resource, x[i].borrowed));
    if (json_array_append_new(res, r)) return json_decref(out), NULL;
  }
  return out;
}

static json_t *condition(bool active, const char *reason, const char *message, int64_t at_ns) {
  char t[40];
  time_t s = (time_t)(at_ns / 1000000000LL);
  struct tm tm;
  gmtime_r(&s, &tm);
  strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type", "Active", "status",
                   active ? "True" : "False", "reason", reason, "message", message,
                   "lastTransitionTime", t);
}

json_t *queue_status_json(const live_queue_status *st, const char *version) {
  json_t *s;
  char msg[1024];
  if (st->cq) {
    const q_cq_report *c = st->cq;
    if (c->inactive)
      snprintf(msg, sizeof msg, "Can't admit new workloads: %s",
               c->problem ? c->problem : "the ClusterQueue is stopped");
    s = json_pack("{s:i, s:i, s:i, s:o, s:o, s:o}", "pendingWorkloads",
                  (json_int_t)c->pending_active + c->pending_inadmissible, "reservingWorkloads",
                  (json_int_t)c->admitted, "admittedWorkloads", (json_int_t)c->admitted,
                  "flavorsReservation", flavors(st->resources, c->frs, c->nfrs, true),
                  "flavorsUsage", flavors(st->resources, c->frs, c->nfrs, true), "conditions",
                  condition(!c->inactive, c->inactive ? c->inactive : "Ready",
                            c->inactive ? msg : "Can admit new workloads", st->transition_ns));
    if (s && st->fair_sharing)
      json_object_set_new(s, "fairSharing",
                          json_pack("{s:I}", "weightedShare",
                                    isinf(c->weighted_share)
                                        ? (json_int_t)INT64_MAX
                                        : (json_int_t)llround(c->weighted_share)));
  } else {
    const q_lq_report *q = st->lq;
    const char *why = !q->inactive                      ? "Can submit new workloads to localQueue"
                      : !strcmp(q->inactive, "Stopped") ? "LocalQueue is stopped"
                      : !strcmp(q->inactive, "ClusterQueueIsInactive")
                          ? "Can't submit new workloads to clusterQueue: it is inactive"
                          : "Can't submit new workloads to clusterQueue: it does not exist";
    s = json_pack(
        "{s:i, s:i, s:i, s:o, s:o, s:o}", "pendingWorkloads",
        (json_int_t)q->pending_active + q->pending_inadmissible, "reservingWorkloads",
        (json_int_t)q->admitted, "admittedWorkloads", (json_int_t)q->admitted, "flavorsReservation",
        flavors(st->resources, q->frs, q->nfrs, false),
        /* v1beta1 names it flavorUsage */
        strcmp(version, "v1beta1") ? "flavorsUsage" : "flavorUsage",
        flavors(st->resources, q->frs, q->nfrs, false), "conditions",
        condition(!q->inactive, q->inactive ? q->inactive : "Ready", why, st->transition_ns));
  }
  return s ? json_pack("{s:o}", "status", s) : NULL;
}

void queue_status_path(const live_queue_status *st, const char *version, char *out, size_t cap) {
  if (st->cq)
    snprintf(out, cap, "/apis/kueue.x-k8s.io/%s/clusterqueues/%s/status", version, st->cq->name);
  else
    snprintf(out, cap, "/apis/kueue.x-k8s.io/%s/namespaces/%s/localqueues/%s/status", version,
             st->lq->ns, st->lq->name);
}
