#!/bin/sh
# Runs every benchmark program of a build directory and writes what each prints to
# bench/results/NAME.txt, headed by the date, the commit and the machine.
# Benchmarks measure; they do not assert timing (machines here are shared and noisy).
set -eu
BUILD=${1:-build}
mkdir -p bench/results
# Timings of one process run on one CPU (the first this script may use): the two cores of this
# machine kind have run up to 2x apart in speed, and a process the kernel moves between them
# mixes both into one figure and into the growth ratio. taskset is in util-linux (essential).
# bench_kc is not pinned: its client and server must run side by side.
cpu0=$(taskset -pc $$ 2>/dev/null | sed 's/.*: *//; s/[-,].*//' || true)
PIN=${cpu0:+taskset -c $cpu0}
header() { echo "# $1 - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $commit - $cpu, $(nproc) cores${cpu0:+, timed on CPU $cpu0}"; }
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //' || echo unknown)
for b in "$BUILD"/bench/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b" | sed 's/^bench_//')
  out="bench/results/$name.txt"
  echo "== $name"
  {
    if [ "$name" = kc ]; then
      echo "# $name - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $commit - $cpu, $(nproc) cores"
      "$b"
    else
      header "$name"
      $PIN "$b"
    fi
  } >"$out.tmp"
  mv "$out.tmp" "$out"
  cat "$out"
done
# The cycle on generated clusters, through the user's command (tessera bench): the
# SchedulingBasic shapes, gangs, the growth curve of the realistic mix (2 pending pods per
# node) and a backlog; then DRA.
T="$PIN $BUILD/tessera"
echo "== sched"
{
  header sched
  $T bench jobs unique gangs --repeat 5
  # Three rounds over the sizes, keeping each size's best: the speed of a shared machine drifts
  # by tens of percent over minutes, and sizes measured one after the other would carry the
  # drift into the growth ratio.
  # The same for `production`, a recorded cluster's shape (running DaemonSet pods, Job gangs,
  # zone affinity, taints, cordons): the growth the mix does not show.
  for round in 1 2 3; do
    for n in 1000 2000 5000 10000 20000 50000; do
      $T bench mix --nodes $n --pods $((2 * n)) --repeat $([ $n -le 5000 ] && echo 5 || echo 3) |
        grep -v '^one scheduling cycle'
    done
    for n in 1000 2000 5000 10000 20000; do
      $T bench production --nodes $n --pods $((2 * n)) --repeat 3 | grep -v '^one scheduling cycle'
    done
  done | awk '{ k = $1 " " $2; if (!(k in best) || $7 < best[k]) { best[k] = $7; line[k] = $0 }; if (!(k in at)) order[++n] = k; at[k] = 1 }
    END { for (i = 1; i <= n; i++) { l = line[order[i]]; sub(/\(best of /, "(best of 3 rounds x ", l); print l } }' |
    sort -s -k1,1r
  $T bench backlog --repeat 3 --explain | grep -v '^one scheduling cycle'
} >bench/results/sched.txt.tmp
mv bench/results/sched.txt.tmp bench/results/sched.txt
cat bench/results/sched.txt
echo "== dra"
{
  header dra
  $T bench dra dra-named mig --repeat 3
} >bench/results/dra.txt.tmp
mv bench/results/dra.txt.tmp bench/results/dra.txt
cat bench/results/dra.txt
# tessera simulate on the real traces of ../shared/traces (skipped without them): ITP cluster04
# (60 days, 15,802 jobs) on 128 x 8 and 64 x 8 GPUs, without and with a Kueue ClusterQueue;
# then the FGD paper's table on its openb lists. What the user's command prints, and its wall time.
TR=../shared/traces
if [ -d "$TR/itp" ] && [ -d "$TR/openb" ]; then
  echo "== simulate"
  run_sim() {
    echo "\$ tessera simulate $*"
    s=$(date +%s.%N)
    $T simulate "$@" | sed 's/^/  /'
    echo "  ($(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s wall)"
  }
  {
    header simulate
    Q=bench/simulate/itp-cluster04-queue.yaml
    run_sim --trace $TR/itp/itp_cluster04_replay.csv --nodes 128x8
    run_sim --trace $TR/itp/itp_cluster04_replay.csv --nodes 128x8 --queues $Q
    run_sim --trace $TR/itp/itp_cluster04_replay.csv --nodes 64x8
    run_sim --trace $TR/itp/itp_cluster04_replay.csv --nodes 64x8 --queues $Q
    run_sim --trace $TR/itp/itp_cluster04_replay.csv --nodes 64x8 --policy all
  } >bench/results/simulate.txt.tmp
  mv bench/results/simulate.txt.tmp bench/results/simulate.txt
  cat bench/results/simulate.txt
  # tessera explain's estimate against the starts jobs got (bench/results/predict.txt)
  sh scripts/predict-accuracy.sh "$BUILD/tessera"
  # The FGD paper's table: its three openb lists here, every policy, 10 seeds each, beside the
  # paper's published runs (bench/results/fgd-paper.txt: our tables; fgd-paper.md: the comparison).
  FGD=$(mktemp -d)
  {
    echo "# tessera simulate --fill --seeds 10 --policy all on the FGD paper's openb lists ($(date -u +%Y-%m-%d))"
    echo "# compare: FROM=DIR scripts/fgd-compare.sh; the paper's runs: bench/simulate/fgd-paper/"
    for l in default gpushare100 multigpu50; do
      $T simulate --trace $TR/openb/openb_pod_list_$l.csv --nodes $TR/openb/openb_node_list_gpu_node.csv \
        --fill --seeds 10 --policy all >"$FGD/$l.txt"
      echo
      cat "$FGD/$l.txt"
    done
  } >bench/results/fgd-paper.txt.tmp
  mv bench/results/fgd-paper.txt.tmp bench/results/fgd-paper.txt
  FROM=$FGD scripts/fgd-compare.sh "$T" x $TR/openb/openb_pod_list_default.csv \
    $TR/openb/openb_pod_list_gpushare100.csv $TR/openb/openb_pod_list_multigpu50.csv >bench/results/fgd-paper.md
  rm -rf "$FGD"
  cat bench/results/fgd-paper.md
fi
# The growth curve (table and SVG) from the cycle and replay results.
scripts/growth.sh bench/results
# Every headline figure beside its target and upstream's (bench/results/table.md).
scripts/bench-table.sh bench/results
