/* scheduler/admit.c - Kueue admission of queued gangs, with placement.
 *
 * A gang whose pods carry kueue.x-k8s.io/queue-name is a workload of that LocalQueue. The
 * quota tree is built from the Kueue objects and charged with the gangs already running. Each
 * Kueue cycle takes one head per ClusterQueue in fair order; for each flavor the assigner
 * proposes, the scheduler checks that the pod set can really be placed on that flavor's nodes
 * (a veto otherwise), and a head that fits is admitted only if every pod is then placed on
 * the cycle's tentative view. Cycles repeat until one admits nothing, so one Tessera cycle
 * admits as much as the cluster and the quotas allow. This is how a gang is never admitted
 * on quota alone and left half Pending on a fragmented cluster. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_LABEL      "kueue.x-k8s.io/queue-name"
#define WPC_LABEL        "kueue.x-k8s.io/priority-class"
#define ADMIT_ROUNDS_MAX 100000 /* Kueue cycles per Tessera cycle (each moves some head) */

/* A queued gang as a Kueue workload. */
typedef struct qgang {
  q_workload wl;         /* the workload (wl.user = this) */
  sched_gang *g;         /* pending gang, or NULL for a running one */
  const model_pod **run; /* running members (arena), for admitted workloads */
  uint32_t nrun, cap;    /* entries */
  uint32_t *placed;      /* pending members' nodes once committed (UINT32_MAX: none) */
  uint32_t *podset_of;   /* pending member -> pod set index */
  bool decided;          /* decisions were written for it */
  bool failed;           /* evaluating it failed: reason says what (SCHED_WHY_ERROR) */
  bool vetoed;           /* quota would admit it on some flavor whose nodes could not hold it:
                            more nodes would help (SCHED_WHY_UNSCHEDULABLE) */
  const char *reason;    /* the last reason Kueue gave while it was a head (result arena) */
  sched_qref ref;        /* where it queues */
} qgang;

typedef struct admit {
  sched_view *v;    /* the cycle's view */
  sched_result *r;  /* decisions */
  q_tree *tree;     /* quotas and usage */
  q_queues *queues; /* pending workloads */
  qgang **pending;  /* queued pending gangs */
  size_t npending;  /* entries */
} admit;

/* Kueue's label first. Then Volcano's: the queue of the PodGroup the pod's annotation
 * scheduling.k8s.io/group-name names, or the annotation scheduling.volcano.sh/queue-name (a pod
 * without a PodGroup). Then KAI's: the queue of the PodGroup of annotation pod-group-name, else
 * the label kai.scheduler/queue (where KAI's pod-grouper reads it). A PodGroup without spec.queue
 * goes to its project's default queue ("default", "default-queue"), which both projects create
 * at install: when that queue (named or implied) does not exist here, the gang is scheduled
 * without quota; any other queue that does not exist keeps it waiting. Called per pod
 * per cycle: label lookups, and one model lookup for a PodGroup. */
bool sched__queue_ref(const model *m, const model_pod *p, sched_qref *out) {
  static const char *once[5], *defaults[2];
  const char *def;
  const model_labels *ann = &p->obj.annotations;
  const model_pod_group *pg = NULL;
  const char *v, *label;
  memset(out, 0, sizeof *out);
  if ((v = model_labels_get(&p->obj.labels, ts_intern_once(&once[0], QUEUE_LABEL)))) {
    out->local_queue = v, out->kind = MODEL_LOCAL_QUEUE;
    return true;
  }
  if ((v = model_labels_get(ann, ts_intern_once(&once[1], "scheduling.k8s.io/group-name")))) {
    out->kind = MODEL_VOLCANO_QUEUE;
    pg = (const model_pod_group *)model_get(m, MODEL_VOLCANO_POD_GROUP, p->obj.ns, v);
    out->queue = pg ? pg->queue : NULL;
  } else if ((v = model_labels_get(ann,
                                   ts_intern_once(&once[2], "scheduling.volcano.sh/queue-name")))) {
    out->kind = MODEL_VOLCANO_QUEUE, out->queue = ts_intern_cstr(v); /* annotations are copies */
    if (!out->queue) return false;
  } else {
    v = model_labels_get(ann, ts_intern_once(&once[3], "pod-group-name"));
    label = model_labels_get(&p->obj.labels, ts_intern_once(&once[4], "kai.scheduler/queue"));
    pg = v ? (const model_pod_group *)model_get(m, MODEL_KAI_POD_GROUP, p->obj.ns, v) : NULL;
    if (!pg && !label) return false;
    out->kind = MODEL_KAI_QUEUE;
    out->queue = pg && pg->queue ? pg->queue : label;
  }
  out->priority_class = pg ? pg->priority_class : NULL; /* labels and PodGroup fields: interned */
  def = ts_intern_once(&defaults[out->kind == MODEL_KAI_QUEUE], model_queue_default(out->kind));
  if (!out->queue || !*out->queue) out->queue = def;
  return out->queue && (out->queue != def || model_get(m, out->kind, NULL, out->queue));
}

const char *sched__queue_cq(const model *m, const char *ns, const sched_qref *ref) {
  const model_local_queue *lq;
  if (!ref->local_queue) return model_get(m, ref->kind, NULL, ref->queue) ? ref->queue : NULL;
  lq = (const model_local_queue *)model_get(m, MODEL_LOCAL_QUEUE, ns, ref->local_queue);
  return lq ? lq->cluster_queue : NULL;
}

/* Fills ps with the requests of p as Kueue counts them, in the quota tree's units (q_amount):
 * without the pod slot, which is not a container resource, and with the devices of its claims
 * (as the cycle resolved them) as the mapped quota resources (arena copy); a share of a GPU
 * counts its thousandths of nvidia.com/gpu (a gpu-memory share, whose fraction depends on the
 * node, counts a whole GPU). Returns false with *why set when a device class is not mapped. */
