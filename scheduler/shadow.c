/* scheduler/shadow.c - another scheduler's placements against Tessera's (tessera run --shadow).
 *
 * The pods of the other scheduler are looked at three ways:
 *   [0] as it placed them (the cluster as it is);
 *   now, what Tessera's cycle would do from the cluster as it is: the pods it left pending that
 *     Tessera would place, the workloads Tessera would admit or preempt;
 *   [1] every one of those pods placed again by Tessera: the model's placements of them are
 *     taken back, one cycle places them all (queues, gangs, topology, scoring, as configured),
 *     what that leaves is measured, and the model is given back as it was.
 * Between [0] and [1]: gangs bound partially, gangs spread over more topology domains than
 * Tessera needed, pods one placed and the other did not, workloads of each queue wholly
 * placed, and GPUs stranded: free, on nodes where none of the pending GPU pods' shapes fits.
 * The pods count as Tessera's for the cycles by taking a scheduler name of their own for the
 * time of the comparison. */
#include "scheduler/sched_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHADOW_SHAPES 64 /* distinct pending GPU shapes weighed for stranding */

/* One pod of the other scheduler. */
typedef struct spod {
  model_pod *p;           /* in the model */
  const char *node0;      /* where it is ([0]), interned, or NULL */
  int32_t gpu0;           /* its GPU index (a share), as placed */
  model_pod_phase phase0; /* its phase */
  const char *sched0;     /* its scheduler name */
  const char *node1;      /* where Tessera put it ([1]), or NULL */
  const char *why1;       /* why Tessera left it pending in [1] (arena), or NULL */
  uint32_t gang;          /* its gang */
  uint32_t next;          /* the next member of its gang, or UINT32_MAX */
} spod;

typedef struct sgang {
  const char *label;   /* "PodGroup team-a/x" (arena) */
  int32_t min;         /* explicit minimum, or -1 */
  uint32_t n;          /* members */
  uint32_t first;      /* first member */
  uint32_t bound[2];   /* members placed in [0], [1] */
  int64_t oldest_wait; /* creation of its oldest member pending in [0], or 0 */
} sgang;

typedef struct shadow_run {
  model *m;
  sched_config c; /* the configuration, for the pods of the comparison */
  sched_shadow *out;
  spod *pods; /* heap */
  size_t n;
  sgang *gangs; /* arena */
  size_t ngangs;
  ts_map by_key;            /* pod key -> 1 + index */
  size_t qcap;              /* room in out->queues */
  sched_shadow_queue spare; /* scratch entry for queues past the room (counted nowhere) */
  int64_t now;
} shadow_run;

const char *sched_shadow_kind_name(sched_shadow_kind k) {
  static const char *const names[SCHED_SHADOW_KIND_COUNT] = {
      "partial", "split", "placeable", "unplaceable", "admitted", "not-admitted", "preempt"};
  return (unsigned)k < SCHED_SHADOW_KIND_COUNT ? names[k] : "?";
}

/* Counts a difference, and keeps it as an example while its kind has fewer than the limit. */
static ts_rc differ(sched_shadow *o, sched_shadow_kind k, const char *what, const char *detail) {
  if (o->counts[k]++ >= SCHED_SHADOW_EXAMPLES) return TS_OK;
  if (!what || !detail) return TS_ENOMEM;
  o->examples[o->nexamples++] = (sched_shadow_example){k, what, detail};
  return TS_OK;
}

/* The queue's entry, made on first use; a scratch entry past the room (counted nowhere). */
static sched_shadow_queue *queue_of(shadow_run *s, const char *name) {
  sched_shadow *o = s->out;
  for (size_t i = 0; i < o->nqueues; i++)
    if (o->queues[i].name == name) return &o->queues[i];
  if (o->nqueues == s->qcap) return &s->spare;
  o->queues[o->nqueues] = (sched_shadow_queue){.name = name};
  return &o->queues[o->nqueues++];
}

static uint32_t needed(const sgang *g) {
  return g->min < 0 ? g->n : (uint32_t)g->min;
}

