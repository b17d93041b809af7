package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
)

// BenchmarkRunnerOverhead runs the same pgbench measurement bare and through
// `dbperf-runner exec`, interleaved in ABBA order (bare-runner, runner-bare,
// ...) so that drift of the machine and the order within a pair hit both
// alike, and reports the median of the per-pair ratios runner/bare as
// tps-ratio (target: at least 0.99). Because throughput on a shared machine
// varies far more than the runner could cost, it also reports the runner's
// own CPU time as a share of the bare pgbench client's, runner-cpu-share: a
// direct measure of the cost that noise cannot hide.
// DBPERF_OVERHEAD_PAIRS and DBPERF_OVERHEAD_SECONDS set its size.
func BenchmarkRunnerOverhead(b *testing.B) {
	pairs := envInt("DBPERF_OVERHEAD_PAIRS", 8)
	seconds := envInt("DBPERF_OVERHEAD_SECONDS", 5)
	pg := testutil.StartPostgres(b)
	env, runnerBin := benchSetup(b, pg)
	tool := []string{"pgbench", "--client", "4", "--jobs", "2", "--time", strconv.Itoa(seconds), "--select-only", "--protocol", "prepared"}
	var ratios, shares []float64
	b.ResetTimer()
	for b.Loop() {
		ratios, shares = ratios[:0], shares[:0]
		args := append([]string{"exec", "--workload", "pgbench", "--summary-file", filepath.Join(b.TempDir(), "t"), "--max-cpu-percent", "0", "--"}, tool...)
		for i := range pairs {
			var bare, wrapped measurement
			if i%2 == 0 {
				bare = measure(b, command(env, tool[0], tool[1:]...))
				wrapped = measure(b, command(env, runnerBin, args...))
			} else {
				wrapped = measure(b, command(env, runnerBin, args...))
				bare = measure(b, command(env, tool[0], tool[1:]...))
			}
			ratios = append(ratios, wrapped.tps/bare.tps)
			shares = append(shares, wrapped.runnerCPU/bare.cpu)
			b.Logf("pair: bare %.0f tps (client %.2f CPU s), through the runner %.0f tps (runner %.3f CPU s), ratio %.4f",
				bare.tps, bare.cpu, wrapped.tps, wrapped.runnerCPU, wrapped.tps/bare.tps)
		}
	}
	sort.Float64s(ratios)
	sort.Float64s(shares)
	b.ReportMetric(ratios[len(ratios)/2], "tps-ratio")
	b.ReportMetric(ratios[0], "tps-ratio-min")
	b.ReportMetric(shares[len(shares)/2], "runner-cpu-share")
}

func command(env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = env
	return c
}

// measurement is one pgbench run: its throughput, the CPU time of the
// process started (pgbench, or the runner with pgbench as its child), and,
// through the runner, the runner's own CPU time from its result.
type measurement struct {
	tps, cpu, runnerCPU float64
	// profilerCPU is perf's, when the result holds a profile.
	profilerCPU float64
}

