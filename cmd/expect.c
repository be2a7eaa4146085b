/* cmd/expect.c - `tessera replay --expect FILE`: checks the decisions of a replay against
 * expectations written in YAML, for policy regression tests:
 *
 *   expectations:
 *   - pod: team-a/trainer-0       # the pod (namespace/name)
 *     bound: true                 # bound after the cycle (decided now or bound before)
 *     node: a100-0                # on this node
 *     nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}   # on a node with these
 *     reason: Insufficient        # pending (or evicted) with a reason containing this text
 *     evicted: true               # evicted by this cycle (preemption, waitForPodsReady)
 *     devices: 2                  # DRA devices allocated to its claims this cycle
 *   - together: [team-a/ft-0, team-a/ft-1]   # all bound, on nodes sharing one value of
 *     label: kubernetes.io/hostname           # this label
 *
 * Every expectation prints one line (ok / FAIL with what was seen). */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/config.h"

typedef struct seen {
  const model_pod *pod;      /* the pod, NULL when unknown */
  const model_node *node;    /* where it is (bound now or before), or NULL */
  const sched_decision *dec; /* this cycle's decision, or NULL */
} seen;

static seen lookup(const model *m, const sched_result *res, const char *key) {
  seen s = {0};
  if (!strchr(key, '/')) return s; /* pods are namespaced */
  s.pod = (const model_pod *)model_get_key(m, MODEL_POD, key);
  for (size_t i = 0; s.pod && i < res->ndecisions; i++)
    if (res->decisions[i].pod == s.pod) s.dec = &res->decisions[i];
  if (s.dec && s.dec->kind == SCHED_BIND)
    s.node = s.dec->node;
  else if (!s.dec && s.pod && s.pod->node_name)
    s.node = (const model_node *)model_get(m, MODEL_NODE, NULL, s.pod->node_name);
  return s;
}

static int sched__dra_devices(const seen *s) {
  int n = 0;
  for (uint32_t i = 0; s->dec && i < s->dec->nclaims; i++)
    if (!s->dec->claims[i].allocated) n += (int)s->dec->claims[i].result.ndevices;
  return n;
}

/* Checks one pod expectation; writes what differs to why. */
static bool check_pod(const model *m, const sched_result *res, json_t *e, char *why, size_t cap) {
  const char *key = json_string_value(json_object_get(e, "pod"));
  json_t *bound = json_object_get(e, "bound"), *labels = json_object_get(e, "nodeLabels"), *v;
  const char *node = json_string_value(json_object_get(e, "node"));
  const char *reason = json_string_value(json_object_get(e, "reason")), *k;
  seen s = lookup(m, res, key ? key : "");
  if (!s.pod) return snprintf(why, cap, "no such pod"), false;
  if (json_is_boolean(bound) && json_is_true(bound) != (s.node != NULL))
    return snprintf(why, cap, "%s", s.node ? "bound" : "not bound"), false;
  if (node && (!s.node || strcmp(s.node->obj.name, node)))
    return snprintf(why, cap, "on %s", s.node ? s.node->obj.name : "no node"), false;
  json_object_foreach(labels, k, v) {
    const char *have = s.node ? model_labels_get(&s.node->obj.labels, ts_intern_cstr(k)) : NULL;
    if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
      return snprintf(why, cap, "node %s has %s=%s", s.node ? s.node->obj.name : "(none)", k,
                      have ? have : "(unset)"),
             false;
  }
  if (json_is_boolean(json_object_get(e, "evicted")) &&
      json_is_true(json_object_get(e, "evicted")) != (s.dec && s.dec->kind == SCHED_EVICT))
    return snprintf(why, cap, "%s",
                    s.dec && s.dec->kind == SCHED_EVICT ? "evicted" : "not evicted"),
           false;
  if (reason && (!s.dec || s.dec->kind == SCHED_BIND || !strstr(s.dec->reason, reason)))
    return snprintf(why, cap, "%s", s.dec && s.dec->reason ? s.dec->reason : "no pending reason"),
           false;
  if (json_is_integer(json_object_get(e, "devices")) &&
      json_integer_value(json_object_get(e, "devices")) != sched__dra_devices(&s))
    return snprintf(why, cap, "%d DRA devices", sched__dra_devices(&s)), false;
  return true;
}

static bool check_together(const model *m, const sched_result *res, json_t *e, char *why,
                           size_t cap) {
  const char *label = json_string_value(json_object_get(e, "label"));
  const char *first = NULL;
  json_t *pods = json_object_get(e, "together"), *p;
  size_t i;
  if (!label) return snprintf(why, cap, "`label` is required with `together`"), false;
  json_array_foreach(pods, i, p) {
    seen s = lookup(m, res, json_string_value(p) ? json_string_value(p) : "");
    const char *val = s.node ? model_labels_get(&s.node->obj.labels, ts_intern_cstr(label)) : NULL;
    if (!val)
      return snprintf(why, cap, "%s is not bound on a node with %s", json_string_value(p), label),
             false;
    if (first && strcmp(first, val))
      return snprintf(why, cap, "%s=%s and %s", label, first, val), false;
    first = val;
  }
  return true;
}

int replay_expect(const char *path, const model *m, const sched_result *res, FILE *out) {
  char *text = NULL;
  size_t len = 0;
  in_docs docs = {0};
  ts_err err;
  json_t *list, *e;
  size_t i;
  int failed = 0, total = 0;
  ts_err_clear(&err);
  if (in_read_file(path, &text, &len, &err) != TS_OK ||
      in_yaml_parse(text, len, &docs, &err) != TS_OK) {
    fprintf(stderr, "%s: %s\n", path, err.text);
    ts_free(text);
    in_docs_free(&docs);
    return -1;
  }
  list = docs.n ? json_object_get(docs.v[0].value, "expectations") : NULL;
  if (!json_is_array(list)) {
    fprintf(stderr, "%s: expectations: must be a list\n", path);
    failed = -1;
  }
  json_array_foreach(list, i, e) {
    char why[1200] = "";
    bool ok = json_object_get(e, "together") ? check_together(m, res, e, why, sizeof why)
                                             : check_pod(m, res, e, why, sizeof why);
    const char *what = json_string_value(json_object_get(e, "pod"));
    total++;
    if (!ok) failed++;
    fprintf(out, "expect %s %s%s%s\n", what ? what : "together",
            ok ? "ok" : "FAIL: ", ok ? "" : why, "");
  }
  if (failed >= 0) fprintf(out, "expectations: %d of %d met\n", total - failed, total);
  ts_free(text);
  in_docs_free(&docs);
  return failed;
}
