/* Unit tests of model/: decoding of every kind (valid and invalid input, with the error
 * text asserted), the recorded objects and API responses, selectors, tolerations, the
 * resource rules of pods, and the store with its indexes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/input.h"
#include "config/config.h"
#include "model/model.h"
#include "model/wire.h"
#include "dra/dra.h"

#include <jansson.h>
#include <math.h>

#define DATA "tests/data/k8s/"

static model_decode_opts decode_opts; /* options decode_yaml uses */

/* The resource-name table of the objects decoded outside a model (made once, kept). */
static model_resources *table(void) {
  static model_resources *t;
  if (!t) t = model_resources_new();
  assert_non_null(t);
  return t;
}

/* Decodes the single YAML document text; fails the test on a YAML error. */
static ts_rc decode_yaml(const char *yaml, model_obj **out, ts_err *err) {
  in_docs docs = {0};
  ts_rc rc;
  ts_err_clear(err);
  if (in_yaml_parse(yaml, strlen(yaml), &docs, err) != TS_OK) fail_msg("yaml: %s", err->text);
  assert_int_equal(docs.n, 1);
  {
    model_decode_opts o = decode_opts;
    if (!o.resources) o.resources = table();
    rc = model_decode(docs.v[0].value, &o, out, err);
  }
  in_docs_free(&docs);
  return rc;
}

static model_obj *must_decode(const char *yaml) {
  model_obj *o = NULL;
  ts_err e;
  if (decode_yaml(yaml, &o, &e) != TS_OK) fail_msg("decode: %s", e.text);
  assert_non_null(o);
  return o;
}

static void expect_invalid(const char *yaml, const char *want) {
  model_obj *o = NULL;
  ts_err e;
  ts_rc rc = decode_yaml(yaml, &o, &e);
  if (rc == TS_OK) fail_msg("decoded, want error \"%s\"", want);
  assert_null(o);
  if (strcmp(e.text, want) != 0) fail_msg("error\n  got:  %s\n  want: %s", e.text, want);
}

/* ---- the recorded objects and exchanges ------------------------------------------------ */

typedef struct counts {
  int decoded[MODEL_KIND_COUNT];
  int skipped, errors;
} counts;

static ts_rc count_obj(void *ud, json_t *obj, const char *file, int line, int index) {
  counts *c = ud;
  model_obj *o = NULL;
  ts_err e;
  (void)index;
  ts_err_clear(&e);
  if (model_decode(obj, &(model_decode_opts){.resources = table()}, &o, &e) != TS_OK) {
    print_error("%s:%d: %s\n", file, line, e.text);
    c->errors++;
  } else if (!o) {
    c->skipped++;
  } else {
    c->decoded[o->kind]++;
    model_obj_free(o);
  }
  return TS_OK;
}

static void count_err(void *ud, const ts_err *e) {
  print_error("%s\n", e->text);
  ((counts *)ud)->errors++;
}

static void test_recorded_objects(void **state) {
  counts c = {0};
  (void)state;
  assert_int_equal(in_load_path(DATA "objects", count_obj, count_err, &c), TS_OK);
  assert_int_equal(c.errors, 0);
  assert_int_equal(c.decoded[MODEL_NAMESPACE], 2);
  assert_int_equal(c.decoded[MODEL_PRIORITY_CLASS], 2);
  assert_int_equal(c.decoded[MODEL_COHORT], 1);
  assert_int_equal(c.skipped, 2); /* the ServiceAccounts */
  assert_int_equal(c.decoded[MODEL_NODE], 2);
  assert_int_equal(c.decoded[MODEL_DEVICE_CLASS], 2);
  assert_int_equal(c.decoded[MODEL_RESOURCE_SLICE], 2);
  assert_int_equal(c.decoded[MODEL_RESOURCE_CLAIM], 3);
  assert_int_equal(c.decoded[MODEL_RESOURCE_CLAIM_TEMPLATE], 1);
  assert_int_equal(c.decoded[MODEL_POD_GROUP], 2);
  assert_int_equal(c.decoded[MODEL_POD], 7);
  assert_int_equal(c.decoded[MODEL_CLUSTER_QUEUE], 2);
  assert_int_equal(c.decoded[MODEL_LOCAL_QUEUE], 2);
  assert_int_equal(c.decoded[MODEL_RESOURCE_FLAVOR], 2);
  assert_int_equal(c.decoded[MODEL_PDB], 1);
}

/* Every object in the recorded responses (list items, GET bodies, watch event objects other
 * than bookmarks and errors) decodes without error or is of a kind we skip. */
static void decode_exchange(const char *path, counts *c) {
  json_error_t je;
  json_t *x = json_load_file(path, 0, &je), *resp, *body, *stream, *ev;
  size_t i;
  if (!x) fail_msg("%s: %s", path, je.text);
  resp = json_object_get(x, "response");
  body = json_object_get(resp, "body");
  stream = json_object_get(resp, "stream");
  if (json_is_object(body) && json_is_array(json_object_get(body, "items"))) {
    const char *k = json_string_value(json_object_get(body, "kind"));
    json_t *item;
    json_array_foreach(json_object_get(body, "items"), i, item) {
      if (!json_object_get(item, "kind") && k && strlen(k) > 4) {
        json_object_set_new(item, "kind", json_stringn(k, strlen(k) - 4));
        json_object_set(item, "apiVersion", json_object_get(body, "apiVersion"));
      }
      count_obj(c, item, path, 0, (int)i);
    }
  } else if (json_is_object(body)) {
    count_obj(c, body, path, 0, -1);
  }
  json_array_foreach(stream, i, ev) {
    const char *type = json_string_value(json_object_get(ev, "type"));
    if (type && (!strcmp(type, "BOOKMARK") || !strcmp(type, "ERROR"))) continue;
    count_obj(c, json_object_get(ev, "object"), path, 0, (int)i);
  }
  json_decref(x);
}

static void test_recorded_exchanges(void **state) {
  counts c = {0};
  DIR *dir = opendir(DATA "exchanges");
  struct dirent *de;
  int files = 0;
  (void)state;
  assert_non_null(dir);
  while ((de = readdir(dir))) {
    char path[512];
    if (!strstr(de->d_name, ".json")) continue;
    snprintf(path, sizeof path, DATA "exchanges/%s", de->d_name);
    decode_exchange(path, &c);
    files++;
  }
  closedir(dir);
  assert_int_equal(files, 103);
  assert_int_equal(c.errors, 0);
  assert_true(c.decoded[MODEL_POD] > 20);
  assert_true(c.decoded[MODEL_RESOURCE_SLICE] >= 5);
  assert_true(c.decoded[MODEL_RESOURCE_CLAIM] >= 6);
  assert_true(c.decoded[MODEL_CLUSTER_QUEUE] >= 2);
  assert_true(c.decoded[MODEL_COHORT] >= 1);
  assert_true(c.skipped > 0); /* Leases, Events, Status objects... */
}

/* ---- pods ------------------------------------------------------------------------------ */

static const char *pod_yaml =
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: team-a\n"
    "  creationTimestamp: \"2026-12-02T12:00:00Z\"\n"
    "  labels: {app: x}\n  annotations: {note: hello, "
    "kubectl.kubernetes.io/last-applied-configuration: big}\n"
    "  ownerReferences:\n  - {apiVersion: batch/v1, kind: Job, name: j, uid: u1, controller: "
    "true}\n"
    "spec:\n  schedulerName: tessera\n  priority: 100\n  priorityClassName: high\n"
    "  nodeSelector: {nvidia.com/gpu.present: \"true\"}\n"
    "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    "  overhead: {cpu: 100m}\n"
    "  initContainers:\n"
    "  - name: sidecar\n    restartPolicy: Always\n    resources: {requests: {cpu: 500m, memory: "
    "1Gi}}\n"
    "  - name: init\n    resources: {requests: {cpu: \"4\", memory: 1Gi}}\n"
    "  containers:\n"
    "  - name: a\n    resources:\n      requests: {cpu: \"1\", memory: 2Gi}\n"
    "      limits: {nvidia.com/gpu: 2, memory: 4Gi}\n"
    "  - name: b\n    resources: {requests: {cpu: 500m}}\n"
    "  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: t}\n"
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n        - matchExpressions:\n"
    "          - {key: nvidia.com/gpu.count, operator: Gt, values: [\"3\"]}\n"
    "status:\n  phase: Pending\n  conditions:\n  - {type: PodScheduled, status: \"False\", "
    "reason: Unschedulable, message: no}\n"
    "  resourceClaimStatuses:\n  - {name: gpu, resourceClaimName: p-gpu-abc}\n";

