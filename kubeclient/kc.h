/*
 * kubeclient/kc.h - Tessera's Kubernetes API client: libcurl's multi interface driven by
 * libuv (watches and writes over HTTP/2 when the server offers it, reads over HTTP/1.1 on a few
 * connections of their own: libcurl 7.88 stalled large list pages over HTTP/2), authentication from
 * a kubeconfig or the in-cluster service account, informers (paginated list, then watch with
 * bookmarks, re-list on 410, backoff), the writes a scheduler makes (binding, patches, events,
 * eviction, read-modify-write updates) behind a leader-election gate, a Lease-based leader
 * election. It takes bodies and knows no kind's format: model/wire.h encodes them.
 *
 * Everything runs on one libuv loop. Callbacks are never invoked from inside libcurl or from
 * inside the call that started the operation. Strings and JSON passed in are borrowed for the
 * call (copied when kept) unless a declaration says otherwise; "returns new" means the caller
 * frees it with the matching _free/_stop function.
 */
#ifndef KC_H
#define KC_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "kubeclient/kc_opts.h"

#include "common/ts.h"

#define KC_BODY_MAX (256u << 20) /* bytes of one response body */
#define KC_LINE_MAX (64u << 20)  /* bytes of one watch event */
#define KC_PAGE     500          /* items per list page */
/* Requests that are not watches run at most this many at a time; the rest wait in order,
 * without a libcurl handle: each transfer in flight holds tens of KiB of libcurl's state, and
 * a cycle may issue thousands of writes (8,000 at once in make e2e-scale: 219 MB). */
#define KC_MAX_INFLIGHT      256
#define KC_MAX_CONNECTIONS   48   /* to the API server (HTTP/1.1; HTTP/2 multiplexes on one) */
#define KC_RETRY_AFTER_MAX_S 60   /* a longer Retry-After is taken as this */
#define KC_LIST_PAGES_MAX    4096 /* pages of one list (2M objects); more: the list starts again */
#define KC_CONTINUE_MAX      8192 /* bytes of a continue token or resourceVersion we send back */
#define KC_WATCH_TIMEOUT_S   300  /* timeoutSeconds of a watch, by default */
#define KC_FAILING_AFTER     3    /* failed attempts in a row that make a resource "not ready" */

/* ---- authentication ---------------------------------------------------------------------- */

typedef struct kc_auth {
  char server[512];     /* https://host:port */
  char *ca_file;        /* owned: certificate-authority path, or NULL */
  char *ca_data;        /* owned: PEM, or NULL */
  size_t ca_len;        /* its length */
  char *cert_file;      /* owned: client-certificate path, or NULL */
  char *cert_data;      /* owned: PEM, or NULL */
  size_t cert_len;      /* its length */
  char *key_file;       /* owned: client-key path, or NULL */
  char *key_data;       /* owned: PEM, or NULL */
  size_t key_len;       /* its length */
  char *token;          /* owned: bearer token, or NULL */
  char *token_file;     /* owned: file re-read as it rotates, or NULL */
  bool insecure;        /* insecure-skip-tls-verify */
  char source[600];     /* where it came from ("/home/u/.kube/config, context ci"), for logs */
  struct kc_exec *exec; /* owned: an exec credential plugin (users[].user.exec), whose
                           credential is kept here and renewed as it expires, or NULL */
} kc_auth;

/* Finds credentials as kubectl does: kubeconfig_flag (that file alone), else $KUBECONFIG (its
 * files merged as kubectl merges them: the first to name a cluster, user or context, or to set
 * current-context, wins; missing files are skipped; relative paths are read from the file that
 * gave them), else the in-cluster service account ($KUBERNETES_SERVICE_HOST/PORT, token and CA
 * under $TESSERA_SA_DIR or /var/run/secrets/kubernetes.io/serviceaccount), else ~/.kube/config.
 * context NULL: the current context. A user's exec credential plugin is run once here (its
 * failure is this call's). Errors name the file and field
 * ("/p/config: users[0].user.exec.command: missing"). */
