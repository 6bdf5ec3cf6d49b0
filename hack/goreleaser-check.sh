#!/usr/bin/env bash
# Checks .goreleaser.yaml with the pinned goreleaser, built from the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run github.com/goreleaser/goreleaser/v2@v2.15.1 check
