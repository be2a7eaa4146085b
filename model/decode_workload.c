/* model/decode_workload.c - Kueue's Workload (kueue.x-k8s.io v1beta2 and v1beta1): its pod
 * sets, the admission Kueue wrote (ClusterQueue, a ResourceFlavor per resource of each pod set,
 * the topology assignment) and its conditions. Tessera reads it when Kueue admits and Tessera
 * places (queueing.admission: kueue).
 *
 * A topology assignment names, for each domain of the lowest level, the domain's value at every
 * level and the number of pods that go there. v1beta1 lists the domains ({values, count});
 * v1beta2 packs them into slices of domainCount domains whose values per level are one value
 * for all (universal) or a list of roots between a common prefix and suffix (individual), and
 * whose pod counts are one count for all or a list. Both decode to the same list of domains. */
#include "model/model_int.h"

#include <stdio.h>
#include <string.h>

#define WL_MAX_PODSETS 64     /* spec.podSets (Kueue allows 8; a margin for later versions) */
#define WL_MAX_FLAVORS 64     /* resources with a flavor per pod set assignment */
#define WL_MAX_LEVELS  16     /* topology levels (Kueue's Topology allows 16) */
#define WL_MAX_DOMAINS 100000 /* domains of one assignment (Kueue's limit per slice) */

/* The interned string prefix + root + suffix; NULL when out of memory. */
static const char *joined(const char *prefix, const char *root, const char *suffix) {
  char buf[1024];
  int n = snprintf(buf, sizeof buf, "%s%s%s", prefix, root, suffix);
  return n >= 0 && (size_t)n < sizeof buf ? ts_intern_cstr(buf) : NULL;
}

/* Room for `more` domains in ps (grown as slices come). */
static ts_rc grow_domains(mdec *d, model_wl_podset *ps, size_t more) {
  size_t n = (size_t)ps->ndomains + more;
  model_wl_domain *nd;
  if (n > WL_MAX_DOMAINS)
    return model__fail(d, TS_ELIMIT, "must assign at most %d domains", WL_MAX_DOMAINS);
  if (!(nd = ts_realloc(ps->domains, (n + 1) * sizeof *nd)))
    return model__fail(d, TS_ENOMEM, "out of memory");
  ps->domains = nd;
  return TS_OK;
}

/* The next domain of ps, with room for its values (grow_domains made room for it). */
static model_wl_domain *next_domain(mdec *d, model_wl_podset *ps, ts_rc *rc) {
  model_wl_domain *dom = &ps->domains[ps->ndomains];
  memset(dom, 0, sizeof *dom);
  if (!(dom->values = ts_calloc(ps->nlevels + 1, sizeof *dom->values))) {
    *rc = model__fail(d, TS_ENOMEM, "out of memory");
    return NULL;
  }
  ps->ndomains++;
  return dom;
}

static ts_rc count_of(mdec *d, json_t *v, int32_t *out) {
  json_int_t n;
  if (!json_is_integer(v)) return model__fail(d, TS_EINVAL, "must be an integer");
  n = json_integer_value(v);
  if (n < 0 || n > INT32_MAX) return model__fail(d, TS_EINVAL, "must be from 0 to %d", INT32_MAX);
  *out = (int32_t)n;
  return TS_OK;
}

/* v1beta1: domains[] = {values: [one per level], count}. */
static ts_rc domains_v1beta1(mdec *d, json_t *ta, model_wl_podset *ps) {
  ts_rc rc;
  json_t *arr = model__array(d, ta, "domains", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK) return rc;
  if (!arr) return model__fail_at(d, "domains", "is required");
  mark = model__push(d, "domains");
  if ((rc = grow_domains(d, ps, json_array_size(arr))) != TS_OK) return rc;
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_wl_domain *dom = next_domain(d, ps, &rc);
    const char **vals = NULL;
    uint32_t nvals = 0;
    bool has = false;
    if (!dom) return rc;
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__strings(d, e, "values", &vals, &nvals)) != TS_OK) return rc;
    if (nvals != ps->nlevels) {
      ts_free(vals);
      return model__fail_at(d, "values", "must have one value per level (%u), not %u", ps->nlevels,
                            nvals);
    }
    memcpy(dom->values, vals, nvals * sizeof *vals);
    ts_free(vals);
    if ((rc = model__int32(d, e, "count", &dom->count, &has)) != TS_OK) return rc;
    if (!has || dom->count < 0) return model__fail_at(d, "count", "must be at least 0");
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

