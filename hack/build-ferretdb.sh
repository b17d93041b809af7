#!/usr/bin/env bash
# Builds FerretDB (a MongoDB-compatible server; the tests run its SQLite
# handler on 127.0.0.1, test/localdb) from the Go module proxy into
# ~/.cache/dbperf/ferretdb-<version>/ferretdb and prints its path on its last
# line. The proxy lists no version of github.com/FerretDB/FerretDB, so an
# exact one is named. Its program panics at start unless it was built with
# build/version/version.txt, which FerretDB's own build generates and the
# module's zip lacks (and Go 1.24+ records the module of a program built from
# a dependency as the main one, so a throwaway module does not avoid the
# check): the module is copied out of the module cache, the file written as
# FerretDB's `task gen-version` would, and the program built there.
set -euo pipefail
FERRETDB_VERSION="${FERRETDB_VERSION:-v1.24.2}"
CACHE="${DBPERF_CACHE:-$HOME/.cache/dbperf}/ferretdb-$FERRETDB_VERSION"
if [ -x "$CACHE/ferretdb" ]; then echo "$CACHE/ferretdb"; exit 0; fi
echo "[build-ferretdb] building FerretDB $FERRETDB_VERSION from the Go module proxy (about a minute, once)" >&2
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
src="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/FerretDB/FerretDB@$FERRETDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ ! -f "$src/go.mod" ]; then
  echo "[build-ferretdb] ERROR: go mod download gave no module directory for FerretDB $FERRETDB_VERSION" >&2
  exit 1
fi
cp -r "$src" "$work/src"
chmod -R u+w "$work/src"
cd "$work/src"
printf '%s\n' "$FERRETDB_VERSION" > build/version/version.txt
printf 'unknown\n' > build/version/commit.txt
printf 'unknown\n' > build/version/branch.txt
printf 'dbperf\n' > build/version/package.txt
mkdir -p "$CACHE"
# GOTOOLCHAIN=local: its go.mod asks for go1.24.3, which this Go (newer) builds.
CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$CACHE/ferretdb.tmp" ./cmd/ferretdb >&2
mv "$CACHE/ferretdb.tmp" "$CACHE/ferretdb"
echo "[build-ferretdb] done" >&2
echo "$CACHE/ferretdb"
