package custom

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// buildHistograms builds the histograms example (its own package main)
// and puts it on PATH, as its image would.
func buildHistograms(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "dbperf-example-histograms"), "./examples/histograms")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// histogramsSpec is the example's spec: a sweep of its clients, each
// sending requests SETs and GETs, in the line format on stdout or in
// OpenMetrics to a result file.
func histogramsSpec(format benchv1.CustomResultFormat, requests int, clients ...int32) *benchv1.WorkloadSpec {
	c := &benchv1.CustomWorkload{
		Command:    []string{"dbperf-example-histograms"},
		Args:       []string{"-clients", "{{clients}}", "-requests", strconv.Itoa(requests)},
		Parameters: []benchv1.CustomParameter{{Name: "clients", Values: clients}},
		Format:     format, PrimaryMetric: benchv1.CustomMetricKey{Name: "opsPerSecond"},
		Database: benchv1.CustomValkey,
	}
	if format == benchv1.CustomOpenMetrics {
		c.Args = append(c.Args, "-format", "openmetrics")
		c.ResultFile = "results.prom"
		c.PrimaryMetric.Name = "ops_per_second"
		c.Metrics = []benchv1.CustomMetric{{Name: "requests_total", Direction: benchv1.Neutral}}
	}
	return &benchv1.WorkloadSpec{Image: "registry.example/dbperf-example-histograms:1", Custom: c}
}

// histogramCount is the number of latencies a result's histogram of op holds.
func histogramCount(t *testing.T, r *results.Result, op string) int64 {
	t.Helper()
	enc, ok := r.Histograms[op]
	if !ok {
		t.Fatalf("no histogram of %s (%v)", op, r.HistogramOperations())
	}
	h, err := results.DecodeHistogram(enc)
	if err != nil {
		t.Fatal(err)
	}
	return h.TotalCount()
}