ts_rc kc_auth_load(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err);
/* The same without running an exec plugin: its first run is at the client's first request
 * (for tools that only read the kubeconfig, and for fuzzing, which must never run a command). */
ts_rc kc_auth_parse(const char *kubeconfig_flag, const char *context, kc_auth *out, ts_err *err);
/* Frees what a kc_auth owns (its strings); the struct itself is the caller's. */
void kc_auth_free(kc_auth *a);

/* ---- HTTP ---------------------------------------------------------------------------------- */

typedef struct kc_client kc_client;
typedef struct kc_req kc_req;

typedef struct kc_response {
  long status;        /* HTTP status, 0 when the connection failed */
  const char *body;   /* borrowed until the callback returns (NUL-terminated) */
  size_t len;         /* its length */
  const char *error;  /* transport error text, or NULL */
  long retry_after_s; /* Retry-After (at most KC_RETRY_AFTER_MAX_S), 0 when absent */
  bool http2;         /* the exchange used HTTP/2 */
} kc_response;

/* The end of a request: called exactly once per request that was not cancelled; r and what it
 * points to are borrowed for the call. */
typedef void (*kc_done_fn)(void *ud, const kc_response *r);
/* One line of a streamed body (a watch event), without its newline; borrowed for the call. */
typedef void (*kc_line_fn)(void *ud, const char *line, size_t len);

/* A client for auth (borrowed; must outlive it) on loop. Returns new, NULL with err. */
kc_client *kc_client_new(uv_loop_t *loop, const kc_auth *auth, ts_err *err);
/* Ends every request that was not cancelled through its callback (status 0, "the client was
 * closed"; a request started from that callback fails), so that every request ends exactly
 * once, then frees the client once libcurl has let go of its sockets. Cancel requests whose
 * owner is gone first. */
void kc_client_free(kc_client *c);
/* Starts a request that may take the client's request timeout. body (may be NULL) is copied;
 * content_type defaults to JSON. Returns a handle for kc_cancel (valid until on_done), NULL
 * when out of memory or once the client is closing. */
kc_req *kc_request(kc_client *c, const char *method, const char *path, const char *body,
                   const char *content_type, kc_done_fn on_done, void *ud);
/* A GET whose body is streamed (a watch): each complete line goes to on_line, on_done comes at
 * the end, and the transfer is abandoned (on_done with an error) after timeout_ms. */
kc_req *kc_stream(kc_client *c, const char *path, long timeout_ms, kc_line_fn on_line,
                  kc_done_fn on_done, void *ud);
/* Cancels a request (NULL is a no-op): its callbacks are not called any more. */
void kc_cancel(kc_req *r);
/* Requests started so far. */
uint64_t kc_client_requests(const kc_client *c);
/* Requests (not watches) running now; *queued receives those waiting for one of the
 * KC_MAX_INFLIGHT slots. */
size_t kc_client_inflight(const kc_client *c, size_t *queued);
/* Sets the timeout of requests that are not watches (ms <= 0: the default). */
void kc_client_set_timeout(kc_client *c, int64_t ms);
/* Appends tessera_api_requests_total{verb,resource,code} (every answer, by HTTP status) in
 * Prometheus' text format to out; TS_ELIMIT/TS_ENOMEM when out cannot grow. */
ts_rc kc_client_metrics(const kc_client *c, ts_buf *out);

/* ---- serving TLS -------------------------------------------------------------------------- */

/* The certificate of the endpoints Tessera serves over HTTPS (/metrics): cert_dir's tls.crt
 * (with its chain) and tls.key, loaded again when either file changes (looked at when a
 * connection arrives, at most every 10 s; a pair that does not load keeps the old one), or,
 * cert_dir NULL or "", a self-signed certificate for name, localhost and 127.0.0.1, made now
 * and valid a year (controller-runtime's secure metrics serving without a certificate
 * directory). TLS 1.2 and later. Returns new, NULL with err naming the file. */
#define KC_TLS_DIR_MAX 512
typedef struct kc_tls_server kc_tls_server;
kc_tls_server *kc_tls_server_new(const char *cert_dir, const char *name, ts_err *err);
void kc_tls_server_free(kc_tls_server *s);
/* Certificates loaded again since start. */
uint64_t kc_tls_server_reloads(const kc_tls_server *s);

