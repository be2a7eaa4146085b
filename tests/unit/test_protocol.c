/* Protocol tests as data: each file of tests/data/kc/ names one call of kubeclient's writer
 * (with the bodies model/wire.h encodes, as `tessera run` sends them), the exact requests it
 * must send (method, path with query, JSON body) and the reply to each,
 * mostly a response recorded from a real kube-apiserver v1.34 (tests/data/k8s/exchanges),
 * then the result the call must end with. They run against kubeclient alone: a scripted
 * HTTP/1.1 server on loopback answers in order and records every difference.
 *
 * Case file:
 *   {"description": "...",
 *    "current": OBJECT,                        optional: the claim as the server holds it, the
 *                                              answer to the read a claim write starts with
 *    "call": {"op": "bind" | "evict" | "unschedulable" | "reserve" | "unreserve" | "event" |
 *                   "informer",
 *             "ns", "name", "uid", "node", "type", "reason", "message", "pod", "pod_uid",
 *             "allocation": OBJECT | "exchange:NNN-name:request.body.status.allocation",
 *             "resources": [{"resource", "group", "kind", "versions"}]  (informer)},
 *    "exchanges": [{"request": {"method", "path", "body"}, "reply": REPLY}, ...],
 *    "more": true,                             optional: later requests are not an error
 *    "result": "OK" | "ECONFLICT" | ...,       a write's result
 *    "events": N}                              informer: objects delivered (bookmarks are not)
 * REPLY is {"status": N, "body": OBJECT} or {"status": N, "stream": [EVENT, ...]} (a watch:
 * one JSON line per event) or "exchange:NNN-name" (that recording's response).
 * Any value may be "exchange:NNN-name:dotted.path" (taken from a recording). In expected
 * bodies, the string "<any>" matches any value and "<time>" an RFC 3339 timestamp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "input/input.h"
#include "kubeclient/kc.h"
#include "model/wire.h"

#define CASES     "tests/data/kc"
#define RECORDED  "tests/data/k8s/exchanges"
#define MAX_STEPS 16
#define REQ_MAX   (1 << 20)

/* ---- recordings and references ---------------------------------------------------------- */

/* The value at "exchange:NAME[:dotted.path]" (new reference), or a reference to v itself. */
static json_t *resolve(json_t *v) {
  const char *s = json_string_value(v), *colon;
  char file[512], name[256];
  json_t *rec, *at;
  json_error_t je;
  if (!s || strncmp(s, "exchange:", 9)) return json_incref(v);
  s += 9;
  colon = strchr(s, ':');
  snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
  snprintf(file, sizeof file, RECORDED "/%s.json", name);
  if (!(rec = json_load_file(file, 0, &je))) fail_msg("%s: %s", file, je.text);
  at = colon ? rec : json_object_get(rec, "response");
  for (const char *p = colon ? colon + 1 : ""; at && *p;) {
    char key[128];
    size_t n = strcspn(p, ".");
    snprintf(key, sizeof key, "%.*s", (int)n, p);
    at = json_object_get(at, key);
    p += n + (p[n] == '.');
  }
  if (!at) fail_msg("%s: no %s", file, colon ? colon + 1 : "response");
  json_incref(at);
  json_decref(rec);
  return at;
}

static bool is_time(const char *s) {
  int64_t ns;
  return s && ts_time_parse(s, &ns) == TS_OK;
}

/* want (with "<any>" and "<time>") against got. */
static bool matches(json_t *want, json_t *got) {
  const char *w = json_string_value(want), *k;
  json_t *v;
  size_t i;
  if (w && !strcmp(w, "<any>")) return got != NULL;
  if (w && !strcmp(w, "<time>")) return is_time(json_string_value(got));
  if (json_is_object(want)) {
    if (!json_is_object(got) || json_object_size(want) != json_object_size(got)) return false;
    json_object_foreach(want, k, v)
      if (!matches(v, json_object_get(got, k))) return false;
    return true;
  }
  if (json_is_array(want)) {
    if (!json_is_array(got) || json_array_size(want) != json_array_size(got)) return false;
    json_array_foreach(want, i, v)
      if (!matches(v, json_array_get(got, i))) return false;
    return true;
  }
  return json_equal(want, got);
}

/* ---- the scripted server ------------------------------------------------------------------ */

typedef struct step {
  char method[16], path[1024]; /* expected */
  json_t *body;                /* expected body, or NULL for none */
  long status;                 /* reply */
  char *reply;                 /* reply body (owned) */
} step;

