/* cmd/health.c - /healthz, /readyz and /metrics on a small libuv HTTP server: one
 * request per connection, answered and closed. It must answer the kubelet's probes whatever
 * other clients do (a liveness probe that fails restarts the scheduler):
 *   - a request's head must arrive within HEALTH_HEAD_MS of connecting, and a connection lives
 *     at most HEALTH_IDLE_MS (its answer written or not); requests over 8 KiB are refused;
 *   - at most HEALTH_CONN_MAX connections are open, at most HEALTH_PER_CLIENT from one address;
 *   - a new connection is always taken: past either bound, the oldest connection (of that
 *     address, else of all) is closed to make room. A probe sends its request at once and is
 *     answered within the loop turn that reads it, so a flood of half-sent requests (which
 *     once took every slot, refreshed before the deadline, and failed 18 of 20 probes) only
 *     closes its own older connections.
 * With TLS (kc_tls_server) the same runs over a TLS session in memory: ciphertext in, plaintext
 * into the request, the answer encrypted out. With a reviewer, /metrics answers only a bearer
 * token the API server authenticates and authorizes (kc_reviewer: 401, 403 as
 * controller-runtime's secure metrics serving answers); /healthz, /livez and /readyz stay open
 * to all, as kube-scheduler's secure port keeps them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"

#define REQ_MAX 8192

struct health_server {
  uv_tcp_t server;  /* listening socket */
  health_opts o;    /* callbacks, TLS, reviewer */
  int open;         /* handles not yet closed (and the server) */
  int live;         /* connections not closing */
  ts_list conns;    /* those, oldest first */
  uint64_t refused; /* connections closed to make room */
  bool stopping;    /* health_server_stop was called */
};

typedef struct conn {
  uv_tcp_t tcp;      /* the connection */
  uv_timer_t idle;   /* closes it when the request is slow, or the connection too old */
  int handles;       /* of tcp and idle, not yet closed */
  health_server *h;  /* server */
  ts_list link;      /* in h->conns while not closing */
  char client[64];   /* the peer's address, without its port */
  char req[REQ_MAX]; /* request so far (plaintext) */
  size_t n;          /* bytes */
  kc_tls_conn *tls;  /* the TLS session, or NULL */
  char raw[4096];    /* ciphertext read */
  int writes;        /* writes under way */
  bool answered;     /* one answer per connection */
  bool waiting;      /* for the reviewer's verdict: not freed before it comes */
  enum { ASK_METRICS, ASK_EXPLAIN, ASK_PENDING } asked; /* what the verdict is for */
  char ns[64];      /* /explain/NS/NAME: the pod; pendingworkloads: the LocalQueue's ("" for a
                       ClusterQueue's) */
  char name[254];   /* the pod's, or the queue's */
  char version[16]; /* pendingworkloads: the API version asked for */
  long long limit, offset; /* pendingworkloads: ?limit=&offset= (0, 0: Kueue's defaults) */
  bool closing;            /* conn_close was called */
} conn;

typedef struct outgoing {
  uv_write_t w;
  conn *c;
  bool last; /* the connection closes once it is written */
  char data[];
} outgoing;

static void server_release(health_server *h);

static void conn_free(conn *c) {
  health_server *h = c->h;
  kc_tls_conn_free(c->tls);
  ts_free(c);
  h->open--;
  server_release(h);
}

static void handle_closed(uv_handle_t *hd) {
  conn *c = hd->data;
  if (--c->handles || c->waiting || c->writes) return;
  conn_free(c);
}

static void conn_close(conn *c) {
  if (c->closing) return;
  c->closing = true;
  ts_list_remove(&c->link);
  c->h->live--;
  uv_timer_stop(&c->idle);
  uv_close((uv_handle_t *)&c->idle, handle_closed);
  uv_close((uv_handle_t *)&c->tcp, handle_closed);
}

static void on_idle(uv_timer_t *t) {
  conn_close(t->data);
}

static void written(uv_write_t *w, int status) {
  outgoing *o = w->data;
  conn *c = o->c;
  bool last = o->last;
  (void)status;
  ts_free(o);
  c->writes--;
  if (last || status < 0) conn_close(c);
  if (c->closing && !c->handles && !c->waiting && !c->writes) conn_free(c);
}

