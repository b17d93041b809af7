#!/usr/bin/env bash
# Gets a Kubernetes control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd, kwok, kwokctl) and caches the binaries outside
# git. Where the network allows, the released binaries are downloaded by
# version and checked against the SHA-256 their project publishes beside them
# (dl.k8s.io's .sha256 files, etcd's SHA256SUMS); otherwise, and for kwok,
# whose releases publish no checksums, they are built from the Go module
# proxy. K8S_RELEASE_URL and ETCD_RELEASE_URL name mirrors of the release
# hosts (same layout). A second call with the binaries present returns in
# seconds. Prints the directory holding the binaries on its last line.
#
# k8s.io/kubernetes cannot be `go install`ed directly: its go.mod replaces the
# staging modules by local paths. We build it from a small module that requires
# the exact version and replaces each staging module by its published v0.x twin.
set -euo pipefail

# The control plane matches the client-go the project uses (go.mod).
repo_root="$(cd "$(dirname "$0")/.." && pwd)"
client_go="$(awk '$1 == "k8s.io/client-go" { sub(/^v0\./, "", $2); print $2; exit }' "${repo_root}/go.mod" 2>/dev/null || true)"
K8S_VERSION="${K8S_VERSION:-1.${client_go:-34.3}}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.5}"
KWOK_VERSION="${KWOK_VERSION:-v0.7.0}"
CACHE_ROOT="${DBPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbperf}"
BIN_DIR="${CACHE_ROOT}/control-plane/k8s-v${K8S_VERSION}-etcd-${ETCD_VERSION}-kwok-${KWOK_VERSION}/bin"
STAGING_MINOR="0.${K8S_VERSION#1.}"

log() { printf '[control-plane] %s\n' "$*" >&2; }
# shellcheck source=hack/lib/download.sh
. "$(dirname "$0")/lib/download.sh"
GOOS="$(go env GOOS 2>/dev/null || echo linux)"
GOARCH="$(go env GOARCH 2>/dev/null || echo amd64)"
die() { printf '[control-plane] ERROR: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null || die "go is not on PATH"

want_k8s=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
want_all=("${want_k8s[@]}" etcd kwok kwokctl)

have_all=1
for b in "${want_all[@]}"; do [ -x "${BIN_DIR}/${b}" ] || have_all=0; done
if [ "${have_all}" = 1 ]; then
  log "cached binaries found in ${BIN_DIR}"
  echo "${BIN_DIR}"
  exit 0
fi

mkdir -p "${BIN_DIR}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# The staging modules k8s.io/kubernetes replaces by ./staging/src paths differ
# between minors (legacy-cloud-providers until 1.30, cri-client from 1.31,
# externaljwt from 1.32...): read them from that release's own go.mod, and
# fall back to the 1.34 list when the go.mod cannot be read.
staging_modules() {
  local mod
  mod="$(GOFLAGS=-mod=mod go list -m -json "k8s.io/kubernetes@v${K8S_VERSION}" 2>/dev/null |
    awk -F'"' '$2 == "GoMod" { print $4; exit }')" || true
  if [ -n "${mod}" ] && [ -r "${mod}" ]; then
    awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\/k8s\.io\// { sub(/^k8s\.io\//, "", $1); print $1 }' "${mod}"
    return
  fi
  printf '%s\n' api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider \
    cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api \
    cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms \
    kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics \
    mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller
}

# reuse_sibling copies etcd, kwok and kwokctl of the same versions from the
# cached control plane of another Kubernetes version (they do not depend on it).
reuse_sibling() {
  local sib b
  for sib in "${CACHE_ROOT}"/control-plane/k8s-v*-etcd-"${ETCD_VERSION}"-kwok-"${KWOK_VERSION}"/bin; do
    [ -d "${sib}" ] && [ "${sib}" != "${BIN_DIR}" ] || continue
    for b in etcd kwok kwokctl; do
      if [ ! -x "${BIN_DIR}/${b}" ] && [ -x "${sib}/${b}" ]; then
        cp "${sib}/${b}" "${BIN_DIR}/${b}.tmp" && mv "${BIN_DIR}/${b}.tmp" "${BIN_DIR}/${b}" &&
          log "reused ${b} from ${sib}"
      fi
    done
  done
}

# download_k8s fetches the released kube-* binaries; false when the release
# host cannot be reached or a sum does not match (then they are built).
download_k8s() {
  local base="${K8S_RELEASE_URL:-https://dl.k8s.io/release}/v${K8S_VERSION}/bin/${GOOS}/${GOARCH}"
  for b in "${want_k8s[@]}"; do
    [ -x "${BIN_DIR}/${b}" ] && continue
    download_checked "${base}/${b}" "${base}/${b}.sha256" "${BIN_DIR}/${b}" || return 1
    chmod +x "${BIN_DIR}/${b}"
    log "downloaded ${b} v${K8S_VERSION} (SHA-256 checked)"
  done
}

