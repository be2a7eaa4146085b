/* cmd/explain.c - `tessera explain NAMESPACE/NAME`: why a pending pod waits, where it stands in
 * its queues, what would make room, and when it is expected to start.
 *
 * Offline (--snapshot PATH): the snapshot is loaded as replay loads it, one cycle runs on it as
 * a dry run (nothing is written anywhere), the explainer reads the cycle's result, and the
 * estimate runs a copy of the cluster forward (sim/estimate.c). The explanation is one JSON
 * document (explain_json), printed as is (-o json, yaml) or as text (explain_print). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/config.h"
#include "kubeclient/kc.h"
#include "model/model.h"
#include "queueing/queueing.h"
#include "scheduler/sched.h"
#include "sim/sim.h"

static json_t *amount(const model *m, int id, int64_t v) {
  char buf[64];
  model_resource_format(model_resources_of(m), id, v, buf);
  return json_string(buf);
}

static json_t *quota_amount(const model *m, int id, int64_t v) {
  char buf[64];
  q_format(model_resources_of(m), id, v, buf);
  return json_string(buf);
}

/* A workload's label ("PyTorchJob ns/name") or pod key ("ns/name"), or what stands for it when
 * only the namespace only_ns may be shown. */
static json_t *shown(const char *label, const char *ns_of, const char *only_ns) {
  if (only_ns && strcmp(ns_of, only_ns) != 0)
    return json_string("(a workload of another namespace)");
  return json_string(label);
}

/* The namespace of a workload label "Kind ns/name": the text between the space and the slash. */
static const char *label_ns(const char *label, char *buf, size_t cap) {
  const char *sp = strchr(label, ' '), *sl;
  if (!sp || !(sl = strchr(sp + 1, '/')) || (size_t)(sl - sp - 1) >= cap) return "";
  memcpy(buf, sp + 1, (size_t)(sl - sp - 1));
  buf[sl - sp - 1] = '\0';
  return buf;
}

static json_t *maybe(const char *s) {
  return s ? json_string(s) : json_null();
}

static void add_queue(json_t *o, const sched_explanation *e, const char *only_ns) {
  json_t *q, *ahead;
  if (!e->cluster_queue && !e->local_queue) return;
  ahead = json_array();
  for (uint32_t i = 0; i < e->nahead; i++) {
    char ns[TS_NAME_MAX];
    json_array_append_new(ahead, shown(e->ahead[i], label_ns(e->ahead[i], ns, sizeof ns), only_ns));
  }
  q = json_pack("{s:o, s:o, s:o, s:o}", "localQueue", maybe(e->local_queue), "clusterQueue",
                maybe(e->cluster_queue), "cohort", maybe(e->cohort), "ahead", ahead);
  if (e->pos_lq >= 0) json_object_set_new(q, "positionInLocalQueue", json_integer(e->pos_lq));
  if (e->pos_cq >= 0) json_object_set_new(q, "positionInClusterQueue", json_integer(e->pos_cq));
  if (e->pos_cohort >= 0) json_object_set_new(q, "positionInCohort", json_integer(e->pos_cohort));
  json_object_set_new(o, "queue", q);
}

static void add_quota(json_t *o, const model *m, const sched_explanation *e) {
  json_t *a = json_array();
  const model_resources *t = model_resources_of(m);
  for (uint32_t i = 0; i < e->nquota; i++) {
    const sched_quota_line *l = &e->quota[i];
    json_array_append_new(
        a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "flavor", l->flavor, "resource",
                     model_resource_name(t, l->resource), "request",
                     quota_amount(m, l->resource, l->request), "nominal",
                     quota_amount(m, l->resource, l->nominal), "usage",
                     quota_amount(m, l->resource, l->usage), "borrowed",
                     quota_amount(m, l->resource, l->borrowed), "borrowable",
                     l->borrowable < 0 ? json_null() : quota_amount(m, l->resource, l->borrowable),
                     "missing", quota_amount(m, l->resource, l->missing)));
  }
  if (e->nquota)
    json_object_set_new(o, "quota", a);
  else
    json_decref(a);
}

static void add_capacity(json_t *o, const model *m, const sched_explanation *e) {
  json_t *a = json_array();
  const model_resources *t = model_resources_of(m);
  for (uint32_t i = 0; i < e->ncapacity; i++) {
    const sched_capacity_line *l = &e->capacity[i];
    json_array_append_new(
        a, json_pack("{s:s, s:s, s:s, s:o, s:o}", "level", l->level ? l->level : "node", "domain",
                     l->domain, "resource", model_resource_name(t, l->resource), "free",
                     amount(m, l->resource, l->free), "demand", amount(m, l->resource, l->demand)));
  }
  json_object_set_new(o, "capacity",
                      json_pack("{s:i, s:i, s:o}", "nodes", (int)e->nodes, "nodesPassingFilters",
                                (int)e->nodes_passing, "largest", a));
}

