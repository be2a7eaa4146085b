/* tests/soak/soak.c - `make soak`: `tessera run` (the real binary) against the fake API server
 * for SOAK_SECONDS (3600 by default) of churn while every fault the server can script is
 * injected, then a drain. It plays the users and the controllers: gangs (PodGroups of 1-8 pods,
 * Kueue-queued in two ClusterQueues of one cohort, some with a named DRA claim) arrive, run for
 * a few seconds once the whole gang is bound, and are deleted.
 *
 * It fails (exit 1) on any of: the process dies; a pod bound twice (a binding of a pod the
 * server holds bound to another node); a node given more GPUs than it has; a gang partly
 * bound for more than PARTIAL_S seconds; a gang still waiting after the drain although the
 * cluster is empty (a lost binding); resident memory growing more than 10% between the first
 * and the last tenth of the run after warm-up. It prints one progress line a minute and a
 * summary of what it saw. */
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/fakeapi.h"
#include "tests/support/proc.h"

#define NODES       20 /* of 8 GPUs and 4 DRA devices each */
#define NS          4  /* namespaces, two per ClusterQueue */
#define MAX_GANGS   200000
#define MAX_PENDING 40  /* gangs waiting at once: the users' backlog stays bounded */
#define PARTIAL_S   30  /* a gang partly bound longer than this is a violation */
#define DRAIN_S     120 /* after the churn, every gang must be done within this */
#define RSS_WARMUP  0.2 /* of the run, before memory is judged */

typedef struct gang {
  int id, size, gpus; /* pods, GPUs per pod (0 for a DRA pod with a claim) */
  bool claim;         /* one pod with a named ResourceClaim */
  double created, bound_at, partial_since, dur;
  bool done;
} gang;

typedef enum {
  F_LIST_500,
  F_WATCH_DROP,
  F_POST_DROP,
  F_POST_LOST,
  F_POST_429,
  F_CLAIM_409,
  F_PATCH_503,
  F_COMPACT,
  F_SLOW,
  F_GOAWAY,
  F_TOKEN,
  F_KINDS
} fault_kind;

static const char *const fault_names[F_KINDS] = {"500 on a pod list",
                                                 "watch or list dropped",
                                                 "write dropped unanswered",
                                                 "write served, answer lost",
                                                 "429 on a write",
                                                 "409 on a claim update",
                                                 "503 on a status patch",
                                                 "watch history compacted (410)",
                                                 "requests 1.5 s late",
                                                 "HTTP/2 GOAWAY",
                                                 "token rotated (401 until re-read)"};

