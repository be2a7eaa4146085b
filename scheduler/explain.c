/* scheduler/explain.c - why a pending workload waits and where it stands in line.
 *
 * An explainer reads the model and the result of a cycle run on it (the dry run: the same
 * cycle, the same rules, nothing written), groups the pods of cfg's scheduler into workloads
 * (their gangs, as the cycle identifies them), orders the pending ones as their queues would
 * pop them, and then answers per pod: the cycle's decision and its reason, the gang's members,
 * gates, the queues and the positions in them with the workloads ahead, the quota of each
 * flavor-resource it asks for (what is free, what the cohort could lend, what is missing), the
 * largest node or topology domain its filters allow with its free amount, and the pods the
 * cycle's preemption evicted to make room for it. Building it costs one pass over the pods, a
 * sort of the pending workloads and a pass over the nodes; each explanation then costs its
 * own workload (and a pass over the nodes per new static signature).
 */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The node or domain with the most free of a resource among the nodes of one signature. */
typedef struct xbest {
  const void *key[4]; /* the map's key: signature, its pod, level + 2, resource + 1 */
  const char *domain;
  int64_t free; /* -1: none */
} xbest;

typedef struct xwl {
  const char *key;           /* gang key (arena) */
  const char *label;         /* "PyTorchJob ns/name", "pod ns/name" (arena) */
  int32_t min;               /* pods that must run together */
  uint32_t pending;          /* pending members (pods of cfg's scheduler) */
  uint32_t bound;            /* members bound */
  bool waits;                /* a pending member was decided pending by the cycle */
  int32_t priority;          /* highest pending member priority */
  int64_t created;           /* earliest pending member creation */
  const model_pod *first;    /* a pending member */
  const model_pod **victims; /* pods the cycle evicts to make room for it (arena) */
  uint32_t nvictims;
  int64_t *req;                 /* per resource id: what its pending members ask in all (arena) */
  const char *lq, *cq, *cohort; /* interned queues, or NULL */
  int32_t pos_lq, pos_cq, pos_cohort; /* 0-based positions among waiting workloads, or -1 */
} xwl;

struct sched_explainer {
  const model *m;
  const sched_config *cfg;
  const sched_result *r;
  ts_arena arena;
  ts_map wls;         /* gang key -> xwl */
  ts_map decision_of; /* pod address -> 1 + decision index */
  ts_map best;        /* (signature, its pod, level, resource) -> its best domain (xbest) */
  xwl **waiting;      /* waiting workloads in queue order */
  size_t nwaiting;
  sched_view view; /* the nodes before the cycle's decisions, for capacity */
  ts_arena scratch, out;
  bool view_ok;   /* view made */
  int64_t now_ns; /* the cycle's clock, for the view */
};

static int wl_cmp(const void *a, const void *b) {
  const xwl *x = *(const xwl *const *)a, *y = *(const xwl *const *)b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->created != y->created) return x->created < y->created ? -1 : 1;
  return strcmp(x->key, y->key);
}

static bool ours(const sched_explainer *x, const model_pod *p) {
  return p->scheduler_name == x->cfg->scheduler_name && !p->obj.deleted_ns;
}

static const q_cq_report *cq_report(const sched_result *r, const char *cq) {
  for (size_t i = 0; cq && i < r->queues.ncqs; i++)
    if (r->queues.cqs[i].name == cq) return &r->queues.cqs[i];
  return NULL;
}

