#!/usr/bin/env bash
# The quickstart (make demo): installs PostgreSQL and redis-server from Debian
# if missing, builds the operator, the control plane and helm (cached after
# the first time), starts the local simulated cluster with node pools
# standard-v3, standard-v4a and loadgen, installs the operator with its Helm
# chart, applies BenchmarkRuns on two pools and prints the results table.
# Extra arguments go to hack/localcluster (e.g. --keep, --seconds 10).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[quickstart] %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }

log "PostgreSQL and redis-server from Debian (skipped when installed)"
bash hack/install-deps.sh
log "building the manager and dbperf-runner"
make -s build >/dev/null
log "control-plane binaries: kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok (first time: about 10 minutes; progress below)"
BIN_DIR="$(bash hack/build-control-plane.sh | tail -n 1)"
log "helm (first time: about 2 minutes)"
HELM="$(bash hack/build-helm.sh | tail -n 1)"
exec go run ./hack/localcluster --bin-dir "$BIN_DIR" --helm "$HELM" --manager bin/manager --runner bin/dbperf-runner "$@"
