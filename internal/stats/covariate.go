package stats

import "math"

// Covariate is a paired change adjusted by a covariate measured in every
// round on both sides: CUPED (Deng, Xu, Kohavi and Walker, 2013) on the
// within-round log ratios. A short canary of each run's node (a fixed CPU
// or disk micro-measurement made before the tool starts) sees part of what
// makes one run slower than another — a slower disk, a noisier host — and
// that part of the round's ratio is taken out.
//
// With d_i = ln(candidate_i / baseline_i) and x_i the same ratio of the
// covariate, it fits d_i = a + θ·x_i + e_i by least squares; the adjusted
// change is a, the ratio when both runs' canaries read alike (x = 0), with
// its t interval on n-2 degrees of freedom. Its standard error,
// s·√(1/n + x̄²/Sxx), shrinks from the paired one's by the variance the
// covariate explains, less the degree of freedom the slope costs.
//
// It assumes what CUPED needs: the covariate is not changed by the
// variant (x has mean zero): the canary measures something both variants
// share — the load generators' nodes of one pool, or the target's nodes
// when only the database's version or settings differ. A canary that moved
// with the variant (CovariateShiftP small) would take part of the change
// itself out; the comparison then does not use it and says why.
type Covariate struct {
	// Pairs is the number of rounds with the value and the covariate on
	// both sides.
	Pairs int
	// Difference is the adjusted change and its t interval.
	Difference
	// P is the adjusted change's two-sided p-value.
	P float64
	// Theta is the slope of the log ratio on the covariate's log ratio.
	Theta float64
	// VarianceRemovedPercent is the share of the log ratios' variance the
	// covariate explains, each variance on its own degrees of freedom
	// (1 - (SSE/(n-2)) / (SST/(n-1))): it can be negative when the
	// covariate explains less than the degree of freedom it costs.
	VarianceRemovedPercent float64
	// Correlation is Pearson's r between the log ratios and the
	// covariate's.
	Correlation float64
	// CovariateShiftPercent is the covariate's own change from baseline
	// to candidate (the mean of x, in percent) and CovariateShiftP the
	// paired t test's p-value of it against none.
	CovariateShiftPercent, CovariateShiftP float64
}

// CovariatePairedLogDiff adjusts the paired change of the rounds' values
// (baseline[i] and candidate[i] measured in round i) by the covariate's
// (baseCov[i], candCov[i]) at level 1-alpha. Values or covariates that are
// not all positive have no log ratio: Pairs is then zero and the change
// NaN. Fewer than three rounds leave no degree of freedom for the slope's
// residuals: the change is given, its interval unbounded.
func CovariatePairedLogDiff(baseline, candidate, baseCov, candCov []float64, alpha float64) Covariate {
	n := min(len(baseline), len(candidate), len(baseCov), len(candCov))
	out := Covariate{Difference: Difference{DeltaPercent: math.NaN(), CILowPercent: math.Inf(-1), CIHighPercent: math.Inf(1), Relative: true},
		P: 1, Theta: math.NaN(), VarianceRemovedPercent: math.NaN(), Correlation: math.NaN(), CovariateShiftPercent: math.NaN(), CovariateShiftP: 1}
	if n == 0 || !allPositive(baseline[:n]) || !allPositive(candidate[:n]) || !allPositive(baseCov[:n]) || !allPositive(candCov[:n]) {
		return out
	}
	d, x := logRatios(baseline[:n], candidate[:n]), logRatios(baseCov[:n], candCov[:n])
	pct := func(v float64) float64 { return 100 * (math.Exp(v) - 1) }
	out.Pairs = n
	sd, sx := Summarize(d), Summarize(x)
	out.CovariateShiftPercent = pct(sx.Mean)
	if se := sx.StdDev / math.Sqrt(float64(n)); n >= 2 && se > 0 {
		out.CovariateShiftP = StudentTwoSided(sx.Mean/se, float64(n-1))
	}
	var sxx, sxy, syy float64
	for i := range d {
		sxx += (x[i] - sx.Mean) * (x[i] - sx.Mean)
		sxy += (x[i] - sx.Mean) * (d[i] - sd.Mean)
		syy += (d[i] - sd.Mean) * (d[i] - sd.Mean)
	}
	if sxx == 0 {
		// The canaries' ratio never varied: nothing to adjust by; the
		// paired change stands, without an interval of its own.
		out.DeltaPercent, out.Theta, out.Level = pct(sd.Mean), 0, 1
		return out
	}
	out.Theta = sxy / sxx
	a := sd.Mean - out.Theta*sx.Mean
	out.DeltaPercent, out.Level = pct(a), 1
	if syy > 0 {
		out.Correlation = sxy / math.Sqrt(sxx*syy)
	}
	if n < 3 {
		return out
	}
	sse := math.Max(syy-out.Theta*sxy, 0)
	if syy > 0 {
		out.VarianceRemovedPercent = 100 * (1 - (sse/float64(n-2))/(syy/float64(n-1)))
	}
	out.Level = 1 - alpha
	se := math.Sqrt(sse/float64(n-2)) * math.Sqrt(1/float64(n)+sx.Mean*sx.Mean/sxx)
	if se == 0 {
		return out // an exact fit: untested, unbounded (as PairedLogDiff)
	}
	out.P = StudentTwoSided(a/se, float64(n-2))
	half := StudentQuantile(1-alpha/2, float64(n-2)) * se
	out.CILowPercent, out.CIHighPercent = pct(a-half), pct(a+half)
	return out
}
