/* kubeclient/informer.c - list and watch every resource Tessera reads.
 *
 * Per resource: a paginated list (limit/continue), then a watch from the list's
 * resourceVersion with bookmarks. A watch the server ends is re-opened from the last
 * resourceVersion seen; "410 Gone" (as an HTTP status or as an ERROR event) means a re-list,
 * after which objects that disappeared are delivered as DELETED. Every retry backs off with
 * jitter (Retry-After honoured up to KC_RETRY_AFTER_MAX_S): connection errors, 429 and 5xx, a
 * list without a resourceVersion or with more than KC_LIST_PAGES_MAX pages, a watch the server
 * closes within a second having sent nothing (as client-go's reflector: "very short watch"),
 * an ERROR event, a watch still open long after its timeoutSeconds (a silent connection).
 * 404 and 403 skip the resource with one log line. Nothing the server sends is cut to fit:
 * keys, tokens and resourceVersions are as long as they are (tokens over KC_CONTINUE_MAX are
 * refused as a failure). Discovery (/apis) picks the version of resource.k8s.io and
 * kueue.x-k8s.io first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubeclient/kc_int.h"

#define BACKOFF_MAX_MS 30000
#define SHORT_WATCH_MS 1000 /* a watch closed sooner having sent nothing is a failure */

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
  char *rv;                     /* owned: resourceVersion to watch from, NULL for none */
  char *cont;                   /* owned: continue token of the list, NULL for none */
  unsigned pages;               /* of the list in progress */
  ts_map keys;                  /* "ns/name" -> seen (owned): objects seen, for deletions */
  ts_map listed;                /* keys seen by the list in progress */
  size_t nlisted;               /* objects the list in progress delivered */
  size_t page_items;            /* objects of the page being read */
  bool synced;                  /* listed once */
  uint32_t failures;            /* consecutive failures (backoff) */
  char last_error[200];         /* of the last failure */
  uint64_t list_started;        /* uv_now when the list (its first page) was asked for */
  uint64_t synced_after;        /* ms from the informers' start to the end of its first list */
  uint64_t page_started;        /* uv_now when the page in flight was asked for */
  uint64_t watch_started;       /* uv_now when the watch was opened */
  uint64_t watch_lines;         /* lines the watch has sent */
  uv_timer_t retry;             /* backoff */
} informer;

/* An object seen: its key "ns/name" and where the namespace ends (either may hold a '/'). */
typedef struct seen {
  size_t nslen; /* bytes of the namespace */
  char key[];   /* "ns/name" */
} seen;

struct kc_informers {
  kc_client *c;           /* client */
  kc_informer_opts o;     /* callbacks */
  informer *inf;          /* one per resource (owned) */
  size_t n;               /* entries */
  kc_req *discovery;      /* GET /apis in flight */
  uv_timer_t disc_retry;  /* backoff of discovery */
  uint32_t disc_failures; /* consecutive failed discoveries */
  char disc_error[200];   /* the last one's error */
  bool discovered;        /* versions chosen */
  bool synced_reported;   /* on_synced called */
  bool stopping;          /* kc_informers_stop was called */
  int open_timers;        /* timers not yet closed */
  uint64_t started;       /* uv_now at kc_informers_start */
};

static void start_list(informer *f);
static void start_watch(informer *f);

/* The key of obj (ns/name) as a new seen, NULL when out of memory. */
static seen *key_of(json_t *obj) {
  json_t *md = json_object_get(obj, "metadata");
  const char *ns = json_string_value(json_object_get(md, "namespace")) ?: "";
  const char *name = json_string_value(json_object_get(md, "name")) ?: "";
  size_t nl = strlen(ns), ml = strlen(name);
  seen *k = ts_malloc(sizeof *k + nl + ml + 2);
  if (!k) return NULL;
  k->nslen = nl;
  memcpy(k->key, ns, nl);
  k->key[nl] = '/';
  memcpy(k->key + nl + 1, name, ml + 1);
  return k;
}

/* Puts k into m (which then owns it) unless it is there (then k is freed). */
static void set_key(ts_map *m, seen *k) {
  if (!k) return;
  if (ts_map_get(m, k->key, strlen(k->key)) ||
      ts_map_put(m, k->key, strlen(k->key), k, NULL) != TS_OK)
    ts_free(k);
}

static bool has_key(const ts_map *m, const seen *k) {
  return k && ts_map_get(m, k->key, strlen(k->key));
}

static void clear_keys(ts_map *m) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(m, &it, &s)) ts_free(s->value);
  ts_map_free(m);
  ts_map_init(m);
}

static void set_str(char **at, const char *v) {
  ts_free(*at);
  *at = v && *v ? ts_strdup(v) : NULL;
}

