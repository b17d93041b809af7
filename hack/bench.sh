#!/usr/bin/env bash
# The performance targets, measured side by side in one run:
#  - parse throughput of the largest memtier JSON fixture (target >= 100 MB/s),
#  - the runner's overhead on pgbench throughput, bare and wrapped,
#    interleaved, as the median ratio runner/bare (target >= 0.99).
#  - the cost of polling the target's own statistics (telemetry): the runner's
#    extra CPU as a share of the load generator's (target <= 1 %), interleaved,
#    and the CPU of one poll of each database's statistics; the same for
#    scraping a host's node_exporter (target <= 0.5 % at 5 s) and for the
#    diagnostics (statements' snapshots, waits sampled every 100 ms), and
#    the throughput cost of an on-CPU profile of the server (perf, 99 Hz),
#  - merging 64 load generators' results with histograms (time and size),
#  - the comparison statistics: power to detect 3 % and 5 % drops and the
#    false-verdict rate, per CV and repetition count, by simulation; the
#    paired and sequential designs (power, false verdicts, rounds run); and the
#    family design of per-operation tables (20 and 100 operations, 5 vs 5).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "[bench] parse throughput" >&2
go test ./workloads/memtier/ -run '^$' -bench BenchmarkParseJSON -benchtime 3s -count 3
echo "[bench] runner overhead (pgbench bare vs through dbperf-runner exec, interleaved)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkRunnerOverhead -benchtime 1x -timeout 30m -v
echo "[bench] telemetry: the statistics poller's CPU as a share of the load generator's (pgbench with and without --server-statistics, interleaved)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkServerStatisticsOverhead -benchtime 1x -timeout 30m -v
echo "[bench] diagnostics: the runner's CPU and pgbench's throughput with pg_stat_statements snapshots and waits sampled every 100 ms and 20 ms (with and without --server-diagnostics, interleaved)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkDiagnosticsOverhead -benchtime 1x -timeout 30m -v
echo "[bench] profiles: pgbench's throughput and the runner's CPU with an on-CPU profile of the server by perf at 99 and 999 Hz (with and without --server-profile-hz, interleaved)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkProfilerOverhead -benchtime 1x -timeout 30m -v
echo "[bench] telemetry: scraping a host's node_exporter, the runner's CPU as a share of the load generator's (pgbench with and without --host-exporter, interleaved)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkHostScrapeOverhead -benchtime 1x -timeout 30m -v
echo "[bench] telemetry: CPU and round trip of one poll of PostgreSQL, MariaDB, Redis and FerretDB (MongoDB's protocol) statistics" >&2
FERRETDB="${FERRETDB:-$(bash hack/build-ferretdb.sh | tail -n 1)}" go test ./internal/runner/dbstats/ -run '^$' -bench BenchmarkPoll -benchtime 2000x -count 1
echo "[bench] statistics: power and false verdicts per CV and repetition count (docs/statistics.md)" >&2
go test ./internal/stats/ -run '^$' -bench BenchmarkPowerSimulation -benchtime 1x -timeout 10m
echo "[bench] statistics: independent and paired designs of an interleaved comparison, stationary and drifting 0.5 %/round (power for 3 % at CV 2 %, false verdicts; docs/statistics.md)" >&2
go test ./internal/stats/ -run '^$' -bench BenchmarkDesignSimulation -benchtime 1x -timeout 20m
echo "[bench] statistics: the paired design stopping early (O'Brien-Fleming and Pocock spending; power for 3 % at CV 2 %, false verdicts and the mean rounds run; docs/statistics.md)" >&2
go test ./internal/stats/ -run '^$' -bench BenchmarkSequentialDesign -benchtime 1x -timeout 10m
echo "[bench] statistics: the paired design adjusted by a canary covariate, by the share of the run-to-run variance the nodes make (power for 3 % at CV 2 %, false verdicts; docs/statistics.md)" >&2
go test ./internal/stats/ -run '^$' -bench BenchmarkCovariateDesign -benchtime 1x -timeout 10m
echo "[bench] statistics: the independent and the paired analysis on real pgbench runs (simple against prepared protocol, ABBA rounds) under a drift injected by a growing noisy neighbour: the width of each interval (docs/statistics.md)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkPairedDesignOnRealRuns -benchtime 1x -timeout 30m -v
echo "[bench] statistics: the canary as a covariate on real pgbench runs, each run on a 'node' of its own quality (a noisy neighbour drawn per run): the paired and the adjusted interval (docs/statistics.md)" >&2
go test ./cmd/runner/ -run '^$' -bench BenchmarkCovariateOnRealRuns -benchtime 1x -timeout 30m -v
echo "[bench] statistics: the family design of per-operation tables, 20 and 100 operations at 5 vs 5 (power, false verdicts, FDR per design; docs/statistics.md)" >&2
go test ./internal/stats/ -run '^$' -bench BenchmarkOperationFamilies -benchtime 1x -timeout 10m
echo "[bench] merging 64 load generators (5 operations, histograms of 50k latencies each)" >&2
go test ./internal/results/ -run '^$' -bench BenchmarkMerge -benchtime 20x -count 3
