/* kubeclient/leader.c - leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * leaderelection does: try every retry period; take the lease when it is free or its holder
 * has not renewed it for a lease duration (measured on our clock, from when we saw it change);
 * renew while we hold it; close the gate at once when renewing has failed for the renew
 * deadline; on release, clear the holder so that a standby takes over without waiting. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kubeclient/kc_int.h"

struct kc_leader {
  kc_client *c;                                             /* client */
  kc_gate *gate;                                            /* opened while we lead */
  char ns[TS_NAME_MAX], name[TS_NAME_MAX], id[TS_NAME_MAX]; /* the Lease and who we are */
  double lease_s, renew_s, retry_s;                         /* timings */
  uv_timer_t tick;                                          /* every retry period */
  uv_timer_t watchdog;           /* closes the gate past the renew deadline */
  uint64_t last_renew;           /* loop ms of our last successful renewal */
  char seen_holder[TS_NAME_MAX]; /* the holder and renewTime we last saw... */
  char seen_renew[64];
  uint64_t seen_at;         /* ...and when we first saw them (loop ms) */
  kc_req *req;              /* in flight */
  bool releasing;           /* kc_leader_release was called */
  void (*released)(void *); /* its callback */
  void *released_ud;
  int open_handles; /* timers not closed yet */
  bool freeing;     /* kc_leader_free was called */
};

static void path_of(const kc_leader *l, bool item, char *out, size_t cap) {
  if (item)
    snprintf(out, cap, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", l->ns, l->name);
  else
    snprintf(out, cap, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", l->ns);
}

static json_t *lease_body(const kc_leader *l, const json_t *old, const char *holder, int duration,
                          bool acquire) {
  char now[64];
  json_t *b =
      old ? json_deep_copy(old)
          : json_pack("{s:s, s:s, s:{s:s, s:s}, s:{}}", "apiVersion", "coordination.k8s.io/v1",
                      "kind", "Lease", "metadata", "name", l->name, "namespace", l->ns, "spec");
  json_t *spec = json_object_get(b, "spec");
  json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));
  kc__now_rfc3339(now, sizeof now, true);
  if (!json_is_object(spec)) json_object_set_new(b, "spec", spec = json_object());
  json_object_set_new(spec, "holderIdentity", json_string(holder));
  json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration));
  json_object_set_new(spec, "renewTime", json_string(now));
  if (acquire) {
    json_object_set_new(spec, "acquireTime", json_string(now));
    json_object_set_new(spec, "leaseTransitions", json_integer(old ? transitions + 1 : 0));
  }
  return b;
}

static void set_leading(kc_leader *l, bool on) {
  if (l->gate->open != on)
    ts_log(TS_LOG_INFO, "%s %s lease %s/%s", l->id, on ? "acquired" : "lost", l->ns, l->name);
  l->gate->open = on;
}

static void on_write(void *ud, const kc_response *r) {
  kc_leader *l = ud;
  l->req = NULL;
  if (l->releasing) {
    if (l->released) l->released(l->released_ud);
    l->released = NULL;
    return;
  }
  if (r->status == 200 || r->status == 201) {
    l->last_renew = uv_now(l->c->loop);
    set_leading(l, true);
  }
  /* 409: someone else wrote it first; the next tick sees who */
}

static void on_read(void *ud, const kc_response *r) {
  kc_leader *l = ud;
  json_t *lease = NULL, *spec, *body;
  ts_err err;
  const char *holder, *renew;
  char path[KC_PATH_MAX];
  uint64_t now = uv_now(l->c->loop);
  double duration;
  l->req = NULL;
  if (l->releasing) return;
  if (r->status == 404) { /* no lease yet: create it, holding it */
    body = lease_body(l, NULL, l->id, (int)l->lease_s, true);
    char *text = json_dumps(body, JSON_COMPACT);
    path_of(l, false, path, sizeof path);
    l->req = kc_request(l->c, "POST", path, text, NULL, on_write, l);
    free(text);
    json_decref(body);
    return;
  }
  if (r->status != 200 || in_json_parse(r->body, r->len, &lease, &err) != TS_OK) return;
  spec = json_object_get(lease, "spec");
  holder = json_string_value(json_object_get(spec, "holderIdentity")) ?: "";
  renew = json_string_value(json_object_get(spec, "renewTime")) ?: "";
  duration = (double)json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
  if (strcmp(holder, l->seen_holder) || strcmp(renew, l->seen_renew)) {
    snprintf(l->seen_holder, sizeof l->seen_holder, "%s", holder);
    snprintf(l->seen_renew, sizeof l->seen_renew, "%s", renew);
    l->seen_at = now;
  }
  if (!strcmp(holder, l->id) || !holder[0] || now - l->seen_at > (uint64_t)(duration * 1000)) {
    bool acquire = strcmp(holder, l->id) != 0;
    char *text;
    body = lease_body(l, lease, l->id, (int)l->lease_s, acquire);
    text = json_dumps(body, JSON_COMPACT);
    path_of(l, true, path, sizeof path);
    l->req = kc_request(l->c, "PUT", path, text, NULL, on_write, l);
    free(text);
    json_decref(body);
  } else {
    set_leading(l, false); /* someone else holds it */
  }
  json_decref(lease);
}

