package schedule

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// A schedule's history leaves rejected measurements out: the watched value
// is the median over the rest, and a run rejected whole has none.
func TestWatchedLeavesRejectedMeasurementsOut(t *testing.T) {
	s := &benchv1.BenchmarkSchedule{}
	run := &benchv1.BenchmarkRun{}
	run.Status.Primary = &benchv1.PrimaryMetric{Name: "tps", Step: "c=8"}
	var reps []benchv1.RepetitionStatus
	for i, v := range []float64{100, 102, 50} {
		reps = append(reps, benchv1.RepetitionStatus{Index: int32(i + 1), Verdict: benchv1.VerdictSucceeded,
			Metrics: []benchv1.MetricValue{{Name: "tps", Value: v, Unit: "tx/s"}}})
	}
	run.Status.Steps = []benchv1.StepStatus{{Name: "c=8", Repetitions: reps,
		Summary: []benchv1.MetricSummary{{Name: "tps", Unit: "tx/s", N: 3, Median: 100}}}}
	if v, _, _, ok := watched(s, run); !ok || v != 100 {
		t.Fatalf("before: %v %v", v, ok)
	}
	run.Annotations = map[string]string{benchv1.AnnotationRejections: `[{"step":"c=8","repetition":3,"reason":"stalled","by":"bob","at":"2026-11-25T12:00:00Z"}]`}
	if v, _, _, ok := watched(s, run); !ok || v != 101 {
		t.Errorf("with repetition 3 rejected: %v %v, want the median of 100 and 102", v, ok)
	}
	if note := rejectedNote(run); !strings.Contains(note, "step c=8 repetition 3 rejected by bob") {
		t.Errorf("note %q", note)
	}
	run.Annotations[benchv1.AnnotationRejections] = `[{"reason":"wrong image","at":"2026-11-25T12:00:00Z"}]`
	if _, _, _, ok := watched(s, run); ok {
		t.Error("a run rejected whole still has a value")
	}
}

// A regression older than the history (historyLimit 5) is never forgotten:
// the state of the dropped entries is carried in status, and the condition
// still names the run that started it, which the history no longer holds.
func TestScheduleCarriesARegressionPastTheHistoryLimit(t *testing.T) {
	r := &Reconciler{Recorder: record.NewFakeRecorder(100)}
	s := &benchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "short", Namespace: "ns"},
		Spec: benchv1.BenchmarkScheduleSpec{HistoryLimit: 5,
			Regression: &benchv1.RegressionPolicy{Method: benchv1.RegressionThreshold, ThresholdPercent: 10, BaselineRuns: 3}}}
	all := kit.History("short", 80e3, 80e3, 80e3, 80e3, 47e3, 47e3, 47e3, 47e3, 47e3, 47e3, 47e3, 47e3, 47e3, 47e3)
	for i, e := range all {
		s.Status.History = append(s.Status.History, e)
		r.judge(s)
		c := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed)
		if i >= 4 && (c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "from run short-04") ||
			!strings.Contains(c.Message, fmt.Sprintf("%d run", i-3))) {
			t.Fatalf("after run %d: %+v (history %d entries)", i+1, c, len(s.Status.History))
		}
		if len(s.Status.History) > 5 {
			t.Fatalf("history of %d entries beyond its limit", len(s.Status.History))
		}
	}
	if c := s.Status.Regression.Carried; c == nil || c.Open == nil || c.Open.FirstRun != "short-04" {
		t.Errorf("carried %+v", c)
	}
	// Back at 80k: recovered against the level the history no longer holds.
	s.Status.History = append(s.Status.History, kit.History("short", slices.Repeat([]float64{80e3}, 15)...)[14])
	r.judge(s)
	if c := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed); c.Reason != benchv1.ReasonRecovered {
		t.Errorf("back at 80k: %+v", c)
	}
}

// Change points: a history with a 5 % drop in the middle is flagged at the
// run that introduced it; pure noise is not.
func TestScheduleChangePointRegression(t *testing.T) {
	r := &Reconciler{Recorder: record.NewFakeRecorder(10)}
	mk := func(values []float64) *benchv1.BenchmarkSchedule {
		s := &benchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "cp", Namespace: "ns"},
			Spec: benchv1.BenchmarkScheduleSpec{Regression: &benchv1.RegressionPolicy{Method: benchv1.RegressionChangePoint, MinEffectPercent: 2}}}
		for i, v := range values {
			s.Status.History = append(s.Status.History, benchv1.HistoryEntry{Run: fmt.Sprintf("run-%d", i), Phase: benchv1.PhaseSucceeded,
				Release: fmt.Sprintf("v%d", i), Value: ptr.To(v), Unit: "tx/s", Direction: benchv1.HigherIsBetter})
		}
		return s
	}
	noise := []float64{1000, 1008, 995, 1003, 998, 1006, 992, 1004, 999, 1001, 997, 1005, 1002, 996, 1003, 1000}
	s := mk(noise)
	r.judge(s)
	if c := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("noise: %+v", c)
	}
	drop := append(append([]float64{}, noise[:10]...), 950, 955, 948, 952, 957, 951)
	s = mk(drop)
	r.judge(s)
	c := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "run-10") {
		t.Errorf("drop at run-10: %+v", c)
	}
	if !s.Status.History[10].ChangePoint {
		t.Error("run-10 not marked as a change point in the history")
	}
}

// A schedule of capacity runs tracks what each search found: the maximum
// by default, the throughput there when the policy names it; a search that
// found none has no value.
func TestWatchedTracksCapacity(t *testing.T) {
	s := &benchv1.BenchmarkSchedule{}
	m := int32(1600)
	run := &benchv1.BenchmarkRun{}
	run.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "rate"}
	run.Status.Capacity = &benchv1.CapacityStatus{Parameter: "rate", Maximum: &m, StopReason: benchv1.CapacityConverged,
		Throughput: &benchv1.MetricValue{Name: "transactionsPerSecond", Value: 1558, Unit: "tx/s", Direction: benchv1.HigherIsBetter}}
	if v, unit, dir, ok := watched(s, run); !ok || v != 1600 || unit != "/s" || dir != benchv1.HigherIsBetter {
		t.Errorf("maximum: %v %s %s %v", v, unit, dir, ok)
	}
	s.Spec.Regression = &benchv1.RegressionPolicy{Metric: "throughputAtMaximum"}
	if v, unit, _, ok := watched(s, run); !ok || v != 1558 || unit != "tx/s" {
		t.Errorf("throughput at the maximum: %v %s %v", v, unit, ok)
	}
	run.Status.Capacity.Maximum = nil
	if _, _, _, ok := watched(s, run); ok {
		t.Error("a search that found nothing has a value")
	}
}
