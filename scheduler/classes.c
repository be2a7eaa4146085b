/* scheduler/classes.c - pod classes: the cycle's index of feasible nodes per pod shape.
 *
 * Pending single pods that filter and score alike (sched__same_shape: the same requests by
 * value, node selector, affinity, tolerations and flavors, and no ResourceClaims) form a class,
 * wherever they are in the queue. A class keeps its feasible nodes in a tree ordered by score
 * for the whole cycle, with each node's slot. Every change to a node's free capacity (a
 * placement, a gang's trial given back) is logged; before a class picks a node it re-scores the
 * logged nodes it has not seen yet, moving, adding or dropping each in its tree. Each pick is
 * the node a full scan would pick, and it costs the nodes that changed since the class's last
 * pick instead of every node. A class also remembers why it fits nowhere until a
 * node changes.
 *
 * Cost of a cycle: one static filter and one tree per class (nodes x classes), plus, per pick,
 * the changes since the class's last pick and a tree update each: linear in nodes + pods for a
 * given number of distinct shapes. A class of one pod is not indexed (one scan is cheaper), so
 * a queue where every pod has its own shape still costs a scan per pod.
 *
 * Gang members have classes of their own, restricted to the topology domain the gang is tried
 * in (or to every node), kept for the whole cycle (sched__class_within): the gangs of one
 * shape tried in one zone pay for the nodes that changed since the last of them, where each
 * used to scan the zone. */
#include "scheduler/sched_int.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of index all classes may hold at once: 2 KiB per node (a class costs about 9 bytes per
 * node passing its static filters, and each static signature 4 bytes per node: room for
 * hundreds of classes alive at once, as in a queue of interleaved jobs), and at least 64 MiB. A
 * fixed 64 MiB was a cliff: at 50,000 nodes a quarter of the classes of a varied queue found no
 * room and scanned every node per pod. */
#define CLASS_BUDGET_PER_NODE ((size_t)2048)
#define CLASS_BUDGET_MIN      ((size_t)64 << 20)

static size_t budget(const sched_view *v) {
  size_t b = (size_t)v->n * CLASS_BUDGET_PER_NODE;
  return b > CLASS_BUDGET_MIN ? b : CLASS_BUDGET_MIN;
}

/* A node's key is one 64-bit word: the score (tier, GPU and cpu/memory utilisation, each at
 * most SCORE_SCALE < 2^20) above the node's index inverted, so that a greater key is the
 * better node and equal scores go to the lower index, as a full scan picks; 0 is no node.
 * Classes index clusters of fewer than 2^23 nodes. */
#define NODE_BITS 23
#define NODE_MASK (((uint64_t)1 << NODE_BITS) - 1)

static sched_key key_of(const sched_view *v, int64_t score, uint32_t node) {
  uint64_t tier = (uint64_t)score >> 61, gpu = ((uint64_t)score >> 30) & 0x7fffffff,
           cpumem = (uint64_t)score & 0x3fffffff;
  return ((tier << 40 | gpu << 20 | cpumem) << NODE_BITS) | (NODE_MASK - sched__rank(v, node));
}

static uint32_t node_of(const sched_view *v, sched_key k) {
  uint32_t r = (uint32_t)(NODE_MASK - (k & NODE_MASK));
  return v->unrank ? v->unrank[r] : r;
}

/* The class's index is a tournament tree over the nodes that pass its static filters, eight
 * children to a parent: level 0 holds the key of the j-th such node (leaf j) while the pod
 * fits it, else 0; each entry of level L + 1 holds the greatest of eight entries of level L
 * (one cache line), and the top level's first entry is the best node. Levels are padded with
 * zeros to whole groups of eight. The class's slots map a node to its leaf, or FILTERED
 * (one map for all classes with the same static signature). Keys are
 * distinct (they hold the node), so an update climbs only while it changes a winner: a node
 * that rises stops below the first better one, a node that falls or leaves stops where it was
 * not the winner (a heap would sift each removed node's replacement down to a leaf, and the
 * full nodes that leave are mostly near the top). About 9 bytes per node passing the filters,
 * so that a hundred classes of a 20,000-node cluster stay in the last-level cache. */
#define FILTERED UINT32_MAX
#define FANOUT   8

/* A log entry of a node that gained free capacity (a trial given back) has this bit set. */
#define FREED ((uint32_t)1 << 31)

