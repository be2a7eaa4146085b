/* model/decode_kueue.c - Kueue's ClusterQueue, LocalQueue, ResourceFlavor, Cohort and
 * WorkloadPriorityClass (kueue.x-k8s.io v1beta1 and v1beta2), and the scheduler-plugins
 * PodGroup (scheduling.x-k8s.io v1alpha1). */
#include "model/model_int.h"

#include <stdio.h>
#include <string.h>

#define KUEUE_MAX_GROUPS    16 /* resourceGroups per queue (Kueue's CRD limit) */
#define KUEUE_MAX_FLAVORS   64 /* flavors per group */
#define KUEUE_MAX_RESOURCES 64 /* resources per flavor */

static ts_rc quota(mdec *d, json_t *e, model_quota *q) {
  ts_rc rc;
  bool has_nominal = false;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "name", &q->resource, true)) ||
      (rc = model__quantity(d, e, "nominalQuota", &q->nominal, &has_nominal)) ||
      (rc = model__quantity(d, e, "borrowingLimit", &q->borrowing, &q->has_borrowing)) ||
      (rc = model__quantity(d, e, "lendingLimit", &q->lending, &q->has_lending)))
    return rc;
  if (!has_nominal) return model__fail_at(d, "nominalQuota", "is required");
  if (ts_quantity_sign(&q->nominal) < 0)
    return model__fail_at(d, "nominalQuota", "must be greater than or equal to 0");
  if (q->has_borrowing && ts_quantity_sign(&q->borrowing) < 0)
    return model__fail_at(d, "borrowingLimit", "must be greater than or equal to 0");
  if (q->has_lending && ts_quantity_cmp(&q->lending, &q->nominal) > 0)
    return model__fail_at(d, "lendingLimit", "must be less than or equal to the nominalQuota");
  return TS_OK;
}

/* flavors[i]: {name, resources: [quota...]}, whose resource names must be the group's
 * coveredResources in the same order (as Kueue validates). */
static ts_rc flavor_quotas(mdec *d, json_t *e, const model_resource_group *g,
                           model_flavor_quotas *f) {
  ts_rc rc;
  json_t *arr, *r;
  size_t i, mark;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "name", &f->flavor, true)) != TS_OK) return rc;
  arr = model__array(d, e, "resources", &rc);
  if (rc != TS_OK) return rc;
  if (!arr || !json_array_size(arr))
    return model__fail_at(d, "resources", "must have at least 1 item");
  if (json_array_size(arr) > KUEUE_MAX_RESOURCES)
    return model__fail_at(d, "resources", "must have at most %d items", KUEUE_MAX_RESOURCES);
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof *f->resources,
                               (void **)&f->resources)))
    return rc;
  mark = model__push(d, "resources");
  json_array_foreach(arr, i, r) {
    size_t m2 = model__push_index(d, i);
    model_quota *q = &f->resources[f->nresources++];
    if ((rc = quota(d, r, q)) != TS_OK) return rc;
    if (i >= g->ncovered || g->covered[i] != q->resource)
      return model__fail_at(d, "name", "must match the coveredResources of the group, in order");
    model__pop(d, m2);
  }
  model__pop(d, mark);
  if (f->nresources != g->ncovered)
    return model__fail_at(d, "resources",
                          "must have the same number of resources as coveredResources");
  return TS_OK;
}

