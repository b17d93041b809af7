package compare

import (
	"math"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// driftingRounds: 8 rounds of an interleaved comparison in which the
// platform drifts 1.5 % per round and the candidate is 3 % slower (±0.3 %
// noise); each run has two repetitions, whose geometric mean is the
// round's value. A round of the baseline with an invalid measurement
// still pairs on its other repetition; round 9 has the baseline only.
func driftingRounds(withRounds bool) (Side, Side) {
	base, cand := Side{Name: "standard-v3"}, Side{Name: "standard-v4a"}
	noise := []float64{0.002, -0.003, 0.001, 0.003, -0.002, 0.0, -0.001, 0.003}
	for i := range noise {
		level := 25000 * math.Exp(0.015*float64(i))
		b := run("v3-"+string(rune('a'+i)), "standard-v3", map[string]float64{"clients=20": level * (1 + noise[i]), "clients=40": level}, benchv1.VerdictSucceeded)
		c := run("v4a-"+string(rune('a'+i)), "standard-v4a", map[string]float64{"clients=20": level * 0.97 * (1 - noise[i]), "clients=40": level}, benchv1.VerdictSucceeded)
		for _, r := range []*Run{&b, &c} {
			for s := range r.Steps {
				rep := r.Steps[s].Repetitions[0]
				second := benchv1.RepetitionStatus{Index: 2, Verdict: benchv1.VerdictSucceeded}
				for _, m := range rep.Metrics {
					m.Value *= 1.001
					second.Metrics = append(second.Metrics, m)
				}
				if i == 3 && r == &b {
					second.Verdict, second.Reasons = benchv1.VerdictInvalid, []string{"load generator saturated"}
				}
				r.Steps[s].Repetitions = append(r.Steps[s].Repetitions, second)
			}
			if withRounds {
				r.Round = int32(i + 1)
			}
		}
		base.Runs, cand.Runs = append(base.Runs, b), append(cand.Runs, c)
	}
	extra := run("v3-extra", "standard-v3", map[string]float64{"clients=20": 30000, "clients=40": 30000}, benchv1.VerdictSucceeded)
	if withRounds {
		extra.Round = 9
	}
	base.Runs = append(base.Runs, extra)
	return base, cand
}

// A comparison measured in rounds carries each headline row's paired
// analysis beside the independent one: the 3 % drop the drift hides from
// the independent analysis is found within the rounds, the run is the unit
// (8 rounds, not 16 repetitions), the summary says so, and the verdict is
// still the independent analysis'. Runs without rounds have none.
func TestPairedRowsBesideTheIndependentAnalysis(t *testing.T) {
	base, cand := driftingRounds(true)
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var row *Row
	for i := range rep.Rows {
		r := &rep.Rows[i]
		switch {
		case r.Step == "clients=20" && r.Metric == "transactionsPerSecond":
			row = r
		case r.Metric == "latencyP99Millis" && r.Paired != nil:
			t.Errorf("%s %s: a per-operation row has a paired analysis", r.Step, r.Metric)
		}
	}
	if row == nil || row.Paired == nil {
		t.Fatalf("no paired analysis on the headline row: %+v", row)
	}
	p := row.Paired
	t.Logf("independent Δ %.2f %% [%.2f, %.2f] %s; paired Δ %.2f %% [%.2f, %.2f] p %.2g, Wilcoxon p %.3g, HL %.2f %% [%.2f, %.2f] at %.3f, narrowing %.1f",
		row.DeltaPercent, row.CILowPercent, row.CIHighPercent, row.Verdict, p.DeltaPercent, p.CILowPercent, p.CIHighPercent, p.P, p.WilcoxonP,
		p.HodgesLehmannPercent, p.WilcoxonLowPercent, p.WilcoxonHighPercent, p.WilcoxonLevel, p.Narrowing)
	if p.Rounds != 8 {
		t.Errorf("%d rounds paired, want 8 (round 9 has no candidate; a round is one pair however many repetitions)", p.Rounds)
	}
	if p.DeltaPercent > -2.5 || p.DeltaPercent < -3.5 || p.CIHighPercent > -2 || p.P > 0.001 {
		t.Errorf("paired Δ %.2f %% [%.2f, %.2f] p %g: want the 3 %% drop found", p.DeltaPercent, p.CILowPercent, p.CIHighPercent, p.P)
	}
	if p.Narrowing < 5 {
		t.Errorf("the paired interval is only %.1f× narrower than the independent one under a 1.5 %%/round drift", p.Narrowing)
	}
	if !p.WilcoxonExact || p.WilcoxonP != 2.0/256 || p.PermutationP != 2.0/256 {
		t.Errorf("every round fell: Wilcoxon p %g (exact %v), sign-flip %g; want 2/256", p.WilcoxonP, p.WilcoxonExact, p.PermutationP)
	}
	if row.Baseline.N != 16 || float64(row.CIHighPercent-row.CILowPercent) < 5*float64(p.CIHighPercent-p.CILowPercent) {
		t.Errorf("the independent analysis pools every repetition (n %d, want 16) and the drift widens its interval (%.2f points, paired %.2f)",
			row.Baseline.N, float64(row.CIHighPercent-row.CILowPercent), float64(p.CIHighPercent-p.CILowPercent))
	}
	if line := summaryLine(rep, "Paired by round"); !strings.Contains(line, "8 rounds") || !strings.Contains(line, "clients=20 transactionsPerSecond -3.") {
		t.Errorf("summary line %q", summaryLine(rep, "Paired by round"))
	}
	// What each design could detect with this noise: the drift makes the
	// independent design's detectable change several times the paired one's.
	if row.Detectable == nil || p.Detectable == nil || float64(row.Detectable.EffectPercent) < 3*float64(p.Detectable.EffectPercent) ||
		p.Detectable.RunsForMinEffect < 2 || row.Detectable.RunsForMinEffect <= p.Detectable.RunsForMinEffect {
		t.Errorf("detectable: independent %+v, paired %+v", row.Detectable, p.Detectable)
	}
	if detectable := summaryLine(rep, "Detectable at 95 % power"); !strings.Contains(detectable, "with 16/16 measurements") || !strings.Contains(detectable, "paired ±") {
		t.Errorf("summary's detectable line %q", summaryLine(rep, "Detectable at 95 % power"))
	}

	base, cand = driftingRounds(false)
	rep, err = Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		if r.Paired != nil {
			t.Errorf("%s %s: a paired analysis without rounds", r.Step, r.Metric)
		}
	}
	if l := summaryLine(rep, "Paired"); l != "" {
		t.Errorf("summary without rounds says %q", l)
	}
}

// summaryLine is the report's summary line that begins with prefix ("" for
// none).
func summaryLine(rep *Report, prefix string) string {
	for _, l := range rep.Summary.Lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
