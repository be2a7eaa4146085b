#!/bin/bash
# Kueue admits, Tessera places (queueing.admission: kueue). The harness does what Kueue's
# controller would: it makes the Workloads of a Kueue pod group and of a plain pod, whose pods
# Kueue's webhook gated (kueue.x-k8s.io/admission), writes the admission of one (flavor gpu,
# 2 pods on a1 and 2 on a3 by topology assignment) and ungates its pods. Tessera must wait for
# the gates, place the admitted pod set whole on the domains Kueue assigned (bin-packing alone
# would use a1 and a2), charge no quota of its own (the ClusterQueue holds 1 GPU, the gang uses
# 8), and keep the pod Kueue has not admitted pending with Kueue's message, as WaitingForQuota.
scenario() {
  fresh_cluster
  namespace team-a
  node a1 4 pool=gpu rack=r1
  node a2 4 pool=gpu rack=r1
  node a3 4 pool=gpu rack=r2
  node h1 4 pool=h100 rack=r2
  gpu_queue 1
  start_tessera a "queueing: {admission: kueue}"
  local i
  for i in 0 1 2 3; do # as Kueue's pod webhook leaves them: gated until admitted
    k create -f - >/dev/null <<YAML || fail "pod train-$i"
apiVersion: v1
kind: Pod
metadata:
  name: train-$i
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: train, kueue.x-k8s.io/managed: "true"}
  annotations: {kueue.x-k8s.io/pod-group-total-count: "4", kueue.x-k8s.io/role-hash: b54683bb}
spec:
  schedulerName: tessera
  schedulingGates: [{name: kueue.x-k8s.io/admission}]
  containers:
  - name: c
    image: busybox
    resources: {limits: {nvidia.com/gpu: "2"}}
YAML
  done
  wait_until 20 gated_reason team-a train-0 || fail "train-0 has no SchedulingGated condition"
  pod team-a solo 1 "  labels: {kueue.x-k8s.io/queue-name: lq}"
  local solo_uid
  solo_uid=$(k get pod solo -n team-a -o jsonpath='{.metadata.uid}')
  k create -f - >/dev/null <<YAML || fail "workloads"
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: train, namespace: team-a, annotations: {kueue.x-k8s.io/is-group-workload: "true"}}
spec:
  queueName: lq
  podSets:
  - name: b54683bb
    count: 4
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {nvidia.com/gpu: "2"}}}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: pod-solo
  namespace: team-a
  ownerReferences: [{apiVersion: v1, kind: Pod, name: solo, uid: $solo_uid}]
spec:
  queueName: lq
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers: [{name: c, image: busybox, resources: {requests: {nvidia.com/gpu: "1"}}}]
YAML
  local now
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k patch workload pod-solo -n team-a --subresource=status --type=merge -p "{\"status\": {\"conditions\": [
    {\"type\": \"QuotaReserved\", \"status\": \"False\", \"reason\": \"Pending\", \"lastTransitionTime\": \"$now\",
     \"message\": \"couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 1 more needed\"}]}}" \
    >/dev/null || fail "pod-solo status"
  wait_until 20 reason_is team-a solo WaitingForQuota || fail "solo: reason $(unschedulable_reason team-a solo), want WaitingForQuota"
  unschedulable_message team-a solo |
    grep -q "waits for Kueue to admit Workload team-a/pod-solo (LocalQueue team-a/lq): couldn't assign flavors" ||
    fail "solo: unexpected message: $(unschedulable_message team-a solo)"
  bound team-a train-0 && fail "train-0 bound before Kueue admitted it"
  # Kueue admits train: 2 pods in domain r1/a1, 2 in r2/a3; then ungates its pods.
  k patch workload train -n team-a --subresource=status --type=merge -p "{\"status\": {
    \"admission\": {\"clusterQueue\": \"cq\", \"podSetAssignments\": [{\"name\": \"b54683bb\", \"count\": 4,
      \"flavors\": {\"nvidia.com/gpu\": \"gpu\"}, \"resourceUsage\": {\"nvidia.com/gpu\": \"8\"},
      \"topologyAssignment\": {\"levels\": [\"rack\", \"kubernetes.io/hostname\"], \"slices\": [{\"domainCount\": 2,
        \"podCounts\": {\"universal\": 2},
        \"valuesPerLevel\": [{\"individual\": {\"roots\": [\"r1\", \"r2\"]}}, {\"individual\": {\"prefix\": \"a\", \"roots\": [\"1\", \"3\"]}}]}]}}]},
    \"conditions\": [
      {\"type\": \"QuotaReserved\", \"status\": \"True\", \"reason\": \"QuotaReserved\", \"message\": \"Quota reserved in ClusterQueue cq\", \"lastTransitionTime\": \"$now\"},
      {\"type\": \"Admitted\", \"status\": \"True\", \"reason\": \"Admitted\", \"message\": \"The workload is admitted\", \"lastTransitionTime\": \"$now\"}]}}" \
    >/dev/null || fail "train admission"
  for i in 0 1 2 3; do
    k patch pod "train-$i" -n team-a --type=json -p '[{"op": "remove", "path": "/spec/schedulingGates"}]' \
      >/dev/null || fail "ungating train-$i"
  done
  for i in 0 1 2 3; do
    wait_until 20 bound team-a "train-$i" || fail "train-$i not bound after Kueue admitted it"
  done
  local on
  on=$(for i in 0 1 2 3; do node_of team-a "train-$i"; done | sort | tr '\n' ' ')
  say "train placed on: $on"
  [ "$on" = "a1 a1 a3 a3 " ] || fail "train: want a1 a1 a3 a3 (Kueue's topology assignment), got $on"
  sleep 2
  bound team-a solo && fail "solo bound though Kueue did not admit it"
  reason_is team-a solo WaitingForQuota || fail "solo: reason $(unschedulable_reason team-a solo)"
  grep -q "Kueue's controller is not running" "$E2E_OUT/tessera-a.log" ||
    fail "no warning that Kueue's controller is not running"
  no_failed_writes a
  stop_tessera a
}

gated_reason() { [ "$(unschedulable_reason "$1" "$2")" = SchedulingGated ]; }
reason_is() { [ "$(unschedulable_reason "$1" "$2")" = "$3" ]; }
