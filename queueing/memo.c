/* queueing/memo.c - Kueue's LastAssignment: where the flavor search of each pending workload
 * stopped, so that the next attempt resumes with the following flavor.
 *
 * Kueue keeps, per workload, the index of the last flavor tried for each pod set and
 * resource (-1 once the last flavor was reached) with the ClusterQueue's
 * AllocatableResourceGeneration and the scheduling cycle it was computed in. The generation
 * advances when an admitted workload leaves the queue or its quota changes; a record is
 * dropped once the generation moved and the record is older than the previous cycle, or
 * when the workload's shape changed (FlavorFungibilityPreserveScanProgress, beta in v0.19).
 *
 * Our quota trees are rebuilt between Tessera cycles, so the generations live here: at the
 * first cycle on a new tree each queue's admitted set is compared with the one of the last
 * tree (a workload gone, or different quotas, advances it); on the same tree, q_tree_remove
 * counts removals. A workload admitted and finished between two trees is not seen (the next
 * record then lives one generation longer than in Kueue). All resources of a group share
 * one flavor, so the progress is kept per pod set and resource group. */
#include "queueing/q_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct rec {
  const char *cq; /* interned ClusterQueue name */
  uint64_t shape; /* hash of the pod sets it was computed for */
  int64_t cycle;  /* memo cycle it was recorded in */
  uint64_t gen;   /* the queue's generation then */
  uint32_t n;     /* entries of next: pod sets x groups */
  bool pending;   /* some search stopped before the last flavor */
  char *key;      /* workload key (owned, in the same allocation) */
  int16_t next[]; /* [n] where each search resumes (0 = the first flavor) */
} rec;

typedef struct cqgen {
  uint64_t gen;          /* AllocatableResourceGeneration */
  uint64_t fp;           /* fingerprint of the queue's groups and quotas */
  uint64_t removed_seen; /* q__cq.removed at the last sync on the same tree */
  uint64_t *keys;        /* sorted hashes of the workloads admitted at the last build */
  size_t nkeys;          /* entries */
  char *name;            /* owned */
} cqgen;

struct q_memo {
  ts_map recs;        /* workload key -> rec */
  ts_map cqs;         /* ClusterQueue name -> cqgen */
  const q_tree *last; /* tree synced with last (compared, never read: it may be gone) */
  int64_t cycle;      /* cycles so far */
};

q_memo *q_memo_new(void) {
  q_memo *mm = ts_calloc(1, sizeof *mm);
  if (!mm) return NULL;
  ts_map_init(&mm->recs);
  ts_map_init(&mm->cqs);
  return mm;
}

