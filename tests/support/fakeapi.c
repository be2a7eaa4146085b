/* tests/support/fakeapi.c - the fake kube-apiserver (see fakeapi.h). One accepting thread,
 * one thread per connection (blocking OpenSSL), one mutex over the store and the log, and a
 * condition variable that wakes watch streams when something changes. */
#define _GNU_SOURCE /* strcasestr */
#include "input/input.h"
#include "tests/support/fakeapi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <nghttp2/nghttp2.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ts.h"
#include "config/config.h"

#define MAX_CONNS 128

typedef struct obj {
  char group[96], resource[64], ns[128], name[256]; /* where it lives */
  json_t *json;                                     /* the object */
} obj;

typedef struct hist {
  long rv;       /* resourceVersion of the change */
  char type[16]; /* ADDED / MODIFIED / DELETED */
  char group[96], resource[64], ns[128];
  json_t *json; /* the object after (or before, for DELETED) */
} hist;

typedef struct fault {
  char method[16], prefix[512]; /* what it matches */
  int status, times;            /* answer (FA_LOST: served, answer lost), how many more */
  char message[256];            /* Status message */
  json_t *body;                 /* the whole answer body instead (new reference), or NULL */
  int delay_ms;                 /* fa_delay: answer normally, this much later */
} fault;

/* A paginated list: every page of one list comes from the store as it was at the first page,
 * with that page's resourceVersion, as the real API server serves continue tokens from etcd
 * at one revision (pages of the live store let a deletion between two pages go unseen). */
typedef struct snapshot {
  long id;       /* in the continue token "c<id>o<offset>" */
  long rv;       /* the store's resourceVersion at the first page */
  json_t *items; /* every object of the list then */
} snapshot;

#define MAX_SNAPS 64 /* lists being paged at once; the oldest is forgotten past it */

struct fa_server {
  int lfd, port;                  /* listening socket */
  SSL_CTX *ssl;                   /* TLS */
  char dir[256], kubeconfig[300]; /* temp files */
  char token[128];                /* accepted bearer token */
  pthread_t accept_thread;        /* accepts */
  pthread_mutex_t mu;             /* everything below */
  pthread_cond_t changed;         /* the store changed */
  bool stopping;                  /* fa_stop was called */
  int conns;                      /* connection threads alive */
  int accepted;                   /* connections accepted so far */
  int fds[MAX_CONNS];             /* their sockets (-1 free) */
  TS_VEC(obj) objs;               /* the store */
  TS_VEC(hist) history;           /* changes, oldest first */
  long rv;                        /* last resourceVersion */
  long compacted;                 /* changes up to this rv are forgotten */
  TS_VEC(fault) faults;           /* scripted answers */
  ts_buf log;                     /* request log */
  time_t started;                 /* for the lifetime bound */
  int lifetime_s;                 /* FA_LIFETIME_S unless fa_set_lifetime */
  int misbound;                   /* bindings of a bound pod to another node */
  bool http2;                     /* offer h2 in ALPN */
  int goaway_after;               /* HTTP/2: GOAWAY after this many more requests (0: never) */
  json_t *users;                  /* fa_add_user: token -> {username, allow} */
  TS_VEC(snapshot) snaps;         /* paginated lists being read */
  long next_snap;                 /* id of the next one */
};

/* ---- TLS material ------------------------------------------------------------------------- */

static EVP_PKEY *new_key(void) {
  return EVP_EC_gen("P-256");
}

static X509 *new_cert(EVP_PKEY *key, EVP_PKEY *signer, X509 *issuer, const char *cn, bool ca) {
  X509 *x = X509_new();
  X509V3_CTX ctx;
  X509_EXTENSION *ext;
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), ca ? 1 : 2);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 86400);
  X509_set_pubkey(x, key);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                             (const unsigned char *)cn, -1, -1, 0);
  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : X509_get_subject_name(x));
  X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
  ext =
      X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
  if (!ca) {
    ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  } else {
    ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
  }
  X509_sign(x, signer, EVP_sha256());
  return x;
}

static bool tls_setup(fa_server *s) {
  EVP_PKEY *cak = new_key(), *k = new_key();
  X509 *ca = cak ? new_cert(cak, cak, NULL, "fake-apiserver-ca", true) : NULL;
  X509 *crt = k && ca ? new_cert(k, cak, ca, "127.0.0.1", false) : NULL;
  char path[400];
  FILE *f;
  bool ok = false;
  if (!crt) goto out;
  snprintf(path, sizeof path, "%s/ca.crt", s->dir);
  if (!(f = fopen(path, "w"))) goto out;
  PEM_write_X509(f, ca);
  fclose(f);
  s->ssl = SSL_CTX_new(TLS_server_method());
  if (!s->ssl || SSL_CTX_use_certificate(s->ssl, crt) != 1 ||
      SSL_CTX_use_PrivateKey(s->ssl, k) != 1)
    goto out;
  ok = true;
out:
  X509_free(ca), X509_free(crt), EVP_PKEY_free(cak), EVP_PKEY_free(k);
  return ok;
}

/* ---- helpers ----------------------------------------------------------------------------------
 */

static void resource_of(const char *kind, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = kind; *p && n + 3 < cap; p++)
    out[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
  out[n] = '\0';
  snprintf(out + n, cap - n, "%s", n && out[n - 1] == 's' ? "es" : "s");
}

static void group_of(const char *api_version, char *out, size_t cap) {
  const char *slash = strchr(api_version, '/');
  snprintf(out, cap, "%.*s", slash ? (int)(slash - api_version) : 0, api_version);
}

static json_t *status_body(int code, const char *reason, const char *message) {
  return json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                   "metadata", "status", "Failure", "message", message, "reason", reason, "code",
                   code);
}

static const char *reason_of(int code) {
  switch (code) {
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 404:
    return "NotFound";
  case 409:
    return "Conflict";
  case 410:
    return "Expired";
  case 422:
    return "Invalid";
  case 429:
    return "TooManyRequests";
  default:
    return code >= 500 ? "InternalError" : "BadRequest";
  }
}

static obj *find(fa_server *s, const char *group, const char *resource, const char *ns,
                 const char *name) {
  for (size_t i = 0; i < s->objs.n; i++) {
    obj *o = &s->objs.v[i];
    if (!strcmp(o->group, group) && !strcmp(o->resource, resource) && !strcmp(o->ns, ns) &&
        !strcmp(o->name, name))
      return o;
  }
  return NULL;
}

/* Records a change and wakes watches. The caller holds the lock; json is borrowed. */
static void record(fa_server *s, const char *type, const obj *o, json_t *json) {
  hist h;
  memset(&h, 0, sizeof h);
  h.rv = s->rv;
  snprintf(h.type, sizeof h.type, "%s", type);
  snprintf(h.group, sizeof h.group, "%s", o->group);
  snprintf(h.resource, sizeof h.resource, "%s", o->resource);
  snprintf(h.ns, sizeof h.ns, "%s", o->ns);
  h.json = json_deep_copy(json);
  ts_vec_push(&s->history, h);
  pthread_cond_broadcast(&s->changed);
}

/* Stores json (stolen) as group/resource/ns/name with a new resourceVersion. */
static json_t *store(fa_server *s, const char *group, const char *resource, const char *ns,
                     const char *name, json_t *json) {
  obj *o = find(s, group, resource, ns, name);
  json_t *md = json_object_get(json, "metadata");
  char rv[32], uid[64];
  bool added = !o;
  if (!json_is_object(md)) json_object_set_new(json, "metadata", md = json_object());
  snprintf(rv, sizeof rv, "%ld", ++s->rv);
  json_object_set_new(md, "resourceVersion", json_string(rv));
  if (!json_object_get(md, "uid")) {
    snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012ld", s->rv);
    json_object_set_new(md, "uid", json_string(uid));
  }
  if (!json_object_get(md, "creationTimestamp"))
    json_object_set_new(md, "creationTimestamp", json_string("2026-12-03T00:00:00Z"));
  if (!o) {
    obj n;
    memset(&n, 0, sizeof n);
    snprintf(n.group, sizeof n.group, "%s", group);
    snprintf(n.resource, sizeof n.resource, "%s", resource);
    snprintf(n.ns, sizeof n.ns, "%s", ns);
    snprintf(n.name, sizeof n.name, "%s", name);
    ts_vec_push(&s->objs, n);
    o = &s->objs.v[s->objs.n - 1];
  } else {
    json_decref(o->json);
  }
  o->json = json;
  record(s, added ? "ADDED" : "MODIFIED", o, json);
  return json;
}

