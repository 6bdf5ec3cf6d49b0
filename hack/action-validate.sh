#!/usr/bin/env bash
# The "ork validate" step of action.yml (and usable in any CI): validates the Katalogs in
# $KATALOG_FILES (paths or globs, ** included, separated by spaces or newlines; default
# katalog.yaml) with -o github, so that GitHub Actions shows every finding as an annotation on
# the pull request. With $SARIF_FILE set it also writes a SARIF 2.1.0 log there, for
# github/codeql-action/upload-sarif. Exits as ork validate does: 0 valid (warnings allowed),
# 1 invalid, 2 usage error or unreadable file.
set -euo pipefail
shopt -s globstar nullglob

# Split $KATALOG_FILES at whitespace without expanding globs yet, then expand each pattern.
# shellcheck disable=SC2086,SC2206
set -f
patterns=(${KATALOG_FILES:-katalog.yaml})
set +f
args=()
for pattern in "${patterns[@]}"; do
  # shellcheck disable=SC2206
  matches=($pattern)
  if [ ${#matches[@]} -eq 0 ]; then
    matches=("$pattern") # no match: ork validate names the missing file (exit 2)
  fi
  for f in "${matches[@]}"; do args+=(-f "$f"); done
done

if [ -n "${SARIF_FILE:-}" ]; then
  rc=0
  ork validate "${args[@]}" -o sarif >"$SARIF_FILE" || rc=$?
  if [ "$rc" -gt 1 ]; then exit "$rc"; fi
fi
exec ork validate "${args[@]}" -o github
