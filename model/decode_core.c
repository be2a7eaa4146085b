/* model/decode_core.c - Pod, Node, Namespace, PriorityClass and PodDisruptionBudget. */
#include "model/model_int.h"

#include <ctype.h>
#include <strings.h>

#include <stdlib.h>
#include <string.h>

/* ---- Pod ------------------------------------------------------------------------------- */

/* Dense accumulator of one pod's requests, indexed by resource id: the table's ids and the
 * decode's own (d->base + MODEL_MAX_OBJECT_NAMES entries). */
typedef struct racc {
  int64_t *v;
  int n;
} racc;

static ts_rc racc_init(mdec *d, racc *a) {
  a->n = d->base + MODEL_MAX_OBJECT_NAMES;
  a->v = ts_calloc((size_t)a->n, sizeof *a->v);
  return a->v ? TS_OK : model__fail(d, TS_ENOMEM, "out of memory");
}

/* a += b; false (a unchanged for that resource, *which set) when a sum overflows int64. */
static bool racc_add(racc *a, const racc *b, int *which) {
  bool ok = true;
  for (int i = 0; i < a->n; i++)
    if (!ts_add_ok(a->v[i], b->v[i], &a->v[i])) ok = false, *which = i;
  return ok;
}

static ts_rc overflow(mdec *d, int res) {
  return model__fail(d, TS_EOVERFLOW,
                     "the requests of %s add up to more than 9223372036854775807 units",
                     model__resource_name(d, res));
}

static void racc_max(racc *a, const racc *b) {
  for (int i = 0; i < a->n; i++)
    if (b->v[i] > a->v[i]) a->v[i] = b->v[i];
}

/* One container's effective requests: requests, defaulted from limits where missing (as the
 * API server's defaulting does for manifests that only set limits). */
static ts_rc container_requests(mdec *d, json_t *c, racc *out) {
  ts_rc rc;
  json_t *res = model__object(d, c, "resources", &rc);
  model_rlist req = {0}, lim = {0};
  size_t mark;
  memset(out->v, 0, (size_t)out->n * sizeof *out->v);
  if (rc != TS_OK || !res) return rc;
  mark = model__push(d, "resources");
  if ((rc = model__resource_map(d, res, "requests", &req, true)) == TS_OK &&
      (rc = model__resource_map(d, res, "limits", &lim, true)) == TS_OK) {
    for (uint32_t i = 0; i < lim.n; i++) out->v[lim.v[i].id] = lim.v[i].v;
    for (uint32_t i = 0; i < req.n; i++) out->v[req.v[i].id] = req.v[i].v;
    for (uint32_t i = 0; i < req.n; i++) {
      int64_t l = model_rlist_get(&lim, req.v[i].id);
      bool has_limit = false;
      for (uint32_t j = 0; j < lim.n; j++) has_limit |= lim.v[j].id == req.v[i].id;
      if (has_limit && req.v[i].v > l) {
        model__push(d, "requests");
        model__push_key(d, model__resource_name(d, req.v[i].id));
        rc = model__fail(d, TS_EINVAL, "must be less than or equal to %s limit",
                         model__resource_name(d, req.v[i].id));
        break;
      }
    }
  }
  ts_free(req.v);
  ts_free(lim.v);
  if (rc == TS_OK) model__pop(d, mark);
  return rc;
}

/* Sums the app containers; with init containers applies Kubernetes' rule (PodRequests):
 * sidecars (restartPolicy Always) run beside everything that starts after them. */