static void deliver(informer *f, kc_event_type t, json_t *obj) {
  seen *k;
  if (!json_object_get(obj, "kind")) json_object_set_new(obj, "kind", json_string(f->res.kind));
  if (!json_object_get(obj, "apiVersion"))
    json_object_set_new(obj, "apiVersion", json_string(f->api_version));
  if (t == KC_DELETED && (k = key_of(obj))) {
    ts_free(ts_map_del(&f->keys, k->key, strlen(k->key)));
    ts_free(k);
  } else if (t != KC_DELETED) {
    set_key(&f->keys, key_of(obj));
  }
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
  if (f->rv && f->synced)
    start_watch(f);
  else
    start_list(f);
}

/* Tries again later: exponential backoff with jitter, or the server's Retry-After (capped when
 * the response was read). why says what failed; relist: start again from a list. */
static void backoff(informer *f, const kc_response *r, const char *why, bool relist) {
  uint64_t ms = 500u << (f->failures < 6 ? f->failures : 6);
  if (ms > BACKOFF_MAX_MS) ms = BACKOFF_MAX_MS;
  ms = ms / 2 + (uint64_t)(rand() % (int)(ms / 2 + 1));
  if (r && r->retry_after_s > 0) ms = (uint64_t)r->retry_after_s * 1000;
  f->failures++;
  if (relist) {
    set_str(&f->rv, NULL);
    set_str(&f->cont, NULL);
  }
  if (!why) why = r && r->error ? r->error : "request failed";
  snprintf(f->last_error, sizeof f->last_error, "%s (HTTP %ld)", why, r ? r->status : 0);
  ts_log(TS_LOG_WARN, "%s: %s; retrying in %llu ms", f->path, f->last_error,
         (unsigned long long)ms);
  uv_timer_start(&f->retry, on_retry, ms, 0);
}

/* 404 / 403: the server does not serve the resource to us. One log line, no retries. */
static bool skip(informer *f, const kc_response *r) {
  if (r->status != 404 && r->status != 403) return false;
  ts_log(TS_LOG_WARN, "%s: %s; not watching %s", f->path,
         r->status == 404 ? "not served by this API server" : "forbidden for this identity",
         f->res.id);
  f->ph = P_SKIPPED;
  if (f->all->o.on_skipped) f->all->o.on_skipped(f->all->o.ud, f->res.group, f->res.kind);
  check_synced(f->all);
  return true;
}

/* End of a (re-)list: the pages were delivered as they came; DELETED for what vanished. */
static void list_complete(informer *f) {
  size_t it = 0;
  const ts_map_slot *s;
  seen *gone[256];
  size_t ngone;
  do { /* objects known before that the list no longer has */
    ngone = 0;
    it = 0;
    while (ngone < 256 && ts_map_next(&f->keys, &it, &s))
      if (!ts_map_get(&f->listed, s->key, s->len)) gone[ngone++] = s->value;
    for (size_t k = 0; k < ngone; k++) {
      const seen *g = gone[k];
      json_t *o =
          json_pack("{s:s, s:s, s:{s:s%, s:s}}", "kind", f->res.kind, "apiVersion", f->api_version,
                    "metadata", "namespace", g->key, g->nslen, "name", g->key + g->nslen + 1);
      if (!o) { /* no memory: forget it rather than loop */
        ts_free(ts_map_del(&f->keys, g->key, strlen(g->key)));
        continue;
      }
      deliver(f, KC_DELETED, o); /* frees g */
      json_decref(o);
    }
  } while (ngone == 256);
  ts_log(TS_LOG_DEBUG, "%s: listed %zu objects in %u pages, %llu ms", f->path, f->nlisted, f->pages,
         (unsigned long long)(uv_now(f->all->c->loop) - f->list_started));
  clear_keys(&f->listed);
  if (!f->synced) f->synced_after = uv_now(f->all->c->loop) - f->all->started;
  f->synced = true;
  check_synced(f->all);
  start_watch(f);
}

/* One object of a list page, as the page is scanned: into the model at once (ADDED, or
 * MODIFIED for an object known before a re-list). Holding a page's (or the whole list's)
 * parsed JSON took ~25 KiB per object: 220 MB at 9,000 objects (make e2e-scale). Only the keys
 * are kept until the list ends, for the deletions. */
static ts_rc on_list_item(void *ud, json_t *obj, const char *file, int line, int index) {
  informer *f = ud;
  seen *k = key_of(obj);
  (void)file, (void)line, (void)index;
  deliver(f, has_key(&f->keys, k) ? KC_MODIFIED : KC_ADDED, obj);
  set_key(&f->listed, k);
  f->nlisted++;
  f->page_items++;
  return TS_OK;
}

