/*
 * config/config.h - tessera.yaml: parsed and validated (each error names the field), with
 * defaults for everything.
 */
#ifndef CFG_CONFIG_H
#define CFG_CONFIG_H

#include "common/ts.h"
#include "kubeclient/kc_opts.h"
#include "scheduler/sched_config.h"

#define CFG_ADDRESS_MAX 128 /* host:port of an endpoint */
/* tessera.yaml's apiVersion and kind: optional, and when present they must be these. */
#define CFG_API_VERSION "tessera.dev/v1alpha1"
#define CFG_KIND        "SchedulerConfiguration"

/* queueStatus: who writes ClusterQueue and LocalQueue status. */
typedef enum cfg_status_mode {
  CFG_STATUS_AUTO,  /* auto: unless Kueue's controller holds its leader Lease */
  CFG_STATUS_WRITE, /* write: always (the leader) */
  CFG_STATUS_OFF,   /* off: never */
} cfg_status_mode;

typedef struct cfg_queue_status {
  cfg_status_mode mode;     /* mode (auto) */
  char kueue_namespace[64]; /* kueueNamespace: where Kueue's Lease is looked for (kueue-system) */
  int64_t interval_ms;      /* interval: at most one write per queue per interval (5 s) */
} cfg_queue_status;

/* Kueue's leader election Lease (its manager's default resourceName). */
#define CFG_KUEUE_LEASE "c1f6bfd2.kueue.x-k8s.io"

/* Everything tessera.yaml sets, with defaults filled in, straight into the configuration of the
 * module that uses it: this file is the one place where settings are mapped. */
#define CFG_PATH_MAX 512

typedef struct cfg_tessera {
  sched_config sched;                    /* schedulerName, scoring, topology, waitForPodsReady;
                                            sched.queueing: queueing (Kueue's settings) */
  kc_leader_opts leader;                 /* leaderElection */
  kc_api_opts api;                       /* api */
  char health_address[CFG_ADDRESS_MAX];  /* healthAddress: /healthz and /readyz */
  char metrics_address[CFG_ADDRESS_MAX]; /* metricsAddress: /metrics */
  bool metrics_secure;                   /* metricsSecure: /metrics over HTTPS, each scrape's
                                            bearer token reviewed by the API server (false) */
  char metrics_cert_dir[CFG_PATH_MAX];   /* metricsCertDir: tls.crt and tls.key, "" for a
                                            self-signed certificate */
  cfg_queue_status queue_status;         /* queueStatus */
} cfg_tessera;

/* Fills c with the defaults documented in docs/configuration.md (no file needed to run). */
void cfg_tessera_default(cfg_tessera *c);
/* Frees what c owns (Kueue's device class mappings). */
void cfg_tessera_free(cfg_tessera *c);
/* Parses tessera.yaml text (YAML or JSON) over the defaults. Unknown fields and invalid values
 * are errors naming the field ("tessera.yaml: leaderElection.renewDeadline: must be less than
 * leaseDuration"); err->line is set when known. */
ts_rc cfg_tessera_parse(const char *text, size_t len, cfg_tessera *c, ts_err *err);
/* The same for a document already read (a snapshot's SchedulerConfiguration), errors named
 * after name. */
ts_rc cfg_tessera_from_json(json_t *root, const char *name, cfg_tessera *c, ts_err *err);
/* The same for the file at path (TS_EIO naming it when it cannot be read). */
ts_rc cfg_tessera_load(const char *path, cfg_tessera *c, ts_err *err);
/* The defaults, then the file at path when path is not NULL (a `--config` flag). On failure c
 * holds nothing to free. */
ts_rc cfg_tessera_setup(const char *path, cfg_tessera *c, ts_err *err);
/* The effective configuration as a tessera.yaml document (every setting, defaults filled in;
 * parsing it gives c back), e.g. for `tessera snapshot`. Returns new, NULL when out of memory. */
json_t *cfg_tessera_json(const cfg_tessera *c);
/* A duration in milliseconds as tessera.yaml writes it ("15s", "1500ms", "5m", "1h30m"). */
void cfg_format_duration(int64_t ms, char *out, size_t cap);

/* An endpoint address "IP:PORT", "[IPv6]:PORT" or ":PORT" (every interface): the IP into host
 * (cap bytes; may be NULL) without brackets, the port (1..65535) into *port (may be NULL).
 * TS_EINVAL with err saying what is wrong. */
ts_rc cfg_address_split(const char *addr, char *host, size_t cap, int *port, ts_err *err);

#endif
