/*
 * model/wire.h - Kubernetes' wire format of what Tessera writes: every body it sends to the API
 * server, beside the decoders of model.h, so that a new API version touches this room only.
 *
 * kubeclient/ sends these bodies and knows only transport, ordering, retries and the leader
 * gate. Encoders return new JSON (NULL when out of memory); strings are borrowed for the call.
 * Times are Unix nanoseconds, written as RFC 3339 (Events' MicroTime with microseconds).
 */
#ifndef MODEL_WIRE_H
#define MODEL_WIRE_H

#include <jansson.h>

#include "model/model.h"

/* ---- pods ---------------------------------------------------------------------------------- */

/* A v1 Binding of pod ns/name to node, with the pod's uid as precondition (none when uid is
 * NULL or ""); gpu_index >= 0 (a pod sharing a GPU) adds the annotation tessera.dev/gpu-index,
 * which the API server sets on the pod with its node, in the same write. */
json_t *model_binding_json(const char *ns, const char *name, const char *uid, const char *node,
                           int32_t gpu_index);
/* A policy/v1 Eviction of pod ns/name, with its uid as precondition. */
json_t *model_eviction_json(const char *ns, const char *name, const char *uid);
/* The strategic merge patch of a pod's status that sets PodScheduled=False with reason (NULL:
 * "Unschedulable") and message, lastTransitionTime at now_ns. */
json_t *model_pod_unscheduled_patch(const char *reason, const char *message, int64_t now_ns);

/* ---- events -------------------------------------------------------------------------------- */

/* An object an Event is about; ns NULL or "" for a cluster-scoped one. */
typedef struct model_object_ref {
  const char *api_version, *kind, *ns, *name, *uid;
} model_object_ref;

/* The longest note the API server accepts (longer ones are cut, at a UTF-8 boundary). */
#define MODEL_EVENT_NOTE_MAX 1024

/* An events.k8s.io/v1 Event about about, reported by controller "tessera" from instance,
 * action "Scheduling", at now_ns; named as kube-scheduler names them ("<name>.<hex ns>", cut to
 * a valid name) in about's namespace, or "default" for a cluster-scoped object. The note is
 * cut to MODEL_EVENT_NOTE_MAX bytes. */
json_t *model_event_json(const model_object_ref *about, const char *instance, const char *type,
                         const char *reason, const char *note, int64_t now_ns);

/* ---- resource claims ----------------------------------------------------------------------- */

/* The finalizer a claim Tessera allocated carries until it is deallocated. */
#define MODEL_CLAIM_FINALIZER "resource.kubernetes.io/delete-protection"

/* The resource.k8s.io AllocationResult of an allocation: devices.results, devices.config and
 * nodeSelector, as kube-scheduler writes it (the same shape in v1, v1beta2 and v1beta1). */
json_t *model_allocation_json(const model_allocation *a);

/* A claim write: towards "finalizer present, allocated as alloc (NULL: allocated already,
 * only reserve), reserved for pod_name/pod_uid", as kube-scheduler's DRA plugin writes it (the
 * finalizer first, an update of the claim; then allocation and reservedFor in one status
 * update); or, unreserve, towards "pod_uid not in reservedFor; with no one left, no allocation
 * and no finalizer". */
typedef struct model_claim_write {
  const json_t *alloc;            /* the AllocationResult (borrowed), or NULL */
  const char *pod_name, *pod_uid; /* the pod */
  const char *claim_uid;          /* the claim decided on, or NULL / "": any of that name */
  bool unreserve;                 /* the other way */
} model_claim_write;

/* One step of the claim write ud (a const model_claim_write *) from the claim as last read,
 * in the shape of kubeclient's update steps: TS_OK with *body (new) to PUT to the claim
 * (*status: to its status subresource), TS_OK with *body NULL when nothing is left to write,
 * TS_EELSEWHERE when it was allocated differently meanwhile, TS_ENOTFOUND when the claim of
 * that name is another one (deleted and made again since the decision: its uid differs),
 * TS_ENOMEM. */
ts_rc model_claim_step(void *ud, const json_t *claim, json_t **body, bool *status);

/* ---- snapshots ---------------------------------------------------------------------------- */

/* obj (borrowed) as compact JSON text without what could carry credentials: environment
 * variable values (env[].value anywhere, e.g. in pods and job templates), kubectl's
 * last-applied-configuration annotation and managedFields; *scrubbed is how many values were
 * dropped. New (free with free()), NULL when out of memory. */
char *model_scrubbed_text(const json_t *obj, uint32_t *scrubbed);

/* ---- leases -------------------------------------------------------------------------------- */

