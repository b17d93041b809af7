package compare

import (
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// A sequential comparison's headline rows are judged by the look at their
// rounds: the 3 % drop under a 1.5 %/round drift (driftingRounds), which
// the independent analysis cannot call, is Worse after 8 rounds with the
// look's change and interval on the row; the two steps share alpha
// (Bonferroni); the summary leads with where it stopped and what a fixed
// design would have needed, and says the verdict is the look's. The step
// with no change is Equivalent against a 3 % target, so the report is
// decided (Changed). With the first look after 9 rounds it continues.
func TestSequentialLookJudgesTheHeadline(t *testing.T) {
	base, cand := driftingRounds(true)
	design := &stats.SequentialDesign{Alpha: 0.05, MinRounds: 3, MaxRounds: 12, Spending: stats.SpendingPocock, MinEffectPercent: 1,
		TargetEffectPercent: 3, Ran: 8}
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}, Sequential: design})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, r := range rep.Rows {
		if rep.IsPrimary(r) {
			rows[r.Step] = r
		}
	}
	drop, same := rows["clients=20"], rows["clients=40"]
	if drop.Sequential == nil || same.Sequential == nil {
		t.Fatalf("no look on the headline rows: %+v / %+v", drop.Sequential, same.Sequential)
	}
	sq := drop.Sequential
	t.Logf("look: %s; fixed design %d rounds, %d measurements", sq.Reason, sq.FixedRounds, sq.FixedMeasurementsPerVariant)
	if sq.Rounds != 8 || sq.Decision != stats.SequentialChanged || drop.Verdict != stats.Worse || float64(sq.Alpha) != 0.025 ||
		drop.DeltaPercent != sq.DeltaPercent || drop.CIHighPercent != sq.HighPercent || float64(drop.CIHighPercent) > -1 ||
		!strings.HasPrefix(drop.Reason, "sequential look: after 8 rounds") {
		t.Errorf("the drop's row: verdict %s, Δ %v [%v, %v], look %+v", drop.Verdict, drop.DeltaPercent, drop.CILowPercent, drop.CIHighPercent, sq)
	}
	if sq.FixedRounds < 2 || sq.FixedMeasurementsPerVariant <= sq.FixedRounds {
		t.Errorf("fixed designs: %d rounds paired, %d measurements independent: the drift should cost the independent design more", sq.FixedRounds, sq.FixedMeasurementsPerVariant)
	}
	if same.Sequential.Decision != stats.SequentialEquivalent || same.Verdict == stats.Worse || same.Verdict == stats.Better {
		t.Errorf("the unchanged step: %s, %+v", same.Verdict, same.Sequential)
	}
	if rep.SequentialDecision() != stats.SequentialChanged {
		t.Errorf("decision %s", rep.SequentialDecision())
	}
	if l := summaryLine(rep, "Sequential (Pocock spending"); !strings.Contains(l, "stopped (Changed) after 8 of at most 12 rounds") ||
		!strings.Contains(l, "a fixed design would have needed") {
		t.Errorf("summary line %q", l)
	}
	if l := summaryLine(rep, "Paired by round"); !strings.Contains(l, "The verdict above is the sequential look's") {
		t.Errorf("paired line %q", l)
	}

	design.MinRounds = 9
	if rep, err = Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}, Sequential: design}); err != nil {
		t.Fatal(err)
	}
	if d := rep.SequentialDecision(); d != stats.SequentialContinue {
		t.Errorf("before the first look: %s", d)
	}
}
