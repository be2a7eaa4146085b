#!/bin/sh
# Checks for the Debian packages Tessera needs to build and test, and installs the missing
# ones with apt-get when run as root. Otherwise prints the exact command and stops.
set -eu
PKGS="build-essential pkg-config libcurl4-openssl-dev libjansson-dev libuv1-dev libyaml-dev libssl-dev libnghttp2-dev libcmocka-dev clang-format"
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
