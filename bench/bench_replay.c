/* bench/bench_replay.c - `tessera replay` end to end, as a user runs it, on snapshots written
 * the way `kubectl get nodes,pods -A -o json` writes them.
 *
 * Input: one List per size (indented by 4, "items" before "kind", as kubectl writes it) of
 * nodes and pods built from objects recorded from a real API server
 * (tests/data/k8s/exchanges/016-list-nodes.json, 037-get-pod.json; volumes, managed fields and
 * all), with distinct names and uids: 60% 8-GPU nodes, 40% CPU nodes; half the pods bound and
 * running, half pending, with requests varied over GPU and CPU shapes. Measured: the command
 * `build/tessera replay FILE --stats --output json` in a child process (its own figures:
 * load, cycle, decisions/s, memory after loading, peak RSS) and, from outside, its wall time
 * and peak RSS (wait4). Sizes: 1k nodes + 10k pods up to 20k + 200k (about 2.2 GB). */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ts.h"

static json_t *load_body(const char *path) {
  json_error_t je;
  json_t *x = json_load_file(path, 0, &je), *body;
  if (!x) {
    fprintf(stderr, "%s: %s (run from the repository root)\n", path, je.text);
    exit(1);
  }
  body = json_deep_copy(json_object_get(json_object_get(x, "response"), "body"));
  json_decref(x);
  return body;
}

/* Writes one item, indented as the fourth level of a kubectl List. */
static void put_item(FILE *f, json_t *o, bool first) {
  char *text = json_dumps(o, JSON_INDENT(4) | JSON_PRESERVE_ORDER);
  fputs(first ? "\n        " : ",\n        ", f);
  for (const char *p = text; *p; p++) {
    fputc(*p, f);
    if (*p == '\n') fputs("        ", f);
  }
  free(text);
}

static void write_snapshot(const char *path, int nnodes, int npods) {
  json_t *node_list = load_body("tests/data/k8s/exchanges/016-list-nodes.json");
  json_t *node = json_incref(json_array_get(json_object_get(node_list, "items"), 0));
  json_t *pod = load_body("tests/data/k8s/exchanges/037-get-pod.json");
  json_t *spec = json_object_get(pod, "spec"), *c0;
  FILE *f = fopen(path, "w");
  static const char *cpus[] = {"250m", "500m", "1", "2", "4", "8"};
  static const char *mems[] = {"512Mi", "1Gi", "2Gi", "4Gi", "16Gi", "32Gi"};
  static const int gpus[] = {0, 0, 1, 1, 2, 4, 8};
  unsigned s = 7;
  if (!f) {
    perror(path);
    exit(1);
  }
  json_decref(node_list);
  /* The recorded node still carried the node.kubernetes.io/not-ready taint its kubelet takes
   * off once ready (its Ready condition is True): left in, every pod of the benchmark was
   * unschedulable and the cycle only explained why. Ready nodes carry none. */
  json_object_del(json_object_get(node, "spec"), "taints");
  json_object_set_new(node, "kind", json_string("Node"));
  json_object_set_new(node, "apiVersion", json_string("v1"));
  /* The recorded pod asks for a DRA claim; these pods ask for extended resources. */
  json_object_del(spec, "resourceClaims");
  json_object_del(json_object_get(pod, "status"), "resourceClaimStatuses");
  c0 = json_array_get(json_object_get(spec, "containers"), 0);
  json_object_del(json_object_get(c0, "resources"), "claims");
  json_object_set_new(spec, "schedulerName", json_string("tessera"));
  /* Plain pods: not the recorded pod's PodGroup and Kueue queue. */
  json_object_set_new(json_object_get(pod, "metadata"), "labels",
                      json_pack("{s:s}", "app", "trainer"));
  fputs("{\n    \"apiVersion\": \"v1\",\n    \"items\": [", f);
  { /* the PriorityClass the recorded pod names */
    json_t *pc = json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                           "PriorityClass", "metadata", "name",
                           json_string_value(json_object_get(spec, "priorityClassName")), "value",
                           (int)json_integer_value(json_object_get(spec, "priority")));
    put_item(f, pc, true);
    json_decref(pc);
  }
  for (int i = 0; i < nnodes; i++) {
    json_t *o = json_deep_copy(node), *md = json_object_get(o, "metadata");
    json_t *alloc = json_object_get(json_object_get(o, "status"), "allocatable");
    char name[32], uid[64];
    bool gpu = i % 5 < 3;
    snprintf(name, sizeof name, "node-%06d", i);
    snprintf(uid, sizeof uid, "6f1d3a2b-%04x-4c5e-8a9b-%012d", i & 0xffff, i);
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "uid", json_string(uid));
    json_object_set_new(json_object_get(md, "labels"), "kubernetes.io/hostname", json_string(name));
    json_object_set_new(alloc, "cpu", json_string(gpu ? "96" : "32"));
    json_object_set_new(alloc, "memory", json_string(gpu ? "1Ti" : "128Gi"));
    json_object_set_new(alloc, "pods", json_string("110"));
    if (gpu) json_object_set_new(alloc, "nvidia.com/gpu", json_string("8"));
    put_item(f, o, false);
    json_decref(o);
  }
  for (int i = 0; i < npods; i++) {
    json_t *o = json_deep_copy(pod), *md = json_object_get(o, "metadata");
    json_t *sp = json_object_get(o, "spec"), *st = json_object_get(o, "status");
    json_t *res =
        json_object_get(json_array_get(json_object_get(sp, "containers"), 0), "resources");
    json_t *req = json_object(), *lim = json_object();
    char name[32], uid[64], host[32];
    int g;
    s = s * 1103515245u + 12345u;
    g = gpus[(s >> 8) % 7];
    snprintf(name, sizeof name, "pod-%07d", i);
    snprintf(uid, sizeof uid, "0b4f7a2c-%04x-4e1d-9c3b-%012d", i & 0xffff, i);
    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(md, "uid", json_string(uid));
    json_object_set_new(req, "cpu", json_string(cpus[(s >> 12) % 6]));
    json_object_set_new(req, "memory", json_string(mems[(s >> 16) % 6]));
    if (g) json_object_set_new(lim, "nvidia.com/gpu", json_integer(g));
    json_object_set_new(res, "requests", req);
    json_object_set_new(res, "limits", lim);
    if (i % 2 == 0 && !g) { /* half the pods run, on CPU nodes (they always fit there) */
      snprintf(host, sizeof host, "node-%06d", (i / 2) % nnodes / 5 * 5 + 3);
      json_object_set_new(sp, "nodeName", json_string(host));
      json_object_set_new(st, "phase", json_string("Running"));
    } else {
      json_object_del(sp, "nodeName");
      json_object_set_new(st, "phase", json_string("Pending"));
      json_object_del(st, "conditions");
    }
    put_item(f, o, false);
    json_decref(o);
  }
  fputs("\n    ],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": "
        "\"\"\n    }\n}\n",
        f);
  fclose(f);
  json_decref(node);
  json_decref(pod);
}