static bool podset_requests(sched_view *v, const sched_pending *p, q_podset *ps, const char **why) {
  int64_t extra[Q_DEVMAP_MAX_RESOURCES] = {0};
  uint32_t k = 0, nextra = 0;
  model_rq *copy, dev[Q_DEVMAP_MAX_RESOURCES + 1];
  const q_devmap *dm = v->cfg ? &v->cfg->queueing.devmap : NULL;
  const model_rlist *req = &p->pod->requests;
  char buf[TS_ERR_TEXT_MAX + 64];
  for (uint32_t i = 0; dm && dm->n && i < p->nclaims; i++) {
    ts_err err;
    ts_err_clear(&err);
    if (!p->claims[i].spec) continue;
    if (q_devmap_claim(dm, p->claims[i].spec, extra, &err) != TS_OK) {
      snprintf(buf, sizeof buf, "a claim of pod %s cannot be charged to quota: %s", p->pod->obj.key,
               err.text);
      *why = ts_arena_strndup(v->out, buf, strlen(buf));
      return false;
    }
  }
  for (uint32_t r = 0; dm && r < dm->nres; r++) { /* the mapped resources, by id */
    int id = model_resource_find(model_resources_of(v->m), dm->res[r]);
    if (!extra[r]) continue;
    if (id < 0) { /* no ClusterQueue covers it: decoding one would have given it an id */
      snprintf(buf, sizeof buf, "resource %s unavailable in ClusterQueue", dm->res[r]);
      *why = ts_arena_strndup(v->out, buf, strlen(buf));
      return false;
    }
    dev[nextra++] = (model_rq){(uint16_t)id, extra[r]};
  }
  if (model_pod_shares_gpu(p->pod) && v->share_res >= 0 && !p->pod->share_problem) {
    uint32_t e = 0; /* its share, in the tree's thousandths of a GPU */
    int32_t s = p->pod->gpu_share ? p->pod->gpu_share : 1000; /* gpu-memory: per node; whole */
    while (e < nextra && dev[e].id != v->share_res) e++;
    if (e == nextra) dev[nextra++] = (model_rq){(uint16_t)v->share_res, 0};
    dev[e].v = ts_add_sat(dev[e].v, s);
  }
  copy = ts_arena_alloc(v->arena, ((size_t)req->n + nextra + 1) * sizeof *copy);
  if (!copy) return false;
  for (uint32_t i = 0; i < req->n; i++) {
    uint16_t id = req->v[i].id;
    int64_t add = 0;
    if (id == MODEL_RES_PODS) continue;
    for (uint32_t e = 0; e < nextra; e++)
      if (dev[e].id == id) add = dev[e].v, dev[e].v = 0;
    copy[k++] = (model_rq){
        id, ts_add_sat(id == v->share_res ? ts_mul_sat(req->v[i].v, 1000) : req->v[i].v, add)};
  }
  for (uint32_t e = 0; e < nextra; e++) /* device-only resources, keeping id order */
    if (dev[e].v) {
      uint32_t at = k++;
      while (at > 0 && copy[at - 1].id > dev[e].id) copy[at] = copy[at - 1], at--;
      copy[at] = dev[e];
    }
  ps->requests = copy, ps->nrequests = k;
  return true;
}

static int podset_name_cmp(const void *a, const void *b) {
  return strcmp(((const q_podset *)a)->name, ((const q_podset *)b)->name);
}

/* True when every pod set is named by a role and no two share one. O(pod sets^2). */
static bool one_per_role(const q_podset *ps, uint32_t nps, const bool *role) {
  for (uint32_t k = 0; k < nps; k++) {
    if (!role[k]) return false;
    for (uint32_t i = 0; i < k; i++)
      if (ps[i].name == ps[k].name) return false;
  }
  return nps > 0;
}

/* Pod sets: runs of members of one shape and role (gang.c groups them). In a Kueue pod group
 * whose pods carry Kueue's role hash, each is named by it and they are in name order, as
 * Kueue's workload has them; otherwise they are ps-0, ps-1, ... in member order (biggest
 * first). podset_of[member] receives the index of its pod set. */
static bool build_podsets(sched_view *v, const sched_pending *pods, uint32_t n, q_workload *wl,
                          uint32_t *podset_of, const char **why) {
  q_podset *ps = ts_arena_alloc(v->arena, (n + 1) * sizeof *ps);
  uint32_t *first = ts_arena_alloc(v->arena, (n + 1) * sizeof *first), nps = 0;
  bool *role = ts_arena_alloc(v->arena, (n + 1) * sizeof *role);
  if (!ps || !first || !role) return false;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i + 1;
    const char *r = sched__role_of(pods[i].pod), *rj;
    char name[32];
    while (j < n && sched__same_shape(v, &pods[i], &pods[j]) &&
           ((rj = sched__role_of(pods[j].pod)) ? r && !strcmp(r, rj) : !r))
      j++;
    memset(&ps[nps], 0, sizeof ps[nps]);
    snprintf(name, sizeof name, "ps-%u", nps);
    role[nps] = r && strlen(r) < 200;
    ps[nps].name = ts_intern_cstr(role[nps] ? r : name);
    ps[nps].count = (int32_t)(j - i);
    ps[nps].tolerations = pods[i].pod->tolerations;
    ps[nps].ntolerations = pods[i].pod->ntolerations;
    ps[nps].node_selector = &pods[i].pod->node_selector;
    if (!podset_requests(v, &pods[i], &ps[nps], why)) return false;
    first[nps++] = i;
    i = j;
  }
  if (one_per_role(ps, nps, role)) { /* Kueue's order; the member runs stay where they are */
    for (uint32_t k = 0; k < nps; k++) ps[k].min_count = (int32_t)first[k]; /* carried along */
    qsort(ps, nps, sizeof *ps, podset_name_cmp);
    for (uint32_t k = 0; k < nps; k++) first[k] = (uint32_t)ps[k].min_count, ps[k].min_count = 0;
  }
  for (uint32_t k = 0; podset_of && k < nps; k++)
    for (uint32_t i = first[k]; i < first[k] + (uint32_t)ps[k].count; i++) podset_of[i] = k;
  wl->podsets = ps, wl->npodsets = nps;
  return true;
}

static int pod_member_cmp(const void *a, const void *b) {
  return strcmp((*(const model_pod *const *)a)->obj.key, (*(const model_pod *const *)b)->obj.key);
}

const char *sched__wl_priority_class(const model_pod *p, const sched_qref *ref) {
  static const char *once;
  const char *wpc = model_labels_get(&p->obj.labels, ts_intern_once(&once, WPC_LABEL));
  if (wpc) return wpc;
  if (ref && ref->priority_class) return ref->priority_class;
  return p->priority_class ? p->priority_class : "";
}

