package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Hand-computed: with no overlap between samples of 3 and 3, U is 0 and the
// exact two-sided p-value is 2·1/C(6,3) = 0.1.
func TestMannWhitneyHandComputed(t *testing.T) {
	r := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if r.U != 0 || !r.Exact || !near(r.P, 0.1, 1e-12) {
		t.Errorf("got %+v, want U 0, exact p 0.1", r)
	}
	// One swapped pair: U = 1, P(U ≤ 1) = 2/20, two-sided 0.2.
	r = MannWhitney([]float64{1, 2, 4}, []float64{3, 5, 6})
	if r.U != 1 || !near(r.P, 0.2, 1e-12) {
		t.Errorf("got %+v, want U 1, p 0.2", r)
	}
	// The smallest p-value 5 against 5 can give: 2/252.
	r = MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if !near(r.P, 2.0/252, 1e-12) {
		t.Errorf("p %v, want %v", r.P, 2.0/252)
	}
}

// Published worked example: R's documentation of wilcox.test (Hollander &
// Wolfe 1973, p. 69): permeability of placental membranes, W = 35 and the
// one-sided exact p-value 0.1272.
func TestMannWhitneyPublishedExample(t *testing.T) {
	x := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	y := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	r := MannWhitney(x, y)
	if r.U != 35 || !r.Exact || !near(r.P/2, 0.1272, 5e-5) {
		t.Errorf("got U %v, one-sided p %.4f (exact %v), want 35 and 0.1272", r.U, r.P/2, r.Exact)
	}
}

// The exact distribution counts every ordering once.
func TestUDistributionSumsToBinomial(t *testing.T) {
	for _, c := range [][2]int{{1, 1}, {3, 4}, {5, 5}, {10, 7}} {
		d := uDistribution(c[0], c[1])
		sum := 0.0
		for _, v := range d {
			sum += v
		}
		want := math.Round(math.Exp(lgamma(float64(c[0]+c[1]+1)) - lgamma(float64(c[0]+1)) - lgamma(float64(c[1]+1))))
		if sum != want {
			t.Errorf("%v: %v orderings, want C(m+n, m) = %v", c, sum, want)
		}
	}
}

// With ties the normal approximation is used and still sensible.
func TestMannWhitneyTies(t *testing.T) {
	r := MannWhitney([]float64{1, 1, 2, 2, 3, 3, 4, 4}, []float64{3, 3, 4, 4, 5, 5, 6, 6})
	if r.Exact || r.P <= 0 || r.P >= 0.05 {
		t.Errorf("got %+v: want the approximate p below 0.05", r)
	}
	same := MannWhitney([]float64{5, 5, 5}, []float64{5, 5, 5})
	if same.P != 1 {
		t.Errorf("identical constant samples: p %v, want 1", same.P)
	}
}

func TestAdjustKnownAnswers(t *testing.T) {
	ps := []float64{0.01, 0.04, 0.03, 0.005}
	for c, want := range map[Correction][]float64{
		Holm:              {0.03, 0.06, 0.06, 0.02},
		BenjaminiHochberg: {0.02, 0.04, 0.04, 0.02},
		NoCorrection:      ps,
	} {
		got := Adjust(ps, c)
		for i := range want {
			if !near(got[i], want[i], 1e-12) {
				t.Errorf("%s: got %v, want %v", c, got, want)
				break
			}
		}
	}
}