/* The value of domain i at one level of a v1beta2 slice: universal, or prefix + roots[i] +
 * suffix. */
static ts_rc level_value(mdec *d, json_t *lv, size_t i, size_t ndom, const char **out) {
  json_t *u = json_object_get(lv, "universal"), *ind = json_object_get(lv, "individual"), *roots;
  const char *pre, *suf, *root;
  if (!json_is_object(lv)) return model__fail(d, TS_EINVAL, "must be an object");
  if (json_is_string(u) && !ind) {
    *out = ts_intern_cstr(json_string_value(u));
    return *out ? TS_OK : model__fail(d, TS_ENOMEM, "out of memory");
  }
  if (u || !json_is_object(ind))
    return model__fail(d, TS_EINVAL, "must set exactly one of universal, individual");
  roots = json_object_get(ind, "roots");
  pre = json_string_value(json_object_get(ind, "prefix"));
  suf = json_string_value(json_object_get(ind, "suffix"));
  if (!json_is_array(roots) || json_array_size(roots) != ndom)
    return model__fail_at(d, "individual.roots", "must have domainCount (%zu) items", ndom);
  if (!(root = json_string_value(json_array_get(roots, i))))
    return model__fail_at(d, "individual.roots", "must be strings");
  if (!(*out = joined(pre ? pre : "", root, suf ? suf : "")))
    return model__fail_at(d, "individual.roots", "a value is too long");
  return TS_OK;
}

/* v1beta2: slices[] = {domainCount, podCounts: {universal | individual}, valuesPerLevel}. */
static ts_rc domains_v1beta2(mdec *d, json_t *ta, model_wl_podset *ps) {
  ts_rc rc;
  json_t *arr = model__array(d, ta, "slices", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK) return rc;
  if (!arr) return model__fail_at(d, "slices", "is required");
  mark = model__push(d, "slices");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    json_t *levels, *counts, *cu, *ci;
    int32_t ndom = 0;
    bool has = false;
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__int32(d, e, "domainCount", &ndom, &has)) != TS_OK) return rc;
    if (!has || ndom < 1) return model__fail_at(d, "domainCount", "must be at least 1");
    levels = model__array(d, e, "valuesPerLevel", &rc);
    if (rc != TS_OK) return rc;
    if (!levels || json_array_size(levels) != ps->nlevels)
      return model__fail_at(d, "valuesPerLevel", "must have one item per level (%u)", ps->nlevels);
    counts = model__object(d, e, "podCounts", &rc);
    if (rc != TS_OK) return rc;
    cu = counts ? json_object_get(counts, "universal") : NULL;
    ci = counts ? json_object_get(counts, "individual") : NULL;
    if (!counts || !cu == !ci)
      return model__fail_at(d, "podCounts", "must set exactly one of universal, individual");
    if (ci && (!json_is_array(ci) || json_array_size(ci) != (size_t)ndom))
      return model__fail_at(d, "podCounts.individual", "must have domainCount (%d) items", ndom);
    if ((rc = grow_domains(d, ps, (size_t)ndom)) != TS_OK) return rc;
    for (size_t k = 0; k < (size_t)ndom; k++) {
      model_wl_domain *dom = next_domain(d, ps, &rc);
      size_t m3;
      if (!dom) return rc;
      m3 = model__push(d, "podCounts");
      model__push(d, ci ? "individual" : "universal");
      if (ci) model__push_index(d, k);
      if ((rc = count_of(d, ci ? json_array_get(ci, k) : cu, &dom->count)) != TS_OK) return rc;
      model__pop(d, m3);
      m3 = model__push(d, "valuesPerLevel");
      for (uint32_t l = 0; l < ps->nlevels; l++) {
        size_t m4 = model__push_index(d, l);
        if ((rc = level_value(d, json_array_get(levels, l), k, (size_t)ndom, &dom->values[l])))
          return rc;
        model__pop(d, m4);
      }
      model__pop(d, m3);
    }
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc topology_assignment(mdec *d, json_t *psa, model_wl_podset *ps) {
  ts_rc rc;
  json_t *ta = model__object(d, psa, "topologyAssignment", &rc);
  size_t mark;
  if (rc != TS_OK || !ta) return rc;
  mark = model__push(d, "topologyAssignment");
  if ((rc = model__strings(d, ta, "levels", &ps->levels, &ps->nlevels)) != TS_OK) return rc;
  if (!ps->nlevels || ps->nlevels > WL_MAX_LEVELS)
    return model__fail_at(d, "levels", "must have from 1 to %d items", WL_MAX_LEVELS);
  rc = json_object_get(ta, "slices") || strcmp(d->version, "v1beta1") ? domains_v1beta2(d, ta, ps)
                                                                      : domains_v1beta1(d, ta, ps);
  if (rc != TS_OK) return rc;
  model__pop(d, mark);
  return TS_OK;
}

