#!/bin/sh
# bench-snapshot-test.sh TESSERA: `tessera bench --snapshot` decides what `tessera replay`
# decides on the same recorded clusters (bound and pending counts), and reports each size.
set -u
bin=$1
fail=0
for dir in examples/cluster examples/kueue examples/dra tests/scenarios/kueue-fragmented; do
  [ -e "$dir" ] || continue
  want=$("$bin" replay "$dir" --output json 2>/dev/null | tail -n 1 |
    sed -n 's/^{"summary":{"objects":[0-9]*,"bound":\([0-9]*\),"pending":\([0-9]*\).*/\1 \2/p')
  got=$("$bin" bench --snapshot "$dir" --repeat 2 --output json 2>/dev/null |
    sed -n 's/.*"bound":\([0-9]*\),"pending":\([0-9]*\).*/\1 \2/p')
  if [ -z "$want" ] || [ "$got" != "$want" ]; then
    echo "$dir: bench --snapshot bound/pending \"$got\", replay \"$want\""
    fail=1
  else
    echo "$dir: $got (bound pending), as replay"
  fi
done
[ "$fail" = 0 ] && echo "bench --snapshot decides as replay"
exit "$fail"
