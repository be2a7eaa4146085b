/* dra/select.c - DRA selectors evaluated by cel/. Each expression is compiled once and
 * kept with its compile error, if any; each device's CEL view is built once per version of its
 * ResourceSlice and kept on that version (model_slice.derived), so it goes with it. The
 * allocator's own cache keeps each (selector, device) result for the cycle, so a selector is
 * evaluated at most once per device per cycle. Not thread-safe: one dra_cel per scheduling
 * thread. */
#include <stdint.h>
#include <string.h>

#include "cel/cel.h"
#include "dra/dra.h"

typedef struct prog {
  cel_program *p; /* compiled, or NULL when compiling failed */
  ts_rc rc;       /* the compile result */
  char *error;    /* owned compile error text */
  char key[];     /* the expression */
} prog;

typedef struct view {
  dra_device_view *devs; /* one per device (arena) */
  uint32_t ndevs;        /* entries */
  ts_arena arena;        /* devices, attributes, capacities */
} view;

struct dra_cel {
  dra_env *env;      /* where selectors compile (StoredExpressions) */
  ts_map progs;      /* expression -> prog */
  cel_eval_ctx *ctx; /* evaluation scratch, and its compiled regular expressions */
};

dra_cel *dra_cel_new(void) {
  dra_cel *c = ts_calloc(1, sizeof *c);
  if (!c) return NULL;
  ts_map_init(&c->progs);
  if (!(c->ctx = cel_eval_ctx_new()) || !(c->env = dra_env_new(NULL))) {
    dra_cel_free(c);
    return NULL;
  }
  return c;
}

void dra_cel_free(dra_cel *c) {
  size_t it = 0;
  const ts_map_slot *s;
  if (!c) return;
  while (ts_map_next(&c->progs, &it, &s)) {
    prog *p = s->value;
    cel_program_free(p->p);
    ts_free(p->error);
    ts_free(p);
  }
  ts_map_free(&c->progs);
  cel_eval_ctx_free(c->ctx);
  dra_env_free(c->env); /* after its programs */
  ts_free(c);
}

static const prog *compiled(dra_cel *c, const char *expr) {
  size_t n = strlen(expr);
  prog *p = ts_map_get(&c->progs, expr, n);
  ts_err err;
  if (p) return p;
  if (!(p = ts_calloc(1, sizeof *p + n + 1))) return NULL;
  memcpy(p->key, expr, n + 1);
  ts_err_clear(&err);
  if ((p->rc = dra_selector_compile(c->env, expr, &p->p, &err)) != TS_OK)
    p->error = ts_strdup(err.text);
  if (ts_map_put(&c->progs, p->key, n, p, NULL) != TS_OK) {
    cel_program_free(p->p);
    ts_free(p->error);
    ts_free(p);
    return NULL;
  }
  return p;
}

/* The CEL view of one model device (memory in a). */
static bool device_view(const model_slice *s, const model_device *d, ts_arena *a,
                        dra_device_view *out) {
  dra_attr_view *attrs = ts_arena_alloc(a, (d->nattrs + 1) * sizeof *attrs);
  dra_capacity_view *caps = ts_arena_alloc(a, (d->ncaps + 1) * sizeof *caps);
  if (!attrs || !caps) return false;
  for (uint32_t i = 0; i < d->nattrs; i++) {
    const model_attr *m = &d->attrs[i];
    dra_attr_view *x = &attrs[i];
    ts_err err;
    memset(x, 0, sizeof *x);
    x->domain = m->domain, x->name = m->name;
    switch (m->kind) {
    case MODEL_ATTR_BOOL:
      x->kind = DRA_ATTR_BOOL, x->u.b = m->b;
      break;
    case MODEL_ATTR_INT:
      x->kind = DRA_ATTR_INT, x->u.i = m->i;
      break;
    case MODEL_ATTR_STRING:
      x->kind = DRA_ATTR_STRING, x->u.s = m->s ? m->s : "";
      break;
    case MODEL_ATTR_VERSION:
      x->kind = DRA_ATTR_VERSION;
      if (cel_semver_parse(m->s, strlen(m->s), false, &x->u.v, &err) != TS_OK)
        x->kind = DRA_ATTR_STRING, x->u.s = m->s; /* the API server validates versions */
      break;
    }
  }
  for (uint32_t i = 0; i < d->ncaps; i++)
    caps[i] = (dra_capacity_view){d->caps[i].domain, d->caps[i].name, d->caps[i].value};
  *out = (dra_device_view){s->driver, attrs, d->nattrs, caps, d->ncaps, d->allow_multiple};
  return true;
}

static void view_free(void *p) {
  view *v = p;
  ts_arena_free(&v->arena);
  ts_free(v);
}

/* The CEL view of slice s's devices, built on first use and kept on s. */
static const view *slice_view(const model_slice *s) {
  model_slice *w = (model_slice *)(uintptr_t)s; /* the derived slot is the reader's */
  view *v;
  if (s->derived && s->derived_free == view_free) return s->derived;
  if (s->derived) return NULL; /* another reader's: not ours to replace */
  if (!(v = ts_calloc(1, sizeof *v))) return NULL;
  ts_arena_init(&v->arena, 4096);
  v->devs = ts_arena_alloc(&v->arena, (s->ndevices + 1) * sizeof *v->devs);
  v->ndevs = s->ndevices;
  for (uint32_t i = 0; v->devs && i < s->ndevices; i++)
    if (!device_view(s, &s->devices[i], &v->arena, &v->devs[i])) v->devs = NULL;
  if (!v->devs) {
    view_free(v);
    return NULL;
  }
  w->derived = v, w->derived_free = view_free;
  return v;
}

ts_rc dra_cel_eval(void *ctx, const char *expression, const model_slice *slice, uint32_t index,
                   bool *match, ts_err *err) {
  dra_cel *c = ctx;
  const prog *p = compiled(c, expression);
  const view *v;
  *match = false;
  if (!p) return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (!p->p) return ts_err_set(err, TS_EPARSE, "%s", p->error ? p->error : "invalid expression");
  if (!(v = slice_view(slice))) return ts_err_set(err, TS_ENOMEM, "out of memory");
  if (index >= v->ndevs)
    return ts_err_set(err, TS_EINVAL, "ResourceSlice %s has no device %u", slice->obj.key, index);
  return dra_selector_eval(p->p, c->ctx, &v->devs[index], match, err);
}