/* One server-side TLS session over memory: the caller moves the bytes. NULL when out of
 * memory. */
typedef struct kc_tls_conn kc_tls_conn;
kc_tls_conn *kc_tls_conn_new(kc_tls_server *s);
void kc_tls_conn_free(kc_tls_conn *c);
/* Takes n bytes received (n may be 0) and returns how many bytes of plaintext it put into out
 * (cap bytes; 0 while the handshake runs or a record is incomplete), -1 once the session
 * failed (a bad handshake, not TLS). Send kc_tls_conn_output after each call. */
ssize_t kc_tls_conn_feed(kc_tls_conn *c, const void *in, size_t n, void *out, size_t cap);
/* Encrypts the one answer of the connection, followed by close_notify; 0, -1 when the session
 * cannot (not established, failed). */
int kc_tls_conn_write(kc_tls_conn *c, const void *in, size_t n);
/* The bytes to send now (new, free with free()) and their length, NULL when none. */
char *kc_tls_conn_output(kc_tls_conn *c, size_t *len);
/* SHA-256 of data as 64 hex digits (keys that must not keep a secret, such as a token). */
void kc_sha256_hex(const void *data, size_t n, char out[65]);

/* ---- who may read an endpoint: delegated authentication and authorization ------------------ */

/* The access reviews' wire format (model/wire.h has it). */
typedef struct kc_review_codec {
  /* A TokenReview of token. New, NULL when out of memory. */
  json_t *(*token_review)(const char *token);
  /* Its answer: *authenticated and, when it is, *user (new) and *user_name (borrowed from it);
   * TS_EINVAL with err when it is not a TokenReview's answer. */
  ts_rc (*token_read)(const json_t *review, bool *authenticated, json_t **user,
                      const char **user_name, ts_err *err);
  /* A SubjectAccessReview: may user (a token_read *user) do verb on the non-resource path? */
  json_t *(*access_review)(const json_t *user, const char *path, const char *verb);
  /* Its answer: *allowed and the reason (cap bytes); TS_EINVAL with err when it is not one. */
  ts_rc (*access_read)(const json_t *review, bool *allowed, char *reason, size_t cap, ts_err *err);
} kc_review_codec;

/* How long answers are kept: controller-runtime's secure metrics serving keeps a token's
 * review (either answer) 1 min, an allow 5 min and a deny 30 s; at most cache_max answers. */
typedef struct kc_reviewer_opts {
  int64_t token_ttl_ms, allow_ttl_ms, deny_ttl_ms;
  size_t cache_max;
} kc_reviewer_opts;
void kc_reviewer_opts_default(kc_reviewer_opts *o);

/* The verdict on a request: HTTP code 200 (allowed), 401 ("Unauthorized": no token, or one the
 * API server does not know), 403 ("Authorization denied for user NAME"), 500 (a review failed:
 * not kept, the next request asks again) or 503 (the reviewer was freed first); message is
 * borrowed for the call. */
typedef void (*kc_verdict_fn)(void *ud, int code, const char *message);

typedef struct kc_reviewer kc_reviewer;
/* A reviewer asking c's API server through codec (borrowed, as c, for its life); o NULL for the
 * defaults. NULL when out of memory. */
kc_reviewer *kc_reviewer_new(kc_client *c, const kc_review_codec *codec, const kc_reviewer_opts *o);
/* Decides whether the holder of bearer token (NULL or "": none) may do verb ("get") on path:
 * from kept answers at once (done called before it returns), else after a TokenReview and a
 * SubjectAccessReview. done is called exactly once. */
void kc_reviewer_check(kc_reviewer *r, const char *token, const char *verb, const char *path,
                       kc_verdict_fn done, void *ud);
/* Reviews sent to the API server so far (TokenReviews and SubjectAccessReviews). */
uint64_t kc_reviewer_sent(const kc_reviewer *r);
/* Answers each check still waiting with 503, then frees r; NULL is a no-op. */
void kc_reviewer_free(kc_reviewer *r);

