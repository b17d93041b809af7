#!/usr/bin/env bash
# Fetches CloudNativePG's own CRDs (config/crd/bases) from its Go module, so
# tests install the real schema, never a hand-written copy. Prints the
# directory holding them on its last line; a second call returns at once.
set -euo pipefail
CNPG_VERSION="${CNPG_VERSION:-v1.27.1}"
CACHE_ROOT="${DBPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbperf}"
DEST="${CACHE_ROOT}/cnpg-crds/${CNPG_VERSION}"
log() { printf '[cnpg-crds] %s\n' "$*" >&2; }
die() { printf '[cnpg-crds] ERROR: %s\n' "$*" >&2; exit 1; }

if [ -f "${DEST}/postgresql.cnpg.io_clusters.yaml" ]; then
  echo "${DEST}"
  exit 0
fi
log "downloading github.com/cloudnative-pg/cloudnative-pg@${CNPG_VERSION} from the Go module proxy"
# The proxy refuses this module's version list, so ask for the exact version
# from a scratch module (as `go install` would need).
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
(cd "${work}" && printf 'module dbperf.local/cnpgcrds\n\ngo 1.24\n' >go.mod &&
  go mod download -json "github.com/cloudnative-pg/cloudnative-pg@${CNPG_VERSION}" >mod.json) ||
  die "could not download github.com/cloudnative-pg/cloudnative-pg@${CNPG_VERSION}"
dir="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Dir"])' "${work}/mod.json")"
[ -f "${dir}/config/crd/bases/postgresql.cnpg.io_clusters.yaml" ] || die "no config/crd/bases in ${dir}"
mkdir -p "${DEST}"
cp "${dir}"/config/crd/bases/*.yaml "${DEST}/"
chmod u+w "${DEST}"/*.yaml
log "CRDs in ${DEST}"
echo "${DEST}"
