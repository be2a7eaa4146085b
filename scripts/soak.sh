#!/bin/sh
# soak.sh BUILD SECONDS: runs the soak test (tests/soak/soak.c) and writes what it prints to
# bench/results/soak.txt, headed by the date, the commit and the machine. Fails when it does.
set -u
BUILD=$1
SECONDS_RUN=$2
mkdir -p bench/results
out=bench/results/soak.txt
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //' || echo unknown)
echo "# soak - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $commit - $cpu, $(nproc) cores" >"$out.tmp"
TESSERA="$BUILD/tessera" SOAK_LOG="$BUILD/soak/tessera.log" "$BUILD/soak/soak" "$SECONDS_RUN" | tee -a "$out.tmp"
status=$(grep -c '^VIOLATION' "$out.tmp")
grep -q '^  violations 0' "$out.tmp" || status=1
mv "$out.tmp" "$out"
[ "$status" = 0 ]
