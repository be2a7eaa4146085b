/* tests/support/cluster.c - the in-memory cluster of cluster.h. */
#include "tests/support/cluster.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELETE_PROTECTION "resource.kubernetes.io/delete-protection"

/* Something the loop will be told: a watch event, or the answer to a write. */
typedef struct delivery {
  bool is_event;  /* event (else an answer) */
  model_event ev; /* event: its type */
  json_t *obj;    /* event: the object as it was then (new reference) */
  void *token;    /* answer: live/'s token */
  ts_rc r;        /* answer: the result */
} delivery;

/* A stored object under its key. */
typedef struct entry {
  json_t *obj; /* new reference */
  char key[];  /* "Kind/ns/name" */
} entry;

struct tc_cluster {
  ts_map store;              /* "Kind/ns/name" -> entry (owned) */
  model *truth;              /* the stored objects, decoded */
  live *l;                   /* the loop being fed */
  TS_VEC(delivery) queue;    /* deliveries not yet made, in order */
  size_t head;               /* first undelivered entry of queue */
  TS_VEC(char *) violations; /* owned sentences */
  ts_map bound;              /* pod keys bound through the writer (owned keys) */
  uint64_t rng;              /* seed state */
  int64_t now_ns;            /* the clock */
  uint64_t rv;               /* last resourceVersion handed out */
  uint64_t uids;             /* uids handed out */
  size_t writes, reports;    /* counters */
};

/* ---- small helpers ------------------------------------------------------------------------ */

static uint64_t next_rand(tc_cluster *c) {
  c->rng ^= c->rng << 13, c->rng ^= c->rng >> 7, c->rng ^= c->rng << 17;
  return c->rng;
}

void tc_violation(tc_cluster *c, const char *fmt, ...) {
  char buf[1024];
  char *copy;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < c->violations.n; i++)
    if (!strcmp(c->violations.v[i], buf)) return; /* said once */
  if ((copy = ts_strdup(buf)) && ts_vec_push(&c->violations, copy) != TS_OK) ts_free(copy);
}

size_t tc_violations(const tc_cluster *c, const char *const **out) {
  *out = (const char *const *)c->violations.v;
  return c->violations.n;
}

