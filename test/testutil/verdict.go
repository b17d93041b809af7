package testutil

import (
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// CheckVerdict checks a parsed result's verdict, that one of its reasons
// mentions reason (when given), and that any result other than Succeeded
// says why.
func CheckVerdict(t testing.TB, r *results.Result, verdict results.Verdict, reason string) {
	t.Helper()
	if r.Verdict != verdict {
		t.Errorf("verdict = %s (%v), want %s", r.Verdict, r.Reasons, verdict)
	}
	if reason != "" && !strings.Contains(strings.Join(r.Reasons, "|"), reason) {
		t.Errorf("reasons %q do not mention %q", r.Reasons, reason)
	}
	if verdict != results.Succeeded && len(r.Reasons) == 0 {
		t.Errorf("a %s result must say why", r.Verdict)
	}
}

// MetricValue returns the value of a metric of a parsed result, failing the
// test when the result has no such metric.
func MetricValue(t testing.TB, r *results.Result, name, operation string) float64 {
	t.Helper()
	m, ok := r.Get(results.Key{Name: name, Operation: operation})
	if !ok {
		t.Fatalf("no metric %s[%s] in %+v", name, operation, r.Metrics)
	}
	return m.Value
}