/* Runs `tessera replay PATH --stats --output json`; prints its figures. */
static void run_replay(const char *tessera, const char *path, int nnodes, int npods) {
  int fd[2];
  pid_t pid;
  FILE *out;
  char line[1 << 16], last[1 << 16] = "";
  struct rusage ru;
  int status;
  double t0 = ts_time_mono_s(), wall;
  struct stat st;
  json_t *summary, *stats;
  json_error_t je;
  if (pipe(fd) != 0) exit(1);
  if ((pid = fork()) == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    freopen("/dev/null", "w", stderr);
    execl(tessera, tessera, "replay", path, "--stats", "--output", "json", (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  out = fdopen(fd[0], "r");
  while (fgets(line, sizeof line, out))
    if (!strncmp(line, "{\"summary\"", 10)) memcpy(last, line, sizeof last);
  fclose(out);
  wait4(pid, &status, 0, &ru);
  wall = ts_time_mono_s() - t0;
  stat(path, &st);
  summary = json_loads(last, 0, &je);
  stats = json_object_get(json_object_get(summary, "summary"), "stats");
  if (!stats) {
    fprintf(stderr, "bench: %s replay %s gave no stats (status %d)\n", tessera, path, status);
    exit(1);
  }
  printf("%6d nodes + %7d pods, %7.1f MB: load %6.2f s (%6.1f MB/s), cycle %6.3f s (%7.0f "
         "decisions/s), wall %6.2f s; memory after load %6.1f MB, peak RSS %6.1f MB (%.2f x the "
         "input)\n",
         nnodes, npods, (double)st.st_size / 1e6,
         json_real_value(json_object_get(stats, "load_seconds")),
         (double)st.st_size / 1e6 / json_real_value(json_object_get(stats, "load_seconds")),
         json_real_value(json_object_get(stats, "cycle_seconds")),
         json_real_value(json_object_get(stats, "decisions_per_second")), wall,
         (double)json_integer_value(json_object_get(stats, "loaded_rss_bytes")) / 1e6,
         (double)ru.ru_maxrss / 1e3, (double)ru.ru_maxrss * 1e3 / (double)st.st_size);
  json_decref(summary);
}

int main(int argc, char **argv) {
  static const int sizes[][2] = {
      {1000, 10000}, {2000, 20000}, {5000, 50000}, {10000, 100000}, {20000, 200000}};
  const char *tessera = argc > 1 ? argv[1] : "build/tessera";
  int only = argc > 2 ? atoi(argv[2]) : 0;          /* one size only (nodes) */
  bool keep = argc > 3 && !strcmp(argv[3], "keep"); /* leave the snapshot in /tmp */
  printf("tessera replay FILE --stats --output json, on kubectl-style snapshots (one child "
         "process per size; its own figures, wall time and peak RSS from outside)\n");
  for (int i = 0; i < 5; i++) {
    char path[64];
    if (only && sizes[i][0] != only) continue;
    snprintf(path, sizeof path, "/tmp/tessera-bench-replay-%d.json", sizes[i][0]);
    write_snapshot(path, sizes[i][0], sizes[i][1]);
    run_replay(tessera, path, sizes[i][0], sizes[i][1]);
    if (!keep) unlink(path);
  }
  return 0;
}
