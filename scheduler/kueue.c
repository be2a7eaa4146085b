/* scheduler/kueue.c - Kueue admits, Tessera places (queueing.admission: kueue).
 *
 * With Kueue's controller running, Kueue owns admission: it makes a Workload for each job of a
 * LocalQueue, reserves quota, runs the admission checks, writes the admission (the
 * ClusterQueue, a ResourceFlavor for each resource of each pod set and, with topology-aware
 * scheduling, how many pods go to which topology domain) and then unsuspends or ungates the
 * job. Tessera charges no quota a second time: it finds the Workload of each pending gang and
 *   - when Kueue has not admitted it (no Admitted condition, evicted, deactivated, or no
 *     Workload yet), its pods wait with Kueue's own message (WaitingForQuota);
 *   - when it is admitted, places the pods Kueue admitted, all of them or none: each pod set
 *     on the nodes of its flavors (their nodeLabels and tolerations), and where Kueue assigned
 *     topology domains, exactly as many pods in each domain as the assignment says (a pod
 *     whose nodeSelector already names a domain, as Kueue's TopologyUngater sets it, counts
 *     for that one); without an assignment, in the narrowest configured domain that holds the
 *     whole gang, bin-packed, with DRA claims and GPU shares as always.
 *
 * A gang Tessera would hold for a PodGroup or an owner it has not seen is placed all the same:
 * the Workload says what runs together.
 *
 * A pod belongs to the Workload named by its annotation kueue.x-k8s.io/workload (set by Kueue
 * on admitted jobs' pods), else of its Kueue pod group (label kueue.x-k8s.io/pod-group-name:
 * the Workload has the group's name), else the Workload that owns it or one of its owners
 * (a plain pod, its Job, the JobSet or training job above it). Its pod set is its label
 * kueue.x-k8s.io/podset (set by Kueue at admission), else its role hash (pod groups), else
 * the Workload's only pod set. */
#include "scheduler/sched_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OWNER_DEPTH 4 /* owners walked up from a pod: Pod -> Job -> JobSet, with room */

/* What the cycle knows of one Workload: its pods that hold nodes, per pod set. */
typedef struct kwl {
  const model_workload *w;
  uint32_t *bound;       /* per pod set: pods bound and counted */
  const model_pod **run; /* those pods (arena) */
  uint32_t *run_ps;      /* their pod sets */
  uint32_t nrun, cap;    /* entries */
} kwl;

struct sched_kueue {
  ts_map by_owner; /* owner uid -> const model_workload * */
  ts_map wls;      /* Workload key -> kwl (pods bound) */
  bool running;    /* wls holds the running pods */
};

void sched__kueue_free(sched_view *v) {
  if (!v->kueue) return;
  ts_map_free(&v->kueue->by_owner);
  ts_map_free(&v->kueue->wls);
  ts_free(v->kueue);
  v->kueue = NULL;
}

/* The index of Workloads by owner uid, built on first use in a cycle; NULL when out of memory. */
static struct sched_kueue *index_of(sched_view *v) {
  struct sched_kueue *k = v->kueue;
  model_obj *o;
  size_t it = 0;
  if (k) return k;
  if (!(k = ts_calloc(1, sizeof *k))) return NULL;
  ts_map_init(&k->by_owner), ts_map_init(&k->wls);
  v->kueue = k;
  while (model_next(v->m, MODEL_WORKLOAD, &it, &o))
    for (uint32_t i = 0; i < o->nowners; i++) {
      const char *uid = o->owners[i].uid;
      if (uid && *uid && ts_map_put(&k->by_owner, uid, strlen(uid), o, NULL) != TS_OK) {
        sched__kueue_free(v);
        return NULL;
      }
    }
  return k;
}

/* The controller owner's uid of o (the first owner when none is marked), or NULL. */
static const char *owner_uid(const model_obj *o) {
  for (uint32_t i = 0; i < o->nowners; i++)
    if (o->owners[i].controller && o->owners[i].uid && *o->owners[i].uid) return o->owners[i].uid;
  return o->nowners && o->owners[0].uid && *o->owners[0].uid ? o->owners[0].uid : NULL;
}

