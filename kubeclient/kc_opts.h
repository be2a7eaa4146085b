/*
 * kubeclient/kc_opts.h - the client's settings (tessera.yaml's api and leaderElection), apart
 * from the client's interface (kc.h), so that config/ can fill them without knowing the client.
 */
#ifndef KC_OPTS_H
#define KC_OPTS_H

#include <stdbool.h>
#include <stdint.h>

/* How long a request that is not a watch may take before it fails (tessera.yaml's
 * api.requestTimeout; KC_REQUEST_TIMEOUT_MS by default). A write that times out got no answer:
 * the writer sends it again. */
#define KC_REQUEST_TIMEOUT_MS 30000
#define KC_EVENT_INTERVAL_MS  60000 /* between Events about one pod, by default */

/* tessera.yaml's api settings. */
typedef struct kc_api_opts {
  int64_t request_timeout_ms; /* requestTimeout (KC_REQUEST_TIMEOUT_MS) */
  int64_t event_interval_ms;  /* eventInterval (KC_EVENT_INTERVAL_MS; 0: no minimum) */
} kc_api_opts;
void kc_api_opts_default(kc_api_opts *o); /* the defaults above */

/* tessera.yaml's leaderElection. */
typedef struct kc_leader_opts {
  bool enable;      /* false: no election, this replica always leads */
  char ns[64];      /* the Lease's namespace; "": Tessera's own (kc_leader_namespace) */
  char name[254];   /* the Lease (tessera) */
  int64_t lease_ms; /* leaseDuration (15 s) */
  int64_t renew_ms; /* renewDeadline (10 s) */
  int64_t retry_ms; /* retryPeriod (2 s) */
} kc_leader_opts;
void kc_leader_opts_default(kc_leader_opts *o); /* enabled, own namespace/tessera, 15/10/2 s */
/* The Lease's namespace into out: o->ns, else $POD_NAMESPACE (the chart sets it), else the
 * namespace of the pod's service account, else kube-system (outside a cluster). */
void kc_leader_namespace(const kc_leader_opts *o, char *out, size_t cap);

#endif