static void test_pod(void **state) {
  int gpu = model_resource_id(table(), "nvidia.com/gpu"); /* a Node would have named it */
  model_pod *p = (model_pod *)must_decode(pod_yaml);
  (void)state;
  assert_int_equal(p->obj.kind, MODEL_POD);
  assert_string_equal(p->obj.key, "team-a/p");
  assert_ptr_equal(p->obj.ns, ts_intern_cstr("team-a"));
  assert_ptr_equal(p->scheduler_name, ts_intern_cstr("tessera"));
  assert_int_equal(p->obj.created_ns / 1000000000LL, 1796212800LL);
  assert_string_equal(model_labels_get(&p->obj.labels, ts_intern_cstr("app")), "x");
  assert_int_equal(p->obj.annotations.n, 1); /* last-applied-configuration is dropped */
  assert_int_equal(p->obj.nowners, 1);
  assert_true(p->obj.owners[0].controller);
  assert_int_equal(p->priority, 100);
  assert_true(p->has_priority);
  /* cpu: containers 1 + 0.5 + sidecar 0.5 = 2, init 4 + sidecar 0.5 = 4.5 -> 4.5 + 0.1 overhead.
   * memory: 2Gi (request, not the limit) + 1Gi sidecar = 3Gi vs init 1Gi + 1Gi -> 3Gi.
   * gpu: from the limit. */
  assert_int_equal(model_rlist_get(&p->requests, MODEL_RES_CPU), 4600);
  assert_int_equal(model_rlist_get(&p->requests, MODEL_RES_MEMORY), 3LL << 30);
  assert_int_equal(model_rlist_get(&p->requests, gpu), 2);
  assert_int_equal(model_rlist_get(&p->requests, MODEL_RES_PODS), 1);
  assert_int_equal(p->ntolerations, 1);
  assert_true(p->tolerations[0].exists);
  assert_int_equal(p->tolerations[0].effect, MODEL_EFFECT_NO_SCHEDULE);
  assert_int_equal(p->affinity.nterms, 1);
  assert_int_equal(p->affinity.terms[0].exprs[0].op, MODEL_OP_GT);
  assert_int_equal(p->affinity.terms[0].exprs[0].num, 3);
  assert_int_equal(p->nclaims, 1);
  assert_string_equal(p->claims[0].template_name, "t");
  assert_int_equal(p->nclaim_statuses, 1);
  assert_string_equal(p->claim_statuses[0].claim_name, "p-gpu-abc");
  assert_non_null(model_pod_condition(p, "PodScheduled"));
  assert_string_equal(model_pod_condition(p, "PodScheduled")->reason, "Unschedulable");
  assert_int_equal(p->phase, MODEL_PHASE_PENDING);
  model_obj_free(&p->obj);
}

static void test_pod_invalid(void **state) {
  (void)state;
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n"
                 "  containers:\n  - name: c\n    resources: {requests: {cpu: lots}}\n",
                 "Pod a/p: spec.containers[0].resources.requests[cpu]: quantity \"lots\" must "
                 "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n"
                 "  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: 500m}}\n",
                 "Pod a/p: spec.containers[0].resources.limits[nvidia.com/gpu]: must be an "
                 "integer");
  expect_invalid(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: a}\nspec:\n"
      "  containers:\n  - name: c\n    resources: {requests: {cpu: 2}, limits: {cpu: 1}}\n",
      "Pod a/p: spec.containers[0].resources.requests[cpu]: must be less than or "
      "equal to cpu limit");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priority: high\n",
                 "Pod default/p: spec.priority: must be an integer, not a string");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  tolerations:\n"
                 "  - {key: a, operator: Exists, value: b}\n",
                 "Pod default/p: spec.tolerations[0].operator: value must be empty when "
                 "`operator` is 'Exists'");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  tolerations:\n"
                 "  - {key: a, effect: Sometimes}\n",
                 "Pod default/p: spec.tolerations[0].effect: unsupported value \"Sometimes\": "
                 "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n"
                 "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "        nodeSelectorTerms:\n        - matchExpressions:\n"
                 "          - {key: k, operator: In}\n",
                 "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                 "Execution.nodeSelectorTerms[0].matchExpressions[0].values: must be specified "
                 "when `operator` is 'In' or 'NotIn'");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n"
                 "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "        nodeSelectorTerms:\n        - matchExpressions:\n"
                 "          - {key: k, operator: Gt, values: [x]}\n",
                 "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                 "Execution.nodeSelectorTerms[0].matchExpressions[0].values: must be an integer "
                 "for 'Gt' or 'Lt': \"x\"");
  /* Terms the API server refuses (kube-scheduler would match no node with them). */
  expect_invalid(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n"
      "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
      "        nodeSelectorTerms:\n        - matchExpressions:\n"
      "          - {key: zone, operator: In, values: [a, 'not a label']}\n",
      "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
      "Execution.nodeSelectorTerms[0].matchExpressions[0].values[1]: Invalid value: \"not "
      "a label\": a valid label must be an empty string or consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n"
                 "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "        nodeSelectorTerms:\n        - matchFields:\n"
                 "          - {key: metadata.name, operator: In, values: [n1, n2]}\n",
                 "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                 "Execution.nodeSelectorTerms[0].matchFields[0].values: must be only one value "
                 "when `operator` is 'In' or 'NotIn' for node field selector");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n"
                 "    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "        nodeSelectorTerms:\n        - matchExpressions:\n"
                 "          - {key: -bad/key, operator: Exists}\n",
                 "Pod default/p: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
                 "Execution.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "
                 "\"-bad/key\": prefix part a lowercase RFC 1123 subdomain must consist of lower "
                 "case alphanumeric characters, '-' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: 1}}\n",
                 "Pod default/p: metadata.labels[a]: must be a string");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\n",
                 "Pod (unnamed): metadata.name: is required");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n",
                 "Pod default/p: metadata.creationTimestamp: invalid RFC 3339 time \"yesterday\"");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims:\n"
                 "  - {name: gpu}\n",
                 "Pod default/p: spec.resourceClaims[0]: must specify one of: "
                 "`resourceClaimName`, `resourceClaimTemplateName`");
  expect_invalid("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Sleeping}\n",
                 "Pod default/p: status.phase: unsupported value \"Sleeping\": supported values: "
                 "\"Pending\", \"Running\", \"Succeeded\", \"Failed\", \"Unknown\"");
}

/* ---- nodes and the other core kinds ---------------------------------------------------- */

static const char *node_yaml =
    "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-1\n  labels: {nvidia.com/gpu.count: \"8\", "
    "zone: a}\nspec:\n  unschedulable: false\n  taints:\n"
    "  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n"
    "status:\n  capacity: {cpu: \"96\", memory: 1Ti}\n"
    "  allocatable: {cpu: 95500m, memory: 1000Gi, nvidia.com/gpu: \"8\", pods: \"110\"}\n"
    "  conditions:\n  - {type: Ready, status: \"True\"}\n";

static void test_node(void **state) {
  model_node *n = (model_node *)must_decode(node_yaml);
  (void)state;
  assert_string_equal(n->obj.key, "gpu-1");
  assert_string_equal(n->obj.ns, "");
  assert_int_equal(n->alloc[MODEL_RES_CPU], 95500);
  assert_int_equal(n->alloc[MODEL_RES_MEMORY], 1000LL << 30);
  assert_int_equal(n->alloc[model_resource_id(table(), "nvidia.com/gpu")], 8);
  assert_int_equal(n->alloc[MODEL_RES_PODS], 110);
  assert_true(n->ready);
  assert_int_equal(n->ntaints, 1);
  assert_string_equal(n->taints[0].value, "present");
  model_obj_free(&n->obj);
  expect_invalid("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec:\n  taints:\n"
                 "  - {key: a}\n",
                 "Node n: spec.taints[0].effect: is required");
  expect_invalid("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus:\n"
                 "  allocatable: {memory: -1Gi}\n",
                 "Node n: status.allocatable[memory]: must be greater than or equal to 0");
  expect_invalid("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {unschedulable: yes}\n",
                 "Node n: spec.unschedulable: must be a boolean, not a string");
}

static void test_core_kinds(void **state) {
  model_priority_class *pc;
  model_pdb *pdb;
  model_obj *ns;
  (void)state;
  pc = (model_priority_class *)must_decode(
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
      "value: 1000\nglobalDefault: true\npreemptionPolicy: Never\n");
  assert_int_equal(pc->value, 1000);
  assert_true(pc->global_default);
  assert_true(pc->preempt_never);
  model_obj_free(&pc->obj);
  expect_invalid("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\n",
                 "PriorityClass x: value: is required");
  expect_invalid("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\n"
                 "value: 2000000000\n",
                 "PriorityClass x: value: must be no greater than 1000000000");
  pdb = (model_pdb *)must_decode(
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b, namespace: t}\n"
      "spec:\n  minAvailable: 50%\n  selector: {matchLabels: {app: x}}\n"
      "status: {disruptionsAllowed: 1, currentHealthy: 3, observedGeneration: 2}\n");
  assert_true(pdb->min_available.percent);
  assert_int_equal(pdb->min_available.value, 50);
  assert_int_equal(pdb->disruptions_allowed, 1);
  assert_int_equal(pdb->observed_generation, 2);
  assert_true(pdb->selector.present);
  model_obj_free(&pdb->obj);
  expect_invalid("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\n"
                 "spec: {maxUnavailable: lots}\n",
                 "PodDisruptionBudget default/b: spec.maxUnavailable: must be an integer or a "
                 "percentage between 0% and 100%");
  ns = must_decode("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"
                   "  labels: {kubernetes.io/metadata.name: team-a}\n");
  assert_int_equal(ns->kind, MODEL_NAMESPACE);
  assert_int_equal(ns->labels.n, 1);
  model_obj_free(ns);
  /* Kinds Tessera does not read are skipped, not errors. */
  {
    model_obj *o = NULL;
    ts_err e;
    assert_int_equal(decode_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", &o, &e),
                     TS_OK);
    assert_null(o);
    assert_int_equal(decode_yaml("apiVersion: apps/v1\nkind: Pod\nmetadata: {name: c}\n", &o, &e),
                     TS_OK);
    assert_null(o);
  }
}

/* ---- DRA ------------------------------------------------------------------------------- */

