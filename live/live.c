/* live/live.c - the in-cluster loop: events into the model, cycles into writes, writes'
 * answers into the model. See live.h for the guarantees. */
#include "live/live_int.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- maps that own their keys ------------------------------------------------------------ */

void *live__oget(const ts_map *m, const char *key) {
  oentry *e = ts_map_get(m, key, strlen(key));
  return e ? e->value : NULL;
}

/* Puts value under key (copied); the replaced value (or NULL) goes to *old. */
ts_rc live__oput(ts_map *m, const char *key, void *value, void **old) {
  size_t len = strlen(key);
  oentry *e = ts_map_get(m, key, len);
  if (old) *old = e ? e->value : NULL;
  if (e) {
    e->value = value;
    return TS_OK;
  }
  if (!(e = ts_malloc(sizeof *e + len + 1))) return TS_ENOMEM;
  e->value = value;
  memcpy(e->key, key, len + 1);
  if (ts_map_put(m, e->key, len, e, NULL) != TS_OK) {
    ts_free(e);
    return TS_ENOMEM;
  }
  return TS_OK;
}

/* Removes key; returns its value (NULL when absent). */
void *live__odel(ts_map *m, const char *key) {
  oentry *e = ts_map_del(m, key, strlen(key));
  void *v = e ? e->value : NULL;
  ts_free(e);
  return v;
}

/* Frees every entry, and every value with free_value (may be NULL). */
void live__oclear(ts_map *m, void (*free_value)(void *)) {
  const ts_map_slot *s;
  size_t it = 0;
  while (ts_map_next(m, &it, &s)) {
    oentry *e = s->value;
    if (free_value) free_value(e->value);
    ts_free(e);
  }
  ts_map_free(m);
}

/* ---- set-up ----------------------------------------------------------------------------- */

live *live_new(const sched_config *cfg, const live_writer *writer) {
  live *l = ts_calloc(1, sizeof *l);
  if (!l) return NULL;
  l->cfg = cfg;
  l->w = *writer;
  ts_map_init(&l->assumed_pods);
  ts_map_init(&l->reported);
  ts_map_init(&l->attempts);
  ts_map_init(&l->evicted);
  ts_map_init(&l->problems);
  ts_map_init(&l->qstatus);
  ts_map_init(&l->history);
  ts_map_init(&l->starts);
  l->qstatus_ns = -1;
  if (!(l->m = model_new()) || !(l->state = sched_state_new()) || !(l->qm = qmetrics_new())) {
    live_free(l);
    return NULL;
  }
  qmetrics_kueue(l->qm, !cfg->kueue_admits); /* Kueue's controller exports its own */
  return l;
}

static void free_gang(gang_op *g);
static void wl_drop(void *w);

void live_free(live *l) {
  if (!l) return;
  live__oclear(&l->assumed_pods, NULL);
  for (size_t i = l->qhead; i < l->qn; i++) free_gang(l->queue[i]); /* never started */
  ts_free(l->queue);
  for (size_t i = l->reports_next; i < l->reports.n; i++) ts_free(l->reports.v[i].ns);
  ts_vec_free(&l->reports);
  live__oclear(&l->reported, ts_free);
  live__oclear(&l->attempts, ts_free);
  live__oclear(&l->evicted, wl_drop);
  live__oclear(&l->problems, NULL);
  live__oclear(&l->history, ts_free);
  live__oclear(&l->starts, ts_free);
  live__free_qstatus(l);
  sched_state_free(l->state);
  qmetrics_free(l->qm);
  model_free(l->m);
  ts_free(l);
}

const model *live_model(const live *l) {
  return l->m;
}

model *live_model_lend(live *l) {
  return l->m;
}

ts_rc live_shadow(live *l, const char *name, int64_t now_ns, sched_shadow *out, ts_err *err) {
  ts_rc rc = sched_shadow_eval(l->m, l->cfg, name, now_ns, out, err);
  l->dirty = false; /* the comparison moved pods and put them back: nothing changed */
  return rc;
}