/* ---- informers ---------------------------------------------------------------------------------
 */

typedef enum kc_event_type { KC_ADDED, KC_MODIFIED, KC_DELETED } kc_event_type;

/* A watched resource as callbacks see it (borrowed for the call). */
typedef struct kc_resource {
  const char *id;      /* "pods", "resourceclaims", ... */
  const char *group;   /* "" for core */
  const char *version; /* chosen version ("v1beta1") */
  const char *kind;    /* "Pod" */
} kc_resource;

/* A resource to list and watch (the caller's table, e.g. the model's kinds). */
typedef struct kc_resource_spec {
  const char *resource; /* "resourceclaims" */
  const char *group;    /* "resource.k8s.io"; "" for core */
  const char *kind;     /* "ResourceClaim" */
  const char *versions; /* space-separated, preferred first: the first the server offers is
                           watched */
} kc_resource_spec;

typedef struct kc_informer_opts {
  const kc_resource_spec *resources; /* what to watch (borrowed until kc_informers_stop) */
  size_t nresources;                 /* entries */
  /* Every object listed or watched, in order per resource: obj and res are borrowed for the
   * call (take a reference to keep obj); obj always carries kind and apiVersion. After a
   * re-list, objects that disappeared come as KC_DELETED. */
  void (*on_event)(void *ud, kc_event_type t, json_t *obj, const kc_resource *res);
  void (*on_synced)(void *ud); /* exactly once, when every informer has listed */
  void *ud;                    /* for every callback */
  /* Optional, at most once per resource: `kind` will not be watched (the server lacks or
   * forbids it). */
  void (*on_skipped)(void *ud, const char *group, const char *kind);
  /* timeoutSeconds of each watch (0: KC_WATCH_TIMEOUT_S). The server ends a watch then; one it
   * has not ended some seconds later (a silent connection) is abandoned and opened again. */
  int watch_timeout_s;
} kc_informer_opts;

typedef struct kc_informers kc_informers;

/* Discovers the API (GET /apis), then lists and watches every resource of o, each in the first
 * of its versions the server offers. A resource the server lacks or forbids is skipped with
 * one log line (and on_skipped). Returns new (kc_informers_stop ends and frees it), NULL with
 * err when out of memory. */
kc_informers *kc_informers_start(kc_client *c, const kc_informer_opts *o, ts_err *err);
/* True once every resource has listed (or was skipped); false for NULL. */
bool kc_informers_synced(const kc_informers *inf);
/* Why the informers cannot be trusted now, into why (cap bytes): discovery or a resource that
 * has not listed yet, or that failed KC_FAILING_AFTER times in a row, with its last error
 * ("pods: 4 failed attempts in a row, last: the list has no metadata.resourceVersion").
 * Returns false (why empty) when every resource is listed and its watch healthy. */
bool kc_informers_problem(const kc_informers *inf, char *why, size_t cap);
/* tessera_informer_sync_seconds{resource}: from the start to each resource's first full list. */
void kc_informers_metrics(const kc_informers *inf, ts_buf *out);
/* Stops every list and watch at once (no callback after it returns) and frees the informers
 * once their timers have closed; NULL is a no-op. */
void kc_informers_stop(kc_informers *inf);

/* ---- leader election ------------------------------------------------------------------------- */

typedef struct kc_gate {
  bool open; /* read-only: this replica leads and may write */
} kc_gate;

/* The Lease's wire format (model/wire.h has it): what election reads and writes. */
typedef struct kc_lease_codec {
  /* The holder ("" when none), renewTime as written ("" when none) and leaseDurationSeconds
   * of a Lease, strings borrowed from it; false when it is not one. */
  bool (*read)(const json_t *lease, const char **holder, const char **renew_time,
               int64_t *duration_s);
  /* The Lease to write: old (NULL: a new one ns/name) held by holder for duration_s, renewed
   * at now_ns; acquire: acquired now, one transition more. New, NULL when out of memory. */
  json_t *(*write)(const json_t *old, const char *ns, const char *name, const char *holder,
                   int64_t duration_s, bool acquire, int64_t now_ns);
  /* The merge patch that gives it up. */
  json_t *(*release)(int64_t now_ns);
} kc_lease_codec;

