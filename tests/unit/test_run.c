/* End-to-end tests of `tessera run` against the fake API server: the real binary ($TESSERA,
 * set by scripts/run-tests.sh; build/tessera otherwise) in child processes. They assert the
 * writes and their order (claims before bindings), the pending reports, the lease, a clean
 * SIGTERM, and two replicas failing over without a pod bound twice. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/ts.h"
#include "kubeclient/kc.h"
#include "model/model.h"
#include "tests/support/fakeapi.h"
#include "tests/support/promtext.h"

static fa_server *srv; /* the test's server, stopped by teardown even when a test fails */
/* the queueStatus line of the tests' tessera.yaml (teardown puts the default back) */
static const char *queue_status_settings = "queueStatus: {interval: 200ms}\n";
static pid_t kids[4];              /* tessera processes still running */
static const char *spawn_flags[4]; /* flags spawn adds after its own (teardown clears them) */
static int nkids;

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < nkids; i++) {
    int status;
    kill(kids[i], SIGKILL);
    waitpid(kids[i], &status, 0);
  }
  nkids = 0;
  fa_stop(srv);
  srv = NULL;
  queue_status_settings = "queueStatus: {interval: 200ms}\n";
  memset(spawn_flags, 0, sizeof spawn_flags);
  return 0;
}

static void forget(pid_t pid) {
  for (int i = 0; i < nkids; i++)
    if (kids[i] == pid) kids[i--] = kids[--nkids];
}

static int run_tessera(const char *const *args);

static const char *tessera(void) {
  const char *t = getenv("TESSERA");
  return t && *t ? t : "build/tessera";
}

/* tessera.yaml for the test: short leader-election timings. */
static void write_config(const fa_server *s, int port, char *path, size_t cap) {
  FILE *f;
  snprintf(path, cap, "%s/tessera.yaml", fa_dir(s));
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("leaderElection: {enable: true, leaseName: tessera, leaseNamespace: kube-system,\n"
        "  leaseDuration: 2s, renewDeadline: 1500ms, retryPeriod: 200ms}\n"
        "api: {eventInterval: 1m}\n",
        f);
  fputs(queue_status_settings, f);
  fprintf(f, "healthAddress: 127.0.0.1:%d\nmetricsAddress: 127.0.0.1:%d\n", port, port);
  fclose(f);
}

/* The log of the replica identity (new text; free it). */
static char *replica_log(const fa_server *s, const char *identity) {
  char path[400];
  FILE *f;
  ts_buf b;
  int c;
  snprintf(path, sizeof path, "%s/%s.log", fa_dir(s), identity);
  assert_non_null(f = fopen(path, "r"));
  ts_buf_init(&b, 0);
  while ((c = fgetc(f)) != EOF) ts_buf_putc(&b, (char)c);
  fclose(f);
  ts_buf_putc(&b, '\0');
  return ts_buf_steal(&b);
}

static pid_t spawn(const fa_server *s, const char *identity) {
  char cfg[400];
  pid_t pid;
  write_config(s, 20000 + (int)(getpid() % 10000) * 2 + (identity[0] == 'b'), cfg, sizeof cfg);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char log[400];
    snprintf(log, sizeof log, "%s/%s.log", fa_dir(s), identity);
    if (!freopen(log, "w", stderr)) _exit(127);
    const char *argv[12] = {tessera(),  "run", "--kubeconfig", fa_kubeconfig(s),
                            "--config", cfg,   "--identity",   identity};
    for (int i = 0; i < 3 && spawn_flags[i]; i++) argv[8 + i] = spawn_flags[i];
    execv(tessera(), (char *const *)argv);
    _exit(127);
  }
  if (nkids < 4) kids[nkids++] = pid;
  return pid;
}

static int stop(pid_t pid, int sig) {
  int status = 0;
  forget(pid);
  kill(pid, sig);
  for (int i = 0; i < 100; i++) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    usleep(50000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  fail_msg("tessera did not exit within 5 s of signal %d", sig);
  return status;
}

static void seed(fa_server *s) {
  assert_true(fa_put(s, "apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n"));
  assert_true(fa_put(s, "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                        "status: {allocatable: {cpu: '32', memory: 256Gi, pods: '110', "
                        "nvidia.com/gpu: '8'}}\n"));
  assert_true(fa_put(
      s, "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
         "spec: {selectors: [{cel: {expression: 'device.driver == \"gpu.example.com\"'}}]}\n"));
  assert_true(
      fa_put(s, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
                "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 1, "
                "resourceSliceCount: 1}, devices: [{name: accel-0}]}\n"));
  assert_true(
      fa_put(s, "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                "metadata: {name: c0, namespace: t}\n"
                "spec: {devices: {requests: [{name: a, exactly: {deviceClassName: gpu}}]}}\n"));
}

static void pod(fa_server *s, const char *name, int gpus, const char *claim) {
  char y[1024];
  snprintf(y, sizeof y,
           "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t}\n"
           "spec: {schedulerName: tessera, %s%s%scontainers: [{name: c, resources: {limits: "
           "{nvidia.com/gpu: '%d'}}}]}\n",
           name, claim ? "resourceClaims: [{name: a, resourceClaimName: " : "", claim ? claim : "",
           claim ? "}], " : "", gpus);
  assert_true(fa_put(s, y));
}

static size_t collect(char *p, size_t size, size_t n, void *ud) {
  ts_buf_append(ud, p, size * n);
  return size * n;
}

/* GET http://127.0.0.1:port/path: the status, and the body into out (NUL-terminated). */
static long http_get(int port, const char *path, char *out, size_t cap) {
  char url[200];
  long code = 0;
  ts_buf b;
  CURL *e = curl_easy_init();
  ts_buf_init(&b, 1 << 20);
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
  if (curl_easy_perform(e) == CURLE_OK) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(e);
  snprintf(out, cap, "%.*s", (int)b.len, b.data ? b.data : "");
  ts_buf_free(&b);
  return code;
}

/* GET https://127.0.0.1:port/path (the certificate not verified) with the bearer token (NULL:
 * none): the status, and the body into out. */
static long https_get(int port, const char *path, const char *token, char *out, size_t cap) {
  char url[200], auth[200];
  long code = 0;
  ts_buf b;
  CURL *e = curl_easy_init();
  struct curl_slist *h = NULL;
  ts_buf_init(&b, 1 << 20);
  snprintf(url, sizeof url, "https://127.0.0.1:%d%s", port, path);
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
  if (token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h = curl_slist_append(NULL, auth));
  }
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &b);
  if (curl_easy_perform(e) == CURLE_OK) curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(e);
  curl_slist_free_all(h);
  snprintf(out, cap, "%.*s", (int)b.len, b.data ? b.data : "");
  ts_buf_free(&b);
  return code;
}

/* Every request the scheduler made (tessera_api_requests_total in body) is one the chart's
 * RBAC allows (`tessera rbac` prints the same rules); returns how many kinds were checked. */
static int requests_allowed(const char *body) {
  const char *p = body;
  int n = 0;
  kc_resource_spec reads[MODEL_KIND_COUNT]; /* what tessera run watches */
  for (int k = 0; k < MODEL_KIND_COUNT; k++) {
    const model_kind_api *api = model_kind_api_of((model_kind)k);
    reads[k] = (kc_resource_spec){api->resource, api->group, api->kind, api->versions};
  }
  while ((p = strstr(p, "\ntessera_api_requests_total{verb=\""))) {
    char verb[16], resource[128];
    p += strlen("\ntessera_api_requests_total{verb=\"");
    if (sscanf(p, "%15[^\"]\",resource=\"%127[^\"]", verb, resource) != 2) continue;
    if (!kc_rbac_allows(reads, MODEL_KIND_COUNT, verb, resource))
      fail_msg("%s %s: a request the chart's RBAC does not allow", verb, resource);
    n++;
  }
  return n;
}

/* Every metric the queries in text name (kueue_*, tessera_*) is in the /metrics body, with the
 * labels its selectors use: the dashboard and the KEDA example read what Tessera exports. */
static int queries_match(const char *text, const char *body, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strpbrk(p, "kt"));) {
    char name[128], line[140];
    size_t len;
    if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
        (strncmp(p, "kueue_", 6) && strncmp(p, "tessera_", 8))) {
      p++;
      continue;
    }
    len = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_:");
    snprintf(name, sizeof name, "%.*s", (int)len, p);
    snprintf(line, sizeof line, "\n%s", name);
    if (strstr(name, "_weighted_share")) { /* exported with fair sharing on, as Kueue does */
      p += len;
      n++;
      continue;
    }
    if (!strstr(body, line)) fail_msg("%s: %s is not exported", what, name);
    p += len;
    if (*p == '{') { /* name{a="x",b=~"y"}: each label is on some sample of name */
      const char *end = strchr(p, '}');
      for (const char *q = p + 1; end && q < end;) {
        size_t k = strspn(q, "abcdefghijklmnopqrstuvwxyz_");
        char sample[300];
        const char *s = body;
        bool found = false;
        snprintf(sample, sizeof sample, "\n%s{", name);
        while (!found && (s = strstr(s, sample))) {
          const char *close = strchr(s + 1, '}');
          char lab[64], seg[512];
          snprintf(lab, sizeof lab, "%.*s=\"", (int)k, q);
          snprintf(seg, sizeof seg, "%.*s", close ? (int)(close - s) : 0, s);
          found = strstr(seg, lab) != NULL;
          s++;
        }
        if (!found) fail_msg("%s: no sample of %s has label %.*s", what, name, (int)k, q);
        q = strchr(q, ',');
        q = q && q < end ? q + 1 : end;
      }
    }
    n++;
  }
  return n;
}

