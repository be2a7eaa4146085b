/*
 * model/model.h - the cluster model: every Kubernetes object Tessera reads, decoded from any
 * supported API version into one internal form, with the indexes the scheduler needs.
 *
 * Objects are read-only for everyone but the model: callers change the model only through
 * model_apply_json / model_upsert / model_remove, which keep the indexes and the per-node
 * resource sums up to date. Strings marked "interned" come from ts_intern (compare them as
 * pointers); strings marked "owned" belong to the object and die with it.
 */
#ifndef MODEL_H
#define MODEL_H

#include <jansson.h>

#include "common/ts.h"

/* ---- kinds ----------------------------------------------------------------------------- */

/* Every kind Tessera reads, with where the API serves it: X(id, kind, API group ("" = core),
 * resource, versions Tessera decodes (space-separated, preferred first), namespaced). The one
 * table for the decoder and for what `tessera run` lists and watches. */
#define MODEL_KINDS(X)                                                                             \
  X(POD, "Pod", "", "pods", "v1", true)                                                            \
  X(NODE, "Node", "", "nodes", "v1", false)                                                        \
  X(NAMESPACE, "Namespace", "", "namespaces", "v1", false)                                         \
  X(PRIORITY_CLASS, "PriorityClass", "scheduling.k8s.io", "priorityclasses", "v1 v1beta1", false)  \
  X(PDB, "PodDisruptionBudget", "policy", "poddisruptionbudgets", "v1", true)                      \
  X(RESOURCE_SLICE, "ResourceSlice", "resource.k8s.io", "resourceslices", "v1 v1beta2 v1beta1",    \
    false)                                                                                         \
  X(DEVICE_CLASS, "DeviceClass", "resource.k8s.io", "deviceclasses", "v1 v1beta2 v1beta1", false)  \
  X(RESOURCE_CLAIM, "ResourceClaim", "resource.k8s.io", "resourceclaims", "v1 v1beta2 v1beta1",    \
    true)                                                                                          \
  X(RESOURCE_CLAIM_TEMPLATE, "ResourceClaimTemplate", "resource.k8s.io", "resourceclaimtemplates", \
    "v1 v1beta2 v1beta1", true)                                                                    \
  X(CLUSTER_QUEUE, "ClusterQueue", "kueue.x-k8s.io", "clusterqueues", "v1beta2 v1beta1", false)    \
  X(LOCAL_QUEUE, "LocalQueue", "kueue.x-k8s.io", "localqueues", "v1beta2 v1beta1", true)           \
  X(RESOURCE_FLAVOR, "ResourceFlavor", "kueue.x-k8s.io", "resourceflavors", "v1beta2 v1beta1",     \
    false)                                                                                         \
  X(COHORT, "Cohort", "kueue.x-k8s.io", "cohorts", "v1beta2 v1beta1 v1alpha1", false)              \
  X(WORKLOAD_PRIORITY_CLASS, "WorkloadPriorityClass", "kueue.x-k8s.io", "workloadpriorityclasses", \
    "v1beta2 v1beta1", false)                                                                      \
  X(WORKLOAD, "Workload", "kueue.x-k8s.io", "workloads", "v1beta2 v1beta1", true)                  \
  X(POD_GROUP, "PodGroup", "scheduling.x-k8s.io", "podgroups", "v1alpha1", true)                   \
  X(VOLCANO_POD_GROUP, "PodGroup", "scheduling.volcano.sh", "podgroups", "v1beta1", true)          \
  X(KAI_POD_GROUP, "PodGroup", "scheduling.run.ai", "podgroups", "v2alpha2", true)                 \
  X(VOLCANO_QUEUE, "Queue", "scheduling.volcano.sh", "queues", "v1beta1", false)                   \
  X(KAI_QUEUE, "Queue", "scheduling.run.ai", "queues", "v2", false)                                \
  X(JOB, "Job", "batch", "jobs", "v1", true)                                                       \
  X(JOBSET, "JobSet", "jobset.x-k8s.io", "jobsets", "v1alpha2", true)                              \
  X(PYTORCH_JOB, "PyTorchJob", "kubeflow.org", "pytorchjobs", "v1", true)                          \
  X(TF_JOB, "TFJob", "kubeflow.org", "tfjobs", "v1", true)                                         \
  X(MPI_JOB, "MPIJob", "kubeflow.org", "mpijobs", "v2beta1 v1", true)                              \
  X(XGBOOST_JOB, "XGBoostJob", "kubeflow.org", "xgboostjobs", "v1", true)                          \
  X(PADDLE_JOB, "PaddleJob", "kubeflow.org", "paddlejobs", "v1", true)                             \
  X(JAX_JOB, "JAXJob", "kubeflow.org", "jaxjobs", "v1", true)

typedef enum model_kind {
#define MODEL__KIND_ENUM(id, kind, group, resource, versions, ns) MODEL_##id,
  MODEL_KINDS(MODEL__KIND_ENUM)
#undef MODEL__KIND_ENUM
      MODEL_KIND_COUNT
} model_kind;

const char *model_kind_name(model_kind k); /* "ResourceClaim"; borrowed, static */
/* The kind of a kind name ("PyTorchJob"), or MODEL_KIND_COUNT when Tessera does not read it.
 * Three kinds are named PodGroup (scheduler-plugins, Volcano, KAI): this gives the first; use
 * model_kind_in_group where the group is known. */
model_kind model_kind_of(const char *name);
/* The kind of (API group, kind name), e.g. ("scheduling.volcano.sh", "PodGroup"); a group may
 * also be given as an apiVersion ("scheduling.volcano.sh/v1beta1", "v1"). MODEL_KIND_COUNT when
 * Tessera does not read it. */
model_kind model_kind_in_group(const char *group, const char *kind);

/* Where the API serves a kind (from MODEL_KINDS; static). */
typedef struct model_kind_api {
  const char *kind;     /* "ResourceClaim" */
  const char *group;    /* "resource.k8s.io"; "" for core */
  const char *resource; /* "resourceclaims" */
  const char *versions; /* decoded versions, space-separated, preferred first */
  bool namespaced;      /* namespaced (else cluster-scoped) */
} model_kind_api;
const model_kind_api *model_kind_api_of(model_kind k); /* NULL for an unknown kind */

/* ---- shared building blocks ------------------------------------------------------------ */

typedef struct model_kv {
  const char *key;   /* interned */
  const char *value; /* labels: interned; annotations: owned */
} model_kv;

