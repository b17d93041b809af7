#!/usr/bin/env bash
# The chart is installable and says the same as config/default: helm lint
# --strict, then the template tests (schema, switches, restricted pod security)
# and the drift test against `kubectl kustomize config/default`; and every
# shipped manifest and default image is pinned to VERSION, never :latest
# (test/release, without its slower run of hack/release.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
HELM="$(bash hack/build-helm.sh | tail -n 1)"
KUBECTL="$(bash hack/build-control-plane.sh | tail -n 1)/kubectl"
"$HELM" lint --strict charts/dbperf-operator
HELM="$HELM" KUBECTL="$KUBECTL" go test ./test/chart -count=1
HELM="$HELM" KUBECTL="$KUBECTL" go test ./test/release -run 'TestShippedManifestsPinTheRelease|TestDefaultImagesArePinned' -count=1
