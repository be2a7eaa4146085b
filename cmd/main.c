/* cmd/main.c - placeholder entry until the subcommands land in this same commit series. */
#include <stdio.h>

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "usage: tessera replay PATH\n");
  return 2;
}