/* Polls the object at path until its text holds both needles (10 s at most). */
static bool wait_status(fa_server *s, const char *path, const char *a, const char *b) {
  for (int i = 0; i < 200; i++) {
    char *o = fa_get(s, path);
    bool ok = o && strstr(o, a) && strstr(o, b);
    if (ok || i == 199) {
      if (!ok) print_message("%s: %s\n", path, o ? o : "(none)");
      free(o);
      return ok;
    }
    free(o);
    usleep(50000);
  }
  return false;
}

static bool bound_to(fa_server *s, const char *name, const char *node) {
  char path[200], want[200], *o;
  bool ok;
  snprintf(path, sizeof path, "/api/v1/namespaces/t/pods/%s", name);
  snprintf(want, sizeof want, "\"nodeName\":\"%s\"", node);
  o = fa_get(s, path);
  ok = o && strstr(o, want);
  free(o);
  return ok;
}

/* tessera probe --timeout: an endpoint that takes the connection and never answers is given
 * up on after the timeout (1 s), not the default (5 s). */
static void probe_times_out(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof sa;
  char url[100];
  const char *args[] = {"probe", url, "--timeout=1", NULL};
  double t0;
  assert_true(fd >= 0 && !bind(fd, (struct sockaddr *)&sa, sizeof sa) && !listen(fd, 4) &&
              !getsockname(fd, (struct sockaddr *)&sa, &len));
  snprintf(url, sizeof url, "http://127.0.0.1:%d/readyz", ntohs(sa.sin_port));
  t0 = ts_time_mono_s();
  assert_int_equal(run_tessera(args), 1);
  assert_true(ts_time_mono_s() - t0 < 3.5);
  close(fd);
}