static void remove_obj(fa_server *s, obj *o) {
  size_t i = (size_t)(o - s->objs.v);
  s->rv++;
  record(s, "DELETED", o, o->json);
  json_decref(o->json);
  memmove(&s->objs.v[i], &s->objs.v[i + 1], (s->objs.n - i - 1) * sizeof *o);
  s->objs.n--;
}

/* ---- requests ---------------------------------------------------------------------------------
 */

typedef struct req {
  char method[16], path[2048], query[2048];
  char auth[512];
  char *body;
  size_t len;
} req;

typedef struct route {
  char group[96], version[32], resource[64], ns[128], name[256], sub[64];
  bool cluster; /* a cluster-wide collection */
} route;

static bool parse_route(const char *path, route *r) {
  char buf[2048], *seg[16];
  int n = 0, i = 0;
  memset(r, 0, sizeof *r);
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf; *p && n < 16;) {
    while (*p == '/') *p++ = '\0';
    if (!*p) break;
    seg[n++] = p;
    while (*p && *p != '/') p++;
  }
  if (n >= 2 && !strcmp(seg[0], "api"))
    snprintf(r->version, sizeof r->version, "%s", seg[1]), i = 2;
  else if (n >= 3 && !strcmp(seg[0], "apis")) {
    snprintf(r->group, sizeof r->group, "%s", seg[1]);
    snprintf(r->version, sizeof r->version, "%s", seg[2]);
    i = 3;
  } else
    return false;
  if (i + 1 < n && !strcmp(seg[i], "namespaces") && i + 2 < n) {
    snprintf(r->ns, sizeof r->ns, "%s", seg[i + 1]);
    i += 2;
  }
  if (i >= n) return false;
  snprintf(r->resource, sizeof r->resource, "%s", seg[i++]);
  if (i < n) snprintf(r->name, sizeof r->name, "%s", seg[i++]);
  if (i < n) snprintf(r->sub, sizeof r->sub, "%s", seg[i++]);
  r->cluster = !r->ns[0];
  return true;
}

static const char *param(const char *query, const char *key, char *out, size_t cap) {
  size_t kl = strlen(key);
  for (const char *p = query; p && *p;) {
    if (!strncmp(p, key, kl) && p[kl] == '=') {
      const char *e = strchr(p + kl + 1, '&');
      snprintf(out, cap, "%.*s", (int)(e ? e - (p + kl + 1) : (long)strlen(p + kl + 1)),
               p + kl + 1);
      return out;
    }
    p = strchr(p, '&');
    if (p) p++;
  }
  return NULL;
}

typedef struct conn {
  fa_server *s;
  SSL *ssl;
  int fd, slot;
  bool h2; /* HTTP/2 was negotiated */
} conn;

static bool write_all(conn *c, const char *p, size_t n) {
  while (n) {
    int w = SSL_write(c->ssl, p, (int)(n > 1 << 20 ? 1 << 20 : n));
    if (w <= 0) return false;
    p += w, n -= (size_t)w;
  }
  return true;
}

static bool respond(conn *c, int code, json_t *body) {
  char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
  char head[256];
  size_t n = text ? strlen(text) : 0;
  bool ok;
  snprintf(head, sizeof head,
           "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", code,
           code < 300 ? "OK" : reason_of(code), n);
  ok = write_all(c, head, strlen(head)) && (!n || write_all(c, text, n));
  free(text);
  json_decref(body);
  return ok;
}

static bool chunk(conn *c, const char *text) {
  char head[32];
  size_t n = strlen(text);
  snprintf(head, sizeof head, "%zx\r\n", n + 1);
  return write_all(c, head, strlen(head)) && write_all(c, text, n) && write_all(c, "\n\r\n", 3);
}

/* A watch: history since rv, then live changes, until timeoutSeconds or the server stops. */
static void watch(conn *c, const route *r, const char *query) {
  fa_server *s = c->s;
  char v[64], *text;
  long cursor = param(query, "resourceVersion", v, sizeof v) ? atol(v) : 0;
  long timeout = param(query, "timeoutSeconds", v, sizeof v) ? atol(v) : 60;
  time_t end = time(NULL) + (timeout > 30 ? 30 : timeout), last_sent = time(NULL);
  bool bookmarks = param(query, "allowWatchBookmarks", v, sizeof v) && !strcmp(v, "true");
  const char *head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  pthread_mutex_lock(&s->mu);
  if (cursor < s->compacted) {
    pthread_mutex_unlock(&s->mu);
    respond(c, 410, status_body(410, "Expired", "too old resource version"));
    return;
  }
  pthread_mutex_unlock(&s->mu);
  if (!write_all(c, head, strlen(head))) return;
  pthread_mutex_lock(&s->mu);
  while (!s->stopping && time(NULL) < end) {
    bool sent = false;
    if (cursor < s->compacted) { /* compacted under a running watch: an ERROR event */
      json_t *ev = json_pack(
          "{s:s, s:o}", "type", "ERROR", "object",
          status_body(410, "Expired", "The resourceVersion for the provided watch is too old."));
      text = json_dumps(ev, JSON_COMPACT);
      json_decref(ev);
      pthread_mutex_unlock(&s->mu);
      chunk(c, text);
      free(text);
      write_all(c, "0\r\n\r\n", 5);
      return;
    }
    for (size_t i = 0; i < s->history.n; i++) {
      hist *h = &s->history.v[i];
      json_t *ev;
      bool ok;
      if (h->rv <= cursor || strcmp(h->group, r->group) || strcmp(h->resource, r->resource) ||
          (!r->cluster && strcmp(h->ns, r->ns)))
        continue;
      ev = json_pack("{s:s, s:O}", "type", h->type, "object", h->json);
      text = json_dumps(ev, JSON_COMPACT);
      json_decref(ev);
      cursor = h->rv;
      pthread_mutex_unlock(&s->mu);
      ok = chunk(c, text);
      free(text);
      pthread_mutex_lock(&s->mu);
      sent = true;
      if (!ok) {
        pthread_mutex_unlock(&s->mu);
        return;
      }
      break; /* the history may have grown: scan again */
    }
    if (!sent && bookmarks && time(NULL) - last_sent >= 1) { /* a BOOKMARK each quiet second */
      char rv[32];
      json_t *ev;
      bool ok;
      snprintf(rv, sizeof rv, "%ld", s->rv);
      ev = json_pack("{s:s, s:{s:{s:s}}}", "type", "BOOKMARK", "object", "metadata",
                     "resourceVersion", rv);
      text = json_dumps(ev, JSON_COMPACT);
      json_decref(ev);
      pthread_mutex_unlock(&s->mu);
      ok = chunk(c, text);
      free(text);
      pthread_mutex_lock(&s->mu);
      last_sent = time(NULL);
      if (!ok) break;
      continue;
    }
    if (sent) last_sent = time(NULL);
    if (!sent) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 200 * 1000000L;
      if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
      pthread_cond_timedwait(&s->changed, &s->mu, &ts);
    }
  }
  pthread_mutex_unlock(&s->mu);
  write_all(c, "0\r\n\r\n", 5);
}

