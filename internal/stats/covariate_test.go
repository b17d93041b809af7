package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// The covariate-adjusted change agrees with SciPy
// (testdata/covariate_reference.py wrote covariate_reference.json): the
// least-squares intercept of the log ratios on the canaries' log ratios,
// its t interval and p-value on n-2 degrees of freedom, the slope,
// Pearson's r, the variance removed and the canaries' own shift, each to
// 1e-6.
func TestCovariateAgreesWithSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/covariate_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Baseline, Candidate, BaselineCovariate, CandidateCovariate []float64
			DeltaPercent, CILowPercent, CIHighPercent, P               float64
			Theta, Correlation, VarianceRemovedPercent                 float64
			CovariateShiftPercent, CovariateShiftP                     float64
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 6 {
		t.Fatalf("%d reference cases", len(ref.Cases))
	}
	for i, c := range ref.Cases {
		near := func(what string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("case %d: %s: %.9g, SciPy %.9g", i, what, got, want)
			}
		}
		a := CovariatePairedLogDiff(c.Baseline, c.Candidate, c.BaselineCovariate, c.CandidateCovariate, 0.05)
		if a.Pairs != len(c.Baseline) {
			t.Fatalf("case %d: %d pairs of %d", i, a.Pairs, len(c.Baseline))
		}
		near("Δ %", a.DeltaPercent, c.DeltaPercent)
		near("CI low", a.CILowPercent, c.CILowPercent)
		near("CI high", a.CIHighPercent, c.CIHighPercent)
		near("p", a.P, c.P)
		near("θ", a.Theta, c.Theta)
		near("r", a.Correlation, c.Correlation)
		near("variance removed", a.VarianceRemovedPercent, c.VarianceRemovedPercent)
		near("canary shift", a.CovariateShiftPercent, c.CovariateShiftPercent)
		near("canary shift p", a.CovariateShiftP, c.CovariateShiftP)
	}
}

// Values or canaries that are not positive have no log ratio; canaries
// that never differ leave the paired change, unadjusted and unbounded.
func TestCovariateEdges(t *testing.T) {
	if a := CovariatePairedLogDiff([]float64{1, 2}, []float64{1, 2}, []float64{0, 1}, []float64{1, 1}, 0.05); a.Pairs != 0 || !math.IsNaN(a.DeltaPercent) {
		t.Errorf("a zero canary: %+v", a)
	}
	a := CovariatePairedLogDiff([]float64{100, 100, 100}, []float64{110, 112, 108}, []float64{5, 6, 7}, []float64{5, 6, 7}, 0.05)
	if a.Pairs != 3 || math.Abs(a.DeltaPercent-10) > 0.1 || a.Theta != 0 || !math.IsInf(a.CILowPercent, -1) {
		t.Errorf("equal canaries: %+v", a)
	}
}

// covariateTrial is a paired comparison whose runs' noise is partly the
// node's quality, which the canary sees (with its own noise), and partly
// the run's own: nodeShare of the run-to-run variance (CV cvPercent) is the
// node's.
type covariateTrial struct {
	n                                 int
	cvPercent, dropPercent, nodeShare float64
	canaryCVPercent                   float64
}

func (c covariateTrial) values(r *rand.Rand) (base, cand, baseCov, candCov []float64) {
	sd := c.cvPercent / 100
	node, own := sd*math.Sqrt(c.nodeShare), sd*math.Sqrt(1-c.nodeShare)
	for i := 0; i < c.n; i++ {
		qa, qb := node*r.NormFloat64(), node*r.NormFloat64()
		base = append(base, 1000*math.Exp(qa+own*r.NormFloat64()))
		cand = append(cand, 1000*(1-c.dropPercent/100)*math.Exp(qb+own*r.NormFloat64()))
		baseCov = append(baseCov, 500*math.Exp(qa+c.canaryCVPercent/100*r.NormFloat64()))
		candCov = append(candCov, 500*math.Exp(qb+c.canaryCVPercent/100*r.NormFloat64()))
	}
	return base, cand, baseCov, candCov
}

// covariateVerdict judges an adjusted change as pairedVerdict does a
// paired one.
func covariateVerdict(a Covariate, crit Criteria) Verdict {
	return pairedVerdict(Paired{Pairs: a.Pairs, Difference: a.Difference, P: a.P}, crit)
}

