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

int cmd_version(int argc, char **argv) {
  bool json = false;
  for (int i = 0; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--output") && v && (!strcmp(v, "json") || !strcmp(v, "text"))) {
      json = !strcmp(v, "json"), i++;
      continue;
    }
    fprintf(stderr,
            "tessera version: unexpected argument \"%s\"\n"
            "usage: tessera version [--output text|json]\n",
            argv[i]);
    return 2;
  }
  if (json)
    printf("{\"commit\": \"%s\", \"buildDate\": \"%s\"}\n", tessera_commit(), tessera_build_date());
  else
    printf("tessera commit %s, built %s\n", tessera_commit(), tessera_build_date());
  return 0;
}