static int list(fa_server *s, const route *r, const char *query, json_t **result) {
  char v[64];
  long limit = param(query, "limit", v, sizeof v) ? atol(v) : 0, id = -1, from = 0, rv;
  json_t *items = NULL, *page, *out;
  char text[64], kind[64] = "List";
  snapshot *snap = NULL;
  size_t at = 0;
  if (param(query, "continue", v, sizeof v) && sscanf(v, "c%ldo%ld", &id, &from) == 2) {
    for (at = 0; at < s->snaps.n; at++)
      if (s->snaps.v[at].id == id) break;
    if (at == s->snaps.n) {
      *result = status_body(410, "Expired", "The provided continue parameter is too old.");
      return 410;
    }
    snap = &s->snaps.v[at];
  }
  if (snap) {
    items = snap->items, rv = snap->rv;
  } else {
    items = json_array(), rv = s->rv;
    for (size_t i = 0; i < s->objs.n; i++) {
      obj *o = &s->objs.v[i];
      if (strcmp(o->group, r->group) || strcmp(o->resource, r->resource) ||
          (!r->cluster && strcmp(o->ns, r->ns)))
        continue;
      json_array_append(items, o->json);
    }
  }
  page = json_array();
  for (size_t i = (size_t)from;
       i < json_array_size(items) && (!limit || i < (size_t)(from + limit)); i++)
    json_array_append(page, json_array_get(items, i));
  if (json_array_size(items))
    snprintf(kind, sizeof kind, "%sList",
             json_string_value(json_object_get(json_array_get(items, 0), "kind")) ?: "");
  snprintf(text, sizeof text, "%ld", rv);
  out = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind", kind, "apiVersion", r->group[0] ? "" : "v1",
                  "metadata", "resourceVersion", text, "items", page);
  if (r->group[0]) {
    char av[160];
    snprintf(av, sizeof av, "%s/%s", r->group, r->version);
    json_object_set_new(out, "apiVersion", json_string(av));
  }
  if (limit && (size_t)(from + limit) < json_array_size(items)) { /* more: keep the snapshot */
    if (!snap) {
      if (s->snaps.n == MAX_SNAPS) {
        json_decref(s->snaps.v[0].items);
        memmove(&s->snaps.v[0], &s->snaps.v[1], (s->snaps.n - 1) * sizeof *s->snaps.v);
        s->snaps.n--;
      }
      (void)ts_vec_push(&s->snaps, ((snapshot){s->next_snap++, rv, items}));
      id = s->snaps.v[s->snaps.n - 1].id;
    }
    snprintf(text, sizeof text, "c%ldo%ld", id, from + limit);
    json_object_set_new(json_object_get(out, "metadata"), "continue", json_string(text));
  } else if (snap) { /* the last page: forget it */
    json_decref(snap->items);
    memmove(snap, snap + 1, (s->snaps.n - at - 1) * sizeof *snap);
    s->snaps.n--;
  } else {
    json_decref(items);
  }
  *result = out;
  return 200;
}

static json_t *discovery(void) {
  static const char *const groups[][3] = {{"scheduling.k8s.io", "v1", NULL},
                                          {"policy", "v1", NULL},
                                          {"batch", "v1", NULL},
                                          {"coordination.k8s.io", "v1", NULL},
                                          {"events.k8s.io", "v1", NULL},
                                          {"resource.k8s.io", "v1", "v1beta1"},
                                          {"scheduling.x-k8s.io", "v1alpha1", NULL},
                                          {"kueue.x-k8s.io", "v1beta1", NULL}};
  json_t *g = json_array();
  for (size_t i = 0; i < sizeof groups / sizeof *groups; i++) {
    json_t *vs = json_array();
    for (int k = 1; k < 3 && groups[i][k]; k++) {
      char gv[128];
      snprintf(gv, sizeof gv, "%s/%s", groups[i][0], groups[i][k]);
      json_array_append_new(vs,
                            json_pack("{s:s, s:s}", "groupVersion", gv, "version", groups[i][k]));
    }
    json_array_append_new(g, json_pack("{s:s, s:o}", "name", groups[i][0], "versions", vs));
  }
  return json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1", "groups", g);
}

/* RFC 7386 merge patch; pod status conditions merge by type (strategic merge). */
static void merge(json_t *target, json_t *patch, bool conditions_by_type) {
  const char *k;
  json_t *v;
  json_object_foreach(patch, k, v) {
    json_t *t = json_object_get(target, k);
    if (json_is_null(v))
      json_object_del(target, k);
    else if (conditions_by_type && !strcmp(k, "conditions") && json_is_array(v)) {
      size_t i, j;
      json_t *c, *d;
      if (!json_is_array(t)) json_object_set_new(target, k, t = json_array());
      json_array_foreach(v, i, c) {
        bool replaced = false;
        json_array_foreach(t, j, d)
          if (json_equal(json_object_get(d, "type"), json_object_get(c, "type")))
            json_array_set(t, j, c), replaced = true;
        if (!replaced) json_array_append(t, c);
      }
    } else if (json_is_object(v) && json_is_object(t))
      merge(t, v, conditions_by_type);
    else
      json_object_set(target, k, v);
  }
}

/* ---- what the API server validates on create ------------------------------------------- */

#define SUBDOMAIN_MSG                                                                              \
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "     \
  "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "    \
  "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

