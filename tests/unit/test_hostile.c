/* A server or a client that misbehaves: kubeclient's informers against a scripted API server
 * (a key longer than any buffer, a list without resourceVersion, a list that never ends, a
 * watch closed at once or left silent, tokens that need escaping, Retry-After without bound),
 * and the health endpoints against clients that connect and never finish a request. Each
 * case is a reproducer of a hang, a crash or a hot loop that once happened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "kubeclient/kc.h"
#include "tests/support/proc.h"

/* The health server is part of the binary, not of the library: test it as a unit. */
#include "cmd/health.c"

/* ---- a scripted API server: one handler decides every answer ----------------------------- */

typedef struct server server;
/* Answers one request on fd (or leaves it unanswered: return false to hold the connection). */
typedef bool (*handler_fn)(server *s, int fd, const char *method, const char *path);

struct server {
  int fd, port;        /* listening socket */
  handler_fn handler;  /* the test's */
  void *ud;            /* the test's state */
  pthread_mutex_t mu;  /* guards the counters and the log */
  int requests;        /* answered or held */
  char log[1 << 16];   /* "METHOD path" per line, truncated (tests read prefixes) */
  volatile bool stop;  /* the test is over */
  pthread_t thread;    /* the accept loop */
  int held[64], nheld; /* connections left open */
};

/* One write for head and body: two would meet Nagle and delayed ACKs (40 ms a request). */
static void reply(int fd, long status, const char *extra_headers, const char *body) {
  size_t len = strlen(body), cap = len + 512;
  char *msg = malloc(cap);
  int n = snprintf(msg, cap,
                   "HTTP/1.1 %ld X\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n"
                   "\r\n%s",
                   status, extra_headers ? extra_headers : "", len, body);
  (void)!write(fd, msg, (size_t)n);
  free(msg);
}

static int count(server *s, const char *prefix) {
  int n = 0;
  pthread_mutex_lock(&s->mu);
  for (const char *p = s->log; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
    n += !strncmp(p, prefix, strlen(prefix));
  pthread_mutex_unlock(&s->mu);
  return n;
}

static void *serve(void *arg) {
  server *s = arg;
  size_t cap = 1 << 20;
  char *buf = malloc(cap);
  while (!s->stop) {
    fd_set rd;
    struct timeval tv = {0, 20000};
    int c;
    FD_ZERO(&rd);
    FD_SET(s->fd, &rd);
    if (select(s->fd + 1, &rd, NULL, NULL, &tv) <= 0) continue;
    if ((c = accept(s->fd, NULL, NULL)) < 0) continue;
    for (bool open = true; open && !s->stop;) { /* keep-alive */
      size_t n = 0;
      char method[16] = "", *path = malloc(cap);
      struct timeval rt = {0, 300000};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &rt, sizeof rt);
      while (n < cap - 1 && !strstr(buf, "\r\n\r\n")) {
        ssize_t r = read(c, buf + n, cap - 1 - n);
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = 0;
      }
      if (!n || !strstr(buf, "\r\n\r\n")) {
        free(path);
        break;
      }
      path[0] = 0;
      sscanf(buf, "%15s %1048000s", method, path);
      buf[0] = 0;
      pthread_mutex_lock(&s->mu);
      s->requests++;
      {
        size_t used = strlen(s->log);
        if (used + 300 < sizeof s->log)
          snprintf(s->log + used, sizeof s->log - used, "%s %.250s\n", method, path);
      }
      pthread_mutex_unlock(&s->mu);
      open = s->handler(s, c, method, path);
      free(path);
      if (!open) { /* held: keep it until the test ends */
        if (s->nheld < 64) s->held[s->nheld++] = c;
        c = -1;
      }
    }
    if (c >= 0) close(c);
  }
  free(buf);
  return NULL;
}

static server *server_start(handler_fn h, void *ud) {
  server *s = calloc(1, sizeof *s);
  struct sockaddr_in a = {0};
  socklen_t len = sizeof a;
  int one = 1;
  s->handler = h, s->ud = ud;
  pthread_mutex_init(&s->mu, NULL);
  s->fd = socket(AF_INET, SOCK_STREAM, 0);
  setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(s->fd, 64), 0);
  getsockname(s->fd, (struct sockaddr *)&a, &len);
  s->port = ntohs(a.sin_port);
  assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
  return s;
}

