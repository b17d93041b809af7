#!/usr/bin/env bash
# The quickstart (make demo): installs the Debian packages the demo runs if
# missing (hack/install-deps.sh), builds the operator, the control plane and
# helm (cached after the first time), starts the local simulated cluster with
# node pools standard-v3, standard-v4a and loadgen, installs the operator with
# its Helm chart, applies a BenchmarkComparison of two pools and a
# redis-benchmark run, and prints the results.
# Extra arguments go to hack/localcluster (README.md, docs/local-cluster.md):
#   --up-only    the cluster and the operator with nothing applied, until Ctrl-C
#   --keep       the demo, then the cluster stays up until Ctrl-C
#   --dir DIR    the work directory (created if missing, kept afterwards)
#   --seconds N  each pgbench measurement's duration
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[quickstart] %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }
# hide_downloads copies its input to stderr without the `go: downloading`
# and `go: added` lines (hundreds on a fresh machine, counted instead), which
# would bury the progress lines.
hide_downloads() {
  awk '/^go: (downloading|added|upgraded) /{n++; next} {print; fflush()}
    END{if(n) printf "[quickstart] (%d `go: downloading/added` lines hidden)\n", n}' >&2
}
# cached SCRIPT runs a hack script that builds or fetches a tool once and
# prints its path on its last line; it prints that path.
cached() { { bash "$1" 2>&1 1>&3 3>&- | hide_downloads; } 3>&1 | tail -n 1; }

log "Debian packages the demo runs: PostgreSQL, Redis and node_exporter (hack/install-deps.sh demo; skipped when installed)"
bash hack/install-deps.sh demo
log "building the manager and dbperf-runner"
make -s build 2>&1 >/dev/null | hide_downloads
log "control-plane binaries: kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubectl, kwok (first time: about 10 minutes; progress below)"
BIN_DIR="$(cached hack/build-control-plane.sh)"
log "helm (first time: about 2 minutes)"
HELM="$(cached hack/build-helm.sh)"
log "CloudNativePG's CRDs (its Clusters are played by local PostgreSQL servers)"
CNPG="$(cached hack/fetch-cnpg-crds.sh)"
exec go run ./hack/localcluster --bin-dir "$BIN_DIR" --helm "$HELM" --cnpg-crds "$CNPG" --manager bin/manager --runner bin/dbperf-runner "$@"
