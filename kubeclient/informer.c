/* kubeclient/informer.c - list and watch every resource Tessera reads.
 *
 * Per resource: a paginated list (limit/continue), then a watch from the list's
 * resourceVersion with bookmarks. A watch the server ends is re-opened from the last
 * resourceVersion seen; "410 Gone" (as an HTTP status or as an ERROR event) means a re-list,
 * after which objects that disappeared are delivered as DELETED. Connection errors, 429 and 5xx
 * back off with jitter (Retry-After honoured). 404 and 403 skip the resource with one log line.
 * Discovery (/apis) picks the version of resource.k8s.io and kueue.x-k8s.io first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubeclient/kc_int.h"

#define WATCH_TIMEOUT_S 300 /* server-side timeout of one watch */
#define BACKOFF_MAX_MS  30000

typedef enum phase { P_IDLE, P_LIST, P_WATCH, P_SKIPPED } phase;

typedef struct informer {
  kc_informers *all;            /* owner */
  const kc_resource_spec *spec; /* what it watches (the caller's) */
  kc_resource res;              /* what it watches, in the version chosen */
  char version[32];             /* that version */
  char api_version[96];         /* group/version or v1 */
  char path[256];               /* /api/v1/pods */
  phase ph;                     /* what it is doing */
  kc_req *req;                  /* in flight */
  char rv[64];                  /* resourceVersion to watch from */
  char cont[2048];              /* continue token of the list */
  ts_map keys;                  /* "ns/name" (owned) -> 1: objects seen, for re-list deletions */
  ts_map listed;                /* keys seen by the list in progress */
  json_t *pending;              /* objects of the list in progress (delivered at its end) */
  bool synced;                  /* listed once */
  uint32_t failures;            /* consecutive failures (backoff) */
  uv_timer_t retry;             /* backoff */
} informer;

struct kc_informers {
  kc_client *c;           /* client */
  kc_informer_opts o;     /* callbacks */
  informer *inf;          /* one per resource (owned) */
  size_t n;               /* entries */
  kc_req *discovery;      /* GET /apis in flight */
  uv_timer_t disc_retry;  /* backoff of discovery */
  uint32_t disc_failures; /* consecutive failed discoveries */
  bool discovered;        /* versions chosen */
  bool synced_reported;   /* on_synced called */
  bool stopping;          /* kc_informers_stop was called */
  int open_timers;        /* timers not yet closed */
};

static void start_list(informer *f);
static void start_watch(informer *f);

static void key_of(json_t *obj, char *out, size_t cap) {
  json_t *md = json_object_get(obj, "metadata");
  const char *ns = json_string_value(json_object_get(md, "namespace"));
  snprintf(out, cap, "%s/%s", ns ? ns : "", json_string_value(json_object_get(md, "name")) ?: "");
}

static void set_key(ts_map *m, const char *k) {
  char *copy;
  if (ts_map_get(m, k, strlen(k))) return;
  if ((copy = ts_strdup(k)) && ts_map_put(m, copy, strlen(copy), copy, NULL) != TS_OK)
    ts_free(copy);
}

static void del_key(ts_map *m, const char *k) {
  ts_free(ts_map_del(m, k, strlen(k)));
}

static void clear_keys(ts_map *m) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(m, &it, &s)) ts_free(s->value);
  ts_map_free(m);
  ts_map_init(m);
}

static void deliver(informer *f, kc_event_type t, json_t *obj) {
  char key[TS_KEY_MAX];
  if (!json_object_get(obj, "kind")) json_object_set_new(obj, "kind", json_string(f->res.kind));
  if (!json_object_get(obj, "apiVersion"))
    json_object_set_new(obj, "apiVersion", json_string(f->api_version));
  key_of(obj, key, sizeof key);
  if (t == KC_DELETED)
    del_key(&f->keys, key);
  else
    set_key(&f->keys, key);
  f->all->o.on_event(f->all->o.ud, t, obj, &f->res);
}

static void check_synced(kc_informers *a) {
  if (a->synced_reported) return;
  for (size_t i = 0; i < a->n; i++)
    if (!a->inf[i].synced && a->inf[i].ph != P_SKIPPED) return;
  a->synced_reported = true;
  if (a->o.on_synced) a->o.on_synced(a->o.ud);
}

