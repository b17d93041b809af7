package custom

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// An OpenMetrics exposition after the tool's log and before more of it:
// counters as OpenMetrics names them (family queries, samples
// queries_total), exemplars and _created samples, # UNIT, a histogram and a
// summary of times, an info family, # EOF.
const goodExposition = `starting 8 workers
# HELP queries Queries run.
# TYPE queries counter
queries_total{operation="select"} 1200.0 # {trace_id="a # b"} 1.0 1.6e9
queries_total{operation="insert"} 300.0
queries_created{operation="select"} 1.6e9
queries_created{operation="insert"} 1.6e9
# TYPE ops_per_second gauge
ops_per_second 1500.5
# TYPE replication_lag gauge
# UNIT replication_lag seconds
replication_lag 0.25
# TYPE query_duration_seconds histogram
# UNIT query_duration_seconds seconds
query_duration_seconds_bucket{operation="select",le="0.001"} 600
query_duration_seconds_bucket{operation="select",le="0.005"} 1100
query_duration_seconds_bucket{operation="select",le="0.01"} 1190
query_duration_seconds_bucket{operation="select",le="0.1"} 1200
query_duration_seconds_bucket{operation="select",le="+Inf"} 1200
query_duration_seconds_count{operation="select"} 1200
query_duration_seconds_sum{operation="select"} 2.4
query_duration_seconds_created{operation="select"} 1.6e9
# TYPE commit_latency_seconds summary
commit_latency_seconds{quantile="0.5"} 0.002
commit_latency_seconds{quantile="0.99"} 0.02
commit_latency_seconds_sum 0.9
commit_latency_seconds_count 300
# TYPE app info
app_info{version="1.2"} 1
# EOF
workers stopped
`

func TestOpenMetricsGood(t *testing.T) {
	r := Custom{}.Parse(workloads.ParseInput{Output: []byte(goodExposition), ExitCode: exit(0),
		Config: config(t, benchv1.CustomOpenMetrics, results.Key{Name: "ops_per_second"}, "", declaration{Name: "queries_total", Direction: results.Neutral})})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	want := []string{
		"operations[commit_latency_seconds]=300 count Neutral",
		"latencyAverageMillis[commit_latency_seconds]=3 ms LowerIsBetter",
		"latencyP50Millis[commit_latency_seconds]=2 ms LowerIsBetter",
		"latencyP99Millis[commit_latency_seconds]=20 ms LowerIsBetter",
		"ops_per_second=1500.5 ops/s HigherIsBetter",
		"queries_total[select]=1200 count Neutral",
		"queries_total[insert]=300 count Neutral",
		// Each percentile is its bucket's upper bound.
		"operations[select]=1200 count Neutral",
		"latencyAverageMillis[select]=2 ms LowerIsBetter",
		"latencyP50Millis[select]=1 ms LowerIsBetter",
		"latencyP90Millis[select]=5 ms LowerIsBetter",
		"latencyP95Millis[select]=10 ms LowerIsBetter",
		"latencyP99Millis[select]=10 ms LowerIsBetter",
		"latencyP999Millis[select]=100 ms LowerIsBetter",
		"replication_lag=0.25 s LowerIsBetter",
	}
	if diff := cmp.Diff(want, metricsOf(r)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"app is an OpenMetrics info, which holds no measurement dbperf reads: left out"}, warningsAfterColon(r)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	// The buckets, kept for merging: each count at its bound.
	if got := histogramCount(t, r, "select"); got != 1200 {
		t.Errorf("the histogram of select holds %d values, want 1200", got)
	}
}