/* Sends p[0..n) (copied); last: closes the connection once written. */
static void send_bytes(conn *c, const char *p, size_t n, bool last) {
  outgoing *o;
  uv_buf_t b;
  if (c->closing) return;
  if (!n) {
    if (last) conn_close(c);
    return;
  }
  if (!(o = ts_malloc(sizeof *o + n))) {
    conn_close(c);
    return;
  }
  memcpy(o->data, p, n);
  o->c = c, o->last = last, o->w.data = o;
  b = uv_buf_init(o->data, (unsigned)n);
  c->writes++;
  if (uv_write(&o->w, (uv_stream_t *)&c->tcp, &b, 1, written)) {
    c->writes--;
    ts_free(o);
    conn_close(c);
  }
}

/* What the TLS session has to send; last: the connection closes after it. */
static void send_tls(conn *c, bool last) {
  size_t n;
  char *p = kc_tls_conn_output(c->tls, &n);
  send_bytes(c, p, n, last);
  free(p);
}

static const char *status_text(int code) {
  switch (code) {
  case 200:
    return "OK";
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 500:
    return "Internal Server Error";
  case 503:
    return "Service Unavailable";
  default:
    return "Not Found";
  }
}

static void answer(conn *c, int code, const char *type, const char *body, size_t len) {
  size_t cap = len + 256, n;
  char *text;
  c->answered = true;
  if (c->closing) return;
  if (!(text = malloc(cap))) {
    conn_close(c);
    return;
  }
  n = (size_t)snprintf(text, cap,
                       "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                       "%sConnection: close\r\n\r\n",
                       code, status_text(code), type, len,
                       code == 401 ? "WWW-Authenticate: Bearer\r\n" : "");
  memcpy(text + n, body, len);
  n += len;
  uv_timer_stop(&c->idle); /* from now on the connection's whole life is the bound */
  uv_timer_start(&c->idle, on_idle, HEALTH_IDLE_MS - HEALTH_HEAD_MS, 0);
  if (c->tls) {
    if (kc_tls_conn_write(c->tls, text, n))
      conn_close(c);
    else
      send_tls(c, true);
  } else {
    send_bytes(c, text, n, true);
  }
  free(text);
}

static void answer_metrics(conn *c) {
  ts_buf b;
  ts_buf_init(&b, 16 << 20);
  c->h->o.metrics(c->h->o.ud, &b);
  answer(c, 200, "text/plain; version=0.0.4", b.data ? b.data : "", b.len);
  ts_buf_free(&b);
}

static void answer_explain(conn *c) {
  ts_buf b;
  int status = 200;
  ts_buf_init(&b, 16 << 20);
  c->h->o.explain(c->h->o.ud, c->ns, c->name, &b, &status);
  answer(c, status, "application/json", b.data ? b.data : "", b.len);
  ts_buf_free(&b);
}

static void answer_pending(conn *c) {
  ts_buf b;
  int status = 200;
  char version[64];
  snprintf(version, sizeof version, "visibility.kueue.x-k8s.io/%s", c->version);
  ts_buf_init(&b, 64 << 20);
  c->h->o.pending(c->h->o.ud, version, c->ns, c->name, c->limit, c->offset, &b, &status);
  answer(c, status, "application/json", b.data ? b.data : "", b.len);
  ts_buf_free(&b);
}

/* A DNS label (namespaces) or subdomain (names) as the API server requires of names. */
static bool dns_name(const char *s, size_t n, bool subdomain) {
  if (!n || n > (subdomain ? 253u : 63u)) return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
          (subdomain && s[i] == '.')))
      return false;
  return true;
}

/* Kueue's visibility API: /apis/visibility.kueue.x-k8s.io/{v1beta1,v1beta2}/clusterqueues/NAME/
 * pendingworkloads or .../namespaces/NS/localqueues/NAME/pendingworkloads, with ?limit=N and
 * ?offset=N (other parameters ignored, as the API server's option decoding ignores unknown
 * ones). Fills c; false for any other path, or a limit or offset that is not a number (an
 * answer of 400 is made by the caller). *bad: the query was the problem. */
