/* cmd/replay_queues.c - what `tessera replay` prints per Kueue ClusterQueue after the cycle:
 * gangs admitted and pending, usage against nominal quota per flavor and resource, what is
 * borrowed, and the fair share. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "queueing/queueing.h"

/* Gangs (or single pods) with a decision of kind for a pod of queue cq: the cycle's groups. */
static int count_gangs(const model *m, const sched_result *res, const char *cq,
                       sched_decision_kind kind) {
  int n = 0;
  for (size_t k = 0; k < res->ngroups; k++) {
    const sched_group *g = &res->groups[k];
    for (size_t i = g->first; i < g->first + g->n; i++)
      if (res->decisions[i].kind == kind && sched_pod_queue(m, res->decisions[i].pod) == cq) {
        n++;
        break;
      }
  }
  return n;
}

/* Kueue's weighted share is in thousandths of the cohort's lendable quota. */
static const char *share_text(double share) {
  static char buf[32];
  if (isinf(share)) return "max (weight 0)";
  snprintf(buf, sizeof buf, "%.0f", share);
  return buf;
}

static void print_cq(FILE *out, json_t *arr, const model *m, q_tree *t,
                     const model_cluster_queue *cq, const sched_result *res) {
  const char *name = ts_intern_cstr(cq->obj.name);
  double share = q_tree_share(t, name);
  int admitted = count_gangs(m, res, name, SCHED_BIND),
      pending = count_gangs(m, res, name, SCHED_PENDING);
  json_t *usage = arr ? json_array() : NULL;
  if (!arr)
    fprintf(out, "  %-24s admitted %d, pending %d, fair share %s\n", cq->obj.name, admitted,
            pending, share_text(share));
  for (uint32_t g = 0; g < cq->ngroups; g++)
    for (uint32_t f = 0; f < cq->groups[g].nflavors; f++)
      for (uint32_t r = 0; r < cq->groups[g].flavors[f].nresources; r++) {
        const model_quota *q = &cq->groups[g].flavors[f].resources[r];
        const model_resources *rt = model_resources_of(m);
        int id = model_resource_find(rt, q->resource);
        char u[TS_QUANTITY_STR_MAX], nom[TS_QUANTITY_STR_MAX], b[TS_QUANTITY_STR_MAX];
        q_usage x;
        if (q_tree_usage(t, name, cq->groups[g].flavors[f].flavor, id, &x) != TS_OK) continue;
        q_format(rt, id, x.usage, u);
        q_format(rt, id, x.nominal, nom);
        q_format(rt, id, x.borrowed, b);
        if (arr)
          json_array_append_new(usage,
                                json_pack("{s:s, s:s, s:s, s:s, s:s}", "flavor",
                                          cq->groups[g].flavors[f].flavor, "resource", q->resource,
                                          "usage", u, "nominal", nom, "borrowed", b));
        else
          fprintf(out, "    %-20s %-18s %6s used of %6s nominal%s%s\n",
                  cq->groups[g].flavors[f].flavor, q->resource, u, nom,
                  x.borrowed ? ", borrowed " : "", x.borrowed ? b : "");
      }
  if (arr) {
    json_t *o =
        json_pack("{s:s, s:i, s:i, s:f, s:o}", "clusterQueue", cq->obj.name, "admitted", admitted,
                  "pending", pending, "share", isinf(share) ? -1.0 : share, "usage", usage);
    if (o && cq->obj.kind != MODEL_CLUSTER_QUEUE) /* a Volcano or KAI Queue */
      json_object_set_new(
          o, "kind", json_string(cq->obj.kind == MODEL_KAI_QUEUE ? "KAI Queue" : "Volcano Queue"));
    json_array_append_new(arr, o);
  }
}

/* The tree is built again from the model after replay applied the decisions, not taken from
 * the cycle's report (sched_result.queues): there, evicted workloads are still charged until
 * their pods are seen gone, as in a cluster; here the replay has removed them. */
void replay_queues(FILE *out, json_t *summary, const model *m, const sched_config *cfg,
                   const sched_result *res) {
  static const model_kind kinds[] = {MODEL_CLUSTER_QUEUE, MODEL_VOLCANO_QUEUE, MODEL_KAI_QUEUE};
  static const char *const heads[] = {"ClusterQueues", "Volcano Queues", "KAI Queues"};
  q_tree *t = NULL;
  ts_arena a;
  ts_err err;
  json_t *arr = summary ? json_array() : NULL;
  size_t any = 0;
  ts_arena_init(&a, 0);
  for (size_t k = 0; k < 3; k++) any += model_count(m, kinds[k]);
  if (!any || sched_queue_tree(m, cfg, &a, &t, &err) != TS_OK) {
    ts_arena_free(&a);
    json_decref(arr);
    return;
  }
  for (size_t k = 0; k < 3; k++) {
    model_obj **cqs = NULL;
    size_t n = 0, shown = 0;
    if (model_list(m, kinds[k], &cqs, &n) != TS_OK) break;
    for (size_t i = 0; i < n; i++) {
      if (!q_tree_has_cq(t, cqs[i]->name, kinds[k])) continue; /* a parent queue, or left out */
      if (!summary && !shown++) fprintf(out, "%s:\n", heads[k]);
      print_cq(out, arr, m, t, (const model_cluster_queue *)cqs[i], res);
    }
    ts_free(cqs);
  }
  if (summary) json_object_set_new(summary, "clusterQueues", arr);
  q_tree_free(t);
  ts_arena_free(&a);
}
