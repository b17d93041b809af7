package compare

import (
	"math"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// canaryRounds: 10 rounds in which each run's node is faster or slower
// (q, ±2 %), which its canary sees with 0.2 % noise of its own, beside
// 0.5 % of the run's own noise; the candidate is 3 % slower, and its
// canaries read canaryShift higher.
func canaryRounds(canaryShift float64) (Side, Side) {
	qb := []float64{0.02, -0.015, 0.01, -0.02, 0.005, 0.018, -0.008, -0.012, 0.015, 0.0}
	qc := []float64{-0.01, 0.02, -0.018, 0.012, 0.0, -0.02, 0.016, 0.007, -0.005, 0.01}
	own := []float64{0.004, -0.005, 0.002, 0.005, -0.003, 0.0, -0.004, 0.003, 0.001, -0.002}
	cn := []float64{0.002, -0.001, 0.0, 0.002, -0.002, 0.001, -0.001, 0.0, 0.002, -0.002}
	base, cand := Side{Name: "pg16"}, Side{Name: "pg17"}
	for i := range qb {
		b := run("pg16-"+string(rune('a'+i)), "standard-v4a", map[string]float64{"clients=20": 25000 * (1 + qb[i] + own[i]), "clients=40": 30000}, benchv1.VerdictSucceeded)
		c := run("pg17-"+string(rune('a'+i)), "standard-v4a", map[string]float64{"clients=20": 25000 * 0.97 * (1 + qc[i] - own[i]), "clients=40": 30000}, benchv1.VerdictSucceeded)
		for _, x := range []struct {
			r      *Run
			canary float64
		}{{&b, 500 * (1 + qb[i] + cn[i])}, {&c, 500 * (1 + canaryShift) * (1 + qc[i] - cn[i])}} {
			x.r.Round = int32(i + 1)
			for s := range x.r.Steps {
				m := &x.r.Steps[s].Repetitions[0]
				m.Metrics = append(m.Metrics, benchv1.MetricValue{Name: results.CanaryCPUMegabytesPerSecond, Value: x.canary, Unit: "MB/s", Direction: benchv1.Neutral, Source: results.SourceCanary})
			}
		}
		base.Runs, cand.Runs = append(base.Runs, b), append(cand.Runs, c)
	}
	return base, cand
}

func covariateOf(t *testing.T, rep *Report) (Row, *CovariateRow) {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Step == "clients=20" && r.Metric == "transactionsPerSecond" {
			return r, r.Covariate
		}
	}
	t.Fatal("no headline row")
	return Row{}, nil
}

