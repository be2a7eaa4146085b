/* kubeclient/writer.c - the writes of a scheduler behind the leader gate, with their retries:
 * bindings (whose lost answers are checked), patches, rate-limited Events, evictions, and
 * read-modify-write updates (claims). The bodies come from the caller (model/wire.h encodes
 * them); every write checks the gate just before each request it sends, so a replica that lost
 * the lease writes nothing more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kubeclient/kc_int.h"

#define MAX_ATTEMPTS 5
#define MAX_LOST     3    /* sends of a request that got no answer at all (then it failed) */
#define EVENT_RATE   10.0 /* Events per second overall */
#define EVENT_BURST  25.0
#define EVENT_MEMORY 4096 /* pods whose last Event time is remembered */
#define FAILED_MAX   4096 /* writes that could not even start (no memory), per loop turn */
#define ERRORS_MAX   512  /* distinct kinds of refused writes remembered (logged once each) */

/* A write that could not start for want of memory: its callback, on the next loop turn. */
typedef struct failed_cb {
  kc_write_cb cb; /* the caller's callback */
  void *ud;       /* for cb */
} failed_cb;

struct kc_writer {
  kc_client *c;                 /* client */
  const kc_gate *gate;          /* leader gate */
  int64_t event_interval;       /* ms between Events about one pod */
  double tokens;                /* event token bucket */
  uint64_t tokens_at;           /* when it was refilled (loop ms) */
  ts_map last_event;            /* pod uid (owned) -> loop ms + 1 of its last Event */
  uint64_t events_sent;         /* Events written */
  uint64_t refused;             /* writes the server refused (or that failed) */
  ts_map errors;                /* "what status reason" (owned keys): refusals logged once */
  failed_cb failed[FAILED_MAX]; /* writes that could not start: called back from `later` */
  size_t nfailed;               /* entries */
  uv_timer_t later;             /* calls the failed writes back */
  size_t ops;                   /* writes in progress (each holds the writer) */
  bool closing;                 /* kc_writer_free was called: freed when ops and `later` are done */
};

/* One write in progress (possibly several requests). */
typedef struct op {
  kc_writer *w;     /* writer */
  kc_write_cb cb;   /* result */
  void *ud;         /* for cb */
  const char *what; /* "create pods/binding", for logs (static) */
  int attempts;     /* requests made */
  int lost;         /* requests that got no answer */
  /* what it writes, in one owned block (exact lengths: a burst of 59,000 bindings held
   * 2.4 KB of fixed arrays each, 150 MB at 100,000 pods); "" when not set */
  const char *ns, *name, *uid, *node;
  char *names; /* the block */
  /* an update: its steps, and the object as last read */
  kc_update_fn step; /* the caller's step */
  void *step_ud;     /* for step */
  bool gone_ok;      /* 404 ends it with TS_OK */
  char *item;        /* the object's path (owned) */
  json_t *current;   /* the object as last read (new ref), or NULL */
  uv_timer_t defer;  /* completes without a request on the next loop turn */
  ts_rc pending;     /* result for the deferred completion */
  /* the last request, to send again when it got no answer */
  char method[8];    /* "POST" */
  char *path;        /* API path (owned) */
  char *body;        /* owned compact JSON, or NULL */
  const char *ctype; /* content type (static) or NULL */
  kc_done_fn done;   /* its completion */
  /* a binding whose outcome is unknown, while the pod is read to learn it */
  bool checking;         /* the read was sent */
  long first_status;     /* the binding's answer: 0 (none) or 5xx */
  char first_error[160]; /* its transport error, or "" */
  char *first_body;      /* its body (owned), or NULL */
} op;

static void writer_release(kc_writer *w);

static void op_closed(uv_handle_t *h) {
  op *o = h->data;
  kc_writer *w = o->w;
  json_decref(o->current);
  free(o->body);
  ts_free(o->item);
  ts_free(o->first_body);
  ts_free(o->names);
  ts_free(o->path);
  ts_free(o);
  w->ops--;
  writer_release(w);
}

