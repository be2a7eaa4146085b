/* libFuzzer target: JSON objects decoded into the model and inserted, updated and removed
 * (model/). Every kind is reached by trying the input under each kind's apiVersion and kind. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "input/input.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kinds[][2] = {
    {"v1", "Pod"},
    {"v1", "Node"},
    {"v1", "Namespace"},
    {"scheduling.k8s.io/v1", "PriorityClass"},
    {"policy/v1", "PodDisruptionBudget"},
    {"resource.k8s.io/v1", "ResourceSlice"},
    {"resource.k8s.io/v1beta1", "ResourceSlice"},
    {"resource.k8s.io/v1", "DeviceClass"},
    {"resource.k8s.io/v1", "ResourceClaim"},
    {"resource.k8s.io/v1beta1", "ResourceClaim"},
    {"resource.k8s.io/v1", "ResourceClaimTemplate"},
    {"kueue.x-k8s.io/v1beta2", "ClusterQueue"},
    {"kueue.x-k8s.io/v1beta1", "LocalQueue"},
    {"kueue.x-k8s.io/v1beta2", "ResourceFlavor"},
    {"kueue.x-k8s.io/v1beta1", "Cohort"},
    {"kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass"},
    {"scheduling.x-k8s.io/v1alpha1", "PodGroup"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ts_err je;
  json_t *obj = NULL; /* read as the product reads: with its own JSON reader */
  model *m;
  in_json_parse((const char *)data, size, &obj, &je);
  if (!json_is_object(obj)) {
    json_decref(obj);
    return 0;
  }
  m = model_new();
  for (size_t i = 0; m && i < sizeof kinds / sizeof kinds[0]; i++) {
    model_decode_opts opts = {.lenient = i % 2 == 1, .admission = i % 3 == 0};
    ts_err err;
    json_object_set_new(obj, "apiVersion", json_string(kinds[i][0]));
    json_object_set_new(obj, "kind", json_string(kinds[i][1]));
    model_apply_json(m, obj, MODEL_ADDED, NULL, &opts, NULL, &err);
    model_apply_json(m, obj, MODEL_MODIFIED, NULL, &opts, NULL, &err);
  }
  for (size_t i = 0; m && i < sizeof kinds / sizeof kinds[0]; i += 2) {
    ts_err err;
    json_object_set_new(obj, "apiVersion", json_string(kinds[i][0]));
    json_object_set_new(obj, "kind", json_string(kinds[i][1]));
    model_apply_json(m, obj, MODEL_DELETED, NULL, NULL, NULL, &err);
  }
  model_free(m);
  json_decref(obj);
  return 0;
}
