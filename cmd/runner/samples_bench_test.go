package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// BenchmarkSampleStreamOverhead measures what k6's raw sample stream
// costs, side by side: the same k6 measurement of a local HTTP server
// through `dbperf-runner exec`, without and with --sample-stream (k6
// --out json into the runner's named pipe), interleaved ABBA. It reports,
// as medians over the pairs, the throughput ratio with/without
// (req-ratio; target at least 0.98), the runner's extra CPU time as a
// share of k6's (runner-cpu-%) and k6's own extra CPU for writing the
// stream (k6-cpu-%). DBPERF_OVERHEAD_PAIRS, DBPERF_OVERHEAD_SECONDS and
// DBPERF_K6_EXTRA_ARGS (such as "--system-tags=name,group,scenario,status,method,expected_response")
// set its size and k6's options.
func BenchmarkSampleStreamOverhead(b *testing.B) {
	k6 := testutil.NeedEnv(b, "K6")
	pairs := envInt("DBPERF_OVERHEAD_PAIRS", 4)
	seconds := envInt("DBPERF_OVERHEAD_SECONDS", 5)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }))
	defer srv.Close()
	dir := b.TempDir()
	script := filepath.Join(dir, "s.js")
	body := `import http from 'k6/http';
export default function () { http.get('` + srv.URL + `/items', { tags: { name: 'items' } }); }`
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	runnerBin := filepath.Join(dir, "dbperf-runner")
	if out, err := exec.Command("go", "build", "-o", runnerBin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building the runner: %v\n%s", err, out)
	}
	stream := filepath.Join(dir, "samples.json")
	tool := []string{k6, "run", "--no-color", "--quiet", "--vus", "4", "--duration", strconv.Itoa(seconds) + "s",
		"--summary-export", filepath.Join(dir, "summary.json")}
	tool = append(tool, strings.Fields(os.Getenv("DBPERF_K6_EXTRA_ARGS"))...)
	base := []string{"exec", "--workload", "k6", "--summary-file", filepath.Join(dir, "t"), "--max-cpu-percent", "0",
		"--result-file", filepath.Join(dir, "summary.json")}
	plain := append(append(append([]string{}, base...), "--"), append(tool, script)...)
	streamed := append(append(append([]string{}, base...), "--sample-stream", stream, "--"), append(tool, "--out", "json="+stream, script)...)
	var ratios, runnerShares, k6Shares []float64
	for i := range pairs {
		var without, with k6Measurement
		if i%2 == 0 {
			without, with = measureK6(b, runnerBin, plain), measureK6(b, runnerBin, streamed)
		} else {
			with, without = measureK6(b, runnerBin, streamed), measureK6(b, runnerBin, plain)
		}
		k6CPU := without.cpu - without.runnerCPU
		ratios = append(ratios, with.rps/without.rps)
		runnerShares = append(runnerShares, (with.runnerCPU-without.runnerCPU)/k6CPU)
		k6Shares = append(k6Shares, ((with.cpu-with.runnerCPU)/with.rps-(k6CPU)/without.rps)/(k6CPU/without.rps))
		b.Logf("without %.0f req/s (k6 %.2f CPU s, runner %.3f), with %.0f req/s (k6 %.2f CPU s, runner %.3f; %d sample lines): ratio %.4f",
			without.rps, k6CPU, without.runnerCPU, with.rps, with.cpu-with.runnerCPU, with.runnerCPU, with.lines, with.rps/without.rps)
	}
	b.ReportMetric(median(ratios), "req-ratio")
	b.ReportMetric(100*median(runnerShares), "runner-cpu-%")
	b.ReportMetric(100*median(k6Shares), "k6-cpu-per-req-%")
}

type k6Measurement struct {
	rps, cpu, runnerCPU float64
	lines               int
}

func measureK6(b *testing.B, runnerBin string, args []string) k6Measurement {
	b.Helper()
	c := exec.Command(runnerBin, args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil && c.ProcessState.ExitCode() != 0 {
		b.Fatalf("%v: %v\n%s", c.Args, err, out.String())
	}
	r, err := results.DecodeBlock(out.Bytes())
	if err != nil {
		b.Fatalf("no result block: %v\n%s", err, out.String())
	}
	m, ok := r.Get(results.Key{Name: "requestsPerSecond", Operation: "http_reqs"})
	if !ok {
		b.Fatalf("no throughput: %+v", r)
	}
	got := k6Measurement{rps: m.Value, cpu: (c.ProcessState.UserTime() + c.ProcessState.SystemTime()).Seconds()}
	if r.LoadGenerator != nil {
		got.runnerCPU = r.LoadGenerator.RunnerCPUSeconds
	}
	got.lines, _ = strconv.Atoi(r.Parameters["sampleLines"])
	return got
}

func median(v []float64) float64 {
	s := append([]float64{}, v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
