/* scheduler/cycle.c - one scheduling cycle.
 *
 * Pending pods are grouped into gangs and taken in order (priority, creation, name). A gang of
 * one is placed like kube-scheduler places a pod: through its class (classes.c), the pods of
 * every shape, wherever they are in the queue, sharing one index of feasible nodes; pods with
 * claims by runs of consecutive pods of one shape (place.c). A larger gang is placed all or
 * nothing. */
#include "scheduler/sched_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_config_default(sched_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->scheduler_name = ts_intern_cstr("tessera");
  cfg->scoring = SCHED_BINPACK;
  cfg->topology[0] = ts_intern_cstr("topology.kubernetes.io/zone");
  cfg->topology[1] = ts_intern_cstr("nvidia.com/gpu.clique");
  cfg->topology[2] = ts_intern_cstr("kubernetes.io/hostname");
  cfg->ntopology = 3;
  dra_features_default(&cfg->dra);
  cfg->pods_ready_timeout_ns = 300 * 1000000000LL;
  cfg->requeue_base_ns = 60 * 1000000000LL;
  cfg->requeue_max_ns = 3600 * 1000000000LL;
  q_config_default(&cfg->queueing);
}

void sched_config_free(sched_config *cfg) {
  q_config_free(&cfg->queueing);
}

bool sched_is_gpu_resource(const model_resources *t, int id) {
  const char *n = model_resource_name(t, id);
  size_t len;
  if (!n) return false;
  len = strlen(n);
  return (len >= 4 && !strcmp(n + len - 4, "/gpu")) || !strncmp(n, "nvidia.com/mig-", 15);
}

int32_t sched_pod_priority(const model *m, const model_pod *p) {
  const model_priority_class *pc;
  if (p->has_priority) return p->priority;
  if (p->priority_class) {
    pc = (const model_priority_class *)model_get(m, MODEL_PRIORITY_CLASS, NULL, p->priority_class);
    if (pc) return pc->value;
  }
  return model_default_priority(m);
}

/* The reason of one pod of a run given to another: pods of a run fail alike, but a message
 * may name the first one's claims ("claim team-a/x-gpu-1: request ..."): those names are put
 * back to the other pod's (result arena; NULL when out of memory). */
static const char *reason_for(sched_view *v, const char *reason, const sched_pending *from,
                              const sched_pending *to) {
  ts_buf b;
  const char *out = reason;
  for (uint32_t i = 0; i < from->nclaims && i < to->nclaims && out; i++) {
    char a[TS_KEY_MAX], z[TS_KEY_MAX];
    const char *at, *rest;
    snprintf(a, sizeof a, "%s/%s", from->pod->obj.ns, from->claims[i].name);
    snprintf(z, sizeof z, "%s/%s", to->pod->obj.ns, to->claims[i].name);
    if (!strcmp(a, z) || !strstr(out, a)) continue;
    ts_buf_init(&b, 0);
    for (rest = out; (at = strstr(rest, a)); rest = at + strlen(a))
      ts_buf_append(&b, rest, (size_t)(at - rest)), ts_buf_puts(&b, z);
    ts_buf_puts(&b, rest);
    out = b.data ? ts_arena_strndup(v->out, b.data, b.len) : NULL;
    ts_buf_free(&b);
  }
  return out;
}

