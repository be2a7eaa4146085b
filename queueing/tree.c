/* queueing/tree.c - the quota tree: ClusterQueues and Cohorts (explicit and implicit) from a
 * model, resource groups and flavors in order, quotas per flavor-resource, cohort cycles,
 * inactive queues, LocalQueues, and the queries replay needs.
 *
 * Everything built here lives in the tree's arena; only admitted records (adm.c) and problem
 * messages are allocated one by one. */
#include "queueing/q_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64 * 1024)

void q_config_default(q_config *c) {
  memset(c, 0, sizeof *c);
  c->fs_strategies[0] = Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
  c->fs_strategies[1] = Q_FS_LESS_THAN_INITIAL_SHARE;
  c->nfs_strategies = 2;
  c->partial_admission = true;
  c->priority_sorting_in_cohort = true;
  c->preempt_within_nominal = true;
  c->prioritize_non_borrowing = true;
}

void q_config_free(q_config *c) {
  q_devmap_free(&c->devmap);
}

const char *q_mode_name(q_mode m) {
  static const char *const names[] = {"NoFit", "Preempt", "Fit"};
  return (unsigned)m < 3 ? names[m] : "?";
}

/* ---- problems -------------------------------------------------------------------------- */

/* Records a problem message ("Kind name: field: what"). */
ts_rc q__problem(q_tree *t, const char *fmt, ...) {
  char buf[Q__MSG_MAX];
  char *s;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (!(s = ts_strdup(buf))) return TS_ENOMEM;
  if (ts_vec_push(&t->problems, s) != TS_OK) {
    ts_free(s);
    return TS_ENOMEM;
  }
  return TS_OK;
}

/* Makes cq inactive for reason (a Kueue condition reason), the last problem recorded saying
 * why (its text after "Kind name: "). */
static void deactivate(q_tree *t, q__cq *cq, const char *reason) {
  const char *last = t->problems.n ? t->problems.v[t->problems.n - 1] : NULL;
  size_t skip = strlen(q__kind_label(cq->obj->obj.kind)) + 1 + strlen(cq->node.name) + 2;
  cq->node.active = false;
  if (!cq->inactive) cq->inactive = reason;
  if (!cq->problem && last && strlen(last) > skip) cq->problem = last + skip;
}

/* The injected fault of the tree stage, when it names this object. */
static bool faulty(const q_tree *t, const char *name) {
  return t->fault && t->fault->stage == Q_FAULT_TREE && t->fault->object &&
         !strcmp(t->fault->object, name);
}

const model_obj *q_problem_object(const model *m, const char *problem) {
  static const struct {
    const char *label;
    model_kind kind;
  } two[] = {{"Volcano Queue ", MODEL_VOLCANO_QUEUE}, {"KAI Queue ", MODEL_KAI_QUEUE}};
  char kind[64], key[600];
  const char *slash;
  model_kind k = MODEL_KIND_COUNT;
  for (size_t i = 0; i < sizeof two / sizeof *two; i++) /* labels of two words */
    if (!strncmp(problem, two[i].label, strlen(two[i].label))) {
      k = two[i].kind;
      if (sscanf(problem + strlen(two[i].label), "%599[^:]", key) != 1) return NULL;
    }
  if (k == MODEL_KIND_COUNT) {
    if (sscanf(problem, "%63s %599[^:]", kind, key) != 2) return NULL;
    if ((k = model_kind_of(kind)) == MODEL_KIND_COUNT) return NULL;
  }
  if ((slash = strchr(key, '/'))) {
    char ns[300];
    snprintf(ns, sizeof ns, "%.*s", (int)(slash - key), key);
    return model_get(m, k, ns, slash + 1);
  }
  return model_get(m, k, NULL, key);
}

size_t q_tree_problems(const q_tree *t, const char *const **out) {
  *out = (const char *const *)t->problems.v;
  return t->problems.n;
}

ts_rc q_tree_check(const q_tree *t, ts_err *err) {
  if (!t->problems.n) return TS_OK;
  return ts_err_set(err, TS_EINVAL, "%s", t->problems.v[0]);
}

/* ---- small helpers --------------------------------------------------------------------- */

void *q__zalloc(q_tree *t, size_t n) {
  void *p = ts_arena_alloc(&t->arena, n ? n : 1);
  if (p) memset(p, 0, n ? n : 1);
  return p;
}

static ts_rc map_put(ts_map *m, const char *key, void *v) {
  return ts_map_put(m, key, strlen(key), v, NULL);
}

static void *map_get(const ts_map *m, const char *key) {
  return key ? ts_map_get(m, key, strlen(key)) : NULL;
}

q__cq *q__cq_get(const q_tree *t, const char *name) {
  return map_get(&t->cq_by_name, name);
}

int q__flavor_index(const q_tree *t, const char *name) {
  void *v = map_get(&t->flavor_by_name, name);
  return v ? (int)((uintptr_t)v - 1) : -1;
}

q__node *q__root(q__node *n) {
  while (n->parent) n = n->parent;
  return n;
}