static void add_claims(json_t *o, const model_pod *p) {
  json_t *a;
  if (!p->nclaims) return;
  a = json_array();
  for (uint32_t i = 0; i < p->nclaims; i++) {
    const model_pod_claim *c = &p->claims[i];
    json_t *x = json_pack("{s:s}", "name", c->name);
    if (c->claim_name) json_object_set_new(x, "resourceClaimName", json_string(c->claim_name));
    if (c->template_name)
      json_object_set_new(x, "resourceClaimTemplateName", json_string(c->template_name));
    json_array_append_new(a, x);
  }
  json_object_set_new(o, "claims", a);
}

json_t *explain_json(const model *m, const sched_explanation *e, const char *only_ns) {
  static const char *const states[] = {"Pending", "Bound", "NotTessera"};
  const model_pod *p = e->pod;
  json_t *o = json_pack("{s:s, s:s}", "pod", p->obj.key, "state", states[e->state]), *g, *v;
  if (e->state != SCHED_EXPLAIN_PENDING) return o;
  if (e->decision && e->decision->kind == SCHED_BIND)
    json_object_set_new(
        o, "decision",
        json_pack("{s:s, s:s}", "action", "bind", "node", e->decision->node->obj.name));
  else if (e->decision)
    json_object_set_new(o, "decision",
                        json_pack("{s:s, s:s, s:s}", "action", "pending", "why",
                                  sched_pending_why_name(e->decision->why), "reason",
                                  e->decision->reason ? e->decision->reason : ""));
  json_object_set_new(o, "workload",
                      json_pack("{s:s, s:b, s:i, s:i, s:i, s:i}", "name", e->workload, "gang",
                                e->gang, "minMember", (int)e->min, "pending", (int)e->pending,
                                "bound", (int)e->bound, "missing",
                                e->min > (int32_t)(e->pending + e->bound)
                                    ? (int)(e->min - (int32_t)(e->pending + e->bound))
                                    : 0));
  g = json_array();
  for (uint32_t i = 0; i < p->ngates; i++) json_array_append_new(g, json_string(p->gates[i]));
  json_object_set_new(o, "gates", g);
  add_queue(o, e, only_ns);
  add_quota(o, m, e);
  add_capacity(o, m, e);
  add_claims(o, p);
  v = json_array();
  for (uint32_t i = 0; i < e->nvictims; i++)
    json_array_append_new(v, shown(e->victims[i]->obj.key, e->victims[i]->obj.ns, only_ns));
  json_object_set_new(o, "preemption", json_pack("{s:o}", "victims", v));
  return o;
}

void explain_add_estimate(json_t *o, const sim_estimate_result *est, int64_t now_ns) {
  json_t *x = json_array(), *es;
  char when[40];
  if (est->unknown_ends)
    json_array_append_new(
        x, json_sprintf("%u running pod%s no expected end (annotation "
                        "tessera.dev/expected-duration or spec.activeDeadlineSeconds): taken to "
                        "run past the horizon",
                        est->unknown_ends, est->unknown_ends == 1 ? " has" : "s have"));
  if (est->unknown_started)
    json_array_append_new(x,
                          json_sprintf("%u pod%s started in the forward run without an "
                                       "expected end",
                                       est->unknown_started, est->unknown_started == 1 ? "" : "s"));
  if (est->evictions)
    json_array_append_new(x, json_sprintf("the forward run preempted %u pod%s", est->evictions,
                                          est->evictions == 1 ? "" : "s"));
  if (est->history_ends)
    json_array_append_new(x, json_sprintf("%u end%s from the median run time of finished pods "
                                          "of the same queue and requests",
                                          est->history_ends,
                                          est->history_ends == 1 ? " comes" : "s come"));
  if (est->deadline_ends)
    json_array_append_new(x, json_sprintf("%u end%s from spec.activeDeadlineSeconds, the "
                                          "latest a pod may run: the start may come earlier",
                                          est->deadline_ends,
                                          est->deadline_ends == 1 ? " comes" : "s come"));
  json_array_append_new(x, json_string("pods created from now on are not foreseen"));
  es = json_pack("{s:I, s:i, s:i, s:o}", "horizonSeconds",
                 (json_int_t)(est->horizon_ns / 1000000000), "events", (int)est->events, "cycles",
                 (int)est->cycles, "uncertain", x);
  if (est->started) {
    ts_time_format(est->start_ns, when, sizeof when);
    json_object_set_new(es, "start", json_string(when));
    json_object_set_new(es, "inSeconds", json_integer((est->start_ns - now_ns) / 1000000000));
  } else {
    json_object_set_new(es, "start", json_null());
    json_object_set_new(es, "notWithin", json_string(est->stop));
  }
  json_object_set_new(o, "estimate", es);
}

