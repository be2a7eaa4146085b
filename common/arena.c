/* common/arena.c - bump allocation in chunks, freed all at once. */
#include "ts.h"

#include <string.h>

struct ts_arena_chunk {
  ts_arena_chunk *next; /* older chunk */
  size_t size;          /* payload bytes */
  size_t used;          /* payload bytes handed out */
  _Alignas(16) unsigned char data[];
};

#define ARENA_ALIGN 16

void ts_arena_init(ts_arena *a, size_t chunk_size) {
  a->head = NULL;
  a->chunk_size = chunk_size ? chunk_size : 64 * 1024;
  a->used = 0;
}

static ts_arena_chunk *chunk_new(size_t size) {
  ts_arena_chunk *c = ts_malloc(sizeof *c + size);
  if (!c) return NULL;
  c->next = NULL;
  c->size = size;
  c->used = 0;
  return c;
}

void *ts_arena_alloc(ts_arena *a, size_t n) {
  ts_arena_chunk *c = a->head;
  size_t off;
  if (n > SIZE_MAX - ARENA_ALIGN) return NULL;
  n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
  if (!c || c->size - c->used < n) {
    size_t size = n > a->chunk_size ? n : a->chunk_size;
    c = chunk_new(size);
    if (!c) return NULL;
    c->next = a->head;
    a->head = c;
  }
  off = c->used;
  c->used += n;
  a->used += n;
  return c->data + off;
}

char *ts_arena_strndup(ts_arena *a, const char *s, size_t n) {
  char *d = ts_arena_alloc(a, n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

void ts_arena_reset(ts_arena *a) {
  ts_arena_chunk *c = a->head, *keep = NULL;
  /* Keep the largest chunk so that a steady workload stops allocating. */
  for (; c; c = c->next)
    if (!keep || c->size > keep->size) keep = c;
  c = a->head;
  while (c) {
    ts_arena_chunk *next = c->next;
    if (c != keep) ts_free(c);
    c = next;
  }
  if (keep) {
    keep->next = NULL;
    keep->used = 0;
  }
  a->head = keep;
  a->used = 0;
}

void ts_arena_free(ts_arena *a) {
  ts_arena_chunk *c = a->head;
  while (c) {
    ts_arena_chunk *next = c->next;
    ts_free(c);
    c = next;
  }
  a->head = NULL;
  a->used = 0;
}