static bool alnum_lower(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

/* RFC 1123 subdomain, as apimachinery's IsDNS1123Subdomain: labels of [a-z0-9-] that start
 * and end alphanumeric, joined by dots, 253 characters at most. */
static bool is_subdomain(const char *v) {
  size_t n = strlen(v), label = 0;
  if (!n || n > 253) return false;
  for (size_t i = 0; i <= n; i++) {
    char ch = v[i];
    if (ch == '.' || ch == '\0') { /* a label ends: not empty, not ending in '-' */
      if (!label || v[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    if (!alnum_lower(ch) && (ch != '-' || !label)) return false;
    label++;
  }
  return true;
}

/* The errors of a create, in the API server's words (empty when valid): metadata.name or
 * metadata.generateName (as a prefix: a trailing '-' is allowed), and an Event's eventTime. */
static void create_errors(const route *r, json_t *body, const char *name, ts_buf *errs) {
  json_t *md = json_object_get(body, "metadata");
  const char *given = json_string_value(json_object_get(md, "name"));
  const char *gen = json_string_value(json_object_get(md, "generateName"));
  if (given && !is_subdomain(given))
    ts_buf_printf(errs, "%smetadata.name: Invalid value: \"%s\": %s%s", errs->len ? ", " : "",
                  given,
                  strlen(given) > 253 ? "must be no more than 253 characters" : SUBDOMAIN_MSG, "");
  if (!given && gen) {
    char masked[300];
    size_t n = strlen(gen);
    snprintf(masked, sizeof masked, "%s", gen);
    if (n && n < sizeof masked && masked[n - 1] == '-') masked[n - 1] = 'a';
    if (!is_subdomain(masked))
      ts_buf_printf(errs, "%smetadata.generateName: Invalid value: \"%s\": %s",
                    errs->len ? ", " : "", gen, SUBDOMAIN_MSG);
  }
  (void)name;
  if (!strcmp(r->resource, "events") && !strcmp(r->group, "events.k8s.io") &&
      !json_string_value(json_object_get(body, "eventTime")))
    ts_buf_printf(errs, "%seventTime: Required value", errs->len ? ", " : "");
}

/* TokenReviews and SubjectAccessReviews, as kube-apiserver answers them (201, the review with
 * its status): tokens and what their users may GET come from fa_add_user. */
static int review(fa_server *s, req *q, json_t **out) {
  json_t *body = NULL, *spec, *st;
  ts_err err;
  if (in_json_parse(q->body, q->len, &body, &err) != TS_OK ||
      !json_is_object(spec = json_object_get(body, "spec")))
    return json_decref(body), *out = status_body(400, "BadRequest", "not a review"), 400;
  if (strstr(q->path, "tokenreviews")) {
    json_t *u = json_object_get(s->users, json_string_value(json_object_get(spec, "token")) ?: "");
    if (u)
      st = json_pack("{s:b, s:{s:O, s:s, s:[s, s]}, s:[s]}", "authenticated", 1, "user", "username",
                     json_object_get(u, "username"), "uid", "3f1b2c4d-0000-4000-8000-000000000001",
                     "groups", "system:serviceaccounts", "system:authenticated", "audiences",
                     "https://kubernetes.default.svc");
    else /* kube-apiserver leaves authenticated out and says why */
      st = json_pack("{s:{}, s:s}", "user", "error", "[invalid bearer token, token lookup failed]");
  } else {
    const char *who = json_string_value(json_object_get(spec, "user")) ?: "";
    const char *path =
        json_string_value(json_object_get(json_object_get(spec, "nonResourceAttributes"), "path"))
            ?: "";
    const char *verb =
        json_string_value(json_object_get(json_object_get(spec, "nonResourceAttributes"), "verb"))
            ?: "";
    bool allowed = false;
    const char *k;
    json_t *u;
    json_object_foreach(s->users, k, u) {
      const char *a = json_string_value(json_object_get(u, "allow"));
      if (!strcmp(json_string_value(json_object_get(u, "username")), who) && a &&
          !strcmp(a, path) && !strcmp(verb, "get"))
        allowed = true;
    }
    st = allowed ? json_pack("{s:b, s:s}", "allowed", 1, "reason",
                             "RBAC: allowed by ClusterRoleBinding \"metrics\"")
                 : json_pack("{s:b}", "allowed", 0);
  }
  json_object_set_new(body, "status", st);
  *out = body;
  return 201;
}

static int handle(conn *c, req *q, json_t **out) {
  fa_server *s = c->s;
  route r;
  json_t *body = NULL;
  obj *o;
  char what[512], v[64];
  ts_err err;
  if (!strcmp(q->path, "/apis") && !strcmp(q->method, "GET")) return *out = discovery(), 200;
  if (!strcmp(q->path, "/version") && !strcmp(q->method, "GET")) /* as kube-apiserver answers */
    return *out = json_pack("{s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor", "34", "gitVersion",
                            "v1.34.0-fake", "goVersion", "go1.24", "platform", "linux/amd64"),
           200;
  if (!strcmp(q->method, "POST") &&
      (!strcmp(q->path, "/apis/authentication.k8s.io/v1/tokenreviews") ||
       !strcmp(q->path, "/apis/authorization.k8s.io/v1/subjectaccessreviews")))
    return review(s, q, out);
  if (!parse_route(q->path, &r))
    return *out = status_body(404, "NotFound", "the server could not find the requested resource"),
           404;
  snprintf(what, sizeof what, "%s%s%s \"%s\"", r.resource, r.group[0] ? "." : "", r.group, r.name);
  if (q->len && in_json_parse(q->body, q->len, &body, &err) != TS_OK)
    return *out = status_body(400, "BadRequest", err.text), 400;
  if (!strcmp(q->method, "GET") && !r.name[0]) return list(s, &r, q->query, out);
  o = r.name[0] ? find(s, r.group, r.resource, r.ns, r.name) : NULL;
  if (!strcmp(q->method, "GET")) {
    json_decref(body);
    if (!o) return *out = status_body(404, "NotFound", what), 404;
    return *out = json_incref(o->json), 200;
  }
  if (!strcmp(q->method, "POST") && !strcmp(r.sub, "binding")) {
    char node[256];
    const char *cur;
    json_t *ann;
    const char *uid = json_string_value(json_object_get(json_object_get(body, "metadata"), "uid"));
    const char *have =
        o ? json_string_value(json_object_get(json_object_get(o->json, "metadata"), "uid")) : NULL;
    snprintf(node, sizeof node, "%s",
             json_string_value(json_object_get(json_object_get(body, "target"), "name")) ?: "");
    if (o && uid && *uid && have && strcmp(uid, have)) {
      char m[900];
      snprintf(m, sizeof m,
               "Operation cannot be fulfilled on pods \"%s\": StorageError: invalid object, Code: "
               "4, Key: /registry/pods/%s/%s, ResourceVersion: 0, AdditionalErrorMsg: "
               "Precondition failed: UID in precondition: %s, UID in object meta: %s",
               r.name, r.ns, r.name, uid, have);
      json_decref(body);
      return *out = status_body(409, "Conflict", m), 409;
    }
    ann = json_incref(json_object_get(json_object_get(body, "metadata"), "annotations"));
    json_decref(body);
    if (!o) return json_decref(ann), *out = status_body(404, "NotFound", what), 404;
    if ((cur = json_string_value(json_object_get(json_object_get(o->json, "spec"), "nodeName")))) {
      char m[800];
      if (strcmp(cur, node)) s->misbound++; /* a scheduler that thought it elsewhere */
      snprintf(m, sizeof m,
               "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is already assigned "
               "to node \"%s\"",
               r.name, r.name, cur);
      json_decref(ann);
      return *out = status_body(409, "Conflict", m), 409;
    }
    if (json_array_size(json_object_get(json_object_get(o->json, "spec"), "schedulingGates"))) {
      char m[800]; /* as kube-apiserver refuses a gated pod's binding */
      s->misbound++;
      snprintf(m, sizeof m,
               "Operation cannot be fulfilled on pods/binding \"%s\": pod %s has non-empty "
               ".spec.schedulingGates",
               r.name, r.name);
      json_decref(ann);
      return *out = status_body(409, "Conflict", m), 409;
    }
    json_object_set_new(json_object_get(o->json, "spec"), "nodeName", json_string(node));
    { /* as kube-apiserver does: the Binding's annotations are set on the pod in the same write */
      json_t *md = json_object_get(o->json, "metadata"), *to;
      if (json_is_object(ann) && json_object_size(ann) && json_is_object(md)) {
        if (!json_is_object(to = json_object_get(md, "annotations")))
          json_object_set_new(md, "annotations", to = json_object());
        json_object_update(to, ann);
      }
      json_decref(ann);
    }
    { /* as kube-apiserver does (exchange 063): PodScheduled=True, stamped now */
      json_t *st = json_object_get(o->json, "status"), *conds;
      char now[32];
      time_t t = time(NULL);
      strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
      if (!json_is_object(st)) json_object_set_new(o->json, "status", st = json_object());
      conds = json_object_get(st, "conditions");
      if (!json_is_array(conds)) json_object_set_new(st, "conditions", conds = json_array());
      json_array_append_new(conds,
                            json_pack("{s:s, s:s, s:n, s:s}", "type", "PodScheduled", "status",
                                      "True", "lastProbeTime", "lastTransitionTime", now));
    }
    store(s, r.group, r.resource, r.ns, r.name, json_incref(o->json));
    return *out = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                            "metadata", "status", "Success", "code", 201),
           201;
  }
  if (!strcmp(q->method, "POST") && !strcmp(r.sub, "eviction")) {
    json_decref(body);
    if (!o) return *out = status_body(404, "NotFound", what), 404;
    remove_obj(s, o);
    return *out = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                            "metadata", "status", "Success", "code", 201),
           201;
  }
  if (!strcmp(q->method, "POST")) {
    const char *name =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "name"));
    const char *gen =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "generateName"));
    char made[300];
    ts_buf errs;
    if (!name && gen)
      snprintf(made, sizeof made, "%s%05lx", gen, (s->rv + 1) & 0xfffff), name = made;
    if (!name)
      return json_decref(body), *out = status_body(422, "Invalid", "metadata.name: Required value"),
                                422;
    ts_buf_init(&errs, 0);
    create_errors(&r, body, name, &errs);
    if (errs.len) { /* 422, worded as kube-apiserver words it */
      char m[4096];
      const char *kind = json_string_value(json_object_get(body, "kind"));
      snprintf(m, sizeof m, "%s \"%s\" is invalid: [%s]", kind ? kind : r.resource, name,
               errs.data);
      ts_buf_free(&errs);
      json_decref(body);
      return *out = status_body(422, "Invalid", m), 422;
    }
    ts_buf_free(&errs);
    ts_strlcpy(r.name, name, sizeof r.name);
    if (find(s, r.group, r.resource, r.ns, r.name)) {
      snprintf(what, sizeof what, "%s%s%s \"%s\" already exists", r.resource, r.group[0] ? "." : "",
               r.group, r.name);
      json_decref(body);
      return *out = status_body(409, "AlreadyExists", what), 409;
    }
    if (r.ns[0])
      json_object_set_new(json_object_get(body, "metadata"), "namespace", json_string(r.ns));
    return *out = json_incref(store(s, r.group, r.resource, r.ns, r.name, body)), 201;
  }
  if (!o) return json_decref(body), *out = status_body(404, "NotFound", what), 404;
  if (!strcmp(q->method, "PUT")) {
    const char *want =
        json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
    const char *have =
        json_string_value(json_object_get(json_object_get(o->json, "metadata"), "resourceVersion"));
    json_t *next;
    if (want && have && strcmp(want, have)) {
      char m[800];
      snprintf(m, sizeof m,
               "Operation cannot be fulfilled on %s%s%s \"%s\": the object has been modified; "
               "please apply your changes to the latest version and try again",
               r.resource, r.group[0] ? "." : "", r.group, r.name);
      json_decref(body);
      return *out = status_body(409, "Conflict", m), 409;
    }
    if (!strcmp(r.sub, "status")) { /* only the status changes */
      next = json_deep_copy(o->json);
      json_object_set(next, "status", json_object_get(body, "status") ?: json_object());
      json_decref(body);
    } else {
      next = body;
      if (json_object_get(o->json, "status") && !json_object_get(next, "status"))
        json_object_set(next, "status", json_object_get(o->json, "status"));
      else if (json_object_get(o->json, "status"))
        json_object_set(next, "status", json_object_get(o->json, "status"));
    }
    return *out = json_incref(store(s, r.group, r.resource, r.ns, r.name, next)), 200;
  }
  if (!strcmp(q->method, "PATCH")) {
    json_t *next = json_deep_copy(o->json);
    merge(next, body, !strcmp(r.resource, "pods"));
    json_decref(body);
    return *out = json_incref(store(s, r.group, r.resource, r.ns, r.name, next)), 200;
  }
  if (!strcmp(q->method, "DELETE")) {
    json_decref(body);
    remove_obj(s, o);
    return *out = json_pack("{s:s, s:s, s:{}, s:s}", "kind", "Status", "apiVersion", "v1",
                            "metadata", "status", "Success"),
           200;
  }
  (void)v;
  json_decref(body);
  return *out = status_body(405, "MethodNotAllowed", "method not allowed"), 405;
}

