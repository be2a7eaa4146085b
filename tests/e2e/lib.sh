# tests/e2e/lib.sh - helpers of the end-to-end scenarios (sourced by scripts/e2e.sh).
#
# Each scenario runs against a fresh real kube-apiserver + etcd ($APISERVER, built by
# tests/e2e/apiserver/build.sh) and `tessera run` ($TESSERA) with the Helm chart's RBAC, as the
# chart's ServiceAccount. Nothing else runs, so the harness stands in for what would: it removes
# the not-ready taint the API server puts on new Nodes (node lifecycle controller), creates each
# namespace's default ServiceAccount, and creates the claims of ResourceClaimTemplates (claim
# controller). Bound pods stay Pending (no kubelet); Tessera counts them as using their node.

E2E_NS=tessera-system
HEALTH_BASE=19259

k() { kubectl --kubeconfig "$APISERVER/kubeconfig" "$@"; }

say() { echo "    $*"; }

fail() {
  echo "    FAIL: $*"
  echo "    --- pods"
  k get pods -A -o custom-columns='NS:.metadata.namespace,NAME:.metadata.name,NODE:.spec.nodeName,DELETING:.metadata.deletionTimestamp,WHY:.status.conditions[?(@.type=="PodScheduled")].message' 2>&1 |
    sed 's/^/    /' | head -30
  for f in "$E2E_OUT"/tessera-*.log; do
    [ -f "$f" ] || continue
    echo "    --- last lines of $f"
    tail -n 15 "$f" | sed 's/^/    /'
  done
  exit 1
}

