#!/bin/bash
# DRA: a named claim and a claim from a template, allocated, reserved, then the pod bound
scenario() {
  fresh_cluster
  namespace team-a
  node gpu-0 0 zone=a
  k apply -f - >/dev/null <<YAML || fail "DRA objects"
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-0-gpus}
spec:
  driver: gpu.example.com
  nodeName: gpu-0
  pool: {name: gpu-0, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {model: {string: a100}}, capacity: {memory: {value: 80Gi}}}
  - {name: gpu-1, attributes: {model: {string: a100}}, capacity: {memory: {value: 80Gi}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big-gpu, namespace: team-a}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: team-a}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
YAML
  start_tessera a
  k create -f - >/dev/null <<YAML || fail "pods"
apiVersion: v1
kind: Pod
metadata: {name: named, namespace: team-a}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox}]
  resourceClaims: [{name: gpu, resourceClaimName: big-gpu}]
---
apiVersion: v1
kind: Pod
metadata: {name: templated, namespace: team-a}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
YAML
  wait_until 20 bound team-a named || fail "named not bound"
  k get resourceclaim big-gpu -n team-a -o jsonpath='{.status.allocation.devices.results[0].device} reserved for {.status.reservedFor[0].name}; finalizers {.metadata.finalizers}{"\n"}' | sed 's/^/    big-gpu: /'
  k get resourceclaim big-gpu -n team-a -o jsonpath='{.status.reservedFor[0].name}' | grep -q named || fail "not reserved"
  k get resourceclaim big-gpu -n team-a -o jsonpath='{.metadata.finalizers}' | grep -q delete-protection || fail "no finalizer"
  # The templated pod waits for the claim controller; the harness plays it.
  sleep 1
  bound team-a templated && fail "templated bound without its claim"
  say "templated waits: $(unschedulable_message team-a templated)"
  k create -f - >/dev/null <<YAML || fail "generated claim"
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: templated-gpu-x7k2p
  namespace: team-a
  ownerReferences: [{apiVersion: v1, kind: Pod, name: templated, uid: $(k get pod templated -n team-a -o jsonpath='{.metadata.uid}'), controller: true}]
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu.example.com}}
YAML
  k patch pod templated -n team-a --subresource=status --type=merge \
    -p '{"status":{"resourceClaimStatuses":[{"name":"gpu","resourceClaimName":"templated-gpu-x7k2p"}]}}' >/dev/null ||
    fail "pod status"
  wait_until 20 bound team-a templated || fail "templated not bound"
  a=$(k get resourceclaim big-gpu -n team-a -o jsonpath='{.status.allocation.devices.results[0].device}')
  b=$(k get resourceclaim templated-gpu-x7k2p -n team-a -o jsonpath='{.status.allocation.devices.results[0].device}')
  say "devices: big-gpu=$a templated=$b"
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "one device for two claims"
  no_failed_writes a
  stop_tessera a
}
