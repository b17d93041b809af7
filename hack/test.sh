#!/usr/bin/env bash
# Runs every test: parsers against ../shared/fixtures, the runner against
# real PostgreSQL and redis-server on 127.0.0.1, and the controller in
# envtest on the control plane built by hack/build-control-plane.sh, the Helm
# chart, and the end-to-end suite on the local simulated cluster (test/e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[test] %s\n' "$*" >&2; }
# hide_downloads copies its input to stderr without the `go: downloading`
# and `go: added` lines (hundreds on a fresh machine, counted instead), which
# would bury the progress lines.
hide_downloads() {
  awk '/^go: (downloading|added|upgraded) /{n++; next} {print; fflush()}
    END{if(n) printf "[test] (%d `go: downloading/added` lines hidden)\n", n}' >&2
}
# cached SCRIPT runs a hack script that builds or fetches a tool once and
# prints its path on its last line; it prints that path.
cached() { { bash "$1" 2>&1 1>&3 3>&- | hide_downloads; } 3>&1 | tail -n 1; }

log "control-plane binaries (the first build takes several minutes)"
KUBEBUILDER_ASSETS="$(cached hack/build-control-plane.sh)"
log "CloudNativePG CRDs"
CNPG_CRD_DIR="$(cached hack/fetch-cnpg-crds.sh)"
log "helm (for the chart tests and the end-to-end tests)"
HELM="$(cached hack/build-helm.sh)"
KUBECTL="${KUBEBUILDER_ASSETS}/kubectl"
CHROMIUM="$(command -v chromium)"
log "YCSB 0.17.0 client from Maven Central (cached)"
YCSB_LIB="$(cached hack/fetch-ycsb.sh)"
log "k6 built from the Go module proxy (cached; the first build takes a minute or two)"
K6="$(cached hack/build-k6.sh)"
export KUBEBUILDER_ASSETS CNPG_CRD_DIR HELM KUBECTL CHROMIUM YCSB_LIB K6
for tool in initdb redis-server redis-benchmark pgbench chromium java; do
  if ! command -v "$tool" >/dev/null && ! compgen -G "/usr/lib/postgresql/*/bin/$tool" >/dev/null; then
    log "ERROR: $tool is not installed: run 'bash hack/install-deps.sh' (Debian's PostgreSQL, Redis, Chromium, a Java runtime, MariaDB and Tcl)"
    exit 1
  fi
done
log "go test ./... (KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS})"
go test ./... -count=1 -timeout 20m "$@"