/* The Workload p belongs to (see the top of the file), or NULL. */
static const model_workload *workload_of(sched_view *v, const model_pod *p) {
  static const char *once[2];
  struct sched_kueue *k = index_of(v);
  const char *name =
      model_labels_get(&p->obj.annotations, ts_intern_once(&once[0], "kueue.x-k8s.io/workload"));
  const model_obj *o = &p->obj;
  model_obj *w;
  if (!name)
    name =
        model_labels_get(&p->obj.labels, ts_intern_once(&once[1], "kueue.x-k8s.io/pod-group-name"));
  if (name && (w = model_get(v->m, MODEL_WORKLOAD, p->obj.ns, name)))
    return (const model_workload *)w;
  if (!k) return NULL;
  if (*p->obj.uid && (w = ts_map_get(&k->by_owner, p->obj.uid, strlen(p->obj.uid))))
    return (const model_workload *)w;
  for (int depth = 0; o && depth < OWNER_DEPTH; depth++) {
    const char *uid = owner_uid(o);
    if (!uid) return NULL;
    if ((w = ts_map_get(&k->by_owner, uid, strlen(uid)))) return (const model_workload *)w;
    o = model_get_uid(v->m, uid);
  }
  return NULL;
}

bool sched__kueue_managed(sched_view *v, const model_pod *p) {
  static const char *once;
  if (!v->cfg || !v->cfg->kueue_admits) return false;
  return model_labels_get(&p->obj.labels, ts_intern_once(&once, "kueue.x-k8s.io/queue-name")) ||
         workload_of(v, p);
}

/* The index of p's pod set in w, or UINT32_MAX when it cannot be told. */
static uint32_t podset_of(const model_workload *w, const model_pod *p) {
  static const char *once;
  const char *name =
      model_labels_get(&p->obj.labels, ts_intern_once(&once, "kueue.x-k8s.io/podset"));
  const char *role = name ? NULL : sched__role_of(p);
  for (uint32_t i = 0; i < w->npodsets; i++)
    if ((name && w->podsets[i].name == name) || (role && !strcmp(w->podsets[i].name, role)))
      return i;
  return !name && !role && w->npodsets == 1 ? 0 : UINT32_MAX;
}

/* The pods of every Workload that hold nodes, counted per pod set (once per cycle). */
static ts_rc index_running(sched_view *v, struct sched_kueue *k) {
  ts_rc rc = sched__view_pods(v);
  for (size_t i = 0; rc == TS_OK && i < v->nrunning; i++) {
    const model_pod *p = v->running[i];
    const model_workload *w = workload_of(v, p);
    uint32_t ps;
    kwl *kw;
    if (!w || (ps = podset_of(w, p)) == UINT32_MAX) continue;
    if (!(kw = ts_map_get(&k->wls, w->obj.key, strlen(w->obj.key)))) {
      if (!(kw = ts_arena_alloc(v->arena, sizeof *kw))) return TS_ENOMEM;
      memset(kw, 0, sizeof *kw);
      kw->w = w;
      kw->bound = ts_arena_alloc(v->arena, (w->npodsets + 1) * sizeof *kw->bound);
      if (!kw->bound) return TS_ENOMEM;
      memset(kw->bound, 0, (w->npodsets + 1) * sizeof *kw->bound);
      if (ts_map_put(&k->wls, w->obj.key, strlen(w->obj.key), kw, NULL) != TS_OK) return TS_ENOMEM;
    }
    if (kw->nrun == kw->cap) {
      uint32_t ncap = kw->cap ? kw->cap * 2 : 8;
      const model_pod **np = ts_arena_alloc(v->arena, ncap * sizeof *np);
      uint32_t *nps = ts_arena_alloc(v->arena, ncap * sizeof *nps);
      if (!np || !nps) return TS_ENOMEM;
      if (kw->nrun) memcpy(np, kw->run, kw->nrun * sizeof *np);
      if (kw->nrun) memcpy(nps, kw->run_ps, kw->nrun * sizeof *nps);
      kw->run = np, kw->run_ps = nps, kw->cap = ncap;
    }
    kw->run[kw->nrun] = p, kw->run_ps[kw->nrun++] = ps;
    kw->bound[ps]++;
  }
  k->running = rc == TS_OK;
  return rc;
}