void live_get_stats(const live *l, live_stats *out) {
  *out = l->st;
}

void live_kind_unseen(live *l, const char *group, const char *kind) {
  model_set_seen(l->m, model_kind_in_group(group, kind), false);
  l->dirty = true;
}

bool live_dirty(const live *l) {
  return l->dirty;
}

bool live_busy(const live *l) {
  return l->st.inflight > 0 || l->qhead < l->qn;
}

/* ---- events ----------------------------------------------------------------------------- */

static void evicted_pod_gone(live *l, const char *key);

/* Keeps an assumed binding over a stale event; drops it once the server shows the pod bound
 * (to our node or another) or gone. An assumed claim needs nothing here: the model keeps its
 * assumption until a version with an allocation arrives (model_claim_assume). */
static ts_rc pod_event(live *l, model_event ev, const char *uid) {
  const char *node = *uid ? live__oget(&l->assumed_pods, uid) : NULL;
  model_pod *p;
  if (ev == MODEL_DELETED && *uid) ts_free(live__odel(&l->attempts, uid));
  if (!node) {
    if (ev == MODEL_DELETED && *uid) ts_free(live__odel(&l->reported, uid));
    return TS_OK;
  }
  p = (model_pod *)model_get_uid(l->m, uid);
  if (ev == MODEL_DELETED || !p || p->node_name) {
    live__odel(&l->assumed_pods, uid);
    if (ev == MODEL_DELETED) ts_free(live__odel(&l->reported, uid));
    return TS_OK;
  }
  return model_pod_bind(l->m, p, node);
}

ts_rc live_event(live *l, model_event ev, model_obj *o, ts_err *err) {
  char uid[256];
  bool pod = o->kind == MODEL_POD;
  const model_pod *before = pod && o->uid ? (const model_pod *)model_get_uid(l->m, o->uid) : NULL;
  bool ran = before && before->phase != MODEL_PHASE_SUCCEEDED;
  ts_rc rc;
  ts_strlcpy(uid, o->uid ? o->uid : "", sizeof uid); /* o is stolen by the model */
  if (pod && ev == MODEL_DELETED && o->key) evicted_pod_gone(l, o->key);
  if (pod && ev == MODEL_ADDED && !((model_pod *)o)->node_name &&
      ((model_pod *)o)->scheduler_name == l->cfg->scheduler_name && !((model_pod *)o)->ngates)
    l->arrived++; /* kube-scheduler's active queue, until the next cycle */
  rc = model_apply(l->m, o, ev, err);
  l->dirty = true;
  if (rc != TS_OK || !pod) return rc;
  if (ran && ev != MODEL_DELETED) /* it may have just finished */
    live__record_run(l, (const model_pod *)model_get_uid(l->m, uid));
  if ((rc = pod_event(l, ev, uid)) != TS_OK)
    ts_err_set(err, rc, "Pod: keeping an assumed binding: %s", ts_strerror(rc));
  return rc;
}

ts_rc live_remove(live *l, model_kind kind, const char *ns, const char *name) {
  char uid[256] = "";
  const model_obj *o = model_get(l->m, kind, ns, name);
  ts_rc rc;
  if (!o) return TS_OK;
  if (kind == MODEL_POD && o->uid)
    ts_strlcpy(uid, o->uid, sizeof uid); /* the tombstone may lack it */
  if (kind == MODEL_POD && o->key) evicted_pod_gone(l, o->key);
  rc = model_remove(l->m, kind, ns, name);
  l->dirty = true;
  if (rc != TS_OK || kind != MODEL_POD) return rc == TS_ENOTFOUND ? TS_OK : rc;
  return pod_event(l, MODEL_DELETED, uid);
}

/* ---- assumptions ------------------------------------------------------------------------ */

static void assume_pod(live *l, const pod_op *p) {
  model_pod *mp = (model_pod *)model_get_uid(l->m, p->uid);
  const char *node = ts_intern_cstr(p->node);
  if (!mp || !node || live__oput(&l->assumed_pods, p->uid, (void *)node, NULL) != TS_OK) return;
  if (p->gpu_index >= 0) /* counted on the GPU the binding's annotation will name */
    model_pod_bind_gpu(l->m, mp, node, p->gpu_index);
  else
    model_pod_bind(l->m, mp, node);
}