// The histograms example, a Go program built here, through the runner with
// the invocations the operator builds, against a real redis-server with a
// password: a sweep of 1 and 3 clients in the line format, then two load
// generators measuring together whose results merge, in the line format
// and in OpenMetrics written to a result file. Every request count is the
// server's own count of the commands it ran (INFO commandstats), and so is
// every histogram's count of latencies.
func TestRealHistogramsExample(t *testing.T) {
	buildHistograms(t)
	redis := testutil.StartRedis(t, "--requirepass", "pa ss")
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:" + strconv.Itoa(redis.Port), Password: "pa ss"})
	defer client.Close()
	ep := pod.Endpoint{Host: "127.0.0.1", Port: int32(redis.Port), Password: secretKey("password")}
	secrets := map[string]string{"password": "pa ss"}
	const requests = 400 // per client: 200 SETs and 200 GETs

	t.Run("a sweep of clients in the line format", func(t *testing.T) {
		spec := histogramsSpec(benchv1.CustomLines, requests, 1, 3)
		valid(t, spec)
		for _, step := range (Custom{}).Steps(spec) {
			s0 := testutil.RedisCommandCalls(t, client)
			r, out := execLocal(t, (Custom{}).Run(spec, ep, step), secrets, false)
			s1 := testutil.RedisCommandCalls(t, client)
			if r.Verdict != results.Succeeded || len(r.Warnings) > 0 {
				t.Fatalf("%s: %s %v %v\n%s", step.Name, r.Verdict, r.Reasons, r.Warnings, out)
			}
			want := float64(step.Params["clients"]) * requests / 2
			for _, op := range []string{"SET", "GET"} {
				server := s1[strings.ToLower(op)] - s0[strings.ToLower(op)]
				if got := testutil.MetricValue(t, r, "requests", op); got != want || server != want || float64(histogramCount(t, r, op)) != want {
					t.Errorf("%s: %s: the example reports %g requests with %d latencies, the server ran %g, want %g",
						step.Name, op, got, histogramCount(t, r, op), server, want)
				}
				if p50, p99, hi := testutil.MetricValue(t, r, "latencyP50Millis", op), testutil.MetricValue(t, r, "latencyP99Millis", op),
					testutil.MetricValue(t, r, "latencyMaxMillis", op); !(0 < p50 && p50 <= p99 && p99 <= hi) {
					t.Errorf("%s: %s: p50 %g, p99 %g, max %g", step.Name, op, p50, p99, hi)
				}
			}
			if r.Parameters["clients"] != strconv.Itoa(int(step.Params["clients"])) || r.ToolVersion != "1" {
				t.Errorf("%s: parameters %v, tool version %q", step.Name, r.Parameters, r.ToolVersion)
			}
		}
	})

	for _, format := range []benchv1.CustomResultFormat{benchv1.CustomLines, benchv1.CustomOpenMetrics} {
		t.Run("two load generators merged, "+string(format), func(t *testing.T) {
			spec := histogramsSpec(format, requests, 2)
			valid(t, spec)
			spec.Parallelism = 2
			inv := (Custom{}).Run(spec, ep, (Custom{}).Steps(spec)[0])
			s0 := testutil.RedisCommandCalls(t, client)
			parts := make([]*results.Result, 2)
			outs := make([]string, 2)
			var wg sync.WaitGroup
			for i := range parts {
				// Each generator has its own output directory, as each pod does.
				l := localInvocation(t, inv, secrets)
				wg.Add(1)
				go func() {
					defer wg.Done()
					parts[i], outs[i] = execLocalPrepared(l, secrets)
				}()
			}
			wg.Wait()
			s1 := testutil.RedisCommandCalls(t, client)
			for i, p := range parts {
				if p.Verdict != results.Succeeded || len(p.Warnings) > 0 {
					t.Fatalf("generator %d: %s %v %v\n%s", i, p.Verdict, p.Reasons, p.Warnings, outs[i])
				}
			}
			merged := results.Merge(parts)
			if merged.Verdict != results.Succeeded {
				t.Fatalf("merged: %s %v", merged.Verdict, merged.Reasons)
			}
			requestsName, primary := "requests", "opsPerSecond"
			if format == benchv1.CustomOpenMetrics {
				requestsName, primary = "requests_total", "ops_per_second"
			}
			for _, op := range []string{"SET", "GET"} {
				server := s1[strings.ToLower(op)] - s0[strings.ToLower(op)]
				if got := testutil.MetricValue(t, merged, requestsName, op); got != 2*2*requests/2 || got != server || float64(histogramCount(t, merged, op)) != server {
					t.Errorf("%s: the merged result counts %g requests with %d latencies, the server ran %g", op, got, histogramCount(t, merged, op), server)
				}
				// A percentile of the union lies between the generators'
				// own, and comes from the merged histogram, not as a bound:
				// within the histogram's resolution (3 significant digits,
				// reported as the highest equivalent value: 309.1 µs reads
				// 310 µs), so 0.5 % either side.
				p99 := testutil.MetricValue(t, merged, "latencyP99Millis", op)
				a, b := testutil.MetricValue(t, parts[0], "latencyP99Millis", op), testutil.MetricValue(t, parts[1], "latencyP99Millis", op)
				if p99 < min(a, b)*0.995 || p99 > max(a, b)*1.005 {
					t.Errorf("%s: merged p99 %g ms, the generators' %g and %g", op, p99, a, b)
				}
				if _, ok := merged.Get(results.Key{Name: "latencyP99UpperBoundMillis", Operation: op}); ok {
					t.Errorf("%s: the merged p99 is an upper bound: the histograms did not merge", op)
				}
			}
			if got, want := testutil.MetricValue(t, merged, primary, ""), testutil.MetricValue(t, parts[0], primary, "")+testutil.MetricValue(t, parts[1], primary, ""); got != want {
				t.Errorf("merged throughput %g, want the sum %g", got, want)
			}
		})
	}
}
