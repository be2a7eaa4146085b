/* cmd/load.c - a recorded cluster (files or a directory of YAML and JSON, as kubectl writes
 * them) into a model, as `tessera replay` and `tessera bench --snapshot` read it: every object
 * checked as the API server would, decoded, applied; each problem printed as a load error
 * with its file and line, the rest still loaded. */
#include "cmd/cmd.h"

#include <stdio.h>

typedef struct loader {
  model *m;
  cmd_load_counts *c;
} loader;

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
  if (cmd_validate(obj, origin, &l->c->errors)) return TS_OK; /* refused: a load error */
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

int64_t cmd_snapshot_time(const model *m) {
  int64_t t = 0;
  for (int k = 0; k < MODEL_KIND_COUNT; k++) {
    model_obj *o;
    for (size_t it = 0; model_next(m, (model_kind)k, &it, &o);)
      if (o->created_ns > t) t = o->created_ns;
  }
  return t;
}