static void on_list(void *ud, const kc_response *r) {
  informer *f = ud;
  json_t *page = NULL, *md;
  ts_err err;
  const char *cont, *rv;
  f->req = NULL;
  if (f->all->stopping) return;
  if (r->status == 401) kc__token_expired(f->all->c);
  if (skip(f, r)) return;
  if (r->status == 410) { /* the continue token expired: start the list again */
    backoff(f, r, "the continue token expired", true);
    return;
  }
  if (r->status != 200) {
    backoff(f, r, NULL, true);
    return;
  }
  f->page_items = 0;
  if (in_json_items(r->body, r->len, on_list_item, f, &page, &err) != TS_OK) {
    char why[160];
    snprintf(why, sizeof why, "the list is not JSON: %.120s", err.text);
    backoff(f, r, why, true);
    return;
  }
  md = json_object_get(page, "metadata");
  cont = json_string_value(json_object_get(md, "continue"));
  rv = json_string_value(json_object_get(md, "resourceVersion"));
  if (cont && !*cont) cont = NULL;
  if ((!cont && (!rv || !*rv)) || ++f->pages > KC_LIST_PAGES_MAX ||
      (cont && strlen(cont) > KC_CONTINUE_MAX) || (rv && strlen(rv) > KC_CONTINUE_MAX)) {
    char why[160];
    if (f->pages > KC_LIST_PAGES_MAX)
      snprintf(why, sizeof why, "the list goes on for more than %d pages", KC_LIST_PAGES_MAX);
    else if (cont && strlen(cont) > KC_CONTINUE_MAX)
      snprintf(why, sizeof why, "the list's continue token is longer than %d bytes",
               KC_CONTINUE_MAX);
    else if (rv && *rv)
      snprintf(why, sizeof why, "the list's resourceVersion is longer than %d bytes",
               KC_CONTINUE_MAX);
    else
      snprintf(why, sizeof why, "the list has no metadata.resourceVersion");
    json_decref(page);
    backoff(f, r, why, true);
    return;
  }
  ts_log(TS_LOG_DEBUG, "%s: list page %u: %zu objects, %zu bytes in %llu ms", f->path, f->pages,
         f->page_items, r->len, (unsigned long long)(uv_now(f->all->c->loop) - f->page_started));
  set_str(&f->cont, cont);
  if (cont) {
    json_decref(page);
    start_list(f);
    return;
  }
  f->failures = 0;
  set_str(&f->rv, rv);
  json_decref(page);
  list_complete(f);
}

/* s percent-encoded for a query (RFC 3986 unreserved characters kept). */
static void put_query_value(ts_buf *b, const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
        strchr("-._~", ch))
      ts_buf_putc(b, (char)ch);
    else
      ts_buf_printf(b, "%%%02X", ch);
  }
}

static void start_list(informer *f) {
  ts_buf path;
  f->ph = P_LIST;
  if (!f->cont) {
    f->nlisted = 0;
    clear_keys(&f->listed);
    f->pages = 0;
    f->list_started = uv_now(f->all->c->loop);
  }
  f->page_started = uv_now(f->all->c->loop);
  ts_buf_init(&path, TS_BUF_DEFAULT_MAX);
  ts_buf_printf(&path, "%s?limit=%d", f->path, KC_PAGE);
  if (f->cont) ts_buf_puts(&path, "&continue="), put_query_value(&path, f->cont);
  f->req = path.data ? kc_request(f->all->c, "GET", path.data, NULL, NULL, on_list, f) : NULL;
  ts_buf_free(&path);
  if (!f->req && !f->all->c->closing) backoff(f, NULL, "out of memory", true);
}

static void on_watch_line(void *ud, const char *line, size_t len) {
  informer *f = ud;
  json_t *ev = NULL, *obj;
  ts_err err;
  const char *type, *rv;
  f->watch_lines++;
  if (in_json_parse(line, len, &ev, &err) != TS_OK) {
    ts_log(TS_LOG_WARN, "%s: watch: %s", f->path, err.text);
    return;
  }
  type = json_string_value(json_object_get(ev, "type"));
  obj = json_object_get(ev, "object");
  rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
  if (type && !strcmp(type, "ERROR")) {
    json_int_t code = json_integer_value(json_object_get(obj, "code"));
    char why[200];
    snprintf(why, sizeof why, "watch ended with %lld: %.150s", (long long)code,
             json_string_value(json_object_get(obj, "message")) ?: "");
    kc_cancel(f->req);
    f->req = NULL;
    json_decref(ev);
    if (code == 410) { /* too old: list again at once */
      ts_log(TS_LOG_INFO, "%s: %s", f->path, why);
      set_str(&f->rv, NULL);
      f->failures = 0;
      uv_timer_start(&f->retry, on_retry, 0, 0);
    } else {
      backoff(f, NULL, why, false);
    }
    return;
  }
  if (rv && *rv && strlen(rv) <= KC_CONTINUE_MAX) set_str(&f->rv, rv);
  f->failures = 0; /* a watch that delivers is healthy: a later break backs off from the start */
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
    set_str(&f->rv, NULL);
    f->failures = 0;
    start_list(f);
    return;
  }
  if (r->status == 200 && !r->error) {
    if (!f->watch_lines && uv_now(f->all->c->loop) - f->watch_started < SHORT_WATCH_MS) {
      backoff(f, r, "very short watch: closed at once with nothing sent", false);
      return;
    }
    f->failures = 0; /* the server closed a healthy watch: re-open */
    start_watch(f);
    return;
  }
  backoff(f, r, r->status == 200 && r->error ? r->error : NULL, false);
}

