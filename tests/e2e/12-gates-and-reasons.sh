#!/bin/bash
# Scheduling gates and the reasons autoscalers read. A gated pod is not bound (the API server
# would refuse the Binding) and not Unschedulable: its PodScheduled=False reason is
# SchedulingGated, as kube-scheduler writes it, and it counts as gated in the metrics; once its
# gate is removed it is bound. A gang with one gated member waits whole. Only a pod more nodes
# would help is Unschedulable (cluster-autoscaler and Karpenter act on exactly those); a pod
# over its queue's quota is WaitingForQuota, a gang short of members WaitingForGang, a pod of a
# missing LocalQueue Blocked. A gated pod gets no FailedScheduling Event (kube-scheduler sends
# none either); a pod nodes would help does.
scenario() {
  fresh_cluster
  namespace team-a
  node gpu-0 4 pool=gpu
  gpu_queue 1
  start_tessera a
  k create -f - >/dev/null <<YAML || fail "pods"
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: team-a}
spec:
  schedulerName: tessera
  schedulingGates: [{name: example.com/approval}]
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pair, namespace: team-a}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: pair-0, namespace: team-a, labels: {scheduling.x-k8s.io/pod-group: pair}}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pair-1, namespace: team-a, labels: {scheduling.x-k8s.io/pod-group: pair}}
spec:
  schedulerName: tessera
  schedulingGates: [{name: example.com/approval}]
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: trio, namespace: team-a}
spec: {minMember: 3}
---
apiVersion: v1
kind: Pod
metadata: {name: trio-0, namespace: team-a, labels: {scheduling.x-k8s.io/pod-group: trio}}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "1"}}}]
YAML
  pod team-a huge 16
  pod team-a q-first 1 "  labels: {kueue.x-k8s.io/queue-name: lq}"
  wait_until 20 bound team-a q-first || fail "q-first not bound"
  pod team-a q-over 1 "  labels: {kueue.x-k8s.io/queue-name: lq}"
  pod team-a q-nowhere 1 "  labels: {kueue.x-k8s.io/queue-name: missing}"
  local p want
  for p in gated:SchedulingGated pair-0:SchedulingGated pair-1:SchedulingGated \
    trio-0:WaitingForGang huge:Unschedulable q-over:WaitingForQuota q-nowhere:Blocked; do
    want=${p#*:}
    p=${p%%:*}
    wait_until 20 reason_is team-a "$p" "$want" ||
      fail "$p: reason '$(unschedulable_reason team-a "$p")', want $want"
    say "$p: $want: $(unschedulable_message team-a "$p")"
    bound team-a "$p" && fail "$p bound"
  done
  unschedulable_message team-a gated | grep -q 'waiting for scheduling gates: \[example.com/approval\]' ||
    fail "gated: unexpected message"
  unschedulable_message team-a pair-0 | grep -q 'pod team-a/pair-1 is waiting for scheduling gates' ||
    fail "pair-0: unexpected message"
  [ "$(metric a 'tessera_pending_pods{reason="SchedulingGated"}')" = 3 ] ||
    fail "tessera_pending_pods{reason=SchedulingGated} is $(metric a 'tessera_pending_pods{reason="SchedulingGated"}'), want 3"
  # Events: FailedScheduling for the pod nodes would help, none for the gated ones.
  wait_until 20 has_event huge || fail "no FailedScheduling Event for huge"
  for p in gated pair-1; do
    has_event "$p" && fail "$p got a FailedScheduling Event"
  done
  # The gates go: the lone pod and then the pair are bound.
  for p in gated pair-1; do
    k patch pod "$p" -n team-a --type=json -p '[{"op": "remove", "path": "/spec/schedulingGates"}]' \
      >/dev/null || fail "ungating $p"
  done
  for p in gated pair-0 pair-1; do
    wait_until 20 bound team-a "$p" || fail "$p not bound once ungated"
  done
  no_failed_writes a
  stop_tessera a
}

reason_is() { [ "$(unschedulable_reason "$1" "$2")" = "$3" ]; }
has_event() {
  k get events -n team-a --field-selector "involvedObject.name=$1,reason=FailedScheduling" \
    -o name 2>/dev/null | grep -q .
}