func TestOpenMetricsMalformed(t *testing.T) {
	const header = "# TYPE ops_per_second gauge\nops_per_second 100\n"
	cases := map[string]struct {
		out     string
		verdict results.Verdict
		reason  string
		keeps   []string
	}{
		"a value that is no number": {header + "# TYPE queue_depth gauge\nqueue_depth{operation=\"select\"} 1.2.3\n",
			results.Invalid, `output: text format parsing error in line 4: expected float as value, got "1.2.3"`, []string{"ops_per_second"}},
		// A dropped _created line keeps the parser's line numbers.
		"a bad line after a _created one": {"# TYPE q counter\nq_total 5\nq_created 1.6e9\n" + header + "ops_per_second{ 3\n",
			results.Invalid, "text format parsing error in line 6", []string{"ops_per_second"}},
		"a gauge whose unit nothing tells": {header + "# TYPE widgets gauge\nwidgets 3\n",
			results.Invalid, "output line 3 (family widgets), its # UNIT line: widgets has no unit", []string{"ops_per_second", "widgets"}},
		// prometheus/common v0.62's parser panics on it.
		"a sample without a name": {header + "{} 3\n", results.Invalid, "output line 3: a sample without a metric name before its labels", []string{"ops_per_second"}},
		"no exposition":           {"ops_per_second 100\n", results.Failed, "no OpenMetrics exposition in the output of bench-tool", nil},
		"no primary metric": {"# TYPE queries counter\nqueries_total 5\n", results.Failed,
			"the primary metric ops_per_second (spec.workload.custom.primaryMetric) is not in the results", nil},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := Custom{}.Parse(workloads.ParseInput{Output: []byte(c.out), Config: config(t, benchv1.CustomOpenMetrics, results.Key{Name: "ops_per_second"}, "")})
			testutil.CheckVerdict(t, r, c.verdict, c.reason)
			for _, name := range c.keeps {
				found := false
				for _, m := range r.Metrics {
					found = found || m.Name == name
				}
				if !found {
					t.Errorf("%s was thrown away: %v", name, metricsOf(r))
				}
			}
		})
	}
}

// Percentiles above a histogram's largest finite bound are not made up,
// and its buckets, which cannot hold them, are not kept as a histogram.
func TestOpenMetricsValuesAboveTheBuckets(t *testing.T) {
	out := "# TYPE ops_per_second gauge\nops_per_second 100\n# TYPE d_seconds histogram\nd_seconds_bucket{le=\"0.1\"} 90\nd_seconds_bucket{le=\"+Inf\"} 100\nd_seconds_count 100\nd_seconds_sum 20\n"
	r := Custom{}.Parse(workloads.ParseInput{Output: []byte(out), Config: config(t, benchv1.CustomOpenMetrics, results.Key{Name: "ops_per_second"}, "")})
	testutil.CheckVerdict(t, r, results.Succeeded, "")
	if _, ok := r.Get(results.Key{Name: "latencyP95Millis", Operation: "d_seconds"}); ok {
		t.Error("p95 lies above the largest bound, and was reported")
	}
	if got := testutil.MetricValue(t, r, "latencyP50Millis", "d_seconds"); got != 100 {
		t.Errorf("p50 %g ms, want the bound 100", got)
	}
	if len(r.Histograms) != 0 || !strings.Contains(strings.Join(r.Warnings, "|"), "p95 of d_seconds lies above the largest bucket bound") {
		t.Errorf("histograms %v, warnings %q", r.HistogramOperations(), r.Warnings)
	}
}

func TestPercentileName(t *testing.T) {
	for q, want := range map[float64]string{0.5: "latencyP50Millis", 0.99: "latencyP99Millis", 0.999: "latencyP999Millis",
		0.9999: "latencyP9999Millis", 0.995: "latencyP995Millis", 0.05: "latencyP5Millis", 1: "latencyP100Millis",
		0.001: "latencyP0.1Millis", 0.01: "latencyP1Millis", 0.055: "latencyP5.5Millis", 0.55: "latencyP55Millis"} {
		if got := percentileName(q); got != want {
			t.Errorf("%g: %s, want %s", q, got, want)
		}
		digits := strings.TrimSuffix(strings.TrimPrefix(want, "latencyP"), "Millis")
		if back := results.PercentileOfName(digits); math.Abs(back-100*q) > 1e-9 {
			t.Errorf("%s reads back as p%g, want p%g", want, back, 100*q)
		}
	}
}

// A NaN sum (the Prometheus parser accepts it) leaves out the average it
// would make, says so, and the rest of the result can still be encoded:
// NaN has no JSON form, and an unencodable result loses everything.
func TestOpenMetricsNaNIsLeftOut(t *testing.T) {
	in := strings.Replace(goodExposition, "commit_latency_seconds_sum 0.9", "commit_latency_seconds_sum NaN", 1)
	r := Custom{}.Parse(workloads.ParseInput{Output: []byte(in), ExitCode: exit(0),
		Config: config(t, benchv1.CustomOpenMetrics, results.Key{Name: "ops_per_second"}, "", declaration{Name: "queries_total", Direction: results.Neutral})})
	testutil.CheckVerdict(t, r, results.Invalid, "latencyAverageMillis[commit_latency_seconds] is NaN")
	if _, err := results.EncodeBlock(r); err != nil {
		t.Fatalf("the result cannot be encoded: %v", err)
	}
	if got := testutil.MetricValue(t, r, "ops_per_second", ""); got != 1500.5 {
		t.Errorf("ops_per_second %v, want 1500.5 kept", got)
	}
}