static void test_run_schedules(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  char *log, *lease;
  const char *claim_status, *bind;
  int status;
  (void)state;
  assert_non_null(s);
  seed(s);
  pod(s, "p0", 4, NULL);
  pod(s, "p1", 4, NULL);
  pod(s, "big", 16, NULL);
  pod(s, "dra", 0, "c0");
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p0/binding 201", 1, 15000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p1/binding 201", 1, 5000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/dra/binding 201", 1, 5000));
  assert_true(bound_to(s, "p0", "n1") && bound_to(s, "p1", "n1") && bound_to(s, "dra", "n1"));
  /* The pod that cannot fit: PodScheduled=False and one Event. */
  assert_true(fa_wait(s, "PATCH /api/v1/namespaces/t/pods/big/status 200", 1, 5000));
  assert_true(fa_wait(s, "POST /apis/events.k8s.io/v1/namespaces/t/events 201", 1, 5000));
  /* The claim: finalizer, then allocation and reservedFor, then (only then) the binding. */
  log = fa_log(s);
  claim_status =
      strstr(log, "PUT /apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0/status 200");
  bind = strstr(log, "POST /api/v1/namespaces/t/pods/dra/binding 201");
  assert_non_null(strstr(log, "PUT /apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0 200"));
  assert_non_null(claim_status);
  assert_true(claim_status < bind);
  /* Discovery, then lists before watches. */
  assert_true(strstr(log, "GET /apis 200") < strstr(log, "GET /api/v1/pods?limit=500 200"));
  assert_true(strstr(log, "GET /api/v1/pods?limit=500 200") <
              strstr(log, "GET /api/v1/pods?watch=1"));
  free(log);
  {
    char *c = fa_get(s, "/apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0");
    assert_non_null(strstr(c, "\"device\":\"accel-0\""));
    assert_non_null(strstr(c, "resource.kubernetes.io/delete-protection"));
    assert_non_null(strstr(c, "\"reservedFor\":[{\"name\":\"dra\""));
    free(c);
  }
  /* Health and metrics, on the configured address. */
  {
    char body[65536], *at;
    double secs;
    double rss;
    int port = 20000 + (int)(getpid() % 10000) * 2;
    assert_int_equal(http_get(port, "/healthz", body, sizeof body), 200);
    assert_int_equal(http_get(port, "/readyz", body, sizeof body), 200);
    { /* tessera probe, as the chart's `helm test` runs it: 0 for a 2xx, 1 otherwise */
      char ok[100], nope[100];
      const char *a1[] = {"probe", ok, NULL}, *a2[] = {"probe", nope, "--timeout=2", NULL},
                 *a3[] = {"probe", "http://127.0.0.1:1/readyz", "--timeout", "2", NULL};
      snprintf(ok, sizeof ok, "http://127.0.0.1:%d/readyz", port);
      snprintf(nope, sizeof nope, "http://127.0.0.1:%d/nope", port);
      assert_int_equal(run_tessera(a1), 0);
      assert_int_equal(run_tessera(a2), 1);
      assert_int_equal(run_tessera(a3), 1);
    }
    probe_times_out();
    for (int i = 0; i < 50; i++) { /* the server logs a binding before tessera reads it */
      assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
      if (strstr(body, "\ntessera_pods_bound_total 3\n")) break;
      usleep(50000);
    }
    assert_non_null(strstr(body, "\ntessera_pods_bound_total 3\n"));
    assert_non_null(strstr(body, "\ntessera_leader 1\n"));
    { /* the whole body as a scraper reads it (issue 15) */
      char why[512];
      if (!prom_text_valid(body, why, sizeof why)) fail_msg("/metrics: %s\n%s", why, body);
    }
    assert_true(requests_allowed(body) >= 20); /* lists, watches, claims, binds, status */
    /* which build answers (issue 15): the commit and date `tessera version` reports */
    assert_non_null(strstr(body, "# TYPE tessera_build_info gauge\ntessera_build_info{commit=\""));
    assert_non_null(strstr(body, "\",build_date=\""));
    /* each resource's sync time, and the process's memory (issue 16) */
    assert_non_null(at = strstr(body, "\ntessera_informer_sync_seconds{resource=\"pods\"} "));
    assert_int_equal(sscanf(strchr(at, '}') + 1, "%lf", &secs), 1);
    assert_true(secs >= 0 && secs < 60);
    assert_non_null(at = strstr(body, "\nprocess_resident_memory_bytes "));
    assert_int_equal(sscanf(at + 31, "%lf", &rss), 1); /* as Go's client spells it: 1.6e+07 */
    assert_true(rss > 1000000 && rss < 4e9);
    assert_int_equal(http_get(port, "/nope", body, sizeof body), 404);
  }
  /* A pod added later is scheduled from the watch. */
  pod(s, "late", 0, NULL); /* n1's 8 GPUs are taken: a CPU-only pod */
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/late/binding 201", 1, 5000));
  /* SIGTERM: the lease is released and the process exits cleanly. */
  status = stop(pid, SIGTERM);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  lease = fa_get(s, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/tessera");
  assert_non_null(lease);
  assert_non_null(strstr(lease, "\"holderIdentity\":\"\""));
  free(lease);
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/p0/binding"), 1);
  { /* at the default verbosity the log holds no debug line */
    char *text = replica_log(s, "a");
    assert_null(strstr(text, "debug"));
    assert_non_null(strstr(text, "tessera: info: "));
    free(text);
  }
}

/* /readyz while the process shuts down (informers already stopped, the lease not yet
 * released): never a read of freed memory (the sanitizer run would abort), never "ready". */
static void test_run_shutdown_readyz(void **state) {
  fa_server *s = srv = fa_start();
  int port = 20000 + (int)(getpid() % 10000) * 2, status, after = 0, ok_after = 0;
  char body[256], *log;
  pid_t pid;
  (void)state;
  assert_non_null(s);
  seed(s);
  spawn_flags[0] = "-v=2", spawn_flags[1] = "--logging-format=json"; /* and the log says so */
  pid = spawn(s, "a");
  for (int i = 0; i < 200 && http_get(port, "/readyz", body, sizeof body) != 200; i++)
    usleep(50000);
  assert_true(
      fa_wait(s, "PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases", 1, 5000));
  /* The release of the lease takes a while: the window in which /readyz ran on freed
   * informers. */
  fa_delay(s, "PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/tessera", 800, 5);
  forget(pid);
  kill(pid, SIGTERM);
  for (int i = 0; i < 2000; i++) {
    long code = http_get(port, "/readyz", body, sizeof body);
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (code && code != 200) after++;
    if (code == 200 && after) ok_after++;
    usleep(2000);
  }
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_true(after > 0); /* it said "not ready" while shutting down */
  assert_int_equal(ok_after, 0);
  log = replica_log(s, "a"); /* -v=2: debug lines; --logging-format=json: JSON lines only */
  assert_non_null(strstr(log, "\"level\":\"debug\""));
  assert_non_null(strstr(log, "\"object\":\"kube-system/tessera\"")); /* the lease's lines */
  for (const char *line = log; *line; line = strchr(line, '\n') + 1) {
    if (strncmp(line, "{\"ts\":", 6)) fail_msg("not a JSON log line: %.120s", line);
    if (!strchr(line, '\n')) break;
  }
  free(log);
}

/* Two replicas: only the leader writes; when it dies without releasing, the other takes over
 * after the lease expires, and no pod is ever bound twice. */
static void test_run_failover(void **state) {
  fa_server *s = srv = fa_start();
  pid_t a, b;
  char *lease, *log;
  (void)state;
  assert_non_null(s);
  seed(s);
  pod(s, "p0", 1, NULL);
  a = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p0/binding 201", 1, 15000));
  b = spawn(s, "b");
  usleep(1500000); /* b is up and standing by */
  pod(s, "p1", 1, NULL);
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p1/binding 201", 1, 5000));
  stop(a, SIGKILL); /* no release: b must wait for the lease to expire */
  pod(s, "p2", 1, NULL);
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p2/binding 201", 1, 15000));
  lease = fa_get(s, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/tessera");
  assert_non_null(strstr(lease, "\"holderIdentity\":\"b\""));
  free(lease);
  stop(b, SIGTERM);
  log = fa_log(s);
  assert_null(strstr(log, "/binding 409")); /* nobody bound a pod that was bound already */
  free(log);
  for (int i = 0; i < 3; i++) {
    char p[100];
    snprintf(p, sizeof p, "POST /api/v1/namespaces/t/pods/p%d/binding", i);
    assert_int_equal(fa_count(s, p), 1);
  }
}

/* The sum of every sample of family name in a /metrics body (0 when none). */
static double family_sum(const char *body, const char *name) {
  char prefix[128];
  double sum = 0;
  snprintf(prefix, sizeof prefix, "\n%s{", name);
  for (const char *p = body; (p = strstr(p, prefix)); p++) {
    const char *end = strchr(p, '}');
    if (end) sum += strtod(end + 1, NULL);
  }
  return sum;
}

/* Scrapes both replicas into a and b; true when every sum a dashboard or KEDA query takes over
 * the two equals the truth: 2 GPUs used of 8, one workload pending. */
static bool sums_true(int port, char *a, char *b, size_t cap) {
  const char *one[] = {"kueue_pending_workloads", "kueue_admitted_active_workloads",
                       "kueue_local_queue_pending_workloads"};
  const char *two[] = {"kueue_cluster_queue_resource_usage", "tessera_gpu_allocated",
                       "kueue_cluster_queue_resource_reservation"};
  if (http_get(port, "/metrics", a, cap) != 200 || http_get(port + 1, "/metrics", b, cap) != 200)
    return false;
  for (size_t i = 0; i < 3; i++)
    if (family_sum(a, one[i]) + family_sum(b, one[i]) != 1 ||
        family_sum(a, two[i]) + family_sum(b, two[i]) != 2)
      return false;
  return family_sum(a, "kueue_cluster_queue_nominal_quota") +
                 family_sum(b, "kueue_cluster_queue_nominal_quota") ==
             8 &&
         family_sum(a, "tessera_gpu_allocatable") + family_sum(b, "tessera_gpu_allocatable") == 8;
}

/* Two replicas scraped through a failover (the leader frozen, then back as a follower): every
 * sum over both that the dashboard and the KEDA example take equals the truth, before and
 * after; the follower exports no cluster gauge and says replica_role="follower" nowhere it
 * counts. */
static void test_run_failover_metrics(void **state) {
  fa_server *s = srv = fa_start();
  static char a_body[262144], b_body[262144];
  int port = 20000 + (int)(getpid() % 10000) * 2;
  char *lease = NULL;
  pid_t a, b;
  bool ok = false;
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"));
  assert_true(
      fa_put(s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
                "spec:\n  namespaceSelector: {}\n"
                "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
                "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}\n"));
  assert_true(fa_put(
      s,
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: t}\n"
      "spec: {clusterQueue: cq}\n"));
  for (int i = 0; i < 2; i++) {
    char y[600];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: k%d, namespace: t, labels: "
             "{kueue.x-k8s.io/queue-name: lq}}\nspec: {schedulerName: tessera, containers: "
             "[{name: c, resources: {limits: {nvidia.com/gpu: '%d'}}}]}\n",
             i, i ? 8 : 2);
    assert_true(fa_put(s, y));
  }
  a = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/k0/binding 201", 1, 15000));
  b = spawn(s, "b");
  for (int i = 0; i < 100 && !(ok = sums_true(port, a_body, b_body, sizeof a_body)); i++)
    usleep(100000);
  if (!ok) fail_msg("before failover:\n--- a\n%s\n--- b\n%s", a_body, b_body);
  assert_non_null(strstr(a_body, "replica_role=\"leader\""));
  assert_null(strstr(b_body, "kueue_cluster_queue_nominal_quota{"));
  assert_null(strstr(b_body, "replica_role=\"leader\"")); /* b has counted nothing */

  kill(a, SIGSTOP); /* frozen: b takes the lease once it expires */
  for (int i = 0; i < 200; i++) {
    free(lease);
    lease = fa_get(s, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/tessera");
    if (lease && strstr(lease, "\"holderIdentity\":\"b\"")) break;
    usleep(50000);
  }
  assert_non_null(strstr(lease, "\"holderIdentity\":\"b\""));
  free(lease);
  kill(a, SIGCONT); /* back, to find it has lost the lease */
  ok = false;
  for (int i = 0; i < 100 && !ok; i++) {
    ok = sums_true(port, a_body, b_body, sizeof a_body) && strstr(a_body, "\ntessera_leader 0\n") &&
         strstr(b_body, "\ntessera_leader 1\n") &&
         strstr(b_body, "kueue_cluster_queue_nominal_quota{"); /* b ran a cycle */
    if (!ok) usleep(100000);
  }
  if (!ok) fail_msg("after failover:\n--- a\n%s\n--- b\n%s", a_body, b_body);
  assert_null(strstr(a_body, "kueue_cluster_queue_nominal_quota{")); /* a dropped its gauges */
  assert_null(strstr(a_body, "tessera_gpu_allocated{"));
  /* a's admission of k0 stays counted, once, under the role it had */
  assert_non_null(strstr(a_body, "\nkueue_admitted_workloads_total{cluster_queue=\"cq\","
                                 "priority_class=\"\",replica_role=\"leader\"} 1\n"));
  assert_true(family_sum(a_body, "kueue_admitted_workloads_total") +
                  family_sum(b_body, "kueue_admitted_workloads_total") ==
              1);
  stop(b, SIGTERM);
  stop(a, SIGTERM);
}

/* Faults the informers must survive: 500s on a list, a resource forbidden (skipped, not
 * retried in a loop), a dropped connection, and a compaction under a running watch (410 as an
 * ERROR event: a re-list, after which a pod deleted meanwhile is gone and a new one scheduled). */
static void test_run_faults(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  char *log;
  (void)state;
  assert_non_null(s);
  seed(s);
  pod(s, "p0", 1, NULL);
  fa_fault(s, "GET", "/api/v1/pods?limit", 500, 2, "etcdserver: request timed out");
  fa_fault(s, "GET", "/apis/policy/v1/poddisruptionbudgets?limit", 403, 5, "forbidden");
  fa_fault(s, "GET", "/api/v1/nodes?limit", 0, 1, NULL); /* connection dropped */
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p0/binding 201", 1, 20000));
  assert_true(fa_wait(s, "GET /api/v1/pods?watch=1", 1, 5000));
  fa_compact(s);
  pod(s, "p1", 1, NULL);
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p1/binding 201", 1, 15000));
  stop(pid, SIGTERM);
  log = fa_log(s);
  assert_int_equal(fa_count(s, "GET /api/v1/pods?limit=500 500"), 2);
  assert_int_equal(fa_count(s, "GET /apis/policy/v1/poddisruptionbudgets?limit=500 403"), 1);
  assert_true(fa_count(s, "GET /api/v1/pods?limit=500 200") >= 2); /* the re-list */
  free(log);
}

/* A claim changed under the writer (409 on its status write) is re-read and written again;
 * a rotated token (401 with the old one) is re-read from its file. */
static void test_run_conflict_and_token(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  char path[400];
  FILE *f;
  (void)state;
  assert_non_null(s);
  seed(s);
  fa_fault(s, "PUT", "/apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0/status", 409, 1,
           "Operation cannot be fulfilled on resourceclaims.resource.k8s.io \"c0\": the object "
           "has been modified; please apply your changes to the latest version and try again");
  pod(s, "dra", 0, "c0");
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/dra/binding 201", 1, 15000));
  assert_int_equal(
      fa_count(s, "PUT /apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0/status 409"), 1);
  assert_true(fa_count(s, "GET /apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0 200") >= 1);
  assert_int_equal(
      fa_count(s, "PUT /apis/resource.k8s.io/v1/namespaces/t/resourceclaims/c0/status 200"), 1);
  /* Rotate the token: the server accepts only the new one, which is in the token file. */
  snprintf(path, sizeof path, "%s/token", fa_dir(s));
  assert_non_null(f = fopen(path, "w"));
  fputs("rotated-token", f);
  fclose(f);
  fa_set_token(s, "rotated-token");
  pod(s, "after", 0, NULL);
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/after/binding 201", 1, 20000));
  stop(pid, SIGTERM);
}

/* Kueue preemption in a cluster: the higher-priority workload's victim is evicted through the
 * Eviction API, and once it is gone the preemptor is bound. A PodGroup gang binds whole. */
static void test_run_preemption_and_gang(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"));
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
         "spec:\n  namespaceSelector: {}\n  preemption: {withinClusterQueue: LowerPriority}\n"
         "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
         "    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}\n"));
  assert_true(fa_put(
      s,
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: t}\n"
      "spec: {clusterQueue: cq}\n"));
  for (int i = 0; i < 2; i++) { /* the Jobs of the pods below, one pod each */
    char y[400];
    snprintf(y, sizeof y,
             "apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s, namespace: t, uid: u-%s}\n"
             "spec: {parallelism: 1, template: {spec: {containers: [{name: c}]}}}\n",
             i ? "high" : "low", i ? "high" : "low");
    assert_true(fa_put(s, y));
  }
  assert_true(fa_put(
      s, "apiVersion: v1\nkind: Pod\nmetadata: {name: low-0, namespace: t, labels: "
         "{kueue.x-k8s.io/queue-name: lq}, ownerReferences: [{apiVersion: batch/v1, kind: Job, "
         "name: low, uid: u-low, controller: true}]}\nspec: {schedulerName: tessera, nodeName: n1, "
         "priority: 1, containers: [{name: c, resources: {limits: {nvidia.com/gpu: '4'}}}]}\n"
         "status: {phase: Running}\n"));
  assert_true(fa_put(
      s, "apiVersion: v1\nkind: Pod\nmetadata: {name: high-0, namespace: t, labels: "
         "{kueue.x-k8s.io/queue-name: lq}, ownerReferences: [{apiVersion: batch/v1, kind: Job, "
         "name: high, uid: u-high, controller: true}]}\nspec: {schedulerName: tessera, "
         "priority: 100, containers: [{name: c, resources: {limits: {nvidia.com/gpu: '2'}}}]}\n"));
  assert_true(fa_put(s, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                        "{name: g, namespace: t}\n"
                        "spec: {minMember: 2}\n"));
  for (int i = 0; i < 2; i++) {
    char y[600];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: g-%d, namespace: t, labels: "
             "{scheduling.x-k8s.io/pod-group: g}}\nspec: {schedulerName: tessera, containers: "
             "[{name: c, resources: {requests: {cpu: '1'}}}]}\n",
             i);
    assert_true(fa_put(s, y));
  }
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-0/binding 201", 1, 15000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-1/binding 201", 1, 5000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/low-0/eviction 201", 1, 10000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/high-0/binding 201", 1, 10000));
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/low-0/eviction"), 1);
  { /* the accepted eviction says why, in a Preempted Event about the pod */
    char *ev = NULL;
    for (int i = 0; i < 100; i++) {
      free(ev);
      ev = fa_get(s, "/apis/events.k8s.io/v1/namespaces/t/events");
      if (ev && strstr(ev, "\"reason\":\"Preempted\"")) break;
      usleep(50000);
    }
    assert_non_null(ev);
    assert_non_null(strstr(ev, "\"reason\":\"Preempted\""));
    assert_non_null(strstr(ev, "\"name\":\"low-0\""));
    assert_non_null(strstr(ev, "(InClusterQueue)"));
    free(ev);
  }
  /* Kueue's controller is not running (no Lease): the queues' status is written as Kueue
   * writes it, and follows the preemption (issue 15). */
  assert_true(wait_status(s, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq",
                          "\"admittedWorkloads\":1,", "\"total\":\"2\""));
  {
    char *o = fa_get(s, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq");
    assert_non_null(strstr(o, "\"pendingWorkloads\":0"));
    /* (the fake server sorts keys) */
    assert_non_null(strstr(o, "\"flavorsUsage\":[{\"name\":\"gpu\",\"resources\":[{\"borrowed\":"
                              "\"0\",\"name\":\"nvidia.com/gpu\",\"total\":\"2\"}]}]"));
    assert_non_null(strstr(o, "\"reason\":\"Ready\",\"status\":\"True\",\"type\":\"Active\""));
    free(o);
  }
  assert_true(wait_status(s, "/apis/kueue.x-k8s.io/v1beta1/namespaces/t/localqueues/lq",
                          "\"admittedWorkloads\":1,", "\"flavorUsage\":[{\"name\":\"gpu\""));
  { /* the metrics saw the same: one admission (landed), one eviction by preemption */
    char body[262144], why[512];
    int port = 20000 + (int)(getpid() % 10000) * 2;
    for (int i = 0; i < 50; i++) {
      assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
      if (strstr(body, "\nkueue_admitted_workloads_total{cluster_queue=\"cq\",priority_class=\"\","
                       "replica_role=\"leader\"} 1\n"))
        break;
      usleep(50000);
    }
    if (!prom_text_valid(body, why, sizeof why)) fail_msg("/metrics: %s\n%s", why, body);
    assert_non_null(strstr(body, "\nkueue_admitted_workloads_total{cluster_queue=\"cq\",priority_"
                                 "class=\"\",replica_role=\"leader\"} 1\n"));
    assert_non_null(
        strstr(body, "\nkueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\","
                     "underlying_cause=\"\",priority_class=\"\",replica_role=\"leader\"} 1\n"));
    assert_non_null(strstr(body, "\nkueue_preempted_workloads_total{preempting_cluster_queue="
                                 "\"cq\",reason=\"InClusterQueue\",replica_role=\"leader\"} 1\n"));
    assert_non_null(strstr(body, "\nkueue_cluster_queue_resource_usage{cohort=\"\","
                                 "cluster_queue=\"cq\",flavor=\"gpu\",resource=\"nvidia.com/"
                                 "gpu\",replica_role=\"leader\"} 2\n"));
    assert_null(strstr(body, "\ntessera_queue_status_writes_total 0\n"));
    assert_true(requests_allowed(body) >= 20); /* evictions and queue status too */
    { /* deploy/: the dashboard's and the KEDA example's queries read these metrics */
      FILE *f;
      char text[65536];
      size_t n;
      assert_non_null(f = fopen("deploy/grafana/tessera.json", "r"));
      n = fread(text, 1, sizeof text - 1, f);
      text[n] = '\0';
      fclose(f);
      assert_true(queries_match(text, body, "deploy/grafana/tessera.json") >= 20);
      assert_non_null(f = fopen("deploy/keda/scaledobject.yaml", "r"));
      n = fread(text, 1, sizeof text - 1, f);
      text[n] = '\0';
      fclose(f);
      assert_int_equal(queries_match(text, body, "deploy/keda/scaledobject.yaml"), 1);
    }
  }
  stop(pid, SIGTERM);
}