/* A label or annotation set, sorted by key (strcmp). */
typedef struct model_labels {
  model_kv *v; /* owned array */
  uint32_t n;  /* entries */
} model_labels;

/* Returns the value for an interned key, or NULL. O(n), n is small. */
const char *model_labels_get(const model_labels *l, const char *key);

typedef struct model_owner {
  const char *api_version; /* interned */
  const char *kind;        /* interned */
  char *name;              /* owned */
  char *uid;               /* owned */
  bool controller;         /* ownerReferences[].controller */
} model_owner;

typedef enum model_sel_op {
  MODEL_OP_IN,
  MODEL_OP_NOT_IN,
  MODEL_OP_EXISTS,
  MODEL_OP_DOES_NOT_EXIST,
  MODEL_OP_GT,
  MODEL_OP_LT,
} model_sel_op;

/* The operators' names as the API spells them ("In", "NotIn", ..., "Lt"), by model_sel_op. */
extern const char *const model_sel_op_names[MODEL_OP_LT + 1];

/* What may make a pod a member of a gang (scheduler/gang.c: in which order, and how many
 * members): a label or annotation naming a pod group or a JobSet, or a controlling owner of a
 * job kind. NULL-terminated. */
extern const char *const model_gang_keys[];        /* labels or annotations */
extern const char *const model_gang_owner_kinds[]; /* kinds of a controlling owner */

/* One requirement of a label selector or node selector term. */
typedef struct model_req {
  const char *key;     /* interned label key (or "metadata.name" for matchFields) */
  model_sel_op op;     /* operator */
  const char **values; /* owned array of interned values */
  uint32_t nvalues;    /* entries in values */
  int64_t num;         /* the integer of Gt / Lt */
} model_req;

/* metav1.LabelSelector: matchLabels become In requirements. */
typedef struct model_label_selector {
  bool present;    /* false: the field was absent or null */
  model_req *reqs; /* owned; all must match */
  uint32_t nreqs;  /* entries */
} model_label_selector;

/* True when labels satisfy every requirement (an empty present selector matches all). A
 * selector that is not present matches nothing. */
bool model_label_selector_match(const model_label_selector *s, const model_labels *labels);

typedef struct model_node_term {
  model_req *exprs;  /* owned: matchExpressions on labels */
  uint32_t nexprs;   /* entries */
  model_req *fields; /* owned: matchFields (key "metadata.name") */
  uint32_t nfields;  /* entries */
} model_node_term;

/* core/v1 NodeSelector: the terms are ORed, the requirements of a term ANDed. */
typedef struct model_node_selector {
  model_node_term *terms; /* owned */
  uint32_t nterms;        /* entries; 0 = no selector */
} model_node_selector;

/* True when the node's name and labels satisfy at least one term. A selector with no
 * terms matches nothing (callers check nterms to mean "no constraint"). */
bool model_node_selector_match(const model_node_selector *s, const char *node_name,
                               const model_labels *labels);

typedef enum model_effect {
  MODEL_EFFECT_ANY, /* empty effect in a toleration: matches every effect */
  MODEL_EFFECT_NO_SCHEDULE,
  MODEL_EFFECT_PREFER_NO_SCHEDULE,
  MODEL_EFFECT_NO_EXECUTE,
} model_effect;

const char *model_effect_name(model_effect e); /* "NoSchedule" ... ; "" for ANY */

typedef struct model_taint {
  const char *key;     /* interned */
  const char *value;   /* interned, "" when absent */
  model_effect effect; /* never ANY */
} model_taint;

typedef struct model_toleration {
  const char *key;     /* interned, "" = every key (operator Exists) */
  bool exists;         /* operator Exists (else Equal) */
  const char *value;   /* interned, "" when absent */
  model_effect effect; /* ANY when empty */
} model_toleration;

/* True when the toleration tolerates the taint (Kubernetes' ToleratesTaint). */
bool model_tolerates(const model_toleration *t, const model_taint *taint);
/* Returns the first taint with effect NoSchedule or NoExecute that none of the tolerations
 * tolerates, or NULL (kube-scheduler's TaintToleration filter). */
const model_taint *model_untolerated_taint(const model_taint *taints, uint32_t ntaints,
                                           const model_toleration *tols, uint32_t ntols);

/* ---- resources ------------------------------------------------------------------------- */

/* Resource names get small ids from a table that belongs to a model (model_resources_of) and
 * grows as needed; the first five are the same in every table. Values are in the units
 * kube-scheduler compares: cpu in millicores, everything else in whole units
 * (Quantity.Value(), rounded up).
 *
 * Only what the cluster's administrators write gives a name an id: Nodes (allocatable),
 * ClusterQueues and Cohorts (covered resources and quotas), the configuration's device
 * mappings. A name a tenant writes (a pod's requests, a PodGroup's minResources) that has no
 * id counts as MODEL_RES_UNOFFERED: no node offers it (a node's would have an id), so a pod
 * requesting some fits nowhere, and the pod keeps the name and amount (model_pod.unresolved)
 * until something gives the name an id; then the model moves it into the pod's requests. So
 * tenants cannot grow the table, and a decode that fails gives back the ids it assigned. */
enum {
  MODEL_RES_CPU,
  MODEL_RES_MEMORY,
  MODEL_RES_EPHEMERAL,
  MODEL_RES_PODS,
  MODEL_RES_UNOFFERED,
  MODEL_RES_FIRST_OTHER
};

/* Ids are uint16_t in requests; a decode needs some room above the table for names it has
 * not resolved yet (MODEL_MAX_OBJECT_NAMES). */
#define MODEL_MAX_RESOURCE_IDS 32768
/* Distinct resource names one object may name that the table does not know. */
#define MODEL_MAX_OBJECT_NAMES 256

typedef struct model_resources model_resources;

model_resources *model_resources_new(void); /* returns new (with the five above), NULL on ENOMEM */
void model_resources_free(model_resources *t);
/* Returns the id of a resource name, assigning the next one on first use; -1 when out of
 * memory or past MODEL_MAX_RESOURCE_IDS. With t NULL only the built-in names have ids. */