static sched_key max8(const sched_key *g) {
  sched_key a = g[0] > g[1] ? g[0] : g[1], b = g[2] > g[3] ? g[2] : g[3],
            c = g[4] > g[5] ? g[4] : g[5], d = g[6] > g[7] ? g[6] : g[7];
  a = a > b ? a : b, c = c > d ? c : d;
  return a > c ? a : c;
}

static sched_key best_key(const sched_class *c) {
  return c->tree[c->level[c->nlevels - 1]];
}

static void set_leaf(sched_class *c, uint32_t j, sched_key e) {
  sched_key *t = c->tree, old = t[j];
  size_t i = j;
  t[j] = e;
  for (uint32_t l = 1; l < c->nlevels; l++) {
    sched_key *up = t + c->level[l];
    i /= FANOUT;
    if (e > old) {
      if (up[i] >= e) return;
      up[i] = e;
    } else {
      if (up[i] != old) return;
      up[i] = max8(t + c->level[l - 1] + i * FANOUT);
    }
  }
}

/* Lays out the levels of a tree of m leaves; returns the entries of all levels. */
static size_t layout(sched_class *c, size_t m) {
  size_t at = 0, count = m ? m : 1;
  c->nlevels = 0;
  for (;;) {
    size_t padded = (count + FANOUT - 1) / FANOUT * FANOUT;
    c->level[c->nlevels++] = (uint32_t)at;
    at += padded;
    if (count == 1) return at;
    count = padded / FANOUT;
  }
}

/* Node k (leaf j) changed: re-score it, add it or drop it. */
static void update(sched_view *v, sched_class *c, uint32_t k, uint32_t j) {
  set_leaf(c, j,
           sched__resources_fit(v, c->rep.pod, k) ? key_of(v, sched__score(v, &c->shape, k), k)
                                                  : 0);
}

static uint64_t class_hash(const sched_pending *p) {
  const model_pod *pod = p->pod;
  uint64_t h = sched__static_hash(pod);
  h ^= ts_hash(pod->requests.v, pod->requests.n * sizeof *pod->requests.v) * 31;
  h ^= (uintptr_t)(p->flavors ? p->flavors->key : NULL) * 1099511628211ULL;
  h ^= (uintptr_t)pod->unoffered * 7;
  h ^= ((uint64_t)(uint32_t)pod->gpu_share << 32 | (uint32_t)pod->gpu_memory) *
       0x9e3779b97f4a7c15ULL;
  return h;
}

bool sched__class_eligible(const sched_view *v, const sched_pending *p) {
  return !v->cfg->tuning.no_classes && !v->pol->per_pod && !p->nclaims && !p->blocked;
}

sched_class *sched__class_of(sched_view *v, const sched_pending *p) {
  return sched__class_within(v, p, NULL, NULL, 0);
}

sched_class *sched__class_within(sched_view *v, const sched_pending *p, const void *within,
                                 const uint32_t *subset, uint32_t nsubset) {
  uint64_t h = class_hash(p) ^ (uintptr_t)within * 0xff51afd7ed558ccdULL;
  sched_class *head = ts_map_get(&v->classes, (const char *)&h, sizeof h), *c, *last = NULL;
  for (c = head; c; last = c, c = c->next)
    if (c->hash == h && c->within == within && sched__same_shape(v, &c->rep, p)) return c;
  if (!(c = ts_arena_alloc(v->arena, sizeof *c))) return NULL;
  memset(c, 0, sizeof *c);
  c->hash = h;
  c->rep = *p;
  c->within = within, c->subset = subset, c->nsubset = nsubset;
  if (within) c->remaining = UINT32_MAX; /* a gang's: kept until the cycle ends */
  sched__shape_init(v, p->pod, &c->shape);
  c->all_next = v->class_list;
  v->class_list = c;
  if (last)
    last->next = c; /* appended: the head's key stays where the map points */
  else if (ts_map_put(&v->classes, (const char *)&c->hash, sizeof c->hash, c, NULL) != TS_OK)
    return NULL;
  return c;
}

static void drop_index(sched_view *v, sched_class *c) {
  sched_slots *m = c->slots, **at;
  v->class_bytes -= c->bytes;
  free(c->tree);
  c->tree = NULL, c->slots = NULL;
  c->nlevels = 0, c->bytes = 0;
  c->unindexed = true;
  if (!m || --m->refs) return;
  for (at = &v->slots; *at != m; at = &(*at)->next) {
  }
  *at = m->next;
  v->class_bytes -= (size_t)v->n * sizeof *m->slot;
  free(m->slot), free(m->log), free(m);
}

