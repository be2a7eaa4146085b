/* cmd/replay.c - `tessera replay PATH`: load a recorded cluster, run the scheduling cycle
 * offline, print every decision and a summary. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/config.h"
#include "model/model.h"
#include "queueing/queueing.h"
#include "scheduler/sched.h"

/* Labels that name a node pool, most specific first. */
static const char *const pool_labels[] = {
    "cloud.google.com/gke-nodepool",  "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool", "karpenter.sh/nodepool",
    "nvidia.com/gpu.product",         "node.kubernetes.io/instance-type",
};

typedef struct replay {
  model *m;                /* the cluster */
  int errors;              /* objects or files that failed to load */
  int objects;             /* objects loaded */
  bool json;               /* --output json */
  FILE *out;               /* decisions and summary */
  const sched_config *cfg; /* the cycle's settings */
} replay;

static ts_rc on_object(void *ud, json_t *obj, const char *file, int line, int index) {
  replay *r = ud;
  char origin[4200];
  ts_err err;
  bool skipped = false;
  ts_err_clear(&err);
  if (line)
    snprintf(origin, sizeof origin, "%s:%d", file, line);
  else if (index >= 0)
    snprintf(origin, sizeof origin, "%s: items[%d]", file, index);
  else
    snprintf(origin, sizeof origin, "%s", file);
  if (model_apply_json(r->m, obj, MODEL_ADDED, ts_intern_cstr(origin), NULL, &skipped, &err) !=
      TS_OK) {
    fprintf(stderr, "%s: %s\n", origin, err.text);
    r->errors++;
  } else if (!skipped) {
    r->objects++;
  }
  return TS_OK;
}

static void on_error(void *ud, const ts_err *err) {
  fprintf(stderr, "%s\n", err->text);
  ((replay *)ud)->errors++;
}

/* The replay's clock: the newest creationTimestamp in the snapshot (0 when none). */
static int64_t snapshot_time(const model *m) {
  int64_t t = 0;
  for (int k = 0; k < MODEL_KIND_COUNT; k++) {
    size_t it = 0;
    const ts_map_slot *s;
    while (ts_map_next(&m->by_key[k], &it, &s)) {
      const model_obj *o = s->value;
      if (o->created_ns > t) t = o->created_ns;
    }
  }
  return t;
}

static void print_json(FILE *out, json_t *o) {
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (s) fprintf(out, "%s\n", s);
  free(s);
  json_decref(o);
}

static void print_decision(const replay *r, const sched_decision *d) {
  if (!r->json) {
    if (d->kind == SCHED_BIND)
      fprintf(r->out, "bind %s -> %s\n", d->pod->obj.key, d->node->obj.name);
    else
      fprintf(r->out, "%s %s: %s\n", d->kind == SCHED_EVICT ? "evict" : "pending", d->pod->obj.key,
              d->reason);
    if (d->kind == SCHED_BIND) replay_print_claims(r->out, d);
    return;
  }
  if (d->kind == SCHED_BIND) {
    json_t *o = json_pack("{s:s, s:s, s:s}", "action", "bind", "pod", d->pod->obj.key, "node",
                          d->node->obj.name);
    if (d->nclaims) json_object_set_new(o, "claims", replay_claims_json(d));
    print_json(r->out, o);
  } else
    print_json(r->out,
               json_pack("{s:s, s:s, s:s}", "action", d->kind == SCHED_EVICT ? "evict" : "pending",
                         "pod", d->pod->obj.key, "reason", d->reason));
}

static const char *pool_of(const model_node *n) {
  for (size_t i = 0; i < sizeof pool_labels / sizeof pool_labels[0]; i++) {
    const char *v = model_labels_get(&n->obj.labels, ts_intern_cstr(pool_labels[i]));
    if (v) return v;
  }
  return "(no pool label)";
}

typedef struct pool_sum {
  const char *name;                   /* pool name (interned label value) */
  int nodes;                          /* nodes in the pool */
  int64_t used[MODEL_MAX_RESOURCES];  /* requested by counted pods */
  int64_t alloc[MODEL_MAX_RESOURCES]; /* allocatable */
} pool_sum;

static int pool_cmp(const void *a, const void *b) {
  return strcmp(((const pool_sum *)a)->name, ((const pool_sum *)b)->name);
}

/* Sums GPU resources per pool (after the decisions were applied to the model). */
static size_t pool_sums(const model *m, pool_sum *pools, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < m->nodes.n; i++) {
    const model_node *node = m->nodes.v[i];
    const char *name = pool_of(node);
    size_t k = 0;
    while (k < n && pools[k].name != name) k++;
    if (k == n) {
      if (n == cap) continue;
      memset(&pools[n], 0, sizeof pools[n]);
      pools[n++].name = name;
    }
    pools[k].nodes++;
    for (int r = 0; r < model_resource_count(); r++) {
      pools[k].used[r] += node->used[r];
      pools[k].alloc[r] += node->alloc[r];
    }
  }
  qsort(pools, n, sizeof *pools, pool_cmp);
  return n;
}