/* Singles gangs[0..n) of one shape: a run. */
static ts_rc decide_singles(sched_view *v, const sched_gang *gangs, uint32_t n, sched_result *r) {
  sched_pending *pods = ts_arena_alloc(v->arena, n * sizeof *pods);
  uint32_t *placed = ts_arena_alloc(v->arena, n * sizeof *placed), got;
  const char *reason = NULL, *why;
  uint32_t reason_of = 0;
  ts_rc rc = TS_OK;
  if (!pods || !placed) return TS_ENOMEM;
  for (uint32_t i = 0; i < n; i++) pods[i] = gangs[i].pods[0];
  v->dra_error = NULL, v->dra_error_pod = NULL;
  for (uint32_t e = 0;
       !v->cfg->tuning.no_pending_memo && e < SCHED_PENDING_RUNS && !pods[0].blocked; e++) {
    const sched_pending *was = v->pending_runs[e].pod;
    const char *said = v->pending_runs[e].reason;
    if (!was || v->pending_runs[e].at != v->changes || !sched__same_shape(v, was, &pods[0]))
      continue;
    /* A run of the shape of a run that stayed pending, and no node changed since: nothing
     * fits, for the same reasons (pods come in jobs of a few alike, so a shape recurs run
     * after run once the nodes or devices are full, cycle after cycle in a backlog). */
    for (uint32_t i = 0; i < n && rc == TS_OK; i++) {
      why = pods[i].nclaims ? reason_for(v, said, was, &pods[i]) : said;
      rc = why ? sched__decide(v, r, sched__pend(&pods[i], why, NULL, SCHED_WHY_UNSCHEDULABLE))
               : TS_ENOMEM;
    }
    return rc;
  }
  /* A pod whose attempt failed (sched__fail) ends its run's prefix: it is decided alone, and
   * the run goes on after it as though it were not there. */
  for (uint32_t start = 0;;) {
    got = start + sched__place_run(v, pods + start, n - start, NULL, 0, placed + start);
    for (uint32_t i = start; i < got && rc == TS_OK; i++)
      rc = sched__decide(v, r, sched__bind(v, &pods[i], placed[i], NULL));
    if (rc != TS_OK || got == n || v->fail_pod != pods[got].pod) break;
    rc = sched__decide(v, r, sched__pend(&pods[got], v->fail_text, NULL, SCHED_WHY_ERROR));
    start = got + 1;
    if (start == n) return rc;
  }
  for (uint32_t i = got; i < n && rc == TS_OK; i++) {
    if (!reason) {
      reason = pods[i].blocked ? pods[i].blocked : sched__why_pending(v, &pods[i]);
      reason_of = i;
      if (reason && !pods[i].blocked && !v->dra_error) { /* for later runs of this shape */
        uint32_t e = v->next_pending_run++ % SCHED_PENDING_RUNS;
        v->pending_runs[e].pod = &pods[i], v->pending_runs[e].reason = reason;
        v->pending_runs[e].at = v->changes;
      }
    }
    why = reason && i != reason_of && pods[i].nclaims
              ? reason_for(v, reason, &pods[reason_of], &pods[i])
              : reason;
    if (!why) return TS_ENOMEM;
    rc = sched__decide(v, r,
                       sched__pend(&pods[i], why, NULL,
                                   pods[i].blocked ? SCHED_WHY_BLOCKED : SCHED_WHY_UNSCHEDULABLE));
  }
  return rc;
}

/* A single pod decided through its class (classes.c): the node a full scan would pick. */
static ts_rc decide_in_class(sched_view *v, const sched_gang *g, sched_result *r) {
  const sched_pending *p = &g->pods[0];
  sched_class *c = g->cls ? g->cls : sched__class_of(v, p); /* found by count_classes */
  uint32_t k;
  ts_rc rc;
  if (!c) return TS_ENOMEM;
  if (sched__fault(v, SCHED_STAGE_PLACEMENT, p->pod) ||
      sched__fault(v, SCHED_STAGE_SCORING, p->pod)) {
    sched__class_done(v, c);
    return sched__decide(v, r, sched__pend(p, v->fail_text, NULL, SCHED_WHY_ERROR));
  }
  k = sched__class_pick(v, c);
  if (k != UINT32_MAX) {
    sched__place(v, p->pod, k);
    rc = sched__decide(v, r, sched__bind(v, p, k, NULL));
  } else {
    if (!c->reason || c->reason_at != v->changes) { /* a node changed: the counts may have */
      if (!(c->reason = sched__class_why(v, c))) return TS_ENOMEM;
      c->reason_at = v->changes;
    }
    rc = sched__decide(v, r, sched__pend(p, c->reason, NULL, SCHED_WHY_UNSCHEDULABLE));
  }
  sched__class_done(v, c);
  return rc;
}

/* Counts the pods each class will decide, so that a class of one pod is not indexed. */
static ts_rc count_classes(sched_view *v, sched_gang *gangs, size_t n, const bool *handled) {
  for (size_t i = 0; i < n; i++) {
    sched_class *c;
    if (i + 4 < n && gangs[i + 4].npods) sched__prefetch_pod(gangs[i + 4].pods[0].pod);
    if (handled[i] || gangs[i].kind != SCHED_GANG_SINGLE ||
        !sched__class_eligible(v, &gangs[i].pods[0]))
      continue;
    if (!(c = sched__class_of(v, &gangs[i].pods[0]))) return TS_ENOMEM;
    c->remaining++;
    gangs[i].cls = c;
  }
  return TS_OK;
}

