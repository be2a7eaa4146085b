#!/bin/bash
# plain pods: bound to nodes, a pod that fits nowhere gets PodScheduled=False and an Event
scenario() {
  fresh_cluster
  namespace team-a
  node gpu-0 8 zone=a
  node gpu-1 8 zone=a
  start_tessera a
  pod team-a small-0 2
  pod team-a small-1 2
  pod team-a huge 16
  wait_until 20 bound team-a small-0 || fail "small-0 not bound"
  wait_until 20 bound team-a small-1 || fail "small-1 not bound"
  say "small-0 -> $(node_of team-a small-0), small-1 -> $(node_of team-a small-1)"
  # bin-packing: both on one node
  [ "$(node_of team-a small-0)" = "$(node_of team-a small-1)" ] || fail "not bin-packed"
  wait_until 20 has_unschedulable_message team-a huge || fail "huge has no PodScheduled=False"
  say "huge: $(unschedulable_message team-a huge)"
  unschedulable_message team-a huge | grep -q "0/2 nodes are available: 2 Insufficient nvidia.com/gpu." ||
    fail "unexpected reason"
  wait_until 20 sh -c "kubectl --kubeconfig $APISERVER/kubeconfig get events.events.k8s.io -n team-a \
      --field-selector reason=FailedScheduling -o name | grep -q ." || fail "no FailedScheduling Event"
  k get events.events.k8s.io -n team-a --field-selector reason=FailedScheduling \
    -o jsonpath='{range .items[*]}{.metadata.name} {.reportingController} {.regarding.name}: {.note}{"\n"}{end}' |
    sed 's/^/    event: /'
  bound team-a huge && fail "huge bound"
  no_failed_writes a
  stop_tessera a
}