/* "ns/name" of the object a write is about, for the log's object key. */
static const char *obj_key(const op *o, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s", o->ns, o->name);
  return buf;
}

/* The first refusal of each kind (what, status, reason) is logged; all are counted. */
static void note_refusal(kc_writer *w, const op *o, ts_rc r, const kc_response *resp,
                         const json_t *st, const char *message) {
  const char *reason = json_string_value(json_object_get(st, "reason"));
  char key[300], *k, kb[TS_KEY_MAX];
  if (r == TS_OK || r == TS_ENOTLEADER) return;
  w->refused++;
  snprintf(key, sizeof key, "%s %ld %s", o->what, resp ? resp->status : 0,
           reason ? reason : (resp && resp->error ? resp->error : ""));
  if (ts_map_get(&w->errors, key, strlen(key))) return;
  if (w->errors.count < ERRORS_MAX && (k = ts_strdup(key)) &&
      ts_map_put(&w->errors, k, strlen(k), k, NULL) != TS_OK)
    ts_free(k);
  ts_log_obj(TS_LOG_WARN, obj_key(o, kb, sizeof kb),
             "%s %s/%s failed: HTTP %ld%s%s: %s (said once for this kind of failure; "
             "tessera_api_requests_total counts every answer)",
             o->what, o->ns, o->name, resp ? resp->status : 0, reason ? " " : "",
             reason ? reason : "", message ? message : "(no detail)");
}

static void finish(op *o, ts_rc r, const kc_response *resp) {
  kc_write_info info = {resp ? resp->status : 0, NULL, resp ? resp->retry_after_s : 0};
  json_t *st = NULL;
  ts_err err;
  if (resp && resp->status == 401) kc__token_expired(o->w->c); /* rotated: read it again */
  if (resp && resp->len && in_json_parse(resp->body, resp->len, &st, &err) == TS_OK)
    info.message = json_string_value(json_object_get(st, "message"));
  if (!info.message && resp) info.message = resp->error;
  note_refusal(o->w, o, r, resp, st, info.message);
  if (o->cb) o->cb(o->ud, r, &info);
  json_decref(st);
  uv_close((uv_handle_t *)&o->defer, op_closed);
}

static void on_defer(uv_timer_t *t) {
  op *o = t->data;
  kc_response none = {0};
  none.error = o->pending == TS_ENOTLEADER ? "not the leader"
               : o->pending == TS_EIO      ? "the client was closed"
                                           : "could not be sent (no memory)";
  finish(o, o->pending, &none);
}

/* Completes on the next loop turn (never from inside the call that started the write). */
static void defer(op *o, ts_rc r) {
  o->pending = r;
  uv_timer_start(&o->defer, on_defer, 0, 0);
}

static void on_later(uv_timer_t *t) {
  kc_writer *w = t->data;
  while (w->nfailed) {
    failed_cb f = w->failed[--w->nfailed];
    kc_write_info info = {0, "out of memory", 0};
    w->refused++;
    if (f.cb) f.cb(f.ud, TS_ENOMEM, &info);
  }
}

/* A write that cannot start (no memory for it) still ends exactly once, on a later loop turn,
 * from memory set aside when the writer was made. Past FAILED_MAX in one turn the process is
 * out of memory beyond recovery: it exits, and a standby replica takes over. */
static void cannot_start(kc_writer *w, kc_write_cb cb, void *ud) {
  if (w->nfailed == FAILED_MAX) {
    ts_log(TS_LOG_ERROR, "out of memory: %d writes could not start; exiting", FAILED_MAX);
    abort();
  }
  w->failed[w->nfailed++] = (failed_cb){cb, ud};
  uv_timer_start(&w->later, on_later, 0, 0);
}

void kc_write_fail(kc_writer *w, kc_write_cb cb, void *ud) {
  cannot_start(w, cb, ud);
}