# wait_until SECONDS COMMAND...: true once COMMAND succeeds, false after SECONDS.
wait_until() {
  local t=$1 i
  shift
  for i in $(seq $((t * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

# A fresh API server with the CRDs, the chart's RBAC and a kubeconfig for its ServiceAccount.
fresh_cluster() {
  "$APISERVER/start.sh" --fresh >"$E2E_OUT/apiserver-start.log" 2>&1 || fail "the API server did not start"
  k apply --server-side -f "$REPO/tests/e2e/crds/" >/dev/null || fail "CRDs"
  k apply --server-side -f "$REPO/tests/data/crds/" >/dev/null || fail "Volcano and KAI CRDs"
  k wait --for condition=established --timeout=60s crd --all >/dev/null || fail "CRDs not established"
  namespace "$E2E_NS"
  # the chart's RBAC (the same rules: `tessera rbac --helm` writes the chart's template), the
  # Lease's Role in Tessera's own namespace, as the chart puts it
  "$TESSERA" rbac --namespace "$E2E_NS" | k apply -f - >/dev/null || fail "RBAC"
  local token
  token=$(k create token tessera -n "$E2E_NS" --duration=2h) || fail "no token for the ServiceAccount"
  sed -e '/^users:/,$d' "$APISERVER/kubeconfig" >"$E2E_OUT/kubeconfig-tessera"
  cat >>"$E2E_OUT/kubeconfig-tessera" <<EOF
users:
- name: tessera
  user:
    token: $token
contexts:
- name: tessera
  context: {cluster: local, user: tessera}
current-context: tessera
EOF
}

# namespace NAME [LABEL=VALUE...]
namespace() {
  local ns=$1
  shift
  k create namespace "$ns" >/dev/null 2>&1
  [ $# -gt 0 ] && k label namespace "$ns" "$@" --overwrite >/dev/null
  k create serviceaccount default -n "$ns" >/dev/null 2>&1
  true
}

# node NAME GPUS [LABEL=VALUE...]: a Ready node with 64 CPUs, 512Gi and GPUS nvidia.com/gpu.
node() {
  local name=$1 gpus=$2 labels="kubernetes.io/hostname: $1" l
  shift 2
  for l in "$@"; do labels="$labels, ${l%%=*}: \"${l#*=}\""; done
  k create -f - >/dev/null <<EOF || fail "node $name"
apiVersion: v1
kind: Node
metadata: {name: $name, labels: {$labels}}
status:
  allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "$gpus"}
  capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "$gpus"}
  conditions: [{type: Ready, status: "True"}]
EOF
  k taint nodes "$name" node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1
  true
}

# start_tessera ID [CONFIG-LINES [ARGS...]]: `tessera run` as the chart's ServiceAccount, short
# lease timings, CONFIG-LINES added to its tessera.yaml, ARGS added to its command line; its
# health port is HEALTH_BASE + n for ID a, b, ...
start_tessera() {
  local id=$1 config=${2:-} port
  shift
  [ $# -gt 0 ] && shift
  port=$(health_port "$id")
  cat >"$E2E_OUT/tessera-$id.yaml" <<EOF
leaderElection: {enable: true, leaseName: tessera, leaseNamespace: "",
  leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 500ms}
healthAddress: 127.0.0.1:$port
api: {eventInterval: 5s}
$config
EOF
  # leaseNamespace "": the Lease in the pod's namespace, which the chart passes as POD_NAMESPACE
  POD_NAMESPACE=$E2E_NS "$TESSERA" run --kubeconfig "$E2E_OUT/kubeconfig-tessera" --config "$E2E_OUT/tessera-$id.yaml" \
    --identity "tessera-$id" "$@" >"$E2E_OUT/tessera-$id.log" 2>&1 &
  echo $! >"$E2E_OUT/tessera-$id.pid"
  wait_until 30 ready "$id" || fail "tessera-$id never became ready"
}

health_port() { echo $((HEALTH_BASE + $(printf '%d' "'$1") - 97)); }

ready() { curl -sf "http://127.0.0.1:$(health_port "$1")/readyz" >/dev/null; }

# metric ID NAME: the value of a metric line that starts with NAME (0 when absent).
metric() {
  curl -s "http://127.0.0.1:$(health_port "$1")/metrics" | awk -v m="$2" 'index($0, m) == 1 { v = $NF } END { print v + 0 }'
}

# metric_sum ID FAMILY: the sum of every sample of FAMILY that tessera ID exports (0 when none).
metric_sum() {
  curl -s "http://127.0.0.1:$(health_port "$1")/metrics" |
    awk -v m="$2{" 'index($0, m) == 1 { s += $NF } END { print s + 0 }'
}

# stop_tessera ID [SIGNAL]: stops it (SIGTERM: must exit 0 within 10 s).
stop_tessera() {
  local id=$1 sig=${2:-TERM} pid i
  pid=$(cat "$E2E_OUT/tessera-$id.pid")
  kill -"$sig" "$pid" 2>/dev/null
  for i in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -9 "$pid"
    fail "tessera-$id did not exit after SIG$sig"
  fi
  wait "$pid" 2>/dev/null
  local status=$?
  [ "$sig" = TERM ] && [ $status -ne 0 ] && fail "tessera-$id exited with $status after SIGTERM"
  true
}

# no_failed_writes ID: every write of tessera-ID was accepted by the API server.
no_failed_writes() {
  local n
  n=$(metric "$1" tessera_writes_failed_total)
  [ "$n" = 0 ] || fail "tessera-$1: $n writes failed: $(grep 'failed: HTTP' "$E2E_OUT/tessera-$1.log" | head -3)"
}

node_of() { k get pod "$2" -n "$1" -o jsonpath='{.spec.nodeName}{"\n"}' 2>/dev/null; }
bound() { [ -n "$(node_of "$1" "$2" | tr -d '\n')" ]; }

# pod NS NAME GPUS [EXTRA-YAML-LINES]: a pod for Tessera asking for GPUS GPUs.
pod() {
  local ns=$1 name=$2 gpus=$3 extra=${4:-}
  k create -f - >/dev/null <<EOF || fail "pod $ns/$name"
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
$extra
spec:
  schedulerName: tessera
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: "$gpus"}}
EOF
}

# gpu_queue QUOTA: ResourceFlavor gpu (nodes pool=gpu), ClusterQueue cq with QUOTA GPUs and
# LocalQueue team-a/lq pointing to it.
gpu_queue() {
  k apply -f - >/dev/null <<YAML || fail "queues"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec: {nodeLabels: {pool: gpu}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: $1}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team-a}
spec: {clusterQueue: cq}
YAML
}

# The reason of a pod's PodScheduled=False condition.
unschedulable_reason() {
  k get pod "$2" -n "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'
}

# The message of a pod's PodScheduled=False condition.
unschedulable_message() {
  k get pod "$2" -n "$1" -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}'
}
# True once the pod has that message (for wait_until, which runs its command each time:
# `wait_until 20 test -n "$(unschedulable_message ...)"` would read the message only once).
has_unschedulable_message() { [ -n "$(unschedulable_message "$1" "$2")" ]; }