static const char *meta_str(json_t *obj, const char *field) {
  return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static void store_key(json_t *obj, char *out, size_t cap) {
  const char *ns = meta_str(obj, "namespace");
  snprintf(out, cap, "%s/%s/%s", json_string_value(json_object_get(obj, "kind")) ?: "",
           ns ? ns : "", meta_str(obj, "name") ?: "");
}

static json_t *get(const tc_cluster *c, const char *kind, const char *ns, const char *name) {
  char key[800];
  entry *e;
  snprintf(key, sizeof key, "%s/%s/%s", kind, ns ? ns : "", name);
  e = ts_map_get(&c->store, key, strlen(key));
  return e ? e->obj : NULL;
}

static void push(tc_cluster *c, delivery d) {
  if (ts_vec_push(&c->queue, d) != TS_OK) {
    json_decref(d.obj);
    tc_violation(c, "out of memory queueing a delivery");
  }
}

static void push_event(tc_cluster *c, model_event ev, json_t *obj) {
  push(c, (delivery){true, ev, json_deep_copy(obj), NULL, TS_OK});
}

/* A write's event(s) were queued already; its answer goes before or after them. */
static void answer(tc_cluster *c, void *token, ts_rc r, size_t events_from) {
  delivery d = {false, MODEL_ADDED, NULL, token, r};
  c->writes++;
  if (ts_vec_push(&c->queue, d) != TS_OK) {
    tc_violation(c, "out of memory answering");
    return;
  }
  if (c->rng && events_from < c->queue.n - 1 && (next_rand(c) & 1)) { /* answer first */
    delivery a = c->queue.v[c->queue.n - 1];
    memmove(&c->queue.v[events_from + 1], &c->queue.v[events_from],
            (c->queue.n - 1 - events_from) * sizeof *c->queue.v);
    c->queue.v[events_from] = a;
  }
}

/* ---- the store ---------------------------------------------------------------------------- */

/* Stores obj (steals it) and queues its event. */
static void put(tc_cluster *c, json_t *obj, model_event ev) {
  char key[800], rv[32];
  entry *e;
  ts_err err;
  json_t *md = json_object_get(obj, "metadata");
  snprintf(rv, sizeof rv, "%llu", (unsigned long long)++c->rv);
  json_object_set_new(md, "resourceVersion", json_string(rv));
  store_key(obj, key, sizeof key);
  if ((e = ts_map_get(&c->store, key, strlen(key)))) {
    json_decref(e->obj);
    e->obj = obj;
  } else if (!(e = ts_malloc(sizeof *e + strlen(key) + 1))) {
    json_decref(obj);
    tc_violation(c, "out of memory storing %s", key);
    return;
  } else {
    e->obj = obj;
    memcpy(e->key, key, strlen(key) + 1);
    if (ts_map_put(&c->store, e->key, strlen(e->key), e, NULL) != TS_OK) {
      json_decref(obj);
      ts_free(e);
      tc_violation(c, "out of memory storing %s", key);
      return;
    }
  }
  ts_err_clear(&err);
  if (model_apply_json(c->truth, obj, ev, NULL, NULL, NULL, &err) != TS_OK)
    tc_violation(c, "the cluster's own model refused %s: %s", key, err.text);
  push_event(c, ev, obj);
}

/* Deletes the stored object (its event is queued). */
static void del(tc_cluster *c, json_t *obj) {
  char key[800];
  entry *e;
  ts_err err;
  store_key(obj, key, sizeof key);
  if (!(e = ts_map_del(&c->store, key, strlen(key)))) return;
  push_event(c, MODEL_DELETED, e->obj);
  ts_err_clear(&err);
  model_apply_json(c->truth, e->obj, MODEL_DELETED, NULL, NULL, NULL, &err);
  json_decref(e->obj);
  ts_free(e);
}

/* ---- the resource claim controller ---------------------------------------------------------- */

/* The claim a pod claim stands for: its resourceClaimName, or the one the controller made. */
static const char *claim_name_of(json_t *pod, json_t *pc) {
  const char *name = json_string_value(json_object_get(pc, "resourceClaimName"));
  json_t *st;
  size_t i;
  if (name) return name;
  json_array_foreach(json_object_get(json_object_get(pod, "status"), "resourceClaimStatuses"), i,
                     st) {
    if (json_equal(json_object_get(st, "name"), json_object_get(pc, "name")))
      return json_string_value(json_object_get(st, "resourceClaimName"));
  }
  return NULL;
}

/* Makes the claims of a pod's template claims whose template exists (generateName
 * "<pod>-<claim>-" plus five characters, owned by the pod), and records them in the pod's
 * status.resourceClaimStatuses. */
static void make_claims(tc_cluster *c, json_t *pod) {
  const char *ns = meta_str(pod, "namespace"), *pname = meta_str(pod, "name");
  json_t *pcs = json_object_get(json_object_get(pod, "spec"), "resourceClaims"), *pc, *copy = NULL;
  size_t i;
  json_array_foreach(pcs, i, pc) {
    const char *tname = json_string_value(json_object_get(pc, "resourceClaimTemplateName"));
    const char *cname = json_string_value(json_object_get(pc, "name"));
    json_t *tmpl, *claim, *st;
    char name[600];
    if (!tname || !cname || claim_name_of(copy ? copy : pod, pc)) continue;
    if (!(tmpl = get(c, "ResourceClaimTemplate", ns, tname))) continue;
    snprintf(name, sizeof name, "%s-%s-%05llx", pname, cname,
             (unsigned long long)(ts_hash(pname, strlen(pname)) & 0xfffff));
    claim =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, s:O}", "apiVersion",
                  json_string_value(json_object_get(tmpl, "apiVersion")), "kind", "ResourceClaim",
                  "metadata", "name", name, "namespace", ns, "ownerReferences", "apiVersion", "v1",
                  "kind", "Pod", "name", pname, "uid", meta_str(pod, "uid"), "controller", 1,
                  "spec", json_object_get(json_object_get(tmpl, "spec"), "spec"));
    tc_apply(c, claim);
    json_decref(claim);
    if (!copy) copy = json_deep_copy(pod);
    st = json_object_get(copy, "status");
    if (!json_is_object(st)) json_object_set_new(copy, "status", st = json_object());
    if (!json_is_array(json_object_get(st, "resourceClaimStatuses")))
      json_object_set_new(st, "resourceClaimStatuses", json_array());
    json_array_append_new(json_object_get(st, "resourceClaimStatuses"),
                          json_pack("{s:s, s:s}", "name", cname, "resourceClaimName", name));
  }
  if (copy) put(c, copy, MODEL_MODIFIED);
}

