#!/bin/sh
# No hidden process state below cmd/: every mutable static (file-scope or in a function) and
# every thread-local in the library rooms must be in the list below, with its reason. Caches and
# registries hang off an object their caller owns (a cel_env, a cel_eval_ctx, a dra_cel, a
# model, a q_memo), so two of them never share one by accident and each is freed with its
# owner. Run by `make check-style` and CI; fails naming every declaration not listed.
set -eu
cd "$(dirname "$0")/.."

# file:name - why it is process-wide
allowed='
common/alloc.c:fail_countdown - the allocator'"'"'s failure injection for tests (like malloc, one per process)
common/alloc.c:fail_happened - the same
common/intern.c:intern_map - the string table: vocabulary pinned, label values counted and freed with their last holder
common/intern.c:intern_ready - the same
common/intern.c:intern_bytes - the same
common/log.c:log_level - the process'"'"'s log settings, set once by main
common/log.c:stamps - the same
common/log.c:log_format - the same
kubeclient/http.c:global - curl_global_init, once per process as libcurl requires
queueing/queues.c:waiting_marker - a sentinel address, never written
'

rooms="common input cel model queueing dra scheduler kubeclient live config gen sim"
bad=0
for room in $rooms; do
  for f in "$room"/*.c "$room"/*.h; do
    [ -f "$f" ] || continue
    # mutable statics: "static T name;" or "static T name = ..." (no parenthesis: not a function),
    # at file scope or indented in a function; and thread-locals
    grep -nE '^[[:space:]]*static [^(]*[;=]|__thread|_Thread_local' "$f" |
      grep -vE 'static const |static inline |^[0-9]+:[[:space:]]*(//|/\*|\*)' |
      while IFS= read -r line; do
        decl=${line#*:}
        name=$(printf '%s\n' "$decl" | sed -E 's/[[:space:]]*(=.*|;.*)$//; s/\[.*$//; s/.*[[:space:]*]//')
        if ! printf '%s\n' "$allowed" | grep -q "^$f:$name - "; then
          echo "check-state: $f:${line%%:*}: process-wide mutable state '$name': hang it off an owner, or list it with its reason in scripts/check-state.sh"
          echo x
        fi
      done
  done
done | { out=$(cat); printf '%s\n' "$out" | grep -v '^x$' | grep . >&2 || true; printf '%s\n' "$out" | grep -q '^x$' && exit 1; exit 0; }
echo "check-state: no hidden process state below cmd/ ($(printf '%s\n' "$allowed" | grep -c ' - ') listed)"
