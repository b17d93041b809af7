#!/usr/bin/env bash
# The embedded default: real PostgreSQL and redis-server on 127.0.0.1, each
# measured through dbperf-runner exactly as a workload pod runs it (pgbench
# swept over 4 and 8 clients, redis-benchmark SET/GET), and the results
# printed as tables. Nothing leaves this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\n[demo] %s\n' "$*" >&2; }
SECONDS_PER_RUN="${DEMO_SECONDS:-5}"

log "installing PostgreSQL and Redis from Debian if missing"
bash hack/install-deps.sh demo
log "building dbperf-runner"
make -s build >/dev/null
RUNNER="$PWD/bin/dbperf-runner"

work="$(mktemp -d /tmp/dbperf-demo.XXXXXX)"
chmod 755 "$work"
PGBIN="$(dirname "$(compgen -G '/usr/lib/postgresql/*/bin/initdb' | tail -n 1)")"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  as_pg "$PGBIN/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  [ -n "${REDIS_PID:-}" ] && kill "$REDIS_PID" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PGPORT="$(free_port)"
log "starting PostgreSQL on 127.0.0.1:$PGPORT"
mkdir -p "$work/pg" && [ "$(id -u)" = 0 ] && chown postgres "$work/pg"
as_pg "$PGBIN/initdb" -D "$work/pg" -U bench --auth=trust --no-sync >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$work/pg" -o "-p $PGPORT -k $work/pg -c listen_addresses=127.0.0.1 -c fsync=off" -l "$work/pg/log" -w start >/dev/null
export PGHOST=127.0.0.1 PGPORT PGUSER=bench PGDATABASE=postgres

REDISPORT="$(free_port)"
log "starting redis-server on 127.0.0.1:$REDISPORT"
redis-server --port "$REDISPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >/dev/null &
REDIS_PID=$!
for _ in $(seq 50); do redis-cli -p "$REDISPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

log "pgbench prepare step: pgbench --initialize --scale 5"
"$RUNNER" exec --workload pgbench --prepare --summary-file "$work/t" -- pgbench --initialize --quiet --scale 5 >"$work/init.log"
"$RUNNER" show --input "$work/init.log"
for clients in 4 8; do
  log "pgbench, $clients clients, ${SECONDS_PER_RUN}s (tpcb-like)"
  "$RUNNER" exec --workload pgbench --summary-file "$work/t" -- \
    pgbench --client "$clients" --jobs 2 --time "$SECONDS_PER_RUN" --progress 1 --report-per-command >"$work/pg-$clients.log" || true
  "$RUNNER" show --input "$work/pg-$clients.log" || true
done
log "redis-benchmark SET/GET, 50 clients, pipeline 1"
"$RUNNER" exec --workload redis-benchmark --summary-file "$work/t" -- \
  redis-benchmark -h 127.0.0.1 -p "$REDISPORT" -c 50 -n 200000 -t set,get --csv >"$work/redis.log" || true
"$RUNNER" show --input "$work/redis.log" || true
log "note: here the tools, the servers and the runner share one machine (one cgroup), so the
       load-generator CPU check sees the servers' CPU too and may call a run saturated; in a
       workload pod it sees the load generator alone"
log "done: the same runner, in a workload pod, writes these results into the BenchmarkRun's status and ConfigMap"