/* A template arrived: make the claims of the pods that wait for it. */
static void template_arrived(tc_cluster *c) {
  json_t **pods = NULL;
  size_t n = 0, cap = 0, it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&c->store, &it, &s)) {
    json_t *o = ((entry *)s->value)->obj;
    if (strcmp(json_string_value(json_object_get(o, "kind")) ?: "", "Pod")) continue;
    if (n == cap) {
      json_t **np = realloc(pods, (cap = cap ? 2 * cap : 16) * sizeof *np);
      if (!np) break;
      pods = np;
    }
    pods[n++] = json_incref(o);
  }
  for (size_t i = 0; i < n; i++) {
    make_claims(c, pods[i]);
    json_decref(pods[i]);
  }
  free(pods);
}

/* True when entry e of reservedFor names the pod uid. */
static bool names_uid(json_t *e, const char *uid) {
  return uid && !strcmp(json_string_value(json_object_get(e, "uid")) ?: "", uid);
}

/* The pod is gone: the controller removes it from the reservedFor of its claims, deletes the
 * claims it made for it, and deallocates claims nobody uses any more. */
static void pod_gone(tc_cluster *c, json_t *pod) {
  const char *ns = meta_str(pod, "namespace"), *uid = meta_str(pod, "uid");
  json_t *pcs = json_object_get(json_object_get(pod, "spec"), "resourceClaims"), *pc;
  size_t i;
  json_array_foreach(pcs, i, pc) {
    const char *name = claim_name_of(pod, pc);
    json_t *claim = name ? get(c, "ResourceClaim", ns, name) : NULL, *copy, *rf;
    size_t k;
    if (!claim) continue;
    if (json_object_get(pc, "resourceClaimTemplateName")) {
      del(c, claim);
      continue;
    }
    copy = json_deep_copy(claim);
    rf = json_object_get(json_object_get(copy, "status"), "reservedFor");
    for (k = json_array_size(rf); k-- > 0;)
      if (names_uid(json_array_get(rf, k), uid)) json_array_remove(rf, k);
    if (!json_array_size(rf)) {
      json_object_del(json_object_get(copy, "status"), "allocation");
      json_object_del(json_object_get(copy, "status"), "reservedFor");
    }
    put(c, copy, MODEL_MODIFIED);
  }
}

/* ---- the writer --------------------------------------------------------------------------- */

