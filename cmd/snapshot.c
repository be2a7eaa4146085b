/* cmd/snapshot.c - `tessera snapshot`: a live cluster as `tessera run` sees it, into one file
 * that `tessera replay` reads. The same informers list every kind the model reads (nothing
 * else: no Secret is ever read); the file is a kubectl-style List whose first items are the
 * effective tessera.yaml (SchedulerConfiguration) and a Snapshot record (when, which server,
 * how many objects of each kind), then every object in kind order, then by namespace/name.
 * What could carry credentials is left out: environment variable values (`env[].value`
 * anywhere, e.g. in pods and job templates), kubectl's last-applied-configuration annotation,
 * and managedFields. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "kubeclient/kc.h"
#include "model/wire.h"

#define SNAPSHOT_TIMEOUT_MS 120000 /* every informer listed by then, or the snapshot fails */

/* An object as last listed or watched, kept as the compact JSON text it will be written as
 * (a parsed object took ~8x the memory: 100,000 pods would have held gigabytes); the map's key
 * is its key. */
typedef struct entry {
  char *text;        /* owned: the object without what could hold credentials */
  uint32_t scrubbed; /* environment values left out of it */
  char key[];        /* "NN/ns/name" */
} entry;

typedef struct snap {
  uv_loop_t *loop;      /* the loop */
  kc_client *client;    /* API client */
  kc_informers *inf;    /* one per kind the model reads */
  kc_req *version_req;  /* GET /version */
  uv_timer_t timeout;   /* gives up when the informers do not sync */
  ts_map objs;          /* "NN/ns/name" (NN: the kind's index) -> entry (owned) */
  const cfg_tessera *t; /* the effective configuration */
  const char *out;      /* the file */
  cmd_format fmt;       /* JSON (a List, one item per line) or YAML (a document per item) */
  int status;           /* exit status */
  bool finished;        /* written (or failed): stopping */
} snap;

void cmd_model_kinds(kc_resource_spec out[MODEL_KIND_COUNT]) {
  for (int k = 0; k < MODEL_KIND_COUNT; k++) {
    const model_kind_api *api = model_kind_api_of((model_kind)k);
    out[k] = (kc_resource_spec){api->resource, api->group, api->kind, api->versions};
  }
}

/* ---- what goes out -------------------------------------------------------------------- */

static int entry_cmp(const void *a, const void *b) {
  return strcmp((*(entry *const *)a)->key, (*(entry *const *)b)->key);
}

/* The Snapshot record: when, from which server, how many objects of each kind. */
static json_t *record(json_t *version, const size_t *counts) {
  char now[40];
  time_t t = time(NULL);
  struct tm tm;
  json_t *kinds = json_object();
  gmtime_r(&t, &tm);
  strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
  for (int k = 0; k < MODEL_KIND_COUNT; k++) { /* "pods", "podgroups.scheduling.volcano.sh" */
    const model_kind_api *api = model_kind_api_of((model_kind)k);
    char name[160];
    snprintf(name, sizeof name, "%s%s%s", api->resource, *api->group ? "." : "", api->group);
    if (counts[k]) json_object_set_new(kinds, name, json_integer((json_int_t)counts[k]));
  }
  return json_pack("{s:s, s:s, s:{s:s, s:s}, s:O, s:o}", "apiVersion", CFG_API_VERSION, "kind",
                   "Snapshot", "metadata", "name", "snapshot", "creationTimestamp", now, "server",
                   version ? version : json_null(), "objects", kinds);
}

