#!/bin/bash
# every manifest of examples/, tests/scenarios/ and deploy/manifests/ (the chart, rendered) is
# accepted by the API server (dry run)
scenario() {
  fresh_cluster
  local dir f ns n=0 refused=0 out files
  for dir in $(find "$REPO/examples" "$REPO/tests/scenarios" "$REPO/deploy/manifests" -name '*.yaml' \
                 -exec dirname {} \; | sort -u); do
    files=()
    for f in "$dir"/*.yaml; do
      grep -qE '^apiVersion:' "$f" || continue                # expectations, not manifests
      grep -qE '^kind: SchedulerConfiguration' "$f" && continue # tessera.yaml
      files+=("$f")
    done
    [ ${#files[@]} -gt 0 ] || continue
    # Each folder is a cluster of its own: what it would already have (its namespaces with
    # default ServiceAccounts, its PriorityClasses) is created for real first, the
    # PriorityClasses of the previous folder removed.
    k delete priorityclass -l '!tessera-keep' --ignore-not-found >/dev/null 2>&1
    for ns in $(grep -hoE 'namespace: *[a-z0-9-]+' "${files[@]}" | sed 's/namespace: *//' | sort -u); do
      namespace "$ns"
    done
    for f in "${files[@]}"; do # the PriorityClasses, for real (pods are checked against them)
      out=$(python3 -c 'import sys, yaml; print("---\n".join(yaml.safe_dump(d) for d in yaml.safe_load_all(open(sys.argv[1])) if d and d.get("kind") == "PriorityClass"))' "$f" |
        k create -f - 2>&1 | grep -iE 'error|invalid|forbidden' | grep -v 'no objects passed')
      [ -z "$out" ] || { refused=$((refused + 1)); say "refused: ${f#$REPO/}"; echo "      $out"; }
    done
    for f in "${files[@]}"; do
      n=$((n + 1))
      # create, as a controller or kubectl create would (server-side apply would also treat a
      # snapshot's metadata.uid as a precondition); what exists already is not a refusal
      out=$(k create --dry-run=server -f "$f" 2>&1 | grep -iE 'error|invalid|forbidden' |
        grep -v 'AlreadyExists\|priorityclasses.scheduling.k8s.io')
      if [ -n "$out" ]; then
        refused=$((refused + 1))
        say "refused: ${f#$REPO/}"
        echo "$out" | head -5 | sed 's/^/      /'
      fi
    done
  done
  say "$n manifest files, $refused refused"
  [ "$refused" -eq 0 ] || fail "the API server refuses manifests Tessera ships"
}
