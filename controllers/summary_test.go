package controllers

import (
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// A failed repetition neither enters a step's summary nor undoes what the
// valid ones showed, even when its result names no primary metric.
func TestFailedRepetitionLeavesTheSummaryAlone(t *testing.T) {
	run := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Validity: benchv1.ValiditySpec{MaxCoefficientOfVariationPercent: 5}}}
	initSteps(run, []workloads.Step{{Name: "clients=8", Params: map[string]int32{"clients": 8}}})
	tps := results.Key{Name: "transactionsPerSecond"}
	for rep, v := range []float64{1000, 1400} {
		r := results.New("pgbench")
		r.Primary = tps
		r.Add(results.Metric{Name: tps.Name, Value: v, Unit: "tx/s", Direction: results.HigherIsBetter})
		recordMeasurement(run, measurement{step: 0, rep: int32(rep + 1)}, "job", &outcome{result: r})
	}
	killed := results.New("pgbench")
	killed.Fail("the load generator ended (exit code 137, OOMKilled) without a dbperf summary")
	recordMeasurement(run, measurement{step: 0, rep: 3}, "job", &outcome{result: killed})

	step := run.Status.Steps[0]
	if len(step.Repetitions) != 3 || !step.Unstable {
		t.Fatalf("repetitions %d, unstable %v: a CV of 23%% over a 5%% limit must stay flagged", len(step.Repetitions), step.Unstable)
	}
	s := findSummary(step.Summary, tps.Name)
	if s == nil || s.N != 2 || s.Median != 1200 {
		t.Fatalf("summary %+v", s)
	}
	if p := run.Status.Primary; p == nil || p.Value != 1200 {
		t.Fatalf("primary %+v", p)
	}
}
