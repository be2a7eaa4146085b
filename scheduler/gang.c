/* scheduler/gang.c - which pods must run together.
 *
 * A pod belongs to, in this order: the scheduler-plugins PodGroup named by its label
 * `scheduling.x-k8s.io/pod-group` (minMember), the Volcano PodGroup named by its annotation
 * `scheduling.k8s.io/group-name`, or the KAI Scheduler PodGroup named by its annotation
 * `pod-group-name` (minMember); the Kueue pod group of its label
 * `kueue.x-k8s.io/pod-group-name` (annotation `kueue.x-k8s.io/pod-group-total-count`); the
 * JobSet of its label `jobset.sigs.k8s.io/jobset-name`; the job that controls it (Kubeflow
 * PyTorchJob / TFJob / MPIJob / XGBoostJob / PaddleJob / JAXJob, batch Job); else it is a gang
 * of one. For JobSets and owning jobs the gang is every pod of the job that exists. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GANG_KEY_MAX 600

typedef struct gang_id {
  sched_gang_kind kind;    /* how */
  const char *what;        /* for messages */
  char key[GANG_KEY_MAX];  /* unique key of the gang */
  char name[GANG_KEY_MAX]; /* "ns/name" shown to people */
  const char *pod;         /* a gang of one: its pod's key ("pod:" + it is the gang's key) */
  int32_t min;             /* explicit minimum, or -1 (every member that exists) */
  const char *blocked;     /* static reason the gang cannot run, or NULL */
} gang_id;

/* A label or annotation of o; *once caches the interned key (a static of the call site's:
 * these run for every pending pod of every cycle). */
static const char *label(const model_obj *o, const char **once, const char *key) {
  return model_labels_get(&o->labels, ts_intern_once(once, key));
}

static const char *annotation(const model_obj *o, const char **once, const char *key) {
  return model_labels_get(&o->annotations, ts_intern_once(once, key));
}

/* The PodGroups a pod may name, and how: scheduler-plugins' by a label, Volcano's by the
 * annotation its controllers put on the pods of a PodGroup, KAI Scheduler's by the annotation
 * its pod-grouper writes. */
static const struct {
  model_kind kind;    /* the PodGroup kind */
  bool annotation;    /* named by an annotation (else a label) */
  const char *key;    /* the label or annotation */
  const char *what;   /* for messages */
  const char *prefix; /* of the gang's key */
} pod_groups[] = {
    {MODEL_POD_GROUP, false, "scheduling.x-k8s.io/pod-group", "PodGroup", "pg:"},
    {MODEL_VOLCANO_POD_GROUP, true, "scheduling.k8s.io/group-name", "Volcano PodGroup", "vpg:"},
    {MODEL_KAI_POD_GROUP, true, "pod-group-name", "KAI PodGroup", "kpg:"},
};

static bool from_pod_group(const model *m, const model_pod *p, gang_id *g) {
  static const char *once[sizeof pod_groups / sizeof *pod_groups];
  for (size_t i = 0; i < sizeof pod_groups / sizeof *pod_groups; i++) {
    const char *pg = pod_groups[i].annotation ? annotation(&p->obj, &once[i], pod_groups[i].key)
                                              : label(&p->obj, &once[i], pod_groups[i].key);
    const model_pod_group *grp;
    if (!pg) continue;
    g->kind = SCHED_GANG_POD_GROUP, g->what = pod_groups[i].what;
    snprintf(g->key, sizeof g->key, "%s%s/%s", pod_groups[i].prefix, p->obj.ns, pg);
    snprintf(g->name, sizeof g->name, "%s/%s", p->obj.ns, pg);
    grp = (const model_pod_group *)model_get(m, pod_groups[i].kind, p->obj.ns, pg);
    g->min = grp ? grp->min_member : -1;
    if (!grp) g->blocked = "its PodGroup does not exist";
    return true;
  }
  return false;
}