/* Reads one request; false when the connection ended. */
static bool read_request(conn *c, req *q, char *buf, size_t cap) {
  size_t n = 0;
  char *end, *line, *cl;
  memset(q, 0, sizeof *q);
  for (;;) {
    int r;
    buf[n] = '\0';
    if ((end = strstr(buf, "\r\n\r\n"))) break;
    if (n + 1 >= cap) return false;
    if ((r = SSL_read(c->ssl, buf + n, (int)(cap - 1 - n))) <= 0) return false;
    n += (size_t)r;
  }
  line = buf;
  if (sscanf(line, "%15s %2047s", q->method, q->path) != 2) return false;
  {
    char *qm = strchr(q->path, '?');
    if (qm) snprintf(q->query, sizeof q->query, "%s", qm + 1), *qm = '\0';
  }
  if ((cl = strcasestr(buf, "\r\nAuthorization: Bearer ")) && cl < end)
    sscanf(cl + 24, "%511s", q->auth);
  if ((cl = strcasestr(buf, "\r\nContent-Length:")) && cl < end) q->len = (size_t)atol(cl + 17);
  if (q->len > (64u << 20)) return false;
  q->body = malloc(q->len + 1);
  {
    size_t have = n - (size_t)(end + 4 - buf);
    if (have > q->len) have = q->len;
    memcpy(q->body, end + 4, have);
    while (have < q->len) {
      int r = SSL_read(c->ssl, q->body + have, (int)(q->len - have));
      if (r <= 0) return free(q->body), false;
      have += (size_t)r;
    }
  }
  q->body[q->len] = '\0';
  return true;
}

/* Faults, authentication, the handler, the log: what both protocols share. On return: *drop
 * (hang up), or *watch (stream), or *code and *body to send. */
static void dispatch(conn *c, req *q, int *code, json_t **body, bool *drop, bool *watch) {
  fa_server *s = c->s;
  char line[4200], v[8];
  bool lost = false;
  *code = 0, *body = NULL, *drop = false;
  *watch = param(q->query, "watch", v, sizeof v) && (!strcmp(v, "1") || !strcmp(v, "true"));
  snprintf(line, sizeof line, "%s %s%s%s", q->method, q->path, q->query[0] ? "?" : "", q->query);
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->faults.n && !*code && !*drop; i++) {
    fault *f = &s->faults.v[i];
    if (f->times <= 0 || strcmp(f->method, q->method) ||
        strncmp(line + strlen(q->method) + 1, f->prefix, strlen(f->prefix)))
      continue;
    f->times--;
    if (f->delay_ms) { /* a slow server: answers as usual, later */
      int ms = f->delay_ms;
      pthread_mutex_unlock(&s->mu);
      usleep((useconds_t)ms * 1000);
      pthread_mutex_lock(&s->mu);
      continue;
    }
    if (f->status == FA_LOST)
      lost = true;
    else if (!f->status)
      *drop = true;
    else if (f->body)
      *body = json_incref(f->body), *code = f->status;
    else
      *body = status_body(f->status, reason_of(f->status), f->message), *code = f->status;
  }
  if (!*code && !*drop && strcmp(q->auth, s->token))
    *body = status_body(401, "Unauthorized", "Unauthorized"), *code = 401;
  if (!*code && !*drop && !*watch) *code = handle(c, q, body);
  if (lost) { /* it was served; its answer never arrives */
    json_decref(*body);
    *body = NULL, *drop = true;
  }
  if (*code) *watch = false;
  ts_buf_printf(&s->log, "%s %d%s\n", line, *drop ? 0 : *watch ? 200 : *code, c->h2 ? " h2" : "");
  pthread_mutex_unlock(&s->mu);
}

static void serve_h2(conn *c);

static void *serve(void *arg) {
  conn *c = arg;
  fa_server *s = c->s;
  char *buf = malloc(1 << 16);
  req q;
  if (SSL_accept(c->ssl) != 1) goto out;
  {
    const unsigned char *proto;
    unsigned int len;
    SSL_get0_alpn_selected(c->ssl, &proto, &len);
    if (len == 2 && !memcmp(proto, "h2", 2)) {
      c->h2 = true;
      serve_h2(c);
      goto out;
    }
  }
  while (buf && read_request(c, &q, buf, 1 << 16)) {
    json_t *body;
    int code;
    bool drop, is_watch;
    dispatch(c, &q, &code, &body, &drop, &is_watch);
    free(q.body);
    if (drop) break;
    if (is_watch) {
      route r;
      if (parse_route(q.path, &r)) watch(c, &r, q.query);
      continue;
    }
    if (!respond(c, code, body)) break;
  }
out:
  free(buf);
  SSL_shutdown(c->ssl);
  SSL_free(c->ssl);
  close(c->fd);
  pthread_mutex_lock(&s->mu);
  s->fds[c->slot] = -1;
  s->conns--;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->mu);
  free(c);
  return NULL;
}

