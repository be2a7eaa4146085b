/* scheduler/claims.c - DRA in the cycle: which claims a pod has, whether they can be
 * allocated on a node, and committing or releasing their allocations on the cycle's view.
 *
 * Claims made from a ResourceClaimTemplate are, in a cluster, the ones the claim controller
 * created and named in pod.status.resourceClaimStatuses. In replay no controller runs, so the
 * cycle makes the claim from the template itself, named "<pod>-<pod claim name>". A claim that
 * is already allocated (shared by several pods) is not allocated again: the pod must go where
 * the allocation's node selector allows, and is added to the claim's reservedFor. */
#include "scheduler/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RESERVED 256 /* ResourceClaimReservedForMaxSize */

static const model_device_class *class_of(void *ctx, const char *name) {
  return (const model_device_class *)model_get(ctx, MODEL_DEVICE_CLASS, NULL, name);
}

ts_rc sched__dra_init(sched_view *v) {
  model_obj **slices = NULL, **claims = NULL;
  const model_slice **copy;
  size_t n = 0, nc = 0;
  ts_rc rc = model_list(v->m, MODEL_RESOURCE_SLICE, &slices, &n);
  ts_arena_init(&v->dra_scratch, 64 * 1024);
  ts_map_init(&v->cycle_claims);
  ts_map_init(&v->claim_refs);
  if (rc != TS_OK) return rc;
  copy = ts_arena_alloc(v->arena, (n + 1) * sizeof *copy);
  if (!copy) {
    ts_free(slices);
    return TS_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) copy[i] = (const model_slice *)slices[i];
  ts_free(slices);
  v->dra = dra_world_new(copy, n, &v->cfg->dra, class_of, (void *)v->m, v->cfg->dra_eval,
                         v->cfg->dra_eval_ctx);
  if (!v->dra || (rc = model_list(v->m, MODEL_RESOURCE_CLAIM, &claims, &nc)) != TS_OK)
    return v->dra ? rc : TS_ENOMEM;
  for (size_t i = 0; i < nc; i++) {
    const model_allocation *a = &((const model_claim *)claims[i])->allocation;
    for (uint32_t k = 0; a->present && k < a->nresults; k++)
      if (!a->results[k].admin_access)
        dra_world_mark(v->dra, a->results[k].driver, a->results[k].pool, a->results[k].device);
  }
  ts_free(claims);
  return TS_OK;
}

void sched__dra_free(sched_view *v) {
  dra_world_free(v->dra);
  v->dra = NULL;
  ts_arena_free(&v->dra_scratch);
  ts_map_free(&v->cycle_claims);
  ts_map_free(&v->claim_refs);
}

/* Counts one more pod naming the unallocated claim x; x->refs points at the count. */
static ts_rc count_ref(sched_view *v, const model_pod *pod, sched_claim *x) {
  char key[TS_KEY_MAX], *k;
  uint32_t *n;
  int len = snprintf(key, sizeof key, "%s/%s", pod->obj.ns, x->name);
  if (len < 0 || (size_t)len >= sizeof key) return TS_OK; /* no count: never compared by value */
  if (!(n = ts_map_get(&v->claim_refs, key, (size_t)len))) {
    if (!(k = ts_arena_strndup(v->arena, key, (size_t)len)) ||
        !(n = ts_arena_alloc(v->arena, sizeof *n)))
      return TS_ENOMEM;
    *n = 0;
    if (ts_map_put(&v->claim_refs, k, (size_t)len, n, NULL) != TS_OK) return TS_ENOMEM;
  }
  (*n)++;
  x->refs = n;
  return TS_OK;
}

static const char *msg(sched_view *v, const char *fmt, const char *a, const char *b) {
  char buf[1024];
  snprintf(buf, sizeof buf, fmt, a, b);
  return ts_arena_strndup(v->out, buf, strlen(buf));
}

/* The claim as another pod placed in this cycle allocated it, or NULL. A claim shared by
 * several pending pods is allocated once: later pods reuse that allocation (and so must go
 * where it allows) and are added to reservedFor. */
static const sched_claim *cycle_claim(const sched_view *v, const sched_pending *p, uint32_t i) {
  const char *key; /* "ns/name": the claim object's own key */
  const sched_claim *c;
  if (p->claims[i].allocated || !p->claims[i].claim) return NULL;
  if (p->claims[i].refs && *p->claims[i].refs == 1) return NULL; /* no other pod names it */
  key = p->claims[i].claim->obj.key;
  c = ts_map_get(&v->cycle_claims, key, strlen(key));
  return c != &p->claims[i] ? c : NULL;
}

