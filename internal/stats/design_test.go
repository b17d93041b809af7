package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// A design's simulated comparison: n rounds of an interleaved comparison
// in ABBA order (A B, B A, …), each run's value the platform's level at
// its time — drifting by driftPercent per round, both variants alike —
// times its own noise (normal, cvPercent) and, for the candidate, the
// drop. The independent design pools each side's values (the headline's
// test, Compare); the paired one takes the change within each round
// (PairedLogDiff), judged at the same alpha and minimum effect.
type designTrial struct {
	n                                    int
	cvPercent, dropPercent, driftPercent float64
}

func (d designTrial) values(r *rand.Rand) (base, cand []float64) {
	for i := 0; i < d.n; i++ {
		first, second := 2*i, 2*i+1 // the runs' places in time
		if i%2 == 1 {
			first, second = second, first
		}
		level := func(at int) float64 { return 1000 * math.Exp(d.driftPercent/100*float64(at)/2) }
		base = append(base, level(first)*(1+d.cvPercent/100*r.NormFloat64()))
		cand = append(cand, level(second)*(1-d.dropPercent/100)*(1+d.cvPercent/100*r.NormFloat64()))
	}
	return base, cand
}

// pairedVerdict judges a paired analysis as judge does an independent one:
// significant at alpha, the interval on one side of zero and the change at
// least the minimum effect.
func pairedVerdict(p Paired, crit Criteria) Verdict {
	if p.Pairs >= 2 && p.P < crit.Alpha && (p.CILowPercent > 0 || p.CIHighPercent < 0) && math.Abs(p.DeltaPercent) >= crit.MinEffectPercent {
		if p.DeltaPercent < 0 {
			return Worse
		}
		return Better
	}
	return Inconclusive
}

// simulateDesigns returns, over trials, the share of Worse verdicts and of
// any verdict of the independent and the paired design on the same values.
func simulateDesigns(r *rand.Rand, d designTrial, trials int) (indWorse, indAny, pairWorse, pairAny float64) {
	var iw, ia, pw, pa int
	for t := 0; t < trials; t++ {
		base, cand := d.values(r)
		c := Compare([]Sample{{Key: "tps", Direction: HigherIsBetter, Baseline: base, Candidate: cand}}, powerCriteria)[0]
		if c.Verdict == Worse {
			iw++
		}
		if c.Verdict == Worse || c.Verdict == Better {
			ia++
		}
		switch pairedVerdict(PairedLogDiff(base, cand, powerCriteria.Alpha), powerCriteria) {
		case Worse:
			pw++
			pa++
		case Better:
			pa++
		}
	}
	f := float64(trials)
	return float64(iw) / f, float64(ia) / f, float64(pw) / f, float64(pa) / f
}

// The paired design keeps its false-verdict rate at alpha (1 %) under the
// drift as without it, and under a drift of 0.5 % per round it finds a 3 %
// drop at CV 2 % with 17 rounds far more often than the independent design
// does on the same values (whose variance the drift inflates).
func TestPairedDesignUnderDrift(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	r := rand.New(rand.NewPCG(31, 1))
	const trials = 2000
	for _, drift := range []float64{0, 0.5} {
		_, indFalse, _, pairFalse := simulateDesigns(r, designTrial{n: 10, cvPercent: 2, driftPercent: drift}, trials)
		t.Logf("drift %.1f %%/round, no change, 10 rounds: false verdicts independent %.2f %%, paired %.2f %%", drift, 100*indFalse, 100*pairFalse)
		// 2000 trials at 1 %: a standard error of 0.22 points.
		if pairFalse > 0.015 {
			t.Errorf("drift %.1f %%: the paired design's false verdicts %.2f %% exceed alpha 1 %%", drift, 100*pairFalse)
		}
	}
	indPower, _, pairPower, _ := simulateDesigns(r, designTrial{n: 17, cvPercent: 2, dropPercent: 3, driftPercent: 0.5}, trials)
	t.Logf("drift 0.5 %%/round, 3 %% drop, CV 2 %%, 17 rounds: power independent %.1f %%, paired %.1f %%", 100*indPower, 100*pairPower)
	if pairPower < 0.9 || pairPower < indPower+0.2 {
		t.Errorf("power under drift: paired %.1f %%, independent %.1f %%: want the paired design ≥ 90 %% and well above", 100*pairPower, 100*indPower)
	}
}