static op *new_op(kc_writer *w, const char *what, kc_write_cb cb, void *ud) {
  op *o = ts_calloc(1, sizeof *o);
  if (!o) {
    cannot_start(w, cb, ud);
    return NULL;
  }
  o->w = w, o->what = what, o->cb = cb, o->ud = ud;
  o->ns = o->name = o->uid = o->node = "";
  w->ops++;
  uv_timer_init(w->c->loop, &o->defer);
  o->defer.data = o;
  return o;
}

/* Sets what o writes (NULL: ""), in one block; false when out of memory (o then ends). */
static bool set_names(op *o, const char *ns, const char *name, const char *uid, const char *node) {
  const char *in[4] = {ns, name, uid, node};
  const char **out[4] = {&o->ns, &o->name, &o->uid, &o->node};
  size_t len[4], total = 0;
  char *at;
  for (int i = 0; i < 4; i++) total += (len[i] = in[i] ? strlen(in[i]) : 0) + 1;
  if (!(at = ts_malloc(total))) {
    defer(o, TS_ENOMEM);
    return false;
  }
  ts_free(o->names);
  o->names = at;
  for (int i = 0; i < 4; i++) {
    if (len[i]) memcpy(at, in[i], len[i]);
    at[len[i]] = '\0';
    *out[i] = at;
    at += len[i] + 1;
  }
  return true;
}

/* Sends the request kept in o (the first time, or again). */
static bool send_kept(op *o) {
  if (!o->w->gate->open) {
    defer(o, TS_ENOTLEADER);
    return false;
  }
  o->attempts++;
  if (!kc_request(o->w->c, o->method, o->path, o->body, o->ctype, o->done, o)) {
    defer(o, o->w->c->closing ? TS_EIO : TS_ENOMEM);
    return false;
  }
  return true;
}

/* Sends a request for o when this replica leads; false (and a deferred NOT_LEADER) if not. */
static bool send_req(op *o, const char *method, const char *path, const json_t *body,
                     const char *ctype, kc_done_fn done) {
  free(o->body);
  o->body = NULL;
  if (body && !(o->body = json_dumps(body, JSON_COMPACT))) {
    defer(o, TS_ENOMEM);
    return false;
  }
  snprintf(o->method, sizeof o->method, "%s", method);
  ts_free(o->path);
  if (!(o->path = ts_strdup(path))) {
    defer(o, TS_ENOMEM);
    return false;
  }
  o->ctype = ctype, o->done = done;
  return send_kept(o);
}

/* A request that got no answer at all (the connection broke, an HTTP/2 GOAWAY or reset) is
 * sent again, up to MAX_LOST times: every write here is safe to repeat (a binding that landed
 * answers 409 "already assigned" to us, a claim write carries its resourceVersion, an eviction
 * of a pod that is gone answers 404, an Event's name is fixed). True when it was resent. */
static bool resend_lost(op *o, const kc_response *r) {
  if (r->status || ++o->lost >= MAX_LOST) return false;
  char kb[TS_KEY_MAX];
  ts_log_obj(TS_LOG_DEBUG, obj_key(o, kb, sizeof kb), "%s %s/%s: no answer (%s); sending it again",
             o->what, o->ns, o->name, r->error ? r->error : "connection lost");
  send_kept(o);
  return true;
}

static ts_rc classify(long status) {
  switch (status) {
  case 200:
  case 201:
    return TS_OK;
  case 404:
    return TS_ENOTFOUND;
  case 409:
    return TS_ECONFLICT;
  case 403:
    return TS_EAUTH;
  case 429:
    return TS_EBUDGET;
  default:
    return TS_EHTTP;
  }
}

kc_writer *kc_writer_new(kc_client *c, const kc_gate *gate, int64_t event_interval_ms) {
  kc_writer *w = ts_calloc(1, sizeof *w);
  if (!w) return NULL;
  w->c = c, w->gate = gate,
  w->event_interval = event_interval_ms >= 0 ? event_interval_ms : KC_EVENT_INTERVAL_MS;
  w->tokens = EVENT_BURST;
  ts_map_init(&w->last_event);
  ts_map_init(&w->errors);
  uv_timer_init(c->loop, &w->later);
  w->later.data = w;
  return w;
}

