/* common/intern.c - process-wide string interning (single-threaded, like the scheduler). */
#include "ts.h"

#include <string.h>

static ts_map intern_map;     /* key -> the same key: the interned copy */
static ts_arena intern_arena; /* storage of the copies; never freed */
static bool intern_ready;

const char *ts_intern(const char *s, size_t len) {
  char *copy;
  const char *found;
  if (!intern_ready) {
    ts_map_init(&intern_map);
    ts_arena_init(&intern_arena, 64 * 1024);
    intern_ready = true;
  }
  found = ts_map_get(&intern_map, s, len);
  if (found) return found;
  copy = ts_arena_strndup(&intern_arena, s, len);
  if (!copy) return NULL;
  if (ts_map_put(&intern_map, copy, len, copy, NULL) != TS_OK) return NULL;
  return copy;
}

const char *ts_intern_cstr(const char *s) {
  return ts_intern(s, strlen(s));
}

const char *ts_intern_once(const char **once, const char *s) {
  return *once ? *once : (*once = ts_intern_cstr(s));
}

size_t ts_intern_count(void) {
  return intern_ready ? intern_map.count : 0;
}