/* ---- resources and flavors ------------------------------------------------------------- */

static ts_rc add_resource(q_tree *t, const char *name) {
  int id = model_resource_find(model_resources_of(t->m), name);
  if (id < 0 || (uint32_t)id >= t->nids) /* decoding the queue gave it an id */
    return q__problem(t, "resource \"%s\": has no resource id", name);
  if (t->res_slot[id] >= 0) return TS_OK;
  t->res_slot[id] = (int32_t)t->nres;
  t->res_id[t->nres++] = (uint16_t)id;
  return TS_OK;
}

ts_rc q__add_flavor(q_tree *t, const char *name, const model_resource_flavor *rf) {
  int i = q__flavor_index(t, name);
  if (i >= 0) {
    if (rf) t->fobj[i] = rf;
    return TS_OK;
  }
  if (t->nflavors % 16 == 0) {
    size_t cap = t->nflavors + 16;
    const char **n = ts_arena_alloc(&t->arena, cap * sizeof *n);
    const model_resource_flavor **o = ts_arena_alloc(&t->arena, cap * sizeof *o);
    if (!n || !o) return TS_ENOMEM;
    if (t->nflavors) {
      memcpy(n, t->fname, t->nflavors * sizeof *n);
      memcpy(o, t->fobj, t->nflavors * sizeof *o);
    }
    t->fname = n, t->fobj = o;
  }
  t->fname[t->nflavors] = name;
  t->fobj[t->nflavors] = rf;
  t->nflavors++;
  return map_put(&t->flavor_by_name, name, (void *)(uintptr_t)t->nflavors);
}

/* Registers the resources and flavors named by resource groups. */
static ts_rc scan_groups(q_tree *t, const model_resource_group *g, uint32_t n) {
  ts_rc rc;
  for (uint32_t i = 0; i < n; i++) {
    for (uint32_t r = 0; r < g[i].ncovered; r++)
      if ((rc = add_resource(t, g[i].covered[r])) != TS_OK) return rc;
    for (uint32_t f = 0; f < g[i].nflavors; f++)
      if ((rc = q__add_flavor(t, g[i].flavors[f].flavor, NULL)) != TS_OK) return rc;
  }
  return TS_OK;
}

/* ---- nodes ----------------------------------------------------------------------------- */

static ts_rc node_init(q_tree *t, q__node *n, const char *name, bool is_cq) {
  int64_t *mem = ts_arena_alloc(&t->arena, (t->nfr ? t->nfr : 1) * 5 * sizeof *mem);
  if (!mem) return TS_ENOMEM;
  n->name = ts_intern_cstr(name);
  if (!n->name) return TS_ENOMEM;
  n->is_cq = is_cq;
  n->active = true;
  n->weight = 1.0;
  n->nominal = mem, n->blimit = mem + t->nfr, n->llimit = mem + 2 * t->nfr;
  n->subtree = mem + 3 * t->nfr, n->usage = mem + 4 * t->nfr;
  for (uint32_t i = 0; i < t->nfr; i++) {
    n->nominal[i] = n->subtree[i] = n->usage[i] = 0;
    n->blimit[i] = n->llimit[i] = Q__NONE;
  }
  return TS_OK;
}

static q__node *cohort_get(const q_tree *t, const char *name) {
  return map_get(&t->cohort_by_name, name);
}

/* Returns the cohort named name, creating an implicit one when needed. */
static ts_rc cohort_ensure(q_tree *t, const char *name, const model_cohort *obj, q__node **out) {
  q__node *n = cohort_get(t, name);
  ts_rc rc;
  if (!n) {
    if (!(n = q__zalloc(t, sizeof *n))) return TS_ENOMEM;
    if ((rc = node_init(t, n, name, false)) != TS_OK) return rc;
    if ((rc = map_put(&t->cohort_by_name, n->name, n)) != TS_OK) return rc;
  }
  if (obj) n->obj = obj;
  *out = n;
  return TS_OK;
}

/* Converts one quota to node arrays. A value the tree cannot count is recorded as a problem
 * naming the field, and TS_ERANGE returned: the caller makes the node inactive. */
static ts_rc set_quota(q_tree *t, q__node *n, const char *what, uint32_t fr, int res,
                       const model_quota *q) {
  const model_resources *rt = model_resources_of(t->m);
  const char *field = NULL;
  int64_t v;
  if (q_amount(rt, res, &q->nominal, &v) != TS_OK)
    field = "nominalQuota";
  else if (q->has_borrowing && q_amount(rt, res, &q->borrowing, &n->blimit[fr]) != TS_OK)
    field = "borrowingLimit";
  else if (q->has_lending && q_amount(rt, res, &q->lending, &n->llimit[fr]) != TS_OK)
    field = "lendingLimit";
  if (!field) {
    n->nominal[fr] = v;
    return TS_OK;
  }
  if (q__problem(t, "%s: %s of %s: out of range", what, field, model_resource_name(rt, res)))
    return TS_ENOMEM;
  return TS_ERANGE;
}

