#!/usr/bin/env bash
# Runs every test: parsers against test/fixtures, the runner against
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
log "FerretDB built from the Go module proxy (cached; the first build takes about a minute)"
FERRETDB="$(cached hack/build-ferretdb.sh)"
log "memtier_benchmark 2.1.1 and HammerDB 4.12 built from their pinned sources (hack/build-tools.sh: upstream, or DBPERF_TOOL_SOURCES; cached; the first build takes about a minute)"
# build-tools.sh prints MEMTIER=… and HAMMERDB_HOME=… as its last two lines;
# the lock keeps two test runs from building into the cache at once.
tools="$({ flock /tmp/dbperf-build-tools.lock bash hack/build-tools.sh 2>&1 1>&3 3>&- | hide_downloads; } 3>&1)"
MEMTIER="$(sed -n 's/^MEMTIER=//p' <<<"$tools")"
HAMMERDB_HOME="$(sed -n 's/^HAMMERDB_HOME=//p' <<<"$tools")"
if [ ! -x "$MEMTIER" ] || [ ! -x "$HAMMERDB_HOME/hammerdbcli" ]; then
  log "ERROR: hack/build-tools.sh did not build memtier_benchmark and hammerdbcli: $tools"
  exit 1
fi
export KUBEBUILDER_ASSETS CNPG_CRD_DIR HELM KUBECTL CHROMIUM YCSB_LIB K6 FERRETDB MEMTIER HAMMERDB_HOME
for tool in initdb redis-server redis-benchmark pgbench chromium java tclsh mariadb; do
  if ! command -v "$tool" >/dev/null && ! compgen -G "/usr/lib/postgresql/*/bin/$tool" >/dev/null; then
    log "ERROR: $tool is not installed: run 'bash hack/install-deps.sh' (Debian's PostgreSQL, Redis, Chromium, a Java runtime, MariaDB and Tcl)"
    exit 1
  fi
done
# DBPERF_TEST_PKGS narrows the packages (make scale, make chaos).
pkgs="${DBPERF_TEST_PKGS:-./...}"
log "go test ${pkgs} (KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS})"
# shellcheck disable=SC2086 # a list of packages
go test ${pkgs} -count=1 -timeout 20m "$@"