// measure runs a pgbench command, bare or wrapped, and reads its throughput
// with the same parser, so both sides are measured alike.
func measure(b *testing.B, c *exec.Cmd) measurement {
	b.Helper()
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		b.Fatalf("%v: %v\n%s", c.Args, err, out.String())
	}
	r := pgbench.Pgbench{}.Parse(workloads.ParseInput{Output: out.Bytes()})
	m, ok := r.Get(results.Key{Name: "transactionsPerSecond"})
	if !ok {
		b.Fatalf("no tps in:\n%s", out.String())
	}
	got := measurement{tps: m.Value, cpu: (c.ProcessState.UserTime() + c.ProcessState.SystemTime()).Seconds()}
	if block, err := results.DecodeBlock(out.Bytes()); err == nil && block.LoadGenerator != nil {
		got.runnerCPU = block.LoadGenerator.RunnerCPUSeconds
	}
	if block, err := results.DecodeBlock(out.Bytes()); err == nil && block.Diagnostics != nil && block.Diagnostics.Profile != nil {
		got.profilerCPU = block.Diagnostics.Profile.ProfilerCPUSeconds
	}
	return got
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkServerStatisticsOverhead measures what polling the target's own
// statistics costs the load generator, side by side: the same pgbench
// measurement through `dbperf-runner exec` without and with
// --server-statistics postgres (at the default 5 s, and at 1 s, the
// finest the API allows), interleaved ABBA. It reports, as medians over the
// pairs, the runner's extra CPU time with polling as a share of the
// pgbench client's CPU (poller-cpu-share; target at most 1 %), the
// throughput ratio with/without, and the CPU per poll.
// DBPERF_OVERHEAD_PAIRS and DBPERF_OVERHEAD_SECONDS set its size. The
// poller talks to the server, not to the API server: it adds no API
// request.
func BenchmarkServerStatisticsOverhead(b *testing.B) {
	pairs := envInt("DBPERF_OVERHEAD_PAIRS", 6)
	seconds := envInt("DBPERF_OVERHEAD_SECONDS", 10)
	pg := testutil.StartPostgres(b)
	env, runnerBin := benchSetup(b, pg, "DBPERF_TARGET_USERNAME="+pg.User, "DBPERF_TARGET_PASSWORD="+pg.Password)
	tool := []string{"pgbench", "--client", "4", "--jobs", "2", "--time", strconv.Itoa(seconds), "--select-only", "--protocol", "prepared"}
	base := []string{"exec", "--workload", "pgbench", "--summary-file", filepath.Join(b.TempDir(), "t"), "--max-cpu-percent", "0"}
	polled := func(interval string) []string {
		a := append(append([]string{}, base...), "--server-statistics", "postgres", "--server-address", "127.0.0.1:"+strconv.Itoa(pg.Port),
			"--server-database", pg.Database, "--server-poll-interval", interval, "--")
		return append(a, tool...)
	}
	plain := append(append(append([]string{}, base...), "--"), tool...)
	overheadOf(b, "poller", env, runnerBin, plain, polled, pairs, seconds)
}

// BenchmarkDiagnosticsOverhead: the runner's CPU for the diagnostics
// (pg_stat_statements' two snapshots, pg_stat_activity's waits sampled
// every 100 ms and every 20 ms) as a share of the load generator's, and
// pgbench's throughput ratio, pgbench through the runner polling the
// server's statistics with and without --server-diagnostics, interleaved
// (docs/telemetry.md, "Diagnostics").
func BenchmarkDiagnosticsOverhead(b *testing.B) {
	serverOverhead(b, "diagnostics", nil, func(interval string) []string {
		return []string{"--server-diagnostics", "--server-wait-interval", interval}
	}, "100ms", "20ms")
}

// serverOverhead measures the runner with and without flags (what's, at
// each level) beside the statistics poller and base: pgbench's
// select-only script, 4 clients, through the runner polling the local
// PostgreSQL, interleaved (overheadOf).
func serverOverhead(b *testing.B, what string, base []string, flags func(level string) []string, levels ...string) {
	pairs := envInt("DBPERF_OVERHEAD_PAIRS", 6)
	seconds := envInt("DBPERF_OVERHEAD_SECONDS", 10)
	pg := testutil.StartPostgres(b)
	env, runnerBin := benchSetup(b, pg, "DBPERF_TARGET_USERNAME="+pg.User, "DBPERF_TARGET_PASSWORD="+pg.Password)
	tool := []string{"pgbench", "--client", "4", "--jobs", "2", "--time", strconv.Itoa(seconds), "--select-only", "--protocol", "prepared"}
	common := append([]string{"exec", "--workload", "pgbench", "--summary-file", filepath.Join(b.TempDir(), "t"), "--max-cpu-percent", "0",
		"--server-statistics", "postgres", "--server-address", "127.0.0.1:" + strconv.Itoa(pg.Port), "--server-database", pg.Database}, base...)
	with := func(level string) []string {
		a := append(append(append([]string{}, common...), flags(level)...), "--")
		return append(a, tool...)
	}
	plain := append(append(append([]string{}, common...), "--"), tool...)
	overheadOf(b, what, env, runnerBin, plain, with, pairs, seconds, levels...)
}

