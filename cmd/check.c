/* cmd/check.c - `tessera check [--config FILE] [PATH...]`: validate a configuration and
 * manifests without a cluster, with the errors the API server and the admission webhooks
 * Tessera knows of would give, naming the file, line, object and field. */
#include <stdio.h>
#include <string.h>

#include "cel/cel.h"
#include "cmd/cmd.h"
#include "config/config.h"
#include "model/model.h"

typedef struct check {
  int objects; /* objects of kinds Tessera reads */
  int errors;  /* problems found */
  model *m;    /* what was read (PriorityClasses for pods' admission), objects keep their place */
  ts_map here; /* "Kind key" (owned) -> first place, of the objects of the PATH being read: one
                  snapshot or manifest set, where an object given twice is an error */
} check;

/* Forgets the objects of the PATH read before (each PATH is a cluster of its own). */
static void here_clear(check *c) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&c->here, &it, &s)) ts_free((char *)s->key), ts_free(s->value);
  ts_map_free(&c->here);
  ts_map_init(&c->here);
}

/* Reports o when this PATH gave an object of its kind and key already (kubectl would apply one
 * over the other); remembers it otherwise. */
static void once_per_path(check *c, const model_obj *o, const char *at) {
  char key[TS_KEY_MAX + 64], *k = NULL, *v = NULL;
  const char *first;
  snprintf(key, sizeof key, "%s %s", model_kind_name(o->kind), o->key);
  if ((first = ts_map_get(&c->here, key, strlen(key)))) {
    fprintf(stderr, "%s: %s: defined again (first at %s)\n", at, key, first);
    c->errors++;
    return;
  }
  if (!(k = ts_strdup(key)) || !(v = ts_strdup(at)) ||
      ts_map_put(&c->here, k, strlen(k), v, NULL) != TS_OK)
    ts_free(k), ts_free(v); /* out of memory: one duplicate less found */
}

/* Compiles one selector as the API server would; reports where it is and why it fails. */
static void check_selector(check *c, const char *where, const model_obj *o, const char *field,
                           const model_device_selector *sel) {
  ts_err err;
  if (sel->kind != MODEL_SELECTOR_CEL || !sel->cel) return;
  ts_err_clear(&err);
  if (dra_selector_check(sel->cel, NULL, &err) == TS_OK) return;
  fprintf(stderr, "%s: %s %s: %s.cel.expression: %s\n", where, model_kind_name(o->kind), o->key,
          field, err.text);
  c->errors++;
}

static void check_spec(check *c, const char *where, const model_obj *o, const char *prefix,
                       const model_claim_spec *spec) {
  char field[512];
  for (uint32_t r = 0; r < spec->nrequests; r++) {
    const model_request *q = &spec->requests[r];
    uint32_t n = q->first_available ? q->nsubs : 1;
    for (uint32_t k = 0; k < n; k++) {
      const model_subrequest *x = q->first_available ? &q->subs[k] : &q->exactly;
      for (uint32_t i = 0; i < x->nselectors; i++) {
        if (q->first_available)
          snprintf(field, sizeof field, "%sdevices.requests[%u].firstAvailable[%u].selectors[%u]",
                   prefix, r, k, i);
        else /* v1beta1 had the request's fields inline; v1beta2 and v1 under exactly */
          snprintf(field, sizeof field, "%sdevices.requests[%u].%sselectors[%u]", prefix, r,
                   strstr(o->api_version, "v1beta1") ? "" : "exactly.", i);
        check_selector(c, where, o, field, &x->selectors[i]);
      }
    }
  }
}

/* DRA selectors of classes, claims and templates. */
static void check_cel(check *c, const char *where, const model_obj *o) {
  char field[64];
  if (o->kind == MODEL_DEVICE_CLASS) {
    const model_device_class *dc = (const model_device_class *)o;
    for (uint32_t i = 0; i < dc->nselectors; i++) {
      snprintf(field, sizeof field, "spec.selectors[%u]", i);
      check_selector(c, where, o, field, &dc->selectors[i]);
    }
  } else if (o->kind == MODEL_RESOURCE_CLAIM) {
    check_spec(c, where, o, "spec.", &((const model_claim *)o)->spec);
  } else if (o->kind == MODEL_RESOURCE_CLAIM_TEMPLATE) {
    check_spec(c, where, o, "spec.spec.", &((const model_claim_template *)o)->spec);
  }
}

/* Volcano's and KAI Scheduler's queues and PodGroups are mapped onto the quota tree and gangs
 * (docs/coexistence.md, "Teams coming from Volcano or KAI Scheduler"). Says, on standard output
 * (not an error), which of their fields that would be expected to act do not, and where KAI's
 * reading of a queue is likely a surprise. */
static void kai_queue_notes(const json_t *spec, const char *at, const char *name) {
  static const char *const res[] = {"gpu", "cpu", "memory"};
  const json_t *r = json_object_get(spec, "resources");
  const json_t *gpu = json_object_get(r, "gpu");
  double w = json_number_value(json_object_get(gpu, "overQuotaWeight"));
  for (int i = 0; json_is_object(r) && i < 3; i++) {
    const json_t *x = json_object_get(r, res[i]);
    const json_t *ow = json_object_get(x, "overQuotaWeight");
    if (!x) {
      printf("%s: KAI Queue %s: spec.resources.%s: absent, so KAI reads quota 0 and limit 0: "
             "pods of this queue that request %s never fit (limit: -1 allows them)\n",
             at, name, res[i], res[i]);
      continue;
    }
    if (i && ow && json_number_value(ow) != w)
      printf("%s: KAI Queue %s: spec.resources.%s.overQuotaWeight: not mapped: the queue's "
             "fair-sharing weight is gpu's overQuotaWeight (%g)\n",
             at, name, res[i], w);
  }
  if (json_object_get(spec, "preemptMinRuntime") || json_object_get(spec, "reclaimMinRuntime"))
    printf("%s: KAI Queue %s: spec.preemptMinRuntime, spec.reclaimMinRuntime: not mapped: running "
           "gangs may be preempted at any time\n",
           at, name);
}

