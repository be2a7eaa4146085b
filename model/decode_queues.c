/* model/decode_queues.c - Volcano's Queue (scheduling.volcano.sh/v1beta1) and KAI Scheduler's
 * Queue (scheduling.run.ai/v2), decoded as the ClusterQueue that means the same to the quota
 * tree. One resource group, one flavor named by the API group (no ResourceFlavor: every node),
 * covering cpu, memory, nvidia.com/gpu and whatever else the queue names; resources it does not
 * cover are not limited (uncovered_free), as neither project limits what a queue does not name.
 *
 * Volcano, per resource (a missing entry of deserved or guarantee is 0, of capability unlimited):
 *   nominalQuota   = max(deserved, guarantee), but at most capability
 *   borrowingLimit = capability - nominalQuota (none without capability)
 *   lendingLimit   = nominalQuota - guarantee (none without guarantee: all of it is lent)
 *   weight -> fairSharing.weight; reclaimable: false -> not_reclaimable; parent -> cohort;
 *   dequeueStrategy fifo -> StrictFIFO, traverse (the default) -> BestEffortFIFO.
 * A quantity past what the quota tree counts is read as the most it counts, which is more than
 * any cluster: 10^15 cores or units, 2^60 bytes of memory (so that sums of such quotas
 * saturate instead of failing, and no queue is refused for a value Volcano accepts).
 *
 * KAI, per resource gpu (nvidia.com/gpu), cpu (millicores) and memory (megabytes, 10^6 bytes);
 * a field left out is 0, as KAI reads it (so a queue that leaves out a resource admits nothing
 * that requests it):
 *   quota -1 is unlimited (kai_amount), limit -1 no limit;
 *   nominalQuota   = quota, but at most limit
 *   borrowingLimit = limit - nominalQuota (none when limit is -1)
 *   gpu's overQuotaWeight -> fairSharing.weight; parentQueue -> cohort.
 * A fraction of a GPU in quota or limit counts to the thousandth (the quota tree counts GPUs in
 * thousandths, as pods sharing GPUs ask for them). */
#include "model/model_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define QUEUE_MAX_RESOURCES 64
#define UNLIMITED           1e15 /* "unlimited" quota, in the resource's unit */

const char *model_queue_flavor(model_kind k) {
  return k == MODEL_KAI_QUEUE ? "scheduling.run.ai" : "scheduling.volcano.sh";
}

const char *model_queue_default(model_kind queue_kind) {
  return queue_kind == MODEL_KAI_QUEUE ? "default-queue" : "default";
}

enum { F_NOMINAL, F_GUARANTEE, F_CAP, F_COUNT }; /* Volcano's three lists, KAI's two numbers */

typedef struct qres {
  const char *name; /* interned */
  ts_quantity v[F_COUNT];
  bool has[F_COUNT];
} qres;

typedef struct qset {
  qres r[QUEUE_MAX_RESOURCES];
  uint32_t n;
} qset;

static qres *qset_get(mdec *d, qset *s, const char *name);

/* cpu, memory and nvidia.com/gpu, covered by every queue: NULL on failure (d's error). */
static qset *qset_base(mdec *d) {
  static const char *const base[] = {"cpu", "memory", "nvidia.com/gpu"};
  qset *s = ts_malloc(sizeof *s);
  if (!s) {
    model__fail(d, TS_ENOMEM, "out of memory");
    return NULL;
  }
  s->n = 0;
  for (size_t i = 0; i < sizeof base / sizeof *base; i++)
    if (!qset_get(d, s, base[i])) {
      ts_free(s);
      return NULL;
    }
  return s;
}

static qres *qset_get(mdec *d, qset *s, const char *name) {
  const char *in = ts_intern_cstr(name);
  for (uint32_t i = 0; i < s->n; i++)
    if (s->r[i].name == in) return &s->r[i];
  if (!in) {
    model__fail(d, TS_ENOMEM, "out of memory");
    return NULL;
  }
  if (s->n == QUEUE_MAX_RESOURCES) {
    model__fail(d, TS_ELIMIT, "names more than %d resources", QUEUE_MAX_RESOURCES);
    return NULL;
  }
  if (model_resource_id(d->res, in) < 0) {
    model__fail(d, TS_ELIMIT, "%s", model__no_id(d));
    return NULL;
  }
  memset(&s->r[s->n], 0, sizeof s->r[s->n]);
  s->r[s->n].name = in;
  return &s->r[s->n++];
}

