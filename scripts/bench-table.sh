#!/bin/sh
# bench-table.sh DIR: writes DIR/table.md, every headline figure of the benchmark results in
# DIR beside its target and the upstream figure measured on the same machine kind (DESIGN.md
# section 6), saying which comparisons are like for like. Figures are read from the result
# files, so the table says what the last `make bench` (and `make e2e-scale`) measured; a
# missing file gives "not measured".
set -u
D=${1:-bench/results}
out="$D/table.md"

# field FILE PATTERN AWK-EXPR: the expression on the first line matching PATTERN, or "".
field() {
  [ -f "$1" ] || return 0
  awk -v pat="$2" "\$0 ~ pat { $3; exit }" "$1"
}
or_none() { [ -n "$1" ] && printf '%s' "$1" || printf 'not measured'; }
date_of() { [ -f "$1" ] && sed -n '1s/^# [a-z0-9-]* - \([0-9T:-]*\)Z.*/\1/p' "$1" | cut -c1-10; }

# near FILE PATTERN MARK OFFSET FORMAT: on the first line matching PATTERN, the word OFFSET
# words from the word MARK, printed with FORMAT ("" when absent).
near() { field "$1" "$2" "for (i = 1; i <= NF; i++) if (\$i == \"$3\") { printf \"$5\", \$(i + $4); exit }"; }
placed() { near "$1" "$2" placed/s -1 '%d placed/s'; }
cycle_ms() { near "$1" "$2" cycle 1 '%s'; }

S="$D/sched.txt"
jobs=$(placed "$S" '^jobs ')
mix5=$(placed "$S" '^mix +5000 ')
ms5=$(cycle_ms "$S" '^mix +5000 ')
ms20=$(cycle_ms "$S" '^mix +20000 ')
ms50=$(cycle_ms "$S" '^mix +50000 ')
ratio=""
[ -n "$ms5" ] && [ -n "$ms20" ] && ratio=$(awk -v a="$ms20" -v b="$ms5" 'BEGIN { printf "%.2fx (%s ms / %s ms)", a / b, a, b }')
pms5=$(cycle_ms "$S" '^production +5000 ')
pms20=$(cycle_ms "$S" '^production +20000 ')
pdec20=$(near "$S" '^production +20000 ' decided/s, -1 '%d decisions/s')
pratio=""
[ -n "$pms5" ] && [ -n "$pms20" ] && pratio=$(awk -v a="$pms20" -v b="$pms5" 'BEGIN { printf "%.2fx (%s ms / %s ms)", a / b, a, b }')
backlog=$(cycle_ms "$S" '^backlog ')
explained=$(field "$S" '^backlog .* explained ' '{ for (i = 1; i <= NF; i++) if ($i == "explained") n = $(i + 1); for (i = 1; i <= NF; i++) if ($i == "in") { t = $(i + 1); break }; for (i = 1; i <= NF; i++) if ($i == "built") b = $(i + 2); printf "%s pods in %s ms, explainer built in %s ms", n, t, b }')
gangs=$(placed "$S" '^gangs ')
R="$D/dra.txt"
dra=$(placed "$R" '^dra ')
named=$(placed "$R" '^dra-named ')
mig=$(placed "$R" '^mig ')
C="$D/cel.txt"
cel=$(field "$C" "issue 3's selector" 'for (i = 1; i <= NF; i++) if ($i == "evals/s") { printf "%s M evals/s (%s ns each)", $(i-2), $(i+1) }')
celc=$(near "$C" "issue 3's selector" compile 1 '%s us')
Q="$D/queueing.txt"
kueue=$(near "$Q" '^classic +CPU time' q_cycle: 1 '%s s of CPU for every decision')
P="$D/replay.txt"
load2=$(near "$P" '^ +2000 nodes' 'MB/s),' -1 '%s MB/s')
load10=$(near "$P" '^ +10000 nodes' 'MB/s),' -1 '%s MB/s')
rss10=$(field "$P" '^ +10000 nodes' 'for (i = 1; i <= NF; i++) { if ($i == "after") m = $(i+2); if ($i == "RSS") r = $(i+1) } printf "%s MB peak RSS, %.2fx the model once loaded (%s MB)", r, r / m, m')
K="$D/kc.txt"
kc=$(field "$K" '^HTTP/2' 'for (i = 1; i <= NF; i++) if ($i == "bindings/s") { printf "%s bindings/s", $(i-1) }')
E="$D/e2e-scale.txt"
e2e=$(field "$E" '^bindings/s' 'printf "%s bindings/s", $NF')
E10="$D/e2e-scale-10k.txt"
rss_run=$(field "$E10" '^peak RSS' 'printf "%s %s", $(NF-1), $NF')
sync10=$(field "$E10" '^synced after start' 'printf "%s %s", $(NF-1), $NF')

