#!/bin/sh
# predict-accuracy.sh TESSERA: how far tessera explain's estimates are from the starts jobs
# got (issue 36): `tessera simulate --predict` estimates each job's start when it is submitted
# (the cluster run forward, as `tessera explain` runs it, every pod's run time given as its
# tessera.dev/expected-duration: a user who knows it), then the simulation goes on with the
# jobs that come later. Error = |estimate - start| / wait, over the jobs that waited more than
# 10 minutes. Writes bench/results/predict.txt. Needs ../shared/traces (ITP).
set -eu
T=${1:-./tessera}
TR=../shared/traces/itp
[ -d "$TR" ] || { echo "predict-accuracy: no $TR, skipped"; exit 0; }
run() {
  echo "\$ tessera simulate $*"
  s=$(date +%s.%N)
  "$T" simulate "$@" | grep '^predicted starts' | sed 's/^/  /'
  echo "  ($(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s wall)"
}
{
  echo "# predict - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "# three teams in a cohort with fair sharing and reclaim (the README's example: ITP day 1)"
  run --trace examples/simulate/itp-day1.csv --nodes 32x8 --queues examples/simulate/queues.yaml \
    --config examples/simulate/tessera.yaml --predict
  echo "# the same three teams, without fair sharing"
  run --trace examples/simulate/itp-day1.csv --nodes 32x8 --queues examples/simulate/queues.yaml --predict
  echo "# whole ITP clusters, one queue each (no Kueue queue: priority, then arrival)"
  run --trace $TR/cluster01.csv --nodes 8x8 --predict
  for c in 02 05 06; do run --trace $TR/cluster$c.csv --nodes 16x8 --predict; done
} >bench/results/predict.txt.tmp
mv bench/results/predict.txt.tmp bench/results/predict.txt
cat bench/results/predict.txt
