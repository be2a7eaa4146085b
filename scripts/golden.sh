#!/bin/sh
# golden.sh TESSERA DIR: runs `TESSERA $(cat DIR/args)` and compares its stdout with
# DIR/expected (and its exit status with DIR/status, 0 when absent).
# UPDATE_GOLDEN=1 rewrites the expected files instead.
set -u
bin=$1
dir=${2%/}
want_status=0
[ -f "$dir/status" ] && want_status=$(cat "$dir/status")
# shellcheck disable=SC2046
out=$("$bin" $(cat "$dir/args") 2>&1)
status=$?
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
  printf '%s\n' "$out" >"$dir/expected"
  [ "$status" = 0 ] && rm -f "$dir/status" || echo "$status" >"$dir/status"
  echo "updated $dir"
  exit 0
fi
if [ "$status" != "$want_status" ]; then
  echo "exit status $status, want $want_status"
  printf '%s\n' "$out"
  exit 1
fi
if ! printf '%s\n' "$out" | diff -u "$dir/expected" -; then
  echo "output differs from $dir/expected (UPDATE_GOLDEN=1 make test rewrites it)"
  exit 1
fi
echo "golden output matches ($(wc -l <"$dir/expected") lines)"