static void server_stop(server *s) {
  s->stop = true;
  pthread_join(s->thread, NULL);
  for (int i = 0; i < s->nheld; i++) close(s->held[i]);
  close(s->fd);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* ---- informers on a client of the server ---------------------------------------------------- */

typedef struct seen_event {
  kc_event_type type;
  char ns[4096], name[256];
} seen_event;

typedef struct harness {
  uv_loop_t loop;
  kc_auth auth;
  kc_client *client;
  kc_informers *inf;
  seen_event events[16];
  int nevents;
  int synced;
} harness;

static void on_event(void *ud, kc_event_type t, json_t *obj, const kc_resource *res) {
  harness *h = ud;
  json_t *md = json_object_get(obj, "metadata");
  (void)res;
  if (h->nevents < 16) {
    seen_event *e = &h->events[h->nevents];
    e->type = t;
    snprintf(e->ns, sizeof e->ns, "%s", json_string_value(json_object_get(md, "namespace")) ?: "");
    snprintf(e->name, sizeof e->name, "%s", json_string_value(json_object_get(md, "name")) ?: "");
  }
  h->nevents++;
}

static void on_synced(void *ud) {
  ((harness *)ud)->synced++;
}

static const kc_resource_spec pods = {"pods", "", "Pod", "v1"};

static void harness_start(harness *h, server *s, int watch_timeout_s) {
  ts_err err;
  kc_informer_opts o = {&pods, 1, on_event, on_synced, h, NULL, watch_timeout_s};
  memset(h, 0, sizeof *h);
  snprintf(h->auth.server, sizeof h->auth.server, "http://127.0.0.1:%d", s->port);
  h->auth.token = ts_strdup("t");
  assert_int_equal(uv_loop_init(&h->loop), 0);
  assert_non_null(h->client = kc_client_new(&h->loop, &h->auth, &err));
  assert_non_null(h->inf = kc_informers_start(h->client, &o, &err));
}

/* Runs the loop for about ms milliseconds. */
static void run_for(harness *h, int ms) {
  uint64_t end;
  uv_update_time(&h->loop);
  end = uv_now(&h->loop) + (uint64_t)ms;
  while (uv_now(&h->loop) < end) {
    uv_run(&h->loop, UV_RUN_NOWAIT);
    usleep(2000);
    uv_update_time(&h->loop);
  }
}

static void harness_stop(harness *h) {
  kc_informers_stop(h->inf);
  kc_client_free(h->client);
  uv_run(&h->loop, UV_RUN_DEFAULT);
  uv_loop_close(&h->loop);
  kc_auth_free(&h->auth);
}

static bool is(const char *method, const char *path, const char *m, const char *prefix) {
  return !strcmp(method, m) && !strncmp(path, prefix, strlen(prefix));
}

/* ---- a key longer than any fixed buffer ------------------------------------------------------ */

typedef struct long_key {
  char ns[3001]; /* a namespace no real server allows, from a server that lies */
  int lists;
} long_key;

static bool long_key_handler(server *s, int fd, const char *method, const char *path) {
  long_key *k = s->ud;
  if (is(method, path, "GET", "/apis")) {
    reply(fd, 200, NULL, "{\"groups\":[]}");
  } else if (is(method, path, "GET", "/api/v1/pods?limit=")) {
    char *body = malloc(4096 + sizeof k->ns);
    if (k->lists++ == 0)
      sprintf(body,
              "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{"
              "\"metadata\":{\"namespace\":\"%s\",\"name\":\"p\",\"resourceVersion\":\"5\"}}]}",
              k->ns);
    else
      sprintf(body, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[]}");
    reply(fd, 200, NULL, body);
    free(body);
  } else if (is(method, path, "GET", "/api/v1/pods?watch=1&resourceVersion=5")) {
    reply(fd, 410, NULL, "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}");
  } else {
    return false; /* the second watch: held open */
  }
  return true;
}

/* A re-list after which an object with a 3000-byte namespace is gone: delivered as DELETED
 * with its whole namespace and name (the key once went through a 600-byte buffer, lost its
 * '/', and the re-list dereferenced NULL + 1). */
static void test_long_key_relist(void **state) {
  long_key k = {0};
  harness h;
  server *s;
  (void)state;
  memset(k.ns, 'n', sizeof k.ns - 1);
  s = server_start(long_key_handler, &k);
  harness_start(&h, s, 0);
  for (int i = 0; i < 300 && h.nevents < 2; i++) run_for(&h, 10);
  assert_int_equal(h.nevents, 2);
  assert_int_equal(h.events[0].type, KC_ADDED);
  assert_int_equal(h.events[1].type, KC_DELETED);
  assert_string_equal(h.events[1].ns, k.ns);
  assert_string_equal(h.events[1].name, "p");
  harness_stop(&h);
  server_stop(s);
}

/* ---- lists and watches that would make us spin ------------------------------------------------
 */

typedef struct spin {
  const char *list_body; /* every list's answer */
  int watch_mode;        /* 0: close at once with 200; 1: hold silent */
  int pages;             /* continue tokens handed out */
  bool endless;          /* every list page has a continue token */
} spin;

static bool spin_handler(server *s, int fd, const char *method, const char *path) {
  spin *sp = s->ud;
  if (is(method, path, "GET", "/apis")) {
    reply(fd, 200, NULL, "{\"groups\":[]}");
  } else if (is(method, path, "GET", "/api/v1/pods?limit=")) {
    if (sp->endless) {
      char body[256];
      snprintf(body, sizeof body,
               "{\"metadata\":{\"continue\":\"page&%d=x\",\"resourceVersion\":\"1\"},"
               "\"items\":[]}",
               ++sp->pages);
      reply(fd, 200, NULL, body);
    } else {
      reply(fd, 200, NULL, sp->list_body);
    }
  } else if (is(method, path, "GET", "/api/v1/pods?watch=1")) {
    if (sp->watch_mode == 1) { /* headers, then nothing at all */
      const char *head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n";
      (void)!write(fd, head, strlen(head));
      return false;
    }
    reply(fd, 200, NULL, "");
  } else {
    reply(fd, 404, NULL, "{}");
  }
  return true;
}

/* Pages of a list: the first holds two pods and a continue token; the second fails (500) until
 * `second_ok`, then holds one more pod and ends the list. */
typedef struct paged {
  bool second_ok;
} paged;

static bool paged_handler(server *s, int fd, const char *method, const char *path) {
  paged *pg = s->ud;
  if (is(method, path, "GET", "/apis")) {
    reply(fd, 200, NULL, "{\"groups\":[]}");
  } else if (is(method, path, "GET", "/api/v1/pods?limit=") && strstr(path, "continue=")) {
    if (!pg->second_ok)
      reply(fd, 500, NULL, "{}");
    else
      reply(fd, 200, NULL,
            "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[{\"metadata\":{\"namespace\":"
            "\"t\",\"name\":\"c\"}}]}");
  } else if (is(method, path, "GET", "/api/v1/pods?limit=")) {
    reply(fd, 200, NULL,
          "{\"metadata\":{\"continue\":\"next\",\"resourceVersion\":\"9\"},\"items\":["
          "{\"metadata\":{\"namespace\":\"t\",\"name\":\"a\"}},"
          "{\"metadata\":{\"namespace\":\"t\",\"name\":\"b\"}}]}");
  } else if (is(method, path, "GET", "/api/v1/pods?watch=1")) {
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    (void)!write(fd, head, strlen(head));
    return false;
  } else {
    reply(fd, 404, NULL, "{}");
  }
  return true;
}

/* A list's pages are delivered as they come, not held until its last page: holding them took
 * ~25 KiB of parsed JSON per object (220 MB at 9,000 objects against a real API server). The
 * resource counts as synced only at the end; a list started again redelivers what it has. */
static void test_list_pages_delivered_as_they_come(void **state) {
  paged pg = {false};
  server *s = server_start(paged_handler, &pg);
  harness h;
  (void)state;
  harness_start(&h, s, 0);
  run_for(&h, 1500);
  assert_true(h.nevents >= 2); /* page 1's pods, while page 2 keeps failing */
  assert_int_equal(h.events[0].type, KC_ADDED);
  assert_string_equal(h.events[0].name, "a");
  assert_int_equal(h.events[1].type, KC_ADDED);
  assert_string_equal(h.events[1].name, "b");
  assert_int_equal(h.synced, 0);
  pg.second_ok = true;
  run_for(&h, 3000);
  assert_int_equal(h.synced, 1);
  assert_true(h.nevents <= 16); /* all recorded */
  assert_string_equal(h.events[h.nevents - 1].name, "c");
  assert_int_equal(h.events[h.nevents - 1].type, KC_ADDED);
  for (int i = 2; i < h.nevents - 1; i++) /* page 1 again, after the failure: known now */
    assert_int_equal(h.events[i].type, KC_MODIFIED);
  harness_stop(&h);
  server_stop(s);
}

/* A list without metadata.resourceVersion cannot be watched from: it is a failure, retried
 * with backoff (not ~65 times a second), and /readyz's reason says so. */
static void test_list_without_resource_version(void **state) {
  spin sp = {"{\"kind\":\"PodList\",\"metadata\":{},\"items\":[]}", 0, 0, false};
  server *s = server_start(spin_handler, &sp);
  harness h;
  char why[512];
  (void)state;
  harness_start(&h, s, 0);
  run_for(&h, 2500);
  assert_in_range(count(s, "GET /api/v1/pods?limit="), 2, 6);
  assert_int_equal(h.synced, 0);
  assert_true(kc_informers_problem(h.inf, why, sizeof why));
  assert_non_null(strstr(why, "pods: not listed yet"));
  assert_non_null(strstr(why, "no metadata.resourceVersion"));
  harness_stop(&h);
  server_stop(s);
}

/* A watch the server closes at once with 200 and nothing sent is client-go's "very short
 * watch": backed off, and after KC_FAILING_AFTER of them the resource is not ready. */
static void test_watch_closed_at_once(void **state) {
  spin sp = {"{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}", 0, 0,
             false};
  server *s = server_start(spin_handler, &sp);
  harness h;
  char why[512];
  (void)state;
  harness_start(&h, s, 0);
  run_for(&h, 3000);
  assert_int_equal(h.synced, 1);
  assert_in_range(count(s, "GET /api/v1/pods?watch=1"), 3, 7);
  assert_true(kc_informers_problem(h.inf, why, sizeof why));
  assert_non_null(strstr(why, "failed attempts in a row"));
  assert_non_null(strstr(why, "very short watch"));
  harness_stop(&h);
  server_stop(s);
}

/* Every watch delivers an event and then breaks (a proxy that cuts streams): each break is
 * backed off from the start again, because a watch that delivered was healthy. The backoff once
 * kept growing across such breaks and reached 30 s, leaving the pods informer stale for half a
 * minute after every hiccup of an otherwise working server. */
static bool cut_stream_handler(server *s, int fd, const char *method, const char *path) {
  int *watches = s->ud;
  if (is(method, path, "GET", "/api/v1/pods?limit=")) {
    reply(fd, 200, NULL,
          "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}");
  } else if (is(method, path, "GET", "/api/v1/pods?watch=1")) {
    char msg[512], line[256];
    int n = snprintf(line, sizeof line,
                     "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"t\",\"name\":"
                     "\"p%d\",\"resourceVersion\":\"%d\"}}}\n",
                     *watches, 8 + *watches);
    int m = snprintf(msg, sizeof msg,
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
                     "chunked\r\n\r\n%x\r\n%s\r\n",
                     n, line);
    (*watches)++;
    (void)!write(fd, msg, (size_t)m);
    usleep(50000);
    shutdown(fd, SHUT_RDWR); /* cut: no final chunk */
  } else {
    reply(fd, 200, NULL, "{\"groups\":[]}");
  }
  return true;
}

static void test_cut_watches_back_off_from_start(void **state) {
  int watches = 0;
  server *s = server_start(cut_stream_handler, &watches);
  harness h;
  (void)state;
  harness_start(&h, s, 0);
  run_for(&h, 4000);
  assert_int_equal(h.synced, 1);
  /* backoff 250-500 ms after each cut: at least 7 in 4 s (growing, it made at most 5) */
  assert_true(count(s, "GET /api/v1/pods?watch=1") >= 7);
  assert_true(h.nevents >= 7);
  harness_stop(&h);
  server_stop(s);
}

/* A watch that goes silent (headers, then nothing) is abandoned a little after its
 * timeoutSeconds and opened again from the same resourceVersion. */
static void test_silent_watch_reopened(void **state) {
  spin sp = {"{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}", 1, 0,
             false};
  server *s = server_start(spin_handler, &sp);
  harness h;
  (void)state;
  harness_start(&h, s, 1);
  run_for(&h, 5000);
  assert_int_equal(count(s, "GET /api/v1/pods?watch=1&resourceVersion=7&allowWatchBookmarks="
                            "true&timeoutSeconds=1"),
                   count(s, "GET /api/v1/pods?watch=1"));
  assert_in_range(count(s, "GET /api/v1/pods?watch=1"), 2, 4);
  harness_stop(&h);
  server_stop(s);
}

/* A list whose every page has a continue token stops after KC_LIST_PAGES_MAX pages (memory
 * stays bounded), backs off and says why; tokens are sent back percent-encoded. */
static void test_endless_list(void **state) {
  spin sp = {NULL, 0, 0, true};
  server *s = server_start(spin_handler, &sp);
  harness h;
  char why[512] = "";
  (void)state;
  harness_start(&h, s, 0);
  for (int i = 0; i < 200000 && !strstr(why, "pages"); i++) { /* one loop turn per page */
    uv_run(&h.loop, UV_RUN_ONCE);
    kc_informers_problem(h.inf, why, sizeof why);
  }
  assert_non_null(strstr(why, "more than 4096 pages"));
  assert_int_equal(h.synced, 0);
  assert_int_equal(count(s, "GET /api/v1/pods?limit=500&continue=page%261%3Dx"), 1);
  harness_stop(&h);
  server_stop(s);
}

/* ---- Retry-After ------------------------------------------------------------------------------
 */

static bool retry_after_handler(server *s, int fd, const char *method, const char *path) {
  (void)s, (void)method, (void)path;
  reply(fd, 429, "Retry-After: 9223372036854775807\r\n", "{\"kind\":\"Status\",\"code\":429}");
  return true;
}

static void got_answer(void *ud, const kc_response *r) {
  *(long *)ud = r->retry_after_s;
}

/* A Retry-After of 2^63-1 seconds is taken as KC_RETRY_AFTER_MAX_S (it once overflowed into
 * "retrying in 18446744073709550616 ms"). */
static void test_retry_after_capped(void **state) {
  server *s = server_start(retry_after_handler, NULL);
  harness h;
  long after = -1;
  ts_err err;
  (void)state;
  memset(&h, 0, sizeof h);
  snprintf(h.auth.server, sizeof h.auth.server, "http://127.0.0.1:%d", s->port);
  assert_int_equal(uv_loop_init(&h.loop), 0);
  assert_non_null(h.client = kc_client_new(&h.loop, &h.auth, &err));
  assert_non_null(kc_request(h.client, "GET", "/api/v1/pods", NULL, NULL, got_answer, &after));
  for (int i = 0; i < 500 && after < 0; i++) run_for(&h, 10);
  assert_int_equal(after, KC_RETRY_AFTER_MAX_S);
  kc_client_free(h.client);
  uv_run(&h.loop, UV_RUN_DEFAULT);
  uv_loop_close(&h.loop);
  server_stop(s);
}

/* ---- the health endpoints ----------------------------------------------------------------------
 */

static bool ready_cb(void *ud, char *why, size_t cap) {
  (void)ud;
  snprintf(why, cap, "pods: not listed yet");
  return false;
}

/* A connection from 127.0.0.host to port. */
static int connect_from(int host, int port) {
  int fd = proc_connect_from(host, port);
  assert_true(fd >= 0);
  return fd;
}

static int connect_nb(int port) {
  return connect_from(1, port);
}

/* true when the peer has closed fd (read gives 0 or an error other than EAGAIN). */
static bool closed_by_peer(int fd) {
  char b[256];
  ssize_t r = read(fd, b, sizeof b);
  return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* A whole GET on a new connection; the status, or 0 when the connection was closed. */
static int get(uv_loop_t *loop, int port, const char *path, char *body, size_t cap) {
  int fd = connect_nb(port), status = 0;
  char req[256], resp[2048];
  size_t n = 0;
  snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
  (void)!write(fd, req, strlen(req));
  for (int i = 0; i < 500; i++) {
    ssize_t r;
    uv_run(loop, UV_RUN_NOWAIT);
    r = read(fd, resp + n, sizeof resp - 1 - n);
    if (r == 0) break;
    if (r > 0) n += (size_t)r;
    usleep(2000);
  }
  resp[n] = 0;
  close(fd);
  sscanf(resp, "HTTP/1.1 %d", &status);
  if (body) snprintf(body, cap, "%s", strstr(resp, "\r\n\r\n") ? strstr(resp, "\r\n\r\n") + 4 : "");
  return status;
}

/* 300 connections from one address that never finish their request: only the newest
 * HEALTH_PER_CLIENT are kept (each new one closes that address's oldest, counted), the kept ones
 * are closed after their deadline, and /healthz answers; /readyz says why it is not ready. */
static void test_health_half_sent_requests(void **state) {
  uv_loop_t loop;
  ts_err err;
  int port = proc_free_port(), fds[300], closed = 0;
  health_server *hs;
  char body[512];
  (void)state;
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_non_null(
      hs = health_server_start(&loop, &(health_opts){"127.0.0.1", port, ready_cb}, &err));
  assert_int_equal(get(&loop, port, "/readyz", body, sizeof body), 503);
  assert_string_equal(body, "not ready: pods: not listed yet\n");
  for (int i = 0; i < 300; i++) {
    fds[i] = connect_nb(port);
    (void)!write(fds[i], "GET /heal", 9);
    uv_run(&loop, UV_RUN_NOWAIT);
  }
  for (int i = 0; i < 50; i++) uv_run(&loop, UV_RUN_NOWAIT), usleep(1000);
  assert_int_equal(health_server_refused(hs), 300 - HEALTH_PER_CLIENT);
  for (int i = 0; i < 300; i++) closed += closed_by_peer(fds[i]);
  assert_int_equal(closed, 300 - HEALTH_PER_CLIENT);
  for (int i = 300 - HEALTH_PER_CLIENT; i < 300; i++) /* the newest wait for their request */
    assert_false(closed_by_peer(fds[i]));
  for (int t = 0; t < HEALTH_HEAD_MS + 1000; t += 10) uv_run(&loop, UV_RUN_NOWAIT), usleep(10000);
  closed = 0;
  for (int i = 0; i < 300; i++) closed += closed_by_peer(fds[i]), close(fds[i]);
  assert_int_equal(closed, 300);
  assert_int_equal(get(&loop, port, "/healthz", NULL, 0), 200);
  health_server_stop(hs);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

/* A whole GET /healthz from 127.0.0.host, the loop run meanwhile: the milliseconds until the
 * answer's status line came (its status in *status), or -1 when none came within 3 s. */
static long probe(uv_loop_t *loop, int host, int port, int *status) {
  struct timespec t0, t1;
  int fd = connect_from(host, port);
  char resp[512];
  size_t n = 0;
  long ms = -1;
  *status = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  static const char req[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  (void)!write(fd, req, sizeof req - 1);
  for (;;) {
    ssize_t r;
    uv_run(loop, UV_RUN_NOWAIT);
    r = read(fd, resp + n, sizeof resp - 1 - n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (r > 0) n += (size_t)r;
    resp[n] = 0;
    if (strstr(resp, "\r\n")) {
      sscanf(resp, "HTTP/1.1 %d", status);
      ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
      break;
    }
    if (r == 0 || (t1.tv_sec - t0.tv_sec) >= 3) break;
    usleep(500);
  }
  close(fd);
  return ms;
}

/* A slow-client flood, as the audit ran it and worse: 300 half-sent requests refreshed
 * before their deadline, from 30 addresses and from the probe's own address too, while the
 * kubelet probes. Every probe is answered 200 within a second (once 18 of 20 failed: the flood
 * held every slot). */
static void test_health_slow_client_flood(void **state) {
  uv_loop_t loop;
  ts_err err;
  int port = proc_free_port(), fds[300], status;
  health_server *hs;
  (void)state;
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_non_null(
      hs = health_server_start(&loop, &(health_opts){"127.0.0.1", port, ready_cb}, &err));
  for (int i = 0; i < 300; i++) fds[i] = -1;
  for (int round = 0; round < 20; round++) {
    long ms;
    for (int i = 0; i < 300; i++) { /* refresh the flood: every slot asked for again */
      if (fds[i] >= 0) close(fds[i]);
      fds[i] = connect_from(i % 31 + 1, port); /* 127.0.0.1 (the probe's) to 127.0.0.31 */
      (void)!write(fds[i], "GET /heal", 9);
      if (i % 16 == 0) uv_run(&loop, UV_RUN_NOWAIT);
    }
    uv_run(&loop, UV_RUN_NOWAIT);
    ms = probe(&loop, 1, port, &status);
    if (ms < 0 || ms > 1000 || status != 200)
      fail_msg("probe %d: status %d after %ld ms", round, status, ms);
  }
  assert_true(health_server_refused(hs) >= 20 * 300 - HEALTH_CONN_MAX);
  for (int i = 0; i < 300; i++) close(fds[i]);
  health_server_stop(hs);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

/* The request parser of the health endpoints: a GET's path once the head is complete, nothing
 * for other methods, "incomplete" until the blank line, "too large" once the buffer is full. */
static void test_health_request_parser(void **state) {
  char path[32], big[REQ_MAX];
  (void)state;
  const char *get = "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n";
  assert_int_equal(health_parse_request(get, strlen(get), path, sizeof path), HEALTH_REQ_OK);
  assert_string_equal(path, "/readyz");
  assert_int_equal(health_parse_request(get, strlen(get) - 2, path, sizeof path),
                   HEALTH_REQ_INCOMPLETE);
  assert_string_equal(path, "");
  const char *bare = "GET /healthz\n\n";
  assert_int_equal(health_parse_request(bare, strlen(bare), path, sizeof path), HEALTH_REQ_OK);
  assert_string_equal(path, "/healthz");
  const char *post = "POST /readyz HTTP/1.1\r\n\r\n";
  assert_int_equal(health_parse_request(post, strlen(post), path, sizeof path), HEALTH_REQ_OK);
  assert_string_equal(path, "");
  /* a path longer than the caller's buffer is no path (it cannot match a route) */
  const char *lng = "GET /metrics-and-then-a-very-long-tail-of-text HTTP/1.1\r\n\r\n";
  assert_int_equal(health_parse_request(lng, strlen(lng), path, sizeof path), HEALTH_REQ_OK);
  assert_string_equal(path, "");
  memset(big, 'a', sizeof big);
  assert_int_equal(health_parse_request(big, REQ_MAX - 1, path, sizeof path), HEALTH_REQ_TOO_LARGE);
  assert_int_equal(health_parse_request(big, 100, path, sizeof path), HEALTH_REQ_INCOMPLETE);
}

/* An IPv6 address accepted by the configuration works: the endpoint listens on [::1]. */
static void test_health_ipv6(void **state) {
  uv_loop_t loop;
  ts_err err;
  health_server *hs;
  int port = proc_free_port(), fd, status = 0;
  struct sockaddr_in6 a = {0};
  char resp[512];
  (void)state;
  fd = socket(AF_INET6, SOCK_STREAM, 0);
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a)) { /* no IPv6 here: nothing to test */
    if (fd >= 0) close(fd);
    skip();
  }
  close(fd);
  assert_int_equal(uv_loop_init(&loop), 0);
  assert_non_null(hs = health_server_start(&loop, &(health_opts){"::1", port, ready_cb}, &err));
  fd = socket(AF_INET6, SOCK_STREAM, 0);
  a.sin6_port = htons((uint16_t)port);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  fcntl(fd, F_SETFL, O_NONBLOCK);
  (void)!write(fd, "GET /healthz HTTP/1.1\r\n\r\n", 25);
  for (int i = 0; i < 500 && !status; i++) {
    ssize_t r;
    uv_run(&loop, UV_RUN_NOWAIT);
    if ((r = read(fd, resp, sizeof resp - 1)) > 0)
      resp[r] = 0, sscanf(resp, "HTTP/1.1 %d", &status);
    usleep(2000);
  }
  close(fd);
  assert_int_equal(status, 200);
  health_server_stop(hs);
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
}

/* ---- kubeconfigs that would fail at the first request, or hang the start ----------------------
 */

static char kdir[64];

static const char *kpath(const char *name) {
  static char p[128];
  snprintf(p, sizeof p, "%s/%s", kdir, name);
  return p;
}

static void kwrite(const char *name, const char *text) {
  FILE *f = fopen(kpath(name), "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* kc_auth_load(path) fails, and its message holds want. */
static void kc_refused(const char *path, const char *want) {
  kc_auth a;
  ts_err err;
  ts_err_clear(&err);
  assert_int_not_equal(kc_auth_load(path, NULL, &a, &err), TS_OK);
  if (!strstr(err.text, want)) fail_msg("got \"%s\", want \"%s\"", err.text, want);
}

static void kconfig(const char *name, const char *url, const char *cluster_extra,
                    const char *user) {
  char text[2048];
  snprintf(text, sizeof text,
           "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
           "    server: %s\n%s\nusers:\n- name: u\n  user:\n%s\ncontexts:\n- name: c\n"
           "  context: {cluster: k, user: u}\n",
           url, cluster_extra, user);
  kwrite(name, text);
}

/* Empty, comments only, a directory, a FIFO (which would block the start), files it names that
 * are missing, a token over 8 KiB, a scheme other than https/http: each refused at start,
 * naming the file and the field. */
static void test_kubeconfig_refusals(void **state) {
  char big[9000];
  kc_auth a;
  ts_err err;
  (void)state;
  snprintf(kdir, sizeof kdir, "/tmp/tessera-kc-XXXXXX");
  assert_non_null(mkdtemp(kdir));
  kwrite("empty", "");
  kc_refused(kpath("empty"), "empty: holds no kubeconfig (it is empty, only comments");
  kwrite("comments", "# nothing here\n# at all\n");
  kc_refused(kpath("comments"), "comments: holds no kubeconfig");
  mkdir(kpath("dir"), 0700);
  kc_refused(kpath("dir"), "dir: is a directory, not a kubeconfig");
  assert_int_equal(mkfifo(kpath("fifo"), 0600), 0);
  kc_refused(kpath("fifo"), "fifo: is not a regular file, not a kubeconfig");
  kconfig("noca", "https://127.0.0.1:6443", "    certificate-authority: missing/ca.crt",
          "    token: abc");
  kc_refused(kpath("noca"), "noca: clusters[0].cluster.certificate-authority: ");
  kc_refused(kpath("noca"), "missing/ca.crt: No such file or directory");
  kconfig("notoken", "https://127.0.0.1:6443", "", "    tokenFile: /nonexistent/token");
  kc_refused(kpath("notoken"),
             "notoken: users[0].user.tokenFile: /nonexistent/token: No such file or directory");
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  kwrite("big-token", big);
  kconfig("bigtoken", "https://127.0.0.1:6443", "", "    tokenFile: big-token");
  kc_refused(kpath("bigtoken"), "bigtoken: users[0].user.tokenFile: ");
  kc_refused(kpath("bigtoken"), "the token is longer than 8192 bytes");
  kwrite("empty-token", "\n");
  kconfig("emptytoken", "https://127.0.0.1:6443", "", "    tokenFile: empty-token");
  kc_refused(kpath("emptytoken"), "the token file is empty");
  kconfig("ftp", "ftp://127.0.0.1:21", "", "    token: abc");
  kc_refused(
      kpath("ftp"),
      "ftp: clusters[0].cluster.server: must be an https:// URL, not \"ftp://127.0.0.1:21\"");
  /* exec credential plugins, as client-go validates and runs them */
  kconfig("exec-nomode", "https://127.0.0.1:6443", "",
          "    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}");
  kc_refused(kpath("exec-nomode"), "exec-nomode: users[0].user.exec.interactiveMode: required in "
                                   "client.authentication.k8s.io/v1");
  kconfig("exec-alpha", "https://127.0.0.1:6443", "",
          "    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: aws}");
  kc_refused(kpath("exec-alpha"), "users[0].user.exec.apiVersion: want "
                                  "client.authentication.k8s.io/v1 or v1beta1, not "
                                  "client.authentication.k8s.io/v1alpha1");
  kconfig("exec-nocmd", "https://127.0.0.1:6443", "",
          "    exec: {apiVersion: client.authentication.k8s.io/v1beta1}");
  kc_refused(kpath("exec-nocmd"), "users[0].user.exec.command: missing");
  kconfig("exec-missing", "https://127.0.0.1:6443", "",
          "    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: "
          "tessera-no-such-plugin, installHint: 'install it with: apt install the-plugin'}");
  kc_refused(kpath("exec-missing"), "users[0].user.exec: the plugin tessera-no-such-plugin could "
                                    "not be run (not found?): install it with: apt install "
                                    "the-plugin");
  kwrite("wrong-kind.sh", "#!/bin/sh\necho '{\"apiVersion\": \"client.authentication.k8s.io/"
                          "v1beta1\", \"kind\": \"Status\"}'\n");
  chmod(kpath("wrong-kind.sh"), 0755);
  kconfig("exec-kind", "https://127.0.0.1:6443", "",
          "    exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: ./wrong-kind.sh}");
  kc_refused(kpath("exec-kind"), "the plugin's output: kind: want ExecCredential");
  {
    int saved = dup(STDIN_FILENO), null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO), close(null);
    kconfig("exec-always", "https://127.0.0.1:6443", "",
            "    exec: {apiVersion: client.authentication.k8s.io/v1, command: ./wrong-kind.sh, "
            "interactiveMode: Always}");
    kc_refused(kpath("exec-always"),
               "interactiveMode Always, but standard input is not a terminal");
    dup2(saved, STDIN_FILENO), close(saved);
  }
  kwrite("good-token", "abc\n");
  kconfig("http", "http://127.0.0.1:8080", "", "    tokenFile: good-token");
  assert_int_equal(kc_auth_load(kpath("http"), NULL, &a, &err), TS_OK); /* with a warning */
  assert_string_equal(a.server, "http://127.0.0.1:8080");
  kc_auth_free(&a);
  {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", kdir);
    assert_int_equal(system(cmd), 0);
  }
}

/* KUBECONFIG as kubectl merges it: missing files skipped, the first file to name a context,
 * cluster or user (or to set current-context) wins, and a relative path is read from the file
 * that gave it. */
static void test_kubeconfig_merge(void **state) {
  char list[1024], *old = getenv("KUBECONFIG") ? strdup(getenv("KUBECONFIG")) : NULL;
  kc_auth a;
  ts_err err;
  (void)state;
  snprintf(kdir, sizeof kdir, "/tmp/tessera-kc-XXXXXX");
  assert_non_null(mkdtemp(kdir));
  mkdir(kpath("b"), 0700);
  kwrite("b/token", "from-b\n");
  kwrite("a.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: ctx\ncontexts:\n"
                   "- name: ctx\n  context: {cluster: prod, user: me}\nusers:\n"
                   "- name: other\n  user: {token: not-this}\n");
  kwrite("b/b.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: elsewhere\nclusters:\n"
                     "- name: prod\n  cluster: {server: 'https://10.0.0.1:6443'}\nusers:\n"
                     "- name: me\n  user: {tokenFile: token}\ncontexts:\n"
                     "- name: ctx\n  context: {cluster: nothing, user: nobody}\n");
  snprintf(list, sizeof list, "%s/missing.yaml:%s/a.yaml:%s/b/b.yaml", kdir, kdir, kdir);
  setenv("KUBECONFIG", list, 1);
  ts_err_clear(&err);
  if (kc_auth_load(NULL, NULL, &a, &err) != TS_OK) fail_msg("%s", err.text);
  assert_string_equal(a.server, "https://10.0.0.1:6443"); /* a's context, b's cluster */
  assert_non_null(a.token_file);
  assert_non_null(strstr(a.token_file, "/b/token")); /* relative to b.yaml */
  assert_string_equal(a.source, "KUBECONFIG, context ctx");
  kc_auth_free(&a);
  if (old)
    setenv("KUBECONFIG", old, 1), free(old);
  else
    unsetenv("KUBECONFIG");
  {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", kdir);
    assert_int_equal(system(cmd), 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_long_key_relist),
      cmocka_unit_test(test_list_without_resource_version),
      cmocka_unit_test(test_list_pages_delivered_as_they_come),
      cmocka_unit_test(test_watch_closed_at_once),
      cmocka_unit_test(test_silent_watch_reopened),
      cmocka_unit_test(test_cut_watches_back_off_from_start),
      cmocka_unit_test(test_endless_list),
      cmocka_unit_test(test_retry_after_capped),
      cmocka_unit_test(test_health_half_sent_requests),
      cmocka_unit_test(test_health_slow_client_flood),
      cmocka_unit_test(test_health_request_parser),
      cmocka_unit_test(test_health_ipv6),
      cmocka_unit_test(test_kubeconfig_refusals),
      cmocka_unit_test(test_kubeconfig_merge),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
