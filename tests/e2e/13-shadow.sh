#!/bin/bash
# Shadow mode: `tessera run --shadow` beside another scheduler, with read-only RBAC. The other
# scheduler is a stand-in (first_fit below: one pass over its pending pods by name, each bound
# to the first node by name with room, one at a time, as a naive scheduler would). On 4 nodes
# of 4 GPUs in two racks it puts a-0 (3 GPUs) on n1, gang b (2 x 3) on n2 and n3 (two racks),
# half of gang c (2 x 3) on n4, and leaves c-1 and d-0 (2 GPUs) pending. Counted by hand
# (test_sched's test_shadow is the same cluster): 1 gang placed partially (Tessera: 0), 1
# split over racks, 4 GPUs stranded of 4 free (Tessera, which keeps b in rack r2, leaves c
# whole pending and places d-0: 3 of 5), 1 pod placed that Tessera would not have (c-0). Then
# b-0 goes and Tessera would complete gang c on n2 now. Tessera must write nothing: every
# request it made is a get, list or watch, and no pod got a condition from it.
scenario() {
  fresh_cluster
  namespace team-a
  node n1 4 rack=r1
  node n2 4 rack=r1
  node n3 4 rack=r2
  node n4 4 rack=r2
  # read-only: the ClusterRole as `tessera rbac --shadow` prints it, and no Role for a Lease
  "$TESSERA" rbac --shadow --namespace "$E2E_NS" | k apply -f - >/dev/null || fail "shadow RBAC"
  k delete role,rolebinding tessera-leader-election -n "$E2E_NS" >/dev/null || fail "Lease Role"
  local pods="" i
  pods=$(shadow_pod a-0 "" 3; shadow_pod b-0 b 3; shadow_pod b-1 b 3; shadow_pod c-0 c 3
    shadow_pod c-1 c 3; shadow_pod d-0 "" 2)
  k create -f - >/dev/null <<YAML || fail "pods"
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: b, namespace: team-a}
spec: {minMember: 2}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: c, namespace: team-a}
spec: {minMember: 2}
$pods
YAML
  first_fit fifo
  local on
  on=$(for i in a-0 b-0 b-1 c-0 c-1 d-0; do printf '%s=%s ' "$i" "$(node_of team-a "$i")"; done)
  say "first-fit placed: $on"
  [ "$on" = "a-0=n1 b-0=n2 b-1=n3 c-0=n4 c-1= d-0= " ] || fail "the stand-in placed $on"
  mkdir -p "$E2E_OUT/shadow"
  start_tessera a "topology: {levels: [rack, kubernetes.io/hostname]}" \
    --shadow --shadow-scheduler-name fifo --shadow-report "$E2E_OUT/shadow"
  # c-1 must be pending past the 10 s grace for c to count as partial
  wait_until 40 metric_is a 'tessera_shadow_partial_gangs{placement="actual"}' 1 ||
    fail "partial gangs: $(metric a 'tessera_shadow_partial_gangs{placement="actual"}'), want 1"
  local m want
  for m in 'tessera_shadow_partial_gangs{placement="tessera"}=0' 'tessera_shadow_split_gangs=1' \
    'tessera_shadow_gpus_free{placement="actual"}=4' 'tessera_shadow_gpus_stranded{placement="actual"}=4' \
    'tessera_shadow_gpus_free{placement="tessera"}=5' 'tessera_shadow_gpus_stranded{placement="tessera"}=3' \
    'tessera_shadow_unplaceable_pods=1' 'tessera_shadow_placeable_pods=0' \
    'tessera_shadow_pods{placement="actual",state="bound"}=4' 'tessera_shadow_pods{placement="tessera",state="bound"}=4'; do
    want=${m##*=}
    m=${m%=*}
    [ "$(metric a "$m")" = "$want" ] || fail "$m is $(metric a "$m"), want $want"
  done
  say "report: partial 1 (Tessera 0), split 1, stranded GPUs 4 of 4 (Tessera 3 of 5), c-0 placed where Tessera would not"
  [ -s "$E2E_OUT/shadow/shadow.json" ] || fail "no shadow.json"
  grep -q '"splitGangs": 1' "$E2E_OUT/shadow/shadow.json" || fail "shadow.json: no splitGangs 1"
  grep -q 'Gangs placed partially: 1' "$E2E_OUT/shadow/shadow.html" || fail "shadow.html: no partial gang"
  grep -q 'PodGroup team-a/c' "$E2E_OUT/shadow/shadow.html" || fail "shadow.html does not name gang c"
  # b-0 goes: Tessera would complete gang c on n2 now
  k delete pod b-0 -n team-a --grace-period=0 --force >/dev/null 2>&1
  wait_until 30 metric_is a tessera_shadow_placeable_pods 1 ||
    fail "placeable pods: $(metric a tessera_shadow_placeable_pods), want 1 (c-1 on n2)"
  grep -q 'pod team-a/c-1' "$E2E_OUT/shadow/shadow.json" || fail "shadow.json does not name c-1"
  metric_is a 'tessera_shadow_partial_gangs{placement="actual"}' 1 ||
    fail "partial gangs after b-0 went: $(metric a 'tessera_shadow_partial_gangs{placement="actual"}'), want 1 (c; b waits for a new pod)"
  # it wrote nothing
  local writes
  writes=$(curl -s "http://127.0.0.1:$(health_port a)/metrics" | grep '^tessera_api_requests_total' |
    grep -v 'verb="get"' | grep -v 'verb="list"' | grep -v 'verb="watch"')
  [ -z "$writes" ] || fail "shadow mode made requests other than reads: $writes"
  [ -z "$(k get pod c-1 -n team-a -o jsonpath='{.status.conditions}')" ] ||
    fail "c-1 got a condition in shadow mode"
  stop_tessera a
  grep -q 'shadow of fifo: ' "$E2E_OUT/tessera-a.log" || fail "no summary in the log"
}