typedef struct script {
  int fd;                /* listening socket */
  int port;              /* its port */
  step steps[MAX_STEPS]; /* in order */
  int nsteps, done;      /* expected, answered */
  bool more;             /* requests past the script are answered 500, not complained of */
  char errors[4096];     /* differences, one per line */
  volatile bool stop;    /* the test is over */
} script;

static void complain(script *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void complain(script *s, const char *fmt, ...) {
  size_t n = strlen(s->errors);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->errors + n, sizeof s->errors - n, fmt, ap);
  va_end(ap);
  n = strlen(s->errors);
  if (n + 1 < sizeof s->errors) s->errors[n] = '\n', s->errors[n + 1] = 0;
}

/* The value of header `name` (lowercase, with its colon) in the head [buf, end), or NULL. */
static const char *header(const char *buf, const char *end, const char *name) {
  size_t n = strlen(name);
  for (const char *p = strstr(buf, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
    size_t i = 0;
    while (i < n && p[2 + i] && tolower((unsigned char)p[2 + i]) == name[i]) i++;
    if (i == n) return p + 2 + n;
  }
  return NULL;
}

/* Reads one request from fd into buf (head and body); false when the peer closed. */
static bool read_request(int fd, char *buf, size_t cap, char **body, size_t *blen) {
  size_t n = 0, need = 0;
  char *end = NULL;
  while (!end) {
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r <= 0) return false;
    n += (size_t)r;
    buf[n] = 0;
    end = strstr(buf, "\r\n\r\n");
  }
  {
    const char *cl = header(buf, end, "content-length:"), *ex = header(buf, end, "expect:");
    need = cl ? strtoul(cl, NULL, 10) : 0;
    if (ex && strstr(ex, "100-continue") && need)
      (void)!write(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  }
  while (n < (size_t)(end + 4 - buf) + need && n < cap - 1) {
    ssize_t r = read(fd, buf + n, cap - 1 - n);
    if (r <= 0) return false;
    n += (size_t)r;
  }
  buf[n] = 0;
  *body = end + 4, *blen = need;
  return true;
}

static void answer(int fd, long status, const char *body) {
  char head[256];
  size_t len = body ? strlen(body) : 0;
  int n =
      snprintf(head, sizeof head,
               "HTTP/1.1 %ld X\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
               status, len);
  (void)!write(fd, head, (size_t)n);
  if (len) (void)!write(fd, body, len);
}

/* One request against the next step: recorded differences, then the step's reply. */
static void serve_one(script *s, int fd, char *req, char *body, size_t blen) {
  char method[16] = "", path[1024] = "";
  step *st = s->done < s->nsteps ? &s->steps[s->done] : NULL;
  json_t *got = NULL;
  ts_err err;
  sscanf(req, "%15s %1023s", method, path);
  if (!st) {
    if (!s->more) complain(s, "unexpected request %s %s", method, path);
    answer(fd, 500, "{}");
    return;
  }
  if (strcmp(method, st->method) || strcmp(path, st->path))
    complain(s, "request %d: %s %s, want %s %s", s->done + 1, method, path, st->method, st->path);
  if (blen && in_json_parse(body, blen, &got, &err) != TS_OK)
    complain(s, "request %d: body is not JSON: %s", s->done + 1, err.text);
  if (st->body && !matches(st->body, got)) {
    char *g = got ? json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
    char *w = json_dumps(st->body, JSON_SORT_KEYS | JSON_COMPACT);
    complain(s, "request %d: body\n  got:  %s\n  want: %s", s->done + 1, g ? g : "(none)", w);
    free(g), free(w);
  }
  json_decref(got);
  answer(fd, st->status, st->reply);
  s->done++;
}

static void *serve(void *arg) {
  script *s = arg;
  char *buf = malloc(REQ_MAX);
  while (!s->stop) {
    fd_set rd;
    struct timeval tv = {0, 20000};
    int c;
    FD_ZERO(&rd);
    FD_SET(s->fd, &rd);
    if (select(s->fd + 1, &rd, NULL, NULL, &tv) <= 0) continue;
    if ((c = accept(s->fd, NULL, NULL)) < 0) continue;
    for (;;) { /* keep-alive: every request of the connection */
      char *body;
      size_t blen;
      struct timeval rt = {0, 200000};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof rt);
      if (!read_request(c, buf, REQ_MAX, &body, &blen)) break;
      serve_one(s, c, buf, body, blen);
    }
    close(c);
  }
  free(buf);
  return NULL;
}

static void listen_on_loopback(script *s) {
  struct sockaddr_in a = {0};
  socklen_t len = sizeof a;
  int one = 1;
  s->fd = socket(AF_INET, SOCK_STREAM, 0);
  setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(s->fd, 8), 0);
  getsockname(s->fd, (struct sockaddr *)&a, &len);
  s->port = ntohs(a.sin_port);
}

