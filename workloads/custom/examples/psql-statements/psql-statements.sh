#!/bin/sh
# psql-statements: an example of a custom dbperf workload (see
# docs/workloads/custom.md). It times SQL statements with psql against
# PostgreSQL, each repeated REPEAT times in a session of its own, and prints
# the latencies of each statement and the throughput in the line format
# dbperf-lines v1.
#
#   psql-statements.sh prepare        creates and fills the tables it uses
#   psql-statements.sh run [REPEAT]   times every statement REPEAT times (default 20)
#
# The target comes as dbperf passes it to every custom tool:
# DBPERF_TARGET_HOST, DBPERF_TARGET_PORT, DBPERF_TARGET_DATABASE,
# DBPERF_TARGET_USERNAME, DBPERF_TARGET_PASSWORD and DBPERF_TARGET_TLS (with
# DBPERF_TARGET_CA_FILE, DBPERF_TARGET_CERT_FILE, DBPERF_TARGET_KEY_FILE). The
# results go to stdout, or to the file DBPERF_RESULT_FILE names.
#
# To time your own statements, change statements() below: one statement a
# line, NAME|SQL, NAME being the operation the results report it under.
# (random() in a WHERE clause is drawn again for every row it tests: the
# subquery draws one account.)
set -eu

statements() {
	cat <<'SQL'
point_select|SELECT balance FROM dbperf_accounts WHERE id = (SELECT 1 + (random() * 9999)::int)
update|UPDATE dbperf_accounts SET balance = balance + 1 WHERE id = (SELECT 1 + (random() * 9999)::int)
insert|INSERT INTO dbperf_history (account, delta) VALUES (1 + (random() * 9999)::int, 1)
aggregate|SELECT count(*), sum(balance) FROM dbperf_accounts
SQL
}

prepare() {
	psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
DROP TABLE IF EXISTS dbperf_accounts, dbperf_history;
CREATE TABLE dbperf_accounts (id int PRIMARY KEY, balance bigint NOT NULL);
INSERT INTO dbperf_accounts SELECT g, 0 FROM generate_series(1, 10000) g;
CREATE TABLE dbperf_history (account int NOT NULL, delta int NOT NULL, at timestamptz NOT NULL DEFAULT now());
ANALYZE dbperf_accounts;
SQL
}

# session NAME SQL REPEAT: one psql session running SQL REPEAT times with
# \timing; prints "Time: x ms" per statement, then "elapsed y" (ms, by the
# server's clock, from before the first statement to after the last).
session() {
	{
		# printf, not echo: dash's echo reads \t in \timing as a tab.
		printf '%s\n' '\set ON_ERROR_STOP on' \
			'SELECT extract(epoch FROM clock_timestamp()) AS dbperf_t0 \gset' \
			'\timing on'
		i=0
		while [ "$i" -lt "$3" ]; do
			printf '%s;\n' "$2"
			i=$((i + 1))
		done
		printf '%s\n' '\timing off' \
			'SELECT round(((extract(epoch FROM clock_timestamp()) - :dbperf_t0) * 1000)::numeric, 3) AS dbperf_ms \gset' \
			'\echo elapsed :dbperf_ms'
	} | psql -X -q -o /dev/null -f -
}

run() {
	repeat=$1
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/psql-statements.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	statements | while IFS='|' read -r name sql; do
		[ -n "$name" ] || continue
		session "$name" "$sql" "$repeat" >"$tmp/$name.out"
		echo "$name" >>"$tmp/names"
	done
	{
		echo '# dbperf-lines v1'
		echo 'tool psql-statements 1'
		echo "param serverVersion $(psql -X -A -t -c 'SHOW server_version' | cut -d' ' -f1)"
		echo "param repeat $repeat"
		while read -r name; do
			report "$name" "$tmp/$name.out"
		done <"$tmp/names"
		# The whole run: every statement over the time spent in them all.
		cat "$tmp"/*.out | awk '
			/^Time: / { n++ }
			/^elapsed / { ms += $2 }
			END { printf "metric statementsPerSecond - %.3f statements/s HigherIsBetter\n", n / (ms / 1000) }'
	} >"${DBPERF_RESULT_FILE:-/dev/stdout}"
}

# report NAME FILE: the records of one statement's session.
report() {
	sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$2" | sort -n | awk -v op="$1" -v elapsed="$(sed -n 's/^elapsed //p' "$2")" '
		{ v[NR] = $1; sum += $1 }
		END {
			if (NR == 0) { print "failed no timing of " op; exit }
			printf "metric operations %s %d count Neutral\n", op, NR
			printf "metric statementsPerSecond %s %.3f statements/s HigherIsBetter\n", op, NR / (elapsed / 1000)
			printf "metric latencyAverageMillis %s %.3f ms LowerIsBetter\n", op, sum / NR
			printf "metric latencyMinMillis %s %.3f ms LowerIsBetter\n", op, v[1]
			printf "metric latencyP50Millis %s %.3f ms LowerIsBetter\n", op, v[rank(50)]
			printf "metric latencyP95Millis %s %.3f ms LowerIsBetter\n", op, v[rank(95)]
			printf "metric latencyMaxMillis %s %.3f ms LowerIsBetter\n", op, v[NR]
		}
		# The nearest rank of percentile p.
		function rank(p,   r) { r = int(p * NR / 100); if (r < p * NR / 100) r++; return r < 1 ? 1 : r }'
}

export LC_ALL=C
export PGHOST="${DBPERF_TARGET_HOST:?DBPERF_TARGET_HOST is not set}"
export PGPORT="${DBPERF_TARGET_PORT:-5432}"
export PGDATABASE="${DBPERF_TARGET_DATABASE:-postgres}"
export PGAPPNAME=dbperf-psql-statements PGCONNECT_TIMEOUT=10
if [ -n "${DBPERF_TARGET_USERNAME:-}" ]; then export PGUSER="$DBPERF_TARGET_USERNAME"; fi
if [ -n "${DBPERF_TARGET_PASSWORD:-}" ]; then export PGPASSWORD="$DBPERF_TARGET_PASSWORD"; fi
if [ "${DBPERF_TARGET_TLS:-false}" = true ]; then
	if [ -n "${DBPERF_TARGET_CA_FILE:-}" ]; then
		export PGSSLMODE=verify-full PGSSLROOTCERT="$DBPERF_TARGET_CA_FILE"
	else
		export PGSSLMODE=require
	fi
	if [ -n "${DBPERF_TARGET_CERT_FILE:-}" ]; then
		export PGSSLCERT="$DBPERF_TARGET_CERT_FILE" PGSSLKEY="$DBPERF_TARGET_KEY_FILE"
	fi
else
	export PGSSLMODE=prefer
fi

case "${1:-}" in
prepare) prepare ;;
run) run "${2:-20}" ;;
*)
	echo "usage: $0 prepare | run [REPEAT]" >&2
	exit 2
	;;
esac