static void not_mapped(const json_t *obj, const char *at) {
  const char *api = json_string_value(json_object_get(obj, "apiVersion"));
  const char *kind = json_string_value(json_object_get(obj, "kind"));
  const json_t *md = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
  const char *ns = json_string_value(json_object_get(md, "namespace"));
  const char *name = json_string_value(json_object_get(md, "name"));
  const char *who;
  if (!api || !kind || !name) return;
  if (!strncmp(api, "scheduling.volcano.sh/", 22))
    who = "Volcano";
  else if (!strncmp(api, "scheduling.run.ai/", 18))
    who = "KAI";
  else
    return;
  if (!strcmp(kind, "Queue")) {
    if (json_object_get(spec, "priority"))
      printf("%s: %s Queue %s: spec.priority: not mapped: queues take turns by fair share, not by "
             "priority\n",
             at, who, name);
    if (*who == 'K') kai_queue_notes(spec, at, name);
    if (*who == 'V' && json_object_get(spec, "affinity"))
      printf("%s: Volcano Queue %s: spec.affinity: not mapped: the queue's pods may go to any "
             "node\n",
             at, name);
    if (*who == 'V' && json_array_size(json_object_get(spec, "extendClusters")))
      printf("%s: Volcano Queue %s: spec.extendClusters: not mapped: one cluster only\n", at, name);
    return;
  }
  if (!strcmp(kind, "PodGroup") && json_object_get(spec, "topologyConstraint"))
    printf("%s: %s PodGroup %s/%s: spec.topologyConstraint: not mapped: placement follows "
           "tessera.yaml's topology.levels\n",
           at, who, ns ? ns : "", name);
}

static ts_rc on_object(void *ud, json_t *obj, const char *file, int line, int index) {
  check *c = ud;
  model_decode_opts opts = {.admission = true, .resources = model_resources_of(c->m)};
  model_obj *o = NULL;
  char at[4200];
  ts_err err;
  ts_err_clear(&err);
  if (line)
    snprintf(at, sizeof at, "%s:%d", file, line);
  else
    snprintf(at, sizeof at, "%s: items[%d]", file, index);
  not_mapped(obj, at);
  if (cmd_validate(obj, at, &c->errors)) { /* every refusal the API server would give */
    c->objects++;
    return TS_OK;
  }
  if (model_decode(obj, &opts, &o, &err) != TS_OK) {
    if (line)
      fprintf(stderr, "%s:%d: %s\n", file, line, err.text);
    else
      fprintf(stderr, "%s: items[%d]: %s\n", file, index, err.text);
    c->errors++;
    c->objects++;
    return TS_OK;
  }
  if (o && o->kind == MODEL_POD && ((const model_pod *)o)->share_problem) {
    /* KAI's admission refuses it; Tessera would keep it pending with this reason */
    fprintf(stderr, "%s: Pod %s: %s\n", at, o->key, ((const model_pod *)o)->share_problem);
    c->errors++;
  }
  if (o) {
    c->objects++;
    check_cel(c, at, o);
    once_per_path(c, o, at);
    o->origin = ts_intern_cstr(at); /* for the checks that need every object read first */
    if (model_upsert(c->m, o) != TS_OK) return TS_ENOMEM;
  }
  return TS_OK;
}

static void on_error(void *ud, const ts_err *err) {
  fprintf(stderr, "%s\n", err->text);
  ((check *)ud)->errors++;
}

static void usage(FILE *f) {
  fputs("usage: tessera check [--config FILE] [PATH...]\n"
        "  --config   tessera.yaml to validate (may be given more than once)\n"
        "  PATH       manifests (JSON, YAML, or a directory of them), validated as the API server\n"
        "             and admission would, and read together as one cluster\n",
        f);
}

static const cmd_flag check_flags[] = {{"--config", NULL, "FILE"}, {NULL, NULL, NULL}};

int cmd_check(int argc, char **argv) {
  static cmd_arg v[CMD_ARGS_MAX];
  check c = {0};
  int paths = 0, n, parsed = cmd_flags_parse("check", usage, check_flags, argc, argv, v, &n);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  if (!n) return cmd_usage_error("check", usage, "nothing to check");
  if (!(c.m = model_new())) return 1;
  ts_map_init(&c.here);
  for (int i = 0; i < n; i++) {
    if (v[i].flag == 0) {
      cfg_tessera cfg;
      ts_err err;
      cfg_tessera_default(&cfg);
      ts_err_clear(&err);
      if (cfg_tessera_load(v[i].value, &cfg, &err) != TS_OK) {
        fprintf(stderr, "%s\n", err.text);
        c.errors++;
      } else {
        printf("%s: configuration is valid\n", v[i].value);
      }
      cfg_tessera_free(&cfg); /* its device class mappings (scripts/docs-test.sh found it) */
    } else {
      paths++;
      here_clear(&c);
      if (in_load_path(v[i].value, on_object, on_error, &c) != TS_OK) c.errors++;
    }
  }
  cmd_validate_priorities(c.m, &c.errors, false); /* against the PriorityClasses read */
  cmd_queue_problems(c.m, &c.errors);             /* the files read as one cluster */
  model_free(c.m);
  here_clear(&c);
  ts_map_free(&c.here);
  if (paths) printf("%d objects checked, %d errors\n", c.objects, c.errors);
  return c.errors ? 1 : 0;
}