/* The most the quota tree counts of a resource (see the header). */
static ts_quantity most(const char *res) {
  if (!strcmp(res, "memory")) return ts_quantity_from_int(INT64_C(1) << 60, TS_QFMT_BINARY_SI);
  return ts_quantity_from_int((int64_t)UNLIMITED, TS_QFMT_DECIMAL_SI);
}

/* One ResourceList of a Volcano queue into field f of each resource. */
static ts_rc resource_list(mdec *d, json_t *parent, const char *key, qset *s, int f) {
  ts_rc rc;
  json_t *obj = model__object(d, parent, key, &rc), *v;
  const char *name;
  size_t mark;
  if (rc != TS_OK || !obj) return rc;
  mark = model__push(d, key);
  json_object_foreach(obj, name, v) {
    size_t m2 = model__push_key(d, name);
    qres *r = qset_get(d, s, name);
    if (!r) return d->err->code;
    if ((rc = model__quantity_value(d, v, &r->v[f])) != TS_OK) return rc;
    if (ts_quantity_sign(&r->v[f]) < 0) return model__fail(d, TS_EINVAL, "must not be negative");
    {
      ts_quantity cap = most(name);
      if (ts_quantity_cmp(&r->v[f], &cap) > 0) r->v[f] = cap;
    }
    r->has[f] = true;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_quantity qmin(const ts_quantity *a, const ts_quantity *b) {
  return ts_quantity_cmp(a, b) <= 0 ? *a : *b;
}

/* The group of s, in the order named (qset_base first); each quota from F_NOMINAL (the nominal
 * wanted), F_GUARANTEE (kept from lending) and F_CAP (the most it may use), already clipped as the
 * header says. */
static ts_rc build_group(mdec *d, qset *s, model_kind kind, model_cluster_queue *q) {
  model_resource_group *g;
  model_flavor_quotas *f;
  if (model__alloc_array(d, 1, sizeof *q->groups, (void **)&q->groups) != TS_OK ||
      model__alloc_array(d, 1, sizeof *g->flavors, (void **)&q->groups[0].flavors) != TS_OK)
    return d->err->code;
  g = &q->groups[0], q->ngroups = 1;
  f = &g->flavors[0], g->nflavors = 1;
  f->flavor = ts_intern_cstr(model_queue_flavor(kind));
  if (!f->flavor ||
      model__alloc_array(d, s->n, sizeof *g->covered, (void **)&g->covered) != TS_OK ||
      model__alloc_array(d, s->n, sizeof *f->resources, (void **)&f->resources) != TS_OK)
    return f->flavor ? d->err->code : model__fail(d, TS_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < s->n; i++) {
    const qres *r = &s->r[i];
    model_quota *x = &f->resources[i];
    g->covered[i] = r->name;
    g->ncovered = f->nresources = i + 1;
    x->resource = r->name;
    x->nominal = r->has[F_NOMINAL] ? r->v[F_NOMINAL] : ts_quantity_from_int(0, TS_QFMT_DECIMAL_SI);
    if (r->has[F_GUARANTEE] && ts_quantity_cmp(&r->v[F_GUARANTEE], &x->nominal) > 0)
      x->nominal = r->v[F_GUARANTEE];
    if (r->has[F_CAP]) {
      x->nominal = qmin(&x->nominal, &r->v[F_CAP]);
      x->has_borrowing = true;
      x->borrowing = ts_quantity_sub0(&r->v[F_CAP], &x->nominal);
    }
    if (r->has[F_GUARANTEE]) {
      ts_quantity kept = qmin(&r->v[F_GUARANTEE], &x->nominal);
      x->has_lending = true;
      x->lending = ts_quantity_sub0(&x->nominal, &kept);
    }
  }
  return TS_OK;
}

/* What both kinds share: every namespace, preemption as both projects do it, uncovered
 * resources free. */
static void queue_defaults(model_cluster_queue *q) {
  q->ns_selector.present = true; /* empty: every namespace */
  q->queueing = MODEL_BEST_EFFORT_FIFO;
  q->within_cq = MODEL_PREEMPT_LOWER_PRIORITY;
  q->reclaim_cohort = MODEL_PREEMPT_ANY;
  q->borrow_cohort = MODEL_PREEMPT_NEVER;
  q->when_can_borrow = MODEL_FUNGIBILITY_MAY_STOP_SEARCH;
  q->when_can_preempt = MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR;
  q->fair_weight = ts_quantity_from_int(1, TS_QFMT_DECIMAL_SI);
  q->uncovered_free = true;
}

static ts_rc parent(mdec *d, json_t *spec, const char *key, model_obj *o, const char **out) {
  ts_rc rc = model__intern(d, spec, key, out, false);
  if (rc != TS_OK) return rc;
  if (*out && !**out) *out = NULL;
  if (*out && !strcmp(*out, o->name))
    return model__fail_at(d, key, "a queue cannot be its own parent");
  return TS_OK;
}

ts_rc model__decode_volcano_queue(mdec *d, json_t *root, model_obj *o) {
  model_cluster_queue *q = (model_cluster_queue *)o;
  qset *s = qset_base(d);
  ts_rc rc;
  json_t *spec, *guarantee;
  bool has = false, reclaimable = true;
  static const char *const strategies[] = {"traverse", "fifo"};
  int32_t weight = 1;
  int strategy = 0;
  size_t mark;
  queue_defaults(q);
  if (!s) return d->err->code;
  spec = model__object(d, root, "spec", &rc);
  if (rc == TS_OK && spec) {
    mark = model__push(d, "spec");
    guarantee = model__object(d, spec, "guarantee", &rc);
    if (rc == TS_OK && guarantee) {
      size_t m2 = model__push(d, "guarantee");
      rc = resource_list(d, guarantee, "resource", s, F_GUARANTEE);
      if (rc == TS_OK) model__pop(d, m2);
    }
    if (rc == TS_OK) rc = resource_list(d, spec, "deserved", s, F_NOMINAL);
    if (rc == TS_OK) rc = resource_list(d, spec, "capability", s, F_CAP);
    if (rc == TS_OK) rc = model__int32(d, spec, "weight", &weight, &has);
    if (rc == TS_OK && has && weight < 0) rc = model__fail_at(d, "weight", "must not be negative");
    if (rc == TS_OK) rc = model__bool(d, spec, "reclaimable", &reclaimable, NULL);
    if (rc == TS_OK) rc = parent(d, spec, "parent", o, &q->cohort);
    if (rc == TS_OK) rc = model__enum(d, spec, "dequeueStrategy", strategies, 2, &strategy);
    if (rc == TS_OK) model__pop(d, mark);
  }
  if (rc == TS_OK) rc = build_group(d, s, MODEL_VOLCANO_QUEUE, q);
  ts_free(s);
  q->has_fair_weight = has;
  q->fair_weight = ts_quantity_from_int(weight, TS_QFMT_DECIMAL_SI);
  q->not_reclaimable = !reclaimable;
  q->queueing = strategy ? MODEL_STRICT_FIFO : MODEL_BEST_EFFORT_FIFO;
  return rc;
}

/* A KAI number (float64 in KAI's API) into *out; -1 allowed. */
static ts_rc number(mdec *d, json_t *parent, const char *key, double *out) {
  json_t *v = json_object_get(parent, key);
  *out = 0;
  if (!v || json_is_null(v)) return TS_OK;
  if (!json_is_number(v)) return model__fail_at(d, key, "must be a number");
  *out = json_number_value(v);
  if (!isfinite(*out) || (*out < 0 && *out != -1) || *out > UNLIMITED)
    return model__fail_at(d, key, "must be -1 or a number from 0 to 1e15");
  return TS_OK;
}

/* KAI's value v of a resource (0 gpu, 1 cpu, 2 memory) in KAI's unit, as a quantity ("1500m",
 * "4096000000", "2"). Unlimited (-1, or past what the model can count) is 10^15 GPUs, 10^15
 * CPUs or 1Ei bytes: more than any cluster, and still an int64 in the model's units. */
static ts_quantity kai_amount(int which, double v) {
  if (which == 1) {
    double cores = v < 0 || v / 1000 >= UNLIMITED ? UNLIMITED : v / 1000;
    return ts_quantity_from_milli((int64_t)llround(cores * 1000), TS_QFMT_DECIMAL_SI);
  }
  if (which == 2) {
    if (v < 0 || v * 1e6 >= 0x1p60)
      return ts_quantity_from_int(INT64_C(1) << 60, TS_QFMT_BINARY_SI);
    return ts_quantity_from_int((int64_t)llround(v * 1e6), TS_QFMT_DECIMAL_SI);
  }
  if (v < 0 || v >= UNLIMITED) return ts_quantity_from_int((int64_t)UNLIMITED, TS_QFMT_DECIMAL_SI);
  return ts_quantity_from_milli((int64_t)floor(v * 1000), TS_QFMT_DECIMAL_SI); /* GPUs */
}

ts_rc model__decode_kai_queue(mdec *d, json_t *root, model_obj *o) {
  static const char *const keys[] = {"gpu", "cpu", "memory"};
  static const char *const names[] = {"nvidia.com/gpu", "cpu", "memory"};
  model_cluster_queue *q = (model_cluster_queue *)o;
  qset *s = qset_base(d);
  ts_rc rc = TS_OK;
  json_t *spec, *res = NULL;
  double gpu_weight = 0;
  size_t mark;
  queue_defaults(q);
  if (!s) return d->err->code;
  spec = model__object(d, root, "spec", &rc);
  if (rc == TS_OK && !spec) rc = model__fail(d, TS_EINVAL, "spec.resources: is required");
  if (rc == TS_OK) {
    mark = model__push(d, "spec");
    if ((rc = parent(d, spec, "parentQueue", o, &q->cohort)) == TS_OK)
      res = model__object(d, spec, "resources", &rc);
    if (rc == TS_OK && !res) rc = model__fail_at(d, "resources", "is required");
    for (int i = 0; rc == TS_OK && i < 3; i++) {
      json_t *r = model__object(d, res, keys[i], &rc);
      double quota = 0, limit = 0, weight = 0;
      qres *x;
      size_t m2 = model__push(d, "resources"), m3;
      if (rc != TS_OK) break;
      m3 = model__push(d, keys[i]);
      if (r && ((rc = number(d, r, "quota", &quota)) || (rc = number(d, r, "limit", &limit)) ||
                (rc = number(d, r, "overQuotaWeight", &weight))))
        break;
      if (weight < 0) {
        rc = model__fail_at(d, "overQuotaWeight", "must not be negative");
        break;
      }
      model__pop(d, m3);
      model__pop(d, m2);
      if (!(x = qset_get(d, s, names[i]))) {
        rc = d->err->code;
        break;
      }
      x->v[F_NOMINAL] = kai_amount(i, quota), x->has[F_NOMINAL] = true;
      if (limit >= 0) x->v[F_CAP] = kai_amount(i, limit), x->has[F_CAP] = true;
      if (i == 0) gpu_weight = weight;
    }
    if (rc == TS_OK) model__pop(d, mark);
  }
  if (rc == TS_OK) rc = build_group(d, s, MODEL_KAI_QUEUE, q);
  ts_free(s);
  q->has_fair_weight = true;
  q->fair_weight = ts_quantity_from_milli((int64_t)llround(gpu_weight * 1000), TS_QFMT_DECIMAL_SI);
  return rc;
}

void model__free_volcano_queue(model_obj *o) {
  model__free_cluster_queue(o);
}

void model__free_kai_queue(model_obj *o) {
  model__free_cluster_queue(o);
}
