package query

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

type want struct {
	verdict results.Verdict
	reason  string
	// invalidAtZero: validity.maxErrorPercent 0 makes it Invalid.
	invalidAtZero bool
	geoMean       float64 // 0: none
	total         float64
	failed        float64
	metrics       map[string]float64 // "name[operation]" → value
	absent        []string
	warnings      []string // substrings of the warnings
}

// Every fixture of testdata must be listed here.
var fixtures = map[string]want{
	"clean-3-runs.json": {verdict: results.Succeeded,
		// hot: Q1.1 median(2, 4) = 3, Q1.2 median(9, 7) = 8; √24
		geoMean: math.Sqrt(24), total: 8 + 2 + 4 + 20 + 9 + 7,
		metrics: map[string]float64{"coldTimeMillis[Q1.1]": 8, "hotTimeMillis[Q1.1]": 3, "coldTimeMillis[Q1.2]": 20,
			"hotTimeMillis[Q1.2]": 8, "resultRows[Q1.2]": 5, "errorPercent": 0},
		absent: []string{"failedRuns[Q1.1]"}},
	"one-failed-query.json": {verdict: results.Succeeded, invalidAtZero: true,
		geoMean: 1, total: 4 + 1 + 10, failed: 2,
		metrics: map[string]float64{"failedRuns[bad]": 2, "failedRuns[flaky]": 1, "coldTimeMillis[flaky]": 10, "errorPercent": 50},
		absent:  []string{"coldTimeMillis[bad]", "hotTimeMillis[bad]", "hotTimeMillis[flaky]"},
		warnings: []string{"query bad failed 2 of 2 runs: clickhouse: 400 Bad Request: Code: 62", "query flaky failed 1 of 2 runs: past the query timeout",
			"the geometric mean leaves out 2 of 3 queries, which failed: bad, flaky"}},
	"all-failed.json": {verdict: results.Failed, reason: "every query failed", failed: 1,
		metrics:  map[string]float64{"errorPercent": 100},
		warnings: []string{`relation "t" does not exist`}},
	"connection-refused.json": {verdict: results.Failed, reason: "connection refused"},
	"one-run-each.json": {verdict: results.Succeeded, geoMean: 4, total: 10,
		metrics: map[string]float64{"coldTimeMillis[Q1]": 2}, absent: []string{"hotTimeMillis[Q1]"}},
	"future-version.json": {verdict: results.Failed, reason: "version 2"},
}

func TestParseFixtures(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			w, ok := fixtures[e.Name()]
			if !ok {
				t.Fatalf("no expectation for fixture %s", e.Name())
			}
			code := 0
			r := Query{}.Parse(workloads.ParseInput{Files: map[string][]byte{ResultFileName: []byte(readFile(t, filepath.Join("testdata", e.Name())))}, ExitCode: &code})
			check(t, r, w)
		})
	}
}

func check(t *testing.T, r *results.Result, w want) {
	t.Helper()
	testutil.CheckVerdict(t, r, w.verdict, w.reason)
	if w.geoMean != 0 {
		if r.Primary.Name != MetricGeometricMean || math.Abs(testutil.MetricValue(t, r, MetricGeometricMean, "")-round(w.geoMean)) > 1e-9 {
			t.Errorf("geometric mean %v (primary %v), want %v", r.Metrics, r.Primary, w.geoMean)
		}
		if got := testutil.MetricValue(t, r, MetricTotal, ""); got != w.total {
			t.Errorf("total %v, want %v", got, w.total)
		}
		if got := testutil.MetricValue(t, r, MetricFailedQueries, ""); got != w.failed {
			t.Errorf("failed queries %v, want %v", got, w.failed)
		}
	}
	for key, v := range w.metrics {
		name, op, _ := strings.Cut(strings.TrimSuffix(key, "]"), "[")
		if got := testutil.MetricValue(t, r, name, op); math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", key, got, v)
		}
	}
	for _, key := range w.absent {
		name, op, _ := strings.Cut(strings.TrimSuffix(key, "]"), "[")
		if m, ok := r.Get(results.Key{Name: name, Operation: op}); ok {
			t.Errorf("%s = %v, want none", key, m.Value)
		}
	}
	all := strings.Join(r.Warnings, "\n")
	for _, s := range w.warnings {
		if !strings.Contains(all, s) {
			t.Errorf("the warnings do not say %q:\n%s", s, all)
		}
	}
	if r.Verdict == results.Succeeded {
		results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: 0})
		if got := r.Verdict == results.Invalid; got != w.invalidAtZero {
			t.Errorf("invalid under maxErrorPercent 0: %v (%v), want %v", got, r.Reasons, w.invalidAtZero)
		}
	}
}

func TestParseWithoutReport(t *testing.T) {
	code := 4
	r := Query{}.Parse(workloads.ParseInput{Output: []byte("dbperf-runner query: --driver \"\": want clickhouse, postgres or mysql\n"), ExitCode: &code})
	testutil.CheckVerdict(t, r, results.Failed, "wrote no query-result.json: dbperf-runner query: --driver")
	testutil.CheckVerdict(t, r, results.Failed, "exited with code 4")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
