/* cmd/validate.c - the API server's refusals (model_validate), reported as `tessera check` and
 * `tessera replay` report load errors: "file:line: Kind ns/name: field: message". */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

typedef struct located {
  int *errors;     /* the caller's count */
  const char *at;  /* "file:line" */
  const char *obj; /* "Kind ns/name" */
} located;

static void on_refusal(void *ud, const char *field, const char *message) {
  located *l = ud;
  if (*field)
    fprintf(stderr, "%s: %s: %s: %s\n", l->at, l->obj, field, message);
  else
    fprintf(stderr, "%s: %s: %s\n", l->at, l->obj, message);
  (*l->errors)++;
}

size_t cmd_validate(json_t *obj, const char *at, int *errors) {
  json_t *md = json_object_get(obj, "metadata");
  const char *k = json_string_value(json_object_get(obj, "kind"));
  const char *ns = json_string_value(json_object_get(md, "namespace"));
  const char *n = json_string_value(json_object_get(md, "name"));
  char what[700];
  located l = {errors, at, what};
  snprintf(what, sizeof what, "%s %s%s%s", k ? k : "object", ns ? ns : "", ns ? "/" : "",
           n ? n : "");
  return model_validate(obj, on_refusal, &l);
}

void cmd_validate_priorities(model *m, int *errors, bool remove) {
  model_obj *o;
  TS_VEC(model_obj *) refused = {0};
  for (size_t it = 0; model_next(m, MODEL_POD, &it, &o);) {
    char what[700];
    located l = {errors, o->origin ? o->origin : "", what};
    /* A pod with spec.priority went through the Priority admission when it was created:
     * recorded state, whatever its class became since (a class deleted, a new globalDefault),
     * is what the cluster holds and what `tessera run` sees. Only manifests are judged. */
    if (remove && ((const model_pod *)o)->has_priority) continue;
    snprintf(what, sizeof what, "Pod %s", o->key);
    if (model_validate_priority(m, (const model_pod *)o, on_refusal, &l) && remove)
      (void)ts_vec_push(&refused, o); /* out of memory: it stays, reported all the same */
  }
  for (size_t i = 0; i < refused.n; i++)
    model_remove(m, MODEL_POD, refused.v[i]->ns, refused.v[i]->name);
  ts_vec_free(&refused);
}

size_t cmd_queue_problems(const model *m, int *errors) {
  q_tree *t = NULL;
  const char *const *p;
  ts_err err;
  size_t n = 0;
  ts_err_clear(&err);
  if (q_tree_build(m, NULL, &t, &err) != TS_OK) {
    fprintf(stderr, "queues: %s\n", err.text);
    (*errors)++;
    return 1;
  }
  for (size_t i = 0, np = q_tree_problems(t, &p); i < np; i++) {
    const model_obj *o = q_problem_object(m, p[i]);
    const char *at = o ? o->origin : NULL;
    fprintf(stderr, "%s%s%s\n", at ? at : "", at ? ": " : "", p[i]);
    n++;
  }
  *errors += (int)n;
  q_tree_free(t);
  return n;
}
