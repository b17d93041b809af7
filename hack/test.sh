#!/usr/bin/env bash
# Runs every test: parsers against ../shared/fixtures, the runner against
# real PostgreSQL and redis-server on 127.0.0.1, and the controller in
# envtest on the control plane built by hack/build-control-plane.sh, the Helm
# chart, and the end-to-end suite on the local simulated cluster (test/e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[test] %s\n' "$*" >&2; }

log "control-plane binaries (the first build takes several minutes)"
KUBEBUILDER_ASSETS="$(bash hack/build-control-plane.sh | tail -n 1)"
log "CloudNativePG CRDs"
CNPG_CRD_DIR="$(bash hack/fetch-cnpg-crds.sh | tail -n 1)"
log "helm (for the chart tests and the end-to-end tests)"
HELM="$(bash hack/build-helm.sh | tail -n 1)"
KUBECTL="${KUBEBUILDER_ASSETS}/kubectl"
CHROMIUM="$(command -v chromium)"
log "YCSB 0.17.0 client from Maven Central (cached)"
YCSB_LIB="$(bash hack/fetch-ycsb.sh | tail -n 1)"
log "k6 built from the Go module proxy (cached; the first build takes a minute or two)"
K6="$(bash hack/build-k6.sh | tail -n 1)"
export KUBEBUILDER_ASSETS CNPG_CRD_DIR HELM KUBECTL CHROMIUM YCSB_LIB K6
for tool in initdb redis-server redis-benchmark pgbench chromium java; do
  if ! command -v "$tool" >/dev/null && ! compgen -G "/usr/lib/postgresql/*/bin/$tool" >/dev/null; then
    log "ERROR: $tool is not installed: run 'bash hack/install-deps.sh' (apt-get install postgresql redis-server chromium default-jre-headless)"
    exit 1
  fi
done
log "go test ./... (KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS})"
go test ./... -count=1 -timeout 20m "$@"
