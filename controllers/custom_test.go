package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// linesOutput is what a custom tool prints in the line format: its
// throughput and the histogram of its GET latencies (µs).
func linesOutput(t *testing.T, opsPerSecond float64, latencies ...int64) (string, *hdr.Histogram) {
	t.Helper()
	h := results.NewHistogram()
	for _, v := range latencies {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("# dbperf-lines v1\nmetric opsPerSecond - %g ops/s HigherIsBetter\nhistogram GET us %s\n", opsPerSecond, enc), h
}

func spread(from, n, step int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)*step
	}
	return out
}

// A custom workload through the operator: its sweep makes a Job per step,
// each of two load generators held at the start barrier. The Job runs the
// user's image and command with the step's value for the placeholder,
// hands the runner the parser configuration the files ConfigMap holds, and
// polls the statistics of the database the spec names. Each generator's
// output, parsed by the real runner with that configuration, merges into
// the step's result: throughputs add, and the p99 comes from the merged
// histograms.
func TestCustomWorkloadSweepsAndMergesParallelGenerators(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "custom-2gen"}, Spec: benchv1.BenchmarkRunSpec{
		Target: kit.ExternalDB(),
		Workload: benchv1.WorkloadSpec{Parallelism: 2, Image: "registry.example/bench:1",
			Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "loadgen"}},
			Custom: &benchv1.CustomWorkload{
				Command: []string{"bench"}, Args: []string{"--clients", "{{clients}}"},
				Parameters: []benchv1.CustomParameter{{Name: "clients", Values: []int32{4, 8}}},
				Format:     benchv1.CustomLines, PrimaryMetric: benchv1.CustomMetricKey{Name: "opsPerSecond"},
				Database: benchv1.CustomPostgres,
			}},
	}}
	h.Create(run)
	type generator struct {
		ops  float64
		from int64 // latencies from this many µs, 1000 of them 1 µs apart
	}
	generators := []generator{{1000, 100}, {2000, 5000}}
	for step, clients := range []string{"4", "8"} {
		job := h.WaitJob(specs.MeasureJobName(h.Run(run.Name), step, 1))
		c := job.Spec.Template.Spec.Containers[0]
		args := strings.Join(c.Args, " ")
		if c.Image != "registry.example/bench:1" || !strings.HasSuffix(args, " -- bench --clients "+clients) ||
			!strings.Contains(args, "--parser-config /etc/dbperf/workload/custom-parser.json") || !strings.Contains(args, "--server-statistics postgres ") {
			t.Fatalf("step %d: image %s, runner args %s", step, c.Image, args)
		}
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "DBPERF_TARGET_HOST" && e.Value == "db" }) {
			t.Errorf("step %d: env %+v", step, c.Env)
		}
		var files corev1.ConfigMap
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: specs.FilesConfigMapName(h.Run(run.Name))}, &files); err != nil {
			t.Fatal(err)
		}
		config := []byte(files.Data["custom-parser.json"])
		pods := []*corev1.Pod{h.Pod(job, 0, node, kit.Running()), h.Pod(job, 1, node, kit.Running())}
		testutil.Eventually(t, 10*time.Second, "start instant on both pods", func() error {
			if a, b := podAnnotation(t, h, pods[0].Name), podAnnotation(t, h, pods[1].Name); a == "" || a != b {
				return fmt.Errorf("annotations %q %q", a, b)
			}
			return nil
		})
		for i, pod := range pods {
			out, _ := linesOutput(t, generators[i].ops, spread(generators[i].from, 1000, 1)...)
			endCustomPod(t, h, pod, out, config)
		}
	}
	done := h.WaitPhase(run.Name, 30*time.Second, benchv1.PhaseSucceeded)
	_, a := linesOutput(t, 0, spread(generators[0].from, 1000, 1)...)
	_, b := linesOutput(t, 0, spread(generators[1].from, 1000, 1)...)
	merged := results.NewHistogram()
	merged.Merge(a)
	merged.Merge(b)
	want := map[string]float64{"opsPerSecond": 3000, "latencyP99Millis[GET]": float64(merged.ValueAtPercentile(99)) / 1000}
	if len(done.Status.Steps) != 2 {
		t.Fatalf("steps %+v", done.Status.Steps)
	}
	for _, s := range done.Status.Steps {
		got := map[string]float64{}
		for _, m := range s.Repetitions[0].Metrics {
			got[results.Key{Name: m.Name, Operation: m.Operation}.String()] = m.Value
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %v, want %v (metrics %v)", s.Name, k, got[k], v, got)
			}
		}
	}
	if p := done.Status.Primary; p == nil || p.Name != "opsPerSecond" || p.Value != 3000 {
		t.Errorf("primary %+v", p)
	}
}

// endCustomPod runs the real runner with the run's parser configuration on
// a custom tool's output and reports the pod's load generator ended.
func endCustomPod(t *testing.T, h *harness, pod *corev1.Pod, output string, config []byte) {
	t.Helper()
	res := h.End(pod, "custom", runner.Options{Command: []string{"cat", kit.WriteTemp(t, output)}, ParserConfig: config})
	if res.Verdict != results.Succeeded {
		t.Fatalf("%s: %s %v", pod.Name, res.Verdict, res.Reasons)
	}
}