/* status.admission.podSetAssignments[i], onto the pod set of its name. */
static ts_rc assignment(mdec *d, json_t *e, model_workload *w) {
  ts_rc rc;
  const char *name = NULL, *delayed = NULL;
  json_t *flavors, *v;
  model_wl_podset *ps = NULL;
  bool has = false;
  const char *res;
  if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
  if ((rc = model__intern(d, e, "name", &name, false)) != TS_OK) return rc;
  if (!name) name = ts_intern_cstr("main");
  for (uint32_t i = 0; i < w->npodsets; i++)
    if (w->podsets[i].name == name) ps = &w->podsets[i];
  if (!ps) return model__fail_at(d, "name", "names no pod set of spec.podSets: \"%s\"", name);
  if (ps->assigned) return model__fail_at(d, "name", "Duplicate value: \"%s\"", name);
  ps->assigned = true;
  ps->admitted = ps->count;
  if ((rc = model__int32(d, e, "count", &ps->admitted, &has)) != TS_OK) return rc;
  if (ps->admitted < 0 || ps->admitted > ps->count)
    return model__fail_at(d, "count", "must be from 0 to the pod set's count (%d)", ps->count);
  flavors = model__object(d, e, "flavors", &rc);
  if (rc != TS_OK) return rc;
  if (flavors && json_object_size(flavors) > WL_MAX_FLAVORS)
    return model__fail_at(d, "flavors", "must have at most %d entries", WL_MAX_FLAVORS);
  if (flavors && (rc = model__alloc_array(d, json_object_size(flavors), sizeof *ps->flavors,
                                          (void **)&ps->flavors)) != TS_OK)
    return rc;
  json_object_foreach(flavors, res, v) {
    const char *fl = json_string_value(v);
    if (!fl || !*fl) {
      model__push(d, "flavors");
      model__push_key(d, res);
      return model__fail(d, TS_EINVAL, "must be the name of a ResourceFlavor");
    }
    ps->flavors[ps->nflavors++] = (model_kv){ts_intern_cstr(res), ts_intern_cstr(fl)};
  }
  if ((rc = model__string(d, e, "delayedTopologyRequest", &delayed, false)) != TS_OK) return rc;
  ps->topology_delayed = delayed && !strcmp(delayed, "Pending");
  return topology_assignment(d, e, ps);
}

