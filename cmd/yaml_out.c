/* cmd/yaml_out.c - -o json|yaml: a JSON value written as a JSON line or a YAML document
 * (input/'s emitter). */
#include <string.h>

#include "cmd/cmd.h"

cmd_format cmd_format_parse(const char *value, bool text_allowed) {
  if (!strcmp(value, "json")) return CMD_FMT_JSON;
  if (!strcmp(value, "yaml")) return CMD_FMT_YAML;
  if (text_allowed && !strcmp(value, "text")) return CMD_FMT_TEXT;
  return CMD_FMT_BAD;
}

int cmd_write_doc(FILE *f, cmd_format fmt, json_t *j) {
  int rc = -1;
  if (!j) return -1;
  if (fmt == CMD_FMT_YAML) {
    rc = in_yaml_emit(f, j);
  } else {
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    rc = s && fprintf(f, "%s\n", s) >= 0 ? 0 : -1;
    free(s);
  }
  json_decref(j);
  return rc;
}