// Hand-computed Hodges-Lehmann: candidate = baseline × 1.1 exactly gives
// Δ = +10 %; with 5 against 5 the exact 95 % interval uses the 3rd smallest
// and 3rd largest of the 25 pairwise log-differences (P(U ≤ 2) = 4/252).
func TestDiffHandComputed(t *testing.T) {
	b := []float64{100, 101, 102, 103, 104}
	c := make([]float64, len(b))
	for i, v := range b {
		c[i] = v * 1.1
	}
	d := Diff(b, c, 0.05)
	if !near(d.DeltaPercent, 10, 1e-9) || !d.Relative {
		t.Errorf("Δ %v, want +10 %%", d.DeltaPercent)
	}
	if !near(d.Level, 1-2*4.0/252, 1e-12) {
		t.Errorf("level %v, want %v", d.Level, 1-2*4.0/252)
	}
	if !(d.CILowPercent < 10 && d.CIHighPercent > 10) {
		t.Errorf("CI %v … %v does not contain +10 %%", d.CILowPercent, d.CIHighPercent)
	}
	// Too few repetitions for a 95 % interval: 2 against 2.
	d = Diff([]float64{1, 2}, []float64{3, 4}, 0.05)
	if !math.IsInf(d.CILowPercent, -1) || !math.IsInf(d.CIHighPercent, 1) {
		t.Errorf("2 vs 2: CI %v … %v, want unbounded", d.CILowPercent, d.CIHighPercent)
	}
}

// TestStudentTwoSided checks the p-value against known quantiles of
// Student's t.
func TestStudentTwoSided(t *testing.T) {
	cases := map[string]struct {
		t, df, want float64
	}{
		"t 2.228 with 10 df":    {2.228, 10, 0.05},
		"t 2.045 with 29 df":    {2.045, 29, 0.05},
		"t -3.169 with 10 df":   {-3.169, 10, 0.01},
		"t 1 with 1 df":         {1, 1, 0.5},
		"none":                  {0, 10, 1},
		"an infinite statistic": {math.Inf(1), 10, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := StudentTwoSided(tc.t, tc.df); math.Abs(got-tc.want) > 0.001*tc.want+1e-12 {
				t.Errorf("p %g, want %g", got, tc.want)
			}
		})
	}
}

func TestWelchAgainstKnownValues(t *testing.T) {
	// t = 2.776445 is the two-sided 5 % critical value at 4 df.
	if p := StudentTwoSided(2.776445, 4); !near(p, 0.05, 1e-5) {
		t.Errorf("p(t=2.776, 4 df) = %v, want 0.05", p)
	}
	if p := StudentTwoSided(1.959964, 1e6); !near(p, 0.05, 1e-5) {
		t.Errorf("p(z=1.96) = %v, want 0.05", p)
	}
	// Equal variances and sizes: Welch's df is 2(n-1).
	_, df, _ := WelchT([]float64{1, 2, 3, 4}, []float64{2, 3, 4, 5})
	if !near(df, 6, 1e-12) {
		t.Errorf("df %v, want 6", df)
	}
}

func TestNormalQuantile(t *testing.T) {
	for p, want := range map[float64]float64{0.975: 1.959963984540054, 0.5: 0, 0.995: 2.5758293035489, 0.01: -2.3263478740408} {
		if got := normalQuantile(p); !near(got, want, 1e-9) {
			t.Errorf("quantile(%v) = %v, want %v", p, got, want)
		}
	}
}

func noisy(r *rand.Rand, n int, mean, cvPercent float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mean * (1 + cvPercent/100*r.NormFloat64())
	}
	return x
}

// Properties: the same sample compared with itself is NoChange; swapping
// baseline and candidate flips the sign of Δ and swaps Better and Worse.
func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 5 + r.IntN(15)
		a := noisy(r, n, 1000, 0.2)
		same := Compare([]Sample{{Key: "tps", Direction: HigherIsBetter, Baseline: a, Candidate: a}}, Criteria{MinEffectPercent: 1})[0]
		if same.Verdict != NoChange || same.DeltaPercent != 0 || same.P != 1 {
			t.Fatalf("identical samples: %+v", same)
		}
		b := noisy(r, n, 1000*(1+r.Float64()*0.2-0.1), 2)
		ab := Compare([]Sample{{Key: "tps", Direction: HigherIsBetter, Baseline: a, Candidate: b}}, Criteria{})[0]
		ba := Compare([]Sample{{Key: "tps", Direction: HigherIsBetter, Baseline: b, Candidate: a}}, Criteria{})[0]
		// On logarithms Δ flips exactly: (1+Δab)(1+Δba) = 1.
		if !near((1+ab.DeltaPercent/100)*(1+ba.DeltaPercent/100), 1, 1e-9) || math.Signbit(ab.DeltaPercent) == math.Signbit(ba.DeltaPercent) && ab.DeltaPercent != 0 {
			t.Fatalf("swap: Δ %v and %v", ab.DeltaPercent, ba.DeltaPercent)
		}
		if !near(ab.P, ba.P, 1e-12) {
			t.Fatalf("swap changed p: %v vs %v", ab.P, ba.P)
		}
		flip := map[Verdict]Verdict{Better: Worse, Worse: Better, NoChange: NoChange, Inconclusive: Inconclusive}
		if flip[ab.Verdict] != ba.Verdict {
			t.Fatalf("swap: %s then %s", ab.Verdict, ba.Verdict)
		}
	}
}

