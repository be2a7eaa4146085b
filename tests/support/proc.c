/* tests/support/proc.c - see proc.h. */
#include "tests/support/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long proc_rss_kb(pid_t pid) {
  char path[64], line[256];
  long kb = -1;
  FILE *f;
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  if (!(f = fopen(path, "r"))) return -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
  fclose(f);
  return kb;
}
