#!/bin/bash
# tessera explain against a running Tessera: /explain/NS/NAME on the metrics endpoint answers
# who may get the pod (a SubjectAccessReview with the pod as resource, asked of the real API
# server): a ServiceAccount with a Role to get pods in team-a reads why team-a/second waits
# (WaitingForQuota in ClusterQueue cq, first in line, team-a/first holding the quota, the
# workload of another namespace ahead of it not named), one without gets 403 naming it, no
# token 401; a pod that does not exist is 404; `tessera explain --server` prints the same as
# text. Then, without metricsSecure, the endpoint answers anyone, as /metrics does.
scenario() {
  fresh_cluster
  namespace team-a
  namespace team-b
  node gpu-0 4 pool=gpu
  gpu_queue 2
  k apply -f - >/dev/null <<YAML || fail "team-b's LocalQueue"
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team-b}
spec: {clusterQueue: cq}
YAML
  local mport=$((HEALTH_BASE + 41)) reader nobody url out code
  k create serviceaccount reader -n team-a >/dev/null || fail "ServiceAccount reader"
  k create serviceaccount nobody -n team-a >/dev/null || fail "ServiceAccount nobody"
  k create role pod-reader -n team-a --verb=get --resource=pods >/dev/null || fail "Role"
  k create rolebinding reader -n team-a --role=pod-reader --serviceaccount=team-a:reader >/dev/null ||
    fail "RoleBinding"
  reader=$(k create token reader -n team-a) || fail "token"
  nobody=$(k create token nobody -n team-a) || fail "token"
  start_tessera a "metricsAddress: 127.0.0.1:$mport
metricsSecure: true"
  # first holds the queue's 2 GPUs; early (team-b, older) and second (team-a) wait for quota
  k create -f - >/dev/null <<YAML || fail "pods"
apiVersion: v1
kind: Pod
metadata: {name: first, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq},
  annotations: {tessera.dev/expected-duration: 1h}}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "2"}}}]
YAML
  wait_until 30 bound team-a first || fail "team-a/first was not bound"
  k create -f - >/dev/null <<YAML || fail "pods"
apiVersion: v1
kind: Pod
metadata: {name: early, namespace: team-b, labels: {kueue.x-k8s.io/queue-name: lq},
  annotations: {tessera.dev/expected-duration: 30m}}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "2"}}}]
YAML
  sleep 1.1 # a later creationTimestamp (seconds) for second
  k create -f - >/dev/null <<YAML || fail "pods"
apiVersion: v1
kind: Pod
metadata: {name: second, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  schedulerName: tessera
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: "2"}}}]
YAML
  wait_until 30 has_unschedulable_message team-a second || fail "team-a/second got no reason"
  url="https://127.0.0.1:$mport/explain/team-a/second"
  status() { # status TOKEN URL: the HTTP status, the body in explain.json
    if [ -n "$1" ]; then
      curl -sk -o "$E2E_OUT/explain.json" -w '%{http_code}' -H "Authorization: Bearer $1" "$2"
    else
      curl -sk -o "$E2E_OUT/explain.json" -w '%{http_code}' "$2"
    fi
  }
  code=$(status "" "$url")
  [ "$code" = 401 ] || fail "no token: $code, want 401"
  code=$(status "$nobody" "$url")
  [ "$code" = 403 ] || fail "ServiceAccount nobody: $code, want 403"
  grep -q "Authorization denied for user system:serviceaccount:team-a:nobody" "$E2E_OUT/explain.json" ||
    fail "the 403 does not name the user: $(cat "$E2E_OUT/explain.json")"
  code=$(status "$reader" "$url")
  [ "$code" = 200 ] || fail "ServiceAccount reader: $code, want 200: $(cat "$E2E_OUT/explain.json")"
  out=$(cat "$E2E_OUT/explain.json")
  # the answer is compact JSON (no spaces): checked field by field with grep
  for want in '"state":"Pending"' '"why":"WaitingForQuota"' '"clusterQueue":"cq"' \
    '"positionInClusterQueue":1' '"ahead":["(a workload of another namespace)"]' \
    '"usage":"2"' '"missing":"2"'; do
    grep -qF "$want" <<<"$out" || fail "no $want in $out"
  done
  grep -q 'early' <<<"$out" && fail "team-b's pod named to team-a's reader: $out"
  # the estimate: first ends an hour from now (no kubelet here: no startTime, so it started
  # now), early (older) takes the quota for 30 min, then second starts: about 1h30m from now
  local in
  in=$(grep -o '"inSeconds":[0-9]*' <<<"$out" | cut -d: -f2)
  [ -n "$in" ] && [ "$in" -ge 5300 ] && [ "$in" -le 5400 ] || fail "estimate: $in s, want ~5400: $out"
  # the forward run gave the live model back: nothing was bound or evicted by it
  sleep 1
  bound team-a second && fail "team-a/second was bound after the estimate"
  [ "$(node_of team-a first)" = gpu-0 ] || fail "team-a/first moved after the estimate"
  bound team-b early && fail "team-b/early was bound after the estimate"
  code=$(status "$reader" "https://127.0.0.1:$mport/explain/team-a/nope")
  [ "$code" = 404 ] || fail "a pod the reader may get that does not exist: $code, want 404"
  code=$(status "$reader" "https://127.0.0.1:$mport/explain/team-b/early")
  [ "$code" = 403 ] || fail "team-a's reader on a pod of team-b: $code, want 403"
  say "explain: none 401, nobody 403, reader 200 (WaitingForQuota, number 2 in cq, team-b's not named, starts in ~1h30m), 404 for no such pod, 403 in team-b"
  k create token reader -n team-a >"$E2E_OUT/reader.token" || fail "token"
  out=$("$TESSERA" explain team-a/second --server "https://127.0.0.1:$mport" \
    --token-file "$E2E_OUT/reader.token" --insecure-skip-tls-verify) || fail "tessera explain --server: $out"
  grep -q "pod team-a/second: pending (WaitingForQuota)" <<<"$out" || fail "text: $out"
  grep -q "in line: number 2 in the ClusterQueue" <<<"$out" || fail "text: $out"
  say "tessera explain --server: the same as text"

  # Kueue's visibility API on the same endpoint: get on clusterqueues/pendingworkloads (group
  # visibility.kueue.x-k8s.io), as Kueue's aggregated server asks of its callers
  local vis="https://127.0.0.1:$mport/apis/visibility.kueue.x-k8s.io/v1beta2"
  code=$(status "$reader" "$vis/clusterqueues/cq/pendingworkloads")
  [ "$code" = 403 ] || fail "pendingworkloads without the right: $code, want 403"
  k apply -f - >/dev/null <<YAML || fail "ClusterRole pending-reader"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pending-reader}
