#!/bin/bash
# scripts/e2e-scale.sh BUILD: `tessera run` at cluster scale against a real kube-apiserver v1.34
# + etcd (TESSERA_APISERVER, as for make e2e; skipped without it). A fresh server gets NODES
# 8-GPU nodes (1,000) and PODS pending pods (8,000: 0, 1, 2 or 4 GPUs, 2 CPUs, 8 GiB each;
# with PODS_FIT=1 0 or 1 GPU, so that all fit and run, as issue 35's churn asks) before Tessera
# starts (as the admin, with --no-leader-elect); then it measures what issue 16
# asks: time from start to "every informer has synced", time to the last binding, pods bound,
# bindings/s, peak RSS, and the requests the API server counted by verb (its own /metrics;
# requests of clients other than the server itself, on pods, nodes and events).
# Then, unless CHURN_S=0, a steady churn (scripts/churn.py): pods created at 50/s and then 200/s
# for CHURN_S seconds each (120), each deleted 20 s after its binding; per rate the user's
# latency (create to binding seen) and Tessera's SLI histogram (p50, p99).
# Results go to bench/results/e2e-scale.txt. The API server is stopped at the end (it holds
# every pod in etcd: gigabytes at 100k pods); KEEP_APISERVER=1 leaves it running to look at.
set -u
BUILD=${1:-build}
REPO=$(cd "$(dirname "$0")/.." && pwd)
APISERVER=${TESSERA_APISERVER:-}
NODES=${NODES:-1000}
PODS=${PODS:-8000}
if [ -z "$APISERVER" ] || [ ! -x "$APISERVER/start.sh" ] || ! command -v kubectl >/dev/null; then
  echo "e2e-scale: skipped: set TESSERA_APISERVER (see make e2e) and put kubectl on PATH"
  exit 0
fi
OUT=$REPO/$BUILD/e2e-scale
mkdir -p "$OUT" "$REPO/bench/results"
k() { kubectl --kubeconfig "$APISERVER/kubeconfig" "$@"; }
requests() { # verb -> count of apiserver_request_total for resources Tessera touches
  k get --raw /metrics | awk -F'[{}]' '/^apiserver_request_total\{/ {
      split($2, l, ","); v = ""; r = ""; s = ""; sys = ""
      for (i in l) { split(l[i], kv, "="); gsub(/"/, "", kv[2])
        if (kv[1] == "verb") v = kv[2]; if (kv[1] == "resource") r = kv[2]
        if (kv[1] == "subresource") s = kv[2]; if (kv[1] == "system_client") sys = kv[2] }
      if (sys == "" && (r == "pods" || r == "nodes" || r == "events")) n[v " " r (s ? "/" s : "")] += $3 }
    END { for (x in n) print x, n[x] }' | sort
}
python3 - "$NODES" "$PODS" "$OUT" "${PODS_FIT:-0}" <<'EOF'
import json, sys
nodes, pods, out, fit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
alloc = {"cpu": "96", "memory": "1024Gi", "pods": "110", "nvidia.com/gpu": "8"}
json.dump({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d" % i},
     "status": {"allocatable": alloc, "capacity": alloc}} for i in range(nodes)]},
    open(out + "/nodes.json", "w"))
gpus = [0, 1, 0, 1] if fit else [0, 1, 2, 4]  # PODS_FIT=1: every pod fits (all run)
json.dump({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p-%d" % i, "namespace": "scale"},
     "spec": {"schedulerName": "tessera",
              "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
              "containers": [{"name": "c", "image": "busybox", "resources": {
                  "requests": {"cpu": "2", "memory": "8Gi"},
                  "limits": {"nvidia.com/gpu": str(gpus[i % 4])} if gpus[i % 4] else {}}}]}}
    for i in range(pods)]}, open(out + "/pods.json", "w"))
EOF
echo "e2e-scale: a fresh API server with $NODES nodes and $PODS pending pods"
"$APISERVER/start.sh" --fresh >"$OUT/apiserver-start.log" 2>&1 || { echo "e2e-scale: the API server did not start"; exit 1; }
[ "${KEEP_APISERVER:-}" = 1 ] || trap '"$APISERVER/stop.sh" >/dev/null 2>&1' EXIT
k create namespace scale >/dev/null && k create serviceaccount default -n scale >/dev/null 2>&1
k create -f "$OUT/nodes.json" >/dev/null && k create -f "$OUT/pods.json" >/dev/null 2>"$OUT/create.err" ||
  { echo "e2e-scale: could not create the objects"; tail -3 "$OUT/create.err"; exit 1; }
