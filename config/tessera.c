/* config/tessera.c - tessera.yaml: strict decoding (unknown fields are errors, as in
 * kube-scheduler's own configuration) with every value validated. */
#include "config/config.h"
#include "input/input.h"
#include "model/model.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CFG_MAX_DEVICE_MAPPINGS 32 /* queueing.deviceClassMappings entries */

/* Decoding state: the current field path for messages. */
typedef struct cdec {
  ts_err *err;      /* caller's error */
  const char *name; /* file name for messages */
  char path[256];   /* "leaderElection.renewDeadline" */
} cdec;

static ts_rc fail(cdec *d, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ts_rc fail(cdec *d, const char *field, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ts_err_set(d->err, TS_EINVAL, "%s: %s%s%s: %s", d->name, d->path,
                    *d->path && field ? "." : "", field ? field : "", msg);
}

static size_t enter(cdec *d, const char *field) {
  size_t mark = strlen(d->path);
  snprintf(d->path + mark, sizeof d->path - mark, "%s%s", mark ? "." : "", field);
  return mark;
}

static void leave(cdec *d, size_t mark) {
  d->path[mark] = '\0';
}

/* Every key of obj must be in the NULL-terminated list. */
static ts_rc known_keys(cdec *d, json_t *obj, const char *const *keys) {
  const char *k;
  json_t *v;
  json_object_foreach(obj, k, v) {
    bool ok = false;
    (void)v;
    for (const char *const *x = keys; *x && !ok; x++) ok = !strcmp(*x, k);
    if (!ok) return fail(d, k, "unknown field");
  }
  return TS_OK;
}

static ts_rc get_object(cdec *d, json_t *parent, const char *key, json_t **out) {
  json_t *v = json_object_get(parent, key);
  *out = NULL;
  if (!v || json_is_null(v)) return TS_OK;
  if (!json_is_object(v)) return fail(d, key, "must be a mapping");
  *out = v;
  return TS_OK;
}

static ts_rc get_bool(cdec *d, json_t *parent, const char *key, bool *out) {
  json_t *v = json_object_get(parent, key);
  if (!v || json_is_null(v)) return TS_OK;
  if (!json_is_boolean(v)) return fail(d, key, "must be true or false");
  *out = json_is_true(v);
  return TS_OK;
}

/* A string that fits cap; "" is refused when required. */
static ts_rc get_string(cdec *d, json_t *parent, const char *key, char *out, size_t cap) {
  json_t *v = json_object_get(parent, key);
  if (!v || json_is_null(v)) return TS_OK;
  if (!json_is_string(v) || !*json_string_value(v))
    return fail(d, key, "must be a non-empty string");
  if (strlen(json_string_value(v)) >= cap)
    return fail(d, key, "is longer than %zu characters", cap - 1);
  ts_strlcpy(out, json_string_value(v), cap);
  return TS_OK;
}

static ts_rc get_duration(cdec *d, json_t *parent, const char *key, int64_t *ms, int64_t min_ms) {
  json_t *v = json_object_get(parent, key);
  if (!v || json_is_null(v)) return TS_OK;
  if (!json_is_string(v) || ts_duration_parse(json_string_value(v), ms) != TS_OK)
    return fail(d, key, "must be a duration such as \"15s\", \"500ms\" or \"1m30s\"");
  if (*ms < min_ms) return fail(d, key, "must be at least %lldms", (long long)min_ms);
  return TS_OK;
}

static ts_rc parse_topology(cdec *d, json_t *root, cfg_tessera *c) {
  static const char *const keys[] = {"levels", NULL};
  json_t *t, *levels, *v;
  size_t i, mark;
  ts_rc rc = get_object(d, root, "topology", &t);
  if (rc != TS_OK || !t) return rc;
  mark = enter(d, "topology");
  if ((rc = known_keys(d, t, keys)) != TS_OK) return rc;
  levels = json_object_get(t, "levels");
  if (levels && !json_is_array(levels))
    return fail(d, "levels", "must be a list of node label keys");
  if (levels) {
    if (json_array_size(levels) > SCHED_MAX_TOPOLOGY)
      return fail(d, "levels", "at most %d levels", SCHED_MAX_TOPOLOGY);
    c->sched.ntopology = 0;
    json_array_foreach(levels, i, v) {
      const char *key = json_string_value(v);
      if (!key || !*key) return fail(d, "levels", "entry %zu must be a node label key", i);
      c->sched.topology[c->sched.ntopology] = ts_intern_cstr(key);
      for (int k = 0; k < c->sched.ntopology; k++)
        if (c->sched.topology[k] == c->sched.topology[c->sched.ntopology])
          return fail(d, "levels", "\"%s\" is listed twice", key);
      c->sched.ntopology++;
    }
  }
  leave(d, mark);
  return TS_OK;
}

static ts_rc parse_fair_sharing(cdec *d, json_t *q, cfg_tessera *c) {
  static const char *const keys[] = {"enable", "preemptionStrategies", NULL};
  json_t *fs, *strategies, *v;
  size_t i, mark;
  ts_rc rc = get_object(d, q, "fairSharing", &fs);
  if (rc != TS_OK || !fs) return rc;
  mark = enter(d, "fairSharing");
  if ((rc = known_keys(d, fs, keys)) ||
      (rc = get_bool(d, fs, "enable", &c->sched.queueing.fair_sharing)))
    return rc;
  strategies = json_object_get(fs, "preemptionStrategies");
  if (strategies && !json_is_array(strategies))
    return fail(d, "preemptionStrategies", "must be a list");
  if (json_array_size(strategies)) c->sched.queueing.nfs_strategies = 0;
  json_array_foreach(strategies, i, v) {
    const char *s = json_string_value(v);
    int k = s && !strcmp(s, "LessThanOrEqualToFinalShare") ? Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE
            : s && !strcmp(s, "LessThanInitialShare")      ? Q_FS_LESS_THAN_INITIAL_SHARE
                                                           : -1;
    if (k < 0)
      return fail(d, "preemptionStrategies",
                  "entry %zu: supported values: \"LessThanOrEqualToFinalShare\", "
                  "\"LessThanInitialShare\"",
                  i);
    if (i >= 2 || (i == 1 && ((q_fs_strategy)k == c->sched.queueing.fs_strategies[0] ||
                              k == Q_FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE)))
      return fail(d, "preemptionStrategies",
                  "Unsupported value: supported values: \"LessThanOrEqualToFinalShare\", "
                  "\"LessThanInitialShare\", \"LessThanOrEqualToFinalShare,LessThanInitialShare\"");
    c->sched.queueing.fs_strategies[c->sched.queueing.nfs_strategies++] = (q_fs_strategy)k;
  }
  leave(d, mark);
  return TS_OK;
}

static ts_rc parse_pods_ready(cdec *d, json_t *q, cfg_tessera *c) {
  static const char *const keys[] = {"enable", "timeout", "requeuingBackoffBase",
                                     "requeuingBackoffMax", NULL};
  sched_config *sc = &c->sched;
  int64_t timeout = sc->pods_ready_timeout_ns / 1000000, base = sc->requeue_base_ns / 1000000,
          max = sc->requeue_max_ns / 1000000;
  json_t *w;
  size_t mark;
  ts_rc rc = get_object(d, q, "waitForPodsReady", &w);
  if (rc != TS_OK || !w) return rc;
  mark = enter(d, "waitForPodsReady");
  if ((rc = known_keys(d, w, keys)) || (rc = get_bool(d, w, "enable", &sc->wait_for_pods_ready)) ||
      (rc = get_duration(d, w, "timeout", &timeout, 1000)) ||
      (rc = get_duration(d, w, "requeuingBackoffBase", &base, 1000)) ||
      (rc = get_duration(d, w, "requeuingBackoffMax", &max, 1000)))
    return rc;
  if (max < base)
    return fail(d, "requeuingBackoffMax", "must not be less than requeuingBackoffBase");
  sc->pods_ready_timeout_ns = timeout * 1000000, sc->requeue_base_ns = base * 1000000;
  sc->requeue_max_ns = max * 1000000;
  leave(d, mark);
  return TS_OK;
}

/* One of Kueue's deviceClassMappings, added to the queueing settings' device map. */
static ts_rc parse_mapping(cdec *d, json_t *e, q_devmap *dm) {
  static const char *const keys[] = {"deviceClassName", "resource", "weight", NULL};
  char cls[254] = "", res[254] = "", num[64] = "1";
  json_t *w;
  ts_quantity q;
  ts_err qe;
  ts_rc rc;
  if (!json_is_object(e)) return fail(d, NULL, "must be a mapping");
  if ((rc = known_keys(d, e, keys)) ||
      (rc = get_string(d, e, "deviceClassName", cls, sizeof cls)) ||
      (rc = get_string(d, e, "resource", res, sizeof res)))
    return rc;
  if (!*cls) return fail(d, "deviceClassName", "is required");
  if (!*res) return fail(d, "resource", "is required");
  for (uint32_t k = 0; k < dm->n; k++)
    if (!strcmp(dm->v[k].device_class, cls))
      return fail(d, "deviceClassName", "\"%s\" is mapped twice", cls);
  w = json_object_get(e, "weight");
  if (w && !json_is_null(w)) {
    if (json_is_integer(w))
      snprintf(num, sizeof num, "%lld", (long long)json_integer_value(w));
    else if (json_is_real(w))
      snprintf(num, sizeof num, "%.9g", json_real_value(w));
    else if (!json_is_string(w) || strlen(json_string_value(w)) >= sizeof num)
      num[0] = '\0';
    else
      ts_strlcpy(num, json_string_value(w), sizeof num);
    if (ts_quantity_parse(num, &q, &qe) != TS_OK || ts_quantity_sign(&q) <= 0)
      return fail(d, "weight", "must be a positive quantity such as \"1\" or \"143m\"");
  }
  if ((rc = q_devmap_add(dm, cls, res, num, &qe)) != TS_OK) return fail(d, NULL, "%s", qe.text);
  return TS_OK;
}

static ts_rc parse_mappings(cdec *d, json_t *q, cfg_tessera *c) {
  json_t *arr = json_object_get(q, "deviceClassMappings"), *e;
  q_devmap *dm = &c->sched.queueing.devmap;
  size_t i, mark;
  ts_rc rc = TS_OK;
  if (!arr || json_is_null(arr)) return TS_OK;
  if (!json_is_array(arr)) return fail(d, "deviceClassMappings", "must be a list");
  if (json_array_size(arr) > CFG_MAX_DEVICE_MAPPINGS)
    return fail(d, "deviceClassMappings", "at most %d entries", CFG_MAX_DEVICE_MAPPINGS);
  q_devmap_free(dm);
  json_array_foreach(arr, i, e) {
    char idx[48];
    snprintf(idx, sizeof idx, "deviceClassMappings[%zu]", i);
    mark = enter(d, idx);
    if ((rc = parse_mapping(d, e, dm)) != TS_OK) return rc;
    leave(d, mark);
  }
  return TS_OK;
}

static ts_rc parse_queueing(cdec *d, json_t *root, cfg_tessera *c) {
  static const char *const keys[] = {"admission",           "manageJobsWithoutQueueName",
                                     "fairSharing",         "waitForPodsReady",
                                     "deviceClassMappings", NULL};
  char admission[16] = "";
  json_t *q;
  size_t mark;
  ts_rc rc = get_object(d, root, "queueing", &q);
  if (rc != TS_OK || !q) return rc;
  mark = enter(d, "queueing");
  if ((rc = known_keys(d, q, keys)) ||
      (rc = get_string(d, q, "admission", admission, sizeof admission)) ||
      (rc = get_bool(d, q, "manageJobsWithoutQueueName",
                     &c->sched.queueing.manage_jobs_without_queue)) ||
      (rc = parse_fair_sharing(d, q, c)) || (rc = parse_pods_ready(d, q, c)) ||
      (rc = parse_mappings(d, q, c)))
    return rc;
  if (*admission && strcmp(admission, "tessera") && strcmp(admission, "kueue"))
    return fail(d, "admission", "supported values: \"tessera\", \"kueue\"");
  if (*admission) c->sched.kueue_admits = !strcmp(admission, "kueue");
  leave(d, mark);
  return TS_OK;
}

/* leaseNamespace: a namespace, or "" for Tessera's own (kc_leader_namespace). */
static ts_rc lease_namespace(cdec *d, json_t *l, kc_leader_opts *o) {
  json_t *v = json_object_get(l, "leaseNamespace");
  if (json_is_string(v) && !*json_string_value(v)) {
    o->ns[0] = '\0';
    return TS_OK;
  }
  return get_string(d, l, "leaseNamespace", o->ns, sizeof o->ns);
}

static ts_rc parse_leader(cdec *d, json_t *root, cfg_tessera *c) {
  static const char *const keys[] = {
      "enable",      "leaseName", "leaseNamespace", "leaseDuration", "renewDeadline",
      "retryPeriod", NULL};
  json_t *l;
  size_t mark;
  ts_rc rc = get_object(d, root, "leaderElection", &l);
  if (rc != TS_OK || !l) return rc;
  mark = enter(d, "leaderElection");
  kc_leader_opts *o = &c->leader;
  if ((rc = known_keys(d, l, keys)) || (rc = get_bool(d, l, "enable", &o->enable)) ||
      (rc = get_string(d, l, "leaseName", o->name, sizeof o->name)) ||
      (rc = lease_namespace(d, l, o)) ||
      (rc = get_duration(d, l, "leaseDuration", &o->lease_ms, 100)) ||
      (rc = get_duration(d, l, "renewDeadline", &o->renew_ms, 100)) ||
      (rc = get_duration(d, l, "retryPeriod", &o->retry_ms, 10)))
    return rc;
  if (model_subdomain_error(o->name))
    return fail(d, "leaseName", "Invalid value: \"%s\": %s", o->name,
                model_subdomain_error(o->name));
  if (o->ns[0] && model_dns_label_error(o->ns)) /* "": Tessera's own namespace */
    return fail(d, "leaseNamespace", "Invalid value: \"%s\": %s", o->ns,
                model_dns_label_error(o->ns));
  if (o->renew_ms >= o->lease_ms)
    return fail(d, "renewDeadline", "must be less than leaseDuration");
  if (o->retry_ms >= o->renew_ms) return fail(d, "retryPeriod", "must be less than renewDeadline");
  leave(d, mark);
  return TS_OK;
}

static ts_rc parse_queue_status(cdec *d, json_t *root, cfg_tessera *c) {
  static const char *const keys[] = {"mode", "kueueNamespace", "interval", NULL};
  static const char *const modes[] = {
      [CFG_STATUS_AUTO] = "auto", [CFG_STATUS_WRITE] = "write", [CFG_STATUS_OFF] = "off"};
  cfg_queue_status *o = &c->queue_status;
  char mode[16] = "";
  json_t *s;
  size_t mark;
  ts_rc rc = get_object(d, root, "queueStatus", &s);
  if (rc != TS_OK || !s) return rc;
  mark = enter(d, "queueStatus");
  if ((rc = known_keys(d, s, keys)) || (rc = get_string(d, s, "mode", mode, sizeof mode)) ||
      (rc = get_string(d, s, "kueueNamespace", o->kueue_namespace, sizeof o->kueue_namespace)) ||
      (rc = get_duration(d, s, "interval", &o->interval_ms, 0)))
    return rc;
  if (*mode) {
    size_t i = 0;
    while (i < 3 && strcmp(mode, modes[i])) i++;
    if (i == 3) return fail(d, "mode", "supported values: \"auto\", \"write\", \"off\"");
    o->mode = (cfg_status_mode)i;
  }
  if (model_dns_label_error(o->kueue_namespace))
    return fail(d, "kueueNamespace", "Invalid value: \"%s\": %s", o->kueue_namespace,
                model_dns_label_error(o->kueue_namespace));
  leave(d, mark);
  return TS_OK;
}

static ts_rc parse_api(cdec *d, json_t *root, cfg_tessera *c) {
  static const char *const keys[] = {"requestTimeout", "eventInterval", NULL};
  json_t *a;
  size_t mark;
  ts_rc rc = get_object(d, root, "api", &a);
  if (rc != TS_OK || !a) return rc;
  mark = enter(d, "api");
  if ((rc = known_keys(d, a, keys)) ||
      (rc = get_duration(d, a, "requestTimeout", &c->api.request_timeout_ms, 100)) ||
      (rc = get_duration(d, a, "eventInterval", &c->api.event_interval_ms, 0)))
    return rc;
  leave(d, mark);
  return TS_OK;
}

ts_rc cfg_address_split(const char *addr, char *host, size_t cap, int *port, ts_err *err) {
  const char *colon = strrchr(addr, ':'), *h = addr;
  size_t hlen = colon ? (size_t)(colon - addr) : 0;
  long p = 0;
  unsigned char bin[16];
  char ip[64];
  if (colon)
    for (const char *q = colon + 1; *q && p <= 65535; q++)
      p = isdigit((unsigned char)*q) ? p * 10 + (*q - '0') : 70000;
  if (!colon || p < 1 || p > 65535)
    return ts_err_set(err, TS_EINVAL, "must be HOST:PORT with a port from 1 to 65535, not \"%s\"",
                      addr);
  if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']')
    h++, hlen -= 2; /* [IPv6]:port */
  else if (memchr(h, ':', hlen))
    return ts_err_set(err, TS_EINVAL, "an IPv6 address goes in brackets ([::1]:%ld), not \"%s\"", p,
                      addr);
  snprintf(ip, sizeof ip, "%.*s", (int)(hlen < sizeof ip ? hlen : 0), h);
  if (!hlen) snprintf(ip, sizeof ip, "0.0.0.0");
  if (hlen >= sizeof ip || (inet_pton(AF_INET, ip, bin) != 1 && inet_pton(AF_INET6, ip, bin) != 1))
    return ts_err_set(err, TS_EINVAL,
                      "the host must be an IP address (0.0.0.0, [::]), not \"%.*s\"",
                      (int)(colon - addr), addr);
  if (host && ts_strlcpy(host, ip, cap) >= cap) return ts_err_set(err, TS_ELIMIT, "too long");
  if (port) *port = (int)p;
  return TS_OK;
}

