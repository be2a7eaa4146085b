/* cmd/flags.c - the command line as Kubernetes tools read it; see cmd.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

/* The verbosity flags: -v, -v=N, --v=N, --v N. *consumed: argv entries used beyond a. */
static int verbosity(const char *a, const char *next, int *consumed, bool *ok) {
  const char *v = NULL;
  char *end;
  long n;
  *ok = true, *consumed = 0;
  if (!strcmp(a, "-v")) return 2;
  if (!strncmp(a, "-v=", 3))
    v = a + 3;
  else if (!strncmp(a, "--v=", 4))
    v = a + 4;
  else if (!strcmp(a, "--v") && next)
    v = next, *consumed = 1;
  n = v ? strtol(v, &end, 10) : -1;
  if (!v || !*v || *end || n < 0 || n > 10) *ok = false;
  return (int)n;
}

static bool is_verbosity(const char *a) {
  return !strcmp(a, "-v") || !strncmp(a, "-v=", 3) || !strncmp(a, "--v=", 4) || !strcmp(a, "--v");
}

/* The flag a names (its name or alias, before any '='), or -1; *inline_value: what follows
 * '=' (or a one-letter alias's glued value, -ojson), NULL when none. */
static int find(const cmd_flag *flags, const char *a, const char **inline_value) {
  const char *eq = strchr(a, '=');
  size_t len = eq ? (size_t)(eq - a) : strlen(a);
  *inline_value = eq ? eq + 1 : NULL;
  for (int i = 0; flags[i].name; i++) {
    if (strlen(flags[i].name) == len && !strncmp(a, flags[i].name, len)) return i;
    if (!flags[i].alias) continue;
    if (strlen(flags[i].alias) == len && !strncmp(a, flags[i].alias, len)) return i;
    if (!eq && strlen(flags[i].alias) == 2 && flags[i].value && !strncmp(a, flags[i].alias, 2) &&
        a[2]) { /* -ojson */
      *inline_value = a + 2;
      return i;
    }
  }
  return -1;
}

int cmd_usage_error(const char *cmd, void (*usage)(FILE *), const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "tessera %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n", stderr);
  usage(stderr);
  return CMD_USAGE;
}

int cmd_flags_parse(const char *cmd, void (*usage)(FILE *), const cmd_flag *flags, int argc,
                    char **argv, cmd_arg *out, int *n) {
  bool dashdash = false;
  *n = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL, *v;
    int f;
    if (*n == CMD_ARGS_MAX) return cmd_usage_error(cmd, usage, "too many arguments (%s)", a);
    if (dashdash || a[0] != '-' || !a[1]) { /* a positional argument ("-" included) */
      out[(*n)++] = (cmd_arg){-1, a};
      continue;
    }
    if (!strcmp(a, "--")) {
      dashdash = true;
      continue;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return CMD_HELP;
    }
    if (is_verbosity(a)) {
      int used;
      bool ok;
      int level = verbosity(a, next, &used, &ok);
      if (!ok) return cmd_usage_error(cmd, usage, "%s: the verbosity is a number from 0 to 10", a);
      ts_log_set_level(level >= 2 ? TS_LOG_DEBUG : TS_LOG_INFO);
      i += used;
      continue;
    }
    if (!strncmp(a, "--logging-format", 16) && (!a[16] || a[16] == '=')) {
      v = a[16] ? a + 17 : next;
      if (!a[16]) i++;
      if (!v || (strcmp(v, "text") && strcmp(v, "json")))
        return cmd_usage_error(cmd, usage, "%s: the logging format is text or json", a);
      ts_log_set_format(!strcmp(v, "json") ? TS_LOG_JSON : TS_LOG_TEXT);
      continue;
    }
    if ((f = find(flags, a, &v)) < 0) return cmd_usage_error(cmd, usage, "unknown flag %s", a);
    if (!flags[f].value) { /* a boolean */
      if (v && strcmp(v, "true") && strcmp(v, "false"))
        return cmd_usage_error(cmd, usage, "%s: a boolean is true or false", a);
      out[(*n)++] = (cmd_arg){f, v ? v : "true"};
      continue;
    }
    if (!v) {
      if (!next) return cmd_usage_error(cmd, usage, "%s needs a value", a);
      v = next, i++;
    }
    out[(*n)++] = (cmd_arg){f, v};
  }
  return CMD_PARSED;
}

int cmd_flags_exit(int parsed) {
  return parsed == CMD_HELP ? 0 : 2;
}
