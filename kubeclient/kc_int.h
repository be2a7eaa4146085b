/* kubeclient/kc_int.h - internals shared by the files of kubeclient/. */
#ifndef KC_INT_H
#define KC_INT_H

#include <curl/curl.h>

#include "input/input.h"
#include "kubeclient/kc.h"

#define KC_EXEC_RETRY_MS 1000 /* an exec plugin run again after a 401 at most this often */

/* An API path with a namespace, a name and a subresource (/apis/G/V/namespaces/NS/R/NAME/S). */
#define KC_PATH_MAX 800

/* One libcurl multi handle on the loop, with its timer. Watches and writes share one (HTTP/2
 * when the server offers it: one connection); reads (lists, gets) have their own over
 * HTTP/1.1: libcurl 7.88's HTTP/2 stalled multi-megabyte list pages for 30 s (issue 16). */
typedef struct kc_multi {
  CURLM *m;         /* libcurl */
  uv_timer_t timer; /* its timeout */
  kc_client *c;     /* owner */
} kc_multi;

enum { KC_STREAMS, KC_READS };

struct kc_req {
  CURL *easy;                 /* the transfer, once launched (NULL while queued) */
  char *url;                  /* owned full URL, until launched */
  char method[8];             /* GET, POST, PATCH, ... */
  char content_type[64];      /* of the body */
  long timeout_ms;            /* of the transfer */
  bool queued;                /* waiting for a slot (in c->queue, not c->reqs) */
  bool counted;               /* takes one of the KC_MAX_INFLIGHT slots */
  kc_multi *mx;               /* the multi handle it runs in */
  struct curl_slist *headers; /* request headers */
  ts_buf body;                /* response (or the unread part of a stream) */
  char *upload;               /* owned request body */
  kc_line_fn on_line;         /* streaming: one call per line */
  kc_done_fn on_done;         /* at the end */
  void *ud;                   /* for both */
  kc_client *c;               /* owner */
  struct kc_req *next;        /* in the client's list */
  long retry_after;           /* Retry-After header */
  bool cancelled;             /* no more callbacks; removed at the next sweep */
  bool too_big;               /* aborted: over the body cap */
  char verb[8];               /* for metrics: get, list, watch, create, update, patch, delete */
  char resource[96];          /* for metrics: "pods", "pods/binding", "" for discovery */
};

#define KC_METRIC_SERIES 256 /* distinct (verb, resource, code) counted; more go to "other" */

/* Requests answered, by verb, resource and HTTP status (0: no answer). */
typedef struct kc_series {
  char verb[8];      /* get, list, ... */
  char resource[96]; /* "pods/binding" */
  long code;         /* HTTP status, 0 when none came */
  uint64_t count;    /* answers */
} kc_series;

#define KC_READ_CONNECTIONS 8                             /* for reads (lists, gets), HTTP/1.1 */
#define KC_SOCK_POOL        (2 * KC_MAX_CONNECTIONS + 64) /* sockets watched without allocating */

typedef struct sock_ctx sock_ctx;

struct kc_client {
  uv_loop_t *loop;                    /* the loop */
  const kc_auth *auth;                /* borrowed */
  kc_multi mx[2];                     /* KC_STREAMS: watches and writes; KC_READS: reads */
  int timers_open;                    /* of mx, while closing */
  kc_req *reqs;                       /* in flight */
  kc_req *queue, *queue_tail;         /* waiting for a slot, oldest first (linked by next) */
  size_t inflight;                    /* launched requests that take a slot */
  size_t nqueued;                     /* entries of queue */
  uint64_t nreq;                      /* started */
  char token[KC_TOKEN_MAX + 1];       /* bearer token in use */
  uint64_t token_read_ms;             /* when the token file was read */
  uint64_t exec_tried_ms;             /* when the exec plugin was last run (monotonic ms) */
  uint64_t exec_forced_gen;           /* its runs after the last run a 401 forced */
  bool https;                         /* the server's URL is https (only that scheme is used) */
  bool multiplexing;                  /* the server speaks HTTP/2: one connection for everything */
  long timeout_ms;                    /* of a request that is not a watch (api.requestTimeout) */
  sock_ctx *socks;                    /* KC_SOCK_POOL contexts, allocated with the client */
  size_t socks_in_use;                /* of them taken (or still closing) */
  bool closed;                        /* kc_client_free is done but for closing sockets */
  bool closing;                       /* kc_client_free was called: no new requests */
  kc_series series[KC_METRIC_SERIES]; /* tessera_api_requests_total */
  size_t nseries;                     /* entries in use */
};

/* An exec credential plugin (exec.c) and the credential it gave last. */
enum { KC_EXEC_NEVER, KC_EXEC_IF_AVAILABLE, KC_EXEC_ALWAYS }; /* interactiveMode */
typedef struct kc_exec {
  char *api_version;  /* client.authentication.k8s.io/v1 or /v1beta1 (owned) */
  char **argv;        /* command (resolved as client-go resolves it) then args, NULL-ended */
  char **env;         /* "NAME=VALUE" the kubeconfig adds, NULL-ended (owned) */
  char *install_hint; /* said when the command cannot be run (owned), or NULL */
  int interactive;    /* KC_EXEC_NEVER, KC_EXEC_IF_AVAILABLE, KC_EXEC_ALWAYS */
  char *cluster_json; /* spec.cluster given with provideClusterInfo (owned JSON), or NULL */
  char where[300];    /* "FILE: users[i].user.exec", for messages */
  /* what the last run gave */
  char token[KC_TOKEN_MAX + 1]; /* bearer token, "" when it gave a certificate */
  char *cert_data, *key_data;   /* PEM client certificate and key (owned), or NULL */
  size_t cert_len, key_len;     /* their lengths */
  int64_t expiry_ns;            /* status.expirationTimestamp, 0 when it gave none */
  uint64_t runs;                /* successful runs so far */
} kc_exec;
/* Runs the plugin and keeps its credential in e; err names the plugin and what went wrong. */
ts_rc kc__exec_run(kc_exec *e, ts_err *err);
/* True once the credential's expiry has passed. */
bool kc__exec_expired(const kc_exec *e, int64_t now_ns);
void kc__exec_free(kc_exec *e); /* NULL is a no-op */

/* A bearer token file's content, without trailing white space, into out (KC_TOKEN_MAX + 1
 * bytes): TS_EIO when it cannot be read, TS_ELIMIT when longer than KC_TOKEN_MAX, TS_EINVAL when
 * empty; err names the file. */
ts_rc kc__read_token(const char *path, char *out, ts_err *err);
/* One line of a watch stream given to informer i as if the server had sent it (fuzzing). */
void kc__informers_feed(kc_informers *a, size_t i, const char *line, size_t len);
/* TLS settings of auth for one transfer (CA, client certificate, verification). */
void kc__tls_options(kc_client *c, CURL *easy);
/* A 401: re-read the token file at once. */
void kc__token_expired(kc_client *c);

#endif