int model_resource_id(model_resources *t, const char *name);
/* The id of name, or -1 when it has none (never MODEL_RES_UNOFFERED). */
int model_resource_find(const model_resources *t, const char *name);
const char *model_resource_name(const model_resources *t, int id); /* NULL for an unused id */
int model_resource_count(const model_resources *t);                /* ids in use */
/* Gives back the ids assigned after the first count (a decode that failed). */
void model_resources_truncate(model_resources *t, int count);
/* Converts a quantity to the integer units of resource id (see above). */
ts_rc model_resource_amount(int id, const ts_quantity *q, int64_t *out);
/* Formats an amount of resource id as Kubernetes would print it ("1500m", "40Gi", "8"). */
void model_resource_format(const model_resources *t, int id, int64_t amount, char *out);

typedef struct model_rq {
  uint16_t id; /* resource id */
  int64_t v;   /* amount */
} model_rq;

/* A request for a resource name without an id (see above); name is owned by the holder. */
typedef struct model_named_rq {
  const char *name;
  int64_t v;
} model_named_rq;

/* A sparse resource list, sorted by id (pod requests: usually 2 to 4 entries). */
typedef struct model_rlist {
  model_rq *v; /* owned */
  uint32_t n;  /* entries */
} model_rlist;

int64_t model_rlist_get(const model_rlist *l,
                        int id); /* the amount of resource id, 0 when absent */

/* ---- the common object header ---------------------------------------------------------- */

typedef struct model_obj {
  model_kind kind;          /* read-only */
  const char *api_version;  /* interned apiVersion it was decoded from */
  const char *ns;           /* interned namespace, "" for cluster-scoped kinds */
  char *name;               /* owned */
  char *uid;                /* owned, "" when absent (manifests) */
  char *resource_version;   /* owned, "" when absent */
  int64_t generation;       /* metadata.generation */
  int64_t created_ns;       /* creationTimestamp in ns since the epoch, 0 when absent */
  int64_t deleted_ns;       /* deletionTimestamp, 0 when absent */
  model_labels labels;      /* metadata.labels */
  model_labels annotations; /* metadata.annotations (last-applied-configuration dropped) */
  model_owner *owners;      /* owned: metadata.ownerReferences */
  uint32_t nowners;         /* entries */
  char *key;                /* owned: "ns/name", or "name" for cluster-scoped kinds */
  uint64_t seq;             /* model-assigned: order of first insertion, for ties */
  uint64_t rev;             /* model-assigned: unique per stored version in its model
                               (changes on update) */
  const char *origin;       /* interned "file:line" or NULL: where it was loaded from */
} model_obj;

/* ---- core kinds ------------------------------------------------------------------------ */

typedef enum model_pod_phase {
  MODEL_PHASE_PENDING,
  MODEL_PHASE_RUNNING,
  MODEL_PHASE_SUCCEEDED,
  MODEL_PHASE_FAILED,
  MODEL_PHASE_UNKNOWN,
} model_pod_phase;

typedef struct model_pod_claim {
  const char *name;    /* interned: spec.resourceClaims[].name */
  char *claim_name;    /* owned: resourceClaimName, or NULL */
  char *template_name; /* owned: resourceClaimTemplateName, or NULL */
} model_pod_claim;

typedef struct model_pod_claim_status {
  const char *name; /* interned: status.resourceClaimStatuses[].name */
  char *claim_name; /* owned: the generated claim, NULL when none is needed */
} model_pod_claim_status;

typedef struct model_condition {
  const char *type;           /* interned */
  const char *status;         /* interned "True" / "False" / "Unknown" */
  const char *reason;         /* interned or NULL */
  char *message;              /* owned or NULL */
  int64_t last_transition_ns; /* lastTransitionTime, 0 when absent */
} model_condition;

struct model_node;

typedef struct model_pod {
  model_obj obj;                          /* header; kind MODEL_POD */
  bool may_gang;                          /* it carries a key of model_gang_keys or is
                                             controlled by a kind of model_gang_owner_kinds:
                                             without, it is a gang of one (scheduler/gang.c
                                             reads which gang; every pod of every cycle
                                             would otherwise look) */
  const char *scheduler_name;             /* interned; "default-scheduler" when unset */
  const char *node_name;                  /* interned spec.nodeName, NULL when unbound */
  model_pod_phase phase;                  /* status.phase (Pending when absent) */
  int32_t priority;                       /* spec.priority (0 when absent) */
  bool has_priority;                      /* spec.priority was set */
  const char *priority_class;             /* interned spec.priorityClassName or NULL */
  bool preempt_never;                     /* spec.preemptionPolicy: Never */
  model_rlist requests;                   /* effective requests (init rule + overhead) */
  model_labels node_selector;             /* spec.nodeSelector */
  model_node_selector affinity;           /* required node affinity; nterms 0 = none */
  model_toleration *tolerations;          /* owned */
  uint32_t ntolerations;                  /* entries */
  model_pod_claim *claims;                /* owned: spec.resourceClaims */
  uint32_t nclaims;                       /* entries */
  model_pod_claim_status *claim_statuses; /* owned: status.resourceClaimStatuses */
  uint32_t nclaim_statuses;               /* entries */
  model_condition *conditions;            /* owned: status.conditions */
  uint32_t nconditions;                   /* entries */
  int64_t start_ns;                       /* status.startTime, 0 when absent */
  int64_t finished_ns;                    /* the latest state.terminated.finishedAt of its
                                             status.containerStatuses, 0 when none */
  int64_t active_deadline_s;              /* spec.activeDeadlineSeconds, 0 when absent */
  const char *unoffered;                  /* unresolved[0].name, or NULL */
  model_named_rq *unresolved;             /* owned: requests of names the model's table has
                                             no id for, counted as MODEL_RES_UNOFFERED */
  uint32_t nunresolved;                   /* entries */
  /* A share of one GPU (KAI's annotations; see model_pod_gpu_share_on): */
  int32_t gpu_share;         /* gpu-fraction in thousandths of a GPU (1..1000), 0 when none */
  int32_t gpu_memory;        /* gpu-memory: MiB of one GPU's memory, 0 when none */
  const char **gates;        /* owned array of interned spec.schedulingGates[].name: while any
                                is left, nobody may bind it (the API server refuses) */
  uint32_t ngates;           /* entries */
  int32_t gpu_index;         /* the GPU its share was given, -1 when not known: Tessera's
                                tessera.dev/gpu-index, else KAI's runai-gpu annotation */
  const char *gpu_group;     /* KAI's label runai-gpu-group (interned): pods of one group on a
                                node share one GPU; NULL when none */
  const char *share_problem; /* why its share annotations cannot be honoured ("metadata.
                                annotations[gpu-fraction]: ..."; static), or NULL */
  /* maintained by the model */
  struct model_node *node; /* read-only: the node it is bound to, when known and counted */
  int32_t gpu_slot;        /* read-only: the node's GPU its share is counted on, -1 none,
                              MODEL_GPU_UNKNOWN when counted against every GPU */
  int32_t gpu_charged;     /* private: thousandths counted there */
  bool gpu_holds;          /* private: a share of unknown GPU that counts one used GPU for its
                              group (or itself) */
  ts_list node_link;       /* private: in the bucket of pods of node_name */
  ts_list unresolved_link; /* private: in the model's pods with unresolved requests */
} model_pod;

