#!/bin/sh
# clang-format dry run over every tracked C file; fails listing the files that differ. Then
# the include table (check-deps.sh) and the list of process-wide state (check-state.sh).
set -eu
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build/*')
[ -n "$files" ] || exit 0
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files
echo "check-style: $(echo "$files" | wc -w) files formatted"
scripts/check-deps.sh
scripts/check-state.sh