/* The class's nodes: those of sig, restricted to the class's subset; *n of them into out
 * (v->n entries), or sig's own array when the class has no subset. */
static const uint32_t *class_nodes(const sched_class *c, const sched_sig *sig, uint32_t *out,
                                   uint32_t *n) {
  if (!c->subset) return *n = sig->n, sig->nodes;
  *n = 0;
  for (uint32_t i = 0; i < c->nsubset; i++)
    if (sig->pass[c->subset[i]]) out[(*n)++] = c->subset[i];
  return out;
}

/* The node -> leaf map of sig (restricted to the class's subset), shared with the classes of
 * the same signature and subset; NULL when over the budget or out of memory. */
static sched_slots *slots_of(sched_view *v, const sched_class *c, const sched_sig *sig,
                             const uint32_t *nodes, uint32_t n) {
  size_t bytes = (size_t)v->n * sizeof(uint32_t);
  sched_slots *m;
  for (m = v->slots; m; m = m->next)
    if (m->hash == sig->hash && m->flavors == sig->flavors && m->within == c->within &&
        sched__same_static(m->pod, c->rep.pod))
      return m;
  if (v->class_bytes + bytes > budget(v) || !(m = calloc(1, sizeof *m))) return NULL;
  if (!(m->slot = malloc(((size_t)v->n + 1) * sizeof *m->slot))) {
    free(m);
    return NULL;
  }
  for (uint32_t k = 0; k < v->n; k++) m->slot[k] = FILTERED;
  for (uint32_t j = 0; j < n; j++) m->slot[nodes[j]] = j;
  m->pod = c->rep.pod, m->hash = sig->hash, m->flavors = sig->flavors, m->within = c->within;
  m->copied = v->nchanged; /* its classes' trees are built from the nodes as they are now */
  m->next = v->slots, v->slots = m;
  v->class_bytes += bytes;
  return m;
}

static void drop_reasons(sched_view *v, sched_class *c) {
  if (c->rmask) v->class_bytes -= (size_t)v->n * (sizeof *c->rmask + 1);
  free(c->rmask), free(c->rpass), free(c->rcounts);
  c->rmask = NULL, c->rpass = NULL, c->rcounts = NULL;
  c->nrcounts = 0, c->rvalid = false;
}

void sched__classes_free(sched_view *v) {
  for (sched_class *c = v->class_list; c; c = c->all_next) drop_index(v, c), drop_reasons(v, c);
  v->class_list = NULL;
  ts_map_free(&v->classes);
  free(v->changed);
  v->changed = NULL, v->nchanged = v->changed_cap = 0;
  v->tail_reader = NULL, v->tail_shared = false;
}

/* Copies into m's log the entries of the view's log it has not seen whose node it holds;
 * false when its log cannot grow (the view's log is then lost: classes scan). */
static bool catch_up(sched_view *v, sched_slots *m) {
  for (; m->copied < v->nchanged; m->copied++) {
    uint32_t e = v->changed[m->copied];
    if (m->slot[e & ~FREED] == FILTERED) continue;
    if (m->nlog == m->logcap) {
      size_t ncap = m->logcap ? m->logcap * 2 : 256;
      uint32_t *nl = realloc(m->log, ncap * sizeof *nl);
      if (!nl) return v->log_changes = false, v->log_lost = true, false;
      m->log = nl, m->logcap = ncap;
    }
    m->log[m->nlog++] = e;
    m->last_from = m->copied;
  }
  return true;
}

/* Class c (NULL: a reasons count) has applied every entry of the log. */
static void reached_tail(sched_view *v, sched_class *c) {
  if (c && (!v->tail_reader || v->tail_reader == c))
    v->tail_reader = c;
  else
    v->tail_shared = true;
}

