#!/usr/bin/env bash
# Downloads the YCSB 0.17.0 client (site.ycsb:core and its runtime
# dependencies) from Maven Central into ~/.cache/dbperf/ycsb-0.17.0/lib,
# checks each jar against Maven Central's SHA-1, and prints the directory.
# Its BasicDB binding runs the real YCSB client loop with no database.
# YCSB's bindings are not on Maven Central: for the mongodb binding the
# MongoDB Java driver is fetched the same way and test/ycsb's stand-in of our
# own (the binding's class name and mongodb.url) is compiled beside them
# when a JDK is installed, so that YCSB samples run against FerretDB here.
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
  # The MongoDB Java driver, for test/ycsb's stand-in mongodb binding.
  "org/mongodb/mongodb-driver-sync/5.8.1/mongodb-driver-sync-5.8.1.jar"
  "org/mongodb/mongodb-driver-core/5.8.1/mongodb-driver-core-5.8.1.jar"
  "org/mongodb/bson/5.8.1/bson-5.8.1.jar"
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
# The stand-in binding, compiled once per version of its source.
src="$(cd "$(dirname "$0")/.." && pwd)/test/ycsb/src/site/ycsb/db/MongoDbClient.java"
jar="$CACHE/dbperf-ycsb-mongodb-standin-$(sha256sum "$src" | cut -c1-12).jar"
if [ ! -s "$jar" ]; then
  if command -v javac >/dev/null && command -v jar >/dev/null; then
    echo "[ycsb] compiling test/ycsb's stand-in mongodb binding" >&2
    rm -f "$CACHE"/dbperf-ycsb-mongodb-standin-*.jar
    out="$(mktemp -d)"
    javac -nowarn -d "$out" -cp "$CACHE/*" "$src" >&2
    jar cf "$jar.tmp" -C "$out" . && mv "$jar.tmp" "$jar"
    rm -rf "$out"
  else
    echo "[ycsb] no JDK (javac): YCSB's mongodb binding stand-in is not built; YCSB runs BasicDB only" >&2
  fi
fi
echo "$CACHE"