/* Why a gang that was tried does not run now (arena), given how many of its pods fit at most. */
static const char *gang_reason(sched_view *v, const sched_gang *g, const char *label, uint32_t best,
                               const uint32_t *placed) {
  uint32_t needed = sched__gang_needed(g);
  const sched_pending *stuck = &g->pods[0];
  const char *why;
  if (g->required_level && best < needed)
    return ts_arena_printf(v->out,
                           "%s: %u pods must start together within one %s domain and no domain has "
                           "room for them",
                           label, needed, g->required_level);
  for (uint32_t i = 0; i < g->npods; i++)
    if (placed[i] == UINT32_MAX) {
      stuck = &g->pods[i];
      break;
    }
  why = sched__why_pending(v, stuck);
  return why ? ts_arena_printf(v->out, "%s: %u pods must start together and only %u fit; %s: %s",
                               label, needed, best, stuck->pod->obj.key, why)
             : NULL;
}

/* A gang of several pods: all that must start together, or none. */
static ts_rc decide_gang(sched_view *v, const sched_gang *g, sched_result *r) {
  uint32_t *placed = ts_arena_alloc(v->arena, (g->npods + 1) * sizeof *placed), best = 0, got = 0;
  const char *label = ts_arena_printf(v->out, "%s %s", g->what, g->name), *reason = NULL;
  sched_pending_why kind = SCHED_WHY_UNSCHEDULABLE;
  bool oom = false;
  ts_rc rc = TS_OK;
  if (!placed || !label) return TS_ENOMEM;
  for (uint32_t i = 0; i < g->npods; i++) placed[i] = UINT32_MAX;
  reason = sched__gang_waits(v, g, label, &oom);
  if (oom) return TS_ENOMEM;
  if (reason) kind = g->blocked ? SCHED_WHY_BLOCKED : SCHED_WHY_GANG;
  if (!reason) got = sched__place_gang(v, g, sched__gang_needed(g), placed, &best);
  if (!got && !reason && (reason = sched__gang_failure(v, g))) { /* a member's attempt failed */
    reason = ts_arena_printf(v->out, "%s: %s", label, reason);
    kind = SCHED_WHY_ERROR;
    if (!reason) return TS_ENOMEM;
  }
  if (!got && !reason && !(reason = gang_reason(v, g, label, best, placed))) return TS_ENOMEM;
  for (uint32_t i = 0; i < g->npods && rc == TS_OK; i++) {
    const sched_pending *p = &g->pods[i];
    if (got && placed[i] != UINT32_MAX) {
      rc = sched__decide(v, r, sched__bind(v, p, placed[i], label));
    } else {
      const char *why = got ? sched__why_pending(v, p) : reason; /* an extra pod that missed */
      if (!why) return TS_ENOMEM;
      rc = sched__decide(v, r, sched__pend(p, why, label, got ? SCHED_WHY_UNSCHEDULABLE : kind));
    }
  }
  return rc;
}

static bool single(const sched_gang *g) {
  return g->kind == SCHED_GANG_SINGLE;
}

/* Gangs still in their requeue backoff wait, whatever the cluster has room for. */
static ts_rc decide_held(sched_view *v, const sched_gang *g, const char *why,
                         sched_pending_why kind, sched_result *r) {
  const char *label =
      g->kind == SCHED_GANG_SINGLE ? NULL : ts_arena_printf(v->out, "%s %s", g->what, g->name);
  for (uint32_t i = 0; i < g->npods; i++) {
    ts_rc rc = sched__decide(v, r, sched__pend(&g->pods[i], why, label, kind));
    if (rc != TS_OK) return rc;
  }
  return TS_OK;
}

/* The cycle's last safety net: deciding gangs[0..n) failed with rc (not out of memory) after
 * decisions[mark..] were added. Their pods without a decision are decided pending with the
 * error, and the cycle goes on for everyone else. The stages fail before they bind anything,
 * so no gang is half bound here. */
static ts_rc contain(sched_view *v, const sched_gang *g, size_t n, size_t mark, ts_rc rc,
                     sched_result *r) {
  for (size_t k = 0; k < n; k++) {
    const char *label = single(&g[k]) ? g[k].pods[0].pod->obj.key
                                      : ts_arena_printf(v->out, "%s %s", g[k].what, g[k].name);
    const char *why =
        label ? ts_arena_printf(v->out, "deciding %s failed: %s", label, ts_strerror(rc)) : NULL;
    if (!why) return TS_ENOMEM;
    for (uint32_t i = 0; i < g[k].npods; i++) {
      bool decided = false;
      ts_rc rc2;
      for (size_t d = mark; d < r->ndecisions && !decided; d++)
        decided = r->decisions[d].pod == g[k].pods[i].pod;
      if (decided) continue;
      rc2 = sched__decide(
          v, r, sched__pend(&g[k].pods[i], why, single(&g[k]) ? NULL : label, SCHED_WHY_ERROR));
      if (rc2 != TS_OK) return rc2;
    }
  }
  return TS_OK;
}

