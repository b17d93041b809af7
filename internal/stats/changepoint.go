package stats

import (
	"math"
	"math/rand/v2"
	"sort"
)

// ChangePointOptions tune ChangePoints.
type ChangePointOptions struct {
	// PValue is the Welch t-test level a candidate split must reach to be
	// kept. Default 0.001 (histories are long; false alarms are costly).
	PValue float64
	// MinEffectPercent drops splits whose means differ by less. Default 0.
	MinEffectPercent float64
	// MinSegment is the fewest points on either side of a split. Default 5.
	MinSegment int
	// Permutations for the significance of the energy statistic itself
	// (Matteson and James); the split must beat PermutationP. Defaults 199
	// and 0.01. The permutations use a fixed seed: same input, same answer.
	Permutations int
	PermutationP float64
}

// ChangePoint is a point in a series where its level changed: Index is the
// first point of the new level.
type ChangePoint struct {
	Index         int
	Before, After Summary
	DeltaPercent  float64
	P             float64
}

// ChangePoints finds level shifts in a series by E-divisive means: the split
// that maximises the energy divergence between the two sides is a candidate;
// a Welch t-test between the sides (the pruning step of Apache Otava/Hunter)
// keeps or rejects it; kept splits are searched again on each side (binary
// segmentation). The result is ordered by index.
func ChangePoints(series []float64, o ChangePointOptions) []ChangePoint {
	if o.PValue == 0 {
		o.PValue = 0.001
	}
	if o.MinSegment < 2 {
		o.MinSegment = 5
	}
	if o.Permutations == 0 {
		o.Permutations = 199
	}
	if o.PermutationP == 0 {
		o.PermutationP = 0.01
	}
	rng := rand.New(rand.NewPCG(0x0da7a, 0xc4a9e))
	var out []ChangePoint
	var split func(lo, hi int)
	split = func(lo, hi int) {
		seg := series[lo:hi]
		tau, q, ok := bestSplit(seg, o.MinSegment)
		if !ok {
			return
		}
		// The best split of any series looks significant to a t-test (it was
		// chosen to); the permutation test accounts for the choice.
		if permutationP(seg, q, o, rng) >= o.PermutationP {
			return
		}
		left, right := seg[:tau], seg[tau:]
		_, _, p := WelchT(left, right)
		b, a := Summarize(left), Summarize(right)
		delta := math.NaN()
		if b.Mean != 0 {
			delta = 100 * (a.Mean - b.Mean) / math.Abs(b.Mean)
		}
		if p >= o.PValue || (o.MinEffectPercent > 0 && !(math.Abs(delta) >= o.MinEffectPercent)) {
			return
		}
		out = append(out, ChangePoint{Index: lo + tau, Before: b, After: a, DeltaPercent: delta, P: p})
		split(lo, lo+tau)
		split(lo+tau, hi)
	}
	split(0, len(series))
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	// Re-state each change against its neighbours (segments may have split further).
	for i := range out {
		lo, hi := 0, len(series)
		if i > 0 {
			lo = out[i-1].Index
		}
		if i+1 < len(out) {
			hi = out[i+1].Index
		}
		left, right := series[lo:out[i].Index], series[out[i].Index:hi]
		out[i].Before, out[i].After = Summarize(left), Summarize(right)
		_, _, out[i].P = WelchT(left, right)
		if out[i].Before.Mean != 0 {
			out[i].DeltaPercent = 100 * (out[i].After.Mean - out[i].Before.Mean) / math.Abs(out[i].Before.Mean)
		}
	}
	return out
}

// bestSplit returns the τ maximising the scaled energy statistic
// Q(τ) = τ(n-τ)/n · (2·E|X-Y| − E|X-X'| − E|Y-Y'|) over the allowed splits.
func bestSplit(x []float64, minSeg int) (int, float64, bool) {
	n := len(x)
	if n < 2*minSeg {
		return 0, 0, false
	}
	// Incremental sums: moving point k = τ from the right side to the left
	// changes each sum by one row of distances, so all splits cost O(n²).
	dist := func(i, j int) float64 { return math.Abs(x[i] - x[j]) }
	var between, within1, within2 float64 // for τ = 0: everything on the right
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			within2 += dist(i, j)
		}
	}
	best, bestQ := 0, math.Inf(-1)
	for tau := 1; tau <= n-minSeg; tau++ {
		k := tau - 1 // the point that just moved left
		var toLeft, toRight float64
		for i := 0; i < k; i++ {
			toLeft += dist(i, k)
		}
		for j := k + 1; j < n; j++ {
			toRight += dist(k, j)
		}
		within1 += toLeft
		within2 -= toRight
		between += toRight - toLeft
		if tau < minSeg {
			continue
		}
		m1, m2 := float64(tau), float64(n-tau)
		e := 2*between/(m1*m2) - within1/(m1*(m1-1)/2) - within2/(m2*(m2-1)/2)
		q := m1 * m2 / float64(n) * e
		if q > bestQ {
			best, bestQ = tau, q
		}
	}
	return best, bestQ, bestQ > 0
}

// permutationP is the share of random orderings of x whose best split is at
// least as divergent as the observed one (with the observed one counted).
func permutationP(x []float64, observed float64, o ChangePointOptions, rng *rand.Rand) float64 {
	perm := append([]float64(nil), x...)
	atLeast := 1
	for i := 0; i < o.Permutations; i++ {
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		if _, q, ok := bestSplit(perm, o.MinSegment); ok && q >= observed {
			atLeast++
		}
	}
	return float64(atLeast) / float64(o.Permutations+1)
}
