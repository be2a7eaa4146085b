/*
 * model/model_int.h - internals of the model module: the decoding context with field paths,
 * typed field readers that report errors as Kubernetes does, and the per-kind decoders.
 */
#ifndef MODEL_INT_H
#define MODEL_INT_H

#include "model/model.h"

#define MD_PATH_MAX 512

struct model {
  ts_map by_key[MODEL_KIND_COUNT]; /* private: key -> object, per kind */
  ts_map by_uid;                   /* private: uid -> object */
  ts_map buckets;                  /* private: node name -> model_pod_bucket */
  ts_map node_label_index;         /* private: "key=value" -> model_node_vec */
  ts_map slices_by_node;           /* private: node name -> model_slice_vec */
  ts_map slices_by_pool;           /* private: "driver/pool" -> model_slice_vec */
  TS_VEC(model_node *) nodes;      /* read-only: dense array of nodes */
  uint64_t seq;                    /* private: next insertion sequence */
  uint64_t revs;                   /* private: last stored-version number given */
  uint64_t generation;             /* read-only: bumped by every change */
  model_resources *res;            /* owned: resource names and their ids */
  int res_resolved;                /* private: ids in res when pods were last resolved */
  ts_list unresolved;              /* private: pods with unresolved requests */
  size_t nshare_pods;              /* private: pods asking for a share of a GPU */
  bool unseen[MODEL_KIND_COUNT];   /* read-only: kinds whose objects this model cannot know
                                      (the API server refused to list them, or a snapshot
                                      holds none); see model_set_seen */
};

/* Decoding context: who is being decoded and where in it we are. */
typedef struct mdec {
  ts_err *err;                   /* caller's error */
  const model_decode_opts *opts; /* never NULL */
  const char *kind;              /* kind name for messages */
  const char *ns;                /* namespace for messages ("" when cluster-scoped) */
  const char *name;              /* name for messages */
  const char *version;           /* API version part: "v1", "v1beta1", "v1beta2", ... */
  char path[MD_PATH_MAX];        /* current field path, "spec.devices.requests[0]" */
  size_t plen;                   /* strlen(path) */
  model_resources *res;          /* opts->resources */
  int base;                      /* ids from here on are the decode's own (local[id - base]):
                                    names a tenant wrote that the table has no id for */
  const char *local[MODEL_MAX_OBJECT_NAMES]; /* borrowed from the JSON being decoded */
  uint32_t nlocal;                           /* entries */
} mdec;

/* qsort order of model_rq by resource id. */
int model__rq_cmp(const void *a, const void *b);
/* Why an administrator's resource name got no id. */
const char *model__no_id(const mdec *d);
/* The name of id in this decode (a table id or one of the decode's own). */
const char *model__resource_name(const mdec *d, int id);
/* Moves the entries of l with the decode's own ids into one MODEL_RES_UNOFFERED entry (the
 * sum); with named non-NULL also returns them as owned name/amount pairs (one allocation,
 * names after the array) in *named / *nnamed. */
ts_rc model__resolve_local(mdec *d, model_rlist *l, model_named_rq **named, uint32_t *nnamed);

/* Field paths: each push returns a mark to pop back to. */
size_t model__push(mdec *d, const char *field);   /* appends ".field" */
size_t model__push_index(mdec *d, size_t i);      /* appends "[i]" */
size_t model__push_key(mdec *d, const char *key); /* appends "[key]" */
void model__pop(mdec *d, size_t mark);

