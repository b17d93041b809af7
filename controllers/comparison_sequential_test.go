package controllers

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// roundNoise is each answer's relative noise (±0.5 %), by the order the
// measurements are answered in.
var roundNoise = []float64{0, 0.004, -0.003, 0.002, -0.005, 0.001, 0.003, -0.002, 0.005, -0.001}

// sequentialComparison is a comparison of v3 against v4a that stops
// early, maxRounds rounds at most.
func sequentialComparison(name string, maxRounds int32, target benchv1.Percent) *benchv1.BenchmarkComparison {
	cmp := kit.Comparison(name, benchv1.OrderInterleaved, maxRounds)
	cmp.Spec.Criteria.MinEffectPercent = ptr.To[benchv1.Percent](1)
	cmp.Spec.Sequential = &benchv1.SequentialStopping{TargetEffectPercent: &target}
	return cmp
}

// runsOfComparison lists a comparison's runs.
func runsOfComparison(t *testing.T, h *harness, cmp *benchv1.BenchmarkComparison) []benchv1.BenchmarkRun {
	t.Helper()
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil {
		t.Fatal(err)
	}
	return runs.Items
}

// A sequential comparison of a 30 % drop (±0.5 % noise) stops at its
// first look, after 3 rounds of at most 8 (6 runs instead of 16), with
// the manager killed and restarted twice while the rounds run: every run
// is created once, in ABBA order, no run of round 4 ever exists, and the
// status says after how many rounds it stopped, why, and what a fixed
// design would have needed; the headline is judged by the look.
func TestSequentialComparisonStopsOnAClearChange(t *testing.T) {
	h := newHarness(t)
	h.Create(sequentialComparison("seq-drop", 8, 3))
	answered := 0
	order := h.PlayRuns("seq-drop", 6, 1, func(v string, _ int) string {
		answered++
		if answered == 2 || answered == 5 {
			h.RestartManager(cfg)
		}
		tps := 25000 * (1 + roundNoise[answered%len(roundNoise)])
		if v == "v4a" {
			tps *= 0.7
		}
		return kit.TPSResult(tps)
	})
	if got := strings.Join(order, " "); got != "v3 v4a v4a v3 v3 v4a" {
		t.Errorf("runs measured in the order %s, want v3 v4a v4a v3 v3 v4a", got)
	}
	cmp := h.WaitComparison("seq-drop", benchv1.ComparisonSucceeded)
	checkStoppedEarly(t, h, cmp)
}

// checkStoppedEarly checks a comparison of a 30 % drop that stopped after
// 3 rounds of 8.
func checkStoppedEarly(t *testing.T, h *harness, cmp *benchv1.BenchmarkComparison) {
	t.Helper()
	if n := len(runsOfComparison(t, h, cmp)); n != 6 || len(cmp.Status.Runs) != 6 || cmp.Status.Progress != "6/6" {
		t.Errorf("%d runs exist, status lists %d (progress %s): want 6, each created once", n, len(cmp.Status.Runs), cmp.Status.Progress)
	}
	sq := cmp.Status.Sequential
	if sq == nil || sq.Rounds != 3 || sq.MaxRounds != 8 || sq.Decision != benchv1.SequentialChanged || sq.FixedDesignRounds == nil ||
		sq.FixedDesignMeasurementsPerVariant == nil || !strings.Contains(sq.Reason, "stopped (Changed) after 3 of at most 8 rounds") {
		t.Fatalf("sequential status %+v", sq)
	}
	r := cmp.Status.Results[0]
	if cmp.Status.Verdict != benchv1.OverallRegression || r.Verdict != benchv1.VerdictWorse || !strings.HasPrefix(r.Reason, "sequential look: after 3 rounds") ||
		r.DeltaPercent == nil || *r.DeltaPercent > -29 || *r.DeltaPercent < -31 {
		t.Errorf("verdict %s, headline row %+v", cmp.Status.Verdict, r)
	}
	t.Logf("stopped: %s; fixed design %d rounds, %d measurements per variant; headline %s", sq.Reason, *sq.FixedDesignRounds,
		*sq.FixedDesignMeasurementsPerVariant, cmp.Status.Headline)
}