static ts_rc pod_requests(mdec *d, json_t *spec, model_pod *p) {
  racc acc[4] = {{0}}, *sum = &acc[0], *side = &acc[1], *init = &acc[2], *c = &acc[3];
  model_rlist *out = &p->requests;
  ts_rc rc = TS_OK;
  json_t *arr, *e;
  size_t i, mark;
  int n = 0, which = 0;
  for (int k = 0; k < 4 && rc == TS_OK; k++) rc = racc_init(d, &acc[k]);
  for (int pass = 0; pass < 2 && rc == TS_OK; pass++) {
    const char *key = pass ? "containers" : "initContainers";
    arr = model__array(d, spec, key, &rc);
    if (rc != TS_OK || !arr) continue;
    mark = model__push(d, key);
    json_array_foreach(arr, i, e) {
      const char *policy = NULL;
      size_t m2 = model__push_index(d, i);
      if ((rc = container_requests(d, e, c)) != TS_OK) break;
      if (pass == 1) {
        if (!racc_add(sum, c, &which)) rc = overflow(d, which);
      } else if ((rc = model__string(d, e, "restartPolicy", &policy, false)) != TS_OK) {
        break;
      } else if (policy && !strcmp(policy, "Always")) {
        if (!racc_add(side, c, &which)) rc = overflow(d, which);
        racc_max(init, side);
      } else {
        if (!racc_add(c, side, &which)) rc = overflow(d, which);
        racc_max(init, c);
      }
      if (rc != TS_OK) break;
      model__pop(d, m2);
    }
    if (rc == TS_OK) model__pop(d, mark);
  }
  if (rc == TS_OK) {
    model_rlist over = {0};
    if (!racc_add(sum, side, &which)) rc = overflow(d, which);
    racc_max(sum, init);
    if (rc == TS_OK) rc = model__resource_map(d, spec, "overhead", &over, true);
    for (uint32_t k = 0; k < over.n && rc == TS_OK; k++)
      if (!ts_add_ok(sum->v[over.v[k].id], over.v[k].v, &sum->v[over.v[k].id]))
        rc = overflow(d, over.v[k].id);
    ts_free(over.v);
    sum->v[MODEL_RES_PODS] = 1;
  }
  for (int k = 0; k < sum->n && rc == TS_OK; k++) n += sum->v[k] != 0;
  if (rc == TS_OK &&
      (rc = model__alloc_array(d, (size_t)n, sizeof *out->v, (void **)&out->v)) == TS_OK)
    for (int k = 0; k < sum->n; k++)
      if (sum->v[k]) out->v[out->n++] = (model_rq){(uint16_t)k, sum->v[k]};
  if (rc == TS_OK) rc = model__resolve_local(d, out, &p->unresolved, &p->nunresolved);
  if (rc == TS_OK && p->nunresolved) p->unoffered = p->unresolved[0].name;
  for (int k = 0; k < 4; k++) ts_free(acc[k].v);
  return rc;
}