void cfg_format_duration(int64_t ms, char *out, size_t cap) {
  int64_t h = ms / 3600000, m = ms / 60000 % 60, s = ms / 1000 % 60, r = ms % 1000;
  size_t n = 0;
  out[0] = '\0';
  if (!ms) {
    snprintf(out, cap, "0");
    return;
  }
  if (r) { /* below a second: all in milliseconds */
    snprintf(out, cap, "%lldms", (long long)ms);
    return;
  }
  if (h) n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%lldh", (long long)h);
  if (m && n < cap) n += (size_t)snprintf(out + n, cap - n, "%lldm", (long long)m);
  if (s && n < cap) snprintf(out + n, cap - n, "%llds", (long long)s);
}

static json_t *dur(int64_t ms) {
  char b[48];
  cfg_format_duration(ms, b, sizeof b);
  return json_string(b);
}

json_t *cfg_tessera_json(const cfg_tessera *c) {
  static const char *const modes[] = {"auto", "write", "off"};
  const sched_config *s = &c->sched;
  const q_config *q = &s->queueing;
  json_t *levels = json_array(), *strategies = json_array(), *maps = json_array(), *o;
  for (int i = 0; i < s->ntopology; i++) json_array_append_new(levels, json_string(s->topology[i]));
  for (uint32_t i = 0; i < q->nfs_strategies; i++)
    json_array_append_new(strategies,
                          json_string(q->fs_strategies[i] == Q_FS_LESS_THAN_INITIAL_SHARE
                                          ? "LessThanInitialShare"
                                          : "LessThanOrEqualToFinalShare"));
  for (uint32_t i = 0; i < q->devmap.n; i++) {
    char w[TS_QUANTITY_STR_MAX];
    ts_quantity_format(&q->devmap.v[i].weight, w);
    json_array_append_new(maps, json_pack("{s:s, s:s, s:s}", "deviceClassName",
                                          q->devmap.v[i].device_class, "resource",
                                          q->devmap.res[q->devmap.v[i].slot], "weight", w));
  }
  o = json_pack("{s:s, s:s, s:s, s:s, s:{s:o}, "
                "s:{s:s, s:b, s:{s:b, s:o}, s:{s:b, s:o, s:o, s:o}, s:o}, "
                "s:{s:b, s:s, s:s, s:o, s:o, s:o}, s:s, s:s, s:b, s:s*, s:{s:o, s:o}, "
                "s:{s:s, s:s, s:o}}",
                "apiVersion", CFG_API_VERSION, "kind", CFG_KIND, "schedulerName", s->scheduler_name,
                "scoring", sched_scoring_name(s->scoring), "topology", "levels", levels, "queueing",
                "admission", s->kueue_admits ? "kueue" : "tessera", "manageJobsWithoutQueueName",
                q->manage_jobs_without_queue, "fairSharing", "enable", q->fair_sharing,
                "preemptionStrategies", strategies, "waitForPodsReady", "enable",
                s->wait_for_pods_ready, "timeout", dur(s->pods_ready_timeout_ns / 1000000),
                "requeuingBackoffBase", dur(s->requeue_base_ns / 1000000), "requeuingBackoffMax",
                dur(s->requeue_max_ns / 1000000), "deviceClassMappings", maps, "leaderElection",
                "enable", c->leader.enable, "leaseName", c->leader.name, "leaseNamespace",
                c->leader.ns, "leaseDuration", dur(c->leader.lease_ms), "renewDeadline",
                dur(c->leader.renew_ms), "retryPeriod", dur(c->leader.retry_ms), "healthAddress",
                c->health_address, "metricsAddress", c->metrics_address, "metricsSecure",
                c->metrics_secure, "metricsCertDir",
                c->metrics_cert_dir[0] ? c->metrics_cert_dir : NULL, "api", "requestTimeout",
                dur(c->api.request_timeout_ms), "eventInterval", dur(c->api.event_interval_ms),
                "queueStatus", "mode", modes[c->queue_status.mode], "kueueNamespace",
                c->queue_status.kueue_namespace, "interval", dur(c->queue_status.interval_ms));
  return o;
}