static int write_file(snap *s, json_t *version) {
  size_t n = 0, counts[MODEL_KIND_COUNT] = {0}, scrubbed = 0, it = 0;
  const ts_map_slot *sl;
  entry **items = malloc((s->objs.count + 1) * sizeof *items);
  json_t *config = cfg_tessera_json(s->t), *rec;
  cmd_out o;
  FILE *f;
  bool ok;
  if (!items || !config) {
    fprintf(stderr, "tessera snapshot: out of memory\n");
    free(items);
    json_decref(config);
    return 1;
  }
  while (ts_map_next(&s->objs, &it, &sl)) {
    entry *e = sl->value;
    items[n++] = e;
    counts[atoi(e->key)]++;
    scrubbed += e->scrubbed;
  }
  qsort(items, n, sizeof *items, entry_cmp);
  rec = record(version, counts);
  if (!(f = cmd_out_open(&o, s->out))) { /* beside it, renamed over it once whole */
    fprintf(stderr, "tessera snapshot: %s: cannot write: %s\n", s->out, strerror(errno));
    free(items);
    json_decref(config);
    json_decref(rec);
    return 1;
  }
  ok = true;
  if (s->fmt == CMD_FMT_YAML) { /* a document per object, as tessera replay reads YAML */
    ok = cmd_write_doc(f, CMD_FMT_YAML, json_incref(config)) == 0 &&
         cmd_write_doc(f, CMD_FMT_YAML, json_incref(rec)) == 0;
    for (size_t i = 0; ok && i < n; i++)
      ok = cmd_write_doc(f, CMD_FMT_YAML, json_loads(items[i]->text, 0, NULL)) == 0;
  } else { /* one item per line: diffs and greps of a snapshot stay readable */
    fputs("{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\n", f);
    json_dumpf(config, f, JSON_COMPACT | JSON_SORT_KEYS);
    fputs(",\n", f);
    json_dumpf(rec, f, JSON_COMPACT | JSON_SORT_KEYS);
    for (size_t i = 0; i < n; i++) {
      fputs(",\n", f);
      fputs(items[i]->text, f);
    }
    fputs("\n]}\n", f);
  }
  if (!ok) errno = ENOMEM, cmd_out_abort(&o);
  ok = ok && cmd_out_commit(&o) == 0; /* a failed write leaves the previous snapshot whole */
  free(items);
  json_decref(config);
  json_decref(rec);
  if (!ok) {
    fprintf(stderr, "tessera snapshot: %s: write failed: %s\n", s->out, strerror(errno));
    return 1;
  }
  ts_log(TS_LOG_INFO, "wrote %s: %zu objects (%zu environment values left out)", s->out, n,
         scrubbed);
  return 0;
}

/* ---- the informers --------------------------------------------------------------------- */

static void finish(snap *s, int status) {
  if (s->finished) return;
  s->finished = true;
  s->status = status;
  uv_timer_stop(&s->timeout);
  uv_close((uv_handle_t *)&s->timeout, NULL);
  kc_informers_stop(s->inf);
  s->inf = NULL;
  kc_cancel(s->version_req);
  s->version_req = NULL;
  kc_client_free(s->client);
  s->client = NULL;
}

static void on_event(void *ud, kc_event_type t, json_t *obj, const kc_resource *res) {
  snap *s = ud;
  const char *ns = NULL, *name = NULL;
  model_kind k = model_decode_key(obj, &ns, &name);
  char key[TS_KEY_MAX + 16];
  entry *e;
  size_t len;
  uint32_t scrubbed = 0;
  char *text;
  (void)res;
  if (k == MODEL_KIND_COUNT || s->finished) return;
  len = (size_t)snprintf(key, sizeof key, "%02d/%s/%s", (int)k, ns ? ns : "", name ? name : "");
  if (len >= sizeof key) return;
  if (t == KC_DELETED) {
    if ((e = ts_map_del(&s->objs, key, len))) free(e->text), ts_free(e);
    return;
  }
  if (!(text = model_scrubbed_text(obj, &scrubbed))) {
    ts_log(TS_LOG_ERROR, "out of memory");
    finish(s, 1);
    return;
  }
  if ((e = ts_map_get(&s->objs, key, len))) { /* a newer version */
    free(e->text);
    e->text = text, e->scrubbed = scrubbed;
    return;
  }
  if (!(e = ts_malloc(sizeof *e + len + 1))) {
    free(text);
    ts_log(TS_LOG_ERROR, "out of memory");
    finish(s, 1);
    return;
  }
  memcpy(e->key, key, len + 1);
  e->text = text, e->scrubbed = scrubbed;
  if (ts_map_put(&s->objs, e->key, len, e, NULL) != TS_OK) {
    free(e->text);
    ts_free(e);
    ts_log(TS_LOG_ERROR, "out of memory");
    finish(s, 1);
  }
}

static void on_version(void *ud, const kc_response *r) {
  snap *s = ud;
  json_t *v = r->status == 200 ? json_loads(r->body, 0, NULL) : NULL;
  s->version_req = NULL;
  if (!v) ts_log(TS_LOG_WARN, "GET /version: HTTP %ld; the snapshot names no server", r->status);
  finish(s, write_file(s, v));
  json_decref(v);
}

static void on_synced(void *ud) {
  snap *s = ud;
  if (s->finished) return;
  if (!(s->version_req = kc_request(s->client, "GET", "/version", NULL, NULL, on_version, s)))
    finish(s, write_file(s, NULL));
}

