package capacity

import (
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// run drives Decide against an oracle until it stops, as the controller
// does, and returns the levels measured and the decision.
func run(t *testing.T, p Plan, passes func(int32) bool) ([]Level, Decision) {
	t.Helper()
	var levels []Level
	for range 200 {
		d := Decide(p, levels, false)
		if d.Done {
			return levels, d
		}
		for _, l := range levels {
			if l.Value == d.Next {
				t.Fatalf("level %d measured twice: %+v", d.Next, levels)
			}
		}
		levels = append(levels, Level{Value: d.Next, Passed: passes(d.Next)})
	}
	t.Fatalf("no end after 200 levels: %+v", levels)
	return nil, Decision{}
}

func TestSearchFindsAKneeWithinItsWidth(t *testing.T) {
	for _, knee := range []int32{1, 2, 3, 7, 150, 1000, 1737, 65_000, 2_000_000_000} {
		p := Plan{Start: 100, Factor: 2, WidthPercent: 1, MaxLevels: 100}
		levels, d := run(t, p, func(v int32) bool { return v <= knee })
		if d.Maximum == nil && knee >= 1 {
			if knee >= 1 && d.Reason != benchv1.CapacityLowestFails {
				t.Fatalf("knee %d: no maximum, %s: %s", knee, d.Reason, d.Message)
			}
		}
		if d.Maximum != nil && *d.Maximum > knee {
			t.Fatalf("knee %d: maximum %d above it", knee, *d.Maximum)
		}
		if d.Maximum != nil && d.Reason == benchv1.CapacityConverged && float64(knee-*d.Maximum) > 0.01*float64(knee)+1 {
			t.Fatalf("knee %d: maximum %d not within 1 %%: %+v", knee, *d.Maximum, levels)
		}
		if d.NonMonotonic {
			t.Fatalf("knee %d: flagged non-monotonic", knee)
		}
		t.Logf("knee %d: maximum %v after %d levels (%s: %s)", knee, deref(d.Maximum), len(levels), d.Reason, d.Message)
	}
}

func TestSearchStepsUpGeometricallyThenBisects(t *testing.T) {
	p := Plan{Start: 100, Factor: 2, WidthPercent: 5, MaxLevels: 20}
	levels, d := run(t, p, func(v int32) bool { return v <= 1000 })
	want := []int32{100, 200, 400, 800, 1600, 1200, 1000, 1100, 1050}
	if len(levels) != len(want) {
		t.Fatalf("levels %+v, want %v", levels, want)
	}
	for i, w := range want {
		if levels[i].Value != w {
			t.Fatalf("level %d is %d, want %d: %+v", i, levels[i].Value, w, levels)
		}
	}
	if d.Reason != benchv1.CapacityConverged || *d.Maximum != 1000 || *d.SmallestFailing != 1050 {
		t.Fatalf("%+v", d)
	}
}

// MLRsearch's rule: the maximum is the largest passing level below the
// smallest failing one, whatever passes above it.
func TestSearchNonMonotonicReportsTheLowerMaximum(t *testing.T) {
	p := Plan{Start: 100, Factor: 2, WidthPercent: 5, MaxLevels: 20}
	// 400 fails (a hiccup), everything else up to 1000 passes.
	levels, d := run(t, p, func(v int32) bool { return v <= 1000 && v != 400 })
	if *d.Maximum >= 400 || *d.SmallestFailing != 400 {
		t.Fatalf("maximum %d, smallest failing %d: %+v", *d.Maximum, *d.SmallestFailing, levels)
	}
	if d.NonMonotonic {
		t.Fatalf("nothing passed above 400 yet it is flagged: %+v", levels)
	}
	// A level that passes above a failing one, measured before it failed.
	d = Decide(p, []Level{{100, true}, {200, true}, {400, true}, {800, false}, {600, false}, {700, true}}, false)
	if !d.NonMonotonic || *d.Maximum != 400 || *d.SmallestFailing != 600 || d.Next != 500 {
		t.Fatalf("%+v", d)
	}
	d = Decide(p, []Level{{100, true}, {200, false}, {300, true}}, false)
	if !d.NonMonotonic || *d.Maximum != 100 || *d.SmallestFailing != 200 {
		t.Fatalf("a pass above the smallest failing level raised the maximum: %+v", d)
	}
	if d.Done || d.Next != 150 {
		t.Fatalf("bisects between 100 and 200: %+v", d)
	}
}

func TestSearchStepsDownWhenTheStartFails(t *testing.T) {
	p := Plan{Start: 1000, Factor: 2, WidthPercent: 5, MaxLevels: 30}
	levels, d := run(t, p, func(v int32) bool { return v <= 90 })
	if levels[1].Value != 500 || levels[2].Value != 250 || *d.Maximum != 90 && float64(90-*d.Maximum) > 4.5 {
		t.Fatalf("%+v %+v", levels, d)
	}
	_, d = run(t, p, func(int32) bool { return false })
	if d.Reason != benchv1.CapacityLowestFails || d.Maximum != nil {
		t.Fatalf("%+v", d)
	}
}

func TestSearchBudgetsAndBounds(t *testing.T) {
	p := Plan{Start: 10, Factor: 2, WidthPercent: 1, MaxLevels: 4}
	levels, d := run(t, p, func(v int32) bool { return v <= 1000 })
	if len(levels) != 4 || d.Reason != benchv1.CapacityLevelBudget || *d.Maximum != 80 {
		t.Fatalf("%+v %+v", levels, d)
	}
	p = Plan{Start: 10, Factor: 3, WidthPercent: 1, MaxLevels: 20, Max: 100}
	levels, d = run(t, p, func(int32) bool { return true })
	if levels[len(levels)-1].Value != 100 || d.Reason != benchv1.CapacityUpperBound || *d.Maximum != 100 {
		t.Fatalf("%+v %+v", levels, d)
	}
	d = Decide(p, []Level{{10, true}}, true)
	if !d.Done || d.Reason != benchv1.CapacityTimeBudget || *d.Maximum != 10 {
		t.Fatalf("%+v", d)
	}
}

func TestLadderStopsAtItsFirstFailure(t *testing.T) {
	p := Plan{Ladder: []int32{5000, 10000, 20000, 25000}, MaxLevels: 20}
	levels, d := run(t, p, func(v int32) bool { return v <= 10000 })
	if len(levels) != 3 || d.Reason != benchv1.CapacityFirstFailure || *d.Maximum != 10000 || *d.SmallestFailing != 20000 {
		t.Fatalf("%+v %+v", levels, d)
	}
	levels, d = run(t, p, func(int32) bool { return true })
	if len(levels) != 4 || d.Reason != benchv1.CapacityLadderDone || *d.Maximum != 25000 {
		t.Fatalf("%+v %+v", levels, d)
	}
	_, d = run(t, p, func(int32) bool { return false })
	if d.Reason != benchv1.CapacityLowestFails || d.Maximum != nil {
		t.Fatalf("%+v", d)
	}
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// A failed confirmation at the maximum itself (fraction 100 %) is a failing
// level at a value that also passed: the maximum falls below it, and that
// is not flagged non-monotonic (nothing passed above it).
func TestAFailureAtAPassingLevelLowersTheMaximum(t *testing.T) {
	p := Plan{Start: 100, Factor: 2, WidthPercent: 5, MaxLevels: 20}
	d := Decide(p, []Level{{100, true}, {200, true}, {400, false}, {300, true}, {350, false}, {325, true}, {337, true}, {337, false}}, false)
	if d.NonMonotonic || *d.Maximum != 325 || *d.SmallestFailing != 337 || !d.Done || d.Reason != benchv1.CapacityConverged {
		t.Fatalf("%+v", d)
	}
}