json_t *explain_pod(model *m, const sched_config *cfg, int64_t now_ns, const char *ns,
                    const char *name, const char *only_ns, const sim_estimate_opts *eo, int *status,
                    ts_err *err) {
  const model_pod *p = (const model_pod *)model_get(m, MODEL_POD, ns, name);
  sched_state *st;
  sched_result res;
  sched_explainer *x = NULL;
  sched_explanation e;
  json_t *doc = NULL;
  *status = 404;
  if (!p) {
    ts_err_set(err, TS_ENOTFOUND, "no pod %s/%s", ns, name);
    return NULL;
  }
  *status = 500;
  if (!(st = sched_state_new())) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  if (sched_cycle(m, cfg, st, now_ns, &res, err) != TS_OK) {
    sched_state_free(st);
    return NULL;
  }
  if (sched_explainer_new(m, cfg, &res, now_ns, &x) != TS_OK || sched_explain(x, p, &e) != TS_OK ||
      !(doc = explain_json(m, &e, only_ns)))
    ts_err_set(err, TS_ENOMEM, "out of memory");
  else
    *status = 200;
  sched_explainer_free(x);
  sched_result_free(&res);
  sched_state_free(st);
  if (doc && eo && e.state == SCHED_EXPLAIN_PENDING) { /* after: the run moves pods about */
    sim_estimate_result est;
    if (sim_estimate(m, cfg, now_ns, ns, name, eo, &est, err) != TS_OK) {
      json_decref(doc);
      *status = 500;
      return NULL;
    }
    explain_add_estimate(doc, &est, now_ns);
  }
  return doc;
}

/* A Kubernetes Status of a NotFound, as Kueue's visibility server answers. */
static json_t *not_found(const char *kind, const char *name) {
  char message[400];
  snprintf(message, sizeof message, "%s.visibility.kueue.x-k8s.io \"%s\" not found", kind, name);
  return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:i}", "kind", "Status",
                   "apiVersion", "v1", "metadata", "status", "Failure", "message", message,
                   "reason", "NotFound", "details", "name", name, "group",
                   "visibility.kueue.x-k8s.io", "kind", kind, "code", 404);
}

json_t *pending_workloads(const model *m, const sched_config *cfg, int64_t now_ns,
                          const char *version, const char *ns, const char *name, long long limit,
                          long long offset, int *status, ts_err *err) {
  const char *cq = NULL, *lq = NULL;
  sched_state *st;
  sched_result res;
  sched_explainer *x = NULL;
  sched_waiting w;
  json_t *doc = NULL, *items;
  size_t it = 0;
  long long index = 0, in_lq = 0;
  char when[40];
  *status = 500;
  if (limit <= 0) limit = 1000; /* Kueue's defaults and bounds */
  if (limit > 100000) limit = 100000;
  if (offset < 0) offset = 0;
  if (ns && *ns) {
    const model_local_queue *q =
        (const model_local_queue *)model_get(m, MODEL_LOCAL_QUEUE, ns, name);
    if (!q) return *status = 404, not_found("localqueue", name);
    lq = name, cq = q->cluster_queue; /* not interned: a request's names stay out of the table */
  } else if (!model_get(m, MODEL_CLUSTER_QUEUE, "", name)) {
    return *status = 404, not_found("clusterqueue", name);
  } else {
    cq = name;
  }
  if (!(st = sched_state_new())) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  if (sched_cycle(m, cfg, st, now_ns, &res, err) != TS_OK) {
    sched_state_free(st);
    return NULL;
  }
  if (sched_explainer_new(m, cfg, &res, now_ns, &x) != TS_OK) {
    ts_err_set(err, TS_ENOMEM, "out of memory");
  } else {
    items = json_array();
    while (sched_explainer_next(x, &it, &w)) {
      json_t *meta, *owners;
      if (!w.cluster_queue || strcmp(w.cluster_queue, cq) != 0) continue;
      if (lq && (!w.local_queue || strcmp(w.local_queue, lq) || strcmp(w.ns, ns))) continue;
      if ((lq ? in_lq++ : index++) < offset) continue;
      if ((long long)json_array_size(items) >= limit) break;
      ts_time_format(w.created_ns, when, sizeof when);
      owners = json_array();
      for (uint32_t k = 0; k < w.first->obj.nowners; k++) {
        const model_owner *o = &w.first->obj.owners[k];
        json_array_append_new(owners,
                              json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", o->api_version,
                                        "kind", o->kind, "name", o->name, "uid", o->uid));
      }
      meta = json_pack("{s:s, s:s, s:s}", "name", w.name, "namespace", w.ns, "creationTimestamp",
                       when);
      if (json_array_size(owners))
        json_object_set_new(meta, "ownerReferences", owners);
      else
        json_decref(owners);
      json_array_append_new(items,
                            json_pack("{s:o, s:i, s:s, s:i, s:i}", "metadata", meta, "priority",
                                      (int)w.priority, "localQueueName",
                                      w.local_queue ? w.local_queue : "", "positionInClusterQueue",
                                      (int)w.pos_cq, "positionInLocalQueue", (int)w.pos_lq));
    }
    doc = json_pack("{s:s, s:s, s:{s:n}, s:o}", "kind", "PendingWorkloadsSummary", "apiVersion",
                    version, "metadata", "creationTimestamp", "items", items);
    *status = 200;
  }
  sched_explainer_free(x);
  sched_result_free(&res);
  sched_state_free(st);
  return doc;
}

