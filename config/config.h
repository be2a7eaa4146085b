/*
 * config/config.h - tessera.yaml: parsed and validated (each error names the field), with
 * defaults for everything.
 */
#ifndef CFG_CONFIG_H
#define CFG_CONFIG_H

#include "common/ts.h"
#include "scheduler/sched.h"

#define CFG_MAX_DEVICE_MAPPINGS 32

/* A DeviceClass counted against a quota resource (Kueue's deviceClassMappings). */
typedef struct cfg_device_mapping {
  const char *device_class; /* interned DeviceClass name */
  const char *resource;     /* interned quota resource name */
  ts_quantity weight;       /* quota charged per device (1; a MIG slice may count 1/7) */
} cfg_device_mapping;

/* Everything tessera.yaml sets, with defaults filled in. Durations are in milliseconds. */
typedef struct cfg_tessera {
  sched_config sched;             /* schedulerName, scoring, topology levels */
  bool manage_jobs_without_queue; /* queueing.manageJobsWithoutQueueName */
  bool fair_sharing;              /* queueing.fairSharing.enable */
  int fs_strategies[2];           /* fairSharing.preemptionStrategies, in order (q_fs_strategy:
                                     0 LessThanOrEqualToFinalShare, 1 LessThanInitialShare) */
  int nfs_strategies;             /* entries (Kueue's default: both, in that order) */
  bool wait_for_pods_ready;       /* queueing.waitForPodsReady.enable */
  int64_t pods_ready_timeout_ms;  /* waitForPodsReady.timeout */
  int64_t requeue_base_ms;        /* waitForPodsReady.requeuingBackoffBase */
  int64_t requeue_max_ms;         /* waitForPodsReady.requeuingBackoffMax */
  cfg_device_mapping mappings[CFG_MAX_DEVICE_MAPPINGS]; /* queueing.deviceClassMappings */
  int nmappings;                                        /* entries */
  bool leader_election;                                 /* leaderElection.enable */
  char lease_name[254];                                 /* leaderElection.leaseName */
  char lease_namespace[64];                             /* leaderElection.leaseNamespace */
  int64_t lease_duration_ms;                            /* leaderElection.leaseDuration (15s) */
  int64_t renew_deadline_ms;                            /* leaderElection.renewDeadline (10s) */
  int64_t retry_period_ms;                              /* leaderElection.retryPeriod (2s) */
  char health_address[128];                             /* healthAddress: /healthz and /readyz */
  char metrics_address[128];                            /* metricsAddress: /metrics */
  int64_t request_timeout_ms;                           /* api.requestTimeout */
  int64_t event_interval_ms; /* api.eventInterval: minimum between Events per pod */
} cfg_tessera;

/* Fills c with the defaults documented in README.md (no file needed to run). */
void cfg_tessera_default(cfg_tessera *c);
/* Parses tessera.yaml text (YAML or JSON) over the defaults. Unknown fields and invalid values
 * are errors naming the field ("tessera.yaml: leaderElection.renewDeadline: must be less than
 * leaseDuration"); err->line is set when known. */
ts_rc cfg_tessera_parse(const char *text, size_t len, cfg_tessera *c, ts_err *err);
ts_rc cfg_tessera_load(const char *path, cfg_tessera *c, ts_err *err);
/* Parses a Go-style duration ("15s", "1m30s", "500ms", "2h") into milliseconds. */
ts_rc cfg_parse_duration(const char *s, int64_t *ms);

#endif
