#!/usr/bin/env bash
# Builds the k6 of dbperf-operator's k6 image (ghcr.io/dbperf-io/k6, the
# Dockerfile's k6 target): k6 with the dbperf output extension
# (workloads/k6/xk6: k6's samples aggregated in k6 for dbperf-runner,
# instead of the JSON stream that costs k6 12-21 % of its throughput near
# its limit), from the Go module proxy (go.k6.io/k6 at the version
# workloads/k6/xk6/go.mod pins) and this repository. xk6 itself is not
# needed: workloads/k6/xk6/cmd/k6 is the main package it would generate.
# Cached in ~/.cache/dbperf/k6-<version>-dbperf-<hash>/k6, the hash of
# the sources it is built from (a change to the sink rebuilds it: seconds
# with a warm build cache, a minute or two cold); prints its path.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mod="$root/workloads/k6/xk6"
K6_VERSION="$(awk '$1 == "go.k6.io/k6" {print $2; exit}' "$mod/go.mod")"
test -n "$K6_VERSION" || { echo "[build-k6] no go.k6.io/k6 requirement in $mod/go.mod" >&2; exit 1; }
hash="$(cd "$root" && find api internal workloads -name '*.go' -not -name '*_test.go' -print0 | sort -z |
  xargs -0 sha256sum | cat - go.mod go.sum "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)"
base="${DBPERF_CACHE:-$HOME/.cache/dbperf}"
CACHE="$base/k6-$K6_VERSION-dbperf-$hash"
# Builds not used for a week are of no use. The cache is shared by every
# checkout on the machine (a CI clone beside a working copy), so a build
# is only removed once nothing has used it for that long: each use
# touches it.
find "$base" -maxdepth 1 -name "k6-*-dbperf-*" -not -name "$(basename "$CACHE")" -mtime +7 -exec rm -rf {} + 2>/dev/null || true
if [ -x "$CACHE/k6" ]; then touch "$CACHE"; echo "$CACHE/k6"; exit 0; fi
echo "[build-k6] building k6 $K6_VERSION with the dbperf output extension (sources $hash)" >&2
mkdir -p "$CACHE"
(cd "$mod" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$CACHE/k6.tmp.$$" ./cmd/k6) >&2
mv "$CACHE/k6.tmp.$$" "$CACHE/k6"
"$CACHE/k6" version | grep -q 'dbperf \[output\]' || { echo "[build-k6] the k6 built lacks the dbperf output" >&2; exit 1; }
echo "[build-k6] done" >&2
echo "$CACHE/k6"
