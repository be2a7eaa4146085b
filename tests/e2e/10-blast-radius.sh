#!/bin/bash
# Blast radius and coexistence: Volcano queues whose quotas add up past int64 and a ClusterQueue
# whose quota Tessera cannot count no longer stop the cycle (that queue alone is inactive, its
# condition written through the real CRD); shares KAI placed (runai-gpu) or that were bound by
# nodeName without an index are counted where they may be, so no GPU is given more than it has;
# a gpu-fraction of 1e-10 still needs a GPU.
scenario() {
  fresh_cluster
  namespace team-a
  namespace ml
  node gpu-big 8 pool=gpu
  node kai-0 2 grp=kai
  node one-0 1 grp=one
  node cpu-0 0
  gpu_queue 4
  k apply -f - >/dev/null <<YAML || fail "queues"
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: vtop}
spec: {deserved: {cpu: "1"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: v0}
spec: {parent: vtop, deserved: {cpu: "9223372036854775807", nvidia.com/gpu: "9223372036854775807"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: v1}
spec: {parent: vtop, deserved: {cpu: "9223372036854775807", nvidia.com/gpu: "9223372036854775807"}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: v2}
spec: {parent: vtop, deserved: {cpu: "9223372036854775807", nvidia.com/gpu: "9223372036854775807"}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: huge}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: "1e17"}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq-huge, namespace: team-a}
spec: {clusterQueue: huge}
YAML
  # Shares another scheduler placed: KAI's on GPU 1 of kai-0 (its runai-gpu annotation and
  # GPU group label), two of 0.6 bound by nodeName on one-0's only GPU without any index.
  k create -f - >/dev/null <<YAML || fail "foreign shares"
apiVersion: v1
kind: Pod
metadata: {name: kai-share, namespace: ml, labels: {runai-gpu-group: g1},
  annotations: {gpu-fraction: "0.6", runai-gpu: "1"}}
spec: {schedulerName: kai-scheduler, nodeName: kai-0, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: by-name-x, namespace: ml, annotations: {gpu-fraction: "0.6"}}
spec: {nodeName: one-0, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: by-name-y, namespace: ml, annotations: {gpu-fraction: "0.6"}}
spec: {nodeName: one-0, containers: [{name: c, image: busybox}]}
YAML
  start_tessera a
  pod team-a plain 1
  wait_until 20 bound team-a plain || fail "a plain pod not bound beside queues past int64"
  pod team-a q-ok 1 "  labels: {kueue.x-k8s.io/queue-name: lq}"
  wait_until 20 bound team-a q-ok || fail "q-ok not bound"
  pod team-a q-huge 1 "  labels: {kueue.x-k8s.io/queue-name: lq-huge}"
  wait_until 20 has_unschedulable_message team-a q-huge || fail "q-huge has no PodScheduled=False"
  say "q-huge: $(unschedulable_message team-a q-huge)"
  unschedulable_message team-a q-huge |
    grep -q 'ClusterQueue huge is inactive (InvalidQuota): spec.resourceGroups: nominalQuota of nvidia.com/gpu: out of range' ||
    fail "q-huge: unexpected reason"
  # Kueue has no reason for a quota out of range: Unknown, as Kueue says when it names no cause,
  # and the problem in the message
  cond() { k get clusterqueue huge -o jsonpath='{.status.conditions[?(@.type=="Active")].reason}'; }
  cond_is() { [ "$(cond)" = "$1" ]; }
  wait_until 20 cond_is Unknown || fail "ClusterQueue huge: Active reason '$(cond)'"
  k get clusterqueue huge -o jsonpath='{.status.conditions[?(@.type=="Active")].message}' |
    grep -q 'nominalQuota of nvidia.com/gpu: out of range' || fail "ClusterQueue huge: the message does not say why"
  say "ClusterQueue huge: Active=False, reason $(cond), the problem in the message"
  grep -q 'cycle failed' "$E2E_OUT/tessera-a.log" && fail "a cycle failed: $(grep 'cycle failed' "$E2E_OUT/tessera-a.log" | head -2)"
  # A new 0.6 on kai-0 goes on GPU 0: GPU 1 holds KAI's 0.6 already.
  k create -f - >/dev/null <<YAML || fail "shares"
apiVersion: v1
kind: Pod
metadata: {name: s-kai, namespace: team-a, annotations: {gpu-fraction: "0.6"}}
spec: {schedulerName: tessera, nodeSelector: {grp: kai}, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: s-one, namespace: team-a, annotations: {gpu-fraction: "0.4"}}
spec: {schedulerName: tessera, nodeSelector: {grp: one}, containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: tiny, namespace: team-a, annotations: {gpu-fraction: "1e-10"}}
spec: {schedulerName: tessera, containers: [{name: c, image: busybox}]}
YAML
  wait_until 20 bound team-a s-kai || fail "s-kai not bound"
  idx=$(k get pod s-kai -n team-a -o jsonpath='{.metadata.annotations.tessera\.dev/gpu-index}')
  say "s-kai -> GPU $idx of kai-0 (KAI's share is on GPU 1)"
  [ "$idx" = 0 ] || fail "s-kai on GPU '$idx', which KAI's 0.6 shares"
  wait_until 20 has_unschedulable_message team-a s-one || fail "s-one has no PodScheduled=False"
  say "s-one: $(unschedulable_message team-a s-one)"
  bound team-a s-one && fail "s-one bound onto a GPU holding 1.2 already"
  wait_until 20 bound team-a tiny || fail "tiny not bound"
  [ "$(node_of team-a tiny)" != cpu-0 ] || fail "a 1e-10 share bound to a node without GPUs"
  say "tiny (gpu-fraction 1e-10) -> $(node_of team-a tiny)"
  no_failed_writes a
  stop_tessera a
}