static void fill_workload(sched_view *v, q_workload *wl, const sched_qref *ref, const model_pod *p,
                          const char *key, const char *name, int64_t created, void *user) {
  static const char *once;
  const char *wpc = model_labels_get(&p->obj.labels, ts_intern_once(&once, WPC_LABEL));
  wl->ns = p->obj.ns;
  wl->name = name;
  wl->key = key;
  wl->local_queue = ref->local_queue;
  wl->cluster_queue = ref->local_queue ? NULL : ref->queue;
  wl->queue_kind = ref->kind;
  wl->priority = p->has_priority ? p->priority : q_priority(v->m, wpc, p->priority_class);
  if (wpc) wl->priority = q_priority(v->m, wpc, p->priority_class);
  if (ref->priority_class) wl->priority = q_priority(v->m, NULL, ref->priority_class);
  wl->queue_ns = created;
  wl->user = user;
}

/* ---- gangs already running: their admission, reconstructed ----------------------------- */

/* The flavor of a ClusterQueue's group that covers resource `res` and whose nodeLabels the
 * node carries (the first in order), else the group's first flavor. */
static const char *flavor_for(const sched_view *v, const model_cluster_queue *cq, int res,
                              const model_node *node) {
  for (uint32_t g = 0; g < cq->ngroups; g++) {
    const model_resource_group *grp = &cq->groups[g];
    const char *name = model_resource_name(model_resources_of(v->m), res);
    bool covers = false;
    for (uint32_t c = 0; name && c < grp->ncovered; c++) covers |= !strcmp(grp->covered[c], name);
    if (!covers || !grp->nflavors) continue;
    for (uint32_t f = 0; node && f < grp->nflavors; f++) {
      const model_resource_flavor *rf = (const model_resource_flavor *)model_get(
          v->m, MODEL_RESOURCE_FLAVOR, NULL, grp->flavors[f].flavor);
      bool match = rf != NULL;
      for (uint32_t l = 0; rf && l < rf->node_labels.n; l++)
        match &= model_labels_get(&node->obj.labels, rf->node_labels.v[l].key) ==
                 rf->node_labels.v[l].value;
      if (match) return grp->flavors[f].flavor;
    }
    return grp->flavors[0].flavor;
  }
  return NULL;
}

static const char *keep(admit *ad, const char *fmt, const char *a, const char *b);

const char *sched_pod_queue(const model *m, const model_pod *p) {
  sched_qref ref;
  return sched__queue_ref(m, p, &ref) ? sched__queue_cq(m, p->obj.ns, &ref) : NULL;
}

/* "LocalQueue ns/name", "Volcano Queue name" or "KAI Queue name" (result arena), for messages. */
static const char *queue_label(admit *ad, const qgang *q) {
  if (q->ref.local_queue) return keep(ad, "LocalQueue %s/%s", q->wl.ns, q->ref.local_queue);
  return keep(ad, q->ref.kind == MODEL_KAI_QUEUE ? "KAI Queue %s%s" : "Volcano Queue %s%s",
              q->ref.queue, NULL);
}

/* Evicts every running pod of a running gang, and records the workload's eviction (ev: its
 * queue and Kueue's reasons) when a pod was left to evict. */
/* Evicts the running pods of q; by: the first pod of the gang a preemption makes room for, or
 * NULL. */
static ts_rc evict_gang(admit *ad, qgang *q, const char *why, const model_pod *by,
                        sched_wl_event ev) {
  ev.kind = SCHED_WL_EVICTED;
  ev.ns = q->wl.ns;
  ev.ready_evicted_ns = -1;
  if (q->nrun) { /* Kueue's pods_ready_to_evicted_time: since the gang became ready */
    char key[TS_KEY_MAX];
    int64_t since;
    sched__gang_key(ad->v->m, q->run[0], key, sizeof key);
    if ((since = sched__ready_since(ad->v->state, key)) > 0)
      ev.ready_evicted_ns = ad->v->now_ns - since;
  }
  ev.priority_class = q->nrun ? sched__wl_priority_class(q->run[0], &q->ref) : "";
  if (!ev.cause) ev.cause = "";
  ev.local_queue = q->wl.local_queue;
  ev.decision = ad->r->ndecisions;
  for (uint32_t i = 0; i < q->nrun; i++) {
    ts_rc rc;
    if (q->run[i]->obj.deleted_ns) continue;
    rc = sched__decide(
        ad->v, ad->r,
        (sched_decision){.kind = SCHED_EVICT, .pod = q->run[i], .reason = why, .preemptor = by});
    if (rc != TS_OK) return rc;
  }
  ev.count = ad->r->ndecisions - ev.decision;
  return ev.count && ev.cluster_queue ? sched__event(ad->v, ad->r, &ev) : TS_OK;
}

/* A running gang whose ClusterQueue or LocalQueue has stopPolicy HoldAndDrain is evicted, as
 * Kueue evicts admitted workloads of a draining queue (reasons ClusterQueueStopped,
 * LocalQueueStopped). It stays charged until its pods are gone. */
static ts_rc drain(admit *ad, qgang *q, const model_local_queue *lq /* NULL: none */,
                   const model_cluster_queue *cq) {
  char why[700];
  const char *kept;
  if (q->wl.evicting) return TS_OK;                         /* its eviction was issued */
  if (sched__kueue_managed(ad->v, q->run[0])) return TS_OK; /* Kueue's controller drains */
  if (cq->stop_policy == MODEL_STOP_HOLD_AND_DRAIN)
    snprintf(why, sizeof why, "ClusterQueue %s is stopped (stopPolicy HoldAndDrain)", cq->obj.name);
  else if (lq && lq->stop_policy == MODEL_STOP_HOLD_AND_DRAIN)
    snprintf(why, sizeof why, "LocalQueue %s is stopped (stopPolicy HoldAndDrain)", lq->obj.key);
  else
    return TS_OK;
  if (!(kept = keep(ad, "%s%s", why, ""))) return TS_ENOMEM;
  q->wl.evicting = true;
  return evict_gang(ad, q, kept, NULL,
                    (sched_wl_event){.cluster_queue = ts_intern_cstr(cq->obj.name),
                                     .reason = cq->stop_policy == MODEL_STOP_HOLD_AND_DRAIN
                                                   ? "ClusterQueueStopped"
                                                   : "LocalQueueStopped"});
}

