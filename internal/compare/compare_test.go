package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

func spec(pool string, clients ...int32) benchv1.BenchmarkRunSpec {
	return benchv1.BenchmarkRunSpec{
		Target: benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "db", Port: 5432},
			Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": pool}}},
		Workload: benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{Scale: 10, Clients: clients}},
	}
}

// run makes a run with one repetition per step: tps and p99 per step.
func run(name, pool string, tps map[string]float64, verdict benchv1.Verdict) Run {
	r := Run{Name: name, Spec: spec(pool, 20, 40)}
	for _, step := range []string{"clients=20", "clients=40"} {
		r.Steps = append(r.Steps, benchv1.StepStatus{Name: step,
			Summary: []benchv1.MetricSummary{{Name: "transactionsPerSecond"}},
			Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: verdict, Reasons: reasonsFor(verdict), Metrics: []benchv1.MetricValue{
				{Name: "transactionsPerSecond", Value: tps[step], Unit: "tx/s", Direction: benchv1.HigherIsBetter},
				{Name: "latencyP99Millis", Value: 1000 / tps[step] * 100, Unit: "ms", Direction: benchv1.LowerIsBetter},
			}}}})
	}
	return r
}

func reasonsFor(v benchv1.Verdict) []string {
	if v == benchv1.VerdictSucceeded {
		return nil
	}
	return []string{"load generator saturated"}
}

func sides() (Side, Side) {
	base := Side{Name: "standard-v3"}
	cand := Side{Name: "standard-v4a"}
	for i, jitter := range []float64{0, 3, -2, 1, -1} {
		base.Runs = append(base.Runs, run("v3-"+string(rune('a'+i)), "standard-v3",
			map[string]float64{"clients=20": 25210 + 40*jitter, "clients=40": 30000 + 50*jitter}, benchv1.VerdictSucceeded))
		cand.Runs = append(cand.Runs, run("v4a-"+string(rune('a'+i)), "standard-v4a",
			map[string]float64{"clients=20": 54753 + 80*jitter, "clients=40": 30000 - 45*jitter}, benchv1.VerdictSucceeded))
	}
	// One invalid measurement on each side: excluded and counted.
	base.Runs = append(base.Runs, run("v3-bad", "standard-v3", map[string]float64{"clients=20": 1, "clients=40": 1}, benchv1.VerdictInvalid))
	return base, cand
}

func TestBuildComparesPerStepAndMetric(t *testing.T) {
	base, cand := sides()
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 4 {
		t.Fatalf("%d rows, want 2 steps × 2 metrics", len(rep.Rows))
	}
	want := map[string]stats.Verdict{
		"clients=20/transactionsPerSecond": stats.Better, "clients=20/latencyP99Millis": stats.Better,
		"clients=40/transactionsPerSecond": stats.NoChange, "clients=40/latencyP99Millis": stats.NoChange,
	}
	for _, r := range rep.Rows {
		if got := want[r.Step+"/"+r.Metric]; r.Verdict != got {
			t.Errorf("%s %s: %s (%s), want %s", r.Step, r.Metric, r.Verdict, r.Reason, got)
		}
		if r.Baseline.N != 5 || r.Candidate.N != 5 {
			t.Errorf("%s %s: n %d/%d, want 5/5 (the invalid run excluded)", r.Step, r.Metric, r.Baseline.N, r.Candidate.N)
		}
	}
	if r := rep.Rows[0]; r.DeltaPercent < 110 || r.DeltaPercent > 120 {
		t.Errorf("Δ NOPM-like %v %%, want about +117 %%", r.DeltaPercent)
	}
	if len(rep.Excluded) != 2 || rep.Excluded[0].Run != "v3-bad" || rep.Excluded[0].Verdict != "Invalid" {
		t.Errorf("excluded %+v, want both steps of v3-bad", rep.Excluded)
	}
	if rep.Better != 2 || rep.NoChange != 2 || rep.Primary != "transactionsPerSecond" {
		t.Errorf("counts %d better %d no change, primary %q", rep.Better, rep.NoChange, rep.Primary)
	}
}

func TestRefusesDifferentWorkloads(t *testing.T) {
	base, cand := sides()
	cand.Runs[2].Spec.Workload.Pgbench.Scale = 100
	_, err := Build(base, cand, Options{})
	if err == nil || !strings.Contains(err.Error(), "workload.pgbench.scale (10 vs 100)") {
		t.Fatalf("err %v: want the differing field named", err)
	}
	// Allowed when it is the variant's patch.
	paths, err := PatchPaths([]byte(`{"workload":{"pgbench":{"scale":100}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(base, cand, Options{IgnorePaths: paths}); err != nil {
		t.Errorf("with the patch ignored: %v", err)
	}
	// The platform may always differ: pools, images, resources.
	cand.Runs[2].Spec.Workload.Pgbench.Scale = 10
	cand.Runs[1].Spec.Workload.Image = "postgres:18"
	if _, err := Build(base, cand, Options{}); err != nil {
		t.Errorf("image differs: %v", err)
	}
}

func TestRenderers(t *testing.T) {
	base, cand := sides()
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, rep, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "STANDARD-V3") || !strings.Contains(b.String(), "Better") || !strings.Contains(b.String(), "clients=20") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	_ = Render(&b, rep, "markdown")
	if !strings.Contains(b.String(), "| Step | Metric |") || !strings.Contains(b.String(), "v3-bad") {
		t.Errorf("markdown:\n%s", b.String())
	}
	b.Reset()
	_ = Render(&b, rep, "csv")
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 5 || rows[0][0] != "step" || len(rows[1]) != len(rows[0]) {
		t.Errorf("csv: %v %v", err, rows)
	}
	b.Reset()
	if err := Render(&b, rep, "json"); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Rows) != 4 || back.Rows[0].Verdict != rep.Rows[0].Verdict {
		t.Errorf("json round trip: %v", err)
	}
	b.Reset()
	if err := Render(&b, rep, "html"); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Count(html, "<svg") < 2 || strings.Contains(html, "<script src") || strings.Contains(html, "http://") && !strings.Contains(html, "http://www.w3.org/2000/svg") {
		t.Errorf("html: want at least the throughput and a latency chart, self-contained")
	}
	if err := Render(&b, rep, "yaml"); err == nil {
		t.Error("unknown format accepted")
	}
}

// An unbounded interval (too few repetitions) is null in JSON, not an error.
func TestJSONWithUnboundedInterval(t *testing.T) {
	base, cand := sides()
	base.Runs, cand.Runs = base.Runs[:2], cand.Runs[:2]
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(raw), `"ciLowPercent":null`) {
		t.Errorf("json: %v %.300s", err, raw)
	}
}