static void on_retry(uv_timer_t *t) {
  informer *f = t->data;
  if (f->all->stopping) return;
  if (f->rv[0] && f->synced)
    start_watch(f);
  else
    start_list(f);
}

/* Tries again later: exponential backoff with jitter, or the server's Retry-After. */
static void backoff(informer *f, const kc_response *r, bool relist) {
  uint64_t ms = 500u << (f->failures < 6 ? f->failures : 6);
  if (ms > BACKOFF_MAX_MS) ms = BACKOFF_MAX_MS;
  ms = ms / 2 + (uint64_t)(rand() % (int)(ms / 2 + 1));
  if (r && r->retry_after_s > 0) ms = (uint64_t)r->retry_after_s * 1000;
  f->failures++;
  if (relist) f->rv[0] = '\0';
  ts_log(TS_LOG_WARN, "%s: %s (HTTP %ld); retrying in %llu ms", f->path,
         r && r->error ? r->error : "request failed", r ? r->status : 0, (unsigned long long)ms);
  uv_timer_start(&f->retry, on_retry, ms, 0);
}

/* 404 / 403: the server does not serve the resource to us. One log line, no retries. */
static bool skip(informer *f, const kc_response *r) {
  if (r->status != 404 && r->status != 403) return false;
  ts_log(TS_LOG_WARN, "%s: %s; not watching %s", f->path,
         r->status == 404 ? "not served by this API server" : "forbidden for this identity",
         f->res.id);
  f->ph = P_SKIPPED;
  if (f->all->o.on_skipped) f->all->o.on_skipped(f->all->o.ud, f->res.kind);
  check_synced(f->all);
  return true;
}

/* End of a (re-)list: deliver what changed, DELETED for what vanished. */
static void list_complete(informer *f) {
  size_t i, it = 0;
  json_t *obj;
  const ts_map_slot *s;
  char *gone[256];
  size_t ngone;
  json_array_foreach(f->pending, i, obj) {
    char key[TS_KEY_MAX];
    key_of(obj, key, sizeof key);
    deliver(f, ts_map_get(&f->keys, key, strlen(key)) ? KC_MODIFIED : KC_ADDED, obj);
  }
  do { /* objects known before that the list no longer has */
    ngone = 0;
    it = 0;
    while (ngone < 256 && ts_map_next(&f->keys, &it, &s))
      if (!ts_map_get(&f->listed, s->key, s->len)) gone[ngone++] = (char *)s->value;
    for (size_t k = 0; k < ngone; k++) {
      const char *slash = strchr(gone[k], '/');
      json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}}", "kind", f->res.kind, "apiVersion",
                            f->api_version, "metadata", "namespace", "", "name", slash + 1);
      if (slash != gone[k])
        json_object_set_new(json_object_get(o, "metadata"), "namespace",
                            json_stringn(gone[k], (size_t)(slash - gone[k])));
      deliver(f, KC_DELETED, o);
      json_decref(o);
    }
  } while (ngone == 256);
  json_decref(f->pending);
  f->pending = NULL;
  clear_keys(&f->listed);
  f->synced = true;
  check_synced(f->all);
  start_watch(f);
}