static const char *str(json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

/* A span of seconds as "2d 3h 5m", "3h 5m" or "5m" (under a minute: "0m"). */
static void span(FILE *f, long long s) {
  if (s >= 86400) fprintf(f, "%lldd ", s / 86400);
  if (s >= 3600) fprintf(f, "%lldh ", s % 86400 / 3600);
  fprintf(f, "%lldm", s % 3600 / 60);
}

/* The text form of an explanation document (explain_json's, or a server's). */
void explain_print(FILE *f, json_t *o) {
  json_t *d = json_object_get(o, "decision"), *w = json_object_get(o, "workload"),
         *q = json_object_get(o, "queue"), *c = json_object_get(o, "capacity"),
         *es = json_object_get(o, "estimate"), *x;
  size_t i;
  if (strcmp(str(o, "state"), "Pending") != 0) {
    fprintf(f, "pod %s: %s\n", str(o, "pod"),
            !strcmp(str(o, "state"), "Bound") ? "not pending (bound, or ended): nothing to explain"
                                              : "not Tessera's (another spec.schedulerName, or "
                                                "being deleted)");
    return;
  }
  if (d && !strcmp(str(d, "action"), "bind"))
    fprintf(f, "pod %s: pending; the cycle places it now on %s\n", str(o, "pod"), str(d, "node"));
  else if (d)
    fprintf(f, "pod %s: pending (%s)\n  reason: %s\n", str(o, "pod"), str(d, "why"),
            str(d, "reason"));
  else
    fprintf(f, "pod %s: pending (the cycle made no decision for it)\n", str(o, "pod"));
  if (json_is_true(json_object_get(w, "gang")))
    fprintf(f,
            "  workload: %s, a gang: %lld pending and %lld bound of the %lld that must run "
            "together%s\n",
            str(w, "name"), json_integer_value(json_object_get(w, "pending")),
            json_integer_value(json_object_get(w, "bound")),
            json_integer_value(json_object_get(w, "minMember")),
            json_integer_value(json_object_get(w, "missing")) ? "; the rest do not exist yet" : "");
  else
    fprintf(f, "  workload: %s\n", str(w, "name"));
  if (json_array_size(json_object_get(o, "gates"))) {
    fprintf(f, "  gates:");
    json_array_foreach(json_object_get(o, "gates"), i, x) fprintf(f, " %s", json_string_value(x));
    fprintf(f, "\n");
  }
  if (q) {
    fprintf(f, "  queue: LocalQueue %s -> ClusterQueue %s", str(q, "localQueue"),
            str(q, "clusterQueue"));
    if (json_is_string(json_object_get(q, "cohort"))) fprintf(f, " (cohort %s)", str(q, "cohort"));
    fprintf(f, "\n");
    if (json_object_get(q, "positionInClusterQueue")) {
      static const char *const where[][2] = {{"positionInClusterQueue", "the ClusterQueue"},
                                             {"positionInLocalQueue", "the LocalQueue"},
                                             {"positionInCohort", "the cohort"}};
      fprintf(f, "  in line:");
      for (size_t k = 0; k < 3; k++)
        if (json_object_get(q, where[k][0]))
          fprintf(f, "%s number %lld in %s", k ? "," : "",
                  json_integer_value(json_object_get(q, where[k][0])) + 1, where[k][1]);
      fprintf(f, " (1: next)\n");
    }
    if (json_array_size(json_object_get(q, "ahead"))) {
      fprintf(f, "  ahead of it:");
      json_array_foreach(json_object_get(q, "ahead"), i, x)
        fprintf(f, "%s %s", i ? "," : "", json_string_value(x));
      fprintf(f, "\n");
    }
  }
  json_array_foreach(json_object_get(o, "quota"), i, x) {
    if (!i) fprintf(f, "  quota of ClusterQueue %s:\n", str(q, "clusterQueue"));
    fprintf(f, "    %s %s: asks %s, nominal %s, used %s", str(x, "flavor"), str(x, "resource"),
            str(x, "request"), str(x, "nominal"), str(x, "usage"));
    if (json_is_string(json_object_get(x, "borrowable")))
      fprintf(f, ", the cohort could lend %s", str(x, "borrowable"));
    fprintf(f, ": %s missing\n", str(x, "missing"));
  }
  if (c) {
    fprintf(f, "  capacity: %lld of %lld nodes pass its filters",
            json_integer_value(json_object_get(c, "nodesPassingFilters")),
            json_integer_value(json_object_get(c, "nodes")));
    json_array_foreach(json_object_get(c, "largest"), i, x)
      fprintf(f, "%s largest %s %s: %s %s free (asks %s)", i ? ";" : ";",
              !strcmp(str(x, "level"), "node") ? "node" : str(x, "level"), str(x, "domain"),
              str(x, "free"), str(x, "resource"), str(x, "demand"));
    fprintf(f, "\n");
  }
  json_array_foreach(json_object_get(o, "claims"), i, x)
    fprintf(f, "  claim %s: %s %s\n", str(x, "name"),
            json_object_get(x, "resourceClaimName") ? "ResourceClaim" : "from template",
            json_object_get(x, "resourceClaimName") ? str(x, "resourceClaimName")
                                                    : str(x, "resourceClaimTemplateName"));
  x = json_object_get(json_object_get(o, "preemption"), "victims");
  if (json_array_size(x)) {
    json_t *y;
    fprintf(f, "  preemption: evicts");
    json_array_foreach(x, i, y) fprintf(f, "%s %s", i ? "," : "", json_string_value(y));
    fprintf(f, " to make room for it\n");
  }
  if (es) {
    json_t *u;
    if (json_is_string(json_object_get(es, "start"))) {
      long long in = (long long)json_integer_value(json_object_get(es, "inSeconds"));
      fprintf(f, "  estimate: starts ");
      if (in < 60) {
        fprintf(f, "now");
      } else {
        fprintf(f, "in ");
        span(f, in);
      }
      fprintf(f, " (%s)\n", str(es, "start"));
    } else {
      fprintf(f, "  estimate: not within ");
      span(f, (long long)json_integer_value(json_object_get(es, "horizonSeconds")));
      fprintf(f, " (stopped: %s)\n", str(es, "notWithin"));
    }
    json_array_foreach(json_object_get(es, "uncertain"), i, u)
      fprintf(f, "    uncertain: %s\n", json_string_value(u));
  }
}

static void usage(FILE *f) {
  fputs(
      "usage: tessera explain NAMESPACE/NAME --snapshot PATH [--config FILE] [-o text|json|yaml]\n"
      "                       [--horizon DURATION] [--no-estimate]\n"
      "       tessera explain NAMESPACE/NAME --server URL [--token-file FILE]\n"
      "                       [--certificate-authority FILE | --insecure-skip-tls-verify]\n"
      "       tessera explain (--clusterqueue NAME | --localqueue NAMESPACE/NAME)\n"
      "                       (--snapshot PATH | --server URL ...) [-o text|json|yaml]\n"
      "       tessera explain --gpus --snapshot PATH [--config FILE] [-o text|json|yaml]\n"
      "  NAMESPACE/NAME  a pending pod\n"
      "  --clusterqueue, --localqueue  the queue's pending workloads in order, as Kueue's\n"
      "                  visibility API lists them (PendingWorkloadsSummary)\n"
      "  --gpus          per GPU model: free GPUs, the most free in one node and in one\n"
      "                  domain of each topology level, and those no waiting pod can use\n"
      "                  (a running tessera exports the same as tessera_gpu_* metrics)\n"
      "  --snapshot      a recorded cluster (tessera snapshot, kubectl JSON/YAML, a directory)\n"
      "  --server        a running tessera's metrics endpoint (https://HOST:PORT): its\n"
      "                  explanation now, for a token allowed to get the pod\n"
      "  --token-file    the bearer token to send (kubectl create token, a ServiceAccount's)\n"
      "  --certificate-authority  the CA that signed the server's certificate\n"
      "  --insecure-skip-tls-verify  do not verify the server's certificate\n"
      "  --config        tessera.yaml (else the snapshot's own, else the defaults)\n"
      "  -o, --output    text (default), json or yaml\n"
      "  --horizon       how far ahead the estimate looks (a Go duration; 168h)\n"
      "  --no-estimate   explain only: do not run the cluster forward\n",
      f);
}

static const cmd_flag explain_flags[] = {{"--snapshot", NULL, "PATH"},
                                         {"--config", NULL, "FILE"},
                                         {"--output", "-o", "FORMAT"},
                                         {"--horizon", NULL, "DURATION"},
                                         {"--no-estimate", NULL, NULL},
                                         {"--server", NULL, "URL"},
                                         {"--token-file", NULL, "FILE"},
                                         {"--certificate-authority", NULL, "FILE"},
                                         {"--insecure-skip-tls-verify", NULL, NULL},
                                         {"--clusterqueue", NULL, "NAME"},
                                         {"--localqueue", NULL, "NAMESPACE/NAME"},
                                         {"--gpus", NULL, NULL},
                                         {NULL, NULL, NULL}};

typedef struct explain_args {
  const char *cq, *lq; /* --clusterqueue, --localqueue: its pending workloads instead */
  const char *target, *snapshot, *config, *server, *token_file, *ca;
  bool insecure;
  cmd_format fmt;
  int64_t horizon_ms;
  bool no_estimate;
  bool gpus; /* --gpus: the GPU room instead */
} explain_args;

static int parse_args(int argc, char **argv, explain_args *a) {
  static cmd_arg v[CMD_ARGS_MAX];
  int n, rc = cmd_flags_parse("explain", usage, explain_flags, argc, argv, v, &n);
  memset(a, 0, sizeof *a);
  if (rc != CMD_PARSED) return rc;
  for (int i = 0; i < n; i++) {
    const char *x = v[i].value;
    if (v[i].flag == 0)
      a->snapshot = x;
    else if (v[i].flag == 1)
      a->config = x;
    else if (v[i].flag == 2 && (a->fmt = cmd_format_parse(x, true)) == CMD_FMT_BAD)
      return cmd_usage_error("explain", usage, "-o %s: the output is text, json or yaml", x);
    else if (v[i].flag == 3 &&
             (ts_duration_parse(x, &a->horizon_ms) != TS_OK || a->horizon_ms <= 0))
      return cmd_usage_error(
          "explain", usage, "--horizon %s: a positive Go duration (\"72h\", \"90m\") is needed", x);
    else if (v[i].flag == 4)
      a->no_estimate = strcmp(x, "false") != 0;
    else if (v[i].flag == 5)
      a->server = x;
    else if (v[i].flag == 6)
      a->token_file = x;
    else if (v[i].flag == 7)
      a->ca = x;
    else if (v[i].flag == 8)
      a->insecure = strcmp(x, "false") != 0;
    else if (v[i].flag == 9)
      a->cq = x;
    else if (v[i].flag == 10)
      a->lq = x;
    else if (v[i].flag == 11)
      a->gpus = strcmp(x, "false") != 0;
    else if (v[i].flag < 0 && a->target)
      return cmd_usage_error("explain", usage, "one pod only (%s, then %s)", a->target, x);
    else if (v[i].flag < 0)
      a->target = x;
  }
  if ((a->cq != NULL) + (a->lq != NULL) + (a->target != NULL) + a->gpus != 1)
    return cmd_usage_error("explain", usage,
                           "a pod (NAMESPACE/NAME), --clusterqueue NAME, --localqueue "
                           "NAMESPACE/NAME or --gpus: one of them");
  if (a->gpus && a->server)
    return cmd_usage_error("explain", usage,
                           "--gpus reads a snapshot (a running tessera exports the same as its "
                           "tessera_gpu_stranded and tessera_gpu_largest_free metrics)");
  if (a->cq && (!*a->cq || strchr(a->cq, '/')))
    return cmd_usage_error("explain", usage, "--clusterqueue %s: a ClusterQueue's name", a->cq);
  if (a->lq) a->target = a->lq;
  if (a->target && (!strchr(a->target, '/') || a->target[0] == '/' || !strchr(a->target, '/')[1] ||
                    strchr(strchr(a->target, '/') + 1, '/')))
    return cmd_usage_error("explain", usage, "%s is NAMESPACE/NAME",
                           a->lq ? "--localqueue" : "the pod");
  if (!a->snapshot == !a->server)
    return cmd_usage_error("explain", usage,
                           "--snapshot PATH (a recorded cluster) or --server URL (a running "
                           "tessera), one of them");
  if (a->server && strncmp(a->server, "http://", 7) && strncmp(a->server, "https://", 8))
    return cmd_usage_error("explain", usage, "--server %s: an http:// or https:// URL", a->server);
  return CMD_PARSED;
}

/* Loads the snapshot into a new model as replay loads it. */
static model *load(const explain_args *a, cfg_tessera *t, dra_cel *cel, int64_t *now, ts_err *err) {
  cmd_load_counts counts = {0, 0};
  model *m = model_new();
  if (m &&
      cmd_load_offline(a->snapshot, m, a->config != NULL, t, cel, &counts, now, err) != TS_OK) {
    if (err->code) fprintf(stderr, "%s: %s\n", a->snapshot, err->text);
    model_free(m);
    return NULL;
  }
  return m;
}

static void print_doc(const explain_args *a, json_t *doc);

/* --server: GET path of a running tessera and print it; the exit status. */
static int from_server(const explain_args *a, const char *path) {
  char url[1200];
  size_t sl = strlen(a->server);
  ts_buf body;
  long code = 0;
  int status = 1;
  ts_err err;
  json_t *doc;
  ts_err_clear(&err);
  while (sl && a->server[sl - 1] == '/') sl--; /* "https://h:8443/" and "https://h:8443" */
  snprintf(url, sizeof url, "%.*s%s", (int)sl, a->server, path);
  ts_buf_init(&body, 16 << 20);
  if (kc_get_once(url, a->token_file, a->ca, a->insecure, 30, &body, &code, &err) != TS_OK) {
    fprintf(stderr, "tessera explain: %s: %s\n", a->server, err.text);
  } else if (code != 200) {
    fprintf(stderr, "tessera explain: %s answered %ld: %.*s", a->server, code,
            (int)(body.len > 600 ? 600 : body.len), body.data ? body.data : "");
    if (!body.len || body.data[body.len - 1] != '\n') fputc('\n', stderr);
  } else if (!(doc = json_loadb(body.data ? body.data : "", body.len, 0, NULL))) {
    fprintf(stderr, "tessera explain: %s: the answer is not JSON\n", a->server);
  } else {
    print_doc(a, doc);
    json_decref(doc);
    status = 0;
  }
  ts_buf_free(&body);
  return status;
}

/* A PendingWorkloadsSummary as text: one line per workload. */
static void summary_print(FILE *f, const explain_args *a, json_t *doc) {
  json_t *items = json_object_get(doc, "items"), *x;
  size_t i;
  fprintf(f, "%s %s: %zu pending workload%s shown (positions from 1: next)\n",
          a->cq ? "ClusterQueue" : "LocalQueue", a->cq ? a->cq : a->lq, json_array_size(items),
          json_array_size(items) == 1 ? "" : "s");
  if (json_array_size(items))
    fprintf(f, "  %-6s %-6s %-20s %-40s %8s  %s\n", "in CQ", "in LQ", "LocalQueue", "workload",
            "priority", "created");
  json_array_foreach(items, i, x) {
    json_t *meta = json_object_get(x, "metadata");
    char who[300];
    snprintf(who, sizeof who, "%s/%s", str(meta, "namespace"), str(meta, "name"));
    fprintf(f, "  %-6lld %-6lld %-20s %-40s %8lld  %s\n",
            json_integer_value(json_object_get(x, "positionInClusterQueue")) + 1,
            json_integer_value(json_object_get(x, "positionInLocalQueue")) + 1,
            str(x, "localQueueName"), who, json_integer_value(json_object_get(x, "priority")),
            str(meta, "creationTimestamp"));
  }
}

/* --gpus: the GPU room of the snapshot after a dry-run cycle, as JSON. */
static json_t *gpu_rooms_doc(const model *m, const sched_config *cfg, int64_t now, ts_err *err) {
  sched_result res;
  sched_gpu_room *rooms = NULL;
  size_t nshapes = 0, nrooms = 0;
  json_t *doc = NULL, *arr;
  if (sched_cycle((model *)m, cfg, NULL, now, &res, err) != TS_OK) return NULL;
  if (sched_gpu_rooms_after(m, cfg, now, &res, &rooms, &nrooms, &nshapes) == TS_OK &&
      (doc = json_pack("{s:I, s:[]}", "pendingGpuShapes", (json_int_t)nshapes, "gpuModels"))) {
    arr = json_object_get(doc, "gpuModels");
    for (size_t i = 0; i < nrooms; i++) {
      json_t *largest = json_pack("{s:I}", "node", (json_int_t)rooms[i].largest[0]);
      for (int l = 0; l < cfg->ntopology && l < SCHED_MAX_TOPOLOGY; l++)
        json_object_set_new(largest, cfg->topology[l], json_integer(rooms[i].largest[1 + l]));
      json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:I, s:o}", "model", rooms[i].model,
                                           "gpus", (json_int_t)rooms[i].gpus, "free",
                                           (json_int_t)rooms[i].free, "stranded",
                                           (json_int_t)rooms[i].stranded, "largestFree", largest));
    }
  } else if (!err->code) {
    ts_err_set(err, TS_ENOMEM, "out of memory");
  }
  ts_free(rooms);
  sched_result_free(&res);
  return doc;
}

