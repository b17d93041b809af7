package stats

import (
	"math"
	"slices"
)

// Paired is the analysis of a change measured in blocks: each round of an
// interleaved (or concurrent) comparison ran the baseline and the
// candidate close together in time, so their ratio within the round is
// free of what drifted between rounds (other tenants, thermal state,
// storage compaction). It works on the within-round log ratios
// d_i = ln(candidate_i / baseline_i):
//   - Difference and P: Student's paired t on d (the change of the
//     geometric mean and its t interval; n-1 degrees of freedom);
//   - the Wilcoxon signed-rank test of d, exact (no normality assumed):
//     its p-value, the Hodges-Lehmann change (the median of the Walsh
//     averages) and its exact interval, whose coverage is discrete (no
//     interval below six rounds at 95 %: WilcoxonLevel says what it is);
//   - the sign-flip permutation test of the mean of d, exact over the 2^n
//     assignments (up to MaxPermutationPairs rounds): the t test's check at
//     small n, where its normality matters most.
//
// It assumes what blocking needs: the rounds are exchangeable (the same
// drift acts on both members of a round, and the order within rounds is
// balanced or does not matter), and the change is a ratio (log scale).
type Paired struct {
	// Pairs is the number of rounds with both sides measured.
	Pairs int
	Difference
	// P is the paired t test's two-sided p-value.
	P float64
	// WilcoxonP is the signed-rank test's two-sided p-value; exact when
	// no |d| is zero or tied (WilcoxonExact), the normal approximation
	// with the tie correction otherwise.
	WilcoxonP     float64
	WilcoxonExact bool
	// WilcoxonDeltaPercent is the Hodges-Lehmann change, and the Wilcoxon*
	// interval its exact interval (±Inf when the rounds are too few for
	// any at the level asked) with its actual coverage.
	WilcoxonDeltaPercent, WilcoxonLowPercent, WilcoxonHighPercent, WilcoxonLevel float64
	// PermutationP is the exact sign-flip p-value of the mean log ratio
	// (NaN above MaxPermutationPairs rounds, where the t test needs no
	// check).
	PermutationP float64
}

// MaxPermutationPairs bounds the exact sign-flip test (2^n assignments).
const MaxPermutationPairs = 20

// PairedLogDiff analyses the rounds' values of both sides, baseline[i]
// and candidate[i] measured in round i, at level 1-alpha. Values that are
// not all positive have no log ratio: Pairs is then zero and the change
// NaN.
func PairedLogDiff(baseline, candidate []float64, alpha float64) Paired {
	n := min(len(baseline), len(candidate))
	out := Paired{Difference: Difference{DeltaPercent: math.NaN(), CILowPercent: math.Inf(-1), CIHighPercent: math.Inf(1), Relative: true},
		P: 1, WilcoxonP: 1, WilcoxonDeltaPercent: math.NaN(), WilcoxonLowPercent: math.Inf(-1), WilcoxonHighPercent: math.Inf(1), PermutationP: math.NaN()}
	if n == 0 || !allPositive(baseline[:n]) || !allPositive(candidate[:n]) {
		return out
	}
	d := logRatios(baseline[:n], candidate[:n])
	pct := func(x float64) float64 { return 100 * (math.Exp(x) - 1) }
	out.Pairs = n
	s := Summarize(d)
	out.DeltaPercent, out.Level = pct(s.Mean), 1
	out.WilcoxonDeltaPercent = pct(hodgesLehmannPaired(d))
	if n < 2 {
		return out
	}
	out.Level = 1 - alpha
	if se := s.StdDev / math.Sqrt(float64(n)); se > 0 {
		t := s.Mean / se
		out.P = StudentTwoSided(t, float64(n-1))
		half := StudentQuantile(1-alpha/2, float64(n-1)) * se
		out.CILowPercent, out.CIHighPercent = pct(s.Mean-half), pct(s.Mean+half)
	} else if s.Mean != 0 {
		// Every round moved by the same ratio: no variation to test it
		// against (as WelchLogDiff: untested, unbounded).
		out.P = 1
	}
	out.WilcoxonP, out.WilcoxonExact = wilcoxonSignedRank(d)
	lo, hi, level := walshInterval(d, alpha)
	out.WilcoxonLowPercent, out.WilcoxonHighPercent, out.WilcoxonLevel = pct(lo), pct(hi), level
	if n <= MaxPermutationPairs {
		out.PermutationP = signFlipP(d)
	}
	return out
}