/* True for pods that hold node resources: bound and not Succeeded / Failed (kube-scheduler
 * ignores terminal pods). */
bool model_pod_counts(const model_pod *p);
/* The pod's condition of that type (interned), borrowed from the pod; NULL when absent. */
const model_condition *model_pod_condition(const model_pod *p, const char *type);
/* When the pod was scheduled, as the cluster recorded it: its PodScheduled=True condition's
 * lastTransitionTime, else status.startTime, else its creation time (0 when none is known). */
int64_t model_pod_scheduled_ns(const model_pod *p);

typedef struct model_node {
  model_obj obj;                   /* header; kind MODEL_NODE */
  int64_t *alloc;                  /* owned: [nres] status.allocatable by resource id */
  int64_t *used;                   /* [nres] (same block) model-maintained: requests of
                                      counted pods */
  uint32_t nres;                   /* entries of alloc and used: ids past it are 0 (the
                                      table had no such id when the node was decoded) */
  model_taint *taints;             /* owned: spec.taints */
  uint32_t ntaints;                /* entries */
  bool unschedulable;              /* spec.unschedulable */
  bool ready;                      /* condition Ready is True */
  uint32_t npods;                  /* model-maintained: counted pods on it */
  bool usage_overflow;             /* model-maintained: the requests of its pods add up to
                                      more than int64 for some resource: used is INT64_MAX
                                      there (full) until recounted */
  uint32_t index;                  /* model-maintained: position in model->nodes */
  struct model_pod_bucket *bucket; /* private: pods naming this node */
  int32_t gpu_memory;              /* label nvidia.com/gpu.memory: MiB per GPU, 0 when absent */
  int gpu_res;                     /* model-maintained: the id of nvidia.com/gpu, -1 when none */
  uint32_t *gpu_shares;            /* model-maintained (owned): thousandths of each GPU, by
                                      index, that pods sharing it are known to hold (more than
                                      1000 when others overcommitted it); a GPU with some counts
                                      as one used nvidia.com/gpu */
  uint32_t gpu_unknown;            /* model-maintained: thousandths held by shares whose GPU
                                      is not known, counted against every GPU (none of them
                                      has room for more than 1000 minus this) */
  uint32_t gpu_unknown_gpus;       /* model-maintained: used nvidia.com/gpu counted for them,
                                      one per share or per KAI GPU group */
  uint32_t ngpu_shares;            /* entries: allocatable nvidia.com/gpu, at most
                                      MODEL_MAX_SHARED_GPUS */
} model_node;

#define MODEL_MAX_SHARED_GPUS 256  /* GPUs of one node that pods may share */
#define MODEL_GPU_UNKNOWN     (-2) /* model_pod.gpu_slot of a share whose GPU is not known */

/* True when the pod asks for a share of one GPU (KAI's gpu-fraction or gpu-memory). */
static inline bool model_pod_shares_gpu(const model_pod *p) {
  return p->gpu_share || p->gpu_memory;
}
/* The thousandths of one of node n's GPUs the pod's share takes: its gpu-fraction, or its
 * gpu-memory over the node's GPU memory (label nvidia.com/gpu.memory), rounded up; more than
 * 1000 when it cannot share one there (no such label, or more memory than a GPU has). */
int32_t model_pod_gpu_share_on(const model_pod *p, const model_node *n);

/* A node's allocatable and usage of resource id (0 past the node's table). */
static inline int64_t model_node_alloc(const model_node *n, int id) {
  return (uint32_t)id < n->nres ? n->alloc[id] : 0;
}
static inline int64_t model_node_used(const model_node *n, int id) {
  return (uint32_t)id < n->nres ? n->used[id] : 0;
}

typedef struct model_namespace {
  model_obj obj; /* header; kind MODEL_NAMESPACE; labels are what selectors read */
} model_namespace;

typedef struct model_priority_class {
  model_obj obj;       /* header */
  int32_t value;       /* value */
  bool global_default; /* globalDefault */
  bool preempt_never;  /* preemptionPolicy: Never */
} model_priority_class;

/* An IntOrString such as minAvailable: "50%" or 2. */
typedef struct model_int_or_pct {
  bool set;     /* the field was present */
  bool percent; /* value is a percentage */
  int32_t value;
} model_int_or_pct;

typedef struct model_pdb {
  model_obj obj;                 /* header */
  model_label_selector selector; /* spec.selector (empty selects all pods of the namespace) */
  model_int_or_pct min_available;
  model_int_or_pct max_unavailable;
  int32_t disruptions_allowed; /* status.disruptionsAllowed */
  int32_t current_healthy;     /* status.currentHealthy */
  int32_t desired_healthy;     /* status.desiredHealthy */
  int32_t expected_pods;       /* status.expectedPods */
  int64_t observed_generation; /* status.observedGeneration */
} model_pdb;

/* ---- DRA (resource.k8s.io v1beta1, v1beta2, v1) ---------------------------------------- */

typedef enum model_attr_kind {
  MODEL_ATTR_BOOL,
  MODEL_ATTR_INT,
  MODEL_ATTR_STRING,
  MODEL_ATTR_VERSION,
} model_attr_kind;

typedef struct model_attr {
  const char *domain;   /* interned: the qualifying domain (the driver when unqualified) */
  const char *name;     /* interned: the name without the domain */
  model_attr_kind kind; /* which value is set */
  bool b;               /* bool */
  int64_t i;            /* int */
  char *s;              /* owned: string or version text */
} model_attr;

typedef struct model_capacity {
  const char *domain; /* interned */
  const char *name;   /* interned */
  ts_quantity value;  /* capacity value */
} model_capacity;

typedef struct model_counter {
  const char *name;  /* interned */
  ts_quantity value; /* amount */
} model_counter;

typedef struct model_counter_set {
  const char *name;        /* interned: counterSet name */
  model_counter *counters; /* owned */
  uint32_t ncounters;      /* entries */
} model_counter_set;

