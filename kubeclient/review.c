/* kubeclient/review.c - delegated authentication and authorization of a request to an endpoint
 * Tessera serves (kc.h), as controller-runtime's secure metrics serving (Kueue) and
 * kube-scheduler do it: the bearer token goes to the API server in a TokenReview, the user it
 * names in a SubjectAccessReview for the verb and path; answers are kept a while (by the
 * token's SHA-256, never the token), so that a scrape every 30 s costs the API server nothing
 * most of the time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/input.h"
#include "kubeclient/kc_int.h"

#define KEY_LEN 66 /* 't' or 'd', 64 hex digits, NUL */

typedef struct entry {
  char key[KEY_LEN]; /* 't': a token's review; 'd': a decision on user, verb, path */
  double expires;    /* monotonic seconds */
  bool ok;           /* authenticated / allowed */
  json_t *user;      /* tokens: who, when authenticated */
  char name[256];    /* tokens: the user's name */
} entry;

typedef struct check {
  ts_list link; /* in r->checks */
  kc_reviewer *r;
  kc_req *req; /* the review under way */
  kc_verdict_fn done;
  void *ud;
  char verb[16], path[256];
  char tkey[KEY_LEN]; /* the token's entry */
  char dkey[KEY_LEN]; /* the decision's entry */
  json_t *user;       /* once authenticated (a reference) */
  char name[256];
} check;

struct kc_reviewer {
  kc_client *c;
  const kc_review_codec *codec;
  kc_reviewer_opts o;
  ts_map cache;   /* key -> entry */
  ts_list checks; /* waiting for the API server */
  uint64_t sent;  /* reviews sent */
  long last_fail; /* the HTTP status of the last failed review (logged once per change) */
};

void kc_reviewer_opts_default(kc_reviewer_opts *o) {
  o->token_ttl_ms = 60 * 1000;
  o->allow_ttl_ms = 5 * 60 * 1000;
  o->deny_ttl_ms = 30 * 1000;
  o->cache_max = 4096;
}

kc_reviewer *kc_reviewer_new(kc_client *c, const kc_review_codec *codec,
                             const kc_reviewer_opts *o) {
  kc_reviewer *r = ts_calloc(1, sizeof *r);
  if (!r) return NULL;
  r->c = c, r->codec = codec;
  if (o)
    r->o = *o;
  else
    kc_reviewer_opts_default(&r->o);
  ts_map_init(&r->cache);
  ts_list_init(&r->checks);
  return r;
}

static void entry_free(entry *e) {
  json_decref(e->user);
  ts_free(e);
}

static const entry *cached(kc_reviewer *r, const char *key) {
  entry *e = ts_map_get(&r->cache, key, KEY_LEN - 1);
  if (!e || e->expires > ts_time_mono_s()) return e;
  ts_map_del(&r->cache, key, KEY_LEN - 1);
  entry_free(e);
  return NULL;
}

/* Drops what expired; everything when the cache is still full (a flood of new tokens). */
static void make_room(kc_reviewer *r) {
  const ts_map_slot *sl;
  double now = ts_time_mono_s();
  bool all = false;
  for (int pass = 0; pass < 2 && r->cache.count >= r->o.cache_max; pass++, all = true) {
    size_t n = 0, i = 0;
    entry **gone = malloc(r->cache.count * sizeof *gone);
    if (!gone) return;
    while (ts_map_next(&r->cache, &i, &sl))
      if (all || ((entry *)sl->value)->expires <= now) gone[n++] = sl->value;
    for (size_t k = 0; k < n; k++) {
      ts_map_del(&r->cache, gone[k]->key, KEY_LEN - 1);
      entry_free(gone[k]);
    }
    free(gone);
  }
}

