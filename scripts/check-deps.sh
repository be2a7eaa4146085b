#!/bin/sh
# The rooms of Tessera and which others each may include: arrows only point down, so that
# knowledge has one home (docs/architecture.md). Run by `make check-style` and CI; fails
# naming every include that breaks the table. tests/, bench/ and fuzz/ may include anything.
set -eu
cd "$(dirname "$0")/.."

# room: the rooms it may include (its own is always allowed)
allowed() {
  case "$1" in
  common) echo "" ;;
  input) echo "common" ;;
  cel) echo "common" ;;
  model) echo "common" ;;
  queueing) echo "common model" ;;
  dra) echo "common model cel" ;;
  scheduler) echo "common model queueing dra" ;;
  kubeclient) echo "common input" ;;
  live) echo "common model queueing dra scheduler" ;;
  config) echo "common input model queueing dra" ;;
  gen) echo "common model" ;;
  sim) echo "common model queueing dra scheduler" ;;
  cmd) echo "common input cel model queueing dra scheduler kubeclient live config gen sim" ;;
  *) echo "?" ;;
  esac
}

# single headers a room may include from rooms it may not: the settings of the rooms config/
# fills, which sit apart from those rooms' interfaces so that config/ knows none of them
headers_of_others() {
  case "$1" in
  config) echo "scheduler/sched_config.h kubeclient/kc_opts.h" ;;
  *) echo "" ;;
  esac
}

# system headers only some rooms may use: header, then the rooms
only_in() {
  case "$1" in
  jansson.h) echo "input cel model dra queueing scheduler kubeclient live config gen sim cmd" ;;
  yaml.h) echo "input" ;;
  curl/curl.h | nghttp2/nghttp2.h | openssl/*) echo "kubeclient" ;;
  uv.h) echo "kubeclient cmd" ;;
  *) echo "*" ;;
  esac
}

bad=0
rooms="common input cel model queueing dra scheduler kubeclient live config gen sim cmd"
for room in $rooms; do
  ok=$(allowed "$room")
  files=$(headers_of_others "$room")
  for f in $(git ls-files "$room/*.c" "$room/*.h" 2>/dev/null || ls "$room"/*.[ch]); do
    # project headers
    for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
      to=${inc%%/*}
      [ "$to" = "$inc" ] && continue
      [ "$to" = "$room" ] && continue
      case " $files " in *" $inc "*) continue ;; esac
      case " $ok " in *" $to "*) ;; *)
        echo "check-deps: $f includes $inc: $room may include only: ${ok:-nothing}"
        bad=$((bad + 1)) ;;
      esac
    done
    # system headers with one home
    for inc in $(sed -n 's/^#include <\([^>]*\)>.*/\1/p' "$f"); do
      where=$(only_in "$inc")
      [ "$where" = "*" ] && continue
      case " $where " in *" $room "*) ;; *)
        echo "check-deps: $f includes <$inc>: only $where may"
        bad=$((bad + 1)) ;;
      esac
    done
  done
done
for d in $(git ls-files '*.c' '*.h' | cut -d/ -f1 | sort -u); do
  case " $rooms tests bench fuzz " in *" $d "*) ;; *)
    case "$d" in *.c | *.h) ;; *)
      echo "check-deps: $d/ is not a room of the table (scripts/check-deps.sh)"
      bad=$((bad + 1)) ;;
    esac ;;
  esac
done
# Kubernetes' wire format of writes lives in model/ (model/wire.h): kubeclient/ sends bodies
# it is given, so no field or kind of a written object may appear in it
for f in $(git ls-files 'kubeclient/*.c' 'kubeclient/*.h' 2>/dev/null || ls kubeclient/*.[ch]); do
  if grep -n '"Binding"\|"Eviction"\|"Lease"\|"holderIdentity"\|"reservedFor"\|"allocation"\|"finalizers"\|"reportingController"\|"conditions"' "$f"; then
    echo "check-deps: $f knows the wire format of a write: encode it in model/wire.h"
    bad=$((bad + 1))
  fi
done
[ "$bad" -eq 0 ] || exit 1
echo "check-deps: $(echo "$rooms" | wc -w) rooms, every include points down"
