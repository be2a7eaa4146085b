#!/bin/bash
# reclaim: the most recently admitted borrower is evicted (InCohortReclamation), not the first by name
scenario() {
  fresh_cluster
  namespace team-a
  namespace team-b
  node gpu-0 8 pool=gpu
  k apply -f - >/dev/null <<YAML || fail "queues"
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: gpu}
spec: {nodeLabels: {pool: gpu}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-a}
spec:
  cohortName: all
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq-b}
spec:
  cohortName: all
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-b}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 0, borrowingLimit: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team-a}
spec: {clusterQueue: cq-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team-b}
spec: {clusterQueue: cq-b}
YAML
  start_tessera a
  # b-second is created first but admitted last: the order of admission is what counts.
  for job in b-second a-first; do
    k create -f - >/dev/null <<YAML || fail "job $job"
apiVersion: batch/v1
kind: Job
metadata: {name: $job, namespace: team-b, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {parallelism: 2, completions: 2, suspend: true, template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
YAML
  done
  for job in a-first b-second; do
    uid=$(k get job $job -n team-b -o jsonpath='{.metadata.uid}')
    for i in 0 1; do
      pod team-b "$job-$i" 2 "  labels: {kueue.x-k8s.io/queue-name: lq}
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: $job, uid: $uid, controller: true}]"
    done
    wait_until 20 bound team-b "$job-0" || fail "$job not admitted"
    wait_until 20 bound team-b "$job-1" || fail "$job not admitted whole"
    sleep 1.2 # admission times a second apart (lastTransitionTime has seconds)
  done
  say "admitted: a-first at $(k get pod a-first-0 -n team-b -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}'), b-second at $(k get pod b-second-0 -n team-b -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].lastTransitionTime}')"
  k create -f - >/dev/null <<YAML || fail "owner job"
apiVersion: batch/v1
kind: Job
metadata: {name: owner, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {parallelism: 1, completions: 1, suspend: true, template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
YAML
  uid=$(k get job owner -n team-a -o jsonpath='{.metadata.uid}')
  pod team-a owner-0 4 "  labels: {kueue.x-k8s.io/queue-name: lq}
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: owner, uid: $uid, controller: true}]"
  # The eviction marks the victims for deletion; with no kubelet the harness finishes it.
  terminating() { [ -n "$(k get pod "$1" -n team-b -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null)" ] || ! k get pod "$1" -n team-b >/dev/null 2>&1; }
  wait_until 20 terminating b-second-0 || fail "b-second not evicted"
  terminating a-first-0 && fail "a-first evicted: the first admitted"
  preempted() { k get events.events.k8s.io -n team-b --field-selector reason=Preempted -o jsonpath='{.items[*].note}'; }
  wait_until 10 sh -c "kubectl --kubeconfig $APISERVER/kubeconfig get events.events.k8s.io -n team-b --field-selector reason=Preempted -o name | grep -q ." || fail "no Preempted Event"
  say "evicted: b-second; Event: $(preempted | head -c 160)"
  preempted | grep -q "(InCohortReclamation)" || fail "the Preempted Event does not give Kueue's reason"
  say "owner-0 waits: $(unschedulable_message team-a owner-0)"
  k delete pod b-second-0 b-second-1 -n team-b --grace-period=0 --force >/dev/null 2>&1
  wait_until 20 bound team-a owner-0 || fail "owner not admitted after the reclaim"
  bound team-b a-first-0 || fail "a-first lost"
  no_failed_writes a
  stop_tessera a
}
