package pgbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

type want struct {
	verdict results.Verdict
	reason  string // a substring of one reason
	tps     float64
	latency float64
	stmts   int // per-statement latency metrics
	points  int // progress lines
	version string
}

// Every pgbench fixture must be listed here: a new fixture without an
// expectation fails the test.
var fixtures = map[string]want{
	"pg14plus-custom-script-haproxy.txt":                           {verdict: results.Succeeded, tps: 34059.170698, latency: 2.936},
	"pg14plus-tpcb-scale50-haproxy.txt":                            {verdict: results.Succeeded, tps: 4413.657304, latency: 23.780},
	"pg15plus-custom-script-r-per-statement-latency.txt":           {verdict: results.Succeeded, tps: 4379.893502, latency: 21.249, stmts: 1},
	"pg16-380c-prepared-rate-progress-ok.txt":                      {verdict: results.Succeeded, tps: 15382.399208, latency: 7203.565, points: 19, version: "16.4"},
	"pg16-600c-connection-slots-exhausted-error.txt":               {verdict: results.Failed, reason: "could not create the connections of 2 clients", version: "16.4"},
	"pg16-rdsproxy-394c-prepared-progress-ok.txt":                  {verdict: results.Succeeded, tps: 4270.124553, latency: 8977.743, points: 18, version: "16.4"},
	"pg16-rdsproxy-600c-prepared-rate-progress-client-aborted.txt": {verdict: results.Failed, reason: "Run was aborted", tps: 3365.804033, latency: 8699.600, points: 17, version: "16.4"},
	"pg16-rdsproxy-600c-simple-protocol-progress-ok.txt":           {verdict: results.Succeeded, tps: 4526.962991, latency: 7524.633, points: 18, version: "16.4"},
	"pkb-tpcb-16c-5s-progress-stderr.txt":                          {verdict: results.Failed, reason: "no summary", points: 5},
	"pkb-tpcb-16c-5s-r-stdout.txt":                                 {verdict: results.Succeeded, tps: 13.062579, latency: 1108.418, stmts: 14},
}

func TestParseFixtures(t *testing.T) {
	testutil.EachFixture(t, "pgbench", fixtures, func(t *testing.T, _ string, raw []byte, w want) {
		check(t, Pgbench{}.Parse(workloads.ParseInput{Output: raw}), w)
	})
}

func check(t *testing.T, r *results.Result, w want) {
	t.Helper()
	testutil.CheckVerdict(t, r, w.verdict, w.reason)
	if w.tps != 0 {
		if m, ok := r.Get(results.Key{Name: "transactionsPerSecond"}); !ok || m.Value != w.tps {
			t.Errorf("tps = %v (found %v), want %v", m.Value, ok, w.tps)
		}
		if m, ok := r.Get(results.Key{Name: "latencyAverageMillis"}); !ok || m.Value != w.latency {
			t.Errorf("latency average = %v, want %v", m.Value, w.latency)
		}
	}
	stmts := 0
	for _, m := range r.Metrics {
		if m.Name == "statementLatencyMillis" {
			stmts++
			if !m.Detail || m.Operation == "" {
				t.Errorf("statement metric %+v must be a detail with its statement", m)
			}
		}
	}
	if stmts != w.stmts {
		t.Errorf("%d statement latencies, want %d", stmts, w.stmts)
	}
	if len(r.TimeSeries) != w.points {
		t.Errorf("%d progress points, want %d", len(r.TimeSeries), w.points)
	}
	if r.ToolVersion != w.version {
		t.Errorf("tool version %q, want %q", r.ToolVersion, w.version)
	}
}

func TestParseNonZeroExitIsFailed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.FixturesDir(t, "pgbench"), "pg14plus-tpcb-scale50-haproxy.txt"))
	if err != nil {
		t.Fatal(err)
	}
	code := 2
	r := Pgbench{}.Parse(workloads.ParseInput{Output: raw, ExitCode: &code})
	if r.Verdict != results.Failed || !strings.Contains(strings.Join(r.Reasons, ""), "exited with code 2") {
		t.Fatalf("a summary with a non-zero exit must fail, got %s %v", r.Verdict, r.Reasons)
	}
	if _, ok := r.Get(results.Key{Name: "transactionsPerSecond"}); !ok {
		t.Fatal("the measured numbers must be kept")
	}
}

func TestParseFailedTransactionsGiveErrorPercent(t *testing.T) {
	out := "number of failed transactions: 12 (1.500%)\ntps = 100.0 (without initial connection time)\n"
	r := Pgbench{}.Parse(workloads.ParseInput{Output: []byte(out)})
	m, ok := r.Get(results.Key{Name: "errorPercent"})
	if !ok || m.Value != 1.5 {
		t.Fatalf("errorPercent = %v %v, want 1.5", m, ok)
	}
	results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: 1})
	if r.Verdict != results.Invalid {
		t.Fatalf("1.5%% failed over a 1%% limit must be invalid, got %s", r.Verdict)
	}
}

// Under --rate and --latency-limit pgbench counts the transactions it
// skipped (already late at their scheduled start) and those over the limit:
// what a capacity latency rule judges it on (internal/capacity).
func TestParseLatencyLimitCounts(t *testing.T) {
	for name, w := range map[string][3]float64{
		"rate-1400-latency-limit-20ms.txt": {0, 0, 4196},
		"rate-2200-latency-limit-20ms.txt": {970, 3921, 5550},
	} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		r := Pgbench{}.Parse(workloads.ParseInput{Output: raw})
		if r.Verdict != results.Succeeded || r.Parameters[capacity.ParamLatencyLimit] != "20.0" {
			t.Fatalf("%s: %s %v, limit %q", name, r.Verdict, r.Reasons, r.Parameters[capacity.ParamLatencyLimit])
		}
		for i, k := range []string{capacity.MetricSkipped, capacity.MetricOverLatencyLimit, capacity.MetricProcessed} {
			if m, ok := r.Get(results.Key{Name: k}); !ok || m.Value != w[i] {
				t.Errorf("%s: %s = %v (%v), want %v", name, k, m.Value, ok, w[i])
			}
		}
	}
}