// The canary of each run's node, as a covariate, takes the nodes'
// differences out of the rounds' ratios: the 3 % drop that the paired
// interval blurs is found within a narrower one, the variance removed is
// said, and the summary says it beside the verdict, which stays the
// independent analysis'. The canary's own row is described, not judged.
func TestCovariateAdjustsTheHeadline(t *testing.T) {
	base, cand := canaryRounds(0)
	opts := Options{Criteria: stats.Criteria{MinEffectPercent: 1}, Covariate: CanaryMetric(benchv1.CanaryCPU)}
	rep, err := Build(base, cand, opts)
	if err != nil {
		t.Fatal(err)
	}
	row, c := covariateOf(t, rep)
	if c == nil || row.Paired == nil {
		t.Fatalf("no covariate (%+v) or paired analysis on the headline row", c)
	}
	t.Logf("paired Δ %.2f %% [%.2f, %.2f]; adjusted Δ %.2f %% [%.2f, %.2f] p %.2g, θ %.2f, r %.2f, removed %.0f %%, narrowing %.1f",
		row.Paired.DeltaPercent, row.Paired.CILowPercent, row.Paired.CIHighPercent, c.DeltaPercent, c.CILowPercent, c.CIHighPercent, c.P,
		c.Theta, c.Correlation, c.VarianceRemovedPercent, c.Narrowing)
	if !c.Valid || c.Rounds != 10 || c.Metric != results.CanaryCPUMegabytesPerSecond {
		t.Errorf("covariate %+v", c)
	}
	if math.Abs(float64(c.DeltaPercent)+3) > 0.5 || float64(c.CIHighPercent) >= 0 || float64(c.VarianceRemovedPercent) < 80 || float64(c.Narrowing) < 2 {
		t.Errorf("adjusted Δ %.2f %% [%.2f, %.2f], removed %.0f %%, narrowing %.1f: want ≈ −3 %% in an interval below zero, ≥ 80 %% removed, ≥ 2× narrower",
			c.DeltaPercent, c.CILowPercent, c.CIHighPercent, c.VarianceRemovedPercent, c.Narrowing)
	}
	if !strings.Contains(strings.Join(rep.Summary.Lines, "\n"), "Adjusted by the load generators' canary (canaryCPUMegabytesPerSecond") {
		t.Errorf("summary:\n%s", strings.Join(rep.Summary.Lines, "\n"))
	}
	for _, r := range rep.Rows {
		if r.Metric == results.CanaryCPUMegabytesPerSecond && (r.Verdict != stats.Inconclusive && r.Verdict != stats.NoChange || !r.IsTelemetry()) {
			t.Errorf("the canary's row is judged: %s %+v", r.Verdict, r)
		}
	}
	// Without the option, no adjustment; with a metric filter that leaves
	// the canary out, it is still kept for the adjustment.
	rep, _ = Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}})
	if _, c := covariateOf(t, rep); c != nil {
		t.Errorf("a covariate without the option: %+v", c)
	}
	opts.Metrics = []string{"latency*"}
	rep, _ = Build(base, cand, opts)
	if _, c := covariateOf(t, rep); c == nil || !c.Valid {
		t.Errorf("a metric filter dropped the canary: %+v", c)
	}
}

// A canary that moved with the variant (its candidate's nodes read 8 %
// faster) measures something the variant changed: the adjustment is
// given, marked not valid, and the summary says why.
func TestCovariateThatMovedWithTheVariantIsNotUsed(t *testing.T) {
	base, cand := canaryRounds(0.08)
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}, Covariate: results.CanaryCPUMegabytesPerSecond})
	if err != nil {
		t.Fatal(err)
	}
	_, c := covariateOf(t, rep)
	if c == nil || c.Valid || !strings.Contains(c.Reason, "moved with the variant") || math.Abs(float64(c.CanaryShiftPercent)-8) > 1 {
		t.Fatalf("covariate %+v", c)
	}
	if s := strings.Join(rep.Summary.Lines, "\n"); !strings.Contains(s, "not adjusted: the canary moved with the variant") {
		t.Errorf("summary:\n%s", s)
	}
}

// Load generators in node pools of their own: the canary measures the
// variant's nodes, whatever it read; the adjustment is not valid.
func TestCovariateOfLoadGeneratorsInPoolsOfTheirOwn(t *testing.T) {
	base, cand := canaryRounds(0)
	for _, x := range []struct {
		side *Side
		pool string
	}{{&base, "standard-v3"}, {&cand, "standard-v4a"}} {
		for i := range x.side.Runs {
			x.side.Runs[i].Environment = &benchv1.Environment{Nodes: []benchv1.NodeInfo{{Name: "n", Roles: []string{benchv1.RoleLoadgen}, Pool: x.pool}}}
		}
	}
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}, Covariate: results.CanaryCPUMegabytesPerSecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, c := covariateOf(t, rep); c == nil || c.Valid || !strings.Contains(c.Reason, "node pools of their own (pg16: standard-v3; pg17: standard-v4a)") {
		t.Fatalf("covariate %+v", c)
	}
	// One pool shared (the candidate's runs in both): valid again.
	for i := range cand.Runs {
		cand.Runs[i].Environment.Nodes = append(cand.Runs[i].Environment.Nodes, benchv1.NodeInfo{Name: "m", Roles: []string{benchv1.RoleLoadgen}, Pool: "standard-v3"})
	}
	rep, _ = Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 1}, Covariate: results.CanaryCPUMegabytesPerSecond})
	if _, c := covariateOf(t, rep); c == nil || !c.Valid {
		t.Fatalf("a shared pool: covariate %+v", c)
	}
}