/* Allocated before the cycle, or by a pod placed earlier in it. */
static bool taken(const sched_view *v, const sched_pending *p, uint32_t i) {
  return p->claims[i].allocated || cycle_claim(v, p, i);
}

static const model_pod_claim_status *claim_status(const model_pod *p, const char *name) {
  for (uint32_t i = 0; i < p->nclaim_statuses; i++)
    if (p->claim_statuses[i].name == name) return &p->claim_statuses[i];
  return NULL;
}

/* The claim a template-based pod claim stands for; sets *blocked when it is not there. */
static ts_rc from_template(sched_view *v, const model_pod *pod, const model_pod_claim *pc,
                           sched_claim *x, const char **blocked) {
  const model_pod_claim_status *st = claim_status(pod, pc->name);
  char name[600];
  if (st && st->claim_name) {
    x->name = ts_arena_strndup(v->out, st->claim_name, strlen(st->claim_name));
    x->claim =
        (const model_claim *)model_get(v->m, MODEL_RESOURCE_CLAIM, pod->obj.ns, st->claim_name);
    if (!x->claim) *blocked = msg(v, "resourceclaim \"%s\" not found", st->claim_name, NULL);
    return x->name ? TS_OK : TS_ENOMEM;
  }
  snprintf(name, sizeof name, "%s-%s", pod->obj.name, pc->name);
  x->name = ts_arena_strndup(v->out, name, strlen(name));
  if (!x->name) return TS_ENOMEM;
  x->claim = (const model_claim *)model_get(v->m, MODEL_RESOURCE_CLAIM, pod->obj.ns, name);
  if (x->claim) return TS_OK;
  if (!v->cfg->instantiate_templates) {
    *blocked = msg(v,
                   "waiting for the ResourceClaim of pod claim \"%s\" to be created from "
                   "template \"%s\"",
                   pc->name, pc->template_name);
    return TS_OK;
  }
  x->tmpl = (const model_claim_template *)model_get(v->m, MODEL_RESOURCE_CLAIM_TEMPLATE,
                                                    pod->obj.ns, pc->template_name);
  if (!x->tmpl)
    *blocked = msg(v, "resourceclaimtemplate \"%s\" not found", pc->template_name, NULL);
  else
    x->spec = &x->tmpl->spec;
  return TS_OK;
}

static bool reserved_for(const model_claim *c, const model_pod *p) {
  for (uint32_t i = 0; i < c->nreserved_for; i++)
    if (!strcmp(c->reserved_for[i].name, p->obj.name)) return true;
  return false;
}

ts_rc sched__pod_claims(sched_view *v, sched_pending *p) {
  const model_pod *pod = p->pod;
  ts_rc rc = TS_OK;
  if (pod->share_problem) p->blocked = pod->share_problem; /* its GPU share cannot be read */
  if (!pod->nclaims) return TS_OK;
  p->claims = ts_arena_alloc(v->out, pod->nclaims * sizeof *p->claims); /* decisions keep it */
  if (!p->claims) return TS_ENOMEM;
  for (uint32_t i = 0; i < pod->nclaims && rc == TS_OK && !p->blocked; i++) {
    const model_pod_claim *pc = &pod->claims[i];
    const model_pod_claim_status *st = claim_status(pod, pc->name);
    sched_claim *x = &p->claims[p->nclaims];
    memset(x, 0, sizeof *x);
    x->pod_claim = pc->name;
    if (pc->template_name && st && !st->claim_name) continue; /* the pod needs no claim */
    if (pc->claim_name) {
      x->name = ts_arena_strndup(v->out, pc->claim_name, strlen(pc->claim_name));
      x->claim =
          (const model_claim *)model_get(v->m, MODEL_RESOURCE_CLAIM, pod->obj.ns, pc->claim_name);
      if (!x->claim) p->blocked = msg(v, "resourceclaim \"%s\" not found", pc->claim_name, NULL);
    } else {
      rc = from_template(v, pod, pc, x, &p->blocked);
    }
    if (rc != TS_OK || p->blocked) break;
    if (x->claim) {
      x->spec = &x->claim->spec;
      x->allocated = x->claim->allocation.present;
      if (x->claim->obj.deleted_ns)
        p->blocked = msg(v, "resourceclaim \"%s\" is being deleted", x->name, NULL);
      else if (x->allocated && x->claim->nreserved_for >= MAX_RESERVED &&
               !reserved_for(x->claim, pod))
        p->blocked = msg(v, "resourceclaim \"%s\" is in use by too many pods", x->name, NULL);
    }
    if (x->claim && !x->allocated && !p->blocked && (rc = count_ref(v, pod, x)) != TS_OK) break;
    p->dra |= !x->allocated;
    p->nclaims++;
  }
  return rc;
}

