/* cmd/load.c - a recorded cluster (files or a directory of YAML and JSON, as kubectl writes
 * them) into a model, as `tessera replay` and `tessera bench --snapshot` read it: every object
 * checked as the API server would, decoded, applied; each problem printed as a load error
 * with its file and line, the rest still loaded. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loader {
  model *m;
  cmd_load_counts *c;
} loader;

static bool str_is(const json_t *v, const char *s) {
  return json_is_string(v) && !strcmp(json_string_value(v), s);
}

/* An object already loaded under the same kind, namespace and name: the last one is used, as
 * a second apply would; say so, with both places. */
static void warn_again(const model *m, json_t *obj, const char *origin) {
  const char *ns, *name;
  model_kind k = model_decode_key(obj, &ns, &name);
  const model_obj *was;
  if (k == MODEL_KIND_COUNT || !(was = model_get(m, k, *ns ? ns : NULL, name))) return;
  fprintf(stderr, "warning: %s: %s %s: defined again (first at %s); the last one is used\n", origin,
          model_kind_name(k), was->key, was->origin ? was->origin : "?");
}

static ts_rc on_object(void *ud, json_t *obj, const char *file, int line, int index) {
  loader *l = ud;
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
  if (str_is(json_object_get(obj, "apiVersion"), CFG_API_VERSION)) {
    const char *at =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "creationTimestamp"));
    if (str_is(json_object_get(obj, "kind"), CFG_KIND) && !l->c->config)
      l->c->config = json_incref(obj); /* the snapshot's tessera.yaml */
    else if (str_is(json_object_get(obj, "kind"), "Snapshot") && at)
      (void)ts_time_parse(at, &l->c->taken_ns); /* when it was taken: the replay's clock */
    return TS_OK;
  }
  if (str_is(json_object_get(obj, "apiVersion"), IN_KAI_HEADER_API) &&
      str_is(json_object_get(obj, "kind"), IN_KAI_HEADER_KIND)) { /* a KAI snapshot's header */
    const char *name = json_string_value(
        json_object_get(json_object_get(obj, "schedulerParams"), "schedulerName"));
    ts_strlcpy(l->c->kai_scheduler, name && *name ? name : "kai-scheduler",
               sizeof l->c->kai_scheduler);
    return TS_OK;
  }
  if (cmd_validate(obj, origin, &l->c->errors)) return TS_OK; /* refused: a load error */
  warn_again(l->m, obj, origin);
  if (model_apply_json(l->m, obj, MODEL_ADDED, ts_intern_cstr(origin), NULL, &skipped, &err) !=
      TS_OK) {
    fprintf(stderr, "%s: %s\n", origin, err.text);
    l->c->errors++;
  } else if (!skipped) {
    l->c->objects++;
  }
  return TS_OK;
}

static void on_error(void *ud, const ts_err *err) {
  if (err->code == TS_EEXIST) { /* a duplicate key: the API server warns and takes the last */
    fprintf(stderr, "warning: %s\n", err->text);
    return;
  }
  fprintf(stderr, "%s\n", err->text);
  ((loader *)ud)->c->errors++;
}

ts_rc cmd_load(const char *path, model *m, cmd_load_counts *c) {
  loader l = {m, c};
  ts_rc rc = in_load_path(path, on_object, on_error, &l);
  if (rc != TS_OK) return rc;
  cmd_validate_priorities(m, &c->errors, true); /* pods the Priority admission refuses */
  cmd_queue_problems(m, &c->errors);            /* queues that cannot admit anything */
  for (int k = 0; k < MODEL_KIND_COUNT; k++)    /* the snapshot is all there is to know */
    if (!model_count(m, (model_kind)k)) model_set_seen(m, (model_kind)k, false);
  return TS_OK;
}

ts_rc cmd_load_config(cmd_load_counts *c, bool flag_given, cfg_tessera *t, ts_err *err) {
  cfg_tessera mine;
  ts_rc rc;
  if (!flag_given && !c->config && c->kai_scheduler[0]) { /* KAI's pods are the ones to decide */
    const char *name = ts_intern_cstr(c->kai_scheduler);
    if (!name) return ts_err_set(err, TS_ENOMEM, "out of memory");
    t->sched.scheduler_name = name;
    return TS_OK;
  }
  if (flag_given || !c->config) return TS_OK;
  cfg_tessera_default(&mine);
  rc = cfg_tessera_from_json(c->config, "tessera.yaml", &mine, err);
  if (rc != TS_OK) {
    cfg_tessera_free(&mine);
    return ts_err_prefix(err, "the snapshot's SchedulerConfiguration"), rc;
  }
  cfg_tessera_free(t);
  *t = mine;
  return TS_OK;
}

ts_rc cmd_load_offline(const char *path, model *m, bool config_given, cfg_tessera *t, dra_cel *cel,
                       cmd_load_counts *c, int64_t *clock, ts_err *err) {
  ts_rc rc = cmd_load(path, m, c);
  if (rc == TS_OK) rc = cmd_load_config(c, config_given, t, err); /* a snapshot's own */
  json_decref(c->config);
  c->config = NULL;
  t->sched.instantiate_templates = true; /* no claim controller runs offline */
  t->sched.dra_eval = dra_cel_eval, t->sched.dra_eval_ctx = cel;
  *clock = cmd_load_clock(m, c);
  return rc;
}

int64_t cmd_load_clock(const model *m, const cmd_load_counts *c) {
  return c->taken_ns ? c->taken_ns : cmd_snapshot_time(m);
}

int64_t cmd_snapshot_time(const model *m) {
  int64_t t = 0;
  for (int k = 0; k < MODEL_KIND_COUNT; k++) {
    model_obj *o;
    for (size_t it = 0; model_next(m, (model_kind)k, &it, &o);)
      if (o->created_ns > t) t = o->created_ns;
  }
  return t;
}