/* Keeps an answer for ttl_ms; e owned by the cache after (freed when it cannot be kept). */
static entry *keep(kc_reviewer *r, entry *e, int64_t ttl_ms) {
  void *old = NULL;
  e->expires = ts_time_mono_s() + (double)ttl_ms / 1000.0;
  make_room(r);
  if (ts_map_put(&r->cache, e->key, KEY_LEN - 1, e, &old) != TS_OK) {
    entry_free(e);
    return NULL;
  }
  if (old) entry_free(old);
  return e;
}

static void finish(check *k, int code, const char *message) {
  ts_list_remove(&k->link);
  k->done(k->ud, code, message);
  json_decref(k->user);
  ts_free(k);
}

static void failed(kc_reviewer *r, const char *what, const kc_response *resp, const char *why) {
  long st = resp ? resp->status : 0;
  if (st == r->last_fail) return;
  r->last_fail = st;
  if (st == 403)
    ts_log(TS_LOG_WARN,
           "%s refused (403): Tessera's ServiceAccount needs create on %s (`tessera rbac`)", what,
           !strcmp(what, "TokenReview") ? "tokenreviews" : "subjectaccessreviews");
  else
    ts_log(TS_LOG_WARN, "%s failed (%ld): %s", what, st, why);
}

/* The answer of a review: TS_OK with *out (new) when the server created it. */
static ts_rc answer(kc_reviewer *r, const char *what, const kc_response *resp, json_t **out) {
  ts_err err;
  ts_err_clear(&err);
  *out = NULL;
  if (resp->status != 200 && resp->status != 201) {
    failed(r, what, resp, resp->error ? resp->error : "the API server refused it");
    return TS_EIO;
  }
  if (in_json_parse(resp->body, resp->len, out, &err) != TS_OK) {
    failed(r, what, resp, err.text);
    return TS_EIO;
  }
  return TS_OK;
}

static void decide(kc_reviewer *r, check *k);

static void on_access(void *ud, const kc_response *resp) {
  check *k = ud;
  kc_reviewer *r = k->r;
  json_t *body;
  entry *e;
  bool allowed = false;
  char reason[256], msg[320];
  ts_err err;
  k->req = NULL;
  ts_err_clear(&err);
  snprintf(msg, sizeof msg, "Authorization for user %s failed", k->name);
  if (answer(r, "SubjectAccessReview", resp, &body) != TS_OK) return finish(k, 500, msg);
  if (r->codec->access_read(body, &allowed, reason, sizeof reason, &err) != TS_OK) {
    json_decref(body);
    failed(r, "SubjectAccessReview", resp, err.text);
    return finish(k, 500, msg);
  }
  json_decref(body);
  r->last_fail = 0;
  if ((e = ts_calloc(1, sizeof *e))) {
    memcpy(e->key, k->dkey, KEY_LEN);
    e->ok = allowed;
    keep(r, e, allowed ? r->o.allow_ttl_ms : r->o.deny_ttl_ms);
  }
  if (allowed) return finish(k, 200, "");
  snprintf(msg, sizeof msg, "Authorization denied for user %s", k->name);
  finish(k, 403, msg);
}

/* The key of a decision on k's user, verb and path. */
static bool decision_key(const check *k, char key[KEY_LEN]) {
  char *who = json_dumps(k->user, JSON_COMPACT | JSON_SORT_KEYS);
  size_t n;
  char *text;
  if (!who) return false;
  n = strlen(who) + strlen(k->verb) + strlen(k->path) + 3;
  if (!(text = malloc(n))) return free(who), false;
  snprintf(text, n, "%s\n%s\n%s", who, k->verb, k->path);
  key[0] = 'd';
  kc_sha256_hex(text, strlen(text), key + 1);
  free(who), free(text);
  return true;
}