static bool from_kueue_group(const model_pod *p, gang_id *g) {
  static const char *once[2];
  const char *name = label(&p->obj, &once[0], "kueue.x-k8s.io/pod-group-name");
  const char *count = annotation(&p->obj, &once[1], "kueue.x-k8s.io/pod-group-total-count");
  char *end = NULL;
  long n;
  if (!name) return false;
  g->kind = SCHED_GANG_KUEUE, g->what = "Kueue pod group";
  snprintf(g->key, sizeof g->key, "kq:%s/%s", p->obj.ns, name);
  snprintf(g->name, sizeof g->name, "%s/%s", p->obj.ns, name);
  n = count ? strtol(count, &end, 10) : 0;
  if (!count || *end || n < 1 || n > 100000) {
    g->min = -1;
    g->blocked = "annotation kueue.x-k8s.io/pod-group-total-count is missing or not a positive "
                 "integer";
  } else {
    g->min = (int32_t)n;
  }
  return true;
}

#define UNSEEN_OWNER                                                                               \
  "has not been seen, so how many of its pods must start together is unknown; waiting for it"

/* The minimum of a gang owned by a job: what the job object says (model/decode_jobs.c); when
 * the job is not in the model, wait for it, unless jobs of its kind cannot be seen at all
 * (then every member that exists). uid (may be NULL or "") must match when both are known. */
static void owner_min(const model *m, model_kind kind, const char *ns, const char *name,
                      const char *uid, gang_id *g) {
  const model_job *j = (const model_job *)model_get(m, kind, ns, name);
  if (j && uid && *uid && *j->obj.uid && strcmp(uid, j->obj.uid) != 0) j = NULL; /* another one */
  g->min = -1;
  if (j)
    g->min = j->min_pods;
  else if (model_kind_seen(m, kind))
    g->blocked = UNSEEN_OWNER;
}

static bool from_jobset(const model *m, const model_pod *p, gang_id *g) {
  static const char *once;
  const char *js = label(&p->obj, &once, "jobset.sigs.k8s.io/jobset-name");
  if (!js) return false;
  g->kind = SCHED_GANG_JOBSET, g->what = "JobSet";
  snprintf(g->key, sizeof g->key, "js:%s/%s", p->obj.ns, js);
  snprintf(g->name, sizeof g->name, "%s/%s", p->obj.ns, js);
  owner_min(m, MODEL_JOBSET, p->obj.ns, js, NULL, g);
  return true;
}

/* True when an ownerReference's apiVersion is in the API group of the job kind. */
static bool owner_group(const model_owner *o) {
  const char *want = !strcmp(o->kind, "Job") ? "batch/" : "kubeflow.org/";
  return o->api_version && !strncmp(o->api_version, want, strlen(want));
}

static bool from_owner(const model *m, const model_pod *p, gang_id *g) {
  for (uint32_t i = 0; i < p->obj.nowners; i++) {
    const model_owner *o = &p->obj.owners[i];
    if (!o->controller || !owner_group(o)) continue;
    for (size_t k = 0; model_gang_owner_kinds[k]; k++) {
      if (strcmp(o->kind, model_gang_owner_kinds[k]) != 0) continue;
      g->kind = SCHED_GANG_OWNER, g->what = model_gang_owner_kinds[k];
      snprintf(g->key, sizeof g->key, "own:%s/%s/%s", p->obj.ns, o->kind, o->name);
      snprintf(g->name, sizeof g->name, "%s/%s", p->obj.ns, o->name);
      owner_min(m, model_kind_of(o->kind), p->obj.ns, o->name, o->uid, g);
      return true;
    }
  }
  return false;
}

/* Identifies the gang of a pod. A gang of one (most pods) names its pod instead of spelling
 * its key: this runs for every pod of every cycle. */
static void gang_of(const model *m, const model_pod *p, gang_id *g) {
  g->key[0] = g->name[0] = '\0', g->pod = NULL, g->min = 0, g->blocked = NULL;
  if (p->may_gang && (from_pod_group(m, p, g) || from_kueue_group(p, g) || from_jobset(m, p, g) ||
                      from_owner(m, p, g)))
    return;
  g->kind = SCHED_GANG_SINGLE, g->what = "pod", g->pod = p->obj.key;
  g->min = 1;
}

int32_t sched__gang_ident(const model *m, const model_pod *p, char *key, size_t kcap, char *label,
                          size_t lcap) {
  gang_id id;
  gang_of(m, p, &id);
  if (id.pod)
    snprintf(key, kcap, "pod:%s", id.pod);
  else
    ts_strlcpy(key, id.key, kcap);
  if (label) snprintf(label, lcap, "%s %s", id.what, id.pod ? id.pod : id.name);
  return id.min;
}

