/* kubeclient/http.c - libcurl's multi interface on a libuv loop, after curl's
 * docs/examples/multi-uv.c: libcurl tells us which sockets to watch and when to time out; uv
 * polls them and hands readiness back through curl_multi_socket_action. Completed transfers
 * and streamed lines are delivered after libcurl has returned, never from inside it. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubeclient/kc_int.h"

struct sock_ctx {
  uv_poll_t poll;   /* watches the socket */
  curl_socket_t fd; /* the socket */
  kc_client *c;     /* owner */
  kc_multi *mx;     /* the multi handle that watches it */
  bool pooled;      /* from c->socks (else allocated) */
  bool in_use;      /* pooled: taken */
};

static void client_release(kc_client *c);

static void close_free(uv_handle_t *h) {
  sock_ctx *s = h->data;
  kc_client *c = s->c;
  if (!s->pooled) {
    ts_free(s);
    return;
  }
  s->in_use = false;
  c->socks_in_use--;
  client_release(c);
}

/* A socket context: from the client's pool (no allocation while a transfer runs: libcurl
 * cannot recover from a failed socket callback), else allocated. NULL when out of memory. */
static sock_ctx *sock_new(kc_client *c) {
  sock_ctx *s = NULL;
  for (size_t i = 0; i < KC_SOCK_POOL && !s; i++)
    if (!c->socks[i].in_use) s = &c->socks[i];
  if (s) {
    memset(s, 0, sizeof *s);
    s->pooled = s->in_use = true;
    c->socks_in_use++;
    return s;
  }
  return ts_calloc(1, sizeof *s);
}

static void check_done(kc_client *c);

static void flush_lines(kc_client *c) {
  kc_req *r = c->reqs;
  while (r) {
    kc_req *next = r->next;
    if (r->on_line && !r->cancelled) {
      size_t at = 0;
      for (size_t i = 0; i < r->body.len; i++) {
        if (r->body.data[i] != '\n') continue;
        if (i > at) r->on_line(r->ud, r->body.data + at, i - at);
        at = i + 1;
        if (r->cancelled) break;
      }
      if (at) {
        memmove(r->body.data, r->body.data + at, r->body.len - at);
        r->body.len -= at;
      }
    }
    r = next;
  }
}

static void unlink_req(kc_client *c, kc_req *r);
static void free_req(kc_req *r);
static void released(kc_client *c, const kc_req *r);

/* Cancelled requests leave libcurl here, outside its callbacks and our iterations. */
static void sweep(kc_client *c) {
  kc_req **pp = &c->reqs;
  while (*pp) {
    kc_req *r = *pp;
    if (!r->cancelled) {
      pp = &r->next;
      continue;
    }
    *pp = r->next;
    curl_multi_remove_handle(r->mx->m, r->easy);
    released(c, r);
    free_req(r);
  }
}

static void launch_queued(kc_client *c);

static void after_action(kc_client *c) {
  flush_lines(c);
  check_done(c);
  sweep(c);
  launch_queued(c);
}

static void on_poll(uv_poll_t *p, int status, int events) {
  sock_ctx *s = p->data;
  int flags = 0, running;
  if (status < 0) flags = CURL_CSELECT_ERR;
  if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
  if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
  curl_multi_socket_action(s->mx->m, s->fd, flags, &running);
  after_action(s->c);
}

static int on_socket(CURL *e, curl_socket_t fd, int action, void *userp, void *socketp) {
  kc_multi *mx = userp;
  kc_client *c = mx->c;
  sock_ctx *s = socketp;
  (void)e;
  if (action == CURL_POLL_REMOVE) {
    if (s) {
      uv_poll_stop(&s->poll);
      uv_close((uv_handle_t *)&s->poll, close_free);
      curl_multi_assign(mx->m, fd, NULL);
    }
    return 0;
  }
  if (!s) {
    if (!(s = sock_new(c))) return -1;
    s->fd = fd, s->c = c, s->mx = mx;
    uv_poll_init_socket(c->loop, &s->poll, fd);
    s->poll.data = s;
    curl_multi_assign(mx->m, fd, s);
  }
  uv_poll_start(&s->poll,
                (action & CURL_POLL_IN ? UV_READABLE : 0) |
                    (action & CURL_POLL_OUT ? UV_WRITABLE : 0),
                on_poll);
  return 0;
}

