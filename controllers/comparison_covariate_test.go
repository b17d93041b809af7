package controllers

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
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
	cmp := kit.Comparison("cov", benchv1.OrderInterleaved, 6)
	cmp.Spec.Criteria.MinEffectPercent = ptr.To[benchv1.Percent](1)
	cmp.Spec.Covariate = &benchv1.CovariateSpec{Canary: benchv1.CanaryCPU}
	// Both variants' load generators in the template's pool (loadgen),
	// where the canary is valid: what differs is what the runs answer.
	cmp.Spec.Variants[0].Patch, cmp.Spec.Variants[1].Patch = nil, nil
	h.Create(cmp)
	node := []float64{0.02, -0.015, 0.01, -0.02, 0.005, 0.018, -0.008, -0.012, 0.015, 0.0, -0.01, 0.02}
	answered := 0
	h.PlayRunsInOnePool("cov", 12, 1, func(v string, _ int) string {
		q := node[answered%len(node)]
		answered++
		if answered == 3 || answered == 8 {
			h.RestartManager(cfg) // between rounds and within one
		}
		tps := 25000 * (1 + q + roundNoise[answered%len(roundNoise)]/10)
		if v == "v4a" {
			tps *= 0.97
		}
		return canaryResult(tps, 500*(1+q))
	})
	got := h.WaitComparison("cov", benchv1.ComparisonSucceeded)
	if n := len(runsOfComparison(t, h, got)); n != 12 || len(got.Status.Runs) != 12 {
		t.Errorf("%d runs exist, status lists %d: want 12, each created once across two manager restarts", n, len(got.Status.Runs))
	}
	for _, r := range runsOfComparison(t, h, got) {
		if c := r.Spec.Canary; c == nil || c.Duration == nil || c.Duration.Duration.String() != "2s" {
			t.Errorf("run %s: canary %+v, want the default 2s", r.Name, c)
		}
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: got.Status.ReportConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	var reps []compare.Report
	if err := json.Unmarshal([]byte(cm.Data["report.json"]), &reps); err != nil || len(reps) != 1 {
		t.Fatalf("report: %v", err)
	}
	var row *compare.Row
	for i := range reps[0].Rows {
		if reps[0].IsPrimary(reps[0].Rows[i]) {
			row = &reps[0].Rows[i]
		}
	}
	if row == nil || row.Covariate == nil || row.Paired == nil {
		t.Fatalf("headline row %+v", row)
	}
	c := row.Covariate
	t.Logf("paired Δ %.2f %% [%.2f, %.2f]; adjusted %.2f %% [%.2f, %.2f], removed %.0f %%, narrowing %.1f", row.Paired.DeltaPercent,
		row.Paired.CILowPercent, row.Paired.CIHighPercent, c.DeltaPercent, c.CILowPercent, c.CIHighPercent, c.VarianceRemovedPercent, c.Narrowing)
	if !c.Valid || c.Rounds != 6 || c.Metric != results.CanaryCPUMegabytesPerSecond || float64(c.VarianceRemovedPercent) < 80 ||
		float64(c.Narrowing) < 2 || float64(c.CIHighPercent) >= 0 {
		t.Errorf("covariate %+v", c)
	}
}