void sched__gang_key(const model *m, const model_pod *p, char *key, size_t cap) {
  sched__gang_ident(m, p, key, cap, NULL, 0);
}

uint32_t sched__gang_needed(const sched_gang *g) {
  return g->min > (int32_t)g->nbound ? (uint32_t)g->min - g->nbound : 0;
}

const char *sched__gang_waits(sched_view *v, const sched_gang *g, const char *label, bool *oom) {
  char buf[2048];
  const char *out;
  *oom = false;
  if (g->blocked)
    snprintf(buf, sizeof buf, "%s: %s", label, g->blocked);
  else if (g->nmembers < (uint32_t)g->min)
    snprintf(buf, sizeof buf, "%s has %u of its %d pods; waiting for the rest", label, g->nmembers,
             g->min);
  else
    return NULL;
  out = ts_arena_strndup(v->out, buf, strlen(buf));
  *oom = !out;
  return out;
}

static int64_t gpus_of(const sched_view *v, const model_pod *p) {
  int64_t n = 0;
  for (uint32_t i = 0; i < p->requests.n; i++)
    for (int g = 0; g < v->ngpu; g++)
      if (p->requests.v[i].id == v->gpu[g]) n = ts_add_sat(n, p->requests.v[i].v);
  return n;
}

/* Members inside a gang: the biggest first (first-fit decreasing packs tighter: GPUs, then
 * cpu, then memory), then by creation and name so that the order is stable and pods of one
 * shape are adjacent. */
static int member_cmp(const void *a, const void *b) {
  const model_pod *x = ((const sched_pending *)a)->pod, *y = ((const sched_pending *)b)->pod;
  int64_t gx = ((const sched_pending *)a)->gpus, gy = ((const sched_pending *)b)->gpus;
  int64_t cx = model_rlist_get(&x->requests, MODEL_RES_CPU),
          cy = model_rlist_get(&y->requests, MODEL_RES_CPU);
  int64_t mx = model_rlist_get(&x->requests, MODEL_RES_MEMORY),
          my = model_rlist_get(&y->requests, MODEL_RES_MEMORY);
  if (gx != gy) return gx > gy ? -1 : 1;
  if (cx != cy) return cx > cy ? -1 : 1;
  if (mx != my) return mx > my ? -1 : 1;
  if (x->obj.created_ns != y->obj.created_ns) return x->obj.created_ns < y->obj.created_ns ? -1 : 1;
  return strcmp(x->obj.key, y->obj.key);
}

/* Kueue's role of a pod in a pod group: the role-hash annotation its webhook sets (NULL
 * without Kueue); pods of one role make one pod set. */
const char *sched__role_of(const model_pod *p) {
  static const char *once;
  return annotation(&p->obj, &once, "kueue.x-k8s.io/role-hash");
}

static bool same_podset(const sched_view *v, const sched_pending *a, const sched_pending *b) {
  const char *x = sched__role_of(a->pod), *y = sched__role_of(b->pod);
  if ((x || y) && (!x || !y || strcmp(x, y))) return false;
  return sched__same_shape(v, a, b);
}

/* Brings the members of each pod set together (member_cmp leaves two shapes with equal
 * requests interleaved by creation time), keeping the order of each set's first member, so
 * that a gang's pod sets do not depend on the order its pods were created in. O(members x
 * pod sets). */
static void group_podsets(const sched_view *v, sched_pending *p, uint32_t n) {
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i + 1;
    while (j < n && same_podset(v, &p[i], &p[j])) j++;
    for (uint32_t k = j + 1; k < n; k++) {
      sched_pending t;
      if (!same_podset(v, &p[i], &p[k])) continue;
      t = p[k];
      memmove(p + j + 1, p + j, (k - j) * sizeof *p);
      p[j++] = t;
    }
    i = j;
  }
}

static int gang_cmp(const void *a, const void *b) {
  const sched_gang *x = a, *y = b;
  if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
  if (x->created != y->created) return x->created < y->created ? -1 : 1;
  int c = strcmp(x->name, y->name);
  return c ? c : (int)x->kind - (int)y->kind;
}