/* True when another claim than `self` has device driver/pool/device allocated (not as admin). */
static const char *device_taken(tc_cluster *c, json_t *self, json_t *dev) {
  size_t it = 0, i;
  const ts_map_slot *s;
  json_t *r;
  while (ts_map_next(&c->store, &it, &s)) {
    json_t *o = ((entry *)s->value)->obj;
    if (o == self || strcmp(json_string_value(json_object_get(o, "kind")) ?: "", "ResourceClaim"))
      continue;
    json_array_foreach(
        json_object_get(
            json_object_get(json_object_get(json_object_get(o, "status"), "allocation"), "devices"),
            "results"),
        i, r) {
      if (json_is_true(json_object_get(r, "adminAccess"))) continue;
      if (json_equal(json_object_get(r, "driver"), json_object_get(dev, "driver")) &&
          json_equal(json_object_get(r, "pool"), json_object_get(dev, "pool")) &&
          json_equal(json_object_get(r, "device"), json_object_get(dev, "device")))
        return ((entry *)s->value)->key;
    }
  }
  return NULL;
}

/* Writes the allocation into copy (the claim about to be stored), checking it. */
static void allocate(tc_cluster *c, json_t *claim, json_t *copy, const json_t *allocation,
                     const char *key) {
  json_t *st = json_object_get(copy, "status"), *r, *fin;
  size_t i;
  json_array_foreach(json_object_get(json_object_get(allocation, "devices"), "results"), i, r) {
    const char *other;
    if (json_is_true(json_object_get(r, "adminAccess"))) continue;
    if ((other = device_taken(c, claim, r)))
      tc_violation(c, "device %s/%s/%s allocated to %s and to %s",
                   json_string_value(json_object_get(r, "driver")),
                   json_string_value(json_object_get(r, "pool")),
                   json_string_value(json_object_get(r, "device")), other, key);
  }
  json_object_set_new(st, "allocation", json_deep_copy(allocation));
  fin = json_object_get(json_object_get(copy, "metadata"), "finalizers");
  if (!json_is_array(fin))
    json_object_set_new(json_object_get(copy, "metadata"), "finalizers", fin = json_array());
  json_array_append_new(fin, json_string(DELETE_PROTECTION));
}

/* The claim write as the API server would take it: the allocation in the bytes Tessera sends
 * (model_allocation_json), refused when the claim is gone or allocated already. */
static void reserve_json(tc_cluster *c, void *token, const char *ns, const char *name,
                         const char *claim_uid, const json_t *allocation, const char *pod_name,
                         const char *pod_uid) {
  json_t *claim = get(c, "ResourceClaim", ns, name), *copy, *st, *rf, *e;
  size_t from = c->queue.n, i;
  if (!claim || (claim_uid && *claim_uid && strcmp(meta_str(claim, "uid") ?: "", claim_uid))) {
    answer(c, token, TS_ENOTFOUND, from);
    return;
  }
  st = json_object_get(claim, "status");
  if (allocation && json_object_get(st, "allocation")) {
    tc_violation(c, "claim %s/%s allocated twice (for pod %s)", ns, name, pod_name);
    answer(c, token, TS_EELSEWHERE, from);
    return;
  }
  if (!allocation && !json_object_get(st, "allocation")) {
    tc_violation(c, "claim %s/%s reserved for pod %s without ever being allocated", ns, name,
                 pod_name);
    answer(c, token, TS_EHTTP, from);
    return;
  }
  copy = json_deep_copy(claim);
  if (!json_is_object(st = json_object_get(copy, "status")))
    json_object_set_new(copy, "status", st = json_object());
  if (allocation) {
    char key[700];
    snprintf(key, sizeof key, "claim %s/%s", ns, name);
    allocate(c, claim, copy, allocation, key);
  }
  if (!json_is_array(rf = json_object_get(st, "reservedFor")))
    json_object_set_new(st, "reservedFor", rf = json_array());
  json_array_foreach(rf, i, e)
    if (names_uid(e, pod_uid)) break;
  if (i == json_array_size(rf))
    json_array_append_new(
        rf, json_pack("{s:s, s:s, s:s}", "resource", "pods", "name", pod_name, "uid", pod_uid));
  put(c, copy, MODEL_MODIFIED);
  answer(c, token, TS_OK, from);
}

