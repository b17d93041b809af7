package controllers

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// A run's status stays storable whatever its measurements bring: at most
// benchv1.MaxMeasurements of them, each with every headline metric and
// telemetry figure a tool gives, thousands of reasons, values near the
// largest float64, verdicts and directions the API does not know. etcd
// keeps an object of at most 1.5 MiB; the API server refuses a status
// with an infinity (it has no JSON form) or a value outside an enum.
func TestStatusOfAnyRunIsStorable(t *testing.T) {
	rich := func(i int) *results.Result {
		r := results.New("memtier")
		r.Primary = results.Key{Name: "opsPerSecond", Operation: "Totals"}
		for j := range 20 {
			r.Add(results.Metric{Name: fmt.Sprintf("latencyP%dMillis", j), Operation: "Totals", Value: float64(i + j), Unit: "ms", Direction: results.LowerIsBetter})
		}
		r.Add(results.Metric{Name: "opsPerSecond", Operation: "Totals", Value: 1000 + float64(i), Unit: "ops/s", Direction: results.HigherIsBetter})
		for _, k := range []string{"cpuCores", "cpuLimitPercent", "memoryWorkingSetBytesMax", "networkReceiveBytesPerSecond"} {
			r.Add(results.Metric{Name: k, Operation: "target", Value: 1.5, Unit: "x", Direction: results.Neutral, Source: "kubelet"})
		}
		return r
	}
	cases := map[string]struct {
		steps, reps int
		result      func(i int) *results.Result
	}{
		"1000 steps, one repetition each": {1000, 1, rich},
		"10 steps, 100 repetitions":       {10, 100, rich},
		"a 16 × 16 grid, 3 repetitions":   {256, 3, rich},
		"thousands of reasons": {4, 3, func(i int) *results.Result {
			r := rich(i)
			for j := range 5000 {
				r.Invalidate("interval %d: %s", j, strings.Repeat("r", 200))
			}
			return r
		}},
		"values near the largest float64": {2, 3, func(i int) *results.Result {
			r := rich(i)
			r.Metrics[20].Value = 1.7e308
			r.LoadGenerator = &results.LoadGenerator{CPUPercent: 1e308, Source: "cgroup"}
			return r
		}},
		"a verdict and a direction the API does not know": {1, 2, func(i int) *results.Result {
			r := rich(i)
			r.Verdict, r.Metrics[0].Direction = "Bogus", "Sideways"
			return r
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("r", 253)}, Spec: benchv1.BenchmarkRunSpec{Repetitions: int32(tc.reps)}}
			steps := make([]workloads.Step, tc.steps)
			for s := range steps {
				steps[s] = workloads.Step{Name: fmt.Sprintf("threads=%d,pipeline=%d", s/16+1, s%16+1), Params: map[string]int32{"threads": int32(s/16 + 1), "pipeline": int32(s%16 + 1)}}
			}
			initSteps(run, steps)
			now := metav1.Now()
			for i, u := range measurements(tc.steps, tc.reps) {
				recordMeasurement(run, u, fmt.Sprintf("%s-s%d-r%d", run.Name[:40], u.step, u.rep),
					&outcome{result: tc.result(i), node: "node-" + strings.Repeat("n", 40), started: &now, finished: &now})
			}
			raw, err := json.Marshal(run)
			if err != nil {
				t.Fatalf("status cannot be written: %v", err)
			}
			if len(raw) > 1<<20 {
				t.Errorf("the run is %d bytes, over 1 MiB", len(raw))
			}
			for _, s := range run.Status.Steps {
				for _, rep := range s.Repetitions {
					if len(rep.Reasons) > maxStatusReasons+1 || (rep.Verdict != benchv1.VerdictSucceeded && rep.Verdict != benchv1.VerdictFailed && rep.Verdict != benchv1.VerdictInvalid) {
						t.Fatalf("repetition %d of %s: verdict %q, %d reasons", rep.Index, s.Name, rep.Verdict, len(rep.Reasons))
					}
					if len(rep.Metrics) == 0 || rep.Metrics[0].Name != "opsPerSecond" {
						t.Fatalf("repetition %d of %s keeps %d metrics, the primary first: %+v", rep.Index, s.Name, len(rep.Metrics), rep.Metrics)
					}
					for _, m := range rep.Metrics {
						if m.Direction != benchv1.HigherIsBetter && m.Direction != benchv1.LowerIsBetter && m.Direction != benchv1.Neutral {
							t.Fatalf("metric %s: direction %q", m.Name, m.Direction)
						}
					}
				}
			}
			t.Logf("%d measurements: %d KiB", tc.steps*tc.reps, len(raw)>>10)
		})
	}
}
