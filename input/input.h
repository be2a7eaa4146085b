/*
 * input/input.h - reading what users and the API server give Tessera: JSON text (a fast
 * reader building jansson values), YAML streams (libyaml) and snapshot files and directories.
 *
 * YAML documents become jansson values with the same shapes Kubernetes' own YAML-to-JSON
 * conversion gives, so that one decoder serves both formats. Only this module parses YAML.
 */
#ifndef INPUT_H
#define INPUT_H

#include <jansson.h>
#include <stdio.h>

#include "common/ts.h"

/* Parses RFC 8259 JSON text into a new jansson value (*out is new), exactly what json_loadb
 * would build (integers beyond int64 become reals, as in Go), but 4-5x faster: it scans the
 * buffer directly instead of through a stream. UTF-8 is validated, nesting is bounded (512),
 * \u0000 is refused as jansson does, strings over IN_STRING_MAX are refused; errors are
 * TS_EPARSE with line and column in err. */
ts_rc in_json_parse(const char *text, size_t len, json_t **out, ts_err *err);
/* The same for a piece of a larger text that starts at line, col of it: errors give
 * positions in the larger text. */
ts_rc in_json_parse_at(const char *text, size_t len, int line, int col, json_t **out, ts_err *err);
/* Duplicate keys met in the objects of one value. The last value of a key is kept, as jansson,
 * Go's decoder and the API server keep it; kubectl in strict mode refuses such input, and so
 * does `tessera check` (replay warns). */
typedef struct in_dup {
  size_t n;     /* duplicate keys met */
  int line;     /* where the first is (1-based; 0 when unknown) */
  int col;      /* its column */
  char key[64]; /* it, cut to fit */
} in_dup;

/* "line L column C: duplicate key "k" (the last value is used)", and how many more, in out
 * (cap bytes); "" when d holds none. */
void in_dup_text(const in_dup *d, char *out, size_t cap);

/* Where a value starts (line, col) and, after in_json_parse_prefix, where it ended and how many
 * bytes it took (used), and the duplicate keys it holds (dup). */
typedef struct in_json_pos {
  int line, col;
  size_t used;
  in_dup dup;
} in_json_pos;
/* Parses the value at the start of text (whitespace before it skipped) and leaves what follows
 * it: pos->used, line, col say where it ended. With more (text goes on past len), a value cut
 * at len is TS_EAGAIN (err untouched): read more and call again from the same start. */
ts_rc in_json_parse_prefix(const char *text, size_t len, bool more, in_json_pos *pos, json_t **out,
                           ts_err *err);

#define IN_YAML_MAX_DEPTH   256        /* nesting of mappings and sequences */
#define IN_YAML_MAX_ALIASES 10000      /* alias references per stream (no alias bombs) */
#define IN_FILE_MAX         (1 << 30)  /* largest file read whole (YAML), in bytes */
#define IN_ITEM_MAX         (64 << 20) /* largest item of a JSON List (read in pieces) */
/* Longest single string (a scalar, a key), in bytes: the API server refuses a whole object
 * over 3 MiB, so nothing longer is a Kubernetes value. */
#define IN_STRING_MAX (4 << 20)

/* One document of a YAML stream or one JSON file. */
typedef struct in_doc {
  json_t *value;   /* new reference, owned by the in_doc */
  int line;        /* 1-based line where the document's value starts */
  int *item_lines; /* owned: line of each element of a top-level "items" sequence, or NULL */
  size_t nitems;   /* number of entries in item_lines */
  in_dup dup;      /* duplicate keys in its mappings (objects) */
} in_doc;

typedef TS_VEC(in_doc) in_docs;

/* Parses a whole YAML stream (one or more documents; empty documents are skipped) and
 * appends each document to docs. Plain scalars resolve as YAML 1.2's core schema (null,
 * true/false, integers, floats); quoted scalars and !!str are strings. Anchors, aliases
 * and merge keys (<<) are supported; an alias inside its own anchor is an error, and so is a
 * document whose aliases would expand it beyond go-yaml's bound (99% of up to 400,000 nodes
 * may come from aliases, falling to 10% at 4,000,000), so that nothing downstream walks an
 * alias bomb. Strings over IN_STRING_MAX are errors. On error fills err with line and column
 * (of the invalid byte, for bad UTF-8) and leaves docs holding every document before the
 * failing one. */