/* What leader election reads of a coordination.k8s.io/v1 Lease (strings borrowed from it). */
typedef struct model_lease {
  const char *holder;     /* spec.holderIdentity, "" when none */
  const char *renew_time; /* spec.renewTime as written, "" when none */
  int64_t renew_ns;       /* the same parsed, 0 when absent or not a time */
  int64_t duration_s;     /* spec.leaseDurationSeconds, 0 when absent */
} model_lease;

/* Reads lease; false when it is not an object. */
bool model_lease_read(const json_t *lease, model_lease *out);
/* Whether the Lease in body (a GET's answer) has a holder that renewed it within twice its
 * duration (15 s when unset) as of now_ns: its holder runs. False when body is no Lease. */
bool model_lease_held(const char *body, size_t len, int64_t now_ns);
/* The Lease to write: old (NULL: a new Lease ns/name) held by holder for duration_s, renewed at
 * now_ns; acquire: acquireTime now_ns and leaseTransitions one more than old's (0 when new). */
json_t *model_lease_json(const json_t *old, const char *ns, const char *name, const char *holder,
                         int64_t duration_s, bool acquire, int64_t now_ns);
/* The merge patch that gives a Lease up: no holder, a duration of 1 s, renewed at now_ns. */
json_t *model_lease_release_patch(int64_t now_ns);

/* ---- access reviews (who scrapes /metrics) ------------------------------------------------- */

/* An authentication.k8s.io/v1 TokenReview of a bearer token, for the API server's audiences. */
json_t *model_token_review_json(const char *token);
/* What a TokenReview's answer says: TS_OK with *authenticated and, when it is, *user (new: the
 * status.user object, {username, uid, groups, extra}) and *user_name (borrowed from *user);
 * TS_EINVAL with err naming the field when the answer is not a TokenReview's. */
ts_rc model_token_review_read(const json_t *review, bool *authenticated, json_t **user,
                              const char **user_name, ts_err *err);
/* An authorization.k8s.io/v1 SubjectAccessReview: may user (a TokenReview's status.user) do verb
 * ("get") on the non-resource URL path ("/metrics")? A path naming one object as the API server
 * would serve it ("/api/v1/namespaces/NS/pods/NAME", "/apis/GROUP/VERSION/RESOURCE/NAME/SUB")
 * asks for that object instead (resourceAttributes: who may get pod NAME may read its
 * explanation; who may get clusterqueues/pendingworkloads of Kueue's visibility API, its
 * list). */
json_t *model_access_review_json(const json_t *user, const char *path, const char *verb);
/* What a SubjectAccessReview's answer says: TS_OK with *allowed and the reason into reason (cap
 * bytes, "" when none); TS_EINVAL with err naming the field. */
ts_rc model_access_review_read(const json_t *review, bool *allowed, char *reason, size_t cap,
                               ts_err *err);

/* ---- Kueue queue status -------------------------------------------------------------------- */

/* One flavor-resource of a queue's status, its quantities formatted as Kueue prints them. */
typedef struct model_flavor_usage {
  const char *flavor, *resource;      /* ResourceFlavor and resource names */
  char total[TS_QUANTITY_STR_MAX];    /* usage */
  char borrowed[TS_QUANTITY_STR_MAX]; /* ClusterQueues: usage above nominal */
} model_flavor_usage;

/* A ClusterQueue's or LocalQueue's status, as Kueue writes it. */
typedef struct model_queue_status {
  bool cluster_queue;            /* a ClusterQueue (else a LocalQueue) */
  const char *ns, *name;         /* the queue (ns NULL for a ClusterQueue) */
  uint32_t pending, admitted;    /* pendingWorkloads; reserving and admitted workloads */
  const model_flavor_usage *frs; /* flavorsReservation and flavorsUsage, spec order */
  uint32_t nfrs;                 /* entries */
  const char *inactive;          /* Kueue's Active=False reason, NULL when active */
  const char *problem;           /* ClusterQueues: the problem behind it, or NULL */
  int64_t generation;            /* the queue's metadata.generation (observedGeneration) */
  int64_t transition_ns;         /* the Active condition's lastTransitionTime */
  bool fair_sharing;             /* ClusterQueues: write fairSharing.weightedShare (else remove
                                    it, as Kueue's full status update does) */
  double weighted_share;         /* +inf when it borrows with weight 0 */
} model_queue_status;

/* The merge patch of the queue's status subresource in kueue.x-k8s.io version (v1beta1 names
 * a LocalQueue's usage flavorUsage). */
json_t *model_queue_status_patch(const model_queue_status *st, const char *version);
/* The path of that status subresource, into out (cap bytes). */
void model_queue_status_path(const model_queue_status *st, const char *version, char *out,
                             size_t cap);

#endif
