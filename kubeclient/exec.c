/* kubeclient/exec.c - kubeconfig exec credential plugins, as client-go runs them (the
 * ExecCredential protocol of client.authentication.k8s.io/v1 and v1beta1): what the managed
 * clusters' kubeconfigs use (aws eks get-token, gke-gcloud-auth-plugin, kubelogin).
 *
 * The plugin is run with the kubeconfig's args and env added to ours and KUBERNETES_EXEC_INFO
 * (an ExecCredential whose spec says whether it may talk to the user and, when the kubeconfig
 * asks, the cluster's server and CA); its standard error is ours; its standard input is ours
 * only in interactive mode (a terminal, and interactiveMode not Never). What it prints is an
 * ExecCredential whose status holds a token, or a client certificate and key, and an optional
 * expiry: the credential is used until it expires, or until the server answers 401, and the
 * plugin is then run again. A run is bounded (KC_EXEC_TIMEOUT_S unless interactive, output at
 * most KC_EXEC_OUTPUT_MAX) and its failures name the plugin, and say the install hint when the
 * command is not found. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kubeclient/kc_int.h"

extern char **environ;

#define KC_EXEC_TIMEOUT_S  60        /* a run that does not talk to the user */
#define KC_EXEC_OUTPUT_MAX (1 << 20) /* bytes of the ExecCredential it prints */
#define EXEC_NOT_FOUND     127       /* the child's exit status when the command cannot run */

void kc__exec_free(kc_exec *e) {
  if (!e) return;
  for (size_t i = 0; e->argv && e->argv[i]; i++) ts_free(e->argv[i]);
  for (size_t i = 0; e->env && e->env[i]; i++) ts_free(e->env[i]);
  ts_free(e->argv), ts_free(e->env);
  ts_free(e->api_version), ts_free(e->install_hint), ts_free(e->cluster_json);
  ts_free(e->cert_data), ts_free(e->key_data);
  ts_free(e);
}

/* The environment of the child: ours, the kubeconfig's entries (theirs win), and
 * KUBERNETES_EXEC_INFO. New NULL-terminated array of borrowed and owned strings: *owned marks the
 * last one, which the caller frees. */
static char **child_env(const kc_exec *e, const char *info, char **owned) {
  size_t n = 0, k = 0;
  char **env;
  while (environ && environ[n]) n++;
  for (size_t i = 0; e->env && e->env[i]; i++) n++;
  if (!(env = ts_calloc(n + 2, sizeof *env))) return NULL;
  for (size_t i = 0; environ && environ[i]; i++) {
    bool replaced = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
    for (size_t j = 0; !replaced && e->env && e->env[j]; j++) {
      size_t len = strcspn(e->env[j], "=");
      replaced = !strncmp(environ[i], e->env[j], len + 1);
    }
    if (!replaced) env[k++] = environ[i];
  }
  for (size_t j = 0; e->env && e->env[j]; j++) env[k++] = e->env[j];
  if (!(*owned = ts_malloc(strlen(info) + 22))) {
    ts_free(env);
    return NULL;
  }
  snprintf(*owned, strlen(info) + 22, "KUBERNETES_EXEC_INFO=%s", info);
  env[k++] = *owned;
  env[k] = NULL;
  return env;
}

/* Reads the child's output until it closes or the deadline (0: none) passes. */
static ts_rc read_output(int fd, int64_t deadline_s, ts_buf *out, const kc_exec *e, ts_err *err) {
  char chunk[4096];
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    int left = deadline_s ? (int)(deadline_s - (int64_t)time(NULL)) * 1000 : -1;
    ssize_t n;
    if (deadline_s && left <= 0)
      return ts_err_set(err, TS_ETIMEOUT, "%s: the plugin %s did not answer within %d s", e->where,
                        e->argv[0], KC_EXEC_TIMEOUT_S);
    if (poll(&p, 1, left) < 0) {
      if (errno == EINTR) continue;
      return ts_err_set(err, TS_EIO, "%s: reading the plugin's output: %s", e->where,
                        strerror(errno));
    }
    if ((n = read(fd, chunk, sizeof chunk)) < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return ts_err_set(err, TS_EIO, "%s: reading the plugin's output: %s", e->where,
                        strerror(errno));
    }
    if (n == 0) return TS_OK;
    if (ts_buf_append(out, chunk, (size_t)n) != TS_OK)
      return ts_err_set(err, TS_ELIMIT, "%s: the plugin printed more than %d bytes", e->where,
                        KC_EXEC_OUTPUT_MAX);
  }
}