/* Why gang g waits for its member p's scheduling gates, as kube-scheduler says it of a pod
 * ("waiting for scheduling gates: [a b]"; a gang's names the member), in the result arena. */
static const char *gated(sched_view *v, const sched_gang *g, const model_pod *p) {
  ts_buf b;
  const char *out;
  ts_buf_init(&b, 4096);
  if (g->kind != SCHED_GANG_SINGLE)
    ts_buf_printf(&b, "%s %s: pod %s is ", g->what, g->name, p->obj.key);
  ts_buf_puts(&b, "waiting for scheduling gates: [");
  for (uint32_t i = 0; i < p->ngates; i++) ts_buf_printf(&b, "%s%s", i ? " " : "", p->gates[i]);
  ts_buf_puts(&b, "]");
  out = b.data ? ts_arena_strndup(v->out, b.data, b.len) : NULL;
  ts_buf_free(&b);
  return out;
}

/* Adds pending pod p to gang g: its entry is *e (laid out in the gang's pods later). */
static ts_rc gang_add_pod(sched_view *v, sched_gang *g, sched_pending *e, const model_pod *p,
                          int32_t prio) {
  *e = (sched_pending){.pod = p, .priority = prio, .gpus = gpus_of(v, p)};
  if (sched__pod_claims(v, e) != TS_OK) return TS_ENOMEM;
  if (e->blocked && !g->blocked && g->kind != SCHED_GANG_SINGLE) {
    char why[1024];
    snprintf(why, sizeof why, "pod %s: %s", p->obj.key, e->blocked);
    g->blocked = ts_arena_strndup(v->out, why, strlen(why));
  }
  if (p->ngates && !g->gated && !(g->gated = gated(v, g, p))) return TS_ENOMEM;
  g->npods++;
  if (prio > g->priority || g->npods == 1) g->priority = prio;
  if (p->obj.created_ns < g->created || g->npods == 1) g->created = p->obj.created_ns;
  static const char *once[2];
  if (!g->required_level && (g->required_level = annotation(
                                 &p->obj, &once[0], "kueue.x-k8s.io/podset-required-topology")))
    g->required_level = ts_intern_cstr(g->required_level);
  if (!g->preferred_level && (g->preferred_level = annotation(
                                  &p->obj, &once[1], "kueue.x-k8s.io/podset-preferred-topology")))
    g->preferred_level = ts_intern_cstr(g->preferred_level);
  return TS_OK;
}

typedef TS_VEC(sched_gang) gang_vec;

/* Creates the gang for id, or returns the existing one (index in *gangs). */
static sched_gang *gang_get(sched_view *v, ts_map *index, gang_vec *gangs, const gang_id *id,
                            bool create) {
  uintptr_t k = id->pod ? 0 : (uintptr_t)ts_map_get(index, id->key, strlen(id->key));
  sched_gang *g;
  char *key;
  if (k) return &gangs->v[k - 1];
  if (!create) return NULL;
  if (ts_vec_push(gangs, (sched_gang){0}) != TS_OK) return NULL;
  g = &gangs->v[gangs->n - 1];
  g->id = (uint32_t)(gangs->n - 1);
  if (id->pod) { /* "pod:" + its key, whose tail is its name; no other member: no index */
    size_t len = strlen(id->pod);
    if (!(key = ts_arena_alloc(v->arena, len + 5))) return NULL;
    memcpy(key, "pod:", 4), memcpy(key + 4, id->pod, len + 1);
    g->name = key + 4;
  } else {
    key = ts_arena_strndup(v->arena, id->key, strlen(id->key));
    if (!key || ts_map_put(index, key, strlen(key), (void *)(uintptr_t)gangs->n, NULL) != TS_OK)
      return NULL;
    g->name = ts_arena_strndup(v->arena, id->name, strlen(id->name));
  }
  g->kind = id->kind, g->what = id->what, g->min = id->min;
  g->key = key;
  g->blocked = id->blocked;
  return g->name ? g : NULL;
}

/* The gangs' pods, side by side in queue order in one arena array (the cycle walks them in
 * that order, and scattered they fall out of cache past a few thousand nodes): pending pod i
 * (entry flat[i]) belongs to the gang first numbered of[i], now at gangs[pos[of[i]]]. */