/* The GPU room as text: a line per model. */
static void rooms_print(FILE *f, json_t *doc) {
  json_t *x;
  size_t i;
  fprintf(f, "GPUs per model on schedulable nodes (%lld shapes of waiting GPU pods weighed)\n",
          json_integer_value(json_object_get(doc, "pendingGpuShapes")));
  json_array_foreach(json_object_get(doc, "gpuModels"), i, x) {
    const char *key;
    json_t *v;
    fprintf(f, "  %s: %lld GPUs, %lld free, %lld stranded (no waiting pod can use them)\n",
            *str(x, "model") ? str(x, "model") : "(no nvidia.com/gpu.product)",
            json_integer_value(json_object_get(x, "gpus")),
            json_integer_value(json_object_get(x, "free")),
            json_integer_value(json_object_get(x, "stranded")));
    fputs("    most free in one", f);
    json_object_foreach(json_object_get(x, "largestFree"), key, v)
      fprintf(f, " %s: %lld;", key, json_integer_value(v));
    fputc('\n', f);
  }
}

static void print_doc(const explain_args *a, json_t *doc) {
  if (a->fmt != CMD_FMT_TEXT)
    cmd_write_doc(stdout, a->fmt, json_incref(doc));
  else if (a->gpus)
    rooms_print(stdout, doc);
  else if (a->cq || a->lq)
    summary_print(stdout, a, doc);
  else
    explain_print(stdout, doc);
}

