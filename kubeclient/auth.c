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
  kc__exec_free(a->exec);
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
  size_t len = strlen(dir) + strlen(path) + 2;
  char *out;
  if (path[0] == '/' || !dir[0]) return ts_strdup(path);
  if ((out = ts_malloc(len))) snprintf(out, len, "%s/%s", dir, path);
  return out;
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

/* One kubeconfig file: where its relative paths start (its directory), and its content. */
typedef struct kcfg {
  const char *file; /* the kubeconfig, for messages */
  char dir[4096];   /* its directory ("" for the current one) */
  json_t *root;     /* its first document (borrowed from docs) */
  in_docs docs;     /* the parse */
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

/* Standard base64 of n bytes, new NUL-terminated text. */
static char *base64(const unsigned char *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *o = ts_malloc((n + 2) / 3 * 4 + 1), *q = o;
  if (!o) return NULL;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    *q++ = tab[v >> 18 & 63], *q++ = tab[v >> 12 & 63];
    *q++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
    *q++ = i + 2 < n ? tab[v & 63] : '=';
  }
  *q = '\0';
  return o;
}

/* spec.cluster of the ExecCredential a plugin is given with provideClusterInfo, as client-go
 * fills it: the server, the CA (as data), TLS verification, and the cluster's extension
 * client.authentication.k8s.io/exec as config. New JSON text, or NULL (out of memory). */
static char *exec_cluster(const kc_auth *a, json_t *cl) {
  json_t *c = json_pack("{s:s, s:b}", "server", a->server, "insecure-skip-tls-verify", a->insecure);
  json_t *ext;
  size_t i;
  char *out = NULL;
  if (!c) return NULL;
  if (a->ca_data || a->ca_file) {
    char *pem = a->ca_data, *b64;
    size_t len = a->ca_len;
    ts_err err;
    if (!pem && in_read_file(a->ca_file, &pem, &len, &err) != TS_OK) pem = NULL;
    if (pem && (b64 = base64((const unsigned char *)pem, len))) {
      json_object_set_new(c, "certificate-authority-data", json_string(b64));
      ts_free(b64);
    }
    if (pem != a->ca_data) ts_free(pem);
  }
  if (json_string_value(json_object_get(cl, "tls-server-name")))
    json_object_set(c, "tls-server-name", json_object_get(cl, "tls-server-name"));
  json_array_foreach(json_object_get(cl, "extensions"), i, ext) {
    const char *name = json_string_value(json_object_get(ext, "name"));
    if (name && !strcmp(name, "client.authentication.k8s.io/exec"))
      json_object_set(c, "config", json_object_get(ext, "extension"));
  }
  out = json_dumps(c, JSON_COMPACT);
  json_decref(c);
  return out;
}

/* A string list (args) into argv from index at; false for an entry that is not a string. */
static bool strings_into(json_t *arr, char **argv, size_t at) {
  size_t i;
  json_t *x;
  json_array_foreach(arr, i, x) {
    if (!json_is_string(x) || !(argv[at + i] = ts_strdup(json_string_value(x)))) return false;
  }
  return true;
}