download_etcd() {
  [ -x "${BIN_DIR}/etcd" ] && return 0
  local name="etcd-${ETCD_VERSION}-${GOOS}-${GOARCH}"
  local base="${ETCD_RELEASE_URL:-https://github.com/etcd-io/etcd/releases/download}/${ETCD_VERSION}"
  download_checked "${base}/${name}.tar.gz" "${base}/SHA256SUMS" "${work}/etcd.tar.gz" "${name}.tar.gz" || return 1
  tar -xzf "${work}/etcd.tar.gz" -C "${work}" "${name}/etcd" && mv "${work}/${name}/etcd" "${BIN_DIR}/etcd" &&
    log "downloaded etcd ${ETCD_VERSION} (SHA-256 checked)"
}

build_k8s() {
  local missing=()
  for b in "${want_k8s[@]}"; do [ -x "${BIN_DIR}/${b}" ] || missing+=("$b"); done
  [ "${#missing[@]}" = 0 ] && return 0
  log "building ${missing[*]} from k8s.io/kubernetes@v${K8S_VERSION} (several minutes on a cold cache)"
  local d="${work}/k8s"
  mkdir -p "$d"
  {
    echo "module dbperf.local/k8sbuild"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes v${K8S_VERSION}"
    echo
    echo "replace ("
    staging_modules | while read -r s; do echo "	k8s.io/${s} => k8s.io/${s} v${STAGING_MINOR}"; done
    echo ")"
  } >"$d/go.mod"
  cat >"$d/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  (cd "$d" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  (cd "$d" && GOFLAGS=-mod=mod go get k8s.io/kubernetes@v"${K8S_VERSION}") || die "resolving k8s.io/kubernetes@v${K8S_VERSION} failed"
  # One go build for all of them: their packages compile side by side and
  # one binary links while the others still compile.
  local pkgs=() out="${work}/k8s-bin"
  for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${b}"); done
  mkdir -p "$out"
  log "go build ${pkgs[*]}"
  (cd "$d" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w \
    -X k8s.io/component-base/version.gitVersion=v${K8S_VERSION} \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#1.} \
    -X k8s.io/client-go/pkg/version.gitVersion=v${K8S_VERSION}" \
    -o "${out}/" "${pkgs[@]}") || die "building ${missing[*]} failed"
  for b in "${missing[@]}"; do mv "${out}/${b}" "${BIN_DIR}/${b}"; done
}

build_etcd() {
  [ -x "${BIN_DIR}/etcd" ] && return 0
  log "building etcd ${ETCD_VERSION} from go.etcd.io/etcd/server/v3"
  local d="${work}/etcd"
  mkdir -p "$d"
  printf 'module dbperf.local/etcdbuild\n\ngo 1.24\n' >"$d/go.mod"
  cat >"$d/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "$d" && GOFLAGS=-mod=mod go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" && GOFLAGS=-mod=mod go mod tidy) || die "resolving etcd failed"
  (cd "$d" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "${BIN_DIR}/etcd.tmp" .) || die "building etcd failed"
  mv "${BIN_DIR}/etcd.tmp" "${BIN_DIR}/etcd"
}

build_kwok() {
  [ -x "${BIN_DIR}/kwok" ] && [ -x "${BIN_DIR}/kwokctl" ] && return 0
  log "building kwok and kwokctl ${KWOK_VERSION}"
  local d="${work}/kwok"
  mkdir -p "$d"
  printf 'module dbperf.local/kwokbuild\n\ngo 1.24\n\nrequire sigs.k8s.io/kwok %s\n' "${KWOK_VERSION}" >"$d/go.mod"
  cat >"$d/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
GO
  (cd "$d" && GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true)
  local out="${work}/kwok-bin"
  mkdir -p "$out"
  (cd "$d" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "${out}/" sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl) ||
    die "building kwok and kwokctl failed"
  mv "${out}/kwok" "${out}/kwokctl" "${BIN_DIR}/"
}

start=$(date +%s)
reuse_sibling
download_etcd || build_etcd
build_kwok
download_k8s || build_k8s
for b in "${want_all[@]}"; do [ -x "${BIN_DIR}/${b}" ] || die "${b} missing after build"; done
log "done in $(( $(date +%s) - start ))s: ${BIN_DIR}"
echo "${BIN_DIR}"
