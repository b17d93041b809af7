package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// PairedRow is a row's paired analysis (stats.Paired): the rounds of an
// interleaved or concurrent comparison are blocks, each round's run of the
// baseline and of the candidate measured close together, and the change
// is taken within the rounds, free of what drifted between them. The run
// is the unit: a round's value on a side is the geometric mean of its
// run's repetitions (they share a node, a target and a data state, so they
// are not independent measurements). It is shown beside the independent
// analysis of the row, which judges.
type PairedRow struct {
	Rounds int `json:"rounds"`
	// DeltaPercent and its interval are the paired t test's on the log
	// ratios, P its two-sided p-value.
	DeltaPercent  Num `json:"deltaPercent"`
	CILowPercent  Num `json:"ciLowPercent"`
	CIHighPercent Num `json:"ciHighPercent"`
	CILevel       Num `json:"ciLevel"`
	P             Num `json:"p"`
	// The Wilcoxon signed-rank test: its p-value (exact without ties),
	// the Hodges-Lehmann change and its exact interval with the coverage
	// it reaches.
	WilcoxonP            Num  `json:"wilcoxonP"`
	WilcoxonExact        bool `json:"wilcoxonExact,omitempty"`
	HodgesLehmannPercent Num  `json:"hodgesLehmannPercent"`
	WilcoxonLowPercent   Num  `json:"wilcoxonLowPercent"`
	WilcoxonHighPercent  Num  `json:"wilcoxonHighPercent"`
	WilcoxonLevel        Num  `json:"wilcoxonLevel"`
	// PermutationP is the exact sign-flip p-value (null above
	// stats.MaxPermutationPairs rounds).
	PermutationP Num `json:"permutationP"`
	// Narrowing is the independent interval's width over the paired
	// one's, both on the same runs' values (the rounds' means): above 1
	// the pairing removed variation between rounds.
	Narrowing Num `json:"narrowing"`
	// Detectable is what the paired design could find with this noise
	// (stats.DetectablePaired): in rounds.
	Detectable *DetectableRow `json:"detectable,omitempty"`
}

// DetectableRow is a headline row's minimum detectable effect at
// stats.DetectablePower for the noise its runs showed, and the runs per
// variant (rounds, paired) the criteria's minimum effect would need: the
// noise known before the next comparison is planned.
type DetectableRow struct {
	EffectPercent Num `json:"effectPercent"`
	// RunsForMinEffect: measurements per variant, as the independent
	// analysis pools them (rounds when paired); 0 when the
	// values do not vary or no minimum effect is set, -1 beyond a
	// thousand.
	RunsForMinEffect int `json:"runsForMinEffect"`
}

func detectableRow(d stats.Detectable, ok bool) *DetectableRow {
	if !ok {
		return nil
	}
	return &DetectableRow{EffectPercent: Num(d.EffectPercent), RunsForMinEffect: d.RunsForMinEffect}
}

// paired analyses a sample by rounds: nil when fewer than two rounds have
// both sides measured (a comparison in Sequential order, runs without a
// round, or runs compared from outside a comparison).
func paired(s *sample, crit stats.Criteria) *PairedRow {
	alpha := crit.Alpha
	base, cand := s.roundMeans()
	if len(base) < 2 {
		return nil
	}
	p := stats.PairedLogDiff(base, cand, alpha)
	if p.Pairs == 0 {
		return nil // a value that is not positive: no ratio
	}
	ind, _ := stats.WelchLogDiff(base, cand, alpha)
	narrowing := math.NaN()
	if w := p.CIHighPercent - p.CILowPercent; w > 0 && !math.IsInf(w, 0) {
		narrowing = (ind.CIHighPercent - ind.CILowPercent) / w
	}
	return &PairedRow{Rounds: p.Pairs, DeltaPercent: Num(p.DeltaPercent), CILowPercent: Num(p.CILowPercent), CIHighPercent: Num(p.CIHighPercent),
		CILevel: Num(p.Level), P: Num(p.P), WilcoxonP: Num(p.WilcoxonP), WilcoxonExact: p.WilcoxonExact,
		HodgesLehmannPercent: Num(p.WilcoxonDeltaPercent), WilcoxonLowPercent: Num(p.WilcoxonLowPercent), WilcoxonHighPercent: Num(p.WilcoxonHighPercent),
		WilcoxonLevel: Num(p.WilcoxonLevel), PermutationP: Num(p.PermutationP), Narrowing: Num(narrowing),
		Detectable: detectableRow(stats.DetectablePaired(base, cand, alpha, crit.MinEffectPercent))}
}

// roundMeans are the sample's rounds measured on both sides, in order:
// each side's geometric mean of the round's values.
func (s *sample) roundMeans() (base, cand []float64) {
	return s.meansAt(commonRounds(s))
}

