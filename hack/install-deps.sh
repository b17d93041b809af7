#!/usr/bin/env bash
# Installs the Debian packages the tests and the demo run for real:
# PostgreSQL (server and pgbench), Redis (server and redis-benchmark), and
# Chromium (renders the HTML comparison report headless in a test), a
# Java runtime (runs the real YCSB client from Maven Central in a test), and
# MariaDB (a real MySQL-compatible server for the MySQL target's TLS test),
# Tcl (runs the generated HammerDB scripts through a real interpreter),
# Prometheus with node_exporter (the Prometheus telemetry source's tests
# query a real server scraping a real exporter), and ClickHouse (the query
# workload's tests time real queries against Debian's clickhouse-server).
set -euo pipefail
need=()
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
command -v pgbench >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/pgbench" >/dev/null || need+=(postgresql-contrib)
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-benchmark >/dev/null || need+=(redis-tools)
command -v chromium >/dev/null || need+=(chromium)
command -v java >/dev/null || need+=(default-jre-headless)
[ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v mariadb >/dev/null || need+=(mariadb-client)
command -v tclsh >/dev/null || need+=(tcl)
command -v prometheus >/dev/null || need+=(prometheus)
command -v prometheus-node-exporter >/dev/null || need+=(prometheus-node-exporter)
[ -x /usr/sbin/clickhouse-server ] || need+=(clickhouse-server)
if [ "${#need[@]}" = 0 ]; then
  echo "[deps] postgresql, redis, chromium, java, mariadb, tcl, prometheus and clickhouse already installed" >&2
  exit 0
fi
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
echo "[deps] apt-get install ${need[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends --no-upgrade "${need[@]}" >/dev/null
# Debian starts a default cluster and server; the tests start their own.
if command -v service >/dev/null; then
  $SUDO service redis-server stop >/dev/null 2>&1 || true
  $SUDO service postgresql stop >/dev/null 2>&1 || true
  $SUDO service mariadb stop >/dev/null 2>&1 || true
  $SUDO service prometheus stop >/dev/null 2>&1 || true
  $SUDO service prometheus-node-exporter stop >/dev/null 2>&1 || true
  $SUDO service clickhouse-server stop >/dev/null 2>&1 || true
fi