static ts_rc check_address(cdec *d, const char *field, const char *addr) {
  ts_err e;
  ts_err_clear(&e);
  if (cfg_address_split(addr, NULL, 0, NULL, &e) != TS_OK) return fail(d, field, "%s", e.text);
  return TS_OK;
}

static ts_rc parse_root(cdec *d, json_t *root, cfg_tessera *c) {
  static const char *const keys[] = {
      "apiVersion",     "kind",     "schedulerName",  "scoring",
      "topology",       "queueing", "leaderElection", "healthAddress",
      "metricsAddress", "api",      "queueStatus",    "metricsSecure",
      "metricsCertDir", NULL};
  char name[254] = "", scoring[32] = "", api_version[64] = "", kind[64] = "";
  ts_rc rc;
  if (!json_is_object(root)) return fail(d, NULL, "must be a mapping of settings");
  if ((rc = known_keys(d, root, keys)) ||
      (rc = get_string(d, root, "apiVersion", api_version, sizeof api_version)) ||
      (rc = get_string(d, root, "kind", kind, sizeof kind)))
    return rc;
  if (*api_version && strcmp(api_version, CFG_API_VERSION))
    return fail(d, "apiVersion", "must be \"%s\", not \"%s\"", CFG_API_VERSION, api_version);
  if (*kind && strcmp(kind, CFG_KIND))
    return fail(d, "kind", "must be \"%s\", not \"%s\"", CFG_KIND, kind);
  if ((rc = get_string(d, root, "schedulerName", name, sizeof name)) ||
      (rc = get_string(d, root, "scoring", scoring, sizeof scoring)) ||
      (rc = parse_topology(d, root, c)) || (rc = parse_queueing(d, root, c)) ||
      (rc = parse_leader(d, root, c)) || (rc = parse_api(d, root, c)) ||
      (rc = parse_queue_status(d, root, c)) ||
      (rc = get_string(d, root, "healthAddress", c->health_address, sizeof c->health_address)) ||
      (rc = get_string(d, root, "metricsAddress", c->metrics_address, sizeof c->metrics_address)) ||
      (rc = check_address(d, "healthAddress", c->health_address)) ||
      (rc = check_address(d, "metricsAddress", c->metrics_address)) ||
      (rc = get_bool(d, root, "metricsSecure", &c->metrics_secure)) ||
      (rc = get_string(d, root, "metricsCertDir", c->metrics_cert_dir, sizeof c->metrics_cert_dir)))
    return rc;
  if (c->metrics_cert_dir[0] && !c->metrics_secure)
    return fail(d, "metricsCertDir", "is used only with metricsSecure: true");
  if (*name) c->sched.scheduler_name = ts_intern_cstr(name);
  if (*scoring && !sched_scoring_parse(scoring, &c->sched.scoring))
    return fail(d, "scoring",
                "supported values: \"binpack\", \"spread\", \"first-fit\", \"best-fit\", "
                "\"dot-product\", \"gpu-packing\", \"fgd\", \"random\", \"gpu-clustering\"");
  return TS_OK;
}