void sched__node_changed(sched_view *v, uint32_t node, bool freed) {
  v->changes++;
  if (++v->node_rev[node] > UINT32_MAX >> 1) v->node_rev[node] = 1, v->dra_epoch++; /* wrapped */
  if (!v->log_changes) return;
  /* The same node as the last entry (a packing score fills one node pod after pod: most
   * entries of a cycle): no new entry. The entry becomes FREED if this change is, and the one
   * class that already applied it (the last picker) is set to apply it again. */
  if (v->nchanged && !v->tail_shared && (v->changed[v->nchanged - 1] & ~FREED) == node) {
    sched_class *c = v->tail_reader;
    sched_slots *m = c ? c->slots : NULL;
    v->changed[v->nchanged - 1] |= freed ? FREED : 0;
    /* Only the tail reader's slots can have passed the entry (a class of other slots that had
     * would have made the tail shared): they take it back, to copy it again as it is now (a
     * slots made after the entry did not copy it, but its trees were built before this
     * change), and the reader applies it again. */
    if (m && m->copied == v->nchanged) {
      if (m->nlog && m->last_from == v->nchanged - 1) m->nlog--;
      m->copied = v->nchanged - 1;
      if (c->seen > m->nlog) c->seen = m->nlog;
    }
    v->tail_reader = NULL;
    return;
  }
  v->tail_reader = NULL, v->tail_shared = false;
  if (v->nchanged == v->changed_cap) {
    size_t ncap = v->changed_cap ? v->changed_cap * 2 : 1024;
    uint32_t *nc = realloc(v->changed, ncap * sizeof *nc);
    if (!nc) { /* the classes can no longer trust their trees: they scan from now on */
      v->log_changes = false, v->log_lost = true;
      return;
    }
    v->changed = nc, v->changed_cap = ncap;
  }
  v->changed[v->nchanged++] = node | (freed ? FREED : 0);
}

/* Builds the class's tree of feasible nodes; false when over the budget or out of memory. */
static bool build(sched_view *v, sched_class *c) {
  const sched_sig *sig = sched__static_nodes(v, &c->rep);
  uint32_t m = 0;
  const uint32_t *nodes = sig ? class_nodes(c, sig, v->scan_nodes, &m) : NULL;
  size_t entries = layout(c, m), bytes = entries * sizeof *c->tree;
  if (!sig || v->log_lost || v->class_bytes + bytes > budget(v) || v->n > NODE_MASK ||
      !(c->slots = slots_of(v, c, sig, nodes, m)))
    return false;
  c->slots->refs++;
  if (!(c->tree = calloc(entries, sizeof *c->tree))) return false;
  for (uint32_t j = 0; j < m; j++) {
    uint32_t k = nodes[j];
    c->tree[j] =
        sched__resources_fit(v, c->rep.pod, k) ? key_of(v, sched__score(v, &c->shape, k), k) : 0;
  }
  for (uint32_t l = 1; l < c->nlevels; l++) {
    sched_key *up = c->tree + c->level[l], *down = c->tree + c->level[l - 1];
    for (uint32_t i = 0; i < (c->level[l] - c->level[l - 1]) / FANOUT; i++)
      up[i] = max8(down + (size_t)i * FANOUT);
  }
  v->class_bytes += c->bytes = bytes;
  v->log_changes = true;
  if (!catch_up(v, c->slots)) return false;
  c->seen = c->slots->nlog;
  reached_tail(v, c);
  return true;
}

/* The best node by a full scan of the class's statically passing nodes. */
static uint32_t scan(sched_view *v, sched_class *c) {
  const sched_sig *sig = sched__static_nodes(v, &c->rep);
  sched_cand best = {0, UINT32_MAX};
  uint32_t n = sig ? (c->subset ? c->nsubset : sig->n) : 0;
  for (uint32_t j = 0; j < n; j++) {
    uint32_t k = c->subset ? c->subset[j] : sig->nodes[j];
    sched_cand cand;
    if (c->subset && !sig->pass[k]) continue;
    if (!sched__resources_fit(v, c->rep.pod, k)) continue;
    cand = (sched_cand){sched__score(v, &c->shape, k), k};
    if (best.node == UINT32_MAX || cand.score > best.score ||
        (cand.score == best.score && sched__rank(v, cand.node) < sched__rank(v, best.node)))
      best = cand; /* as the tree orders them */
  }
  return best.node;
}