/* k's user is known: a kept decision, else a SubjectAccessReview. */
static void decide(kc_reviewer *r, check *k) {
  char msg[320], *body;
  const entry *e;
  json_t *sar;
  if (!decision_key(k, k->dkey)) return finish(k, 500, "out of memory");
  if ((e = cached(r, k->dkey))) {
    if (e->ok) return finish(k, 200, "");
    snprintf(msg, sizeof msg, "Authorization denied for user %s", k->name);
    return finish(k, 403, msg);
  }
  if (!(sar = r->codec->access_review(k->user, k->path, k->verb)) ||
      !(body = json_dumps(sar, JSON_COMPACT))) {
    json_decref(sar);
    return finish(k, 500, "out of memory");
  }
  json_decref(sar);
  r->sent++;
  k->req = kc_request(r->c, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", body,
                      NULL, on_access, k);
  free(body);
  if (!k->req) finish(k, 503, "shutting down");
}

static void on_token(void *ud, const kc_response *resp) {
  check *k = ud;
  kc_reviewer *r = k->r;
  json_t *body, *user = NULL;
  const char *name = NULL;
  bool ok = false;
  entry *e;
  ts_err err;
  k->req = NULL;
  ts_err_clear(&err);
  if (answer(r, "TokenReview", resp, &body) != TS_OK)
    return finish(k, 500, "Authentication failed");
  if (r->codec->token_read(body, &ok, &user, &name, &err) != TS_OK) {
    json_decref(body);
    failed(r, "TokenReview", resp, err.text);
    return finish(k, 500, "Authentication failed");
  }
  json_decref(body);
  r->last_fail = 0;
  if (ok) snprintf(k->name, sizeof k->name, "%s", name);
  if ((e = ts_calloc(1, sizeof *e))) {
    memcpy(e->key, k->tkey, KEY_LEN);
    e->ok = ok, e->user = json_incref(user);
    snprintf(e->name, sizeof e->name, "%s", k->name);
    keep(r, e, r->o.token_ttl_ms);
  }
  if (!ok) return json_decref(user), finish(k, 401, "Unauthorized");
  k->user = user;
  decide(r, k);
}

void kc_reviewer_check(kc_reviewer *r, const char *token, const char *verb, const char *path,
                       kc_verdict_fn done, void *ud) {
  check *k;
  const entry *e;
  json_t *tr;
  char *body;
  if (!token || !*token) return done(ud, 401, "Unauthorized");
  if (strlen(path) >= sizeof((check *)0)->path || strlen(verb) >= sizeof((check *)0)->verb)
    return done(ud, 403, "Authorization denied: path too long");
  if (!(k = ts_calloc(1, sizeof *k))) return done(ud, 500, "out of memory");
  k->r = r, k->done = done, k->ud = ud;
  snprintf(k->verb, sizeof k->verb, "%s", verb);
  snprintf(k->path, sizeof k->path, "%s", path);
  ts_list_insert_tail(&r->checks, &k->link);
  k->tkey[0] = 't';
  kc_sha256_hex(token, strlen(token), k->tkey + 1);
  if ((e = cached(r, k->tkey))) {
    if (!e->ok) return finish(k, 401, "Unauthorized");
    k->user = json_incref(e->user);
    snprintf(k->name, sizeof k->name, "%s", e->name);
    return decide(r, k);
  }
  if (!(tr = r->codec->token_review(token)) || !(body = json_dumps(tr, JSON_COMPACT))) {
    json_decref(tr);
    return finish(k, 500, "out of memory");
  }
  json_decref(tr);
  r->sent++;
  k->req = kc_request(r->c, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", body, NULL,
                      on_token, k);
  memset(body, 0, strlen(body)); /* the token */
  free(body);
  if (!k->req) finish(k, 503, "shutting down");
}

uint64_t kc_reviewer_sent(const kc_reviewer *r) {
  return r ? r->sent : 0;
}

void kc_reviewer_free(kc_reviewer *r) {
  const ts_map_slot *sl;
  size_t i = 0;
  if (!r) return;
  while (!ts_list_empty(&r->checks)) {
    check *k = ts_container_of(r->checks.next, check, link);
    kc_cancel(k->req);
    finish(k, 503, "shutting down");
  }
  while (ts_map_next(&r->cache, &i, &sl)) entry_free(sl->value);
  ts_map_free(&r->cache);
  ts_free(r);
}
