/* kubeclient/access.c - every request Tessera makes, as RBAC rules: the reads of the informers
 * (get, list, watch of the resources the caller watches), the writer's writes, leader election's
 * Lease and the read of Kueue's Lease. `tessera rbac` prints them as the chart's RBAC, and the
 * tests check every request a running scheduler made against them. */
#include <string.h>

#include "kubeclient/kc.h"

/* What the writer (writer.c), leader election (leader.c) and `tessera run` (Kueue's Lease)
 * send, beyond the informers' reads. Keep in step with the requests: test_run checks every
 * request it saw against kc_rbac_allows. */
static const kc_rbac_rule rules[] = {
    {KC_RBAC_CLUSTER, "", "pods/binding pods/eviction", "create", NULL,
     "bind pods; evict preemption victims (PodDisruptionBudgets hold)"},
    {KC_RBAC_CLUSTER, "", "pods/status", "patch", NULL, "PodScheduled=False with the reason"},
    {KC_RBAC_CLUSTER, "resource.k8s.io", "resourceclaims", "update", NULL,
     "the claim's delete-protection finalizer"},
    {KC_RBAC_CLUSTER, "resource.k8s.io", "resourceclaims/status", "update", NULL,
     "the allocation and reservedFor"},
    {KC_RBAC_CLUSTER, "events.k8s.io", "events", "create", NULL,
     "FailedScheduling, Preempted and InvalidConfiguration Events"},
    {KC_RBAC_CLUSTER, "kueue.x-k8s.io", "clusterqueues/status localqueues/status", "patch", NULL,
     "ClusterQueue and LocalQueue status (queueStatus)"},
    {KC_RBAC_CLUSTER, "coordination.k8s.io", "leases", "get", "c1f6bfd2.kueue.x-k8s.io",
     "whether Kueue's controller runs (queueStatus: auto reads its leader Lease)"},
    {KC_RBAC_REVIEW, "authentication.k8s.io", "tokenreviews", "create", NULL,
     "metricsSecure: who holds the token of a scrape of /metrics"},
    {KC_RBAC_REVIEW, "authorization.k8s.io", "subjectaccessreviews", "create", NULL,
     "metricsSecure: whether they may GET /metrics"},
    {KC_RBAC_LEASE_NS, "coordination.k8s.io", "leases", "create", NULL,
     "leader election: the Lease, the first time"},
    {KC_RBAC_LEASE, "coordination.k8s.io", "leases", "get update patch", NULL,
     "leader election: read, renew and release the Lease"},
};

size_t kc_rbac_rules(const kc_rbac_rule **out) {
  *out = rules;
  return sizeof rules / sizeof *rules;
}

/* True when word is one of the space-separated words of list. */
static bool in_list(const char *list, const char *word) {
  size_t n = strlen(word);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, " ");
    if (len == n && !strncmp(p, word, n)) return true;
    p += len;
    while (*p == ' ') p++;
  }
  return false;
}

bool kc_rbac_allows(const kc_resource_spec *reads, size_t nreads, const char *verb,
                    const char *resource) {
  const char *v = !strcmp(verb, "put") ? "update" : verb; /* as tessera_api_requests_total says */
  if (!*resource) return !strcmp(v, "get");               /* discovery: /apis, a non-resource URL */
  for (size_t k = 0; k < nreads; k++)
    if (!strcmp(reads[k].resource, resource) && in_list("get list watch", v)) return true;
  for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
    if (in_list(rules[i].resources, resource) && in_list(rules[i].verbs, v)) return true;
  return false;
}
