/* tests/support/fakeapi.h - a fake kube-apiserver for tests: loopback only, TLS with a CA and
 * certificates generated at start, HTTP/1.1 (libcurl falls back from HTTP/2), bearer-token
 * authentication (HTTP/2 on request), an in-memory store with resourceVersions and watch history,
 * and scriptable faults. It answers as the exchanges recorded from kube-apiserver v1.34
 * (tests/data/k8s/): Status bodies, 409 on a stale update, both 410 forms, binding 201/409/404,
 * eviction 201/429. It runs on its own threads and stops by itself after FA_LIFETIME_S. */
#ifndef FAKEAPI_H
#define FAKEAPI_H

#include <stdbool.h>
#include <stddef.h>

#define FA_LIFETIME_S 120 /* a server a crashed test forgot stops by itself */

typedef struct fa_server fa_server;

/* Starts a server (HTTP/1.1); NULL on failure (reason on stderr). */
fa_server *fa_start(void);
/* Same, offering HTTP/2 in ALPN when http2 (served with libnghttp2: every stream of a connection
 * on one thread, watches as long streams). The request log marks HTTP/2 requests " h2". */
fa_server *fa_start_http2(bool http2);
void fa_stop(fa_server *s);
/* A kubeconfig (file path) for the server with its CA and token. */
const char *fa_kubeconfig(const fa_server *s);
const char *fa_dir(const fa_server *s); /* temp dir: ca.crt, token, kubeconfig */

/* Creates or replaces an object (JSON or YAML of one object); its kind and apiVersion decide
 * where it lives. A watch sees ADDED or MODIFIED. Returns false when it cannot be stored. */
bool fa_put(fa_server *s, const char *text);
/* The object at an API path ("/api/v1/namespaces/t/pods/p0"), or the List of a collection
 * ("/api/v1/namespaces/t/pods"), as JSON text (malloc'd), or NULL. */
char *fa_get(fa_server *s, const char *path);
/* Deletes the object at path (a watch sees DELETED). */
bool fa_delete(fa_server *s, const char *path);

/* The next `times` requests with this method and path prefix (query included in the match
 * when the prefix has a '?') get HTTP status with a Status body (message). status 0 drops the
 * connection without answering; FA_LOST serves the request (a write lands) and then drops the
 * connection, so that its answer is lost. */
#define FA_LOST (-1)
void fa_fault(fa_server *s, const char *method, const char *prefix, int status, int times,
              const char *message);
/* The same with a whole answer body (JSON text, e.g. a recorded exchange's). */
void fa_fault_body(fa_server *s, const char *method, const char *prefix, int status, int times,
                   const char *body);
/* The next `times` matching requests are answered as usual, ms milliseconds late. */
void fa_delay(fa_server *s, const char *method, const char *prefix, int ms, int times);
/* Bindings refused because the pod was bound to another node already (a retry to the same
 * node, after a lost answer or a timeout, is not counted). */
int fa_misbound(fa_server *s);
/* Scripted faults and delays not yet used up. */
int fa_pending_faults(fa_server *s);
/* Every scripted fault and delay still pending is forgotten. */
void fa_clear_faults(fa_server *s);
/* The server stops by itself this many seconds after it started (FA_LIFETIME_S by default;
 * the soak test runs for an hour). */
void fa_set_lifetime(fa_server *s, int seconds);
/* HTTP/2: the connection that serves the next `after` requests then sends GOAWAY (NO_ERROR,
 * last stream = the after-th request) and serves nothing more, as kube-apiserver does with
 * --goaway-chance or when it shuts down: requests in flight on later streams must be retried by
 * the client on a new connection. */
void fa_goaway(fa_server *s, int after);
/* Forgets (and frees) the watch history: watches from older resourceVersions get 410 (as an ERROR
 * event in a 200 stream when already streaming, as HTTP 410 when starting). */
void fa_compact(fa_server *s);
/* A user the token maps to, for requests that the tests want to refuse (401). */
void fa_set_token(fa_server *s, const char *token);

/* A user of bearer token for TokenReviews, allowed to GET the non-resource path allow (NULL:
 * nothing) in SubjectAccessReviews. */
void fa_add_user(fa_server *s, const char *token, const char *username, const char *allow);

/* Requests answered so far whose "METHOD path?query" starts with prefix. */
int fa_count(fa_server *s, const char *prefix);
/* Waits (up to timeout_ms) until fa_count(prefix) >= n; true when it did. */
bool fa_wait(fa_server *s, const char *prefix, int n, int timeout_ms);
/* Connections accepted so far. */
int fa_connections(fa_server *s);
/* Every request so far, one "METHOD path?query STATUS" per line (malloc'd). */
char *fa_log(fa_server *s);

#endif