static bool pending_path(conn *c, char *path, bool *bad) {
  static const char prefix[] = "/apis/visibility.kueue.x-k8s.io/";
  char *q = strchr(path, '?'), *p = path + sizeof prefix - 1, *parts[6];
  int n = 0;
  *bad = false;
  if (strncmp(path, prefix, sizeof prefix - 1)) return false;
  if (q) *q++ = '\0';
  for (char *t = p; n < 6; n++) { /* split the rest at '/' */
    parts[n] = t;
    if (!(t = strchr(t, '/'))) {
      n++;
      break;
    }
    *t++ = '\0';
  }
  if (strcmp(parts[0], "v1beta1") && strcmp(parts[0], "v1beta2")) return false;
  if (n == 4 && !strcmp(parts[1], "clusterqueues") && !strcmp(parts[3], "pendingworkloads") &&
      dns_name(parts[2], strlen(parts[2]), true)) {
    c->ns[0] = '\0';
  } else if (n == 6 && !strcmp(parts[1], "namespaces") && !strcmp(parts[3], "localqueues") &&
             !strcmp(parts[5], "pendingworkloads") && dns_name(parts[2], strlen(parts[2]), false) &&
             dns_name(parts[4], strlen(parts[4]), true)) {
    memcpy(c->ns, parts[2], strlen(parts[2]) + 1);
  } else {
    return false;
  }
  memcpy(c->name, parts[n == 4 ? 2 : 4], strlen(parts[n == 4 ? 2 : 4]) + 1);
  memcpy(c->version, parts[0], strlen(parts[0]) + 1);
  c->limit = c->offset = 0;
  for (char *kv = q; kv && *kv;) {
    char *amp = strchr(kv, '&'), *end;
    long long v;
    if (amp) *amp = '\0';
    if (!strncmp(kv, "limit=", 6) || !strncmp(kv, "offset=", 7)) {
      const char *num = strchr(kv, '=') + 1;
      v = strtoll(num, &end, 10);
      if (!*num || *end) return *bad = true, false;
      *(kv[0] == 'l' ? &c->limit : &c->offset) = v;
    }
    kv = amp ? amp + 1 : NULL;
  }
  /* the path again, without the query, for the access review */
  for (int i = 0; i + 1 < n; i++) parts[i][strlen(parts[i])] = '/';
  return true;
}

/* /explain/NS/NAME: the namespace and name, each a DNS label or subdomain as the API server
 * requires of them; false for any other path. */
static bool explain_path(const char *path, char *ns, size_t nscap, char *name, size_t namecap) {
  const char *p = path + 9, *slash;
  size_t nl, ml;
  if (strncmp(path, "/explain/", 9) || !(slash = strchr(p, '/'))) return false;
  nl = (size_t)(slash - p), ml = strlen(slash + 1);
  if (nl >= nscap || ml >= namecap || !dns_name(p, nl, false) || !dns_name(slash + 1, ml, true))
    return false;
  memcpy(ns, p, nl), ns[nl] = '\0';
  memcpy(name, slash + 1, ml), name[ml] = '\0';
  return true;
}

/* The reviewer's verdict on a scrape of /metrics, a read of /explain or of pendingworkloads. */
static void verdict(void *ud, int code, const char *message) {
  conn *c = ud;
  char text[400];
  int n;
  c->waiting = false;
  if (c->closing) { /* gone meanwhile (too slow, or the server stopped) */
    if (!c->handles && !c->writes) conn_free(c);
    return;
  }
  if (code == 200 && !c->h->stopping)
    return c->asked == ASK_EXPLAIN   ? answer_explain(c)
           : c->asked == ASK_PENDING ? answer_pending(c)
                                     : answer_metrics(c);
  if (code == 200) code = 503, message = "shutting down";
  n = snprintf(text, sizeof text, "%s\n", message);
  answer(c, code, "text/plain", text, (size_t)n < sizeof text ? (size_t)n : 0);
}

/* The first blank line of req[0..n) (the end of the head), or NULL. */
static const char *head_end(const char *req, size_t n) {
  for (size_t i = 0; i + 1 < n; i++)
    if (req[i] == '\n' &&
        (req[i + 1] == '\n' || (req[i + 1] == '\r' && i + 2 < n && req[i + 2] == '\n')))
      return req + i;
  return NULL;
}

int health_parse_bearer(const char *req, size_t n, char *token, size_t cap) {
  const char *end = head_end(req, n), *p = req, *eol, *v;
  if (cap) token[0] = '\0';
  if (!end) return -1;
  for (; p < end; p = eol + 1) {
    if (!(eol = memchr(p, '\n', (size_t)(end - p) + 1))) break;
    if ((size_t)(eol - p) < 14 || strncasecmp(p, "authorization:", 14)) continue;
    for (v = p + 14; v < eol && (*v == ' ' || *v == '\t'); v++) {
    }
    if ((size_t)(eol - v) < 7 || strncasecmp(v, "bearer ", 7)) return -1;
    for (v += 7; v < eol && *v == ' '; v++) {
    }
    const char *e = eol;
    while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
    if (e == v || (size_t)(e - v) >= cap) return -1;
    for (const char *c = v; c < e; c++) /* RFC 6750's token68: visible ASCII only */
      if ((unsigned char)*c < 0x21 || (unsigned char)*c > 0x7e) return -1;
    memcpy(token, v, (size_t)(e - v));
    token[e - v] = '\0';
    return 0;
  }
  return -1;
}

