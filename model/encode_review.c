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

/* The resource request a path of the core API names, as the API server's request info reads
 * it: "/api/v1/namespaces/NS/RESOURCE/NAME" into its parts (each copied into a buffer of cap
 * bytes); false for any other path. */
static bool resource_path(const char *path, char *ns, char *resource, char *name, size_t cap) {
  static const char prefix[] = "/api/v1/namespaces/";
  const char *p = path + sizeof prefix - 1, *parts[3];
  char *out[3] = {ns, resource, name};
  size_t len[3];
  if (strncmp(path, prefix, sizeof prefix - 1) != 0) return false;
  for (int i = 0; i < 3; i++) {
    const char *end = strchr(p, '/');
    if (i < 2 && !end) return false;
    if (i == 2 && end) return false;
    parts[i] = p, len[i] = end ? (size_t)(end - p) : strlen(p);
    if (!len[i] || len[i] >= cap) return false;
    p = end ? end + 1 : p + len[i];
  }
  for (int i = 0; i < 3; i++) memcpy(out[i], parts[i], len[i]), out[i][len[i]] = '\0';
  return true;
}

json_t *model_access_review_json(const json_t *user, const char *path, const char *verb) {
  char ns[256], resource[64], name[256];
  json_t *spec, *v, *attrs;
  if (resource_path(path, ns, resource, name, sizeof resource))
    attrs = json_pack("{s:s, s:s, s:s, s:s, s:s}", "namespace", ns, "verb", verb, "group", "",
                      "resource", resource, "name", name);
  else
    attrs = json_pack("{s:s, s:s}", "path", path, "verb", verb);
  json_t *b = json_pack(
      "{s:s, s:s, s:{s:s, s:o}}", "apiVersion", "authorization.k8s.io/v1", "kind",
      "SubjectAccessReview", "spec", "user",
      json_string_value(json_object_get(user, "username")) ?: "",
      json_object_get(attrs, "resource") ? "resourceAttributes" : "nonResourceAttributes", attrs);
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
