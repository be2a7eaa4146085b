/* tests/soak/names.c - `make soak-names`: a million distinct pod names and label values pass
 * through `tessera run` (the real binary) against the fake API server, and its resident memory
 * must not grow. Pods of another scheduler, bound already, arrive with labels a Job controller
 * writes (job-name, controller-uid, batch.kubernetes.io/job-name, pod-template-hash, each value
 * new), an owner reference, a per-job node affinity value and varied requests; every fifth with
 * a ResourceClaim, every tenth with a PodDisruptionBudget selecting its job (put_pod). Each is
 * deleted, with its claim and PDB, WINDOW pods later, so the model always holds WINDOW pods.
 *
 * At every tenth of the names it waits until the model holds exactly the live window
 * (tessera_model_objects on /metrics), has the server forget its history as etcd compacts
 * (every resource re-lists), waits again, then takes the least of five readings of the
 * process's VmRSS and heap in use (tessera_heap_inuse_bytes), and the interned strings it
 * reports (tessera_interned_strings). Names arrive at a steady RATE. It fails (exit 1) when RSS
 * grew more than 2% between the first tenth (warm-up) and the end, the heap in use more than
 * HEAP_PER_NAME bytes per name, the interned strings more than the vocabulary of one window, or
 * when the process dies.
 * SOAK_NAMES sets the count (1,000,000 by default). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/fakeapi.h"
#include "tests/support/proc.h"

#define NODES  10
#define WINDOW 1000 /* pods alive at once */
#define RATE   4000 /* new names per second: a steady churn that tessera keeps up with */
/* The heap in use may grow this much per name at most: its readings move by ±60 kB on a 2.9 MB
 * heap with no trend (2% of it is noise), where the code that interned every label value grew
 * ~300 bytes per name. */
#define HEAP_PER_NAME 0.25

static fa_server *srv;
static pid_t child;
static int port;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* GET path from tessera's metrics endpoint into buf (cap bytes); false when it cannot. */
static bool http_get(const char *path, char *buf, size_t cap) {
  struct sockaddr_in a = {0};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  size_t n = 0;
  ssize_t r;
  char req[256];
  if (fd < 0) return false;
  a.sin_family = AF_INET, a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return false;
  }
  snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
  if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
    close(fd);
    return false;
  }
  while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
  buf[n] = '\0';
  close(fd);
  return n > 0;
}

/* A sample of /metrics: the value after "\nNAME " (or NAME{...} given whole), -1 if absent. */
static double metric(const char *text, const char *name) {
  char want[200];
  const char *at;
  snprintf(want, sizeof want, "\n%s ", name);
  at = strstr(text, want);
  return at ? atof(at + strlen(want)) : -1;
}

typedef struct sample {
  long rss_kb;     /* VmRSS */
  double heap;     /* tessera_heap_inuse_bytes */
  double interned; /* tessera_interned_strings */
  double bytes;    /* tessera_interned_bytes */
} sample;

/* Waits until the model holds exactly `pods` pods, a fifth as many claims and a tenth as many
 * PodDisruptionBudgets (the watches caught up), then samples. */
static bool settle(int pods, sample *out) {
  static char body[1 << 20];
  double seen = -1;
  for (double until = now() + 120; now() < until; usleep(100000)) {
    if (waitpid(child, NULL, WNOHANG) == child) return false;
    if (!http_get("/metrics", body, sizeof body)) continue;
    if ((seen = metric(body, "tessera_model_objects{kind=\"Pod\",group=\"\"}")) != pods ||
        metric(body, "tessera_model_objects{kind=\"ResourceClaim\",group=\"resource.k8s.io\"}") !=
            pods / 5 ||
        metric(body, "tessera_model_objects{kind=\"PodDisruptionBudget\",group=\"policy\"}") !=
            pods / 10)
      continue;
    usleep(10500000); /* a cycle after the last event, and tessera run's malloc_trim */
    /* the least of five readings a second apart: buffers of a request in flight are not what
     * the process keeps */
    out->rss_kb = -1, out->heap = -1;
    for (int k = 0; k < 5; k++, usleep(1000000)) {
      long kb = proc_rss_kb(child);
      double heap;
      if (!http_get("/metrics", body, sizeof body)) continue;
      heap = metric(body, "tessera_heap_inuse_bytes");
      if (out->rss_kb < 0 || kb < out->rss_kb) out->rss_kb = kb;
      if (out->heap < 0 || heap < out->heap) out->heap = heap;
      out->interned = metric(body, "tessera_interned_strings");
      out->bytes = metric(body, "tessera_interned_bytes");
    }
    return true;
  }
  {
    char *list = fa_get(srv, "/api/v1/namespaces/churn/pods");
    int n = 0;
    for (const char *p = list; p && (p = strstr(p, "\"kind\":\"Pod\"")); p++) n++;
    printf("  the model holds %.0f pods, not %d (the server: %d)\n", seen, pods, n);
    free(list);
  }
  return false;
}