static void print_summary(const replay *r, const sched_result *res) {
  static pool_sum pools[256];
  size_t n = pool_sums(r->m, pools, 256);
  json_t *js = NULL, *jp = NULL;
  if (r->json) {
    js = json_pack("{s:i, s:i, s:i, s:i}", "objects", r->objects, "bound", (int)res->nbound,
                   "pending", (int)res->npending, "errors", r->errors);
    jp = json_array();
  } else {
    fprintf(r->out, "\nsummary: %zu pods bound, %zu pending", res->nbound, res->npending);
    if (res->nevicted) fprintf(r->out, ", %zu evicted", res->nevicted);
    fprintf(r->out, "; %d objects loaded", r->objects);
    if (r->errors) fprintf(r->out, ", %d rejected", r->errors);
    fprintf(r->out, "\nGPUs allocated per node pool:\n");
  }
  int lines = 0;
  for (size_t i = 0; i < n; i++) {
    for (int g = MODEL_RES_FIRST_OTHER; g < model_resource_count(); g++) {
      if (!sched_is_gpu_resource(g) || !pools[i].alloc[g]) continue;
      lines++;
      if (r->json)
        json_array_append_new(jp,
                              json_pack("{s:s, s:i, s:s, s:I, s:I}", "pool", pools[i].name, "nodes",
                                        pools[i].nodes, "resource", model_resource_name(g),
                                        "allocated", (json_int_t)pools[i].used[g], "allocatable",
                                        (json_int_t)pools[i].alloc[g]));
      else
        fprintf(r->out, "  %-28s %3d nodes  %-18s %4lld / %-4lld (%.0f%%)\n", pools[i].name,
                pools[i].nodes, model_resource_name(g), (long long)pools[i].used[g],
                (long long)pools[i].alloc[g],
                100.0 * (double)pools[i].used[g] / (double)pools[i].alloc[g]);
    }
  }
  if (!lines && !r->json) fprintf(r->out, "  none: no node offers GPUs as an extended resource\n");
  replay_dra_summary(r->out, js, r->m, res);
  replay_queues(r->out, js, r->m, r->cfg, res);
  if (r->json) {
    json_object_set_new(js, "gpus", jp);
    print_json(r->out, json_pack("{s:o}", "summary", js));
  }
}

static int usage(void) {
  fprintf(stderr, "usage: tessera replay PATH [--config FILE] [--expect FILE] [--output text|json] "
                  "[--spread]\n");
  return 2;
}

int cmd_replay(int argc, char **argv) {
  replay r = {0};
  sched_config cfg;
  sched_result res;
  sched_state *state = NULL;
  sched_cel *cel = NULL;
  q_devmap devmap = {0};
  ts_err err;
  const char *path = NULL, *expect = NULL;
  bool spread = false;
  int status = 0;
  sched_config_default(&cfg);
  r.out = stdout;
  r.cfg = &cfg;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--output") && i + 1 < argc) {
      const char *o = argv[++i];
      if (strcmp(o, "json") && strcmp(o, "text")) return usage();
      r.json = !strcmp(o, "json");
    } else if (!strcmp(argv[i], "--spread")) {
      spread = true;
    } else if (!strcmp(argv[i], "--expect") && i + 1 < argc) {
      expect = argv[++i];
    } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
      cfg_tessera t;
      ts_err e;
      ts_err_clear(&e);
      if (cmd_settings_load(argv[++i], &t, &cfg, &devmap, &e) != TS_OK) {
        fprintf(stderr, "%s\n", e.text);
        q_devmap_free(&devmap);
        return 2;
      }
    } else if (argv[i][0] == '-' || path) {
      return usage();
    } else {
      path = argv[i];
    }
  }
  if (!path) return usage();
  if (spread) cfg.scoring = SCHED_SPREAD;
  cfg.instantiate_templates = true; /* no claim controller runs in a replay */
  if (!(cel = sched_cel_new())) return 1;
  cfg.dra_eval = sched_cel_eval;
  cfg.dra_eval_ctx = cel;
  if (!(r.m = model_new())) return 1;
  if (in_load_path(path, on_object, on_error, &r) != TS_OK) {
    model_free(r.m);
    sched_cel_free(cel);
    return 1;
  }
  for (int k = 0; k < MODEL_KIND_COUNT; k++) /* the snapshot is all there is to know */
    if (!model_count(r.m, (model_kind)k)) model_set_seen(r.m, (model_kind)k, false);
  ts_err_clear(&err);
  state = sched_state_new();
  if (!state || sched_cycle(r.m, &cfg, state, snapshot_time(r.m), &res, &err) != TS_OK) {
    fprintf(stderr, "tessera: %s\n", state ? err.text : "out of memory");
    sched_state_free(state);
    sched_cel_free(cel);
    model_free(r.m);
    return 1;
  }
  for (size_t i = 0; i < res.ndecisions; i++) {
    const sched_decision *d = &res.decisions[i];
    print_decision(&r, d);
    if (d->kind == SCHED_BIND)
      model_pod_bind(r.m, (model_pod *)d->pod, ts_intern_cstr(d->node->obj.name));
    else if (d->kind == SCHED_EVICT)
      model_pod_bind(r.m, (model_pod *)d->pod, NULL); /* its resources are free again */
  }
  print_summary(&r, &res);
  if (r.errors) status = 1;
  if (expect && replay_expect(expect, r.m, &res, r.out) != 0) status = 1;
  sched_result_free(&res);
  sched_state_free(state);
  sched_cel_free(cel);
  q_devmap_free(&devmap);
  model_free(r.m);
  return status;
}