// BenchmarkProfilerOverhead: what an on-CPU profile of the server costs,
// pgbench (select-only, 4 clients) through the runner with diagnostics,
// with and without --server-profile-hz (99, the default, and 999),
// interleaved: the throughput ratio is the figure that matters (perf
// samples the server's CPUs, the kernel takes the time from them), the
// runner's extra CPU is perf's own and the folding of its stacks
// (docs/telemetry.md, "Profiles"). perf must be able to sample every CPU
// (root here).
func BenchmarkProfilerOverhead(b *testing.B) {
	serverOverhead(b, "profiler", []string{"--server-diagnostics"}, func(hz string) []string {
		return []string{"--server-profile-hz", hz}
	}, "99", "999")
}

// BenchmarkHostScrapeOverhead: the runner's CPU for scraping a real
// node_exporter (every 5 s, and every 1 s) as a share of the load
// generator's, pgbench through the runner with and without
// --host-exporter, interleaved (target <= 0.5 % at 5 s).
func BenchmarkHostScrapeOverhead(b *testing.B) {
	pairs := envInt("DBPERF_OVERHEAD_PAIRS", 6)
	seconds := envInt("DBPERF_OVERHEAD_SECONDS", 10)
	pg := testutil.StartPostgres(b)
	exporter := testutil.StartNodeExporter(b)
	env, runnerBin := benchSetup(b, pg)
	tool := []string{"pgbench", "--client", "4", "--jobs", "2", "--time", strconv.Itoa(seconds), "--select-only", "--protocol", "prepared"}
	base := []string{"exec", "--workload", "pgbench", "--summary-file", filepath.Join(b.TempDir(), "t"), "--max-cpu-percent", "0"}
	scraped := func(interval string) []string {
		a := append(append([]string{}, base...), "--host-exporter", `{"name":"db-01","role":"database","url":"http://`+exporter+`/metrics","index":0}`,
			"--host-poll-interval", interval, "--")
		return append(a, tool...)
	}
	plain := append(append(append([]string{}, base...), "--"), tool...)
	overheadOf(b, "scraper", env, runnerBin, plain, scraped, pairs, seconds)
}

// overheadOf measures pairs of the runner without and with what costs
// (what's flags at an interval, or a frequency), interleaved, at 5 s and
// 1 s unless told, and reports the median of its CPU as a share of the
// tool's, the tool's throughput ratio and, at an interval, its CPU per
// poll.
func overheadOf(b *testing.B, what string, env []string, runnerBin string, plain []string, with func(interval string) []string, pairs, seconds int, intervals ...string) {
	if len(intervals) == 0 {
		intervals = []string{"5s", "1s"}
	}
	for _, interval := range intervals {
		var shares, ratios, perPoll []float64
		for i := range pairs {
			var without, withIt measurement
			if i%2 == 0 {
				without = measure(b, command(env, runnerBin, plain...))
				withIt = measure(b, command(env, runnerBin, with(interval)...))
			} else {
				withIt = measure(b, command(env, runnerBin, with(interval)...))
				without = measure(b, command(env, runnerBin, plain...))
			}
			client := without.cpu - without.runnerCPU // pgbench's own CPU, the runner's child
			extra := withIt.runnerCPU + withIt.profilerCPU - without.runnerCPU
			shares = append(shares, extra/client)
			ratios = append(ratios, withIt.tps/without.tps)
			if every, err := time.ParseDuration(interval); err == nil {
				perPoll = append(perPoll, extra/(float64(seconds)/every.Seconds()+2))
			}
			b.Logf("every %s: without %.0f tps (runner %.4f CPU s, pgbench %.2f CPU s), with %.0f tps (runner %.4f CPU s): %s %.3f %% of the client",
				interval, without.tps, without.runnerCPU, client, withIt.tps, withIt.runnerCPU, what, 100*extra/client)
		}
		sort.Float64s(shares)
		sort.Float64s(ratios)
		sort.Float64s(perPoll)
		b.ReportMetric(100*shares[len(shares)/2], what+"-cpu-%-at-"+interval)
		b.ReportMetric(ratios[len(ratios)/2], "tps-ratio-at-"+interval)
		if len(perPoll) > 0 {
			b.ReportMetric(1e6*perPoll[len(perPoll)/2], what+"-cpu-µs/poll-at-"+interval)
		}
	}
}