/* The unallocated claims of p as allocator input (scratch arena). */
static uint32_t unallocated(sched_view *v, const sched_pending *p, const model_claim_spec ***specs,
                            const char ***names, ts_arena *arena) {
  uint32_t n = 0;
  *specs = ts_arena_alloc(arena, (p->nclaims + 1) * sizeof **specs);
  *names = ts_arena_alloc(arena, (p->nclaims + 1) * sizeof **names);
  if (!*specs || !*names) return UINT32_MAX;
  for (uint32_t i = 0; i < p->nclaims; i++) {
    char full[700];
    if (taken(v, p, i)) continue;
    (*specs)[n] = p->claims[i].spec;
    if (p->claims[i].claim) { /* "ns/name": the claim object's key (this runs per node) */
      (*names)[n++] = p->claims[i].claim->obj.key;
      continue;
    }
    snprintf(full, sizeof full, "%s/%s", p->pod->obj.ns, p->claims[i].name);
    if (!((*names)[n++] = ts_arena_strndup(arena, full, strlen(full)))) return UINT32_MAX;
  }
  return n;
}

static bool allocated_reach(const sched_view *v, const sched_pending *p, uint32_t k) {
  const model_node *node = v->nodes[k];
  for (uint32_t i = 0; i < p->nclaims; i++) {
    const model_node_selector *sel;
    const sched_claim *c = cycle_claim(v, p, i);
    if (!p->claims[i].allocated && !c) continue;
    sel = c ? &c->result.node_selector : &p->claims[i].claim->allocation.node_selector;
    if (sel->nterms && !model_node_selector_match(sel, node->obj.name, &node->obj.labels))
      return false;
  }
  return true;
}

/* True when whether p's claims can be allocated on a node depends only on what they ask for
 * (compared as sched__same_claims compares) and on the node's devices: no claim of p is named
 * by another pending pod (its allocation would change when that pod is placed). */
static bool fit_cacheable(const sched_pending *p) {
  if (p->blocked) return false;
  for (uint32_t i = 0; i < p->nclaims; i++) {
    const sched_claim *x = &p->claims[i];
    if (!x->allocated && x->claim && (!x->refs || *x->refs != 1)) return false;
  }
  return true;
}

/* The remembered answers of sched__dra_fits for pods with p's claims, one per node (valid
 * when it holds the node's node_rev), or NULL when p's answers are not remembered. Runs of
 * pods, and jobs of one spec spread over the queue, ask the allocator once per node and
 * claim shape, and again only for the nodes that changed since (a placement or a trial given
 * back changes the node's node_rev; an allocation of devices other nodes reach too, the
 * view's dra_epoch). */

static uint32_t *fit_answers(sched_view *v, const sched_pending *p) {
  int e = v->dra_fit_last;
  if (e < 0 || v->dra_fit_pod != p) {
    if (v->cfg->tuning.no_dra_fit_cache || !fit_cacheable(p)) return NULL;
    for (e = 0; e < SCHED_DRA_FITS; e++)
      if (v->dra_fits[e].rep &&
          (v->dra_fits[e].rep == p || sched__same_claims(v, v->dra_fits[e].rep, p)))
        break;
    if (e == SCHED_DRA_FITS) { /* a new shape takes the next entry, round robin */
      e = (int)v->next_dra_fit;
      v->next_dra_fit = (v->next_dra_fit + 1) % SCHED_DRA_FITS;
      if (!v->dra_fits[e].answer &&
          !(v->dra_fits[e].answer =
                ts_arena_alloc(v->arena, ((size_t)v->n + 1) * sizeof *v->dra_fits[e].answer)))
        return NULL;
      v->dra_fits[e].rep = p;
      v->dra_fits[e].epoch = v->dra_epoch + 1; /* cleared below */
    }
    v->dra_fit_last = e, v->dra_fit_pod = p;
  }
  if (v->dra_fits[e].epoch != v->dra_epoch) {
    memset(v->dra_fits[e].answer, 0, (size_t)v->n * sizeof *v->dra_fits[e].answer);
    v->dra_fits[e].epoch = v->dra_epoch;
  }
  return v->dra_fits[e].answer;
}

