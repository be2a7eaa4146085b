#!/bin/sh
# Runs every benchmark program of a build directory and writes what each prints to
# bench/results/NAME.txt, headed by the date, the commit and the machine.
# Benchmarks measure; they do not assert timing (machines here are shared and noisy).
set -eu
BUILD=${1:-build}
mkdir -p bench/results
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //' || echo unknown)
for b in "$BUILD"/bench/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b" | sed 's/^bench_//')
  out="bench/results/$name.txt"
  echo "== $name"
  {
    echo "# $name - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $commit - $cpu, $(nproc) cores"
    "$b"
  } >"$out.tmp"
  mv "$out.tmp" "$out"
  cat "$out"
done
# The growth curve (table and SVG) from the cycle and replay results.
scripts/growth.sh bench/results
