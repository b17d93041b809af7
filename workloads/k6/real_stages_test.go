package k6

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// TestRealK6StagesAreReportedAsSteps: the real k6 ramps 2 → 8 → 8 virtual
// users (k6's --stage, from spec.workload.k6.stages) against a server of 4
// workers × 5 ms; the measurement reports each stage as if it were a step,
// from the samples that fell in it: throughput, error share, percentiles
// from the stage's own histogram, APDEX. The first stage (at most 2 users,
// one request each at a time) cannot pass the server's 4 workers and
// queues nothing; the last holds 8 users on 4 workers, so half of them
// wait a service time: more throughput, and p99 above the first stage's.
// Two generators splitting the ramp (execution segments) merge stage by
// stage: requests add up, percentiles from the merged histograms.
func TestRealK6StagesAreReportedAsSteps(t *testing.T) {
	k6 := testutil.NeedEnv(t, "K6")
	srv := newKneeServer(t, 4, 5*time.Millisecond)
	script := `import http from 'k6/http';
export default function () {
  http.get('http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT + '/');
}`
	spec := &benchv1.WorkloadSpec{K6: &benchv1.K6Workload{Script: script, Stages: []benchv1.K6Stage{
		{Duration: metav1.Duration{Duration: 2 * time.Second}, Target: 2},
		{Duration: metav1.Duration{Duration: 2 * time.Second}, Target: 8},
		{Duration: metav1.Duration{Duration: 2 * time.Second}, Target: 8},
	}}}
	apdex := map[string]time.Duration{results.AllOperations: 10 * time.Millisecond}
	run := func(generators int) *results.Result {
		spec.Parallelism = int32(generators)
		inv := K6{}.Run(spec, srv.ep, K6{}.Steps(spec)[0])
		if len(inv.Stages) != 3 || inv.Stages[2].End != 6*time.Second || !strings.Contains(strings.Join(inv.Command, " "), "--stage 2s:2 --stage 2s:8 --stage 2s:8") {
			t.Fatalf("stages %+v in %q", inv.Stages, inv.Command)
		}
		parts := make([]*results.Result, generators)
		done := make(chan int)
		for i := range generators {
			dir := t.TempDir()
			for name, content := range inv.Files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			go func() {
				defer func() { done <- i }()
				var out bytes.Buffer
				parts[i] = runner.Exec(context.Background(), runner.Options{Parser: K6{}, Command: localCommand(runner.ForGenerator(inv.Command, i, generators), k6, dir, ""),
					Stdout: &out, ResultFiles: []string{filepath.Join(dir, "k6-summary.json")}, Timeout: time.Minute,
					SampleStream: localPath(inv.SampleStream, dir), Samples: workloads.SampleOptions{Metrics: inv.Metrics, Stages: inv.Stages, APDEX: apdex}})
				if parts[i].Verdict != results.Succeeded {
					t.Errorf("generator %d: %s %v\n%s", i, parts[i].Verdict, parts[i].Reasons, out.String())
				}
			}()
		}
		for range generators {
			<-done
		}
		if t.Failed() {
			t.FailNow()
		}
		return results.Merge(parts)
	}
	for _, generators := range []int{1, 2} {
		r := run(generators)
		if len(r.Stages) != 3 {
			t.Fatalf("%d generators: %d stages: %+v", generators, len(r.Stages), r.Stages)
		}
		fig := func(i int, name string) float64 {
			m, ok := r.Stages[i].Get(name)
			if !ok {
				t.Fatalf("stage %s has no %s: %+v", r.Stages[i].Name, name, r.Stages[i].Metrics)
			}
			return m.Value
		}
		total, _ := r.Get(results.Key{Name: "requests"})
		sum := 0.0
		for i, st := range r.Stages {
			sum += fig(i, results.StageRequests)
			t.Logf("%d generators: %s %.0f-%.0f s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, APDEX %.3f, errors %.2f %%", generators, st.Name, st.FromSeconds, st.ToSeconds,
				fig(i, "requestsPerSecond"), fig(i, "latencyP50Millis"), fig(i, "latencyP99Millis"), fig(i, "apdex"), fig(i, "errorPercent"))
		}
		if r.Stages[0].Name != "stage 1 (to 2 VUs)" || r.Stages[2].FromSeconds != 4 || r.Stages[2].ToSeconds != 6 {
			t.Errorf("stage names and bounds: %+v", r.Stages)
		}
		if tput1, tput3 := fig(0, "requestsPerSecond"), fig(2, "requestsPerSecond"); tput3 < 2*tput1 {
			t.Errorf("stage 3 (8 users) %.0f req/s, stage 1 (ramping to 2) %.0f: want more than twice", tput3, tput1)
		}
		if p1, p3 := fig(0, "latencyP99Millis"), fig(2, "latencyP99Millis"); p3 <= p1 {
			t.Errorf("p99: stage 3 (8 users on 4 workers) %.2f ms, stage 1 %.2f ms: want it higher", p3, p1)
		}
		// Every request in some stage, but those of k6's graceful stop.
		if total.Value > 0 && (sum > total.Value || sum < 0.95*total.Value) {
			t.Errorf("the stages hold %.0f of %.0f requests", sum, total.Value)
		}
	}
}