typedef struct model_device_taint {
  const char *key;     /* interned */
  const char *value;   /* interned, "" when absent */
  model_effect effect; /* NoSchedule or NoExecute */
} model_device_taint;

typedef struct model_device_toleration {
  const char *key;     /* interned, "" = any key with Exists */
  bool exists;         /* operator Exists (else Equal) */
  const char *value;   /* interned */
  model_effect effect; /* ANY when empty */
} model_device_toleration;

typedef struct model_device {
  const char *name;                     /* interned */
  model_attr *attrs;                    /* owned */
  uint32_t nattrs;                      /* entries */
  model_capacity *caps;                 /* owned */
  uint32_t ncaps;                       /* entries */
  model_counter_set *consumes;          /* owned: consumesCounters (name = counterSet) */
  uint32_t nconsumes;                   /* entries */
  model_device_taint *taints;           /* owned */
  uint32_t ntaints;                     /* entries */
  const char *node_name;                /* interned: per-device nodeName, or NULL */
  model_node_selector node_selector;    /* per-device nodeSelector */
  bool all_nodes;                       /* per-device allNodes */
  int allow_multiple;                   /* allowMultipleAllocations: -1 unset, 0, 1 */
  char **binding_conditions;            /* owned strings */
  uint32_t nbinding_conditions;         /* entries */
  char **binding_failure_conditions;    /* owned strings */
  uint32_t nbinding_failure_conditions; /* entries */
  bool binds_to_node;                   /* bindsToNode */
} model_device;

typedef struct model_slice {
  model_obj obj;                     /* header */
  const char *driver;                /* interned */
  const char *pool;                  /* interned pool.name */
  int64_t pool_generation;           /* pool.generation */
  int64_t pool_slice_count;          /* pool.resourceSliceCount */
  const char *node_name;             /* interned spec.nodeName, or NULL */
  model_node_selector node_selector; /* spec.nodeSelector (nterms 0 = none) */
  bool all_nodes;                    /* spec.allNodes */
  bool per_device_node_selection;    /* spec.perDeviceNodeSelection */
  model_counter_set *counter_sets;   /* owned: spec.sharedCounters */
  uint32_t ncounter_sets;            /* entries */
  model_device *devices;             /* owned */
  uint32_t ndevices;                 /* entries */
  /* What a reader derived from this version (dra/'s CEL view of the devices), built on first
   * use and freed with the version by derived_free; NULL until then. Not thread-safe. */
  void *derived;
  void (*derived_free)(void *derived);
} model_slice;

typedef enum model_selector_kind {
  MODEL_SELECTOR_CEL,
  MODEL_SELECTOR_UNKNOWN, /* a selector with no known member ({} in the allocator cases) */
} model_selector_kind;

typedef struct model_device_selector {
  model_selector_kind kind; /* CEL or unknown */
  char *cel;                /* owned: cel.expression */
} model_device_selector;

typedef struct model_opaque_config {
  const char *driver; /* interned: opaque.driver */
  json_t *parameters; /* new reference held by the object: opaque.parameters */
} model_opaque_config;

typedef struct model_device_class {
  model_obj obj;                    /* header */
  model_device_selector *selectors; /* owned */
  uint32_t nselectors;              /* entries */
  model_opaque_config *configs;     /* owned: spec.config[].opaque */
  uint32_t nconfigs;                /* entries */
  const char *extended_resource;    /* interned spec.extendedResourceName, or NULL */
} model_device_class;

typedef enum model_alloc_mode {
  MODEL_ALLOC_EXACT_COUNT,
  MODEL_ALLOC_ALL,
  MODEL_ALLOC_UNKNOWN, /* only in lenient decoding (allocator test vectors) */
} model_alloc_mode;

/* One device request: an `exactly` request or one `firstAvailable` alternative. */
typedef struct model_subrequest {
  const char *name;                     /* interned */
  const char *device_class;             /* interned deviceClassName */
  model_device_selector *selectors;     /* owned */
  uint32_t nselectors;                  /* entries */
  model_alloc_mode mode;                /* allocationMode (ExactCount when absent) */
  const char *mode_text;                /* interned allocationMode as written, or NULL */
  int64_t count;                        /* count (1 when absent with ExactCount) */
  bool admin_access;                    /* adminAccess */
  model_device_toleration *tolerations; /* owned */
  uint32_t ntolerations;                /* entries */
} model_subrequest;

typedef struct model_request {
  const char *name;         /* interned request name */
  bool first_available;     /* true: subs holds the prioritized alternatives */
  model_subrequest exactly; /* the request when !first_available (name = request name) */
  model_subrequest *subs;   /* owned: firstAvailable alternatives in order */
  uint32_t nsubs;           /* entries */
} model_request;

typedef struct model_constraint {
  const char **requests;          /* owned array of interned names ("req" or "req/sub") */
  uint32_t nrequests;             /* entries; 0 = applies to every request */
  const char *match_attribute;    /* interned fully qualified "domain/name", or NULL */
  const char *distinct_attribute; /* interned, or NULL */
} model_constraint;

typedef struct model_claim_config {
  const char **requests;      /* owned array of interned names; 0 entries = all */
  uint32_t nrequests;         /* entries */
  model_opaque_config opaque; /* driver and parameters */
} model_claim_config;

typedef struct model_claim_spec {
  model_request *requests;       /* owned */
  uint32_t nrequests;            /* entries */
  model_constraint *constraints; /* owned */
  uint32_t nconstraints;         /* entries */
  model_claim_config *configs;   /* owned */
  uint32_t nconfigs;             /* entries */
} model_claim_spec;

/* True when two claim specs ask for the same thing: requests, selectors, constraints and
 * configs compared by value (opaque parameters as JSON). */
bool model_claim_spec_equal(const model_claim_spec *a, const model_claim_spec *b);

typedef struct model_device_result {
  const char *request;                     /* interned "req" or "req/sub" */
  const char *driver;                      /* interned */
  const char *pool;                        /* interned */
  const char *device;                      /* interned */
  bool admin_access;                       /* adminAccess was set true */
  const char **binding_conditions;         /* owned array of interned: bindingConditions */
  uint32_t nbinding_conditions;            /* entries */
  const char **binding_failure_conditions; /* owned array: bindingFailureConditions */
  uint32_t nbinding_failure_conditions;    /* entries */
} model_device_result;