/* Charges a running queued gang to the tree. Gangs whose queue is unknown are not charged. */
static ts_rc charge_running(admit *ad, qgang *q) {
  sched_view *v = ad->v;
  const model_local_queue *lq;
  const model_cluster_queue *cq;
  q_admission *adm;
  sched_pending *members;
  const char *why = NULL;
  ts_err err;
  qsort(q->run, q->nrun, sizeof *q->run, pod_member_cmp); /* q->ref: running_gangs resolved it */
  fill_workload(v, &q->wl, &q->ref, q->run[0], q->wl.key, q->wl.key, q->run[0]->obj.created_ns, q);
  lq = q->ref.local_queue ? (const model_local_queue *)model_get(
                                v->m, MODEL_LOCAL_QUEUE, q->run[0]->obj.ns, q->ref.local_queue)
                          : NULL;
  if (lq)
    cq = (const model_cluster_queue *)model_get(v->m, MODEL_CLUSTER_QUEUE, NULL, lq->cluster_queue);
  else /* a Volcano or KAI Queue (a parent queue charges nothing: the tree has no such queue) */
    cq = q->ref.queue
             ? (const model_cluster_queue *)model_get(v->m, q->ref.kind, NULL, q->ref.queue)
             : NULL;
  if (!cq || (!lq && !q_tree_has_cq(ad->tree, q->ref.queue, q->ref.kind))) return TS_OK;
  if (!(members = ts_arena_alloc(v->arena, (q->nrun + 1) * sizeof *members))) return TS_ENOMEM;
  for (uint32_t i = 0; i < q->nrun; i++) {
    members[i] = (sched_pending){.pod = q->run[i]};
    if (sched__pod_claims(v, &members[i]) != TS_OK) return TS_ENOMEM;
  }
  if (!build_podsets(v, members, q->nrun, &q->wl, NULL, &why)) return why ? TS_OK : TS_ENOMEM;
  adm = ts_arena_alloc(v->arena, sizeof *adm);
  if (!adm ||
      !(adm->podsets = ts_arena_alloc(v->arena, (q->wl.npodsets + 1) * sizeof *adm->podsets)))
    return TS_ENOMEM;
  adm->cluster_queue = ts_intern_cstr(cq->obj.name);
  adm->npodsets = q->wl.npodsets;
  for (uint32_t i = 0, first = 0; i < q->wl.npodsets;
       first += (uint32_t)q->wl.podsets[i].count, i++) {
    const q_podset *ps = &q->wl.podsets[i];
    const model_node *node = q->run[first]->node;
    q_psa *a = &adm->podsets[i];
    a->name = ps->name, a->count = ps->count, a->mode = Q_FIT, a->nrf = 0;
    a->rf = ts_arena_alloc(v->arena, (ps->nrequests + 1) * sizeof *a->rf);
    if (!a->rf) return TS_ENOMEM;
    for (uint32_t k = 0; k < ps->nrequests; k++) {
      const char *fl = flavor_for(v, cq, ps->requests[k].id, node);
      if (fl)
        a->rf[a->nrf++] = (q_rflavor){ps->requests[k].id, fl, ps->requests[k].v * ps->count, Q_FIT};
    }
  }
  for (uint32_t i = 0; i < q->nrun; i++)
    q->wl.evicting |= sched__evicting(v->state, q->run[i]) || q->run[i]->obj.deleted_ns;
  q->wl.admission = adm;
  for (uint32_t i = 0; i < q->nrun; i++) { /* admitted when its last member was scheduled */
    int64_t t = model_pod_scheduled_ns(q->run[i]);
    if (t > q->wl.admitted_ns) q->wl.admitted_ns = t;
  }
  ts_err_clear(&err);
  if (drain(ad, q, lq, cq) != TS_OK || q_tree_admit(ad->tree, &q->wl, &err) == TS_ENOMEM)
    return TS_ENOMEM;
  return TS_OK; /* a queue that does not exist any more charges nothing */
}

static ts_rc running_gangs(admit *ad) {
  sched_view *v = ad->v;
  ts_map index;
  ts_rc rc;
  qgang **all = NULL;
  size_t n = 0, cap = 0;
  if ((rc = sched__view_pods(v)) != TS_OK) return rc;
  ts_map_init(&index);
  for (size_t i = 0; rc == TS_OK && i < v->nrunning; i++) {
    const model_pod *p = v->running[i];
    char key[TS_KEY_MAX];
    qgang *q;
    sched_qref ref;
    if (!sched__queue_ref(v->m, p, &ref)) continue;
    sched__gang_key(v->m, p, key, sizeof key);
    if (!(q = ts_map_get(&index, key, strlen(key)))) {
      if (!(q = ts_arena_alloc(v->arena, sizeof *q))) {
        rc = TS_ENOMEM;
        break;
      }
      memset(q, 0, sizeof *q);
      q->ref = ref;
      q->wl.key = ts_arena_strndup(v->arena, key, strlen(key));
      if (!q->wl.key || ts_map_put(&index, q->wl.key, strlen(q->wl.key), q, NULL) != TS_OK) {
        rc = TS_ENOMEM;
        break;
      }
      if (n == cap) {
        size_t ncap = cap ? cap * 2 : 16;
        qgang **na = ts_arena_alloc(v->arena, ncap * sizeof *na);
        if (!na) {
          rc = TS_ENOMEM;
          break;
        }
        if (n) memcpy(na, all, n * sizeof *na);
        all = na, cap = ncap;
      }
      all[n++] = q;
    }
    if (q->nrun == q->cap) {
      uint32_t ncap = q->cap ? q->cap * 2 : 8;
      const model_pod **np = ts_arena_alloc(v->arena, ncap * sizeof *np);
      if (!np) {
        rc = TS_ENOMEM;
        break;
      }
      if (q->nrun) memcpy(np, q->run, q->nrun * sizeof *np);
      q->run = np, q->cap = ncap;
    }
    q->run[q->nrun++] = p;
  }
  ts_map_free(&index);
  for (size_t i = 0; rc == TS_OK && i < n; i++) rc = charge_running(ad, all[i]);
  for (size_t i = 0; rc == TS_OK && i < n; i++) /* for their FINISHED events */
    rc = sched__admitted_seen(v, all[i]->run[0],
                              sched__queue_cq(v->m, all[i]->run[0]->obj.ns, &all[i]->ref),
                              &all[i]->ref);
  return rc;
}

/* ---- pending gangs: workloads, hooks, decisions ---------------------------------------- */

/* Partial admission down to the gang's minimum: the pod sets' minCounts add up to `needed`
 * (at least one pod per pod set, as Kueue's minCount), cutting the last pod sets first. */
