/* kubeclient/auth.c - credentials from a kubeconfig or the in-cluster service account, and the
 * TLS options they give each transfer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    *path = resolve(dir, v);
  }
  return TS_OK;
}

static ts_rc from_kubeconfig(const char *file, const char *context, kc_auth *a, ts_err *err) {
  in_docs docs = {0};
  char *text = NULL, dir[4096], where[128];
  size_t len = 0, ci, cli, ui;
  FILE *f = fopen(file, "rb");
  json_t *root, *ctx, *cl, *user, *x;
  const char *name, *v;
  ts_rc rc = TS_EINVAL;
  if (!f) return ts_err_set(err, TS_EIO, "%s: cannot read", file);
  fseek(f, 0, SEEK_END);
  len = (size_t)ftell(f);
  rewind(f);
  text = ts_malloc(len + 1);
  if (text && fread(text, 1, len, f) != len) len = 0;
  fclose(f);
  if (!text) return ts_err_set(err, TS_ENOMEM, "out of memory");
  text[len] = '\0';
  if (in_yaml_parse(text, len, &docs, err) != TS_OK || !docs.n) {
    ts_free(text);
    in_docs_free(&docs);
    return ts_err_prefix(err, "%s", file);
  }
  ts_free(text);
  root = docs.v[0].value;
  snprintf(dir, sizeof dir, "%s", file);
  if (strrchr(dir, '/'))
    *strrchr(dir, '/') = '\0';
  else
    dir[0] = '\0';
  name = context ? context : json_string_value(json_object_get(root, "current-context"));
  if (!name) {
    ts_err_set(err, TS_EINVAL, "%s: current-context: not set (give --context)", file);
    goto out;
  }
  if (!(ctx = named(json_object_get(root, "contexts"), name, &ci))) {
    ts_err_set(err, TS_ENOTFOUND, "%s: contexts: no context named \"%s\"", file, name);
    goto out;
  }
  x = json_object_get(ctx, "context");
  if (!(cl = named(json_object_get(root, "clusters"),
                   json_string_value(json_object_get(x, "cluster")) ?: "", &cli))) {
    ts_err_set(err, TS_ENOTFOUND, "%s: contexts[%zu].context.cluster: no such cluster", file, ci);
    goto out;
  }
  user = named(json_object_get(root, "users"), json_string_value(json_object_get(x, "user")) ?: "",
               &ui);
  cl = json_object_get(cl, "cluster");
  if (!(v = json_string_value(json_object_get(cl, "server")))) {
    ts_err_set(err, TS_EINVAL, "%s: clusters[%zu].cluster.server: missing", file, cli);
    goto out;
  }
  snprintf(a->server, sizeof a->server, "%s", v);
  while (strlen(a->server) && a->server[strlen(a->server) - 1] == '/')
    a->server[strlen(a->server) - 1] = '\0';
  a->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
  snprintf(where, sizeof where, "clusters[%zu].cluster", cli);
  if ((rc = pem(file, where, dir, cl, "certificate-authority", &a->ca_file, &a->ca_data, &a->ca_len,
                err)) != TS_OK)
    goto out;
  if (user) {
    json_t *u = json_object_get(user, "user");
    snprintf(where, sizeof where, "users[%zu].user", ui);
    if (json_object_get(u, "exec")) {
      rc = ts_err_set(err, TS_EUNSUPPORTED,
                      "%s: %s.exec: exec credential plugins are not supported; use a token, "
                      "tokenFile or client certificate",
                      file, where);
      goto out;
    }
    if (json_object_get(u, "auth-provider")) {
      rc = ts_err_set(err, TS_EUNSUPPORTED,
                      "%s: %s.auth-provider: auth providers are not supported", file, where);
      goto out;
    }
    if ((v = json_string_value(json_object_get(u, "token")))) a->token = ts_strdup(v);
    if ((v = json_string_value(json_object_get(u, "tokenFile")))) a->token_file = resolve(dir, v);
    if ((rc = pem(file, where, dir, u, "client-certificate", &a->cert_file, &a->cert_data,
                  &a->cert_len, err)) != TS_OK ||
        (rc = pem(file, where, dir, u, "client-key", &a->key_file, &a->key_data, &a->key_len,
                  err)) != TS_OK)
      goto out;
  }
  snprintf(a->source, sizeof a->source, "%s, context %s", file, name);
  rc = TS_OK;
out:
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
  if (!readable(a->token_file))
    return ts_err_set(err, TS_EAUTH, "%s: cannot read the service account token", a->token_file);
  snprintf(a->source, sizeof a->source, "in-cluster service account (%s)", dir);
  return TS_OK;
}

ts_rc kc_auth_load(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err) {
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
