/* tests/support/promtext.h - checks a /metrics body against Prometheus' text exposition format
 * (version 0.0.4), as a scraper reads it: metric and label names of the allowed characters
 * (names starting "__" are reserved), label values quoted with only \\, \" and \n escaped,
 * values that parse as floats (NaN, +Inf, -Inf allowed), at most one HELP and one TYPE per
 * family and before its samples, a family's lines together, no series twice, counters not
 * negative; a summary's samples are NAME{quantile}, NAME_sum and NAME_count; a histogram's are
 * NAME_bucket{le} (cumulative: never decreasing as le grows, ending with le="+Inf" equal to
 * NAME_count), NAME_sum and NAME_count. */
#ifndef PROMTEXT_H
#define PROMTEXT_H

#include <stdbool.h>
#include <stddef.h>

/* True when text follows the format; else false with the first problem, and its line number,
 * in why. */
bool prom_text_valid(const char *text, char *why, size_t cap);

#endif