/* KUBERNETES_EXEC_INFO: the ExecCredential the plugin is given. */
static char *exec_info(const kc_exec *e, bool interactive) {
  ts_buf b;
  ts_buf_init(&b, 0);
  ts_buf_printf(&b, "{\"apiVersion\":\"%s\",\"kind\":\"ExecCredential\",\"spec\":{",
                e->api_version);
  if (e->cluster_json) ts_buf_printf(&b, "\"cluster\":%s,", e->cluster_json);
  ts_buf_printf(&b, "\"interactive\":%s}}", interactive ? "true" : "false");
  return b.data ? ts_buf_steal(&b) : NULL;
}

/* Runs the plugin; its output in *out. */
static ts_rc run_plugin(const kc_exec *e, bool interactive, ts_buf *out, ts_err *err) {
  int pipefd[2], status = 0;
  char *info = exec_info(e, interactive), *owned = NULL, **env;
  pid_t pid;
  ts_rc rc;
  if (!info || !(env = child_env(e, info, &owned))) {
    ts_free(info);
    return ts_err_set(err, TS_ENOMEM, "out of memory");
  }
  ts_free(info);
  if (pipe(pipefd) != 0) {
    ts_free(env), ts_free(owned);
    return ts_err_set(err, TS_EIO, "%s: pipe: %s", e->where, strerror(errno));
  }
  fflush(stdout), fflush(stderr);
  if ((pid = fork()) < 0) {
    close(pipefd[0]), close(pipefd[1]);
    ts_free(env), ts_free(owned);
    return ts_err_set(err, TS_EIO, "%s: fork: %s", e->where, strerror(errno));
  }
  if (pid == 0) { /* the child: stdout to the pipe, stdin the user's or nothing */
    int devnull = interactive ? -1 : open("/dev/null", O_RDONLY);
    dup2(pipefd[1], STDOUT_FILENO);
    close(pipefd[0]), close(pipefd[1]);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO), close(devnull);
    environ = env; /* execvp looks the command up in our PATH and runs it with these */
    execvp(e->argv[0], e->argv);
    _exit(EXEC_NOT_FOUND);
  }
  close(pipefd[1]);
  ts_free(env), ts_free(owned);
  rc = read_output(pipefd[0], interactive ? 0 : (int64_t)time(NULL) + KC_EXEC_TIMEOUT_S, out, e,
                   err);
  close(pipefd[0]);
  if (rc != TS_OK) kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (rc != TS_OK) return rc;
  if (WIFEXITED(status) && WEXITSTATUS(status) == EXEC_NOT_FOUND && !out->len)
    return ts_err_set(err, TS_ENOTFOUND, "%s: the plugin %s could not be run (not found?)%s%s",
                      e->where, e->argv[0], e->install_hint ? ": " : "",
                      e->install_hint ? e->install_hint : "");
  if (!WIFEXITED(status) || WEXITSTATUS(status))
    return ts_err_set(err, TS_EAUTH, "%s: the plugin %s failed (%s %d; its errors are above)",
                      e->where, e->argv[0], WIFEXITED(status) ? "exit status" : "signal",
                      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  return TS_OK;
}

/* A PEM the plugin gave (clientCertificateData and clientKeyData are PEM text, not base64). */
static char *pem_copy(const char *s, size_t *len) {
  *len = strlen(s);
  return ts_strdup(s);
}

/* The ExecCredential the plugin printed, into e: a token, or a certificate and key, and when it
 * expires. */
