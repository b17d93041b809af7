package stats

import (
	"math"
	"testing"
)

// Figures from SciPy 1.x (stats.ttest_ind(equal_var=False) and its
// confidence_interval, stats.t.ppf), computed once by hand and kept here.
func TestWelchLogDiffAgreesWithSciPy(t *testing.T) {
	base := []float64{100, 102, 98, 101, 99}
	cand := []float64{120, 125, 118, 122, 121}
	d, p := WelchLogDiff(base, cand, 0.05)
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.10g, want %.10g", what, got, want)
		}
	}
	near("p", p, 4.878617375212119e-07, 1e-10)
	near("Δ %", d.DeltaPercent, 21.190096224891009, 1e-9)
	near("CI low %", d.CILowPercent, 17.872485364180957, 1e-6)
	near("CI high %", d.CIHighPercent, 24.601083769643095, 1e-6)
	if !d.Relative || d.Level != 0.95 {
		t.Errorf("relative %v level %v", d.Relative, d.Level)
	}
	// Zeros: raw values, over the baseline's mean (0.8).
	d, p = WelchLogDiff([]float64{0, 1, 0, 2, 1}, []float64{3, 4, 2, 5, 3}, 0.05)
	near("p with zeros", p, 0.004074031778489677, 1e-9)
	near("CI low % with zeros", d.CILowPercent, 100*1.1183882891069572/0.8, 1e-5)
	near("CI high % with zeros", d.CIHighPercent, 100*4.081611710893042/0.8, 1e-5)
	if d.Relative {
		t.Error("a sample with zeros cannot be compared on logarithms")
	}
}

func TestStudentQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{{0.975, 4, 2.7764451051977934}, {0.995, 7.3, 3.451031655622185}} {
		if got := StudentQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("t(%g; %g) = %.12g, want %.12g", c.p, c.df, got, c.want)
		}
	}
	for df := 1; df <= 40; df++ {
		if got, want := StudentQuantile(0.975, float64(df)), TQuantile975(df); math.Abs(got-want) > 2e-3 {
			t.Errorf("df %d: %g, the table says %g", df, got, want)
		}
	}
}

// The floor that makes the rank test useless over many operations, and
// its absence in Welch's test: 5 vs 5 completely separated samples.
func TestRankTestHasAFloorWelchHasNot(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5}
	cand := []float64{130, 131, 129, 130.5, 129.5}
	if p := MannWhitney(cand, base).P; math.Abs(p-2.0/252) > 1e-12 {
		t.Errorf("rank test p = %g, want 2/252", p)
	}
	if _, p := WelchLogDiff(base, cand, 0.05); p > 1e-6 {
		t.Errorf("Welch p = %g for a 30 %% shift at CV 0.8 %%", p)
	}
}

// Constant samples on both sides (a figure at its printing resolution's
// floor: 0.001 ms against 0 ms) are not a certain difference.
func TestWelchLogWithoutVariationIsUntested(t *testing.T) {
	d, p := WelchLogDiff([]float64{0.001, 0.001}, []float64{0, 0}, 0.05)
	if p != 1 || !math.IsInf(d.CILowPercent, -1) || !math.IsInf(d.CIHighPercent, 1) {
		t.Errorf("p %g, CI %g … %g: want untested (p 1, unbounded)", p, d.CILowPercent, d.CIHighPercent)
	}
	c := Compare([]Sample{{Key: "k", Direction: LowerIsBetter, Baseline: []float64{0.001, 0.001, 0.001}, Candidate: []float64{0, 0, 0}}},
		Criteria{Test: WelchLogTest, Correction: BenjaminiHochberg})[0]
	if c.Verdict != Inconclusive {
		t.Errorf("verdict %s (%s), want Inconclusive", c.Verdict, c.Reason)
	}
}
