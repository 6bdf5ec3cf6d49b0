#!/usr/bin/env bash
# Checks the release without publishing anything or pulling an image:
#   1. `goreleaser check` on .goreleaser.yaml;
#   2. a snapshot release of linux/amd64 (`goreleaser release --snapshot --skip=ko,sbom,sign`:
#      the binary and its archive as the release builds them, no image), whose ork must
#      report the snapshot's version and default `ork bundle` to the image tag the release
#      pushes for that version (the kos tags are {{ .Version }}, checked by cmd/ork's tests).
# goreleaser is built from the pinned module hack/goreleaser-tools (hack/build-tool.sh
# goreleaser): minutes cold, seconds once cached. The snapshot's ork build shares go's build
# cache with hack/image-check.sh (same flags, same platform), so the second of the two is quick.
set -euo pipefail
cd "$(dirname "$0")/.."
goreleaser=$(hack/build-tool.sh goreleaser)/goreleaser
"$goreleaser" check

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The release config for linux/amd64 only: the same build, ldflags and archive, one target.
sed -e '/^      - darwin$/d' -e '/^      - arm64$/d' .goreleaser.yaml >"$work/goreleaser.yaml"
removed=$(diff .goreleaser.yaml "$work/goreleaser.yaml" | grep -c '^<' || true)
if [ "$removed" != 2 ]; then
  echo "goreleaser-check: expected to drop darwin and arm64 from builds (2 lines), dropped $removed: update this script" >&2
  exit 1
fi
printf '\ndist: %s\n' "$work/dist" >>"$work/goreleaser.yaml"
"$goreleaser" release --snapshot --clean --skip=ko,sbom,sign -f "$work/goreleaser.yaml"

version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$work/dist/metadata.json" | head -1)
archive="$work/dist/ork_${version}_linux_amd64.tar.gz"
[ -f "$archive" ] || { echo "goreleaser-check: no $archive in:" >&2; ls "$work/dist" >&2; exit 1; }
mkdir "$work/x"
tar -xzf "$archive" -C "$work/x"
for f in ork LICENSE README.md; do
  [ -f "$work/x/$f" ] || { echo "goreleaser-check: the archive lacks $f" >&2; exit 1; }
done
got=$("$work/x/ork" version -o json | sed -n 's/.*"version": *"\([^"]*\)".*/\1/p')
if [ "$got" != "$version" ]; then
  echo "goreleaser-check: ork version reports $got, the release is $version" >&2
  exit 1
fi
image=$("$work/x/ork" bundle -f examples/remote/katalog.yaml 2>/dev/null | sed -n 's/^        image: //p' | head -1)
if [ "$image" != "ghcr.io/orkspace/ork:$version" ]; then
  echo "goreleaser-check: ork bundle of the release defaults to image $image, want ghcr.io/orkspace/ork:$version" >&2
  exit 1
fi
echo "goreleaser-check: ok: ork $version, archive $(basename "$archive"), default image $image"