ts_rc sched_cycle(const model *m, const sched_config *cfg, sched_state *state, int64_t now_ns,
                  sched_result *out, ts_err *err) {
  sched_view v;
  ts_arena scratch;
  sched_gang *gangs = NULL;
  bool *handled = NULL;
  size_t n = 0, i = 0;
  ts_rc rc;
  memset(out, 0, sizeof *out);
  ts_arena_init(&out->arena, 64 * 1024);
  ts_arena_init(&scratch, 256 * 1024);
  rc = sched__view_init(&v, m, cfg, now_ns, &scratch, &out->arena);
  v.state = state;
  sched__evictions_seen(state, m);
  if (rc == TS_OK) rc = sched__ready_check(&v, state, out);
  if (rc == TS_OK) rc = sched__gangs(&v, &gangs, &n);
  if (rc == TS_OK) { /* room for a decision per pending pod, after the readiness evictions */
    size_t want = out->ndecisions;
    sched_decision *d;
    for (size_t g = 0; g < n; g++) want += gangs[g].npods;
    if (want > v.decisions_cap) {
      if (!(d = ts_realloc(out->decisions, want * sizeof *d)))
        rc = TS_ENOMEM;
      else
        out->decisions = d, v.decisions_cap = want;
    }
  }
  if (rc == TS_OK && !(handled = ts_arena_alloc(&scratch, n + 1))) rc = TS_ENOMEM;
  if (rc == TS_OK) memset(handled, 0, n + 1);
  if (rc == TS_OK) rc = sched__kueue_place(&v, gangs, n, out, handled);
  if (rc == TS_OK) rc = sched__admit(&v, gangs, n, out, handled);
  if (rc == TS_OK) rc = sched__finished_check(&v, out);
  if (rc == TS_OK && !cfg->queueing.manage_jobs_without_queue)
    rc = count_classes(&v, gangs, n, handled);
  while (rc == TS_OK && i < n) {
    size_t j = i + 1, mark = out->ndecisions;
    if (i + 4 < n && gangs[i + 4].npods) sched__prefetch_pod(gangs[i + 4].pods[0].pod);
    const char *held = handled[i] ? NULL : sched__ready_hold(&v, state, gangs[i].key);
    if (handled[i]) {
      /* decided by Kueue admission */
    } else if (gangs[i].gated) { /* not scheduled, and not unschedulable either */
      rc = decide_held(&v, &gangs[i], gangs[i].gated, SCHED_WHY_GATED, out);
    } else if (cfg->queueing.manage_jobs_without_queue && !gangs[i].blocked) {
      rc = decide_held(&v, &gangs[i],
                       "has no kueue.x-k8s.io/queue-name label and pods without a "
                       "queue are held (manageJobsWithoutQueueName)",
                       SCHED_WHY_NO_QUEUE, out);
    } else if (held) {
      rc = decide_held(&v, &gangs[i], held, SCHED_WHY_BACKOFF, out);
    } else if (sched__gang_faulted(&v, SCHED_STAGE_DECISION, &gangs[i])) {
      rc = TS_EFAULT; /* as an unexpected error deciding this gang would */
    } else if (!single(&gangs[i])) {
      rc = decide_gang(&v, &gangs[i], out);
    } else if (sched__class_eligible(&v, &gangs[i].pods[0])) {
      rc = decide_in_class(&v, &gangs[i], out);
    } else {
      while (!v.pol->per_pod && j < n && single(&gangs[j]) && !handled[j] && !gangs[j].gated &&
             !sched__ready_hold(&v, state, gangs[j].key) &&
             sched__same_shape(&v, &gangs[i].pods[0], &gangs[j].pods[0]))
        j++;
      rc = decide_singles(&v, gangs + i, (uint32_t)(j - i), out);
    }
    if (rc != TS_OK && rc != TS_ENOMEM) rc = contain(&v, gangs + i, j - i, mark, rc, out);
    i = j;
  }
  if (rc == TS_OK) rc = sched__evictions_issued(state, out);
  if (rc == TS_OK) sched__groups_events(out);
  ts_free(gangs);
  sched__view_free(&v);
  ts_arena_free(&scratch);
  if (rc != TS_OK) {
    sched_result_free(out);
    return ts_err_set(err, rc, "scheduling cycle: %s", ts_strerror(rc));
  }
  return TS_OK;
}