static gang *gangs;
static int ngangs, violations;
static long faults[F_KINDS];
static fa_server *srv;
static pid_t child;
static double t0;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - t0;
}

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stdout, "VIOLATION at %.0fs: ", now());
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  fflush(stdout);
  va_end(ap);
  violations++;
}

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...) {
  char y[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(y, sizeof y, fmt, ap);
  va_end(ap);
  if (!fa_put(srv, y)) violation("the fake server refused: %s", y);
}

static void seed_cluster(void) {
  put("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n");
  for (int q = 0; q < 2; q++)
    put("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq-%d}\n"
        "spec:\n  cohort: all\n  namespaceSelector: {}\n  resourceGroups:\n"
        "  - coveredResources: [nvidia.com/gpu, cpu]\n    flavors:\n    - name: gpu\n"
        "      resources: [{name: nvidia.com/gpu, nominalQuota: 64}, {name: cpu, nominalQuota: "
        "1000}]\n",
        q);
  for (int n = 0; n < NS; n++) {
    put("apiVersion: v1\nkind: Namespace\nmetadata: {name: t%d}\n", n);
    put("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: "
        "t%d}\nspec: {clusterQueue: cq-%d}\n",
        n, n / 2);
  }
  put("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: accel}\n"
      "spec: {selectors: [{cel: {expression: 'device.driver == \"accel.example.com\"'}}]}\n");
  for (int i = 0; i < NODES; i++) {
    put("apiVersion: v1\nkind: Node\nmetadata: {name: n%d, labels: {kubernetes.io/hostname: "
        "n%d}}\nstatus: {allocatable: {cpu: '64', memory: 512Gi, pods: '110', nvidia.com/gpu: "
        "'8'}}\n",
        i, i);
    put("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n%d-accel}\n"
        "spec: {driver: accel.example.com, nodeName: n%d, pool: {name: n%d, generation: 1, "
        "resourceSliceCount: 1}, devices: [{name: a0}, {name: a1}, {name: a2}, {name: a3}]}\n",
        i, i, i);
  }
}

static void create_gang(void) {
  static const int sizes[] = {1, 1, 1, 2, 2, 4, 4, 8};
  gang *g;
  int ns;
  if (ngangs >= MAX_GANGS) return;
  g = &gangs[ngangs];
  memset(g, 0, sizeof *g);
  g->id = ngangs, g->created = now(), g->dur = 3 + rand() % 13;
  g->claim = rand() % 6 == 0;
  g->size = g->claim ? 1 : sizes[rand() % 8];
  g->gpus = g->claim ? 0 : 1 + (rand() % 3 == 0);
  ns = g->id % NS;
  ngangs++;
  put("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g%d, "
      "namespace: t%d}\nspec: {minMember: %d}\n",
      g->id, ns, g->size);
  if (g->claim)
    put("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c%d, namespace: "
        "t%d}\nspec: {devices: {requests: [{name: a, exactly: {deviceClassName: accel}}]}}\n",
        g->id, ns);
  for (int i = 0; i < g->size; i++) { /* one by one, as a controller creates them */
    char claims[128] = "";
    if (g->claim)
      snprintf(claims, sizeof claims, "resourceClaims: [{name: a, resourceClaimName: c%d}], ",
               g->id);
    put("apiVersion: v1\nkind: Pod\nmetadata: {name: g%d-%d, namespace: t%d, labels: "
        "{scheduling.x-k8s.io/pod-group: g%d, kueue.x-k8s.io/queue-name: lq}}\n"
        "spec: {schedulerName: tessera, %scontainers: [{name: c, resources: {requests: {cpu: "
        "'1'}, limits: {nvidia.com/gpu: '%d'}}}]}\n",
        g->id, i, ns, g->id, claims, g->gpus);
  }
}

static void delete_gang(gang *g) {
  char path[256];
  int ns = g->id % NS;
  for (int i = 0; i < g->size; i++) {
    snprintf(path, sizeof path, "/api/v1/namespaces/t%d/pods/g%d-%d", ns, g->id, i);
    fa_delete(srv, path);
  }
  if (g->claim) {
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/t%d/resourceclaims/c%d", ns,
             g->id);
    fa_delete(srv, path);
  }
  snprintf(path, sizeof path, "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/t%d/podgroups/g%d", ns,
           g->id);
  fa_delete(srv, path);
  g->done = true;
}

static void inject_fault(void) {
  fault_kind k = (fault_kind)(rand() % F_KINDS);
  char path[400];
  FILE *f;
  static int token_gen;
  switch (k) {
  case F_LIST_500:
    fa_fault(srv, "GET", "/api/v1/pods?", 500, 1, "etcdserver: request timed out");
    break;
  case F_WATCH_DROP:
    fa_fault(srv, "GET", "/api/v1/pods?", 0, 1, NULL);
    break;
  case F_POST_DROP:
    fa_fault(srv, "POST", "/api/v1/namespaces/", 0, 1, NULL);
    break;
  case F_POST_LOST:
    fa_fault(srv, "POST", "/api/v1/namespaces/", FA_LOST, 1, NULL);
    break;
  case F_POST_429:
    fa_fault(srv, "POST", "/api/v1/namespaces/", 429, 2,
             "Too many requests, please try again later.");
    break;
  case F_CLAIM_409:
    fa_fault(srv, "PUT", "/apis/resource.k8s.io/v1/namespaces/", 409, 1,
             "the object has been modified; please apply your changes to the latest version and "
             "try again");
    break;
  case F_PATCH_503:
    fa_fault(srv, "PATCH", "/api/v1/namespaces/", 503, 3,
             "the server is currently unable to handle the request");
    break;
  case F_COMPACT:
    fa_compact(srv);
    break;
  case F_SLOW:
    fa_delay(srv, "GET", "/", 1500, 3);
    break;
  case F_GOAWAY:
    fa_goaway(srv, 3);
    break;
  case F_TOKEN:
    snprintf(path, sizeof path, "%s/token", fa_dir(srv));
    if ((f = fopen(path, "w"))) {
      char tok[64];
      snprintf(tok, sizeof tok, "soak-token-%d", ++token_gen);
      fputs(tok, f);
      fclose(f);
      fa_set_token(srv, tok);
    }
    break;
  default:
    break;
  }
  faults[k]++;
}

/* Reads every pod from the server: marks gangs bound, finds partial gangs and over-full nodes,
 * and deletes gangs whose run is over. Returns the number of gangs still waiting. */