// logRatios are ln(candidate_i / baseline_i) of positive values.
func logRatios(baseline, candidate []float64) []float64 {
	d := make([]float64, len(baseline))
	for i := range d {
		d[i] = math.Log(candidate[i] / baseline[i])
	}
	return d
}

// signedRankCounts are the numbers of the 2^n sign assignments of the
// ranks 1..n whose positive ranks sum to k, for k = 0..n(n+1)/2: the exact
// null distribution of the signed-rank statistic W+ without ties.
func signedRankCounts(n int) []float64 {
	m := n * (n + 1) / 2
	c := make([]float64, m+1)
	c[0] = 1
	for r := 1; r <= n; r++ {
		for k := m; k >= r; k-- {
			c[k] += c[k-r]
		}
	}
	return c
}

// wilcoxonSignedRank is the two-sided p-value of the signed-rank test of d
// against zero (zeros dropped, as Wilcoxon's own method): exact when no
// |d| is tied, else the normal approximation with the tie correction.
func wilcoxonSignedRank(d []float64) (float64, bool) {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1, false
	}
	abs := make([]float64, n)
	for i, x := range nz {
		abs[i] = math.Abs(x)
	}
	ranks, ties := midRanks(abs)
	var wPlus float64
	for i, x := range nz {
		if x > 0 {
			wPlus += ranks[i]
		}
	}
	m := float64(n * (n + 1) / 2)
	if ties == 0 && n == len(d) {
		c := signedRankCounts(n)
		total := math.Pow(2, float64(n))
		w := int(math.Round(wPlus))
		var below, above float64
		for k := 0; k <= w; k++ {
			below += c[k]
		}
		for k := w; k <= int(m); k++ {
			above += c[k]
		}
		return math.Min(1, 2*math.Min(below, above)/total), true
	}
	mean := m / 2
	variance := float64(n*(n+1)*(2*n+1))/24 - ties/48
	if variance <= 0 {
		return 1, false
	}
	z := (wPlus - mean) / math.Sqrt(variance)
	return math.Min(1, math.Erfc(math.Abs(z)/math.Sqrt2)), false
}

// midRanks ranks v from 1 (ties get the mean of their ranks) and returns
// the tie correction Σ(t³ − t) over the groups of ties.
func midRanks(v []float64) ([]float64, float64) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case v[a] < v[b]:
			return -1
		case v[a] > v[b]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(v))
	var ties float64
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = r
		}
		if t := float64(j - i + 1); t > 1 {
			ties += t*t*t - t
		}
		i = j + 1
	}
	return ranks, ties
}

// walshAverages are the n(n+1)/2 averages (d_i + d_j)/2, i ≤ j, sorted.
func walshAverages(d []float64) []float64 {
	out := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			out = append(out, (d[i]+d[j])/2)
		}
	}
	slices.Sort(out)
	return out
}

// hodgesLehmannPaired is the one-sample Hodges-Lehmann estimate: the
// median of the Walsh averages.
func hodgesLehmannPaired(d []float64) float64 { return median(walshAverages(d)) }

// walshInterval is the exact interval of the signed-rank test: the k-th
// smallest and k-th largest Walsh averages, k the largest count with
// P(W+ < k) ≤ alpha/2 under the null; its coverage is 1 − 2·P(W+ < k).
// Too few rounds for any interval at the level asked: ±Inf and level 1.
func walshInterval(d []float64, alpha float64) (lo, hi, level float64) {
	n := len(d)
	c := signedRankCounts(n)
	total := math.Pow(2, float64(n))
	k, below := 0, 0.0 // below = P(W+ < k)
	for k < len(c) && (below+c[k])/total <= alpha/2 {
		below += c[k]
		k++
	}
	if k == 0 {
		return math.Inf(-1), math.Inf(1), 1
	}
	w := walshAverages(d)
	return w[k-1], w[len(w)-k], 1 - 2*below/total
}

// signFlipP is the exact two-sided p-value of the mean of d under random
// signs: the share of the 2^n sign assignments whose |Σ| is at least the
// observed one (the observed included).
func signFlipP(d []float64) float64 {
	n := len(d)
	var obs float64
	for _, x := range d {
		obs += x
	}
	obs = math.Abs(obs)
	tol := 1e-12 * (1 + obs)
	hits := 0
	for mask := 0; mask < 1<<n; mask++ {
		var s float64
		for i, x := range d {
			if mask&(1<<i) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-tol {
			hits++
		}
	}
	return float64(hits) / float64(int(1)<<n)
}
