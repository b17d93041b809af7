package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
)

func TestRenderCapacityPrintsTheKneeCurve(t *testing.T) {
	yes, no := true, false
	f := func(v float64) *float64 { return &v }
	maxLevel, failing := int32(1600), int32(1700)
	r := &benchv1.BenchmarkRun{Spec: benchv1.BenchmarkRunSpec{Capacity: &benchv1.CapacitySpec{Parameter: "rate"}}}
	r.Name = "pg-knee"
	r.Status.Capacity = &benchv1.CapacityStatus{Parameter: "rate", Maximum: &maxLevel, SmallestFailing: &failing,
		StopReason: benchv1.CapacityConverged, Message: "1600 passed and 1700 failed", CoordinatedOmission: "Corrected",
		Throughput: &benchv1.MetricValue{Name: "transactionsPerSecond", Value: 1558.1, Unit: "tx/s"},
		Levels: []benchv1.CapacityLevel{
			{Value: 1600, Step: "rate=1600", Passed: &yes, Throughput: f(1558.067), AchievedPercent: f(97.38), LatencyOverLimitPercent: f(0.0219)},
			{Value: 1700, Step: "rate=1700", Passed: &no, Throughput: f(1727.5), AchievedPercent: f(101.62), LatencyOverLimitPercent: f(1.9), Reasons: []string{"p99 above 20ms"}},
			{Value: 1650, Step: "rate=1650"},
		}}
	var out bytes.Buffer
	if err := renderCapacity(&out, r, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pg-knee: maximum rate=1600 (transactionsPerSecond 1558.1 tx/s) — Converged: 1600 passed and 1700 failed",
		"latency at a fixed rate: Corrected", "rate=1600  passed", "0.0219 % over limit", "rate=1700  failed", "p99 above 20ms", "rate=1650  measuring"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	r.Spec.Capacity.Soak = &benchv1.CapacitySoak{Duration: metav1.Duration{Duration: 24 * time.Hour}}
	r.Status.Capacity.Soak = &benchv1.CapacitySoakStatus{Value: 1200, Step: "rate=1200,soak", Passed: &no, Attempts: 2,
		Restarts: "the first attempt (job pg-knee-s3-r1) ended Failed after 2h13m0s",
		Checks: []benchv1.SoakCheck{
			{Name: benchv1.SoakThroughputDrop, Series: "transactionsPerSecond", ChangePercent: -0.4, CILowPercent: -0.9, CIHighPercent: 0.1, LimitPercent: 5, Passed: true},
			{Name: benchv1.SoakMemoryGrowth, Series: "target memoryWorkingSetBytes", ChangePercent: 31.2, CILowPercent: 29.8, CIHighPercent: 32.6, LimitPercent: 10},
		},
		Reasons: []string{"MemoryGrowth: target memoryWorkingSetBytes drifted by +31.2%"}}
	out.Reset()
	if err := renderCapacity(&out, r, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"soak at rate=1200,soak for 24h0m0s: failed", "restarted: the first attempt (job pg-knee-s3-r1) ended Failed after 2h13m0s",
		"MemoryGrowth    target memoryWorkingSetBytes  +31.2 %  +29.8 to +32.6 %  10 %   failed", "- MemoryGrowth: target memoryWorkingSetBytes drifted by +31.2%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	r.Spec.Capacity = nil
	if err := renderCapacity(&out, r, "table"); err == nil || !strings.Contains(err.Error(), "not a capacity run") {
		t.Fatalf("%v", err)
	}
}

// `kubectl dbperf compare --from-file` of two variants' searches (the
// files `kubectl dbperf results -o json` writes of capacity runs, four a
// side) prints the Δ of the maximum with its interval.
func TestCompareOfSearchesPrintsTheCapacityDelta(t *testing.T) {
	dir := t.TempDir()
	side := func(name string, maxima ...int32) string {
		var runs []compare.Run
		for i, m := range maxima {
			r := &benchv1.BenchmarkRun{}
			r.Name = fmt.Sprintf("%s-%d", name, i)
			r.Spec.Workload.Pgbench = &benchv1.PgbenchWorkload{Clients: []int32{10}}
			r.Spec.Capacity = &benchv1.CapacitySpec{Parameter: "rate", Search: &benchv1.CapacitySearch{Start: 400}}
			r.Status.Phase = benchv1.PhaseSucceeded
			r.Status.Capacity = &benchv1.CapacityStatus{Parameter: "rate", Maximum: &m, StopReason: benchv1.CapacityConverged}
			runs = append(runs, compare.FromBenchmarkRun(r))
		}
		raw, err := json.Marshal(runs)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	v3, v4a := side("v3", 1600, 1650, 1600, 1550), side("v4a", 2100, 2050, 2150, 2100)
	var out bytes.Buffer
	if err := cmdCompare(context.Background(), []string{"--from-file", v3, "--from-file", v4a}, &out, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"capacity  capacityMaximum rate  /s    1600      2100       +31.3 %  +24.2 % … +38.7 %", "Better"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