static bool allocate_on(sched_view *v, const sched_pending *p, uint32_t k);

bool sched__dra_fits(sched_view *v, const sched_pending *p, uint32_t k) {
  uint32_t *answer;
  bool ok;
  if (!allocated_reach(v, p, k)) return false;
  if (!p->dra) return true;
  if (p->pod == v->dra_error_pod) return false; /* its attempt was aborted by an error */
  if (!(answer = fit_answers(v, p))) return allocate_on(v, p, k);
  if (answer[k] >> 1 == v->node_rev[k]) return answer[k] & 1;
  ok = allocate_on(v, p, k);
  if (p->pod != v->dra_error_pod) answer[k] = v->node_rev[k] << 1 | ok; /* errors: not kept */
  return ok;
}

/* A trial allocation of p's unallocated claims on node k. */
static bool allocate_on(sched_view *v, const sched_pending *p, uint32_t k) {
  const model_claim_spec **specs;
  const char **names;
  dra_result *res;
  uint32_t n;
  bool ok = false;
  ts_err err;
  ts_arena_reset(&v->dra_scratch);
  n = unallocated(v, p, &specs, &names, &v->dra_scratch);
  res = ts_arena_alloc(&v->dra_scratch, (n + 1) * sizeof *res);
  if (n == UINT32_MAX || !res) return false;
  ts_err_clear(&err);
  if (sched__fault(v, SCHED_STAGE_DRA, p->pod)) { /* as an allocator error would */
    v->dra_error = v->fail_text;
    v->dra_error_pod = p->pod;
    return false;
  }
  if (dra_allocate(v->dra, v->nodes[k]->obj.name, &v->nodes[k]->obj.labels, specs, names, n,
                   &v->dra_scratch, res, &ok, &err) != TS_OK) {
    v->dra_error = ts_arena_strndup(v->out, err.text, strlen(err.text));
    v->dra_error_pod = p->pod;
    return false;
  }
  return ok;
}

/* Copies what a result points to in the scratch arena (configs, node selector) into the
 * result arena, so that decisions keep it. */
static bool keep_result(sched_view *v, dra_result *r) {
  model_node_term *t;
  if (r->nconfigs) {
    dra_config *c = ts_arena_alloc(v->out, r->nconfigs * sizeof *c);
    if (!c) return false;
    memcpy(c, r->configs, r->nconfigs * sizeof *c);
    r->configs = c;
  }
  if (!r->node_selector.nterms) return true;
  t = ts_arena_alloc(v->out, sizeof *t); /* one term: allocator results never have more */
  if (!t) return false;
  *t = r->node_selector.terms[0];
  for (int pass = 0; pass < 2; pass++) {
    model_req **reqs = pass ? &t->fields : &t->exprs;
    uint32_t n = pass ? t->nfields : t->nexprs;
    model_req *copy = n ? ts_arena_alloc(v->out, n * sizeof *copy) : NULL;
    if (n && !copy) return false;
    for (uint32_t i = 0; i < n; i++) {
      copy[i] = (*reqs)[i];
      copy[i].values = ts_arena_alloc(v->out, (copy[i].nvalues + 1) * sizeof *copy[i].values);
      if (!copy[i].values) return false;
      memcpy(copy[i].values, (*reqs)[i].values, copy[i].nvalues * sizeof *copy[i].values);
    }
    *reqs = copy;
  }
  r->node_selector.terms = t;
  r->node_selector.nterms = 1;
  return true;
}

/* Records claim i of p as allocated in this cycle (a real claim only: one made from a
 * template belongs to its pod). */
static bool remember(sched_view *v, sched_pending *p, uint32_t i) {
  const char *k; /* the claim object's key: it outlives the cycle's map */
  if (!p->claims[i].claim) return true;
  k = p->claims[i].claim->obj.key;
  return ts_map_put(&v->cycle_claims, k, strlen(k), &p->claims[i], NULL) == TS_OK;
}

