package controllers

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// canaryResult is a measurement of tps on a node whose canary read
// canary MB/s.
func canaryResult(tps, canary float64) string {
	res := results.New("pgbench")
	res.Primary = results.Key{Name: "transactionsPerSecond"}
	res.Add(results.Metric{Name: "transactionsPerSecond", Value: tps, Unit: "tx/s", Direction: results.HigherIsBetter})
	res.Add(results.Metric{Name: results.CanaryCPUMegabytesPerSecond, Value: canary, Unit: "MB/s", Direction: results.Neutral, Source: results.SourceCanary})
	msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
	if err != nil {
		panic(err)
	}
	return string(msg)
}

// A comparison with a covariate gives every run a canary (the default
// one: the template has none) and adjusts its headline by it: both
// variants' load generators in one pool, 6 rounds in
// which each run's node is up to 2 % faster or slower, which its canary
// sees, and the candidate 3 % slower; the report's headline row carries
// the adjusted change, the canary removed most of the rounds' variance,
// and the interval is narrower than the paired one. The manager is
// restarted twice while the rounds run: every run is created once.
func TestComparisonWithACovariate(t *testing.T) {
	h := newHarness(t)
	got, row := playCovariateComparison(t, h, "cov", true)
	for _, r := range runsOfComparison(t, h, got) {
		if c := r.Spec.Canary; c == nil || c.Duration == nil || c.Duration.Duration.String() != "2s" {
			t.Errorf("run %s: canary %+v, want the default 2s", r.Name, c)
		}
	}
	c := row.Covariate
	t.Logf("paired Δ %.2f %% [%.2f, %.2f]; adjusted %.2f %% [%.2f, %.2f], removed %.0f %%, narrowing %.1f", row.Paired.DeltaPercent,
		row.Paired.CILowPercent, row.Paired.CIHighPercent, c.DeltaPercent, c.CILowPercent, c.CIHighPercent, c.VarianceRemovedPercent, c.Narrowing)
	if !c.Valid || c.Rounds != 6 || c.Metric != results.CanaryCPUMegabytesPerSecond || float64(c.VarianceRemovedPercent) < 80 ||
		float64(c.Narrowing) < 2 || float64(c.CIHighPercent) >= 0 {
		t.Errorf("covariate %+v", c)
	}
}

// The compare phase of a comparison with a covariate, the way it breaks:
// with the manager gone, a person rejects a run; the first reconcile meets
// a write conflict and records nothing; a new reconciler compares again
// (the covariate over the 5 rounds left); twice more, nothing is written;
// the manager restarted writes nothing either, and the adjusted change is
// the same throughout. Every measurement stays in its run's status and
// results document.
func TestCovariateComparePhaseIsIdempotent(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	cmp, _ := playCovariateComparison(t, h, "cov-idem", false)
	h.StopManager()
	var victim benchv1.BenchmarkRun
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: cmp.Status.Runs[0].Name}, &victim); err != nil {
		t.Fatal(err)
	}
	victim.Annotations = map[string]string{benchv1.AnnotationRejections: `[{"reason":"noisy neighbour","by":"carol","at":"2026-11-29T17:00:00Z"}]`}
	if err := k8s.Update(ctx, &victim); err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cmp)}
	var refused atomic.Bool
	r := &comparison.Reconciler{Client: firstComparisonPatchConflicts(&refused), Recorder: record.NewFakeRecorder(100)}
	if _, err := r.Reconcile(ctx, req); err != nil || !refused.Load() {
		t.Fatalf("first reconcile: %v (conflict met: %v)", err, refused.Load())
	}
	if c := storedComparison(t, req.NamespacedName); len(c.Status.Rejections) != 0 || c.ResourceVersion != cmp.ResourceVersion {
		t.Fatalf("a refused write changed the comparison: rejections %v, resourceVersion %s → %s", c.Status.Rejections, cmp.ResourceVersion, c.ResourceVersion)
	}
	r = &comparison.Reconciler{Client: k8s, Recorder: record.NewFakeRecorder(100)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	after := storedComparison(t, req.NamespacedName)
	adjusted := func() string {
		t.Helper()
		row := covariateRowOf(t, after.Status.ReportConfigMap, h.NS)
		return fmt.Sprintf("%d rounds %.9f [%.9f, %.9f] valid %v", row.Covariate.Rounds, float64(row.Covariate.DeltaPercent),
			float64(row.Covariate.CILowPercent), float64(row.Covariate.CIHighPercent), row.Covariate.Valid)
	}
	first := adjusted()
	if len(after.Status.Rejections) != 1 || !strings.HasPrefix(first, "5 rounds ") {
		t.Fatalf("after the rejection: rejections %v, covariate %s", after.Status.Rejections, first)
	}
	reportRV := func() string {
		cm := &corev1.ConfigMap{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: after.Status.ReportConfigMap}, cm); err != nil {
			t.Fatal(err)
		}
		return cm.ResourceVersion
	}
	rv, rrv := after.ResourceVersion, reportRV()
	for i := range 2 {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if c := storedComparison(t, req.NamespacedName); c.ResourceVersion != rv || reportRV() != rrv {
			t.Errorf("reconcile %d again wrote: comparison %s→%s, report %s→%s", i+2, rv, c.ResourceVersion, rrv, reportRV())
		}
	}
	since := kit.ReconcileCount(t, "benchmarkcomparison")
	h.StartManager(cfg)
	kit.WaitReconciled(t, "benchmarkcomparison", since)
	if c := storedComparison(t, req.NamespacedName); c.ResourceVersion != rv || reportRV() != rrv || adjusted() != first {
		t.Errorf("the restarted manager wrote again: comparison %s→%s, report %s→%s, covariate %s → %s", rv, c.ResourceVersion, rrv, reportRV(), first, adjusted())
	}
	for _, cr := range after.Status.Runs {
		run := h.Run(cr.Name)
		doc := h.ResultsDocument(t, run)
		for _, st := range run.Status.Steps {
			if len(st.Repetitions) != 1 {
				t.Errorf("%s %s: %d repetitions in status, want 1", run.Name, st.Name, len(st.Repetitions))
			}
			for _, rep := range st.Repetitions {
				if doc.Result(st.Name, rep.Index) == nil {
					t.Errorf("%s %s #%d: in status, not in the results document", run.Name, st.Name, rep.Index)
				}
			}
		}
	}
}