static void test_dra_versions(void **state) {
  const char *v1 =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
      "spec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n"
      "  pool: {name: n1, generation: 2, resourceSliceCount: 1}\n"
      "  sharedCounters:\n  - name: c0\n    counters: {memory: {value: 80Gi}}\n"
      "  devices:\n  - name: gpu-0\n"
      "    attributes: {productName: {string: A100}, index: {int: 0}, "
      "other.com/mig: {bool: true}, driverVersion: {version: 550.90.7}}\n"
      "    capacity: {memory: {value: 80Gi}}\n"
      "    consumesCounters:\n    - counterSet: c0\n      counters: {memory: {value: 40Gi}}\n";
  const char *beta1 = "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\n"
                      "metadata: {name: s}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n"
                      "  pool: {name: n1, generation: 2, resourceSliceCount: 1}\n"
                      "  devices:\n  - name: gpu-0\n    basic:\n"
                      "      attributes: {productName: {string: A100}}\n"
                      "      capacity: {memory: {value: 80Gi}}\n"
                      "      consumesCounters:\n      - counterSet: c0\n"
                      "        counters: {memory: {value: 40Gi}}\n";
  model_slice *a = (model_slice *)must_decode(v1), *b = (model_slice *)must_decode(beta1);
  const char *gpu = ts_intern_cstr("gpu.nvidia.com");
  char q[TS_QUANTITY_STR_MAX];
  (void)state;
  assert_ptr_equal(a->driver, gpu);
  assert_int_equal(a->pool_generation, 2);
  assert_int_equal(a->ndevices, 1);
  assert_int_equal(a->devices[0].nattrs, 4);
  for (uint32_t i = 0; i < a->devices[0].nattrs; i++) {
    const model_attr *x = &a->devices[0].attrs[i];
    if (!strcmp(x->name, "mig")) {
      assert_string_equal(x->domain, "other.com"); /* qualified names keep their domain */
      assert_true(x->b);
    } else {
      assert_ptr_equal(x->domain, gpu); /* unqualified names belong to the driver */
    }
    if (!strcmp(x->name, "driverVersion")) assert_int_equal(x->kind, MODEL_ATTR_VERSION);
  }
  assert_int_equal(a->ncounter_sets, 1);
  ts_quantity_format(&a->devices[0].consumes[0].counters[0].value, q);
  assert_string_equal(q, "40Gi");
  /* v1beta1 wraps the same fields in basic: one internal form. */
  assert_int_equal(b->devices[0].nattrs, 1);
  assert_ptr_equal(b->devices[0].caps[0].domain, gpu);
  assert_int_equal(b->devices[0].nconsumes, 1);
  model_obj_free(&a->obj);
  model_obj_free(&b->obj);
}

static void test_claims(void **state) {
  model_claim *v1 = (model_claim *)must_decode(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: t}\n"
      "spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n"
      "        deviceClassName: gpu.nvidia.com\n        count: 2\n"
      "        selectors: [{cel: {expression: 'device.driver == \"x\"'}}]\n"
      "    - name: accel\n      firstAvailable:\n      - {name: mig, deviceClassName: mig}\n"
      "      - {name: full, deviceClassName: gpu, allocationMode: All}\n"
      "    constraints:\n    - {requests: [gpu], matchAttribute: gpu.nvidia.com/productName}\n"
      "    config:\n    - requests: [gpu]\n      opaque: {driver: gpu.nvidia.com, parameters: {a: "
      "1}}\n"
      "status:\n  allocation:\n    devices:\n      results:\n"
      "      - {request: gpu, driver: gpu.nvidia.com, pool: n1, device: gpu-0}\n"
      "    nodeSelector:\n      nodeSelectorTerms:\n      - matchFields:\n"
      "        - {key: metadata.name, operator: In, values: [n1]}\n"
      "  reservedFor:\n  - {resource: pods, name: p, uid: u}\n");
  model_claim *b1 = (model_claim *)must_decode(
      "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\n"
      "spec:\n  devices:\n    requests:\n    - name: gpu\n      deviceClassName: gpu.nvidia.com\n"
      "    - name: accel\n      deviceClassName: \"\"\n      firstAvailable:\n"
      "      - {name: mig, deviceClassName: mig}\n");
  (void)state;
  assert_int_equal(v1->spec.nrequests, 2);
  assert_int_equal(v1->spec.requests[0].exactly.count, 2);
  assert_int_equal(v1->spec.requests[0].exactly.nselectors, 1);
  assert_true(v1->spec.requests[1].first_available);
  assert_int_equal(v1->spec.requests[1].nsubs, 2);
  assert_int_equal(v1->spec.requests[1].subs[0].count, 1); /* ExactCount defaults to 1 */
  assert_int_equal(v1->spec.requests[1].subs[1].mode, MODEL_ALLOC_ALL);
  assert_string_equal(v1->spec.constraints[0].match_attribute, "gpu.nvidia.com/productName");
  assert_int_equal(json_integer_value(json_object_get(v1->spec.configs[0].opaque.parameters, "a")),
                   1);
  assert_true(v1->allocation.present);
  assert_string_equal(v1->allocation.results[0].device, "gpu-0");
  assert_int_equal(v1->allocation.node_selector.nterms, 1);
  assert_int_equal(v1->nreserved_for, 1);
  assert_int_equal(b1->spec.nrequests, 2);
  assert_string_equal(b1->spec.requests[0].exactly.device_class, "gpu.nvidia.com");
  assert_int_equal(b1->spec.requests[0].exactly.count, 1);
  assert_true(b1->spec.requests[1].first_available);
  model_obj_free(&v1->obj);
  model_obj_free(&b1->obj);
}

static void test_dra_invalid(void **state) {
  (void)state;
  expect_invalid("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\n"
                 "metadata: {name: train, namespace: team-a}\nspec:\n  devices:\n    requests:\n"
                 "    - {name: gpu, deviceClassName: gpu.nvidia.com, count: -1}\n",
                 "ResourceClaim team-a/train: spec.devices.requests[0].count: Invalid value: -1: "
                 "must be greater than zero");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                 "metadata: {name: train, namespace: team-a}\nspec:\n  devices:\n    requests:\n"
                 "    - {name: gpu, exactly: {deviceClassName: g, allocationMode: Some}}\n",
                 "ResourceClaim team-a/train: spec.devices.requests[0].exactly.allocationMode: "
                 "unsupported value \"Some\": supported values: \"ExactCount\", \"All\"");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                 "metadata: {name: c, namespace: t}\nspec:\n  devices:\n    requests:\n"
                 "    - {name: gpu, deviceClassName: g}\n",
                 "ResourceClaim t/c: spec.devices.requests[0]: exactly one of `exactly` or "
                 "`firstAvailable` is required");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                 "metadata: {name: c, namespace: t}\nspec:\n  devices:\n    requests:\n"
                 "    - {name: gpu, exactly: {deviceClassName: g, selectors: [{}]}}\n",
                 "ResourceClaim t/c: spec.devices.requests[0].exactly.selectors[0].cel: is "
                 "required");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                 "metadata: {name: c, namespace: t}\nspec:\n  devices:\n    requests:\n"
                 "    - {name: gpu, exactly: {deviceClassName: g}}\n"
                 "    constraints: [{matchAttribute: productName}]\n",
                 "ResourceClaim t/c: spec.devices.constraints[0].matchAttribute: must include a "
                 "domain");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                 "spec:\n  driver: d\n  nodeName: n\n  allNodes: true\n"
                 "  pool: {name: p, resourceSliceCount: 1}\n",
                 "ResourceSlice s: spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                 "`perDeviceNodeSelection` is required");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                 "spec:\n  driver: d\n  allNodes: true\n  pool: {name: p, resourceSliceCount: 1}\n"
                 "  devices:\n  - name: x\n    attributes: {a: {int: 1, string: b}}\n",
                 "ResourceSlice s: spec.devices[0].attributes[a]: exactly one value must be "
                 "specified");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                 "spec:\n  driver: d\n  allNodes: true\n  pool: {name: p}\n",
                 "ResourceSlice s: spec.pool.resourceSliceCount: must be greater than zero");
  expect_invalid("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: g}\n"
                 "spec:\n  config: [{opaque: {driver: d}}]\n",
                 "DeviceClass g: spec.config[0].opaque.parameters: is required");
  {
    /* Lenient decoding (allocator test vectors) keeps what the allocator must reject. */
    in_docs docs = {0};
    model_obj *o = NULL;
    model_decode_opts lenient = {.lenient = true};
    ts_err e;
    const char *y = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                    "metadata: {name: c, namespace: t}\nspec:\n  devices:\n    requests:\n"
                    "    - {name: gpu, exactly: {deviceClassName: g, allocationMode: Some, "
                    "selectors: [{}]}}\n";
    assert_int_equal(in_yaml_parse(y, strlen(y), &docs, &e), TS_OK);
    assert_int_equal(model_decode(docs.v[0].value, &lenient, &o, &e), TS_OK);
    assert_int_equal(((model_claim *)o)->spec.requests[0].exactly.mode, MODEL_ALLOC_UNKNOWN);
    model_obj_free(o);
    in_docs_free(&docs);
  }
}

/* ---- Kueue and PodGroup ---------------------------------------------------------------- */

