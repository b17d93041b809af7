package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Each template change (a release bump committed to Git) starts exactly one
// run; a 5 % drop against the last five good runs raises Regressed naming the
// run, pure noise does not, and the next good release clears it.
func TestScheduleTemplateChangesAndRegression(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	s := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: benchv1.BenchmarkScheduleSpec{
			RunTemplate: &benchv1.RunTemplate{Labels: map[string]string{benchv1.LabelRelease: "v1"}, Spec: kit.MeasureOnly("x", 4, 1).Spec},
			Regression:  &benchv1.RegressionPolicy{Method: benchv1.RegressionThreshold, ThresholdPercent: 3, BaselineRuns: 5},
		},
	}
	h.Create(s)
	testutil.Eventually(t, 10*time.Second, "schedule observed", func() error {
		cur := &benchv1.BenchmarkSchedule{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		if cur.Status.TemplateHash == "" {
			return fmt.Errorf("not observed yet")
		}
		return nil
	})
	if n := len(h.ScheduleRuns(s)); n != 0 {
		t.Fatalf("%d runs on create without runOnCreate", n)
	}
	release := func(i int, value float64) *benchv1.BenchmarkSchedule {
		t.Helper()
		cur := &benchv1.BenchmarkSchedule{}
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
				return err
			}
			cur.Spec.RunTemplate.Labels[benchv1.LabelRelease] = fmt.Sprintf("v%d", i)
			cur.Spec.RunTemplate.Spec.Workload.Image = fmt.Sprintf("postgres:17.%d", i)
			return k8s.Update(context.Background(), cur)
		}); err != nil {
			t.Fatal(err)
		}
		name := s.Name + "-t" + schedule.TemplateHash(cur)
		var run *benchv1.BenchmarkRun
		testutil.Eventually(t, 20*time.Second, "run "+name, func() error {
			run = &benchv1.BenchmarkRun{}
			return k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: name}, run)
		})
		h.Terminate(h.WaitJob(specs.MeasureJobName(run, 0, 1)), node, 0, kit.TPSResult(value))
		h.WaitPhase(name, 20*time.Second, benchv1.PhaseSucceeded)
		testutil.Eventually(t, 20*time.Second, "history updated", func() error {
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
				return err
			}
			// The history entry and the Regressed condition are written
			// together, so once the entry shows the run ended, the
			// condition has judged it.
			if n := len(cur.Status.History); n == 0 || cur.Status.History[n-1].Run != name || !cur.Status.History[n-1].Phase.Terminal() ||
				meta.FindStatusCondition(cur.Status.Conditions, benchv1.ConditionRegressed) == nil {
				return fmt.Errorf("history %+v", cur.Status.History)
			}
			return nil
		})
		return cur
	}
	noise := []float64{1000, 1008, 995, 1003, 998, 1006}
	for i, v := range noise {
		cur := release(i+2, v)
		if c := meta.FindStatusCondition(cur.Status.Conditions, benchv1.ConditionRegressed); c.Status != metav1.ConditionFalse {
			t.Fatalf("noise (release v%d, %v tx/s) flagged: %s", i+2, v, c.Message)
		}
		// The newest run's verdict: Inconclusive until baselineRuns runs
		// are judged against, then Pass.
		want := benchv1.OverallPass
		if i < 5 {
			want = benchv1.OverallInconclusive
		}
		if cur.Status.LatestVerdict != want || !strings.Contains(cur.Status.LatestHeadline, cur.Status.History[len(cur.Status.History)-1].Run) {
			t.Errorf("run %d: latest %q %q, want %s", i, cur.Status.LatestVerdict, cur.Status.LatestHeadline, want)
		}
	}
	// Exactly one run per template change, however often it reconciled.
	if n := len(h.ScheduleRuns(s)); n != len(noise) {
		t.Errorf("%d runs after %d template changes", n, len(noise))
	}
	cur := release(8, 955) // a 5 % drop
	c := meta.FindStatusCondition(cur.Status.Conditions, benchv1.ConditionRegressed)
	if c.Status != metav1.ConditionTrue || c.Reason != benchv1.ReasonRegression || !strings.Contains(c.Message, "release v8") || !strings.Contains(c.Message, "-4.") {
		t.Errorf("5 %% drop: %+v", c)
	}
	if cur.Status.LatestVerdict != benchv1.OverallRegression || cur.Status.LatestHeadline != "REGRESSION — "+c.Message {
		t.Errorf("5 %% drop: latest %q %q", cur.Status.LatestVerdict, cur.Status.LatestHeadline)
	}
	if v := kit.Series(t, "dbperf_schedule_regressed", map[string]string{"namespace": h.NS, "schedule": "nightly"}); len(v) != 1 || v[0].GetGauge().GetValue() != 1 {
		t.Errorf("dbperf_schedule_regressed: %v", v)
	}
	cur = release(9, 1002) // fixed
	if c := meta.FindStatusCondition(cur.Status.Conditions, benchv1.ConditionRegressed); c.Status != metav1.ConditionFalse {
		t.Errorf("after the fix: %+v", c)
	}
	if len(cur.Status.History) != 8 || cur.Status.History[0].Release != "v2" || cur.Status.History[7].Value == nil || *cur.Status.History[7].Value != 1002 {
		t.Errorf("history %+v", cur.Status.History)
	}
}

