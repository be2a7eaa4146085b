/*
 * config/config.h - YAML and file input (libyaml, jansson), and tessera.yaml.
 *
 * Only this module parses YAML. YAML documents become jansson values with the same shapes
 * Kubernetes' own YAML-to-JSON conversion gives, so that one decoder serves both formats.
 */
#ifndef CFG_CONFIG_H
#define CFG_CONFIG_H

#include <jansson.h>

#include "common/ts.h"

#define CFG_YAML_MAX_DEPTH   256       /* nesting of mappings and sequences */
#define CFG_YAML_MAX_ALIASES 10000     /* alias references per stream (no alias bombs) */
#define CFG_FILE_MAX         (1 << 30) /* largest input file read, in bytes */

/* One document of a YAML stream or one JSON file. */
typedef struct cfg_doc {
  json_t *value;   /* new reference, owned by the cfg_doc */
  int line;        /* 1-based line where the document's value starts */
  int *item_lines; /* owned: line of each element of a top-level "items" sequence, or NULL */
  size_t nitems;   /* number of entries in item_lines */
} cfg_doc;

typedef TS_VEC(cfg_doc) cfg_docs;

/* Parses a whole YAML stream (one or more documents; empty documents are skipped) and
 * appends each document to docs. Plain scalars resolve as YAML 1.2's core schema (null,
 * true/false, integers, floats); quoted scalars and !!str are strings. Anchors, aliases
 * and merge keys (<<) are supported. On error fills err with line and column and leaves
 * docs holding what was parsed before the failing document. */
ts_rc cfg_yaml_parse(const char *text, size_t len, cfg_docs *docs, ts_err *err);

/* Parses JSON text (one value) into a document; item lines are not known (NULL). */
ts_rc cfg_json_parse(const char *text, size_t len, cfg_docs *docs, ts_err *err);

/* Frees every document and the vector. */
void cfg_docs_free(cfg_docs *docs);

/* Called for each object found by cfg_load_path: file is the path, line the 1-based line
 * where the object starts (0 when unknown), index its position in a List (-1 otherwise).
 * obj is borrowed for the call. A non-OK return stops the walk with that code. */
typedef ts_rc (*cfg_object_fn)(void *ud, json_t *obj, const char *file, int line, int index);

/* Per-file problems (unreadable file, syntax error) are reported through this callback and
 * the walk continues with the next file. err holds the file, line and column. */
typedef void (*cfg_error_fn)(void *ud, const ts_err *err);

/* Loads PATH: a JSON file (one object or a List), a YAML file of one or more documents, or
 * a directory of such files (recursive, sorted by name; files ending .json, .yaml, .yml).
 * Each object, and each item of a List (kind ending "List" with "items"), is passed to fn.
 * Returns TS_EIO when PATH cannot be read at all, otherwise TS_OK after the whole walk
 * (problems in single files go to on_error) unless fn stopped it. */
ts_rc cfg_load_path(const char *path, cfg_object_fn fn, cfg_error_fn on_error, void *ud);

/* Reads a whole file into a new NUL-terminated buffer (returns new via *out). */
ts_rc cfg_read_file(const char *path, char **out, size_t *len, ts_err *err);

/* ---- tessera.yaml ---------------------------------------------------------------------- */

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