static void test_kueue(void **state) {
  model_cluster_queue *cq = (model_cluster_queue *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
      "  cohortName: research\n  namespaceSelector: {}\n  queueingStrategy: StrictFIFO\n"
      "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any,\n"
      "    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}}\n"
      "  flavorFungibility: {whenCanBorrow: TryNextFlavor}\n  fairSharing: {weight: \"2\"}\n"
      "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n"
      "    - name: a100\n      resources:\n      - {name: cpu, nominalQuota: 64}\n"
      "      - {name: nvidia.com/gpu, nominalQuota: 32, borrowingLimit: 16}\n");
  model_cluster_queue *old = (model_cluster_queue *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
      "  cohort: research\n  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: "
      "Preempt}\n");
  model_cohort *co = (model_cohort *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: child}\n"
      "spec: {parentName: root}\n");
  model_local_queue *lq = (model_local_queue *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q, namespace: t}\n"
      "spec: {clusterQueue: cq}\n");
  model_resource_flavor *rf = (model_resource_flavor *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\nspec:\n"
      "  nodeLabels: {gpu: a100}\n  nodeTaints: [{key: g, value: p, effect: NoSchedule}]\n"
      "  tolerations: [{key: g, operator: Equal, value: p, effect: NoSchedule}]\n");
  model_pod_group *pg =
      (model_pod_group *)must_decode("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: "
                                     "PodGroup\nmetadata: {name: g, namespace: t}\n"
                                     "spec: {minMember: 3, minResources: {cpu: \"6\"}}\n");
  model_workload_priority_class *wpc = (model_workload_priority_class *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: w}\n"
      "value: 500\n");
  (void)state;
  assert_string_equal(cq->cohort, "research");
  assert_true(cq->ns_selector.present);
  assert_int_equal(cq->queueing, MODEL_STRICT_FIFO);
  assert_int_equal(cq->within_cq, MODEL_PREEMPT_LOWER_PRIORITY);
  assert_int_equal(cq->reclaim_cohort, MODEL_PREEMPT_ANY);
  assert_int_equal(cq->borrow_cohort, MODEL_PREEMPT_LOWER_PRIORITY);
  assert_int_equal(cq->borrow_max_priority, 100);
  assert_int_equal(cq->when_can_borrow, MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR);
  assert_int_equal(cq->when_can_preempt, MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR);
  assert_int_equal(cq->ngroups, 1);
  assert_int_equal(cq->groups[0].flavors[0].nresources, 2);
  assert_true(cq->groups[0].flavors[0].resources[1].has_borrowing);
  assert_int_equal(cq->fair_weight.mant, 2);
  assert_string_equal(old->cohort, "research");
  assert_int_equal(old->when_can_borrow, MODEL_FUNGIBILITY_MAY_STOP_SEARCH);
  assert_int_equal(old->when_can_preempt, MODEL_FUNGIBILITY_MAY_STOP_SEARCH);
  assert_false(old->ns_selector.present); /* nil selector: no namespace */
  assert_string_equal(co->parent, "root");
  assert_string_equal(lq->cluster_queue, "cq");
  assert_int_equal(rf->nnode_taints, 1);
  assert_int_equal(rf->ntolerations, 1);
  assert_int_equal(pg->min_member, 3);
  assert_int_equal(model_rlist_get(&pg->min_resources, MODEL_RES_CPU), 6000);
  assert_int_equal(wpc->value, 500);
  model_obj_free(&cq->obj);
  model_obj_free(&old->obj);
  model_obj_free(&co->obj);
  model_obj_free(&lq->obj);
  model_obj_free(&rf->obj);
  model_obj_free(&pg->obj);
  model_obj_free(&wpc->obj);
  /* The seed article's queue: a borrowing limit without a cohort, rejected as Kueue's
   * webhook does (only with admission checks: a server may serve such an object when it
   * drops cohortName converting v1beta2 to v1beta1). */
  decode_opts.admission = true;
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                 "metadata: {name: cluster-gpu-pool}\nspec:\n  namespaceSelector: {}\n"
                 "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
                 "    - name: a100-80gb\n      resources:\n"
                 "      - {name: nvidia.com/gpu, nominalQuota: 32, borrowingLimit: 16}\n",
                 "ClusterQueue cluster-gpu-pool: spec.resourceGroups[0].flavors[0].resources[0]."
                 "borrowingLimit: must be nil when cohort is empty");
  decode_opts.admission = false;
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
                 "spec:\n  resourceGroups:\n  - coveredResources: [cpu, memory]\n    flavors:\n"
                 "    - name: f\n      resources:\n      - {name: memory, nominalQuota: 1}\n"
                 "      - {name: cpu, nominalQuota: 1}\n",
                 "ClusterQueue cq: spec.resourceGroups[0].flavors[0].resources[0].name: must match "
                 "the coveredResources of the group, in order");
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
                 "spec: {queueingStrategy: Random}\n",
                 "ClusterQueue cq: spec.queueingStrategy: unsupported value \"Random\": supported "
                 "values: \"BestEffortFIFO\", \"StrictFIFO\"");
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q}\n"
                 "spec: {}\n",
                 "LocalQueue default/q: spec.clusterQueue: is required");
  expect_invalid("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                 "metadata: {name: g}\nspec: {minMember: 0}\n",
                 "PodGroup default/g: spec.minMember: must be at least 1");
}

/* ---- Volcano's and KAI's queues -------------------------------------------------------- */

/* The quota of resource name in a decoded queue's only flavor. */
static const model_quota *queue_quota(const model_cluster_queue *q, const char *name) {
  assert_int_equal(q->ngroups, 1);
  assert_int_equal(q->groups[0].nflavors, 1);
  for (uint32_t r = 0; r < q->groups[0].flavors[0].nresources; r++)
    if (!strcmp(q->groups[0].flavors[0].resources[r].resource, name))
      return &q->groups[0].flavors[0].resources[r];
  fail_msg("%s: no quota for %s", q->obj.name, name);
  return NULL;
}

static void assert_qty(const ts_quantity *q, const char *want) {
  char got[TS_QUANTITY_STR_MAX];
  ts_quantity_format(q, got);
  if (strcmp(got, want)) fail_msg("quantity %s, want %s", got, want);
}

static void test_foreign_queues(void **state) {
  model_cluster_queue *v, *w, *k, *lean;
  const model_quota *x;
  (void)state;
  v = (model_cluster_queue *)must_decode(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: research}\n"
      "spec:\n  weight: 3\n  reclaimable: false\n  parent: ml\n  dequeueStrategy: fifo\n"
      "  deserved: {nvidia.com/gpu: 4, cpu: 8}\n  capability: {nvidia.com/gpu: 6, cpu: 6}\n"
      "  guarantee: {resource: {nvidia.com/gpu: 1, example.com/fpga: 2}}\n");
  assert_int_equal(v->obj.kind, MODEL_VOLCANO_QUEUE);
  assert_string_equal(v->groups[0].flavors[0].flavor, "scheduling.volcano.sh");
  assert_int_equal(v->groups[0].ncovered, 4); /* cpu, memory, nvidia.com/gpu, example.com/fpga */
  x = queue_quota(v, "nvidia.com/gpu");       /* deserved 4, capability 6, guarantee 1 */
  assert_qty(&x->nominal, "4");
  assert_true(x->has_borrowing && x->has_lending);
  assert_qty(&x->borrowing, "2");
  assert_qty(&x->lending, "3");
  x = queue_quota(v, "cpu"); /* capability below deserved: capped */
  assert_qty(&x->nominal, "6");
  assert_qty(&x->borrowing, "0");
  assert_false(x->has_lending);
  x = queue_quota(v, "example.com/fpga"); /* guarantee alone: kept, not lent, no limit */
  assert_qty(&x->nominal, "2");
  assert_qty(&x->lending, "0");
  assert_false(x->has_borrowing);
  x = queue_quota(v, "memory"); /* not named: nothing deserved, no limit */
  assert_qty(&x->nominal, "0");
  assert_false(x->has_borrowing || x->has_lending);
  assert_string_equal(v->cohort, "ml");
  assert_true(v->not_reclaimable && v->uncovered_free);
  assert_int_equal(v->fair_weight.mant, 3);
  assert_int_equal(v->queueing, MODEL_STRICT_FIFO);
  assert_int_equal(v->reclaim_cohort, MODEL_PREEMPT_ANY);
  assert_int_equal(v->within_cq, MODEL_PREEMPT_LOWER_PRIORITY);
  assert_true(v->ns_selector.present && !v->ns_selector.nreqs); /* every namespace */
  w = (model_cluster_queue *)must_decode(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: default}\n");
  assert_null(w->cohort);
  assert_false(w->not_reclaimable);
  assert_int_equal(w->queueing, MODEL_BEST_EFFORT_FIFO);
  k = (model_cluster_queue *)must_decode(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: team-a}\nspec:\n"
      "  parentQueue: dept\n  resources:\n"
      "    gpu: {quota: 2.5, limit: 6, overQuotaWeight: 2}\n"
      "    cpu: {quota: 1500, limit: 1000, overQuotaWeight: 1}\n"
      "    memory: {quota: -1, limit: -1}\n");
  assert_int_equal(k->obj.kind, MODEL_KAI_QUEUE);
  assert_string_equal(k->groups[0].flavors[0].flavor, "scheduling.run.ai");
  assert_string_equal(k->cohort, "dept");
  x = queue_quota(k, "nvidia.com/gpu"); /* 2.5 GPUs, to the thousandth; limit 6 */
  assert_qty(&x->nominal, "2500m");
  assert_qty(&x->borrowing, "3500m");
  x = queue_quota(k, "cpu"); /* millicores; the limit caps the quota */
  assert_qty(&x->nominal, "1");
  assert_qty(&x->borrowing, "0");
  x = queue_quota(k, "memory"); /* unlimited */
  assert_qty(&x->nominal, "1Ei");
  assert_false(x->has_borrowing);
  assert_int_equal(k->fair_weight.mant, 2); /* gpu's overQuotaWeight */
  lean = (model_cluster_queue *)must_decode(
      "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: lean}\nspec:\n"
      "  resources:\n    gpu: {quota: 2, limit: 2}\n    memory: {quota: 4096, limit: 8192}\n");
  x = queue_quota(lean, "cpu"); /* left out: KAI reads quota 0, limit 0 */
  assert_qty(&x->nominal, "0");
  assert_true(x->has_borrowing);
  assert_qty(&x->borrowing, "0");
  x = queue_quota(lean, "memory"); /* megabytes */
  assert_qty(&x->nominal, "4096M");
  assert_qty(&x->borrowing, "4096M");
  model_obj_free(&v->obj);
  model_obj_free(&w->obj);
  model_obj_free(&k->obj);
  model_obj_free(&lean->obj);
  expect_invalid("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec: {}\n",
                 "Queue q: spec.resources: is required");
  expect_invalid("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n"
                 "  resources: {gpu: {quota: -2}}\n",
                 "Queue q: spec.resources.gpu.quota: must be -1 or a number from 0 to 1e15");
  expect_invalid("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n"
                 "  resources: {cpu: {limit: \"lots\"}}\n",
                 "Queue q: spec.resources.cpu.limit: must be a number");
  expect_invalid("apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata: {name: q}\nspec:\n"
                 "  parentQueue: q\n  resources: {}\n",
                 "Queue q: spec.parentQueue: a queue cannot be its own parent");
  expect_invalid("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
                 "spec: {deserved: {cpu: -1}}\n",
                 "Queue q: spec.deserved[cpu]: must not be negative");
  expect_invalid(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
      "spec: {capability: {cpu: lots}}\n",
      "Queue q: spec.capability[cpu]: quantity \"lots\" must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  expect_invalid("apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
                 "spec: {weight: -1}\n",
                 "Queue q: spec.weight: must not be negative");
}

