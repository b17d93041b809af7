package compare

import (
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// An order effect is flagged, not counted as noise: the baseline's
// measurements fall about 4 % a run in the order they ran at 20 clients
// (its tables grow) while the candidate's do not; the row's note and the
// summary say which side trends, by how much and how surely (Holm over
// the four headline sides), and nothing else is flagged. Shuffled into no
// order, the same values flag nothing.
func TestOrderEffectIsFlagged(t *testing.T) {
	noise := []float64{0.004, -0.003, 0.002, -0.004, 0.001, 0.003, -0.002, 0.0}
	build := func(order []int) *Report {
		t.Helper()
		base, cand := Side{Name: "standard-v3"}, Side{Name: "standard-v4a"}
		for _, i := range order {
			b := 25000 * (1 - 0.04*float64(i)) * (1 + noise[i])
			base.Runs = append(base.Runs, run("v3-"+string(rune('a'+i)), "standard-v3", map[string]float64{"clients=20": b, "clients=40": 30000 * (1 + noise[i])}, benchv1.VerdictSucceeded))
			cand.Runs = append(cand.Runs, run("v4a-"+string(rune('a'+i)), "standard-v4a", map[string]float64{"clients=20": 24000 * (1 + noise[7-i]), "clients=40": 30000 * (1 - noise[i])}, benchv1.VerdictSucceeded))
		}
		rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := build([]int{0, 1, 2, 3, 4, 5, 6, 7})
	for _, row := range rep.Rows {
		if !rep.IsPrimary(row) {
			if row.Order != nil {
				t.Errorf("%s %s: an order test on a row that is not a headline", row.Step, row.Metric)
			}
			continue
		}
		o := row.Order
		if o == nil {
			t.Fatalf("%s: no order test", row.Step)
		}
		t.Logf("%s: baseline τ %+.2f p %.3g (adjusted %.3g) slope %.2f %%; candidate τ %+.2f p %.3g; flag %q", row.Step, o.Baseline.Tau, o.Baseline.P,
			o.Baseline.PAdjusted, o.Baseline.SlopePercent, o.Candidate.Tau, o.Candidate.P, o.Flag)
		trends := row.Step == "clients=20"
		if got := o.Flag != ""; got != trends || trends && (!strings.HasPrefix(o.Flag, "standard-v3 falls ") || strings.Contains(o.Flag, "standard-v4a") ||
			!o.Baseline.Exact || o.Baseline.N != 8 || float64(o.Baseline.SlopePercent) > -3 || float64(o.Baseline.SlopePercent) < -6) {
			t.Errorf("%s: flag %q (%+v)", row.Step, o.Flag, o)
		}
		if trends != strings.Contains(rowNote(row), "order effect") {
			t.Errorf("%s: note %q", row.Step, rowNote(row))
		}
	}
	if l := summaryLine(rep, "Order effect (1): "); !strings.Contains(l, "clients=20") && !strings.Contains(l, "transactionsPerSecond") {
		t.Errorf("summary line %q (%q)", l, rep.Summary.Lines)
	}
	shuffled := build([]int{3, 6, 0, 5, 2, 7, 1, 4})
	if l := summaryLine(shuffled, "Order effect"); l != "" {
		t.Errorf("values in no order flagged: %q", l)
	}
}
