package stats

import (
	"math"
	"sort"
	"sync"
)

// exactLimit bounds n1·n2 for the exact null distribution of U.
const exactLimit = 10000

// MannWhitneyResult is a two-sided Mann-Whitney U test of a against b.
type MannWhitneyResult struct {
	// U counts the pairs (x from a, y from b) with x > y, ties counting ½.
	U float64
	// P is the two-sided p-value.
	P float64
	// Exact is true when P comes from the exact null distribution.
	Exact bool
}

// MannWhitney tests whether a and b come from the same distribution against
// a shift in either direction.
func MannWhitney(a, b []float64) MannWhitneyResult {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return MannWhitneyResult{P: 1}
	}
	u, ties := uStatistic(a, b)
	if !ties && n1*n2 <= exactLimit {
		dist := uDistribution(n1, n2)
		total := 0.0
		for _, c := range dist {
			total += c
		}
		// Two-sided: twice the smaller tail, capped at 1.
		lo := math.Min(u, float64(n1*n2)-u)
		k := int(math.Floor(lo + 1e-9))
		tail := 0.0
		for i := 0; i <= k && i < len(dist); i++ {
			tail += dist[i]
		}
		return MannWhitneyResult{U: u, P: math.Min(1, 2*tail/total), Exact: true}
	}
	return MannWhitneyResult{U: u, P: normalP(a, b, u)}
}

// uStatistic returns U for a and whether there are ties across the samples
// or within them (ties make the exact distribution inapplicable).
func uStatistic(a, b []float64) (u float64, ties bool) {
	for _, x := range a {
		for _, y := range b {
			switch {
			case x > y:
				u++
			case x == y:
				u += 0.5
				ties = true
			}
		}
	}
	all := append(append([]float64{}, a...), b...)
	sort.Float64s(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			ties = true
		}
	}
	return u, ties
}

// uDistribution returns, for sizes m and n, how many of the C(m+n, m)
// orderings give U = 0, 1, …, m·n (the recurrence of Mann and Whitney, 1947).
func uDistribution(m, n int) []float64 {
	key := [2]int{m, n}
	if d, ok := uCache.Load(key); ok {
		return d.([]float64)
	}
	d := computeUDistribution(m, n)
	uCache.Store(key, d)
	return d
}

// uCache keeps distributions already computed (read-only once stored).
var uCache sync.Map

func computeUDistribution(m, n int) []float64 {
	// f[i][j][u] over i ≤ m, j ≤ n, kept two layers at a time in i.
	maxU := m * n
	prev := make([][]float64, n+1)
	for j := 0; j <= n; j++ {
		prev[j] = make([]float64, maxU+1)
		prev[j][0] = 1 // i = 0: U = 0 whatever j
	}
	for i := 1; i <= m; i++ {
		cur := make([][]float64, n+1)
		cur[0] = make([]float64, maxU+1)
		cur[0][0] = 1 // j = 0: U = 0
		for j := 1; j <= n; j++ {
			cur[j] = make([]float64, maxU+1)
			for u := 0; u <= i*j; u++ {
				// The largest of the i+j values is from a (adds j to U) or from b.
				v := cur[j-1][u]
				if u >= j {
					v += prev[j][u-j]
				}
				cur[j][u] = v
			}
		}
		prev = cur
	}
	return prev[n]
}

// normalP is the two-sided p-value of U by the normal approximation with
// tie and continuity corrections.
func normalP(a, b []float64, u float64) float64 {
	n1, n2 := float64(len(a)), float64(len(b))
	n := n1 + n2
	all := append(append([]float64{}, a...), b...)
	sort.Float64s(all)
	tieTerm := 0.0
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j] == all[i] {
			j++
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	mean := n1 * n2 / 2
	variance := n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 {
		return 1
	}
	z := (math.Abs(u-mean) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}
