/* cmd/version.c - which build this binary is: the git commit it was built from (with
 * "-dirty" when the tree had changes) and when it was built. The Makefile passes both when it
 * compiles this file (TESSERA_COMMIT can be given to make, as the Dockerfile does where the
 * source has no .git; SOURCE_DATE_EPOCH fixes the date for reproducible builds). */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

#ifndef TESSERA_COMMIT
#define TESSERA_COMMIT "unknown"
#endif
#ifndef TESSERA_BUILD_DATE
#define TESSERA_BUILD_DATE "unknown"
#endif

const char *tessera_commit(void) {
  return TESSERA_COMMIT;
}

const char *tessera_build_date(void) {
  return TESSERA_BUILD_DATE;
}

static void usage(FILE *f) {
  fputs("usage: tessera version [-o text|json|yaml]\n"
        "  -o, --output   text (default), json or yaml\n",
        f);
}

static const cmd_flag version_flags[] = {{"--output", "-o", "FORMAT"}, {NULL, NULL, NULL}};

int cmd_version(int argc, char **argv) {
  static cmd_arg v[CMD_ARGS_MAX];
  cmd_format fmt = CMD_FMT_TEXT;
  int n, parsed = cmd_flags_parse("version", usage, version_flags, argc, argv, v, &n);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  for (int i = 0; i < n; i++)
    if (v[i].flag < 0 || (fmt = cmd_format_parse(v[i].value, true)) == CMD_FMT_BAD)
      return cmd_usage_error("version", usage, "unexpected argument \"%s\"", v[i].value);
  if (fmt == CMD_FMT_TEXT)
    printf("tessera commit %s, built %s\n", tessera_commit(), tessera_build_date());
  else
    cmd_write_doc(
        stdout, fmt,
        json_pack("{s:s, s:s}", "commit", tessera_commit(), "buildDate", tessera_build_date()));
  return 0;
}
