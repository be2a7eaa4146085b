/* input/kai.c - KAI Scheduler's snapshot: the ZIP its snapshot plugin serves at /get-snapshot
 * (pkg/scheduler/plugins/snapshot: archive/zip, one entry snapshot.json holding {config,
 * schedulerParams, rawObjects, discovery}), read as the objects Tessera loads. The objects come
 * from KAI's listers, so they carry no apiVersion and kind: each list of rawObjects says which.
 * libzip reads the archive (Debian's libzip: the central directory, deflate, the data
 * descriptors Go's streaming writer leaves). */
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "input/in_int.h"

#define KAI_ENTRY "snapshot.json"

/* rawObjects' lists that Tessera reads, and what their items are. The others (configMaps,
 * persistentVolumeClaims, csiStorageCapacities, storageClasses, csiDrivers, topologies) are
 * volumes and KAI's own topology objects, which Tessera does not model. */
static const struct {
  const char *list, *api_version, *kind;
} kai_lists[] = {
    {"priorityClasses", "scheduling.k8s.io/v1", "PriorityClass"},
    {"nodes", "v1", "Node"},
    {"queues", "scheduling.run.ai/v2", "Queue"},
    {"podGroups", "scheduling.run.ai/v2alpha2", "PodGroup"},
    {"deviceClasses", "resource.k8s.io/v1", "DeviceClass"},
    {"resourceSlices", "resource.k8s.io/v1", "ResourceSlice"},
    {"resourceClaims", "resource.k8s.io/v1", "ResourceClaim"},
    {"pods", "v1", "Pod"},
};

bool in_is_zip(const char *path) {
  unsigned char magic[4];
  FILE *f = fopen(path, "rb");
  bool zip = f && fread(magic, 1, 4, f) == 4 && !memcmp(magic, "PK\x03\x04", 4);
  if (f) fclose(f);
  return zip;
}

/* snapshot.json of the archive, into a new buffer (*len bytes). */
static ts_rc read_entry(const char *path, char **out, size_t *len, ts_err *err) {
  int zerr = 0;
  zip_t *z = zip_open(path, ZIP_RDONLY, &zerr);
  zip_stat_t st;
  zip_file_t *f;
  zip_int64_t n;
  char *buf;
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, zerr);
    ts_err_set(err, TS_EPARSE, "%s: not a readable ZIP archive: %s", path, zip_error_strerror(&e));
    zip_error_fini(&e);
    return TS_EPARSE;
  }
  zip_stat_init(&st);
  if (zip_stat(z, KAI_ENTRY, 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE)) {
    zip_discard(z);
    return ts_err_set(err, TS_EPARSE, "%s: a ZIP archive without %s (not a KAI Scheduler snapshot)",
                      path, KAI_ENTRY);
  }
  if (st.size > IN_FILE_MAX) {
    zip_discard(z);
    return ts_err_set(err, TS_ELIMIT, "%s: %s is %llu bytes, over the %d read whole", path,
                      KAI_ENTRY, (unsigned long long)st.size, IN_FILE_MAX);
  }
  if (!(buf = ts_malloc((size_t)st.size + 1)) || !(f = zip_fopen(z, KAI_ENTRY, 0))) {
    ts_free(buf);
    zip_discard(z);
    return ts_err_set(err, buf ? TS_EPARSE : TS_ENOMEM, "%s: %s: %s", path, KAI_ENTRY,
                      buf ? zip_strerror(z) : "out of memory");
  }
  n = zip_fread(f, buf, st.size);
  zip_fclose(f);
  if (n < 0 || (zip_uint64_t)n != st.size) {
    ts_free(buf);
    ts_err_set(err, TS_EPARSE, "%s: %s: cannot be read whole (damaged archive?)", path, KAI_ENTRY);
    zip_discard(z);
    return TS_EPARSE;
  }
  zip_discard(z);
  buf[n] = '\0';
  *out = buf, *len = (size_t)n;
  return TS_OK;
}

/* The node each pending pod's BindRequest selected ("ns/pod" -> node), unless it failed: KAI's
 * cache counts a pod whose binding is under way as placed. */