uint32_t sched__class_pick(sched_view *v, sched_class *c) {
  if (!c->tree && !c->unindexed && (c->remaining < 2 || !build(v, c))) {
    drop_index(v, c); /* what a failed build allocated */
    c->unindexed = true;
  }
  if (c->tree && (v->log_lost || !catch_up(v, c->slots))) drop_index(v, c);
  if (!c->tree) return scan(v, c);
  if (++v->mark_stamp == 0) { /* wrapped: forget every mark */
    memset(v->mark, 0, (size_t)v->n * sizeof *v->mark);
    v->mark_stamp = 1;
  }
  for (const sched_slots *m = c->slots; c->seen < m->nlog; c->seen++) {
    uint32_t e = m->log[c->seen], k = e & ~FREED, j = m->slot[k];
    /* a node the pod did not fit and that only lost capacity still does not fit */
    if ((!c->tree[j] && !(e & FREED)) || v->mark[k] == v->mark_stamp) continue;
    v->mark[k] = v->mark_stamp; /* once per pick */
    update(v, c, k, j);
  }
  reached_tail(v, c);
  return best_key(c) ? node_of(v, best_key(c)) : UINT32_MAX;
}

void sched__class_done(sched_view *v, sched_class *c) {
  if (c->remaining) c->remaining--;
  if (c->remaining) return;
  if (c->tree) drop_index(v, c); /* its memory goes to the classes still to come */
  drop_reasons(v, c);
}

/* ---- reasons kept up to date -------------------------------------------------------------- */

/* One more (d = 1) or one fewer (d = -1) node lacking `mask`; false when the table is full. */
static bool count_mask(sched_class *c, uint64_t mask, int d) {
  size_t m;
  if (!mask) return true; /* a node that takes the pod gives no reason */
  for (m = 0; m < c->nrcounts && c->rcounts[m].mask != mask; m++) {
  }
  if (m == c->nrcounts) {
    if (m == SCHED_MAX_MASKS) return false;
    c->rcounts[c->nrcounts++] = (sched_mask_count){mask, 0};
  }
  c->rcounts[m].count += d;
  return true;
}

/* Counts every statically passing node once; false when it cannot (memory, budget, too many
 * kinds of shortage, no change log): the caller then counts from scratch each time. */
static bool count_all(sched_view *v, sched_class *c) {
  const sched_sig *sig = sched__static_reasons(v, &c->rep);
  size_t bytes = (size_t)v->n * (sizeof *c->rmask + 1);
  if (!sig || v->log_lost || v->class_bytes + bytes > budget(v)) return false;
  c->rmask = calloc((size_t)v->n + 1, sizeof *c->rmask);
  c->rpass = malloc((size_t)v->n + 1);
  c->rcounts = malloc(SCHED_MAX_MASKS * sizeof *c->rcounts);
  if (!c->rmask || !c->rpass || !c->rcounts) {
    free(c->rmask), free(c->rpass), free(c->rcounts);
    c->rmask = NULL, c->rpass = NULL, c->rcounts = NULL;
    return false;
  }
  v->class_bytes += bytes;
  memcpy(c->rpass, sig->pass, v->n);
  c->rstatic = sig->reasons, c->nrstatic = sig->nreasons, c->nrcounts = 0;
  for (uint32_t j = 0; j < sig->n; j++) {
    uint32_t k = sig->nodes[j];
    c->rmask[k] = sched__short_mask(v, c->rep.pod, k);
    if (!count_mask(c, c->rmask[k], 1)) return false;
  }
  v->log_changes = true; /* from here every change is logged */
  c->rseen = v->nchanged;
  reached_tail(v, NULL);
  return c->rvalid = true;
}

const char *sched__class_why(sched_view *v, sched_class *c) {
  if (!c->rvalid && !c->rmask && !count_all(v, c)) {
    drop_reasons(v, c);
    return sched__why_pending(v, &c->rep);
  }
  if (!c->rvalid || v->log_lost) return sched__why_pending(v, &c->rep);
  for (; c->rseen < v->nchanged; c->rseen++) {
    uint32_t k = v->changed[c->rseen] & ~FREED;
    uint64_t mask;
    if (!c->rpass[k] || (mask = sched__short_mask(v, c->rep.pod, k)) == c->rmask[k]) continue;
    if (!count_mask(c, c->rmask[k], -1) || !count_mask(c, mask, 1)) {
      c->rvalid = false; /* too many kinds: from scratch from now on */
      return sched__why_pending(v, &c->rep);
    }
    c->rmask[k] = mask;
  }
  reached_tail(v, NULL);
  return sched__format_why(v, c->rep.pod, c->rstatic, c->nrstatic, c->rcounts, c->nrcounts,
                           c->reason);
}