static ts_rc lay_out(sched_view *v, sched_gang *gangs, size_t n, const sched_pending *flat,
                     const uint32_t *of) {
  size_t off = 0;
  sched_pending *all = ts_arena_alloc(v->arena, (v->npending + 1) * sizeof *all);
  uint32_t *pos = ts_arena_alloc(v->arena, (n + 1) * sizeof *pos);
  if (!all || !pos) return TS_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    pos[gangs[i].id] = (uint32_t)i;
    gangs[i].pods = all + off, off += gangs[i].npods, gangs[i].npods = 0;
  }
  for (size_t i = 0; i < v->npending; i++) {
    sched_gang *g = &gangs[pos[of[i]]];
    g->pods[g->npods++] = flat[i];
  }
  return TS_OK;
}

ts_rc sched__gangs(sched_view *v, sched_gang **out, size_t *n) {
  gang_vec gangs = {0};
  ts_map index;
  gang_id id;
  sched_pending *flat;
  uint32_t *of;
  ts_rc rc;
  *out = NULL, *n = 0;
  if ((rc = sched__view_pods(v)) != TS_OK) return rc;
  flat = ts_arena_alloc(v->arena, (v->npending + 1) * sizeof *flat);
  of = ts_arena_alloc(v->arena, (v->npending + 1) * sizeof *of);
  if (!flat || !of) return TS_ENOMEM;
  /* at most a gang per pending pod: no copy as it grows (the slack is given back below) */
  if (v->npending && ts_vec_reserve(&gangs, v->npending) != TS_OK) return TS_ENOMEM;
  ts_map_init(&index);
  for (size_t i = 0; rc == TS_OK && i < v->npending; i++) { /* pending pods make gangs */
    const model_pod *p = v->pending[i];
    sched_gang *g;
    if (i + 8 < v->npending) __builtin_prefetch(v->pending[i + 8]);
    if (i + 4 < v->npending) { /* what gang_of and gang_add_pod read: out of cache here */
      __builtin_prefetch(v->pending[i + 4]->obj.labels.v);
      __builtin_prefetch(v->pending[i + 4]->obj.annotations.v);
      __builtin_prefetch(v->pending[i + 4]->requests.v);
    }
    gang_of(v->m, p, &id);
    if (!(g = gang_get(v, &index, &gangs, &id, true))) {
      rc = TS_ENOMEM;
      break;
    }
    of[i] = g->id;
    rc = gang_add_pod(v, g, &flat[i], p, sched_pod_priority(v->m, p));
    g->nmembers++;
  }
  /* bound members count (only gangs of more than one pod have them: none, no walk) */
  for (size_t i = 0; rc == TS_OK && index.count && i < v->nrunning; i++) {
    const model_pod *p = v->running[i];
    sched_gang *g;
    if (p->obj.deleted_ns) continue;
    gang_of(v->m, p, &id);
    if (id.kind == SCHED_GANG_SINGLE || !(g = gang_get(v, &index, &gangs, &id, false))) continue;
    g->nbound++, g->nmembers++;
  }
  ts_map_free(&index);
  if (rc == TS_OK && gangs.n) { /* queue order, then each gang's pods at its offset */
    qsort(gangs.v, gangs.n, sizeof *gangs.v, gang_cmp);
    rc = lay_out(v, gangs.v, gangs.n, flat, of);
  }
  for (size_t i = 0; rc == TS_OK && i < gangs.n; i++) {
    sched_gang *g = &gangs.v[i];
    if (g->min < 0 && !g->blocked) g->min = (int32_t)g->nmembers; /* every member that exists */
    if (g->npods < 2) continue;
    qsort(g->pods, g->npods, sizeof *g->pods, member_cmp);
    group_podsets(v, g->pods, g->npods);
  }
  /* the vector itself, its slack given back (no copy beside it) */
  if (rc == TS_OK && gangs.n && !(*out = ts_realloc(gangs.v, gangs.n * sizeof **out)))
    rc = TS_ENOMEM;
  if (rc != TS_OK) {
    ts_vec_free(&gangs);
    return rc;
  }
  *n = gangs.n;
  return TS_OK;
}
