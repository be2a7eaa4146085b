#!/bin/bash
# a Kueue-queued PodGroup and a PyTorchJob created pod by pod: nothing binds below the minimum
scenario() {
  fresh_cluster
  namespace team-a
  for i in 0 1 2 3; do node "gpu-$i" 8 "pool=gpu" "nvidia.com/gpu.clique=c$((i / 2))"; done
  gpu_queue 32
  k apply -f - >/dev/null <<YAML || fail "gang objects"
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: pg, namespace: team-a}
spec: {minMember: 4}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ft, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  pytorchReplicaSpecs:
    Master: {replicas: 1, template: {spec: {containers: [{name: pytorch, image: pytorch}]}}}
    Worker: {replicas: 5, template: {spec: {containers: [{name: pytorch, image: pytorch}]}}}
YAML
  start_tessera a
  # The PodGroup's pods, one by one, as a controller creates them.
  for i in 0 1 2 3; do
    pod team-a "pg-$i" 2 "  labels: {scheduling.x-k8s.io/pod-group: pg, kueue.x-k8s.io/queue-name: lq}"
    if [ $i -lt 3 ]; then
      sleep 1.5
      for j in $(seq 0 $i); do bound team-a "pg-$j" && fail "pg-$j bound with $((i + 1)) of 4 pods"; done
      say "pg: $((i + 1)) of 4 pods, none bound: $(unschedulable_message team-a pg-0)"
    fi
  done
  for j in 0 1 2 3; do wait_until 20 bound team-a "pg-$j" || fail "pg-$j not bound"; done
  say "pg: bound to $(for j in 0 1 2 3; do node_of team-a pg-$j; done | sort -u | tr '\n' ' ')"
  [ "$(for j in 0 1 2 3; do node_of team-a pg-$j; done | sort -u | wc -l)" = 1 ] || fail "pg split over nodes"
  # The PyTorchJob's pods (1 master + 5 workers), one by one.
  uid=$(k get pytorchjob ft -n team-a -o jsonpath='{.metadata.uid}')
  owner="  ownerReferences: [{apiVersion: kubeflow.org/v1, kind: PyTorchJob, name: ft, uid: $uid, controller: true}]"
  for i in 0 1 2 3 4 5; do
    pod team-a "ft-$i" 2 "  labels: {kueue.x-k8s.io/queue-name: lq}
$owner"
    if [ $i -lt 5 ]; then
      sleep 1
      for j in $(seq 0 $i); do bound team-a "ft-$j" && fail "ft-$j bound with $((i + 1)) of 6 pods"; done
    fi
  done
  say "ft: 5 of 6 pods, none bound"
  for j in 0 1 2 3 4 5; do wait_until 20 bound team-a "ft-$j" || fail "ft-$j not bound"; done
  nodes=$(for j in 0 1 2 3 4 5; do node_of team-a ft-$j; done | sort -u | tr '\n' ' ')
  say "ft: bound to $nodes"
  # 12 GPUs: not one node; one clique (c0: gpu-0/1 have 8 free after pg... or c1)
  cliques=$(for n in $nodes; do k get node "$n" -o jsonpath='{.metadata.labels.nvidia\.com/gpu\.clique}{"\n"}'; done | sort -u | wc -l)
  [ "$cliques" = 1 ] || fail "ft spread over $cliques cliques"
  no_failed_writes a
  stop_tessera a
}