static ts_rc set_quotas(q_tree *t, q__node *n, const char *what, const model_resource_group *g,
                        uint32_t ng) {
  ts_rc rc;
  for (uint32_t i = 0; i < ng; i++)
    for (uint32_t f = 0; f < g[i].nflavors; f++) {
      const model_flavor_quotas *fq = &g[i].flavors[f];
      int fi = q__flavor_index(t, fq->flavor);
      for (uint32_t r = 0; r < fq->nresources; r++) {
        int res = model_resource_find(model_resources_of(t->m), fq->resources[r].resource);
        if (fi < 0 || q__slot(t, res) < 0) continue;
        if ((rc = set_quota(t, n, what, q__fr(t, (uint32_t)fi, res), res, &fq->resources[r])))
          return rc;
      }
    }
  return TS_OK;
}

/* ---- ClusterQueues --------------------------------------------------------------------- */

static const char *cohort_field(const model_cluster_queue *q) {
  if (q->obj.kind == MODEL_VOLCANO_QUEUE) return "spec.parent";
  if (q->obj.kind == MODEL_KAI_QUEUE) return "spec.parentQueue";
  return strcmp(q->obj.api_version, "kueue.x-k8s.io/v1beta1") ? "spec.cohortName" : "spec.cohort";
}

/* Where an object of kind k keeps its quotas, for messages. */
static const char *quota_field(model_kind k) {
  if (k == MODEL_VOLCANO_QUEUE) return "spec.deserved";
  if (k == MODEL_KAI_QUEUE) return "spec.resources";
  return "spec.resourceGroups";
}

static ts_rc cq_groups(q_tree *t, q__cq *cq) {
  const model_cluster_queue *o = cq->obj;
  cq->nids = t->nids;
  if (!(cq->group_of = q__zalloc(t, t->nids))) return TS_ENOMEM;
  memset(cq->group_of, -1, t->nids);
  cq->ngroups = o->ngroups < Q__MAX_GROUPS ? o->ngroups : Q__MAX_GROUPS;
  if (!(cq->groups = q__zalloc(t, cq->ngroups * sizeof *cq->groups))) return TS_ENOMEM;
  for (uint32_t i = 0; i < cq->ngroups; i++) {
    const model_resource_group *g = &o->groups[i];
    q__group *q = &cq->groups[i];
    q->res = q__zalloc(t, g->ncovered * sizeof *q->res);
    q->flavors = q__zalloc(t, g->nflavors * sizeof *q->flavors);
    if (!q->res || !q->flavors) return TS_ENOMEM;
    for (uint32_t r = 0; r < g->ncovered; r++) {
      int id = model_resource_find(model_resources_of(t->m), g->covered[r]);
      if (id < 0 || (uint32_t)id >= t->nids) continue;
      q->res[q->nres++] = (uint16_t)id;
      cq->group_of[id] = (int8_t)i;
    }
    for (uint32_t f = 0; f < g->nflavors; f++)
      q->flavors[q->nflavors++] = (uint16_t)q__flavor_index(t, g->flavors[f].flavor);
  }
  return TS_OK;
}

/* A queue naming a flavor that does not exist is inactive (Kueue: FlavorNotFound). */
static ts_rc cq_check_flavors(q_tree *t, q__cq *cq) {
  for (uint32_t g = 0; g < cq->ngroups; g++)
    for (uint32_t f = 0; f < cq->groups[g].nflavors; f++) {
      uint16_t fi = cq->groups[g].flavors[f];
      ts_rc rc;
      if (t->fobj[fi]) continue;
      rc = q__problem(t,
                      "ClusterQueue %s: spec.resourceGroups[%u].flavors[%u].name: ResourceFlavor "
                      "\"%s\" not found",
                      cq->node.name, g, f, t->fname[fi]);
      if (rc == TS_OK) deactivate(t, cq, "FlavorNotFound");
      return rc;
    }
  return TS_OK;
}