static void start_watch(informer *f) {
  ts_buf path;
  int timeout = f->all->o.watch_timeout_s > 0 ? f->all->o.watch_timeout_s : KC_WATCH_TIMEOUT_S;
  long grace_s = timeout < 30 ? timeout : 30;
  if (!f->rv) {
    start_list(f);
    return;
  }
  f->ph = P_WATCH;
  f->watch_started = uv_now(f->all->c->loop);
  f->watch_lines = 0;
  ts_buf_init(&path, TS_BUF_DEFAULT_MAX);
  ts_buf_printf(&path, "%s?watch=1&resourceVersion=", f->path);
  put_query_value(&path, f->rv);
  ts_buf_printf(&path, "&allowWatchBookmarks=true&timeoutSeconds=%d", timeout);
  f->req = path.data ? kc_stream(f->all->c, path.data, (timeout + grace_s) * 1000L, on_watch_line,
                                 on_watch_end, f)
                     : NULL;
  ts_buf_free(&path);
  if (!f->req && !f->all->c->closing) backoff(f, NULL, "out of memory", false);
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
  if (!a->stopping) a->discovery = kc_request(a->c, "GET", "/apis", NULL, NULL, on_discovery, a);
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
    if (r->retry_after_s > 0) ms = (uint64_t)r->retry_after_s * 1000;
    snprintf(a->disc_error, sizeof a->disc_error, "GET /apis: %s (HTTP %ld)",
             r->error           ? r->error
             : r->status == 200 ? "not JSON"
                                : "failed",
             r->status);
    ts_log(TS_LOG_WARN, "%s; retrying in %llu ms", a->disc_error, (unsigned long long)ms);
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
      if (a->o.on_skipped) a->o.on_skipped(a->o.ud, sp->group, sp->kind);
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
  a->started = uv_now(c->loop);
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
  a->discovery = kc_request(c, "GET", "/apis", NULL, NULL, on_discovery, a);
  return a;
}

void kc__informers_feed(kc_informers *a, size_t i, const char *line, size_t len) {
  if (i < a->n) on_watch_line(&a->inf[i], line, len);
}

bool kc_informers_synced(const kc_informers *a) {
  return a && a->synced_reported;
}

bool kc_informers_problem(const kc_informers *a, char *why, size_t cap) {
  if (cap) why[0] = '\0';
  if (!a) return snprintf(why, cap, "not started"), true;
  if (!a->discovered)
    return snprintf(why, cap, "API discovery has not succeeded%s%s", a->disc_error[0] ? ": " : "",
                    a->disc_error),
           true;
  for (size_t i = 0; i < a->n; i++) {
    const informer *f = &a->inf[i];
    if (f->ph == P_SKIPPED) continue;
    if (!f->synced)
      return snprintf(why, cap, "%s: not listed yet%s%s", f->res.id,
                      f->last_error[0] ? ", last error: " : "", f->last_error),
             true;
    if (f->failures >= KC_FAILING_AFTER)
      return snprintf(why, cap, "%s: %u failed attempts in a row, last: %s", f->res.id,
                      (unsigned)f->failures, f->last_error),
             true;
  }
  return false;
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
    set_str(&f->rv, NULL);
    set_str(&f->cont, NULL);
    clear_keys(&f->keys);
    clear_keys(&f->listed);
    ts_map_free(&f->keys);
    ts_map_free(&f->listed);
    uv_timer_stop(&f->retry);
    uv_close((uv_handle_t *)&f->retry, timer_closed);
  }
}

void kc_informers_metrics(const kc_informers *a, ts_buf *out) {
  static const ts_prom_family sync = {"tessera_informer_sync_seconds",
                                      "gauge",
                                      "Seconds from the start to the end of each resource's "
                                      "first list.",
                                      {"resource", NULL}};
  ts_prom p = {out, TS_OK};
  ts_prom_head(&p, &sync);
  for (size_t i = 0; a && i < a->n; i++)
    if (a->inf[i].synced)
      ts_prom_sample(&p, &sync, &a->inf[i].res.id, (double)a->inf[i].synced_after / 1000.0);
}