/* ---- deciding one gang ----------------------------------------------------------------- */

typedef struct kctx {
  sched_view *v;
  sched_result *r;
  const sched_gang *g;      /* the gang */
  const char *label;        /* "PodGroup t/x" (result arena), NULL for a gang of one */
  const model_workload *w;  /* its Workload */
  const kwl *kw;            /* its pods bound, or NULL when none */
  uint32_t *ps;             /* g member -> pod set (UINT32_MAX: none) */
  bool *take;               /* g member is placed now */
  const sched_flavors **fl; /* per pod set: its flavors (NULL: no restriction) */
} kctx;

static ts_rc pend(kctx *c, uint32_t i, const char *why, sched_pending_why kind) {
  if (!why) return TS_ENOMEM;
  return sched__decide(c->v, c->r,
                       (sched_decision){.kind = SCHED_PENDING,
                                        .pod = c->g->pods[i].pod,
                                        .reason = why,
                                        .gang = c->label,
                                        .why = kind});
}

static ts_rc pend_all(kctx *c, const char *why, sched_pending_why kind) {
  for (uint32_t i = 0; i < c->g->npods; i++) {
    ts_rc rc = pend(c, i, why, kind);
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* Why Kueue has not admitted w (result arena). */
static const char *not_admitted(sched_view *v, const model_workload *w) {
  const char *lq = w->queue_name ? w->queue_name : "?";
  if (!w->active)
    return ts_arena_printf(
        v->out,
        "Workload %s is deactivated (spec.active: false): Kueue admits it again once it "
        "is active",
        w->obj.key);
  if (w->finished)
    return ts_arena_printf(v->out, "Workload %s is Finished: Kueue admits it no more", w->obj.key);
  if (w->evicted)
    return ts_arena_printf(v->out,
                           "Workload %s was evicted by Kueue and waits to be admitted again%s%s",
                           w->obj.key, w->why ? ": " : "", w->why ? w->why : "");
  if (w->quota_reserved)
    return ts_arena_printf(
        v->out, "Workload %s holds quota in ClusterQueue %s and waits for its admission checks%s%s",
        w->obj.key, w->cluster_queue ? w->cluster_queue : "?", w->why ? ": " : "",
        w->why ? w->why : "");
  return ts_arena_printf(v->out, "waits for Kueue to admit Workload %s (LocalQueue %s/%s)%s%s",
                         w->obj.key, w->obj.ns, lq, w->why ? ": " : "", w->why ? w->why : "");
}

/* The domain of a that a pod's nodeSelector names (every level it sets matches, one at
 * least), or UINT32_MAX. */
static uint32_t pinned_domain(const model_wl_podset *a, const model_pod *p, const int32_t *left) {
  bool any = false;
  for (uint32_t l = 0; l < a->nlevels; l++)
    any |= model_labels_get(&p->node_selector, a->levels[l]) != NULL;
  if (!any) return UINT32_MAX;
  for (uint32_t d = 0; d < a->ndomains; d++) {
    bool match = left[d] > 0;
    for (uint32_t l = 0; match && l < a->nlevels; l++) {
      const char *want = model_labels_get(&p->node_selector, a->levels[l]);
      match = !want || want == a->domains[d].values[l];
    }
    if (match) return d;
  }
  return UINT32_MAX;
}

/* The domain of a that node n is in, or UINT32_MAX. */
static uint32_t node_domain(const model_wl_podset *a, const model_node *n) {
  for (uint32_t d = 0; n && d < a->ndomains; d++) {
    bool match = true;
    for (uint32_t l = 0; match && l < a->nlevels; l++)
      match = model_labels_get(&n->obj.labels, a->levels[l]) == a->domains[d].values[l];
    if (match) return d;
  }
  return UINT32_MAX;
}

static int value_cmp(const void *key, const void *elem) {
  return strcmp((const char *)key, ((const sched_domain *)elem)->value);
}

/* The view's nodes in domain d of a (scratch arena) into *out; how many. */
static uint32_t domain_nodes(sched_view *v, const model_wl_podset *a, uint32_t d, uint32_t **out) {
  const sched_level *low = sched__level_of(v, a->levels[a->nlevels - 1]);
  const sched_domain *dom =
      low ? bsearch(a->domains[d].values[a->nlevels - 1], low->d, low->n, sizeof *low->d, value_cmp)
          : NULL;
  uint32_t n = 0;
  *out = NULL;
  if (!dom || !(*out = ts_arena_alloc(v->arena, ((size_t)dom->n + 1) * sizeof **out))) return 0;
  for (uint32_t i = 0; i < dom->n; i++) {
    const model_node *node = v->nodes[dom->nodes[i]];
    bool match = true;
    for (uint32_t l = 0; match && l + 1 < a->nlevels; l++)
      match = model_labels_get(&node->obj.labels, a->levels[l]) == a->domains[d].values[l];
    if (match) (*out)[n++] = dom->nodes[i];
  }
  return n;
}

/* Places the taken pods of pod set ps by its topology assignment a: each domain gets as many
 * as it has left once the pod set's bound pods are counted; placed[member] is set. False,
 * with *why (result arena), when they cannot all be placed there. */
static bool place_by_domains(kctx *c, uint32_t ps, uint32_t *placed, const char **why) {
  sched_view *v = c->v;
  const model_wl_podset *a = &c->w->podsets[ps];
  const sched_gang *g = c->g;
  int32_t *left = ts_arena_alloc(v->arena, ((size_t)a->ndomains + 1) * sizeof *left);
  uint32_t *dom_of = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *dom_of);
  sched_pending *pods = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *pods);
  uint32_t *at = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *at);
  uint32_t *got = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *got);
  if (!left || !dom_of || !pods || !at || !got) return *why = NULL, false;
  for (uint32_t d = 0; d < a->ndomains; d++) left[d] = a->domains[d].count;
  for (uint32_t i = 0; c->kw && i < c->kw->nrun; i++) { /* bound pods hold their domains */
    uint32_t d = c->kw->run_ps[i] == ps ? node_domain(a, c->kw->run[i]->node) : UINT32_MAX;
    if (d != UINT32_MAX) left[d]--;
  }
  for (int pass = 0; pass < 2; pass++) /* pods a nodeSelector pins first, then the others */
    for (uint32_t i = 0; i < g->npods; i++) {
      uint32_t d = UINT32_MAX;
      if (!c->take[i] || c->ps[i] != ps || (pass && dom_of[i] != UINT32_MAX - 1)) continue;
      if (!pass) {
        dom_of[i] = UINT32_MAX - 1; /* not pinned yet */
        if ((d = pinned_domain(a, g->pods[i].pod, left)) == UINT32_MAX) continue;
      } else {
        for (uint32_t k = 0; k < a->ndomains && d == UINT32_MAX; k++)
          if (left[k] > 0) d = k;
      }
      if (d == UINT32_MAX) {
        *why = ts_arena_printf(
            v->out, "pod set %s has more pods to place than its topology assignment has room for",
            a->name);
        return false;
      }
      dom_of[i] = d, left[d]--;
    }
  for (uint32_t d = 0; d < a->ndomains; d++) {
    sched_gang sub = *g;
    uint32_t n = 0, *subset, nsub;
    for (uint32_t i = 0; i < g->npods; i++)
      if (c->take[i] && c->ps[i] == ps && dom_of[i] == d) pods[n] = g->pods[i], at[n++] = i;
    if (!n) continue;
    sub.pods = pods, sub.npods = sub.nmembers = n, sub.min = (int32_t)n, sub.nbound = 0;
    nsub = domain_nodes(v, a, d, &subset);
    if (sched__place_members(v, &sub, subset, nsub, true, got) < n) {
      sched__unplace_members(v, &sub, got);
      {
        ts_buf b;
        ts_buf_init(&b, 0);
        for (uint32_t l = 0; l < a->nlevels; l++)
          ts_buf_printf(&b, "%s%s=%s", l ? "," : "", a->levels[l], a->domains[d].values[l]);
        *why = ts_arena_printf(
            v->out,
            "pod set %s: the %u pods Kueue assigned to topology domain %s do not fit "
            "there (%u nodes)",
            a->name, n, b.data ? b.data : "?", nsub);
        ts_buf_free(&b);
      }
      return false;
    }
    for (uint32_t k = 0; k < n; k++) placed[at[k]] = got[k];
  }
  return true;
}

