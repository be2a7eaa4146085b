/* tests/conformance/kueue-conformance.c - runs Kueue's scheduling-cycle vectors
 * (tests/data/corpora/kueue/schedule_cases.json, schema in its README): one admission cycle
 * per case in quota-only mode, then compares the admissions (quantities numerically), the
 * preemptions with their reasons, and what is left in the active queues and parked as
 * inadmissible. Prints each failing case with a readable diff, then
 * "N passed, M failed, K skipped". Exits 0 only when nothing failed.
 *
 * The case's objects are turned into real Kueue objects (JSON in the shape of the API) and
 * decoded by model_decode, so the runner exercises the same decoders as the scheduler. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "queueing/queueing.h"

#define NOW_NS   ((int64_t)1800000000 * 1000000000) /* the cases' fixed "now" */
#define DIFF_MAX 8192

/* The gates a case may set and that this implementation honours. */
static const char *const known_gates[] = {"PartialAdmission"};

typedef struct diff {
  char text[DIFF_MAX]; /* the readable differences */
  size_t len;          /* bytes used */
  int n;               /* differences */
} diff;

static void say(diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(diff *d, const char *fmt, ...) {
  va_list ap;
  int n;
  d->n++;
  if (d->len + 8 >= DIFF_MAX) return;
  memcpy(d->text + d->len, "    ", 4);
  d->len += 4;
  va_start(ap, fmt);
  n = vsnprintf(d->text + d->len, DIFF_MAX - d->len - 1, fmt, ap);
  va_end(ap);
  if (n > 0) d->len += (size_t)n < DIFF_MAX - d->len - 1 ? (size_t)n : DIFF_MAX - d->len - 2;
  d->text[d->len++] = '\n';
  d->text[d->len] = 0;
}

static const char *str(json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return s ? s : "";
}

/* ---- case objects -> model ------------------------------------------------------------- */

static json_t *meta(const char *ns, const char *name, json_t *labels) {
  json_t *m = json_pack("{s:s}", "name", name);
  if (ns) json_object_set_new(m, "namespace", json_string(ns));
  if (labels) json_object_set(m, "labels", labels);
  return m;
}

static json_t *kueue(const char *kind, json_t *metadata, json_t *spec) {
  return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", kind,
                   "metadata", metadata, "spec", spec);
}

static json_t *flavor_obj(json_t *f) {
  json_t *spec = json_object(), *v;
  if ((v = json_object_get(f, "taints"))) json_object_set(spec, "nodeTaints", v);
  if ((v = json_object_get(f, "nodeLabels"))) json_object_set(spec, "nodeLabels", v);
  if ((v = json_object_get(f, "tolerations"))) json_object_set(spec, "tolerations", v);
  return kueue("ResourceFlavor", meta(NULL, str(f, "name"), NULL), spec);
}

static json_t *cohort_obj(json_t *c) {
  json_t *spec = json_object(), *v;
  if (json_is_string(v = json_object_get(c, "parent"))) json_object_set(spec, "parentName", v);
  if ((v = json_object_get(c, "resourceGroups"))) json_object_set(spec, "resourceGroups", v);
  if ((v = json_object_get(c, "fairSharing"))) json_object_set(spec, "fairSharing", v);
  return kueue("Cohort", meta(NULL, str(c, "name"), NULL), spec);
}

static json_t *cq_obj(json_t *q) {
  static const char *const copy[] = {"namespaceSelector", "queueingStrategy", "preemption",
                                     "flavorFungibility", "resourceGroups",   "fairSharing",
                                     "stopPolicy"};
  json_t *spec = json_object(), *v;
  if (json_is_string(v = json_object_get(q, "cohort"))) json_object_set(spec, "cohort", v);
  for (size_t i = 0; i < sizeof copy / sizeof *copy; i++)
    if ((v = json_object_get(q, copy[i])) && !json_is_null(v)) json_object_set(spec, copy[i], v);
  return kueue("ClusterQueue", meta(NULL, str(q, "name"), NULL), spec);
}

static json_t *lq_obj(json_t *l) {
  return kueue("LocalQueue", meta(str(l, "namespace"), str(l, "name"), NULL),
               json_pack("{s:s}", "clusterQueue", str(l, "clusterQueue")));
}

static json_t *ns_obj(json_t *n) {
  return json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "Namespace", "metadata",
                   meta(NULL, str(n, "name"), json_object_get(n, "labels")));
}