bool sched__dra_commit(sched_view *v, sched_pending *p, uint32_t k, bool *shared) {
  const model_claim_spec **specs;
  const char **names;
  dra_result *res;
  uint32_t n, j = 0;
  bool ok = false;
  ts_err err;
  *shared = false;
  if (!p->dra) return true;
  ts_arena_reset(&v->dra_scratch); /* work in scratch; keep only the results */
  n = unallocated(v, p, &specs, &names, &v->dra_scratch);
  res = ts_arena_alloc(&v->dra_scratch, (n + 1) * sizeof *res);
  if (n == UINT32_MAX || !res) return false;
  if (dra_allocate(v->dra, v->nodes[k]->obj.name, &v->nodes[k]->obj.labels, specs, names, n,
                   &v->dra_scratch, res, &ok, &err) != TS_OK ||
      !ok)
    return false;
  for (uint32_t i = 0; i < p->nclaims; i++) {
    const sched_claim *other = cycle_claim(v, p, i);
    if (p->claims[i].allocated) continue;
    if (other) { /* shared with a pod placed earlier: the same allocation, reserved again */
      p->claims[i].result = other->result;
      p->claims[i].reused = true;
      continue;
    }
    p->claims[i].result = res[j++];
    if (!keep_result(v, &p->claims[i].result) || !remember(v, p, i)) return false;
    dra_mark_result(v->dra, &p->claims[i].result, true);
    *shared |= !dra_result_local(&p->claims[i].result);
  }
  v->dra_epoch += *shared; /* devices other nodes reach are taken: every node changed */
  return true;
}

void sched__dra_release(sched_view *v, sched_pending *p) {
  v->changes++; /* devices come free: what did not fit may now */
  for (uint32_t i = 0; p->dra && i < p->nclaims; i++) {
    const char *key;
    if (p->claims[i].allocated) continue;
    if (p->claims[i].reused) {
      p->claims[i].reused = false;
      continue;
    }
    dra_mark_result(v->dra, &p->claims[i].result, false);
    v->dra_epoch += !dra_result_local(&p->claims[i].result);
    if (!p->claims[i].claim) continue; /* made from a template: never remembered */
    key = p->claims[i].claim->obj.key;
    if (ts_map_get(&v->cycle_claims, key, strlen(key)) == &p->claims[i])
      ts_map_del(&v->cycle_claims, key, strlen(key));
  }
}

void sched__dra_usage(const sched_view *v, uint32_t k, uint32_t *used, uint32_t *total) {
  dra_node_usage(v->dra, v->nodes[k]->obj.name, used, total);
}

/* True when the single request r of spec can be allocated on some node. */
static bool request_fits_somewhere(sched_view *v, const sched_pending *p,
                                   const model_claim_spec *spec, uint32_t r, const char *name) {
  model_claim_spec one = *spec;
  const model_claim_spec *specs[1] = {&one};
  const char *names[1] = {name};
  one.requests = &spec->requests[r], one.nrequests = 1;
  one.constraints = NULL, one.nconstraints = 0, one.configs = NULL, one.nconfigs = 0;
  for (uint32_t k = 0; k < v->n; k++) {
    dra_result res;
    bool ok = false;
    ts_err err;
    if (sched__static_fit(v, p, k) != SCHED_FIT) continue;
    ts_arena_reset(&v->dra_scratch);
    if (dra_allocate(v->dra, v->nodes[k]->obj.name, &v->nodes[k]->obj.labels, specs, names, 1,
                     &v->dra_scratch, &res, &ok, &err) == TS_OK &&
        ok)
      return true;
  }
  return false;
}

const char *sched__dra_why(sched_view *v, const sched_pending *p) {
  for (uint32_t i = 0; i < p->nclaims; i++) {
    const sched_claim *c = &p->claims[i];
    char full[700];
    if (taken(v, p, i)) continue;
    snprintf(full, sizeof full, "%s/%s", p->pod->obj.ns, c->name);
    for (uint32_t r = 0; r < c->spec->nrequests; r++)
      if (!request_fits_somewhere(v, p, c->spec, r, full))
        return msg(v, "claim %s: request \"%s\" matches no free device on any eligible node", full,
                   c->spec->requests[r].name);
  }
  return NULL;
}

const char *sched__dra_node_reason(sched_view *v, const sched_pending *p, uint32_t k) {
  if (!allocated_reach(v, p, k)) return "resourceclaim not available on the node";
  return sched__dra_fits(v, p, k) ? NULL : "cannot allocate all claims";
}

int64_t sched__dra_devices(const sched_pending *p) {
  int64_t n = 0;
  for (uint32_t i = 0; i < p->nclaims; i++) {
    const model_claim_spec *s = p->claims[i].spec;
    if (p->claims[i].allocated || !s) continue;
    for (uint32_t r = 0; r < s->nrequests; r++) {
      const model_subrequest *x =
          s->requests[r].first_available ? &s->requests[r].subs[0] : &s->requests[r].exactly;
      if (x->mode == MODEL_ALLOC_EXACT_COUNT) n += x->count;
    }
  }
  return n;
}
