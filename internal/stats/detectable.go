package stats

import "math"

// DetectablePower is the power a minimum detectable effect is stated at.
const DetectablePower = 0.95

// maxDetectableRuns bounds the runs Detectable sizes a design to.
const maxDetectableRuns = 1000

// Detectable is what a comparison could have found with the noise it saw:
// the smallest change its test finds with DetectablePower at alpha, and the
// runs per side (or rounds) it would take to find the minimum effect. It
// uses the t approximation on logarithms (the headline's rank test is a
// little less powerful at small n, so it is a lower bound there).
type Detectable struct {
	// EffectPercent is the minimum detectable change, as a rise of the
	// geometric mean (a drop of the same log size is 1/(1+e) − 1).
	EffectPercent float64
	// RunsForMinEffect is the number of values per side (rounds, paired)
	// that detects the criteria's minimum effect at DetectablePower; zero
	// when no minimum effect is set or the values do not vary; -1 beyond
	// maxDetectableRuns.
	RunsForMinEffect int
}

// detectableLog is the minimum detectable log change for a standard error
// se with df degrees of freedom.
func detectableLog(se, df, alpha float64) float64 {
	return (StudentQuantile(1-alpha/2, df) + StudentQuantile(DetectablePower, df)) * se
}

// sizeFor is the smallest n ≥ 2 whose detectable log change is at most
// target, given se(n) and df(n).
func sizeFor(target float64, se func(n float64) float64, df func(n float64) float64, alpha float64) int {
	if !(target > 0) {
		return 0
	}
	for n := 2; n <= maxDetectableRuns; n++ {
		if detectableLog(se(float64(n)), df(float64(n)), alpha) <= target {
			return n
		}
	}
	return -1
}

// DetectableIndependent is Detectable for two independent samples of
// positive values, from their pooled standard deviation of logarithms.
// ok is false when a side has fewer than two values or one that is not
// positive.
func DetectableIndependent(baseline, candidate []float64, alpha, minEffectPercent float64) (Detectable, bool) {
	n1, n2 := len(baseline), len(candidate)
	if n1 < 2 || n2 < 2 || !allPositive(baseline) || !allPositive(candidate) {
		return Detectable{}, false
	}
	s1, s2 := Summarize(logs(baseline)), Summarize(logs(candidate))
	sp := math.Sqrt((float64(n1-1)*s1.StdDev*s1.StdDev + float64(n2-1)*s2.StdDev*s2.StdDev) / float64(n1+n2-2))
	d := Detectable{EffectPercent: 100 * (math.Exp(detectableLog(sp*math.Sqrt(1/float64(n1)+1/float64(n2)), float64(n1+n2-2), alpha)) - 1)}
	if sp > 0 {
		d.RunsForMinEffect = sizeFor(math.Log1p(minEffectPercent/100),
			func(n float64) float64 { return sp * math.Sqrt(2/n) }, func(n float64) float64 { return 2*n - 2 }, alpha)
	}
	return d, true
}

// DetectablePaired is Detectable for rounds of pairs, from the standard
// deviation of the log ratios; ok is false below two pairs.
func DetectablePaired(baseline, candidate []float64, alpha, minEffectPercent float64) (Detectable, bool) {
	n := min(len(baseline), len(candidate))
	if n < 2 || !allPositive(baseline[:n]) || !allPositive(candidate[:n]) {
		return Detectable{}, false
	}
	sd := Summarize(logRatios(baseline[:n], candidate[:n])).StdDev
	out := Detectable{EffectPercent: 100 * (math.Exp(detectableLog(sd/math.Sqrt(float64(n)), float64(n-1), alpha)) - 1)}
	if sd > 0 {
		out.RunsForMinEffect = sizeFor(math.Log1p(minEffectPercent/100),
			func(k float64) float64 { return sd / math.Sqrt(k) }, func(k float64) float64 { return k - 1 }, alpha)
	}
	return out, true
}