int health_parse_request(const char *req, size_t n, char *path, size_t cap) {
  const char *end = head_end(req, n), *p, *q;
  if (cap) path[0] = '\0';
  if (!end) return n >= REQ_MAX - 1 ? HEALTH_REQ_TOO_LARGE : HEALTH_REQ_INCOMPLETE;
  if ((size_t)(end - req) < 4 || memcmp(req, "GET ", 4)) return HEALTH_REQ_OK; /* not a GET */
  for (p = q = req + 4; q < end && *q != ' ' && *q != '\r' && *q != '\n' && *q; q++) {
  }
  if ((size_t)(q - p) < cap) memcpy(path, p, (size_t)(q - p)), path[q - p] = '\0';
  return HEALTH_REQ_OK;
}

static void route(conn *c) {
  char path[400] = "";
  health_parse_request(c->req, c->n, path, sizeof path);
  if (c->h->stopping) { /* what the callbacks read may be gone */
    answer(c, 503, "text/plain", "shutting down\n", 14);
  } else if (!strcmp(path, "/healthz") || !strcmp(path, "/livez")) {
    answer(c, 200, "text/plain", "ok\n", 3);
  } else if (!strcmp(path, "/readyz")) {
    char why[512] = "", text[600];
    bool ok = !c->h->o.ready || c->h->o.ready(c->h->o.ud, why, sizeof why);
    int n = snprintf(text, sizeof text, ok ? "ok\n" : "not ready: %s\n", why);
    answer(c, ok ? 200 : 503, "text/plain", text, (size_t)n < sizeof text ? (size_t)n : 0);
  } else if (!strcmp(path, "/metrics") && c->h->o.metrics && c->h->o.reviewer) {
    char token[REQ_MAX];
    if (health_parse_bearer(c->req, c->n, token, sizeof token)) token[0] = '\0';
    c->waiting = true; /* the verdict may come now or after a round trip */
    kc_reviewer_check(c->h->o.reviewer, token, "get", path, verdict, c);
    memset(token, 0, sizeof token);
  } else if (!strcmp(path, "/metrics") && c->h->o.metrics) {
    answer_metrics(c);
  } else if (c->h->o.pending && c->h->o.metrics && !strncmp(path, "/apis/", 6)) {
    bool bad;
    if (!pending_path(c, path, &bad)) {
      if (bad)
        answer(c, 400, "text/plain", "limit and offset must be integers\n", 34);
      else
        answer(c, 404, "text/plain", "not found\n", 10);
    } else if (c->h->o.reviewer) { /* as Kueue's: get on the queue's pendingworkloads */
      char token[REQ_MAX];
      if (health_parse_bearer(c->req, c->n, token, sizeof token)) token[0] = '\0';
      c->asked = ASK_PENDING, c->waiting = true;
      kc_reviewer_check(c->h->o.reviewer, token, "get", path, verdict, c);
      memset(token, 0, sizeof token);
    } else {
      answer_pending(c);
    }
  } else if (c->h->o.explain && c->h->o.metrics &&
             explain_path(path, c->ns, sizeof c->ns, c->name, sizeof c->name)) {
    c->asked = ASK_EXPLAIN;
    if (c->h->o.reviewer) { /* who may get the pod may read why it waits */
      char token[REQ_MAX], pod[400];
      if (health_parse_bearer(c->req, c->n, token, sizeof token)) token[0] = '\0';
      snprintf(pod, sizeof pod, "/api/v1/namespaces/%s/pods/%s", c->ns, c->name);
      c->waiting = true;
      kc_reviewer_check(c->h->o.reviewer, token, "get", pod, verdict, c);
      memset(token, 0, sizeof token);
    } else {
      answer_explain(c);
    }
  } else {
    answer(c, 404, "text/plain", "not found\n", 10);
  }
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *b) {
  conn *c = h->data;
  (void)suggested;
  if (c->tls) {
    b->base = c->raw, b->len = sizeof c->raw;
  } else {
    b->base = c->req + c->n;
    b->len = REQ_MAX - 1 - c->n;
  }
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  conn *c = s->data;
  (void)b;
  if (c->answered) return;
  if (n < 0 || (n == 0 && c->n == REQ_MAX - 1)) {
    conn_close(c);
    return;
  }
  if (c->tls) { /* decrypt into the request; the handshake's answers go out */
    n = kc_tls_conn_feed(c->tls, c->raw, (size_t)n, c->req + c->n, REQ_MAX - 1 - c->n);
    send_tls(c, n < 0);
    if (n < 0) return;
  }
  c->n += (size_t)n;
  c->req[c->n] = '\0';
  switch (health_parse_request(c->req, c->n, NULL, 0)) {
  case HEALTH_REQ_OK:
    uv_read_stop(s);
    route(c);
    break;
  case HEALTH_REQ_TOO_LARGE:
    uv_read_stop(s);
    answer(c, 404, "text/plain", "request too large\n", 18);
    break;
  default:
    break;
  }
}

