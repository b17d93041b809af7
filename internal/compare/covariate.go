package compare

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// CanaryMetric is the canary figure's metric (results.SourceCanary); ""
// for none.
func CanaryMetric(f benchv1.CanaryFigure) string {
	switch f {
	case benchv1.CanaryCPU:
		return results.CanaryCPUMegabytesPerSecond
	case benchv1.CanaryDiskWrite:
		return results.CanaryDiskWriteMegabytesPerSecond
	case benchv1.CanaryDiskSync:
		return results.CanaryDiskSyncMillis
	}
	return ""
}

// CovariateRow is a headline row's paired change adjusted by the canary
// figure its comparison names (stats.Covariate, CUPED on the rounds' log
// ratios): the part of each round's ratio that the canaries of its runs'
// nodes explain is taken out. Shown beside the independent and paired
// analyses; the verdict stays theirs.
type CovariateRow struct {
	// Metric is the canary figure adjusted by.
	Metric string `json:"metric"`
	// Rounds are those with the value and the canary on both sides.
	Rounds        int `json:"rounds"`
	DeltaPercent  Num `json:"deltaPercent"`
	CILowPercent  Num `json:"ciLowPercent"`
	CIHighPercent Num `json:"ciHighPercent"`
	CILevel       Num `json:"ciLevel"`
	P             Num `json:"p"`
	// Theta is the slope of the round's log ratio on the canary's, and
	// Correlation their Pearson r.
	Theta       Num `json:"theta"`
	Correlation Num `json:"correlation"`
	// VarianceRemovedPercent is the share of the rounds' log-ratio
	// variance the canary explained, net of the degree of freedom it
	// costs (negative: it explained less than that).
	VarianceRemovedPercent Num `json:"varianceRemovedPercent"`
	// Narrowing is the paired interval's width over the adjusted one's
	// (the same rounds): above 1 the canary narrowed it.
	Narrowing Num `json:"narrowing"`
	// CanaryShiftPercent is the canary's own change from baseline to
	// candidate, CanaryShiftP the paired t test's p-value of it.
	CanaryShiftPercent Num `json:"canaryShiftPercent"`
	CanaryShiftP       Num `json:"canaryShiftP"`
	// Valid is false when the adjustment is not to be read, Reason says
	// why: too few rounds, or a canary that moved with the variant (it
	// then measures something the variant changed, and adjusting by it
	// would take part of the change itself out).
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`
}

// covariateRow adjusts a headline sample's paired change (p, its paired
// analysis) by the canary's sample of its step; nil without rounds on both
// sides of both.
func covariateRow(s, canary *sample, p *PairedRow, metric string, alpha float64) *CovariateRow {
	if canary == nil {
		return nil
	}
	rounds := commonRounds(s, canary)
	if len(rounds) == 0 || p == nil {
		return nil
	}
	base, cand := s.meansAt(rounds)
	bc, cc := canary.meansAt(rounds)
	a := stats.CovariatePairedLogDiff(base, cand, bc, cc, alpha)
	if a.Pairs == 0 {
		return nil // a value or a canary that is not positive: no ratio
	}
	out := &CovariateRow{Metric: metric, Rounds: a.Pairs, DeltaPercent: Num(a.DeltaPercent), CILowPercent: Num(a.CILowPercent),
		CIHighPercent: Num(a.CIHighPercent), CILevel: Num(a.Level), P: Num(a.P), Theta: Num(a.Theta), Correlation: Num(a.Correlation),
		VarianceRemovedPercent: Num(a.VarianceRemovedPercent), Narrowing: Num(math.NaN()),
		CanaryShiftPercent: Num(a.CovariateShiftPercent), CanaryShiftP: Num(a.CovariateShiftP), Valid: true}
	if w := a.CIHighPercent - a.CILowPercent; w > 0 && !math.IsInf(w, 0) {
		// Against the paired interval of the same rounds: the row's own
		// when every round has a canary, else worked out for these.
		pw := float64(p.CIHighPercent - p.CILowPercent)
		if p.Rounds != a.Pairs {
			q := stats.PairedLogDiff(base, cand, alpha)
			pw = q.CIHighPercent - q.CILowPercent
		}
		out.Narrowing = Num(pw / w)
	}
	switch {
	case a.Pairs < 3:
		out.Valid, out.Reason = false, fmt.Sprintf("%d rounds with the canary on both sides: the slope leaves no degree of freedom for an interval (3 at least)", a.Pairs)
	case a.CovariateShiftP < alpha:
		out.Valid, out.Reason = false, fmt.Sprintf("the canary moved with the variant (%s, p %.2g): it measures something the variant changed, and adjusting by it would take part of the change out; measure where both variants are alike (docs/statistics.md)",
			pct(Num(a.CovariateShiftPercent)), a.CovariateShiftP)
	}
	return out
}

// canarySamples are the samples of the canary figure by step.
func canarySamples(all []tested, metric string) map[string]*sample {
	if metric == "" {
		return nil
	}
	out := map[string]*sample{}
	for _, t := range all {
		if t.key.metric == metric && t.key.op == "" && t.sample.src == results.SourceCanary {
			out[t.key.step] = t.sample
		}
	}
	return out
}

// covariateLine is the summary's line of the headline rows adjusted by
// the canary.
func covariateLine(rep *Report) string {
	metric := ""
	parts := primaryParts(rep, func(row Row, name string) (string, bool) {
		c := row.Covariate
		if c == nil {
			return "", false
		}
		metric = c.Metric
		if !c.Valid {
			return fmt.Sprintf("%s not adjusted: %s", name, c.Reason), true
		}
		part := fmt.Sprintf("%s %s (CI %s … %s, p %.2g; %d rounds), the canary removed %.0f %% of the rounds' variance (r %.2f)", name, pct(c.DeltaPercent),
			pct(c.CILowPercent), pct(c.CIHighPercent), float64(c.P), c.Rounds, float64(c.VarianceRemovedPercent), float64(c.Correlation))
		if n := float64(c.Narrowing); !math.IsNaN(n) {
			part += fmt.Sprintf(", an interval %.1f× narrower than the paired one", n)
		}
		return part, true
	})
	if parts == "" {
		return ""
	}
	return fmt.Sprintf("Adjusted by the load generators' canary (%s, CUPED on the rounds' ratios): %s. Shown beside the verdict, not deciding it", metric, parts)
}

// covariatePools marks the covariate rows not valid when the variants'
// load generators, whose nodes the canary measures, ran in node pools of
// their own (each side's pools, from the runs' environments, disjoint):
// the canary then measures the variant's hardware, not the noise.
func covariatePools(rep *Report, baseline, candidate Side) {
	bp, cp := loadgenPools(baseline), loadgenPools(candidate)
	if len(bp) == 0 || len(cp) == 0 {
		return
	}
	for p := range bp {
		if cp[p] {
			return
		}
	}
	for i := range rep.Rows {
		if c := rep.Rows[i].Covariate; c != nil && c.Valid {
			c.Valid, c.Reason = false, fmt.Sprintf("the variants' load generators ran in node pools of their own (%s: %s; %s: %s): the canary measures the variant's nodes, not the noise; measure where both variants are alike (docs/statistics.md)",
				baseline.Name, strings.Join(slices.Sorted(maps.Keys(bp)), ", "), candidate.Name, strings.Join(slices.Sorted(maps.Keys(cp)), ", "))
		}
	}
}

// loadgenPools are the node pools a side's load generators ran in, as
// the runs' environments name them.
func loadgenPools(side Side) map[string]bool {
	out := map[string]bool{}
	for _, r := range side.Runs {
		if r.Environment == nil {
			continue
		}
		for _, n := range r.Environment.Nodes {
			if n.Pool != "" && slices.Contains(n.Roles, benchv1.RoleLoadgen) {
				out[n.Pool] = true
			}
		}
	}
	return out
}