/* users[i].user.exec, as client-go validates it; the plugin is run once. */
static ts_rc exec_of(const kcfg *k, json_t *x, const char *where, json_t *cl, kc_auth *a,
                     ts_err *err) {
  static const char *const modes[] = {"Never", "IfAvailable", "Always"};
  const char *api = json_string_value(json_object_get(x, "apiVersion"));
  const char *cmd = json_string_value(json_object_get(x, "command"));
  const char *mode = json_string_value(json_object_get(x, "interactiveMode"));
  json_t *args = json_object_get(x, "args"), *env = json_object_get(x, "env"), *e;
  kc_exec *ex;
  size_t i;
  if (!api || (strcmp(api, "client.authentication.k8s.io/v1") &&
               strcmp(api, "client.authentication.k8s.io/v1beta1")))
    return ts_err_set(err, TS_EUNSUPPORTED,
                      "%s: %s.exec.apiVersion: want client.authentication.k8s.io/v1 or v1beta1, "
                      "not %.100s",
                      k->file, where, api ? api : "none");
  if (!cmd || !*cmd)
    return ts_err_set(err, TS_EINVAL, "%s: %s.exec.command: missing", k->file, where);
  if (!mode && !strcmp(api, "client.authentication.k8s.io/v1"))
    return ts_err_set(err, TS_EINVAL,
                      "%s: %s.exec.interactiveMode: required in client.authentication.k8s.io/v1 "
                      "(Never, IfAvailable or Always)",
                      k->file, where);
  if ((args && !json_is_array(args)) || (env && !json_is_array(env)))
    return ts_err_set(err, TS_EINVAL, "%s: %s.exec.%s: must be a list", k->file, where,
                      args && !json_is_array(args) ? "args" : "env");
  if (!(a->exec = ex = ts_calloc(1, sizeof *ex)) ||
      !(ex->argv = ts_calloc(json_array_size(args) + 2, sizeof *ex->argv)) ||
      !(ex->env = ts_calloc(json_array_size(env) + 1, sizeof *ex->env)) ||
      !(ex->api_version = ts_strdup(api)))
    return ts_err_set(err, TS_ENOMEM, "out of memory");
  snprintf(ex->where, sizeof ex->where, "%s: %s.exec", k->file, where);
  ex->interactive = KC_EXEC_IF_AVAILABLE;
  for (int m = 0; mode && m < 3; m++)
    if (!strcmp(mode, modes[m])) ex->interactive = m, mode = NULL;
  if (mode)
    return ts_err_set(err, TS_EINVAL,
                      "%s: %s.exec.interactiveMode: want Never, IfAvailable or Always, not %.60s",
                      k->file, where, mode);
  /* a relative path with a slash is the kubeconfig's; a bare name is looked up in PATH */
  if (!(ex->argv[0] = strchr(cmd, '/') ? resolve(k->dir, cmd) : ts_strdup(cmd)) ||
      !strings_into(args, ex->argv, 1))
    return ts_err_set(err, TS_EINVAL, "%s: %s.exec.args: must be strings", k->file, where);
  json_array_foreach(env, i, e) {
    const char *n = json_string_value(json_object_get(e, "name"));
    const char *v = json_string_value(json_object_get(e, "value"));
    size_t len;
    if (!n || !*n || strchr(n, '=') || !v)
      return ts_err_set(err, TS_EINVAL, "%s: %s.exec.env[%zu]: want a name and a value", k->file,
                        where, i);
    len = strlen(n) + strlen(v) + 2;
    if (!(ex->env[i] = ts_malloc(len))) return ts_err_set(err, TS_ENOMEM, "out of memory");
    snprintf(ex->env[i], len, "%s=%s", n, v);
  }
  if (json_string_value(json_object_get(x, "installHint")) &&
      !(ex->install_hint = ts_strdup(json_string_value(json_object_get(x, "installHint")))))
    return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (json_is_true(json_object_get(x, "provideClusterInfo")) &&
      !(ex->cluster_json = exec_cluster(a, cl)))
    return ts_err_set(err, TS_ENOMEM, "out of memory");
  return TS_OK; /* run by kc_auth_load, or at the first request */
}

/* users[i].user: a token, a token file, a client certificate, or an exec plugin (cl: the
 * context's cluster entry, for the plugin's cluster info). */
