/* cmd/replay_dra.c - what `tessera replay` prints about DRA: the devices allocated to each
 * bound pod's claims, and the devices in use per node after the cycle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

void replay_print_claims(FILE *out, const sched_decision *d) {
  for (uint32_t i = 0; i < d->nclaims; i++) {
    const sched_claim *c = &d->claims[i];
    fprintf(out, "  claim %s/%s", d->pod->obj.ns, c->name);
    if (c->tmpl) fprintf(out, " (new, from template %s)", c->tmpl->obj.name);
    if (c->allocated || c->reused) {
      fprintf(out, ": allocated %s, reserved for the pod\n",
              c->allocated ? "already" : "for a pod placed earlier in this cycle");
      continue;
    }
    fprintf(out, ":");
    for (uint32_t k = 0; k < c->result.ndevices; k++) {
      const dra_device *x = &c->result.devices[k];
      fprintf(out, "%s %s -> %s/%s/%s", k ? "," : "", x->request, x->slice->driver, x->slice->pool,
              x->device->name);
    }
    fputc('\n', out);
  }
}

json_t *replay_claims_json(const sched_decision *d) {
  json_t *arr = json_array();
  for (uint32_t i = 0; i < d->nclaims; i++) {
    const sched_claim *c = &d->claims[i];
    json_t *devs = json_array();
    for (uint32_t k = 0; !c->allocated && k < c->result.ndevices; k++) {
      const dra_device *x = &c->result.devices[k];
      json_array_append_new(devs, json_pack("{s:s, s:s, s:s, s:s}", "request", x->request, "driver",
                                            x->slice->driver, "pool", x->slice->pool, "device",
                                            x->device->name));
    }
    json_array_append_new(arr,
                          json_pack("{s:s, s:s?, s:b, s:b, s:o}", "claim", c->name, "template",
                                    c->tmpl ? c->tmpl->obj.name : NULL, "allocatedBefore",
                                    c->allocated, "sharedInCycle", c->reused, "devices", devs));
  }
  return arr;
}

/* "gpu", "mig 3g.40gb", or "device": the device's type attribute, with the MIG profile. */
static void device_kind(const model_device *d, char *out, size_t cap) {
  const char *type = NULL, *profile = NULL;
  for (uint32_t i = 0; i < d->nattrs; i++) {
    if (d->attrs[i].kind != MODEL_ATTR_STRING) continue;
    if (!strcmp(d->attrs[i].name, "type")) type = d->attrs[i].s;
    if (!strcmp(d->attrs[i].name, "profile")) profile = d->attrs[i].s;
  }
  snprintf(out, cap, "%s%s%s", type ? type : "device", profile ? " " : "", profile ? profile : "");
}

static bool used_by(const ts_map *used, const model_slice *s, const model_device *d) {
  char k[TS_KEY_MAX];
  snprintf(k, sizeof k, "%s/%s/%s", s->driver, s->pool, d->name);
  return ts_map_get(used, k, strlen(k)) != NULL;
}

static void mark_used(ts_map *used, ts_arena *a, const char *drv, const char *pool,
                      const char *dev) {
  char k[TS_KEY_MAX];
  char *key;
  snprintf(k, sizeof k, "%s/%s/%s", drv, pool, dev);
  key = ts_arena_strndup(a, k, strlen(k));
  if (key) ts_map_put(used, key, strlen(key), key, NULL);
}

typedef struct kind_count {
  char kind[96]; /* device kind */
  int used;      /* in use after the cycle */
  int total;     /* published */
} kind_count;

/* Counts one node's devices by kind. */
static int node_kinds(const model *m, const ts_map *used, const char *node, kind_count *k,
                      int cap) {
  size_t n;
  model_slice *const *slices = model_slices_of_node(m, node, &n);
  int nk = 0;
  for (size_t i = 0; i < n; i++) {
    for (uint32_t d = 0; d < slices[i]->ndevices; d++) {
      char kind[96];
      int j = 0;
      device_kind(&slices[i]->devices[d], kind, sizeof kind);
      while (j < nk && strcmp(k[j].kind, kind)) j++;
      if (j == nk) {
        if (nk == cap) continue;
        memset(&k[nk], 0, sizeof k[nk]);
        ts_strlcpy(k[nk++].kind, kind, sizeof k[0].kind);
      }
      k[j].total++;
      k[j].used += used_by(used, slices[i], &slices[i]->devices[d]);
    }
  }
  return nk;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp((*(model_node *const *)a)->obj.name, (*(model_node *const *)b)->obj.name);
}

void replay_dra_summary(FILE *out, json_t *summary, const model *m, const sched_result *res) {
  ts_map used;
  ts_arena a;
  model_obj **claims = NULL;
  model_node **nodes;
  model_node *const *all;
  size_t nn;
  size_t nc = 0;
  json_t *jn = summary ? json_array() : NULL;
  bool header = false;
  ts_map_init(&used);
  ts_arena_init(&a, 0);
  if (model_list(m, MODEL_RESOURCE_CLAIM, &claims, &nc) == TS_OK)
    for (size_t i = 0; i < nc; i++) {
      const model_allocation *al = &((model_claim *)claims[i])->allocation;
      for (uint32_t k = 0; al->present && k < al->nresults; k++)
        mark_used(&used, &a, al->results[k].driver, al->results[k].pool, al->results[k].device);
    }
  ts_free(claims);
  for (size_t i = 0; i < res->ndecisions; i++)
    for (uint32_t c = 0; c < res->decisions[i].nclaims; c++) {
      const sched_claim *cl = &res->decisions[i].claims[c];
      for (uint32_t k = 0; !cl->allocated && k < cl->result.ndevices; k++)
        mark_used(&used, &a, cl->result.devices[k].slice->driver, cl->result.devices[k].slice->pool,
                  cl->result.devices[k].device->name);
    }
  all = model_nodes(m, &nn);
  nodes = malloc((nn + 1) * sizeof *nodes);
  if (nn) memcpy(nodes, all, nn * sizeof *nodes);
  qsort(nodes, nn, sizeof *nodes, name_cmp);
  for (size_t i = 0; i < nn; i++) {
    kind_count k[32];
    int nk = node_kinds(m, &used, ts_intern_cstr(nodes[i]->obj.name), k, 32);
    if (!nk) continue;
    if (!header && !summary) fprintf(out, "DRA devices in use per node:\n");
    header = true;
    if (!summary) fprintf(out, "  %-28s", nodes[i]->obj.name);
    for (int j = 0; j < nk; j++) {
      if (summary)
        json_array_append_new(jn,
                              json_pack("{s:s, s:s, s:i, s:i}", "node", nodes[i]->obj.name, "kind",
                                        k[j].kind, "used", k[j].used, "total", k[j].total));
      else
        fprintf(out, "%s%s %d/%d", j ? ", " : "", k[j].kind, k[j].used, k[j].total);
    }
    if (!summary) fputc('\n', out);
  }
  if (summary) json_object_set_new(summary, "draDevices", jn);
  free(nodes);
  ts_map_free(&used);
  ts_arena_free(&a);
}