typedef struct kc_leader kc_leader;
/* Starts campaigning for the Lease of o (copied) as identity (copied), reading and writing it
 * through codec (borrowed for the leader's life): gate opens while this replica leads.
 * Returns new (free with kc_leader_free), NULL with err when out of memory. */
kc_leader *kc_leader_start(kc_client *c, const kc_leader_opts *o, const char *identity,
                           const kc_lease_codec *codec, kc_gate *gate, ts_err *err);
/* Gives the lease up (so a standby takes over at once), closes the gate, and calls done
 * exactly once, on a later loop turn, whether the release was written or not. */
void kc_leader_release(kc_leader *l, void (*done)(void *ud), void *ud);
/* Stops campaigning and frees l once its timers have closed; NULL is a no-op. */
void kc_leader_free(kc_leader *l);

/* ---- writes -----------------------------------------------------------------------------------
 */

typedef struct kc_write_info {
  long status;         /* last HTTP status */
  const char *message; /* server's or transport's message */
  long retry_after_s;  /* for TS_EBUDGET */
} kc_write_info;

/* How a write ended: TS_OK (it landed), TS_ECONFLICT (the object changed meanwhile, after the
 * writer's own retries), TS_ENOTFOUND (the object is gone), TS_EELSEWHERE (the claim was
 * allocated by someone else meanwhile), TS_EBUDGET (a PodDisruptionBudget refused an eviction),
 * TS_EAUTH (forbidden), TS_ENOTLEADER (not written: this replica does not lead), TS_ENOMEM
 * (could not be sent), TS_EHTTP (any other refusal or no answer). info is borrowed for the
 * call. */
typedef void (*kc_write_cb)(void *ud, ts_rc r, const kc_write_info *info);

typedef struct kc_writer kc_writer;
/* A writer that writes only while gate->open; event_interval_ms apart at least are two Events
 * about one object. Every write that takes a callback calls it exactly once, on a later loop
 * turn, whatever happens (no answer is sent again a few times; no memory is TS_ENOMEM).
 * kc_writer_free may be called with writes in flight: they still end through their callbacks
 * (or, once the client is freed, never), and the writer's memory goes when the last one is
 * done. Bodies are borrowed for the call (model/wire.h encodes them). */
kc_writer *kc_writer_new(kc_client *c, const kc_gate *gate,
                         int64_t event_interval_ms); /* returns new, NULL when out of memory */
/* See kc_writer_new; NULL is a no-op. */
void kc_writer_free(kc_writer *w);

/* POSTs binding (a v1 Binding of pod ns/name, uid its precondition) to the pod's binding
 * subresource. A retry answered "already assigned to node X" is TS_OK when X is node (an
 * earlier attempt landed), TS_ECONFLICT otherwise; a binding with no answer or a 5xx is checked
 * by reading the pod (bound to node: it landed; not bound: sent once more). */
void kc_bind(kc_writer *w, const char *ns, const char *name, const char *uid, const char *node,
             const json_t *binding, kc_write_cb cb, void *ud);

typedef enum kc_patch_type {
  KC_MERGE_PATCH,           /* application/merge-patch+json */
  KC_STRATEGIC_MERGE_PATCH, /* application/strategic-merge-patch+json (merges lists by key) */
} kc_patch_type;
/* PATCHes body to path (e.g. a pod's or a ClusterQueue's status subresource); what (static)
 * names the write in logs ("patch pods/status"), ns and name the object. */
void kc_patch(kc_writer *w, const char *what, const char *path, kc_patch_type type, const char *ns,
              const char *name, const json_t *body, kc_write_cb cb, void *ud);

/* Whether an Event about the object of uid may be written now: at most one per object per
 * interval and 10 per second overall (burst 25), and only while leading. True spends the
 * budget: post the Event then. */
