package k6

import (
	"math"
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

func input(name string, raw []byte) workloads.ParseInput {
	if strings.HasSuffix(name, ".json") {
		return workloads.ParseInput{Files: map[string][]byte{"summary.json": raw}}
	}
	return workloads.ParseInput{Output: raw}
}

var value = testutil.MetricValue

// Every k6 result in the fixtures: verdict, requests per second, p95 of
// http_req_duration, error share, and the thresholds crossed.
func TestEveryFixture(t *testing.T) {
	type expect struct {
		verdict results.Verdict
		rps     float64
		p95     float64
		errPct  float64
		crossed string
	}
	want := map[string]expect{
		"handlesummary-json-threshold-not-ok-addon-1000vus.json": {results.Invalid, 459.0096658639368, 2223.582475, 0.6162418568040351, "http_req_duration: p(95)<2000"},
		"legacy-summary-export-1-failed-check.json":              {results.Succeeded, 23.738350582489275, 4101.811365, 1, ""},
		"legacy-summary-export-p99-p999-493k-reqs.json":          {results.Succeeded, 4288.100370179589, math.NaN(), 0, ""},
		"legacy-text-summary-groups-arrival-rate.txt":            {results.Succeeded, 44.611674, math.NaN(), 0.16, ""},
		// Every request failed: nothing about the server was measured.
		"v1-compact-http-req-failed-100pct-admin-1000vus.txt": {results.Failed, 646.855396, 386.08, 100, "every request failed"},
		"v1-compact-pass-with-progress-lines.txt":             {results.Succeeded, 72.458377, 39.66, 0, ""},
		"v1-compact-thresholds-crossed-inventory.txt":         {results.Invalid, 142.500525, 611.55, 9.94, "http_req_duration: p(95)<600"},
	}
	testutil.EachFixture(t, "k6", want, func(t *testing.T, name string, raw []byte, w expect) {
		r := Parser{}.Parse(input(name, raw))
		t.Logf("%s: %s %v primary %v", name, r.Verdict, r.Reasons, r.Primary)
		testutil.CheckVerdict(t, r, w.verdict, w.crossed)
		if r.Verdict != w.verdict {
			return
		}
		if w.rps > 0 {
			if got := value(t, r, "requestsPerSecond", "http_reqs"); got != w.rps {
				t.Errorf("req/s %v, want %v", got, w.rps)
			}
		}
		if !math.IsNaN(w.p95) && w.p95 > 0 {
			if got := value(t, r, "latencyP95Millis", "http_req_duration"); math.Abs(got-w.p95) > 1e-9 {
				t.Errorf("p95 %v, want %v", got, w.p95)
			}
		}
		if w.errPct > 0 {
			if got := value(t, r, "errorPercent", ""); math.Abs(got-w.errPct) > 1e-9*math.Max(1, w.errPct) {
				t.Errorf("errorPercent %v, want %v", got, w.errPct)
			}
		}
	})
}

// Units of the text summary and the legacy meaning of a threshold's true.
func TestDurationsAndLegacyThresholds(t *testing.T) {
	for in, want := range map[string]float64{"504.4µs": 0.5044, "2.02s": 2020, "1m2.5s": 62500, "98.96ms": 98.96, "0s": 0} {
		if got, ok := duration(in); !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("duration(%q) = %v, want %v", in, got, want)
		}
	}
	legacy := []byte(`{"metrics":{"http_reqs":{"count":10,"rate":5},"http_req_duration":{"avg":3,"med":2,"p(95)":9,"max":12,"min":1,"thresholds":{"p(95)<5":true,"avg<10":false}}}}`)
	r := Parser{}.Parse(workloads.ParseInput{Files: map[string][]byte{"summary.json": legacy}})
	if r.Verdict != results.Invalid || !strings.Contains(strings.Join(r.Reasons, " "), "p(95)<5") || strings.Contains(strings.Join(r.Reasons, " "), "avg<10") {
		t.Errorf("legacy threshold true = crossed: %s %v", r.Verdict, r.Reasons)
	}
	code := ExitThresholdsCrossed
	r = Parser{}.Parse(workloads.ParseInput{Output: []byte("no summary"), ExitCode: &code})
	if r.Verdict != results.Failed {
		t.Errorf("no summary at all is a failure: %s", r.Verdict)
	}
	ok := []byte(`{"metrics":{"http_reqs":{"count":10,"rate":5}}}`)
	r = Parser{}.Parse(workloads.ParseInput{Files: map[string][]byte{"s.json": ok}, ExitCode: &code})
	if r.Verdict != results.Invalid || !strings.Contains(r.Reasons[0], "thresholds crossed") {
		t.Errorf("exit 99 with a summary: %s %v, want Invalid (thresholds crossed), not a crash", r.Verdict, r.Reasons)
	}
}