static ts_rc add_pod(sched_explainer *x, const model_pod *p) {
  char key[TS_KEY_MAX], label[700];
  xwl *w;
  bool pending = !p->node_name && p->phase == MODEL_PHASE_PENDING;
  if (!pending && !model_pod_counts(p)) return TS_OK;
  int32_t min = sched__gang_ident(x->m, p, key, sizeof key, label, sizeof label);
  if (!(w = ts_map_get(&x->wls, key, strlen(key)))) {
    sched_qref ref;
    const q_cq_report *c;
    if (!(w = ts_arena_alloc(&x->arena, sizeof *w))) return TS_ENOMEM;
    memset(w, 0, sizeof *w);
    if (!(w->key = ts_arena_strndup(&x->arena, key, strlen(key))) ||
        !(w->label = ts_arena_strndup(&x->arena, label, strlen(label))))
      return TS_ENOMEM;
    w->min = min, w->priority = INT32_MIN, w->created = INT64_MAX;
    w->pos_lq = w->pos_cq = w->pos_cohort = -1;
    if (sched__queue_ref(x->m, p, &ref)) {
      w->lq = ref.local_queue;
      w->cq = sched__queue_cq(x->m, p->obj.ns, &ref);
      if ((c = cq_report(x->r, w->cq))) w->cohort = c->root;
    }
    if (ts_map_put(&x->wls, w->key, strlen(w->key), w, NULL) != TS_OK) return TS_ENOMEM;
  }
  if (!pending) {
    w->bound++;
    return TS_OK;
  }
  w->pending++;
  if (!w->first) w->first = p;
  if (!w->req) {
    size_t n = (size_t)model_resource_count(model_resources_of(x->m));
    if (!(w->req = ts_arena_alloc(&x->arena, (n + 1) * sizeof *w->req))) return TS_ENOMEM;
    memset(w->req, 0, (n + 1) * sizeof *w->req);
  }
  for (uint32_t i = 0; i < p->requests.n; i++)
    w->req[p->requests.v[i].id] = ts_add_sat(w->req[p->requests.v[i].id], p->requests.v[i].v);
  int32_t prio = sched_pod_priority(x->m, p);
  if (prio > w->priority) w->priority = prio;
  if (p->obj.created_ns < w->created) w->created = p->obj.created_ns;
  uintptr_t at = (uintptr_t)ts_map_get(&x->decision_of, (const char *)&p, sizeof p);
  if (at && x->r->decisions[at - 1].kind == SCHED_PENDING) w->waits = true;
  return TS_OK;
}

/* Positions: each waiting workload's index among the waiting ones of its LocalQueue,
 * ClusterQueue and cohort tree, in queue order (priority, then creation, as Kueue's queues
 * pop them). */
static ts_rc positions(sched_explainer *x) {
  ts_map count; /* queue or cohort name (its address, with a tag) -> 1 + count so far */
  ts_map_init(&count);
  for (size_t i = 0; i < x->nwaiting; i++) {
    xwl *w = x->waiting[i];
    const char *names[3] = {w->lq, w->cq, w->cohort};
    int32_t *pos[3] = {&w->pos_lq, &w->pos_cq, &w->pos_cohort};
    for (int k = 0; k < 3; k++) {
      char key[2 * sizeof(void *) + 2];
      uintptr_t n;
      if (!names[k]) continue;
      /* LocalQueues are per namespace: keyed by namespace and name */
      const char *a = k == 0 ? w->first->obj.ns : names[k], *b = names[k];
      memcpy(key, &a, sizeof a), memcpy(key + sizeof a, &b, sizeof b);
      key[2 * sizeof(void *)] = (char)('0' + k);
      n = (uintptr_t)ts_map_get(&count, key, sizeof key - 1);
      *pos[k] = (int32_t)n;
      char *stored = ts_arena_alloc(&x->arena, sizeof key);
      if (!stored) {
        ts_map_free(&count);
        return TS_ENOMEM;
      }
      memcpy(stored, key, sizeof key);
      if (ts_map_put(&count, stored, sizeof key - 1, (void *)(n + 1), NULL) != TS_OK) {
        ts_map_free(&count);
        return TS_ENOMEM;
      }
    }
  }
  ts_map_free(&count);
  return TS_OK;
}