/* ---- selectors and tolerations --------------------------------------------------------- */

static model_labels labels_of(model_kv *kv, uint32_t n) {
  return (model_labels){kv, n};
}

static void test_selectors(void **state) {
  model_pod *p = (model_pod *)must_decode(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    nodeAffinity:\n"
      "      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n"
      "        - matchExpressions:\n          - {key: zone, operator: In, values: [a, b]}\n"
      "          - {key: gpus, operator: Lt, values: [\"8\"]}\n"
      "        - matchFields:\n          - {key: metadata.name, operator: In, values: "
      "[special]}\n");
  model_kv kv[] = {{ts_intern_cstr("gpus"), ts_intern_cstr("4")},
                   {ts_intern_cstr("zone"), ts_intern_cstr("a")}};
  model_kv kv2[] = {{ts_intern_cstr("gpus"), ts_intern_cstr("8")},
                    {ts_intern_cstr("zone"), ts_intern_cstr("a")}};
  model_labels l1 = labels_of(kv, 2), l2 = labels_of(kv2, 2), none = {0};
  model_pdb *pdb;
  (void)state;
  assert_true(model_node_selector_match(&p->affinity, "n1", &l1));
  assert_false(model_node_selector_match(&p->affinity, "n1", &l2));       /* 8 is not < 8 */
  assert_true(model_node_selector_match(&p->affinity, "special", &none)); /* second term */
  assert_false(model_node_selector_match(&p->affinity, "n1", &none));
  model_obj_free(&p->obj);
  pdb = (model_pdb *)must_decode(
      "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n"
      "  selector:\n    matchLabels: {zone: a}\n    matchExpressions:\n"
      "    - {key: gpus, operator: NotIn, values: [\"8\"]}\n    - {key: x, operator: "
      "DoesNotExist}\n");
  assert_true(model_label_selector_match(&pdb->selector, &l1));
  assert_false(model_label_selector_match(&pdb->selector, &l2));
  assert_false(model_label_selector_match(&pdb->selector, &none));
  model_obj_free(&pdb->obj);
  {
    model_label_selector absent = {0}, empty = {.present = true};
    assert_false(model_label_selector_match(&absent, &l1));
    assert_true(model_label_selector_match(&empty, &l1));
  }
}

static void test_tolerations(void **state) {
  const char *g = ts_intern_cstr("nvidia.com/gpu"), *p = ts_intern_cstr("present"),
             *e = ts_intern_cstr("");
  model_taint taints[] = {{g, p, MODEL_EFFECT_NO_SCHEDULE},
                          {ts_intern_cstr("soft"), e, MODEL_EFFECT_PREFER_NO_SCHEDULE}};
  model_toleration exists_all = {e, true, e, MODEL_EFFECT_ANY};
  model_toleration equal = {g, false, p, MODEL_EFFECT_NO_SCHEDULE};
  model_toleration wrong_value = {g, false, e, MODEL_EFFECT_NO_SCHEDULE};
  model_toleration wrong_effect = {g, true, e, MODEL_EFFECT_NO_EXECUTE};
  (void)state;
  assert_true(model_tolerates(&exists_all, &taints[0]));
  assert_true(model_tolerates(&equal, &taints[0]));
  assert_false(model_tolerates(&wrong_value, &taints[0]));
  assert_false(model_tolerates(&wrong_effect, &taints[0]));
  /* PreferNoSchedule never blocks; NoSchedule does unless tolerated. */
  assert_ptr_equal(model_untolerated_taint(taints, 2, NULL, 0), &taints[0]);
  assert_null(model_untolerated_taint(taints, 2, &equal, 1));
  assert_null(model_untolerated_taint(&taints[1], 1, NULL, 0));
}

/* ---- jobs that own pods: how many must start together --------------------------------- */

static int32_t job_min(const char *yaml) {
  model_job *j = (model_job *)must_decode(yaml);
  int32_t v = j->min_pods;
  model_obj_free(&j->obj);
  return v;
}

static void test_jobs(void **state) {
  (void)state;
  /* batch Job: parallelism, capped by the completions still to come. */
  assert_int_equal(job_min("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: "
                           "a}\nspec: {parallelism: 4}\n"),
                   4);
  assert_int_equal(job_min("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: "
                           "a}\nspec: {parallelism: 4, completions: 5}\nstatus: {succeeded: 3}\n"),
                   2);
  assert_int_equal(job_min("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: "
                           "a}\nspec: {}\n"),
                   1);
  /* JobSet: replicas x parallelism over the replicated jobs. */
  assert_int_equal(job_min("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: "
                           "js, namespace: a}\nspec:\n  replicatedJobs:\n  - {name: leader, "
                           "template: {spec: {parallelism: 1}}}\n  - {name: workers, replicas: 2, "
                           "template: {spec: {parallelism: 4, completions: 4}}}\n"),
                   9);
  /* Kubeflow: every replica, or minAvailable; elastic minimum; MPI launcher made later. */
  assert_int_equal(job_min("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p, "
                           "namespace: a}\nspec:\n  pytorchReplicaSpecs:\n    Master: {replicas: "
                           "1}\n    Worker: {replicas: 7}\n"),
                   8);
  assert_int_equal(job_min("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p, "
                           "namespace: a}\nspec:\n  runPolicy: {schedulingPolicy: {minAvailable: "
                           "3}}\n  pytorchReplicaSpecs:\n    Worker: {replicas: 7}\n"),
                   3);
  assert_int_equal(job_min("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p, "
                           "namespace: a}\nspec:\n  elasticPolicy: {minReplicas: 2, maxReplicas: "
                           "8}\n  pytorchReplicaSpecs:\n    Worker: {replicas: 8}\n"),
                   2);
  assert_int_equal(job_min("apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m, "
                           "namespace: a}\nspec:\n  launcherCreationPolicy: WaitForWorkersReady\n"
                           "  mpiReplicaSpecs:\n    Launcher: {replicas: 1}\n    Worker: "
                           "{replicas: 4}\n"),
                   4);
  assert_int_equal(job_min("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t, "
                           "namespace: a}\nspec:\n  tfReplicaSpecs:\n    Chief: {}\n    PS: "
                           "{replicas: 2}\n    Worker: {replicas: 4}\n"),
                   7);
  expect_invalid("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: a}\n"
                 "spec: {parallelism: -1}\n",
                 "Job a/j: spec.parallelism: must be greater than or equal to 0");
  expect_invalid("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p, "
                 "namespace: a}\nspec:\n  pytorchReplicaSpecs:\n    Worker: {replicas: "
                 "many}\n",
                 "PyTorchJob a/p: spec.pytorchReplicaSpecs[Worker].replicas: must be an integer, "
                 "not a string");
  expect_invalid("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p, "
                 "namespace: a}\nspec: {}\n",
                 "PyTorchJob a/p: spec.pytorchReplicaSpecs: is required");
  expect_invalid("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, "
                 "namespace: a}\nspec:\n  replicatedJobs:\n  - {name: w, replicas: 2000, "
                 "template: {spec: {parallelism: 1000}}}\n",
                 "JobSet a/js: spec.replicatedJobs[0]: more than 1000000 pods at once");
}

/* ---- the store ------------------------------------------------------------------------- */

static ts_rc apply(model *m, const char *yaml, model_event ev) {
  in_docs docs = {0};
  ts_err e;
  ts_rc rc;
  assert_int_equal(in_yaml_parse(yaml, strlen(yaml), &docs, &e), TS_OK);
  rc = model_apply_json(m, docs.v[0].value, ev, NULL, NULL, NULL, &e);
  in_docs_free(&docs);
  return rc;
}

/* Two PriorityClasses claiming globalDefault (a race the API server allows): the lower value
 * is the default, as the priority admission plugin picks it; none: 0. The walk of the store
 * sees every object once. */
static void test_default_priority(void **state) {
  model *m = model_new();
  model_obj *o;
  int seen = 0;
  (void)state;
  assert_int_equal(model_default_priority(m), 0);
  for (int i = 0; i < 8; i++) {
    char y[256];
    snprintf(y, sizeof y,
             "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: pc-%d}\n"
             "value: %d\nglobalDefault: %s\n",
             i, 100 - i * 10, i == 2 || i == 5 ? "true" : "false");
    assert_int_equal(apply(m, y, MODEL_ADDED), TS_OK);
  }
  assert_int_equal(model_default_priority(m), 50); /* pc-5 (50), not pc-2 (80) */
  for (size_t it = 0; model_next(m, MODEL_PRIORITY_CLASS, &it, &o);) seen++;
  assert_int_equal(seen, 8);
  model_free(m);
}

/* A typed assumption on a claim: the allocation and the pod laid over the watched status, kept
 * over a new version without allocation (a stale watch event), gone with a version that has
 * one, and undone by model_claim_forget. */
