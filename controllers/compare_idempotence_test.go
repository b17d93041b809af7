package controllers

import (
	"context"
	"fmt"
	"sync/atomic"

	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// The compare phase, as this change made it (every measurement's full
// results read from the runs' documents, rejections left out, a finished
// comparison compared again when they change), the way it breaks: with the
// manager gone (a restart between), a rejection is made; the first
// reconcile meets a write conflict and records nothing; the next, by a new
// reconciler, compares again without the rejected run; reconciled twice
// more, nothing is written (the comparison's and the report's
// resourceVersions stay); the manager restarted changes nothing either.
// Every measurement of the runs stays in their status and documents.
func TestComparePhaseIsIdempotent(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.Create(kit.Comparison("idem", benchv1.OrderInterleaved, 3))
	h.PlayRuns("idem", 6, 1, kit.Measured)
	cmp := h.WaitComparison("idem", benchv1.ComparisonSucceeded)
	if cmp.Status.Results[0].BaselineN != 3 || cmp.Status.Verdict == "" || cmp.Status.Headline == "" {
		t.Fatalf("results %+v, verdict %q, headline %q", cmp.Status.Results, cmp.Status.Verdict, cmp.Status.Headline)
	}
	h.StopManager()

	var victim benchv1.BenchmarkRun
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: cmp.Status.Runs[0].Name}, &victim); err != nil {
		t.Fatal(err)
	}
	victim.Annotations = map[string]string{benchv1.AnnotationRejections: `[{"reason":"noisy neighbour","by":"carol","at":"2026-11-25T13:00:00Z"}]`}
	if err := k8s.Update(ctx, &victim); err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cmp)}
	// The first status patch of the comparison meets a conflict, as
	// another writer's update would make it.
	var refused atomic.Bool
	conflicted := firstComparisonPatchConflicts(&refused)
	rec := record.NewFakeRecorder(100)
	r := &comparison.Reconciler{Client: conflicted, Recorder: rec}
	// A conflict is not an error (patchStatusIfChanged): the write that
	// caused it brings the next reconcile, which starts from what is stored.
	if _, err := r.Reconcile(ctx, req); err != nil || !refused.Load() {
		t.Fatalf("first reconcile: %v (conflict met: %v)", err, refused.Load())
	}
	if n := len(rec.Events); n != 0 {
		t.Errorf("a refused write said %d events: %s", n, <-rec.Events)
	}
	get := func() *benchv1.BenchmarkComparison { return storedComparison(t, req.NamespacedName) }
	if c := get(); len(c.Status.Rejections) != 0 || c.Status.Results[0].BaselineN != 3 || c.Status.Verdict != cmp.Status.Verdict || c.Status.Headline != cmp.Status.Headline {
		t.Fatalf("a refused write changed the status: %v %+v, verdict %q %q", c.Status.Rejections, c.Status.Results, c.Status.Verdict, c.Status.Headline)
	}
	// A new reconciler: what the next manager would run.
	rec = record.NewFakeRecorder(100)
	r = &comparison.Reconciler{Client: k8s, Recorder: rec}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Events); n != 1 {
		t.Errorf("comparing again said %d events, want 1 (Compared)", n)
	} else if e := <-rec.Events; !strings.HasPrefix(e, "Normal Compared ") {
		t.Errorf("event %q", e)
	}
	after := get()
	if len(after.Status.Rejections) != 1 || after.Status.Results[0].BaselineN != 2 || after.Status.ExcludedMeasurements != 1 || after.Status.Verdict == "" ||
		!strings.Contains(after.Status.Headline, "v4a vs v3: ") {
		t.Fatalf("after the rejection: rejections %v, results %+v, excluded %d", after.Status.Rejections, after.Status.Results, after.Status.ExcludedMeasurements)
	}
	report := func() *corev1.ConfigMap {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: after.Status.ReportConfigMap}, cm); err != nil {
			t.Fatal(err)
		}
		return cm
	}
	// The report pairs the runs by round (Interleaved: ABBA rounds): the
	// rejected baseline run's round pairs nothing, the two others do.
	paired := func(cm *corev1.ConfigMap) string {
		t.Helper()
		reps, err := compare.ReadReports(cm.Data, cm.BinaryData)
		if err != nil || len(reps) != 1 {
			t.Fatalf("report: %v (%d)", err, len(reps))
		}
		for _, row := range reps[0].Rows {
			if reps[0].IsPrimary(row) && row.Paired != nil {
				return fmt.Sprintf("%d rounds %.6f", row.Paired.Rounds, float64(row.Paired.DeltaPercent))
			}
		}
		return ""
	}
	pairedBefore := paired(report())
	if !strings.HasPrefix(pairedBefore, "2 rounds ") {
		t.Errorf("the report's paired analysis after the rejection: %q, want 2 rounds", pairedBefore)
	}
	rv, reportRV := after.ResourceVersion, report().ResourceVersion
	for i := range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if c := get(); c.ResourceVersion != rv || report().ResourceVersion != reportRV {
			t.Errorf("reconcile %d again wrote: comparison %s→%s, report %s→%s", i+2, rv, c.ResourceVersion, reportRV, report().ResourceVersion)
		}
	}
	if n := len(rec.Events); n != 0 {
		t.Errorf("reconciled again, %d more events", n)
	}
	since := kit.ReconcileCount(t, "benchmarkcomparison")
	h.StartManager(cfg)
	kit.WaitReconciled(t, "benchmarkcomparison", since) // the new manager's first look at it
	if c := get(); c.ResourceVersion != rv || report().ResourceVersion != reportRV {
		t.Errorf("the restarted manager wrote again: comparison %s→%s, report %s→%s", rv, c.ResourceVersion, reportRV, report().ResourceVersion)
	}
	if got := paired(report()); got != pairedBefore {
		t.Errorf("the paired analysis changed through reconciles and a restart: %q → %q", pairedBefore, got)
	}
	for _, cr := range after.Status.Runs {
		run := h.Run(cr.Name)
		doc := h.ResultsDocument(t, run)
		for _, st := range run.Status.Steps {
			for _, rep := range st.Repetitions {
				if doc.Result(st.Name, rep.Index) == nil {
					t.Errorf("%s %s #%d: in status, not in the results document", run.Name, st.Name, rep.Index)
				}
			}
			if len(st.Repetitions) != 1 {
				t.Errorf("%s %s: %d repetitions in status, want 1", run.Name, st.Name, len(st.Repetitions))
			}
		}
	}
}

