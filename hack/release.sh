#!/usr/bin/env bash
# Makes a release's files (docs/release.md) in OUT (default dist/):
#   dbperf-operator-<chart version>.tgz           the Helm chart with LICENSE (helm lint --strict, helm package)
#   kubectl-dbperf_<version>_<os>_<arch>.tar.gz    the plugin and LICENSE, for linux and darwin
#                                                  on amd64 and arm64 (static, -trimpath)
#   plugins/dbperf.yaml                            the krew manifest: the four archives under
#                                                  RELEASE_BASE_URL with their SHA-256
#   checksums.txt                                  SHA-256 of every file above
# The version is the VERSION file's; the tree must already be pinned to it
# (make set-version, make manifests). The images are built elsewhere, on a
# machine with a Docker engine (make docker-buildx).
#
# Environment: OUT; RELEASE_BASE_URL (default the GitHub release's download
# address for the version); HELM (default: hack/build-helm.sh's helm);
# SOURCE_DATE_EPOCH (the archives' file times; default the last commit's, so
# that the same commit gives the same archives and checksums). The plugin's
# cross-compilation shares the Go build cache: the first run compiles every
# dependency once per platform (minutes on 2 cores), later runs only link.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[release] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64)
chart=charts/dbperf-operator
version="$(tr -d '[:space:]' <VERSION)"
base="${RELEASE_BASE_URL:-https://github.com/dbperf-io/dbperf-operator/releases/download/${version}}"
base="${base%/}"
out="${OUT:-dist}"
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"

# A tree whose chart or binaries say another version would ship two.
chart_app="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$chart/Chart.yaml")"
chart_version="$(sed -n 's/^version: *\(.*\)$/\1/p' "$chart/Chart.yaml")"
release_go="$(sed -n 's/^const Release = "\(.*\)"$/\1/p' internal/version/release.go)"
if [ "$chart_app" != "$version" ] || [ "$chart_version" != "${version#v}" ] || [ "$release_go" != "$version" ]; then
  die "VERSION is ${version} but the chart says ${chart_version}/${chart_app} and internal/version ${release_go}: run 'make manifests' and commit"
fi

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi
}

HELM="${HELM:-$(bash hack/build-helm.sh | tail -n 1)}"
mkdir -p "$out/plugins"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

log "chart ${chart_version} (appVersion ${version})"
# Packaged from a copy that holds LICENSE too: the chart is redistributed.
mkdir -p "$work/chart"
cp -R "$chart" "$work/chart/" && cp LICENSE "$work/chart/dbperf-operator/LICENSE"
"$HELM" lint --strict "$work/chart/dbperf-operator" >&2
"$HELM" package "$work/chart/dbperf-operator" --destination "$out" >&2
chart_tgz="dbperf-operator-${chart_version}.tgz"
[ -f "$out/$chart_tgz" ] || die "helm package wrote no $chart_tgz"

ldflags="-s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=${version}"
archives=()
for platform in "${platforms[@]}"; do
  os="${platform%/*}" arch="${platform#*/}"
  name="kubectl-dbperf_${version}_${os}_${arch}"
  log "kubectl-dbperf ${os}/${arch}"
  mkdir -p "$work/$name"
  CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" go build -trimpath -ldflags "$ldflags" -o "$work/$name/kubectl-dbperf" ./cmd/kubectl-dbperf
  cp LICENSE "$work/$name/LICENSE"
  # Sorted, owned by 0:0, dated SOURCE_DATE_EPOCH, gzip without a name or a
  # time: the same commit makes the same bytes.
  tar -C "$work/$name" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@${SOURCE_DATE_EPOCH}" \
    -cf - kubectl-dbperf LICENSE | gzip -n >"$out/$name.tar.gz"
  archives+=("$name.tar.gz")
done

log "krew manifest plugins/dbperf.yaml (archives under ${base}/)"
{
  cat <<EOF
# The krew manifest of kubectl-dbperf ${version}, written by hack/release.sh.
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: dbperf
spec:
  version: ${version}
  homepage: https://github.com/dbperf-io/dbperf-operator
  shortDescription: Compare and report dbperf-operator benchmark results
  description: |
    The kubectl plugin of dbperf-operator: compares BenchmarkRuns and
    BenchmarkComparisons (delta, 95 % confidence interval and verdict per
    metric), writes self-contained HTML reports, exports a run's results
    as JSON or CSV, shows a schedule's history and tries a sample in its
    smoke form. Needs dbperf-operator's CRDs in the cluster.
  platforms:
EOF
  for a in "${archives[@]}"; do
    os_arch="${a#kubectl-dbperf_"${version}"_}"
    os_arch="${os_arch%.tar.gz}"
    cat <<EOF
  - selector:
      matchLabels:
        os: ${os_arch%_*}
        arch: ${os_arch#*_}
    uri: ${base}/${a}
    sha256: $(sha256 "$out/$a" | cut -d' ' -f1)
    bin: kubectl-dbperf
    files:
    - from: kubectl-dbperf
      to: .
    - from: LICENSE
      to: .
EOF
  done
} >"$out/plugins/dbperf.yaml"

(cd "$out" && sha256 "$chart_tgz" "${archives[@]}" plugins/dbperf.yaml >checksums.txt)
log "done: ${out}"
(cd "$out" && ls -l "$chart_tgz" "${archives[@]}" plugins/dbperf.yaml checksums.txt) >&2