static void w_reserve(void *ud, void *token, const char *ns, const char *name,
                      const char *claim_uid, const model_allocation *alloc, const char *pod_name,
                      const char *pod_uid) {
  json_t *a = alloc ? model_allocation_json(alloc) : NULL;
  if (alloc && !a) tc_violation(ud, "claim %s/%s: the allocation could not be encoded", ns, name);
  reserve_json(ud, token, ns, name, claim_uid, a, pod_name, pod_uid);
  json_decref(a);
}

static void w_unreserve(void *ud, void *token, const char *ns, const char *name,
                        const char *pod_uid) {
  tc_cluster *c = ud;
  json_t *claim = get(c, "ResourceClaim", ns, name), *copy, *rf;
  size_t from = c->queue.n;
  if (!claim) {
    answer(c, token, TS_ENOTFOUND, from);
    return;
  }
  copy = json_deep_copy(claim);
  rf = json_object_get(json_object_get(copy, "status"), "reservedFor");
  for (size_t k = json_array_size(rf); k-- > 0;)
    if (names_uid(json_array_get(rf, k), pod_uid)) json_array_remove(rf, k);
  if (!json_array_size(rf)) { /* nobody left: kube-scheduler's unreserve deallocates */
    json_object_del(json_object_get(copy, "status"), "allocation");
    json_object_del(json_object_get(copy, "status"), "reservedFor");
  }
  put(c, copy, MODEL_MODIFIED);
  answer(c, token, TS_OK, from);
}

/* The claims of a pod must be allocated and reserved for it before it is bound. */
static void check_claims_reserved(tc_cluster *c, json_t *pod, const char *key) {
  const char *ns = meta_str(pod, "namespace"), *uid = meta_str(pod, "uid");
  json_t *pc;
  size_t i;
  json_array_foreach(json_object_get(json_object_get(pod, "spec"), "resourceClaims"), i, pc) {
    const char *name = claim_name_of(pod, pc);
    json_t *claim = name ? get(c, "ResourceClaim", ns, name) : NULL, *e;
    size_t k;
    bool reserved = false;
    if (!name && json_object_get(pc, "resourceClaimTemplateName")) continue; /* no claim needed */
    json_array_foreach(json_object_get(json_object_get(claim, "status"), "reservedFor"), k, e)
      reserved |= names_uid(e, uid);
    if (!claim || !json_object_get(json_object_get(claim, "status"), "allocation") || !reserved)
      tc_violation(c, "pod %s bound before its claim %s was allocated and reserved for it", key,
                   name ? name : "(none)");
  }
}

/* After a binding: no resource of the node over its allocatable. */
static void check_node(tc_cluster *c, const char *node, const char *pod) {
  const model_node *n = (const model_node *)model_get(c->truth, MODEL_NODE, NULL, node);
  if (!n) {
    tc_violation(c, "pod %s bound to node %s, which does not exist", pod, node);
    return;
  }
  for (uint32_t r = 0; r < n->nres; r++)
    if (n->used[r] > n->alloc[r])
      tc_violation(c, "node %s over-committed after binding %s: %s %lld of %lld", node, pod,
                   model_resource_name(model_resources_of(c->truth), (int)r), (long long)n->used[r],
                   (long long)n->alloc[r]);
}

/* The kubelet starts a bound pod: Running and Ready. */
static void start_pod(json_t *pod, const char *node) {
  json_t *st = json_object_get(pod, "status");
  json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
  if (!json_is_object(st)) json_object_set_new(pod, "status", st = json_object());
  json_object_set_new(st, "phase", json_string("Running"));
  json_object_set_new(st, "conditions",
                      json_pack("[{s:s, s:s}, {s:s, s:s}]", "type", "PodScheduled", "status",
                                "True", "type", "Ready", "status", "True"));
}