ts_rc sched_explainer_new(const model *m, const sched_config *cfg, const sched_result *r,
                          int64_t now_ns, sched_explainer **out) {
  sched_explainer *x = ts_calloc(1, sizeof *x);
  size_t it = 0;
  model_obj *o;
  const ts_map_slot *slot;
  ts_rc rc = TS_OK;
  *out = NULL;
  if (!x) return TS_ENOMEM;
  x->m = m, x->cfg = cfg, x->r = r;
  ts_arena_init(&x->arena, 64 * 1024);
  ts_arena_init(&x->scratch, 256 * 1024);
  ts_arena_init(&x->out, 64 * 1024);
  ts_map_init(&x->wls);
  ts_map_init(&x->decision_of);
  ts_map_init(&x->best);
  for (size_t i = 0; rc == TS_OK && i < r->ndecisions; i++)
    rc = ts_map_put(&x->decision_of, (const char *)&r->decisions[i].pod, sizeof r->decisions[i].pod,
                    (void *)(uintptr_t)(i + 1), NULL);
  while (rc == TS_OK && model_next(m, MODEL_POD, &it, &o))
    if (ours(x, (const model_pod *)o)) rc = add_pod(x, (const model_pod *)o);
  if (rc == TS_OK &&
      !(x->waiting = ts_arena_alloc(&x->arena, (x->wls.count + 1) * sizeof *x->waiting)))
    rc = TS_ENOMEM;
  for (size_t i = 0; rc == TS_OK && ts_map_next(&x->wls, &i, &slot);) {
    xwl *w = slot->value;
    if (w->pending && w->waits) x->waiting[x->nwaiting++] = w;
  }
  for (size_t i = 0; rc == TS_OK && i < r->ndecisions; i++) { /* who is evicted for whom */
    const sched_decision *d = &r->decisions[i];
    char by[TS_KEY_MAX];
    xwl *w;
    if (d->kind != SCHED_EVICT || !d->preemptor) continue;
    sched__gang_key(m, d->preemptor, by, sizeof by);
    if (!(w = ts_map_get(&x->wls, by, strlen(by)))) continue;
    if (!(w->nvictims & (w->nvictims + 1))) { /* 0, 1, 3, 7...: double */
      const model_pod **grown = ts_arena_alloc(&x->arena, (2 * w->nvictims + 2) * sizeof *grown);
      if (!grown) {
        rc = TS_ENOMEM;
        break;
      }
      if (w->nvictims) memcpy(grown, w->victims, w->nvictims * sizeof *grown);
      w->victims = grown;
    }
    w->victims[w->nvictims++] = d->pod;
  }
  if (rc == TS_OK) {
    qsort(x->waiting, x->nwaiting, sizeof *x->waiting, wl_cmp);
    rc = positions(x);
  }
  x->now_ns = now_ns; /* the view of the nodes is made by the first explanation that needs it */
  if (rc != TS_OK) {
    sched_explainer_free(x);
    return rc;
  }
  *out = x;
  return TS_OK;
}

void sched_explainer_free(sched_explainer *x) {
  if (!x) return;
  if (x->view_ok) sched__view_free(&x->view);
  ts_arena_free(&x->scratch);
  ts_arena_free(&x->out);
  ts_map_free(&x->wls);
  ts_map_free(&x->decision_of);
  ts_map_free(&x->best);
  ts_arena_free(&x->arena);
  ts_free(x);
}

/* ---- one pod ------------------------------------------------------------------------------ */

/* What the workload's pending pods ask of resource id in all. */
static int64_t wl_request(const xwl *w, int id) {
  return w->req && id >= 0 ? w->req[id] : 0;
}

static const q_fr_report *cohort_fr(const sched_result *r, const char *cohort, const char *flavor,
                                    int resource) {
  for (size_t i = 0; cohort && i < r->queues.ncohorts; i++) {
    const q_cohort_report *c = &r->queues.cohorts[i];
    if (c->name != cohort) continue;
    for (uint32_t k = 0; k < c->nfrs; k++)
      if (c->frs[k].flavor == flavor && c->frs[k].resource == resource) return &c->frs[k];
  }
  return NULL;
}