/* ---- one case ------------------------------------------------------------------------------ */

typedef struct outcome {
  int calls;               /* callbacks */
  ts_rc r;                 /* the last result */
  int events;              /* informer: objects delivered */
  int synced;              /* informer: on_synced calls */
  model_claim_write claim; /* reserve, unreserve: what the steps write */
} outcome;

static void on_event(void *ud, kc_event_type t, json_t *obj, const kc_resource *res) {
  (void)t, (void)obj, (void)res;
  ((outcome *)ud)->events++;
}

static void on_synced(void *ud) {
  ((outcome *)ud)->synced++;
}

static void on_done(void *ud, ts_rc r, const kc_write_info *info) {
  outcome *o = ud;
  (void)info;
  o->calls++;
  o->r = r;
}

static const char *str(json_t *call, const char *key) {
  return json_string_value(json_object_get(call, key));
}

static void load_steps(script *s, json_t *c, const char *file) {
  size_t i;
  json_t *x, *current = json_object_get(c, "current");
  if (current) { /* a claim write reads the claim first */
    json_t *call = json_object_get(c, "call"), *obj = resolve(current);
    step *st = &s->steps[s->nsteps++];
    snprintf(st->method, sizeof st->method, "GET");
    snprintf(st->path, sizeof st->path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s",
             str(call, "ns"), str(call, "name"));
    st->status = 200;
    st->reply = json_dumps(obj, JSON_COMPACT);
    json_decref(obj);
  }
  json_array_foreach(json_object_get(c, "exchanges"), i, x) {
    json_t *req = json_object_get(x, "request"), *reply = resolve(json_object_get(x, "reply"));
    step *st = &s->steps[s->nsteps++];
    if (s->nsteps > MAX_STEPS) fail_msg("%s: too many exchanges", file);
    snprintf(st->method, sizeof st->method, "%s", str(req, "method") ? str(req, "method") : "");
    snprintf(st->path, sizeof st->path, "%s", str(req, "path") ? str(req, "path") : "");
    st->body = json_object_get(req, "body") ? resolve(json_object_get(req, "body")) : NULL;
    st->status = (long)json_integer_value(json_object_get(reply, "status"));
    if (json_object_get(reply, "stream")) { /* a watch: one event per line */
      ts_buf b;
      size_t k;
      json_t *ev;
      ts_buf_init(&b, TS_BUF_DEFAULT_MAX);
      json_array_foreach(json_object_get(reply, "stream"), k, ev) {
        char *line = json_dumps(ev, JSON_COMPACT);
        ts_buf_puts(&b, line);
        ts_buf_putc(&b, '\n');
        free(line);
      }
      st->reply = strdup(b.data ? b.data : "");
      ts_buf_free(&b);
    } else {
      st->reply = json_dumps(json_object_get(reply, "body"), JSON_COMPACT);
    }
    json_decref(reply);
  }
}

/* Issues the case's call through a writer on a client of the scripted server. */
static void issue(kc_writer *w, json_t *call, outcome *o) {
  const char *op = str(call, "op"), *ns = str(call, "ns"), *name = str(call, "name");
  const char *uid = str(call, "uid");
  char path[512];
  json_t *b = NULL;
  if (!strcmp(op, "bind")) {
    b = model_binding_json(ns, name, uid, str(call, "node"), -1);
    kc_bind(w, ns, name, uid, str(call, "node"), b, on_done, o);
  } else if (!strcmp(op, "evict")) {
    b = model_eviction_json(ns, name, uid);
    kc_evict(w, ns, name, uid, b, on_done, o);
  } else if (!strcmp(op, "unschedulable")) {
    b = model_pod_unscheduled_patch(str(call, "reason"), str(call, "message"), 0);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/status", ns, name);
    kc_patch(w, "patch pods/status", path, KC_STRATEGIC_MERGE_PATCH, ns, name, b, on_done, o);
  } else if (!strcmp(op, "reserve") || !strcmp(op, "unreserve")) {
    o->claim.alloc =
        json_object_get(call, "allocation") ? resolve(json_object_get(call, "allocation")) : NULL;
    o->claim.pod_name = str(call, "pod"), o->claim.pod_uid = str(call, "pod_uid");
    o->claim.claim_uid = uid;
    o->claim.unreserve = !strcmp(op, "unreserve");
    snprintf(path, sizeof path, "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s", ns,
             name);
    kc_update(w, "update resourceclaims", ns, name, path, o->claim.unreserve, model_claim_step,
              &o->claim, on_done, o);
  } else if (!strcmp(op, "event")) { /* fire and forget: the request is the result */
    model_object_ref pod = {"v1", "Pod", ns, name, uid};
    b = model_event_json(&pod, "tessera-test", str(call, "type"), str(call, "reason"),
                         str(call, "message"), 0);
    assert_true(kc_event_allowed(w, uid));
    kc_event_post(w, b);
    o->calls = 1, o->r = TS_OK;
  } else if (!strcmp(op, "informer")) {
    o->calls = 1, o->r = TS_OK; /* no callback of its own: the events are the result */
  } else {
    fail_msg("unknown op %s", op);
  }
  json_decref(b);
}

