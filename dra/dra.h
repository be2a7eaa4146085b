/*
 * dra/dra.h - Dynamic Resource Allocation as kube-scheduler's structured allocator does it:
 * devices of ResourceSlices prepared once per cycle (a world), claims allocated for a pod on a
 * node, CEL device selectors evaluated through cel/ (dra/select.c), and the one encoder of an
 * allocation into the AllocationResult written to the API server (dra/encode.c).
 */
#ifndef DRA_H
#define DRA_H

#include <jansson.h>

#include "cel/cel.h"
#include "common/ts.h"
#include "model/model.h"

/* ---- DRA: structured device allocation, as kube-scheduler's allocator ------------------ */

#define DRA_MAX_RESULTS 32 /* devices per claim (AllocationResultsMaxSize) */
#define DRA_MAX_CLAIMS  64 /* claims allocated together for one pod */
/* Steps one allocation (a pod's claims on one node) may take; past it the allocation fails
 * with an error that says so, and the pod is not tried on other nodes in that cycle. */
#define DRA_SEARCH_BUDGET 200000

typedef struct dra_features {
  bool admin_access;          /* DRAAdminAccess */
  bool prioritized_list;      /* DRAPrioritizedList (firstAvailable) */
  bool partitionable_devices; /* DRAPartitionableDevices (shared counters) */
  bool device_taints;         /* DRADeviceTaints */
  bool device_binding;        /* DRADeviceBindingConditions */
} dra_features;

/* Kubernetes 1.34's defaults: admin access and prioritized lists on; partitionable devices and
 * device taints on as well because Tessera implements them (counters are how MIG partitions
 * exclude each other; where the cluster's gates are off, the API server drops those fields, so
 * nothing changes). DRADeviceBindingConditions off: Tessera does not wait for a device's
 * binding conditions before binding, so devices that have them are never allocated. */
void dra_features_default(dra_features *f);

/* Evaluates one CEL selector against device `index` of `slice`: *match, or an error whose
 * text says why (compile or runtime). */
typedef ts_rc (*dra_eval_fn)(void *ctx, const char *expression, const model_slice *slice,
                             uint32_t index, bool *match, ts_err *err);
/* Finds a DeviceClass by name; NULL when there is none. */
typedef const model_device_class *(*dra_class_fn)(void *ctx, const char *name);

/* The CEL evaluator for selectors (cel/): programs compiled once per expression, device views
 * built once per slice version and kept on it (model_slice.derived). One per scheduling
 * thread; it may serve any number of models. Returns new, NULL when out of memory. */
typedef struct dra_cel dra_cel;
dra_cel *dra_cel_new(void);
void dra_cel_free(dra_cel *c); /* with its programs and views; NULL is a no-op */
/* A dra_eval_fn: ctx is a dra_cel. Compile errors are TS_EPARSE. */
ts_rc dra_cel_eval(void *ctx, const char *expression, const model_slice *slice, uint32_t index,
                   bool *match, ts_err *err);

typedef struct dra_world dra_world;

/* Prepares the devices of `slices` (borrowed, in order; they must outlive the world) for
 * allocations: ids, pools, indexes by node. Returns new, NULL when out of memory. Cost:
 * O(devices). */
dra_world *dra_world_new(const model_slice *const *slices, size_t nslices,
                         const dra_features *features, dra_class_fn cls, void *cls_ctx,
                         dra_eval_fn eval, void *eval_ctx);
void dra_world_free(dra_world *w); /* NULL is a no-op */
/* Marks a device as allocated to some other claim; unknown devices are ignored. */
void dra_world_mark(dra_world *w, const char *driver, const char *pool, const char *device);

typedef struct dra_device {
  const char *request;        /* interned: "req" or "req/subreq" */
  const model_slice *slice;   /* borrowed: the slice of the device */
  const model_device *device; /* borrowed: the device */
  bool admin_access;          /* allocated with admin access */
} dra_device;

typedef struct dra_config {
  model_config_source source;        /* FromClass or FromClaim */
  const char *const *requests;       /* borrowed request names (NULL: all) */
  uint32_t nrequests;                /* entries */
  const model_opaque_config *opaque; /* borrowed driver + parameters */
} dra_config;

/* The allocation of one claim. */
typedef struct dra_result {
  dra_device devices[DRA_MAX_RESULTS]; /* the devices, in allocation order */
  uint32_t ndevices;                   /* entries */
  dra_config *configs;                 /* arena: class configs, then claim's */
  uint32_t nconfigs;                   /* entries */
  model_node_selector node_selector;   /* arena: where the devices are; 0 terms =
                                          every node */
} dra_result;