static ts_rc resource_group(mdec *d, json_t *e, model_resource_group *g) {
  ts_rc rc;
  json_t *arr, *f;
  size_t i, mark;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__strings(d, e, "coveredResources", &g->covered, &g->ncovered)) != TS_OK)
    return rc;
  for (uint32_t r = 0; r < g->ncovered; r++) /* an administrator's names get ids */
    if (model_resource_id(d->res, g->covered[r]) < 0) {
      model__push(d, "coveredResources");
      model__push_index(d, r);
      return model__fail(d, TS_ELIMIT, "%s", model__no_id(d));
    }
  arr = model__array(d, e, "flavors", &rc);
  if (rc != TS_OK) return rc;
  if (!arr || !json_array_size(arr))
    return model__fail_at(d, "flavors", "must have at least 1 item");
  if (json_array_size(arr) > KUEUE_MAX_FLAVORS)
    return model__fail_at(d, "flavors", "must have at most %d items", KUEUE_MAX_FLAVORS);
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof *g->flavors, (void **)&g->flavors)))
    return rc;
  mark = model__push(d, "flavors");
  json_array_foreach(arr, i, f) {
    size_t m2 = model__push_index(d, i);
    if ((rc = flavor_quotas(d, f, g, &g->flavors[g->nflavors++])) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc resource_groups(mdec *d, json_t *spec, model_resource_group **out, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, spec, "resourceGroups", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if (json_array_size(arr) > KUEUE_MAX_GROUPS)
    return model__fail_at(d, "resourceGroups", "must have at most %d items", KUEUE_MAX_GROUPS);
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof **out, (void **)out))) return rc;
  mark = model__push(d, "resourceGroups");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    if ((rc = resource_group(d, e, &(*out)[(*n)++])) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  /* A flavor may appear in one group only, and a resource be covered by one group only. */
  for (uint32_t a = 0; a < *n; a++)
    for (uint32_t b = a + 1; b < *n; b++) {
      for (uint32_t x = 0; x < (*out)[a].ncovered; x++)
        for (uint32_t y = 0; y < (*out)[b].ncovered; y++)
          if ((*out)[a].covered[x] == (*out)[b].covered[y])
            return model__fail_at(d, "resourceGroups",
                                  "resource \"%s\" is covered by more than one group",
                                  (*out)[a].covered[x]);
    }
  return TS_OK;
}

static void resource_groups_free(model_resource_group *g, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    ts_free(g[i].covered);
    for (uint32_t j = 0; j < g[i].nflavors; j++) ts_free(g[i].flavors[j].resources);
    ts_free(g[i].flavors);
  }
  ts_free(g);
}

static ts_rc fair_sharing(mdec *d, json_t *spec, bool *has, ts_quantity *weight) {
  ts_rc rc;
  json_t *fs = model__object(d, spec, "fairSharing", &rc);
  size_t mark;
  *weight = ts_quantity_from_int(1, TS_QFMT_DECIMAL_SI);
  if (rc != TS_OK || !fs) return rc;
  mark = model__push(d, "fairSharing");
  if ((rc = model__quantity(d, fs, "weight", weight, has)) != TS_OK) return rc;
  if (ts_quantity_sign(weight) < 0)
    return model__fail_at(d, "weight", "must be greater than or equal to 0");
  model__pop(d, mark);
  return TS_OK;
}

static const char *const stop_names[] = {"None", "Hold", "HoldAndDrain"};

