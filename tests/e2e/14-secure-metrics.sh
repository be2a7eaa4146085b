#!/bin/bash
# /metrics over HTTPS for the tokens the real API server allows (metricsSecure), as Kueue and
# kube-scheduler serve it: Tessera, as its ServiceAccount with `tessera rbac`'s ClusterRole
# (create on tokenreviews and subjectaccessreviews), reviews each scrape's bearer token. A
# scraper ServiceAccount bound to the tessera-metrics-reader ClusterRole reads the metrics; one
# without gets 403 naming it; the static admin token is allowed through its group
# (system:masters: the review carries the groups); an unknown token and no token get 401; the
# probes' port serves no /metrics. Then a certificate directory, verified by the client.
scenario() {
  fresh_cluster
  local mport=$((HEALTH_BASE + 40)) prom nobody url out code
  k create serviceaccount prometheus -n "$E2E_NS" >/dev/null || fail "ServiceAccount prometheus"
  k create serviceaccount nobody -n "$E2E_NS" >/dev/null || fail "ServiceAccount nobody"
  k create clusterrolebinding e2e-metrics-reader --clusterrole=tessera-metrics-reader \
    --serviceaccount="$E2E_NS:prometheus" >/dev/null || fail "metrics-reader binding"
  prom=$(k create token prometheus -n "$E2E_NS") || fail "token"
  nobody=$(k create token nobody -n "$E2E_NS") || fail "token"
  start_tessera a "metricsAddress: 127.0.0.1:$mport
metricsSecure: true"
  url="https://127.0.0.1:$mport/metrics"
  # status TOKEN [CURL-ARGS...]: the HTTP status of a scrape with that bearer token ("": none)
  status() {
    local t=$1
    shift
    if [ -n "$t" ]; then
      curl -s -o "$E2E_OUT/scrape.txt" -w '%{http_code}' -H "Authorization: Bearer $t" "$@"
    else
      curl -s -o "$E2E_OUT/scrape.txt" -w '%{http_code}' "$@"
    fi
  }
  code=$(status "" -k "$url")
  [ "$code" = 401 ] || fail "no token: $code, want 401"
  code=$(status "not-a-token" -k "$url")
  [ "$code" = 401 ] || fail "unknown token: $code, want 401"
  code=$(status "$nobody" -k "$url")
  [ "$code" = 403 ] || fail "ServiceAccount nobody: $code, want 403"
  grep -q "Authorization denied for user system:serviceaccount:$E2E_NS:nobody" "$E2E_OUT/scrape.txt" ||
    fail "the 403 does not name the user: $(cat "$E2E_OUT/scrape.txt")"
  code=$(status "$prom" -k "$url")
  [ "$code" = 200 ] || fail "ServiceAccount prometheus: $code, want 200"
  grep -q '^tessera_api_requests_total{verb="create",resource="tokenreviews",code="201"}' "$E2E_OUT/scrape.txt" ||
    fail "no TokenReview counted: $(grep tokenreviews "$E2E_OUT/scrape.txt")"
  grep -q '^tessera_api_requests_total{verb="create",resource="subjectaccessreviews",code="201"}' "$E2E_OUT/scrape.txt" ||
    fail "no SubjectAccessReview counted"
  code=$(status "admin-token-0123456789" -k "$url")
  [ "$code" = 200 ] || fail "admin (group system:masters): $code, want 200"
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(health_port a)/metrics")
  [ "$code" = 404 ] || fail "/metrics on the probes' port: $code, want 404"
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$mport/metrics")
  [ "$code" = 000 ] || fail "plain HTTP on the TLS port answered $code"
  say "scrapes: none 401, unknown 401, nobody 403, prometheus 200, admin 200, probes' port 404"
  stop_tessera a

  local dir="$E2E_OUT/metrics-tls"
  mkdir -p "$dir"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
    -keyout "$dir/tls.key" -out "$dir/tls.crt" -subj /CN=tessera-metrics \
    -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || fail "openssl could not make a certificate"
  start_tessera b "metricsAddress: 127.0.0.1:$mport
metricsSecure: true
metricsCertDir: $dir"
  code=$(status "$prom" --cacert "$dir/tls.crt" "$url")
  [ "$code" = 200 ] || fail "verified against metricsCertDir's certificate: $code, want 200"
  say "certificate directory: verified by the client"
  stop_tessera b
}