/* Gives back every placement of the gang's members. */
static void unplace_all(kctx *c, uint32_t *placed) {
  for (uint32_t i = 0; i < c->g->npods; i++) {
    if (placed[i] == UINT32_MAX) continue;
    sched__unplace(c->v, c->g->pods[i].pod, placed[i]);
    sched__dra_release(c->v, &c->g->pods[i]);
    placed[i] = UINT32_MAX;
  }
}

/* Places the taken members: by topology assignment where Kueue made one, else as a gang in the
 * narrowest domain that holds it. placed[member] is set; false with *why when they do not all
 * fit (everything given back). */
static bool place_taken(kctx *c, uint32_t ntake, uint32_t *placed, const char **why) {
  sched_view *v = c->v;
  const sched_gang *g = c->g;
  bool tas = false;
  sched_gang rest = *g;
  uint32_t n = 0, *at, *got, best = 0;
  for (uint32_t i = 0; i < g->npods; i++) placed[i] = UINT32_MAX;
  for (uint32_t ps = 0; ps < c->w->npodsets; ps++) /* pod sets with an assignment first */
    if (c->w->podsets[ps].ndomains) {
      tas = true;
      if (!place_by_domains(c, ps, placed, why)) {
        unplace_all(c, placed);
        return false;
      }
    }
  rest.pods = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *rest.pods);
  at = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *at);
  got = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *got);
  if (!rest.pods || !at || !got) return *why = NULL, false;
  for (uint32_t i = 0; i < g->npods; i++)
    if (c->take[i] && !c->w->podsets[c->ps[i]].ndomains) rest.pods[n] = g->pods[i], at[n++] = i;
  rest.npods = rest.nmembers = n, rest.min = (int32_t)n, rest.nbound = 0;
  if (n && (tas ? sched__place_members(v, &rest, NULL, 0, true, got)
                : sched__place_gang(v, &rest, n, got, &best)) < n) {
    if (tas) sched__unplace_members(v, &rest, got);
    unplace_all(c, placed);
    for (uint32_t k = 0; k < n; k++)
      if (!tas || got[k] == UINT32_MAX) { /* the first that missed says why */
        const char *whynode = sched__why_pending(v, &rest.pods[k]);
        if (!whynode)
          *why = NULL;
        else if (tas)
          *why = ts_arena_printf(v->out, "%u pods must start together and not all fit; %s: %s",
                                 ntake, rest.pods[k].pod->obj.key, whynode);
        else
          *why = ts_arena_printf(v->out, "%u pods must start together and only %u fit; %s: %s",
                                 ntake, best, rest.pods[k].pod->obj.key, whynode);
        break;
      }
    return false;
  }
  for (uint32_t k = 0; k < n; k++) placed[at[k]] = got[k];
  return true;
}

