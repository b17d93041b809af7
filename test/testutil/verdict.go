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
