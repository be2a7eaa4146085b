/* common/map.c - string-keyed open-addressing hash map (linear probing, backward shift). */
#include "ts.h"

#include <string.h>

uint64_t ts_hash(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i = 0;
  /* Eight bytes at a time, then the tail; mixed with a murmur-style finaliser. */
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ s[i]) * 0x100000001b3ULL;
  h ^= n;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

void ts_map_init(ts_map *m) {
  m->slots = NULL;
  m->cap = 0;
  m->count = 0;
}

void ts_map_free(ts_map *m) {
  ts_free(m->slots);
  ts_map_init(m);
}

static bool slot_match(const ts_map_slot *s, const char *key, size_t len, uint64_t h) {
  return s->hash == h && s->len == len && (s->key == key || memcmp(s->key, key, len) == 0);
}

static size_t find(const ts_map *m, const char *key, size_t len, uint64_t h, bool *found) {
  size_t mask = m->cap - 1, i = h & mask;
  for (;; i = (i + 1) & mask) {
    const ts_map_slot *s = &m->slots[i];
    if (!s->key) {
      *found = false;
      return i;
    }
    if (slot_match(s, key, len, h)) {
      *found = true;
      return i;
    }
  }
}

void *ts_map_get(const ts_map *m, const char *key, size_t len) {
  bool found;
  size_t i;
  if (!m->count) return NULL;
  i = find(m, key, len, ts_hash(key, len), &found);
  return found ? m->slots[i].value : NULL;
}

/* Doubles the table (load factor kept under 3/4). O(n), amortised O(1) per insert. */
static ts_rc grow(ts_map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 16, i;
  ts_map_slot *old = m->slots, *ns = ts_calloc(ncap, sizeof *ns);
  size_t ocap = m->cap;
  if (!ns) return TS_ENOMEM;
  m->slots = ns;
  m->cap = ncap;
  for (i = 0; i < ocap; i++) {
    bool found;
    size_t j;
    if (!old[i].key) continue;
    j = find(m, old[i].key, old[i].len, old[i].hash, &found);
    m->slots[j] = old[i];
  }
  ts_free(old);
  return TS_OK;
}

ts_rc ts_map_put(ts_map *m, const char *key, size_t len, void *value, void **old) {
  uint64_t h = ts_hash(key, len);
  bool found;
  size_t i;
  if (old) *old = NULL;
  if ((m->count + 1) * 4 > m->cap * 3 && grow(m) != TS_OK) return TS_ENOMEM;
  i = find(m, key, len, h, &found);
  if (found) {
    if (old) *old = m->slots[i].value;
    m->slots[i].key = key;
    m->slots[i].value = value;
    return TS_OK;
  }
  m->slots[i] = (ts_map_slot){key, len, h, value};
  m->count++;
  return TS_OK;
}

void *ts_map_del(ts_map *m, const char *key, size_t len) {
  size_t mask, i, j;
  bool found;
  void *value;
  if (!m->count) return NULL;
  mask = m->cap - 1;
  i = find(m, key, len, ts_hash(key, len), &found);
  if (!found) return NULL;
  value = m->slots[i].value;
  /* Backward-shift: move later members of the cluster into the hole when allowed. */
  for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
    size_t home = m->slots[j].hash & mask;
    bool between = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
    if (between) continue;
    m->slots[i] = m->slots[j];
    i = j;
  }
  m->slots[i] = (ts_map_slot){0};
  m->count--;
  return value;
}

bool ts_map_next(const ts_map *m, size_t *iter, const ts_map_slot **slot) {
  for (; *iter < m->cap; (*iter)++) {
    if (m->slots[*iter].key) {
      *slot = &m->slots[(*iter)++];
      return true;
    }
  }
  return false;
}