rules:
- apiGroups: [visibility.kueue.x-k8s.io]
  resources: [clusterqueues/pendingworkloads]
  verbs: [get]
YAML
  k create clusterrolebinding pending-reader --clusterrole=pending-reader --serviceaccount=team-a:reader >/dev/null ||
    fail "ClusterRoleBinding pending-reader"
  # the earlier deny is kept 30 s (as controller-runtime's secure serving keeps it)
  listed() { [ "$(status "$reader" "$vis/clusterqueues/cq/pendingworkloads")" = 200 ]; }
  wait_until 45 listed || fail "pendingworkloads with the right: $(cat "$E2E_OUT/explain.json")"
  out=$(cat "$E2E_OUT/explain.json")
  for want in '"kind":"PendingWorkloadsSummary"' '"name":"early","namespace":"team-b"' \
    '"positionInClusterQueue":0' '"name":"second","namespace":"team-a"' '"positionInClusterQueue":1' \
    '"localQueueName":"lq"'; do
    grep -qF "$want" <<<"$out" || fail "no $want in $out"
  done
  code=$(status "$reader" "$vis/clusterqueues/cq/pendingworkloads?limit=1&offset=1")
  out=$(cat "$E2E_OUT/explain.json")
  grep -qF '"name":"second"' <<<"$out" && ! grep -qF '"name":"early"' <<<"$out" ||
    fail "limit=1&offset=1: $out"
  code=$(status "$reader" "$vis/clusterqueues/cq/pendingworkloads?limit=x")
  [ "$code" = 400 ] || fail "limit=x: $code, want 400"
  code=$(status "admin-token-0123456789" "$vis/clusterqueues/nope/pendingworkloads")
  [ "$code" = 404 ] && grep -qF '"reason":"NotFound"' "$E2E_OUT/explain.json" ||
    fail "no such ClusterQueue: $code $(cat "$E2E_OUT/explain.json")"
  code=$(status "admin-token-0123456789" "$vis/namespaces/team-a/localqueues/lq/pendingworkloads")
  out=$(cat "$E2E_OUT/explain.json")
  [ "$code" = 200 ] && grep -qF '"name":"second"' <<<"$out" && grep -qF '"positionInLocalQueue":0' <<<"$out" &&
    ! grep -qF '"name":"early"' <<<"$out" || fail "team-a's LocalQueue: $code $out"
  out=$("$TESSERA" explain --clusterqueue cq --server "https://127.0.0.1:$mport" \
    --token-file "$E2E_OUT/reader.token" --insecure-skip-tls-verify) || fail "--clusterqueue --server: $out"
  grep -q "team-a/second" <<<"$out" || fail "--clusterqueue text: $out"
  say "pendingworkloads: 403 without get on it, 200 with (early then second), limit/offset, 400, 404 Status, LocalQueue, text"
  stop_tessera a

  start_tessera b "metricsAddress: 127.0.0.1:$mport"
  code=$(curl -s -o "$E2E_OUT/explain.json" -w '%{http_code}' "http://127.0.0.1:$mport/explain/team-a/second")
  [ "$code" = 200 ] || fail "without metricsSecure: $code, want 200"
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/explain/team-a/nope")
  [ "$code" = 404 ] || fail "no such pod: $code, want 404"
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/explain/Team_A/x")
  [ "$code" = 404 ] || fail "a namespace that cannot be one: $code, want 404"
  say "without metricsSecure: 200, no such pod 404, a bad path 404"
  stop_tessera b
}
