#!/usr/bin/env bash
# Builds the two load tools Debian does not package, so that tests run them
# for real, into a cache (~/.cache/dbperf/tools):
#   memtier_benchmark 2.1.1 (the version of redislabs/memtier_benchmark:2.1.1)
#   HammerDB 4.12 hammerdbcli (the version of tpcorg/hammerdb:v4.12) on
#   Debian's Tcl 8.6, with pgtcl-ng 2.1.1 (the PostgreSQL driver HammerDB 4.12
#   bundles) and Debian's mysqltcl 3.052 (its MySQL/MariaDB driver).
#
# Their sources, pinned in hack/tool-sources.txt, come from one of:
#   1. DBPERF_TOOL_SOURCES, a directory holding the three source archives
#      (for machines without internet; each archive is checked against its
#      SHA-256 in hack/tool-sources.txt);
#   2. the tools' public repositories, fetched at the pinned commits with git
#      (a checkout of a commit id verifies itself).
# Without either it stops at once, saying both ways. The tools' code is never
# part of this repository; this script only builds it.
#
# Usage: build-tools.sh [CACHE_DIR]
# Prints, as its last two lines:
#   MEMTIER=<path of memtier_benchmark>
#   HAMMERDB_HOME=<directory to run ./hammerdbcli from>
# A second call takes well under a second. Needs root for apt-get.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${1:-${HOME}/.cache/dbperf/tools}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
log() { printf '[tools] %s\n' "$*" >&2; }
pins="$here/tool-sources.txt"

# The cache key is what is built (the pinned commits) and how (this script),
# whichever way the sources arrived.
stamp=$(cat "$pins" "$0" | sha256sum | cut -c1-12)
root="$cache/$stamp"
if [[ -x $root/memtier/bin/memtier_benchmark && -x $root/HammerDB-4.12/hammerdbcli ]]; then
  echo "MEMTIER=$root/memtier/bin/memtier_benchmark"
  echo "HAMMERDB_HOME=$root/HammerDB-4.12"
  exit 0
fi

rm -rf "$root.tmp" && mkdir -p "$root.tmp"
b="$root.tmp"