// A schedule of comparisons: each template change starts exactly one
// BenchmarkComparison; its verdict Worse on the watched metric sets Regressed.
func TestScheduleOfComparisons(t *testing.T) {
	h := newHarness(t)
	answer := func(variant string, i int) string {
		v := 1000.0 + float64(i%3)
		if variant == "v4a" {
			v = 900 + float64(i%3) // the candidate release is 10 % slower
		}
		return kit.TPSResult(v)
	}
	s := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "rc"},
		Spec: benchv1.BenchmarkScheduleSpec{
			ComparisonTemplate: &benchv1.ComparisonTemplate{Labels: map[string]string{benchv1.LabelRelease: "v1"}, Spec: kit.Comparison("x", benchv1.OrderInterleaved, 5).Spec},
			Regression:         &benchv1.RegressionPolicy{},
		},
	}
	h.Create(s)
	cur := &benchv1.BenchmarkSchedule{}
	// The template the controller first sees is the starting point.
	testutil.Eventually(t, 10*time.Second, "schedule observed", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		if cur.Status.TemplateHash == "" {
			return fmt.Errorf("not observed yet")
		}
		return nil
	})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		cur.Spec.ComparisonTemplate.Labels[benchv1.LabelRelease] = "v2"
		return k8s.Update(context.Background(), cur)
	}); err != nil {
		t.Fatal(err)
	}
	h.PlayRuns("rc", 10, 1, answer)
	testutil.Eventually(t, 30*time.Second, "Regressed from the comparison", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cur.Status.Conditions, benchv1.ConditionRegressed)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "Worse") || !strings.Contains(c.Message, "release v2") {
			return fmt.Errorf("condition %+v, history %+v", c, cur.Status.History)
		}
		return nil
	})
	var cmps benchv1.BenchmarkComparisonList
	if err := k8s.List(context.Background(), &cmps, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelSchedule: string(cur.UID)}); err != nil || len(cmps.Items) != 1 {
		t.Errorf("%d comparisons (err %v), want exactly one for one template change", len(cmps.Items), err)
	}
	if h := cur.Status.History; len(h) != 1 || h[0].Verdict != benchv1.VerdictWorse || h[0].Value == nil || *h[0].Value > -9 {
		t.Errorf("history %+v", h)
	}
	// The schedule's verdict is the comparison's, said first; its alert
	// (the Regression event) begins with the comparison's headline.
	if len(cmps.Items) == 1 {
		c := cmps.Items[0]
		if cur.Status.LatestVerdict != benchv1.OverallRegression || c.Status.Headline == "" || cur.Status.LatestHeadline != c.Status.Headline {
			t.Errorf("latest verdict %q headline %q; the comparison's %q %q", cur.Status.LatestVerdict, cur.Status.LatestHeadline, c.Status.Verdict, c.Status.Headline)
		}
		testutil.Eventually(t, 10*time.Second, "the regression's event", func() error {
			var list corev1.EventList
			if err := k8s.List(context.Background(), &list, client.InNamespace(h.NS)); err != nil {
				return err
			}
			for _, e := range list.Items {
				if e.InvolvedObject.Kind == "BenchmarkSchedule" && e.Reason == benchv1.ReasonRegression {
					if !strings.HasPrefix(e.Message, c.Status.Headline[:min(60, len(c.Status.Headline))]) {
						return fmt.Errorf("the event %q does not begin with the headline %q", e.Message, c.Status.Headline)
					}
					return nil
				}
			}
			return fmt.Errorf("no Regression event of the schedule")
		})
	}
}