ts_rc in_yaml_parse(const char *text, size_t len, in_docs *docs, ts_err *err);

/* Parses JSON text (one value) into a document; item lines are not known (NULL). */
ts_rc in_json_doc(const char *text, size_t len, in_docs *docs, ts_err *err);

/* Frees every document and the vector. */
void in_docs_free(in_docs *docs);

/* Called for each object found by in_load_path: file is the path, line the 1-based line
 * where the object starts (0 when unknown), index its position in a List (-1 otherwise).
 * obj is borrowed for the call. A non-OK return stops the walk with that code. */
typedef ts_rc (*in_object_fn)(void *ud, json_t *obj, const char *file, int line, int index);

/* Per-file problems (unreadable file, syntax error) are reported through this callback and
 * the walk continues with the next file. err holds the file, line and column. Duplicate keys
 * in an object come here too, before the object, with err->code TS_EEXIST: a warning where the
 * API server warns (the last value is used), an error where strict (kubectl --validate=strict,
 * tessera check). */
typedef void (*in_error_fn)(void *ud, const ts_err *err);

/* Loads PATH: a JSON file (one object or a List), a YAML file of one or more documents, or
 * a directory of such files (recursive, sorted by name; files ending .json, .yaml, .yml).
 * Each object, and each item of a List (kind ending "List" with "items"), is passed to fn.
 * A JSON object file is read in pieces (in_json_stream): a List of any size takes the memory
 * of one item at a time, and items before a syntax error are passed on, as documents of a
 * YAML stream before one are. YAML files are read whole (at most IN_FILE_MAX bytes).
 * Returns TS_EIO when PATH cannot be read at all, otherwise TS_OK after the whole walk
 * (problems in single files go to on_error) unless fn stopped it. */
ts_rc in_load_path(const char *path, in_object_fn fn, in_error_fn on_error, void *ud);
/* A KAI Scheduler snapshot (a ZIP file, as its snapshot plugin serves it) loads too: first an
 * object of this apiVersion and kind holding KAI's schedulerParams (its schedulerName), then its
 * objects (input/kai.c). */
#define IN_KAI_HEADER_API  "scheduling.run.ai/snapshot"
#define IN_KAI_HEADER_KIND "KAISnapshot"

/* Reads the JSON object file PATH in pieces of `chunk` bytes (0: the default, 1 MiB; tests
 * pass small ones): each item of a List is parsed and passed to fn on its own, with the
 * line it starts on; a file that is one object is passed whole. Returns TS_OK after the file
 * (a syntax error, an item over IN_ITEM_MAX or a read error go to on_error with the file,
 * line and column; the items before it were passed), TS_ENOTSUP when the file does not hold
 * one JSON object (the caller reads it whole), or what fn returned to stop. */
ts_rc in_json_stream(const char *path, size_t chunk, in_object_fn fn, in_error_fn on_error,
                     void *ud);

/* The same for a JSON object in memory (a page of a list from the API server): each element
 * of its "items" array is parsed on its own and passed to fn as it is met (file "", its line,
 * its index; kinds are the caller's to set), and *top receives the object without its items
 * (new). Returns what fn returned to stop, or a syntax error with line and column (the items
 * before it were passed). Memory: one item's tree at a time. */
ts_rc in_json_items(const char *text, size_t len, in_object_fn fn, void *ud, json_t **top,
                    ts_err *err);

/* Reads a whole file into a new NUL-terminated buffer (returns new via *out). */
ts_rc in_read_file(const char *path, char **out, size_t *len, ts_err *err);

/* Writes j as one YAML document ("---" first) to f, block style, strings that would read
 * back as another type quoted. 0, or -1 when out of memory or the stream failed. */
int in_yaml_emit(FILE *f, const json_t *j);

#endif