/* Makes room for one more connection from client: closes the oldest of its own when it has
 * HEALTH_PER_CLIENT, else the oldest of all when HEALTH_CONN_MAX are open. O(connections). */
static void make_room(health_server *h, const char *client) {
  ts_list *it;
  conn *oldest = NULL;
  int mine = 0;
  ts_list_foreach(it, &h->conns) {
    conn *c = ts_container_of(it, conn, link);
    if (strcmp(c->client, client)) continue;
    if (!oldest) oldest = c;
    mine++;
  }
  if (mine < HEALTH_PER_CLIENT) {
    oldest = NULL;
    if (h->live >= HEALTH_CONN_MAX) oldest = ts_container_of(h->conns.next, conn, link);
  }
  if (!oldest) return;
  h->refused++;
  conn_close(oldest);
}

static void peer_address(conn *c) {
  struct sockaddr_storage sa;
  int len = sizeof sa;
  c->client[0] = '\0';
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &len)) return;
  if (sa.ss_family == AF_INET6)
    uv_ip6_name((struct sockaddr_in6 *)&sa, c->client, sizeof c->client);
  else
    uv_ip4_name((struct sockaddr_in *)&sa, c->client, sizeof c->client);
}

static void on_connection(uv_stream_t *server, int status) {
  health_server *h = server->data;
  conn *c;
  if (status < 0 || !(c = ts_calloc(1, sizeof *c))) return;
  c->h = h, c->handles = 2;
  h->open++, h->live++;
  if (h->o.tls && !(c->tls = kc_tls_conn_new(h->o.tls))) {
    ts_free(c);
    h->open--, h->live--;
    return;
  }
  ts_list_insert_tail(&h->conns, &c->link);
  uv_tcp_init(server->loop, &c->tcp);
  uv_timer_init(server->loop, &c->idle);
  c->tcp.data = c->idle.data = c;
  if (uv_accept(server, (uv_stream_t *)&c->tcp) || h->stopping) {
    conn_close(c);
    return;
  }
  peer_address(c);
  ts_list_remove(&c->link), h->live--; /* not its own victim */
  make_room(h, c->client);
  ts_list_insert_tail(&h->conns, &c->link), h->live++;
  uv_timer_start(&c->idle, on_idle, HEALTH_HEAD_MS, 0);
  uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, on_read);
}

static void server_closed(uv_handle_t *hd);

health_server *health_server_start(uv_loop_t *loop, const health_opts *o, ts_err *err) {
  health_server *h = ts_calloc(1, sizeof *h);
  struct sockaddr_storage sa;
  const char *addr = o->addr;
  int port = o->port, rc;
  if (!h) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  h->o = *o;
  ts_list_init(&h->conns);
  if (uv_ip4_addr(addr && *addr ? addr : "0.0.0.0", port, (struct sockaddr_in *)&sa) &&
      uv_ip6_addr(addr, port, (struct sockaddr_in6 *)&sa)) {
    ts_free(h);
    return ts_err_set(err, TS_EINVAL, "\"%s\" is not an IP address", addr), NULL;
  }
  uv_tcp_init(loop, &h->server);
  h->server.data = h;
  if ((rc = uv_tcp_bind(&h->server, (struct sockaddr *)&sa, 0)) ||
      (rc = uv_listen((uv_stream_t *)&h->server, 64, on_connection))) {
    ts_err_set(err, TS_EIO, "cannot listen on %s port %d: %s", addr, port, uv_strerror(rc));
    h->stopping = true, h->open = 1;
    uv_close((uv_handle_t *)&h->server, server_closed); /* frees h */
    return NULL;
  }
  return h;
}

/* Frees h once it is stopped, its socket closed and no connection is left. */
static void server_release(health_server *h) {
  if (h->stopping && h->open == 0) ts_free(h);
}

static void server_closed(uv_handle_t *hd) {
  health_server *h = hd->data;
  h->open--; /* the listening socket counts as one */
  server_release(h);
}

void health_server_stop(health_server *h) {
  if (!h) return;
  h->stopping = true;
  h->open++;
  uv_close((uv_handle_t *)&h->server, server_closed);
}

uint64_t health_server_refused(const health_server *h) {
  return h ? h->refused : 0;
}
