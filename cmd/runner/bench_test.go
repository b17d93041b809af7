package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
)

// BenchmarkRunnerOverhead runs the same pgbench measurement bare and through
// `dbperf-runner exec`, interleaved in ABBA order (bare-runner, runner-bare,
// ...) so that drift of the machine and the order within a pair hit both
// alike, and reports the median of the per-pair ratios runner/bare as
// tps-ratio (target: at least 0.99).
// DBPERF_OVERHEAD_PAIRS and DBPERF_OVERHEAD_SECONDS set its size.
func BenchmarkRunnerOverhead(b *testing.B) {
	pairs := envInt("DBPERF_OVERHEAD_PAIRS", 8)
	seconds := envInt("DBPERF_OVERHEAD_SECONDS", 5)
	pg := testutil.StartPostgres(b)
	env := append(os.Environ(), pg.Env()...)
	if out, err := command(env, "pgbench", "--initialize", "--quiet", "--scale", "5").CombinedOutput(); err != nil {
		b.Fatalf("pgbench init: %v\n%s", err, out)
	}
	runnerBin := filepath.Join(b.TempDir(), "dbperf-runner")
	if out, err := exec.Command("go", "build", "-o", runnerBin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building the runner: %v\n%s", err, out)
	}
	tool := []string{"pgbench", "--client", "4", "--jobs", "2", "--time", strconv.Itoa(seconds), "--select-only", "--protocol", "prepared"}
	var ratios []float64
	b.ResetTimer()
	for b.Loop() {
		ratios = ratios[:0]
		args := append([]string{"exec", "--workload", "pgbench", "--summary-file", filepath.Join(b.TempDir(), "t"), "--max-cpu-percent", "0", "--"}, tool...)
		for i := range pairs {
			var bare, wrapped float64
			if i%2 == 0 {
				bare = tps(b, command(env, tool[0], tool[1:]...))
				wrapped = tps(b, command(env, runnerBin, args...))
			} else {
				wrapped = tps(b, command(env, runnerBin, args...))
				bare = tps(b, command(env, tool[0], tool[1:]...))
			}
			ratios = append(ratios, wrapped/bare)
			b.Logf("pair: bare %.0f tps, through the runner %.0f tps, ratio %.4f", bare, wrapped, wrapped/bare)
		}
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "tps-ratio")
	b.ReportMetric(ratios[0], "tps-ratio-min")
}

func command(env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Env = env
	return c
}

// tps runs a pgbench command (bare or wrapped) and reads its throughput with
// the same parser, so both sides are measured alike.
func tps(b *testing.B, c *exec.Cmd) float64 {
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
	return m.Value
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
