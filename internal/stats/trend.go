package stats

import (
	"math"
	"slices"
)

// Trend is the Mann-Kendall test of a trend in values taken in order
// (the repetitions of a variant as they ran): whether later values tend to
// be higher or lower than earlier ones, with no assumption on their
// distribution, and Sen's slope, the median of the slopes between every
// two values, as the trend's size. Repetitions of a database benchmark
// are not exchangeable when the data grows or ages between them (TPC-C's
// tables, pgbench's history, bloat, compaction): a trend is an order
// effect, which a comparison must flag rather than count as noise.
type Trend struct {
	N int
	// S is Σ sign(x_j − x_i) over i < j; Tau is Kendall's τ_b of the
	// values against their order.
	S   float64
	Tau float64
	// P is the two-sided p-value: exact (Exact) from the distribution of
	// inversions of a random order when no values tie, otherwise the
	// normal approximation with the tie correction (as SciPy's
	// kendalltau: no continuity correction).
	P     float64
	Exact bool
	// SlopePercent is Sen's slope as a percentage of the values' median
	// per position (NaN when the median is zero).
	SlopePercent float64
}

// maxExactTrend bounds the exact distribution (n(n−1)/2 + 1 counts, n
// steps).
const maxExactTrend = 60

// MannKendall tests values for a trend in their order; fewer than three
// values have none to test (P 1).
func MannKendall(x []float64) Trend {
	n := len(x)
	out := Trend{N: n, P: 1, SlopePercent: math.NaN()}
	if n < 3 {
		return out
	}
	var slopes []float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			switch {
			case x[j] > x[i]:
				out.S++
			case x[j] < x[i]:
				out.S--
			}
			slopes = append(slopes, (x[j]-x[i])/float64(j-i))
		}
	}
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	slices.Sort(slopes)
	if m := median(sorted); m != 0 {
		out.SlopePercent = 100 * median(slopes) / math.Abs(m)
	}
	pairs := float64(n*(n-1)) / 2
	// Ties among the values: their groups' sizes.
	var tieTerm, tiePairs float64
	for i := 0; i < n; {
		j := i
		for j < n && sorted[j] == sorted[i] {
			j++
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t * (t - 1) * (2*t + 5)
			tiePairs += t * (t - 1) / 2
		}
		i = j
	}
	out.Tau = out.S / math.Sqrt(pairs*(pairs-tiePairs))
	if tiePairs == 0 && n <= maxExactTrend {
		out.P, out.Exact = exactKendallP(n, out.S), true
		return out
	}
	v := (float64(n*(n-1)*(2*n+5)) - tieTerm) / 18
	if v <= 0 {
		return out // every value the same
	}
	out.P = math.Min(1, math.Erfc(math.Abs(out.S)/math.Sqrt(v)/math.Sqrt2))
	return out
}

// exactKendallP is the two-sided p-value of S for n values in a random
// order with no ties: S = n(n−1)/2 − 2·inversions, and the number of
// permutations with k inversions is the Mahonian number, counted by
// adding one element at a time.
func exactKendallP(n int, s float64) float64 {
	maxInv := n * (n - 1) / 2
	counts := []float64{1}
	for m := 2; m <= n; m++ {
		next := make([]float64, len(counts)+m-1)
		for k, c := range counts {
			for add := 0; add < m; add++ {
				next[k+add] += c
			}
		}
		counts = next
	}
	var total, tail float64
	for k, c := range counts {
		total += c
		if math.Abs(float64(maxInv-2*k)) >= math.Abs(s)-1e-9 {
			tail += c
		}
	}
	return math.Min(1, tail/total)
}