static void on_timeout(uv_timer_t *t) {
  kc_multi *mx = t->data;
  int running;
  curl_multi_socket_action(mx->m, CURL_SOCKET_TIMEOUT, 0, &running);
  after_action(mx->c);
}

static int on_timer(CURLM *m, long ms, void *userp) {
  kc_multi *mx = userp;
  (void)m;
  if (ms < 0)
    uv_timer_stop(&mx->timer);
  else
    uv_timer_start(&mx->timer, on_timeout, ms ? (uint64_t)ms : 1, 0);
  return 0;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud) {
  kc_req *r = ud;
  size_t len = size * n;
  if (r->cancelled) return 0;
  if (r->body.len + len > (r->on_line ? KC_LINE_MAX : KC_BODY_MAX)) {
    r->too_big = true;
    return 0; /* aborts the transfer */
  }
  return ts_buf_append(&r->body, p, len) == TS_OK ? len : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud) {
  kc_req *r = ud;
  size_t len = size * n;
  if (len > 12 && !strncasecmp(p, "retry-after:", 12)) { /* seconds; an HTTP date is ignored */
    long long s = strtoll(p + 12, NULL, 10);
    r->retry_after = s < 0 ? 0 : s > KC_RETRY_AFTER_MAX_S ? KC_RETRY_AFTER_MAX_S : (long)s;
  }
  return len;
}

static void unlink_req(kc_client *c, kc_req *r) {
  kc_req **pp = &c->reqs;
  while (*pp && *pp != r) pp = &(*pp)->next;
  if (*pp) *pp = r->next;
}

static void free_req(kc_req *r) {
  if (r->easy) curl_easy_cleanup(r->easy);
  ts_free(r->url);
  curl_slist_free_all(r->headers);
  ts_buf_free(&r->body);
  ts_free(r->upload);
  ts_free(r);
}

/* A request left libcurl: its slot is free. */
static void released(kc_client *c, const kc_req *r) {
  if (r->counted && c->inflight) c->inflight--;
}

static void lower(char *out, size_t cap, const char *s) {
  size_t k = 0;
  for (; k + 1 < cap && s[k]; k++)
    out[k] = (char)(s[k] >= 'A' && s[k] <= 'Z' ? s[k] - 'A' + 'a' : s[k]);
  out[k] = '\0';
}

/* The verb and resource of a request, as kube-apiserver's metrics name them ("list" "pods";
 * "create" "pods/binding"). */
static void classify_request(kc_req *r, const char *method, const char *path) {
  char seg[8][128];
  int n = 0, i = 0, at;
  const char *p = path;
  bool named, watch = strstr(path, "watch=1") || strstr(path, "watch=true");
  while (*p && n < 8) {
    size_t len;
    while (*p == '/') p++;
    len = strcspn(p, "/?");
    if (!len) break;
    snprintf(seg[n++], sizeof seg[0], "%.*s", (int)len, p);
    p += len;
    if (*p == '?') break;
  }
  at = n && !strcmp(seg[0], "api") ? 2 : n && !strcmp(seg[0], "apis") ? 3 : n;
  if (at < n && !strcmp(seg[at], "namespaces") && n - at >= 3) at += 2; /* namespaced */
  i = n - at; /* resource [name [subresource]] */
  r->resource[0] = '\0';
  if (i >= 1)
    snprintf(r->resource, sizeof r->resource, "%s%s%s", seg[at], i >= 3 ? "/" : "",
             i >= 3 ? seg[at + 2] : "");
  named = i >= 2;
  if (!strcmp(method, "GET"))
    snprintf(r->verb, sizeof r->verb, "%s", watch ? "watch" : named || !i ? "get" : "list");
  else if (!strcmp(method, "POST"))
    snprintf(r->verb, sizeof r->verb, "create");
  else
    lower(r->verb, sizeof r->verb, method);
}

/* Counts an answer in tessera_api_requests_total. */
static void count_answer(kc_client *c, const kc_req *r, long code) {
  kc_series *s = NULL;
  for (size_t i = 0; i < c->nseries && !s; i++)
    if (c->series[i].code == code && !strcmp(c->series[i].verb, r->verb) &&
        !strcmp(c->series[i].resource, r->resource))
      s = &c->series[i];
  if (!s && c->nseries < KC_METRIC_SERIES) {
    s = &c->series[c->nseries++];
    snprintf(s->verb, sizeof s->verb, "%s", r->verb);
    snprintf(s->resource, sizeof s->resource, "%s", r->resource);
    s->code = code, s->count = 0;
  }
  if (!s) { /* past the cap: one last series takes the rest */
    s = &c->series[KC_METRIC_SERIES - 1];
    snprintf(s->verb, sizeof s->verb, "other");
    snprintf(s->resource, sizeof s->resource, "other");
    s->code = 0;
  }
  s->count++;
}