static void test_claim_assume(void **state) {
  static const char *claim =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: "
      "{name: c, namespace: t, uid: uc, resourceVersion: \"%d\"}\nspec: "
      "{devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n%s";
  model *m = model_new();
  model_device_result res = {"r", "gpu.example.com", "pool-a", "gpu-3", false};
  model_allocation alloc = {true, &res, 1};
  const model_claim *c;
  char y[1024];
  (void)state;
  snprintf(y, sizeof y, claim, 1, "");
  assert_int_equal(apply(m, y, MODEL_ADDED), TS_OK);
  assert_int_equal(model_claim_assume(m, "t", "missing", &alloc, "p", "up"), TS_ENOTFOUND);
  assert_int_equal(model_claim_assume(m, "t", "c", &alloc, "p0", "u0"), TS_OK);
  assert_int_equal(model_claim_assume(m, "t", "c", NULL, "p1", "u1"), TS_OK); /* shared */
  c = (const model_claim *)model_get(m, MODEL_RESOURCE_CLAIM, "t", "c");
  assert_true(c->allocation.present);
  assert_string_equal(c->allocation.results[0].device, "gpu-3");
  assert_int_equal(c->nreserved_for, 2);
  assert_string_equal(c->reserved_for[1].uid, "u1");
  snprintf(y, sizeof y, claim, 2, ""); /* a stale event: still no allocation */
  assert_int_equal(apply(m, y, MODEL_MODIFIED), TS_OK);
  c = (const model_claim *)model_get(m, MODEL_RESOURCE_CLAIM, "t", "c");
  assert_true(c->assumed && c->allocation.present && c->nreserved_for == 2);
  model_claim_forget(m, "t", "c");
  assert_false(c->assumed || c->allocation.present || c->nreserved_for);
  assert_int_equal(model_claim_assume(m, "t", "c", &alloc, "p0", "u0"), TS_OK);
  snprintf(y, sizeof y, claim, 3,
           "status: {allocation: {devices: {results: [{request: r, driver: gpu.example.com, pool: "
           "pool-b, device: gpu-7}]}}}\n"); /* someone else's allocation wins */
  assert_int_equal(apply(m, y, MODEL_MODIFIED), TS_OK);
  c = (const model_claim *)model_get(m, MODEL_RESOURCE_CLAIM, "t", "c");
  assert_false(c->assumed);
  assert_string_equal(c->allocation.results[0].device, "gpu-7");
  assert_int_equal(c->nreserved_for, 0);
  model_free(m);
}

/* Hostile amounts: the requests of bound pods that add up past int64 on a node leave it full
 * (never wrapped into free room) until a pod leaves and the usage is recounted; a real number
 * too large for an integer field is refused, not converted (undefined behaviour). */
static void test_hostile_amounts(void **state) {
  static const char *node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: "
                            "{allocatable: {nvidia.com/gpu: \"8\"}}\n";
  static const char *pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t}\nspec: "
                           "{nodeName: n, containers: [{name: c, resources: {limits: "
                           "{nvidia.com/gpu: \"6917529027641081856\"}}}]}\n";
  model *m = model_new();
  const model_node *n;
  int gpu;
  char y[512];
  (void)state;
  assert_int_equal(apply(m, node, MODEL_ADDED), TS_OK);
  gpu = model_resource_find(model_resources_of(m), "nvidia.com/gpu");
  for (int i = 0; i < 2; i++) {
    snprintf(y, sizeof y, pod, i);
    assert_int_equal(apply(m, y, MODEL_ADDED), TS_OK);
  }
  n = (const model_node *)model_get(m, MODEL_NODE, NULL, "n");
  assert_true(n->usage_overflow);
  assert_true(n->used[gpu] == INT64_MAX); /* full, not negative */
  assert_int_equal(model_remove(m, MODEL_POD, "t", "p1"), TS_OK);
  assert_false(n->usage_overflow);
  assert_true(n->used[gpu] == 6917529027641081856LL);
  assert_int_equal(n->npods, 1);
  expect_invalid("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, "
                 "namespace: t}\nspec: {minMember: 1e300}\n",
                 "PodGroup t/g: spec.minMember: must be an integer");
  model_free(m);
}

/* Resource ids belong to a model and grow as needed; only what administrators write gives a
 * name an id. Once, ids were process-wide and capped at 64: a rejected pod naming 61 made-up
 * resources kept its ids, and every later Node or GPU pod failed with "more than 64 distinct
 * resource names", in replay and in `tessera run` alike. */
static void test_resource_name_flood(void **state) {
  model *m = model_new(), *other = model_new();
  model_resources *t = model_resources_of(m);
  ts_buf b;
  int before = model_resource_count(t), id;
  const model_pod *p;
  const model_node *n;
  (void)state;
  ts_buf_init(&b, 0);
  /* A rejected pod and a rejected Node leave no names behind. */
  ts_buf_puts(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: bad, namespace: t}\nspec:\n"
                  "  containers:\n  - resources:\n      requests:\n");
  for (int i = 0; i < 20; i++) ts_buf_printf(&b, "        flood.example/rejected-%d: \"1\"\n", i);
  ts_buf_puts(&b, "        cpu: one\n");
  assert_int_equal(apply(m, b.data, MODEL_ADDED), TS_EINVAL);
  assert_int_equal(apply(m,
                         "apiVersion: v1\nkind: Node\nmetadata: {name: bad}\nstatus: "
                         "{allocatable: {vendor.example/a: \"1\", vendor.example/b: many}}\n",
                         MODEL_ADDED),
                   TS_EINVAL);
  assert_int_equal(model_resource_count(t), before);
  /* A pod's made-up names take no ids at all: the pod keeps them, fits nowhere, says why. */
  ts_buf_reset(&b);
  ts_buf_puts(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: flood, namespace: t}\nspec:\n"
                  "  nodeName: accel\n  containers:\n  - resources:\n      requests:\n"
                  "        vendor.example/r99: \"3\"\n");
  for (int i = 0; i < 200; i++) ts_buf_printf(&b, "        flood.example/r%d: \"1\"\n", i);
  assert_int_equal(apply(m, b.data, MODEL_ADDED), TS_OK);
  assert_int_equal(model_resource_count(t), before);
  p = (const model_pod *)model_get(m, MODEL_POD, "t", "flood");
  assert_int_equal(p->nunresolved, 201);
  assert_non_null(p->unoffered);
  assert_int_equal(model_rlist_get(&p->requests, MODEL_RES_UNOFFERED), 203);
  /* Past MODEL_MAX_OBJECT_NAMES unknown names, the pod is refused with the field named. */
  ts_buf_reset(&b);
  ts_buf_puts(&b, "apiVersion: v1\nkind: Pod\nmetadata: {name: huge, namespace: t}\nspec:\n"
                  "  containers:\n  - resources:\n      requests:\n");
  for (int i = 0; i < 300; i++) ts_buf_printf(&b, "        flood.example/h%d: \"1\"\n", i);
  assert_int_equal(apply(m, b.data, MODEL_ADDED), TS_ELIMIT);
  /* Nodes grow the table past the old 64 ids; the pod's requests resolve as names get ids,
   * and its node counts them. */
  ts_buf_reset(&b);
  ts_buf_puts(&b, "apiVersion: v1\nkind: Node\nmetadata: {name: accel}\nstatus:\n"
                  "  allocatable:\n");
  for (int i = 0; i < 100; i++) ts_buf_printf(&b, "    vendor.example/r%d: \"4\"\n", i);
  assert_int_equal(apply(m, b.data, MODEL_ADDED), TS_OK);
  assert_int_equal(model_resource_count(t), before + 100);
  n = (const model_node *)model_get(m, MODEL_NODE, NULL, "accel");
  id = model_resource_find(t, "vendor.example/r99");
  assert_true(id >= 64);
  assert_int_equal(model_node_alloc(n, id), 4);
  assert_int_equal(model_rlist_get(&p->requests, id), 3);
  assert_int_equal(model_node_used(n, id), 3);
  assert_int_equal(p->nunresolved, 200);
  assert_int_equal(model_rlist_get(&p->requests, MODEL_RES_UNOFFERED), 200);
  /* Another model's table is its own. */
  assert_int_equal(model_resource_count(model_resources_of(other)), before);
  assert_int_equal(model_resource_find(model_resources_of(other), "vendor.example/r99"), -1);
  /* When every name resolves, the pod no longer counts as unoffered. */
  ts_buf_reset(&b);
  ts_buf_puts(&b, "apiVersion: v1\nkind: Node\nmetadata: {name: flood}\nstatus:\n"
                  "  allocatable:\n");
  for (int i = 0; i < 200; i++) ts_buf_printf(&b, "    flood.example/r%d: \"1\"\n", i);
  assert_int_equal(apply(m, b.data, MODEL_ADDED), TS_OK);
  assert_int_equal(p->nunresolved, 0);
  assert_null(p->unoffered);
  assert_int_equal(model_rlist_get(&p->requests, MODEL_RES_UNOFFERED), 0);
  assert_int_equal(model_node_used(n, model_resource_find(t, "flood.example/r7")), 0);
  ts_buf_free(&b);
  model_free(other);
  model_free(m);
}

/* A slice's CEL view goes with the stored version it was built from. The views were once kept
 * by the evaluator (dra_cel, shared by the models of one process, as `tessera bench` runs its
 * scenarios) and checked by object pointer and a version number unique per model: a new
 * model's slice of the same name, allocated where a freed one was, got the old view (test_gen
 * bound 72-75 of 80 DRA pods about one run in twenty). Now the view hangs on the version. */
/* Whether another controller (Kueue's) runs, from its Lease: held and renewed within twice its
 * duration, 15 s when the Lease has none. */
