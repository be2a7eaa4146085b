/* test_secure: /metrics over HTTPS for the tokens the API server allows, as controller-runtime's
 * secure metrics serving (Kueue) and kube-scheduler's secure port answer: the health server
 * with TLS (kubeclient/serve_tls.c) and the reviewer (kubeclient/review.c) against the fake API
 * server's TokenReviews and SubjectAccessReviews, driven by a TLS client in this thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "kubeclient/kc.h"
#include "tests/support/proc.h"
#include "model/wire.h"
#include "tests/support/fakeapi.h"

/* The health server is part of the binary, not of the library: test it as a unit. */
#include "cmd/health.c"

#define TR        "POST /apis/authentication.k8s.io/v1/tokenreviews"
#define SAR       "POST /apis/authorization.k8s.io/v1/subjectaccessreviews"
#define PROM_USER "system:serviceaccount:monitoring:prometheus"

static const kc_review_codec codec = {model_token_review_json, model_token_review_read,
                                      model_access_review_json, model_access_review_read};

typedef struct env {
  fa_server *api;
  kc_auth auth;
  uv_loop_t loop;
  kc_client *client;
  kc_reviewer *reviewer;
  kc_tls_server *tls;
  health_server *hs;
  int port;
} env;

static void metrics_cb(void *ud, ts_buf *out) {
  (void)ud;
  ts_buf_printf(out, "tessera_up 1\n");
}

/* The fake API server with two users (prometheus may GET /metrics, bob nothing), a client and
 * a reviewer (o NULL: controller-runtime's times) on a loop, and an HTTPS health server with
 * the certificate of cert_dir (NULL: self-signed). */
static void env_start(env *e, const kc_reviewer_opts *o, const char *cert_dir) {
  ts_err err;
  health_opts ho = {"127.0.0.1", 0, NULL, metrics_cb, e, NULL, NULL};
  memset(e, 0, sizeof *e);
  assert_non_null(e->api = fa_start());
  fa_add_user(e->api, "tok-prom", PROM_USER, "/metrics");
  fa_add_user(e->api, "tok-bob", "bob", NULL);
  if (kc_auth_load(fa_kubeconfig(e->api), NULL, &e->auth, &err) != TS_OK) fail_msg("%s", err.text);
  assert_int_equal(uv_loop_init(&e->loop), 0);
  assert_non_null(e->client = kc_client_new(&e->loop, &e->auth, &err));
  assert_non_null(e->reviewer = kc_reviewer_new(e->client, &codec, o));
  if (!(e->tls = kc_tls_server_new(cert_dir, "tessera-test", &err))) fail_msg("%s", err.text);
  ho.port = e->port = proc_free_port();
  ho.tls = e->tls, ho.reviewer = e->reviewer;
  assert_non_null(e->hs = health_server_start(&e->loop, &ho, &err));
}

static void env_stop(env *e) {
  health_server_stop(e->hs);
  kc_reviewer_free(e->reviewer);
  kc_client_free(e->client);
  for (int i = 0; i < 200 && uv_run(&e->loop, UV_RUN_NOWAIT); i++) usleep(5000);
  uv_run(&e->loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&e->loop), 0);
  kc_tls_server_free(e->tls);
  kc_auth_free(&e->auth);
  fa_stop(e->api);
}

static int connect_nb(int port) {
  int fd = proc_connect_from(1, port);
  assert_true(fd >= 0);
  return fd;
}

typedef struct reply {
  int status;      /* 0: no answer */
  char head[1024]; /* status line and headers */
  char body[1024]; /* body */
  char cn[256];    /* the server certificate's common name */
} reply;

/* GET path over TLS with extra header lines (NULL: none), pumping the loop until the server
 * closes; ca: a PEM file to verify the server against (NULL: no verification). Gives up
 * after about 5 s. */