// benchSetup initialises pgbench's tables (scale 5) in pg and builds the
// runner; env is the tools' environment (pg's and extra variables).
func benchSetup(b *testing.B, pg testutil.Postgres, extra ...string) (env []string, runnerBin string) {
	env = append(append(os.Environ(), pg.Env()...), extra...)
	if out, err := command(env, "pgbench", "--initialize", "--quiet", "--scale", "5").CombinedOutput(); err != nil {
		b.Fatalf("pgbench init: %v\n%s", err, out)
	}
	runnerBin = filepath.Join(b.TempDir(), "dbperf-runner")
	if out, err := exec.Command("go", "build", "-o", runnerBin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building the runner: %v\n%s", err, out)
	}
	return env, runnerBin
}

// BenchmarkPairedDesignOnRealRuns measures the designs of issue 31 on real
// runs: pgbench (select-only, 2 clients, 2 s) against a local PostgreSQL,
// variant A the simple query protocol and B the prepared one, in rounds of
// ABBA order, while a noisy neighbour in this process (two spinning
// threads) takes a share of the CPU that grows by 7 points every round:
// a slow drift of the machine both variants meet alike within a round. It
// reports the change of B against A and the width of its 95 % interval
// by the independent analysis (Welch on logarithms of the runs) and the
// paired one (paired t on the rounds' log ratios), and their ratio
// (goal: the paired interval at least 2× narrower). DBPERF_DESIGN_ROUNDS
// sets the rounds (8).
func BenchmarkPairedDesignOnRealRuns(b *testing.B) {
	rounds := envInt("DBPERF_DESIGN_ROUNDS", 8)
	pg := testutil.StartPostgres(b)
	env, _ := benchSetup(b, pg)
	variant := func(mode string) []string {
		return []string{"--client", "2", "--jobs", "2", "--time", "2", "--select-only", "--no-vacuum", "--protocol", mode}
	}
	var base, cand []float64
	b.ResetTimer()
	for b.Loop() {
		base, cand = base[:0], cand[:0]
		for i := range rounds {
			stop := neighbour(0.07 * float64(i))
			a := func() { base = append(base, measure(b, command(env, "pgbench", variant("simple")...)).tps) }
			p := func() { cand = append(cand, measure(b, command(env, "pgbench", variant("prepared")...)).tps) }
			if i%2 == 0 {
				a()
				p()
			} else {
				p()
				a()
			}
			stop()
			b.Logf("round %d (neighbour %.0f %% of two threads): simple %.0f tps, prepared %.0f tps", i+1, 7*float64(i), base[i], cand[i])
		}
	}
	ind, indP := stats.WelchLogDiff(base, cand, 0.05)
	pr := stats.PairedLogDiff(base, cand, 0.05)
	iw, pw := ind.CIHighPercent-ind.CILowPercent, pr.CIHighPercent-pr.CILowPercent
	b.Logf("independent: Δ %+.2f %% [%+.2f, %+.2f] p %.2g; paired: Δ %+.2f %% [%+.2f, %+.2f] p %.2g; interval %.1f× narrower paired",
		ind.DeltaPercent, ind.CILowPercent, ind.CIHighPercent, indP, pr.DeltaPercent, pr.CILowPercent, pr.CIHighPercent, pr.P, iw/pw)
	b.ReportMetric(iw, "indep-ci-width%")
	b.ReportMetric(pw, "paired-ci-width%")
	b.ReportMetric(iw/pw, "narrowing")
}

