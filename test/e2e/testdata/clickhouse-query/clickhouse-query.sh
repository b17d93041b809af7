#!/bin/sh
# clickhouse-query: the e2e test's custom workload against a ClickHouse
# target, through its HTTP interface with curl.
#
#   clickhouse-query.sh prepare        creates and fills dbperf_numbers
#   clickhouse-query.sh run [REPEAT]   runs one query REPEAT times (default 10)
#
# It reports in dbperf-lines v1: the query's count, rate and mean latency.
set -eu

# The database as a URL parameter: ClickHouse 18.16 (which plays the target
# in the simulated cluster) has no X-ClickHouse-Database header.
url="http://${DBPERF_TARGET_HOST:?}:${DBPERF_TARGET_PORT:-8123}/?database=${DBPERF_TARGET_DATABASE:-default}"

# q SQL: runs one statement in the target's database as its user.
q() {
	curl -sS --fail-with-body -H "X-ClickHouse-User: ${DBPERF_TARGET_USERNAME:-default}" -H "X-ClickHouse-Key: ${DBPERF_TARGET_PASSWORD:-}" \
		--data-binary "$1" "$url"
}

case "${1:-}" in
prepare)
	q 'CREATE TABLE IF NOT EXISTS dbperf_numbers (n UInt64) ENGINE = MergeTree ORDER BY n'
	q 'INSERT INTO dbperf_numbers SELECT number FROM system.numbers LIMIT 100000'
	;;
run)
	repeat=${2:-10}
	start=$(date +%s%N)
	i=0
	while [ "$i" -lt "$repeat" ]; do
		[ "$(q 'SELECT sum(n) FROM dbperf_numbers')" = 4999950000 ] || { echo "failed wrong sum" >&2; exit 1; }
		i=$((i + 1))
	done
	end=$(date +%s%N)
	{
		echo '# dbperf-lines v1'
		echo 'tool clickhouse-query 1'
		echo "param serverVersion $(q 'SELECT version()')"
		awk -v n="$repeat" -v ns="$((end - start))" 'BEGIN {
			printf "metric operations sum %d count Neutral\n", n
			printf "metric queriesPerSecond - %.3f queries/s HigherIsBetter\n", n / (ns / 1e9)
			printf "metric latencyAverageMillis sum %.3f ms LowerIsBetter\n", ns / 1e6 / n
		}'
	} >"${DBPERF_RESULT_FILE:-/dev/stdout}"
	;;
*)
	echo "usage: $0 prepare | run [REPEAT]" >&2
	exit 2
	;;
esac