typedef json_t *(*obj_fn)(json_t *);

/* Decodes every object of the case's list key into m. */
static int load_list(model *m, json_t *c, const char *key, obj_fn fn, diff *d) {
  json_t *arr = json_object_get(c, key), *e;
  size_t i;
  json_array_foreach(arr, i, e) {
    json_t *o = fn(e);
    ts_err err;
    ts_err_clear(&err);
    if (model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, &err) != TS_OK) {
      say(d, "%s[%zu]: %s", key, i, err.text);
      json_decref(o);
      return -1;
    }
    json_decref(o);
  }
  return 0;
}

/* The resource-name table of the case being run (its model's). */
static model_resources *cur_table;

static model *load_model(json_t *c, diff *d) {
  model *m = model_new();
  if (m) cur_table = model_resources_of(m);
  if (!m) return NULL;
  if (load_list(m, c, "namespaces", ns_obj, d) ||
      load_list(m, c, "resourceFlavors", flavor_obj, d) ||
      load_list(m, c, "cohorts", cohort_obj, d) || load_list(m, c, "clusterQueues", cq_obj, d) ||
      load_list(m, c, "localQueues", lq_obj, d)) {
    model_free(m);
    return NULL;
  }
  return m;
}

/* ---- workloads ------------------------------------------------------------------------- */

typedef struct wset {
  ts_arena a;    /* everything below */
  q_workload *v; /* workloads */
  size_t n;      /* entries */
} wset;

static int amount(const char *res, json_t *q, int64_t *out) {
  ts_quantity x;
  int id = model_resource_id(cur_table, res);
  const char *s = json_string_value(q);
  if (id < 0 || !s || ts_quantity_parse(s, &x, NULL) != TS_OK) return -1;
  return q_amount(cur_table, id, &x, out) == TS_OK ? 0 : -1;
}

/* Per-pod requests as a model_rq list sorted by resource id. */
static int requests(wset *w, json_t *reqs, q_podset *ps) {
  const char *k;
  json_t *v;
  model_rq *rq = ts_arena_alloc(&w->a, (json_object_size(reqs) + 1) * sizeof *rq);
  uint32_t n = 0;
  if (!rq) return -1;
  json_object_foreach(reqs, k, v) {
    uint32_t at = n;
    int64_t x;
    if (amount(k, v, &x)) return -1;
    while (at > 0 && rq[at - 1].id > model_resource_id(cur_table, k)) rq[at] = rq[at - 1], at--;
    rq[at] = (model_rq){(uint16_t)model_resource_id(cur_table, k), x};
    n++;
  }
  ps->requests = rq;
  ps->nrequests = n;
  return 0;
}

static int podsets(wset *w, json_t *arr, q_workload *wl) {
  json_t *e;
  size_t i;
  wl->npodsets = (uint32_t)json_array_size(arr);
  if (!(wl->podsets = ts_arena_alloc(&w->a, (wl->npodsets + 1) * sizeof *wl->podsets))) return -1;
  memset(wl->podsets, 0, (wl->npodsets + 1) * sizeof *wl->podsets);
  json_array_foreach(arr, i, e) {
    q_podset *ps = &wl->podsets[i];
    ps->name = ts_intern_cstr(str(e, "name"));
    ps->count = (int32_t)json_integer_value(json_object_get(e, "count"));
    ps->min_count = (int32_t)json_integer_value(json_object_get(e, "minCount"));
    if (requests(w, json_object_get(e, "requests"), ps)) return -1;
  }
  return 0;
}

/* An <admission> of the schema as a q_admission. */
static int admission(wset *w, json_t *a, q_admission *out) {
  json_t *arr = json_object_get(a, "podSetAssignments"), *e;
  size_t i;
  out->cluster_queue = ts_intern_cstr(str(a, "clusterQueue"));
  out->npodsets = (uint32_t)json_array_size(arr);
  if (!(out->podsets = ts_arena_alloc(&w->a, (out->npodsets + 1) * sizeof *out->podsets)))
    return -1;
  json_array_foreach(arr, i, e) {
    q_psa *p = &out->podsets[i];
    json_t *fl = json_object_get(e, "flavors"), *use = json_object_get(e, "resourceUsage"), *v;
    const char *k;
    p->name = ts_intern_cstr(str(e, "name"));
    p->count = (int32_t)json_integer_value(json_object_get(e, "count"));
    p->mode = Q_FIT;
    p->nrf = 0;
    if (!(p->rf = ts_arena_alloc(&w->a, (json_object_size(fl) + 1) * sizeof *p->rf))) return -1;
    json_object_foreach(fl, k, v) {
      int64_t total = 0;
      json_t *u = json_object_get(use, k);
      if (u && amount(k, u, &total)) return -1;
      p->rf[p->nrf++] = (q_rflavor){(uint16_t)model_resource_id(cur_table, k),
                                    ts_intern_cstr(json_string_value(v)), total, Q_FIT};
    }
  }
  return 0;
}

