/* kubeclient/auth.c - credentials from a kubeconfig or the in-cluster service account, and the
 * TLS options they give each transfer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "input/input.h"
#include "kubeclient/kc_int.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

void kc_auth_free(kc_auth *a) {
  ts_free(a->ca_file), ts_free(a->ca_data), ts_free(a->cert_file), ts_free(a->cert_data);
  ts_free(a->key_file), ts_free(a->key_data), ts_free(a->token), ts_free(a->token_file);
  memset(a, 0, sizeof *a);
}

static bool readable(const char *path) {
  return path && *path && access(path, R_OK) == 0;
}

/* NULL when path is a regular file we can read, else why not (static). */
static const char *unusable(const char *path) {
  struct stat st;
  if (stat(path, &st)) return strerror(errno);
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  if (access(path, R_OK)) return strerror(errno);
  return NULL;
}

ts_rc kc__read_token(const char *path, char *out, ts_err *err) {
  const char *why = unusable(path);
  FILE *f = why ? NULL : fopen(path, "r");
  size_t n;
  if (!f) return ts_err_set(err, TS_EIO, "%s: %s", path, why ? why : strerror(errno));
  n = fread(out, 1, KC_TOKEN_MAX + 1, f);
  fclose(f);
  while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ')) n--;
  if (n > KC_TOKEN_MAX)
    return ts_err_set(err, TS_ELIMIT, "%s: the token is longer than %d bytes", path, KC_TOKEN_MAX);
  out[n] = '\0';
  if (!n) return ts_err_set(err, TS_EINVAL, "%s: the token file is empty", path);
  return TS_OK;
}

/* A file the kubeconfig names at where.field must be readable now, not at the first request. */
static ts_rc check_file(const char *file, const char *where, const char *field, const char *path,
                        ts_err *err) {
  const char *why = path ? unusable(path) : NULL;
  if (why) return ts_err_set(err, TS_EIO, "%s: %s.%s: %s: %s", file, where, field, path, why);
  return TS_OK;
}

/* Standard base64 into a new NUL-terminated buffer; NULL when invalid. */
static char *unbase64(const char *s, size_t *n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t len = strlen(s), k = 0;
  char *o = ts_malloc(len + 1);
  uint32_t acc = 0;
  int bits = 0;
  if (!o) return NULL;
  for (size_t i = 0; i < len; i++) {
    const char *p;
    if (s[i] == '=' || s[i] == '\n' || s[i] == '\r' || s[i] == ' ') continue;
    if (!(p = strchr(tab, s[i])) || !s[i]) {
      ts_free(o);
      return NULL;
    }
    acc = acc << 6 | (uint32_t)(p - tab);
    bits += 6;
    if (bits >= 8) bits -= 8, o[k++] = (char)(acc >> bits & 0xFF);
  }
  o[k] = '\0';
  *n = k;
  return o;
}

/* path relative to the kubeconfig's directory, as kubectl resolves it. */
static char *resolve(const char *dir, const char *path) {
  char buf[4096];
  if (path[0] == '/' || !dir[0]) return ts_strdup(path);
  snprintf(buf, sizeof buf, "%s/%s", dir, path);
  return ts_strdup(buf);
}

/* The entry of list (contexts, clusters, users) named name, and its index. */
static json_t *named(json_t *list, const char *name, size_t *index) {
  size_t i;
  json_t *x;
  json_array_foreach(list, i, x) {
    const char *n = json_string_value(json_object_get(x, "name"));
    if (n && !strcmp(n, name)) {
      *index = i;
      return x;
    }
  }
  return NULL;
}

static ts_rc pem(const char *file, const char *where, const char *dir, json_t *obj, const char *key,
                 char **path, char **data, size_t *len, ts_err *err) {
  char dkey[128];
  const char *v;
  snprintf(dkey, sizeof dkey, "%s-data", key);
  if ((v = json_string_value(json_object_get(obj, dkey)))) {
    if (!(*data = unbase64(v, len)))
      return ts_err_set(err, TS_EINVAL, "%s: %s.%s: not valid base64", file, where, dkey);
  } else if ((v = json_string_value(json_object_get(obj, key)))) {
    if (!(*path = resolve(dir, v))) return ts_err_set(err, TS_ENOMEM, "out of memory");
    return check_file(file, where, key, *path, err);
  }
  return TS_OK;
}

/* Where the kubeconfig's relative paths start: its directory. */
typedef struct kcfg {
  const char *file; /* the kubeconfig, for messages */
  char dir[4096];   /* its directory ("" for the current one) */
  json_t *root;     /* its first document (borrowed from the parse) */
} kcfg;

