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
	k6pkg "github.com/dbperf-io/dbperf-operator/workloads/k6"
)

// BenchmarkSampleStreamOverhead measures what aggregating k6's samples
// costs k6, side by side: the same k6 measurement of a local HTTP server
// through `dbperf-runner exec`, without samples (plain), with k6's JSON
// stream into the runner's named pipe (--sample-aggregation stream), and
// aggregated in k6 by dbperf's output extension (the default when K6 is
// the k6 hack/build-k6.sh builds), in an order rotated every round. It
// reports, as medians over the rounds, each one's throughput ratio to
// plain (stream-req-ratio, in-k6-req-ratio; target at least 0.98), k6's
// extra CPU per request (stream-k6-cpu-per-req-%, in-k6-…) and the
// runner's extra CPU as a share of k6's for the stream (runner-cpu-%).
// DBPERF_OVERHEAD_PAIRS (rounds), DBPERF_OVERHEAD_SECONDS and
// DBPERF_K6_EXTRA_ARGS (such as "--system-tags=name,group,scenario,status,method,expected_response")
// set its size and k6's options.
func BenchmarkSampleStreamOverhead(b *testing.B) {
	k6 := testutil.NeedEnv(b, "K6")
	rounds := envInt("DBPERF_OVERHEAD_PAIRS", 4)
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
	withSamples := func(aggregation string) []string {
		a := append(append([]string{}, base...), "--sample-stream", stream, "--sample-aggregation", aggregation, "--")
		return append(a, append(append([]string{}, tool...), "--out", "json="+stream, script)...)
	}
	variants := []struct {
		name, aggregation string
		args              []string
	}{
		{"plain", "", append(append(append([]string{}, base...), "--"), append(append([]string{}, tool...), script)...)},
		{"stream", k6pkg.AggregatedFromStream, withSamples("stream")},
		{"in-k6", k6pkg.AggregatedInK6, withSamples("auto")},
	}
	ratios, k6Shares := map[string][]float64{}, map[string][]float64{}
	var runnerShares []float64
	for i := range rounds {
		got := make([]k6Measurement, len(variants))
		for j := range variants {
			v := (i + j) % len(variants)
			got[v] = measureK6(b, runnerBin, variants[v].args)
			if a := variants[v].aggregation; got[v].aggregation != a {
				b.Fatalf("%s: the samples were aggregated by %q, want %q (is K6 the k6 hack/build-k6.sh builds?)", variants[v].name, got[v].aggregation, a)
			}
		}
		plain := got[0]
		k6CPU := plain.cpu - plain.runnerCPU
		line := fmt.Sprintf("round %d: plain %.0f req/s (k6 %.2f CPU s, runner %.3f)", i+1, plain.rps, k6CPU, plain.runnerCPU)
		for v := 1; v < len(variants); v++ {
			w := got[v]
			ratios[variants[v].name] = append(ratios[variants[v].name], w.rps/plain.rps)
			k6Shares[variants[v].name] = append(k6Shares[variants[v].name], ((w.cpu-w.runnerCPU)/w.rps-k6CPU/plain.rps)/(k6CPU/plain.rps))
			line += fmt.Sprintf("; %s %.0f req/s (k6 %.2f CPU s, runner %.3f; %d samples): ratio %.4f",
				variants[v].name, w.rps, w.cpu-w.runnerCPU, w.runnerCPU, w.samples, w.rps/plain.rps)
		}
		runnerShares = append(runnerShares, (got[1].runnerCPU-plain.runnerCPU)/k6CPU)
		b.Log(line)
	}
	for _, v := range variants[1:] {
		b.ReportMetric(median(ratios[v.name]), v.name+"-req-ratio")
		b.ReportMetric(100*median(k6Shares[v.name]), v.name+"-k6-cpu-per-req-%")
	}
	b.ReportMetric(100*median(runnerShares), "runner-cpu-%")
}

type k6Measurement struct {
	rps, cpu, runnerCPU float64
	samples             int
	aggregation         string
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
	got.aggregation = r.Parameters[k6pkg.SampleAggregationParam]
	for _, p := range []string{"sampleLines", "samples"} {
		if n, err := strconv.Atoi(r.Parameters[p]); err == nil {
			got.samples = n
		}
	}
	return got
}

func median(v []float64) float64 {
	s := append([]float64{}, v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
