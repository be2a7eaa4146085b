#!/bin/sh
# soak.sh BUILD SECONDS [PROGRAM]: runs a soak test of tests/soak/ (soak: churn and faults for
# SECONDS; names: SOAK_NAMES distinct names through tessera run, SECONDS unused) and writes what
# it prints to bench/results/PROGRAM.txt (soak.txt, soak-names.txt), headed by the date, the
# commit and the machine. Fails when it does.
set -u
BUILD=$1
SECONDS_RUN=$2
PROGRAM=${3:-soak}
mkdir -p bench/results
case "$PROGRAM" in soak) out=bench/results/soak.txt ;; *) out=bench/results/soak-$PROGRAM.txt ;; esac
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //' || echo unknown)
echo "# $PROGRAM soak - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $commit - $cpu, $(nproc) cores" >"$out.tmp"
TESSERA="$BUILD/tessera" SOAK_LOG="$BUILD/soak/tessera-$PROGRAM.log" "$BUILD/soak/$PROGRAM" "$SECONDS_RUN" >"$out.run"
status=$?
tee -a "$out.tmp" <"$out.run"
rm -f "$out.run"
if [ "$PROGRAM" = soak ]; then
  grep -q '^VIOLATION' "$out.tmp" && status=1
  grep -q '^  violations 0' "$out.tmp" || status=1
fi
mv "$out.tmp" "$out"
[ "$status" = 0 ]