static ts_rc admission(mdec *d, json_t *status, model_workload *w) {
  ts_rc rc;
  json_t *adm = model__object(d, status, "admission", &rc), *arr, *e;
  size_t i, mark, m2;
  if (rc != TS_OK || !adm) return rc;
  mark = model__push(d, "admission");
  if ((rc = model__intern(d, adm, "clusterQueue", &w->cluster_queue, true)) != TS_OK) return rc;
  arr = model__array(d, adm, "podSetAssignments", &rc);
  if (rc != TS_OK) return rc;
  m2 = model__push(d, "podSetAssignments");
  json_array_foreach(arr, i, e) {
    size_t m3 = model__push_index(d, i);
    if ((rc = assignment(d, e, w)) != TS_OK) return rc;
    model__pop(d, m3);
  }
  model__pop(d, m2);
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc podsets(mdec *d, json_t *spec, model_workload *w) {
  ts_rc rc;
  json_t *arr = model__array(d, spec, "podSets", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK) return rc;
  if (!arr || !json_array_size(arr))
    return model__fail_at(d, "podSets", "must have at least 1 item");
  if (json_array_size(arr) > WL_MAX_PODSETS)
    return model__fail_at(d, "podSets", "must have at most %d items", WL_MAX_PODSETS);
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof *w->podsets, (void **)&w->podsets)))
    return rc;
  mark = model__push(d, "podSets");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    model_wl_podset *ps = &w->podsets[w->npodsets++];
    bool has = false;
    if (!json_is_object(e)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = model__intern(d, e, "name", &ps->name, false)) ||
        (rc = model__int32(d, e, "count", &ps->count, &has)))
      return rc;
    if (!ps->name) ps->name = ts_intern_cstr("main");
    if (!has || ps->count < 0) return model__fail_at(d, "count", "must be at least 0");
    for (uint32_t k = 0; k + 1 < w->npodsets; k++)
      if (w->podsets[k].name == ps->name)
        return model__fail_at(d, "name", "Duplicate value: \"%s\"", ps->name);
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

/* The flags of the conditions Kueue sets, and why the workload is not admitted. */
static ts_rc state(mdec *d, const model_condition *c, uint32_t n, model_workload *w) {
  const model_condition *why = NULL;
  for (uint32_t i = 0; i < n; i++) {
    bool on = !strcmp(c[i].status, "True");
    if (!strcmp(c[i].type, "QuotaReserved")) {
      w->quota_reserved = on;
      if (!on && (!why || strcmp(why->type, "Evicted"))) why = &c[i];
    } else if (!strcmp(c[i].type, "Admitted")) {
      w->admitted = on;
      if (!on && !why) why = &c[i];
    } else if (!strcmp(c[i].type, "Evicted")) {
      w->evicted = on;
      if (on) why = &c[i];
    } else if (!strcmp(c[i].type, "Finished")) {
      w->finished = on;
    }
  }
  if (why && why->message && *why->message && !(w->why = ts_strdup(why->message)))
    return model__fail(d, TS_ENOMEM, "out of memory");
  return TS_OK;
}

ts_rc model__decode_workload(mdec *d, json_t *root, model_obj *o) {
  model_workload *w = (model_workload *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *status;
  model_condition *conds = NULL;
  uint32_t nconds = 0;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!spec) return model__fail(d, TS_EINVAL, "spec.podSets: is required");
  w->active = true;
  mark = model__push(d, "spec");
  if ((rc = model__intern(d, spec, "queueName", &w->queue_name, false)) ||
      (rc = model__bool(d, spec, "active", &w->active, NULL)) || (rc = podsets(d, spec, w)))
    return rc;
  if (w->queue_name && !*w->queue_name) w->queue_name = NULL;
  model__pop(d, mark);
  status = model__object(d, root, "status", &rc);
  if (rc != TS_OK || !status) return rc;
  mark = model__push(d, "status");
  rc = admission(d, status, w);
  if (rc == TS_OK) rc = model__conditions(d, status, &conds, &nconds);
  if (rc == TS_OK) rc = state(d, conds, nconds, w);
  model__conditions_free(conds, nconds);
  if (rc != TS_OK) return rc;
  model__pop(d, mark);
  if (w->admitted && !w->cluster_queue)
    return model__fail(d, TS_EINVAL, "status.admission: is required when Admitted is True");
  return TS_OK;
}

void model__free_workload(model_obj *o) {
  model_workload *w = (model_workload *)o;
  for (uint32_t i = 0; i < w->npodsets; i++) {
    model_wl_podset *ps = &w->podsets[i];
    ts_free(ps->flavors);
    ts_free(ps->levels);
    for (uint32_t k = 0; k < ps->ndomains; k++) ts_free(ps->domains[k].values);
    ts_free(ps->domains);
  }
  ts_free(w->podsets);
  ts_free(w->why);
}