int cmd_explain(int argc, char **argv) {
  explain_args a;
  cfg_tessera t;
  dra_cel *cel = NULL;
  model *m = NULL;
  sim_estimate_opts eo = {0};
  int code = 0;
  char ns[TS_NAME_MAX], *name;
  int64_t now = 0;
  int status = 1;
  ts_err err;
  json_t *doc = NULL;
  if ((status = parse_args(argc, argv, &a)) != CMD_PARSED) return cmd_flags_exit(status);
  eo.horizon_ns = a.horizon_ms * 1000000;
  status = 1;
  ts_err_clear(&err);
  ts_strlcpy(ns, a.target ? a.target : "", sizeof ns); /* a pod or a LocalQueue */
  if ((name = strchr(ns, '/')))
    *name++ = '\0';
  else
    name = (char *)a.cq;
  if (a.server) {
    char path[700];
    if (a.cq)
      snprintf(path, sizeof path,
               "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/%s/pendingworkloads", a.cq);
    else if (a.lq)
      snprintf(path, sizeof path,
               "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/%s/localqueues/%s/"
               "pendingworkloads",
               ns, name);
    else
      snprintf(path, sizeof path, "/explain/%s/%s", ns, name);
    return from_server(&a, path);
  }
  if (cfg_tessera_setup(a.config, &t, &err) != TS_OK) {
    fprintf(stderr, "%s\n", err.text);
    return 2;
  }
  if (!(cel = dra_cel_new()) || !(m = load(&a, &t, cel, &now, &err))) goto done;
  if (a.gpus) {
    if (!(doc = gpu_rooms_doc(m, &t.sched, now, &err)))
      fprintf(stderr, "tessera explain: %s\n", err.text);
    else
      print_doc(&a, doc), status = 0;
    goto done;
  }
  if (a.cq || a.lq) { /* Kueue's visibility API, offline */
    if (!(doc = pending_workloads(m, &t.sched, now, "visibility.kueue.x-k8s.io/v1beta2",
                                  a.lq ? ns : NULL, name, 0, 0, &code, &err))) {
      fprintf(stderr, "tessera explain: %s\n", err.text);
    } else if (code == 404) {
      fprintf(stderr, "tessera explain: %s\n", str(doc, "message"));
    } else {
      print_doc(&a, doc);
      status = 0;
    }
    goto done;
  }
  if (!(doc = explain_pod(m, &t.sched, now, ns, name, NULL, a.no_estimate ? NULL : &eo, &code,
                          &err))) {
    if (code == 404)
      fprintf(stderr, "tessera explain: no pod %s in %s\n", a.target, a.snapshot);
    else
      fprintf(stderr, "tessera explain: %s\n", err.text);
    goto done;
  }
  print_doc(&a, doc);
  status = 0;
done:
  json_decref(doc);
  model_free(m);
  dra_cel_free(cel);
  cfg_tessera_free(&t);
  return status;
}