/* Decides an admitted Workload's gang. */
static ts_rc decide_admitted(kctx *c) {
  sched_view *v = c->v;
  const sched_gang *g = c->g;
  const model_workload *w = c->w;
  uint32_t *want = ts_arena_alloc(v->arena, ((size_t)w->npodsets + 1) * sizeof *want);
  uint32_t *placed = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *placed);
  uint32_t ntake = 0, nwant = 0;
  const char *why = NULL, *names[64];
  ts_rc rc = TS_OK;
  if (!want || !placed) return TS_ENOMEM;
  for (uint32_t ps = 0; ps < w->npodsets; ps++) {
    const model_wl_podset *a = &w->podsets[ps];
    uint32_t bound = c->kw ? c->kw->bound[ps] : 0, nf = 0;
    want[ps] = a->assigned && (uint32_t)a->admitted > bound ? (uint32_t)a->admitted - bound : 0;
    nwant += want[ps];
    c->fl[ps] = NULL;
    for (uint32_t f = 0; f < a->nflavors && nf < 64; f++) {
      if (!model_get(v->m, MODEL_RESOURCE_FLAVOR, NULL, a->flavors[f].value))
        return pend_all(
            c,
            ts_arena_printf(v->out,
                            "Workload %s was admitted on ResourceFlavor %s (pod set %s, %s), "
                            "which does not exist",
                            w->obj.key, a->flavors[f].value, a->name, a->flavors[f].key),
            SCHED_WHY_BLOCKED);
      names[nf++] = a->flavors[f].value;
    }
    if (nf && !(c->fl[ps] = sched__flavors_of(v, names, nf))) return TS_ENOMEM;
    if (a->topology_delayed && want[ps])
      return pend_all(
          c,
          ts_arena_printf(v->out,
                          "Workload %s waits for Kueue to assign topology domains to pod set %s",
                          w->obj.key, a->name),
          SCHED_WHY_QUEUED);
  }
  for (uint32_t i = 0; i < g->npods; i++) { /* the members Kueue admitted, first come first */
    uint32_t ps = c->ps[i];
    c->take[i] = ps != UINT32_MAX && want[ps] > 0;
    if (!c->take[i]) continue;
    want[ps]--, ntake++;
    g->pods[i].flavors = c->fl[ps];
  }
  if (ntake < nwant) /* Kueue admitted more pods than exist yet: the rest come */
    why = ts_arena_printf(
        v->out,
        "Workload %s: Kueue admitted %u more pods and %u of them exist; the gang waits for "
        "the rest",
        w->obj.key, nwant, ntake);
  if (!why && ntake && !place_taken(c, ntake, placed, &why) && !why) return TS_ENOMEM;
  for (uint32_t i = 0; i < g->npods && rc == TS_OK; i++) {
    sched_pending *p = &g->pods[i];
    if (c->ps[i] == UINT32_MAX)
      rc = pend(c, i,
                ts_arena_printf(v->out,
                                "cannot tell which pod set of Workload %s it belongs to (no "
                                "kueue.x-k8s.io/podset label)",
                                w->obj.key),
                SCHED_WHY_BLOCKED);
    else if (!c->take[i])
      rc = pend(c, i,
                ts_arena_printf(
                    v->out,
                    "Kueue admitted %d pods of pod set %s of Workload %s and they all run or are "
                    "placed: this one waits",
                    w->podsets[c->ps[i]].assigned ? w->podsets[c->ps[i]].admitted : 0,
                    w->podsets[c->ps[i]].name, w->obj.key),
                SCHED_WHY_QUEUED);
    else if (why && ntake < nwant)
      rc = pend(c, i, why, SCHED_WHY_GANG);
    else if (why)
      rc = pend(c, i,
                ts_arena_printf(v->out, "Workload %s admitted by Kueue to ClusterQueue %s: %s",
                                w->obj.key, w->cluster_queue, why),
                SCHED_WHY_UNSCHEDULABLE); /* Kueue admitted it: nodes would help */
    else
      rc = sched__decide(v, c->r, sched__bind(v, p, placed[i], c->label));
    p->flavors = NULL;
  }
  return rc;
}