static ts_rc user_of(const kcfg *k, json_t *u, size_t i, json_t *cl, kc_auth *a, ts_err *err) {
  char where[128];
  const char *v;
  ts_rc rc;
  snprintf(where, sizeof where, "users[%zu].user", i);
  if (json_object_get(u, "exec")) return exec_of(k, json_object_get(u, "exec"), where, cl, a, err);
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

/* The entry named name in list key of the files, the first file that has it winning (as
 * kubectl merges KUBECONFIG): its file in *in, its index there in *index; NULL when none. */
static json_t *named_in(const kcfg *files, size_t n, const char *key, const char *name,
                        const kcfg **in, size_t *index) {
  for (size_t f = 0; f < n; f++) {
    json_t *x = named(json_object_get(files[f].root, key), name, index);
    if (x) return *in = &files[f], x;
  }
  return NULL;
}

/* The context (named, or the current one: the first file that sets it), its cluster and its
 * user, from the files merged. */
static ts_rc context_of(const kcfg *files, size_t n, const char *context, kc_auth *a, ts_err *err) {
  size_t ci, cli, ui;
  const kcfg *kc = &files[0], *kcl, *ku = NULL;
  json_t *ctx, *cl, *user, *x;
  const char *name = context;
  ts_rc rc;
  for (size_t f = 0; !name && f < n; f++) {
    const char *cur = json_string_value(json_object_get(files[f].root, "current-context"));
    if (cur && *cur) name = cur;
  }
  if (!name)
    return ts_err_set(err, TS_EINVAL, "%s: current-context: not set (give --context)",
                      files[0].file);
  if (!(ctx = named_in(files, n, "contexts", name, &kc, &ci)))
    return ts_err_set(err, TS_ENOTFOUND, "%s: contexts: no context named \"%s\"",
                      n > 1 ? "KUBECONFIG" : files[0].file, name);
  x = json_object_get(ctx, "context");
  if (!(cl = named_in(files, n, "clusters", json_string_value(json_object_get(x, "cluster")) ?: "",
                      &kcl, &cli)))
    return ts_err_set(err, TS_ENOTFOUND, "%s: contexts[%zu].context.cluster: no such cluster",
                      kc->file, ci);
  user = named_in(files, n, "users", json_string_value(json_object_get(x, "user")) ?: "", &ku, &ui);
  if ((rc = cluster_of(kcl, json_object_get(cl, "cluster"), cli, a, err)) != TS_OK) return rc;
  if (user && (rc = user_of(ku, json_object_get(user, "user"), ui, json_object_get(cl, "cluster"),
                            a, err)) != TS_OK)
    return rc;
  snprintf(a->source, sizeof a->source, "%s, context %s", n > 1 ? "KUBECONFIG" : kc->file, name);
  return TS_OK;
}

/* Reads one kubeconfig file into k (free with in_docs_free(&k->docs)). */
static ts_rc load_file(const char *file, kcfg *k, ts_err *err) {
  char *text = NULL;
  size_t len = 0;
  const char *why = unusable(file); /* a FIFO would block the start; a directory is no file */
  ts_rc rc;
  memset(k, 0, sizeof *k);
  k->file = file;
  if (why) return ts_err_set(err, TS_EIO, "%s: %s, not a kubeconfig", file, why);
  if ((rc = in_read_file(file, &text, &len, err)) != TS_OK) return rc;
  rc = in_yaml_parse(text, len, &k->docs, err);
  ts_free(text);
  if (rc != TS_OK || !k->docs.n || !json_is_object(k->docs.v[0].value)) {
    in_docs_free(&k->docs);
    return rc != TS_OK ? ts_err_prefix(err, "%s", file)
                       : ts_err_set(err, TS_EINVAL,
                                    "%s: holds no kubeconfig (it is empty, only comments, or not "
                                    "a mapping)",
                                    file);
  }
  k->root = k->docs.v[0].value;
  snprintf(k->dir, sizeof k->dir, "%s", file);
  if (strrchr(k->dir, '/'))
    *strrchr(k->dir, '/') = '\0';
  else
    k->dir[0] = '\0';
  return TS_OK;
}

/* The credentials of files[0..n) merged as kubectl merges them. */
static ts_rc from_kubeconfigs(const char *const *paths, size_t n, const char *context, kc_auth *a,
                              ts_err *err) {
  kcfg *files = ts_calloc(n + 1, sizeof *files);
  size_t loaded = 0;
  ts_rc rc = files ? TS_OK : ts_err_set(err, TS_ENOMEM, "out of memory");
  for (size_t i = 0; rc == TS_OK && i < n; i++)
    if ((rc = load_file(paths[i], &files[loaded], err)) == TS_OK) loaded++;
  if (rc == TS_OK) rc = context_of(files, loaded, context, a, err);
  for (size_t i = 0; i < loaded; i++) in_docs_free(&files[i].docs);
  ts_free(files);
  return rc;
}

static ts_rc from_kubeconfig(const char *file, const char *context, kc_auth *a, ts_err *err) {
  return from_kubeconfigs(&file, 1, context, a, err);
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

ts_rc kc_auth_parse(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err) {
  return auth_load(kubeconfig_flag, context, out, err);
}

ts_rc kc_auth_load(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err) {
  ts_rc rc = auth_load(kubeconfig_flag, context, out, err);
  if (rc == TS_OK && out->exec && (rc = kc__exec_run(out->exec, err)) != TS_OK) kc_auth_free(out);
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
  if (env && *env) { /* the list's files that exist, merged (kubectl skips missing ones) */
    char list[8192], *save = NULL, *p;
    const char *paths[64];
    size_t n = 0;
    snprintf(list, sizeof list, "%s", env);
    for (p = strtok_r(list, ":", &save); p && n < 64; p = strtok_r(NULL, ":", &save))
      if (readable(p)) paths[n++] = p;
    if (n) {
      if ((rc = from_kubeconfigs(paths, n, context, out, err)) != TS_OK) kc_auth_free(out);
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
  if (a->exec && a->exec->cert_data) { /* copied: a later run replaces them */
    struct curl_blob cb = {a->exec->cert_data, a->exec->cert_len, CURL_BLOB_COPY};
    struct curl_blob kb = {a->exec->key_data, a->exec->key_len, CURL_BLOB_COPY};
    curl_easy_setopt(easy, CURLOPT_SSLCERT_BLOB, &cb);
    curl_easy_setopt(easy, CURLOPT_SSLKEY_BLOB, &kb);
  }
  if (a->insecure) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}