static int workload(wset *w, json_t *e, q_workload *wl) {
  json_t *ts = json_object_get(e, "creationTimestampOffsetSeconds"), *adm;
  char *key;
  size_t len = strlen(str(e, "namespace")) + strlen(str(e, "name")) + 2;
  memset(wl, 0, sizeof *wl);
  if (!(key = ts_arena_alloc(&w->a, len))) return -1;
  snprintf(key, len, "%s/%s", str(e, "namespace"), str(e, "name"));
  wl->ns = ts_intern_cstr(str(e, "namespace"));
  wl->name = key + strlen(str(e, "namespace")) + 1;
  wl->key = key;
  if (json_is_string(json_object_get(e, "queue")))
    wl->local_queue = ts_intern_cstr(str(e, "queue"));
  wl->priority = (int32_t)json_integer_value(json_object_get(e, "priority"));
  wl->queue_ns = json_is_integer(ts) ? NOW_NS + json_integer_value(ts) * 1000000000 : 0;
  if (podsets(w, json_object_get(e, "podSets"), wl)) return -1;
  if (json_is_object(adm = json_object_get(e, "admission"))) {
    q_admission *a = ts_arena_alloc(&w->a, sizeof *a);
    if (!a || admission(w, adm, a)) return -1;
    wl->admission = a;
  }
  return 0;
}

static int load_workloads(json_t *c, wset *w, diff *d) {
  json_t *arr = json_object_get(c, "workloads"), *e;
  size_t i;
  ts_arena_init(&w->a, 16384);
  w->n = json_array_size(arr);
  if (!(w->v = ts_arena_alloc(&w->a, (w->n + 1) * sizeof *w->v))) return -1;
  json_array_foreach(arr, i, e) {
    if (workload(w, e, &w->v[i])) {
      say(d, "workloads[%zu]: cannot read it", i);
      return -1;
    }
  }
  return 0;
}

/* ---- comparisons ----------------------------------------------------------------------- */

static const q_psa *find_psa(const q_admission *a, const char *name) {
  for (uint32_t i = 0; i < a->npodsets; i++)
    if (a->podsets[i].name && !strcmp(a->podsets[i].name, name)) return &a->podsets[i];
  return NULL;
}

static const q_rflavor *find_rf(const q_psa *p, int id) {
  for (uint32_t i = 0; i < p->nrf; i++)
    if (p->rf[i].resource == id) return &p->rf[i];
  return NULL;
}

static void cmp_psa(diff *d, const char *key, json_t *want, const q_psa *got) {
  json_t *fl = json_object_get(want, "flavors"), *use = json_object_get(want, "resourceUsage"), *v;
  const char *k, *ps = str(want, "name");
  if (json_integer_value(json_object_get(want, "count")) != got->count)
    say(d, "assignments[%s] podSet %s: count %d, want %lld", key, ps, got->count,
        (long long)json_integer_value(json_object_get(want, "count")));
  json_object_foreach(fl, k, v) {
    const q_rflavor *rf = find_rf(got, model_resource_id(cur_table, k));
    int64_t total = 0;
    if (!rf) {
      say(d, "assignments[%s] podSet %s: no flavor for %s, want %s", key, ps, k,
          json_string_value(v));
      continue;
    }
    if (strcmp(rf->flavor, json_string_value(v)))
      say(d, "assignments[%s] podSet %s: %s on flavor %s, want %s", key, ps, k, rf->flavor,
          json_string_value(v));
    if (json_object_get(use, k) && !amount(k, json_object_get(use, k), &total) &&
        total != rf->total) {
      char b[TS_QUANTITY_STR_MAX];
      model_resource_format(cur_table, rf->resource, rf->total, b);
      say(d, "assignments[%s] podSet %s: %s usage %s, want %s", key, ps, k, b,
          json_string_value(json_object_get(use, k)));
    }
  }
  if (got->nrf != json_object_size(fl))
    say(d, "assignments[%s] podSet %s: %u resources assigned, want %zu", key, ps, got->nrf,
        json_object_size(fl));
}

