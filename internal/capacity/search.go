// Package capacity decides a capacity search: which load level to measure
// next, when to stop and what the maximum is (Decide), and whether a level
// passed its rules (Judge). Both are pure: the controller calls them on
// what its status and results ConfigMap hold, so a restarted manager, or a
// reconcile whose status write was lost, decides exactly the same.
//
// The search follows the published methods: a geometric step-up from a
// start level until a level fails, then a bisection between the largest
// passing and the smallest failing level until they are within a relative
// width (Envoy Nighthawk's adaptive load controller, RFC 9971 MLRsearch);
// the maximum is the largest passing level below the smallest failing
// one, so a level that passes above a failing one never raises it
// (MLRsearch's rule for non-monotonic results), and such a result is
// flagged. A ladder (stepped users) measures given levels in order and
// stops at the first that fails.
package capacity

import (
	"fmt"
	"math"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// Plan is a search's or ladder's settings.
type Plan struct {
	// Ladder is an explicit ladder; empty for a search.
	Ladder []int32
	// Start, Factor (> 1), WidthPercent and Max (0: none) set a search.
	Start        int32
	Factor       float64
	WidthPercent float64
	Max          int32
	// MaxLevels bounds the levels measured.
	MaxLevels int
}

// PlanOf reads a run's capacity spec, with the schema's defaults.
func PlanOf(c *benchv1.CapacitySpec) Plan {
	p := Plan{Ladder: c.Levels, MaxLevels: int(c.MaxLevels)}
	if p.MaxLevels < 1 {
		p.MaxLevels = 20
	}
	if s := c.Search; s != nil {
		p.Start, p.Factor, p.WidthPercent = s.Start, float64(s.FactorPercent)/100, float64(s.WidthPercent)
		if s.FactorPercent == 0 {
			p.Factor = 2
		}
		if s.WidthPercent == 0 {
			p.WidthPercent = 5
		}
		if s.Max != nil {
			p.Max = *s.Max
		}
	}
	return p
}

// Level is a measured level and whether it passed.
type Level struct {
	Value  int32
	Passed bool
}

// Decision is what to do after the judged levels.
type Decision struct {
	// Next is the level to measure next; zero when Done.
	Next int32
	Done bool
	// Reason says why the search ended.
	Reason benchv1.CapacityStopReason
	// Maximum is the largest passing level below the smallest failing
	// one; nil when none passed.
	Maximum *int32
	// SmallestFailing is the smallest failing level; nil when none failed.
	SmallestFailing *int32
	// NonMonotonic: a level passed above the smallest failing one.
	NonMonotonic bool
	// Message says why it stopped, in words.
	Message string
}

// Decide returns the next level, or why the search ended, from the levels
// judged so far (in the order they were measured). timeUp says the time
// budget has passed.
func Decide(p Plan, levels []Level, timeUp bool) Decision {
	var d Decision
	for _, l := range levels {
		if !l.Passed && (d.SmallestFailing == nil || l.Value < *d.SmallestFailing) {
			v := l.Value
			d.SmallestFailing = &v
		}
	}
	for _, l := range levels {
		switch {
		case !l.Passed:
		case d.SmallestFailing != nil && l.Value >= *d.SmallestFailing:
			// A pass at the failing level itself (a failed confirmation of
			// it) is not above it.
			d.NonMonotonic = d.NonMonotonic || l.Value > *d.SmallestFailing
		case d.Maximum == nil || l.Value > *d.Maximum:
			v := l.Value
			d.Maximum = &v
		}
	}
	if len(p.Ladder) > 0 {
		return d.ladder(p, levels, timeUp)
	}
	return d.search(p, levels, timeUp)
}

func (d Decision) ladder(p Plan, levels []Level, timeUp bool) Decision {
	switch {
	case d.SmallestFailing != nil && d.Maximum == nil:
		return d.stop(benchv1.CapacityLowestFails, "the first level of the ladder, %d, failed", *d.SmallestFailing)
	case d.SmallestFailing != nil:
		return d.stop(benchv1.CapacityFirstFailure, "level %d failed: the ladder stops at its first failing level; %d is the largest that passed", *d.SmallestFailing, *d.Maximum)
	case len(levels) == len(p.Ladder):
		return d.stop(benchv1.CapacityLadderDone, "every level of the ladder passed, up to %d", *d.Maximum)
	}
	if done, ok := d.budgets(p, levels, timeUp); ok {
		return done
	}
	d.Next = p.Ladder[len(levels)]
	return d
}

func (d Decision) search(p Plan, levels []Level, timeUp bool) Decision {
	switch {
	case len(levels) == 0:
		d.Next = p.Start
		return d
	case d.SmallestFailing == nil:
		if p.Max > 0 && *d.Maximum >= p.Max {
			return d.stop(benchv1.CapacityUpperBound, "level %d, the search's max, passed", *d.Maximum)
		}
		next := max(int64(math.Ceil(float64(*d.Maximum)*p.Factor)), int64(*d.Maximum)+1)
		if p.Max > 0 {
			next = min(next, int64(p.Max))
		}
		d.Next = int32(min(next, math.MaxInt32))
	case d.Maximum == nil:
		if *d.SmallestFailing <= 1 {
			return d.stop(benchv1.CapacityLowestFails, "level 1 failed: no level passes")
		}
		d.Next = max(1, min(int32(float64(*d.SmallestFailing)/p.Factor), *d.SmallestFailing-1))
	default:
		lo, hi := *d.Maximum, *d.SmallestFailing
		width := float64(hi-lo) / float64(hi) * 100
		if hi-lo <= 1 {
			return d.stop(benchv1.CapacityConverged, "%d passed and %d failed: no level lies between them", lo, hi)
		}
		if width <= p.WidthPercent {
			return d.stop(benchv1.CapacityConverged, "%d passed and %d failed: %.3g %% apart, within the width of %.3g %%", lo, hi, width, p.WidthPercent)
		}
		d.Next = lo + (hi-lo)/2
	}
	if done, ok := d.budgets(p, levels, timeUp); ok {
		return done
	}
	return d
}

// budgets ends a search that has not finished when its levels or time ran out.
func (d Decision) budgets(p Plan, levels []Level, timeUp bool) (Decision, bool) {
	found := "no level passed"
	if d.Maximum != nil {
		found = fmt.Sprintf("%d is the largest level that passed", *d.Maximum)
	}
	switch {
	case len(levels) >= p.MaxLevels:
		return d.stop(benchv1.CapacityLevelBudget, "%d levels were measured (maxLevels) before the search converged: %s", len(levels), found), true
	case timeUp:
		return d.stop(benchv1.CapacityTimeBudget, "the time budget passed before the search converged: %s", found), true
	}
	return d, false
}

func (d Decision) stop(reason benchv1.CapacityStopReason, format string, args ...any) Decision {
	d.Next, d.Done, d.Reason = 0, true, reason
	d.Message = fmt.Sprintf(format, args...)
	if d.NonMonotonic {
		d.Message += fmt.Sprintf("; non-monotonic: a level above %d passed, which does not raise the maximum", *d.SmallestFailing)
	}
	return d
}