static void set_min_counts(q_workload *wl, uint32_t needed) {
  int64_t total = 0, excess;
  for (uint32_t i = 0; i < wl->npodsets; i++) total += wl->podsets[i].count;
  excess = total - (int64_t)needed;
  for (uint32_t i = wl->npodsets; excess > 0 && i-- > 0;) {
    q_podset *ps = &wl->podsets[i];
    int64_t cut = excess < ps->count - 1 ? excess : ps->count - 1;
    if (cut > 0) ps->min_count = ps->count - (int32_t)cut;
    excess -= cut;
  }
}

static ts_rc pending_workload(admit *ad, sched_gang *g, const sched_qref *ref, qgang **out) {
  sched_view *v = ad->v;
  qgang *q = ts_arena_alloc(v->arena, sizeof *q);
  const model_pod **pods = ts_arena_alloc(v->arena, (g->npods + 1) * sizeof *pods);
  const char *key = g->key;
  if (!q || !pods) return TS_ENOMEM;
  memset(q, 0, sizeof *q);
  q->g = g;
  q->placed = ts_arena_alloc(v->arena, (g->npods + 1) * sizeof *q->placed);
  q->podset_of = ts_arena_alloc(v->arena, (g->npods + 1) * sizeof *q->podset_of);
  if (!q->placed || !q->podset_of) return TS_ENOMEM;
  for (uint32_t i = 0; i < g->npods; i++) pods[i] = g->pods[i].pod, q->placed[i] = UINT32_MAX;
  if (g->nbound) { /* more pods of a gang that runs (admitted) already: a workload of their own */
    char buf[700];
    snprintf(buf, sizeof buf, "%s#more", g->key);
    if (!(key = ts_arena_strndup(v->arena, buf, strlen(buf)))) return TS_ENOMEM;
  }
  q->ref = *ref;
  fill_workload(v, &q->wl, &q->ref, pods[0], key, g->name, g->created, q);
  q->wl.priority = g->priority;
  if (q->ref.priority_class) q->wl.priority = q_priority(v->m, NULL, q->ref.priority_class);
  q->wl.resume = g->nbound && sched__gang_needed(g); /* bound below its minimum */
  *out = q;
  if (!build_podsets(v, g->pods, g->npods, &q->wl, q->podset_of, &q->reason))
    return q->reason ? TS_OK : TS_ENOMEM; /* q->reason: it cannot be queued */
  set_min_counts(&q->wl, sched__gang_needed(g) ? sched__gang_needed(g) : 1);
  return TS_OK;
}

const sched_flavors *sched__flavors_of(sched_view *v, const char *const *names, uint32_t n) {
  sched_flavors *fl = ts_arena_alloc(v->arena, sizeof *fl);
  const model_resource_flavor **buf = ts_arena_alloc(v->arena, (n + 1) * sizeof *buf);
  char key[512] = "";
  size_t len = 0;
  if (!fl || !buf) return NULL;
  fl->n = 0;
  for (uint32_t i = 0; i < n; i++) {
    const model_resource_flavor *rf =
        (const model_resource_flavor *)model_get(v->m, MODEL_RESOURCE_FLAVOR, NULL, names[i]);
    bool dup = false;
    for (uint32_t k = 0; k < fl->n; k++) dup |= buf[k] == rf;
    if (!rf || dup) continue;
    buf[fl->n++] = rf;
    len += (size_t)snprintf(key + len, sizeof key - (len < sizeof key ? len : sizeof key), "%s%s",
                            len ? "," : "", names[i]);
  }
  fl->v = buf;
  fl->key = fl->n ? ts_intern_cstr(key) : NULL;
  return fl->n ? fl : NULL;
}

/* A gang made of the first `count` members of pod set ps, for placement. */
static sched_gang podset_gang(const qgang *q, uint32_t ps, int32_t count) {
  sched_gang sub = *q->g;
  uint32_t first = 0;
  while (first < q->g->npods && q->podset_of[first] != ps) first++;
  sub.pods = q->g->pods + first;
  sub.npods = (uint32_t)count;
  sub.min = count;
  sub.nbound = 0;
  sub.nmembers = (uint32_t)count;
  return sub;
}

static void set_flavors(sched_gang *g, const sched_flavors *fl) {
  for (uint32_t i = 0; i < g->npods; i++) g->pods[i].flavors = fl;
}

/* q_hooks.placeable: can the pod set's pods be placed on the flavor's nodes right now? */
static bool hook_placeable(void *ctx, const q_candidate *c, char *why, size_t cap) {
  admit *ad = ctx;
  sched_view *v = ad->v;
  qgang *q = c->wl->user;
  const char *names[1] = {c->flavor};
  sched_gang sub;
  uint32_t *placed, best = 0, got;
  if (!q || !q->g) return true;
  /* When quota needs preemption, the victims will free nodes too: the head waits for them
   * and is placed in a later cycle, when it fits. Checking now would veto every preemption. */
  if (c->mode == Q_PREEMPT) return true;
  sub = podset_gang(q, c->podset, c->count);
  placed = ts_arena_alloc(v->arena, (sub.npods + 1) * sizeof *placed);
  if (!placed) return false;
  set_flavors(&sub, sched__flavors_of(v, names, 1));
  got = sched__place_gang(v, &sub, sub.npods, placed, &best);
  for (uint32_t i = 0; got && i < sub.npods; i++) /* a check only: give everything back */
    if (placed[i] != UINT32_MAX) {
      sched__unplace(v, sub.pods[i].pod, placed[i]);
      sched__dra_release(v, &sub.pods[i]);
    }
  set_flavors(&sub, NULL);
  if (got) return true;
  if (sched__gang_failure(v, &sub)) {
    q->failed = true;
    snprintf(why, cap, "%s", sched__gang_failure(v, &sub));
  } else {
    q->vetoed = true;
    snprintf(why, cap, "%u of its %u pods fit on the nodes of flavor %s", best, sub.npods,
             c->flavor);
  }
  return false;
}

/* Gives back the placements of a workload's pending members. */
static void unplace_workload(sched_view *v, qgang *q) {
  for (uint32_t i = 0; i < q->g->npods; i++) {
    if (q->placed[i] == UINT32_MAX) continue;
    sched__unplace(v, q->g->pods[i].pod, q->placed[i]);
    sched__dra_release(v, &q->g->pods[i]);
    q->placed[i] = UINT32_MAX;
  }
}

/* The members an admission covers (the first `count` of each pod set), each restricted to
 * the flavors of its pod set, as one gang in member order (biggest first, whatever the order
 * of the pod sets); at[k] = index of its k-th pod in q->g->pods. */