/* Undoes a pod's assumed binding (its claims are handled by the caller). */
static void forget_pod(live *l, const pod_op *p) {
  model_pod *mp = (model_pod *)model_get_uid(l->m, p->uid);
  const char *node = live__odel(&l->assumed_pods, p->uid);
  if (mp && node && mp->node_name == node) model_pod_bind(l->m, mp, NULL);
  l->st.rolled_back++;
}

/* ---- writes ----------------------------------------------------------------------------- */

/* Fills the token w for a write about to be issued; counts it. */
static wr *new_wr(live *l, wr *w, wkind kind, gang_op *g, uint32_t pod, uint32_t claim) {
  *w = (wr){l, kind, g, pod, claim, ts_time_mono_s()};
  l->st.inflight++;
  l->st.writes++;
  if (g) g->outstanding++;
  return w;
}

/* The string fields of a workload event. */
#define WL_STRINGS(ev)                                                                             \
  {                                                                                                \
    &(ev)->cluster_queue, &(ev)->ns, &(ev)->local_queue, &(ev)->priority_class, &(ev)->reason,     \
        &(ev)->cause, &(ev)->preempting_cq, &(ev)->preempt_reason                                  \
  }

void live__wl_hold(sched_wl_event *ev) {
  const char **f[] = WL_STRINGS(ev);
  for (size_t i = 0; i < sizeof f / sizeof *f; i++)
    if (*f[i]) *f[i] = ts_intern_ref(*f[i], strlen(*f[i]));
}

void live__wl_release(sched_wl_event *ev) {
  const char **f[] = WL_STRINGS(ev);
  for (size_t i = 0; i < sizeof f / sizeof *f; i++) ts_intern_unref(*f[i]), *f[i] = NULL;
}

static void free_gang(gang_op *g) {
  live__wl_release(&g->adm);
  for (uint32_t i = 0; i < g->npods; i++) {
    pod_op *p = &g->pods[i];
    for (uint32_t k = 0; k < p->nclaims; k++) {
      ts_free(p->claims[k].name);
      ts_free(p->claims[k].uid);
      model_allocation_free(&p->claims[k].alloc);
    }
    ts_free(p->claims);
    ts_free(p->ns), ts_free(p->name), ts_free(p->uid), ts_free(p->node);
  }
  ts_free(g->pods);
  ts_free(g);
}

static void issue_unreserve(live *l, gang_op *g, uint32_t pod, uint32_t claim) {
  pod_op *p = &g->pods[pod];
  wr *w = new_wr(l, &p->claims[claim].unreserve, W_UNRESERVE, g, pod, claim);
  l->w.claim_unreserve(l->w.ud, w, p->ns, p->claims[claim].name, p->uid);
}

/* A pod's placement failed: forget it, and unreserve the claims reserved for it. */
static void roll_back_pod(live *l, gang_op *g, uint32_t i, bool write) {
  pod_op *p = &g->pods[i];
  forget_pod(l, p);
  for (uint32_t k = 0; k < p->nclaims; k++) {
    model_claim_forget(l->m, p->ns, p->claims[k].name);
    if (write && p->claims[k].reserved) issue_unreserve(l, g, i, k);
  }
}

static void start_binds(live *l, gang_op *g) {
  g->phase = PHASE_BIND;
  for (uint32_t i = 0; i < g->npods; i++) {
    pod_op *p = &g->pods[i];
    wr *w = new_wr(l, &p->bind, W_BIND, g, i, 0);
    l->w.bind(l->w.ud, w, p->ns, p->name, p->uid, p->node, p->gpu_index);
  }
}