static ts_rc cq_add(q_tree *t, const model_cluster_queue *o) {
  static const char *const stop[] = {"None", "Hold", "HoldAndDrain"};
  q__cq *cq = q__zalloc(t, sizeof *cq);
  char what[300];
  ts_rc rc;
  if (!cq) return TS_ENOMEM;
  cq->obj = o;
  if ((rc = node_init(t, &cq->node, o->obj.name, true)) || (rc = cq_groups(t, cq))) return rc;
  cq->node.weight = ts_quantity_approx(&o->fair_weight);
  cq->node.index = t->ncqs;
  t->cqs[t->ncqs++] = cq;
  if ((rc = map_put(&t->cq_by_name, cq->node.name, cq)) != TS_OK) return rc;
  if (o->cohort && (rc = cohort_ensure(t, o->cohort, NULL, &cq->node.parent))) return rc;
  snprintf(what, sizeof what, "%s %s: %s", q__kind_label(o->obj.kind), o->obj.name,
           quota_field(o->obj.kind));
  rc = faulty(t, o->obj.name) ? TS_EFAULT : set_quotas(t, &cq->node, what, o->groups, o->ngroups);
  if (rc == TS_EFAULT && q__problem(t, "%s: %s", what, ts_strerror(rc))) return TS_ENOMEM;
  if (rc == TS_ENOMEM) return rc;
  if (rc != TS_OK) { /* the queue is there, inactive, so that its workloads say why */
    deactivate(t, cq, "InvalidQuota");
    return TS_OK;
  }
  if ((rc = cq_check_flavors(t, cq)) != TS_OK) return rc;
  if (o->stop_policy != MODEL_STOP_NONE) { /* the administrator's choice: said first, as
                                              Kueue does, with any other problem after it */
    char why[1024];
    snprintf(why, sizeof why, "spec.stopPolicy: %s: the queue is stopped%s%s", stop[o->stop_policy],
             cq->problem ? "; " : "", cq->problem ? cq->problem : "");
    cq->node.active = false;
    cq->inactive = "Stopped";
    if (!(cq->problem = ts_arena_strndup(&t->arena, why, strlen(why)))) return TS_ENOMEM;
  }
  return TS_OK;
}

/* ---- Cohorts and cycles ---------------------------------------------------------------- */

/* Makes cohort n inactive for cause (the queues under it follow, propagate_inactive). */
static void cohort_off(q__node *n, q__cause cause, const char *text) {
  n->active = false;
  if (n->cause) return; /* the first cause found stays */
  n->cause = (uint8_t)cause;
  n->cause_text = text;
}

static const char *last_problem(const q_tree *t) {
  return t->problems.n ? t->problems.v[t->problems.n - 1] : NULL;
}

static ts_rc cohort_add(q_tree *t, const model_cohort *o) {
  q__node *n;
  char what[300];
  ts_rc rc;
  if ((rc = cohort_ensure(t, o->obj.name, o, &n)) != TS_OK) return rc;
  n->weight = ts_quantity_approx(&o->fair_weight);
  if (o->parent && (rc = cohort_ensure(t, o->parent, NULL, &n->parent)) != TS_OK) return rc;
  snprintf(what, sizeof what, "%s %s: %s", q__kind_label(o->obj.kind), o->obj.name,
           quota_field(o->obj.kind));
  rc = faulty(t, o->obj.name) ? TS_EFAULT : set_quotas(t, n, what, o->groups, o->ngroups);
  if (rc == TS_EFAULT && q__problem(t, "%s: %s", what, ts_strerror(rc))) return TS_ENOMEM;
  if (rc == TS_ENOMEM) return rc;
  if (rc != TS_OK) cohort_off(n, Q__CAUSE_BROKEN, last_problem(t));
  return TS_OK;
}

static const char *parent_field(const q__node *n) {
  if (n->obj && n->obj->obj.kind == MODEL_VOLCANO_QUEUE) return "spec.parent";
  if (n->obj && n->obj->obj.kind == MODEL_KAI_QUEUE) return "spec.parentQueue";
  if (n->obj && !strcmp(n->obj->obj.api_version, "kueue.x-k8s.io/v1alpha1")) return "spec.parent";
  return "spec.parentName";
}

static const char *cohort_label(const q__node *n) {
  return q__kind_label(n->obj ? n->obj->obj.kind : MODEL_COHORT);
}

/* Reports the cycle path[k..len) (each one's parent is the next, the last's is path[k]) as
 * "a -> b -> a" from path[k] (a long one cut short: its start is enough to find it), and marks
 * its members inactive. */
static ts_rc report_cycle(q_tree *t, q__node **path, size_t k, size_t len) {
  char text[Q__MSG_MAX - 100];
  size_t at = 0;
  ts_rc rc;
  for (size_t i = k; i <= len; i++) {
    const char *name = path[i < len ? i : k]->name;
    if (at + strlen(name) + 12 >= sizeof text) {
      snprintf(text + at, sizeof text - at, " -> ...");
      break;
    }
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%s", i > k ? " -> " : "", name);
  }
  rc = q__problem(t, "%s %s: %s: cycle %s", cohort_label(path[k]), path[k]->name,
                  parent_field(path[k]), text);
  for (size_t i = k; rc == TS_OK && i < len; i++)
    cohort_off(path[i], Q__CAUSE_CYCLE, last_problem(t));
  return rc;
}

/* The verdict on each node of path[0..len) (each one's parent is the next, the last's parent
 * is `base`, NULL for a root): its depth, or its inactivity, which passes down. */
static ts_rc settle_path(q_tree *t, q__node **path, size_t len, const q__node *base) {
  for (size_t i = len; i-- > 0;) {
    q__node *x = path[i];
    x->mark = 2;
    if (base && base->cause && !x->cause) cohort_off(x, (q__cause)base->cause, base->cause_text);
    x->depth = base && !base->cause ? base->depth + 1 : 0;
    if (!x->cause && x->depth > Q__MAX_DEPTH) { /* one report where the limit is crossed */
      if (q__problem(t, "%s %s: %s: nesting deeper than %d", cohort_label(x), x->name,
                     parent_field(x), Q__MAX_DEPTH))
        return TS_ENOMEM;
      cohort_off(x, Q__CAUSE_DEEP, last_problem(t));
    }
    base = x;
  }
  return TS_OK;
}

