#!/bin/bash
# scripts/fgd-compare.sh TESSERA NODE_LIST POD_LIST...: the FGD paper's table, reproduced. For
# each openb pod list, `tessera simulate --fill --seeds $SEEDS --policy all` (10 seeds unless
# SEEDS says), and beside each policy's mean ± sd of the GPUs left unallocated when the GPUs asked
# reach 100% of the cluster's, the paper's (bench/simulate/fgd-paper/unallocated.csv, its
# simulator's published runs): a markdown table on stdout, one block per list. FROM=DIR reads
# DIR/NAME.txt (a saved `tessera simulate --seeds` table) instead of running the simulation.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 TESSERA NODE_LIST POD_LIST..." >&2; exit 2; }
TESSERA=$1 NODES=$2
shift 2
REPO=$(cd "$(dirname "$0")/.." && pwd)
PAPER=$REPO/bench/simulate/fgd-paper/unallocated.csv
SEEDS=${SEEDS:-10}
for list in "$@"; do
  name=$(basename "$list" .csv)
  name=${name#openb_pod_list_}
  if [ -n "${FROM:-}" ]; then
    out=$(cat "$FROM/$name.txt")
  else
    out=$("$TESSERA" simulate --trace "$list" --nodes "$NODES" --fill --seeds "$SEEDS" --policy all)
  fi
  echo "$out" | head -1 | sed 's/^/<!-- /; s/$/ -->/'
  echo
  echo "| $name | Tessera, unallocated at 100% (mean ± sd, $SEEDS seeds) | paper (mean ± sd, 10 seeds) | Tessera − paper |"
  echo "|---|---|---|---|"
  echo "$out" | awk -v list="$name" -v paper="$PAPER" '
    BEGIN {
      FS = ","
      while ((getline line < paper) > 0) {
        split(line, f, ",")
        if (f[1] != list) continue
        n[f[2]]++; s[f[2]] += f[4]; q[f[2]] += f[4] * f[4]
      }
      FS = " "
    }
    NR > 2 && NF >= 8 && $2 ~ /^[0-9]+$/ {
      p = $1; ours = sprintf("%.2f ± %.2f", $6, $8)
      if (p in n) {
        m = s[p] / n[p]; sd = n[p] > 1 ? sqrt((q[p] - n[p] * m * m) / (n[p] - 1)) : 0
        printf "| %s | %s | %.2f ± %.2f | %+.2f |\n", p, ours, m, sd, $6 - m
      } else {
        printf "| %s | %s | — | — |\n", p, ours
      }
    }'
  echo
done
