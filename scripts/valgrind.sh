#!/bin/sh
# valgrind.sh TESSERA: runs the binary under valgrind's memcheck over what users run most -
# every golden scenario (replays of the examples, check, the bad-input corpus as a whole) and
# each bad-input file alone, through replay and check. Any invalid read or write, use of an
# uninitialised value, or definite/indirect leak fails the run (the memcheck report is printed).
# The binary's own exit status is not judged here: the golden tests do that.
set -u
bin=$1
out=${BUILD:-build}/valgrind
mkdir -p "$out"
runs=0
fails=0
vg() { # name, args...
  name=$1
  shift
  runs=$((runs + 1))
  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --log-file="$out/$name.log" "$bin" "$@" >/dev/null 2>&1
  if [ $? = 99 ] || [ -s "$out/$name.log" ]; then
    fails=$((fails + 1))
    echo "FAIL $name: $bin $*"
    cat "$out/$name.log"
  fi
}
for dir in tests/golden/*/; do
  name=$(basename "$dir")
  # shellcheck disable=SC2046
  vg "golden-$name" $(cat "$dir/args")
done
for f in tests/data/bad-input/*; do
  name=$(basename "$f")
  vg "replay-$name" replay "$f"
  vg "check-$name" check "$f"
done
echo "valgrind: $runs runs, $fails with memcheck errors (logs in $out/)"
[ "$fails" = 0 ]