static ts_rc decide(sched_view *v, sched_gang *g, sched_result *r) {
  kctx c = {v, r, g, NULL, NULL, NULL, NULL, NULL, NULL};
  struct sched_kueue *k = index_of(v);
  if (!k) return TS_ENOMEM;
  if (g->kind != SCHED_GANG_SINGLE &&
      !(c.label = ts_arena_printf(v->out, "%s %s", g->what, g->name)))
    return TS_ENOMEM;
  if (!(c.w = workload_of(v, g->pods[0].pod)))
    return pend_all(
        &c,
        ts_arena_printf(v->out,
                        "waits for Kueue: no Workload for it yet (Kueue makes one for each job "
                        "of a LocalQueue)"),
        SCHED_WHY_QUEUED);
  if (!c.w->admitted || c.w->evicted || !c.w->active || c.w->finished)
    return pend_all(&c, not_admitted(v, c.w), SCHED_WHY_QUEUED);
  /* The Workload says how many pods run together: a PodGroup or owner Tessera has not seen
   * does not matter here; a member's own missing object (a claim) does. */
  for (uint32_t i = 0; i < g->npods; i++)
    if (g->pods[i].blocked)
      return pend_all(&c, g->blocked ? g->blocked : g->pods[i].blocked, SCHED_WHY_BLOCKED);
  if (!k->running && index_running(v, k) != TS_OK) return TS_ENOMEM;
  c.kw = ts_map_get(&k->wls, c.w->obj.key, strlen(c.w->obj.key));
  c.ps = ts_arena_alloc(v->arena, ((size_t)g->npods + 1) * sizeof *c.ps);
  c.take = ts_arena_alloc(v->arena, (size_t)g->npods + 1);
  c.fl = ts_arena_alloc(v->arena, ((size_t)c.w->npodsets + 1) * sizeof *c.fl);
  if (!c.ps || !c.take || !c.fl) return TS_ENOMEM;
  for (uint32_t i = 0; i < g->npods; i++) {
    const model_workload *other = workload_of(v, g->pods[i].pod);
    c.ps[i] = other == c.w ? podset_of(c.w, g->pods[i].pod) : UINT32_MAX;
  }
  return decide_admitted(&c);
}