// covariateRowOf is the headline row of a comparison's report.
func covariateRowOf(t *testing.T, configMap, ns string) *compare.Row {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: configMap}, &cm); err != nil {
		t.Fatal(err)
	}
	reps, err := compare.ReadReports(cm.Data, cm.BinaryData)
	if err != nil || len(reps) != 1 {
		t.Fatalf("report: %v (%d)", err, len(reps))
	}
	for i := range reps[0].Rows {
		if row := &reps[0].Rows[i]; reps[0].IsPrimary(*row) && row.Covariate != nil && row.Paired != nil {
			return row
		}
	}
	t.Fatalf("no headline row with a covariate and a paired analysis in %s", configMap)
	return nil
}

// playCovariateComparison runs a 6-round comparison with a covariate
// (restarting the manager twice while the rounds run when restarts is
// set), checks that each run was created once, and returns the finished
// comparison and its report's headline row.
func playCovariateComparison(t *testing.T, h *harness, name string, restarts bool) (*benchv1.BenchmarkComparison, *compare.Row) {
	t.Helper()
	cmp := kit.Comparison(name, benchv1.OrderInterleaved, 6)
	cmp.Spec.Criteria.MinEffectPercent = ptr.To[benchv1.Percent](1)
	cmp.Spec.Covariate = &benchv1.CovariateSpec{Canary: benchv1.CanaryCPU}
	// Both variants' load generators in the template's pool (loadgen),
	// where the canary is valid: what differs is what the runs answer.
	cmp.Spec.Variants[0].Patch, cmp.Spec.Variants[1].Patch = nil, nil
	h.Create(cmp)
	node := []float64{0.02, -0.015, 0.01, -0.02, 0.005, 0.018, -0.008, -0.012, 0.015, 0.0, -0.01, 0.02}
	answered := 0
	h.PlayRunsInOnePool(name, 12, 1, func(v string, _ int) string {
		q := node[answered%len(node)]
		answered++
		if restarts && (answered == 3 || answered == 8) {
			h.RestartManager(cfg) // between rounds and within one
		}
		tps := 25000 * (1 + q + roundNoise[answered%len(roundNoise)]/10)
		if v == "v4a" {
			tps *= 0.97
		}
		return canaryResult(tps, 500*(1+q))
	})
	got := h.WaitComparison(name, benchv1.ComparisonSucceeded)
	if n := len(runsOfComparison(t, h, got)); n != 12 || len(got.Status.Runs) != 12 {
		t.Errorf("%d runs exist, status lists %d: want 12, each created once", n, len(got.Status.Runs))
	}
	return got, covariateRowOf(t, got.Status.ReportConfigMap, h.NS)
}
