/* input/yaml_emit.c - a JSON value written as one YAML document (libyaml's emitter; the room
 * that reads YAML writes it too): strings YAML would read back as another type are quoted. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "input/input.h"

static int file_write(void *data, unsigned char *buffer, size_t size) {
  return fwrite(buffer, 1, size, data) == size;
}

/* True when a plain scalar s would be read back as something else than a string (YAML 1.1's
 * booleans and null, numbers): such a string is written quoted. */
static bool ambiguous(const char *s) {
  static const char *const words[] = {"true", "false", "yes", "no",   "on",    "off",  "y",
                                      "n",    "null",  "~",   ".inf", "-.inf", ".nan", ""};
  char *end;
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (!strcasecmp(s, words[i])) return true;
  strtod(s, &end);
  return end != s && !*end; /* a number (0x1f, 1e3 and 012 included) */
}

/* A scalar event: strings as they are (quoted when ambiguous, and by the emitter when plain
 * would not hold them), other values in their JSON spelling, plain. */
static int scalar(yaml_emitter_t *e, const json_t *j) {
  yaml_event_t ev;
  char buf[64];
  const char *s = buf;
  yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
  int plain_implicit = 1;
  switch (json_typeof(j)) {
  case JSON_STRING:
    s = json_string_value(j);
    style = ambiguous(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
    break;
  case JSON_INTEGER:
    snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
    break;
  case JSON_REAL:
    snprintf(buf, sizeof buf, "%.17g", json_real_value(j));
    break;
  case JSON_TRUE:
    s = "true";
    break;
  case JSON_FALSE:
    s = "false";
    break;
  default:
    s = "null";
  }
  if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
                                    plain_implicit, 1, style))
    return 0;
  return yaml_emitter_emit(e, &ev);
}

static int node(yaml_emitter_t *e, const json_t *j, int depth) {
  yaml_event_t ev;
  if (depth > 256) return 0; /* jansson's own limit is lower */
  if (json_is_object(j)) {
    const char *k;
    const json_t *v;
    if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
        !yaml_emitter_emit(e, &ev))
      return 0;
    json_object_foreach((json_t *)j, k, v) {
      json_t *key = json_string(k);
      int ok = key && scalar(e, key) && node(e, v, depth + 1);
      json_decref(key);
      if (!ok) return 0;
    }
    return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
  }
  if (json_is_array(j)) {
    size_t i;
    const json_t *v;
    if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
        !yaml_emitter_emit(e, &ev))
      return 0;
    json_array_foreach(j, i, v)
      if (!node(e, v, depth + 1)) return 0;
    return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
  }
  return scalar(e, j);
}

int in_yaml_emit(FILE *f, const json_t *j) {
  yaml_emitter_t e;
  yaml_event_t ev;
  int ok;
  if (!yaml_emitter_initialize(&e)) return -1;
  yaml_emitter_set_output(&e, file_write, f);
  yaml_emitter_set_unicode(&e, 1);
  yaml_emitter_set_width(&e, -1);
  ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&e, &ev) &&
       yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0) &&
       yaml_emitter_emit(&e, &ev) && node(&e, j, 0) && yaml_document_end_event_initialize(&ev, 1) &&
       yaml_emitter_emit(&e, &ev) && yaml_stream_end_event_initialize(&ev) &&
       yaml_emitter_emit(&e, &ev);
  yaml_emitter_delete(&e);
  return ok ? 0 : -1;
}