static void *accept_loop(void *arg) {
  fa_server *s = arg;
  for (;;) {
    struct pollfd p = {s->lfd, POLLIN, 0};
    int fd, slot = -1;
    conn *c;
    pthread_t t;
    pthread_mutex_lock(&s->mu);
    if (time(NULL) - s->started > s->lifetime_s) s->stopping = true;
    if (s->stopping) {
      pthread_mutex_unlock(&s->mu);
      break;
    }
    pthread_mutex_unlock(&s->mu);
    if (poll(&p, 1, 100) <= 0) continue;
    if ((fd = accept(s->lfd, NULL, NULL)) < 0) continue;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < MAX_CONNS && slot < 0; i++)
      if (s->fds[i] < 0) slot = i;
    if (slot >= 0) s->fds[slot] = fd, s->conns++, s->accepted++;
    pthread_mutex_unlock(&s->mu);
    if (slot < 0 || !(c = calloc(1, sizeof *c))) {
      close(fd);
      continue;
    }
    c->s = s, c->fd = fd, c->slot = slot;
    c->ssl = SSL_new(s->ssl);
    SSL_set_fd(c->ssl, fd);
    pthread_create(&t, NULL, serve, c);
    pthread_detach(t);
  }
  return NULL;
}

/* ---- HTTP/2 (libnghttp2) ------------------------------------------------------------------- */

#define H2_STREAMS 1024 /* concurrent streams per connection */

typedef struct h2stream {
  int32_t id;        /* stream id, 0 when free */
  req q;             /* the request being received */
  bool ready;        /* the request is complete */
  bool watching;     /* a watch stream */
  bool ended;        /* the watch has ended (its last data is queued) */
  route r;           /* watch: what */
  long cursor;       /* watch: last rv sent */
  bool bookmarks;    /* watch: allowWatchBookmarks */
  time_t end, last;  /* watch: when it ends, last data sent */
  ts_buf out;        /* data not yet handed to nghttp2 */
  size_t off;        /* how much of out nghttp2 has taken */
  struct h2conn *hc; /* owner */
} h2stream;

typedef struct h2conn {
  conn *c;
  nghttp2_session *ng;
  h2stream st[H2_STREAMS];
  int32_t goaway_last; /* after a GOAWAY: the last stream served (later ones are refused) */
} h2conn;

static h2stream *h2_find(h2conn *h, int32_t id, bool create) {
  for (int i = 0; i < H2_STREAMS; i++)
    if (h->st[i].id == id) return &h->st[i];
  if (!create) return NULL;
  for (int i = 0; i < H2_STREAMS; i++)
    if (!h->st[i].id) {
      memset(&h->st[i], 0, sizeof h->st[i]);
      h->st[i].id = id, h->st[i].hc = h;
      ts_buf_init(&h->st[i].out, 256u << 20);
      return &h->st[i];
    }
  return NULL;
}

