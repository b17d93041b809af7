#!/usr/bin/env bash
# Gets k6 into ~/.cache/dbperf/k6-<version>/k6 and prints its path: the
# released archive, checked against the release's checksums file, where the
# network allows; otherwise built from the Go module proxy, from a throwaway
# module that requires the exact version (the proxy's version list for
# go.k6.io/k6 is incomplete, so `go install go.k6.io/k6@version` is not
# relied on). K6_RELEASE_URL names a mirror of the release downloads.
set -euo pipefail
K6_VERSION="${K6_VERSION:-v1.0.0}"   # the tag of the default image grafana/k6:1.0.0
CACHE="${DBPERF_CACHE:-$HOME/.cache/dbperf}/k6-$K6_VERSION"
if [ -x "$CACHE/k6" ]; then echo "$CACHE/k6"; exit 0; fi
# shellcheck source=hack/lib/download.sh
. "$(dirname "$0")/lib/download.sh"
os="$(go env GOOS)" arch="$(go env GOARCH)"
name="k6-${K6_VERSION}-${os}-${arch}"
base="${K6_RELEASE_URL:-https://github.com/grafana/k6/releases/download}/${K6_VERSION}"
mkdir -p "$CACHE"
if [ "$os" = linux ] && download_checked "${base}/${name}.tar.gz" "${base}/k6-${K6_VERSION}-checksums.txt" "$CACHE/k6.tar.gz" "${name}.tar.gz"; then
  tar -xzf "$CACHE/k6.tar.gz" -C "$CACHE" "${name}/k6" && mv "$CACHE/${name}/k6" "$CACHE/k6"
  rm -rf "$CACHE/k6.tar.gz" "${CACHE:?}/${name}"
  echo "[build-k6] downloaded k6 $K6_VERSION (SHA-256 checked)" >&2
  echo "$CACHE/k6"
  exit 0
fi
echo "[build-k6] building k6 $K6_VERSION from the Go module proxy (a few minutes, once)" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
printf 'module dbperf.local/k6-build\n\ngo 1.25.0\n\nrequire go.k6.io/k6 %s\n' "$K6_VERSION" > go.mod
printf '//go:build tools\n\npackage tools\n\nimport _ "go.k6.io/k6"\n' > tools.go
GOFLAGS=-mod=mod go mod tidy >&2
mkdir -p "$CACHE"
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$CACHE/k6.tmp" go.k6.io/k6 >&2
mv "$CACHE/k6.tmp" "$CACHE/k6"
echo "[build-k6] done" >&2
echo "$CACHE/k6"