/* Issues the reserve writes of a gang (or its binds when it has no claim to reserve). */
static void start_gang(live *l, gang_op *g) {
  g->phase = PHASE_RESERVE;
  for (uint32_t i = 0; i < g->npods; i++) {
    pod_op *p = &g->pods[i];
    assume_pod(l, p);
    for (uint32_t k = 0; k < p->nclaims; k++) {
      claim_op *c = &p->claims[k];
      const model_allocation *alloc = c->has_alloc ? &c->alloc : NULL;
      wr *w;
      /* out of memory only loses the assumption: the write still goes */
      (void)model_claim_assume(l->m, p->ns, c->name, alloc, p->name, p->uid);
      w = new_wr(l, &c->reserve, W_RESERVE, g, i, k);
      l->w.claim_reserve(l->w.ud, w, p->ns, c->name, c->uid, alloc, p->name, p->uid);
    }
  }
  if (!g->outstanding) start_binds(l, g);
  if (!g->outstanding) free_gang(g);
}

/* Every reserve write of g has answered: bind, or undo what landed. */
static void reserves_done(live *l, gang_op *g) {
  if (!g->failed) {
    start_binds(l, g);
    return;
  }
  g->phase = PHASE_ROLLBACK;
  for (uint32_t i = 0; i < g->npods; i++) roll_back_pod(l, g, i, true);
}

/* Drops a reference to a workload's eviction record (NULL is a no-op). */
static void wl_put(wl_evict *w) {
  if (w && !--w->refs) {
    live__wl_release(&w->ev);
    ts_free(w);
  }
}

static void wl_drop(void *w) {
  wl_put(w);
}

/* One pod of an evicted workload is gone (deleted, or its eviction failed or found it gone):
 * when it was the last, the workload's quota is released. */
static void wl_pod_gone(live *l, wl_evict *w) {
  if (!w || !w->left || --w->left) return;
  if (w->counted) qmetrics_eviction_latency(l->qm, &w->ev, ts_time_mono_s() - w->landed_s);
}

/* The pod of key was deleted: if it was evicted, its workload has one pod fewer. */
static void evicted_pod_gone(live *l, const char *key) {
  wl_evict *w = live__odel(&l->evicted, key);
  if (!w) return;
  wl_pod_gone(l, w);
  wl_put(w);
}

/* Whether the model still shows the pod of key ("ns/name") alive. */
static bool pod_still_there(const live *l, const char *key) {
  const model_obj *o = model_get_key(l->m, MODEL_POD, key);
  return o && !o->deleted_ns;
}

static void evict_done(live *l, evict_op *e, ts_rc r) {
  wl_evict *w = e->wl;
  void *old = NULL;
  if (r == TS_OK || r == TS_ENOTFOUND)
    l->st.evicted += r == TS_OK;
  else
    sched_state_forget_eviction(l->state, e->key); /* a later cycle tries again */
  if (w && r == TS_OK && !w->counted) {
    qmetrics_evicted(l->qm, &w->ev);
    w->counted = true;
    w->landed_s = ts_time_mono_s();
  }
  if (w && r == TS_OK && pod_still_there(l, e->key) &&
      live__oput(&l->evicted, e->key, w, &old) == TS_OK) {
    w->refs++; /* until its pod is gone */
    if (old) wl_pod_gone(l, old), wl_put(old);
  } else if (w) {
    wl_pod_gone(l, w); /* refused (the pod stays and counts no more), or gone already */
  }
  wl_put(e->wl);
  ts_free(e);
}

/* A gang's writes have all answered: a Kueue admission counts once a pod of it is bound. */
static void gang_done(live *l, gang_op *g) {
  bool bound = false;
  for (uint32_t i = 0; i < g->npods && !bound; i++) bound = g->pods[i].bound;
  if (g->adm.cluster_queue && bound) qmetrics_admitted(l->qm, &g->adm);
  free_gang(g);
}

/* Starts the cycle's queued gangs while fewer than LIVE_WRITES_INFLIGHT writes are in flight
 * (a gang starts whole, whatever its size): a cycle binding 59,000 pods held 59,000 writes at
 * once (150 MB at 100,000 pods). No cycle runs until every gang has started and answered. */