static const char *result_name(ts_rc r) {
  return ts_errname(r);
}

/* Runs one case file; returns false (with the differences printed) when it fails. */
static bool run_case(const char *file) {
  json_error_t je;
  json_t *c = json_load_file(file, 0, &je);
  script s;
  pthread_t th;
  uv_loop_t loop;
  kc_auth auth;
  kc_client *client;
  kc_writer *w;
  kc_gate gate = {true};
  outcome o = {0};
  ts_err err;
  const char *want;
  bool ok;
  kc_resource_spec specs[8];
  kc_informers *inf = NULL;
  if (!c) fail_msg("%s: %s", file, je.text);
  memset(&s, 0, sizeof s);
  s.more = json_is_true(json_object_get(c, "more"));
  load_steps(&s, c, file);
  listen_on_loopback(&s);
  assert_int_equal(pthread_create(&th, NULL, serve, &s), 0);
  memset(&auth, 0, sizeof auth);
  snprintf(auth.server, sizeof auth.server, "http://127.0.0.1:%d", s.port);
  auth.token = ts_strdup("test-token");
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_non_null(client = kc_client_new(&loop, &auth, &err));
  assert_non_null(w = kc_writer_new(client, &gate, KC_EVENT_INTERVAL_MS));
  issue(w, json_object_get(c, "call"), &o);
  if (!strcmp(str(json_object_get(c, "call"), "op"), "informer")) {
    json_t *rs = json_object_get(json_object_get(c, "call"), "resources"), *r;
    size_t k;
    kc_informer_opts io = {specs, 0, on_event, on_synced, &o, NULL};
    json_array_foreach(rs, k, r) {
      if (k >= 8) break;
      specs[io.nresources++] = (kc_resource_spec){str(r, "resource"), str(r, "group"),
                                                  str(r, "kind"), str(r, "versions")};
    }
    inf = kc_informers_start(client, &io, &err);
  }
  for (int i = 0; i < 2000 && !o.calls; i++) uv_run(&loop, UV_RUN_ONCE);
  for (int i = 0; i < 500 && s.done < s.nsteps; i++) uv_run(&loop, UV_RUN_NOWAIT), usleep(2000);
  for (int i = 0; i < 25; i++) uv_run(&loop, UV_RUN_NOWAIT), usleep(2000); /* the last reply */
  kc_informers_stop(inf);
  kc_writer_free(w);
  kc_client_free(client);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  kc_auth_free(&auth);
  s.stop = true;
  pthread_join(th, NULL);
  close(s.fd);
  want = str(c, "result");
  if (o.calls != 1) complain(&s, "the callback came %d times, want once", o.calls);
  if (s.done < s.nsteps) complain(&s, "%d of %d requests were sent", s.done, s.nsteps);
  if (want && strcmp(want, result_name(o.r)))
    complain(&s, "result %s, want %s", result_name(o.r), want);
  if (json_object_get(c, "events") &&
      o.events != (int)json_integer_value(json_object_get(c, "events")))
    complain(&s, "%d objects delivered, want %lld", o.events,
             (long long)json_integer_value(json_object_get(c, "events")));
  if (inf && o.synced != 1) complain(&s, "on_synced came %d times, want once", o.synced);
  ok = !s.errors[0];
  printf("%s %s\n%s", ok ? "PASS" : "FAIL", file, s.errors);
  for (int i = 0; i < s.nsteps; i++) json_decref(s.steps[i].body), free(s.steps[i].reply);
  json_decref(c);
  json_decref((json_t *)o.claim.alloc);
  return ok;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_protocol_cases(void **state) {
  DIR *d = opendir(CASES);
  struct dirent *e;
  char *names[256];
  int n = 0, failed = 0;
  (void)state;
  assert_non_null(d);
  while ((e = readdir(d)) && n < 256)
    if (strstr(e->d_name, ".json")) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, name_cmp);
  assert_true(n >= 8);
  for (int i = 0; i < n; i++) {
    char file[512];
    snprintf(file, sizeof file, CASES "/%s", names[i]);
    failed += !run_case(file);
    free(names[i]);
  }
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_protocol_cases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
