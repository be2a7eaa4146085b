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
  const kc_lease_codec *codec;                              /* the Lease's wire format */
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

static void on_write(void *ud, const kc_response *r);

/* Sends the Lease body (new, consumed) with method to path. */
static void send_lease(kc_leader *l, const char *method, const char *path, json_t *body,
                       const char *ctype) {
  char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  if (!text) return; /* out of memory: the next tick tries again */
  l->req = kc_request(l->c, method, path, text, ctype, on_write, l);
  free(text);
}

static void set_leading(kc_leader *l, bool on) {
  if (l->gate->open != on) {
    char key[TS_KEY_MAX];
    snprintf(key, sizeof key, "%s/%s", l->ns, l->name);
    ts_log_obj(TS_LOG_INFO, key, "%s %s lease %s/%s", l->id, on ? "acquired" : "lost", l->ns,
               l->name);
  }
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
  json_t *lease = NULL;
  ts_err err;
  const char *holder, *renew;
  int64_t duration;
  char path[KC_PATH_MAX];
  uint64_t now = uv_now(l->c->loop);
  l->req = NULL;
  if (l->releasing) return;
  if (r->status == 404) { /* no lease yet: create it, holding it */
    path_of(l, false, path, sizeof path);
    send_lease(
        l, "POST", path,
        l->codec->write(NULL, l->ns, l->name, l->id, (int64_t)l->lease_s, true, ts_time_now_ns()),
        NULL);
    return;
  }
  if (r->status != 200 || in_json_parse(r->body, r->len, &lease, &err) != TS_OK) return;
  if (!l->codec->read(lease, &holder, &renew, &duration)) {
    json_decref(lease);
    return;
  }
  if (strcmp(holder, l->seen_holder) || strcmp(renew, l->seen_renew)) {
    snprintf(l->seen_holder, sizeof l->seen_holder, "%s", holder);
    snprintf(l->seen_renew, sizeof l->seen_renew, "%s", renew);
    l->seen_at = now;
  }
  if (!strcmp(holder, l->id) || !holder[0] || now - l->seen_at > (uint64_t)duration * 1000) {
    bool acquire = strcmp(holder, l->id) != 0;
    path_of(l, true, path, sizeof path);
    send_lease(l, "PUT", path,
               l->codec->write(lease, l->ns, l->name, l->id, (int64_t)l->lease_s, acquire,
                               ts_time_now_ns()),
               NULL);
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

void kc_leader_namespace(const kc_leader_opts *o, char *out, size_t cap) {
  const char *env = getenv("POD_NAMESPACE");
  FILE *f;
  if (o->ns[0]) {
    snprintf(out, cap, "%s", o->ns);
    return;
  }
  if (env && *env) {
    snprintf(out, cap, "%s", env);
    return;
  }
  snprintf(out, cap, "kube-system"); /* outside a pod: where it always was */
  if ((f = fopen("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "r"))) {
    char ns[64];
    if (fgets(ns, sizeof ns, f)) {
      ns[strcspn(ns, "\n")] = '\0';
      if (*ns) snprintf(out, cap, "%s", ns);
    }
    fclose(f);
  }
}

void kc_leader_opts_default(kc_leader_opts *o) {
  memset(o, 0, sizeof *o);
  o->enable = true;
  ts_strlcpy(o->name, "tessera", sizeof o->name);
  o->lease_ms = 15000, o->renew_ms = 10000, o->retry_ms = 2000;
}

kc_leader *kc_leader_start(kc_client *c, const kc_leader_opts *o, const char *identity,
                           const kc_lease_codec *codec, kc_gate *gate, ts_err *err) {
  kc_leader *l = ts_calloc(1, sizeof *l);
  if (!l) return ts_err_set(err, TS_ENOMEM, "out of memory"), NULL;
  l->c = c, l->gate = gate, l->codec = codec;
  kc_leader_namespace(o, l->ns, sizeof l->ns);
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
  char path[KC_PATH_MAX];
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
  path_of(l, true, path, sizeof path);
  /* A merge patch: no resourceVersion needed, and it only touches the holder fields. */
  send_lease(l, "PATCH", path, l->codec->release(ts_time_now_ns()), "application/merge-patch+json");
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
