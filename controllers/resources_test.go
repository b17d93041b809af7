package controllers

import (
	"context"
	"sync/atomic"

	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/resources"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// hostKubelet answers every node's statistics with this machine's busy CPU
// time from /proc/stat (the tool and the server run on it) for the node and
// for every pod asked about: real counters, read at each poll (counted in
// polls, when set).
type hostKubelet struct {
	pods  []stats.PodReference
	polls *atomic.Int32
}

func (k hostKubelet) Summary(_ context.Context, node string) (*stats.Summary, error) {
	if k.polls != nil {
		k.polls.Add(1)
	}
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	var ticks uint64
	for i, f := range strings.Fields(line)[1:] {
		v, _ := strconv.ParseUint(f, 10, 64)
		if i != 3 && i != 4 { // all but idle and iowait
			ticks += v
		}
	}
	nanos := ticks * 1e7 // USER_HZ ticks
	now := metav1.Now()
	sum := &stats.Summary{Node: stats.NodeStats{NodeName: node, CPU: &stats.CPUStats{Time: now, UsageCoreNanoSeconds: &nanos}}}
	for _, p := range k.pods {
		sum.Pods = append(sum.Pods, stats.PodStats{PodRef: p, CPU: &stats.CPUStats{Time: now, UsageCoreNanoSeconds: &nanos}})
	}
	return sum, nil
}

// refuseFirstRecord refuses, with a conflict, the first status write that
// records a measurement, after writing the run's metadata as another client
// would have: the next reconcile computes the outcome again. (A conflict
// without a newer version would bring no watch event, and the controller,
// rightly, waits for one.)
type refuseFirstRecord struct {
	mu      sync.Mutex
	refused int
}

func (r *refuseFirstRecord) wrap(c client.Client) client.Client {
	return kit.Intercept(c, interceptor.Funcs{SubResourcePatch: r.patch})
}

func (r *refuseFirstRecord) patch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if run, ok := obj.(*benchv1.BenchmarkRun); ok && len(run.Status.Steps) > 0 && len(run.Status.Steps[0].Repetitions) > 0 {
		r.mu.Lock()
		first := r.refused == 0
		if first {
			r.refused++
		}
		r.mu.Unlock()
		if first {
			// As a real conflict: someone else wrote the run in between
			// (which is also what brings the next reconcile).
			bump := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"test.dbperf.io/conflict":"1"}}}`))
			if err := c.Patch(ctx, run.DeepCopy(), bump); err != nil {
				return err
			}
			return kit.Conflict("benchmarkruns", run.Name)
		}
	}
	return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
}

// TestResourceSamplerOncePerMeasurement: with the kubelet source, the
// sampler starts once when the load generator runs, however many
// reconciles follow, and stops once when the Job ends; the first status
// write recording the measurement is refused, so the outcome is computed
// twice, and still the stored result carries each kubelet figure once, the
// status the target's CPU and the efficiency from it.
func TestResourceSamplerOncePerMeasurement(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	rd := testutil.StartRedis(t)
	refuser := &refuseFirstRecord{}
	h.wrap = refuser.wrap
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "sampled"},
		Spec: benchv1.BenchmarkRunSpec{
			Target: benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{ServerTarget: benchv1.ServerTarget{
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
			}}},
			Workload:  benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Clients: []int32{10}}},
			Telemetry: benchv1.TelemetrySpec{ServerStatistics: benchv1.TelemetryDisabled},
		},
	}
	h.Create(run)
	run = h.Run("sampled")
	target := specs.ValkeyName(run) + "-0"
	job := specs.MeasureJobName(run, 0, 1)
	polls := &atomic.Int32{}
	h.resources = resources.NewMeter(hostKubelet{polls: polls, pods: []stats.PodReference{
		{Namespace: h.NS, Name: target, UID: "t"}, {Namespace: h.NS, Name: job + "-pod", UID: "l"}}}, 200*time.Millisecond, nil, 0)
	h.RestartManager(cfg)
	markServerReady(t, h, specs.ValkeyName(run))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: target, Namespace: h.NS, Labels: specs.ServerPodLabels(run)},
		Spec: corev1.PodSpec{NodeName: "db-1", Containers: []corev1.Container{{Name: "valkey", Image: "valkey/valkey:8.1",
			Resources: run.Spec.Target.Valkey.Resources}}},
	}
	if err := k8s.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	// The load generator runs: the sampler starts, once, through every
	// reconcile the pod's and the run's changes bring.
	lg := h.StartLoadgen(h.WaitJob(job), node)
	testutil.Eventually(t, 10*time.Second, "the sampler started", func() error {
		if started, _ := h.resources.Counts(); started != 1 {
			return fmt.Errorf("%d samplers started", started)
		}
		return nil
	})
	since := kit.ReconcileCount(t, "benchmarkrun")
	for i := range 3 {
		h.Touch(lg, fmt.Sprint(i))
		h.Touch(h.Run("sampled"), fmt.Sprint(i))
	}
	// The reconciles the touches brought have run, and the sampler has
	// polled meanwhile.
	kit.WaitReconciled(t, "benchmarkrun", since)
	sampled := polls.Load()
	testutil.Eventually(t, 10*time.Second, "the sampler polling on", func() error {
		if n := polls.Load(); n < sampled+2 {
			return fmt.Errorf("%d polls", n)
		}
		return nil
	})
	tool := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "10", "-n", "20000", "-t", "set", "--csv"}
	h.End(lg, "redis-benchmark", runner.Options{Command: tool})

	run = h.WaitPhase("sampled", 30*time.Second, benchv1.PhaseSucceeded)
	if started, stopped := h.resources.Counts(); started != 1 || stopped != 1 {
		t.Errorf("samplers started %d, stopped %d: want once each", started, stopped)
	}
	refuser.mu.Lock()
	refused := refuser.refused
	refuser.mu.Unlock()
	if refused != 1 {
		t.Fatalf("the status write recording the measurement was refused %d times: the outcome was not computed twice", refused)
	}
	status := map[string]benchv1.MetricValue{}
	for _, m := range run.Status.Steps[0].Repetitions[0].Metrics {
		status[m.Name+"["+m.Operation+"]"] = m
	}
	cpu, eff := status[telemetry.FigureCPUCores+"[target]"], status[telemetry.FigureEfficiency+"[target]"]
	if cpu.Source != "kubelet" || cpu.Value <= 0 || eff.Source != "kubelet" || eff.Value <= 0 {
		t.Errorf("status lacks the target's CPU and the efficiency from the kubelet: %+v", status)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: run.Status.ResultsConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	doc, err := specs.ReadDocument(&cm)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	res := doc.Steps[0].Repetitions[0].Result
	for _, m := range res.Metrics {
		if m.Source == "kubelet" {
			seen[m.Key().String()]++
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s attached %d times", k, n)
		}
	}
	if seen["cpuCores[target/"+target+"]"] != 1 || seen["cpuCores[loadgen/"+lg.Name+"]"] != 1 {
		t.Errorf("the stored result lacks the pods' CPU: %v", seen)
	}
	t.Logf("kubelet figures %v; cpuCores[target] %.3f, efficiency %.0f %s; warnings %q", seen, cpu.Value, eff.Value, eff.Unit, res.Warnings)
}

// TestStoredResultStands: the first result stored for a measurement is the
// one kept and the one status records: a reconcile that computes the
// outcome again knowing less of it (after a lost status write or a manager
// restart, without the kubelet's samples) gets the stored result back and
// writes nothing, whether the result is under its key or already in the
// document a finish wrote.
func TestStoredResultStands(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "stands", Namespace: h.NS, UID: "0f1e2d3c-0000-4000-8000-000000000002"}}
	r := &BenchmarkRunReconciler{Client: k8s}
	run.Status.Steps = []benchv1.StepStatus{{Name: "clients=50"}} // as measure lays them out
	st := &runState{run: run}
	rich := results.New("redis-benchmark")
	rich.Add(results.Metric{Name: "opsPerSecond", Value: 1000, Unit: "ops/s", Direction: results.HigherIsBetter})
	rich.Add(results.Metric{Name: "cpuCores", Operation: "target", Value: 0.5, Unit: "cores", Direction: results.Neutral, Source: "kubelet"})
	got, err := r.storeMeasurement(ctx, st, measurement{step: 0, rep: 1}, rich)
	if err != nil || got != rich {
		t.Fatalf("first store: %v, %p", err, got)
	}
	var before corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ResultsConfigMapName(run)}, &before); err != nil {
		t.Fatal(err)
	}
	poor := results.New("redis-benchmark")
	poor.Add(results.Metric{Name: "opsPerSecond", Value: 1000, Unit: "ops/s", Direction: results.HigherIsBetter})
	poor.Warnings = []string{"kubelet statistics lost"}
	got, err = r.storeMeasurement(ctx, st, measurement{step: 0, rep: 1}, poor)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Get(results.Key{Name: "cpuCores", Operation: "target"}); !ok || len(got.Warnings) != 0 {
		t.Errorf("the second store returned %+v, not the stored result", got)
	}
	var after corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ResultsConfigMapName(run)}, &after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion {
		t.Error("the second store wrote the ConfigMap")
	}

	// A finish took the result into the document and removed its key; its
	// status write was refused, so the measurement is stored again: the
	// document's result stands, no key comes back.
	doc, err := json.Marshal(specs.Document{Steps: []specs.DocumentStep{{Name: "clients=50",
		Repetitions: []specs.DocumentRepetition{{Index: 1, Result: rich}}}}})
	if err != nil {
		t.Fatal(err)
	}
	delete(after.BinaryData, specs.MeasurementKey(0, 1))
	after.Data = map[string]string{specs.ResultsKey: string(doc)}
	if err := k8s.Update(ctx, &after); err != nil {
		t.Fatal(err)
	}
	got, err = r.storeMeasurement(ctx, st, measurement{step: 0, rep: 1}, poor)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Get(results.Key{Name: "cpuCores", Operation: "target"}); !ok || len(got.Warnings) != 0 {
		t.Errorf("a store after the finish returned %+v, not the document's result", got)
	}
	var last corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ResultsConfigMapName(run)}, &last); err != nil {
		t.Fatal(err)
	}
	if _, back := last.BinaryData[specs.MeasurementKey(0, 1)]; back || last.ResourceVersion != after.ResourceVersion {
		t.Error("a store after the finish wrote the measurement's key again")
	}
}