/* Runs `tessera ARGS...` to its end; returns its exit status. */
static int run_tessera(const char *const *args) {
  pid_t pid = fork();
  int status = -1;
  assert_true(pid >= 0);
  if (pid == 0) {
    const char *argv[16] = {tessera()};
    int n = 1;
    for (; args[n - 1] && n < 15; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    execv(tessera(), (char *const *)argv);
    _exit(127);
  }
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* `tessera snapshot` writes what `tessera run` reads (its config and the server's version
 * too, no environment values), and `tessera replay` of it decides what `tessera run` does on
 * the same cluster (issue 15). */
static void test_run_snapshot_replay(void **state) {
  fa_server *s = srv = fa_start();
  char snapf[400], cfg[400], cmd[1200], line[256], *text;
  char names[8][64], nodes[8][64];
  int n = 0;
  FILE *p;
  pid_t pid;
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(fa_put(s, "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
                        "status: {allocatable: {cpu: '32', memory: 256Gi, pods: '110', "
                        "nvidia.com/gpu: '4'}}\n"));
  assert_true(fa_put(s, "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: t}\n"
                        "data: {token: aHVudGVyMg==}\n"));
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: env, namespace: t}\n"
                        "spec: {schedulerName: tessera, containers: [{name: c, image: busybox, "
                        "env: [{name: PASSWORD, value: hunter2}], resources: {limits: "
                        "{nvidia.com/gpu: '2'}}}]}\n"));
  for (int i = 0; i < 4; i++) { /* as the API server would hold them: with an image */
    static const char *const pods[] = {"big", "mid", "small", "huge"};
    static const int gpus[] = {4, 3, 1, 16}; /* huge fits nowhere */
    char y[400];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t}\nspec: "
             "{schedulerName: tessera, containers: [{name: c, image: busybox, resources: "
             "{limits: {nvidia.com/gpu: '%d'}}}]}\n",
             pods[i], gpus[i]);
    assert_true(fa_put(s, y));
  }
  write_config(s, 20000 + (int)(getpid() % 10000) * 2, cfg, sizeof cfg);
  snprintf(snapf, sizeof snapf, "%s/snapshot.json", fa_dir(s));
  { /* a symlink where the snapshot goes is replaced by the file, never written through */
    char target[400];
    FILE *t;
    snprintf(target, sizeof target, "%s/precious", fa_dir(s));
    assert_non_null(t = fopen(target, "w"));
    fputs("precious\n", t);
    fclose(t);
    assert_int_equal(symlink(target, snapf), 0);
    const char *args[] = {
        "snapshot", "--kubeconfig", fa_kubeconfig(s), "--config", cfg, "--file", snapf, NULL};
    assert_int_equal(run_tessera(args), 0);
    assert_non_null(t = fopen(target, "r"));
    assert_non_null(fgets(line, sizeof line, t));
    fclose(t);
    assert_string_equal(line, "precious\n");
    {
      struct stat st;
      assert_int_equal(lstat(snapf, &st), 0);
      assert_true(S_ISREG(st.st_mode));
    }
  }
  assert_non_null(p = fopen(snapf, "r"));
  fclose(p);
  {
    FILE *f = fopen(snapf, "r");
    long len;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    text = calloc(1, (size_t)len + 1);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
  }
  assert_non_null(strstr(text, "\"kind\":\"SchedulerConfiguration\""));
  assert_non_null(strstr(text, "\"retryPeriod\":\"200ms\""));       /* the effective config */
  assert_non_null(strstr(text, "\"gitVersion\":\"v1.34.0-fake\"")); /* the server */
  assert_non_null(strstr(text, "\"pods\":5"));                      /* the counts */
  assert_non_null(strstr(text, "\"name\":\"PASSWORD\""));
  assert_null(strstr(text, "hunter2"));  /* no environment values */
  assert_null(strstr(text, "aHVudGVy")); /* and no Secret */
  assert_null(strstr(text, "\"kind\":\"Secret\""));
  free(text);
  /* replay the file: what would be bound where */
  snprintf(cmd, sizeof cmd, "%s replay %s", tessera(), snapf);
  assert_non_null(p = popen(cmd, "r"));
  while (fgets(line, sizeof line, p) && n < 8)
    if (sscanf(line, "bind t/%63s -> %63s", names[n], nodes[n]) == 2) n++;
  assert_int_equal(pclose(p) >> 8, 0);
  assert_int_equal(n, 4); /* env, big, mid, small; huge waits */
  /* the scheduler on the same cluster does the same */
  pid = spawn(s, "a");
  for (int i = 0; i < n; i++) {
    char want[600];
    snprintf(want, sizeof want, "POST /api/v1/namespaces/t/pods/%s/binding 201", names[i]);
    assert_true(fa_wait(s, want, 1, 15000));
    if (!bound_to(s, names[i], nodes[i])) fail_msg("%s: replay says %s", names[i], nodes[i]);
  }
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/huge/binding"), 0);
  stop(pid, SIGTERM);
  /* a stray argument is a usage error */
  {
    const char *args[] = {"snapshot", "--bogus", NULL};
    assert_int_equal(run_tessera(args), 2);
  }
}