bool kc_event_allowed(kc_writer *w, const char *uid);
/* POSTs an events.k8s.io/v1 Event (to the namespace of its metadata); fire and forget. */
void kc_event_post(kc_writer *w, const json_t *event);

/* POSTs eviction (a policy/v1 Eviction of pod ns/name) to the pod's eviction subresource
 * (PodDisruptionBudgets hold: 429 is TS_EBUDGET). */
void kc_evict(kc_writer *w, const char *ns, const char *name, const char *uid,
              const json_t *eviction, kc_write_cb cb, void *ud);

/* One step of an update, from the object as last read (current): TS_OK with *body (new) to PUT
 * to the object (status: to its status subresource), TS_OK with *body NULL when nothing is left
 * to write, or the error that ends the update (TS_EELSEWHERE, TS_ENOMEM, ...). */
typedef ts_rc (*kc_update_fn)(void *ud, const json_t *current, json_t **body, bool *status);
/* Reads the object at path (ns/name for logs), then writes step after step, as client-go's
 * RetryOnConflict does: each write's answer is the next step's current; a 409 or a write with
 * no answer reads it again (TS_ECONFLICT after a few reads). 404: TS_ENOTFOUND, or TS_OK when
 * gone_ok. step_ud is borrowed until cb. */
void kc_update(kc_writer *w, const char *what, const char *ns, const char *name, const char *path,
               bool gone_ok, kc_update_fn step, void *step_ud, kc_write_cb cb, void *ud);
/* ---- access ---------------------------------------------------------------------------------- */

typedef enum kc_rbac_scope {
  KC_RBAC_CLUSTER,  /* a ClusterRole rule */
  KC_RBAC_REVIEW,   /* the same, needed by a replica that only reads too (shadow mode) */
  KC_RBAC_LEASE_NS, /* a Role in leaderElection.leaseNamespace */
  KC_RBAC_LEASE,    /* the same, for leaderElection.leaseName only */
} kc_rbac_scope;

/* One RBAC rule Tessera needs beyond the informers' reads (get, list, watch of each resource
 * watched). Strings are static; lists are space-separated. */
typedef struct kc_rbac_rule {
  kc_rbac_scope scope;   /* where it applies */
  const char *group;     /* API group, "" for core */
  const char *resources; /* "pods/binding pods/eviction" */
  const char *verbs;     /* "create" */
  const char *name;      /* resourceNames: this one object only, or NULL */
  const char *why;       /* what needs it */
} kc_rbac_rule;
/* The rules, in the order `tessera rbac` prints them (borrowed, static). */
size_t kc_rbac_rules(const kc_rbac_rule **out);
/* True when a request of verb (as tessera_api_requests_total labels it: get, list, watch,
 * create, put, patch, delete) on resource ("pods/binding", "" for discovery) is allowed by the
 * informers' reads or the rules, whatever the group, namespace or name. */
bool kc_rbac_allows(const kc_resource_spec *reads, size_t nreads, const char *verb,
                    const char *resource);

/* Ends a write its caller could not even prepare (no memory): cb gets TS_ENOMEM on a later
 * loop turn, as for the writer's own writes. */
void kc_write_fail(kc_writer *w, kc_write_cb cb, void *ud);
/* Events written so far. */
uint64_t kc_writer_events_sent(const kc_writer *w);
/* Writes that ended in failure (refused by the server, no answer, no memory). Each kind of
 * failure (what, HTTP status, reason) is also logged once. */
uint64_t kc_writer_refused(const kc_writer *w);

#define KC_TOKEN_MAX 8192 /* bytes of a bearer token */

/* One synchronous GET of url (http or https), for a command talking to a running tessera
 * (tessera explain --server): the bearer token read from token_file (NULL: none; read as a
 * kubeconfig's tokenFile, err naming the file when it cannot be), the CA file to verify the
 * server with (NULL: the system's) or no verification (insecure); the body appended to out,
 * the HTTP status into *status. TS_EIO with curl's reason when no answer came. */
ts_rc kc_get_once(const char *url, const char *token_file, const char *ca_file, bool insecure,
                  long timeout_s, ts_buf *out, long *status, ts_err *err);

#endif
