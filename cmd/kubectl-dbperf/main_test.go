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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// The history shows the marks the schedule's judgement stored: where the
// regression started, that later runs confirmed it, who acknowledged it; in
// every format.
func TestHistoryShowsTheStoredMarks(t *testing.T) {
	s := &benchv1.BenchmarkSchedule{}
	s.Name = "nightly"
	values := []float64{80000, 80100, 79900, 80050, 47000, 47100, 46900}
	for i, v := range values {
		e := benchv1.HistoryEntry{Run: fmt.Sprintf("nightly-%d", i), Phase: benchv1.PhaseSucceeded, Release: fmt.Sprintf("v1.%d", i), Value: &v, Unit: "ops/s",
			Judgement: benchv1.JudgedNoRegression}
		if i < 3 {
			e.Judgement = benchv1.JudgedNotEnoughHistory
		}
		if i >= 4 {
			d := -41.3
			e.Judgement, e.DeltaPercent = benchv1.JudgedRegression, &d
		}
		s.Status.History = append(s.Status.History, e)
	}
	s.Status.History[4].ChangePoint = true
	s.Status.History[4].Transitions = []string{"RegressionOpened"}
	s.Status.History[6].Transitions = []string{"RegressionAcknowledged"}
	s.Status.History[6].Acknowledged = "the change open at run nightly-6 acknowledged by alice at 2026-11-27T12:00:00Z: appendfsync always"
	s.Status.Conditions = []metav1.Condition{{Type: benchv1.ConditionRegressed, Status: metav1.ConditionFalse, Reason: benchv1.ReasonAcknowledged, Message: "acknowledged"}}
	for format, want := range map[string][]string{
		"table":    {"nightly-4  ", "◀ regression starts", "-41.3 %", "Regression", "◀ acknowledged", "Regressed=False (Acknowledged)"},
		"markdown": {"**regression starts**", "appendfsync always", "Regressed=False (Acknowledged)"},
		"html":     {`class="cp"`, "regression starts", "✓ ack", `class="pt regression"`, "appendfsync always"},
		"json":     {`"changePoint": true`, `"judgement": "Regression"`},
	} {
		var out bytes.Buffer
		if err := renderHistory(&out, s, format); err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: no %q in\n%s", format, w, out.String())
			}
		}
		if format == "table" {
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, "regression starts") && !strings.HasPrefix(l, "nightly-4 ") {
					t.Errorf("the change point is marked at %q, want nightly-4", l)
				}
			}
		}
	}
	var ue usageError
	if err := renderHistory(&bytes.Buffer{}, s, "csv"); !errors.As(err, &ue) {
		t.Errorf("-o csv: %v, want a usage error", err)
	}
}
