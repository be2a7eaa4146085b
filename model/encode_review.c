/* model/encode_review.c - the access reviews behind an authenticated scrape of /metrics
 * (model/wire.h): a TokenReview says who holds a bearer token, a SubjectAccessReview whether
 * they may GET the path, as controller-runtime's secure metrics serving (Kueue) and
 * kube-scheduler ask the API server. */
#include "model/wire.h"

#include <stdio.h>
#include <string.h>

json_t *model_token_review_json(const char *token) {
  return json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                   "TokenReview", "spec", "token", token);
}

/* True when v is an array of strings. */
static bool strings(const json_t *v) {
  size_t i;
  json_t *e;
  if (!json_is_array(v)) return false;
  json_array_foreach(v, i, e)
    if (!json_is_string(e)) return false;
  return true;
}

ts_rc model_token_review_read(const json_t *review, bool *authenticated, json_t **user,
                              const char **user_name, ts_err *err) {
  const json_t *st = json_object_get(review, "status"), *u, *v, *extra;
  const char *key;
  *authenticated = false, *user = NULL, *user_name = NULL;
  if (!json_is_object(st)) return ts_err_set(err, TS_EINVAL, "TokenReview: status: not an object");
  v = json_object_get(st, "authenticated");
  if (v && !json_is_boolean(v))
    return ts_err_set(err, TS_EINVAL, "TokenReview: status.authenticated: not a boolean");
  if (!json_is_true(v)) return TS_OK;
  u = json_object_get(st, "user");
  if (!json_is_object(u)) return ts_err_set(err, TS_EINVAL, "TokenReview: status.user: missing");
  v = json_object_get(u, "username");
  if (!json_is_string(v) || !json_string_length(v))
    return ts_err_set(err, TS_EINVAL, "TokenReview: status.user.username: missing");
  if ((v = json_object_get(u, "uid")) && !json_is_string(v))
    return ts_err_set(err, TS_EINVAL, "TokenReview: status.user.uid: not a string");
  if ((v = json_object_get(u, "groups")) && !strings(v))
    return ts_err_set(err, TS_EINVAL, "TokenReview: status.user.groups: not a list of strings");
  if ((extra = json_object_get(u, "extra")) && !json_is_object(extra))
    return ts_err_set(err, TS_EINVAL, "TokenReview: status.user.extra: not an object");
  json_object_foreach((json_t *)extra, key, v)
    if (!strings(v))
      return ts_err_set(err, TS_EINVAL, "TokenReview: status.user.extra.%s: not a list of strings",
                        key);
  if (!(*user = json_deep_copy(u))) return ts_err_set(err, TS_ENOMEM, "out of memory");
  *authenticated = true;
  *user_name = json_string_value(json_object_get(*user, "username"));
  return TS_OK;
}

/* The request for one object a path names, as the API server's request info reads it:
 * "/api/v1/[namespaces/NS/]RESOURCE/NAME[/SUBRESOURCE]" (the core group) or
 * "/apis/GROUP/VERSION/[namespaces/NS/]RESOURCE/NAME[/SUBRESOURCE]". */
typedef struct object_request {
  char group[128], ns[64], resource[64], name[254], subresource[64];
} object_request;

/* The next segment of *p into out (cap bytes); false when empty or too long. */
static bool segment(const char **p, char *out, size_t cap) {
  size_t n = strcspn(*p, "/");
  if (!n || n >= cap) return false;
  memcpy(out, *p, n), out[n] = '\0';
  *p += n + ((*p)[n] == '/');
  return true;
}

static bool object_path(const char *path, object_request *o) {
  char version[64], first[64];
  const char *p;
  memset(o, 0, sizeof *o);
  if (!strncmp(path, "/api/v1/", 8)) {
    p = path + 8;
  } else if (!strncmp(path, "/apis/", 6)) {
    p = path + 6;
    if (!segment(&p, o->group, sizeof o->group) || !segment(&p, version, sizeof version))
      return false;
  } else {
    return false;
  }
  if (!segment(&p, first, sizeof first)) return false;
  if (!strcmp(first, "namespaces") && strchr(p, '/')) { /* namespaces/NS/RESOURCE/NAME... */
    if (!segment(&p, o->ns, sizeof o->ns) || !segment(&p, o->resource, sizeof o->resource))
      return false;
  } else {
    memcpy(o->resource, first, sizeof first);
  }
  if (!segment(&p, o->name, sizeof o->name)) return false;
  if (*p && !segment(&p, o->subresource, sizeof o->subresource)) return false;
  return !*p;
}

json_t *model_access_review_json(const json_t *user, const char *path, const char *verb) {
  object_request o;
  json_t *spec, *v, *attrs;
  bool object = object_path(path, &o);
  if (object) {
    attrs = json_pack("{s:s, s:s, s:s, s:s}", "verb", verb, "group", o.group, "resource",
                      o.resource, "name", o.name);
    if (o.ns[0]) json_object_set_new(attrs, "namespace", json_string(o.ns));
    if (o.subresource[0]) json_object_set_new(attrs, "subresource", json_string(o.subresource));
  } else {
    attrs = json_pack("{s:s, s:s}", "path", path, "verb", verb);
  }
  json_t *b = json_pack("{s:s, s:s, s:{s:s, s:o}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                        "SubjectAccessReview", "spec", "user",
                        json_string_value(json_object_get(user, "username")) ?: "",
                        object ? "resourceAttributes" : "nonResourceAttributes", attrs);
  if (!b) return NULL;
  spec = json_object_get(b, "spec");
  if (json_is_string(v = json_object_get(user, "uid")) && json_string_length(v))
    json_object_set(spec, "uid", v);
  if (json_array_size(v = json_object_get(user, "groups"))) json_object_set(spec, "groups", v);
  if (json_object_size(v = json_object_get(user, "extra"))) json_object_set(spec, "extra", v);
  return b;
}

ts_rc model_access_review_read(const json_t *review, bool *allowed, char *reason, size_t cap,
                               ts_err *err) {
  const json_t *st = json_object_get(review, "status"), *v;
  *allowed = false;
  if (cap) reason[0] = '\0';
  if (!json_is_object(st))
    return ts_err_set(err, TS_EINVAL, "SubjectAccessReview: status: not an object");
  v = json_object_get(st, "allowed");
  if (!json_is_boolean(v))
    return ts_err_set(err, TS_EINVAL, "SubjectAccessReview: status.allowed: not a boolean");
  *allowed = json_is_true(v);
  if (json_is_true(json_object_get(st, "denied"))) *allowed = false; /* a deny wins */
  if (cap && json_is_string(v = json_object_get(st, "reason")))
    snprintf(reason, cap, "%s", json_string_value(v));
  return TS_OK;
}