static void pump(live *l) {
  if (l->pumping) return;
  l->pumping = true;
  while (l->qhead < l->qn && l->st.inflight < LIVE_WRITES_INFLIGHT)
    start_gang(l, l->queue[l->qhead++]);
  if (l->qhead == l->qn) {
    ts_free(l->queue);
    l->queue = NULL, l->qhead = l->qn = 0;
  }
  l->pumping = false;
}

/* After a write ended: more gangs, or the reports once everything has answered. */
static void after_write(live *l) {
  pump(l);
  if (!live_busy(l) && l->reports.n) live__send_reports(l);
}

void live_write_done(void *token, ts_rc r) {
  wr *w = token;
  live *l = w->l;
  gang_op *g = w->g;
  l->st.inflight--;
  l->dirty = true;
  if (w->kind == W_EVICT) {
    evict_done(l, (evict_op *)w, r);
    after_write(l);
    return;
  }
  g->outstanding--;
  if (w->kind == W_RESERVE) {
    claim_op *c = &g->pods[w->pod].claims[w->claim];
    c->reserved = r == TS_OK;
    if (r != TS_OK) g->failed = true;
    if (!g->outstanding) reserves_done(l, g);
  } else if (w->kind == W_BIND) {
    if (r == TS_OK) {
      pod_attempts *a = live__odel(&l->attempts, g->pods[w->pod].uid);
      g->pods[w->pod].bound = true;
      l->st.bound++;
      double now = ts_time_mono_s();
      if (a)
        qmetrics_scheduled(l->qm, l->cfg->scheduler_name, now - a->first_s, a->n,
                           now - w->issued_s);
      ts_free(a);
    } else if (r != TS_ENOTLEADER) { /* the attempt ended in an error; the pod is tried again */
      qmetrics_attempt(l->qm, l->cfg->scheduler_name, "error");
    }
    if (r != TS_OK) {
      roll_back_pod(l, g, w->pod, r != TS_ENOTLEADER);
    }
  }
  if (!g->outstanding) gang_done(l, g);
  after_write(l);
}

/* ---- cycles ----------------------------------------------------------------------------- */

static char *dup_or_empty(const char *s) {
  return ts_strdup(s ? s : "");
}

/* Copies what the writes of a BIND decision need: the model may change before they answer. */
static ts_rc fill_pod(pod_op *p, const sched_decision *d) {
  p->ns = dup_or_empty(d->pod->obj.ns);
  p->name = dup_or_empty(d->pod->obj.name);
  p->uid = dup_or_empty(d->pod->obj.uid);
  p->node = dup_or_empty(d->node->obj.name);
  p->gpu_index = d->gpu_shared ? (int32_t)d->gpu_index : -1;
  if (!p->ns || !p->name || !p->uid || !p->node) return TS_ENOMEM;
  if (d->nclaims && !(p->claims = ts_calloc(d->nclaims, sizeof *p->claims))) return TS_ENOMEM;
  for (uint32_t k = 0; k < d->nclaims; k++, p->nclaims++) {
    const sched_claim *c = &d->claims[k];
    claim_op *o = &p->claims[k];
    o->name = dup_or_empty(c->name);
    o->uid = dup_or_empty(c->claim ? c->claim->obj.uid : "");
    if (!c->allocated) {
      if (dra_result_allocation(&c->result, &o->alloc) != TS_OK) return TS_ENOMEM;
      o->has_alloc = true;
    }
    if (!o->name || !o->uid) return TS_ENOMEM;
  }
  return TS_OK;
}

/* The cycle's groups that bind (a gang, or a pod outside any), in decision order, as gangs of
 * writes in *out: each gang's pods allocated once, for its bindings only (an array per gang
 * sized for every binding of the cycle took 2.4 GB for 5,430 single pods, issue 16), with its
 * Kueue admission when it has one. */
