/* cmd/main.c - the tessera binary: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cmd/cmd.h"

static const char usage[] =
    "usage: tessera COMMAND [ARGS]   (tessera COMMAND --help: its flags)\n"
    "\n"
    "commands:\n"
    "  replay PATH [--config FILE] [--expect FILE] [-o text|json|yaml] [--spread] [--stats]\n"
    "        load a recorded cluster (JSON, YAML, or a directory of them), schedule what is\n"
    "        pending, and print each decision and a summary; --expect checks the decisions\n"
    "  run [--config FILE] [--kubeconfig FILE] [--context NAME] [--identity NAME]\n"
    "      [--no-leader-elect]\n"
    "        schedule the pods of schedulerName tessera in a cluster (secondary scheduler)\n"
    "  snapshot --file FILE [-o json|yaml] [--config FILE] [--kubeconfig FILE] [--context NAME]\n"
    "        write every object tessera run reads (no Secrets, no env values), the\n"
    "        effective tessera.yaml and the server version into one file for replay\n"
    "  check [--config FILE] [PATH...]\n"
    "        validate tessera.yaml and manifests as the API server and admission would\n"
    "  bench [SCENARIO...] [--nodes N] [--pods M] [--repeat R] [--seed S] [-o text|json|yaml]\n"
    "        build generated clusters in memory and time the scheduling cycle on them\n"
    "  simulate --trace FILE.csv (--nodes NxG[:MODEL] | --cluster PATH) [--queues PATH]\n"
    "           [--config FILE] [--until T] [--resume] [-o text|json|yaml] [--report DIR]\n"
    "        run a job trace through the scheduling cycle in virtual time: utilisation, queue\n"
    "        wait and completion time per queue, preemptions\n"
    "  explain NAMESPACE/NAME --snapshot PATH [--config FILE] [-o text|json|yaml]\n"
    "        why a pending pod waits, its place in its queues, what would make room, and\n"
    "        when it is expected to start (the cluster run forward)\n"
    "  rbac [--helm] [--namespace NS] [--lease-namespace NS] [--lease-name NAME]\n"
    "        the least RBAC Tessera needs, from what it requests (the chart's rbac.yaml)\n"
    "  probe URL [--timeout SECONDS]\n"
    "        GET an endpoint of a running tessera (/readyz): status 0 when it answers 2xx\n"
    "  version [-o text|json|yaml]\n"
    "        the git commit this binary was built from, and when\n"
    "  help  show this text\n"
    "\n"
    "every command takes --flag value and --flag=value alike, -h/--help, -v=N (log verbosity;\n"
    "2 and above: debug lines) and --logging-format text|json\n";

/* Each scheduling cycle allocates and frees the same tens of MB (the view, the classes'
 * indexes). glibc serves blocks over its adaptive threshold with fresh mmaps and trims the
 * heap top on free, so every cycle paid a page fault per 4 KiB touched: half of a 5,000-node
 * cycle on this machine kind. Blocks up to 32 MiB now come from the heap and up to 256 MiB
 * of free heap is kept for the next cycle. Measured: replay's peak RSS unchanged, that of
 * `tessera run` at 10k nodes + 100k pods lower (bench/results/e2e-scale-10k.txt). */
static void tune_malloc(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

int main(int argc, char **argv) {
  tune_malloc();
  if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
      !strcmp(argv[1], "-h")) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!strcmp(argv[1], "replay")) return cmd_replay(argc - 2, argv + 2);
  if (!strcmp(argv[1], "check")) return cmd_check(argc - 2, argv + 2);
  if (!strcmp(argv[1], "run")) return cmd_run(argc - 2, argv + 2);
  if (!strcmp(argv[1], "bench")) return cmd_bench(argc - 2, argv + 2);
  if (!strcmp(argv[1], "rbac")) return cmd_rbac(argc - 2, argv + 2);
  if (!strcmp(argv[1], "snapshot")) return cmd_snapshot(argc - 2, argv + 2);
  if (!strcmp(argv[1], "simulate")) return cmd_simulate(argc - 2, argv + 2);
  if (!strcmp(argv[1], "probe")) return cmd_probe(argc - 2, argv + 2);
  if (!strcmp(argv[1], "explain")) return cmd_explain(argc - 2, argv + 2);
  if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))
    return cmd_version(argc - 2, argv + 2);
  fprintf(stderr, "tessera: unknown command \"%s\"\n\n%s", argv[1], usage);
  return 2;
}