static ts_rc quota_lines(sched_explainer *x, const xwl *w, sched_explanation *e) {
  const q_cq_report *c = cq_report(x->r, w->cq);
  if (!c || !c->nfrs) return TS_OK;
  if (!(e->quota = ts_arena_alloc(&x->arena, c->nfrs * sizeof *e->quota))) return TS_ENOMEM;
  for (uint32_t i = 0; i < c->nfrs; i++) {
    const q_fr_report *f = &c->frs[i];
    const q_fr_report *cf = cohort_fr(x->r, c->cohort, f->flavor, f->resource);
    sched_quota_line *l;
    int64_t req = ts_mul_sat(wl_request(w, f->resource),
                             q_scale(model_resources_of(x->m), f->resource)),
            free_cq, free_cohort;
    if (req <= 0) continue;
    l = &e->quota[e->nquota++];
    *l = (sched_quota_line){.flavor = f->flavor,
                            .resource = f->resource,
                            .request = req,
                            .nominal = f->nominal,
                            .usage = f->usage,
                            .borrowed = f->borrowed,
                            .borrowable = -1};
    free_cq = f->nominal > f->usage ? f->nominal - f->usage : 0;
    if (cf) { /* the cohort's free quota beyond this queue's own, within its borrowing limit */
      free_cohort = cf->nominal > cf->usage ? cf->nominal - cf->usage : 0;
      l->borrowable = free_cohort > free_cq ? free_cohort - free_cq : 0;
      if (f->has_borrowing_limit) {
        int64_t room = f->borrowing_limit - f->borrowed;
        if (room < 0) room = 0;
        if (l->borrowable > room) l->borrowable = room;
      }
    }
    l->missing = req - free_cq - (l->borrowable > 0 ? l->borrowable : 0);
    if (l->missing < 0) l->missing = 0;
  }
  return TS_OK;
}

/* The resource that decides capacity: the first GPU resource the pod asks for, else cpu. */
static int main_resource(const sched_view *v, const model_pod *p) {
  for (int k = 0; k < v->ngpu; k++)
    if (model_rlist_get(&p->requests, v->gpu[k])) return v->gpu[k];
  return MODEL_RES_CPU;
}

/* The best node (key NULL) or domain of level key among sig's nodes for resource r, computed
 * once per signature, level and resource (NULL when out of memory). */
static const xbest *best_of(sched_explainer *x, const sched_sig *sig, const char *key, int lv,
                            int r) {
  sched_view *v = &x->view;
  const void *k[4] = {sig, sig->pod, (const void *)(uintptr_t)(lv + 2),
                      (const void *)(uintptr_t)(r + 1)};
  xbest *b = ts_map_get(&x->best, (const char *)k, sizeof k);
  ts_map sums; /* label value (its address) -> running sum (arena cell) */
  if (b) return b;
  if (!(b = ts_arena_alloc(&x->arena, sizeof *b))) return NULL;
  memcpy(b->key, k, sizeof k);
  b->domain = NULL, b->free = -1;
  ts_map_init(&sums);
  for (uint32_t j = 0; j < sig->n; j++) {
    uint32_t n = sig->nodes[j];
    int64_t f = v->cap[(size_t)n * (size_t)v->stride + (size_t)r].free, *cell;
    const char *val = key ? model_labels_get(&v->nodes[n]->obj.labels, key) : NULL;
    if (key && !val) continue;
    if (key) {
      if (!(cell = ts_map_get(&sums, (const char *)&val, sizeof val))) {
        const char **stored = ts_arena_alloc(&x->arena, sizeof *stored + sizeof *cell);
        if (!stored) break;
        *stored = val;
        cell = (int64_t *)(void *)(stored + 1);
        *cell = 0;
        if (ts_map_put(&sums, (const char *)stored, sizeof val, cell, NULL) != TS_OK) break;
      }
      f = *cell += f > 0 ? f : 0;
    }
    if (f > b->free || (f == b->free && strcmp(key ? val : v->nodes[n]->obj.name, b->domain) < 0)) {
      b->free = f;
      b->domain = key ? val : v->nodes[n]->obj.name;
    }
  }
  ts_map_free(&sums);
  return ts_map_put(&x->best, (const char *)b->key, sizeof b->key, b, NULL) == TS_OK ? b : NULL;
}