static void on_list(void *ud, const kc_response *r) {
  informer *f = ud;
  json_t *body = NULL, *items, *obj;
  ts_err err;
  const char *cont, *rv;
  size_t i;
  f->req = NULL;
  if (f->all->stopping) return;
  if (r->status == 401) kc__token_expired(f->all->c);
  if (skip(f, r)) return;
  if (r->status == 410) { /* the continue token expired: start the list again */
    f->cont[0] = '\0';
    backoff(f, r, true);
    return;
  }
  if (r->status != 200 || in_json_parse(r->body, r->len, &body, &err) != TS_OK) {
    backoff(f, r, true);
    return;
  }
  f->failures = 0;
  if (!f->pending) f->pending = json_array();
  items = json_object_get(body, "items");
  json_array_foreach(items, i, obj) {
    char key[TS_KEY_MAX];
    key_of(obj, key, sizeof key);
    set_key(&f->listed, key);
    json_array_append(f->pending, obj);
  }
  cont = json_string_value(json_object_get(json_object_get(body, "metadata"), "continue"));
  rv = json_string_value(json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
  if (cont && *cont) {
    snprintf(f->cont, sizeof f->cont, "%s", cont);
    json_decref(body);
    start_list(f);
    return;
  }
  f->cont[0] = '\0';
  snprintf(f->rv, sizeof f->rv, "%s", rv ? rv : "");
  json_decref(body);
  list_complete(f);
}

static void start_list(informer *f) {
  char path[KC_QUERY_PATH_MAX];
  f->ph = P_LIST;
  if (!f->cont[0]) {
    json_decref(f->pending);
    f->pending = NULL;
    clear_keys(&f->listed);
  }
  snprintf(path, sizeof path, "%s?limit=%d%s%s", f->path, KC_PAGE, f->cont[0] ? "&continue=" : "",
           f->cont);
  f->req = kc_request(f->all->c, "GET", path, NULL, NULL, NULL, on_list, f);
}

static void on_watch_line(void *ud, const char *line, size_t len) {
  informer *f = ud;
  json_t *ev = NULL, *obj;
  ts_err err;
  const char *type, *rv;
  if (in_json_parse(line, len, &ev, &err) != TS_OK) {
    ts_log(TS_LOG_WARN, "%s: watch: %s", f->path, err.text);
    return;
  }
  type = json_string_value(json_object_get(ev, "type"));
  obj = json_object_get(ev, "object");
  rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
  if (type && !strcmp(type, "ERROR")) {
    json_int_t code = json_integer_value(json_object_get(obj, "code"));
    ts_log(TS_LOG_INFO, "%s: watch ended with %lld: %s", f->path, (long long)code,
           json_string_value(json_object_get(obj, "message")) ?: "");
    if (code == 410) f->rv[0] = '\0', f->synced = true; /* re-list when the stream ends */
    kc_cancel(f->req);
    f->req = NULL;
    json_decref(ev);
    uv_timer_start(&f->retry, on_retry, code == 410 ? 0 : 1000, 0);
    if (code == 410) f->failures = 0;
    return;
  }
  if (rv) snprintf(f->rv, sizeof f->rv, "%s", rv);
  if (type && strcmp(type, "BOOKMARK")) {
    kc_event_type t = !strcmp(type, "ADDED")     ? KC_ADDED
                      : !strcmp(type, "DELETED") ? KC_DELETED
                                                 : KC_MODIFIED;
    if (json_is_object(obj)) deliver(f, t, obj);
  }
  json_decref(ev);
}

static void on_watch_end(void *ud, const kc_response *r) {
  informer *f = ud;
  f->req = NULL;
  if (f->all->stopping) return;
  if (r->status == 401) kc__token_expired(f->all->c);
  if (r->status == 410) { /* too old: list again */
    f->rv[0] = '\0';
    f->failures = 0;
    start_list(f);
    return;
  }
  if (r->status == 200 && !r->error) { /* the server closed a healthy watch: re-open */
    f->failures = 0;
    start_watch(f);
    return;
  }
  backoff(f, r, false);
}

static void start_watch(informer *f) {
  char path[512];
  if (!f->rv[0]) {
    start_list(f);
    return;
  }
  f->ph = P_WATCH;
  snprintf(path, sizeof path,
           "%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%d", f->path,
           f->rv, WATCH_TIMEOUT_S);
  f->req = kc_request(f->all->c, "GET", path, NULL, NULL, on_watch_line, on_watch_end, f);
}

/* Does the group (a /apis entry) offer version want (len bytes)? */
static bool offers(json_t *g, const char *want, size_t len) {
  size_t k;
  json_t *v;
  json_array_foreach(json_object_get(g, "versions"), k, v) {
    const char *ver = json_string_value(json_object_get(v, "version"));
    if (ver && strlen(ver) == len && !memcmp(ver, want, len)) return true;
  }
  return false;
}

/* /apis: the first of the spec's versions the server offers, into out; false when none. The
 * core group is always served (in v1). */
static bool choose(json_t *apis, const kc_resource_spec *s, char *out, size_t cap) {
  size_t i;
  json_t *g;
  if (!s->group[0]) return snprintf(out, cap, "v1"), true;
  json_array_foreach(json_object_get(apis, "groups"), i, g) {
    if (strcmp(json_string_value(json_object_get(g, "name")) ?: "", s->group)) continue;
    for (const char *w = s->versions; *w;) {
      size_t len = strcspn(w, " ");
      if (len && len < cap && offers(g, w, len))
        return snprintf(out, cap, "%.*s", (int)len, w), true;
      w += len;
      w += strspn(w, " ");
    }
  }
  return false;
}

static void on_discovery(void *ud, const kc_response *r);

static void on_disc_retry(uv_timer_t *t) {
  kc_informers *a = t->data;
  if (!a->stopping)
    a->discovery = kc_request(a->c, "GET", "/apis", NULL, NULL, NULL, on_discovery, a);
}

static void on_discovery(void *ud, const kc_response *r) {
  kc_informers *a = ud;
  json_t *apis = NULL;
  ts_err err;
  a->discovery = NULL;
  if (a->stopping) return;
  if (r->status != 200 || in_json_parse(r->body, r->len, &apis, &err) != TS_OK) {
    uint64_t ms = 500u << (a->disc_failures < 6 ? a->disc_failures++ : 6);
    if (r->status == 401) kc__token_expired(a->c);
    ts_log(TS_LOG_WARN, "GET /apis: %s (HTTP %ld); retrying in %llu ms",
           r->error ? r->error : "failed", r->status, (unsigned long long)ms);
    uv_timer_start(&a->disc_retry, on_disc_retry, ms, 0);
    return;
  }
  for (size_t i = 0; i < a->n; i++) {
    informer *f = &a->inf[i];
    const kc_resource_spec *sp = f->spec;
    bool served = choose(apis, sp, f->version, sizeof f->version);
    f->res = (kc_resource){sp->resource, sp->group, served ? f->version : "", sp->kind};
    if (!served) {
      ts_log(TS_LOG_WARN, "the API server does not serve %s%s%s; not watching it", sp->resource,
             sp->group[0] ? "." : "", sp->group);
      f->ph = P_SKIPPED;
      if (a->o.on_skipped) a->o.on_skipped(a->o.ud, sp->kind);
      continue;
    }
    if (sp->group[0]) {
      snprintf(f->api_version, sizeof f->api_version, "%s/%s", sp->group, f->version);
      snprintf(f->path, sizeof f->path, "/apis/%s/%s/%s", sp->group, f->version, sp->resource);
    } else {
      snprintf(f->api_version, sizeof f->api_version, "v1");
      snprintf(f->path, sizeof f->path, "/api/v1/%s", sp->resource);
    }
    start_list(f);
  }
  json_decref(apis);
  a->discovered = true;
  check_synced(a);
}

kc_informers *kc_informers_start(kc_client *c, const kc_informer_opts *o, ts_err *err) {
  kc_informers *a = ts_calloc(1, sizeof *a);
  if (!a || !(a->inf = ts_calloc(o->nresources + 1, sizeof *a->inf))) {
    ts_free(a);
    return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  }
  a->c = c, a->o = *o, a->n = o->nresources;
  for (size_t i = 0; i < a->n; i++) {
    informer *f = &a->inf[i];
    f->all = a, f->spec = &o->resources[i];
    ts_map_init(&f->keys);
    ts_map_init(&f->listed);
    uv_timer_init(c->loop, &f->retry);
    f->retry.data = f;
    a->open_timers++;
  }
  uv_timer_init(c->loop, &a->disc_retry);
  a->disc_retry.data = a;
  a->open_timers++;
  a->discovery = kc_request(c, "GET", "/apis", NULL, NULL, NULL, on_discovery, a);
  return a;
}

bool kc_informers_synced(const kc_informers *a) {
  return a && a->synced_reported;
}

static void timer_closed(uv_handle_t *h) {
  informer *f = h->data;
  kc_informers *a = f->all;
  if (--a->open_timers == 0) ts_free(a->inf), ts_free(a);
}

static void disc_closed(uv_handle_t *h) {
  kc_informers *a = h->data;
  if (--a->open_timers == 0) ts_free(a->inf), ts_free(a);
}

void kc_informers_stop(kc_informers *a) {
  if (!a) return;
  a->stopping = true;
  kc_cancel(a->discovery);
  uv_timer_stop(&a->disc_retry);
  uv_close((uv_handle_t *)&a->disc_retry, disc_closed);
  for (size_t i = 0; i < a->n; i++) {
    informer *f = &a->inf[i];
    kc_cancel(f->req);
    json_decref(f->pending);
    clear_keys(&f->keys);
    clear_keys(&f->listed);
    ts_map_free(&f->keys);
    ts_map_free(&f->listed);
    uv_timer_stop(&f->retry);
    uv_close((uv_handle_t *)&f->retry, timer_closed);
  }
}
