#!/usr/bin/env bash
# Builds helm for ork's chart tests (`ork bundle --helm`: helm lint, helm template) from the
# pinned tools module hack/helm-tools (go.mod + go.sum with a `tool` line), using only the Go
# module proxy: no downloaded binary.
#
# Usage:
#   hack/build-helm.sh            build into the cache dir (what `make helm-bin` runs)
#   hack/build-helm.sh pin VER    regenerate hack/helm-tools for helm.sh/helm/v4 VER (v4.X.Y),
#                                 then review and commit go.mod/go.sum
#
# The cache dir is ${ORK_HELM_CACHE:-$HOME/.cache/ork/helm/<version>}; a binary already there
# is kept. A cold build takes a few minutes on 2 cores, a warm one seconds. Stdout gets only
# the cache dir; progress goes to stderr.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/hack/helm-tools"
MODULE=helm.sh/helm/v4
T0=$(date +%s)

log() { echo "[build-helm +$(( $(date +%s) - T0 ))s] $*" >&2; }

if [ "${1:-}" = pin ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 pin v4.X.Y" >&2; exit 2; }
  rm -f "$TOOLS/go.mod" "$TOOLS/go.sum"
  mkdir -p "$TOOLS"
  cd "$TOOLS"
  go mod init github.com/orkspace/ork/hack/helm-tools >/dev/null 2>&1
  go get -tool "$MODULE/cmd/helm@$2"
  log "pinned $TOOLS/go.mod: helm $2; commit go.mod and go.sum"
  exit 0
fi

# The pinned version, read from go.mod without the go command.
VERSION=$(awk -v m="$MODULE" '$1 == m {print $2; exit}' "$TOOLS/go.mod")
[ -n "$VERSION" ] || { echo "no $MODULE in $TOOLS/go.mod; run: $0 pin v4.X.Y" >&2; exit 1; }
OUT=${ORK_HELM_CACHE:-$HOME/.cache/ork/helm/$VERSION}
mkdir -p "$OUT"
if [ -x "$OUT/helm" ]; then
  log "helm: present in $OUT, skipped"
  echo "$OUT"
  exit 0
fi

log "building helm $VERSION into $OUT (the first build also downloads the pinned modules)"
# The version helm reports, as its own Makefile stamps it.
LDFLAGS="-s -w -buildid= -X $MODULE/internal/version.version=$VERSION"
# GOWORK=off and -mod=readonly: build exactly what go.mod/go.sum pin, never edit them.
export CGO_ENABLED=0 GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=readonly"
# Build next to the target and rename, so an interrupted build never leaves a binary that
# the skip check above would take for a finished one.
(cd "$TOOLS" && go build -trimpath -ldflags "$LDFLAGS" -o "$OUT/.helm.tmp" "$MODULE/cmd/helm")
mv "$OUT/.helm.tmp" "$OUT/helm"
log "built helm in $(( $(date +%s) - T0 ))s ($(du -h "$OUT/helm" | cut -f1))"
echo "$OUT"