static void tls_get(env *e, const char *path, const char *headers, const char *ca, reply *r) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  SSL *ssl;
  int fd = connect_nb(e->port);
  char req[2048], resp[4096];
  size_t n = 0;
  bool sent = false;
  memset(r, 0, sizeof *r);
  if (ca) {
    assert_int_equal(SSL_CTX_load_verify_locations(ctx, ca, NULL), 1);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
  }
  ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  SSL_set_connect_state(ssl);
  if (ca) SSL_set1_host(ssl, "127.0.0.1");
  snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path,
           headers ? headers : "");
  for (int i = 0; i < 2500; i++) {
    int k;
    uv_run(&e->loop, UV_RUN_NOWAIT);
    if (!sent) {
      if ((k = SSL_connect(ssl)) == 1) {
        X509 *cert = SSL_get1_peer_certificate(ssl);
        if (cert)
          X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, r->cn,
                                    sizeof r->cn);
        X509_free(cert);
        assert_int_equal(SSL_write(ssl, req, (int)strlen(req)), (int)strlen(req));
        sent = true;
      } else if (SSL_get_error(ssl, k) != SSL_ERROR_WANT_READ &&
                 SSL_get_error(ssl, k) != SSL_ERROR_WANT_WRITE) {
        break;
      }
    } else if ((k = SSL_read(ssl, resp + n, (int)(sizeof resp - 1 - n))) > 0) {
      n += (size_t)k;
    } else if (SSL_get_error(ssl, k) != SSL_ERROR_WANT_READ) {
      break; /* close_notify or closed */
    }
    usleep(2000);
  }
  ERR_clear_error();
  resp[n] = '\0';
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  close(fd);
  sscanf(resp, "HTTP/1.1 %d", &r->status);
  if (strstr(resp, "\r\n\r\n")) {
    snprintf(r->head, sizeof r->head, "%.*s", (int)(strstr(resp, "\r\n\r\n") - resp), resp);
    snprintf(r->body, sizeof r->body, "%s", strstr(resp, "\r\n\r\n") + 4);
  }
}

/* Runs the loop about ms milliseconds. */
static void pump(env *e, int ms) {
  for (int i = 0; i < ms / 2; i++) {
    uv_run(&e->loop, UV_RUN_NOWAIT);
    usleep(2000);
  }
}

/* Who may read /metrics: nobody without a token (401 with a Bearer challenge), nobody with a
 * token the API server does not know (401), a known user without the RBAC rule gets 403 naming
 * them, the holder of the metrics-reader rule the metrics; the probes' paths stay open. Answers
 * are kept: the same tokens again send no review. */