static void cmp_admission(diff *d, const char *key, json_t *want, const q_admission *got) {
  json_t *arr = json_object_get(want, "podSetAssignments"), *e;
  size_t i;
  if (strcmp(got->cluster_queue, str(want, "clusterQueue")))
    say(d, "assignments[%s]: ClusterQueue %s, want %s", key, got->cluster_queue,
        str(want, "clusterQueue"));
  json_array_foreach(arr, i, e) {
    const q_psa *p = find_psa(got, str(e, "name"));
    if (!p)
      say(d, "assignments[%s]: no podSet %s", key, str(e, "name"));
    else
      cmp_psa(d, key, e, p);
  }
}

static void cmp_assignments(diff *d, q_tree *t, json_t *want) {
  const q_workload *wl;
  const q_admission *a;
  const char *k;
  json_t *v;
  for (size_t i = 0; (wl = q_tree_admitted(t, i, &a)); i++) {
    json_t *w = json_object_get(want, wl->key);
    if (!w)
      say(d, "assignments: %s admitted in ClusterQueue %s, want not admitted", wl->key,
          a->cluster_queue);
    else
      cmp_admission(d, wl->key, w, a);
  }
  json_object_foreach(want, k, v) {
    if (!q_tree_admission(t, k))
      say(d, "assignments: %s not admitted, want admitted in %s", k, str(v, "clusterQueue"));
  }
}

static int str_cmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Formats a sorted list of strings as "[a, b]". */
static void fmt_list(char *out, size_t cap, const char **v, size_t n) {
  size_t len = 0;
  qsort(v, n, sizeof *v, str_cmp);
  len += (size_t)snprintf(out, cap, "[");
  for (size_t i = 0; i < n && len < cap; i++)
    len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "", v[i]);
  if (len < cap) snprintf(out + len, cap - len, "]");
}

static void json_list(json_t *arr, const char **v, size_t *n) {
  json_t *e;
  size_t i;
  *n = 0;
  json_array_foreach(arr, i, e) v[(*n)++] = json_string_value(e);
}

/* Compares one queue dump (left or inadmissibleLeft) with the expected map. */
static void cmp_queue(diff *d, const char *what, q_queues *qs, json_t *want, bool parked) {
  const char *const *names;
  size_t nn = q_queues_cluster_queues(qs, &names);
  const char **cqs = malloc((nn + json_object_size(want) + 1) * sizeof *cqs), *k;
  size_t ncq = 0;
  json_t *v;
  for (size_t i = 0; i < nn; i++) cqs[ncq++] = names[i];
  json_object_foreach(want, k, v) cqs[ncq++] = k;
  qsort(cqs, ncq, sizeof *cqs, str_cmp);
  for (size_t i = 0; i < ncq; i++) {
    q_workload *const *wv;
    size_t n, nw;
    const char *got[256], *exp[256];
    char g[2048], w[2048];
    if (i && !strcmp(cqs[i], cqs[i - 1])) continue;
    n = parked ? q_queues_parked(qs, cqs[i], &wv) : q_queues_active(qs, cqs[i], &wv);
    for (size_t j = 0; j < n && j < 256; j++) got[j] = wv[j]->key;
    json_list(json_object_get(want, cqs[i]), exp, &nw);
    fmt_list(g, sizeof g, got, n < 256 ? n : 256);
    fmt_list(w, sizeof w, exp, nw);
    if (strcmp(g, w)) say(d, "%s[%s]: %s, want %s", what, cqs[i], g, w);
  }
  free(cqs);
}