static void w_bind(void *ud, void *token, const char *ns, const char *name, const char *uid,
                   const char *node, int32_t gpu_index) {
  tc_cluster *c = ud;
  json_t *pod = get(c, "Pod", ns, name), *copy;
  size_t from = c->queue.n;
  char key[600], *k;
  snprintf(key, sizeof key, "%s/%s", ns, name);
  if (!pod) {
    answer(c, token, TS_ENOTFOUND, from);
    return;
  }
  if (uid && *uid && strcmp(meta_str(pod, "uid") ?: "", uid)) { /* precondition failed */
    answer(c, token, TS_ECONFLICT, from);
    return;
  }
  if (json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"))) {
    tc_violation(c, "pod %s bound twice (to %s, then %s)", key,
                 json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")),
                 node);
    answer(c, token, TS_ECONFLICT, from);
    return;
  }
  if (json_array_size(json_object_get(json_object_get(pod, "spec"), "schedulingGates"))) {
    tc_violation(c, "pod %s bound while it has scheduling gates (the server refuses it)", key);
    answer(c, token, TS_ECONFLICT, from);
    return;
  }
  check_claims_reserved(c, pod, key);
  copy = json_deep_copy(pod);
  start_pod(copy, node);
  if (gpu_index >= 0) { /* as the API server does with a Binding's annotations */
    json_t *md = json_object_get(copy, "metadata"), *an = json_object_get(md, "annotations");
    char idx[16];
    snprintf(idx, sizeof idx, "%d", (int)gpu_index);
    if (!json_is_object(an)) json_object_set_new(md, "annotations", an = json_object());
    json_object_set_new(an, "tessera.dev/gpu-index", json_string(idx));
  }
  put(c, copy, MODEL_MODIFIED);
  check_node(c, node, key);
  if (!ts_map_get(&c->bound, key, strlen(key)) && (k = ts_strdup(key)) &&
      ts_map_put(&c->bound, k, strlen(k), k, NULL) != TS_OK)
    ts_free(k);
  answer(c, token, TS_OK, from);
}

static void w_evict(void *ud, void *token, const char *ns, const char *name, const char *uid,
                    const char *reason) {
  tc_cluster *c = ud;
  json_t *pod = get(c, "Pod", ns, name);
  size_t from = c->queue.n;
  if (!reason || !*reason) tc_violation(c, "eviction of %s/%s without a reason", ns, name);
  if (!pod || (uid && *uid && strcmp(meta_str(pod, "uid") ?: "", uid))) {
    answer(c, token, TS_ENOTFOUND, from);
    return;
  }
  json_incref(pod);
  del(c, pod);
  pod_gone(c, pod);
  json_decref(pod);
  answer(c, token, TS_OK, from);
}

static void w_unschedulable(void *ud, void *token, const char *ns, const char *name,
                            const char *uid, const char *reason, const char *message, bool event) {
  tc_cluster *c = ud;
  (void)event;
  json_t *pod = get(c, "Pod", ns, name), *copy, *st;
  (void)uid;
  c->reports++;
  live_report_done(token); /* the report's end: this cluster answers at once */
  if (!pod) return;
  copy = json_deep_copy(pod);
  if (!json_is_object(st = json_object_get(copy, "status")))
    json_object_set_new(copy, "status", st = json_object());
  json_object_set_new(st, "conditions",
                      json_pack("[{s:s, s:s, s:s, s:s}]", "type", "PodScheduled", "status", "False",
                                "reason", reason, "message", message));
  put(c, copy, MODEL_MODIFIED);
}

/* ---- the public side ---------------------------------------------------------------------- */

tc_cluster *tc_new(uint64_t seed) {
  tc_cluster *c = ts_calloc(1, sizeof *c);
  if (!c) return NULL;
  ts_map_init(&c->store);
  ts_map_init(&c->bound);
  c->rng = seed ? seed * 2654435761u + 1 : 0;
  if (!(c->truth = model_new())) {
    ts_free(c);
    return NULL;
  }
  return c;
}

