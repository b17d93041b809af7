package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestPairedAgreesWithSciPy checks the paired analysis against SciPy
// (testdata/paired_reference.py wrote paired_reference.json): the paired t
// on log ratios, its interval, the exact Wilcoxon signed-rank p-value (the
// normal approximation with the tie correction where |d| ties) and the
// exact sign-flip permutation p-value, each to 1e-6.
func TestPairedAgreesWithSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/paired_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Baseline, Candidate                       []float64
			DeltaPercent, CILowPercent, CIHighPercent float64
			P, WilcoxonP, PermutationP                float64
			WilcoxonApprox                            bool
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 8 {
		t.Fatalf("%d reference cases", len(ref.Cases))
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: %.9g, SciPy %.9g", what, got, want)
		}
	}
	for i, c := range ref.Cases {
		p := PairedLogDiff(c.Baseline, c.Candidate, 0.05)
		if p.Pairs != len(c.Baseline) {
			t.Fatalf("case %d: %d pairs of %d", i, p.Pairs, len(c.Baseline))
		}
		near("Δ %", p.DeltaPercent, c.DeltaPercent)
		near("CI low", p.CILowPercent, c.CILowPercent)
		near("CI high", p.CIHighPercent, c.CIHighPercent)
		near("paired t p", p.P, c.P)
		near("Wilcoxon p", p.WilcoxonP, c.WilcoxonP)
		near("permutation p", p.PermutationP, c.PermutationP)
		if p.WilcoxonExact == c.WilcoxonApprox {
			t.Errorf("case %d: Wilcoxon exact %v, SciPy approximated %v", i, p.WilcoxonExact, c.WilcoxonApprox)
		}
	}
}

// The signed-rank interval is the set of shifts the test does not reject:
// checked against that definition by brute force (every shift between
// Walsh averages, each tested over the 2^n sign assignments), with its
// coverage, and the known edges: five rounds give no interval at 95 %
// (P(W+ = 0) = 1/32 > 2.5 %), six give [min, max] at 96.9 %.
func TestWalshIntervalInvertsTheSignedRankTest(t *testing.T) {
	if lo, hi, level := walshInterval([]float64{1, 2, 3, 4, 5}, 0.05); !math.IsInf(lo, -1) || !math.IsInf(hi, 1) || level != 1 {
		t.Errorf("5 rounds: [%g, %g] at %g, want no interval", lo, hi, level)
	}
	if lo, hi, level := walshInterval([]float64{3, -1, 4, 1, 5, 9}, 0.05); lo != -1 || hi != 9 || math.Abs(level-(1-2.0/64)) > 1e-12 {
		t.Errorf("6 rounds: [%g, %g] at %g, want [-1, 9] at %g", lo, hi, level, 1-2.0/64)
	}
	d := []float64{0.013, -0.004, 0.021, 0.008, 0.017, -0.011, 0.026, 0.003, 0.015, 0.009}
	lo, hi, level := walshInterval(d, 0.05)
	// The signed-rank statistic of d − θ, exact p by enumeration.
	pAt := func(theta float64) float64 {
		n := len(d)
		x := make([]float64, n)
		abs := make([]float64, n)
		for i, v := range d {
			x[i] = v - theta
			abs[i] = math.Abs(x[i])
		}
		ranks, _ := midRanks(abs)
		var obs float64
		for i := range x {
			if x[i] > 0 {
				obs += ranks[i]
			}
		}
		mean := float64(n*(n+1)) / 4
		hits := 0
		for mask := 0; mask < 1<<n; mask++ {
			var w float64
			for i := range x {
				if mask&(1<<i) != 0 {
					w += ranks[i]
				}
			}
			if math.Abs(w-mean) >= math.Abs(obs-mean)-1e-9 {
				hits++
			}
		}
		return float64(hits) / float64(int(1)<<n)
	}
	// Inside the interval (just within each end) the test does not reject at
	// the interval's own level; just outside it does.
	alpha := 1 - level
	const eps = 1e-9
	if p := pAt(lo + eps); p <= alpha-1e-12 {
		t.Errorf("just above the lower end %g: p %g rejects at %g", lo, p, alpha)
	}
	if p := pAt(hi - eps); p <= alpha-1e-12 {
		t.Errorf("just below the upper end %g: p %g rejects at %g", hi, p, alpha)
	}
	if p := pAt(lo - eps); p > alpha+1e-12 {
		t.Errorf("just below the lower end %g: p %g does not reject at %g", lo, p, alpha)
	}
	if p := pAt(hi + eps); p > alpha+1e-12 {
		t.Errorf("just above the upper end %g: p %g does not reject at %g", hi, p, alpha)
	}
	if level < 0.95 || level > 0.98 {
		t.Errorf("10 rounds: coverage %g, want at least 95 %% and near it", level)
	}
}

// Pairing removes what drifts between rounds: a 3 % change under a drift of
// 1 % per round over 8 rounds (with 0.3 % noise) is found by the paired t,
// with an interval several times narrower than the independent analysis of
// the same values; values that are not all positive have no log ratio.
func TestPairingRemovesTheDrift(t *testing.T) {
	noise := []float64{0.002, -0.003, 0.001, 0.004, -0.002, 0.000, -0.001, 0.003}
	noise2 := []float64{-0.001, 0.0025, 0.0031, -0.004, 0.0015, -0.0022, 0.0041, 0.0007} // no two log ratios tie
	var base, cand []float64
	for i := range noise {
		level := 1000 * math.Exp(0.01*float64(i))
		base = append(base, level*math.Exp(noise[i]))
		cand = append(cand, level*0.97*math.Exp(noise2[i]))
	}
	p := PairedLogDiff(base, cand, 0.05)
	ind, indP := WelchLogDiff(base, cand, 0.05)
	t.Logf("paired Δ %.2f %% [%.2f, %.2f] p %.2g; independent Δ %.2f %% [%.2f, %.2f] p %.2g; Wilcoxon p %.3g, sign-flip p %.3g",
		p.DeltaPercent, p.CILowPercent, p.CIHighPercent, p.P, ind.DeltaPercent, ind.CILowPercent, ind.CIHighPercent, indP, p.WilcoxonP, p.PermutationP)
	if p.P > 0.001 || p.CIHighPercent > -2 || p.CILowPercent < -4 {
		t.Errorf("paired: Δ %.2f %% [%.2f, %.2f] p %g, want −3 %% found", p.DeltaPercent, p.CILowPercent, p.CIHighPercent, p.P)
	}
	if pw, iw := p.CIHighPercent-p.CILowPercent, ind.CIHighPercent-ind.CILowPercent; iw < 3*pw {
		t.Errorf("the independent interval (%.2f points) is not several times the paired one (%.2f)", iw, pw)
	}
	if p.WilcoxonP != 2.0/256 || p.PermutationP != 2.0/256 {
		t.Errorf("every round fell: the exact rank and sign-flip p-values are 2/2^8, got %g and %g", p.WilcoxonP, p.PermutationP)
	}
	if z := PairedLogDiff([]float64{1, 0}, []float64{1, 2}, 0.05); z.Pairs != 0 || !math.IsNaN(z.DeltaPercent) {
		t.Errorf("a zero value: %+v, want no pairs", z)
	}
}