/* Finds every cycle of parents, every cohort nested deeper than Q__MAX_DEPTH and everything
 * under those or under a cohort that failed to build, whatever order the names come in: each
 * cohort is walked once (an iterative walk up to the first node already judged), O(cohorts).
 * Every inactive cohort is then cut from its parent, so that no walk of the tree (usage
 * bubbling up, shares, the tournament) is ever longer than Q__MAX_DEPTH + 2. */
static ts_rc check_nesting(q_tree *t) {
  q__node **path = q__zalloc(t, (t->ncohorts + 1) * sizeof *path);
  ts_rc rc = TS_OK;
  if (!path) return TS_ENOMEM;
  for (uint32_t i = 0; i < t->ncohorts; i++) t->cohorts[i]->mark = 0;
  for (uint32_t i = 0; rc == TS_OK && i < t->ncohorts; i++) {
    q__node *p = t->cohorts[i];
    size_t len = 0;
    for (; p && !p->mark; p = p->parent) {
      p->mark = 1;
      p->depth = (int)len; /* its place on the path, while it is there */
      path[len++] = p;
    }
    if (p && p->mark == 1) { /* back on this walk's path: a cycle from p to the end */
      size_t k = (size_t)p->depth;
      if ((rc = report_cycle(t, path, k, len)) != TS_OK) break;
      for (size_t j = k; j < len; j++) path[j]->mark = 2, path[j]->depth = 0;
      len = k;
    }
    rc = settle_path(t, path, len, p);
  }
  for (uint32_t i = 0; i < t->ncohorts; i++)
    if (t->cohorts[i]->cause) t->cohorts[i]->parent = NULL, t->cohorts[i]->depth = 0;
  return rc;
}

/* ---- tree structure -------------------------------------------------------------------- */

static int node_name_cmp(const void *a, const void *b) {
  return strcmp((*(q__node *const *)a)->name, (*(q__node *const *)b)->name);
}

static ts_rc collect_cohorts(q_tree *t) {
  size_t it = 0, k = 0;
  const ts_map_slot *s;
  t->ncohorts = (uint32_t)t->cohort_by_name.count;
  if (!(t->cohorts = q__zalloc(t, t->ncohorts * sizeof *t->cohorts))) return TS_ENOMEM;
  while (ts_map_next(&t->cohort_by_name, &it, &s)) t->cohorts[k++] = s->value;
  qsort(t->cohorts, t->ncohorts, sizeof *t->cohorts, node_name_cmp);
  for (uint32_t i = 0; i < t->ncohorts; i++) t->cohorts[i]->index = i;
  return TS_OK;
}

/* Fills each cohort's kids: child cohorts then child queues, both in name order. */
static ts_rc link_kids(q_tree *t) {
  uint32_t *count = q__zalloc(t, (t->ncohorts + 1) * sizeof *count);
  if (!count) return TS_ENOMEM;
  for (uint32_t i = 0; i < t->ncohorts; i++) t->cohorts[i]->mark = (int)i;
  for (uint32_t i = 0; i < t->ncohorts; i++)
    if (t->cohorts[i]->parent) count[t->cohorts[i]->parent->mark]++;
  for (uint32_t i = 0; i < t->ncqs; i++)
    if (t->cqs[i]->node.parent) count[t->cqs[i]->node.parent->mark]++;
  for (uint32_t i = 0; i < t->ncohorts; i++)
    if (!(t->cohorts[i]->kids = q__zalloc(t, count[i] * sizeof(q__node *)))) return TS_ENOMEM;
  for (uint32_t i = 0; i < t->ncohorts; i++) {
    q__node *p = t->cohorts[i]->parent;
    if (p) p->kids[p->nkids++] = t->cohorts[i], p->nkid_cohorts++;
  }
  for (uint32_t i = 0; i < t->ncqs; i++) {
    q__node *p = t->cqs[i]->node.parent;
    if (p) p->kids[p->nkids++] = &t->cqs[i]->node;
  }
  return TS_OK;
}

/* SubtreeQuota, heights and depths, bottom-up from n. The recursion is as deep as the tree,
 * which check_nesting bounds by Q__MAX_DEPTH + 2 whatever the input. */
static void accumulate(q_tree *t, q__node *n, int depth) {
  n->depth = depth;
  for (uint32_t f = 0; f < t->nfr; f++) n->subtree[f] = n->nominal[f];
  if (n->is_cq) return;
  n->height = n->nkids ? 1 : 0;
  for (uint32_t k = 0; k < n->nkids; k++) {
    q__node *c = n->kids[k];
    accumulate(t, c, depth + 1);
    if (!c->is_cq && c->height + 1 > n->height) n->height = c->height + 1;
    for (uint32_t f = 0; f < t->nfr; f++) /* saturating: quotas past int64 mean "unlimited" */
      n->subtree[f] = ts_add_sat(n->subtree[f], c->subtree[f] - q__guaranteed(c, f));
  }
}

