#!/bin/sh
# Checks for the Debian packages Tessera needs to build and test, and installs the missing
# ones with apt-get when run as root. Otherwise prints the exact command and stops.
# `deps.sh fuzz` also wants clang and its libFuzzer runtime (make fuzz, make fuzz-smoke);
# `deps.sh valgrind` wants valgrind (make valgrind).
set -eu
PKGS="build-essential pkg-config libcurl4-openssl-dev libjansson-dev libuv1-dev libyaml-dev libssl-dev libnghttp2-dev libzip-dev libcmocka-dev clang-format"
for extra in "$@"; do
  case "$extra" in
  fuzz) PKGS="$PKGS clang libclang-rt-14-dev" ;;
  valgrind) PKGS="$PKGS valgrind" ;;
  *) echo "deps.sh: unknown extra '$extra' (fuzz, valgrind)" >&2; exit 2 ;;
  esac
done
missing=""
for p in $PKGS; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
echo "tessera: missing Debian packages:$missing" >&2
if [ "$(id -u)" = 0 ]; then
  echo "tessera: installing them with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >&2
  exit 0
fi
echo "tessera: run this as root, then run make again:" >&2
echo "  sudo apt-get install -y$missing" >&2
exit 1