/* Caught up; then the server forgets its history, as etcd compacts (every watch gets its 410
 * and re-lists, so the server's watches stay fast); caught up again, then sampled: every
 * sample is taken in the same state. */
static bool checkpoint(sample *out) {
  sample ignored;
  if (!settle(WINDOW, &ignored)) return false;
  fa_compact(srv);
  return settle(WINDOW, out);
}

/* Pod i of job i, as a Job controller and its users make them, in varied shapes: cpu, memory
 * and GPUs differ, the pod is owned by its Job and asks for a per-job node pool; every fifth
 * has a ResourceClaim of its own (created first), every tenth a PodDisruptionBudget selecting
 * its job. Every name, uid and label or selector value is new. */
static void put_pod(long i) {
  char y[2400], claim[160] = "";
  if (i % 5 == 0) {
    snprintf(y, sizeof y,
             "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":"
             "{\"name\":\"claim-%ld\",\"namespace\":\"churn\",\"labels\":{\"job-name\":"
             "\"job-%ld\"}},\"spec\":{\"devices\":{\"requests\":[{\"name\":\"gpu\",\"exactly\":"
             "{\"deviceClassName\":\"gpu.example.com\"}}]}}}",
             i, i);
    if (!fa_put(srv, y)) fprintf(stderr, "soak-names: the fake server refused claim %ld\n", i);
    snprintf(claim, sizeof claim,
             ",\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"claim-%ld\"}]", i);
  }
  if (i % 10 == 0) {
    snprintf(y, sizeof y,
             "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":"
             "{\"name\":\"job-%ld\",\"namespace\":\"churn\"},\"spec\":{\"minAvailable\":1,"
             "\"selector\":{\"matchLabels\":{\"job-name\":\"job-%ld\"}}}}",
             i, i);
    if (!fa_put(srv, y)) fprintf(stderr, "soak-names: the fake server refused PDB %ld\n", i);
  }
  snprintf(y, sizeof y,
           "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job-%ld-x%lx\","
           "\"namespace\":\"churn\",\"uid\":\"%08lx-4d1c-4a5e-9a77-%012lx\",\"labels\":{"
           "\"job-name\":\"job-%ld\",\"batch.kubernetes.io/job-name\":\"job-%ld\","
           "\"controller-uid\":\"c%07lx-0f3e-4f4b-8e21-%012lx\",\"pod-template-hash\":"
           "\"%lx%lx\"},\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
           "\"name\":\"job-%ld\",\"uid\":\"c%07lx-0f3e-4f4b-8e21-%012lx\",\"controller\":true}]},"
           "\"spec\":{\"schedulerName\":\"other-scheduler\",\"nodeName\":\"n%ld\","
           "\"affinity\":{\"nodeAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":"
           "{\"nodeSelectorTerms\":[{\"matchExpressions\":[{\"key\":\"pool\",\"operator\":"
           "\"NotIn\",\"values\":[\"drained-%ld\"]}]}]}}},"
           "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"%ldm\","
           "\"memory\":\"%ldMi\",\"nvidia.com/gpu\":\"%ld\"},\"limits\":{\"nvidia.com/gpu\":"
           "\"%ld\"}}}]%s},\"status\":{\"phase\":\"Running\"}}",
           i, i * 2654435761UL, i, i * 7919UL, i, i, i, i * 31UL, i * 977UL, i, i, i, i * 31UL,
           i % NODES, i, 50 + i % 7 * 100, 128L << (i % 5), i % 3 ? 0L : 1L << (i % 4),
           i % 3 ? 0L : 1L << (i % 4), claim);
  if (!fa_put(srv, y)) fprintf(stderr, "soak-names: the fake server refused pod %ld\n", i);
}