/* Fails the decode: "Kind ns/name: PATH: message". Returns code. */
ts_rc model__fail(mdec *d, ts_rc code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same with an extra field appended to the path for the message only. */
ts_rc model__fail_at(mdec *d, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Typed readers. A member that is absent or null is "absent": optional readers leave the
 * output untouched and set *present false (when present is non-NULL); a member of the wrong
 * type is an error naming the field. */
json_t *model__object(mdec *d, json_t *parent, const char *key, ts_rc *rc);
json_t *model__array(mdec *d, json_t *parent, const char *key, ts_rc *rc);
ts_rc model__string(mdec *d, json_t *parent, const char *key, const char **out, bool required);
ts_rc model__intern(mdec *d, json_t *parent, const char *key, const char **out, bool required);
ts_rc model__strdup(mdec *d, json_t *parent, const char *key, char **out, bool required);
ts_rc model__int(mdec *d, json_t *parent, const char *key, int64_t *out, bool *present);
ts_rc model__int32(mdec *d, json_t *parent, const char *key, int32_t *out, bool *present);
ts_rc model__bool(mdec *d, json_t *parent, const char *key, bool *out, bool *present);
/* An RFC 3339 time at parent[key] in ns since the epoch; optional (untouched when absent). */
ts_rc model__time(mdec *d, json_t *parent, const char *key, int64_t *out);
/* A quantity from a string or a number at parent[key]; optional. */
ts_rc model__quantity(mdec *d, json_t *parent, const char *key, ts_quantity *out, bool *present);
/* A quantity from value v itself (the path names it already). */
ts_rc model__quantity_value(mdec *d, json_t *v, ts_quantity *out);
/* Matches an enum string against names[0..n); absent leaves *out untouched. */
ts_rc model__enum(mdec *d, json_t *parent, const char *key, const char *const *names, int n,
                  int *out);
/* A list of interned strings, pinned (vocabulary). */
ts_rc model__strings(mdec *d, json_t *parent, const char *key, const char ***out, uint32_t *n);
/* The same, counted (ts_intern_ref): values that belong to the object, such as a selector's
 * label values; each is released with ts_intern_unref when the object goes. */
ts_rc model__values(mdec *d, json_t *parent, const char *key, const char ***out, uint32_t *n);
/* status.conditions of parent (type, status, reason, message, lastTransitionTime), and
 * their freeing. */
ts_rc model__conditions(mdec *d, json_t *parent, model_condition **out, uint32_t *n);
void model__conditions_free(model_condition *c, uint32_t n);
/* A list of owned strings. */
ts_rc model__strdups(mdec *d, json_t *parent, const char *key, char ***out, uint32_t *n);

/* The API server's naming rules (names.c): the message it gives, or NULL when v is valid. */
const char *model__label_value_error(const char *v);    /* IsValidLabelValue */
const char *model__qualified_name_error(const char *v); /* IsQualifiedName (label keys) */
const char *model__c_identifier_error(const char *v);   /* IsCIdentifier (attribute names) */

/* Building blocks shared by several kinds. */
ts_rc model__labels(mdec *d, json_t *parent, const char *key, bool owned_values, model_labels *out);
ts_rc model__label_selector(mdec *d, json_t *parent, const char *key, model_label_selector *out);
ts_rc model__node_selector(mdec *d, json_t *parent, const char *key, model_node_selector *out);
ts_rc model__taints(mdec *d, json_t *parent, const char *key, model_taint **out, uint32_t *n);
ts_rc model__tolerations(mdec *d, json_t *parent, const char *key, model_toleration **out,
                         uint32_t *n);
/* A map of resource quantities; tenant: the names come from what a tenant writes and get no
 * id from the table (the decode's own ids for unknown names: see model__resolve_local). */
ts_rc model__resource_map(mdec *d, json_t *parent, const char *key, model_rlist *out, bool tenant);
/* Allocates a zeroed array of n elements of size sz (n may be 0: returns NULL, TS_OK). */
ts_rc model__alloc_array(mdec *d, size_t n, size_t sz, void **out);

void model__labels_free(model_labels *l, bool owned_values);
void model__label_selector_free(model_label_selector *s);
void model__node_selector_free(model_node_selector *s);
/* A deep copy (dst owns it); on failure dst is empty. */
ts_rc model__node_selector_copy(model_node_selector *dst, const model_node_selector *src);
/* The claim's status with an assumed reservation laid over it, and back (decode_dra.c). */
ts_rc model__claim_assume(model_claim *c, const model_allocation *alloc, const char *pod_name,
                          const char *pod_uid);
void model__claim_forget(model_claim *c);
/* A new version c of an assumed claim old: while c shows no allocation the assumption stays
 * (moved onto c, with c's status as the watched one); an allocation ends it. */
void model__claim_carry(model_claim *old, model_claim *c);
void model__strdups_free(char **v, uint32_t n);

/* Per-kind decoders (fill the kind's fields; the header is already decoded) and freers. */
typedef ts_rc (*model__decode_fn)(mdec *d, json_t *root, model_obj *o);
typedef void (*model__free_fn)(model_obj *o);

#define MODEL__DECL(id, fn)                                                                        \
  ts_rc model__decode_##fn(mdec *d, json_t *root, model_obj *o);                                   \
  void model__free_##fn(model_obj *o);
MODEL__DECL(POD, pod)
MODEL__DECL(NODE, node)
MODEL__DECL(NAMESPACE, namespace)
MODEL__DECL(PRIORITY_CLASS, priority_class)
MODEL__DECL(PDB, pdb)
MODEL__DECL(RESOURCE_SLICE, slice)
MODEL__DECL(DEVICE_CLASS, device_class)
MODEL__DECL(RESOURCE_CLAIM, claim)
MODEL__DECL(RESOURCE_CLAIM_TEMPLATE, claim_template)
MODEL__DECL(CLUSTER_QUEUE, cluster_queue)
MODEL__DECL(LOCAL_QUEUE, local_queue)
MODEL__DECL(RESOURCE_FLAVOR, resource_flavor)
MODEL__DECL(COHORT, cohort)
MODEL__DECL(WORKLOAD_PRIORITY_CLASS, workload_priority_class)
MODEL__DECL(WORKLOAD, workload)
MODEL__DECL(POD_GROUP, pod_group)
MODEL__DECL(VOLCANO_QUEUE, volcano_queue)
MODEL__DECL(KAI_QUEUE, kai_queue)
MODEL__DECL(JOB, job)
MODEL__DECL(JOBSET, jobset)
MODEL__DECL(TRAINING_JOB, training_job)
#undef MODEL__DECL

/* Frees the members of the common header (not the object). */
void model__obj_fini(model_obj *o);

#endif
