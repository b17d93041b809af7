#!/usr/bin/env bash
# Installs the Debian packages the project runs for real, and nothing else.
#
# Usage: install-deps.sh [demo|test]
#   demo  what `make demo` runs: PostgreSQL (server and pgbench) and Redis
#         (server and redis-benchmark), which stand for the databases and tools
#         of the simulated cluster's pods;
#   test  (default) what `make test` runs besides: Chromium (renders the HTML
#         reports headless), a Java runtime (the real YCSB client), MariaDB (a
#         real MySQL-compatible server), Tcl (runs HammerDB's scripts),
#         Prometheus with node_exporter, and ClickHouse (clickhouse-server).
#
# Prerequisites: Debian 12 or Ubuntu 22.04 or later (apt-get), Go at the
# version go.mod names, python3 (two hack scripts use it), and root or sudo
# for apt-get. It says what it will install before it does, installs with
# --no-upgrade (a running PostgreSQL is never upgraded under its sessions),
# and afterwards stops only the services that its own install started:
# Debian starts a default server for each server package, and the tests and
# the demo start servers of their own on 127.0.0.1. A service that was
# running before — a database of the machine's owner — is left alone.
set -euo pipefail
what=${1:-test}
log() { printf '[deps] %s\n' "$*" >&2; }
case $what in
demo | test) ;;
*)
  log "usage: install-deps.sh [demo|test]"
  exit 2
  ;;
esac

# Prerequisites, said plainly when missing.
if ! command -v apt-get >/dev/null || ! grep -qiE '^(ID|ID_LIKE)=.*(debian|ubuntu)' /etc/os-release 2>/dev/null; then
  log "ERROR: this script installs Debian packages with apt-get (Debian 12, Ubuntu 22.04 or later); install by hand:"
  log "PostgreSQL and pgbench, redis-server and redis-benchmark, prometheus-node-exporter$([ "$what" = test ] && echo ", Chromium, a Java runtime, MariaDB, Tcl, Prometheus, clickhouse-server")"
  exit 1
fi
want_go=$(awk '/^go /{print $2; exit}' "$(dirname "$0")/../go.mod")
have_go=$(go env GOVERSION 2>/dev/null | sed 's/^go//') || have_go=""
if [ -z "$have_go" ] || [ "$(printf '%s\n%s\n' "$want_go" "$have_go" | sort -V | head -n 1)" != "$want_go" ]; then
  log "ERROR: Go ${want_go} or later is needed (found: ${have_go:-none}); see https://go.dev/dl/"
  exit 1
fi
command -v python3 >/dev/null || log "warning: python3 is not installed; hack/demo-runner.sh and hack/fetch-cnpg-crds.sh need it"

# package, then the service its install starts ("-" for none).
need=() services=()
add() { need+=("$1"); [ "$2" = - ] || services+=("$2"); }
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || add postgresql postgresql
command -v pgbench >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/pgbench" >/dev/null || add postgresql-contrib -
command -v redis-server >/dev/null || add redis-server redis-server
command -v redis-benchmark >/dev/null || add redis-tools -
# The demo's database host is read from this machine's node_exporter.
command -v prometheus-node-exporter >/dev/null || add prometheus-node-exporter prometheus-node-exporter
if [ "$what" = test ]; then
  command -v chromium >/dev/null || add chromium -
  command -v java >/dev/null || add default-jre-headless -
  [ -x /usr/sbin/mariadbd ] || add mariadb-server mariadb
  command -v mariadb >/dev/null || add mariadb-client -
  command -v tclsh >/dev/null || add tcl -
  command -v prometheus >/dev/null || add prometheus prometheus
  # The on-CPU profiles of the local servers (perf record, cpu-clock).
  command -v perf >/dev/null || add linux-perf -
  [ -x /usr/sbin/clickhouse-server ] || add clickhouse-server clickhouse-server
fi
if [ "${#need[@]}" = 0 ]; then
  log "the packages of '$what' are installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
running() { command -v service >/dev/null && $SUDO service "$1" status >/dev/null 2>&1; }
# The services of the packages about to be installed that run already (an
# earlier install of another package of theirs): those are not ours to stop.
ours=()
for s in "${services[@]}"; do running "$s" || ours+=("$s"); done
log "will install with ${SUDO:-root}: apt-get install --no-install-recommends --no-upgrade ${need[*]}"
[ "${#ours[@]}" = 0 ] || log "and then stop the services that install starts: ${ours[*]} (the tests and the demo start their own servers)"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends --no-upgrade "${need[@]}" >/dev/null
for s in "${ours[@]}"; do
  if running "$s"; then
    $SUDO service "$s" stop >/dev/null 2>&1 && log "stopped $s, which the install started" || true
  fi
done