// pairedT is PairedLogDiff's t test alone (no exact permutation or
// signed-rank test, which the simulation does not judge by and which cost
// 2^n at n rounds).
func pairedT(base, cand []float64, alpha float64) Paired {
	d := logRatios(base, cand)
	s := Summarize(d)
	n := float64(len(d))
	se := s.StdDev / math.Sqrt(n)
	half := StudentQuantile(1-alpha/2, n-1) * se
	pct := func(x float64) float64 { return 100 * (math.Exp(x) - 1) }
	return Paired{Pairs: len(d), P: StudentTwoSided(s.Mean/se, n-1),
		Difference: Difference{DeltaPercent: pct(s.Mean), CILowPercent: pct(s.Mean - half), CIHighPercent: pct(s.Mean + half)}}
}

// simulateCovariate returns, over trials, the share of any verdict of the
// paired design and of the covariate-adjusted one on the same values.
func simulateCovariate(r *rand.Rand, c covariateTrial, trials int) (paired, adjusted float64) {
	var p, a int
	for range trials {
		base, cand, bc, cc := c.values(r)
		if v := pairedVerdict(pairedT(base, cand, powerCriteria.Alpha), powerCriteria); v != Inconclusive {
			p++
		}
		if v := covariateVerdict(CovariatePairedLogDiff(base, cand, bc, cc, powerCriteria.Alpha), powerCriteria); v != Inconclusive {
			a++
		}
	}
	return float64(p) / float64(trials), float64(a) / float64(trials)
}

// The adjusted design keeps its false verdicts at alpha (1 %) whether the
// canary explains much or nothing, and when the nodes make 75 % of the
// run-to-run variance it finds a 3 % drop at CV 2 % with 10 rounds more
// often than the paired design does with 17 (simulated: 97 % and 92 %).
func TestCovariateDesign(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	r := rand.New(rand.NewPCG(41, 2))
	const trials = 4000
	for _, share := range []float64{0, 0.75} {
		_, falseRate := simulateCovariate(r, covariateTrial{n: 8, cvPercent: 2, nodeShare: share, canaryCVPercent: 0.5}, trials)
		t.Logf("node share %.0f %%, no change, 8 rounds: false verdicts adjusted %.2f %%", 100*share, 100*falseRate)
		// 4000 trials at 1 %: a standard error of 0.16 points.
		if falseRate > 0.015 {
			t.Errorf("node share %.0f %%: false verdicts %.2f %% exceed alpha 1 %%", 100*share, 100*falseRate)
		}
	}
	paired17, _ := simulateCovariate(r, covariateTrial{n: 17, cvPercent: 2, dropPercent: 3, nodeShare: 0.75, canaryCVPercent: 0.5}, trials)
	_, adjusted10 := simulateCovariate(r, covariateTrial{n: 10, cvPercent: 2, dropPercent: 3, nodeShare: 0.75, canaryCVPercent: 0.5}, trials)
	t.Logf("3 %% drop, CV 2 %%, node share 75 %%: power paired at 17 rounds %.1f %%, adjusted at 10 %.1f %%", 100*paired17, 100*adjusted10)
	if adjusted10 <= paired17 {
		t.Errorf("adjusted at 10 rounds %.1f %%, paired at 17 %.1f %%: the covariate did not pay for itself", 100*adjusted10, 100*paired17)
	}
}

// BenchmarkCovariateDesign prints, for a 3 % drop at CV 2 % (alpha 1 %,
// minimum effect 1 %), the power and false verdicts of the paired design
// and of the covariate-adjusted one on the same values, by the share of
// the run-to-run variance that is the node's (what the canary sees, with
// 0.5 % noise of its own), at 5 to 17 rounds, 2000 trials a cell. Run:
// go test ./internal/stats -run '^$' -bench CovariateDesign -benchtime 1x
func BenchmarkCovariateDesign(b *testing.B) {
	const trials = 2000
	for _, share := range []float64{0, 0.5, 0.75, 0.9} {
		for _, n := range []int{5, 6, 8, 10, 17} {
			b.Run(fmt.Sprintf("node=%g%%/n=%d", 100*share, n), func(b *testing.B) {
				var pp, ap, pf, af float64
				for b.Loop() {
					r := rand.New(rand.NewPCG(uint64(n), uint64(100*share)+3))
					pp, ap = simulateCovariate(r, covariateTrial{n: n, cvPercent: 2, dropPercent: 3, nodeShare: share, canaryCVPercent: 0.5}, trials)
					pf, af = simulateCovariate(r, covariateTrial{n: n, cvPercent: 2, nodeShare: share, canaryCVPercent: 0.5}, trials)
				}
				b.ReportMetric(100*pp, "paired-power%")
				b.ReportMetric(100*pf, "paired-false%")
				b.ReportMetric(100*ap, "adjusted-power%")
				b.ReportMetric(100*af, "adjusted-false%")
			})
		}
	}
}