ts_rc kc_client_metrics(const kc_client *c, ts_buf *out) {
  static const ts_prom_family inflight = {"tessera_api_requests_inflight",
                                          "gauge",
                                          "Requests to the API server running now (watches "
                                          "excepted).",
                                          {NULL}},
                              queued = {"tessera_api_requests_queued",
                                        "gauge",
                                        "Requests waiting for one of the " TS_STR(
                                            KC_MAX_INFLIGHT) " slots.",
                                        {NULL}},
                              total = {"tessera_api_requests_total",
                                       "counter",
                                       "Requests to the API server that ended, by verb, resource "
                                       "and HTTP status (<error>: no answer).",
                                       {"verb", "resource", "code", NULL}};
  size_t nqueued, running = kc_client_inflight(c, &nqueued);
  ts_prom p = {out, TS_OK};
  ts_prom_one(&p, &inflight, (double)running);
  ts_prom_one(&p, &queued, (double)nqueued);
  ts_prom_head(&p, &total);
  for (size_t i = 0; p.rc == TS_OK && i < c->nseries; i++) {
    const kc_series *s = &c->series[i];
    char code[16];
    snprintf(code, sizeof code, "%ld", s->code);
    ts_prom_sample(&p, &total, (const char *[]){s->verb, s->resource, s->code ? code : "<error>"},
                   (double)s->count);
  }
  return p.rc;
}

/* Completed transfers: take them out of libcurl, then call back. */
static void check_done(kc_client *c) {
  CURLMsg *m;
  int left;
  for (int k = 0; k < 2; k++)
    while ((m = curl_multi_info_read(c->mx[k].m, &left))) {
      kc_req *r = NULL;
      kc_response resp;
      long ver = 0;
      if (m->msg != CURLMSG_DONE) continue;
      curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
      curl_multi_remove_handle(c->mx[k].m, m->easy_handle);
      memset(&resp, 0, sizeof resp);
      curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &resp.status);
      curl_easy_getinfo(m->easy_handle, CURLINFO_HTTP_VERSION, &ver);
      resp.http2 = ver == CURL_HTTP_VERSION_2_0;
      /* One connection carries everything from now on, and one more may open while a
       * connection that got GOAWAY drains: with a limit of one, every new request waited until
       * the last watch on the old connection ended (33 s in the soak test; up to a watch's
       * timeoutSeconds against kube-apiserver's --goaway-chance). */
      if (resp.http2 && !c->multiplexing) {
        c->multiplexing = true;
        curl_multi_setopt(c->mx[KC_STREAMS].m, CURLMOPT_MAX_HOST_CONNECTIONS, 2L);
      }
      if (m->data.result != CURLE_OK)
        resp.error = r->too_big ? "response too large" : curl_easy_strerror(m->data.result);
      if (r->on_line && !r->cancelled) { /* the last line may lack its newline */
        flush_lines(c);
        if (r->body.len && !r->cancelled) r->on_line(r->ud, r->body.data, r->body.len);
        r->body.len = 0;
      }
      ts_buf_putc(&r->body, '\0');
      resp.body = r->body.data ? r->body.data : "";
      resp.len = r->body.len ? r->body.len - 1 : 0;
      resp.retry_after_s = r->retry_after;
      count_answer(c, r, resp.status);
      unlink_req(c, r);
      released(c, r);
      if (!r->cancelled && r->on_done) r->on_done(r->ud, &resp);
      free_req(r);
    }
}

/* An exec plugin's credential: run again once it has expired, or when forced after a 401:
 * once for each credential it gave, and then at most once in KC_EXEC_RETRY_MS (the requests
 * in flight with the old credential all get the 401). The plugin runs
 * on the loop's thread: a run is short (KC_EXEC_TIMEOUT_S at most), and nothing can be sent
 * without its answer anyway. */
