package results

import (
	"strings"
	"testing"
)

// The whole run's error share is judged as it is; an operation's only when
// it has enough requests to mean something, or when its count is unknown.
func TestOperationErrorShares(t *testing.T) {
	cases := map[string]struct {
		total, opShare float64
		opRequests     float64 // zero: not reported
		want           Verdict
		reason         string // a part of the reason, or of a warning when valid
	}{
		"whole run above the limit":            {total: 2, want: Invalid, reason: "2% of requests failed"},
		"one of three requests of a rare name": {total: 0.01, opShare: 33.3, opRequests: 3, want: Succeeded, reason: "33.3% of the 3 requests of rare failed, above the 1% limit: too few requests"},
		"an operation with enough requests":    {total: 0.5, opShare: 5, opRequests: 100, want: Invalid, reason: "5% of the 100 requests of rare failed"},
		"an operation of unknown count":        {total: 0.5, opShare: 5, want: Invalid, reason: "5% of requests of rare failed"},
		"an operation within the limit":        {total: 0.5, opShare: 1, opRequests: 3, want: Succeeded},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := New("k6")
			r.Add(Metric{Name: "errorPercent", Value: tc.total, Unit: "%"})
			r.Add(Metric{Name: "errorPercent", Operation: "rare", Value: tc.opShare, Unit: "%", Detail: true})
			if tc.opRequests > 0 {
				r.Add(Metric{Name: "requests", Operation: "rare", Value: tc.opRequests, Unit: "count", Detail: true})
			}
			ApplyThresholds(r, Thresholds{MaxErrorPercent: 1})
			said := strings.Join(append(r.Reasons, r.Warnings...), "\n")
			if r.Verdict != tc.want || tc.reason == "" && said != "" || !strings.Contains(said, tc.reason) {
				t.Errorf("%s, reasons and warnings %q; want %s with %q", r.Verdict, said, tc.want, tc.reason)
			}
		})
	}
}