metric_is() { [ "$(metric "$1" "$2")" = "$3" ]; }

# shadow_pod NAME GROUP GPUS: a pod of scheduler fifo as a YAML document.
shadow_pod() {
  local labels=""
  [ -n "$2" ] && labels="
  labels: {scheduling.x-k8s.io/pod-group: $2}"
  cat <<YAML
---
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: team-a$labels
spec:
  schedulerName: fifo
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: "$3"}}
YAML
}

# first_fit SCHEDULER: the stand-in scheduler. One pass over the pending pods of SCHEDULER in
# team-a by name; each is bound to the first node by name with enough free GPUs.
first_fit() {
  local n g p want
  declare -A free
  while read -r n g; do [ -n "$n" ] && free[$n]=${g:-0}; done < <(k get nodes \
    -o jsonpath='{range .items[*]}{.metadata.name} {.status.allocatable.nvidia\.com/gpu}{"\n"}{end}')
  while read -r n g; do [ -n "$n" ] && free[$n]=$((${free[$n]:-0} - ${g:-0})); done < <(k get pods -A \
    -o jsonpath='{range .items[?(@.spec.nodeName)]}{.spec.nodeName} {.spec.containers[0].resources.limits.nvidia\.com/gpu}{"\n"}{end}')
  for p in $(k get pods -n team-a -o jsonpath="{range .items[?(@.spec.schedulerName==\"$1\")]}{.metadata.name} {.spec.nodeName}{'\n'}{end}" |
    awk 'NF == 1' | sort); do
    want=$(k get pod "$p" -n team-a -o jsonpath='{.spec.containers[0].resources.limits.nvidia\.com/gpu}')
    for n in $(printf '%s\n' "${!free[@]}" | sort); do
      [ "${free[$n]}" -ge "${want:-0}" ] || continue
      k create -f - >/dev/null <<YAML || fail "binding $p to $n"
apiVersion: v1
kind: Binding
metadata: {name: $p, namespace: team-a}
target: {apiVersion: v1, kind: Node, name: $n}
YAML
      free[$n]=$((${free[$n]} - ${want:-0}))
      break
    done
  done
}