requests >"$OUT/requests-before.txt"
port=$((20000 + RANDOM % 20000))
printf 'leaderElection: {enable: false}\nhealthAddress: 127.0.0.1:%d\n' "$port" >"$OUT/tessera.yaml"
rm -f "$OUT/poll.txt"
start=$(date +%s.%N)
"$REPO/$BUILD/tessera" run --kubeconfig "$APISERVER/kubeconfig" --config "$OUT/tessera.yaml" -v \
  >"$OUT/tessera.log" 2>&1 &
pid=$!
bound=0 still=0 first="" last="" peak=0 synced=""
while sleep 0.25; do
  kill -0 $pid 2>/dev/null || { echo "e2e-scale: tessera exited; see $OUT/tessera.log"; exit 1; }
  now=$(date +%s.%N)
  rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status 2>/dev/null)
  [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
  if [ -z "$synced" ]; then # the time the log line carries, not when this loop saw it
    ts=$(grep -m1 "every informer has synced" "$OUT/tessera.log" | cut -d' ' -f1)
    [ -n "$ts" ] && synced=$(date -d "$ts" +%s.%N)
  fi
  b=$(curl -s "http://127.0.0.1:$port/metrics" | awk '/^tessera_pods_bound_total /{printf "%d\n", $2}')
  b=${b%.*}
  echo "$now ${b:--}" >>"$OUT/poll.txt" # the timeline the figures come from
  [ -z "$b" ] && continue
  if [ "$b" != "$bound" ]; then
    [ -z "$first" ] && first=$now
    bound=$b last=$now still=0
  elif [ "$bound" -gt 0 ]; then
    still=$((still + 1))
    [ $still -ge 20 ] && break # nothing bound for 5 s: done
  fi
  [ "$(echo "$now - $start > 180" | bc)" = 1 ] && break
done
requests >"$OUT/requests-after.txt"
# Steady churn on the settled cluster (issue 35): pods created at 50/s, then 200/s, each
# deleted 20 s after its binding (a job that completed); CHURN_S seconds per rate (0: none).
CHURN_S=${CHURN_S:-120}
if [ "$CHURN_S" != 0 ]; then
  echo "e2e-scale: steady churn, 50 then 200 pods/s for $CHURN_S s each"
  python3 "$REPO/scripts/churn.py" "$APISERVER/kubeconfig" "http://127.0.0.1:$port/metrics" \
    50 "$CHURN_S" 200 "$CHURN_S" >"$OUT/churn.txt" 2>"$OUT/churn.err" ||
    { echo "e2e-scale: the churn driver failed"; tail -5 "$OUT/churn.err"; }
fi
kill $pid
wait $pid 2>/dev/null
commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  echo "# e2e-scale - $(date -u +%Y-%m-%dT%H:%M:%SZ) - commit $commit - $(nproc) cores, API server and etcd on the same machine"
  echo "nodes $NODES (8 GPUs each), pending pods $PODS ($([ "${PODS_FIT:-0}" = 1 ] && echo 0/1 || echo 0/1/2/4) GPUs), tessera run --no-leader-elect"
  printf 'synced after start        %.1f s\n' "$(echo "${synced:-$now} - $start" | bc)"
  printf 'first binding after start %.1f s\n' "$(echo "${first:-$now} - $start" | bc)"
  printf 'last binding after start  %.1f s\n' "$(echo "${last:-$now} - $start" | bc)"
  echo "pods bound                $bound"
  [ -n "$first" ] && [ "$bound" -gt 1 ] &&
    printf 'bindings/s (first..last)  %.0f\n' "$(echo "$bound / ($last - $first)" | bc -l)"
  echo "peak RSS                  $((peak / 1024)) MB"
  echo "API server requests during the run (apiserver_request_total, verb resource: count):"
  awk 'NR == FNR { was[$1 " " $2] = $3; next }
       { d = $3 - was[$1 " " $2]; if (d > 0) printf "  %-8s %-16s %d\n", $1, $2, d }' \
    "$OUT/requests-before.txt" "$OUT/requests-after.txt"
  if [ -s "$OUT/churn.txt" ]; then
    echo "steady churn on the settled cluster (scripts/churn.py; each pod deleted 20 s after binding):"
    sed 's/^/  /' "$OUT/churn.txt"
  fi
} | tee "$REPO/bench/results/e2e-scale.txt"
