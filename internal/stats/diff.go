package stats

import (
	"math"
	"sort"
)

// Difference is candidate versus baseline, in percent of the baseline.
type Difference struct {
	// DeltaPercent is the Hodges-Lehmann estimate of the change.
	DeltaPercent float64
	// CILowPercent and CIHighPercent bound the confidence interval of the
	// change; ±Inf when the samples are too small for the level asked.
	CILowPercent, CIHighPercent float64
	// Level is the interval's actual coverage (the exact interval is
	// discrete, so it is at least the level asked for).
	Level float64
	// Relative is true when Δ was computed on logarithms (all values
	// positive); otherwise on the raw values over the baseline's median.
	Relative bool
}

// Diff estimates the change from baseline to candidate with a (1-alpha)
// confidence interval (see the package documentation for the method).
func Diff(baseline, candidate []float64, alpha float64) Difference {
	n1, n2 := len(candidate), len(baseline)
	if n1 == 0 || n2 == 0 {
		return Difference{DeltaPercent: math.NaN(), CILowPercent: math.Inf(-1), CIHighPercent: math.Inf(1)}
	}
	positive := true
	for _, v := range append(append([]float64{}, baseline...), candidate...) {
		if !(v > 0) {
			positive = false
		}
	}
	scale := 1.0
	transform := func(v float64) float64 { return v }
	if positive {
		transform = math.Log
	} else {
		scale = math.Abs(Summarize(baseline).Median)
	}
	d := make([]float64, 0, n1*n2)
	for _, c := range candidate {
		for _, b := range baseline {
			d = append(d, transform(c)-transform(b))
		}
	}
	sort.Float64s(d)
	toPercent := func(x float64) float64 {
		if positive {
			return 100 * (math.Exp(x) - 1)
		}
		if scale == 0 {
			if x == 0 {
				return 0 // no change of a zero (no errors before, none after)
			}
			return math.NaN()
		}
		return 100 * x / scale
	}
	res := Difference{DeltaPercent: toPercent(median(d)), Relative: positive,
		CILowPercent: math.Inf(-1), CIHighPercent: math.Inf(1)}
	c, level := mosesRank(n1, n2, alpha, hasTies(baseline, candidate))
	res.Level = level
	if c >= 1 && c <= len(d) {
		res.CILowPercent, res.CIHighPercent = toPercent(d[c-1]), toPercent(d[len(d)-c])
	} else {
		res.Level = 1
	}
	return res
}

// mosesRank returns c such that the c-th smallest and c-th largest pairwise
// differences bound a confidence interval of level ≥ 1-alpha, and that
// level; c is 0 when no such interval exists at these sample sizes.
func mosesRank(n1, n2 int, alpha float64, ties bool) (int, float64) {
	N := n1 * n2
	if !ties && N <= exactLimit {
		dist := uDistribution(n1, n2)
		total := 0.0
		for _, v := range dist {
			total += v
		}
		cum, c := 0.0, 0
		for k := 0; k < len(dist); k++ {
			// The interval [d_(k+1), d_(N-k)] misses the shift with
			// probability 2·P(U ≤ k).
			if 2*(cum+dist[k])/total > alpha {
				break
			}
			cum += dist[k]
			c = k + 1
		}
		return c, 1 - 2*cum/total
	}
	z := normalQuantile(1 - alpha/2)
	sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
	c := int(math.Floor(float64(N)/2 - z*sd))
	if c < 1 {
		return 0, 1
	}
	return c, 1 - alpha
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func hasTies(a, b []float64) bool {
	_, ties := uStatistic(a, b)
	return ties
}

// normalQuantile is the inverse of the standard normal CDF (Acklam's
// rational approximation refined by one Newton step; error < 1e-12).
func normalQuantile(p float64) float64 {
	if p <= 0 {
		return math.Inf(-1)
	}
	if p >= 1 {
		return math.Inf(1)
	}
	a := [...]float64{-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00}
	b := [...]float64{-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01}
	c := [...]float64{-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00}
	d := [...]float64{7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00}
	var x float64
	switch {
	case p < 0.02425:
		q := math.Sqrt(-2 * math.Log(p))
		x = (((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	case p > 1-0.02425:
		q := math.Sqrt(-2 * math.Log(1-p))
		x = -(((((c[0]*q+c[1])*q+c[2])*q+c[3])*q+c[4])*q + c[5]) / ((((d[0]*q+d[1])*q+d[2])*q+d[3])*q + 1)
	default:
		q := p - 0.5
		r := q * q
		x = (((((a[0]*r+a[1])*r+a[2])*r+a[3])*r+a[4])*r + a[5]) * q / (((((b[0]*r+b[1])*r+b[2])*r+b[3])*r+b[4])*r + 1)
	}
	e := 0.5*math.Erfc(-x/math.Sqrt2) - p
	u := e * math.Sqrt(2*math.Pi) * math.Exp(x*x/2)
	return x - u/(1+x*u/2)
}

// Shift is the Hodges-Lehmann estimate of candidate − baseline in their
// own unit (not a percent: a figure that is zero on one side, a statement
// only one variant runs, still has one), with its exact Moses interval of
// level ≥ 1-alpha (±Inf when the samples are too small for it).
func Shift(baseline, candidate []float64, alpha float64) (estimate, low, high float64) {
	n1, n2 := len(candidate), len(baseline)
	if n1 == 0 || n2 == 0 {
		return math.NaN(), math.Inf(-1), math.Inf(1)
	}
	d := make([]float64, 0, n1*n2)
	for _, c := range candidate {
		for _, b := range baseline {
			d = append(d, c-b)
		}
	}
	sort.Float64s(d)
	low, high = math.Inf(-1), math.Inf(1)
	if c, _ := mosesRank(n1, n2, alpha, hasTies(baseline, candidate)); c >= 1 && c <= len(d) {
		low, high = d[c-1], d[len(d)-c]
	}
	return median(d), low, high
}