static void cmp_preempted(diff *d, const q_result *r, json_t *want) {
  const char *got[256], *exp[256];
  char buf[256][300], g[4096], w[4096];
  size_t ng = 0, nw = 0, i;
  json_t *e;
  for (size_t k = 0; k < r->nvictims && ng < 256; k++, ng++) {
    snprintf(buf[ng], sizeof buf[ng], "%s (%s)", r->victims[k].wl->key,
             q_preempt_reason_name(r->victims[k].reason));
    got[ng] = buf[ng];
  }
  json_array_foreach(want, i, e) {
    if (ng + nw >= 256) break;
    snprintf(buf[ng + nw], sizeof buf[0], "%s (%s)", str(e, "workload"), str(e, "reason"));
    exp[nw] = buf[ng + nw];
    nw++;
  }
  fmt_list(g, sizeof g, got, ng);
  fmt_list(w, sizeof w, exp, nw);
  if (strcmp(g, w)) say(d, "preempted: %s, want %s", g, w);
}

/* ---- one case -------------------------------------------------------------------------- */

static const char *unsupported_gate(json_t *c) {
  json_t *gates = json_object_get(c, "featureGates"), *v;
  const char *k;
  json_object_foreach(gates, k, v) {
    bool known = false;
    for (size_t i = 0; i < sizeof known_gates / sizeof *known_gates; i++)
      known = known || !strcmp(k, known_gates[i]);
    if (!known) return k;
  }
  return NULL;
}

static void configure(json_t *c, q_config *cfg) {
  json_t *pa = json_object_get(json_object_get(c, "featureGates"), "PartialAdmission");
  q_config_default(cfg);
  cfg->fair_sharing = json_is_true(json_object_get(c, "fairSharing"));
  if (json_is_boolean(pa)) cfg->partial_admission = json_is_true(pa);
}

/* Admits the pre-admitted workloads and queues the pending ones. */
static int seed(q_tree *t, q_queues *qs, wset *w, diff *d) {
  for (size_t i = 0; i < w->n; i++) {
    q_workload *wl = &w->v[i];
    ts_err err;
    ts_err_clear(&err);
    if (wl->admission) {
      if (q_tree_admit(t, wl, &err) != TS_OK) say(d, "seeding: %s", err.text);
    } else if (wl->local_queue && q_queues_add(qs, t, wl, NULL) != TS_OK) {
      say(d, "queueing %s failed", wl->key);
    }
  }
  return d->n ? -1 : 0;
}

static void run(json_t *c, diff *d) {
  json_t *want = json_object_get(c, "expect");
  q_config cfg;
  q_result r = {0};
  wset w = {0};
  ts_err err;
  q_tree *t = NULL;
  q_queues *qs = q_queues_new();
  model *m = load_model(c, d);
  ts_err_clear(&err);
  configure(c, &cfg);
  if (!m || !qs || load_workloads(c, &w, d)) goto out;
  if (q_tree_build(m, NULL, &t, &err) != TS_OK) {
    say(d, "%s", err.text);
    goto out;
  }
  if (seed(t, qs, &w, d)) goto out;
  if (q_cycle(t, qs, &cfg, NULL, NOW_NS, &r, &err) != TS_OK) {
    say(d, "cycle: %s", err.text);
    goto out;
  }
  cmp_assignments(d, t, json_object_get(want, "assignments"));
  cmp_preempted(d, &r, json_object_get(want, "preempted"));
  cmp_queue(d, "left", qs, json_object_get(want, "left"), false);
  cmp_queue(d, "inadmissibleLeft", qs, json_object_get(want, "inadmissibleLeft"), true);
out:
  q_result_free(&r);
  q_queues_free(qs);
  q_tree_free(t);
  model_free(m);
  ts_arena_free(&w.a);
}

int main(int argc, char **argv) {
  json_error_t je;
  json_t *root, *cases, *c;
  size_t i;
  int pass = 0, fail = 0, skip = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: %s schedule_cases.json\n", argv[0]);
    return 2;
  }
  if (!(root = json_load_file(argv[1], 0, &je))) {
    fprintf(stderr, "%s:%d: %s\n", argv[1], je.line, je.text);
    return 2;
  }
  cases = json_object_get(root, "cases");
  json_array_foreach(cases, i, c) {
    const char *gate = unsupported_gate(c);
    diff d = {{0}, 0, 0};
    if (gate) {
      printf("SKIP %s: feature gate %s is not implemented\n", str(c, "name"), gate);
      skip++;
      continue;
    }
    run(c, &d);
    if (!d.n) {
      pass++;
      continue;
    }
    fail++;
    printf("FAIL %s\n%s", str(c, "name"), d.text);
  }
  json_decref(root);
  printf("%d passed, %d failed, %d skipped\n", pass, fail, skip);
  return fail ? 1 : 0;
}
