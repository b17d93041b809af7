package compare

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// capacitySide is n searches of pgbench's rate that found maxima.
func capacitySide(name string, maxima ...int32) Side {
	s := Side{Name: name}
	for i, m := range maxima {
		cs := &benchv1.CapacityStatus{Parameter: "rate", Maximum: &m, StopReason: benchv1.CapacityConverged,
			Throughput: &benchv1.MetricValue{Name: "transactionsPerSecond", Value: float64(m) * 0.98, Unit: "tx/s", Direction: benchv1.HigherIsBetter}}
		if m == 0 {
			cs.Maximum, cs.Throughput, cs.StopReason = nil, nil, benchv1.CapacityLowestFails
			cs.Message = "even level 400 failed"
		}
		s.Runs = append(s.Runs, capacityRunOf(fmt.Sprintf("%s-%d", name, i), cs))
	}
	return s
}

// capacityRunOf is a succeeded search of pgbench's rate that ended with
// cs, as a comparison takes it.
func capacityRunOf(name string, cs *benchv1.CapacityStatus) Run {
	r := &benchv1.BenchmarkRun{}
	r.Name = name
	r.Spec.Workload.Pgbench = &benchv1.PgbenchWorkload{Clients: []int32{10}, Duration: metav1.Duration{}}
	r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "rate", Search: &benchv1.CapacitySearch{Start: 400}}
	r.Status.Phase = benchv1.PhaseSucceeded
	r.Status.Capacity = cs
	return FromBenchmarkRun(r)
}

// Five searches a side: the Δ of the maximum and its interval, like any
// metric's (the exact rank test's Hodges-Lehmann shift); a search that
// found nothing is excluded, saying why, never compared as a zero.
func TestCapacityIsComparedAcrossSearches(t *testing.T) {
	base := capacitySide("v3", 1600, 1650, 1600, 1550, 1600)
	cand := capacitySide("v4a", 2100, 2050, 2150, 2100, 2100, 0)
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var row *Row
	for i := range rep.Rows {
		if rep.Rows[i].Metric == MetricCapacity {
			row = &rep.Rows[i]
		}
	}
	if row == nil || !rep.IsPrimary(*row) {
		t.Fatalf("no primary row of %s: %+v", MetricCapacity, rep.Rows)
	}
	d, lo, hi := float64(row.DeltaPercent), float64(row.CILowPercent), float64(row.CIHighPercent)
	if row.Verdict != stats.Better || d < 28 || d > 35 || lo > d || hi < d || lo < 20 || row.Baseline.N != 5 || row.Candidate.N != 5 || row.Unit != "/s" {
		t.Errorf("capacity row %+v", row)
	}
	if len(rep.Excluded) != 1 || rep.Excluded[0].Run != "v4a-5" || rep.Excluded[0].Reasons[0] != "no level passed (LowestFails): even level 400 failed" {
		t.Errorf("excluded %+v", rep.Excluded)
	}
	t.Logf("capacity Δ %+.1f %% (95 %% CI %+.1f to %+.1f), %s", d, lo, hi, row.Verdict)
}