static void forget_events(kc_writer *w);

/* Frees the writer once it was freed by its owner, its timer is closed and no write holds it. */
static void writer_release(kc_writer *w) {
  size_t it = 0;
  const ts_map_slot *s;
  if (!w->closing || w->ops || !uv_is_closing((uv_handle_t *)&w->later) || w->later.data) return;
  forget_events(w);
  ts_map_free(&w->last_event);
  while (ts_map_next(&w->errors, &it, &s)) ts_free(s->value);
  ts_map_free(&w->errors);
  ts_free(w);
}

static void writer_closed(uv_handle_t *h) {
  kc_writer *w = h->data;
  h->data = NULL; /* closed */
  writer_release(w);
}

void kc_writer_free(kc_writer *w) {
  if (!w) return;
  on_later(&w->later); /* nothing that could not start is left without its answer */
  w->closing = true;
  uv_close((uv_handle_t *)&w->later, writer_closed);
}

uint64_t kc_writer_events_sent(const kc_writer *w) {
  return w->events_sent;
}

uint64_t kc_writer_refused(const kc_writer *w) {
  return w->refused;
}

/* ---- binding ----------------------------------------------------------------------------------
 */

/* True when a 409's Status message says the pod is bound to `node` already: a retry of a
 * binding whose first answer was lost, which landed. The message is the decoded Status
 * message ("... pod NAME is already assigned to node \"NODE\""), not the raw body, where the
 * quotes are escaped. */
static bool bound_already(const op *o, const kc_response *r) {
  json_t *st = NULL;
  ts_err err;
  char want[600];
  const char *msg;
  bool yes;
  if (r->status != 409 || !r->len || in_json_parse(r->body, r->len, &st, &err) != TS_OK)
    return false;
  msg = json_string_value(json_object_get(st, "message"));
  snprintf(want, sizeof want, "pod %s is already assigned to node \"%s\"", o->name, o->node);
  yes = msg && strstr(msg, want);
  json_decref(st);
  return yes;
}

/* The pod, read after a binding whose outcome was unknown: bound to our node (with our uid)
 * means the binding landed; bound elsewhere, a conflict; not bound (or unreadable), the
 * binding's own failure. */
static void on_bind_check(void *ud, const kc_response *r) {
  op *o = ud;
  char kb[TS_KEY_MAX];
  kc_response first = {0};
  json_t *pod = NULL;
  ts_err err;
  const char *node = NULL, *uid = NULL;
  first.status = o->first_status;
  first.error = o->first_error[0] ? o->first_error : NULL;
  first.body = o->first_body ? o->first_body : "";
  first.len = strlen(first.body);
  if (r->status == 200 && in_json_parse(r->body, r->len, &pod, &err) == TS_OK) {
    node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    uid = json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid"));
  }
  if (node && !strcmp(node, o->node) && (!o->uid[0] || (uid && !strcmp(uid, o->uid)))) {
    ts_log_obj(TS_LOG_DEBUG, obj_key(o, kb, sizeof kb),
               "%s %s/%s: no answer, but the pod is bound to %s: it landed", o->what, o->ns,
               o->name, node);
    finish(o, TS_OK, r);
  } else if (pod && (!node || !*node) && (!o->uid[0] || (uid && !strcmp(uid, o->uid))) &&
             o->w->gate->open) {
    /* Not bound yet. The binding may still land (a server still serving it when the
     * connection broke, as after a GOAWAY): failing now would let a later cycle choose another
     * node for a pod about to be bound here (the soak's hour found one). Send it once more, to
     * the same node: it binds, or answers that the pod is bound to us already. */
    ts_log_obj(TS_LOG_DEBUG, obj_key(o, kb, sizeof kb),
               "%s %s/%s: no answer and the pod is not bound: sending it once more", o->what, o->ns,
               o->name);
    o->lost = MAX_LOST - 1; /* this send alone; no answer to it is a failure */
    send_kept(o);
  } else {
    finish(o, node && *node ? TS_ECONFLICT : classify(first.status), &first);
  }
  json_decref(pod);
}