static ts_rc capacity_lines(sched_explainer *x, const xwl *w, const model_pod *p,
                            sched_explanation *e) {
  sched_view *v = &x->view;
  sched_pending pp = {.pod = p, .priority = sched_pod_priority(x->m, p)};
  const sched_sig *sig;
  int r, n = 1 + (w->pending > 1 ? x->cfg->ntopology : 0); /* a node, then each level */
  if (!x->view_ok) {
    ts_rc rc = sched__view_init(v, x->m, x->cfg, x->now_ns, &x->scratch, &x->out);
    if (rc != TS_OK) return rc;
    x->view_ok = true;
  }
  r = main_resource(v, p); /* the view knows the GPU resources */
  if (!(sig = sched__static_nodes(v, &pp))) return TS_OK;
  if (!(e->capacity = ts_arena_alloc(&x->arena, (size_t)n * sizeof *e->capacity))) return TS_ENOMEM;
  e->nodes_passing = sig->n;
  e->nodes = v->n;
  for (int lv = -1; lv < n - 1; lv++) { /* a node, then each topology level, narrowest first */
    const char *key = lv < 0 ? NULL : x->cfg->topology[x->cfg->ntopology - 1 - lv];
    const xbest *b = best_of(x, sig, key, lv, r);
    if (!b) return TS_ENOMEM;
    if (b->free < 0) continue;
    e->capacity[e->ncapacity++] =
        (sched_capacity_line){.level = key,
                              .domain = b->domain,
                              .resource = r,
                              .demand = key ? wl_request(w, r) : model_rlist_get(&p->requests, r),
                              .free = b->free};
  }
  return TS_OK;
}

ts_rc sched_explain(sched_explainer *x, const model_pod *p, sched_explanation *e) {
  char key[TS_KEY_MAX];
  xwl *w;
  uintptr_t at;
  ts_rc rc;
  memset(e, 0, sizeof *e);
  e->pod = p;
  e->pos_lq = e->pos_cq = e->pos_cohort = -1;
  if (!ours(x, p)) {
    e->state = SCHED_EXPLAIN_NOT_OURS;
    return TS_OK;
  }
  if (p->node_name || p->phase != MODEL_PHASE_PENDING) {
    e->state = SCHED_EXPLAIN_BOUND;
    return TS_OK;
  }
  sched__gang_key(x->m, p, key, sizeof key);
  if (!(w = ts_map_get(&x->wls, key, strlen(key)))) return TS_EINVAL; /* not in this model */
  at = (uintptr_t)ts_map_get(&x->decision_of, (const char *)&p, sizeof p);
  e->state = SCHED_EXPLAIN_PENDING;
  if (at) e->decision = &x->r->decisions[at - 1];
  e->workload = w->label;
  e->gang = w->pending + w->bound > 1 || w->min > 1;
  e->min = w->min, e->pending = w->pending, e->bound = w->bound;
  e->local_queue = w->lq, e->cluster_queue = w->cq, e->cohort = w->cohort;
  e->pos_lq = w->pos_lq, e->pos_cq = w->pos_cq, e->pos_cohort = w->pos_cohort;
  for (size_t i = 0; i < x->nwaiting && w->pos_cq >= 0 && e->nahead < SCHED_EXPLAIN_AHEAD; i++) {
    const xwl *o = x->waiting[i];
    if (o == w) break;
    if (o->cq == w->cq) e->ahead[e->nahead++] = o->label;
  }
  e->victims = w->victims, e->nvictims = w->nvictims;
  if ((rc = quota_lines(x, w, e)) != TS_OK) return rc;
  return capacity_lines(x, w, p, e);
}

static void waiting_of(const xwl *w, sched_waiting *out) {
  const char *slash = strrchr(w->label, '/');
  *out = (sched_waiting){.label = w->label,
                         .ns = w->first->obj.ns,
                         .name = slash ? slash + 1 : w->label,
                         .first = w->first,
                         .priority = w->priority,
                         .created_ns = w->created,
                         .local_queue = w->lq,
                         .cluster_queue = w->cq,
                         .pos_lq = w->pos_lq,
                         .pos_cq = w->pos_cq};
}

bool sched_explainer_next(const sched_explainer *x, size_t *it, sched_waiting *out) {
  if (*it >= x->nwaiting) return false;
  waiting_of(x->waiting[(*it)++], out);
  return true;
}

bool sched_explainer_waiting(const sched_explainer *x, const model_pod *p, sched_waiting *out) {
  char key[TS_KEY_MAX];
  const xwl *w;
  if (!ours(x, p) || p->node_name || p->phase != MODEL_PHASE_PENDING) return false;
  sched__gang_key(x->m, p, key, sizeof key);
  if (!(w = ts_map_get(&x->wls, key, strlen(key))) || !w->pending || !w->waits) return false;
  waiting_of(w, out);
  return true;
}
