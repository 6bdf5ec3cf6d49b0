#!/usr/bin/env bash
# Builds a release or test tool from its pinned tools module (go.mod + go.sum with a `tool`
# line), using only the Go module proxy: no downloaded binary.
#   helm  hack/helm-tools  the chart tests of `ork bundle --helm` (helm lint, helm template)
#   ko    hack/ko-tools    the release image check (hack/image-check.sh)
#   goreleaser  hack/goreleaser-tools  the release config check and snapshot
#                                      (hack/goreleaser-check.sh)
#   golangci-lint  hack/golangci-lint-tools  `make lint` (config: .golangci.yml)
#
# Usage:
#   hack/build-tool.sh TOOL            build into the cache dir (`make helm-bin` runs it for helm)
#   hack/build-tool.sh TOOL pin VER    regenerate the tools module for VER, then review and
#                                      commit its go.mod/go.sum
#
# The cache dir is ${ORK_<TOOL>_CACHE:-$HOME/.cache/ork/<tool>/<version>}; a binary already
# there is kept. A cold build takes several minutes on 2 cores (helm about 8), a warm one
# seconds. Stdout gets only the cache dir; progress goes to stderr.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOL=${1:-}
case "$TOOL" in
  helm) MODULE=helm.sh/helm/v4; PKG=$MODULE/cmd/helm; CACHE_VAR=ORK_HELM_CACHE
        VERSION_VAR=$MODULE/internal/version.version ;;  # what `helm version` reports
  ko)   MODULE=github.com/google/ko; PKG=$MODULE; CACHE_VAR=ORK_KO_CACHE
        VERSION_VAR=$MODULE/pkg/commands.Version ;;
  goreleaser) MODULE=github.com/goreleaser/goreleaser/v2; PKG=$MODULE; CACHE_VAR=ORK_GORELEASER_CACHE
        VERSION_VAR=main.version ;;
  golangci-lint) MODULE=github.com/golangci/golangci-lint/v2; PKG=$MODULE/cmd/golangci-lint
        CACHE_VAR=ORK_GOLANGCI_LINT_CACHE; VERSION_VAR=main.version ;;
  *) echo "usage: $0 helm|ko|goreleaser|golangci-lint [pin VERSION]" >&2; exit 2 ;;
esac
TOOLS="$ROOT/hack/$TOOL-tools"
T0=$(date +%s)

log() { echo "[build-$TOOL +$(( $(date +%s) - T0 ))s] $*" >&2; }

if [ "${2:-}" = pin ]; then
  [ -n "${3:-}" ] || { echo "usage: $0 $TOOL pin VERSION" >&2; exit 2; }
  rm -f "$TOOLS/go.mod" "$TOOLS/go.sum"
  mkdir -p "$TOOLS"
  cd "$TOOLS"
  go mod init "github.com/orkspace/ork/hack/$TOOL-tools" >/dev/null 2>&1
  go get -tool "$PKG@$3"
  log "pinned $TOOLS/go.mod: $MODULE $3; commit go.mod and go.sum"
  exit 0
fi

# The pinned version, read from go.mod without the go command.
VERSION=$(awk -v m="$MODULE" '$1 == m {print $2; exit}' "$TOOLS/go.mod")
[ -n "$VERSION" ] || { echo "no $MODULE in $TOOLS/go.mod; run: $0 $TOOL pin VERSION" >&2; exit 1; }
OUT=${!CACHE_VAR:-$HOME/.cache/ork/$TOOL/$VERSION}
mkdir -p "$OUT"
if [ -x "$OUT/$TOOL" ]; then
  log "$TOOL: present in $OUT, skipped"
  echo "$OUT"
  exit 0
fi

log "building $TOOL $VERSION into $OUT (the first build also downloads the pinned modules)"
LDFLAGS="-s -w -buildid= -X $VERSION_VAR=$VERSION"
# GOWORK=off and -mod=readonly: build exactly what go.mod/go.sum pin, never edit them.
export CGO_ENABLED=0 GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=readonly"
# Build next to the target and rename, so an interrupted build never leaves a binary that
# the skip check above would take for a finished one.
(cd "$TOOLS" && go build -trimpath -ldflags "$LDFLAGS" -o "$OUT/.$TOOL.tmp" "$PKG")
mv "$OUT/.$TOOL.tmp" "$OUT/$TOOL"
log "built $TOOL in $(( $(date +%s) - T0 ))s ($(du -h "$OUT/$TOOL" | cut -f1))"
echo "$OUT"