static int observe(bool *all_bound_out) {
  char *text = fa_get(srv, "/api/v1/pods");
  json_error_t e;
  json_t *list = text ? json_loads(text, 0, &e) : NULL, *items = json_object_get(list, "items"), *p;
  static int *bound;
  static char **why; /* a pending member's PodScheduled message, per gang */
  static int node_gpus[NODES];
  int waiting = 0;
  size_t i;
  free(text);
  if (!list) {
    violation("the pod list could not be read from the fake server");
    return 0;
  }
  if (!bound) bound = calloc(MAX_GANGS, sizeof *bound), why = calloc(MAX_GANGS, sizeof *why);
  memset(node_gpus, 0, sizeof node_gpus);
  for (int k = 0; k < ngangs; k++) bound[k] = 0;
  json_array_foreach(items, i, p) {
    const char *name = json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
    const char *node = json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
    int id, member, n;
    if (!name || sscanf(name, "g%d-%d", &id, &member) != 2 || id < 0 || id >= ngangs) continue;
    if (!node || !*node) {
      json_t *conds = json_object_get(json_object_get(p, "status"), "conditions"), *cnd;
      size_t ci;
      json_array_foreach(conds, ci, cnd) {
        const char *msg = json_string_value(json_object_get(cnd, "message"));
        if (msg && !strcmp(json_string_value(json_object_get(cnd, "type")) ?: "", "PodScheduled")) {
          free(why[id]);
          why[id] = strdup(msg);
        }
      }
      continue;
    }
    bound[id]++;
    if (sscanf(node, "n%d", &n) == 1 && n >= 0 && n < NODES) node_gpus[n] += gangs[id].gpus;
  }
  json_decref(list);
  for (int n = 0; n < NODES; n++)
    if (node_gpus[n] > 8)
      violation("node n%d has pods asking for %d GPUs of its 8", n, node_gpus[n]);
  *all_bound_out = true;
  for (int k = 0; k < ngangs; k++) {
    gang *g = &gangs[k];
    double t = now();
    if (g->done) continue;
    if (bound[k] == g->size && !g->bound_at) g->bound_at = t;
    if (bound[k] > 0 && bound[k] < g->size) {
      if (!g->partial_since) g->partial_since = t;
      if (t - g->partial_since > PARTIAL_S && g->partial_since > 0) {
        violation("gang g%d has %d of its %d pods bound for %d s; a pending pod says: %s", k,
                  bound[k], g->size, PARTIAL_S, why[k] ? why[k] : "(nothing)");
        g->partial_since = -1e9; /* told once */
      }
    } else if (g->partial_since > 0) {
      g->partial_since = 0;
    }
    if (!g->bound_at) waiting++, *all_bound_out = false;
    if (g->bound_at && t - g->bound_at >= g->dur) delete_gang(g);
  }
  return waiting;
}

static pid_t spawn(const char *cfg, const char *log) {
  pid_t pid = fork();
  if (pid == 0) {
    const char *bin = getenv("TESSERA");
    if (!bin || !*bin) bin = "build/tessera";
    if (!freopen(log, "w", stderr)) _exit(127);
    execl(bin, bin, "run", "--kubeconfig", fa_kubeconfig(srv), "--config", cfg, "--identity",
          "soak", (char *)NULL);
    _exit(127);
  }
  return pid;
}

static int count_lines(const char *log, const char *needle) {
  int n = 0;
  for (const char *p = log; (p = strstr(p, needle)); p++) n++;
  return n;
}