static ts_rc build_gangs(const sched_result *res, gang_op ***out, size_t *n) {
  gang_op **gangs = ts_calloc(res->nbound + 1, sizeof *gangs);
  ts_rc rc = gangs ? TS_OK : TS_ENOMEM;
  *n = 0;
  for (size_t k = 0; rc == TS_OK && k < res->ngroups; k++) {
    const sched_group *gr = &res->groups[k];
    gang_op *g;
    if (!gr->nbound) continue;
    if (!(g = gangs[(*n)++] = ts_calloc(1, sizeof *g)) ||
        !(g->pods = ts_calloc(gr->nbound, sizeof(pod_op)))) {
      rc = TS_ENOMEM;
      break;
    }
    for (size_t i = gr->first; rc == TS_OK && i < gr->first + gr->n; i++)
      if (res->decisions[i].kind == SCHED_BIND)
        rc = fill_pod(&g->pods[g->npods++], &res->decisions[i]);
    if (gr->event >= 0 && res->events[gr->event].kind == SCHED_WL_ADMITTED) {
      g->adm = res->events[gr->event];
      live__wl_hold(&g->adm);
    }
  }
  if (rc != TS_OK) {
    for (size_t i = 0; gangs && i < *n; i++)
      if (gangs[i]) free_gang(gangs[i]);
    ts_free(gangs);
    return rc;
  }
  *out = gangs;
  return TS_OK;
}

/* An eviction whose token cannot be made is not issued; a later cycle decides it again. wl is
 * the Kueue workload the pod is part of, or NULL. */
static void issue_evict(live *l, const sched_decision *d, wl_evict *wl) {
  size_t n = strlen(d->pod->obj.key);
  evict_op *e = ts_malloc(sizeof *e + n + 1);
  if (!e) {
    sched_state_forget_eviction(l->state, d->pod->obj.key);
    return;
  }
  e->wl = wl;
  if (wl) wl->refs++, wl->left++;
  memcpy(e->key, d->pod->obj.key, n + 1);
  new_wr(l, &e->token, W_EVICT, NULL, 0, 0);
  l->w.evict(l->w.ud, &e->token, d->pod->obj.ns, d->pod->obj.name, d->pod->obj.uid, d->reason);
}

/* Reports the problems of the Kueue objects that are new this cycle, and forgets those gone so
 * that one coming back is reported again. */
static void report_problems(live *l, const sched_result *res) {
  uintptr_t cycle = (uintptr_t)l->st.cycles;
  size_t it = 0;
  const ts_map_slot *s;
  TS_VEC(oentry *) gone = {0};
  l->st.queue_problems = res->nproblems;
  for (size_t i = 0; i < res->nproblems; i++) {
    void *old = NULL;
    bool known = ts_map_get(&l->problems, res->problems[i], strlen(res->problems[i])) != NULL;
    if (live__oput(&l->problems, res->problems[i], (void *)cycle, &old) != TS_OK) continue;
    if (!known && l->w.queue_problem)
      l->w.queue_problem(l->w.ud, q_problem_object(l->m, res->problems[i]), res->problems[i]);
  }
  while (ts_map_next(&l->problems, &it, &s))
    if ((uintptr_t)((oentry *)s->value)->value != cycle) (void)ts_vec_push(&gone, s->value);
  for (size_t i = 0; i < gone.n; i++) {
    ts_map_del(&l->problems, gone.v[i]->key, strlen(gone.v[i]->key));
    ts_free(gone.v[i]);
  }
  ts_vec_free(&gone);
}

/* A Kueue workload's eviction record, referenced once by the caller (NULL when out of memory:
 * it is then not counted). */
static wl_evict *new_wl_evict(const sched_wl_event *ev) {
  wl_evict *w = ts_calloc(1, sizeof *w);
  if (w) w->ev = *ev, w->refs = 1, live__wl_hold(&w->ev);
  return w;
}

#define FLUSH_S 300.0 /* kube-scheduler's podMaxInUnschedulablePodsDuration */

/* kube-scheduler's attempts: a pod bound is attempted; a pod left pending (other than for its
 * gates or backoff) is attempted in a cycle run because something changed, and in one cycle
 * every FLUSH_S otherwise (kube-scheduler retries unschedulable pods on cluster events and
 * after 5 minutes). The idle cycles in between, each second, look up no pending pod. */