/* What each cohort lends its children per resource (Kueue's calculateLendable). */
static ts_rc lendables(q_tree *t) {
  for (uint32_t i = 0; i < t->ncohorts; i++) {
    q__node *n = t->cohorts[i];
    if (!(n->lendable = q__zalloc(t, (t->nres ? t->nres : 1) * sizeof *n->lendable)))
      return TS_ENOMEM;
    for (uint32_t f = 0; f < t->nfr; f++)
      n->lendable[f % t->nres] = ts_add_sat(n->lendable[f % t->nres], q__potential(n, f));
  }
  return TS_OK;
}

/* A queue under an inactive cohort is inactive too, saying why in its cohort's words. */
static ts_rc propagate_inactive(q_tree *t) {
  for (uint32_t i = 0; i < t->ncqs; i++) {
    q__cq *cq = t->cqs[i];
    const q__node *p = cq->node.parent;
    const char *what = cq->obj->obj.kind == MODEL_CLUSTER_QUEUE ? "cohort" : "parent queue";
    ts_rc rc;
    if (!p || p->active || !cq->node.active) continue; /* inactive cohorts are cut: p is it */
    if (p->cause == Q__CAUSE_CYCLE)
      rc = q__problem(t, "%s %s: %s: %s \"%s\" is in or under a cycle",
                      q__kind_label(cq->obj->obj.kind), cq->node.name, cohort_field(cq->obj), what,
                      cq->obj->cohort);
    else if (p->cause == Q__CAUSE_DEEP)
      rc = q__problem(t, "%s %s: %s: %s \"%s\" is nested deeper than %d",
                      q__kind_label(cq->obj->obj.kind), cq->node.name, cohort_field(cq->obj), what,
                      cq->obj->cohort, Q__MAX_DEPTH);
    else
      rc = q__problem(t, "%s %s: %s: %s \"%s\" is inactive (%s)", q__kind_label(cq->obj->obj.kind),
                      cq->node.name, cohort_field(cq->obj), what, cq->obj->cohort,
                      p->cause_text ? p->cause_text : "see its problem");
    if (rc != TS_OK) return rc;
    deactivate(t, cq,
               p->cause == Q__CAUSE_CYCLE  ? "CohortCycle"
               : p->cause == Q__CAUSE_DEEP ? "CohortTooDeep"
                                           : "CohortInvalid");
  }
  return TS_OK;
}

/* ---- LocalQueues ----------------------------------------------------------------------- */

static ts_rc local_queues(q_tree *t) {
  model_obj **v = NULL;
  size_t n = 0;
  ts_rc rc = model_list(t->m, MODEL_LOCAL_QUEUE, &v, &n);
  for (size_t i = 0; rc == TS_OK && i < n; i++) {
    const model_local_queue *lq = (const model_local_queue *)v[i];
    q__lq *e = q__zalloc(t, sizeof *e);
    char *key = ts_arena_strndup(&t->arena, lq->obj.key, strlen(lq->obj.key));
    if (!e || !key) {
      rc = TS_ENOMEM;
      break;
    }
    e->cq = lq->cluster_queue;
    e->held = lq->stop_policy != MODEL_STOP_NONE;
    if ((rc = map_put(&t->lq_by_key, key, e)) != TS_OK) break;
    if (!q__cq_get(t, e->cq))
      rc = q__problem(t, "LocalQueue %s: spec.clusterQueue: ClusterQueue \"%s\" not found", key,
                      e->cq);
  }
  ts_free(v);
  return rc;
}

/* ---- build ----------------------------------------------------------------------------- */

static ts_rc scan(q_tree *t, model_obj **cqs, size_t ncq, model_obj **chs, size_t nch) {
  model_obj **rfs = NULL;
  size_t nrf = 0;
  ts_rc rc = model_list(t->m, MODEL_RESOURCE_FLAVOR, &rfs, &nrf);
  for (size_t i = 0; rc == TS_OK && i < nrf; i++) {
    const char *name = ts_intern_cstr(rfs[i]->name);
    rc = name ? q__add_flavor(t, name, (const model_resource_flavor *)rfs[i]) : TS_ENOMEM;
  }
  for (size_t i = 0; rc == TS_OK && i < ncq; i++) {
    const model_cluster_queue *q = (const model_cluster_queue *)cqs[i];
    rc = scan_groups(t, q->groups, q->ngroups);
  }
  for (size_t i = 0; rc == TS_OK && i < nch; i++) {
    const model_cohort *c = (const model_cohort *)chs[i];
    rc = scan_groups(t, c->groups, c->ngroups);
  }
  ts_free(rfs);
  t->nfr = t->nflavors * t->nres;
  return rc;
}