int main(int argc, char **argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 3600, status, samples = 0;
  char cfg[400], log[400];
  long rss[4096], peak = 0;
  double next_fault = 0, next_progress = 60, next_sample = 10, next_arrival = 0, last_observe = 0;
  bool all_bound = false;
  int waiting = 0, done = 0;
  FILE *f;
  char *reqlog;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  srand(argc > 2 ? (unsigned)atoi(argv[2]) : 1);
  if (seconds < 30) seconds = 30;
  gangs = calloc(MAX_GANGS, sizeof *gangs);
  if (!gangs || !(srv = fa_start_http2(true))) {
    fprintf(stderr, "soak: cannot start the fake API server\n");
    return 2;
  }
  fa_set_lifetime(srv, seconds + DRAIN_S + 300);
  seed_cluster();
  snprintf(cfg, sizeof cfg, "%s/tessera.yaml", fa_dir(srv));
  snprintf(log, sizeof log, "%s",
           getenv("SOAK_LOG") ? getenv("SOAK_LOG") : "build/soak/tessera.log");
  if (!(f = fopen(cfg, "w"))) return 2;
  fprintf(f,
          "leaderElection: {enable: false}\napi: {eventInterval: 10s}\n"
          "healthAddress: 127.0.0.1:%d\nmetricsAddress: 127.0.0.1:%d\n",
          30000 + (int)(getpid() % 20000), 30000 + (int)(getpid() % 20000));
  fclose(f);
  child = spawn(cfg, log);
  printf("soak: %d s of churn and faults, then up to %d s of drain; tessera log: %s\n", seconds,
         DRAIN_S, log);
  fflush(stdout);
  for (;;) {
    double t = now();
    bool churn = t < seconds;
    if (waitpid(child, &status, WNOHANG) == child) {
      violation("tessera exited (status %d); see %s", status, log);
      child = 0;
      break;
    }
    if (churn && t >= next_arrival) {
      if (waiting < MAX_PENDING) create_gang();
      next_arrival = t + 0.1 + (double)(rand() % 600) / 1000.0;
    }
    if (churn && t >= next_fault && !fa_pending_faults(srv)) {
      /* one at a time: faults that wait for a request would pile up behind a backoff and
       * fail every retry of a resource, which no real server does for minutes on end */
      inject_fault();
      next_fault = t + 1 + rand() % 5;
    }
    if (!churn && next_fault >= 0) { /* the drain is fault-free: what waits now is lost */
      fa_clear_faults(srv);
      next_fault = -1;
    }
    if (t - last_observe >= 1) {
      waiting = observe(&all_bound);
      last_observe = t;
    }
    if (t >= next_sample) {
      long kb = proc_rss_kb(child);
      if (kb > peak) peak = kb;
      if (samples < 4096) rss[samples++] = kb;
      next_sample = t + ((double)seconds / 400.0 > 5 ? (double)seconds / 400.0 : 5);
    }
    if (t >= next_progress) {
      done = 0;
      for (int k = 0; k < ngangs; k++) done += gangs[k].done;
      printf("soak: %4.0fs gangs %d created, %d done, %d waiting; RSS %ld kB\n", t, ngangs, done,
             waiting, proc_rss_kb(child));
      fflush(stdout);
      next_progress = t + 60;
    }
    if (!churn) {
      int left = 0;
      for (int k = 0; k < ngangs; k++) left += !gangs[k].done;
      if (!left) break;
      if (t > seconds + DRAIN_S) {
        for (int k = 0; k < ngangs; k++)
          if (!gangs[k].done)
            violation("gang g%d (%d pods) %s after the drain", k, gangs[k].size,
                      gangs[k].bound_at ? "still running" : "never bound: a lost binding");
        break;
      }
    }
    usleep(50000);
  }
  if (child) kill(child, SIGTERM), waitpid(child, &status, 0);
  reqlog = fa_log(srv);
  {
    long lost_posts = faults[F_POST_LOST];
    int conflicts = count_lines(reqlog, "/binding 409"),
        bound = count_lines(reqlog, "/binding 201");
    long first = 0, last = 0, total = 0;
    int w0 = (int)(samples * RSS_WARMUP), span = (samples - w0) / 10 > 0 ? (samples - w0) / 10 : 1;
    printf("\nsoak summary (%d s of churn):\n", seconds);
    done = 0;
    for (int k = 0; k < ngangs; k++) done += gangs[k].done;
    printf("  gangs created %d, completed %d; bindings confirmed %d; requests %d\n", ngangs, done,
           bound, count_lines(reqlog, "\n"));
    for (int k = 0; k < F_KINDS; k++) {
      printf("  fault %-36s %ld\n", fault_names[k], faults[k]);
      total += faults[k];
    }
    printf("  faults injected %ld\n", total);
    printf("  bindings answered 409 (already bound: retries after a lost answer) %d\n", conflicts);
    (void)lost_posts;
    if (fa_misbound(srv))
      violation("%d bindings of a pod already bound to another node", fa_misbound(srv));
    if (samples - w0 >= 2) {
      for (int k = 0; k < span; k++) first += rss[w0 + k], last += rss[samples - 1 - k];
      first /= span, last /= span;
      printf("  RSS after warm-up %ld kB, at the end %ld kB (%+.1f%%), peak %ld kB, %d samples\n",
             first, last, 100.0 * (double)(last - first) / (double)first, peak, samples);
      if (last > first + first / 10) violation("resident memory grew more than 10%%");
    }
    printf("  violations %d\n", violations);
  }
  free(reqlog);
  fa_stop(srv);
  free(gangs);
  return violations ? 1 : 0;
}
