/* dra/encode.c - an allocation as written: the typed status.allocation of a result (its JSON is
 * model_allocation_json, in model/wire.h). */
#include "dra/dra.h"

#include <string.h>

/* The device's strings interned (the slice may go before the allocation does), in the
 * arena-free scratch array out (cap entries). */
static const char **interned(char *const *v, uint32_t n, const char **out) {
  for (uint32_t i = 0; i < n; i++) out[i] = ts_intern_cstr(v[i]);
  return n ? out : NULL;
}

ts_rc dra_result_allocation(const dra_result *r, model_allocation *out) {
  model_allocation a = {0};
  const char **names = NULL;
  size_t nnames = 0, at = 0;
  ts_rc rc = TS_OK;
  a.present = true;
  for (uint32_t i = 0; i < r->ndevices; i++)
    nnames += r->devices[i].device->nbinding_conditions +
              r->devices[i].device->nbinding_failure_conditions;
  if (r->ndevices && !(a.results = ts_calloc(r->ndevices, sizeof *a.results))) return TS_ENOMEM;
  if (nnames && !(names = ts_malloc(nnames * sizeof *names))) rc = TS_ENOMEM;
  for (uint32_t i = 0; rc == TS_OK && i < r->ndevices; i++, a.nresults++) {
    const dra_device *d = &r->devices[i];
    const model_device *dev = d->device;
    model_device_result *x = &a.results[i];
    *x = (model_device_result){d->request, d->slice->driver, d->slice->pool, dev->name,
                               d->admin_access};
    x->binding_conditions = interned(dev->binding_conditions, dev->nbinding_conditions, names + at);
    x->nbinding_conditions = dev->nbinding_conditions;
    at += dev->nbinding_conditions;
    x->binding_failure_conditions =
        interned(dev->binding_failure_conditions, dev->nbinding_failure_conditions, names + at);
    x->nbinding_failure_conditions = dev->nbinding_failure_conditions;
    at += dev->nbinding_failure_conditions;
  }
  if (r->nconfigs && !(a.configs = ts_calloc(r->nconfigs, sizeof *a.configs))) rc = TS_ENOMEM;
  for (uint32_t i = 0; rc == TS_OK && i < r->nconfigs; i++, a.nconfigs++) {
    const dra_config *c = &r->configs[i];
    a.configs[i].source = c->source;
    a.configs[i].requests = (const char **)c->requests, a.configs[i].nrequests = c->nrequests;
    if (c->opaque) a.configs[i].opaque = *c->opaque;
  }
  a.node_selector = r->node_selector;
  /* a shallow view so far: the copy owns what it points to */
  if (rc == TS_OK) rc = model_allocation_copy(out, &a);
  ts_free(names);
  ts_free(a.results);
  ts_free(a.configs);
  return rc;
}