static ssize_t h2_send(nghttp2_session *ng, const uint8_t *data, size_t len, int flags, void *ud) {
  h2conn *h = ud;
  (void)ng, (void)flags;
  return write_all(h->c, (const char *)data, len) ? (ssize_t)len : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int h2_begin(nghttp2_session *ng, const nghttp2_frame *f, void *ud) {
  (void)ng;
  if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
    h2_find(ud, f->hd.stream_id, true);
  return 0;
}

static int h2_header(nghttp2_session *ng, const nghttp2_frame *f, const uint8_t *name, size_t nl,
                     const uint8_t *value, size_t vl, uint8_t flags, void *ud) {
  h2stream *st = h2_find(ud, f->hd.stream_id, false);
  (void)ng, (void)flags;
  if (!st) return 0;
  if (nl == 7 && !memcmp(name, ":method", 7))
    snprintf(st->q.method, sizeof st->q.method, "%.*s", (int)vl, value);
  else if (nl == 5 && !memcmp(name, ":path", 5)) {
    const uint8_t *qm = memchr(value, '?', vl);
    size_t pl = qm ? (size_t)(qm - value) : vl;
    snprintf(st->q.path, sizeof st->q.path, "%.*s", (int)pl, value);
    if (qm) snprintf(st->q.query, sizeof st->q.query, "%.*s", (int)(vl - pl - 1), qm + 1);
  } else if (nl == 13 && !memcmp(name, "authorization", 13) && vl > 7 &&
             !memcmp(value, "Bearer ", 7))
    snprintf(st->q.auth, sizeof st->q.auth, "%.*s", (int)(vl - 7), value + 7);
  return 0;
}

static int h2_data(nghttp2_session *ng, uint8_t flags, int32_t id, const uint8_t *data, size_t len,
                   void *ud) {
  h2stream *st = h2_find(ud, id, false);
  char *nb;
  (void)ng, (void)flags;
  if (!st || !(nb = realloc(st->q.body, st->q.len + len + 1))) return 0;
  memcpy(nb + st->q.len, data, len);
  st->q.body = nb;
  st->q.len += len;
  st->q.body[st->q.len] = '\0';
  return 0;
}

static int h2_frame(nghttp2_session *ng, const nghttp2_frame *f, void *ud) {
  h2stream *st = h2_find(ud, f->hd.stream_id, false);
  (void)ng;
  if (st && (f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
      (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
    st->ready = true;
  return 0;
}

static int h2_close(nghttp2_session *ng, int32_t id, uint32_t code, void *ud) {
  h2stream *st = h2_find(ud, id, false);
  (void)ng, (void)code;
  if (st) {
    free(st->q.body);
    ts_buf_free(&st->out);
    memset(st, 0, sizeof *st);
  }
  return 0;
}

/* Hands queued data to nghttp2; deferred while a watch waits for events. */
static ssize_t h2_read(nghttp2_session *ng, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                       nghttp2_data_source *src, void *ud) {
  h2stream *st = src->ptr;
  size_t left = st->out.len - st->off;
  (void)ng, (void)id, (void)ud;
  if (!left) {
    if (!st->watching || st->ended) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    return NGHTTP2_ERR_DEFERRED;
  }
  if (len > left) len = left;
  memcpy(buf, st->out.data + st->off, len);
  st->off += len;
  if (st->off == st->out.len && (!st->watching || st->ended)) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)len;
}

static void h2_respond(h2conn *h, h2stream *st, int code) {
  char status[8];
  nghttp2_nv hdr[2] = {
      {(uint8_t *)":status", (uint8_t *)status, 7, 0, NGHTTP2_NV_FLAG_NONE},
      {(uint8_t *)"content-type", (uint8_t *)"application/json", 12, 16, NGHTTP2_NV_FLAG_NONE}};
  nghttp2_data_provider dp;
  snprintf(status, sizeof status, "%d", code);
  hdr[0].valuelen = strlen(status);
  dp.source.ptr = st;
  dp.read_callback = h2_read;
  nghttp2_submit_response(h->ng, st->id, hdr, 2, &dp);
}

/* Appends a watch's new events (or a bookmark, or its 410) to its stream. */
static void h2_pull(h2conn *h, h2stream *st) {
  fa_server *s = h->c->s;
  bool any = false;
  pthread_mutex_lock(&s->mu);
  if (st->cursor < s->compacted) {
    json_t *ev = json_pack(
        "{s:s, s:o}", "type", "ERROR", "object",
        status_body(410, "Expired", "The resourceVersion for the provided watch is too old."));
    char *text = json_dumps(ev, JSON_COMPACT);
    ts_buf_printf(&st->out, "%s\n", text);
    free(text);
    json_decref(ev);
    st->ended = any = true;
  }
  for (size_t i = 0; i < s->history.n && !st->ended; i++) {
    hist *e = &s->history.v[i];
    json_t *ev;
    char *text;
    if (e->rv <= st->cursor || strcmp(e->group, st->r.group) ||
        strcmp(e->resource, st->r.resource) || (!st->r.cluster && strcmp(e->ns, st->r.ns)))
      continue;
    ev = json_pack("{s:s, s:O}", "type", e->type, "object", e->json);
    text = json_dumps(ev, JSON_COMPACT);
    ts_buf_printf(&st->out, "%s\n", text);
    free(text);
    json_decref(ev);
    st->cursor = e->rv;
    any = true;
  }
  if (!any && !st->ended && st->bookmarks && time(NULL) - st->last >= 1) {
    ts_buf_printf(
        &st->out,
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"%ld\"}}}\n", s->rv);
    any = true;
  }
  if (s->stopping || time(NULL) >= st->end) st->ended = any = true;
  pthread_mutex_unlock(&s->mu);
  if (any) {
    st->last = time(NULL);
    nghttp2_session_resume_data(h->ng, st->id);
  }
}

/* A scripted GOAWAY (fa_goaway): this stream is the last one the connection serves. */
static void h2_maybe_goaway(h2conn *h, h2stream *st) {
  bool now = false;
  pthread_mutex_lock(&h->c->s->mu);
  if (h->c->s->goaway_after > 0 && !h->goaway_last) now = --h->c->s->goaway_after == 0;
  pthread_mutex_unlock(&h->c->s->mu);
  if (!now) return;
  h->goaway_last = st->id;
  nghttp2_submit_goaway(h->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR, NULL, 0);
}

static void h2_start(h2conn *h, h2stream *st) {
  json_t *body;
  int code;
  bool drop, watch;
  char v[64];
  st->ready = false;
  if (h->goaway_last && st->id > h->goaway_last) return; /* refused: the client retries it */
  h2_maybe_goaway(h, st);
  dispatch(h->c, &st->q, &code, &body, &drop, &watch);
  if (drop) {
    nghttp2_submit_rst_stream(h->ng, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_INTERNAL_ERROR);
    return;
  }
  if (watch) {
    long timeout = param(st->q.query, "timeoutSeconds", v, sizeof v) ? atol(v) : 60;
    st->watching = true;
    parse_route(st->q.path, &st->r);
    st->cursor = param(st->q.query, "resourceVersion", v, sizeof v) ? atol(v) : 0;
    st->bookmarks = param(st->q.query, "allowWatchBookmarks", v, sizeof v) && !strcmp(v, "true");
    st->end = time(NULL) + (timeout > 30 ? 30 : timeout);
    st->last = time(NULL);
    pthread_mutex_lock(&h->c->s->mu);
    if (st->cursor < h->c->s->compacted) code = 410;
    pthread_mutex_unlock(&h->c->s->mu);
    if (code == 410) {
      st->watching = false;
      body = status_body(410, "Expired", "too old resource version");
    } else {
      h2_respond(h, st, 200);
      return;
    }
  }
  {
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    if (text) ts_buf_puts(&st->out, text);
    free(text);
    json_decref(body);
  }
  h2_respond(h, st, code);
}

static void serve_h2(conn *c) {
  h2conn *h = calloc(1, sizeof *h);
  nghttp2_session_callbacks *cb;
  nghttp2_option *opt;
  nghttp2_settings_entry set = {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, H2_STREAMS};
  if (!h) return;
  h->c = c;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_send_callback(cb, h2_send);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, h2_begin);
  nghttp2_session_callbacks_set_on_header_callback(cb, h2_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, h2_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, h2_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, h2_close);
  /* kube-apiserver (Go) ignores RST_STREAM on streams it has finished; libcurl sends one for
   * many completed streams. nghttp2's rapid-reset guard would answer with GOAWAY: lift it. */
  nghttp2_option_new(&opt);
  nghttp2_option_set_stream_reset_rate_limit(opt, UINT32_MAX, UINT32_MAX);
  nghttp2_session_server_new2(&h->ng, cb, h, opt);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  nghttp2_submit_settings(h->ng, NGHTTP2_FLAG_NONE, &set, 1);
  while (!c->s->stopping &&
         (nghttp2_session_want_read(h->ng) || nghttp2_session_want_write(h->ng))) {
    struct pollfd p = {c->fd, POLLIN, 0};
    for (int i = 0; i < H2_STREAMS; i++) {
      if (h->st[i].id && h->st[i].ready) h2_start(h, &h->st[i]);
      if (h->st[i].id && h->st[i].watching && !h->st[i].ended) h2_pull(h, &h->st[i]);
    }
    if (nghttp2_session_send(h->ng)) break;
    if (SSL_pending(c->ssl) || poll(&p, 1, 50) > 0) {
      uint8_t buf[16384];
      int n = SSL_read(c->ssl, buf, sizeof buf);
      if (n <= 0) break;
      if (nghttp2_session_mem_recv(h->ng, buf, (size_t)n) < 0) break;
    }
  }
  for (int i = 0; i < H2_STREAMS; i++)
    if (h->st[i].id) free(h->st[i].q.body), ts_buf_free(&h->st[i].out);
  nghttp2_session_del(h->ng);
  free(h);
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg) {
  fa_server *s = arg;
  (void)ssl;
  for (unsigned int i = 0; i < inlen; i += 1 + in[i]) {
    if (s->http2 && in[i] == 2 && !memcmp(in + i + 1, "h2", 2)) {
      *out = in + i + 1, *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
  }
  for (unsigned int i = 0; i < inlen; i += 1 + in[i])
    if (in[i] == 8 && !memcmp(in + i + 1, "http/1.1", 8)) {
      *out = in + i + 1, *outlen = 8;
      return SSL_TLSEXT_ERR_OK;
    }
  return SSL_TLSEXT_ERR_NOACK;
}

fa_server *fa_start_http2(bool http2) {
  fa_server *s = calloc(1, sizeof *s);
  struct sockaddr_in a;
  socklen_t al = sizeof a;
  FILE *f;
  char path[400];
  if (!s) return NULL;
  signal(SIGPIPE, SIG_IGN); /* a client that hangs up must not kill the test */
  snprintf(s->dir, sizeof s->dir, "/tmp/tessera-fakeapi-XXXXXX");
  if (!mkdtemp(s->dir) || !tls_setup(s)) {
    fprintf(stderr, "fakeapi: cannot set up TLS material\n");
    free(s);
    return NULL;
  }
  snprintf(s->token, sizeof s->token, "tessera-test-token");
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->changed, NULL);
  for (int i = 0; i < MAX_CONNS; i++) s->fds[i] = -1;
  ts_buf_init(&s->log, 64u << 20);
  s->lfd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) || listen(s->lfd, 64) ||
      getsockname(s->lfd, (struct sockaddr *)&a, &al)) {
    fprintf(stderr, "fakeapi: cannot listen: %s\n", strerror(errno));
    return NULL;
  }
  s->port = ntohs(a.sin_port);
  snprintf(path, sizeof path, "%s/token", s->dir);
  if ((f = fopen(path, "w"))) fputs(s->token, f), fclose(f);
  snprintf(s->kubeconfig, sizeof s->kubeconfig, "%s/kubeconfig", s->dir);
  if ((f = fopen(s->kubeconfig, "w"))) {
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:%d\n"
            "    certificate-authority: ca.crt\n"
            "users:\n- name: sched\n  user:\n    tokenFile: token\n"
            "contexts:\n- name: fake\n  context: {cluster: fake, user: sched}\n",
            s->port);
    fclose(f);
  }
  s->started = time(NULL);
  s->lifetime_s = FA_LIFETIME_S;
  s->http2 = http2;
  SSL_CTX_set_alpn_select_cb(s->ssl, alpn_select, s);
  pthread_create(&s->accept_thread, NULL, accept_loop, s);
  return s;
}

fa_server *fa_start(void) {
  return fa_start_http2(false);
}