# sources puts each tool's source tree in $b/<dir>, from the mirror or
# from upstream.
sources() {
  local name repo commit archive sha dir paths
  while read -r name repo commit archive sha dir paths; do
    [[ -z $name || $name == \#* ]] && continue
    if [[ -n ${DBPERF_TOOL_SOURCES:-} ]]; then
      local file="$DBPERF_TOOL_SOURCES/$archive"
      [[ -f $file ]] || { log "ERROR: DBPERF_TOOL_SOURCES=$DBPERF_TOOL_SOURCES has no $archive"; exit 1; }
      if [[ $(sha256sum "$file" | cut -d' ' -f1) != "$sha" ]]; then
        log "ERROR: $file is not the pinned archive (SHA-256 $sha in hack/tool-sources.txt)"
        exit 1
      fi
      tar -xzf "$file" -C "$b"
      continue
    fi
    log "$name: fetching $repo at $commit"
    local src="$b/$dir.git"
    mkdir -p "$src"
    if ! (cd "$src" && git init -q && timeout 600 git fetch -q --depth 1 "$repo" "$commit" 2>&2 && git -c advice.detachedHead=false checkout -q FETCH_HEAD) ||
      [[ $(cd "$src" && git rev-parse HEAD) != "$commit" ]]; then
      log "ERROR: cannot get the sources of $name: fetching $repo at $commit failed."
      log "Either let this machine reach $repo, or point DBPERF_TOOL_SOURCES at a directory with the"
      log "archives hack/tool-sources.txt lists (checked by SHA-256): $(awk '!/^#/ && NF {printf "%s ", $4}' "$pins")"
      exit 1
    fi
    mkdir -p "$b/$dir"
    if [[ $paths == . ]]; then
      (cd "$src" && git archive HEAD) | tar -x -C "$b/$dir"
    else
      # shellcheck disable=SC2086 # a list of paths
      (cd "$src" && git archive HEAD ${paths//,/ }) | tar -x -C "$b/$dir"
    fi
    rm -rf "$src"
  done <"$pins"
}

if [[ -z ${DBPERF_TOOL_SOURCES:-} ]] && ! command -v git >/dev/null; then
  log "ERROR: neither DBPERF_TOOL_SOURCES (a directory of the archives in hack/tool-sources.txt) nor git to fetch them"
  exit 1
fi
sources

# Debian packages. --no-upgrade: installing libpq-dev or libssl-dev may
# otherwise upgrade postgresql-15 under a running server, whose new sessions
# then fail to load plpgsql. Never libpgtcl: its Pgtcl 2.7.7 (another
# binding) outranks pgtcl-ng 2.1.1 and lacks pg_notice_handler.
pkgs=(build-essential autoconf automake libtool pkg-config libpcre3-dev libevent-dev zlib1g-dev
  libssl-dev tcl tcl8.6-dev tcl-thread libsqlite3-tcl mysqltcl libpq-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  log "apt-get install ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}" >/dev/null
fi
if dpkg -s libpgtcl >/dev/null 2>&1; then
  log "ERROR: Debian's libpgtcl is installed; its Pgtcl 2.7.7 shadows pgtcl-ng 2.1.1 and breaks HammerDB: apt-get remove libpgtcl"
  exit 1
fi

log "memtier_benchmark 2.1.1 (about 30 s on 2 cores)"
(cd "$b/memtier_benchmark-2.1.1" && autoreconf -ivf >/dev/null 2>&1 && ./configure >/dev/null && make -j"$(nproc)" >/dev/null)
mkdir -p "$b/memtier/bin"
cp "$b/memtier_benchmark-2.1.1/memtier_benchmark" "$b/memtier/bin/"
rm -rf "$b/memtier_benchmark-2.1.1"

log "HammerDB 4.12 hammerdbcli on Debian's Tcl 8.6"
H="$b/HammerDB-4.12"
# hammerdbcli runs ./bin/tclsh8.6 from its own directory, and Tcl puts
# <exe dir>/../lib on auto_path; ticklecharts draws only the GUI's charts,
# but the CLI requires it to load: an empty package stands in.
mkdir -p "$H/bin" "$H/lib/ticklecharts-stub"
ln -sf /usr/bin/tclsh8.6 "$H/bin/tclsh8.6"
echo 'package ifneeded ticklecharts 0.0 [list package provide ticklecharts 0.0]' >"$H/lib/ticklecharts-stub/pkgIndex.tcl"

log "pgtcl-ng 2.1.1 (HammerDB's PostgreSQL driver)"
(cd "$b/pgtcl-ng-2.1.1" && ./configure --with-tcl=/usr/lib/tcl8.6 --prefix="$b/pgtcl" --exec-prefix="$b/pgtcl" >/dev/null &&
  make >/dev/null 2>&1 && make install >/dev/null)
cp -r "$b/pgtcl/lib/pgtcl2.1.1" "$H/lib/"
rm -rf "$b/pgtcl-ng-2.1.1" "$b/pgtcl"

# Every package the TPROC-C drivers load, in a throwaway TMP (HammerDB
# writes hammer.DB and its logs there).
smoke=$(mktemp -d)
cat >"$smoke/smoke.tcl" <<'EOF'
foreach p {Thread sqlite3 Pgtcl mysqltcl} { puts "$p [package require $p]" }
if {[info commands pg_notice_handler] eq ""} { puts "pg_notice_handler missing"; exit 1 }
exit
EOF
out=$(cd "$H" && TMP="$smoke" ./hammerdbcli auto "$smoke/smoke.tcl" 2>&1) || { echo "$out" >&2; exit 1; }
grep -q '^Pgtcl 2.1.1' <<<"$out" || { echo "$out" >&2; log "ERROR: HammerDB did not load pgtcl-ng 2.1.1"; exit 1; }
rm -rf "$smoke"
"$b/memtier/bin/memtier_benchmark" --version | head -n 1 >&2

rm -rf "$root" && mv "$b" "$root"
ln -sf /usr/bin/tclsh8.6 "$root/HammerDB-4.12/bin/tclsh8.6"
echo "MEMTIER=$root/memtier/bin/memtier_benchmark"
echo "HAMMERDB_HOME=$root/HammerDB-4.12"