void tc_free(tc_cluster *c) {
  size_t it = 0;
  const ts_map_slot *s;
  if (!c) return;
  while (ts_map_next(&c->store, &it, &s)) {
    json_decref(((entry *)s->value)->obj);
    ts_free(s->value);
  }
  ts_map_free(&c->store);
  it = 0;
  while (ts_map_next(&c->bound, &it, &s)) ts_free(s->value);
  ts_map_free(&c->bound);
  for (size_t i = c->head; i < c->queue.n; i++) json_decref(c->queue.v[i].obj);
  ts_vec_free(&c->queue);
  for (size_t i = 0; i < c->violations.n; i++) ts_free(c->violations.v[i]);
  ts_vec_free(&c->violations);
  model_free(c->truth);
  ts_free(c);
}

live_writer tc_writer(tc_cluster *c) {
  return (live_writer){.claim_reserve = w_reserve,
                       .claim_unreserve = w_unreserve,
                       .bind = w_bind,
                       .evict = w_evict,
                       .unschedulable = w_unschedulable,
                       .ud = c};
}

void tc_attach(tc_cluster *c, live *l) {
  c->l = l;
}

void tc_set_time(tc_cluster *c, int64_t now_ns) {
  c->now_ns = now_ns;
}

static bool cluster_scoped(const char *kind) {
  static const char *const kinds[] = {"Node",           "Namespace",   "PriorityClass",
                                      "ResourceSlice",  "DeviceClass", "ClusterQueue",
                                      "ResourceFlavor", "Cohort",      "WorkloadPriorityClass"};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (!strcmp(kinds[i], kind)) return true;
  return false;
}

/* What the API server fills in: namespace "default" (namespaced kinds). */
static void default_namespace(json_t *obj) {
  if (!meta_str(obj, "namespace") &&
      !cluster_scoped(json_string_value(json_object_get(obj, "kind"))))
    json_object_set_new(json_object_get(obj, "metadata"), "namespace", json_string("default"));
}

/* ... and on create a uid and a creationTimestamp, which an update keeps. */
static void server_fields(tc_cluster *c, json_t *obj, json_t *old) {
  json_t *md = json_object_get(obj, "metadata");
  char buf[64];
  if (!meta_str(obj, "uid")) {
    if (old && meta_str(old, "uid"))
      snprintf(buf, sizeof buf, "%s", meta_str(old, "uid"));
    else
      snprintf(buf, sizeof buf, "00000000-0000-4000-8000-%012llx", (unsigned long long)++c->uids);
    json_object_set_new(md, "uid", json_string(buf));
  }
  if (!meta_str(obj, "creationTimestamp")) {
    if (old && meta_str(old, "creationTimestamp"))
      json_object_set_new(md, "creationTimestamp", json_string(meta_str(old, "creationTimestamp")));
    else if (c->now_ns) {
      ts_time_format(c->now_ns, buf, sizeof buf);
      json_object_set_new(md, "creationTimestamp", json_string(buf));
    }
  }
}

bool tc_apply(tc_cluster *c, json_t *obj) {
  char key[800];
  json_t *copy, *old;
  entry *e;
  const char *kind = json_string_value(json_object_get(obj, "kind"));
  if (!kind || !meta_str(obj, "name") || !json_is_object(json_object_get(obj, "metadata")))
    return false;
  copy = json_deep_copy(obj);
  default_namespace(copy);
  store_key(copy, key, sizeof key);
  e = ts_map_get(&c->store, key, strlen(key));
  old = e ? e->obj : NULL;
  server_fields(c, copy, old);
  put(c, copy, old ? MODEL_MODIFIED : MODEL_ADDED);
  if (!strcmp(kind, "Pod") && (e = ts_map_get(&c->store, key, strlen(key)))) make_claims(c, e->obj);
  if (!strcmp(kind, "ResourceClaimTemplate")) template_arrived(c);
  return true;
}

