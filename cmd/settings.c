/* cmd/settings.c - tessera.yaml turned into what the cycle takes, shared by replay and run. */
#include <stdio.h>

#include "cmd/cmd.h"

ts_rc cmd_settings_load(const char *path, cfg_tessera *t, sched_config *cfg, q_devmap *devmap,
                        ts_err *err) {
  cfg_tessera_default(t);
  if (path && cfg_tessera_load(path, t, err) != TS_OK) return err->code;
  *cfg = t->sched;
  cfg->wait_for_pods_ready = t->wait_for_pods_ready;
  cfg->pods_ready_timeout_ns = t->pods_ready_timeout_ms * 1000000LL;
  cfg->requeue_base_ns = t->requeue_base_ms * 1000000LL;
  cfg->requeue_max_ns = t->requeue_max_ms * 1000000LL;
  cfg->fair_sharing = t->fair_sharing;
  cfg->nfs_strategies = t->nfs_strategies;
  for (int i = 0; i < t->nfs_strategies && i < 2; i++) cfg->fs_strategies[i] = t->fs_strategies[i];
  cfg->manage_jobs_without_queue = t->manage_jobs_without_queue;
  for (int m = 0; m < t->nmappings; m++) {
    char w[TS_QUANTITY_STR_MAX];
    ts_quantity_format(&t->mappings[m].weight, w);
    if (q_devmap_add(devmap, t->mappings[m].device_class, t->mappings[m].resource, w, err) != TS_OK)
      return ts_err_prefix(err, "%s", path ? path : "tessera.yaml");
  }
  cfg->devmap = devmap;
  return TS_OK;
}
