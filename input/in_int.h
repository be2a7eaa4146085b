/*
 * input/in_int.h - internals shared by the files of input/ (no other module includes it).
 */
#ifndef IN_INT_H
#define IN_INT_H

#include "input/input.h"

/* in_json_parse, counting the duplicate keys of its objects into *dup (cleared first). */
ts_rc in__json_parse_dup(const char *text, size_t len, in_dup *dup, json_t **out, ts_err *err);

/* kai.c: KAI Scheduler's snapshot ZIP. in_is_zip: PATH starts with a ZIP local header;
 * in_kai_snapshot: its snapshot.json's objects to fn (each list's kind set: the listers' objects
 * carry none; a pod whose BindRequest is under way on its selected node), problems to on_error. */
bool in_is_zip(const char *path);
ts_rc in_kai_snapshot(const char *path, in_object_fn fn, in_error_fn on_error, void *ud);

#endif
