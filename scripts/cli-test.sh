#!/bin/sh
# The command line as Kubernetes tools read it: for every subcommand, `--help` prints the
# usage on standard output with status 0, and every flag that usage lists is accepted in both
# spellings (`--flag value` and `--flag=value`; a boolean bare and as `--flag=true`), and so
# are the flags every subcommand has (-v, -v=N, --v=N, --logging-format=json). An unknown flag
# is a usage error (status 2) that names it.
set -u
T=${1:-build/tessera}
fail() { echo "cli-test: $*"; exit 1; }
checked=0
value_of() { # USAGE FLAG: the word after FLAG in the synopsis, if any
  echo "$1" | grep -oE -- "(^|[ [(,|])$2 [A-Za-z][^] )]*" | head -n 1 | sed "s/^[ [(,|]*$2 //"
}
for sub in replay run snapshot check bench simulate rbac probe version; do
  out=$("$T" $sub --help 2>/tmp/cli-test-err.$$)
  st=$?
  [ "$st" -eq 0 ] || fail "tessera $sub --help: status $st"
  [ -s /tmp/cli-test-err.$$ ] && fail "tessera $sub --help wrote to stderr: $(cat /tmp/cli-test-err.$$)"
  echo "$out" | grep -q "^usage: tessera $sub" || fail "tessera $sub --help: no usage line"
  # each flag of the usage, with the word after it in the synopsis ("FILE", "text|json")
  flags=$(echo "$out" | grep -oE -- '(^|[ [(,|])--?[a-z][a-z-]*' | sed 's/^[ [(,|]//' | sort -u)
  [ -n "$flags" ] || fail "tessera $sub --help lists no flag"
  for f in $flags; do
    case $f in -) continue ;; esac
    # the value it takes, from the synopsis: an upper-case word or a choice; none for a boolean
    word=$(value_of "$out" "$f")
    if [ -z "$word" ]; then # "-o, --output": the word the other spelling takes
      other=$(echo "$out" | grep -oE -- "-[a-z], --[a-z-]+" | tr -d ',' |
        awk -v f="$f" '$1 == f { print $2 } $2 == f { print $1 }' | head -n 1)
      [ -n "$other" ] && word=$(value_of "$out" "$other")
    fi
    case $word in
    [A-Z]* | *'|'*) value=${word%%|*} ;;
    *) value="" ;;
    esac
    if [ -n "$value" ]; then
      "$T" $sub "$f" "$value" --help >/dev/null 2>&1 || fail "tessera $sub $f $value is refused"
      case $f in
      --*) "$T" $sub "$f=$value" --help >/dev/null 2>&1 || fail "tessera $sub $f=$value is refused" ;;
      esac
    else
      "$T" $sub "$f" --help >/dev/null 2>&1 || fail "tessera $sub $f is refused"
      case $f in
      --help | -h) ;;
      --*) "$T" $sub "$f=true" --help >/dev/null 2>&1 || fail "tessera $sub $f=true is refused" ;;
      esac
    fi
    checked=$((checked + 1))
  done
  for g in -v -v=3 --v=4 --logging-format=json; do
    "$T" $sub $g --help >/dev/null 2>&1 || fail "tessera $sub $g is refused"
  done
  err=$("$T" $sub --no-such-flag --help 2>&1 >/dev/null)
  st=$?
  [ "$st" -eq 2 ] || fail "tessera $sub --no-such-flag: status $st, not 2"
  echo "$err" | grep -q -- 'unknown flag --no-such-flag' || fail "tessera $sub: the error does not name the flag: $err"
done
rm -f /tmp/cli-test-err.$$
# -o yaml writes YAML documents, -o json JSON lines
"$T" replay examples/cluster -o yaml | grep -q '^action: bind$' || fail "replay -o yaml"
"$T" replay examples/cluster --output=json | head -n 1 | grep -q '^{"action":' || fail "replay --output=json"
# --logging-format=json: one JSON object per line, with ts, level and msg
line=$("$T" run --logging-format=json --kubeconfig /nonexistent/kubeconfig 2>&1 >/dev/null | head -n 1)
echo "$line" | grep -Eq '^\{"ts":[0-9]+\.[0-9]{3},"level":"info","msg":"tessera commit [^"]*"\}$' ||
  fail "not a JSON log line: $line"
echo "flags checked: $checked"
