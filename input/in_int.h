/*
 * input/in_int.h - internals shared by the files of input/ (no other module includes it).
 */
#ifndef IN_INT_H
#define IN_INT_H

#include "input/input.h"

/* in_json_parse, counting the duplicate keys of its objects into *dup (cleared first). */
ts_rc in__json_parse_dup(const char *text, size_t len, in_dup *dup, json_t **out, ts_err *err);

#endif
