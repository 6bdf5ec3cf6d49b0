#!/usr/bin/env bash
# Builds ork's release image as .goreleaser.yaml's kos section does (ko, the `ork` build's
# flags and ldflags, the release platforms and user) and checks it: an image per platform,
# user non-root, entrypoint ork, a static ork binary of that platform (the host's one runs).
# Then the same for the Go reconciler `ork init --remote go` writes, onto its Dockerfile's
# runtime base and user (internal/scaffold's TestGoReconcilerImageBuildsWithKo runs that part
# in `make test`).
#
# This machine pulls no images: the base is a stand-in (an empty image per platform) put in
# ko's cache under the release base's name, so nothing is fetched. What only a real release
# proves: that the distroless base pulls and its files (CA certificates, /etc/passwd) come
# along, that the image pushes, and that it runs on a node.
#
# ko is built from the pinned module hack/ko-tools (hack/build-tool.sh ko).
set -euo pipefail
cd "$(dirname "$0")/.."
ko=$(hack/build-tool.sh ko)/ko
# ko names the OCI layout it writes by its path, which must then be lowercase: no mktemp.
work=/tmp/ork-image-check-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
mkdir -p "$work/ork" "$work/reconciler"
trap 'rm -rf "$work"' EXIT
repo=$PWD
go run ./cmd/ork init "$work/scaffold" --remote go >/dev/null
cd hack/ko-tools
GOWORK=off GOFLAGS=-mod=readonly go run ./imagecheck -repo "$repo" -ko "$ko" -work "$work/ork"
GOWORK=off GOFLAGS=-mod=readonly go run ./imagecheck -reconciler "$work/scaffold/reconciler" -ko "$ko" -work "$work/reconciler"