static void test_metrics_reviewed(void **state) {
  env e;
  reply r;
  (void)state;
  env_start(&e, NULL, NULL);
  tls_get(&e, "/healthz", NULL, NULL, &r);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.cn, "tessera-test");
  tls_get(&e, "/readyz", NULL, NULL, &r);
  assert_int_equal(r.status, 200);
  assert_int_equal(kc_reviewer_sent(e.reviewer), 0);

  tls_get(&e, "/metrics", NULL, NULL, &r);
  assert_int_equal(r.status, 401);
  assert_string_equal(r.body, "Unauthorized\n");
  assert_non_null(strstr(r.head, "WWW-Authenticate: Bearer"));
  tls_get(&e, "/metrics", "Authorization: Basic dXNlcjpwYXNz\r\n", NULL, &r);
  assert_int_equal(r.status, 401);
  assert_int_equal(kc_reviewer_sent(e.reviewer), 0); /* nothing to review */

  tls_get(&e, "/metrics", "Authorization: Bearer nope\r\n", NULL, &r);
  assert_int_equal(r.status, 401);
  assert_int_equal(fa_count(e.api, TR), 1);
  tls_get(&e, "/metrics", "Authorization: Bearer nope\r\n", NULL, &r);
  assert_int_equal(r.status, 401);
  assert_int_equal(fa_count(e.api, TR), 1); /* a refusal is kept too */

  tls_get(&e, "/metrics", "Authorization: Bearer tok-bob\r\n", NULL, &r);
  assert_int_equal(r.status, 403);
  assert_string_equal(r.body, "Authorization denied for user bob\n");
  assert_int_equal(fa_count(e.api, SAR), 1);

  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "tessera_up 1\n");
  tls_get(&e, "/metrics", "authorization:   bearer tok-prom  \r\n", NULL, &r);
  assert_int_equal(r.status, 200);
  assert_int_equal(fa_count(e.api, TR), 3); /* nope, bob, prometheus: each once */
  assert_int_equal(fa_count(e.api, SAR), 2);
  assert_int_equal(kc_reviewer_sent(e.reviewer), 5);

  { /* plain HTTP on the TLS port: the connection ends, the server goes on */
    int fd = connect_nb(e.port);
    char buf[256];
    ssize_t k = 0;
    (void)!write(fd, "GET /metrics HTTP/1.1\r\n\r\n", 25);
    for (int i = 0; i < 500; i++) {
      uv_run(&e.loop, UV_RUN_NOWAIT);
      if ((k = read(fd, buf, sizeof buf)) == 0 || (k < 0 && errno != EAGAIN)) break;
      usleep(2000);
    }
    assert_true(k <= 0 || memcmp(buf, "HTTP/", 5)); /* never a plaintext answer */
    close(fd);
    tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
    assert_int_equal(r.status, 200);
  }
  env_stop(&e);
}

/* Answers expire (an allow after allow_ttl, a token after token_ttl) and are asked again; a
 * review that fails answers 500 and is not kept; a check still waiting when the reviewer goes
 * away is answered 503. */
static void test_metrics_review_expiry_and_failures(void **state) {
  env e;
  reply r;
  kc_reviewer_opts o;
  (void)state;
  kc_reviewer_opts_default(&o);
  o.token_ttl_ms = 150, o.allow_ttl_ms = 150;
  env_start(&e, &o, NULL);
  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(r.status, 200);
  assert_int_equal(kc_reviewer_sent(e.reviewer), 2);
  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(kc_reviewer_sent(e.reviewer), 2);
  pump(&e, 200);
  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(r.status, 200);
  assert_int_equal(kc_reviewer_sent(e.reviewer), 4);

  pump(&e, 200);
  fa_fault(e.api, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", 500, 1, "etcd down");
  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(r.status, 500);
  assert_string_equal(r.body, "Authentication failed\n");
  fa_fault(e.api, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", 403, 1,
           "forbidden");
  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(r.status, 500);
  assert_string_equal(r.body, "Authorization for user " PROM_USER " failed\n");
  tls_get(&e, "/metrics", "Authorization: Bearer tok-prom\r\n", NULL, &r);
  assert_int_equal(r.status, 200); /* neither failure was kept */

  { /* a review under way when the reviewer is freed: 503 */
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL *ssl = SSL_new(ctx);
    int fd = connect_nb(e.port), k = 0;
    char buf[1024] = "";
    const char *req = "GET /metrics HTTP/1.1\r\nAuthorization: Bearer tok-bob\r\n\r\n";
    size_t n = 0;
    fa_delay(e.api, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", 2000, 1);
    SSL_set_fd(ssl, fd);
    SSL_set_connect_state(ssl);
    for (int i = 0; i < 1000 && (k = SSL_connect(ssl)) != 1; i++) {
      uv_run(&e.loop, UV_RUN_NOWAIT);
      usleep(2000);
    }
    assert_int_equal(k, 1);
    SSL_write(ssl, req, (int)strlen(req));
    for (int i = 0; i < 100 && !fa_count(e.api, TR " "); i++) pump(&e, 10);
    pump(&e, 50);
    health_server_stop(e.hs), e.hs = NULL;
    kc_reviewer_free(e.reviewer), e.reviewer = NULL;
    for (int i = 0; i < 500; i++) {
      uv_run(&e.loop, UV_RUN_NOWAIT);
      if ((k = SSL_read(ssl, buf + n, (int)(sizeof buf - 1 - n))) > 0)
        n += (size_t)k;
      else if (SSL_get_error(ssl, k) != SSL_ERROR_WANT_READ)
        break;
      usleep(2000);
    }
    buf[n] = '\0';
    assert_non_null(strstr(buf, "HTTP/1.1 503 "));
    assert_non_null(strstr(buf, "shutting down"));
    ERR_clear_error();
    SSL_free(ssl), SSL_CTX_free(ctx), close(fd);
  }
  env_stop(&e);
}

/* A self-signed certificate and key for cn (IP 127.0.0.1) into dir/tls.crt, dir/tls.key. */
static void write_cert(const char *dir, const char *cn) {
  EVP_PKEY *k = EVP_EC_gen("P-256");
  X509 *x = X509_new();
  X509V3_CTX v3;
  X509_EXTENSION *ext;
  char path[600], tmp[620];
  FILE *f;
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
  X509_gmtime_adj(X509_getm_notBefore(x), -60);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, k);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             (const unsigned char *)cn, -1, -1, 0);
  X509_set_issuer_name(x, X509_get_subject_name(x));
  X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
  ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "IP:127.0.0.1");
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
  X509_sign(x, k, EVP_sha256());
  /* written aside and renamed, as the kubelet updates a mounted Secret */
  snprintf(path, sizeof path, "%s/tls.key", dir);
  snprintf(tmp, sizeof tmp, "%s.new", path);
  assert_non_null(f = fopen(tmp, "w"));
  PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
  fclose(f);
  assert_int_equal(rename(tmp, path), 0);
  snprintf(path, sizeof path, "%s/tls.crt", dir);
  snprintf(tmp, sizeof tmp, "%s.new", path);
  assert_non_null(f = fopen(tmp, "w"));
  PEM_write_X509(f, x);
  fclose(f);
  assert_int_equal(rename(tmp, path), 0);
  X509_free(x), EVP_PKEY_free(k);
}