void fa_stop(fa_server *s) {
  char path[400];
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->stopping = true;
  for (int i = 0; i < MAX_CONNS; i++)
    if (s->fds[i] >= 0) shutdown(s->fds[i], SHUT_RDWR);
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->accept_thread, NULL);
  pthread_mutex_lock(&s->mu);
  while (s->conns) pthread_cond_wait(&s->changed, &s->mu);
  pthread_mutex_unlock(&s->mu);
  close(s->lfd);
  SSL_CTX_free(s->ssl);
  for (size_t i = 0; i < s->objs.n; i++) json_decref(s->objs.v[i].json);
  for (size_t i = 0; i < s->history.n; i++) json_decref(s->history.v[i].json);
  ts_vec_free(&s->objs);
  ts_vec_free(&s->history);
  for (size_t i = 0; i < s->snaps.n; i++) json_decref(s->snaps.v[i].items);
  ts_vec_free(&s->snaps);
  for (size_t i = 0; i < s->faults.n; i++) json_decref(s->faults.v[i].body);
  ts_vec_free(&s->faults);
  ts_buf_free(&s->log);
  json_decref(s->users);
  snprintf(path, sizeof path, "rm -rf '%s'", s->dir);
  if (system(path)) { /* best effort */
  }
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->changed);
  free(s);
}

const char *fa_kubeconfig(const fa_server *s) {
  return s->kubeconfig;
}

const char *fa_dir(const fa_server *s) {
  return s->dir;
}

bool fa_put(fa_server *s, const char *text) {
  in_docs docs = {0};
  ts_err err;
  bool ok = false;
  if (in_yaml_parse(text, strlen(text), &docs, &err) != TS_OK || docs.n != 1) {
    fprintf(stderr, "fakeapi: fa_put: %s\n", err.text);
    in_docs_free(&docs);
    return false;
  }
  {
    json_t *o = json_incref(docs.v[0].value), *md = json_object_get(o, "metadata");
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *av = json_string_value(json_object_get(o, "apiVersion"));
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    char res[64], group[96];
    if (kind && av && name) {
      resource_of(kind, res, sizeof res);
      group_of(av, group, sizeof group);
      pthread_mutex_lock(&s->mu);
      store(s, group, res, ns ? ns : "", name, o);
      pthread_mutex_unlock(&s->mu);
      ok = true;
    } else {
      json_decref(o);
    }
  }
  in_docs_free(&docs);
  return ok;
}

char *fa_get(fa_server *s, const char *path) {
  route r;
  obj *o;
  char *text = NULL;
  if (!parse_route(path, &r)) return NULL;
  pthread_mutex_lock(&s->mu);
  if (!r.name[0]) { /* a collection: its List */
    json_t *l = NULL;
    list(s, &r, "", &l);
    text = json_dumps(l, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(l);
  } else if ((o = find(s, r.group, r.resource, r.ns, r.name))) {
    text = json_dumps(o->json, JSON_COMPACT | JSON_SORT_KEYS);
  }
  pthread_mutex_unlock(&s->mu);
  return text;
}

bool fa_delete(fa_server *s, const char *path) {
  route r;
  obj *o;
  if (!parse_route(path, &r)) return false;
  pthread_mutex_lock(&s->mu);
  if ((o = find(s, r.group, r.resource, r.ns, r.name))) remove_obj(s, o);
  pthread_mutex_unlock(&s->mu);
  return o != NULL;
}

/* Adds a fault, dropping the spent ones (a soak test scripts thousands). */
static void push_fault(fa_server *s, const fault *f) {
  size_t kept = 0;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->faults.n; i++) {
    if (s->faults.v[i].times > 0)
      s->faults.v[kept++] = s->faults.v[i];
    else
      json_decref(s->faults.v[i].body);
  }
  s->faults.n = kept;
  ts_vec_push(&s->faults, *f);
  pthread_mutex_unlock(&s->mu);
}

void fa_fault(fa_server *s, const char *method, const char *prefix, int status, int times,
              const char *message) {
  fault f;
  memset(&f, 0, sizeof f);
  snprintf(f.method, sizeof f.method, "%s", method);
  snprintf(f.prefix, sizeof f.prefix, "%s", prefix);
  snprintf(f.message, sizeof f.message, "%s", message ? message : "injected fault");
  f.status = status, f.times = times;
  push_fault(s, &f);
}

void fa_fault_body(fa_server *s, const char *method, const char *prefix, int status, int times,
                   const char *body) {
  fault f;
  json_error_t e;
  memset(&f, 0, sizeof f);
  snprintf(f.method, sizeof f.method, "%s", method);
  snprintf(f.prefix, sizeof f.prefix, "%s", prefix);
  f.status = status, f.times = times;
  f.body = json_loads(body, 0, &e);
  push_fault(s, &f);
}

void fa_delay(fa_server *s, const char *method, const char *prefix, int ms, int times) {
  fault f;
  memset(&f, 0, sizeof f);
  snprintf(f.method, sizeof f.method, "%s", method);
  snprintf(f.prefix, sizeof f.prefix, "%s", prefix);
  f.times = times, f.delay_ms = ms;
  push_fault(s, &f);
}

int fa_misbound(fa_server *s) {
  int n;
  pthread_mutex_lock(&s->mu);
  n = s->misbound;
  pthread_mutex_unlock(&s->mu);
  return n;
}

int fa_pending_faults(fa_server *s) {
  int n = 0;
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->faults.n; i++) n += s->faults.v[i].times > 0;
  pthread_mutex_unlock(&s->mu);
  return n;
}

void fa_clear_faults(fa_server *s) {
  pthread_mutex_lock(&s->mu);
  for (size_t i = 0; i < s->faults.n; i++) s->faults.v[i].times = 0;
  pthread_mutex_unlock(&s->mu);
}

void fa_set_lifetime(fa_server *s, int seconds) {
  pthread_mutex_lock(&s->mu);
  s->lifetime_s = seconds;
  pthread_mutex_unlock(&s->mu);
}

void fa_goaway(fa_server *s, int after) {
  pthread_mutex_lock(&s->mu);
  s->goaway_after = after;
  pthread_mutex_unlock(&s->mu);
}

void fa_compact(fa_server *s) {
  size_t kept = 0;
  pthread_mutex_lock(&s->mu);
  s->compacted = ++s->rv;                     /* every watch now lags behind: each gets its 410 */
  for (size_t i = 0; i < s->history.n; i++) { /* and what it forgets is freed, as etcd does */
    if (s->history.v[i].rv <= s->compacted)
      json_decref(s->history.v[i].json);
    else
      s->history.v[kept++] = s->history.v[i];
  }
  s->history.n = kept;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->mu);
}

void fa_add_user(fa_server *s, const char *token, const char *username, const char *allow) {
  pthread_mutex_lock(&s->mu);
  if (!s->users) s->users = json_object();
  json_object_set_new(s->users, token,
                      json_pack("{s:s, s:s?}", "username", username, "allow", allow));
  pthread_mutex_unlock(&s->mu);
}

void fa_set_token(fa_server *s, const char *token) {
  pthread_mutex_lock(&s->mu);
  snprintf(s->token, sizeof s->token, "%s", token);
  pthread_mutex_unlock(&s->mu);
}

int fa_count(fa_server *s, const char *prefix) {
  int n = 0;
  size_t pl = strlen(prefix);
  pthread_mutex_lock(&s->mu);
  for (const char *p = s->log.data; p && p < s->log.data + s->log.len;) {
    const char *e = memchr(p, '\n', (size_t)(s->log.data + s->log.len - p));
    if (!strncmp(p, prefix, pl)) n++;
    p = e ? e + 1 : s->log.data + s->log.len;
  }
  pthread_mutex_unlock(&s->mu);
  return n;
}

bool fa_wait(fa_server *s, const char *prefix, int n, int timeout_ms) {
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    if (fa_count(s, prefix) >= n) return true;
    usleep(20000);
  }
  return false;
}

char *fa_log(fa_server *s) {
  char *out;
  pthread_mutex_lock(&s->mu);
  out = strndup(s->log.data ? s->log.data : "", s->log.len);
  pthread_mutex_unlock(&s->mu);
  return out;
}

int fa_connections(fa_server *s) {
  int n;
  pthread_mutex_lock(&s->mu);
  n = s->accepted;
  pthread_mutex_unlock(&s->mu);
  return n;
}