func TestVerdictsKnowTheDirection(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5, 100.2, 99.8, 100.1}
	up := make([]float64, len(base))
	for i, v := range base {
		up[i] = v * 1.05
	}
	got := Compare([]Sample{
		{Key: "tps", Direction: HigherIsBetter, Baseline: base, Candidate: up},
		{Key: "p99", Direction: LowerIsBetter, Baseline: base, Candidate: up},
		{Key: "count", Direction: Neutral, Baseline: base, Candidate: up},
	}, Criteria{MinEffectPercent: 1})
	want := []Verdict{Better, Worse, Inconclusive}
	for i, c := range got {
		if c.Verdict != want[i] {
			t.Errorf("%s: %s (%s), want %s", c.Key, c.Verdict, c.Reason, want[i])
		}
	}
	// Below the minimum effect a significant shift is not Better.
	small := Compare([]Sample{{Key: "tps", Direction: HigherIsBetter, Baseline: base, Candidate: up}}, Criteria{MinEffectPercent: 10})[0]
	if small.Verdict == Better {
		t.Errorf("5 %% shift with a 10 %% minimum effect: %s", small.Verdict)
	}
	// No errors before, none after: NoChange, not an undefined ratio.
	zero := Compare([]Sample{{Key: "errors", Direction: LowerIsBetter, Baseline: []float64{0, 0, 0}, Candidate: []float64{0, 0, 0}}}, Criteria{})[0]
	if zero.Verdict != NoChange || zero.DeltaPercent != 0 {
		t.Errorf("all zero: %s, Δ %v", zero.Verdict, zero.DeltaPercent)
	}
	// An unstable sample is Inconclusive whatever the numbers.
	wild := []float64{50, 150, 80, 120, 100, 60, 140, 100}
	u := Compare([]Sample{{Key: "tps", Direction: HigherIsBetter, Baseline: base, Candidate: wild}}, Criteria{MaxCVPercent: 5})[0]
	if !u.Unstable || u.Verdict != Inconclusive {
		t.Errorf("unstable: %+v", u)
	}
}

func TestChangePoints(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// 30 points at 1000, then a 5 % drop for 30 points, then back up by 8 %.
	var series []float64
	series = append(series, noisy(r, 30, 1000, 1)...)
	series = append(series, noisy(r, 30, 950, 1)...)
	series = append(series, noisy(r, 30, 1026, 1)...)
	cps := ChangePoints(series, ChangePointOptions{MinEffectPercent: 2})
	if len(cps) != 2 {
		t.Fatalf("found %d change points, want 2: %+v", len(cps), cps)
	}
	if abs(cps[0].Index-30) > 1 || abs(cps[1].Index-60) > 1 {
		t.Errorf("change points at %d and %d, want 30 and 60", cps[0].Index, cps[1].Index)
	}
	if !near(cps[0].DeltaPercent, -5, 1.2) || !near(cps[1].DeltaPercent, 8, 1.2) {
		t.Errorf("changes %v %% and %v %%, want about -5 and +8", cps[0].DeltaPercent, cps[1].DeltaPercent)
	}
	// Pure noise: nothing.
	for trial := 0; trial < 20; trial++ {
		if cps := ChangePoints(noisy(r, 60, 1000, 2), ChangePointOptions{MinEffectPercent: 1}); len(cps) != 0 {
			t.Errorf("noise: change points %+v", cps)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