static void duration(int64_t ns, char *out, size_t cap) {
  int64_t s = ns / 1000000000LL;
  if (s >= 3600)
    snprintf(out, cap, "%lldh%lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
  else if (s >= 60)
    snprintf(out, cap, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
  else
    snprintf(out, cap, "%llds", (long long)s);
}

/* ---- the pods and their gangs ---------------------------------------------------------- */

static ts_rc collect(shadow_run *s, const char *name, const char *marker) {
  size_t it = 0, cap = model_count(s->m, MODEL_POD);
  model_obj *o;
  ts_map gangs;
  ts_rc rc = TS_OK;
  if (!(s->pods = ts_calloc(cap + 1, sizeof *s->pods)) ||
      !(s->gangs = ts_arena_alloc(&s->out->arena, (cap + 1) * sizeof *s->gangs)))
    return TS_ENOMEM;
  ts_map_init(&gangs);
  while (rc == TS_OK && model_next(s->m, MODEL_POD, &it, &o)) {
    model_pod *p = (model_pod *)o;
    char key[TS_KEY_MAX + 16], label[TS_KEY_MAX + 32];
    spod *sp;
    uintptr_t g;
    if (p->obj.deleted_ns || p->phase == MODEL_PHASE_SUCCEEDED || p->phase == MODEL_PHASE_FAILED)
      continue;
    if (name ? p->scheduler_name != name : p->scheduler_name == s->c.scheduler_name) continue;
    sp = &s->pods[s->n];
    *sp = (spod){p, p->node_name, p->gpu_index, p->phase, p->scheduler_name, NULL, NULL,
                 0, UINT32_MAX};
    {
      int32_t min = sched__gang_ident(s->m, p, key, sizeof key, label, sizeof label);
      if (!(g = (uintptr_t)ts_map_get(&gangs, key, strlen(key)))) {
        sgang *ng = &s->gangs[s->ngangs];
        char *k = ts_arena_strndup(&s->out->arena, key, strlen(key));
        memset(ng, 0, sizeof *ng);
        ng->label = ts_arena_strndup(&s->out->arena, label, strlen(label));
        ng->min = min, ng->first = UINT32_MAX;
        if (!k || !ng->label || ts_map_put(&gangs, k, strlen(k), (void *)(s->ngangs + 1), NULL))
          rc = TS_ENOMEM;
        g = ++s->ngangs;
      }
    }
    if (rc != TS_OK) break;
    sp->gang = (uint32_t)(g - 1);
    sp->next = s->gangs[g - 1].first; /* members in reverse order of the model's */
    s->gangs[g - 1].first = (uint32_t)s->n;
    s->gangs[g - 1].n++;
    if (ts_map_put(&s->by_key, p->obj.key, strlen(p->obj.key), (void *)(s->n + 1), NULL))
      rc = TS_ENOMEM;
    s->n++;
  }
  ts_map_free(&gangs);
  for (size_t i = 0; i < s->n; i++) s->pods[i].p->scheduler_name = marker; /* Tessera's now */
  return rc;
}

static spod *spod_of(shadow_run *s, const model_pod *p) {
  uintptr_t i = (uintptr_t)ts_map_get(&s->by_key, p->obj.key, strlen(p->obj.key));
  return i ? &s->pods[i - 1] : NULL;
}

/* ---- GPUs: free, and stranded for the pending shapes ------------------------------------ */

/* The distinct shapes (requests and static filters) of the GPU pods pending in [0] or [1]. */
static size_t shapes_of(shadow_run *s, const model_pod **out) {
  const model_pod **pending = ts_malloc((s->n + 1) * sizeof *pending);
  size_t n = 0;
  if (!pending) return 0;
  for (size_t i = 0; i < s->n; i++)
    if (!s->pods[i].node0 || !s->pods[i].node1)
      pending[n++] = s->pods[i].p; /* not placed both ways */
  n = sched_gpu_shapes(s->m, pending, n, out, SHADOW_SHAPES);
  ts_free(pending);
  return n;
}

/* The model's GPUs, free ones, and free ones no shape fits, on schedulable nodes. */
static ts_rc gpus(shadow_run *s, const model_pod *const *shapes, size_t nshapes, int64_t *total,
                  int64_t *free_out, int64_t *stranded) {
  sched_gpu_room *rooms;
  size_t n;
  ts_rc rc = sched_gpu_rooms(s->m, &s->c, s->now, shapes, nshapes, &rooms, &n);
  *total = *free_out = *stranded = 0;
  for (size_t i = 0; rc == TS_OK && i < n; i++)
    *total += rooms[i].gpus, *free_out += rooms[i].free, *stranded += rooms[i].stranded;
  ts_free(rooms);
  return rc;
}

/* ---- now: what Tessera would do from the cluster as it is -------------------------------- */

static ts_rc now_cycle(shadow_run *s) {
  sched_shadow *o = s->out;
  sched_result r;
  ts_err err;
  ts_rc rc = sched_cycle(s->m, &s->c, NULL, s->now, &r, &err);
  if (rc != TS_OK) return rc;
  for (size_t i = 0; rc == TS_OK && i < r.ndecisions; i++) {
    const sched_decision *d = &r.decisions[i];
    spod *sp = spod_of(s, d->pod);
    char waited[32];
    if (d->kind == SCHED_BIND && sp && d->pod->obj.created_ns + SCHED_SHADOW_GRACE_NS <= s->now) {
      o->placeable++;
      duration(s->now - d->pod->obj.created_ns, waited, sizeof waited);
      rc = differ(o, SCHED_SHADOW_PLACEABLE, ts_arena_printf(&o->arena, "pod %s", d->pod->obj.key),
                  ts_arena_printf(&o->arena, "pending for %s; Tessera would bind it to %s now",
                                  waited, d->node->obj.name));
    } else if (d->kind == SCHED_EVICT) {
      o->preempt++;
      rc = differ(o, SCHED_SHADOW_PREEMPT, ts_arena_printf(&o->arena, "pod %s", d->pod->obj.key),
                  ts_arena_printf(&o->arena, "Tessera would evict it: %s",
                                  d->reason ? d->reason : "preempted"));
    }
  }
  for (size_t i = 0; rc == TS_OK && i < r.nevents; i++) {
    const sched_wl_event *e = &r.events[i];
    if (!e->cluster_queue) continue;
    if (e->kind == SCHED_WL_ADMITTED)
      queue_of(s, e->cluster_queue)->would_admit++;
    else if (e->reason && !strcmp(e->reason, "Preempted"))
      queue_of(s, e->cluster_queue)->would_preempt++;
  }
  sched_result_free(&r);
  return rc;
}

/* ---- [1]: every pod placed again by Tessera ---------------------------------------------- */

static void take_back(shadow_run *s) {
  for (size_t i = 0; i < s->n; i++) {
    spod *sp = &s->pods[i];
    if (sp->node0) model_pod_bind(s->m, sp->p, NULL); /* cannot fail: unbound pods index nowhere */
    sp->p->phase = MODEL_PHASE_PENDING;
  }
}

static void give_back(shadow_run *s) {
  for (size_t i = 0; i < s->n; i++) {
    spod *sp = &s->pods[i];
    sp->p->phase = sp->phase0;
    if (sp->node0 || sp->p->node_name) model_pod_bind_gpu(s->m, sp->p, sp->node0, sp->gpu0);
    sp->p->scheduler_name = sp->sched0;
  }
}

static ts_rc replace_all(shadow_run *s) {
  sched_shadow *o = s->out;
  sched_result r;
  ts_err err;
  ts_rc rc = sched_cycle(s->m, &s->c, NULL, s->now, &r, &err);
  if (rc != TS_OK) return rc;
  for (size_t i = 0; rc == TS_OK && i < r.ndecisions; i++) {
    const sched_decision *d = &r.decisions[i];
    spod *sp = spod_of(s, d->pod);
    if (!sp) continue; /* a pod not of the comparison (evictions are not applied) */
    if (d->kind == SCHED_BIND) {
      sp->node1 = ts_intern_cstr(d->node->obj.name);
      rc = sp->node1 ? sched_decision_apply(s->m, d) : TS_ENOMEM;
    } else if (d->kind == SCHED_PENDING && d->reason) {
      sp->why1 = ts_arena_printf(&o->arena, "%s", d->reason);
      if (!sp->why1) rc = TS_ENOMEM;
    }
  }
  sched_result_free(&r);
  return rc;
}

/* ---- gangs, queues, pods ------------------------------------------------------------------ */

/* Where the gang's members are at a topology level in placement w: how many distinct values,
 * and whether every member has one. */
static uint32_t domains_at(shadow_run *s, const sgang *g, int w, const char *level, bool *all) {
  const char *seen[64];
  uint32_t n = 0;
  *all = true;
  for (uint32_t i = g->first; i != UINT32_MAX; i = s->pods[i].next) {
    const char *node = w ? s->pods[i].node1 : s->pods[i].node0;
    const model_node *nd =
        node ? (const model_node *)model_get(s->m, MODEL_NODE, NULL, node) : NULL;
    const char *val = nd ? model_labels_get(&nd->obj.labels, level) : NULL;
    bool dup = false;
    if (!val) {
      *all = false;
      continue;
    }
    for (uint32_t k = 0; k < n && !dup; k++) dup = seen[k] == val;
    if (!dup && n < 64) seen[n++] = val;
  }
  return n;
}

/* Split: placed whole both ways, and at the narrowest level where Tessera kept it in one
 * domain, the other scheduler's placement spans more than one. */
static ts_rc check_split(shadow_run *s, const sgang *g) {
  sched_shadow *o = s->out;
  for (int l = s->c.ntopology - 1; l >= 0; l--) {
    const char *level = s->c.topology[l];
    bool all1, all0;
    uint32_t d1 = domains_at(s, g, 1, level, &all1), d0;
    if (!all1 || d1 != 1) continue;
    d0 = domains_at(s, g, 0, level, &all0);
    if (d0 <= 1 && all0) return TS_OK;
    o->split++;
    return differ(
        o, SCHED_SHADOW_SPLIT, g->label,
        ts_arena_printf(&o->arena,
                        "its %u pods are on %u domains of %s; Tessera would keep them in one", g->n,
                        d0, level));
  }
  return TS_OK;
}

static ts_rc nodes_of(shadow_run *s, const sgang *g, ts_buf *b) {
  uint32_t k = 0;
  for (uint32_t i = g->first; i != UINT32_MAX; i = s->pods[i].next)
    if (s->pods[i].node0 && k++ < 8) ts_buf_printf(b, "%s%s", k > 1 ? ", " : "", s->pods[i].node0);
  if (k > 8) ts_buf_printf(b, ", ...");
  return b->data ? TS_OK : TS_ENOMEM;
}

static ts_rc compare(shadow_run *s) {
  sched_shadow *o = s->out;
  ts_rc rc = TS_OK;
  for (size_t i = 0; i < s->n; i++) {
    spod *sp = &s->pods[i];
    sgang *g = &s->gangs[sp->gang];
    o->bound[0] += sp->node0 != NULL, o->bound[1] += sp->node1 != NULL;
    g->bound[0] += sp->node0 != NULL, g->bound[1] += sp->node1 != NULL;
    if (!sp->node0 && (!g->oldest_wait || sp->p->obj.created_ns < g->oldest_wait))
      g->oldest_wait = sp->p->obj.created_ns ? sp->p->obj.created_ns : 1;
    if (sp->node0 && !sp->node1) {
      o->unplaceable++;
      rc = differ(o, SCHED_SHADOW_UNPLACEABLE, ts_arena_printf(&o->arena, "pod %s", sp->p->obj.key),
                  ts_arena_printf(&o->arena, "on %s; Tessera would have left it pending: %s",
                                  sp->node0, sp->why1 ? sp->why1 : "(no reason)"));
      if (rc != TS_OK) return rc;
    }
  }
  o->pods = s->n;
  o->pending[0] = s->n - o->bound[0], o->pending[1] = s->n - o->bound[1];
  for (size_t k = 0; rc == TS_OK && k < s->ngangs; k++) {
    sgang *g = &s->gangs[k];
    const char *q = sched_pod_queue(s->m, s->pods[g->first].p);
    uint32_t need = needed(g);
    bool whole0 = g->bound[0] >= need, whole1 = g->bound[1] >= need;
    if (g->n > 1) o->gangs++;
    if (g->bound[0] && !whole0 && g->oldest_wait && /* a member waits, past the grace */
        g->oldest_wait + SCHED_SHADOW_GRACE_NS <= s->now) {
      ts_buf b;
      char waited[32];
      o->partial[0]++;
      ts_buf_init(&b, 0);
      duration(s->now - g->oldest_wait, waited, sizeof waited);
      rc = nodes_of(s, g, &b);
      if (rc == TS_OK)
        rc = differ(
            o, SCHED_SHADOW_PARTIAL, g->label,
            ts_arena_printf(&o->arena,
                            "%u of the %u pods that must start together are placed (%s), the "
                            "others pending for %s; Tessera places all of them or none",
                            g->bound[0], need, b.data, waited));
      ts_buf_free(&b);
    }
    if (g->bound[1] && !whole1) o->partial[1]++;
    if (rc == TS_OK && g->n > 1 && g->bound[0] == g->n && g->bound[1] == g->n)
      rc = check_split(s, g);
    if (rc != TS_OK || !q) continue;
    {
      sched_shadow_queue *sq = queue_of(s, q);
      sq->workloads++;
      sq->admitted[0] += whole0, sq->admitted[1] += whole1;
    }
    if (whole1 && !whole0)
      rc = differ(
          o, SCHED_SHADOW_ADMITTED, g->label,
          ts_arena_printf(&o->arena,
                          "queue %s: Tessera would have admitted and placed it; %u of its %u pods "
                          "are placed",
                          q, g->bound[0], need));
    else if (whole0 && !whole1)
      rc = differ(o, SCHED_SHADOW_NOT_ADMITTED, g->label,
                  ts_arena_printf(
                      &o->arena, "queue %s: placed, where Tessera would have kept it waiting: %s",
                      q, s->pods[g->first].why1 ? s->pods[g->first].why1 : "(no reason)"));
  }
  return rc;
}

static int queue_cmp(const void *a, const void *b) {
  return strcmp(((const sched_shadow_queue *)a)->name, ((const sched_shadow_queue *)b)->name);
}

ts_rc sched_shadow_eval(model *m, const sched_config *cfg, const char *name, int64_t now_ns,
                        sched_shadow *out, ts_err *err) {
  shadow_run s = {.m = m, .c = *cfg, .out = out, .now = now_ns};
  const char *marker = ts_intern_cstr("tessera.dev/shadow");
  const model_pod *shapes[SHADOW_SHAPES];
  int64_t total = 0;
  size_t nshapes;
  ts_rc rc;
  memset(out, 0, sizeof *out);
  ts_arena_init(&out->arena, 16 * 1024);
  out->at_ns = now_ns;
  ts_map_init(&s.by_key);
  s.c.scheduler_name = marker;
  s.c.wait_for_pods_ready = false; /* no readiness evictions in a comparison */
  memset(&s.c.tuning.fault, 0, sizeof s.c.tuning.fault);
  rc = marker ? collect(&s, name, marker) : TS_ENOMEM;
  if (rc == TS_OK &&
      (!(out->examples =
             ts_arena_alloc(&out->arena, SCHED_SHADOW_KIND_COUNT * SCHED_SHADOW_EXAMPLES *
                                             sizeof *out->examples)) ||
       !(out->queues = ts_arena_alloc(&out->arena, (s.ngangs + 64) * sizeof *out->queues))))
    rc = TS_ENOMEM;
  s.qcap = s.ngangs + 64;
  if (rc == TS_OK) rc = now_cycle(&s);
  if (rc == TS_OK) {
    take_back(&s);
    rc = replace_all(&s);
  }
  nshapes = rc == TS_OK ? shapes_of(&s, shapes) : 0;
  out->shapes = nshapes;
  if (rc == TS_OK)
    rc = gpus(&s, shapes, nshapes, &total, &out->free_gpus[1], &out->stranded_gpus[1]);
  give_back(&s); /* whatever happened: the model as it was */
  if (rc == TS_OK)
    rc = gpus(&s, shapes, nshapes, &out->gpus, &out->free_gpus[0], &out->stranded_gpus[0]);
  if (rc == TS_OK) rc = compare(&s);
  if (rc == TS_OK) qsort(out->queues, out->nqueues, sizeof *out->queues, queue_cmp);
  ts_map_free(&s.by_key);
  ts_free(s.pods);
  if (rc != TS_OK) {
    sched_shadow_free(out);
    return ts_err_set(err, rc, "shadow comparison: %s", ts_strerror(rc));
  }
  return TS_OK;
}

void sched_shadow_free(sched_shadow *s) {
  ts_arena_free(&s->arena);
  memset(s, 0, sizeof *s);
}