/* Allocates `claims` (not yet allocated; names for messages in claim_names) for a pod on the
 * node (name and labels; NULL node_name: no node), exactly as Kubernetes' structured
 * allocator: claims in order, requests in order, firstAvailable alternatives in order, devices
 * in the order of slices and devices, first complete solution of a depth-first search.
 * *ok and results[0..nclaims) on success; *ok false when the claims cannot be allocated on
 * this node; an error (with upstream's wording) when the input is invalid, including any CEL
 * error. Arena memory holds configs and node selectors. */
ts_rc dra_allocate(dra_world *w, const char *node_name, const model_labels *node_labels,
                   const model_claim_spec *const *claims, const char *const *claim_names,
                   size_t nclaims, ts_arena *arena, dra_result *results, bool *ok, ts_err *err);

/* Marks (on) or unmarks the devices of a result as in use in the world. */
void dra_mark_result(dra_world *w, const dra_result *r, bool on);
/* True when the result's devices are all local to one node (its node selector pins a node). */
bool dra_result_local(const dra_result *r);
/* Devices the node's local slices offer, and how many of them are in use. */
void dra_node_usage(const dra_world *w, const char *node, uint32_t *used, uint32_t *total);

/* ---- device selectors (CEL, through cel/cel_ext.h; dra/device.c) -------------------------- */

#define DRA_SELECTOR_MAX_COST    1000000 /* CELSelectorExpressionMaxCost */
#define DRA_SELECTOR_MAX_EXPR    10240   /* bytes of an expression (10 KiB) */
#define DRA_SELECTOR_MAX_INCLUDE 48      /* list length 'includes' accepts */

typedef enum dra_attr_kind {
  DRA_ATTR_BOOL,
  DRA_ATTR_INT,
  DRA_ATTR_STRING,
  DRA_ATTR_VERSION,
  DRA_ATTR_BOOL_LIST,
  DRA_ATTR_INT_LIST,
  DRA_ATTR_STRING_LIST,
  DRA_ATTR_VERSION_LIST,
} dra_attr_kind;

typedef struct dra_attr_view {
  const char *domain; /* qualifying domain; NULL or the driver = the driver's domain */
  const char *name;   /* name without the domain */
  dra_attr_kind kind; /* which member of u */
  size_t n;           /* list forms: entries */
  union {
    bool b;
    int64_t i;
    const char *s;
    cel_semver v;
    const bool *bl;
    const int64_t *il;
    const char *const *sl;
    const cel_semver *vl;
  } u;
} dra_attr_view;

typedef struct dra_capacity_view {
  const char *domain; /* NULL or the driver = the driver's domain */
  const char *name;   /* name without the domain */
  ts_quantity value;  /* capacity */
} dra_capacity_view;

typedef struct dra_device_view {
  const char *driver;            /* device.driver */
  const dra_attr_view *attrs;    /* borrowed */
  size_t nattrs;                 /* entries */
  const dra_capacity_view *caps; /* borrowed */
  size_t ncaps;                  /* entries */
  int allow_multiple;            /* allowMultipleAllocations: -1 unset, 0, 1 */
} dra_device_view;

typedef enum dra_selector_env {
  DRA_SELECTOR_STORED, /* StoredExpressions: everything declared, whatever the gates */
  DRA_SELECTOR_NEW,    /* NewExpressions: the feature gates decide */
} dra_selector_env;

typedef struct dra_selector_opts {
  dra_selector_env env;     /* which environment */
  bool consumable_capacity; /* DRAConsumableCapacity: allowMultipleAllocations */
  bool list_attributes;     /* DRAListTypeAttributes: list attributes and 'includes' */
} dra_selector_opts;

/* A CEL environment for selectors: `device` declared, the library's functions, the gates of
 * opts (NULL: StoredExpressions). Programs compiled in it borrow it: free them first. */
typedef struct dra_env dra_env;
dra_env *dra_env_new(const dra_selector_opts *opts);
void dra_env_free(dra_env *e); /* NULL is a no-op */
/* Compiles a selector in e. The result must be bool. *out is new. */
ts_rc dra_selector_compile(const dra_env *e, const char *expr, cel_program **out, ts_err *err);
/* Evaluates a selector against a device (read in place), with the caller's context (one per
 * thread). Not TS_OK: a CEL error, which must abort the attempt; it is not "no match". */
ts_rc dra_selector_eval(const cel_program *p, cel_eval_ctx *ctx, const dra_device_view *dev,
                        bool *match, ts_err *err);
/* Checks a selector for `tessera check`: TS_OK when it compiles; otherwise the error, and for
 * common mistakes (attributes read without a domain, memory read as an attribute and compared
 * with a string) an explanation and a rewrite verified to compile. */
ts_rc dra_selector_check(const char *expr, const char *driver_hint, ts_err *err);

/* ---- the allocation as written --------------------------------------------------------- */

/* The typed allocation of a result (names interned, configs and node selector copied; the
 * parameters' references held): what a claim's status.allocation will hold. Free it with
 * model_allocation_free. */
ts_rc dra_result_allocation(const dra_result *r, model_allocation *out);

#endif
