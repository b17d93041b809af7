package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
)

// exported writes what `kubectl dbperf results -o json` writes for runs of
// one pool: 5 repetitions of one step with throughput around tps.
func exported(t *testing.T, name string, tps float64, scale int32) string {
	t.Helper()
	run := compare.Run{Name: name, Spec: benchv1.BenchmarkRunSpec{
		Target:   benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "db", Port: 5432}},
		Workload: benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{Scale: scale, Clients: []int32{20}}},
	}}
	step := benchv1.StepStatus{Name: "clients=20", Summary: []benchv1.MetricSummary{{Name: "transactionsPerSecond"}}}
	for i, j := range []float64{0, 3, -2, 1, -1} {
		step.Repetitions = append(step.Repetitions, benchv1.RepetitionStatus{Index: int32(i + 1), Verdict: benchv1.VerdictSucceeded,
			Metrics: []benchv1.MetricValue{{Name: "transactionsPerSecond", Value: tps * (1 + j/1000), Unit: "tx/s", Direction: benchv1.HigherIsBetter}}})
	}
	run.Steps = []benchv1.StepStatus{step}
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompareFromFiles(t *testing.T) {
	a, b := exported(t, "cluster-a-v3", 25210, 100), exported(t, "cluster-b-v4a", 54753, 100)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"compare", "--from-file", a, "--from-file", b, "-o", "csv", "--min-effect", "2"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv %v %v", err, rows)
	}
	row := map[string]string{}
	for i, h := range rows[0] {
		row[h] = rows[1][i]
	}
	if row["verdict"] != "Better" || row["baseline"] != "cluster-a-v3" || !strings.HasPrefix(row["delta_percent"], "117.") {
		t.Errorf("row %v", row)
	}
	out.Reset()
	if err := run(context.Background(), []string{"compare", "--from-file", a, "--from-file", b}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "CLUSTER-A-V3") || !strings.Contains(out.String(), "+117.") {
		t.Errorf("table:\n%s", out.String())
	}
}

func TestCompareRefusesDifferentWorkloads(t *testing.T) {
	a, b := exported(t, "a", 25210, 100), exported(t, "b", 54753, 200)
	err := run(context.Background(), []string{"compare", "--from-file", a, "--from-file", b}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "workload.pgbench.scale (100 vs 200)") {
		t.Errorf("err %v: want the differing setting named", err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"compare"}, {"compare", "--from-file", "x.json"}, {"results", "-o"}} {
		err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestHistoryMarksChangePoints(t *testing.T) {
	s := &benchv1.BenchmarkSchedule{}
	values := []float64{1000, 1008, 995, 1003, 998, 1006, 992, 1004, 999, 1001, 950, 955, 948, 952, 957, 951}
	for i, v := range values {
		s.Status.History = append(s.Status.History, benchv1.HistoryEntry{Run: fmt.Sprintf("nightly-%d", i), Phase: benchv1.PhaseSucceeded,
			Release: fmt.Sprintf("v1.%d", i), Value: &v, Unit: "tx/s"})
	}
	var out bytes.Buffer
	if err := renderHistory(&out, s, "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	marked := 0
	for _, l := range lines {
		if strings.Contains(l, "change point") {
			marked++
			if !strings.HasPrefix(l, "nightly-10 ") {
				t.Errorf("change point marked at %q, want nightly-10", l)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d change points marked:\n%s", marked, out.String())
	}
}
