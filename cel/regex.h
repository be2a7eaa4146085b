/* cel/regex.h - RE2-syntax regular expressions with a linear-time matcher (Pike VM). */
#ifndef CEL_REGEX_H
#define CEL_REGEX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "common/ts.h"
typedef struct cel_re cel_re; /* compiled pattern; immutable, shareable between threads */
/* Compiles an RE2-syntax UTF-8 pattern. On error returns TS_EPARSE (TS_ELIMIT when too large) with
 * a message worded like RE2/Go ("error parsing regexp: missing closing ): `(a`"). *out is new; free
 * it with cel_re_free. */
ts_rc cel_re_compile(const char *pat, size_t len, cel_re **out, ts_err *err);
void cel_re_free(cel_re *re);
/* Bytes of scratch memory cel_re_search needs for this pattern (caller-owned, reusable). */
size_t cel_re_scratch_size(const cel_re *re);
/* Unanchored leftmost-first search (Go regexp semantics) in s[0..len). Returns TS_OK and sets
 * *found, and when found *start and *end (byte offsets of the whole match); returns TS_ELIMIT when
 * *budget (decremented by one per VM step, i.e. per thread per input byte) runs out. Never
 * allocates: scratch is caller-owned, cel_re_scratch_size(re) bytes. Invalid UTF-8 in s is matched
 * byte-wise as U+FFFD like Go. */
ts_rc cel_re_search(const cel_re *re, const char *s, size_t len, void *scratch, uint64_t *budget,
                    bool *found, size_t *start, size_t *end);
#endif