static ts_rc pod_claims(mdec *d, json_t *spec, model_pod *p) {
  ts_rc rc;
  json_t *arr = model__array(d, spec, "resourceClaims", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof *p->claims, (void **)&p->claims)))
    return rc;
  mark = model__push(d, "resourceClaims");
  json_array_foreach(arr, i, e) {
    model_pod_claim *c = &p->claims[i];
    json_t *src;
    size_t m2 = model__push_index(d, i);
    p->nclaims++;
    if ((rc = model__intern(d, e, "name", &c->name, true))) return rc;
    /* Kubernetes 1.27 and older nest the reference in "source". */
    src = model__object(d, e, "source", &rc);
    if (rc != TS_OK) return rc;
    if (!src) src = e;
    if ((rc = model__strdup(d, src, "resourceClaimName", &c->claim_name, false)) ||
        (rc = model__strdup(d, src, "resourceClaimTemplateName", &c->template_name, false)))
      return rc;
    if (!c->claim_name == !c->template_name)
      return model__fail(d, TS_EINVAL,
                         "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`");
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc pod_claim_statuses(mdec *d, json_t *status, model_pod *p) {
  ts_rc rc;
  json_t *arr = model__array(d, status, "resourceClaimStatuses", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  rc = model__alloc_array(d, json_array_size(arr), sizeof *p->claim_statuses,
                          (void **)&p->claim_statuses);
  if (rc != TS_OK) return rc;
  mark = model__push(d, "resourceClaimStatuses");
  json_array_foreach(arr, i, e) {
    model_pod_claim_status *s = &p->claim_statuses[i];
    size_t m2 = model__push_index(d, i);
    p->nclaim_statuses++;
    if ((rc = model__intern(d, e, "name", &s->name, true)) ||
        (rc = model__strdup(d, e, "resourceClaimName", &s->claim_name, false)))
      return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

/* When the pod's containers last ended: the latest state.terminated.finishedAt of
 * status.containerStatuses (what its run took, with startTime, once it has ended). */
static ts_rc containers_finished(mdec *d, json_t *status, model_pod *p) {
  ts_rc rc;
  json_t *arr = model__array(d, status, "containerStatuses", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  mark = model__push(d, "containerStatuses");
  json_array_foreach(arr, i, e) {
    json_t *state = json_is_object(e) ? json_object_get(e, "state") : NULL;
    json_t *term = json_is_object(state) ? json_object_get(state, "terminated") : NULL;
    size_t m2 = model__push_index(d, i), m3;
    int64_t at = 0;
    if (json_is_object(term)) {
      m3 = model__push(d, "state.terminated");
      if ((rc = model__time(d, term, "finishedAt", &at)) != TS_OK) return rc;
      model__pop(d, m3);
    }
    if (at > p->finished_ns) p->finished_ns = at;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

/* spec.schedulingGates: the names, in order (the API server refuses duplicates). */
static ts_rc scheduling_gates(mdec *d, json_t *spec, model_pod *p) {
  ts_rc rc;
  json_t *arr = model__array(d, spec, "schedulingGates", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr || !json_array_size(arr)) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof *p->gates, (void **)&p->gates)))
    return rc;
  mark = model__push(d, "schedulingGates");
  json_array_foreach(arr, i, e) {
    size_t m2 = model__push_index(d, i);
    if ((rc = model__intern(d, e, "name", &p->gates[i], true)) != TS_OK) return rc;
    p->ngates++;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

ts_rc model__conditions(mdec *d, json_t *status, model_condition **out, uint32_t *n) {
  ts_rc rc;
  json_t *arr = model__array(d, status, "conditions", &rc), *e;
  size_t i, mark;
  if (rc != TS_OK || !arr) return rc;
  if ((rc = model__alloc_array(d, json_array_size(arr), sizeof **out, (void **)out))) return rc;
  mark = model__push(d, "conditions");
  json_array_foreach(arr, i, e) {
    model_condition *c = &(*out)[i];
    size_t m2 = model__push_index(d, i);
    (*n)++;
    if ((rc = model__intern(d, e, "type", &c->type, true)) ||
        (rc = model__intern(d, e, "status", &c->status, true)) ||
        (rc = model__intern(d, e, "reason", &c->reason, false)) ||
        (rc = model__strdup(d, e, "message", &c->message, false)))
      return rc;
    if ((rc = model__time(d, e, "lastTransitionTime", &c->last_transition_ns)) != TS_OK) return rc;
    model__pop(d, m2);
  }
  model__pop(d, mark);
  return TS_OK;
}

static ts_rc pod_affinity(mdec *d, json_t *spec, model_pod *p) {
  ts_rc rc;
  json_t *aff = model__object(d, spec, "affinity", &rc), *na;
  size_t mark;
  if (rc != TS_OK || !aff) return rc;
  mark = model__push(d, "affinity");
  na = model__object(d, aff, "nodeAffinity", &rc);
  if (rc == TS_OK && na) {
    size_t m2 = model__push(d, "nodeAffinity");
    rc =
        model__node_selector(d, na, "requiredDuringSchedulingIgnoredDuringExecution", &p->affinity);
    if (rc == TS_OK) model__pop(d, m2);
  }
  if (rc == TS_OK) model__pop(d, mark);
  return rc;
}

static ts_rc pod_spec(mdec *d, json_t *spec, model_pod *p) {
  static const char *const policies[] = {"PreemptLowerPriority", "Never"};
  int policy = 0;
  bool has;
  ts_rc rc;
  if ((rc = model__intern(d, spec, "schedulerName", &p->scheduler_name, false)) ||
      (rc = model__intern(d, spec, "nodeName", &p->node_name, false)) ||
      (rc = model__int32(d, spec, "priority", &p->priority, &has)) ||
      (rc = model__int(d, spec, "activeDeadlineSeconds", &p->active_deadline_s, NULL)) ||
      (rc = model__intern(d, spec, "priorityClassName", &p->priority_class, false)) ||
      (rc = model__enum(d, spec, "preemptionPolicy", policies, 2, &policy)) ||
      (rc = model__labels(d, spec, "nodeSelector", false, &p->node_selector)) ||
      (rc = pod_affinity(d, spec, p)) ||
      (rc = model__tolerations(d, spec, "tolerations", &p->tolerations, &p->ntolerations)) ||
      (rc = pod_requests(d, spec, p)) || (rc = pod_claims(d, spec, p)) ||
      (rc = scheduling_gates(d, spec, p)))
    return rc;
  if (p->active_deadline_s < 0) /* the API server requires at least 1 */
    return model__fail_at(d, "activeDeadlineSeconds", "must be greater than 0");
  p->has_priority = has;
  p->preempt_never = policy == 1;
  if (p->node_name && !*p->node_name) p->node_name = NULL;
  return TS_OK;
}

/* A decimal integer in [0, max] filling the whole text, or -1. */
static int64_t whole_number(const char *s, int64_t max) {
  int64_t v = 0;
  if (!s || !*s) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (max - (*s - '0')) / 10) return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

/* True when s[0..n) are digits of the base (10 or 16), Go's underscores allowed between digits
 * only with a base prefix (us: the prefix was given); *count receives the digits. */
static bool go_digits(const char *s, size_t n, int base, bool us, size_t *count) {
  *count = 0;
  for (size_t i = 0; i < n; i++) {
    bool digit = base == 16 ? isxdigit((unsigned char)s[i]) : isdigit((unsigned char)s[i]);
    if (digit) {
      (*count)++;
      continue;
    }
    if (s[i] != '_' || !us) return false;
  }
  return true;
}

/* True when Go's strconv.ParseFloat would read all of s as a number (KAI parses gpu-fraction
 * with it): [+-], then "inf"/"infinity"/"nan" in any case (nan without a sign), or a decimal
 * mantissa (digits, optional point, at least one digit) with an optional e exponent, or 0x and a
 * hex mantissa with a mandatory p exponent; underscores only after a 0x prefix, and never
 * first, last or doubled; no space anywhere. *special is set for inf and nan. */
static bool go_float_syntax(const char *s, bool *special) {
  size_t i = 0, n = strlen(s), d1 = 0, d2 = 0, de = 0;
  int base = 10;
  const char *dot, *exp, *end;
  *special = false;
  if (!strcasecmp(s, "nan")) return *special = true;
  if (s[0] == '+' || s[0] == '-') i = 1;
  if (!strcasecmp(s + i, "inf") || !strcasecmp(s + i, "infinity")) return *special = true;
  if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) base = 16, i += 2;
  end = s + n;
  exp = NULL;
  for (const char *c = s + i; c < end; c++)
    if (base == 16 ? (*c == 'p' || *c == 'P') : (*c == 'e' || *c == 'E')) exp = c;
  if (base == 16 && !exp) return false; /* "hexadecimal mantissa requires a 'p' exponent" */
  if (!exp) exp = end;
  dot = memchr(s + i, '.', (size_t)(exp - (s + i)));
  if (!go_digits(s + i, (size_t)((dot ? dot : exp) - (s + i)), base, base == 16, &d1) ||
      (dot && !go_digits(dot + 1, (size_t)(exp - dot - 1), base, base == 16, &d2)) || d1 + d2 == 0)
    return false;
  if (exp < end) {
    const char *e = exp + 1;
    if (*e == '+' || *e == '-') e++;
    if (!go_digits(e, (size_t)(end - e), 10, base == 16, &de) || !de) return false;
  }
  if (base == 16) { /* Go's underscoreOK: each '_' between digits or after the prefix */
    for (const char *c = s + i; c < end; c++)
      if (*c == '_' && (c + 1 == end || c[1] == '_' || !isxdigit((unsigned char)c[1]) ||
                        (c > s + i && !isxdigit((unsigned char)c[-1]))))
        return false;
  }
  return true;
}

/* gpu-fraction in thousandths, rounded up (a share never takes less than it asked: 1e-10 is one
 * thousandth of a GPU, 0.9999 all of it), or -1 unless KAI's admission accepts it: Go's
 * strconv.ParseFloat reads all of it and the value is in (0, 1); NaN, which KAI lets through,
 * is refused (no share can be counted for it). */
static int32_t fraction_milli(const char *s) {
  char buf[128];
  size_t k = 0;
  bool special;
  double f, v, r;
  int64_t m;
  if (!s || !*s || strlen(s) >= sizeof buf || !go_float_syntax(s, &special) || special) return -1;
  for (; *s; s++) /* strtod knows C's grammar: Go's is checked above, its underscores go */
    if (*s != '_') buf[k++] = *s;
  buf[k] = 0;
  f = strtod(buf, NULL);
  if (!(f > 0 && f < 1)) return -1;
  v = f * 1000, r = (double)(int64_t)(v + 0.5);
  m = v - r < 1e-6 && r - v < 1e-6 ? (int64_t)r : (int64_t)v + 1; /* "0.3" is 300, not 301 */
  return (int32_t)(m < 1 ? 1 : m > 1000 ? 1000 : m);
}

/* KAI Scheduler's GPU-sharing annotations, read as its admission validates them: gpu-fraction a
 * number in (0, 1), gpu-memory a positive integer of MiB, not both, neither with a whole
 * nvidia.com/gpu request; a share of several devices (gpu-fraction-num-devices) is not
 * supported here. A pod breaking a rule is kept (bound, it still holds its node's cpu and
 * memory) with share_problem set: the scheduler does not place it and says why. The GPU a bound
 * share pod was given is tessera.dev/gpu-index, else KAI's runai-gpu annotation; KAI's binder
 * also labels the pods sharing one GPU with one runai-gpu-group. An unreadable index is no index
 * (the model counts the share against every GPU of its node, model.c). */
static void pod_gpu_share(mdec *d, model_pod *p) {
  static const char *once[6];
  const model_labels *a = &p->obj.annotations;
  const char *frac = model_labels_get(a, ts_intern_once(&once[0], "gpu-fraction")),
             *mem = model_labels_get(a, ts_intern_once(&once[1], "gpu-memory")),
             *devs = model_labels_get(a, ts_intern_once(&once[2], "gpu-fraction-num-devices")),
             *idx = model_labels_get(a, ts_intern_once(&once[3], "tessera.dev/gpu-index")),
             *kai = model_labels_get(a, ts_intern_once(&once[4], "runai-gpu"));
  int gpu = model_resource_find(d->res, "nvidia.com/gpu");
  bool whole = gpu >= 0 && model_rlist_get(&p->requests, gpu) > 0;
  int64_t v;
  if (!idx) idx = kai; /* KAI's (and Run:ai's) GPU index of a shared pod */
  p->gpu_index = (int32_t)(idx ? whole_number(idx, MODEL_MAX_SHARED_GPUS - 1) : -1);
  p->gpu_group = model_labels_get(&p->obj.labels, ts_intern_once(&once[5], "runai-gpu-group"));
  p->gpu_slot = -1;
  for (uint32_t i = 0; i < p->nunresolved && !whole; i++)
    whole = !strcmp(p->unresolved[i].name, "nvidia.com/gpu");
  if (!frac && !mem) return;
  if (frac && mem)
    p->share_problem = "metadata.annotations[gpu-memory]: cannot request both gpu-fraction and "
                       "gpu-memory";
  else if (devs)
    p->share_problem = "metadata.annotations[gpu-fraction-num-devices]: a share of several GPUs "
                       "is not supported";
  else if (whole)
    p->share_problem = frac ? "metadata.annotations[gpu-fraction]: cannot have both a GPU share "
                              "and a whole nvidia.com/gpu request"
                            : "metadata.annotations[gpu-memory]: cannot have both a GPU share "
                              "and a whole nvidia.com/gpu request";
  else if (frac && (p->gpu_share = fraction_milli(frac)) < 0)
    p->gpu_share = 0, p->share_problem = "metadata.annotations[gpu-fraction]: must be a number "
                                         "greater than 0 and smaller than 1 (as Go's "
                                         "strconv.ParseFloat reads it)";
  else if (mem && (v = whole_number(mem, INT32_MAX)) <= 0)
    p->share_problem = "metadata.annotations[gpu-memory]: must be a positive whole number of MiB";
  else if (mem)
    p->gpu_memory = (int32_t)v;
}

int32_t model_pod_gpu_share_on(const model_pod *p, const model_node *n) {
  int64_t s;
  if (p->gpu_share) return p->gpu_share;
  if (!p->gpu_memory) return 0;
  if (n->gpu_memory <= 0 || p->gpu_memory > n->gpu_memory) return 1001;
  s = ((int64_t)p->gpu_memory * 1000 + n->gpu_memory - 1) / n->gpu_memory;
  return (int32_t)s;
}

const char *const model_gang_keys[] = {
    "scheduling.x-k8s.io/pod-group",  /* scheduler-plugins PodGroup (label) */
    "scheduling.k8s.io/group-name",   /* Volcano PodGroup (annotation) */
    "pod-group-name",                 /* KAI Scheduler PodGroup (annotation) */
    "kueue.x-k8s.io/pod-group-name",  /* Kueue pod group (label) */
    "jobset.sigs.k8s.io/jobset-name", /* JobSet (label) */
    NULL};
const char *const model_gang_owner_kinds[] = {"PyTorchJob", "TFJob",  "MPIJob", "XGBoostJob",
                                              "PaddleJob",  "JAXJob", "Job",    NULL};

static bool may_gang(const model_obj *o) {
  for (size_t i = 0; model_gang_keys[i]; i++) {
    const char *k = ts_intern_cstr(model_gang_keys[i]);
    if (model_labels_get(&o->labels, k) || model_labels_get(&o->annotations, k)) return true;
  }
  for (uint32_t i = 0; i < o->nowners; i++)
    for (size_t k = 0; o->owners[i].controller && model_gang_owner_kinds[k]; k++)
      if (!strcmp(o->owners[i].kind, model_gang_owner_kinds[k])) return true;
  return false;
}

ts_rc model__decode_pod(mdec *d, json_t *root, model_obj *o) {
  static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
  model_pod *p = (model_pod *)o;
  ts_rc rc;
  json_t *spec, *status;
  int phase = 0;
  size_t mark;
  ts_list_init(&p->node_link);
  spec = model__object(d, root, "spec", &rc);
  if (rc != TS_OK) return rc;
  if (spec) {
    mark = model__push(d, "spec");
    if ((rc = pod_spec(d, spec, p)) != TS_OK) return rc;
    model__pop(d, mark);
  }
  if (!p->scheduler_name) p->scheduler_name = ts_intern_cstr("default-scheduler");
  if (!p->requests.n) { /* no spec: the pod still occupies one pod slot */
    if ((rc = model__alloc_array(d, 1, sizeof *p->requests.v, (void **)&p->requests.v))) return rc;
    p->requests.v[0] = (model_rq){MODEL_RES_PODS, 1};
    p->requests.n = 1;
  }
  pod_gpu_share(d, p);
  p->may_gang = may_gang(o);
  status = model__object(d, root, "status", &rc);
  if (rc != TS_OK || !status) return rc;
  mark = model__push(d, "status");
  if ((rc = model__enum(d, status, "phase", phases, 5, &phase)) ||
      (rc = model__time(d, status, "startTime", &p->start_ns)) ||
      (rc = model__conditions(d, status, &p->conditions, &p->nconditions)) ||
      (rc = pod_claim_statuses(d, status, p)) || (rc = containers_finished(d, status, p)))
    return rc;
  p->phase = (model_pod_phase)phase;
  model__pop(d, mark);
  return TS_OK;
}

void model__conditions_free(model_condition *c, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) ts_free(c[i].message);
  ts_free(c);
}

void model__free_pod(model_obj *o) {
  model_pod *p = (model_pod *)o;
  ts_free(p->requests.v);
  ts_free(p->unresolved);
  model__labels_free(&p->node_selector, false);
  model__node_selector_free(&p->affinity);
  ts_free(p->tolerations);
  ts_free(p->gates);
  for (uint32_t i = 0; i < p->nclaims; i++) {
    ts_free(p->claims[i].claim_name);
    ts_free(p->claims[i].template_name);
  }
  ts_free(p->claims);
  for (uint32_t i = 0; i < p->nclaim_statuses; i++) ts_free(p->claim_statuses[i].claim_name);
  ts_free(p->claim_statuses);
  model__conditions_free(p->conditions, p->nconditions);
}

bool model_pod_counts(const model_pod *p) {
  return p->node_name && p->phase != MODEL_PHASE_SUCCEEDED && p->phase != MODEL_PHASE_FAILED;
}

const model_condition *model_pod_condition(const model_pod *p, const char *type) {
  for (uint32_t i = 0; i < p->nconditions; i++)
    if (!strcmp(p->conditions[i].type, type)) return &p->conditions[i];
  return NULL;
}

int64_t model_pod_scheduled_ns(const model_pod *p) {
  const model_condition *c = model_pod_condition(p, "PodScheduled");
  if (c && !strcmp(c->status, "True") && c->last_transition_ns) return c->last_transition_ns;
  if (p->start_ns) return p->start_ns;
  return p->obj.created_ns;
}

/* ---- Node ------------------------------------------------------------------------------ */

ts_rc model__decode_node(mdec *d, json_t *root, model_obj *o) {
  model_node *n = (model_node *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *status;
  model_rlist alloc = {0};
  model_condition *conds = NULL;
  uint32_t nconds = 0;
  size_t mark;
  static const char *gpu_memory_key;
  int64_t mib = whole_number(
      model_labels_get(&o->labels, ts_intern_once(&gpu_memory_key, "nvidia.com/gpu.memory")),
      INT32_MAX);
  n->gpu_memory = (int32_t)(mib > 0 ? mib : 0); /* GPU feature discovery's label, MiB */
  n->gpu_res = -1;
  if (rc != TS_OK) return rc;
  if (spec) {
    mark = model__push(d, "spec");
    if ((rc = model__bool(d, spec, "unschedulable", &n->unschedulable, NULL)) ||
        (rc = model__taints(d, spec, "taints", &n->taints, &n->ntaints)))
      return rc;
    model__pop(d, mark);
  }
  status = model__object(d, root, "status", &rc);
  if (rc != TS_OK || !status) return rc;
  mark = model__push(d, "status");
  rc = model__resource_map(d, status, "allocatable", &alloc, false);
  if (rc == TS_OK && !alloc.n) rc = model__resource_map(d, status, "capacity", &alloc, false);
  if (rc == TS_OK) { /* wide enough for every id the table has now */
    n->nres = (uint32_t)model_resource_count(d->res);
    if (!(n->alloc = ts_calloc(2 * (size_t)n->nres, sizeof *n->alloc)))
      rc = model__fail(d, TS_ENOMEM, "out of memory");
    else
      n->used = n->alloc + n->nres;
  }
  for (uint32_t i = 0; rc == TS_OK && i < alloc.n; i++) n->alloc[alloc.v[i].id] = alloc.v[i].v;
  ts_free(alloc.v);
  if (rc == TS_OK) rc = model__conditions(d, status, &conds, &nconds);
  for (uint32_t i = 0; rc == TS_OK && i < nconds; i++)
    if (!strcmp(conds[i].type, "Ready")) n->ready = !strcmp(conds[i].status, "True");
  model__conditions_free(conds, nconds);
  if (rc == TS_OK) model__pop(d, mark);
  return rc;
}

void model__free_node(model_obj *o) {
  ts_free(((model_node *)o)->gpu_shares);
  ts_free(((model_node *)o)->alloc);
  ts_free(((model_node *)o)->taints);
}

/* ---- Namespace, PriorityClass ---------------------------------------------------------- */

ts_rc model__decode_namespace(mdec *d, json_t *root, model_obj *o) {
  (void)d, (void)root, (void)o;
  return TS_OK;
}

void model__free_namespace(model_obj *o) {
  (void)o;
}

ts_rc model__decode_priority_class(mdec *d, json_t *root, model_obj *o) {
  static const char *const policies[] = {"PreemptLowerPriority", "Never"};
  model_priority_class *pc = (model_priority_class *)o;
  bool has = false;
  int policy = 0;
  ts_rc rc;
  if ((rc = model__int32(d, root, "value", &pc->value, &has)) ||
      (rc = model__bool(d, root, "globalDefault", &pc->global_default, NULL)) ||
      (rc = model__enum(d, root, "preemptionPolicy", policies, 2, &policy)))
    return rc;
  if (!has) return model__fail_at(d, "value", "is required");
  if (pc->value > 1000000000 && strncmp(o->name, "system-", 7) != 0)
    return model__fail_at(d, "value", "must be no greater than 1000000000");
  pc->preempt_never = policy == 1;
  return TS_OK;
}

void model__free_priority_class(model_obj *o) {
  (void)o;
}

/* ---- PodDisruptionBudget --------------------------------------------------------------- */

static ts_rc int_or_pct(mdec *d, json_t *parent, const char *key, model_int_or_pct *out) {
  json_t *v = json_object_get(parent, key);
  const char *s;
  char *end;
  long pct;
  if (!v || json_is_null(v)) return TS_OK;
  out->set = true;
  if (json_is_integer(v)) {
    if (json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
      return model__fail_at(d, key, "must be greater than or equal to 0");
    out->value = (int32_t)json_integer_value(v);
    return TS_OK;
  }
  s = json_string_value(v);
  if (s && *s && s[strlen(s) - 1] == '%') {
    pct = strtol(s, &end, 10);
    if (*end == '%' && end != s && pct >= 0 && pct <= 100) {
      out->percent = true;
      out->value = (int32_t)pct;
      return TS_OK;
    }
  }
  return model__fail_at(d, key, "must be an integer or a percentage between 0%% and 100%%");
}

ts_rc model__decode_pdb(mdec *d, json_t *root, model_obj *o) {
  model_pdb *p = (model_pdb *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *status;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (spec) {
    mark = model__push(d, "spec");
    if ((rc = model__label_selector(d, spec, "selector", &p->selector)) ||
        (rc = int_or_pct(d, spec, "minAvailable", &p->min_available)) ||
        (rc = int_or_pct(d, spec, "maxUnavailable", &p->max_unavailable)))
      return rc;
    if (p->min_available.set && p->max_unavailable.set)
      return model__fail(d, TS_EINVAL, "minAvailable and maxUnavailable cannot be both set");
    model__pop(d, mark);
  }
  status = model__object(d, root, "status", &rc);
  if (rc != TS_OK || !status) return rc;
  mark = model__push(d, "status");
  if ((rc = model__int32(d, status, "disruptionsAllowed", &p->disruptions_allowed, NULL)) ||
      (rc = model__int32(d, status, "currentHealthy", &p->current_healthy, NULL)) ||
      (rc = model__int32(d, status, "desiredHealthy", &p->desired_healthy, NULL)) ||
      (rc = model__int32(d, status, "expectedPods", &p->expected_pods, NULL)) ||
      (rc = model__int(d, status, "observedGeneration", &p->observed_generation, NULL)))
    return rc;
  model__pop(d, mark);
  return TS_OK;
}

void model__free_pdb(model_obj *o) {
  model__label_selector_free(&((model_pdb *)o)->selector);
}
