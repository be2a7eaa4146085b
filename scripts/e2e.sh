#!/bin/bash
# scripts/e2e.sh BUILD [SCENARIO...]: the end-to-end scenarios of tests/e2e/ against a real
# kube-apiserver v1.34 + etcd. TESSERA_APISERVER names the folder tests/e2e/apiserver/build.sh
# installed (e.g. /tmp/apiserver); without it (or without kubectl) the scenarios are skipped,
# as in CI. Each scenario gets a fresh API server; logs go to BUILD/e2e/.
set -u
BUILD=${1:-build}
shift
REPO=$(cd "$(dirname "$0")/.." && pwd)
APISERVER=${TESSERA_APISERVER:-}
if [ -z "$APISERVER" ] || [ ! -x "$APISERVER/start.sh" ]; then
  echo "e2e: skipped: set TESSERA_APISERVER to the folder of a kube-apiserver built with"
  echo "     tests/e2e/apiserver/build.sh (README there; e.g. TESSERA_APISERVER=/tmp/apiserver)"
  exit 0
fi
if ! command -v kubectl >/dev/null || ! command -v curl >/dev/null; then
  echo "e2e: skipped: kubectl and curl are needed on PATH"
  exit 0
fi
case "$BUILD" in /*) ;; *) BUILD=$REPO/$BUILD ;; esac # relative to the repository, or absolute
TESSERA=$BUILD/tessera
export APISERVER REPO TESSERA
failed="" passed=0
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=("$REPO"/tests/e2e/[0-9]*.sh)
for f in "${scenarios[@]}"; do
  name=$(basename "$f" .sh)
  E2E_OUT=$BUILD/e2e/$name
  rm -rf "$E2E_OUT"
  mkdir -p "$E2E_OUT"
  export E2E_OUT
  echo "== $name: $(sed -n '2s/^# //p' "$f")"
  start=$(date +%s)
  if (set -u; . "$REPO/tests/e2e/lib.sh"; . "$f"; scenario) 2>&1 | tee "$E2E_OUT/output.txt"; [ "${PIPESTATUS[0]}" = 0 ]; then
    echo "PASS $name ($(($(date +%s) - start)) s)"
    passed=$((passed + 1))
  else
    echo "FAIL $name (logs in $E2E_OUT)"
    failed="$failed $name"
  fi
  for p in "$E2E_OUT"/tessera-*.pid; do [ -f "$p" ] && kill -9 "$(cat "$p")" 2>/dev/null; done
done
"$APISERVER/stop.sh" >/dev/null 2>&1
echo
if [ -n "$failed" ]; then
  echo "e2e: $passed passed; FAILED:$failed"
  exit 1
fi
echo "e2e: all $passed scenarios passed against $("$APISERVER/bin/kube-apiserver" --version 2>/dev/null)"
