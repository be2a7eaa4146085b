/* queueing/devmap.c - DRA devices charged to quota, as Kueue's deviceClassMappings, with a
 * weight per DeviceClass so that a partition (a MIG slice) can count as a fraction of a GPU.
 * Sums are exact quantities per resource, rounded up once at the end to the quota tree's units
 * (q_amount: thousandths for cpu and nvidia.com/gpu, else whole units). */
#include "queueing/q_int.h"

#include <string.h>

static const q_devmap_entry *lookup(const q_devmap *m, const char *cls) {
  for (uint32_t i = 0; i < m->n; i++)
    if (m->v[i].device_class == cls || !strcmp(m->v[i].device_class, cls)) return &m->v[i];
  return NULL;
}

ts_rc q_devmap_add(q_devmap *m, const char *device_class, const char *resource, const char *weight,
                   ts_err *err) {
  q_devmap_entry e, *v;
  ts_rc rc;
  if (!device_class || !*device_class)
    return ts_err_set(err, TS_EINVAL, "deviceClassMappings: deviceClassName: must not be empty");
  if (lookup(m, device_class))
    return ts_err_set(err, TS_EINVAL, "deviceClassMappings[%s]: mapped more than once",
                      device_class);
  if (!resource || !*resource)
    return ts_err_set(err, TS_EINVAL, "deviceClassMappings[%s].name: must not be empty",
                      device_class);
  if (!(resource = ts_intern_cstr(resource))) return TS_ENOMEM;
  for (e.slot = 0; e.slot < m->nres && m->res[e.slot] != resource; e.slot++) {
  }
  if (e.slot == Q_DEVMAP_MAX_RESOURCES)
    return ts_err_set(err, TS_ELIMIT,
                      "deviceClassMappings[%s].name: more than %d distinct quota resources",
                      device_class, Q_DEVMAP_MAX_RESOURCES);
  if ((rc = ts_quantity_parse(weight ? weight : "1", &e.weight, err)) != TS_OK)
    return ts_err_prefix(err, "deviceClassMappings[%s].weight", device_class);
  if (ts_quantity_sign(&e.weight) <= 0)
    return ts_err_set(err, TS_EINVAL, "deviceClassMappings[%s].weight: must be greater than 0",
                      device_class);
  if (!(e.device_class = ts_intern_cstr(device_class))) return TS_ENOMEM;
  if (!(v = ts_realloc(m->v, (m->n + 1) * sizeof *v))) return TS_ENOMEM;
  v[m->n++] = e;
  m->v = v;
  if (e.slot == m->nres) m->res[m->nres++] = resource;
  return TS_OK;
}

void q_devmap_free(q_devmap *m) {
  ts_free(m->v);
  m->v = NULL;
  m->n = m->nres = 0;
}

/* Adds count x weight of cls to sum[slot] (exact). */
static ts_rc add_one(const q_devmap *m, const char *cls, int64_t count, ts_quantity *sum,
                     bool *used, ts_err *err) {
  const q_devmap_entry *e = lookup(m, cls);
  ts_quantity q;
  if (!e)
    return ts_err_set(err, TS_ENOTFOUND,
                      "DeviceClass %s: not mapped to a quota resource "
                      "(deviceClassMappings)",
                      cls);
  if (ts_quantity_mul_int(&e->weight, count, &q) != TS_OK ||
      ts_quantity_add(&sum[e->slot], &q, &sum[e->slot]) != TS_OK)
    return ts_err_set(err, TS_EOVERFLOW, "DeviceClass %s: %lld devices: quota out of range", cls,
                      (long long)count);
  used[e->slot] = true;
  return TS_OK;
}

/* Converts the exact sums to resource units and adds them to out, all or nothing. */
static ts_rc flush(const q_devmap *m, const ts_quantity *sum, const bool *used, int64_t *out,
                   ts_err *err) {
  int64_t v[Q_DEVMAP_MAX_RESOURCES];
  for (uint32_t r = 0; r < m->nres; r++) {
    /* the units: thousandths for cpu and nvidia.com/gpu (q_amount), else whole units */
    bool milli = !strcmp(m->res[r], "cpu") || !strcmp(m->res[r], "nvidia.com/gpu");
    if (used[r] &&
        ((milli ? ts_quantity_milli(&sum[r], &v[r]) : ts_quantity_value(&sum[r], &v[r])) != TS_OK ||
         !ts_add_ok(out[r], v[r], &v[r])))
      return ts_err_set(err, TS_EOVERFLOW, "%s: device quota out of range", m->res[r]);
  }
  for (uint32_t r = 0; r < m->nres; r++)
    if (used[r]) out[r] = v[r];
  return TS_OK;
}

static void sums_init(ts_quantity *sum) {
  for (int r = 0; r < Q_DEVMAP_MAX_RESOURCES; r++)
    sum[r] = ts_quantity_from_int(0, TS_QFMT_DECIMAL_SI);
}

ts_rc q_devmap_quota(const q_devmap *m, const q_device_request *reqs, size_t n, int64_t *out,
                     ts_err *err) {
  ts_quantity sum[Q_DEVMAP_MAX_RESOURCES];
  bool used[Q_DEVMAP_MAX_RESOURCES] = {0};
  ts_rc rc;
  sums_init(sum);
  for (size_t i = 0; i < n; i++)
    if ((rc = add_one(m, reqs[i].device_class, reqs[i].count, sum, used, err)) != TS_OK) return rc;
  return flush(m, sum, used, out, err);
}

ts_rc q_devmap_claim(const q_devmap *m, const model_claim_spec *spec, int64_t *out, ts_err *err) {
  ts_quantity sum[Q_DEVMAP_MAX_RESOURCES];
  bool used[Q_DEVMAP_MAX_RESOURCES] = {0};
  ts_rc rc;
  sums_init(sum);
  for (uint32_t i = 0; i < spec->nrequests; i++) {
    const model_request *rq = &spec->requests[i];
    const model_subrequest *s =
        rq->first_available ? (rq->nsubs ? &rq->subs[0] : NULL) : &rq->exactly;
    if (!s) continue;
    if (s->mode != MODEL_ALLOC_EXACT_COUNT)
      return ts_err_set(err, TS_EUNSUPPORTED,
                        "spec.devices.requests[%u] (%s): allocationMode "
                        "All cannot be charged to quota",
                        i, rq->name);
    if ((rc = add_one(m, s->device_class, s->count, sum, used, err)) != TS_OK)
      return ts_err_prefix(err, "spec.devices.requests[%u] (%s)", i, rq->name);
  }
  return flush(m, sum, used, out, err);
}
