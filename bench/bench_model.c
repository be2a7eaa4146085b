/* bench/bench_model.c - decoding speed of Kubernetes JSON into the model, and the memory the
 * model takes.
 *
 * Input: a PodList and a NodeList built from objects recorded from a real API server
 * (tests/data/k8s/exchanges/037-get-pod.json and 016-list-nodes.json), repeated with distinct
 * names and uids: 20,000 pods and 2,000 nodes, about 74 MB of JSON. Measures parse + decode +
 * insert of one object at a time, as watch events deliver them, and the memory of the model.
 * `tessera replay` reads files the same way, an item at a time: bench_replay measures the
 * command itself. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <time.h>

#include "input/input.h"
#include "model/model.h"

#define NPODS  20000
#define NNODES 2000

static json_t *load_body(const char *path, bool first_item) {
  json_error_t je;
  json_t *x = json_load_file(path, 0, &je), *body;
  if (!x) {
    fprintf(stderr, "%s: %s (run from the repository root)\n", path, je.text);
    exit(1);
  }
  body = json_object_get(json_object_get(x, "response"), "body");
  if (first_item) {
    body = json_array_get(json_object_get(body, "items"), 0);
    json_object_set_new(body, "kind", json_string("Node"));
    json_object_set_new(body, "apiVersion", json_string("v1"));
  }
  body = json_deep_copy(body);
  json_decref(x);
  return body;
}

/* A List of n copies of tmpl with names and uids made distinct; returns the JSON text. */
static char *make_list(json_t *tmpl, const char *kind, int n, const char *prefix) {
  json_t *list = json_pack("{s:s, s:s, s:[]}", "apiVersion", "v1", "kind", kind, "items");
  json_t *items = json_object_get(list, "items");
  char *text;
  for (int i = 0; i < n; i++) {
    json_t *o = json_deep_copy(tmpl), *md = json_object_get(o, "metadata");
    char name[64], uid[64];
    snprintf(name, sizeof name, "%s-%06d", prefix, i);
    snprintf(uid, sizeof uid, "0b4f7a2c-%04x-4e1d-9c3b-%012d", i & 0xffff, i);
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "uid", json_string(uid));
    json_array_append_new(items, o);
  }
  text = json_dumps(list, JSON_COMPACT);
  json_decref(list);
  return text;
}

/* Bytes of heap in use (glibc), so that freed parse buffers do not count. */
static long heap_kb(void) {
  return (long)(mallinfo2().uordblks / 1024);
}

/* Splits a List's items into one compact JSON text each, as watch events carry them. */
static char **split_items(const char *list_text, size_t *n, double *mb) {
  json_error_t je;
  json_t *list = json_loads(list_text, 0, &je), *item;
  size_t i;
  char **out = calloc(json_array_size(json_object_get(list, "items")) + 1, sizeof *out);
  *n = 0;
  json_array_foreach(json_object_get(list, "items"), i, item) {
    out[(*n)++] = json_dumps(item, JSON_COMPACT);
    *mb += (double)strlen(out[*n - 1]) / 1e6;
  }
  json_decref(list);
  return out;
}

/* Watch events: each object parsed, decoded and inserted on its own, memory reused. */
static void bench_events(char *texts[2]) {
  size_t n[2];
  double mb = 0, t0, secs;
  char **items[2] = {split_items(texts[0], &n[0], &mb), split_items(texts[1], &n[1], &mb)};
  long heap0 = heap_kb(), heap1;
  model *m = model_new();
  int errors = 0;
  t0 = ts_time_mono_s();
  for (int t = 1; t >= 0; t--) {
    for (size_t i = 0; i < n[t]; i++) {
      ts_err e;
      json_t *o = NULL;
      if (in_json_parse(items[t][i], strlen(items[t][i]), &o, &e) != TS_OK) {
        errors++;
        continue;
      }
      json_object_set_new(o, "kind", json_string(t ? "Node" : "Pod"));
      json_object_set_new(o, "apiVersion", json_string("v1"));
      if (model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, &e) != TS_OK) errors++;
      json_decref(o);
    }
  }
  secs = ts_time_mono_s() - t0;
  heap1 = heap_kb();
  printf("watch-event path: the same %zu objects, one JSON text each, %.1f MB (%d rejected)\n",
         n[0] + n[1], mb, errors);
  printf("  parse + decode + insert:      %7.1f MB/s  %6.3f s  %8.0f objects/s\n", mb / secs, secs,
         (double)(n[0] + n[1]) / secs);
  printf("model memory: %.1f MB of heap for %zu pods + %zu nodes (%.2f KB per object)\n",
         (double)(heap1 - heap0) / 1024, n[0], n[1],
         (double)(heap1 - heap0) / (double)(n[0] + n[1]));
  model_free(m);
  for (int t = 0; t < 2; t++) {
    for (size_t i = 0; i < n[t]; i++) free(items[t][i]);
    free(items[t]);
  }
}

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

/* The in-cluster target: a model of 10,000 nodes and 100,000 pods in at most 300 MB of RSS.
 * Objects are inserted one by one as watch events deliver them (each parsed, decoded and
 * freed), from the recorded pod and node with distinct names, half the pods bound. */
static void bench_memory(json_t *pod, json_t *node) {
  model *m = model_new();
  long before = rss_kb(), after;
  double t0 = ts_time_mono_s();
  for (int i = 0; i < 110000; i++) {
    json_t *o = json_deep_copy(i < 10000 ? node : pod), *md = json_object_get(o, "metadata");
    char name[64], uid[64];
    ts_err e;
    snprintf(name, sizeof name, "%s-%06d", i < 10000 ? "node" : "pod", i);
    snprintf(uid, sizeof uid, "uid-%06d", i);
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "uid", json_string(uid));
    if (i >= 10000 && i % 2) {
      char n[32];
      snprintf(n, sizeof n, "node-%06d", i % 10000);
      json_object_set_new(json_object_get(o, "spec"), "nodeName", json_string(n));
    }
    model_apply_json(m, o, MODEL_ADDED, NULL, NULL, NULL, &e);
    json_decref(o);
  }
  after = rss_kb();
  printf("in-cluster model: 10,000 nodes + 100,000 pods (half bound): %.0f MB RSS growth "
         "(process %.0f MB), built in %.2f s\n",
         (double)(after - before) / 1024, (double)after / 1024, ts_time_mono_s() - t0);
  model_free(m);
}

int main(void) {
  json_t *pod = load_body("tests/data/k8s/exchanges/037-get-pod.json", false);
  json_t *node = load_body("tests/data/k8s/exchanges/016-list-nodes.json", true);
  char *texts[2];
  bench_memory(pod, node); /* first, while the process is small */
  texts[0] = make_list(pod, "PodList", NPODS, "pod");
  texts[1] = make_list(node, "NodeList", NNODES, "node");
  json_decref(pod);
  json_decref(node);
  bench_events(texts);
  free(texts[0]);
  free(texts[1]);
  return 0;
}