static void bind_requests(json_t *raw, json_t *nodes) {
  size_t i;
  json_t *b;
  json_array_foreach(json_object_get(raw, "bindRequests"), i, b) {
    const char *ns =
        json_string_value(json_object_get(json_object_get(b, "metadata"), "namespace"));
    json_t *spec = json_object_get(b, "spec");
    const char *pod = json_string_value(json_object_get(spec, "podName"));
    const char *node = json_string_value(json_object_get(spec, "selectedNode"));
    const char *phase = json_string_value(json_object_get(json_object_get(b, "status"), "phase"));
    char key[TS_KEY_MAX];
    if (!ns || !pod || !node || !*node || (phase && !strcmp(phase, "Failed"))) continue;
    snprintf(key, sizeof key, "%s/%s", ns, pod);
    json_object_set_new(nodes, key, json_string(node));
  }
}

ts_rc in_kai_snapshot(const char *path, in_object_fn fn, in_error_fn on_error, void *ud) {
  char *text = NULL;
  size_t len = 0;
  in_docs docs = {0};
  json_t *raw, *bound;
  ts_err err;
  ts_rc rc;
  ts_err_clear(&err);
  if ((rc = read_entry(path, &text, &len, &err)) == TS_OK &&
      (rc = in_json_doc(text, len, &docs, &err)) != TS_OK)
    ts_err_prefix(&err, "%s: %s", path, KAI_ENTRY);
  ts_free(text);
  if (rc != TS_OK) {
    if (on_error) on_error(ud, &err);
    in_docs_free(&docs);
    return TS_OK;
  }
  raw = docs.n == 1 ? json_object_get(docs.v[0].value, "rawObjects") : NULL;
  if (!json_is_object(raw)) {
    ts_err_set(&err, TS_EPARSE, "%s: %s: no rawObjects (not a KAI Scheduler snapshot)", path,
               KAI_ENTRY);
    if (on_error) on_error(ud, &err);
    in_docs_free(&docs);
    return TS_OK;
  }
  if (!(bound = json_object())) {
    in_docs_free(&docs);
    return TS_ENOMEM;
  }
  bind_requests(raw, bound);
  { /* the header: KAI's scheduler parameters (its scheduler name, whose pods replay decides) */
    json_t *head =
        json_pack("{s:s, s:s, s:O*}", "apiVersion", IN_KAI_HEADER_API, "kind", IN_KAI_HEADER_KIND,
                  "schedulerParams", json_object_get(docs.v[0].value, "schedulerParams"));
    rc = head ? fn(ud, head, path, 0, -1) : TS_ENOMEM;
    json_decref(head);
  }
  for (size_t l = 0; rc == TS_OK && l < sizeof kai_lists / sizeof *kai_lists; l++) {
    json_t *items = json_object_get(raw, kai_lists[l].list), *o;
    size_t i;
    if (items && !json_is_array(items) && !json_is_null(items)) { /* null: a nil list */
      ts_err_set(&err, TS_EPARSE, "%s: %s: rawObjects.%s: must be a list", path, KAI_ENTRY,
                 kai_lists[l].list);
      if (on_error) on_error(ud, &err);
      continue;
    }
    json_array_foreach(items, i, o) {
      json_t *spec = json_object_get(o, "spec");
      if (!json_is_object(o)) continue; /* the decoder would say "not an object": lists hold them */
      if (!json_object_get(o, "kind")) { /* the listers' objects carry no TypeMeta */
        json_object_set_new(o, "apiVersion", json_string(kai_lists[l].api_version));
        json_object_set_new(o, "kind", json_string(kai_lists[l].kind));
      }
      if (!strcmp(kai_lists[l].kind, "Pod") && json_is_object(spec) &&
          !json_string_length(json_object_get(spec, "nodeName"))) {
        json_t *md = json_object_get(o, "metadata");
        const char *ns = json_string_value(json_object_get(md, "namespace"));
        const char *name = json_string_value(json_object_get(md, "name"));
        char key[TS_KEY_MAX];
        json_t *node;
        snprintf(key, sizeof key, "%s/%s", ns ? ns : "", name ? name : "");
        if ((node = json_object_get(bound, key)))
          json_object_set(spec, "nodeName", node); /* its binding was under way */
      }
      if ((rc = fn(ud, o, path, 0, (int)i)) != TS_OK) break;
    }
  }
  json_decref(bound);
  in_docs_free(&docs);
  return rc;
}