/* Recorded pods are taken as the API server stored them, by replay as by run: a running pod
 * whose spec.priority differs from its class now (the class deleted, a globalDefault class
 * added since) still holds its node. Replay once applied the Priority admission to it and
 * dropped it: the node looked free and a new 8-GPU pod was bound onto the full node. */
static void test_replay_run_recorded_priority(void **state) {
  static const char *const objs[] = {
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: t}\n",
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '32', "
      "memory: 256Gi, pods: '110', nvidia.com/gpu: '8'}}\n",
      "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: '32', "
      "memory: 256Gi, pods: '110', nvidia.com/gpu: '2'}}\n",
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: now-default}\n"
      "value: 100\nglobalDefault: true\n",
      /* created before now-default existed: priority 0; its class "gone" was deleted since */
      "apiVersion: v1\nkind: Pod\nmetadata: {name: full, namespace: t}\nspec: {schedulerName: "
      "tessera, nodeName: n1, priority: 0, containers: [{name: c, image: busybox, resources: "
      "{limits: {nvidia.com/gpu: '4'}}}]}\nstatus: {phase: Running}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: gone, namespace: t}\nspec: {schedulerName: "
      "tessera, nodeName: n1, priority: 7, priorityClassName: gone, containers: [{name: c, image: "
      "busybox, resources: {limits: {nvidia.com/gpu: '4'}}}]}\nstatus: {phase: Running}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: t}\nspec: {schedulerName: "
      "tessera, priority: 100, containers: [{name: c, image: busybox, resources: {limits: "
      "{nvidia.com/gpu: '8'}}}]}\n",
      "apiVersion: v1\nkind: Pod\nmetadata: {name: ok, namespace: t}\nspec: {schedulerName: "
      "tessera, priority: 100, containers: [{name: c, image: busybox, resources: {limits: "
      "{nvidia.com/gpu: '2'}}}]}\n",
  };
  fa_server *s = srv = fa_start();
  char file[400], cmd[1200], line[512];
  bool bound_new = false, bound_ok = false, pending_new = false;
  FILE *f, *p;
  pid_t pid;
  (void)state;
  assert_non_null(s);
  snprintf(file, sizeof file, "%s/recorded.yaml", fa_dir(s));
  assert_non_null(f = fopen(file, "w"));
  for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) {
    fprintf(f, "%s---\n", objs[i]);
    assert_true(fa_put(s, objs[i]));
  }
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s replay %s 2>&1", tessera(), file);
  assert_non_null(p = popen(cmd, "r"));
  while (fgets(line, sizeof line, p)) {
    bound_new |= !strncmp(line, "bind t/new ", 11);
    bound_ok |= !strncmp(line, "bind t/ok -> n2", 15);
    pending_new |= !strncmp(line, "pending t/new:", 14);
    assert_null(strstr(line, "forbidden")); /* no admission refusal of recorded pods */
  }
  assert_int_equal(pclose(p) >> 8, 0);
  assert_false(bound_new);
  assert_true(pending_new && bound_ok);
  pid = spawn(s, "a"); /* the scheduler on the same objects: ok is bound, new is not */
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/ok/binding 201", 1, 15000));
  assert_true(bound_to(s, "ok", "n2"));
  usleep(500000); /* a few more cycles */
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/new/binding"), 0);
  stop(pid, SIGTERM);
}

/* A gated pod against the (fake) API server: no binding is tried (the server refuses a gated
 * pod's binding with 409), its PodScheduled=False says SchedulingGated, no FailedScheduling
 * Event, and once its gate is removed it is bound; a pod too big for the node says
 * Unschedulable, which autoscalers act on. */
static void test_run_gated_and_reasons(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  char *o;
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: gated, namespace: t}\n"
                        "spec: {schedulerName: tessera, schedulingGates: [{name: example.com/w}], "
                        "containers: [{name: c, image: busybox, resources: {limits: "
                        "{nvidia.com/gpu: '1'}}}]}\n"));
  pod(s, "big", 16, NULL);
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "PATCH /api/v1/namespaces/t/pods/gated/status 200", 1, 15000));
  assert_true(fa_wait(s, "PATCH /api/v1/namespaces/t/pods/big/status 200", 1, 5000));
  o = fa_get(s, "/api/v1/namespaces/t/pods/gated");
  assert_non_null(strstr(o, "\"reason\":\"SchedulingGated\""));
  assert_non_null(strstr(o, "waiting for scheduling gates: [example.com/w]"));
  free(o);
  o = fa_get(s, "/api/v1/namespaces/t/pods/big");
  assert_non_null(strstr(o, "\"reason\":\"Unschedulable\""));
  free(o);
  assert_true(fa_wait(s, "POST /apis/events.k8s.io/v1/namespaces/t/events 201", 1, 5000));
  usleep(300000);
  assert_int_equal(fa_count(s, "POST /apis/events.k8s.io/v1/namespaces/t/events"), 1); /* big's */
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/gated/binding"), 0);
  /* the gate goes, as a controller removes it */
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: gated, namespace: t}\n"
                        "spec: {schedulerName: tessera, containers: [{name: c, image: busybox, "
                        "resources: {limits: {nvidia.com/gpu: '1'}}}]}\n"));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/gated/binding 201", 1, 10000));
  assert_int_equal(fa_misbound(s), 0);
  stop(pid, SIGTERM);
}