static void delete_pod(long i) {
  char path[200];
  snprintf(path, sizeof path, "/api/v1/namespaces/churn/pods/job-%ld-x%lx", i, i * 2654435761UL);
  fa_delete(srv, path);
  if (i % 5 == 0) {
    snprintf(path, sizeof path,
             "/apis/resource.k8s.io/v1/namespaces/churn/resourceclaims/claim-%ld", i);
    fa_delete(srv, path);
  }
  if (i % 10 == 0) {
    snprintf(path, sizeof path, "/apis/policy/v1/namespaces/churn/poddisruptionbudgets/job-%ld", i);
    fa_delete(srv, path);
  }
}

int main(int argc, char **argv) {
  long names = getenv("SOAK_NAMES") ? atol(getenv("SOAK_NAMES")) : 1000000, i, warm;
  char cfg[400], log[400];
  sample first = {0}, last = {0};
  double t0 = now(), grew, more;
  FILE *f;
  int failed = 0;
  (void)argc, (void)argv;
  if (names < 10 * WINDOW) names = 10 * WINDOW;
  warm = names / 10;
  if (!(srv = fa_start_http2(true))) {
    fprintf(stderr, "soak-names: cannot start the fake API server\n");
    return 2;
  }
  fa_set_lifetime(srv, 6 * 3600);
  for (int n = 0; n < NODES; n++) {
    char y[400];
    snprintf(y, sizeof y,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"},"
             "\"status\":{\"allocatable\":{\"cpu\":\"1000\",\"memory\":\"1000Gi\",\"pods\":"
             "\"100000\"}}}",
             n);
    fa_put(srv, y);
  }
  port = 30000 + (int)(getpid() % 20000);
  snprintf(cfg, sizeof cfg, "%s/tessera.yaml", fa_dir(srv));
  snprintf(log, sizeof log, "%s",
           getenv("SOAK_LOG") ? getenv("SOAK_LOG") : "build/soak/tessera-names.log");
  if (!(f = fopen(cfg, "w"))) return 2;
  fprintf(f, "leaderElection: {enable: false}\nhealthAddress: 127.0.0.1:%d\n", port);
  fclose(f);
  if ((child = fork()) == 0) {
    const char *bin = getenv("TESSERA") ? getenv("TESSERA") : "build/tessera";
    if (!freopen(log, "w", stderr)) _exit(127);
    execl(bin, bin, "run", "--kubeconfig", fa_kubeconfig(srv), "--config", cfg, "--identity",
          "soak-names", getenv("SOAK_VERBOSE") ? "-v" : (char *)NULL, (char *)NULL);
    _exit(127);
  }
  printf("soak-names: %ld distinct pod names and label values through tessera run, %d alive at "
         "once; tessera log: %s\n",
         names, WINDOW, log);
  fflush(stdout);
  for (i = 0; i < names; i++) {
    while (now() - t0 < (double)i / RATE) usleep(1000);
    put_pod(i);
    if (i >= WINDOW) delete_pod(i - WINDOW);
    if ((i + 1) % (names / 10) == 0) { /* a checkpoint */
      sample at;
      if (!checkpoint(&at)) {
        printf("FAIL: tessera did not catch up (or died) at %ld names\n", i + 1);
        failed = 1;
        break;
      }
      if (i + 1 == warm) first = at;
      if (i + 1 == names) last = at;
      printf("  after %ld names (%.0f s): RSS %ld kB, heap in use %.0f kB, %.0f interned strings "
             "(%.0f bytes)\n",
             i + 1, now() - t0, at.rss_kb, at.heap / 1024, at.interned, at.bytes);
      fflush(stdout);
    }
  }
  if (!failed) {
    double heap_grew = 100.0 * (last.heap - first.heap) / first.heap;
    grew = 100.0 * (double)(last.rss_kb - first.rss_kb) / (double)first.rss_kb;
    more = last.interned - first.interned;
    printf("  RSS growth %+.2f%% (limit 2%%), heap in use %+.2f%% (%+.3f bytes per name, limit "
           "%.2f), interned strings %+.0f (limit %d)\n",
           grew, heap_grew, (last.heap - first.heap) / (double)(names - warm), HEAP_PER_NAME, more,
           4 * WINDOW);
    if (first.interned < 0 || first.heap <= 0) printf("  (the metrics are missing)\n");
    if (grew > 2.0 || last.heap - first.heap > HEAP_PER_NAME * (double)(names - warm) ||
        more > 4 * WINDOW || first.interned < 0 || first.heap <= 0)
      failed = 1;
    printf("%s\n", failed ? "FAIL" : "ok");
  }
  if (child > 0) {
    kill(child, SIGTERM);
    waitpid(child, NULL, 0);
  }
  fa_stop(srv);
  return failed;
}