static void on_tick(uv_timer_t *t) {
  kc_leader *l = t->data;
  char path[KC_PATH_MAX];
  if (l->req || l->releasing) return;
  path_of(l, true, path, sizeof path);
  l->req = kc_request(l->c, "GET", path, NULL, NULL, on_read, l);
}

static void on_watchdog(uv_timer_t *t) {
  kc_leader *l = t->data;
  if (l->gate->open && uv_now(l->c->loop) - l->last_renew > (uint64_t)(l->renew_s * 1000)) {
    ts_log(TS_LOG_WARN, "%s: could not renew the lease for %.0f s; stopping writes", l->id,
           l->renew_s);
    set_leading(l, false);
  }
}

void kc_leader_opts_default(kc_leader_opts *o) {
  memset(o, 0, sizeof *o);
  o->enable = true;
  ts_strlcpy(o->ns, "kube-system", sizeof o->ns);
  ts_strlcpy(o->name, "tessera", sizeof o->name);
  o->lease_ms = 15000, o->renew_ms = 10000, o->retry_ms = 2000;
}

kc_leader *kc_leader_start(kc_client *c, const kc_leader_opts *o, const char *identity,
                           kc_gate *gate, ts_err *err) {
  kc_leader *l = ts_calloc(1, sizeof *l);
  if (!l) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  l->c = c, l->gate = gate;
  snprintf(l->ns, sizeof l->ns, "%s", o->ns[0] ? o->ns : "kube-system");
  snprintf(l->name, sizeof l->name, "%s", o->name[0] ? o->name : "tessera");
  snprintf(l->id, sizeof l->id, "%s", identity ? identity : "tessera");
  l->lease_s = o->lease_ms > 0 ? (double)o->lease_ms / 1000 : 15;
  l->renew_s = o->renew_ms > 0 ? (double)o->renew_ms / 1000 : 10;
  l->retry_s = o->retry_ms > 0 ? (double)o->retry_ms / 1000 : 2;
  gate->open = false;
  uv_timer_init(c->loop, &l->tick);
  uv_timer_init(c->loop, &l->watchdog);
  l->tick.data = l->watchdog.data = l;
  l->open_handles = 2;
  uv_timer_start(&l->tick, on_tick, 0, (uint64_t)(l->retry_s * 1000));
  uv_timer_start(&l->watchdog, on_watchdog, 100, 100);
  return l;
}

void kc_leader_release(kc_leader *l, void (*done)(void *ud), void *ud) {
  char path[KC_PATH_MAX], *text;
  json_t *b;
  bool held = l->gate->open;
  l->releasing = true;
  l->gate->open = false;
  uv_timer_stop(&l->tick);
  uv_timer_stop(&l->watchdog);
  kc_cancel(l->req);
  l->req = NULL;
  if (!held) {
    if (done) done(ud);
    return;
  }
  l->released = done, l->released_ud = ud;
  b = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:i}}", "apiVersion", "coordination.k8s.io/v1",
                "kind", "Lease", "metadata", "name", l->name, "namespace", l->ns, "spec",
                "holderIdentity", "", "leaseDurationSeconds", 1);
  {
    char now[64];
    kc__now_rfc3339(now, sizeof now, true);
    json_object_set_new(json_object_get(b, "spec"), "renewTime", json_string(now));
  }
  text = json_dumps(b, JSON_COMPACT);
  path_of(l, true, path, sizeof path);
  /* A merge patch: no resourceVersion needed, and it only touches the holder fields. */
  l->req = kc_request(l->c, "PATCH", path, text, "application/merge-patch+json", on_write, l);
  free(text);
  json_decref(b);
  if (!l->req && done) done(ud);
}

static void closed(uv_handle_t *h) {
  kc_leader *l = h->data;
  if (--l->open_handles == 0) ts_free(l);
}

void kc_leader_free(kc_leader *l) {
  if (!l) return;
  kc_cancel(l->req);
  uv_timer_stop(&l->tick);
  uv_timer_stop(&l->watchdog);
  uv_close((uv_handle_t *)&l->tick, closed);
  uv_close((uv_handle_t *)&l->watchdog, closed);
}