static const char *exec_token(kc_client *c, bool force) {
  kc_exec *e = c->auth->exec;
  struct timespec t, m;
  uint64_t now;
  clock_gettime(CLOCK_REALTIME, &t);
  clock_gettime(CLOCK_MONOTONIC, &m); /* the loop's time is cached: a run can be long */
  now = (uint64_t)m.tv_sec * 1000 + (uint64_t)m.tv_nsec / 1000000;
  force = force && (c->exec_forced_gen != e->runs || now - c->exec_tried_ms >= KC_EXEC_RETRY_MS);
  if (!e->runs || force || kc__exec_expired(e, (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec)) {
    ts_err err;
    c->exec_tried_ms = now;
    if (kc__exec_run(e, &err) != TS_OK)
      ts_log(TS_LOG_WARN, "%s; keeping the credential it gave before", err.text);
    else
      ts_log(TS_LOG_INFO, "%s: credential renewed (%llu runs)", e->where,
             (unsigned long long)e->runs);
    if (force) c->exec_forced_gen = e->runs; /* the other 401s of the old one: not again */
  }
  ts_strlcpy(c->token, e->token, sizeof c->token);
  return c->token[0] ? c->token : NULL;
}

/* Re-reads the token file at most every 60 s (and at once when forced, after a 401). */
static const char *token(kc_client *c, bool force) {
  uint64_t now = uv_now(c->loop);
  if (c->auth->exec) return exec_token(c, force);
  if (c->auth->token_file && (force || !c->token_read_ms || now - c->token_read_ms > 60000)) {
    char buf[KC_TOKEN_MAX + 1];
    ts_err err;
    if (kc__read_token(c->auth->token_file, buf, &err) == TS_OK)
      memcpy(c->token, buf, sizeof buf);
    else /* rotation half done, or a bad file: keep the token we have */
      ts_log(TS_LOG_WARN, "%s; keeping the token read before", err.text);
    c->token_read_ms = now;
  }
  return c->token[0] ? c->token : NULL;
}

void kc__token_expired(kc_client *c) {
  token(c, true);
}

/* Gives the transfer its libcurl handle and options and adds it to its multi handle. False
 * when out of memory (the caller ends the request). */
static bool launch(kc_client *c, kc_req *r) {
  char hdr[sizeof c->token + 64];
  const char *tok;
  if (!(r->easy = curl_easy_init())) return false;
  curl_easy_setopt(r->easy, CURLOPT_URL, r->url); /* libcurl copies it */
  ts_free(r->url);
  r->url = NULL;
  curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
  curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(r->easy, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(r->easy, CURLOPT_HEADERDATA, r);
  curl_easy_setopt(r->easy, CURLOPT_HTTP_VERSION,
                   r->mx == &c->mx[KC_READS] ? (long)CURL_HTTP_VERSION_1_1
                                             : (long)CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(r->easy, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(r->easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(r->easy, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(r->easy, CURLOPT_USERAGENT, "tessera/0.1");
  /* bodies here are a few KiB: the default 64 KiB upload buffer per request made a burst of
   * bindings cost megabytes (measured with massif in the soak test) */
  curl_easy_setopt(r->easy, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
  /* a write's answer is a few KiB: thousands of writes in flight each held a 16 KiB receive
   * buffer (part of 130 MB of libcurl heap at the peak of make e2e-scale) */
  if (strcmp(r->method, "GET")) curl_easy_setopt(r->easy, CURLOPT_BUFFERSIZE, 4096L);
  curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, r->timeout_ms);
  /* Only the scheme of the server's URL, and never a redirect elsewhere. */
  curl_easy_setopt(r->easy, CURLOPT_PROTOCOLS_STR, c->https ? "https" : "http");
  curl_easy_setopt(r->easy, CURLOPT_FOLLOWLOCATION, 0L);
  kc__tls_options(c, r->easy);
  r->headers = curl_slist_append(NULL, "Accept: application/json");
  snprintf(hdr, sizeof hdr, "Content-Type: %s", r->content_type);
  if (r->upload) r->headers = curl_slist_append(r->headers, hdr);
  if ((tok = token(c, false))) { /* read at launch: a queued request gets the current token */
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s", tok);
    r->headers = curl_slist_append(r->headers, hdr);
  }
  curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
  curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, r->method);
  if (r->upload) {
    curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->upload);
    curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(r->upload));
  }
  r->queued = false;
  r->next = c->reqs;
  c->reqs = r;
  if (r->counted) c->inflight++;
  curl_multi_add_handle(r->mx->m, r->easy);
  return true;
}

/* Ends a request that never ran (out of memory at launch, or the client closing). */
static void end_unsent(kc_req *r, const char *why) {
  kc_response resp = {0};
  resp.error = why;
  resp.body = "";
  if (!r->cancelled && r->on_done) r->on_done(r->ud, &resp); /* every request ends once */
  free_req(r);
}

/* Launches queued requests while slots are free (after one ended). */
static void launch_queued(kc_client *c) {
  while (c->queue && c->inflight < KC_MAX_INFLIGHT && !c->closing) {
    kc_req *r = c->queue;
    if (!(c->queue = r->next)) c->queue_tail = NULL;
    c->nqueued--;
    r->next = NULL;
    if (r->cancelled)
      free_req(r);
    else if (!launch(c, r))
      end_unsent(r, "could not be sent (no memory)");
  }
}

/* A request; with on_line a stream that may last timeout_ms (0: the client's request timeout).
 * Watches start at once; other requests when fewer than KC_MAX_INFLIGHT run, else in order. */
static kc_req *start(kc_client *c, const char *method, const char *path, const char *body,
                     const char *content_type, kc_line_fn on_line, long timeout_ms,
                     kc_done_fn on_done, void *ud) {
  kc_req *r;
  size_t ulen = strlen(c->auth->server) + strlen(path) + 1;
  if (c->closing || !(r = ts_calloc(1, sizeof *r))) return NULL;
  ts_buf_init(&r->body, on_line ? KC_LINE_MAX : KC_BODY_MAX);
  r->c = c, r->on_line = on_line, r->on_done = on_done, r->ud = ud;
  classify_request(r, method, path);
  ts_strlcpy(r->method, method, sizeof r->method);
  ts_strlcpy(r->content_type, content_type ? content_type : "application/json",
             sizeof r->content_type);
  r->timeout_ms = timeout_ms > 0 ? timeout_ms : c->timeout_ms;
  /* reads over HTTP/1.1 on their own connections; the rest over HTTP/2 when offered */
  r->mx = !on_line && !strcmp(method, "GET") ? &c->mx[KC_READS] : &c->mx[KC_STREAMS];
  r->counted = !on_line;
  if (!(r->url = ts_malloc(ulen)) || (body && !(r->upload = ts_strdup(body)))) {
    /* without its copy libcurl would read the body from stdin */
    free_req(r);
    return NULL;
  }
  snprintf(r->url, ulen, "%s%s", c->auth->server, path);
  c->nreq++;
  if (r->counted && (c->inflight >= KC_MAX_INFLIGHT || c->queue)) {
    r->queued = true;
    if (c->queue_tail)
      c->queue_tail->next = r;
    else
      c->queue = r;
    c->queue_tail = r;
    c->nqueued++;
    return r;
  }
  if (!launch(c, r)) {
    c->nreq--;
    free_req(r);
    return NULL;
  }
  return r;
}

kc_req *kc_request(kc_client *c, const char *method, const char *path, const char *body,
                   const char *content_type, kc_done_fn on_done, void *ud) {
  return start(c, method, path, body, content_type, NULL, 0, on_done, ud);
}

kc_req *kc_stream(kc_client *c, const char *path, long timeout_ms, kc_line_fn on_line,
                  kc_done_fn on_done, void *ud) {
  return start(c, "GET", path, NULL, NULL, on_line, timeout_ms > 0 ? timeout_ms : 1, on_done, ud);
}

void kc_cancel(kc_req *r) {
  if (r) r->cancelled = true; /* the transfer is torn down when it next writes or ends */
}

void kc_client_set_timeout(kc_client *c, int64_t ms) {
  c->timeout_ms = ms > 0 ? (long)ms : KC_REQUEST_TIMEOUT_MS;
}

uint64_t kc_client_requests(const kc_client *c) {
  return c->nreq;
}

size_t kc_client_inflight(const kc_client *c, size_t *queued) {
  if (queued) *queued = c->nqueued;
  return c->inflight;
}

/* libcurl's process-wide set-up, once, before the first handle. */
static void curl_once(void) {
  static bool global;
  if (!global) curl_global_init(CURL_GLOBAL_DEFAULT), global = true;
}

kc_client *kc_client_new(uv_loop_t *loop, const kc_auth *auth, ts_err *err) {
  kc_client *c = ts_calloc(1, sizeof *c);
  if (!c) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  curl_once();
  c->loop = loop, c->auth = auth, c->timeout_ms = KC_REQUEST_TIMEOUT_MS;
  c->https = !strncasecmp(auth->server, "https://", 8);
  if (!(c->socks = ts_calloc(KC_SOCK_POOL, sizeof *c->socks))) {
    ts_free(c);
    return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  }
  if (auth->token) ts_strlcpy(c->token, auth->token, sizeof c->token); /* checked at load */
  for (int k = 0; k < 2; k++) {
    kc_multi *mx = &c->mx[k];
    if (!(mx->m = curl_multi_init())) {
      if (k) curl_multi_cleanup(c->mx[0].m);
      ts_free(c->socks);
      ts_free(c);
      return ts_err_set(err, TS_ENOMEM, "cannot start libcurl"), NULL;
    }
    mx->c = c;
    curl_multi_setopt(mx->m, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(mx->m, CURLMOPT_SOCKETDATA, mx);
    curl_multi_setopt(mx->m, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(mx->m, CURLMOPT_TIMERDATA, mx);
    /* Over HTTP/1.1 every watch holds a connection: leave room for them and for writes, and
     * queue the rest rather than opening thousands of connections. Reads take a few. */
    curl_multi_setopt(mx->m, CURLMOPT_MAX_HOST_CONNECTIONS,
                      (long)(k == KC_READS ? KC_READ_CONNECTIONS : KC_MAX_CONNECTIONS));
    if (k == KC_STREAMS) {
      curl_multi_setopt(mx->m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
      curl_multi_setopt(mx->m, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    }
    uv_timer_init(loop, &mx->timer);
    mx->timer.data = mx;
  }
  return c;
}

/* Frees the client once it is closed and no pooled socket context is still closing. */
static void client_release(kc_client *c) {
  if (!c->closed || c->socks_in_use) return;
  ts_free(c->socks);
  ts_free(c);
}

static void timer_closed(uv_handle_t *h) {
  kc_multi *mx = h->data;
  kc_client *c = mx->c;
  curl_multi_cleanup(mx->m); /* may close cached connections: their polls close later */
  if (--c->timers_open) return;
  c->closed = true;
  client_release(c);
}

void kc_client_free(kc_client *c) {
  if (!c) return;
  c->closing = true; /* no new request from here on */
  while (c->reqs) {
    kc_req *r = c->reqs;
    kc_response resp = {0};
    c->reqs = r->next;
    curl_multi_remove_handle(r->mx->m, r->easy); /* closes its sockets: CURL_POLL_REMOVE */
    resp.error = "the client was closed";
    resp.body = "";
    if (!r->cancelled && r->on_done) r->on_done(r->ud, &resp); /* every request ends once */
    free_req(r);
  }
  while (c->queue) { /* never sent */
    kc_req *r = c->queue;
    c->queue = r->next;
    end_unsent(r, "the client was closed");
  }
  c->queue_tail = NULL, c->nqueued = 0;
  c->timers_open = 2;
  for (int k = 0; k < 2; k++) {
    uv_timer_stop(&c->mx[k].timer);
    uv_close((uv_handle_t *)&c->mx[k].timer, timer_closed);
  }
}

void kc_api_opts_default(kc_api_opts *o) {
  o->request_timeout_ms = KC_REQUEST_TIMEOUT_MS;
  o->event_interval_ms = KC_EVENT_INTERVAL_MS;
}

/* ---- one synchronous GET (a command's client of a running tessera) ------------------------- */

static size_t collect(char *p, size_t size, size_t n, void *ud) {
  return ts_buf_append(ud, p, size * n) == TS_OK ? size * n : 0;
}

ts_rc kc_get_once(const char *url, const char *token_file, const char *ca_file, bool insecure,
                  long timeout_s, ts_buf *out, long *status, ts_err *err) {
  char auth[KC_TOKEN_MAX + 32], token[KC_TOKEN_MAX + 1];
  struct curl_slist *headers = NULL;
  CURLcode rc;
  CURL *h;
  *status = 0;
  if (token_file) { /* read as a kubeconfig's tokenFile is read */
    ts_rc trc = kc__read_token(token_file, token, err);
    if (trc != TS_OK) return trc;
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    memset(token, 0, sizeof token);
  }
  curl_once();
  if (!(h = curl_easy_init())) return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (token_file) {
    headers = curl_slist_append(headers, auth);
    memset(auth, 0, sizeof auth);
  }
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, timeout_s);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  if (ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
  if (insecure) {
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK) return ts_err_set(err, TS_EIO, "%s", curl_easy_strerror(rc));
  return TS_OK;
}