// BenchmarkCovariateOnRealRuns measures the canary as a covariate on real
// runs: pgbench as in BenchmarkPairedDesignOnRealRuns (simple against
// prepared protocol, ABBA rounds), but each run gets a node of its own
// quality — a noisy neighbour taking a share of the CPU drawn afresh for
// every run (0-80 % of two threads, seeded) — and the runner's canary
// (runner.Canary, 1 s) measures it just before the run, as it does in a
// pod. It reports the paired interval's width, the canary-adjusted one's
// (its CPU figure), their ratio, the variance the canary removed and
// Pearson's r. DBPERF_DESIGN_ROUNDS sets the rounds (8).
func BenchmarkCovariateOnRealRuns(b *testing.B) {
	rounds := envInt("DBPERF_DESIGN_ROUNDS", 8)
	pg := testutil.StartPostgres(b)
	env, _ := benchSetup(b, pg)
	dir := b.TempDir()
	variant := func(mode string) []string {
		return []string{"--client", "2", "--jobs", "2", "--time", "2", "--select-only", "--no-vacuum", "--protocol", mode}
	}
	var base, cand, baseCov, candCov []float64
	b.ResetTimer()
	for b.Loop() {
		r := rand.New(rand.NewPCG(31, 4))
		base, cand, baseCov, candCov = base[:0], cand[:0], baseCov[:0], candCov[:0]
		one := func(mode string, tps, cov *[]float64) float64 {
			share := 0.8 * r.Float64()
			stop := neighbour(share)
			defer stop()
			ms, err := runner.Canary(context.Background(), dir, time.Second)
			if err != nil {
				b.Fatal(err)
			}
			*cov = append(*cov, ms[0].Value) // the CPU figure comes first
			*tps = append(*tps, measure(b, command(env, "pgbench", variant(mode)...)).tps)
			return share
		}
		for i := range rounds {
			var sa, sp float64
			if i%2 == 0 {
				sa, sp = one("simple", &base, &baseCov), one("prepared", &cand, &candCov)
			} else {
				sp, sa = one("prepared", &cand, &candCov), one("simple", &base, &baseCov)
			}
			b.Logf("round %d: simple %.0f tps (neighbour %.0f %%, canary %.0f MB/s), prepared %.0f tps (neighbour %.0f %%, canary %.0f MB/s)",
				i+1, base[i], 100*sa, baseCov[i], cand[i], 100*sp, candCov[i])
		}
	}
	pr := stats.PairedLogDiff(base, cand, 0.05)
	adj := stats.CovariatePairedLogDiff(base, cand, baseCov, candCov, 0.05)
	pw, aw := pr.CIHighPercent-pr.CILowPercent, adj.CIHighPercent-adj.CILowPercent
	b.Logf("paired: Δ %+.2f %% [%+.2f, %+.2f]; adjusted by the canary: Δ %+.2f %% [%+.2f, %+.2f], θ %.2f, r %.2f, variance removed %.0f %%; interval %.1f× narrower adjusted",
		pr.DeltaPercent, pr.CILowPercent, pr.CIHighPercent, adj.DeltaPercent, adj.CILowPercent, adj.CIHighPercent, adj.Theta, adj.Correlation, adj.VarianceRemovedPercent, pw/aw)
	b.ReportMetric(pw, "paired-ci-width%")
	b.ReportMetric(aw, "adjusted-ci-width%")
	b.ReportMetric(pw/aw, "narrowing")
	b.ReportMetric(adj.VarianceRemovedPercent, "variance-removed%")
	b.ReportMetric(adj.Correlation, "r")
}

// neighbour spins two threads of this process for share of every 10 ms
// until stop is called.
func neighbour(share float64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	if share > 0 {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				const period = 10 * time.Millisecond
				busy := time.Duration(share * float64(period))
				tick := time.NewTicker(period)
				defer tick.Stop()
				for {
					for start := time.Now(); time.Since(start) < busy; {
					}
					select {
					case <-done:
						return
					case <-tick.C: // idle for the rest of the period
					}
				}
			}()
		}
	}
	return func() { close(done); wg.Wait() }
}
