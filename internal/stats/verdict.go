package stats

import (
	"fmt"
	"math"
	"sort"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Direction says which way a metric is better: the API's.
type Direction = benchv1.Direction

const (
	HigherIsBetter = benchv1.HigherIsBetter
	LowerIsBetter  = benchv1.LowerIsBetter
	Neutral        = benchv1.Neutral
)

// Verdict on one metric: the API's comparison verdict.
type Verdict = benchv1.ComparisonVerdict

const (
	Better       = benchv1.VerdictBetter
	Worse        = benchv1.VerdictWorse
	NoChange     = benchv1.VerdictNoChange
	Inconclusive = benchv1.VerdictInconclusive
)

// Sample is one metric's values over repetitions for baseline and candidate.
type Sample struct {
	Key                 string // metric (and operation, step) it belongs to
	Direction           Direction
	Baseline, Candidate []float64
}

// Comparison is the judged difference of one Sample.
type Comparison struct {
	Key                 string
	Direction           Direction
	Baseline, Candidate Summary
	Difference
	P, PAdjusted float64
	Exact        bool
	Unstable     bool
	Verdict      Verdict
	// Reason says why, in words.
	Reason string
}

// Compare judges every sample, adjusting the p-values for their number.
// Neutral metrics are compared but take no part in the correction and get
// NoChange or Inconclusive only.
func Compare(samples []Sample, crit Criteria) []Comparison {
	crit = crit.WithDefaults()
	out := make([]Comparison, len(samples))
	var family []int
	var ps []float64
	for i, s := range samples {
		out[i] = Comparison{Key: s.Key, Direction: s.Direction, Baseline: Summarize(s.Baseline), Candidate: Summarize(s.Candidate)}
		if crit.Test == WelchLogTest {
			out[i].Difference, out[i].P = WelchLogDiff(s.Baseline, s.Candidate, crit.Alpha)
		} else {
			mw := MannWhitney(s.Candidate, s.Baseline)
			out[i].Difference, out[i].P, out[i].Exact = Diff(s.Baseline, s.Candidate, crit.Alpha), mw.P, mw.Exact
		}
		out[i].PAdjusted = out[i].P
		if s.Direction != Neutral {
			family = append(family, i)
			ps = append(ps, out[i].P)
		}
	}
	adj := Adjust(ps, crit.Correction)
	for k, i := range family {
		out[i].PAdjusted = adj[k]
	}
	for i := range out {
		judge(&out[i], crit)
	}
	return out
}

func judge(c *Comparison, crit Criteria) {
	m := crit.MinEffectPercent
	if crit.MaxCVPercent > 0 && (c.Baseline.CVPercent > crit.MaxCVPercent || c.Candidate.CVPercent > crit.MaxCVPercent) {
		c.Unstable = true
	}
	switch {
	case c.Baseline.N < 2 || c.Candidate.N < 2:
		c.Verdict, c.Reason = Inconclusive, fmt.Sprintf("too few repetitions (%d baseline, %d candidate)", c.Baseline.N, c.Candidate.N)
	case c.Baseline.Min == c.Baseline.Max && c.Candidate.Min == c.Candidate.Max && c.Baseline.Min == c.Candidate.Min:
		c.Verdict, c.Reason = NoChange, fmt.Sprintf("the same value (%g) in every repetition of both", c.Baseline.Min)
	case math.IsNaN(c.DeltaPercent):
		c.Verdict, c.Reason = Inconclusive, "no relative change: the baseline's median is zero"
	case c.Unstable:
		c.Verdict, c.Reason = Inconclusive, fmt.Sprintf("unstable: CV %.1f %% / %.1f %% above %.1f %%", c.Baseline.CVPercent, c.Candidate.CVPercent, crit.MaxCVPercent)
	case c.PAdjusted < crit.Alpha && (c.CILowPercent > 0 || c.CIHighPercent < 0) && math.Abs(c.DeltaPercent) >= m && c.Direction != Neutral:
		up := c.DeltaPercent > 0
		if up == (c.Direction == HigherIsBetter) {
			c.Verdict = Better
		} else {
			c.Verdict = Worse
		}
		c.Reason = fmt.Sprintf("Δ %+.2f %% (CI %+.2f … %+.2f %%), p %.3g adjusted, at least the minimum effect %.1f %%", c.DeltaPercent, c.CILowPercent, c.CIHighPercent, c.PAdjusted, m)
	case c.CILowPercent > -m && c.CIHighPercent < m:
		c.Verdict, c.Reason = NoChange, fmt.Sprintf("the whole CI (%+.2f … %+.2f %%) lies within ±%.1f %%", c.CILowPercent, c.CIHighPercent, m)
	case c.PAdjusted < crit.Alpha && c.Direction == Neutral:
		c.Verdict, c.Reason = Inconclusive, fmt.Sprintf("changed by %+.2f %%, but the metric has no better direction", c.DeltaPercent)
	case c.PAdjusted < crit.Alpha:
		c.Verdict, c.Reason = Inconclusive, fmt.Sprintf("significant but smaller than the minimum effect %.1f %% and not shown to be within it", m)
	default:
		c.Verdict, c.Reason = Inconclusive, fmt.Sprintf("not significant (p %.3g adjusted) and the CI (%+.2f … %+.2f %%) reaches beyond ±%.1f %%: more repetitions needed", c.PAdjusted, c.CILowPercent, c.CIHighPercent, m)
	}
}

// Adjust returns p-values adjusted for their number, in the input order.
func Adjust(ps []float64, c Correction) []float64 {
	n := len(ps)
	out := make([]float64, n)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	switch c {
	case Holm:
		running := 0.0
		for rank, i := range idx {
			v := math.Min(1, float64(n-rank)*ps[i])
			running = math.Max(running, v)
			out[i] = running
		}
	case BenjaminiHochberg:
		running := 1.0
		for rank := n - 1; rank >= 0; rank-- {
			i := idx[rank]
			v := math.Min(1, ps[i]*float64(n)/float64(rank+1))
			running = math.Min(running, v)
			out[i] = running
		}
	default:
		copy(out, ps)
	}
	return out
}
