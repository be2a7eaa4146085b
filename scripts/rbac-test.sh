#!/bin/sh
# The chart's RBAC is what `tessera rbac --helm` prints from the code's tables (the informers'
# kinds and kubeclient/access.c): `make rbac` regenerates it after a change.
set -u
T=${1:-build/tessera}
F=deploy/helm/tessera/templates/rbac.yaml
"$T" rbac --helm | diff -u "$F" - >/dev/null || {
  "$T" rbac --helm | diff -u "$F" - | head -40
  echo "rbac-test: $F is not what \`tessera rbac --helm\` prints: run \`make rbac\`"
  exit 1
}
err=$("$T" rbac --bogus 2>&1)
[ $? -eq 2 ] || { echo "rbac-test: a stray argument did not give status 2"; exit 1; }
echo "$err" | grep -q 'unknown flag --bogus' || { echo "rbac-test: $err"; exit 1; }
echo "rbac: $F is current ($(grep -c '^- apiGroups' "$F") rules)"
