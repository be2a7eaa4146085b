#!/bin/bash
# scripts/docs-test.sh TESSERA: every shell example of README.md and docs/ runs. A ```sh block
# follows a marker line: `<!-- docs-test -->` (run here: the block as one bash script, in a
# scratch directory where ./tessera is TESSERA and examples/ and tests/ are the repository's;
# it must exit 0), or `<!-- docs-test: skip: REASON -->` (it needs what a test cannot have: a
# cluster, Docker). A block without a marker fails the test, so no example goes untried.
set -u
T=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"
bad=0 ran=0 skipped=0
for f in README.md docs/*.md; do
  n=0 marker="" inblock=0 start=0 body=""
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    if [ $inblock = 1 ]; then
      if [ "$line" = '```' ]; then
        inblock=0
        if [ "$marker" = run ]; then
          dir=$(mktemp -d)
          ln -s "$T" "$dir/tessera"
          ln -s "$REPO/examples" "$dir/examples"
          ln -s "$REPO/tests" "$dir/tests"
          if (cd "$dir" && bash -e -o pipefail -c "$body") >"$dir.out" 2>&1; then
            ran=$((ran + 1))
          else
            echo "docs-test: $f:$start: the example failed:"
            sed 's/^/    /' "$dir.out" | tail -n 20
            bad=$((bad + 1))
          fi
          rm -rf "$dir" "$dir.out"
        fi
        marker=""
      else
        body="$body$line"$'\n'
      fi
      continue
    fi
    case "$line" in
    '<!-- docs-test -->') marker=run ;;
    '<!-- docs-test: skip: '*' -->') marker=skip ;;
    '```sh' | '```bash' | '```shell')
      inblock=1 start=$n body=""
      if [ -z "$marker" ]; then
        echo "docs-test: $f:$n: a shell example without <!-- docs-test --> or <!-- docs-test: skip: REASON -->"
        bad=$((bad + 1))
      elif [ "$marker" = skip ]; then
        skipped=$((skipped + 1))
      fi
      ;;
    '') ;;
    *) marker="" ;;
    esac
  done <"$f"
done
echo "docs-test: $ran examples ran, $skipped skipped (they need a cluster or Docker), $bad failed"
[ $bad = 0 ]