static void test_lease_held(void **state) {
  int64_t now;
  (void)state;
  ts_time_parse("2026-12-07T12:00:00Z", &now);
  static const char held[] =
      "{\"kind\":\"Lease\",\"spec\":{\"holderIdentity\":\"kueue-1\","
      "\"renewTime\":\"2026-12-07T11:59:31.000000Z\",\"leaseDurationSeconds\":15}}";
  assert_true(model_lease_held(held, strlen(held), now));                     /* 29 s ago */
  assert_false(model_lease_held(held, strlen(held), now + 2 * 1000000000LL)); /* 31 s */
  static const char bare[] = "{\"spec\":{\"holderIdentity\":\"k\","
                             "\"renewTime\":\"2026-12-07T11:59:40Z\"}}";
  assert_true(model_lease_held(bare, strlen(bare), now));                      /* 20 s, of 30 */
  assert_false(model_lease_held(bare, strlen(bare), now + 11 * 1000000000LL)); /* 31 s */
  static const char released[] = "{\"spec\":{\"holderIdentity\":\"\","
                                 "\"renewTime\":\"2026-12-07T11:59:59Z\"}}";
  assert_false(model_lease_held(released, strlen(released), now));
  assert_false(model_lease_held("not json", 8, now));
  assert_false(model_lease_held("[1]", 3, now));
}

static void slice_with(char *out, size_t cap, int idx) {
  snprintf(out, cap,
           "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
           "spec:\n  driver: d\n  nodeName: n\n  pool: {name: p, resourceSliceCount: 1}\n"
           "  devices:\n  - name: g\n    attributes: {idx: {int: %d}}\n",
           idx);
}

static void expect_idx(dra_cel *cel, model *m, int idx) {
  const model_slice *s = (const model_slice *)model_get(m, MODEL_RESOURCE_SLICE, NULL, "s");
  char expr[128];
  bool match = false;
  ts_err err;
  snprintf(expr, sizeof expr, "device.attributes['d'].idx == %d", idx);
  assert_int_equal(dra_cel_eval(cel, expr, s, 0, &match, &err), TS_OK);
  assert_true(match);
}

static void test_slice_view_per_version(void **state) {
  dra_cel *cel = dra_cel_new();
  char slice[512];
  (void)state;
  assert_non_null(cel);
  for (int i = 0; i < 8; i++) {
    model *m = model_new();
    slice_with(slice, sizeof slice, i);
    assert_int_equal(apply(m, slice, MODEL_ADDED), TS_OK);
    expect_idx(cel, m, i);
    if (i % 2) { /* an update in the same model: a new version, a new view */
      slice_with(slice, sizeof slice, i + 100);
      assert_int_equal(apply(m, slice, MODEL_MODIFIED), TS_OK);
      expect_idx(cel, m, i + 100);
    }
    model_free(m);
  }
  dra_cel_free(cel);
}

static void test_store(void **state) {
  model *m = model_new();
  model_node *n;
  size_t count, nn;
  int gpu;
  const char *bound = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: t, uid: ua}\n"
                      "spec:\n  nodeName: gpu-1\n  containers:\n"
                      "  - resources: {limits: {nvidia.com/gpu: 2}}\n";
  (void)state;
  /* A pod bound to a node not yet known: counted once the node arrives. */
  assert_int_equal(apply(m, bound, MODEL_ADDED), TS_OK);
  assert_int_equal(apply(m, node_yaml, MODEL_ADDED), TS_OK);
  gpu = model_resource_find(model_resources_of(m), "nvidia.com/gpu"); /* named by the node */
  assert_true(gpu >= MODEL_RES_FIRST_OTHER);
  n = (model_node *)model_get(m, MODEL_NODE, NULL, "gpu-1");
  assert_non_null(n);
  assert_int_equal(n->used[gpu], 2);
  assert_int_equal(n->npods, 1);
  assert_non_null(model_nodes(m, &nn));
  assert_int_equal(nn, 1);
  assert_ptr_equal(model_get_uid(m, "ua"), model_get(m, MODEL_POD, "t", "a"));
  assert_ptr_equal(model_node_pods_first(m, ts_intern_cstr("gpu-1")),
                   model_get(m, MODEL_POD, "t", "a"));
  /* Succeeded pods stop counting; an update replaces in place. */
  assert_int_equal(apply(m,
                         "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: t, uid: ua}\n"
                         "spec:\n  nodeName: gpu-1\n  containers:\n"
                         "  - resources: {limits: {nvidia.com/gpu: 2}}\n"
                         "status: {phase: Succeeded}\n",
                         MODEL_MODIFIED),
                   TS_OK);
  assert_int_equal(n->used[gpu], 0);
  assert_int_equal(n->npods, 0);
  assert_int_equal(model_count(m, MODEL_POD), 1);
  assert_int_equal(apply(m, bound, MODEL_MODIFIED), TS_OK);
  assert_int_equal(n->used[gpu], 2);
  /* Nodes by label. */
  assert_non_null(model_nodes_with_label(m, ts_intern_cstr("zone"), ts_intern_cstr("a"), &count));
  assert_int_equal(count, 1);
  assert_null(model_nodes_with_label(m, ts_intern_cstr("zone"), ts_intern_cstr("b"), &count));
  /* Deleting the node keeps the pod, which counts again when the node returns. */
  assert_int_equal(model_remove(m, MODEL_NODE, NULL, "gpu-1"), TS_OK);
  (void)model_nodes(m, &nn);
  assert_int_equal(nn, 0);
  assert_null(model_nodes_with_label(m, ts_intern_cstr("zone"), ts_intern_cstr("a"), &count));
  assert_int_equal(apply(m, node_yaml, MODEL_ADDED), TS_OK);
  n = (model_node *)model_get(m, MODEL_NODE, NULL, "gpu-1");
  assert_int_equal(n->used[gpu], 2);
  /* A DELETED event removes the pod and its charge. */
  assert_int_equal(apply(m, bound, MODEL_DELETED), TS_OK);
  assert_int_equal(n->used[gpu], 0);
  assert_null(model_get_uid(m, "ua"));
  assert_null(model_node_pods_first(m, ts_intern_cstr("gpu-1")));
  /* Slices by node and pool. */
  assert_int_equal(apply(m,
                         "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                         "metadata: {name: s1}\nspec:\n  driver: d\n  nodeName: gpu-1\n"
                         "  pool: {name: p, resourceSliceCount: 2}\n",
                         MODEL_ADDED),
                   TS_OK);
  assert_int_equal(apply(m,
                         "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                         "metadata: {name: s2}\nspec:\n  driver: d\n  allNodes: true\n"
                         "  pool: {name: p, resourceSliceCount: 2}\n",
                         MODEL_ADDED),
                   TS_OK);
  model_slices_of_node(m, ts_intern_cstr("gpu-1"), &count);
  assert_int_equal(count, 1);
  model_slices_of_pool(m, "d", "p", &count);
  assert_int_equal(count, 2);
  assert_int_equal(model_remove(m, MODEL_RESOURCE_SLICE, NULL, "s1"), TS_OK);
  model_slices_of_pool(m, "d", "p", &count);
  assert_int_equal(count, 1);
  assert_int_equal(model_remove(m, MODEL_RESOURCE_SLICE, NULL, "s1"), TS_ENOTFOUND);
  model_free(m);
}

/* Every prefix of allocation failures during decode + insert: no crash, no leak (ASan). */
static void test_alloc_failures(void **state) {
  in_docs docs = {0};
  ts_err e;
  (void)state;
  assert_int_equal(in_yaml_parse(pod_yaml, strlen(pod_yaml), &docs, &e), TS_OK);
  for (long n = 0;; n++) {
    model *m = model_new();
    ts_rc rc = TS_ENOMEM;
    if (m) {
      ts_alloc_fail_after(n);
      rc = model_apply_json(m, docs.v[0].value, MODEL_ADDED, NULL, NULL, NULL, &e);
      ts_alloc_fail_after(-1);
      model_free(m);
    }
    if (rc == TS_OK && !ts_alloc_failed()) break;
    assert_true(n < 10000);
  }
  in_docs_free(&docs);
}

/* Three kinds are named PodGroup: the group tells them apart (validation, informers that are
 * skipped), and each decodes into a PodGroup with its minMember. */
static void test_kind_in_group(void **state) {
  json_error_t je;
  json_t *o;
  model_obj *obj = NULL;
  ts_err e;
  model_decode_opts opts = {0};
  (void)state;
  assert_int_equal(model_kind_in_group("scheduling.volcano.sh/v1beta1", "PodGroup"),
                   MODEL_VOLCANO_POD_GROUP);
  assert_int_equal(model_kind_in_group("scheduling.run.ai", "PodGroup"), MODEL_KAI_POD_GROUP);
  assert_int_equal(model_kind_in_group("scheduling.x-k8s.io", "PodGroup"), MODEL_POD_GROUP);
  assert_int_equal(model_kind_in_group("v1", "Pod"), MODEL_POD);
  assert_int_equal(model_kind_in_group("", "Node"), MODEL_NODE);
  assert_int_equal(model_kind_in_group("apps/v1", "Deployment"), MODEL_KIND_COUNT);
  assert_int_equal(model_kind_in_group("scheduling.k8s.io", "PodGroup"), MODEL_KIND_COUNT);
  o = json_loads("{\"apiVersion\":\"scheduling.run.ai/v2alpha2\",\"kind\":\"PodGroup\","
                 "\"metadata\":{\"name\":\"g\",\"namespace\":\"ml\"},"
                 "\"spec\":{\"minMember\":3,\"queue\":\"team-a\"}}",
                 0, &je);
  ts_err_clear(&e);
  assert_int_equal(model_decode(o, &opts, &obj, &e), TS_OK);
  assert_non_null(obj);
  assert_int_equal(obj->kind, MODEL_KAI_POD_GROUP);
  assert_int_equal(((model_pod_group *)obj)->min_member, 3);
  model_obj_free(obj);
  json_decref(o);
}

/* Kueue's Workload: pod sets, the admission (flavors and the topology assignment, v1beta2's
 * slices and v1beta1's domains alike) and the conditions; bad ones name the field. */