typedef enum model_config_source { MODEL_FROM_CLASS, MODEL_FROM_CLAIM } model_config_source;

typedef struct model_alloc_config {
  model_config_source source; /* FromClass / FromClaim */
  const char **requests;      /* owned array of interned names */
  uint32_t nrequests;         /* entries */
  model_opaque_config opaque; /* driver and parameters */
} model_alloc_config;

typedef struct model_allocation {
  bool present;                      /* status.allocation was set */
  model_device_result *results;      /* owned */
  uint32_t nresults;                 /* entries */
  model_alloc_config *configs;       /* owned */
  uint32_t nconfigs;                 /* entries */
  model_node_selector node_selector; /* nterms 0 = any node */
} model_allocation;

typedef struct model_consumer {
  const char *api_group; /* interned, "" for core */
  const char *resource;  /* interned, "pods" */
  char *name;            /* owned */
  char *uid;             /* owned */
} model_consumer;

typedef struct model_claim {
  model_obj obj;                /* header */
  model_claim_spec spec;        /* spec.devices */
  model_allocation allocation;  /* status.allocation (as assumed, when assumed) */
  model_consumer *reserved_for; /* owned: status.reservedFor (as assumed, when assumed) */
  uint32_t nreserved_for;       /* entries */
  bool assumed;                 /* model_claim_assume changed the status */
  model_allocation watched;     /* assumed: the allocation as watched */
  model_consumer *watched_rf;   /* assumed: reservedFor as watched (owned) */
  uint32_t nwatched_rf;         /* entries */
} model_claim;

/* Frees what an allocation owns and empties it. */
void model_allocation_free(model_allocation *a);
/* A deep copy of src into dst (which owns it then); on failure dst is empty. */
ts_rc model_allocation_copy(model_allocation *dst, const model_allocation *src);

typedef struct model_claim_template {
  model_obj obj;                  /* header */
  model_labels claim_labels;      /* spec.metadata.labels */
  model_labels claim_annotations; /* spec.metadata.annotations */
  model_claim_spec spec;          /* spec.spec.devices */
} model_claim_template;

/* ---- Kueue (kueue.x-k8s.io v1beta1, v1beta2) and PodGroup ------------------------------ */

typedef struct model_quota {
  const char *resource;  /* interned */
  ts_quantity nominal;   /* nominalQuota */
  bool has_borrowing;    /* borrowingLimit set */
  ts_quantity borrowing; /* borrowingLimit */
  bool has_lending;      /* lendingLimit set */
  ts_quantity lending;   /* lendingLimit */
} model_quota;

typedef struct model_flavor_quotas {
  const char *flavor;     /* interned flavor name */
  model_quota *resources; /* owned */
  uint32_t nresources;    /* entries */
} model_flavor_quotas;

typedef struct model_resource_group {
  const char **covered;         /* owned array of interned resource names */
  uint32_t ncovered;            /* entries */
  model_flavor_quotas *flavors; /* owned, in preference order */
  uint32_t nflavors;            /* entries */
} model_resource_group;

typedef enum model_queueing {
  MODEL_BEST_EFFORT_FIFO,
  MODEL_STRICT_FIFO,
} model_queueing;

typedef enum model_preempt_policy {
  MODEL_PREEMPT_NEVER,
  MODEL_PREEMPT_LOWER_PRIORITY,
  MODEL_PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY,
  MODEL_PREEMPT_ANY,
} model_preempt_policy;

typedef enum model_fungibility {
  MODEL_FUNGIBILITY_MAY_STOP_SEARCH, /* MayStopSearch (old names Borrow / Preempt) */
  MODEL_FUNGIBILITY_TRY_NEXT_FLAVOR, /* TryNextFlavor */
} model_fungibility;

typedef enum model_stop_policy {
  MODEL_STOP_NONE,
  MODEL_STOP_HOLD,
  MODEL_STOP_HOLD_AND_DRAIN,
} model_stop_policy;

typedef struct model_cluster_queue {
  model_obj obj;                       /* header */
  const char *cohort;                  /* interned cohort / cohortName, or NULL */
  model_label_selector ns_selector;    /* namespaceSelector (absent = no namespace) */
  model_queueing queueing;             /* queueingStrategy */
  model_resource_group *groups;        /* owned: resourceGroups */
  uint32_t ngroups;                    /* entries */
  model_preempt_policy within_cq;      /* preemption.withinClusterQueue */
  model_preempt_policy reclaim_cohort; /* preemption.reclaimWithinCohort */
  model_preempt_policy borrow_cohort;  /* preemption.borrowWithinCohort.policy */
  bool has_borrow_max_priority;        /* borrowWithinCohort.maxPriorityThreshold set */
  int32_t borrow_max_priority;         /* maxPriorityThreshold */
  model_fungibility when_can_borrow;   /* flavorFungibility.whenCanBorrow */
  model_fungibility when_can_preempt;  /* flavorFungibility.whenCanPreempt */
  bool has_fair_weight;                /* fairSharing.weight set */
  ts_quantity fair_weight;             /* fairSharing.weight (default 1) */
  model_stop_policy stop_policy;       /* stopPolicy */
  bool not_reclaimable;                /* other queues never preempt its workloads (Volcano's
                                          reclaimable: false) */
  bool uncovered_free;                 /* resources no group covers are not limited (Volcano's and
                                          KAI's queues limit only what they name) */
} model_cluster_queue;

/* Volcano's Queue (scheduling.volcano.sh/v1beta1) and KAI Scheduler's Queue
 * (scheduling.run.ai/v2) decode to a model_cluster_queue (obj.kind tells which), as the quota
 * tree reads them (model/decode_queues.c states the rules): one resource group whose only flavor
 * is named by the API group (model_queue_flavor), covering cpu, memory, nvidia.com/gpu and what
 * the queue names; cohort = the parent queue (spec.parent, spec.parentQueue), or NULL; every
 * namespace selected; preemption LowerPriority within the queue, Any across queues. */
const char *model_queue_flavor(model_kind k); /* "scheduling.volcano.sh", "scheduling.run.ai" */
/* The queue a Volcano or KAI PodGroup without spec.queue goes to ("default", "default-queue"). */
const char *model_queue_default(model_kind queue_kind);

typedef struct model_local_queue {
  model_obj obj;                 /* header */
  const char *cluster_queue;     /* interned spec.clusterQueue */
  model_stop_policy stop_policy; /* stopPolicy */
} model_local_queue;

