#!/bin/bash
# leader election: two replicas, only the leader writes; when it dies the other takes over
scenario() {
  fresh_cluster
  namespace team-a
  node gpu-0 8
  start_tessera a
  start_tessera b
  pod team-a p0 1
  wait_until 20 bound team-a p0 || fail "p0 not bound"
  holder=$(k get lease tessera -n "$E2E_NS" -o jsonpath='{.spec.holderIdentity}')
  say "leader: $holder"
  case $holder in tessera-a) leader=a other=b ;; tessera-b) leader=b other=a ;; *) fail "no leader" ;; esac
  [ "$(metric $other tessera_leader)" = 0 ] || fail "two leaders"
  # the dashboard's sums over both replicas: the leader's alone (the standby exports no gauge)
  sum=$(( $(metric_sum a tessera_gpu_allocated) + $(metric_sum b tessera_gpu_allocated) ))
  [ "$sum" = 1 ] || fail "sum of tessera_gpu_allocated over both replicas is $sum, want 1"
  [ "$(metric_sum $other tessera_gpu_allocatable)" = 0 ] || fail "the standby exports cluster gauges"
  stop_tessera $leader KILL
  pod team-a p1 1
  wait_until 30 bound team-a p1 || fail "p1 not bound after failover"
  say "after failover: $(k get lease tessera -n "$E2E_NS" -o jsonpath='{.spec.holderIdentity}') bound p1"
  [ "$(metric $other tessera_leader)" = 1 ] || fail "the standby did not take over"
  no_failed_writes $other
  stop_tessera $other
  [ -z "$(k get lease tessera -n "$E2E_NS" -o jsonpath='{.spec.holderIdentity}')" ] || fail "lease not released"
}
