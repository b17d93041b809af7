package compare

import (
	"fmt"
	"math/rand/v2"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// diagRun is a run of one step and n repetitions whose diagnostics give
// each statement a time per transaction from perTx(statement, repetition).
func diagRun(name string, n int, statements int, perTx func(s, rep int) float64, plan func(s int) string) Run {
	r := Run{Name: name, Steps: []benchv1.StepStatus{{Name: "clients=8"}}}
	for rep := range n {
		d := &results.Diagnostics{Source: "postgresql", WindowSeconds: 60, Transactions: 1000}
		for s := range statements {
			d.Items = append(d.Items, results.DiagnosticItem{Kind: results.DiagnosticStatement, Name: fmt.Sprintf("SELECT %d FROM t WHERE k = $1", s),
				Calls: 1000, TimeMillis: 1000 * perTx(s, rep), Plan: plan(s)})
		}
		idx := int32(rep + 1)
		r.Steps[0].Repetitions = append(r.Steps[0].Repetitions, benchv1.RepetitionStatus{Index: idx, Verdict: benchv1.VerdictSucceeded})
		r.Measurements = append(r.Measurements, Measurement{Step: "clients=8", Repetition: idx, Result: &results.Result{Diagnostics: d}})
	}
	return r
}

// Twenty statements of noise (the same distribution on both sides, CV
// 10 %) and one made three times slower with a new plan, 5 vs 5, over 200
// seeds: the slow one is always the first suspect, confirmed, its plan
// change flagged; the false-discovery proportion (noise confirmed over
// all confirmed, per seed) averages at most alpha, 5 % (here with room to
// 7 %) — the interval alone confirmed noise in most seeds.
func TestSuspectsConfirmOnlyTheChange(t *testing.T) {
	const seeds, statements, slowed = 200, 21, 7
	falseWithout, confirmed, falseConfirmed, fdp := 0, 0, 0, 0.0
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 11))
		noise := func(s, rep int) float64 { return (1 + float64(s)/10) * (1 + 0.1*rng.NormFloat64()) }
		plan := func(string) func(int) string {
			return func(s int) string { return "Index Scan using t_pkey on t" }
		}
		base := diagRun("a", 5, statements, noise, plan(""))
		cand := diagRun("b", 5, statements, func(s, rep int) float64 {
			if s == slowed {
				return 3 * noise(s, rep)
			}
			return noise(s, rep)
		}, func(s int) string {
			if s == slowed {
				return "Seq Scan on t\n  Filter: (k = $1)"
			}
			return "Index Scan using t_pkey on t"
		})
		rep := &Report{Steps: []string{"clients=8"}}
		got := suspects(rep, Side{Name: "a", Runs: []Run{base}}, Side{Name: "b", Runs: []Run{cand}}, Options{})
		if len(got) == 0 || got[0].Name != fmt.Sprintf("SELECT %d FROM t WHERE k = $1", slowed) || !got[0].Confirmed || !got[0].PlanChanged {
			t.Fatalf("seed %d: the first suspect %+v", seed, got[0])
		}
		confirmed++
		v := 0
		for _, s := range got[1:] {
			if s.Confirmed {
				confirmed++
				falseConfirmed++
				v++
			}
			if s.LowMillis > 0 || s.HighMillis < 0 {
				falseWithout++
			}
		}
		fdp += float64(v) / float64(v+1)
	}
	t.Logf("mean false-discovery proportion %.1f %%", 100*fdp/seeds)
	t.Logf("over %d seeds: %d suspects confirmed, %d of them noise; the interval alone would have confirmed %d noise suspects", seeds, confirmed, falseConfirmed, falseWithout)
	if fdp/seeds > 0.07 {
		t.Errorf("the mean false-discovery proportion is %.1f %%, above alpha", 100*fdp/seeds)
	}
	if falseWithout < seeds/2 {
		t.Errorf("the noise never reached an interval excluding 0: the test cannot tell the correction's work")
	}
}