size_t tc_flush(tc_cluster *c) {
  size_t n = 0;
  while (c->head < c->queue.n) {
    delivery d = c->queue.v[c->head++];
    n++;
    if (!c->l) {
      json_decref(d.obj);
      continue;
    }
    if (d.is_event) {
      ts_err err;
      ts_err_clear(&err);
      model_obj *o = NULL;
      model_decode_opts opts = {.resources = model_resources_of(live_model(c->l))};
      if (model_decode(d.obj, &opts, &o, &err) != TS_OK)
        tc_violation(c, "the model refused a watch event: %s", err.text);
      else if (o && live_event(c->l, d.ev, o, &err) != TS_OK)
        tc_violation(c, "the loop refused a watch event: %s", err.text);
      json_decref(d.obj);
    } else {
      live_write_done(d.token, d.r);
    }
  }
  c->queue.n = c->head = 0;
  return n;
}

const model *tc_model(const tc_cluster *c) {
  return c->truth;
}

void tc_each(const tc_cluster *c, void (*fn)(void *ud, json_t *obj), void *ud) {
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&c->store, &it, &s)) fn(ud, ((entry *)s->value)->obj);
}

bool tc_bound_by_writer(const tc_cluster *c, const char *pod_key) {
  return ts_map_get(&c->bound, pod_key, strlen(pod_key)) != NULL;
}

size_t tc_writes(const tc_cluster *c) {
  return c->writes;
}

size_t tc_reports(const tc_cluster *c) {
  return c->reports;
}

bool tc_groups_ok(const sched_result *r, char *why, size_t cap) {
  size_t next = 0;
  for (size_t k = 0; k < r->ngroups; k++) {
    const sched_group *g = &r->groups[k];
    uint32_t bound = 0;
    if (g->first != next || !g->n)
      return snprintf(why, cap, "group %zu starts at %zu, not %zu", k, g->first, next), false;
    next = g->first + g->n;
    if (next > r->ndecisions) return snprintf(why, cap, "group %zu runs past the end", k), false;
    if (!g->gang && g->n != 1)
      return snprintf(why, cap, "group %zu has no gang and %u decisions", k, g->n), false;
    for (size_t i = g->first; i < next; i++) {
      const sched_decision *d = &r->decisions[i];
      if (d->group != k)
        return snprintf(why, cap, "decision %zu says group %u", i, d->group), false;
      if ((!d->gang) != (!g->gang) || (d->gang && strcmp(d->gang, g->gang)))
        return snprintf(why, cap, "decision %zu (%s) in group of %s", i, d->gang ? d->gang : "-",
                        g->gang ? g->gang : "-"),
               false;
      bound += d->kind == SCHED_BIND;
    }
    if (bound != g->nbound)
      return snprintf(why, cap, "group %zu: %u bound, says %u", k, bound, g->nbound), false;
    for (size_t j = 0; g->gang && j < k; j++)
      if (r->groups[j].gang && !strcmp(r->groups[j].gang, g->gang))
        return snprintf(why, cap, "%s in groups %zu and %zu", g->gang, j, k), false;
    if (g->event >= 0 && (size_t)g->event >= r->nevents)
      return snprintf(why, cap, "group %zu: event %lld", k, (long long)g->event), false;
    if (g->event >= 0 &&
        (r->events[g->event].decision < g->first || r->events[g->event].decision >= next))
      return snprintf(why, cap, "group %zu: its event's decision is elsewhere", k), false;
  }
  if (next != r->ndecisions)
    return snprintf(why, cap, "groups cover %zu of %zu decisions", next, r->ndecisions), false;
  for (size_t e = 0; e < r->nevents; e++) {
    const sched_wl_event *ev = &r->events[e];
    if ((ev->kind == SCHED_WL_ADMITTED || ev->kind == SCHED_WL_EVICTED) &&
        ev->decision < r->ndecisions && r->groups[r->decisions[ev->decision].group].event < 0)
      return snprintf(why, cap, "event %zu is in no group", e), false;
  }
  return true;
}