/* A certificate directory: served and verifiable by a client trusting it; replaced in place
 * (cert-manager renewing it), the new one is served within the reload interval without a
 * restart; a directory without the files is refused naming the file. */
static void test_metrics_cert_dir(void **state) {
  env e;
  reply r;
  char dir[] = "/tmp/tessera-cert-XXXXXX", ca[600], err_text[700];
  kc_tls_server *bad;
  ts_err err;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(ca, sizeof ca, "%s/tls.crt", dir);
  ts_err_clear(&err);
  assert_null(bad = kc_tls_server_new(dir, "x", &err));
  snprintf(err_text, sizeof err_text, "%s/tls.crt: No such file or directory", dir);
  assert_string_equal(err.text, err_text);
  write_cert(dir, "first");
  env_start(&e, NULL, dir);
  tls_get(&e, "/healthz", NULL, ca, &r); /* verified against the file */
  assert_int_equal(r.status, 200);
  assert_string_equal(r.cn, "first");

  sleep(1); /* a later modification time */
  write_cert(dir, "second");
  pump(&e, 10500);
  tls_get(&e, "/healthz", NULL, NULL, &r);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.cn, "second");
  assert_int_equal(kc_tls_server_reloads(e.tls), 1);
  { /* a half-written pair keeps the one that works */
    FILE *f;
    char path[600];
    snprintf(path, sizeof path, "%s/tls.crt", dir);
    assert_non_null(f = fopen(path, "w"));
    fputs("-----BEGIN CERTIFICATE-----\nnot a certificate\n", f);
    fclose(f);
    pump(&e, 10500);
    tls_get(&e, "/healthz", NULL, NULL, &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.cn, "second");
    assert_int_equal(kc_tls_server_reloads(e.tls), 1);
  }
  env_stop(&e);
  {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
  }
}

