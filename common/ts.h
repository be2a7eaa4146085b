/*
 * common/ts.h - the one public header of Tessera's common module (libc only).
 *
 * Errors, allocation (with a failure hook for tests), arenas, string interning, growable
 * buffers with caps, a string-keyed hash map, intrusive lists, vectors, time parsing,
 * logging, and Kubernetes quantities. Every other module may include this header.
 */
#ifndef TS_H
#define TS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- errors ---------------------------------------------------------------------------- */

/* One table: the enum, the names and the messages are generated from it. */
#define TS_ERRORS(X)                                                                               \
  X(OK, "success")                                                                                 \
  X(ENOMEM, "out of memory")                                                                       \
  X(EINVAL, "invalid value")                                                                       \
  X(ERANGE, "value out of range")                                                                  \
  X(EOVERFLOW, "arithmetic overflow")                                                              \
  X(EPARSE, "syntax error")                                                                        \
  X(EIO, "input/output error")                                                                     \
  X(ENOTFOUND, "not found")                                                                        \
  X(EEXIST, "already exists")                                                                      \
  X(ELIMIT, "limit exceeded")                                                                      \
  X(EUNSUPPORTED, "not supported")                                                                 \
  X(ETYPE, "wrong type")                                                                           \
  X(ECONFLICT, "conflict")                                                                         \
  X(ETIMEOUT, "timed out")                                                                         \
  X(EHTTP, "HTTP error")                                                                           \
  X(EAUTH, "authentication or authorization failed")                                               \
  X(EUNSCHEDULABLE, "cannot be scheduled")                                                         \
  X(EELSEWHERE, "allocated by someone else meanwhile")                                             \
  X(EBUDGET, "refused by a disruption budget")                                                     \
  X(ENOTLEADER, "not the leader")                                                                  \
  X(EAGAIN, "more input needed")                                                                   \
  X(EFAULT, "injected fault")

typedef enum ts_rc {
#define TS__ENUM(name, msg) TS_##name,
  TS_ERRORS(TS__ENUM)
#undef TS__ENUM
      TS__ERR_COUNT
} ts_rc;

const char *ts_errname(ts_rc rc);  /* "EINVAL"; borrowed, static */
const char *ts_strerror(ts_rc rc); /* "invalid value"; borrowed, static */

#define TS_ERR_TEXT_MAX 1024
/* Room for an object's "ns/name" key, or a key made from it ("pg:ns/name#more"): Kubernetes
 * names are at most 253 bytes, namespaces 63. */
#define TS_KEY_MAX  700
#define TS_NAME_MAX 256 /* an object name (253) or namespace, and its NUL */
#define TS_UID_MAX  128 /* an object uid (a UUID is 36) */

/* A caller-owned error: parsers and loaders fill it and never print. */
typedef struct ts_err {
  ts_rc code;                 /* TS_OK when nothing went wrong */
  int line;                   /* 1-based source line, 0 when unknown */
  int column;                 /* 1-based source column, 0 when unknown */
  char text[TS_ERR_TEXT_MAX]; /* the whole human-readable message */
} ts_err;