// A variant whose run the API server refuses, the way it breaks: the first
// status write failing the comparison meets a conflict (nothing said), a
// restarted reconciler stores it and says it once, a third pass writes and
// says nothing; no run is ever created, not even for the valid variant.
func TestRefusedVariantIsIdempotent(t *testing.T) {
	h := newHarness(t)
	h.StopManager()
	ctx := context.Background()
	cmp := kit.Comparison("refused", benchv1.OrderInterleaved, 2)
	cmp.Namespace = h.NS
	cmp.Spec.Variants[1].Patch = &apiextensionsv1.JSON{Raw: []byte(`{"target":{"replicaPlacement":{"zone":"zone-b"}}}`)}
	if err := k8s.Create(ctx, cmp); err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cmp)}
	var refused atomic.Bool
	conflicted := firstComparisonPatchConflicts(&refused)
	rec := record.NewFakeRecorder(100)
	get := func() *benchv1.BenchmarkComparison { return storedComparison(t, req.NamespacedName) }
	for pass, r := range []*comparison.Reconciler{{Client: conflicted, Recorder: rec}, {Client: k8s, Recorder: rec}, {Client: k8s, Recorder: rec}} {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("pass %d: %v", pass+1, err)
		}
		phase, events := get().Status.Phase, len(rec.Events)
		want := map[int]struct {
			phase  benchv1.ComparisonPhase
			events int
		}{0: {"", 0}, 1: {benchv1.ComparisonFailed, 1}, 2: {benchv1.ComparisonFailed, 1}}[pass]
		if pass == 0 && !refused.Load() {
			t.Fatal("the first status write met no conflict")
		}
		if phase != want.phase || events != want.events {
			t.Errorf("pass %d: phase %q with %d events, want %q with %d", pass+1, phase, events, want.phase, want.events)
		}
	}
	if c := meta.FindStatusCondition(get().Status.Conditions, benchv1.ConditionCompared); c == nil || c.Reason != benchv1.ReasonInvalidPatch ||
		!strings.Contains(c.Message, "variant "+cmp.Spec.Variants[1].Name) {
		t.Errorf("condition %+v", c)
	}
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(ctx, &runs, client.InNamespace(h.NS)); err != nil || len(runs.Items) != 0 {
		t.Errorf("%d runs created (%v), want none", len(runs.Items), err)
	}
}

// firstComparisonPatchConflicts is the API server whose first status patch
// of a comparison meets a conflict (refused says it did), as another
// writer's update would make it.
func firstComparisonPatchConflicts(refused *atomic.Bool) client.Client {
	return kit.Intercept(k8s, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*benchv1.BenchmarkComparison); ok && refused.CompareAndSwap(false, true) {
				return kit.Conflict("benchmarkcomparisons", obj.GetName())
			}
			return c.SubResource(sub).Patch(ctx, obj, p, o...)
		},
	})
}

// The run-creation phase in ABBA rounds, the way it breaks: the manager is
// killed and restarted between the first round and the second (where the
// order turns), and again in the middle of the second round; every run is
// created once, in the order A B, B A, and the comparison pairs both rounds.
func TestInterleavedRoundsCreatedOnceThroughRestarts(t *testing.T) {
	h := newHarness(t)
	h.Create(kit.Comparison("abba", benchv1.OrderInterleaved, 2))
	answered := 0
	order := h.PlayRuns("abba", 4, 1, func(v string, i int) string {
		answered++
		if answered == 2 || answered == 3 {
			h.RestartManager(cfg)
		}
		return kit.Measured(v, i)
	})
	if got := strings.Join(order, " "); got != "v3 v4a v4a v3" {
		t.Errorf("runs measured in the order %s, want v3 v4a v4a v3", got)
	}
	cmp := h.WaitComparison("abba", benchv1.ComparisonSucceeded)
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil {
		t.Fatal(err)
	}
	if len(runs.Items) != 4 || len(cmp.Status.Runs) != 4 {
		t.Errorf("%d runs exist, status lists %d: want 4, each created once", len(runs.Items), len(cmp.Status.Runs))
	}
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	reps, err := compare.ReadReports(cm.Data, cm.BinaryData)
	if err != nil || len(reps) != 1 {
		t.Fatalf("report: %v", err)
	}
	for _, row := range reps[0].Rows {
		if reps[0].IsPrimary(row) && (row.Paired == nil || row.Paired.Rounds != 2) {
			t.Errorf("%s %s: paired %+v, want 2 rounds", row.Step, row.Metric, row.Paired)
		}
	}
}

// storedComparison is the comparison as the API server has it.
func storedComparison(t *testing.T, key client.ObjectKey) *benchv1.BenchmarkComparison {
	t.Helper()
	c := &benchv1.BenchmarkComparison{}
	if err := k8s.Get(context.Background(), key, c); err != nil {
		t.Fatal(err)
	}
	return c
}
