#!/usr/bin/env bash
# Downloads the YCSB 0.17.0 client (site.ycsb:core and its runtime
# dependencies) from Maven Central into ~/.cache/dbperf/ycsb-0.17.0/lib,
# checks each jar against Maven Central's SHA-1, and prints the directory.
# Its BasicDB binding runs the real YCSB client loop with no database.
set -euo pipefail
CACHE="${DBPERF_CACHE:-$HOME/.cache/dbperf}/ycsb-0.17.0/lib"
REPO="${MAVEN_REPO:-https://repo1.maven.org/maven2}"
jars=(
  "site/ycsb/core/0.17.0/core-0.17.0.jar"
  "org/hdrhistogram/HdrHistogram/2.1.4/HdrHistogram-2.1.4.jar"
  "org/codehaus/jackson/jackson-core-asl/1.9.4/jackson-core-asl-1.9.4.jar"
  "org/codehaus/jackson/jackson-mapper-asl/1.9.4/jackson-mapper-asl-1.9.4.jar"
  "org/apache/htrace/htrace-core4/4.1.0-incubating/htrace-core4-4.1.0-incubating.jar"
  # HdrHistogram 2.1.4 writes its log (hdrhistogram.fileoutput) with JAXB,
  # which Java 11 and later no longer ship.
  "javax/xml/bind/jaxb-api/2.3.1/jaxb-api-2.3.1.jar"
  "javax/activation/javax.activation-api/1.2.0/javax.activation-api-1.2.0.jar"
)
mkdir -p "$CACHE"
for j in "${jars[@]}"; do
  f="$CACHE/$(basename "$j")"
  [ -s "$f" ] && continue
  echo "[ycsb] $REPO/$j" >&2
  curl -sSfL -o "$f.tmp" "$REPO/$j"
  want="$(curl -sSfL "$REPO/$j.sha1" | awk '{print $1}')"
  got="$(sha1sum "$f.tmp" | awk '{print $1}')"
  if [ "$want" != "$got" ]; then
    rm -f "$f.tmp"
    echo "[ycsb] ERROR: $j: SHA-1 $got, Maven Central says $want" >&2
    exit 1
  fi
  mv "$f.tmp" "$f"
done
echo "$CACHE"
