package stats

import "math"

// Test names the significance test (and the interval that goes with it)
// a family of metrics is judged by.
type Test string

const (
	// RankTest is the Mann-Whitney U test with the Hodges-Lehmann change
	// and Moses' exact interval: distribution-free, but with n and m
	// repetitions its p-value cannot go below 2/C(n+m, n) (0.0079 at 5 vs
	// 5), so no correction for many metrics can let it reach alpha.
	RankTest Test = "MannWhitney"
	// WelchLogTest is Welch's unequal-variance t-test on the logarithms of
	// the values (a ratio of geometric means), with its t interval: its
	// p-value has no floor, so it can be corrected over hundreds of
	// operations. It assumes roughly log-normal repetitions, which
	// throughputs and latency percentiles of repeated measurements are.
	WelchLogTest Test = "WelchLog"
)

// WelchLogDiff is Welch's t-test of the change from baseline to candidate
// and its (1-alpha) interval: on logarithms when every value is positive
// (the change of the geometric mean), otherwise on the raw values over the
// baseline's mean. It returns the change and the two-sided p-value.
func WelchLogDiff(baseline, candidate []float64, alpha float64) (Difference, float64) {
	if len(baseline) == 0 || len(candidate) == 0 {
		return Difference{DeltaPercent: math.NaN(), CILowPercent: math.Inf(-1), CIHighPercent: math.Inf(1)}, 1
	}
	positive := allPositive(baseline) && allPositive(candidate)
	b, c := baseline, candidate
	scale := 1.0
	if positive {
		b, c = logs(baseline), logs(candidate)
	} else {
		scale = math.Abs(Summarize(baseline).Mean)
	}
	toPercent := func(x float64) float64 {
		switch {
		case positive:
			return 100 * (math.Exp(x) - 1)
		case scale == 0 && x == 0:
			return 0 // no change of a zero (no errors before, none after)
		case scale == 0:
			return math.NaN()
		}
		return 100 * x / scale
	}
	sb, sc := Summarize(b), Summarize(c)
	shift := sc.Mean - sb.Mean
	_, df, p := WelchT(c, b)
	res := Difference{DeltaPercent: toPercent(shift), Relative: positive, Level: 1 - alpha,
		CILowPercent: math.Inf(-1), CIHighPercent: math.Inf(1)}
	if sb.N < 2 || sc.N < 2 {
		res.Level = 1
		return res, p
	}
	se := math.Sqrt(sb.StdDev*sb.StdDev/float64(sb.N) + sc.StdDev*sc.StdDev/float64(sc.N))
	if se == 0 {
		// Every repetition of each side gave one value: no variation to
		// test a difference against. It is what a figure printed at its
		// resolution's floor gives (pgbench's 0.001 ms against 0.000 ms),
		// not evidence; the rank test's verdict on it is as weak as its
		// floor allows, Welch's would be certain. Untested, unbounded.
		return res, 1
	}
	half := StudentQuantile(1-alpha/2, df) * se
	res.CILowPercent, res.CIHighPercent = toPercent(shift-half), toPercent(shift+half)
	return res, p
}

// StudentQuantile is the p-quantile (p > 0.5) of Student's t with df
// degrees of freedom, by bisection of the two-sided tail probability.
func StudentQuantile(p, df float64) float64 {
	if !(p > 0.5 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	tail := 2 * (1 - p)
	lo, hi := 0.0, 1.0
	for StudentTwoSided(hi, df) > tail {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		if StudentTwoSided(mid, df) > tail {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

func allPositive(v []float64) bool {
	for _, x := range v {
		if !(x > 0) {
			return false
		}
	}
	return true
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}
