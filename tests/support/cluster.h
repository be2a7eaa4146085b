/* tests/support/cluster.h - an in-memory cluster for tests of the in-cluster loop (live/).
 *
 * It holds objects as the API server holds them (a uid, a creationTimestamp and a
 * resourceVersion are assigned on create), answers live/'s writes as the server would (a bound
 * pod cannot be bound again, a missing object is "not found"), plays the controllers that run
 * beside a scheduler in a real cluster (the resource claim controller makes claims from
 * templates and cleans up after deleted pods; the kubelet starts bound pods), and delivers every
 * watch event and every write's answer to the loop, later and in an order chosen by a seed, as
 * a network would.
 *
 * What a real server would refuse, and what no correct scheduler may do, is recorded as a
 * violation (one sentence each): a pod bound twice or to a node that does not exist, a node
 * whose pods' requests exceed its allocatable after a binding, one device allocated to two
 * claims, a claim allocated twice, a pod bound before its claims were reserved for it. */
#ifndef TESTS_CLUSTER_H
#define TESTS_CLUSTER_H

#include <jansson.h>

#include "live/live.h"
#include "model/model.h"

typedef struct tc_cluster tc_cluster;

/* A new, empty cluster. seed decides, for each write, whether its watch event reaches the
 * loop before or after its answer (0: always the event first). Returns new, NULL when out of
 * memory. */
tc_cluster *tc_new(uint64_t seed);
void tc_free(tc_cluster *c);

/* The writer that writes into this cluster (for live_new), and the loop its answers and
 * watch events go to (call once, right after live_new). */
live_writer tc_writer(tc_cluster *c);
void tc_attach(tc_cluster *c, live *l);

/* The cluster's clock (creationTimestamps of objects created without one). */
void tc_set_time(tc_cluster *c, int64_t now_ns);

/* Creates or replaces an object (borrowed; copied) as a client would; the controllers react.
 * Its watch event is queued. Returns false when the object has no kind or name. */
bool tc_apply(tc_cluster *c, json_t *obj);

/* Delivers everything queued (watch events and answers, which may queue more) to the loop.
 * Returns how many deliveries were made. An event the loop refuses is a violation. */
size_t tc_flush(tc_cluster *c);

/* The cluster as the server holds it: a model fed with every stored object. Borrowed. */
const model *tc_model(const tc_cluster *c);
/* Calls fn for every stored object (borrowed for the call). */
void tc_each(const tc_cluster *c, void (*fn)(void *ud, json_t *obj), void *ud);
/* True when the pod ("ns/name") was bound through the writer. */
bool tc_bound_by_writer(const tc_cluster *c, const char *pod_key);
/* Writes answered so far, and PodScheduled=False reports received. */
size_t tc_writes(const tc_cluster *c);
size_t tc_reports(const tc_cluster *c);

/* Records a violation found by the caller (printf-style). */
void tc_violation(tc_cluster *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The violations so far, one sentence each. Borrowed until tc_free. */
size_t tc_violations(const tc_cluster *c, const char *const **out);

/* Why r's groups are not what sched_result promises (every decision in exactly one group, in
 * order; a group one gang's decisions or one single pod's; no gang in two groups; counts and
 * events right), into why (cap bytes); true when they are. */
bool tc_groups_ok(const sched_result *r, char *why, size_t cap);

#endif