// BenchmarkDesignSimulation prints, for a 3 % drop at CV 2 % (and 5 % at
// the end), each design's power and false verdicts (alpha 1 %, minimum
// effect 1 %) on stationary noise and under a drift of 0.5 % per round,
// 2000 trials a cell, at the repetition counts people use. Run:
// go test ./internal/stats -run '^$' -bench DesignSimulation -benchtime 1x
func BenchmarkDesignSimulation(b *testing.B) {
	const trials = 2000
	for _, drift := range []float64{0, 0.5} {
		for _, n := range []int{5, 8, 10, 17, 20} {
			b.Run(fmt.Sprintf("drift=%g%%/n=%d", drift, n), func(b *testing.B) {
				var ip, ifp, pp, pfp float64
				for b.Loop() {
					r := rand.New(rand.NewPCG(uint64(n), uint64(drift*10)+1))
					ip, _, pp, _ = simulateDesigns(r, designTrial{n: n, cvPercent: 2, dropPercent: 3, driftPercent: drift}, trials)
					_, ifp, _, pfp = simulateDesigns(r, designTrial{n: n, cvPercent: 2, driftPercent: drift}, trials)
				}
				b.ReportMetric(100*ip, "indep-power%")
				b.ReportMetric(100*ifp, "indep-false%")
				b.ReportMetric(100*pp, "paired-power%")
				b.ReportMetric(100*pfp, "paired-false%")
			})
		}
	}
}

// The sizes Detectable names give about the power it states: simulated at
// the runs (rounds) it names for 3 % at a log standard deviation of 2 %,
// the t test on logarithms finds a 3 % rise in 95 % of trials (within
// Monte-Carlo error and the t approximation), and one run fewer in fewer.
func TestDetectableSizesGiveTheirPower(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	r := rand.New(rand.NewPCG(17, 3))
	const trials = 4000
	const alpha, effect, sd = 0.05, 3.0, 0.02
	sample := func(n int, mean float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = 1000 * math.Exp(mean+sd*r.NormFloat64())
		}
		return out
	}
	// Sized from a large sample of the noise (its standard deviation ≈ sd).
	big := sample(4000, 0)
	ind, ok := DetectableIndependent(big, sample(4000, 0), alpha, effect)
	if !ok || ind.RunsForMinEffect < 2 {
		t.Fatalf("independent: %+v %v", ind, ok)
	}
	power := func(n int, paired bool) float64 {
		hits := 0
		for i := 0; i < trials; i++ {
			b, c := sample(n, 0), sample(n, math.Log1p(effect/100))
			var p float64
			if paired {
				p = PairedLogDiff(b, c, alpha).P
			} else {
				_, p = WelchLogDiff(b, c, alpha)
			}
			if p < alpha {
				hits++
			}
		}
		return float64(hits) / trials
	}
	n := ind.RunsForMinEffect
	at, below := power(n, false), power(n-1, false)
	t.Logf("independent: %d runs per side for 3 %% at sd 2 %%: power %.3f (%d runs: %.3f); with these 4000: ±%.2f %%", n, at, n-1, below, ind.EffectPercent)
	if at < 0.93 || below >= at {
		t.Errorf("independent: power %.3f at the %d runs named (want ≈ 0.95), %.3f at one fewer", at, n, below)
	}
	// Paired rounds whose members share nothing: the log ratio's standard
	// deviation is √2·sd, the standard error of the independent design's
	// difference too, so as many rounds as runs per side (a little more:
	// n − 1 degrees of freedom, not 2n − 2). Pairing pays where the rounds
	// share what varies (the drift above).
	pd, ok := DetectablePaired(sample(4000, 0), sample(4000, 0), alpha, effect)
	if !ok || pd.RunsForMinEffect < 2 {
		t.Fatalf("paired: %+v %v", pd, ok)
	}
	at = power(pd.RunsForMinEffect, true)
	t.Logf("paired: %d rounds: power %.3f", pd.RunsForMinEffect, at)
	if at < 0.93 || pd.RunsForMinEffect < n-2 || pd.RunsForMinEffect > n+2 {
		t.Errorf("paired: %d rounds (independent %d), power %.3f: want about the same count and ≈ 0.95", pd.RunsForMinEffect, n, at)
	}
}