static void count_attempts(live *l, const sched_result *res, bool changed, double t0) {
  bool all = changed || t0 - l->attempts_flush_s >= FLUSH_S;
  if (all) l->attempts_flush_s = t0;
  for (size_t i = 0; i < res->ndecisions; i++) {
    const sched_decision *d = &res->decisions[i];
    pod_attempts *a;
    bool pend = d->kind == SCHED_PENDING;
    if ((d->kind != SCHED_BIND && !pend) || (pend && !all) ||
        (pend && (d->why == SCHED_WHY_GATED || d->why == SCHED_WHY_BACKOFF)))
      continue;
    if (!d->pod->obj.uid || !*d->pod->obj.uid) continue;
    if (!(a = live__oget(&l->attempts, d->pod->obj.uid))) {
      if (!(a = ts_calloc(1, sizeof *a))) continue;
      a->first_s = t0;
      if (live__oput(&l->attempts, d->pod->obj.uid, a, NULL) != TS_OK) {
        ts_free(a);
        continue;
      }
    }
    a->n++;
    if (pend)
      qmetrics_attempt(l->qm, l->cfg->scheduler_name,
                       d->why == SCHED_WHY_ERROR ? "error" : "unschedulable");
  }
}

#define ROOMS_EVERY_NS (60 * 1000000000LL) /* the GPU room measured at most this often */

/* The GPU room for the metrics (a pass over the nodes, each with free GPUs weighed against
 * the shapes of the GPU pods the cycle left pending), at most once a minute. */
static void measure_rooms(live *l, const sched_result *res, int64_t now_ns) {
  sched_gpu_room *rooms;
  size_t nshapes, nrooms;
  if (l->rooms_ns && now_ns - l->rooms_ns < ROOMS_EVERY_NS) return;
  if (sched_gpu_rooms_after(l->m, l->cfg, now_ns, res, &rooms, &nrooms, &nshapes) != TS_OK) return;
  qmetrics_rooms(l->qm, rooms, nrooms, l->cfg->topology, l->cfg->ntopology);
  ts_free(rooms);
  l->rooms_ns = now_ns;
}

ts_rc live_cycle(live *l, int64_t now_ns, bool *ran, ts_err *err) {
  live_places *places;
  wl_evict *wl = NULL;
  sched_result res;
  gang_op **gangs = NULL;
  size_t n = 0;
  double t0;
  ts_rc rc;
  *ran = false;
  if (live_busy(l)) return TS_OK;
  t0 = ts_time_mono_s();
  if ((rc = sched_cycle(l->m, l->cfg, l->state, now_ns, &res, err)) != TS_OK) return rc;
  *ran = true;
  count_attempts(l, &res, l->dirty, t0);
  for (size_t e = 0; e < res.nevents; e++) /* what the cycle saw, not a write: counted now */
    if (res.events[e].kind == SCHED_WL_READY || res.events[e].kind == SCHED_WL_FINISHED)
      qmetrics_workload(l->qm, &res.events[e]);
  l->arrived = 0;
  l->dirty = false;
  l->st.cycles++;
  l->st.last_cycle_s = ts_time_mono_s() - t0;
  /* (the room and the places first: the gauges rendered now carry them) */
  measure_rooms(l, &res, now_ns);
  places = live__places(l, &res, now_ns);
  qmetrics_cycle(l->qm, l->m, &res, l->st.last_cycle_s, l->cfg->queueing.fair_sharing);
  ts_log(TS_LOG_DEBUG, "cycle %llu: %zu bound, %zu pending, %zu evicted in %.1f ms",
         (unsigned long long)l->st.cycles, res.nbound, res.npending, res.nevicted,
         l->st.last_cycle_s * 1e3);
  if ((rc = build_gangs(&res, &gangs, &n)) != TS_OK) {
    live__places_free(places);
    sched_result_free(&res);
    return ts_err_set(err, rc, "out of memory");
  }
  report_problems(l, &res);
  live__write_queue_status(l, &res, now_ns);
  /* Evictions first, and pending reports copied: binds change the model the decisions point
   * into. The reports go out once the bindings have answered. */
  for (size_t i = 0, e = 0, end = 0; i < res.ndecisions; i++) {
    if (res.decisions[i].kind == SCHED_PENDING)
      live__report_pending(l, places, &res.decisions[i], now_ns);
    if (res.decisions[i].kind != SCHED_EVICT) continue;
    for (; e < res.nevents && res.events[e].decision <= i; e++)
      if (res.events[e].kind == SCHED_WL_EVICTED && res.events[e].decision == i) {
        wl_put(wl);
        wl = new_wl_evict(&res.events[e]); /* its evictions are the next count decisions */
        end = i + res.events[e].count;
      }
    issue_evict(l, &res.decisions[i], i < end ? wl : NULL);
  }
  wl_put(wl);
  live__places_free(places);
  sched_result_free(&res);
  l->queue = gangs, l->qhead = 0, l->qn = n;
  pump(l);
  if (!live_busy(l)) live__send_reports(l); /* else when the last write answers */
  return TS_OK;
}

