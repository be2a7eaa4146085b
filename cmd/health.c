/* cmd/health.c - /healthz, /readyz and /metrics on a small libuv HTTP server: one
 * request per connection, answered and closed. Requests over 8 KiB are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

#define REQ_MAX 8192

struct health_server {
  uv_tcp_t server;                        /* listening socket */
  bool (*ready)(void *ud);                /* /readyz */
  void (*metrics)(void *ud, ts_buf *out); /* /metrics */
  void *ud;                               /* for both */
};

typedef struct conn {
  uv_tcp_t tcp;      /* the connection */
  health_server *h;  /* server */
  char req[REQ_MAX]; /* request so far */
  size_t n;          /* bytes */
  uv_write_t w;      /* the answer */
  char *answer;      /* owned */
  bool answered;     /* one answer per connection */
} conn;

static void conn_closed(uv_handle_t *h) {
  conn *c = h->data;
  free(c->answer);
  ts_free(c);
}

static void written(uv_write_t *w, int status) {
  conn *c = w->data;
  (void)status;
  uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void answer(conn *c, int code, const char *type, const char *body, size_t len) {
  size_t cap = len + 256;
  uv_buf_t b;
  c->answered = true;
  if (!(c->answer = malloc(cap))) {
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
    return;
  }
  b.len = (size_t)snprintf(c->answer, cap,
                           "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                           "Connection: close\r\n\r\n",
                           code,
                           code == 200   ? "OK"
                           : code == 503 ? "Service Unavailable"
                                         : "Not Found",
                           type, len);
  memcpy(c->answer + b.len, body, len);
  b.len += len;
  b.base = c->answer;
  c->w.data = c;
  uv_write(&c->w, (uv_stream_t *)&c->tcp, &b, 1, written);
}

static void route(conn *c) {
  char path[256] = "";
  sscanf(c->req, "GET %255s", path);
  if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
    answer(c, 200, "text/plain", "ok\n", 3);
  } else if (!strcmp(path, "/readyz")) {
    bool ok = !c->h->ready || c->h->ready(c->h->ud);
    answer(c, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "not ready: informers not synced\n",
           ok ? 3 : 32);
  } else if (!strcmp(path, "/metrics") && c->h->metrics) {
    ts_buf b;
    ts_buf_init(&b, 16 << 20);
    c->h->metrics(c->h->ud, &b);
    answer(c, 200, "text/plain; version=0.0.4", b.data ? b.data : "", b.len);
    ts_buf_free(&b);
  } else {
    answer(c, 404, "text/plain", "not found\n", 10);
  }
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  conn *c = h->data;
  (void)suggested;
  b->base = c->req + c->n;
  b->len = REQ_MAX - 1 - c->n;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  conn *c = s->data;
  (void)b;
  if (c->answered) return;
  if (n < 0 || (n == 0 && c->n == REQ_MAX - 1)) {
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
    return;
  }
  c->n += (size_t)n;
  c->req[c->n] = '\0';
  if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n")) {
    uv_read_stop(s);
    route(c);
  } else if (c->n == REQ_MAX - 1) {
    uv_read_stop(s);
    answer(c, 404, "text/plain", "request too large\n", 18);
  }
}

static void on_connection(uv_stream_t *server, int status) {
  health_server *h = server->data;
  conn *c;
  if (status < 0 || !(c = ts_calloc(1, sizeof *c))) return;
  c->h = h;
  uv_tcp_init(server->loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(server, (uv_stream_t *)&c->tcp) == 0)
    uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, on_read);
  else
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void server_closed(uv_handle_t *hd);

health_server *health_server_start(uv_loop_t *loop, const char *addr, int port,
                                   bool (*ready)(void *ud), void (*metrics)(void *ud, ts_buf *out),
                                   void *ud, ts_err *err) {
  health_server *h = ts_calloc(1, sizeof *h);
  struct sockaddr_storage sa;
  int rc;
  if (!h) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  h->ready = ready, h->metrics = metrics, h->ud = ud;
  if (uv_ip4_addr(addr && *addr ? addr : "0.0.0.0", port, (struct sockaddr_in *)&sa) &&
      uv_ip6_addr(addr, port, (struct sockaddr_in6 *)&sa)) {
    ts_free(h);
    return ts_err_set(err, TS_EINVAL, "healthAddress: \"%s\" is not an IP address", addr), NULL;
  }
  uv_tcp_init(loop, &h->server);
  h->server.data = h;
  if ((rc = uv_tcp_bind(&h->server, (struct sockaddr *)&sa, 0)) ||
      (rc = uv_listen((uv_stream_t *)&h->server, 64, on_connection))) {
    ts_err_set(err, TS_EIO, "healthAddress %s:%d: %s", addr, port, uv_strerror(rc));
    uv_close((uv_handle_t *)&h->server, server_closed); /* frees h */
    return NULL;
  }
  return h;
}

static void server_closed(uv_handle_t *hd) {
  ts_free(hd->data);
}

void health_server_stop(health_server *h) {
  if (h) uv_close((uv_handle_t *)&h->server, server_closed);
}
