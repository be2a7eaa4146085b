#!/bin/bash
# GPU sharing: pods asking for a share of a GPU (KAI's gpu-fraction / gpu-memory) arrive one by
# one and are bound with the GPU they share written as tessera.dev/gpu-index by the Binding;
# a share that fits no GPU waits with the reason; a bad annotation is refused by field; a
# restarted Tessera reads the indexes back from the pods; a ClusterQueue counts shares exactly
# and its status (written through the real CRD's validation) says so.
share_pod() { # NS NAME ANNOTATIONS [LABELS: then no cpu request, which the queue does not cover]
  local req='resources: {requests: {cpu: 100m}}'
  [ -n "${4:-}" ] && req='resources: {}'
  k create -f - >/dev/null <<EOF || fail "pod $1/$2"
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1, annotations: {$3}, labels: {${4:-}}}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox, $req}]
EOF
}
gpu_index() { k get pod "$2" -n "$1" -o jsonpath='{.metadata.annotations.tessera\.dev/gpu-index}'; }

scenario() {
  fresh_cluster
  namespace team-a
  node gpu-0 2 nvidia.com/gpu.memory=40960
  start_tessera a
  share_pod team-a s1 'gpu-fraction: "0.5"'
  wait_until 20 bound team-a s1 || fail "s1 not bound"
  share_pod team-a s2 'gpu-fraction: "0.5"'
  wait_until 20 bound team-a s2 || fail "s2 not bound"
  share_pod team-a s3 'gpu-memory: "20480"'
  wait_until 20 bound team-a s3 || fail "s3 not bound"
  i1=$(gpu_index team-a s1) i2=$(gpu_index team-a s2) i3=$(gpu_index team-a s3)
  say "s1 -> GPU $i1, s2 -> GPU $i2, s3 (20480 of 40960 MiB) -> GPU $i3"
  [ -n "$i1" ] && [ "$i1" = "$i2" ] || fail "s1 and s2 do not share a GPU ('$i1', '$i2')"
  [ -n "$i3" ] && [ "$i3" != "$i1" ] || fail "s3 not on the other GPU ('$i3')"
  share_pod team-a s4 'gpu-fraction: "0.6"'
  wait_until 20 has_unschedulable_message team-a s4 || fail "s4 has no PodScheduled=False"
  say "s4: $(unschedulable_message team-a s4)"
  unschedulable_message team-a s4 | grep -q "no GPU with room for the pod's GPU share" ||
    fail "s4: unexpected reason"
  share_pod team-a bad 'gpu-fraction: "1.5"'
  wait_until 20 has_unschedulable_message team-a bad || fail "bad has no PodScheduled=False"
  say "bad: $(unschedulable_message team-a bad)"
  unschedulable_message team-a bad | grep -q 'metadata.annotations\[gpu-fraction\]' ||
    fail "bad: the reason does not name the field"
  # GPU i1 frees when both its pods go: s4 takes it.
  k delete pod s1 s2 -n team-a --grace-period=0 --force >/dev/null 2>&1
  wait_until 30 bound team-a s4 || fail "s4 not bound once a GPU freed"
  i4=$(gpu_index team-a s4)
  say "s4 -> GPU $i4"
  [ "$i4" = "$i1" ] || fail "s4 not on the freed GPU ($i4, want $i1)"
  no_failed_writes a
  stop_tessera a
  # A new process reads the indexes back: a half fits only beside s3.
  start_tessera b
  share_pod team-a s5 'gpu-fraction: "0.5"'
  wait_until 20 bound team-a s5 || fail "s5 not bound after the restart"
  say "after a restart, s5 -> GPU $(gpu_index team-a s5)"
  [ "$(gpu_index team-a s5)" = "$i3" ] || fail "s5 not beside s3 (GPU $i3)"
  share_pod team-a s6 'gpu-fraction: "0.5"'
  wait_until 20 has_unschedulable_message team-a s6 || fail "s6 bound: a GPU double-booked"
  # Quota: one GPU holds two halves; a quarter waits, and fits when a half goes.
  node gpu-1 4 pool=gpu
  gpu_queue 1
  q='kueue.x-k8s.io/queue-name: lq'
  share_pod team-a q1 'gpu-fraction: "0.5"' "$q"
  wait_until 20 bound team-a q1 || fail "q1 not bound"
  share_pod team-a q2 'gpu-fraction: "0.5"' "$q"
  wait_until 20 bound team-a q2 || fail "q2 not bound"
  share_pod team-a q3 'gpu-fraction: "0.25"' "$q"
  wait_until 20 has_unschedulable_message team-a q3 || fail "q3 has no PodScheduled=False"
  say "q3: $(unschedulable_message team-a q3)"
  cq_total() { k get clusterqueue cq -o jsonpath='{.status.flavorsUsage[0].resources[0].total}'; }
  cq_total_is() { [ "$(cq_total)" = "$1" ]; }
  wait_until 20 cq_total_is 1 || fail "ClusterQueue usage $(cq_total), want 1"
  k delete pod q1 -n team-a --grace-period=0 --force >/dev/null 2>&1
  wait_until 30 bound team-a q3 || fail "q3 not bound once half a GPU of quota freed"
  wait_until 20 cq_total_is 750m || fail "ClusterQueue usage $(cq_total), want 750m"
  say "ClusterQueue cq: flavorsUsage nvidia.com/gpu $(cq_total) (q2 and q3)"
  no_failed_writes b
  stop_tessera b
}