static bool admitted_gang(sched_view *v, qgang *q, const q_admission *adm, sched_gang *out,
                          uint32_t *at) {
  uint32_t n = 0;
  const sched_flavors **fl = ts_arena_alloc(v->arena, (adm->npodsets + 1) * sizeof *fl);
  int32_t *taken = ts_arena_alloc(v->arena, (adm->npodsets + 1) * sizeof *taken);
  *out = *q->g;
  out->pods = ts_arena_alloc(v->arena, (q->g->npods + 1) * sizeof *out->pods);
  if (!out->pods || !fl || !taken) return false;
  for (uint32_t ps = 0; ps < adm->npodsets; ps++) {
    const q_psa *a = &adm->podsets[ps];
    const char **names = ts_arena_alloc(v->arena, (a->nrf + 1) * sizeof *names);
    if (!names) return false;
    for (uint32_t k = 0; k < a->nrf; k++) names[k] = a->rf[k].flavor;
    fl[ps] = sched__flavors_of(v, names, a->nrf);
    taken[ps] = 0;
  }
  for (uint32_t i = 0; i < q->g->npods; i++) {
    uint32_t ps = q->podset_of[i];
    if (ps >= adm->npodsets || taken[ps] >= adm->podsets[ps].count) continue;
    q->g->pods[i].flavors = fl[ps];
    out->pods[n] = q->g->pods[i];
    at[n++] = i, taken[ps]++;
  }
  out->npods = out->nmembers = n;
  out->min = (int32_t)n, out->nbound = 0;
  return true;
}

/* q_hooks.commit: place every admitted pod for real, the whole gang at once (so that it goes
 * to the narrowest topology domain that holds all of it), each pod set on the nodes of its
 * flavors. */
static bool hook_commit(void *ctx, const q_workload *wl, const q_admission *adm, char *why,
                        size_t cap) {
  admit *ad = ctx;
  sched_view *v = ad->v;
  qgang *q = wl->user;
  sched_gang whole;
  uint32_t *at, *placed, best = 0, got;
  if (!q || !q->g) return true;
  at = ts_arena_alloc(v->arena, (q->g->npods + 1) * sizeof *at);
  placed = ts_arena_alloc(v->arena, (q->g->npods + 1) * sizeof *placed);
  if (!at || !placed || !admitted_gang(v, q, adm, &whole, at)) return false;
  got = sched__place_gang(v, &whole, whole.npods, placed, &best);
  if (got < whole.npods) {
    unplace_workload(v, q);
    set_flavors(q->g, NULL);
    if (sched__gang_failure(v, &whole)) {
      q->failed = true;
      snprintf(why, cap, "%s", sched__gang_failure(v, &whole));
    } else {
      q->vetoed = true;
      snprintf(why, cap, "only %u of the %u admitted pods could be placed", best, whole.npods);
    }
    return false;
  }
  for (uint32_t k = 0; k < whole.npods; k++) q->placed[at[k]] = placed[k];
  return true;
}

/* "PodGroup team-a/train" (result arena), or NULL for a gang of one. */
static const char *gang_label(admit *ad, const sched_gang *g) {
  char buf[600];
  if (g->kind == SCHED_GANG_SINGLE) return NULL;
  snprintf(buf, sizeof buf, "%s %s", g->what, g->name);
  return ts_arena_strndup(ad->v->out, buf, strlen(buf));
}