static void test_workload(void **state) {
  model_workload *w = (model_workload *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: job-a, namespace: t}\n"
      "spec:\n  queueName: lq\n  podSets: [{name: main, count: 5}, {name: launcher, count: 1}]\n"
      "status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n"
      "    - name: main\n      count: 5\n      flavors: {nvidia.com/gpu: a100, cpu: default}\n"
      "      topologyAssignment:\n        levels: [rack, kubernetes.io/hostname]\n"
      "        slices:\n        - domainCount: 2\n          podCounts: {individual: [3, 1]}\n"
      "          valuesPerLevel:\n          - universal: r1\n"
      "          - individual: {prefix: node-, roots: [a, b], suffix: -x}\n"
      "        - domainCount: 1\n          podCounts: {universal: 1}\n"
      "          valuesPerLevel: [{universal: r2}, {universal: node-c}]\n"
      "  conditions:\n  - {type: QuotaReserved, status: 'True', reason: QuotaReserved}\n"
      "  - {type: Admitted, status: 'True', reason: Admitted}\n");
  model_workload *old = (model_workload *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: b, namespace: t}\n"
      "spec:\n  podSets: [{name: main, count: 2}]\nstatus:\n  admission:\n"
      "    clusterQueue: cq\n    podSetAssignments:\n    - name: main\n"
      "      topologyAssignment:\n        levels: [rack]\n"
      "        domains: [{values: [r1], count: 2}]\n");
  model_workload *pending = (model_workload *)must_decode(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: c, namespace: t}\n"
      "spec:\n  active: false\n  podSets: [{count: 1}]\nstatus:\n  conditions:\n"
      "  - {type: QuotaReserved, status: 'False', reason: Pending, message: "
      "\"couldn't assign flavors to pod set main: insufficient quota\"}\n");
  (void)state;
  assert_string_equal(w->queue_name, "lq");
  assert_true(w->active && w->admitted && w->quota_reserved && !w->evicted && !w->why);
  assert_string_equal(w->cluster_queue, "cq");
  assert_int_equal(w->npodsets, 2);
  assert_true(w->podsets[0].assigned && !w->podsets[1].assigned);
  assert_int_equal(w->podsets[0].admitted, 5);
  assert_int_equal(w->podsets[0].nflavors, 2);
  assert_int_equal(w->podsets[0].nlevels, 2);
  assert_int_equal(w->podsets[0].ndomains, 3);
  assert_string_equal(w->podsets[0].domains[0].values[0], "r1");
  assert_string_equal(w->podsets[0].domains[0].values[1], "node-a-x");
  assert_int_equal(w->podsets[0].domains[0].count, 3);
  assert_string_equal(w->podsets[0].domains[1].values[1], "node-b-x");
  assert_int_equal(w->podsets[0].domains[1].count, 1);
  assert_string_equal(w->podsets[0].domains[2].values[0], "r2");
  assert_int_equal(w->podsets[0].domains[2].count, 1);
  assert_false(old->admitted); /* no Admitted condition: not admitted, whatever status says */
  assert_int_equal(old->podsets[0].admitted, 2);
  assert_int_equal(old->podsets[0].ndomains, 1);
  assert_string_equal(old->podsets[0].domains[0].values[0], "r1");
  assert_false(pending->active || pending->admitted || pending->quota_reserved);
  assert_string_equal(pending->podsets[0].name, "main");
  assert_string_equal(pending->why, "couldn't assign flavors to pod set main: insufficient quota");
  model_obj_free(&w->obj);
  model_obj_free(&old->obj);
  model_obj_free(&pending->obj);
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: x, "
                 "namespace: t}\nspec: {podSets: [{name: main, count: 1}]}\nstatus:\n  admission:\n"
                 "    clusterQueue: cq\n    podSetAssignments: [{name: other}]\n",
                 "Workload t/x: status.admission.podSetAssignments[0].name: names no pod set of "
                 "spec.podSets: \"other\"");
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: x, "
                 "namespace: t}\nspec: {podSets: [{name: main, count: 2}]}\nstatus:\n  admission:\n"
                 "    clusterQueue: cq\n    podSetAssignments:\n    - name: main\n"
                 "      topologyAssignment:\n        levels: [a, b]\n        slices:\n"
                 "        - domainCount: 2\n          podCounts: {universal: 1}\n"
                 "          valuesPerLevel: [{universal: r}, {individual: {roots: [n1]}}]\n",
                 "Workload t/x: status.admission.podSetAssignments[0].topologyAssignment.slices[0]."
                 "valuesPerLevel[1].individual.roots: must have domainCount (2) items");
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: x, "
                 "namespace: t}\nspec: {podSets: [{name: main, count: 2}]}\nstatus:\n  admission:\n"
                 "    clusterQueue: cq\n    podSetAssignments:\n    - name: main\n"
                 "      topologyAssignment:\n        levels: [a]\n        slices:\n"
                 "        - domainCount: 1\n          podCounts: {individual: [-1]}\n"
                 "          valuesPerLevel: [{universal: r}]\n",
                 "Workload t/x: status.admission.podSetAssignments[0].topologyAssignment.slices[0]."
                 "podCounts.individual[0]: must be from 0 to 2147483647");
  expect_invalid(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: x, "
      "namespace: t}\nspec: {podSets: [{name: main, count: 2}, {name: main, count: 1}]}\n",
      "Workload t/x: spec.podSets[1].name: Duplicate value: \"main\"");
  expect_invalid("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: x, "
                 "namespace: t}\nspec: {podSets: [{name: main, count: 2}]}\nstatus:\n  admission:\n"
                 "    clusterQueue: cq\n    podSetAssignments: [{name: main, count: 3}]\n",
                 "Workload t/x: status.admission.podSetAssignments[0].count: must be from 0 to the "
                 "pod set's count (2)");
}

/* The status patch of a queue, as a compact JSON string (free it). */
static char *status_json(const model_queue_status *st) {
  json_t *j = model_queue_status_patch(st, "v1beta2");
  char *s;
  assert_non_null(j);
  s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(j);
  assert_non_null(s);
  return s;
}

static void assert_in(const char *text, const char *want) {
  if (!strstr(text, want)) fail_msg("no %s in %s", want, text);
}

/* Queue status as Kueue v0.19's controllers write it: observedGeneration on the condition,
 * Kueue's reasons only, the share rounded up, fairSharing removed when fair sharing is off
 * (a merge patch keeps what it does not name), a stopped LocalQueue with no pending count. */
static void test_queue_status_as_kueue(void **state) {
  model_queue_status cq = {.cluster_queue = true, .name = "cq", .pending = 2, .generation = 3};
  model_queue_status lq = {.ns = "t", .name = "lq", .pending = 4, .generation = 7};
  char *s;
  (void)state;
  s = status_json(&cq);
  assert_in(s, "\"fairSharing\":null");
  assert_in(s, "\"observedGeneration\":3");
  assert_in(s, "\"reason\":\"Ready\"");
  free(s);
  cq.fair_sharing = true, cq.weighted_share = 2.1;
  s = status_json(&cq);
  assert_in(s, "\"fairSharing\":{\"weightedShare\":3}");
  free(s);
  cq.weighted_share = INFINITY;
  s = status_json(&cq);
  assert_in(s, "\"weightedShare\":9223372036854775807");
  free(s);
  cq.inactive = "CohortCycle", cq.problem = "spec.cohort: cohort \"a\" is in or under a cycle";
  s = status_json(&cq);
  assert_in(s, "\"reason\":\"Unknown\"");
  assert_in(s, "\"message\":\"Can't admit new workloads: spec.cohort: cohort \\\"a\\\" is in or "
               "under a cycle.\"");
  assert_in(s, "\"status\":\"False\"");
  free(s);
  cq.inactive = "Stopped", cq.problem = "spec.stopPolicy: Hold: the queue is stopped";
  s = status_json(&cq);
  assert_in(s, "\"reason\":\"Stopped\"");
  free(s);
  cq.inactive = "FlavorNotFound";
  s = status_json(&cq);
  assert_in(s, "\"reason\":\"FlavorNotFound\"");
  free(s);
  s = status_json(&lq);
  assert_null(strstr(s, "fairSharing"));
  assert_in(s, "\"pendingWorkloads\":4");
  assert_in(s, "\"message\":\"Can submit new workloads to localQueue\"");
  assert_in(s, "\"observedGeneration\":7");
  free(s);
  lq.inactive = "Stopped";
  s = status_json(&lq);
  assert_in(s, "\"pendingWorkloads\":0");
  assert_in(s, "\"message\":\"LocalQueue is stopped\"");
  assert_in(s, "\"reason\":\"Stopped\"");
  free(s);
  lq.inactive = "ClusterQueueIsInactive";
  s = status_json(&lq);
  assert_in(s, "\"message\":\"Can't submit new workloads to clusterQueue\"");
  assert_in(s, "\"pendingWorkloads\":4");
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kind_in_group),
      cmocka_unit_test(test_recorded_objects),
      cmocka_unit_test(test_recorded_exchanges),
      cmocka_unit_test(test_pod),
      cmocka_unit_test(test_pod_invalid),
      cmocka_unit_test(test_node),
      cmocka_unit_test(test_core_kinds),
      cmocka_unit_test(test_dra_versions),
      cmocka_unit_test(test_claims),
      cmocka_unit_test(test_dra_invalid),
      cmocka_unit_test(test_kueue),
      cmocka_unit_test(test_workload),
      cmocka_unit_test(test_foreign_queues),
      cmocka_unit_test(test_selectors),
      cmocka_unit_test(test_tolerations),
      cmocka_unit_test(test_jobs),
      cmocka_unit_test(test_store),
      cmocka_unit_test(test_default_priority),
      cmocka_unit_test(test_claim_assume),
      cmocka_unit_test(test_hostile_amounts),
      cmocka_unit_test(test_resource_name_flood),
      cmocka_unit_test(test_slice_view_per_version),
      cmocka_unit_test(test_lease_held),
      cmocka_unit_test(test_alloc_failures),
      cmocka_unit_test(test_queue_status_as_kueue),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