/* True when tessera-ID's log has a line holding text. */
static bool logged(const fa_server *s, const char *id, const char *text) {
  char path[400], line[1024];
  bool found = false;
  FILE *f;
  snprintf(path, sizeof path, "%s/%s.log", fa_dir(s), id);
  if (!(f = fopen(path, "r"))) return false;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, text) != NULL;
  fclose(f);
  return found;
}

/* Each queueStatus setting changes what is written (issue 15): a queue, a pod in it, and
 * Kueue's leader Lease held (fresh) in kueue-system unless lease_ns is NULL. */
static void queue_status_case(const char *settings, const char *lease_ns, int want_writes,
                              const char *want_log) {
  fa_server *s = srv = fa_start();
  char y[600], t[40];
  time_t now = time(NULL);
  struct tm tm;
  pid_t pid;
  assert_non_null(s);
  seed(s);
  queue_status_settings = settings;
  gmtime_r(&now, &tm);
  strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
  snprintf(y, sizeof y,
           "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: "
           "c1f6bfd2.kueue.x-k8s.io, namespace: %s}\nspec: {holderIdentity: "
           "kueue-controller-manager-1, leaseDurationSeconds: 15, renewTime: \"%s\"}\n",
           lease_ns ? lease_ns : "", t);
  if (lease_ns) assert_true(fa_put(s, y));
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"));
  assert_true(fa_put(
      s,
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
      "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
      "    flavors:\n    - {name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}\n"));
  assert_true(fa_put(
      s,
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: lq, namespace: t}\n"
      "spec: {clusterQueue: cq}\n"));
  pid = spawn(s, "a");
  for (int i = 0; i < 2; i++) { /* the second pod changes the status after the first write */
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: q%d, namespace: t, labels: "
             "{kueue.x-k8s.io/queue-name: lq}}\nspec: {schedulerName: tessera, containers: "
             "[{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]}\n",
             i);
    assert_true(fa_put(s, y));
    snprintf(y, sizeof y, "POST /api/v1/namespaces/t/pods/q%d/binding 201", i);
    assert_true(fa_wait(s, y, 1, 15000));
    if (i == 0 && want_writes)
      assert_true(
          fa_wait(s, "PATCH /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq/status 200", 1, 5000));
  }
  usleep(1500000); /* past the interval of 200ms and the next cycle (one a second at least) */
  if (want_writes >= 0)
    assert_int_equal(fa_count(s, "PATCH /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq/status"),
                     want_writes);
  else /* several: every change written */
    assert_true(fa_count(s, "PATCH /apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq/status") >= 2);
  if (!want_writes)
    assert_int_equal(fa_count(s, "PATCH /apis/kueue.x-k8s.io/v1beta1/namespaces/t/localqueues"), 0);
  stop(pid, SIGTERM);
  if (!logged(s, "a", want_log)) fail_msg("the log does not say: %s", want_log);
}

/* Kueue's own controller holds its Lease: Tessera leaves the queues' status to it, and says
 * so in its log. */
static void test_run_queue_status_left_to_kueue(void **state) {
  (void)state;
  queue_status_case("queueStatus: {interval: 200ms}\n", "kueue-system", 0,
                    "Kueue's controller holds its Lease kueue-system/c1f6bfd2.kueue.x-k8s.io: "
                    "ClusterQueue and LocalQueue status is left to it");
}

/* mode write: written although Kueue's Lease is held; mode off: never, with no Kueue at all;
 * kueueNamespace: the Lease is looked for there (none there: written); interval: a change
 * within it waits (one write in the run, not two). */
static void test_run_queue_status_settings(void **state) {
  (void)state;
  queue_status_case("queueStatus: {mode: write, interval: 200ms}\n", "kueue-system", -1,
                    "queueStatus: write: Tessera writes ClusterQueue and LocalQueue status");
  teardown(NULL);
  queue_status_case("queueStatus: {mode: off, interval: 200ms}\n", NULL, 0,
                    "queueStatus: off: ClusterQueue and LocalQueue status is not written");
  teardown(NULL);
  queue_status_case("queueStatus: {kueueNamespace: kueue, interval: 200ms}\n", "kueue-system", -1,
                    "no current Lease kueue/c1f6bfd2.kueue.x-k8s.io");
  teardown(NULL);
  queue_status_case("queueStatus: {mode: write, interval: 1h}\n", NULL, 1,
                    "queueStatus: write: Tessera writes ClusterQueue and LocalQueue status");
}

/* Pods of a queued gang arrive one by one, as a controller creates them: nothing is bound
 * until the gang has its minimum (a PodGroup of 3, then a Job of parallelism 2), then all of
 * it is bound at once. */
static void test_run_gang_pod_by_pod(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"));
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
         "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: "
         "[nvidia.com/gpu]\n    flavors:\n    - {name: gpu, resources: [{name: nvidia.com/gpu, "
         "nominalQuota: 8}]}\n"));
  assert_true(fa_put(s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: "
                        "lq, namespace: t}\nspec: {clusterQueue: cq}\n"));
  assert_true(fa_put(s, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                        "{name: g, namespace: t}\nspec: {minMember: 3}\n"));
  assert_true(
      fa_put(s, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: t, uid: "
                "u-j}\nspec: {parallelism: 2, template: {spec: {containers: [{name: c}]}}}\n"));
  pid = spawn(s, "a");
  for (int i = 0; i < 3; i++) {
    char y[600];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: g-%d, namespace: t, labels: "
             "{scheduling.x-k8s.io/pod-group: g, kueue.x-k8s.io/queue-name: lq}}\nspec: "
             "{schedulerName: tessera, containers: [{name: c, resources: {limits: "
             "{nvidia.com/gpu: '1'}}}]}\n",
             i);
    assert_true(fa_put(s, y));
    if (i < 2) { /* the pending reason says it waits, and nothing is bound */
      char path[128];
      snprintf(path, sizeof path, "PATCH /api/v1/namespaces/t/pods/g-%d/status 200", i);
      assert_true(fa_wait(s, path, 1, 15000));
      assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/g-"), 0);
    }
  }
  for (int i = 0; i < 3; i++) {
    char path[128];
    snprintf(path, sizeof path, "POST /api/v1/namespaces/t/pods/g-%d/binding 201", i);
    assert_true(fa_wait(s, path, 1, 10000));
  }
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: j-0, namespace: t, labels: "
                        "{kueue.x-k8s.io/queue-name: lq}, ownerReferences: [{apiVersion: batch/v1, "
                        "kind: Job, name: j, uid: u-j, controller: true}]}\nspec: {schedulerName: "
                        "tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
                        "'1'}}}]}\n"));
  assert_true(fa_wait(s, "PATCH /api/v1/namespaces/t/pods/j-0/status 200", 1, 10000));
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/j-0/binding"), 0);
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: j-1, namespace: t, labels: "
                        "{kueue.x-k8s.io/queue-name: lq}, ownerReferences: [{apiVersion: batch/v1, "
                        "kind: Job, name: j, uid: u-j, controller: true}]}\nspec: {schedulerName: "
                        "tessera, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "
                        "'1'}}}]}\n"));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/j-0/binding 201", 1, 10000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/j-1/binding 201", 1, 10000));
  stop(pid, SIGTERM);
}

/* Chaos: the leader is SIGKILLed in the middle of a gang's writes (claims reserved for all four
 * pods, two bindings landed, the other two lost on the wire), then the standby takes over. No
 * gang is left partly bound: the standby binds the rest where their claims allow, and no pod is
 * bound twice. */