/* A binding may land although its answer never came (the connection broke after the server
 * served it, a timeout, a 5xx from a proxy): reporting it failed would undo the placement and
 * let a later cycle bind the pod elsewhere (refused: it is bound already; seen once in an hour
 * of the soak test). Such an outcome is checked by reading the pod first. */
static void on_bind(void *ud, const kc_response *r) {
  op *o = ud;
  char path[KC_PATH_MAX];
  if (resend_lost(o, r)) return;
  if (bound_already(o, r)) {
    finish(o, TS_OK, r);
    return;
  }
  if ((!r->status || r->status >= 500) && !o->checking && o->w->gate->open) {
    o->checking = true;
    o->first_status = r->status;
    snprintf(o->first_error, sizeof o->first_error, "%s", r->error ? r->error : "");
    o->first_body = r->len && r->len < 4096 ? ts_strdup(r->body) : NULL;
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", o->ns, o->name);
    if (kc_request(o->w->c, "GET", path, NULL, NULL, on_bind_check, o)) return;
  }
  finish(o, classify(r->status), r);
}

void kc_bind(kc_writer *w, const char *ns, const char *name, const char *uid, const char *node,
             const json_t *binding, kc_write_cb cb, void *ud) {
  op *o = new_op(w, "create pods/binding", cb, ud);
  char path[KC_PATH_MAX];
  if (!o || !set_names(o, ns, name, uid, node)) return;
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/binding", ns, name);
  send_req(o, "POST", path, binding, NULL, on_bind);
}

/* ---- pod status and events ------------------------------------------------------------------ */

static void on_simple(void *ud, const kc_response *r) {
  if (resend_lost(ud, r)) return;
  finish(ud, classify(r->status), r);
}

void kc_patch(kc_writer *w, const char *what, const char *path, kc_patch_type type, const char *ns,
              const char *name, const json_t *body, kc_write_cb cb, void *ud) {
  op *o = new_op(w, what, cb, ud);
  if (!o || !set_names(o, ns, name, NULL, NULL)) return;
  send_req(o, "PATCH", path, body,
           type == KC_STRATEGIC_MERGE_PATCH ? "application/strategic-merge-patch+json"
                                            : "application/merge-patch+json",
           on_simple);
}

static void ignore(void *ud, ts_rc r, const kc_write_info *info) {
  (void)ud, (void)r, (void)info;
}

typedef struct last_event {
  uint64_t at; /* loop ms of the last Event about the pod */
  char uid[];  /* the pod's uid (the map's key) */
} last_event;

static void forget_events(kc_writer *w) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&w->last_event, &it, &s)) ts_free(s->value);
  ts_map_free(&w->last_event);
  ts_map_init(&w->last_event);
}

/* An Event that already exists after its first answer was lost did land. */
static void on_event(void *ud, const kc_response *r) {
  op *o = ud;
  if (resend_lost(o, r)) return;
  finish(o, r->status == 409 && o->lost ? TS_OK : classify(r->status), r);
}

bool kc_event_allowed(kc_writer *w, const char *uid) {
  uint64_t now = uv_now(w->c->loop);
  last_event *e;
  uid = uid && *uid ? uid : NULL;
  e = uid ? ts_map_get(&w->last_event, uid, strlen(uid)) : NULL;
  w->tokens += (double)(now - w->tokens_at) / 1000.0 * EVENT_RATE;
  if (w->tokens > EVENT_BURST) w->tokens = EVENT_BURST;
  w->tokens_at = now;
  if (e && now - e->at < (uint64_t)w->event_interval) return false; /* one per interval */
  if (w->tokens < 1 || !w->gate->open) return false;                /* the global budget */
  if (!e && uid) {
    size_t n = strlen(uid);
    if (w->last_event.count >= EVENT_MEMORY) forget_events(w); /* bounded memory */
    if ((e = ts_malloc(sizeof *e + n + 1))) {
      memcpy(e->uid, uid, n + 1);
      if (ts_map_put(&w->last_event, e->uid, n, e, NULL) != TS_OK) ts_free(e), e = NULL;
    }
  }
  if (e) e->at = now;
  w->tokens -= 1;
  return true;
}