/* The Authorization header as kube-apiserver's bearer authenticator reads it. */
static void test_bearer_parser(void **state) {
  char tok[64];
  const char *ok = "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc.def\r\n\r\n";
  const char *lower = "GET / HTTP/1.1\r\nauthorization:bearer   xyz \r\n\r\n";
  const char *basic = "GET / HTTP/1.1\r\nAuthorization: Basic abc\r\n\r\n";
  const char *none = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  const char *empty = "GET / HTTP/1.1\r\nAuthorization: Bearer \r\n\r\n";
  const char *cut = "GET / HTTP/1.1\r\nAuthorization: Bearer abc";
  const char nul[] = "GET / HTTP/1.1\r\nAuthorization: Bearer a\0b\r\n\r\n"; /* fuzz found */
  (void)state;
  assert_int_equal(health_parse_bearer(ok, strlen(ok), tok, sizeof tok), 0);
  assert_string_equal(tok, "abc.def");
  assert_int_equal(health_parse_bearer(lower, strlen(lower), tok, sizeof tok), 0);
  assert_string_equal(tok, "xyz");
  assert_int_equal(health_parse_bearer(basic, strlen(basic), tok, sizeof tok), -1);
  assert_string_equal(tok, "");
  assert_int_equal(health_parse_bearer(none, strlen(none), tok, sizeof tok), -1);
  assert_int_equal(health_parse_bearer(empty, strlen(empty), tok, sizeof tok), -1);
  assert_int_equal(health_parse_bearer(cut, strlen(cut), tok, sizeof tok), -1);
  assert_int_equal(health_parse_bearer(ok, strlen(ok), tok, 4), -1); /* does not fit */
  assert_int_equal(health_parse_bearer(nul, sizeof nul - 1, tok, sizeof tok), -1);
  assert_string_equal(tok, "");
}

