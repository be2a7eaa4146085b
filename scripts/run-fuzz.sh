#!/bin/sh
# Runs every libFuzzer target of a build for a bounded time, seeded from the bundled test data.
# Crashes, leaks, timeouts and undefined behaviour fail the run; the crashing input is left in
# build/fuzz/. Executions per target go to $BUILD/fuzz/summary.txt (docs/reliability.md's
# section records a longer run).
set -eu
BUILD=$1
SECONDS_EACH=$2
status=0
: >"$BUILD/fuzz/summary.txt"
for bin in "$BUILD"/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin")
  corpus="$BUILD/fuzz/corpus-$name"
  mkdir -p "$corpus"
  case "$name" in
  fuzz_yaml) seeds="tests/data/k8s/objects examples" ;;
  fuzz_decode) seeds="fuzz/seeds/decode" ;;
  fuzz_config) seeds="examples/tessera.yaml tests/data/check" ;;
  fuzz_json) seeds="tests/data/k8s/exchanges" ;;
  fuzz_cel) seeds="fuzz/seeds/cel" ;;
  fuzz_kubeconfig) seeds="fuzz/seeds/kubeconfig tests/e2e/apiserver" ;;
  *) seeds="fuzz/seeds/${name#fuzz_}" ;;
  esac
  seeddir="$BUILD/fuzz/seeds-$name"
  rm -rf "$seeddir" && mkdir -p "$seeddir"
  for s in $seeds; do
    if [ -d "$s" ]; then find "$s" -type f -exec cp {} "$seeddir/" \; ; elif [ -f "$s" ]; then cp "$s" "$seeddir/"; fi
  done
  echo "== $name for ${SECONDS_EACH}s"
  if ! "$bin" -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$BUILD/fuzz/$name-" "$corpus" "$seeddir" >"$BUILD/fuzz/$name.log" 2>&1; then
    echo "FAIL $name (log: $BUILD/fuzz/$name.log)"
    tail -n 30 "$BUILD/fuzz/$name.log"
    status=1
  else
    runs=$(grep -E "^Done [0-9]+ runs" "$BUILD/fuzz/$name.log" | tail -n 1 | awk '{print $2}')
    echo "$name ${runs:-?} runs in ${SECONDS_EACH}s" | tee -a "$BUILD/fuzz/summary.txt"
  fi
done
exit $status