void kc_event_post(kc_writer *w, const json_t *event) {
  const json_t *md = json_object_get(event, "metadata");
  const char *ns = json_string_value(json_object_get(md, "namespace"));
  const char *name = json_string_value(json_object_get(md, "name"));
  char path[KC_PATH_MAX];
  op *o;
  if (!ns || !name || !(o = new_op(w, "create events", ignore, NULL))) return;
  if (!set_names(o, ns, name, NULL, NULL)) return;
  snprintf(path, sizeof path, "/apis/events.k8s.io/v1/namespaces/%s/events", ns);
  if (send_req(o, "POST", path, event, NULL, on_event)) w->events_sent++;
}

/* ---- eviction ---------------------------------------------------------------------------------
 */

static void on_evict(void *ud, const kc_response *r) {
  op *o = ud;
  if (resend_lost(o, r)) return;
  finish(o, classify(r->status), r);
}

void kc_evict(kc_writer *w, const char *ns, const char *name, const char *uid,
              const json_t *eviction, kc_write_cb cb, void *ud) {
  op *o = new_op(w, "create pods/eviction", cb, ud);
  char path[KC_PATH_MAX];
  if (!o || !set_names(o, ns, name, uid, NULL)) return;
  snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/eviction", ns, name);
  send_req(o, "POST", path, eviction, NULL, on_evict);
}

/* ---- read-modify-write ----------------------------------------------------------------------
 */

static void update_step(op *o);
static void on_update(void *ud, const kc_response *r);

static void reread(op *o, const kc_response *r) {
  if (o->attempts >= MAX_ATTEMPTS) {
    finish(o, TS_ECONFLICT, r);
    return;
  }
  json_decref(o->current);
  o->current = NULL;
  send_req(o, "GET", o->item, NULL, NULL, on_update);
}

/* The answer to a read or a write: the object as it is now, the next step's start. */
static void on_update(void *ud, const kc_response *r) {
  op *o = ud;
  json_t *c = NULL;
  ts_err err;
  if (!r->status && ++o->lost < MAX_LOST) { /* no answer: it may have landed; read it again */
    reread(o, r);
    return;
  }
  if (r->status == 409) { /* changed meanwhile: read it again and retry */
    reread(o, r);
    return;
  }
  if (r->status == 404 && o->gone_ok) {
    finish(o, TS_OK, r); /* the object is gone: nothing left to undo */
    return;
  }
  if ((r->status != 200 && r->status != 201) || in_json_parse(r->body, r->len, &c, &err) != TS_OK) {
    finish(o, classify(r->status) == TS_OK ? TS_EHTTP : classify(r->status), r);
    return;
  }
  json_decref(o->current);
  o->current = c;
  update_step(o);
}

static void update_step(op *o) {
  json_t *body = NULL;
  bool status = false;
  char path[KC_PATH_MAX];
  ts_rc rc = o->step(o->step_ud, o->current, &body, &status);
  if (rc != TS_OK || !body) {
    finish(o, rc, NULL);
    return;
  }
  snprintf(path, sizeof path, "%s%s", o->item, status ? "/status" : "");
  send_req(o, "PUT", path, body, NULL, on_update);
  json_decref(body);
}

void kc_update(kc_writer *w, const char *what, const char *ns, const char *name, const char *path,
               bool gone_ok, kc_update_fn step, void *step_ud, kc_write_cb cb, void *ud) {
  op *o = new_op(w, what, cb, ud);
  if (!o || !set_names(o, ns, name, NULL, NULL)) return;
  o->step = step, o->step_ud = step_ud, o->gone_ok = gone_ok;
  if (!(o->item = ts_strdup(path))) {
    defer(o, TS_ENOMEM);
    return;
  }
  send_req(o, "GET", path, NULL, NULL, on_update);
}