/* The root cohort of Volcano's or KAI's queues holds what the cluster's schedulable nodes offer
 * beyond its children's quotas (foreign.c says why), in its kind's flavor. Re-accumulated. */
static ts_rc foreign_roots(q_tree *t) {
  model_obj *o;
  size_t it = 0;
  int64_t *cap;
  if (!t->froot[0] && !t->froot[1]) return TS_OK;
  if (!(cap = q__zalloc(t, (t->nres + 1) * sizeof *cap))) return TS_ENOMEM;
  while (model_next(t->m, MODEL_NODE, &it, &o)) { /* O(nodes), no copy: sums need no order */
    const model_node *node = (const model_node *)o;
    if (node->unschedulable) continue;
    for (uint32_t s = 0; s < t->nres; s++)
      cap[s] = ts_add_sat(cap[s], ts_mul_sat(model_node_alloc(node, t->res_id[s]),
                                             q_scale(model_resources_of(t->m), t->res_id[s])));
  }
  for (int k = 0; k < 2; k++) {
    q__node *r = t->froot[k] ? cohort_get(t, t->froot[k]) : NULL;
    int f = t->froot[k] ? q__flavor_index(t, t->froot[k]) : -1;
    if (!r || f < 0 || r->obj || r->parent) continue; /* a Cohort object of that name rules */
    for (uint32_t s = 0; s < t->nres; s++) {
      uint32_t fr = (uint32_t)f * t->nres + s;
      int64_t held = 0;
      for (uint32_t c = 0; c < r->nkids; c++) held = ts_add_sat(held, r->kids[c]->subtree[fr]);
      r->nominal[fr] = cap[s] > held ? cap[s] - held : 0;
    }
    accumulate(t, r, 0);
  }
  return TS_OK;
}

static ts_rc build_nodes(q_tree *t, model_obj **cqs, size_t ncq, model_obj **chs, size_t nch) {
  ts_rc rc = TS_OK;
  if (!(t->cqs = q__zalloc(t, ncq * sizeof *t->cqs))) return TS_ENOMEM;
  for (size_t i = 0; rc == TS_OK && i < nch; i++) rc = cohort_add(t, (const model_cohort *)chs[i]);
  for (size_t i = 0; rc == TS_OK && i < ncq; i++)
    rc = cq_add(t, (const model_cluster_queue *)cqs[i]);
  if (rc == TS_OK) rc = collect_cohorts(t);
  if (rc == TS_OK) rc = check_nesting(t);
  if (rc == TS_OK) rc = link_kids(t);
  for (uint32_t i = 0; rc == TS_OK && i < t->ncohorts; i++)
    if (!t->cohorts[i]->parent) accumulate(t, t->cohorts[i], 0);
  for (uint32_t i = 0; rc == TS_OK && i < t->ncqs; i++)
    if (!t->cqs[i]->node.parent) accumulate(t, &t->cqs[i]->node, 0);
  if (rc == TS_OK) rc = foreign_roots(t);
  if (rc == TS_OK) rc = lendables(t);
  if (rc == TS_OK) rc = propagate_inactive(t);
  return rc;
}

static void tree_init(q_tree *t, const model *m) {
  memset(t, 0, sizeof *t);
  t->m = m;
  ts_arena_init(&t->arena, ARENA_CHUNK);
  ts_map_init(&t->cq_by_name);
  ts_map_init(&t->cohort_by_name);
  ts_map_init(&t->flavor_by_name);
  ts_map_init(&t->lq_by_key);
  ts_map_init(&t->adm_by_key);
}

ts_rc q_tree_build(const model *m, const q_config *cfg, q_tree **out, ts_err *err) {
  ts_rc rc = TS_ENOMEM;
  model_obj **cqs = NULL, **chs = NULL, **allq = NULL, **allc = NULL;
  size_t ncq = 0, nch = 0;
  q__foreign fq;
  q_tree *t = ts_malloc(sizeof *t);
  *out = NULL;
  if (!t) goto out;
  tree_init(t, m);
  t->fault = cfg && cfg->fault.stage == Q_FAULT_TREE ? &cfg->fault : NULL;
  t->nids = (uint32_t)model_resource_count(model_resources_of(m));
  t->res_id = q__zalloc(t, t->nids * sizeof *t->res_id);
  t->res_slot = q__zalloc(t, t->nids * sizeof *t->res_slot);
  if (!t->res_id || !t->res_slot) goto out;
  memset(t->res_slot, -1, t->nids * sizeof *t->res_slot);
  if ((rc = model_list(m, MODEL_CLUSTER_QUEUE, &cqs, &ncq)) ||
      (rc = model_list(m, MODEL_COHORT, &chs, &nch)) || (rc = q__foreign_build(t, &fq)))
    goto out;
  allq = ts_arena_alloc(&t->arena, (ncq + fq.ncqs + 1) * sizeof *allq);
  allc = ts_arena_alloc(&t->arena, (nch + fq.ncohorts + 1) * sizeof *allc);
  if (!allq || !allc) {
    rc = TS_ENOMEM;
    goto out;
  }
  if (ncq) memcpy(allq, cqs, ncq * sizeof *allq);
  if (fq.ncqs) memcpy(allq + ncq, fq.cqs, fq.ncqs * sizeof *allq);
  if (nch) memcpy(allc, chs, nch * sizeof *allc);
  if (fq.ncohorts) memcpy(allc + nch, fq.cohorts, fq.ncohorts * sizeof *allc);
  ncq += fq.ncqs, nch += fq.ncohorts;
  if ((rc = scan(t, allq, ncq, allc, nch)) || (rc = build_nodes(t, allq, ncq, allc, nch)) ||
      (rc = local_queues(t)))
    goto out;
  *out = t;
  t = NULL;
out:
  ts_free(cqs);
  ts_free(chs);
  if (t) q_tree_free(t);
  if (rc != TS_OK) ts_err_set(err, rc, "building the quota tree: %s", ts_strerror(rc));
  return rc;
}

