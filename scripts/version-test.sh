#!/bin/sh
# `tessera version`: the commit is the checkout's (when there is one), the date is ISO 8601
# UTC, JSON and YAML output have both fields, and a stray flag is a usage error (status 2) that
# names it.
set -u
T=${1:-build/tessera}
fail() { echo "version-test: $*"; exit 1; }
out=$("$T" version) || fail "tessera version failed"
echo "$out" | grep -Eq '^tessera commit [0-9a-f]{12}(-dirty)?, built [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' ||
  echo "$out" | grep -Eq '^tessera commit unknown, built ' || fail "unexpected text: $out"
if head=$(git rev-parse --short=12 HEAD 2>/dev/null); then
  case "$out" in
  "tessera commit $head,"* | "tessera commit $head-dirty,"*) ;;
  *) fail "built from $head, but says: $out" ;;
  esac
fi
json=$("$T" version --output json) || fail "tessera version --output json failed"
echo "$json" | grep -Eq '^\{"commit": ?"[^"]+", ?"buildDate": ?"[^"]+"\}$' || fail "unexpected JSON: $json"
yaml=$("$T" version -o yaml) || fail "tessera version -o yaml failed"
echo "$yaml" | grep -Eq '^commit: [0-9a-f]' || fail "unexpected YAML: $yaml"
err=$("$T" version --bogus 2>&1)
st=$?
[ "$st" -eq 2 ] || fail "a stray flag gave status $st, not 2"
echo "$err" | grep -q 'unknown flag --bogus' || fail "the usage error does not name the flag: $err"
echo "version: $out"
