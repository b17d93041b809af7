package compare

import (
	"fmt"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// SequentialRow is a headline row's look in a comparison that stops early
// (stats.SequentialDesign.Look): the change over the rounds so far, its
// repeated confidence interval, the decision, and what a fixed design
// would have needed. It judges the row: the row's change, interval and
// verdict are the look's.
type SequentialRow struct {
	Rounds    int                      `json:"rounds"`
	MaxRounds int                      `json:"maxRounds"`
	Decision  stats.SequentialDecision `json:"decision"`
	// DeltaPercent is the rounds' mean log ratio as a change; LowPercent
	// and HighPercent its repeated confidence interval.
	DeltaPercent Num `json:"deltaPercent"`
	LowPercent   Num `json:"lowPercent"`
	HighPercent  Num `json:"highPercent"`
	// Critical is the t value the look had to pass, NominalAlpha the
	// two-sided level it tested at, Alpha the row's share of the
	// false-verdict rate over every look.
	Critical     Num            `json:"critical"`
	NominalAlpha Num            `json:"nominalAlpha"`
	Alpha        Num            `json:"alpha"`
	Spending     stats.Spending `json:"spending"`
	// TargetEffectPercent is the change the comparison must be able to
	// tell.
	TargetEffectPercent Num    `json:"targetEffectPercent"`
	Reason              string `json:"reason"`
	// FixedRounds and FixedMeasurementsPerVariant are what a fixed design
	// (paired, and independent) would have needed to tell the target
	// effect at stats.DetectablePower with the noise the rounds showed: 0
	// when unknown, -1 beyond a thousand.
	FixedRounds                 int `json:"fixedRounds"`
	FixedMeasurementsPerVariant int `json:"fixedMeasurementsPerVariant"`
}

// sequentialLooker judges a report's headline rows by a look of one
// design, each row with an equal share of the design's alpha (Bonferroni:
// a comparison of several steps stops when all are decided, and the
// chance of a false verdict on any of them stays at alpha).
type sequentialLooker struct {
	plan stats.SequentialPlan
}

func newSequentialLooker(d stats.SequentialDesign, headlines int) *sequentialLooker {
	d.Alpha /= float64(headlines)
	if !(d.TargetEffectPercent > 0) {
		d.TargetEffectPercent = d.MinEffectPercent
	}
	return &sequentialLooker{plan: d.Plan()}
}

// judge puts the look at the sample's rounds on its row.
func (l *sequentialLooker) judge(row *Row, s *sample) {
	d := l.plan.SequentialDesign
	base, cand := s.roundMeans()
	ratios := stats.LogRatios(base, cand)
	look := l.plan.Look(ratios)
	if ratios == nil && len(base) > 0 {
		look.Reason = "a round's value is not positive: no ratio to look at"
	}
	sr := &SequentialRow{Rounds: len(base), MaxRounds: d.MaxRounds, Decision: look.Decision, DeltaPercent: Num(look.DeltaPercent),
		LowPercent: Num(look.LowPercent), HighPercent: Num(look.HighPercent), Critical: Num(look.Critical), NominalAlpha: Num(look.NominalAlpha),
		Alpha: Num(d.Alpha), Spending: d.Spending, TargetEffectPercent: Num(d.TargetEffectPercent), Reason: look.Reason}
	if p, ok := stats.DetectablePaired(base, cand, d.Alpha, d.TargetEffectPercent); ok {
		sr.FixedRounds = p.RunsForMinEffect
	}
	if i, ok := stats.DetectableIndependent(s.base, s.cand, d.Alpha, d.TargetEffectPercent); ok {
		sr.FixedMeasurementsPerVariant = i.RunsForMinEffect
	}
	row.Sequential = sr
	row.Verdict = look.Verdict(row.Direction, d.MinEffectPercent)
	row.DeltaPercent, row.CILowPercent, row.CIHighPercent, row.CILevel = sr.DeltaPercent, sr.LowPercent, sr.HighPercent, Num(1-d.Alpha)
	row.Reason = "sequential look: " + look.Reason
}

// decisionRank orders the looks' decisions as a comparison combines
// them: the least decided wins.
var decisionRank = map[stats.SequentialDecision]int{stats.SequentialEquivalent: 1, stats.SequentialChanged: 2, stats.SequentialMaxRounds: 3,
	stats.SequentialContinue: 4}

// CombineDecisions is the decision over several looks: Continue while one
// continues, MaxRounds when the last round left one undecided, else
// Changed when one changed, else Equivalent; "" for none.
func CombineDecisions(ds ...stats.SequentialDecision) stats.SequentialDecision {
	var out stats.SequentialDecision
	for _, d := range ds {
		if decisionRank[d] > decisionRank[out] {
			out = d
		}
	}
	return out
}

// SequentialDecision is the report's decision over its headline rows
// (CombineDecisions); "" when the comparison is not sequential.
func (r *Report) SequentialDecision() stats.SequentialDecision {
	var ds []stats.SequentialDecision
	for _, row := range r.Rows {
		if row.Sequential != nil {
			ds = append(ds, row.Sequential.Decision)
		}
	}
	return CombineDecisions(ds...)
}

// FixedDesign is what a fixed design would have needed to tell the target
// effect, the largest over the headline rows: rounds paired, and
// measurements per variant independent (LargerSize's scale).
func (r *Report) FixedDesign() (rounds, measurements int) {
	for _, row := range r.Rows {
		if sq := row.Sequential; sq != nil {
			rounds, measurements = LargerSize(rounds, sq.FixedRounds), LargerSize(measurements, sq.FixedMeasurementsPerVariant)
		}
	}
	return rounds, measurements
}

// SequentialLine is the summary's line of a sequential comparison: where
// it stopped and why, and what a fixed design would have needed; "" for
// another.
func (rep *Report) SequentialLine() string {
	var first *SequentialRow
	parts := primaryParts(rep, func(row Row, name string) (string, bool) {
		sq := row.Sequential
		if sq == nil {
			return "", false
		}
		if first == nil {
			first = sq
		}
		return fmt.Sprintf("%s %s, %s (interval %s … %s at the look's level %.2g)", name, sq.Decision, pct(sq.DeltaPercent), pct(sq.LowPercent),
			pct(sq.HighPercent), float64(sq.NominalAlpha)), true
	})
	if first == nil {
		return ""
	}
	line := fmt.Sprintf("Sequential (%s spending, false verdicts at %.2g over every look): %s after %d of at most %d rounds: %s",
		first.Spending, float64(first.Alpha), verbOf(rep.SequentialDecision()), first.Rounds, first.MaxRounds, parts)
	if fixedPaired, fixedInd := rep.FixedDesign(); fixedPaired != 0 || fixedInd != 0 {
		line += fmt.Sprintf("; a fixed design would have needed %s paired or %s measurements per variant to tell ±%.1f %% at %.0f %% power with the noise seen",
			sizeText(fixedPaired, "rounds"), sizeText(fixedInd, ""), float64(first.TargetEffectPercent), 100*stats.DetectablePower)
	}
	return line
}

func verbOf(d stats.SequentialDecision) string {
	switch d {
	case stats.SequentialContinue:
		return "continuing"
	case stats.SequentialMaxRounds:
		return "ran to the end"
	}
	return "stopped (" + string(d) + ")"
}

// LargerSize is the larger of two design sizes, -1 (beyond a thousand)
// the largest and 0 (unknown) the smallest.
func LargerSize(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return max(a, b)
}

func sizeText(n int, unit string) string {
	s := fmt.Sprint(n)
	switch {
	case n < 0:
		s = "more than a thousand"
	case n == 0:
		s = "an unknown number of"
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}
