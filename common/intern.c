/* common/intern.c - process-wide string interning (single-threaded, like the scheduler).
 *
 * Each distinct string has one copy, with a count of the references taken by ts_intern_ref;
 * ts_intern pins it (kept for the life of the process). An unpinned copy whose last
 * reference is released is freed, so strings that belong to objects (label values) go with
 * the last object holding them, while vocabulary (keys, names from code and configuration)
 * stays. Equal strings still compare equal as pointers while any holder lives. */
#include "ts.h"

#include <stddef.h>
#include <string.h>

#define PINNED UINT32_MAX

typedef struct istr {
  uint32_t refs; /* references taken by ts_intern_ref, or PINNED */
  uint32_t len;  /* of s */
  char s[];      /* the copy, NUL-terminated */
} istr;

static ts_map intern_map; /* key (the copy) -> its istr */
static bool intern_ready;
static size_t intern_bytes; /* held by the copies */

static istr *find_or_add(const char *s, size_t len) {
  istr *h;
  if (!intern_ready) {
    ts_map_init(&intern_map);
    intern_ready = true;
  }
  if ((h = ts_map_get(&intern_map, s, len))) return h;
  if (len >= UINT32_MAX || !(h = ts_malloc(sizeof *h + len + 1))) return NULL;
  h->refs = 0, h->len = (uint32_t)len;
  memcpy(h->s, s, len);
  h->s[len] = '\0';
  if (ts_map_put(&intern_map, h->s, len, h, NULL) != TS_OK) {
    ts_free(h);
    return NULL;
  }
  intern_bytes += sizeof *h + len + 1;
  return h;
}

const char *ts_intern(const char *s, size_t len) {
  istr *h = find_or_add(s, len);
  if (!h) return NULL;
  h->refs = PINNED;
  return h->s;
}

const char *ts_intern_ref(const char *s, size_t len) {
  istr *h = find_or_add(s, len);
  if (!h) return NULL;
  if (h->refs != PINNED) h->refs++;
  return h->s;
}

void ts_intern_unref(const char *s) {
  istr *h;
  if (!s) return;
  h = (istr *)(void *)((char *)s - offsetof(istr, s));
  if (h->refs == PINNED || --h->refs) return;
  ts_map_del(&intern_map, h->s, h->len);
  intern_bytes -= sizeof *h + h->len + 1;
  ts_free(h);
}

const char *ts_intern_cstr(const char *s) {
  return s ? ts_intern(s, strlen(s)) : NULL;
}

const char *ts_intern_once(const char **once, const char *s) {
  return *once ? *once : (*once = ts_intern_cstr(s));
}

size_t ts_intern_count(void) {
  return intern_ready ? intern_map.count : 0;
}

size_t ts_intern_bytes(void) {
  return intern_bytes;
}