void cfg_tessera_default(cfg_tessera *c) {
  memset(c, 0, sizeof *c);
  sched_config_default(&c->sched);
  kc_leader_opts_default(&c->leader);
  kc_api_opts_default(&c->api);
  ts_strlcpy(c->health_address, "0.0.0.0:10259", sizeof c->health_address);
  ts_strlcpy(c->metrics_address, "0.0.0.0:10260", sizeof c->metrics_address);
  c->queue_status.mode = CFG_STATUS_AUTO;
  ts_strlcpy(c->queue_status.kueue_namespace, "kueue-system",
             sizeof c->queue_status.kueue_namespace);
  c->queue_status.interval_ms = 5000;
}

void cfg_tessera_free(cfg_tessera *c) {
  sched_config_free(&c->sched);
}

static ts_rc parse_named(const char *name, const char *text, size_t len, cfg_tessera *c,
                         ts_err *err) {
  in_docs docs = {0};
  cdec d = {.err = err, .name = name};
  ts_rc rc = in_yaml_parse(text, len, &docs, err);
  if (rc != TS_OK) {
    ts_err_prefix(err, "%s", name);
  } else if (docs.n > 1) {
    rc = ts_err_set(err, TS_EINVAL, "%s: holds %zu documents, want one", name, docs.n);
  } else if (docs.n == 1) {
    rc = parse_root(&d, docs.v[0].value, c);
  }
  in_docs_free(&docs);
  return rc;
}

ts_rc cfg_tessera_from_json(json_t *root, const char *name, cfg_tessera *c, ts_err *err) {
  cdec d = {.err = err, .name = name};
  return parse_root(&d, root, c);
}

ts_rc cfg_tessera_parse(const char *text, size_t len, cfg_tessera *c, ts_err *err) {
  return parse_named("tessera.yaml", text, len, c, err);
}

ts_rc cfg_tessera_load(const char *path, cfg_tessera *c, ts_err *err) {
  char *text = NULL;
  size_t len = 0;
  ts_rc rc = in_read_file(path, &text, &len, err);
  if (rc == TS_OK) rc = parse_named(path, text, len, c, err);
  ts_free(text);
  return rc;
}

ts_rc cfg_tessera_setup(const char *path, cfg_tessera *c, ts_err *err) {
  cfg_tessera_default(c);
  if (path && cfg_tessera_load(path, c, err) != TS_OK) {
    cfg_tessera_free(c);
    return err->code;
  }
  return TS_OK;
}