/* clusters[i].cluster: server, TLS verification and the CA. */
static ts_rc cluster_of(const kcfg *k, json_t *cl, size_t i, kc_auth *a, ts_err *err) {
  char where[128];
  const char *v = json_string_value(json_object_get(cl, "server"));
  if (!v)
    return ts_err_set(err, TS_EINVAL, "%s: clusters[%zu].cluster.server: missing", k->file, i);
  if (strncasecmp(v, "https://", 8) && strncasecmp(v, "http://", 7))
    return ts_err_set(err, TS_EINVAL,
                      "%s: clusters[%zu].cluster.server: must be an https:// URL, not \"%.200s\"",
                      k->file, i, v);
  if (strlen(v) >= sizeof a->server)
    return ts_err_set(err, TS_ELIMIT, "%s: clusters[%zu].cluster.server: longer than %zu bytes",
                      k->file, i, sizeof a->server - 1);
  snprintf(a->server, sizeof a->server, "%s", v);
  while (strlen(a->server) && a->server[strlen(a->server) - 1] == '/')
    a->server[strlen(a->server) - 1] = '\0';
  a->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
  snprintf(where, sizeof where, "clusters[%zu].cluster", i);
  return pem(k->file, where, k->dir, cl, "certificate-authority", &a->ca_file, &a->ca_data,
             &a->ca_len, err);
}

/* users[i].user: a token, a token file or a client certificate (no exec plugins). */
static ts_rc user_of(const kcfg *k, json_t *u, size_t i, kc_auth *a, ts_err *err) {
  char where[128];
  const char *v;
  ts_rc rc;
  snprintf(where, sizeof where, "users[%zu].user", i);
  if (json_object_get(u, "exec"))
    return ts_err_set(err, TS_EUNSUPPORTED,
                      "%s: %s.exec: exec credential plugins are not supported; use a token, "
                      "tokenFile or client certificate",
                      k->file, where);
  if (json_object_get(u, "auth-provider"))
    return ts_err_set(err, TS_EUNSUPPORTED,
                      "%s: %s.auth-provider: auth providers are not supported", k->file, where);
  if ((v = json_string_value(json_object_get(u, "token")))) {
    if (strlen(v) > KC_TOKEN_MAX)
      return ts_err_set(err, TS_ELIMIT, "%s: %s.token: longer than %d bytes", k->file, where,
                        KC_TOKEN_MAX);
    a->token = ts_strdup(v);
  }
  if ((v = json_string_value(json_object_get(u, "tokenFile")))) {
    char tok[KC_TOKEN_MAX + 1];
    if (!(a->token_file = resolve(k->dir, v))) return ts_err_set(err, TS_ENOMEM, "out of memory");
    if ((rc = kc__read_token(a->token_file, tok, err)) != TS_OK)
      return ts_err_prefix(err, "%s: %s.tokenFile", k->file, where);
  }
  if ((rc = pem(k->file, where, k->dir, u, "client-certificate", &a->cert_file, &a->cert_data,
                &a->cert_len, err)) != TS_OK)
    return rc;
  return pem(k->file, where, k->dir, u, "client-key", &a->key_file, &a->key_data, &a->key_len, err);
}

/* The context (named, or the current one), its cluster and its user. */
static ts_rc context_of(const kcfg *k, const char *context, kc_auth *a, ts_err *err) {
  size_t ci, cli, ui;
  json_t *ctx, *cl, *user, *x;
  const char *name =
      context ? context : json_string_value(json_object_get(k->root, "current-context"));
  ts_rc rc;
  if (!name)
    return ts_err_set(err, TS_EINVAL, "%s: current-context: not set (give --context)", k->file);
  if (!(ctx = named(json_object_get(k->root, "contexts"), name, &ci)))
    return ts_err_set(err, TS_ENOTFOUND, "%s: contexts: no context named \"%s\"", k->file, name);
  x = json_object_get(ctx, "context");
  if (!(cl = named(json_object_get(k->root, "clusters"),
                   json_string_value(json_object_get(x, "cluster")) ?: "", &cli)))
    return ts_err_set(err, TS_ENOTFOUND, "%s: contexts[%zu].context.cluster: no such cluster",
                      k->file, ci);
  user = named(json_object_get(k->root, "users"),
               json_string_value(json_object_get(x, "user")) ?: "", &ui);
  if ((rc = cluster_of(k, json_object_get(cl, "cluster"), cli, a, err)) != TS_OK) return rc;
  if (user && (rc = user_of(k, json_object_get(user, "user"), ui, a, err)) != TS_OK) return rc;
  snprintf(a->source, sizeof a->source, "%s, context %s", k->file, name);
  return TS_OK;
}