void live_set_estimator(live *l, live_estimator fn, void *ud) {
  l->estimate = fn, l->estimate_ud = ud;
}

void live_set_role(live *l, qmetrics_role role) {
  qmetrics_role_set(l->qm, role);
}

ts_rc live_metrics(const live *l, ts_buf *out) {
  static const struct {
    ts_prom_family f;
    size_t offset; /* of its uint64_t in live_stats */
  } stats[] = {
      {{"tessera_cycles_total", "counter", "Scheduling cycles run.", {NULL}},
       offsetof(live_stats, cycles)},
      {{"tessera_pods_bound_total", "counter", "Bindings that landed.", {NULL}},
       offsetof(live_stats, bound)},
      {{"tessera_pods_rolled_back_total",
        "counter",
        "Assumed placements undone because a write failed.",
        {NULL}},
       offsetof(live_stats, rolled_back)},
      {{"tessera_evictions_total", "counter", "Evictions that landed.", {NULL}},
       offsetof(live_stats, evicted)},
      {{"tessera_unschedulable_reports_total",
        "counter",
        "PodScheduled=False updates issued (one per pod and distinct reason).",
        {NULL}},
       offsetof(live_stats, unschedulable)},
      {{"tessera_writes_total", "counter", "Writes issued to the API server.", {NULL}},
       offsetof(live_stats, writes)},
      {{"tessera_writes_inflight", "gauge", "Writes in flight.", {NULL}},
       offsetof(live_stats, inflight)},
      {{"tessera_queue_status_writes_total",
        "counter",
        "ClusterQueue and LocalQueue status writes issued.",
        {NULL}},
       offsetof(live_stats, queue_status)},
      {{"tessera_queue_problems",
        "gauge",
        "Problems of the Kueue objects (cohort cycles, missing flavors) in the last cycle.",
        {NULL}},
       offsetof(live_stats, queue_problems)},
  };
  static const ts_prom_family objects = {
      "tessera_model_objects", "gauge", "Objects in the model, by kind.", {"kind", "group", NULL}};
  ts_prom p = {out, TS_OK};
  for (size_t i = 0; i < sizeof stats / sizeof *stats; i++) {
    uint64_t v;
    memcpy(&v, (const char *)&l->st + stats[i].offset, sizeof v);
    ts_prom_one(&p, &stats[i].f, (double)v);
  }
  if (p.rc == TS_OK) p.rc = qmetrics_write(l->qm, l->m, l->cfg, l->arrived, out);
  ts_prom_head(&p, &objects);
  for (int k = 0; k < MODEL_KIND_COUNT; k++)
    ts_prom_sample(&p, &objects, (const char *[]){model_kind_name(k), model_kind_api_of(k)->group},
                   (double)model_count(l->m, k));
  return p.rc;
}