void ts_err_clear(ts_err *e); /* TS_OK, no position, empty text */
/* Sets code and text (printf format) and returns code. e may be NULL. */
ts_rc ts_err_set(ts_err *e, ts_rc code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
ts_rc ts_err_vset(ts_err *e, ts_rc code, const char *fmt, va_list ap); /* as ts_err_set */
/* Prepends "PREFIX: " to the existing text; returns e->code. e may be NULL. */
ts_rc ts_err_prefix(ts_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- checked arithmetic ---------------------------------------------------------------- */

/* a + b into *out; false (and *out unspecified) when it overflows int64. */
static inline bool ts_add_ok(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
/* a + b, or INT64_MAX / INT64_MIN when it overflows: for totals where "more than anything" is
 * the safe reading (demand against capacity). */
static inline int64_t ts_add_sat(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

/* a x b, saturating as ts_add_sat does. */
static inline int64_t ts_mul_sat(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/* ---- allocation ------------------------------------------------------------------------ */

/* malloc-family wrappers. All return NULL on failure (never abort). Tests can make the Nth
 * allocation from now fail with ts_alloc_fail_after(N) (0 = the next one); -1 disables. */
void *ts_malloc(size_t n);                 /* returns new */
void *ts_calloc(size_t n, size_t size);    /* returns new, zeroed */
void *ts_realloc(void *p, size_t n);       /* returns new (p is then gone); on NULL p stays */
void ts_free(void *p);                     /* NULL is a no-op */
char *ts_strdup(const char *s);            /* returns new */
char *ts_strndup(const char *s, size_t n); /* returns new, NUL-terminated */
void *ts_memdup(const void *p, size_t n);  /* returns new */
void ts_alloc_fail_after(long n);          /* see above */
bool ts_alloc_failed(void); /* true once an injected failure has happened since the last arm */

/* ---- arenas ---------------------------------------------------------------------------- */

typedef struct ts_arena_chunk ts_arena_chunk;

/* A bump allocator: many small allocations, freed all at once. */
typedef struct ts_arena {
  ts_arena_chunk *head; /* private: newest chunk first */
  size_t chunk_size;    /* private: default chunk payload size */
  size_t used;          /* read-only: bytes handed out since the last reset */
} ts_arena;

void ts_arena_init(ts_arena *a, size_t chunk_size); /* empty; chunk_size 0: a default */
/* Returns borrowed memory aligned to 16, valid until reset/free; NULL when out of memory. */
void *ts_arena_alloc(ts_arena *a, size_t n);
/* A NUL-terminated copy of n bytes of s in the arena (borrowed as ts_arena_alloc's). */
char *ts_arena_strndup(ts_arena *a, const char *s, size_t n);
/* Forgets everything allocated; keeps one chunk for reuse. */
void ts_arena_reset(ts_arena *a);
void ts_arena_free(ts_arena *a); /* frees every chunk; the arena is then empty */

/* ---- interning ------------------------------------------------------------------------- */

/* Returns the unique copy of the string (borrowed, valid for the process lifetime: it is
 * pinned), so that equal interned strings compare equal as pointers. NULL only when out of
 * memory. Pin vocabulary (label keys, resource names, namespaces, node names, drivers, names
 * of queues), not per-object identities such as pod names or uids. */
const char *ts_intern(const char *s, size_t len);
const char *ts_intern_cstr(const char *s); /* ts_intern of a C string; NULL gives NULL */
/* The same unique copy, counted instead of pinned: for strings that belong to an object (a
 * label value). Each call must be matched by one ts_intern_unref; the copy is freed with the
 * last reference unless something pinned it meanwhile. NULL only when out of memory. */
const char *ts_intern_ref(const char *s, size_t len);
/* Releases a reference of ts_intern_ref (a pinned string: nothing); NULL is a no-op. */
void ts_intern_unref(const char *s);
size_t ts_intern_count(void); /* number of distinct interned strings (for tests, stats) */
size_t ts_intern_bytes(void); /* bytes they hold (for tests, stats) */
/* ts_intern_cstr of a constant string, looked up once: *once caches it (a static of the
 * caller's; interned strings never move). For keys a hot path looks up per object. */
const char *ts_intern_once(const char **once, const char *s);

/* ---- growable buffers with a cap ------------------------------------------------------- */

typedef struct ts_buf {
  char *data; /* read-only: NUL-terminated contents (NULL until the first append) */
  size_t len; /* read-only: bytes used, without the NUL */
  size_t cap; /* private: bytes allocated */
  size_t max; /* private: maximum len; exceeding it is TS_ELIMIT */
} ts_buf;

#define TS_BUF_DEFAULT_MAX ((size_t)64 << 20)

void ts_buf_init(ts_buf *b, size_t max); /* empty, growing up to max bytes */
/* Appending: TS_OK, TS_ELIMIT past max, TS_ENOMEM; on failure b is unchanged. */
ts_rc ts_buf_append(ts_buf *b, const void *p, size_t n);
ts_rc ts_buf_puts(ts_buf *b, const char *s);
ts_rc ts_buf_putc(ts_buf *b, char c);
ts_rc ts_buf_printf(ts_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
ts_rc ts_buf_vprintf(ts_buf *b, const char *fmt, va_list ap);
/* A formatted string in the arena (borrowed as ts_arena_alloc's); NULL when out of memory. */
char *ts_arena_printf(ts_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ts_buf_reset(ts_buf *b); /* len = 0, keeps memory */
void ts_buf_free(ts_buf *b);
/* Hands the contents to the caller (returns new, never NULL: "" when empty) and resets b. */
char *ts_buf_steal(ts_buf *b);
/* Appends s as a JSON string literal, with quotes and escapes. */
ts_rc ts_buf_put_json_string(ts_buf *b, const char *s);

/* Copies at most cap-1 bytes and always terminates; returns strlen(src). */
size_t ts_strlcpy(char *dst, const char *src, size_t cap);

/* ---- string-keyed hash map ------------------------------------------------------------- */

typedef struct ts_map_slot {
  const char *key; /* borrowed: the caller keeps keys alive while they are in the map */
  size_t len;      /* key length */
  uint64_t hash;   /* full hash of the key */
  void *value;     /* the caller's value */
} ts_map_slot;

/* Open addressing with linear probing and backward-shift deletion: no tombstones. */
typedef struct ts_map {
  ts_map_slot *slots; /* private */
  size_t cap;         /* private: power of two, or 0 */
  size_t count;       /* read-only: number of entries */
} ts_map;

uint64_t ts_hash(const void *p, size_t n); /* 64-bit FNV-1a-style hash with a finaliser */
void ts_map_init(ts_map *m);
void ts_map_free(ts_map *m); /* frees the table, not keys or values */
void *ts_map_get(const ts_map *m, const char *key, size_t len);
/* Inserts or replaces. *old (if non-NULL) receives the replaced value or NULL. */
ts_rc ts_map_put(ts_map *m, const char *key, size_t len, void *value, void **old);
/* Removes and returns the value, or NULL when absent. */
void *ts_map_del(ts_map *m, const char *key, size_t len);
/* Iteration: for (size_t i = 0; ts_map_next(m, &i, &slot);) visits each entry once. Mutating
 * the map during iteration is not allowed. */
bool ts_map_next(const ts_map *m, size_t *iter, const ts_map_slot **slot);

/* ---- intrusive lists ------------------------------------------------------------------- */

typedef struct ts_list {
  struct ts_list *prev, *next;
} ts_list;

#define ts_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

static inline void ts_list_init(ts_list *h) {
  h->prev = h->next = h;
}
static inline bool ts_list_empty(const ts_list *h) {
  return h->next == h;
}
static inline void ts_list_insert_tail(ts_list *h, ts_list *n) {
  n->next = h;
  n->prev = h->prev;
  h->prev->next = n;
  h->prev = n;
}
static inline void ts_list_remove(ts_list *n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = n;
}
#define ts_list_foreach(it, head) for ((it) = (head)->next; (it) != (head); (it) = (it)->next)

/* ---- vectors --------------------------------------------------------------------------- */

/* A growable array of T: TS_VEC(int) v = {0}; ts_vec_push(&v, 3) returns ts_rc. */
#define TS_VEC(T)                                                                                  \
  struct {                                                                                         \
    T *v;                                                                                          \
    size_t n, cap;                                                                                 \
  }
ts_rc ts__vec_grow(void **v, size_t *cap, size_t need, size_t elem);
#define ts_vec_reserve(vec, need)                                                                  \
  ((need) <= (vec)->cap                                                                            \
       ? TS_OK                                                                                     \
       : ts__vec_grow((void **)&(vec)->v, &(vec)->cap, (need), sizeof(*(vec)->v)))
#define ts_vec_push(vec, item)                                                                     \
  (ts_vec_reserve((vec), (vec)->n + 1) != TS_OK ? TS_ENOMEM                                        \
                                                : ((vec)->v[(vec)->n++] = (item), TS_OK))
#define ts_vec_free(vec) (ts_free((vec)->v), (vec)->v = NULL, (vec)->n = (vec)->cap = 0)

/* ---- time ------------------------------------------------------------------------------ */

/* Parses an RFC 3339 timestamp ("2026-12-02T12:00:00Z", fractions and offsets allowed) into
 * nanoseconds since the Unix epoch. */
ts_rc ts_time_parse(const char *s, int64_t *unix_ns);
/* Parses a Go duration of h, m, s and ms units ("1h30m", "1.5s", "250ms"; "0") into
 * milliseconds: TS_EINVAL when malformed, TS_ERANGE over a year. */
ts_rc ts_duration_parse(const char *s, int64_t *ms);
/* Formats as RFC 3339 UTC with second precision ("2026-12-02T12:00:00Z"). */
void ts_time_format(int64_t unix_ns, char *out, size_t cap);
/* The wall clock now, in Unix nanoseconds. */
int64_t ts_time_now_ns(void);
/* A monotonic clock, in seconds (for durations). */
double ts_time_mono_s(void);

/* ---- logging --------------------------------------------------------------------------- */

typedef enum ts_log_level { TS_LOG_DEBUG, TS_LOG_INFO, TS_LOG_WARN, TS_LOG_ERROR } ts_log_level;
void ts_log_set_level(ts_log_level l); /* messages below l are dropped (default INFO) */
/* Each line starts with its UTC time, RFC 3339 with milliseconds ("2026-12-03T14:20:01.123Z"):
 * for the long-running `tessera run`; off by default (replay and check output stays stable). */
void ts_log_set_timestamps(bool on);
/* One line to stderr, with a timestamp and the level. */
void ts_log(ts_log_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* ts_log about one object ("ns/name", or "Kind name"): JSON lines carry it as "object". */
void ts_log_obj(ts_log_level l, const char *object, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Text lines (the default), or one JSON object per line: {"ts": Unix seconds, "level",
 * "msg", and "object" when the line is about one}, as --logging-format=json asks. */
typedef enum ts_log_format { TS_LOG_TEXT, TS_LOG_JSON } ts_log_format;
void ts_log_set_format(ts_log_format f);

/* ---- Kubernetes quantities ------------------------------------------------------------- */

typedef enum ts_qformat {
  TS_QFMT_DECIMAL_SI,  /* m, k, M, G, ... or none */
  TS_QFMT_BINARY_SI,   /* Ki, Mi, ... Ei */
  TS_QFMT_DECIMAL_EXP, /* 1e3, 5E-2 */
} ts_qformat;

/* An exact decimal value, mantissa x 10^scale, and the format it was written in (which only
 * matters for printing, as in Kubernetes). Values finer than 10^-9 are rounded up on parse,
 * as Kubernetes does. A value whose mantissa does not fit in int64 is TS_EOVERFLOW. */
typedef struct ts_quantity {
  int64_t mant;      /* mantissa; kept without trailing zero digits */
  int32_t scale;     /* power of ten */
  ts_qformat format; /* how Kubernetes would print it */
} ts_quantity;

#define TS_QUANTITY_STR_MAX 48

/* Parses a quantity as Kubernetes does ("1.5Gi", "250m", "1e3"); TS_EPARSE or TS_EOVERFLOW with
 * the reason in err (which may be NULL). _n reads len bytes of s. */
ts_rc ts_quantity_parse(const char *s, ts_quantity *out, ts_err *err);
ts_rc ts_quantity_parse_n(const char *s, size_t len, ts_quantity *out, ts_err *err);
ts_quantity ts_quantity_from_int(int64_t v, ts_qformat format);       /* v */
ts_quantity ts_quantity_from_milli(int64_t milli, ts_qformat format); /* milli / 1000 */
/* -1, 0, 1 as a <, ==, > b. Exact for every representable value. */
int ts_quantity_cmp(const ts_quantity *a, const ts_quantity *b);
/* Results keep a's format (as Kubernetes' Add/Sub). TS_EOVERFLOW when unrepresentable. */
ts_rc ts_quantity_add(const ts_quantity *a, const ts_quantity *b, ts_quantity *out);
ts_rc ts_quantity_sub(const ts_quantity *a, const ts_quantity *b, ts_quantity *out);
/* max(0, a - b) (0 too when the difference does not fit). */
ts_quantity ts_quantity_sub0(const ts_quantity *a, const ts_quantity *b);
/* a + b, exact when it fits, else rounded toward zero to the fewest digits that fit (a sum of
 * quotas past any cluster: "more than anything" is the reading that matters, never an error). */
ts_quantity ts_quantity_add_sat(const ts_quantity *a, const ts_quantity *b);
ts_rc ts_quantity_mul_int(const ts_quantity *a, int64_t k, ts_quantity *out);
int ts_quantity_sign(const ts_quantity *q);     /* -1, 0 or 1 */
bool ts_quantity_is_zero(const ts_quantity *q); /* sign 0 */
/* Value rounded up to an integer (Kubernetes' Value()); TS_EOVERFLOW when out of int64. */
ts_rc ts_quantity_value(const ts_quantity *q, int64_t *out);
/* Value x 1000 rounded up (Kubernetes' MilliValue()). */
ts_rc ts_quantity_milli(const ts_quantity *q, int64_t *out);
/* True when the value is a whole number. */
bool ts_quantity_is_integer(const ts_quantity *q);
double ts_quantity_approx(const ts_quantity *q); /* nearest double (display, never decisions) */
/* Canonical text exactly as kubectl prints it ("1536Mi", "1500m", "1k", "5e-3").
 * out must hold TS_QUANTITY_STR_MAX bytes. */
void ts_quantity_format(const ts_quantity *q, char *out);

/* ---- a portable random sequence ------------------------------------------------------------ */

/* splitmix64: the next number of the sequence of state *x (any seed), the same on every
 * machine, for draws that must repeat (simulate's seeds, the order of ties). */
static inline uint64_t ts_random_next(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* ---- Prometheus' text exposition format --------------------------------------------------
 * Every /metrics family is declared once as a ts_prom_family and printed through these, so
 * that the name, help, type and label names live in one place and every sample carries the
 * labels its family declares. */

#define TS_PROM_LABELS_MAX 8
#define TS_STR_(x)         #x
#define TS_STR(x)          TS_STR_(x) /* a macro's value as a string literal */

typedef struct ts_prom_family {
  const char *name;                       /* "tessera_api_requests_total" */
  const char *type;                       /* "counter", "gauge" or "histogram" */
  const char *help;                       /* one line */
  const char *labels[TS_PROM_LABELS_MAX]; /* label names, NULL after the last */
} ts_prom_family;

/* A text being written: the first failure (TS_ENOMEM, TS_ELIMIT) is kept and later writes do
 * nothing, so that a text is whole or known to be cut. */
typedef struct ts_prom {
  ts_buf *b; /* borrowed */
  ts_rc rc;  /* the first failure, or TS_OK */
} ts_prom;

void ts_prom_printf(ts_prom *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* # HELP and # TYPE of f. */
void ts_prom_head(ts_prom *p, const ts_prom_family *f);
/* One sample of f: values[i] for f->labels[i] (NULL when f has no labels; a NULL value is
 * ""), escaped; v as Prometheus' Go client spells it (shortest form, NaN, +Inf, -Inf). */
void ts_prom_sample(ts_prom *p, const ts_prom_family *f, const char *const *values, double v);
/* The head of f and its one sample without labels. */
void ts_prom_one(ts_prom *p, const ts_prom_family *f, double v);
/* The series of histogram f with the label text labels (as ts_prom_label built it, "" for
 * none): the nle cumulative buckets of le (counts[i] observations in bucket i), +Inf (n),
 * _sum and _count. */
void ts_prom_histogram(ts_prom *p, const ts_prom_family *f, const char *labels, const double *le,
                       int nle, const uint64_t *counts, uint64_t n, double sum);
/* Appends name="value" to a label text (after a comma unless it is empty), escaped. */
void ts_prom_label(ts_prom *p, const char *name, const char *value);
/* A value as ts_prom_sample spells it. */
void ts_prom_value(ts_prom *p, double v);

#endif
