/* scheduler/decide.c - the cycle's output, below every other file of scheduler/: decisions
 * (bind, pending, evict) and workload events added to the result, and errors contained to the
 * one pod that caused them (sched__fail, the fault hook). The files above call down into it;
 * it calls none of them, so the cycle reads top-down: cycle.c -> gang, admit, kueue, place,
 * classes, claims -> decide.c. */
#include "scheduler/sched_int.h"

#include <string.h>

/* ---- decisions ------------------------------------------------------------------------- */

/* Puts d (about to be decisions[ndecisions]) in a group: the last one when it is the same
 * gang's (decisions of a gang are made one after the other), else a new one. */
static bool sched__group(sched_view *v, sched_result *r, sched_decision *d) {
  sched_group *g = r->ngroups ? &r->groups[r->ngroups - 1] : NULL;
  if (!g || !d->gang || !g->gang || g->first + g->n != r->ndecisions ||
      (g->gang != d->gang && strcmp(g->gang, d->gang))) {
    if (r->ngroups == v->groups_cap) {
      size_t ncap = v->groups_cap ? v->groups_cap * 2 : 256;
      sched_group *ng = ts_realloc(r->groups, ncap * sizeof *ng);
      if (!ng) return false;
      r->groups = ng;
      v->groups_cap = ncap;
    }
    g = &r->groups[r->ngroups++];
    *g = (sched_group){.first = r->ndecisions, .gang = d->gang, .event = -1};
  }
  g->n++;
  if (d->kind == SCHED_BIND) g->nbound++;
  d->group = (uint32_t)(r->ngroups - 1);
  return true;
}

ts_rc sched__decide(sched_view *v, sched_result *r, sched_decision d) {
  if (r->ndecisions == v->decisions_cap) { /* reserved for every pending pod: rare */
    size_t ncap = v->decisions_cap ? v->decisions_cap * 2 : 256;
    sched_decision *nd = ts_realloc(r->decisions, ncap * sizeof *nd);
    if (!nd) return TS_ENOMEM;
    r->decisions = nd;
    v->decisions_cap = ncap;
  }
  if (!sched__group(v, r, &d)) return TS_ENOMEM;
  r->decisions[r->ndecisions++] = d;
  if (d.kind == SCHED_BIND)
    r->nbound++;
  else if (d.kind == SCHED_EVICT)
    r->nevicted++;
  else
    r->npending++;
  return TS_OK;
}

ts_rc sched__event(sched_view *v, sched_result *r, const sched_wl_event *e) {
  if (r->nevents == v->events_cap) {
    size_t ncap = v->events_cap ? v->events_cap * 2 : 64;
    sched_wl_event *ne = ts_realloc(r->events, ncap * sizeof *ne);
    if (!ne) return TS_ENOMEM;
    r->events = ne;
    v->events_cap = ncap;
  }
  r->events[r->nevents++] = *e;
  return TS_OK;
}

const char *sched_pending_why_name(sched_pending_why w) {
  static const char *const names[SCHED_WHY_COUNT] = {
      [SCHED_WHY_UNSCHEDULABLE] = "Unschedulable",
      [SCHED_WHY_GANG] = "WaitingForGang",
      [SCHED_WHY_BLOCKED] = "Blocked",
      [SCHED_WHY_QUEUED] = "WaitingForQuota",
      [SCHED_WHY_BACKOFF] = "Backoff",
      [SCHED_WHY_NO_QUEUE] = "NoQueueName",
      [SCHED_WHY_ERROR] = "SchedulerError",
      [SCHED_WHY_GATED] = "SchedulingGated",
  };
  return (unsigned)w < SCHED_WHY_COUNT ? names[w] : "Unschedulable";
}

/* ---- errors contained to one object ---------------------------------------------------- */

static const char *stage_name(sched_stage st) {
  static const char *const names[] = {"",          "admission", "claim allocation",
                                      "placement", "scoring",   "decision"};
  return (unsigned)st < sizeof names / sizeof *names ? names[st] : "?";
}

void sched__fail(sched_view *v, const model_pod *p, ts_rc rc, const char *what) {
  if (v->fail_pod == p) return; /* the first failure says it */
  v->fail_pod = p;
  v->fail_text =
      ts_arena_printf(v->out, "%s of pod %s failed: %s", what, p->obj.key, ts_strerror(rc));
}

static bool fault_names(const sched_view *v, sched_stage stage, const model_pod *p) {
  const sched_fault *f = &v->cfg->tuning.fault;
  return f->stage == stage && f->pod && !strcmp(f->pod, p->obj.key);
}

bool sched__fault(sched_view *v, sched_stage stage, const model_pod *p) {
  if (!v->cfg || !fault_names(v, stage, p)) return false;
  sched__fail(v, p, TS_EFAULT, stage_name(stage));
  return true;
}

bool sched__gang_faulted(const sched_view *v, sched_stage stage, const sched_gang *g) {
  for (uint32_t i = 0; v->cfg && i < g->npods; i++)
    if (fault_names(v, stage, g->pods[i].pod)) return true;
  return false;
}

const char *sched__gang_failure(const sched_view *v, const sched_gang *g) {
  for (uint32_t i = 0; v->fail_pod && i < g->npods; i++)
    if (g->pods[i].pod == v->fail_pod) return v->fail_text;
  return NULL;
}

ts_rc sched_decision_apply(model *m, const sched_decision *d) {
  model_pod *p = (model_pod *)d->pod;
  if (d->kind == SCHED_EVICT) return model_pod_bind(m, p, NULL);
  if (d->kind != SCHED_BIND) return TS_OK;
  if (d->gpu_shared)
    return model_pod_bind_gpu(m, p, ts_intern_cstr(d->node->obj.name), (int32_t)d->gpu_index);
  return model_pod_bind(m, p, ts_intern_cstr(d->node->obj.name));
}

sched_decision sched__bind(const sched_view *v, const sched_pending *p, uint32_t node,
                           const char *gang) {
  int32_t gpu = sched__gpu_slot(v, p->pod);
  return (sched_decision){.kind = SCHED_BIND,
                          .pod = p->pod,
                          .node = v->nodes[node],
                          .gang = gang,
                          .claims = p->claims,
                          .nclaims = p->nclaims,
                          .gpu_shared = gpu >= 0,
                          .gpu_index = gpu >= 0 ? (uint32_t)gpu : 0};
}

sched_decision sched__pend(const sched_pending *p, const char *reason, const char *gang,
                           sched_pending_why why) {
  return (sched_decision){
      .kind = SCHED_PENDING, .pod = p->pod, .reason = reason, .gang = gang, .why = why};
}

void sched__groups_events(sched_result *r) {
  for (size_t e = 0; e < r->nevents; e++) {
    const sched_wl_event *ev = &r->events[e];
    if ((ev->kind == SCHED_WL_ADMITTED || ev->kind == SCHED_WL_EVICTED) &&
        ev->decision < r->ndecisions && r->groups[r->decisions[ev->decision].group].event < 0)
      r->groups[r->decisions[ev->decision].group].event = (int64_t)e;
  }
}

void sched_result_free(sched_result *r) {
  ts_free(r->decisions);
  ts_free(r->groups);
  ts_free(r->events);
  ts_arena_free(&r->arena);
  memset(r, 0, sizeof *r);
}