void q_tree_free(q_tree *t) {
  size_t it = 0;
  const ts_map_slot *s;
  if (!t) return;
  while (ts_map_next(&t->adm_by_key, &it, &s)) ts_free(s->value);
  for (uint32_t i = 0; i < t->ncqs; i++) ts_vec_free(&t->cqs[i]->adm);
  for (size_t i = 0; i < t->problems.n; i++) ts_free(t->problems.v[i]);
  ts_vec_free(&t->problems);
  ts_vec_free(&t->sorted);
  ts_map_free(&t->cq_by_name);
  ts_map_free(&t->cohort_by_name);
  ts_map_free(&t->flavor_by_name);
  ts_map_free(&t->lq_by_key);
  ts_map_free(&t->adm_by_key);
  ts_arena_free(&t->arena);
  ts_free(t);
}

/* ---- snapshots of usage ---------------------------------------------------------------- */

size_t q__usage_words(const q_tree *t) {
  return (size_t)(t->ncqs + t->ncohorts) * t->nfr;
}

void q__usage_save(const q_tree *t, int64_t *buf) {
  size_t k = 0;
  for (uint32_t i = 0; i < t->ncqs; i++, k += t->nfr)
    memcpy(buf + k, t->cqs[i]->node.usage, t->nfr * sizeof *buf);
  for (uint32_t i = 0; i < t->ncohorts; i++, k += t->nfr)
    memcpy(buf + k, t->cohorts[i]->usage, t->nfr * sizeof *buf);
}

void q__usage_restore(q_tree *t, const int64_t *buf) {
  size_t k = 0;
  for (uint32_t i = 0; i < t->ncqs; i++, k += t->nfr)
    memcpy(t->cqs[i]->node.usage, buf + k, t->nfr * sizeof *buf);
  for (uint32_t i = 0; i < t->ncohorts; i++, k += t->nfr)
    memcpy(t->cohorts[i]->usage, buf + k, t->nfr * sizeof *buf);
}

/* ---- queries --------------------------------------------------------------------------- */

ts_rc q_tree_usage(const q_tree *t, const char *cq, const char *flavor, int resource,
                   q_usage *out) {
  q__cq *q = q__cq_get(t, cq);
  int f = q__flavor_index(t, flavor);
  uint32_t fr;
  if (!q || f < 0 || q__slot(t, resource) < 0) return TS_ENOTFOUND;
  fr = q__fr(t, (uint32_t)f, resource);
  out->usage = q->node.usage[fr];
  out->nominal = q->node.nominal[fr];
  out->borrowed = out->usage > out->nominal ? out->usage - out->nominal : 0;
  out->available = q__available(&q->node, fr);
  out->potential = q__potential(&q->node, fr);
  return TS_OK;
}

double q_tree_share(const q_tree *t, const char *cq) {
  q__cq *q = q__cq_get(t, cq);
  return q ? q__drs_value(q__share(t, &q->node)) : 0.0;
}

bool q_tree_has_cq(const q_tree *t, const char *name, model_kind kind) {
  const q__cq *cq = q__cq_get(t, name);
  return cq && cq->obj->obj.kind == kind;
}

bool q_tree_cq_active(const q_tree *t, const char *cq) {
  q__cq *q = q__cq_get(t, cq);
  return q && q->node.active;
}

const char *q_tree_cq_inactive(const q_tree *t, const char *cq, const char **problem) {
  q__cq *q = q__cq_get(t, cq);
  if (problem) *problem = q && !q->node.active ? q->problem : NULL;
  return q && !q->node.active ? q->inactive : NULL;
}

int32_t q_priority(const model *m, const char *wpc, const char *pc) {
  const model_obj *o;
  if (wpc && (o = model_get(m, MODEL_WORKLOAD_PRIORITY_CLASS, NULL, wpc)))
    return ((const model_workload_priority_class *)o)->value;
  if (pc && (o = model_get(m, MODEL_PRIORITY_CLASS, NULL, pc)))
    return ((const model_priority_class *)o)->value;
  return model_default_priority(m);
}