ts_rc sched__kueue_place(sched_view *v, sched_gang *gangs, size_t n, sched_result *r,
                         bool *handled) {
  ts_rc rc = TS_OK;
  if (!v->cfg->kueue_admits) return TS_OK;
  for (size_t i = 0; rc == TS_OK && i < n; i++) {
    size_t mark = r->ndecisions;
    if (!gangs[i].npods || gangs[i].gated || !sched__kueue_managed(v, gangs[i].pods[0].pod))
      continue; /* decided as without Kueue: gated gangs say so there */
    handled[i] = true;
    rc = sched__gang_faulted(v, SCHED_STAGE_ADMISSION, &gangs[i]) ? TS_EFAULT
                                                                  : decide(v, &gangs[i], r);
    if (rc != TS_OK && rc != TS_ENOMEM) { /* this gang alone: its pods wait, saying why */
      const char *why = ts_arena_printf(v->out, "placing the Kueue workload of pod %s failed: %s",
                                        gangs[i].pods[0].pod->obj.key, ts_strerror(rc));
      rc = why ? TS_OK : TS_ENOMEM;
      for (uint32_t k = 0; rc == TS_OK && k < gangs[i].npods; k++) {
        bool decided = false; /* the stages fail before anything is bound */
        for (size_t d = mark; d < r->ndecisions && !decided; d++)
          decided = r->decisions[d].pod == gangs[i].pods[k].pod;
        if (decided) continue;
        rc = sched__decide(v, r,
                           (sched_decision){.kind = SCHED_PENDING,
                                            .pod = gangs[i].pods[k].pod,
                                            .reason = why,
                                            .why = SCHED_WHY_ERROR});
      }
    }
  }
  return rc;
}