typedef struct model_resource_flavor {
  model_obj obj;                 /* header */
  model_labels node_labels;      /* spec.nodeLabels */
  model_taint *node_taints;      /* owned: spec.nodeTaints */
  uint32_t nnode_taints;         /* entries */
  model_toleration *tolerations; /* owned: spec.tolerations */
  uint32_t ntolerations;         /* entries */
  const char *topology_name;     /* interned spec.topologyName, or NULL */
} model_resource_flavor;

typedef struct model_cohort {
  model_obj obj;                /* header */
  const char *parent;           /* interned spec.parent / parentName, or NULL */
  model_resource_group *groups; /* owned: resourceGroups */
  uint32_t ngroups;             /* entries */
  bool has_fair_weight;         /* fairSharing.weight set */
  ts_quantity fair_weight;      /* fairSharing.weight */
} model_cohort;

typedef struct model_workload_priority_class {
  model_obj obj; /* header */
  int32_t value; /* value */
} model_workload_priority_class;

/* One topology domain of a Kueue topology assignment: its value at each level, and how many
 * pods of the pod set go there. */
typedef struct model_wl_domain {
  const char **values; /* interned, one per level of the assignment (owned array) */
  int32_t count;       /* pods */
} model_wl_domain;

/* A pod set of a Kueue Workload, with what its admission assigned it. */
typedef struct model_wl_podset {
  const char *name;         /* interned spec.podSets[].name ("main" when absent) */
  int32_t count;            /* spec.podSets[].count */
  bool assigned;            /* status.admission.podSetAssignments has it */
  int32_t admitted;         /* its count there (count when absent) */
  model_kv *flavors;        /* owned: resource -> ResourceFlavor (both interned) */
  uint32_t nflavors;        /* entries */
  const char **levels;      /* owned: topologyAssignment.levels (interned node label keys, widest
                               first), NULL when it has no topology assignment */
  uint32_t nlevels;         /* entries */
  model_wl_domain *domains; /* owned: the assignment's domains (v1beta2's slices expanded) */
  uint32_t ndomains;        /* entries */
  bool topology_delayed;    /* delayedTopologyRequest: Pending (assignment still to come) */
} model_wl_podset;

/* Kueue's Workload (kueue.x-k8s.io v1beta2 and v1beta1): what Kueue decided about a job, which
 * Tessera follows when Kueue admits (queueing.admission: kueue). Only what placement needs is
 * kept: the pod sets, the admission, and the state of the conditions. */
typedef struct model_workload {
  model_obj obj;             /* header */
  const char *queue_name;    /* interned spec.queueName, or NULL */
  bool active;               /* spec.active (default true) */
  model_wl_podset *podsets;  /* owned: spec.podSets, with their assignments */
  uint32_t npodsets;         /* entries */
  const char *cluster_queue; /* interned status.admission.clusterQueue, or NULL */
  bool quota_reserved;       /* condition QuotaReserved is True */
  bool admitted;             /* condition Admitted is True (quota and admission checks) */
  bool evicted;              /* condition Evicted is True */
  bool finished;             /* condition Finished is True */
  char *why;                 /* owned: why it is not admitted (the message of its Evicted or
                                QuotaReserved condition, else of Admitted), or NULL */
} model_workload;

typedef struct model_pod_group {
  model_obj obj;                    /* header */
  int32_t min_member;               /* spec.minMember */
  model_rlist min_resources;        /* spec.minResources */
  int32_t schedule_timeout_seconds; /* spec.scheduleTimeoutSeconds (0 = unset) */
  const char *queue;                /* interned spec.queue (Volcano, KAI), or NULL */
  const char *priority_class;       /* interned spec.priorityClassName (Volcano, KAI), or NULL */
} model_pod_group;

/* A job that owns pods (batch/v1 Job, JobSet, Kubeflow PyTorchJob / TFJob / MPIJob /
 * XGBoostJob / PaddleJob / JAXJob): what gang scheduling needs of it (model/decode_jobs.c
 * states the rules per kind). */
typedef struct model_job {
  model_obj obj;    /* header; kind MODEL_JOB, MODEL_JOBSET or a training job kind */
  int32_t pods;     /* pods it runs at once (sum of replicas x parallelism) */
  int32_t min_pods; /* pods that must start together (minAvailable, elastic minimum, ...) */
} model_job;

/* ---- decoding -------------------------------------------------------------------------- */

typedef struct model_decode_opts {
  bool lenient; /* accept values the API server would reject but an allocator must handle
                   (unknown allocation modes, selectors and constraints); for test vectors */
  model_resources *resources; /* the resource-name table of the model the objects are for
                                 (model_resources_of); NULL: only the built-in names */
  bool admission;             /* also apply the rules admission webhooks enforce on create (Kueue's
                                 "borrowingLimit must be nil when cohort is empty"); for `tessera check`.
                                 Objects read from a server were admitted already and skip them. */
} model_decode_opts;

/* Decodes one Kubernetes object. On success *out is a new object (free with model_obj_free)
 * or NULL when the kind is not one Tessera reads (skipped, not an error). An invalid value
 * fails with an error naming kind, namespace/name and field path:
 * "ResourceClaim team-a/train: spec.devices.requests[0].exactly.count: must be at least 1". */
ts_rc model_decode(json_t *json, const model_decode_opts *opts, model_obj **out, ts_err *err);
void model_obj_free(model_obj *o); /* an object not in a model; NULL is a no-op */
/* The kind and key of an object without decoding the rest (a deletion needs nothing more, and
 * a deleted object may be a bare tombstone); MODEL_KIND_COUNT when it is not a kind Tessera
 * reads or has no name. *ns and *name are borrowed from json. */
model_kind model_decode_key(json_t *json, const char **ns, const char **name);

/* ---- validation as the API server does it ---------------------------------------------- */

/* One refusal, worded as the API server words it: the field path and the message
 * ("Invalid value: \"X\": ..."); for a refusal by an admission plugin the field is "" and the
 * message the Status's ("pods \"p\" is forbidden: ..."). Both borrowed for the call. */
typedef void (*model_refusal_fn)(void *ud, const char *field, const char *message);

/* The API server's naming rules: its message, or NULL when v is valid. */
const char *model_subdomain_error(const char *v); /* IsDNS1123Subdomain (object names) */
const char *model_dns_label_error(const char *v); /* IsDNS1123Label (namespaces) */