static void on_timeout(uv_timer_t *t) {
  snap *s = t->data;
  char why[512] = "";
  kc_informers_problem(s->inf, why, sizeof why);
  fprintf(stderr, "tessera snapshot: not every resource listed within %d s: %s\n",
          SNAPSHOT_TIMEOUT_MS / 1000, why);
  finish(s, 1);
}

static void usage(FILE *f) {
  fputs("usage: tessera snapshot --file FILE [-o json|yaml] [--config FILE] [--kubeconfig FILE] "
        "[--context NAME]\n"
        "  -f, --file     the snapshot to write (whole or not at all)\n"
        "  -o, --output   json (default: a List, one object per line) or yaml (a document per "
        "object)\n"
        "  --config       tessera.yaml (recorded in the snapshot)\n"
        "  --kubeconfig   credentials (else $KUBECONFIG, ~/.kube/config, in-cluster)\n"
        "  --context      the kubeconfig context\n",
        f);
}

static const cmd_flag snapshot_flags[] = {
    {"--file", "-f", "FILE"},       {"--output", "-o", "FORMAT"}, {"--config", NULL, "FILE"},
    {"--kubeconfig", NULL, "FILE"}, {"--context", NULL, "NAME"},  {NULL, NULL, NULL}};

int cmd_snapshot(int argc, char **argv) {
  const char *config = NULL, *kubeconfig = NULL, *context = NULL, *out = NULL;
  static kc_resource_spec kinds[MODEL_KIND_COUNT];
  snap s = {0};
  cfg_tessera t;
  kc_auth auth;
  ts_err err;
  static cmd_arg v[CMD_ARGS_MAX];
  int nv, parsed = cmd_flags_parse("snapshot", usage, snapshot_flags, argc, argv, v, &nv);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  s.fmt = CMD_FMT_JSON;
  for (int i = 0; i < nv; i++) {
    const char *x = v[i].value;
    if (v[i].flag == 0)
      out = x;
    else if (v[i].flag == 1 && (s.fmt = cmd_format_parse(x, false)) == CMD_FMT_BAD)
      return cmd_usage_error("snapshot", usage,
                             "-o %s: the format is json or yaml (the file is --file FILE)", x);
    else if (v[i].flag == 2)
      config = x;
    else if (v[i].flag == 3)
      kubeconfig = x;
    else if (v[i].flag == 4)
      context = x;
    else if (v[i].flag < 0)
      return cmd_usage_error("snapshot", usage, "unexpected argument \"%s\"", x);
  }
  if (!out) return cmd_usage_error("snapshot", usage, "no --file FILE to write");
  ts_err_clear(&err);
  if (cfg_tessera_setup(config, &t, &err) != TS_OK) {
    fprintf(stderr, "tessera: %s\n", err.text);
    return 2;
  }
  if (kc_auth_load(kubeconfig, context, &auth, &err) != TS_OK) {
    fprintf(stderr, "tessera: %s\n", err.text);
    cfg_tessera_free(&t);
    return 2;
  }
  cmd_model_kinds(kinds);
  s.loop = uv_default_loop(), s.t = &t, s.out = out, s.status = 1;
  ts_map_init(&s.objs);
  uv_timer_init(s.loop, &s.timeout);
  s.timeout.data = &s;
  if (!(s.client = kc_client_new(s.loop, &auth, &err))) {
    fprintf(stderr, "tessera: %s\n", err.text);
    uv_close((uv_handle_t *)&s.timeout, NULL);
  } else {
    kc_informer_opts io = {kinds, MODEL_KIND_COUNT, on_event, on_synced, &s, NULL};
    kc_client_set_timeout(s.client, t.api.request_timeout_ms);
    uv_timer_start(&s.timeout, on_timeout, SNAPSHOT_TIMEOUT_MS, 0);
    if (!(s.inf = kc_informers_start(s.client, &io, &err))) {
      fprintf(stderr, "tessera: %s\n", err.text);
      finish(&s, 1);
    }
  }
  uv_run(s.loop, UV_RUN_DEFAULT);
  uv_loop_close(s.loop);
  {
    size_t it = 0;
    const ts_map_slot *sl;
    while (ts_map_next(&s.objs, &it, &sl)) {
      free(((entry *)sl->value)->text);
      ts_free(sl->value);
    }
    ts_map_free(&s.objs);
  }
  kc_auth_free(&auth);
  cfg_tessera_free(&t);
  return s.status;
}