/* The reviews' bodies and answers as the API server writes them, and answers that are not. */
static void test_review_wire(void **state) {
  json_t *tr = model_token_review_json("secret"), *user = NULL, *sar, *ans;
  const char *name = NULL;
  bool ok = true;
  char reason[128];
  ts_err err;
  (void)state;
  assert_string_equal(json_string_value(json_object_get(tr, "kind")), "TokenReview");
  assert_string_equal(json_string_value(json_object_get(json_object_get(tr, "spec"), "token")),
                      "secret");
  json_decref(tr);
  /* kube-apiserver's answer for an unknown token: authenticated left out, an error */
  ans = json_loads("{\"status\":{\"user\":{},\"error\":\"invalid bearer token\"}}", 0, NULL);
  assert_int_equal(model_token_review_read(ans, &ok, &user, &name, &err), TS_OK);
  assert_false(ok);
  assert_null(user);
  json_decref(ans);
  ans = json_loads("{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"u\",\"uid\":"
                   "\"1\",\"groups\":[\"g1\",\"system:authenticated\"],\"extra\":{\"authentica"
                   "tion.kubernetes.io/pod-name\":[\"p\"]}}}}",
                   0, NULL);
  assert_int_equal(model_token_review_read(ans, &ok, &user, &name, &err), TS_OK);
  assert_true(ok);
  assert_string_equal(name, "u");
  json_decref(ans);
  sar = model_access_review_json(user, "/metrics", "get");
  {
    json_t *spec = json_object_get(sar, "spec");
    char *text = json_dumps(spec, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(
        text, "{\"extra\":{\"authentication.kubernetes.io/pod-name\":[\"p\"]},\"groups\":[\"g1\","
              "\"system:authenticated\"],\"nonResourceAttributes\":{\"path\":\"/metrics\",\"verb\":"
              "\"get\"},\"uid\":\"1\",\"user\":\"u\"}");
    free(text);
  }
  json_decref(sar);
  /* a path naming one object asks for that object (explain: who may read the pod); a list, a
   * path too deep or with an empty part, or any other path stays a non-resource path */
  sar = model_access_review_json(user, "/api/v1/namespaces/team-a/pods/train-0", "get");
  {
    char *text = json_dumps(json_object_get(json_object_get(sar, "spec"), "resourceAttributes"),
                            JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(text, "{\"group\":\"\",\"name\":\"train-0\",\"namespace\":\"team-a\","
                              "\"resource\":\"pods\",\"verb\":\"get\"}");
    free(text);
    assert_null(json_object_get(json_object_get(sar, "spec"), "nonResourceAttributes"));
  }
  json_decref(sar);
  { /* a group's object and subresource, cluster-scoped and in a namespace */
    static const char *const paths[][2] = {
        {"/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads",
         "{\"group\":\"visibility.kueue.x-k8s.io\",\"name\":\"cq\",\"resource\":"
         "\"clusterqueues\",\"subresource\":\"pendingworkloads\",\"verb\":\"get\"}"},
        {"/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/team-a/localqueues/lq/"
         "pendingworkloads",
         "{\"group\":\"visibility.kueue.x-k8s.io\",\"name\":\"lq\",\"namespace\":\"team-a\","
         "\"resource\":\"localqueues\",\"subresource\":\"pendingworkloads\",\"verb\":\"get\"}"}};
    for (size_t i = 0; i < 2; i++) {
      char *text;
      sar = model_access_review_json(user, paths[i][0], "get");
      text = json_dumps(json_object_get(json_object_get(sar, "spec"), "resourceAttributes"),
                        JSON_SORT_KEYS | JSON_COMPACT);
      assert_string_equal(text, paths[i][1]);
      free(text);
      json_decref(sar);
    }
  }
  {
    static const char *const not_one[] = {
        "/api/v1/namespaces/team-a/pods", "/api/v1/namespaces/team-a/pods/p/log/x",
        "/api/v1/namespaces//pods/p", "/apis/g/v1", "/explain/team-a/p"};
    for (size_t i = 0; i < sizeof not_one / sizeof *not_one; i++) {
      sar = model_access_review_json(user, not_one[i], "get");
      assert_string_equal(
          json_string_value(json_object_get(
              json_object_get(json_object_get(sar, "spec"), "nonResourceAttributes"), "path")),
          not_one[i]);
      json_decref(sar);
    }
  }
  json_decref(user);
  /* answers that are not reviews name the field */
  ans = json_loads("{\"status\":{\"authenticated\":true,\"user\":{\"groups\":[1]}}}", 0, NULL);
  assert_int_equal(model_token_review_read(ans, &ok, &user, &name, &err), TS_EINVAL);
  assert_string_equal(err.text, "TokenReview: status.user.username: missing");
  json_decref(ans);
  ans = json_loads("{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"u\",\"groups\":"
                   "[1]}}}",
                   0, NULL);
  assert_int_equal(model_token_review_read(ans, &ok, &user, &name, &err), TS_EINVAL);
  assert_string_equal(err.text, "TokenReview: status.user.groups: not a list of strings");
  json_decref(ans);
  ans = json_loads("{\"kind\":\"Status\"}", 0, NULL);
  assert_int_equal(model_access_review_read(ans, &ok, reason, sizeof reason, &err), TS_EINVAL);
  assert_string_equal(err.text, "SubjectAccessReview: status: not an object");
  json_decref(ans);
  ans = json_loads("{\"status\":{\"allowed\":true,\"denied\":true,\"reason\":\"r\"}}", 0, NULL);
  assert_int_equal(model_access_review_read(ans, &ok, reason, sizeof reason, &err), TS_OK);
  assert_false(ok); /* a deny wins */
  assert_string_equal(reason, "r");
  json_decref(ans);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bearer_parser),
      cmocka_unit_test(test_review_wire),
      cmocka_unit_test(test_metrics_reviewed),
      cmocka_unit_test(test_metrics_review_expiry_and_failures),
      cmocka_unit_test(test_metrics_cert_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
