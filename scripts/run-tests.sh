#!/bin/sh
# Runs every test of a build directory: cmocka unit tests, conformance runners on the
# bundled vectors, and golden-file tests of the tessera command. Prints one line per suite
# and fails when any suite fails.
set -u
BUILD=${1:-build}
TESSERA="$BUILD/tessera"
export TESSERA
failed=""
pass=0

run() { # name command...
  name=$1
  shift
  log="$BUILD/test-logs/$(echo "$name" | tr / _).log"
  mkdir -p "$BUILD/test-logs"
  if "$@" >"$log" 2>&1; then
    pass=$((pass + 1))
    printf 'PASS %-34s %s\n' "$name" "$(tail -n 1 "$log" | cut -c1-60)"
  else
    failed="$failed $name"
    printf 'FAIL %-34s (log: %s)\n' "$name" "$log"
    tail -n 30 "$log" | sed 's/^/    /'
  fi
}

for t in "$BUILD"/tests/test_*; do
  [ -x "$t" ] || continue
  run "$(basename "$t")" "$t"
done

# Conformance runners: binary and the vectors it reads (bundled under tests/data).
while read -r bin data; do
  [ -n "$bin" ] || continue
  [ -x "$BUILD/tests/$bin" ] || continue
  run "$bin" "$BUILD/tests/$bin" "$data"
done <<'LIST'
cel-conformance tests/data/corpora/cel/conformance.jsonl
dra-cel-conformance tests/data/corpora/dra/cel_cases.json
dra-allocator-conformance tests/data/corpora/dra/allocator_cases.json
kueue-conformance tests/data/corpora/kueue/schedule_cases.json
LIST

# tessera version: the commit and build date it reports.
run version scripts/version-test.sh "$TESSERA"

# The command line: every subcommand's --help, each flag it lists accepted in both spellings.
run cli scripts/cli-test.sh "$TESSERA"

# The chart's RBAC is the code's: `tessera rbac --helm`.
run rbac scripts/rbac-test.sh "$TESSERA"

# tessera bench --snapshot against tessera replay on the bundled clusters.
run bench-snapshot scripts/bench-snapshot-test.sh "$TESSERA"

# tessera simulate: the hand-checked scenario's report, the HTML page, errors, ITP cluster04.
run simulate scripts/simulate-test.sh "$TESSERA"

# Every shell example of README.md and docs/ runs (or says why it cannot: a cluster, Docker).
run docs scripts/docs-test.sh "$TESSERA"

# Golden files: tests/golden/NAME/{args,expected}; args are passed to tessera.
for dir in tests/golden/*/; do
  [ -f "$dir/args" ] || continue
  run "golden/$(basename "$dir")" scripts/golden.sh "$TESSERA" "$dir"
done

echo
if [ -n "$failed" ]; then
  echo "$pass suites passed; FAILED:$failed"
  exit 1
fi
echo "all $pass suites passed"