static ts_rc from_kubeconfig(const char *file, const char *context, kc_auth *a, ts_err *err) {
  in_docs docs = {0};
  kcfg k = {file, "", NULL};
  char *text = NULL;
  size_t len = 0;
  const char *why = unusable(file); /* a FIFO would block the start; a directory is no file */
  ts_rc rc;
  if (why) return ts_err_set(err, TS_EIO, "%s: %s, not a kubeconfig", file, why);
  if ((rc = in_read_file(file, &text, &len, err)) != TS_OK) return rc;
  rc = in_yaml_parse(text, len, &docs, err);
  ts_free(text);
  if (rc != TS_OK || !docs.n || !json_is_object(docs.v[0].value)) {
    in_docs_free(&docs);
    return rc != TS_OK ? ts_err_prefix(err, "%s", file)
                       : ts_err_set(err, TS_EINVAL,
                                    "%s: holds no kubeconfig (it is empty, only comments, or not "
                                    "a mapping)",
                                    file);
  }
  k.root = docs.v[0].value;
  snprintf(k.dir, sizeof k.dir, "%s", file);
  if (strrchr(k.dir, '/'))
    *strrchr(k.dir, '/') = '\0';
  else
    k.dir[0] = '\0';
  rc = context_of(&k, context, a, err);
  in_docs_free(&docs);
  return rc;
}

static ts_rc in_cluster(kc_auth *a, ts_err *err) {
  const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
  const char *dir = getenv("TESSERA_SA_DIR") ? getenv("TESSERA_SA_DIR") : SA_DIR;
  char path[4096];
  if (!host || !port) return ts_err_set(err, TS_ENOTFOUND, "not in a cluster");
  snprintf(a->server, sizeof a->server, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s",
           host, port);
  snprintf(path, sizeof path, "%s/token", dir);
  a->token_file = ts_strdup(path);
  snprintf(path, sizeof path, "%s/ca.crt", dir);
  a->ca_file = ts_strdup(path);
  {
    char tok[KC_TOKEN_MAX + 1];
    const char *why = unusable(a->ca_file);
    if (kc__read_token(a->token_file, tok, err) != TS_OK)
      return ts_err_prefix(err, "in-cluster service account token");
    if (why)
      return ts_err_set(err, TS_EIO, "in-cluster service account CA: %s: %s", a->ca_file, why);
  }
  snprintf(a->source, sizeof a->source, "in-cluster service account (%s)", dir);
  return TS_OK;
}

static ts_rc auth_load(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err);

ts_rc kc_auth_load(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err) {
  ts_rc rc = auth_load(kubeconfig_flag, context, out, err);
  if (rc == TS_OK && !strncasecmp(out->server, "http://", 7))
    ts_log(TS_LOG_WARN, "%s: the server %s is plain http: %s in clear", out->source, out->server,
           out->token || out->token_file ? "the bearer token travels" : "every request travels");
  return rc;
}

static ts_rc auth_load(const char *kubeconfig_flag, const char *context, kc_auth *out,
                       ts_err *err) {
  const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
  char path[4096];
  ts_rc rc;
  memset(out, 0, sizeof *out);
  if (kubeconfig_flag) {
    if ((rc = from_kubeconfig(kubeconfig_flag, context, out, err)) != TS_OK) kc_auth_free(out);
    return rc;
  }
  if (env && *env) { /* the first readable file of the list */
    char list[8192], *save = NULL, *p;
    snprintf(list, sizeof list, "%s", env);
    for (p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save))
      if (readable(p)) {
        if ((rc = from_kubeconfig(p, context, out, err)) != TS_OK) kc_auth_free(out);
        return rc;
      }
  }
  if (getenv("KUBERNETES_SERVICE_HOST")) {
    if ((rc = in_cluster(out, err)) != TS_OK) kc_auth_free(out);
    return rc;
  }
  snprintf(path, sizeof path, "%s/.kube/config", home ? home : "");
  if (home && readable(path)) {
    if ((rc = from_kubeconfig(path, context, out, err)) != TS_OK) kc_auth_free(out);
    return rc;
  }
  return ts_err_set(err, TS_ENOTFOUND,
                    "no credentials: give --kubeconfig, set KUBECONFIG, or run in a cluster");
}

void kc__tls_options(kc_client *c, CURL *easy) {
  const kc_auth *a = c->auth;
  if (a->ca_file) curl_easy_setopt(easy, CURLOPT_CAINFO, a->ca_file);
  if (a->ca_data) {
    struct curl_blob b = {a->ca_data, a->ca_len, CURL_BLOB_NOCOPY};
    curl_easy_setopt(easy, CURLOPT_CAINFO_BLOB, &b);
  }
  if (a->cert_file) curl_easy_setopt(easy, CURLOPT_SSLCERT, a->cert_file);
  if (a->cert_data) {
    struct curl_blob b = {a->cert_data, a->cert_len, CURL_BLOB_NOCOPY};
    curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &b);
  }
  if (a->key_file) curl_easy_setopt(easy, CURLOPT_SSLKEY, a->key_file);
  if (a->key_data) {
    struct curl_blob b = {a->key_data, a->key_len, CURL_BLOB_NOCOPY};
    curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &b);
  }
  if (a->insecure) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

void kc__now_rfc3339(char *out, size_t cap, bool micro) {
  struct timeval tv;
  struct tm tm;
  gettimeofday(&tv, NULL);
  gmtime_r(&tv.tv_sec, &tm);
  if (micro)
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec);
  else
    snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}