{
  echo "# Tessera's figures beside upstream's"
  echo
  # each file's own date, files of one date named together (a section of make bench may be
  # re-run alone)
  dates=$(for f in sched dra cel queueing kc replay; do echo "$(date_of "$D/$f.txt") $f"; done |
    awk '{ if (!($1 in n)) order[++k] = $1; n[$1] = n[$1] (n[$1] ? ", " : "") $2 }
         END { for (i = 1; i <= k; i++) printf "%s%s: %s", (i > 1 ? "; " : ""), n[order[i]], (order[i] == "" ? "not run" : order[i]) }')
  echo "Made by scripts/bench-table.sh from the files of this directory (\`make bench\`: $dates;"
  echo "\`make e2e-scale\`: $(date_of "$E"))."
  echo "Upstream figures: DESIGN.md section 6, measured on this machine kind (2 shared cores,"
  echo "Kubernetes v1.34.9 from source). *Like for like* means both sides do the same work in one"
  echo "process; *not* means the upstream figure includes work Tessera's does not (API writes,"
  echo "controllers, wall time)."
  echo
  echo "| what | Tessera | target | upstream, same machine kind | like for like? |"
  echo "|---|---|---|---|---|"
  echo "| plain pods, SchedulingBasic shape (5,000 nodes, 10,000 pods in jobs of 1-16), one cycle | $(or_none "$jobs") | - | kube-scheduler scheduler_perf SchedulingBasic 5,000/10,000: ~166 pods/s | not: scheduler_perf creates the pods and writes each binding through an API server; Tessera's is the in-memory cycle (the live figure is the e2e row below) |"
  echo "| plain pods, realistic mix (~120 shapes, interleaved jobs), 5,000 nodes, one cycle | $(or_none "$mix5") | >= 100,000 pods/s | same ~166 pods/s | not (as above) |"
  echo "| growth: the mix at 20,000 nodes vs 5,000 (4x the work) | $(or_none "$ratio") | <= 5x | - | - |"
  echo "| the mix at 50,000 nodes, one cycle | $(or_none "$ms50") ms | - | - | - |"
  echo "| growth: production shape (3 running pods per node, Job gangs, zone affinity, taints) at 20,000 nodes vs 5,000 | $(or_none "$pratio") | <= 4.5x | - | - |"
  echo "| production shape at 20,000 nodes, 40,000 pending pods, one cycle | $(or_none "$pdec20") | >= 250,000 decisions/s | - | - |"
  echo "| backlog: 10,000 nodes, 9,000 pods that fit nowhere, one cycle | $(or_none "$backlog") ms | <= 300 ms | - (kube-scheduler retries each unschedulable pod on its own backoff) | - |"
  echo "| explain every pending pod of that backlog (tessera explain's explainer, after the dry-run cycle above) | $(or_none "$explained") | <= 1 s for 10,000 workloads, with the cycle | - (Kueue's visibility API gives positions only) | - |"
  echo "| gangs of 8-64 workers of 1, 2, 4 or 8 GPUs (demand 4.8x the GPUs), 1,000 x 8-GPU nodes | $(or_none "$gangs") | >= 50,000 pods/s | - (no upstream gang benchmark run here) | - |"
  echo "| DRA, claims from one template, 500 nodes x 8 GPUs | $(or_none "$dra") | >= 20,000 pods/s | allocator driven as kube-scheduler does: ~120 pods/s (first-fit ~330); scheduler_perf SchedulingWithResourceClaimTemplate: ~25 pods/s | like for like with the allocator loop (both in memory); not with scheduler_perf (API writes) |"
  echo "| DRA, a ResourceClaim per pod, jobs of 4 different specs, 500 x 8 | $(or_none "$named") | >= 50,000 pods/s | allocator loop ~120 pods/s | like for like (allocator loop) |"
  echo "| DRA, MIG partitions by shared counters, 100 x 8 A100 | $(or_none "$mig") | - | - | - |"
  echo "| CEL: evaluate a DRA selector | $(or_none "$cel") | >= 5 M/s | Kubernetes' DeviceMatches: ~10.7 us, ~94,000/s | like for like |"
  echo "| CEL: compile that selector | $(or_none "$celc") | - | ~430-530 us | like for like |"
  echo "| Kueue baseline: 15,000 workloads, 30 ClusterQueues, 5 cohorts | $(or_none "$kueue") | <= 1 s | Kueue: about 6 minutes end to end | not: Kueue's is wall time with its controllers and an API server; Tessera's is the CPU its admission decisions take in simulated time |"
  echo "| \`tessera replay\` load, kubectl JSON, 2,000 nodes + 20,000 pods | $(or_none "$load2") | >= 200 MB/s | - | - |"
  echo "| \`tessera replay\` load, 10,000 nodes + 100,000 pods | $(or_none "$load10") | >= 200 MB/s | - | - |"
  echo "| \`tessera replay\` memory, 10,000 nodes + 100,000 pods | $(or_none "$rss10") | <= 1.5x the model | - | - |"
  echo "| bindings through the writer, HTTP/2, fake API server | $(or_none "$kc") | >= 2,000/s | - | - |"
  echo "| \`tessera run\` live: 1,000 nodes, 8,000 pods, real kube-apiserver v1.34 on the same 2 cores | $(or_none "$e2e") | - | scheduler_perf SchedulingBasic: ~166 pods/s | closest to like for like: both write bindings to a real API server (ours shares its 2 cores with the server and etcd) |"
  echo "| \`tessera run\` live: 10,000 nodes, 100,000 pods: synced / peak RSS | $(or_none "$sync10") / $(or_none "$rss_run") | <= 30 s / <= 300 MB | - | - |"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