static void test_run_leader_killed_mid_gang(void **state) {
  fa_server *s = srv = fa_start();
  pid_t a, b;
  char *log;
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(
      fa_put(s, "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpus}\n"
                "spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, generation: 2, "
                "resourceSliceCount: 1}, devices: [{name: accel-0}, {name: accel-1}, "
                "{name: accel-2}, {name: accel-3}]}\n"));
  assert_true(fa_put(s, "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: "
                        "{name: g, namespace: t}\nspec: {minMember: 4}\n"));
  for (int i = 0; i < 4; i++) {
    char y[800];
    snprintf(y, sizeof y,
             "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gc%d, "
             "namespace: t}\nspec: {devices: {requests: [{name: a, exactly: {deviceClassName: "
             "gpu}}]}}\n",
             i);
    assert_true(fa_put(s, y));
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Pod\nmetadata: {name: g-%d, namespace: t, labels: "
             "{scheduling.x-k8s.io/pod-group: g}}\nspec: {schedulerName: tessera, "
             "resourceClaims: [{name: a, resourceClaimName: gc%d}], containers: [{name: c, "
             "resources: {requests: {cpu: '1'}}}]}\n",
             i, i);
    assert_true(fa_put(s, y));
  }
  /* the bindings of g-2 and g-3 never get an answer while the first leader lives */
  fa_fault(s, "POST", "/api/v1/namespaces/t/pods/g-2/binding", 0, 1000, NULL);
  fa_fault(s, "POST", "/api/v1/namespaces/t/pods/g-3/binding", 0, 1000, NULL);
  a = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-0/binding 201", 1, 15000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-1/binding 201", 1, 5000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-3/binding", 1, 5000));
  b = spawn(s, "b");
  usleep(500000); /* b is up and standing by */
  stop(a, SIGKILL);
  fa_clear_faults(s);
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/g-2/binding 201"), 0);
  assert_int_equal(fa_count(s, "POST /api/v1/namespaces/t/pods/g-3/binding 201"), 0);
  /* the gang is partly bound now; the standby makes it whole */
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-2/binding 201", 1, 20000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/g-3/binding 201", 1, 5000));
  stop(b, SIGTERM);
  for (int i = 0; i < 4; i++) {
    char path[128], *o;
    snprintf(path, sizeof path, "POST /api/v1/namespaces/t/pods/g-%d/binding 201", i);
    assert_int_equal(fa_count(s, path), 1);
    snprintf(path, sizeof path, "g-%d", i);
    assert_true(bound_to(s, path, "n1"));
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/t/resourceclaims/gc%d", i);
    o = fa_get(s, path);
    assert_non_null(o);
    snprintf(path, sizeof path, "\"name\":\"g-%d\"", i); /* reserved for its own pod */
    assert_non_null(strstr(o, "\"reservedFor\""));
    assert_non_null(strstr(strstr(o, "\"reservedFor\""), path));
    assert_non_null(strstr(o, "\"allocation\""));
    free(o);
  }
  log = fa_log(s);
  assert_null(strstr(log, "/binding 409"));
  free(log);
}

/* A cohort cycle makes its ClusterQueue inactive: the queued pod's reason says so (not "waits
 * for its turn"), the problem is logged and told in a Warning Event about the ClusterQueue
 * (once, not every cycle), and /metrics counts it. */
static void test_run_queue_problems(void **state) {
  fa_server *s = srv = fa_start();
  pid_t pid;
  char *o, body[1 << 16];
  (void)state;
  assert_non_null(s);
  seed(s);
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"));
  assert_true(fa_put(s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: a}\n"
                        "spec: {parentName: b}\n"));
  assert_true(fa_put(s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: b}\n"
                        "spec: {parentName: a}\n"));
  assert_true(fa_put(
      s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq, uid: "
         "u-cq}\nspec:\n  cohort: a\n  namespaceSelector: {}\n  resourceGroups:\n  - "
         "coveredResources: [nvidia.com/gpu]\n    flavors:\n    - {name: gpu, resources: [{name: "
         "nvidia.com/gpu, nominalQuota: 8}]}\n"));
  assert_true(fa_put(s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: "
                        "lq, namespace: t}\nspec: {clusterQueue: cq}\n"));
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: q0, namespace: t, labels: "
                        "{kueue.x-k8s.io/queue-name: lq}}\nspec: {schedulerName: tessera, "
                        "containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]}\n"));
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "PATCH /api/v1/namespaces/t/pods/q0/status 200", 1, 15000));
  o = fa_get(s, "/api/v1/namespaces/t/pods/q0");
  assert_non_null(o);
  assert_non_null(strstr(o, "ClusterQueue cq is inactive (CohortCycle): spec.cohort: cohort "
                            "\\\"a\\\" is in or under a cycle"));
  free(o);
  /* its status in Kueue's words: Kueue has no reason for a cycle, so Unknown, the cycle named
   * in the message (the fake server sorts keys) */
  assert_true(wait_status(s, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq",
                          "\"observedGeneration\":", "\"reason\":\"Unknown\""));
  assert_true(fa_wait(s, "POST /apis/events.k8s.io/v1/namespaces/default/events 201", 2, 10000));
  o = fa_get(s, "/apis/events.k8s.io/v1/namespaces/default/events");
  assert_non_null(o);
  assert_non_null(strstr(o, "\"kind\":\"ClusterQueue\""));
  assert_non_null(strstr(o, "\"kind\":\"Cohort\""));
  assert_non_null(strstr(o, "\"reason\":\"InvalidConfiguration\""));
  free(o);
  {
    int port = 20000 + (int)(getpid() % 10000) * 2;
    assert_int_equal(http_get(port, "/metrics", body, sizeof body), 200);
    assert_non_null(strstr(body, "tessera_queue_problems 2\n"));
  }
  /* More cycles (a new pod): the problems are not told again. */
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: q1, namespace: t, labels: "
                        "{kueue.x-k8s.io/queue-name: lq}}\nspec: {schedulerName: tessera, "
                        "containers: [{name: c, resources: {limits: {nvidia.com/gpu: '1'}}}]}\n"));
  assert_true(fa_wait(s, "PATCH /api/v1/namespaces/t/pods/q1/status 200", 1, 15000));
  stop(pid, SIGTERM);
  {
    char log[400], line[1024];
    int told = 0;
    FILE *f;
    snprintf(log, sizeof log, "%s/a.log", fa_dir(s));
    assert_non_null(f = fopen(log, "r"));
    while (fgets(line, sizeof line, f)) {
      int y, mo, d, h, mi, sec, ms, n = 0;
      told += strstr(line, "Kueue objects: ") != NULL;
      /* every line starts with its time: RFC 3339, UTC, milliseconds */
      if (sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ tessera: %n", &y, &mo, &d, &h, &mi, &sec, &ms,
                 &n) != 7 ||
          n != 34)
        fail_msg("log line without its time: %s", line);
    }
    fclose(f);
    assert_int_equal(told, 2);
  }
  assert_int_equal(fa_count(s, "POST /apis/events.k8s.io/v1/namespaces/default/events"), 2);
}

/* Over HTTP/2: watches (long streams) and writes share one connection; reads (lists, gets) go
 * over HTTP/1.1 on a few connections of their own (libcurl 7.88's HTTP/2 stalled list pages for
 * 30 s against kube-apiserver, issue 16). */
static void test_run_http2(void **state) {
  fa_server *s = srv = fa_start_http2(true);
  pid_t pid;
  (void)state;
  assert_non_null(s);
  seed(s);
  pod(s, "p0", 1, NULL);
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p0/binding 201 h2", 1, 15000));
  pod(s, "p1", 1, NULL); /* from the watch stream */
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p1/binding 201 h2", 1, 5000));
  assert_true(fa_count(s, "GET /api/v1/pods?watch=1") >= 1);
  stop(pid, SIGTERM);
  {
    char *log = fa_log(s), *line, *save = NULL;
    for (line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      bool h2 = strlen(line) > 3 && !strcmp(line + strlen(line) - 3, " h2");
      bool read = !strncmp(line, "GET ", 4) && !strstr(line, "watch=1");
      if (read == h2) fail_msg("%s: over the wrong protocol", line);
    }
    free(log);
    assert_in_range(fa_connections(s), 2, 1 + 8); /* one HTTP/2, at most 8 for reads */
  }
}

/* The server sends GOAWAY while watches are open on its HTTP/2 connection (kube-apiserver does
 * with --goaway-chance): new requests must go over a new connection at once. With one
 * connection allowed they waited for the old one to drain (33 s in the soak test). */
static void test_run_goaway_with_watches(void **state) {
  fa_server *s = srv = fa_start_http2(true);
  pid_t pid;
  (void)state;
  assert_non_null(s);
  seed(s);
  pod(s, "p0", 1, NULL);
  pid = spawn(s, "a");
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p0/binding 201 h2", 1, 15000));
  usleep(300000);
  fa_goaway(s, 1); /* the connection's next request is its last */
  pod(s, "p1", 1, NULL);
  pod(s, "p2", 1, NULL);
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p1/binding 201", 1, 10000));
  assert_true(fa_wait(s, "POST /api/v1/namespaces/t/pods/p2/binding 201", 1, 5000));
  stop(pid, SIGTERM);
}

/* --shadow writes nothing (no Binding for a pod it would place, no condition, no Event, no
 * Lease), compares the other scheduler's pods, and exports and writes what it found; its flags
 * without --shadow, and a report directory it cannot write, are usage errors. */
