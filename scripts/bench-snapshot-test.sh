#!/bin/sh
# bench-snapshot-test.sh TESSERA: `tessera bench --snapshot` decides what `tessera replay`
# decides on the same recorded clusters (bound, pending and all decisions, evictions included),
# and reports each size. The last cluster is a `tessera snapshot` file: its own tessera.yaml
# and clock make evictions (waitForPodsReady) that the defaults would not.
set -u
bin=$1
fail=0
for dir in examples/cluster examples/kueue examples/dra tests/scenarios/kueue-fragmented \
  tests/scenarios/snapshot-config/snapshot.json; do
  [ -e "$dir" ] || continue
  out=$("$bin" replay "$dir" --output json 2>/dev/null)
  want="$(echo "$out" | tail -n 1 |
    sed -n 's/^{"summary":{"objects":[0-9]*,"bound":\([0-9]*\),"pending":\([0-9]*\).*/\1 \2/p') $(echo "$out" | grep -c '"action"')"
  got=$("$bin" bench --snapshot "$dir" --repeat 2 --output json 2>/dev/null |
    sed -n 's/.*"decisions":\([0-9]*\),"bound":\([0-9]*\),"pending":\([0-9]*\).*/\2 \3 \1/p')
  if [ -z "$want" ] || [ "$got" != "$want" ]; then
    echo "$dir: bench --snapshot bound/pending/decisions \"$got\", replay \"$want\""
    fail=1
  else
    echo "$dir: $got (bound pending decisions), as replay"
  fi
done
# --explain: every pending pod of the cycle explained, and only those counted (a backlog: 150
# pods that fit nowhere, all pending)
ex=$("$bin" bench backlog --nodes 200 --pods 150 --repeat 1 --explain 2>&1 | tail -1)
case "$ex" in
*"explained 150 pending pods"*) echo "bench --explain: $ex" ;;
*) echo "bench --explain: $ex (want 150 pending pods explained)"; fail=1 ;;
esac
[ "$fail" = 0 ] && echo "bench --snapshot decides as replay"
exit "$fail"