static ts_rc take_credential(kc_exec *e, const char *text, size_t len, ts_err *err) {
  json_t *root = NULL, *st;
  const char *tok, *cert, *key, *kind, *api, *exp;
  ts_err perr;
  int64_t expiry = 0;
  ts_rc rc = TS_OK;
  ts_err_clear(&perr);
  if (in_json_parse(text, len, &root, &perr) != TS_OK)
    return ts_err_set(err, TS_EPARSE, "%s: the plugin's output is not an ExecCredential: %s",
                      e->where, perr.text);
  kind = json_string_value(json_object_get(root, "kind"));
  api = json_string_value(json_object_get(root, "apiVersion"));
  st = json_object_get(root, "status");
  tok = json_string_value(json_object_get(st, "token"));
  cert = json_string_value(json_object_get(st, "clientCertificateData"));
  key = json_string_value(json_object_get(st, "clientKeyData"));
  exp = json_string_value(json_object_get(st, "expirationTimestamp"));
  if (!kind || strcmp(kind, "ExecCredential"))
    rc = ts_err_set(err, TS_EPARSE, "%s: the plugin's output: kind: want ExecCredential", e->where);
  else if (!api || strcmp(api, e->api_version))
    rc = ts_err_set(err, TS_EPARSE, "%s: the plugin's output: apiVersion: want %s, not %s",
                    e->where, e->api_version, api ? api : "none");
  else if (!json_is_object(st))
    rc = ts_err_set(err, TS_EPARSE, "%s: the plugin's output: status: missing", e->where);
  else if ((!tok || !*tok) && (!cert || !key))
    rc = ts_err_set(err, TS_EAUTH,
                    "%s: the plugin's output: status: neither a token nor a client certificate "
                    "and key",
                    e->where);
  else if ((cert && !key) || (key && !cert))
    rc = ts_err_set(err, TS_EPARSE,
                    "%s: the plugin's output: status: clientCertificateData and clientKeyData "
                    "come together",
                    e->where);
  else if (tok && strlen(tok) > KC_TOKEN_MAX)
    rc = ts_err_set(err, TS_ELIMIT, "%s: the plugin's token is longer than %d bytes", e->where,
                    KC_TOKEN_MAX);
  else if (exp && ts_time_parse(exp, &expiry) != TS_OK)
    rc = ts_err_set(err, TS_EPARSE,
                    "%s: the plugin's output: status.expirationTimestamp: not RFC 3339: %.64s",
                    e->where, exp);
  if (rc == TS_OK) {
    e->token[0] = '\0';
    if (tok) ts_strlcpy(e->token, tok, sizeof e->token);
    ts_free(e->cert_data), ts_free(e->key_data);
    e->cert_data = e->key_data = NULL;
    e->cert_len = e->key_len = 0;
    if (cert && (!(e->cert_data = pem_copy(cert, &e->cert_len)) ||
                 !(e->key_data = pem_copy(key, &e->key_len))))
      rc = ts_err_set(err, TS_ENOMEM, "out of memory");
    e->expiry_ns = expiry;
    e->runs++;
  }
  json_decref(root);
  return rc;
}

ts_rc kc__exec_run(kc_exec *e, ts_err *err) {
  bool tty = isatty(STDIN_FILENO);
  bool interactive = tty && e->interactive != KC_EXEC_NEVER;
  ts_buf out;
  ts_rc rc;
  if (e->interactive == KC_EXEC_ALWAYS && !tty)
    return ts_err_set(err, TS_EAUTH,
                      "%s: interactiveMode Always, but standard input is not a terminal", e->where);
  ts_buf_init(&out, KC_EXEC_OUTPUT_MAX);
  rc = run_plugin(e, interactive, &out, err);
  if (rc == TS_OK) rc = take_credential(e, out.data ? out.data : "", out.len, err);
  ts_buf_free(&out);
  return rc;
}

bool kc__exec_expired(const kc_exec *e, int64_t now_ns) {
  return e->expiry_ns && now_ns >= e->expiry_ns;
}