// With no change, and a target effect the noise cannot rule out in fewer
// rounds (0.2 % at ±0.5 %), the looks after rounds 3 and 4 continue and
// the comparison runs to its most rounds, 5, saying so; its verdict is
// never a false change (NoChange when the last look's interval lies
// within the minimum effect, 1 %).
func TestSequentialComparisonRunsToTheEndWithoutAnAnswer(t *testing.T) {
	h := newHarness(t)
	h.Create(sequentialComparison("seq-same", 5, 0.2))
	answered := 0
	h.PlayRuns("seq-same", 10, 1, func(string, int) string {
		answered++
		return kit.TPSResult(25000 * (1 + roundNoise[answered%len(roundNoise)]))
	})
	cmp := h.WaitComparison("seq-same", benchv1.ComparisonSucceeded)
	sq := cmp.Status.Sequential
	if sq == nil || sq.Rounds != 5 || sq.Decision != benchv1.SequentialMaxRounds || !strings.Contains(sq.Reason, "ran to the end after 5 of at most 5 rounds") {
		t.Fatalf("sequential status %+v", sq)
	}
	if n := len(runsOfComparison(t, h, cmp)); n != 10 {
		t.Errorf("%d runs, want 10", n)
	}
	if r := cmp.Status.Results[0]; r.Verdict == benchv1.VerdictWorse || r.Verdict == benchv1.VerdictBetter || !strings.HasPrefix(r.Reason, "sequential look: after 5 rounds") {
		t.Errorf("verdict %s, headline row %+v", cmp.Status.Verdict, r)
	}
	t.Logf("ran to the end: %s; verdict %s", sq.Reason, cmp.Status.Verdict)
}

// The look, the way it breaks: a stopped comparison whose recorded stop
// was lost (its status back to Running with no look, as when the write
// that recorded it was refused) is looked at again with the manager gone:
// the first reconcile meets a write conflict and records nothing; a new
// reconciler decides the same stop from the same runs and creates no run
// of round 4; reconciled again, nothing is written; the manager restarted
// writes nothing either.
func TestSequentialLookIsIdempotent(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.Create(sequentialComparison("seq-idem", 8, 3))
	answered := 0
	h.PlayRuns("seq-idem", 6, 1, func(v string, _ int) string {
		answered++
		tps := 25000 * (1 + roundNoise[answered%len(roundNoise)])
		if v == "v4a" {
			tps *= 0.7
		}
		return kit.TPSResult(tps)
	})
	stopped := h.WaitComparison("seq-idem", benchv1.ComparisonSucceeded)
	h.StopManager()
	lost := stopped.DeepCopy()
	lost.Status.Phase, lost.Status.Sequential, lost.Status.Verdict = benchv1.ComparisonRunning, nil, ""
	if err := k8s.Status().Update(ctx, lost); err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(stopped)}
	get := func() *benchv1.BenchmarkComparison { return storedComparison(t, req.NamespacedName) }
	var refused atomic.Bool
	rec := record.NewFakeRecorder(100)
	if _, err := (&comparison.Reconciler{Client: firstComparisonPatchConflicts(&refused), Recorder: rec}).Reconcile(ctx, req); err != nil || !refused.Load() {
		t.Fatalf("first reconcile: %v (conflict met: %v)", err, refused.Load())
	}
	if c := get(); c.Status.Sequential != nil || c.Status.Phase != benchv1.ComparisonRunning || len(rec.Events) != 0 {
		t.Fatalf("a refused write changed the status: %+v, phase %s, %d events", c.Status.Sequential, c.Status.Phase, len(rec.Events))
	}
	r := &comparison.Reconciler{Client: k8s, Recorder: rec}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	after := get()
	if after.Status.Phase != benchv1.ComparisonSucceeded {
		t.Fatalf("looked at again: phase %s, sequential %+v", after.Status.Phase, after.Status.Sequential)
	}
	checkStoppedEarly(t, h, after)
	if after.Status.Sequential.Reason != stopped.Status.Sequential.Reason {
		t.Errorf("the look changed: %q → %q", stopped.Status.Sequential.Reason, after.Status.Sequential.Reason)
	}
	rv := after.ResourceVersion
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if c := get(); c.ResourceVersion != rv {
		t.Errorf("reconciled again, it wrote: %s → %s", rv, c.ResourceVersion)
	}
	since := kit.ReconcileCount(t, "benchmarkcomparison")
	h.StartManager(cfg)
	kit.WaitReconciled(t, "benchmarkcomparison", since)
	if c := get(); c.ResourceVersion != rv || len(runsOfComparison(t, h, c)) != 6 {
		t.Errorf("the restarted manager wrote again (%s → %s) or ran more rounds (%d runs)", rv, c.ResourceVersion, len(runsOfComparison(t, h, c)))
	}
}
