#!/usr/bin/env bash
# Gets helm into ~/.cache/dbperf/helm-<version>/helm and prints its path: the
# released archive from get.helm.sh, checked against the .sha256sum published
# beside it (as helm's own installer does), where the network allows;
# otherwise built from the Go module proxy, from a throwaway module that
# requires the exact version (`go install helm.sh/helm/v3/cmd/helm@version`
# is refused for modules whose go.mod carries replace directives).
# HELM_RELEASE_URL names a mirror of get.helm.sh (same layout).
set -euo pipefail
HELM_VERSION="${HELM_VERSION:-v3.19.5}"   # the helm line built on k8s.io/* v0.34, like this module
CACHE="${DBPERF_CACHE:-$HOME/.cache/dbperf}/helm-$HELM_VERSION"
if [ -x "$CACHE/helm" ]; then echo "$CACHE/helm"; exit 0; fi
# shellcheck source=hack/lib/download.sh
. "$(dirname "$0")/lib/download.sh"
os="$(go env GOOS)" arch="$(go env GOARCH)"
mkdir -p "$CACHE"
url="${HELM_RELEASE_URL:-https://get.helm.sh}/helm-${HELM_VERSION}-${os}-${arch}.tar.gz"
if download_checked "$url" "${url}.sha256sum" "$CACHE/helm.tar.gz"; then
  tar -xzf "$CACHE/helm.tar.gz" -C "$CACHE" "${os}-${arch}/helm" && mv "$CACHE/${os}-${arch}/helm" "$CACHE/helm"
  rm -rf "$CACHE/helm.tar.gz" "${CACHE:?}/${os}-${arch}"
  echo "[build-helm] downloaded helm $HELM_VERSION (SHA-256 checked)" >&2
  echo "$CACHE/helm"
  exit 0
fi
echo "[build-helm] building helm $HELM_VERSION from the Go module proxy (about 2 minutes, once)" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > go.mod <<MOD
module dbperf.local/helm-build

go 1.25.0

require helm.sh/helm/v3 $HELM_VERSION
MOD
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "helm.sh/helm/v3/cmd/helm"
GO
GOFLAGS=-mod=mod go mod tidy >&2
mkdir -p "$CACHE"
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" -o "$CACHE/helm.tmp" helm.sh/helm/v3/cmd/helm >&2
mv "$CACHE/helm.tmp" "$CACHE/helm"
echo "[build-helm] done" >&2
echo "$CACHE/helm"