void q_memo_free(q_memo *mm) {
  size_t it = 0;
  const ts_map_slot *s;
  if (!mm) return;
  while (ts_map_next(&mm->recs, &it, &s)) ts_free(s->value);
  for (it = 0; ts_map_next(&mm->cqs, &it, &s);) {
    cqgen *g = s->value;
    ts_free(g->keys);
    ts_free(g->name);
    ts_free(g);
  }
  ts_map_free(&mm->recs);
  ts_map_free(&mm->cqs);
  ts_free(mm);
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* Kueue's scheduling shape: pod set names, counts and requests. */
static uint64_t shape_of(const q_workload *wl) {
  uint64_t h = mix(0, wl->npodsets);
  for (uint32_t i = 0; i < wl->npodsets; i++) {
    const q_podset *ps = &wl->podsets[i];
    h = mix(h, ps->name ? ts_hash(ps->name, strlen(ps->name)) : 0);
    h = mix(h, (uint64_t)ps->count);
    for (uint32_t k = 0; k < ps->nrequests; k++)
      h = mix(mix(h, ps->requests[k].id), (uint64_t)ps->requests[k].v);
  }
  return h;
}

/* The queue's resource groups, flavors and own limits: what Kueue's generation follows. */
static uint64_t fingerprint(const q_tree *t, const q__cq *cq) {
  uint64_t h = mix(1, cq->ngroups);
  for (uint32_t g = 0; g < cq->ngroups; g++) {
    const q__group *grp = &cq->groups[g];
    for (uint32_t f = 0; f < grp->nflavors; f++) {
      const char *fl = t->fname[grp->flavors[f]];
      h = mix(h, ts_hash(fl, strlen(fl)));
      for (uint32_t r = 0; r < grp->nres; r++) {
        uint32_t fr = q__fr(t, grp->flavors[f], grp->res[r]);
        h = mix(mix(mix(mix(h, grp->res[r]), (uint64_t)cq->node.nominal[fr]),
                    (uint64_t)cq->node.blimit[fr]),
                (uint64_t)cq->node.llimit[fr]);
      }
    }
  }
  return h;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static cqgen *gen_get(q_memo *mm, const char *name, bool create) {
  cqgen *g = ts_map_get(&mm->cqs, name, strlen(name));
  if (g || !create) return g;
  if (!(g = ts_calloc(1, sizeof *g)) || !(g->name = ts_strdup(name))) {
    ts_free(g);
    return NULL;
  }
  if (ts_map_put(&mm->cqs, g->name, strlen(g->name), g, NULL) != TS_OK) {
    ts_free(g->name);
    ts_free(g);
    return NULL;
  }
  return g;
}

/* A new tree: a queue whose quotas changed or that lost an admitted workload advances. */
static ts_rc new_tree(q_memo *mm, const q_tree *t) {
  for (uint32_t i = 0; i < t->ncqs; i++) {
    const q__cq *cq = t->cqs[i];
    cqgen *g = gen_get(mm, cq->node.name, true);
    uint64_t fp = fingerprint(t, cq), *keys;
    bool gone = false;
    if (!g) return TS_ENOMEM;
    if (!(keys = ts_malloc((cq->adm.n + 1) * sizeof *keys))) return TS_ENOMEM;
    for (size_t k = 0; k < cq->adm.n; k++) {
      const char *key = cq->adm.v[k]->wl->key;
      keys[k] = ts_hash(key, strlen(key));
    }
    qsort(keys, cq->adm.n, sizeof *keys, u64_cmp);
    for (size_t k = 0; k < g->nkeys && !gone; k++)
      gone = !bsearch(&g->keys[k], keys, cq->adm.n, sizeof *keys, u64_cmp);
    if (gone || (g->keys && g->fp != fp)) g->gen++;
    ts_free(g->keys);
    g->keys = keys, g->nkeys = cq->adm.n, g->fp = fp, g->removed_seen = cq->removed;
  }
  return TS_OK;
}

/* Records of workloads that left the queues (admitted elsewhere, deleted) are dropped. */
static ts_rc prune(q_memo *mm, const q_queues *qs) {
  TS_VEC(rec *) gone = {0};
  size_t it = 0;
  const ts_map_slot *s;
  while (ts_map_next(&mm->recs, &it, &s))
    if (!q__queues_has(qs, s->key) && ts_vec_push(&gone, s->value) != TS_OK) {
      ts_vec_free(&gone);
      return TS_ENOMEM;
    }
  for (size_t i = 0; i < gone.n; i++) {
    (void)ts_map_del(&mm->recs, gone.v[i]->key, strlen(gone.v[i]->key));
    ts_free(gone.v[i]);
  }
  ts_vec_free(&gone);
  return TS_OK;
}

ts_rc q__memo_sync(q_memo *mm, q_tree *t, const q_queues *qs) {
  ts_rc rc;
  mm->cycle++;
  /* The same tree as last time only when both say so: a tree built where a freed one was
   * has no memo yet, and a tree another memo synced with since is new to this one. */
  if (mm->last != t || t->synced_by != mm) {
    if ((rc = new_tree(mm, t)) != TS_OK) return rc;
    mm->last = t, t->synced_by = mm;
    return prune(mm, qs);
  }
  for (uint32_t i = 0; i < t->ncqs; i++) {
    cqgen *g = gen_get(mm, t->cqs[i]->node.name, false);
    if (g && g->removed_seen != t->cqs[i]->removed) g->gen++, g->removed_seen = t->cqs[i]->removed;
  }
  return TS_OK;
}

void q__memo_forget(q_memo *mm, const char *key) {
  ts_free(ts_map_del(&mm->recs, key, strlen(key)));
}

const int16_t *q__memo_start(q_memo *mm, const q__cq *cq, const q_workload *wl) {
  rec *r = ts_map_get(&mm->recs, wl->key, strlen(wl->key));
  const cqgen *g = gen_get(mm, cq->node.name, false);
  bool outdated;
  if (!r) return NULL;
  outdated = r->cq != cq->node.name || r->shape != shape_of(wl) ||
             r->n != wl->npodsets * cq->ngroups ||
             (mm->cycle - r->cycle > 1 && (!g || g->gen > r->gen));
  if (outdated) {
    q__memo_forget(mm, wl->key);
    return NULL;
  }
  return r->next;
}

ts_rc q__memo_record(q_memo *mm, const q__cq *cq, const q_workload *wl, const q__asg *a) {
  size_t klen = strlen(wl->key);
  uint32_t n = a->nps * a->ngroups;
  rec *r;
  const cqgen *g = gen_get(mm, cq->node.name, false);
  void *old = NULL;
  if (!a->next || !n) {
    q__memo_forget(mm, wl->key);
    return TS_OK;
  }
  if (!(r = ts_malloc(sizeof *r + n * sizeof *r->next + klen + 1))) return TS_ENOMEM;
  r->cq = cq->node.name, r->shape = shape_of(wl), r->cycle = mm->cycle;
  r->gen = g ? g->gen : 0, r->n = n, r->pending = false;
  memcpy(r->next, a->next, n * sizeof *r->next);
  for (uint32_t i = 0; i < n; i++) r->pending = r->pending || r->next[i] > 0;
  r->key = (char *)(r->next + n);
  memcpy(r->key, wl->key, klen + 1);
  if (ts_map_put(&mm->recs, r->key, klen, r, &old) != TS_OK) {
    ts_free(r);
    return TS_ENOMEM;
  }
  ts_free(old);
  return TS_OK;
}

bool q__memo_pending(const q_memo *mm, const char *key) {
  const rec *r = ts_map_get(&mm->recs, key, strlen(key));
  return r && r->pending;
}