static void test_run_shadow(void **state) {
  fa_server *s = srv = fa_start();
  int port = 20000 + (int)(getpid() % 10000) * 2;
  char cfg[400], dir[400], path[500], body[1 << 16];
  pid_t pid;
  FILE *f;
  (void)state;
  assert_non_null(s);
  seed(s); /* n1: 8 GPUs */
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: f-run, namespace: t}\n"
                        "spec: {schedulerName: fifo, nodeName: n1, containers: [{name: c, "
                        "resources: {limits: {nvidia.com/gpu: '6'}}}]}\n"));
  assert_true(fa_put(s, "apiVersion: v1\nkind: Pod\nmetadata: {name: f-wait, namespace: t}\n"
                        "spec: {schedulerName: fifo, containers: [{name: c, resources: {limits: "
                        "{nvidia.com/gpu: '4'}}}]}\n"));
  pod(s, "mine", 1, NULL); /* Tessera's own: a scheduler would bind it; a shadow must not */
  write_config(s, port, cfg, sizeof cfg);
  snprintf(dir, sizeof dir, "%s/shadow", fa_dir(s));
  assert_int_equal(mkdir(dir, 0700), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char log[400];
    snprintf(log, sizeof log, "%s/a.log", fa_dir(s));
    if (!freopen(log, "w", stderr)) _exit(127);
    execl(tessera(), tessera(), "run", "--kubeconfig", fa_kubeconfig(s), "--config", cfg,
          "--shadow", "--shadow-scheduler-name", "fifo", "--shadow-report", dir, (char *)NULL);
    _exit(127);
  }
  if (nkids < 4) kids[nkids++] = pid;
  for (int i = 0; i < 100; i++) {
    if (http_get(port, "/metrics", body, sizeof body) == 200 &&
        strstr(body, "tessera_shadow_pods{placement=\"actual\",state=\"bound\"} 1"))
      break;
    usleep(100000);
  }
  assert_non_null(strstr(body, "tessera_shadow_pods{placement=\"actual\",state=\"pending\"} 1"));
  assert_non_null(strstr(body, "tessera_shadow_gpus_free{placement=\"actual\"} 2"));
  assert_non_null(strstr(body, "tessera_shadow_gpus_stranded{placement=\"actual\"} 2"));
  assert_non_null(strstr(body, "tessera_leader 0"));
  snprintf(path, sizeof path, "%s/shadow.json", dir);
  assert_non_null(f = fopen(path, "r"));
  fclose(f);
  snprintf(path, sizeof path, "%s/shadow.html", dir);
  assert_non_null(f = fopen(path, "r"));
  fclose(f);
  usleep(500000);
  assert_int_equal(fa_count(s, "POST "), 0);
  assert_int_equal(fa_count(s, "PATCH "), 0);
  assert_int_equal(fa_count(s, "PUT "), 0);
  assert_int_equal(stop(pid, SIGTERM), 0);
  assert_true(logged(s, "a", "shadow of fifo: 2 pods, 1 placed"));
  {
    const char *alone[] = {"run", "--shadow-report", dir, NULL};
    const char *unwritable[] = {"run",      "--kubeconfig",    fa_kubeconfig(s),
                                "--shadow", "--shadow-report", "/nonexistent/tessera",
                                NULL};
    assert_int_equal(run_tessera(alone), 2);
    assert_int_equal(run_tessera(unwritable), 2);
  }
}

/* `tessera run` on s with the configuration cfg, its log in id.log of s's directory. */
static pid_t run_logged(const fa_server *s, const char *id, const char *cfg) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char log[400];
    snprintf(log, sizeof log, "%s/%s.log", fa_dir(s), id);
    if (!freopen(log, "w", stderr)) _exit(127);
    execl(tessera(), tessera(), "run", "--kubeconfig", fa_kubeconfig(s), "--config", cfg,
          (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* metricsSecure: /metrics on metricsAddress over HTTPS for the tokens the API server allows
 * (the fake one's TokenReviews and SubjectAccessReviews), and no longer on healthAddress, whose
 * probes stay plain HTTP; every review is a request the chart's RBAC allows. A certificate
 * directory without its files stops the start, naming the file. */
static void test_run_secure_metrics(void **state) {
  fa_server *s = srv = fa_start();
  int port = 20000 + (int)(getpid() % 10000) * 2;
  char cfg[400], body[1 << 16];
  pid_t pid;
  FILE *f;
  (void)state;
  assert_non_null(s);
  seed(s);
  fa_add_user(s, "tok-prom", "system:serviceaccount:monitoring:prometheus", "/metrics");
  fa_add_user(s, "tok-bob", "bob", NULL);
  snprintf(cfg, sizeof cfg, "%s/tessera.yaml", fa_dir(s));
  assert_non_null(f = fopen(cfg, "w"));
  fprintf(f,
          "leaderElection: {enable: false}\nhealthAddress: 127.0.0.1:%d\n"
          "metricsAddress: 127.0.0.1:%d\nmetricsSecure: true\n",
          port, port + 1);
  fclose(f);
  pid = run_logged(s, "a", cfg);
  if (nkids < 4) kids[nkids++] = pid;
  for (int i = 0; i < 100 && http_get(port, "/readyz", body, sizeof body) != 200; i++)
    usleep(100000);
  assert_int_equal(http_get(port, "/healthz", body, sizeof body), 200);
  assert_int_equal(http_get(port, "/metrics", body, sizeof body), 404); /* not around the check */
  assert_int_equal(https_get(port + 1, "/healthz", NULL, body, sizeof body), 200);
  assert_int_equal(https_get(port + 1, "/metrics", NULL, body, sizeof body), 401);
  assert_int_equal(https_get(port + 1, "/metrics", "tok-nope", body, sizeof body), 401);
  assert_int_equal(https_get(port + 1, "/metrics", "tok-bob", body, sizeof body), 403);
  assert_string_equal(body, "Authorization denied for user bob\n");
  assert_int_equal(https_get(port + 1, "/metrics", "tok-prom", body, sizeof body), 200);
  assert_non_null(
      strstr(body, "\ntessera_api_requests_total{verb=\"create\",resource=\"tokenreviews\""));
  assert_non_null(strstr(body, "resource=\"subjectaccessreviews\""));
  assert_true(requests_allowed(body) > 0);
  assert_int_equal(http_get(port + 1, "/metrics", body, sizeof body), 0); /* no plain HTTP */
  assert_int_equal(stop(pid, SIGTERM), 0);
  assert_true(logged(s, "a", "/metrics on 127.0.0.1:"));

  assert_non_null(f = fopen(cfg, "a"));
  fprintf(f, "metricsCertDir: %s/no-such-dir\n", fa_dir(s));
  fclose(f);
  pid = run_logged(s, "b", cfg);
  {
    int status = 0;
    char want[500];
    for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) != pid; i++) usleep(50000);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    snprintf(want, sizeof want, "metricsCertDir: %s/no-such-dir/tls.crt: No such file", fa_dir(s));
    assert_true(logged(s, "b", want));
  }
}

static void test_run_bad_kubeconfig(void **state) {
  char path[] = "/tmp/tessera-kc-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  pid_t pid;
  int status, out[2];
  char buf[2048] = "";
  ssize_t n;
  (void)state;
  fputs("apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster: "
        "{server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user:\n    exec: {command: "
        "tessera-no-such-plugin, apiVersion: client.authentication.k8s.io/v1, interactiveMode: "
        "Never, installHint: 'see the EKS guide'}\ncontexts:\n- name: c\n  context: {cluster: k, "
        "user: u}\n",
        f);
  fclose(f);
  assert_int_equal(pipe(out), 0);
  if ((pid = fork()) == 0) {
    dup2(out[1], 2);
    execl(tessera(), tessera(), "run", "--kubeconfig", path, (char *)NULL);
    _exit(127);
  }
  close(out[1]);
  for (size_t got = 0;; got += (size_t)n) { /* every line until it exits (the log comes first) */
    n = read(out[0], buf + got, sizeof buf - 1 - got);
    if (n <= 0) {
      buf[got] = '\0';
      break;
    }
  }
  close(out[0]);
  waitpid(pid, &status, 0);
  unlink(path);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
  assert_non_null(strstr(buf, "users[0].user.exec: the plugin tessera-no-such-plugin could not be "
                              "run (not found?): see the EKS guide"));
  assert_non_null(strstr(buf, path));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_run_schedules, teardown),
      cmocka_unit_test_teardown(test_run_shutdown_readyz, teardown),
      cmocka_unit_test_teardown(test_run_failover, teardown),
      cmocka_unit_test_teardown(test_run_failover_metrics, teardown),
      cmocka_unit_test_teardown(test_run_leader_killed_mid_gang, teardown),
      cmocka_unit_test_teardown(test_run_faults, teardown),
      cmocka_unit_test_teardown(test_run_conflict_and_token, teardown),
      cmocka_unit_test_teardown(test_run_http2, teardown),
      cmocka_unit_test_teardown(test_run_goaway_with_watches, teardown),
      cmocka_unit_test_teardown(test_run_preemption_and_gang, teardown),
      cmocka_unit_test_teardown(test_run_queue_status_left_to_kueue, teardown),
      cmocka_unit_test_teardown(test_run_queue_status_settings, teardown),
      cmocka_unit_test_teardown(test_run_snapshot_replay, teardown),
      cmocka_unit_test_teardown(test_replay_run_recorded_priority, teardown),
      cmocka_unit_test_teardown(test_run_gated_and_reasons, teardown),
      cmocka_unit_test_teardown(test_run_gang_pod_by_pod, teardown),
      cmocka_unit_test(test_run_bad_kubeconfig),
      cmocka_unit_test(test_run_shadow),
      cmocka_unit_test_teardown(test_run_secure_metrics, teardown),
      cmocka_unit_test_teardown(test_run_queue_problems, teardown),
  };
  signal(SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