static ts_rc preemption(mdec *d, json_t *spec, model_cluster_queue *q) {
  static const char *const within[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority", NULL};
  static const char *const reclaim[] = {"Never", "LowerPriority", NULL, "Any"};
  static const char *const borrow[] = {"Never", "LowerPriority", NULL, NULL};
  ts_rc rc;
  json_t *p = model__object(d, spec, "preemption", &rc), *bwc;
  int w = 0, r = 0, b = 0;
  bool has = false;
  size_t mark, m2;
  if (rc != TS_OK || !p) return rc;
  mark = model__push(d, "preemption");
  if ((rc = model__enum(d, p, "withinClusterQueue", within, 4, &w)) ||
      (rc = model__enum(d, p, "reclaimWithinCohort", reclaim, 4, &r)))
    return rc;
  bwc = model__object(d, p, "borrowWithinCohort", &rc);
  if (rc != TS_OK) return rc;
  if (bwc) {
    m2 = model__push(d, "borrowWithinCohort");
    if ((rc = model__enum(d, bwc, "policy", borrow, 4, &b)) ||
        (rc = model__int32(d, bwc, "maxPriorityThreshold", &q->borrow_max_priority, &has)))
      return rc;
    q->has_borrow_max_priority = has;
    model__pop(d, m2);
  }
  q->within_cq = (model_preempt_policy)w;
  q->reclaim_cohort = (model_preempt_policy)r;
  q->borrow_cohort = (model_preempt_policy)b;
  if (q->borrow_cohort != MODEL_PREEMPT_NEVER && q->reclaim_cohort == MODEL_PREEMPT_NEVER)
    return model__fail_at(d, "borrowWithinCohort",
                          "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc fungibility(mdec *d, json_t *spec, model_cluster_queue *q) {
  static const char *const can_borrow[] = {"MayStopSearch", "TryNextFlavor", "Borrow"};
  static const char *const can_preempt[] = {"MayStopSearch", "TryNextFlavor", "Preempt"};
  ts_rc rc;
  json_t *f = model__object(d, spec, "flavorFungibility", &rc);
  int b = 0, p = 1;
  size_t mark;
  q->when_can_borrow = MODEL_FUNGIBILITY_MAY_STOP_SEARCH;
  q->when_can_preempt = MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR;
  if (rc != TS_OK || !f) return rc;
  mark = model__push(d, "flavorFungibility");
  if ((rc = model__enum(d, f, "whenCanBorrow", can_borrow, 3, &b)) ||
      (rc = model__enum(d, f, "whenCanPreempt", can_preempt, 3, &p)))
    return rc;
  q->when_can_borrow =
      b == 1 ? MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR : MODEL_FUNGIBILITY_MAY_STOP_SEARCH;
  q->when_can_preempt =
      p == 1 ? MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR : MODEL_FUNGIBILITY_MAY_STOP_SEARCH;
  model__pop(d, mark);
  return TS_OK;
}

/* Kueue's webhook: limits other than nominal quota need a cohort. */
static ts_rc check_limits_need_cohort(mdec *d, const model_cluster_queue *q) {
  for (uint32_t g = 0; g < q->ngroups; g++)
    for (uint32_t f = 0; f < q->groups[g].nflavors; f++)
      for (uint32_t r = 0; r < q->groups[g].flavors[f].nresources; r++) {
        const model_quota *x = &q->groups[g].flavors[f].resources[r];
        const char *what = x->has_borrowing ? "borrowingLimit"
                           : x->has_lending ? "lendingLimit"
                                            : NULL;
        char path[160];
        if (!what) continue;
        snprintf(path, sizeof path, "resourceGroups[%u].flavors[%u].resources[%u].%s", g, f, r,
                 what);
        return model__fail_at(d, path, "must be nil when cohort is empty");
      }
  return TS_OK;
}

ts_rc model__decode_cluster_queue(mdec *d, json_t *root, model_obj *o) {
  static const char *const strategies[] = {"BestEffortFIFO", "StrictFIFO"};
  model_cluster_queue *q = (model_cluster_queue *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc);
  int strategy = 0, stop = 0;
  size_t mark;
  if (rc != TS_OK) return rc;
  q->fair_weight = ts_quantity_from_int(1, TS_QFMT_DECIMAL_SI);
  q->when_can_preempt = MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR;
  if (!spec) return TS_OK;
  mark = model__push(d, "spec");
  if ((rc = model__intern(d, spec, !strcmp(d->version, "v1beta1") ? "cohort" : "cohortName",
                          &q->cohort, false)) ||
      (rc = model__label_selector(d, spec, "namespaceSelector", &q->ns_selector)) ||
      (rc = model__enum(d, spec, "queueingStrategy", strategies, 2, &strategy)) ||
      (rc = resource_groups(d, spec, &q->groups, &q->ngroups)) || (rc = preemption(d, spec, q)) ||
      (rc = fungibility(d, spec, q)) ||
      (rc = fair_sharing(d, spec, &q->has_fair_weight, &q->fair_weight)) ||
      (rc = model__enum(d, spec, "stopPolicy", stop_names, 3, &stop)))
    return rc;
  if (q->cohort && !*q->cohort) q->cohort = NULL;
  if (!q->cohort && d->opts->admission && (rc = check_limits_need_cohort(d, q)) != TS_OK) return rc;
  q->queueing = (model_queueing)strategy;
  q->stop_policy = (model_stop_policy)stop;
  model__pop(d, mark);
  return TS_OK;
}

void model__free_cluster_queue(model_obj *o) {
  model_cluster_queue *q = (model_cluster_queue *)o;
  model__label_selector_free(&q->ns_selector);
  resource_groups_free(q->groups, q->ngroups);
}

ts_rc model__decode_local_queue(mdec *d, json_t *root, model_obj *o) {
  model_local_queue *q = (model_local_queue *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc);
  int stop = 0;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!spec) return model__fail(d, TS_EINVAL, "spec.clusterQueue: is required");
  mark = model__push(d, "spec");
  if ((rc = model__intern(d, spec, "clusterQueue", &q->cluster_queue, true)) ||
      (rc = model__enum(d, spec, "stopPolicy", stop_names, 3, &stop)))
    return rc;
  q->stop_policy = (model_stop_policy)stop;
  model__pop(d, mark);
  return TS_OK;
}

void model__free_local_queue(model_obj *o) {
  (void)o;
}

ts_rc model__decode_resource_flavor(mdec *d, json_t *root, model_obj *o) {
  model_resource_flavor *f = (model_resource_flavor *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc);
  size_t mark;
  if (rc != TS_OK || !spec) return rc;
  mark = model__push(d, "spec");
  if ((rc = model__labels(d, spec, "nodeLabels", false, &f->node_labels)) ||
      (rc = model__taints(d, spec, "nodeTaints", &f->node_taints, &f->nnode_taints)) ||
      (rc = model__tolerations(d, spec, "tolerations", &f->tolerations, &f->ntolerations)) ||
      (rc = model__intern(d, spec, "topologyName", &f->topology_name, false)))
    return rc;
  model__pop(d, mark);
  return TS_OK;
}

void model__free_resource_flavor(model_obj *o) {
  model_resource_flavor *f = (model_resource_flavor *)o;
  model__labels_free(&f->node_labels, false);
  ts_free(f->node_taints);
  ts_free(f->tolerations);
}

ts_rc model__decode_cohort(mdec *d, json_t *root, model_obj *o) {
  model_cohort *c = (model_cohort *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc);
  size_t mark;
  if (rc != TS_OK) return rc;
  c->fair_weight = ts_quantity_from_int(1, TS_QFMT_DECIMAL_SI);
  if (!spec) return TS_OK;
  mark = model__push(d, "spec");
  if ((rc = model__intern(d, spec, !strcmp(d->version, "v1alpha1") ? "parent" : "parentName",
                          &c->parent, false)) ||
      (rc = resource_groups(d, spec, &c->groups, &c->ngroups)) ||
      (rc = fair_sharing(d, spec, &c->has_fair_weight, &c->fair_weight)))
    return rc;
  if (c->parent && !*c->parent) c->parent = NULL;
  if (c->parent && !strcmp(c->parent, o->name))
    return model__fail_at(d, "parentName", "a cohort cannot be its own parent");
  model__pop(d, mark);
  return TS_OK;
}

void model__free_cohort(model_obj *o) {
  model_cohort *c = (model_cohort *)o;
  resource_groups_free(c->groups, c->ngroups);
}

ts_rc model__decode_workload_priority_class(mdec *d, json_t *root, model_obj *o) {
  model_workload_priority_class *w = (model_workload_priority_class *)o;
  bool has = false;
  ts_rc rc = model__int32(d, root, "value", &w->value, &has);
  if (rc == TS_OK && !has) rc = model__fail_at(d, "value", "is required");
  return rc;
}

void model__free_workload_priority_class(model_obj *o) {
  (void)o;
}

ts_rc model__decode_pod_group(mdec *d, json_t *root, model_obj *o) {
  model_pod_group *g = (model_pod_group *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc);
  bool has = false;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!spec) return model__fail(d, TS_EINVAL, "spec.minMember: is required");
  mark = model__push(d, "spec");
  if ((rc = model__int32(d, spec, "minMember", &g->min_member, &has)) ||
      (rc = model__resource_map(d, spec, "minResources", &g->min_resources, true)) ||
      (rc = model__resolve_local(d, &g->min_resources, NULL, NULL)) ||
      (rc = model__int32(d, spec, "scheduleTimeoutSeconds", &g->schedule_timeout_seconds, NULL)))
    return rc;
  if (o->kind != MODEL_POD_GROUP && /* Volcano's and KAI's */
      ((rc = model__intern(d, spec, "queue", &g->queue, false)) ||
       (rc = model__intern(d, spec, "priorityClassName", &g->priority_class, false))))
    return rc;
  if (g->queue && !*g->queue) g->queue = NULL;
  if (g->priority_class && !*g->priority_class) g->priority_class = NULL;
  if (!has || g->min_member < 1) return model__fail_at(d, "minMember", "must be at least 1");
  model__pop(d, mark);
  return TS_OK;
}

void model__free_pod_group(model_obj *o) {
  ts_free(((model_pod_group *)o)->min_resources.v);
}
