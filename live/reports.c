/* live/reports.c - PodScheduled=False reports of pending pods: one per pod and distinct
 * message, written after the cycle's other writes have answered. */
#include "live/live_int.h"

#include <string.h>

/* PodScheduled=False once per distinct message. */
/* True when two messages differ at most in their numbers ("0/12 nodes are available: 5
 * Insufficient cpu" and "0/12 nodes are available: 7 Insufficient cpu"). */
static bool same_but_counts(const char *a, const char *b) {
  while (*a && *b) {
    bool da = *a >= '0' && *a <= '9', db = *b >= '0' && *b <= '9';
    if (da != db) return false;
    if (da) {
      while (*a >= '0' && *a <= '9') a++;
      while (*b >= '0' && *b <= '9') b++;
      continue;
    }
    if (*a++ != *b++) return false;
  }
  return *a == *b;
}

#define COUNTS_REFRESH_NS (60 * 1000000000LL) /* a message whose counts alone changed */

/* Queues the report of a pending pod when its reason is new (one per pod and reason; a
 * reason whose node counts alone changed at most once a minute: pods placed elsewhere move
 * the counts of every pending pod, and the why is what matters). */
void live__report_pending(live *l, const sched_decision *d, int64_t now_ns) {
  const char *uid = d->pod->obj.uid;
  const report_memo *last;
  report_memo *memo;
  char *block;
  void *old;
  size_t ns = strlen(d->pod->obj.ns), name = strlen(d->pod->obj.name), u, len;
  if (!uid || !*uid) return;
  last = live__oget(&l->reported, uid);
  if (last && !strcmp(last->text, d->reason)) return;
  if (last && same_but_counts(last->text, d->reason) && now_ns - last->at_ns < COUNTS_REFRESH_NS)
    return;
  u = strlen(uid), len = strlen(d->reason);
  if (!(block = ts_malloc(ns + name + u + 3))) return;
  if (!(memo = ts_malloc(sizeof *memo + len + 1)) ||
      live__oput(&l->reported, uid, memo, &old) != TS_OK) {
    ts_free(memo);
    ts_free(block);
    return;
  }
  memo->at_ns = now_ns;
  memcpy(memo->text, d->reason, len + 1);
  ts_free(old);
  memcpy(block, d->pod->obj.ns, ns + 1);
  memcpy(block + ns + 1, d->pod->obj.name, name + 1);
  memcpy(block + ns + name + 2, uid, u + 1);
  if (ts_vec_push(&l->reports, ((pend_report){sched_pending_why_name(d->why), memo->text, block,
                                              block + ns + 1, block + ns + name + 2})) != TS_OK) {
    ts_free(block);
    return;
  }
}

/* Writes the queued reports. They wait for the cycle's other writes (bindings, claims,
 * evictions) to answer: writes are served in the order they are made and share the server,
 * and a pod that can start matters more than a message about one that cannot. A report whose
 * pod was deleted meanwhile is dropped. */
void live__send_reports(live *l) {
  if (l->sending) return;
  l->sending = true;
  while (l->reports_next < l->reports.n && l->reports_inflight < LIVE_REPORTS_INFLIGHT) {
    pend_report *p = &l->reports.v[l->reports_next++];
    const report_memo *m = live__oget(&l->reported, p->uid);
    if (m && m->text == p->reason) {
      l->st.unschedulable++;
      l->reports_inflight++;
      l->w.unschedulable(l->w.ud, l, p->ns, p->name, p->uid, p->why, p->reason);
    }
    ts_free(p->ns);
    p->ns = NULL;
  }
  if (l->reports_next == l->reports.n) l->reports.n = l->reports_next = 0;
  l->sending = false;
}

void live_report_done(void *token) {
  live *l = token;
  if (l->reports_inflight) l->reports_inflight--;
  if (!live_busy(l)) live__send_reports(l);
}