// commonRounds are the rounds every sample given measured on both sides,
// in order.
func commonRounds(samples ...*sample) []int32 {
	var rounds []int32
	for r := range samples[0].baseRounds {
		both := true
		for _, s := range samples {
			both = both && len(s.baseRounds[r]) > 0 && len(s.candRounds[r]) > 0
		}
		if both {
			rounds = append(rounds, r)
		}
	}
	slices.Sort(rounds)
	return rounds
}

// meansAt are each side's geometric means of the sample's values at the
// rounds given.
func (s *sample) meansAt(rounds []int32) (base, cand []float64) {
	for _, r := range rounds {
		base, cand = append(base, geometricMean(s.baseRounds[r])), append(cand, geometricMean(s.candRounds[r]))
	}
	return base, cand
}

// geometricMean of positive values (NaN when one is not: no log ratio).
func geometricMean(v []float64) float64 {
	var s float64
	for _, x := range v {
		if !(x > 0) {
			return math.NaN()
		}
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

// primaryParts are the summary's entries of the headline rows that have
// one (part: false for none), at most three by name and how many more: a
// row's name carries its step when there are several.
func primaryParts(rep *Report, part func(row Row, name string) (string, bool)) string {
	var parts []string
	more := 0
	for _, row := range rep.Rows {
		if !rep.IsPrimary(row) {
			continue
		}
		name := metricName(row)
		if len(rep.Steps) > 1 {
			name = row.Step + " " + name
		}
		p, ok := part(row, shorten(name, 48))
		switch {
		case !ok:
		case len(parts) == 3:
			more++
		default:
			parts = append(parts, p)
		}
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("… %d more", more))
	}
	return strings.Join(parts, "; ")
}

// pairedLine is the summary's line of the headline rows' paired analysis,
// beside their independent one: one entry per step (at most three).
func pairedLine(rep *Report) string {
	rounds := 0
	parts := primaryParts(rep, func(row Row, name string) (string, bool) {
		p := row.Paired
		if p == nil {
			return "", false
		}
		rounds = max(rounds, p.Rounds)
		part := fmt.Sprintf("%s %s (CI %s … %s, p %.2g, Wilcoxon p %.2g%s)", name, pct(p.DeltaPercent), pct(p.CILowPercent), pct(p.CIHighPercent),
			float64(p.P), float64(p.WilcoxonP), exactness(p.WilcoxonExact))
		if n := float64(p.Narrowing); !math.IsNaN(n) {
			part += fmt.Sprintf(", an interval %.1f× narrower than the independent one of the same runs", n)
		}
		return part, true
	})
	if parts == "" {
		return ""
	}
	judge := "the independent analysis'"
	if rep.SequentialDecision() != "" {
		judge = "the sequential look's"
	}
	return fmt.Sprintf("Paired by round (%d rounds, each round's runs measured together; the run is the unit): %s. The verdict above is %s; docs/statistics.md says when pairing is valid",
		rounds, parts, judge)
}

// detectableLine is the summary's line of what the headline rows could
// detect with the noise they showed, and the runs the minimum effect
// would take: independent, and paired by round where there are rounds.
func detectableLine(rep *Report, minEffect float64) string {
	parts := primaryParts(rep, func(row Row, name string) (string, bool) {
		if row.Detectable == nil {
			return "", false
		}
		part := fmt.Sprintf("%s ±%.1f %% with %d/%d measurements%s", name, float64(row.Detectable.EffectPercent),
			row.Baseline.N, row.Candidate.N, runsNeeded(row.Detectable.RunsForMinEffect, minEffect, "measurements per variant"))
		if p := row.Paired; p != nil && p.Detectable != nil {
			part += fmt.Sprintf("; paired ±%.1f %% with %d rounds%s", float64(p.Detectable.EffectPercent), p.Rounds,
				runsNeeded(p.Detectable.RunsForMinEffect, minEffect, "rounds"))
		}
		return part, true
	})
	if parts == "" {
		return ""
	}
	return fmt.Sprintf("Detectable at %.0f %% power with the noise seen (t approximation on logarithms): %s", 100*stats.DetectablePower, parts)
}

func runsNeeded(n int, minEffect float64, unit string) string {
	switch {
	case n > 0:
		return fmt.Sprintf(" (the minimum effect %.1f %% needs %d %s)", minEffect, n, unit)
	case n < 0:
		return fmt.Sprintf(" (the minimum effect %.1f %% needs more than a thousand %s: lower the noise first)", minEffect, unit)
	}
	return ""
}

func exactness(exact bool) string {
	if exact {
		return " exact"
	}
	return ""
}