static ts_rc pend_gang(admit *ad, const sched_gang *g, const char *reason, sched_pending_why why) {
  const char *label = gang_label(ad, g);
  if (!reason) return TS_ENOMEM;
  for (uint32_t i = 0; i < g->npods; i++) {
    ts_rc rc = sched__decide(ad->v, ad->r,
                             (sched_decision){.kind = SCHED_PENDING,
                                              .pod = g->pods[i].pod,
                                              .reason = reason,
                                              .gang = label,
                                              .why = why});
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* Every pod of a queued gang waits, for the kind of reason why: Kueue did not admit it. */
static ts_rc pend_all(admit *ad, qgang *q, const char *reason, sched_pending_why why) {
  q->decided = true;
  return pend_gang(ad, q->g, reason, why);
}

static const char *keep(admit *ad, const char *fmt, const char *a, const char *b) {
  char buf[1200];
  snprintf(buf, sizeof buf, fmt, a, b ? b : "");
  return ts_arena_strndup(ad->v->out, buf, strlen(buf));
}

/* An admitted head: its placed pods are bound, others (partial admission) wait. */
static ts_rc decide_admitted(admit *ad, qgang *q, const q_admission *adm) {
  char buf[600];
  const char *label = NULL, *rest = NULL;
  sched_wl_event ev = {.kind = SCHED_WL_ADMITTED,
                       .cluster_queue = adm->cluster_queue,
                       .ns = q->wl.ns,
                       .local_queue = q->wl.local_queue,
                       .priority_class = sched__wl_priority_class(q->g->pods[0].pod, &q->ref),
                       .waited_ns = ad->v->now_ns - q->wl.queue_ns,
                       .decision = ad->r->ndecisions};
  uint32_t first = 0;
  ts_rc rc;
  while (first < q->g->npods && q->placed[first] == UINT32_MAX) first++;
  ev.decision += first; /* its first BIND */
  /* More pods of a workload that runs already (q->g->nbound) were admitted with it: Kueue
   * counts one admission per workload, so no second event. */
  if (first < q->g->npods && !q->g->nbound && (rc = sched__event(ad->v, ad->r, &ev)) != TS_OK)
    return rc;
  snprintf(buf, sizeof buf, "%s %s", q->g->kind == SCHED_GANG_SINGLE ? "pod" : q->g->what,
           q->g->name);
  label = ts_arena_strndup(ad->v->out, buf, strlen(buf));
  for (uint32_t i = 0; i < q->g->npods; i++) {
    const sched_pending *p = &q->g->pods[i];
    if (q->placed[i] != UINT32_MAX) {
      rc = sched__decide(
          ad->v, ad->r,
          sched__bind(ad->v, p, q->placed[i], q->g->kind == SCHED_GANG_SINGLE ? NULL : label));
    } else {
      if (!rest)
        rest = keep(
            ad, "admitted to ClusterQueue %s with fewer pods (partial admission); this one waits",
            adm->cluster_queue, NULL);
      rc = sched__decide(ad->v, ad->r,
                         (sched_decision){.kind = SCHED_PENDING,
                                          .pod = p->pod,
                                          .reason = rest,
                                          .gang = label,
                                          .why = SCHED_WHY_QUEUED});
    }
    if (rc != TS_OK) return rc;
  }
  q->decided = true;
  return TS_OK;
}

/* Victims of a preemption: every running pod of their gangs is evicted. */
static ts_rc evict_victims(admit *ad, const q_result *res, const q_decision *d) {
  for (size_t k = d->victim0; k < d->victim0 + d->nvictims; k++) {
    const q_victim *vic = &res->victims[k];
    qgang *q = vic->wl->user, *by = vic->preemptor->user;
    char who[700];
    const char *why;
    ts_rc rc;
    if (by && by->g)
      snprintf(who, sizeof who, "%s %s", by->g->kind == SCHED_GANG_SINGLE ? "pod" : by->g->what,
               by->g->name);
    else
      snprintf(who, sizeof who, "%s", vic->preemptor->key);
    why = keep(ad, "preempted to make room for %s (%s)", who, q_preempt_reason_name(vic->reason));
    if (!q || !why || vic->wl->evicting) continue; /* its eviction was issued already */
    ((q_workload *)vic->wl)->evicting = true;      /* not issued again in a later round */
    rc = evict_gang(ad, q, why, by && by->g && by->g->npods ? by->g->pods[0].pod : NULL,
                    (sched_wl_event){.cluster_queue = vic->wl->admission
                                                          ? vic->wl->admission->cluster_queue
                                                          : q_tree_cq_of(ad->tree, vic->wl),
                                     .reason = "Preempted",
                                     .preempting_cq = q_tree_cq_of(ad->tree, vic->preemptor),
                                     .preempt_reason = q_preempt_reason_name(vic->reason)});
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* Records a round that had heads as one of Kueue's admission attempts. */
static ts_rc attempted(admit *ad, const q_result *res, double s) {
  sched_result *r = ad->r;
  struct sched_attempt *a;
  bool admitted = false;
  for (size_t i = 0; i < res->ndecisions && !admitted; i++)
    admitted = res->decisions[i].outcome == Q_ADMITTED;
  if (!(r->nattempts & (r->nattempts + 1))) { /* 0, 1, 3, 7...: double */
    a = ts_arena_alloc(ad->v->out, (2 * r->nattempts + 2) * sizeof *a);
    if (!a) return TS_ENOMEM;
    if (r->nattempts) memcpy(a, r->attempts, r->nattempts * sizeof *a);
    r->attempts = a;
  }
  r->attempts[r->nattempts++] = (struct sched_attempt){admitted, s};
  return TS_OK;
}

/* Applies one Kueue cycle's decisions; *moved counts the heads that left the front of their
 * queue (admitted, or parked as inadmissible so that the next head gets its turn). */
static ts_rc apply_round(admit *ad, const q_result *res, size_t *moved) {
  *moved = 0;
  for (size_t i = 0; i < res->ndecisions; i++) {
    const q_decision *d = &res->decisions[i];
    qgang *q = d->wl->user;
    ts_rc rc = TS_OK;
    if (d->parked) (*moved)++;
    if (!q || !q->g || q->decided) continue;
    if (d->outcome == Q_ADMITTED) {
      rc = decide_admitted(ad, q, &d->admission);
      (*moved)++;
    } else if (d->outcome == Q_PREEMPTING) {
      rc = evict_victims(ad, res, d);
      if (rc == TS_OK) rc = pend_all(ad, q, keep(ad, "%s", d->reason, NULL), SCHED_WHY_QUEUED);
    } else if (d->reason) {
      q->reason = keep(ad, "%s", d->reason, NULL);
      q->failed = d->failed;
    }
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* A workload whose ClusterQueue is inactive never reaches the head: say why (Kueue's condition
 * reason and the problem behind it), or NULL when its queue is active. */
static const char *inactive_queue(admit *ad, const qgang *q) {
  const char *cq = q_tree_cq_of(ad->tree, &q->wl), *problem = NULL, *reason;
  char buf[900];
  if (!cq || !(reason = q_tree_cq_inactive(ad->tree, cq, &problem))) return NULL;
  snprintf(buf, sizeof buf, "%s %s is inactive (%s): %s",
           q->ref.local_queue               ? "ClusterQueue"
           : q->ref.kind == MODEL_KAI_QUEUE ? "KAI Queue"
                                            : "Volcano Queue",
           cq, reason, problem ? problem : "see tessera check");
  return keep(ad, "%s", buf, NULL);
}

/* Workloads left without a decision after the last round: the last reason Kueue gave while
 * it was a head, else that it waits in its queue. */
static ts_rc decide_rest(admit *ad) {
  for (size_t i = 0; i < ad->npending; i++) {
    qgang *q = ad->pending[i];
    const char *why = NULL;
    ts_rc rc;
    if (q->decided) continue;
    sched_pending_why kind = q->failed   ? SCHED_WHY_ERROR
                             : q->vetoed ? SCHED_WHY_UNSCHEDULABLE /* quota held: nodes lack */
                                         : SCHED_WHY_QUEUED;
    why = q->reason;
    if (!why && (why = inactive_queue(ad, q))) kind = SCHED_WHY_BLOCKED;
    if (!why) why = keep(ad, "queued in %s: waits for its turn", queue_label(ad, q), NULL);
    if (!why) return TS_ENOMEM;
    q->decided = true;
    rc = pend_gang(ad, q->g, why, kind);
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

static const char *not_queued(admit *ad, qgang *q, q_queued how) {
  if (!q->wl.local_queue && how == Q_NO_CLUSTER_QUEUE)
    return keep(ad, "%s does not exist, or is a parent queue (only leaf queues hold jobs)",
                queue_label(ad, q), NULL);
  switch (how) {
  case Q_NO_LOCAL_QUEUE:
    return keep(ad, "LocalQueue %s/%s does not exist", q->wl.ns, q->wl.local_queue);
  case Q_NO_CLUSTER_QUEUE:
    return keep(ad, "the ClusterQueue of LocalQueue %s/%s does not exist", q->wl.ns,
                q->wl.local_queue);
  case Q_HELD:
    return keep(ad, "LocalQueue %s/%s is stopped (stopPolicy)", q->wl.ns, q->wl.local_queue);

  default:
    return NULL;
  }
}

/* "making the workload of PodGroup t/x failed: ..." (result arena), for an error met while
 * turning a gang into its workload. */
static const char *failed_workload(admit *ad, const sched_gang *g, ts_rc rc) {
  char buf[900];
  if (g->kind == SCHED_GANG_SINGLE)
    snprintf(buf, sizeof buf, "admission of pod %s failed: %s", g->pods[0].pod->obj.key,
             ts_strerror(rc));
  else
    snprintf(buf, sizeof buf, "admission of %s %s failed: %s", g->what, g->name, ts_strerror(rc));
  return ts_arena_strndup(ad->v->out, buf, strlen(buf));
}

/* Queues the gangs whose pods name a queue; handled[i] is set for each of them (the cycle's other
 * paths leave them alone). */
static ts_rc enqueue(admit *ad, sched_gang *gangs, size_t n, bool *handled) {
  ad->pending = ts_arena_alloc(ad->v->arena, (n + 1) * sizeof *ad->pending);
  if (!ad->pending) return TS_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    qgang *q;
    q_queued how;
    ts_rc rc;
    const char *label, *waits;
    sched_qref ref;
    bool oom;
    if (i + 4 < n && gangs[i + 4].npods) __builtin_prefetch(gangs[i + 4].pods[0].pod->obj.labels.v);
    if (handled[i] || !gangs[i].npods || gangs[i].blocked || gangs[i].gated ||
        !sched__queue_ref(ad->v->m, gangs[i].pods[0].pod, &ref))
      continue; /* gated gangs wait, outside their queue, as Kueue's gated pods do; Kueue's
                   own (queueing.admission: kueue) were decided by sched__kueue_place */
    handled[i] = true;
    if (gangs[i].kind != SCHED_GANG_SINGLE) { /* fewer members than its minimum: not a workload */
      if (!(label = gang_label(ad, &gangs[i]))) return TS_ENOMEM;
      waits = sched__gang_waits(ad->v, &gangs[i], label, &oom);
      if (oom) return TS_ENOMEM;
      if (waits) {
        rc = pend_gang(ad, &gangs[i], waits, SCHED_WHY_GANG); /* blocked gangs are not here */
        if (rc != TS_OK) return rc;
        continue;
      }
    }
    rc = sched__gang_faulted(ad->v, SCHED_STAGE_ADMISSION, &gangs[i])
             ? TS_EFAULT
             : pending_workload(ad, &gangs[i], &ref, &q);
    if (rc == TS_ENOMEM) return rc;
    if (rc != TS_OK) { /* this workload alone: its pods wait, saying why */
      if ((rc = pend_gang(ad, &gangs[i], failed_workload(ad, &gangs[i], rc), SCHED_WHY_ERROR)))
        return rc;
      continue;
    }
    ad->pending[ad->npending++] = q;
    if (!q->wl.podsets) { /* its devices cannot be charged to quota */
      if ((rc = pend_all(ad, q, q->reason, SCHED_WHY_BLOCKED)) != TS_OK) return rc;
      continue;
    }
    if ((rc = q_queues_add(ad->queues, ad->tree, &q->wl, &how)) != TS_OK) return rc;
    if (how != Q_QUEUED &&
        (rc = pend_all(ad, q, not_queued(ad, q, how), SCHED_WHY_BLOCKED)) != TS_OK)
      return rc; /* its queue is missing or stopped: no node would help */
  }
  return TS_OK;
}

/* The tree's problems, copied into the result for those who report them (tessera run). */
static ts_rc keep_problems(admit *ad) {
  const char *const *p;
  size_t n = q_tree_problems(ad->tree, &p);
  if (!n) return TS_OK;
  if (!(ad->r->problems = ts_arena_alloc(ad->v->out, n * sizeof *ad->r->problems)))
    return TS_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (!(ad->r->problems[i] = ts_arena_strndup(ad->v->out, p[i], strlen(p[i])))) return TS_ENOMEM;
  ad->r->nproblems = n;
  return TS_OK;
}

ts_rc sched__admit(sched_view *v, sched_gang *gangs, size_t n, sched_result *r, bool *handled) {
  admit ad = {v, r, NULL, NULL, NULL, 0};
  q_hooks hooks = {hook_placeable, hook_commit, &ad};
  q_result res, last = {0};
  ts_err err;
  ts_rc rc;
  size_t moved = 1;
  ts_err_clear(&err);
  if ((rc = q_tree_build(v->m, &v->cfg->queueing, &ad.tree, &err)) != TS_OK) return rc;
  rc = keep_problems(&ad);
  if (rc == TS_OK && !(ad.queues = q_queues_new())) rc = TS_ENOMEM;
  if (rc == TS_OK) q_queues_set_memo(ad.queues, sched__memo(v->state));
  if (rc == TS_OK) rc = running_gangs(&ad);
  if (rc == TS_OK) rc = enqueue(&ad, gangs, n, handled);
  for (int round = 0; rc == TS_OK && moved && round < ADMIT_ROUNDS_MAX; round++) {
    double t0 = ts_time_mono_s();
    rc = q_cycle(ad.tree, ad.queues, &v->cfg->queueing, &hooks, v->now_ns, &res, &err);
    if (rc == TS_OK && res.ndecisions) rc = attempted(&ad, &res, ts_time_mono_s() - t0);
    if (rc == TS_OK) rc = apply_round(&ad, &res, &moved);
    q_result_free(&last);
    last = res;
  }
  if (rc == TS_OK) rc = decide_rest(&ad);
  if (rc == TS_OK) rc = q_report_build(ad.tree, ad.queues, v->out, &r->queues);
  q_result_free(&last);
  q_queues_free(ad.queues);
  q_tree_free(ad.tree);
  return rc;
}

ts_rc sched_queue_tree(const model *m, const sched_config *cfg, ts_arena *arena, q_tree **out,
                       ts_err *err) {
  sched_view v;
  admit ad;
  ts_rc rc;
  memset(&v, 0, sizeof v);
  memset(&ad, 0, sizeof ad);
  v.m = m, v.cfg = cfg, v.arena = arena, v.out = arena;
  v.pol = sched__policy(cfg ? cfg->scoring : SCHED_BINPACK);
  v.share_res = model_resource_find(model_resources_of(m), "nvidia.com/gpu"); /* quota units */
  ad.v = &v;
  if ((rc = q_tree_build(m, cfg ? &cfg->queueing : NULL, &ad.tree, err)) != TS_OK) return rc;
  if ((rc = running_gangs(&ad)) != TS_OK) {
    q_tree_free(ad.tree);
    return ts_err_set(err, rc, "queue usage: %s", ts_strerror(rc));
  }
  *out = ad.tree;
  return TS_OK;
}
