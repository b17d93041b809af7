package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// waitTemplateHash waits until the schedule has acted on its template as it
// is now: the trigger for it has returned.
func waitTemplateHash(h *harness, s *benchv1.BenchmarkSchedule) {
	h.T.Helper()
	testutil.Eventually(h.T, 20*time.Second, "template observed", func() error {
		cur := &benchv1.BenchmarkSchedule{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		if want := schedule.TemplateHash(cur); cur.Status.TemplateHash != want {
			return fmt.Errorf("template hash %q, want %q", cur.Status.TemplateHash, want)
		}
		return nil
	})
}

// A schedule whose name leaves no room for the trigger still starts one run
// per trigger: a cut that dropped the trigger gave every run one name, and the
// second run's AlreadyExists passed for success.
func TestScheduleOfALongNameStartsEveryRun(t *testing.T) {
	h := newHarness(t)
	s := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", 253)},
		Spec: benchv1.BenchmarkScheduleSpec{
			RunTemplate: &benchv1.RunTemplate{Spec: kit.MeasureOnly("x", 4, 1).Spec},
			RunOnCreate: true, ConcurrencyPolicy: benchv1.ConcurrencyAllow,
		},
	}
	h.Create(s)
	waitTemplateHash(h, s)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &benchv1.BenchmarkSchedule{}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(s), cur); err != nil {
			return err
		}
		cur.Spec.RunTemplate.Spec.Workload.Image = "postgres:18"
		return k8s.Update(context.Background(), cur)
	}); err != nil {
		t.Fatal(err)
	}
	waitTemplateHash(h, s)
	runs := h.ScheduleRuns(s)
	if len(runs) != 2 {
		t.Fatalf("%d runs after creation and one template change, want 2", len(runs))
	}
	if runs[0].Name == runs[1].Name || len(runs[0].Name) > 253 {
		t.Errorf("run names %q and %q", runs[0].Name, runs[1].Name)
	}
}

// Comparisons whose names agree in the part a cut keeps get runs and reports
// of their own: the report ConfigMap is applied with ForceOwnership, so a
// shared name let one comparison overwrite the other's report, and a shared
// run name left a comparison waiting for a run it never got.
func TestComparisonsOfLongNamesKeepTheirChildren(t *testing.T) {
	h := newHarness(t)
	names := []string{
		strings.Repeat("r", 56) + "-a", strings.Repeat("r", 56) + "-b", // agree in the 56 characters of the old report name
		strings.Repeat("c", 252) + "a", strings.Repeat("c", 252) + "b", // agree in the 200 characters of the old run name
	}
	for _, name := range names {
		h.Create(kit.Comparison(name, benchv1.OrderInterleaved, 1))
	}
	h.PlayRuns("the comparisons", 2*len(names), len(names), kit.Measured)
	reports := map[string]string{}
	for _, name := range names {
		cmp := h.WaitComparison(name, benchv1.ComparisonSucceeded)
		if other, ok := reports[cmp.Status.ReportConfigMap]; ok {
			t.Errorf("%s and %s share the report ConfigMap %s", other, name, cmp.Status.ReportConfigMap)
		}
		reports[cmp.Status.ReportConfigMap] = name
		var cm corev1.ConfigMap
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}, &cm); err != nil {
			t.Fatal(err)
		}
		if !metav1.IsControlledBy(&cm, cmp) {
			t.Errorf("report %s of %s is not controlled by it", cm.Name, name)
		}
		var reps []compare.Report
		if err := json.Unmarshal([]byte(cm.Data["report.json"]), &reps); err != nil || len(reps) != 1 {
			t.Fatalf("report of %s: %v", name, err)
		}
		var own []string
		for _, r := range cmp.Status.Runs {
			own = append(own, r.Name)
		}
		got := append(append([]string{}, reps[0].BaselineRuns...), reps[0].CandidateRuns...)
		slices.Sort(own)
		slices.Sort(got)
		if !slices.Equal(got, own) {
			t.Errorf("report of %s compares runs %v, its runs are %v", name, got, own)
		}
	}
}
