#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kubectl and kube-controller-manager for ork's integration tests from the pinned tools
# module hack/k8s-tools (go.mod + go.sum with `tool` lines), using only the Go module proxy:
# no GitHub, dl.k8s.io, GCS or container images.
#
# Usage:
#   hack/build-k8s.sh            build into the cache dir (what `make k8s-bin` runs)
#   hack/build-k8s.sh pin VER    regenerate hack/k8s-tools for k8s.io/kubernetes VER (v1.X.Y),
#                                then review and commit go.mod/go.sum
#
# The cache dir is ${ORK_K8S_CACHE:-$HOME/.cache/ork/k8s/<version>}; a binary already there is
# kept. A cold build (empty Go caches, 2 cores) takes about 15 minutes, a warm one about a
# minute. Stdout gets only the cache dir; progress goes to stderr.
#
# Environment: ORK_K8S_CACHE (output dir), BINARIES (default and maximum: the module's tools,
# "etcd kube-apiserver kubectl kube-controller-manager"), SOURCE_DATE_EPOCH (build date stamped into the binaries; default: the tools module's commit).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS="$ROOT/hack/k8s-tools"
T0=$(date +%s)

log() { echo "[build-k8s +$(( $(date +%s) - T0 ))s] $*" >&2; }

# Reads a module's version from the tools go.mod (offline, no go command needed).
pinned() { awk -v m="$1" '$1 == m || ($1 == "require" && $2 == m) {print ($NF == "indirect" ? $(NF-2) : $NF); exit}' "$TOOLS/go.mod"; }

pkg_of() {
  case "$1" in
    etcd) echo "go.etcd.io/etcd/server/v3" ;; # the module root is etcd's main package
    *) echo "k8s.io/kubernetes/cmd/$1" ;;
  esac
}

# pin regenerates the tools module the way the upstream module graph requires: k8s.io/kubernetes
# requires its staging modules at v0.0.0 and replaces them with ./staging/..., which is ignored
# for a dependency, so each gets a replace to the published v0.X.Y.
pin() {
  local k8s=$1 staging="v0.${1#v1.}" gomod etcd args=()
  rm -f "$TOOLS/go.mod" "$TOOLS/go.sum"
  mkdir -p "$TOOLS"
  cd "$TOOLS"
  go mod init github.com/orkspace/ork/hack/k8s-tools >/dev/null 2>&1
  log "resolving k8s.io/kubernetes@$k8s (staging modules at $staging)"
  gomod=$(go mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
  args=(-require "k8s.io/kubernetes@$k8s")
  for m in $(awk '$1 ~ /^k8s\.io\// && $2 == "v0.0.0" {print $1}' "$gomod"); do
    args+=(-replace "$m=$m@$staging")
  done
  go mod edit "${args[@]}"
  etcd=$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' "$gomod")
  for b in etcd kube-apiserver kubectl kube-controller-manager; do
    local v=$k8s
    [ "$b" = etcd ] && v=$etcd
    log "go get -tool $(pkg_of "$b")@$v"
    go get -tool "$(pkg_of "$b")@$v"
  done
  go mod edit -go="$(awk '$1 == "go" {print $2; exit}' "$gomod")"
  log "pinned $TOOLS/go.mod: k8s $k8s, etcd $etcd; commit go.mod and go.sum"
}

if [ "${1:-}" = pin ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 pin v1.X.Y" >&2; exit 2; }
  pin "$2"
  exit 0
fi

K8S_VERSION=$(pinned k8s.io/kubernetes)
[ -n "$K8S_VERSION" ] || { echo "no k8s.io/kubernetes in $TOOLS/go.mod; run: $0 pin v1.X.Y" >&2; exit 1; }
OUT=${ORK_K8S_CACHE:-$HOME/.cache/ork/k8s/$K8S_VERSION}
BINARIES=${BINARIES:-"etcd kube-apiserver kubectl kube-controller-manager"}
mkdir -p "$OUT"

todo=()
for b in $BINARIES; do
  if [ -x "$OUT/$b" ]; then log "$b: present in $OUT, skipped"; else todo+=("$b"); fi
done
if [ ${#todo[@]} -eq 0 ]; then
  echo "$OUT"
  exit 0
fi
log "building ${todo[*]} (k8s $K8S_VERSION, etcd $(pinned go.etcd.io/etcd/server/v3)) into $OUT"
log "a cold build takes about 15 minutes on 2 cores (module download, then etcd ~1-3 min, kube-apiserver ~8 min, kubectl ~1 min, kube-controller-manager ~3 min)"

# Same version stamping as the upstream release build (hack/lib/version.sh); without it the
# binaries report v0.0.0-master+$Format:%H$. The date is fixed per tools-module commit so the
# same commit gives the same binaries.
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git -C "$ROOT" log -1 --format=%ct -- hack/k8s-tools/go.mod 2>/dev/null || true)
  SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-0}
fi
BUILD_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
MINOR=${K8S_VERSION#v1.}
MINOR=${MINOR%%.*}
LDFLAGS="-s -w -buildid="
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$MINOR -X $p.gitTreeState=clean"
  LDFLAGS+=" -X $p.buildDate=$BUILD_DATE -X $p.gitCommit=0000000000000000000000000000000000000000"
done

# GOWORK=off and -mod=readonly: build exactly what go.mod/go.sum pin, never edit them.
export CGO_ENABLED=0 GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=readonly"
note=" (the first build also downloads the pinned modules)"
for b in "${todo[@]}"; do
  log "building $b$note"
  note=""
  s=$(date +%s)
  # Build next to the target and rename, so an interrupted build never leaves a binary
  # that the skip check above would take for a finished one.
  (cd "$TOOLS" && go build -trimpath -ldflags "$LDFLAGS" -o "$OUT/.$b.tmp" "$(pkg_of "$b")")
  mv "$OUT/.$b.tmp" "$OUT/$b"
  log "built $b in $(( $(date +%s) - s ))s ($(du -h "$OUT/$b" | cut -f1))"
done
log "done: $OUT"
echo "$OUT"
