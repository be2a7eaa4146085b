#!/bin/bash
# KAI and Volcano queues, read from the API server: team-a's gang runs on team-b's quota inside
# department dept (limit 8) and is reclaimed when team-b asks for its own; a Volcano queue's
# capability holds a gang back; the queues are in the metrics and no status is written to them.
scenario() {
  fresh_cluster
  namespace ml
  node gpu-0 8
  node gpu-1 8
  k apply -f - >/dev/null <<YAML || fail "queues"
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: dept}
spec:
  resources:
    gpu: {quota: 8, limit: 8, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-a}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 4, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata: {name: team-b}
spec:
  parentQueue: dept
  resources:
    gpu: {quota: 4, limit: -1, overQuotaWeight: 1}
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec: {weight: 1, capability: {nvidia.com/gpu: "2"}}
---
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: a-run, namespace: ml}
spec: {minMember: 2, queue: team-a}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: v-big, namespace: ml}
spec: {minMember: 2, queue: research}
YAML
  start_tessera a
  # team-a's gang arrives a pod at a time: nothing is bound until both are there.
  pod ml a-run-0 4 "  annotations: {pod-group-name: a-run}"
  sleep 1
  bound ml a-run-0 && fail "a-run-0 bound before its gang was whole"
  pod ml a-run-1 4 "  annotations: {pod-group-name: a-run}"
  wait_until 20 bound ml a-run-0 || fail "a-run not admitted"
  wait_until 20 bound ml a-run-1 || fail "a-run not admitted whole"
  say "a-run bound: $(node_of ml a-run-0) $(node_of ml a-run-1) (4 of its 8 GPUs borrowed from team-b)"
  pod ml v-big-0 2 "  annotations: {scheduling.k8s.io/group-name: v-big}"
  pod ml v-big-1 2 "  annotations: {scheduling.k8s.io/group-name: v-big}"
  wait_until 20 sh -c "kubectl --kubeconfig $APISERVER/kubeconfig get pod v-big-0 -n ml -o jsonpath='{.status.conditions[?(@.type==\"PodScheduled\")].message}' | grep -q 'insufficient quota for nvidia.com/gpu in flavor scheduling.volcano.sh'" ||
    fail "v-big: not held by research's capability: $(unschedulable_message ml v-big-0)"
  say "v-big waits: $(unschedulable_message ml v-big-0 | head -c 200)"
  nominal=$(curl -s "http://127.0.0.1:$(health_port a)/metrics" | grep '^kueue_cluster_queue_nominal_quota{' |
    grep 'cluster_queue="team-a"' | grep 'resource="nvidia.com/gpu"' | awk '{print $NF}')
  [ "$nominal" = 4 ] || fail "kueue_cluster_queue_nominal_quota of team-a: '$nominal', want 4"
  k apply -f - >/dev/null <<YAML || fail "b-job"
apiVersion: scheduling.run.ai/v2alpha2
kind: PodGroup
metadata: {name: b-job, namespace: ml}
spec: {minMember: 1, queue: team-b}
YAML
  pod ml b-job-0 2 "  annotations: {pod-group-name: b-job}"
  terminating() { [ -n "$(k get pod "$1" -n ml -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ] || ! k get pod "$1" -n ml >/dev/null 2>&1; }
  wait_until 20 terminating a-run-0 || fail "a-run not reclaimed: b-job-0: $(unschedulable_message ml b-job-0)"
  wait_until 20 terminating a-run-1 || fail "a-run-1 not evicted with its gang"
  say "a-run reclaimed for b-job (16 GPUs on the nodes, but dept's limit is 8)"
  k delete pod a-run-0 a-run-1 -n ml --grace-period=0 --force >/dev/null 2>&1
  wait_until 20 bound ml b-job-0 || fail "b-job not admitted after the reclaim"
  no_failed_writes a # a status write to a ClusterQueue named team-a would have been refused
  grep -q "clusterqueues/team-a" "$E2E_OUT/tessera-a.log" && fail "status written for a KAI queue"
  stop_tessera a
}