/* Validates obj (borrowed) as kube-apiserver 1.34 would on create: names, labels and
 * annotations of every kind Tessera reads; pods' resources, tolerations and resource claims;
 * ResourceSlice and ResourceClaim limits; Kueue's CRD rules. Calls fn once per refusal and
 * returns how many there were (0: the server would accept what Tessera checks). */
size_t model_validate(json_t *obj, model_refusal_fn fn, void *ud);
struct model;
struct model_pod;
/* The Priority admission plugin on a decoded pod, with the PriorityClasses of m (so: once
 * everything is loaded): its class must exist, and spec.priority, when the pod sets it, must be
 * what the class (or the global default) gives. Returns the refusals (0 or 1). */
size_t model_validate_priority(const struct model *m, const struct model_pod *p,
                               model_refusal_fn fn, void *ud);

/* ---- the model ------------------------------------------------------------------------- */

typedef struct model_pod_bucket model_pod_bucket;

/* The store: every object by kind and key, with indexes (pods by node, nodes by label, slices
 * by node and by pool). Opaque: read it through the functions below. */
typedef struct model model;

typedef enum model_event { MODEL_ADDED, MODEL_MODIFIED, MODEL_DELETED } model_event;

model *model_new(void); /* returns new, NULL when out of memory */
/* The model's resource-name table (see "resources" above): decode the model's objects with
 * it (model_decode_opts.resources). It only grows; a new id makes the model resolve the
 * requests its pods could not resolve before. */
model_resources *model_resources_of(const model *m);
void model_free(model *m);

/* Adds or replaces (same kind and key) an object; steals o even on failure. An object that
 * replaces another keeps the other's seq. */
ts_rc model_upsert(model *m, model_obj *o);
/* Removes and frees the object of that kind and key; TS_ENOTFOUND when absent. */
ts_rc model_remove(model *m, model_kind kind, const char *ns, const char *name);
/* Applies a decoded object (stolen) as a watch event: added or modified replace the object of
 * that kind and key (an assumed claim keeps its assumption while the new version shows no
 * allocation, see model_claim_assume), deleted removes it (absent: TS_OK). */
ts_rc model_apply(model *m, model_obj *o, model_event ev, ts_err *err);
/* Decodes json (borrowed) and applies it as a watch event. Unknown kinds are skipped (TS_OK,
 * *skipped set when non-NULL). origin (interned or NULL) is recorded on the object. */
ts_rc model_apply_json(model *m, json_t *json, model_event ev, const char *origin,
                       const model_decode_opts *opts, bool *skipped, ts_err *err);

/* Records whether objects of a kind can be known at all (true by default). Gang sizes come
 * from the jobs that own pods: when jobs of a kind cannot be seen, their pods are taken as
 * the whole gang instead of waiting for a job that will never show. */
void model_set_seen(model *m, model_kind kind, bool seen);

/* Binds a pod to a node in the model (node_name interned; NULL unbinds), as an assumed
 * decision: indexes and per-node sums follow. The rest of the pod is unchanged. */
ts_rc model_pod_bind(model *m, model_pod *p, const char *node_name);
/* The same for a pod sharing a GPU, given GPU gpu_index of the node (as tessera.dev/gpu-index
 * would say; -1: none). */
ts_rc model_pod_bind_gpu(model *m, model_pod *p, const char *node_name, int32_t gpu_index);
/* Sets a pod's status.phase in the model (a pod that ended: Succeeded or Failed no longer
 * holds its node's capacity), as its kubelet would report; indexes and sums follow. */
ts_rc model_pod_set_phase(model *m, model_pod *p, model_pod_phase phase);

/* Assumes the write about to reserve claim ns/name for a pod: alloc (copied; NULL keeps the
 * claim's allocation) becomes its allocation and the pod (pod_name, pod_uid) is added to its
 * reservedFor. The status as watched is kept aside for model_claim_forget; a new version of
 * the claim (a watch event) replaces both. TS_ENOTFOUND when there is no such claim. */
ts_rc model_claim_assume(model *m, const char *ns, const char *name, const model_allocation *alloc,
                         const char *pod_name, const char *pod_uid);
/* Puts back the status as watched, dropping every assumption (no-op when none). */
void model_claim_forget(model *m, const char *ns, const char *name);

/* Lookups: borrowed pointers valid until the object is replaced or removed. */
model_obj *model_get(const model *m, model_kind kind, const char *ns, const char *name);
/* The same by the object's key ("ns/name", or "name" for a cluster-scoped kind). */
model_obj *model_get_key(const model *m, model_kind kind, const char *key);
/* Every object of a kind, in no particular order, O(1) per object: for (size_t it = 0;
 * model_next(m, kind, &it, &o);). The model must not change during the walk. */
bool model_next(const model *m, model_kind kind, size_t *it, model_obj **out);
/* The nodes as a dense array (borrowed, valid until a node is added or removed). */
model_node *const *model_nodes(const model *m, size_t *n);
/* False when objects of kind cannot be known (model_set_seen). */
bool model_kind_seen(const model *m, model_kind kind);
/* Bumped by every change of the model. */
uint64_t model_generation(const model *m);
/* The value of the global default PriorityClass (the lowest value when several claim to be,
 * as the API server's priority admission picks), 0 when there is none. O(PriorityClasses). */
int32_t model_default_priority(const model *m);
model_obj *model_get_uid(const model *m, const char *uid); /* by metadata.uid; NULL when absent */
size_t model_count(const model *m, model_kind kind);       /* objects of a kind */
size_t model_gpu_share_pods(const model *m);               /* pods asking for a share of a GPU */
/* Fills a new array (*out, free with ts_free) with every object of a kind, sorted by key. */
ts_rc model_list(const model *m, model_kind kind, model_obj ***out, size_t *n);

/* Pods that name a node (bound, any phase), in insertion order: for (p = first; p; p = next). */
model_pod *model_node_pods_first(const model *m, const char *node_name);
model_pod *model_node_pods_next(const model *m, const model_pod *p);
/* Nodes carrying label key=value (interned key and value); borrowed array, may be NULL. */
model_node *const *model_nodes_with_label(const model *m, const char *key, const char *value,
                                          size_t *n);
/* Slices published for a node (spec.nodeName), and the slices of a pool. Borrowed arrays. */
model_slice *const *model_slices_of_node(const model *m, const char *node_name, size_t *n);
model_slice *const *model_slices_of_pool(const model *m, const char *driver, const char *pool,
                                         size_t *n);

#endif
