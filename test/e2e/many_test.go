package e2e

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

const manyRunYAML = `---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: many-%03d
spec:
  repetitions: 2
  allowSharedNodes: true
  target:
    external: {host: 127.0.0.1, port: %d}
  workload:
    redisBenchmark: {tests: [get], requests: 5000, clients: [4], pipeline: [1], keySpace: 1000}
    placement:
      nodeSelector: {pool: loadgen}
  telemetry: {pollInterval: 1s}
  validity: {maxLoadGeneratorCPUPercent: 100}
`

// TestManyShortRunsKeepEveryMeasurement: a few hundred short runs at once
// on the local cluster (DBPERF_MANY_RUNS, default 100, 200 in make chaos; redis-benchmark
// against the local redis-server, 2 repetitions each, with the server's
// statistics polled by every load generator and the kubelet source
// sampling every measurement through the API server every second), while
// the chaos scenario (chaos_test.go) runs beside them on the same cluster:
// sweeps with repetitions, a comparison and a schedule in flight, the
// manager killed with SIGKILL at random moments DBPERF_CHAOS_KILLS times
// (default 10) and replaced, a load generator's runner and an external
// target's server killed mid-measurement. Afterwards every run has ended,
// every measurement is in its status once and in its results document,
// status carries what the document stores, no telemetry figure is attached
// twice, no Job was ever created twice, nothing outlives its run's cleanup
// policy, and the comparison and the schedule agree with their runs.
//
// The full form (50 kills, 200 runs, 12 to 15 minutes here): make chaos.
func TestManyShortRunsKeepEveryMeasurement(t *testing.T) {
	n := 100 // make chaos: 200
	if v, err := strconv.Atoi(os.Getenv("DBPERF_MANY_RUNS")); err == nil && v > 0 {
		n = v
	}
	kills := chaosKills()
	// A kill costs about 5 s without a manager (the lease), 3 s of a
	// manager, and a run to finish afterwards.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute+time.Duration(kills)*20*time.Second)
	defer cancel()
	cores := strconv.Itoa(runtime.NumCPU())
	pools := []sim.Pool{{Name: "loadgen", Nodes: 4, InstanceType: "local", CPUModel: "local", Arch: "amd64", CPU: cores, Memory: "64Gi",
		Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"}, chaosPool}
	e := startTelemetryStack(ctx, t, "many", pools,
		[]string{"telemetry.resources=kubelet"},
		append([]string{"--telemetry-resources=kubelet", "--telemetry-sampling-interval=1s"}, chaosLeaseArgs...))
	c := e.stack.Cluster
	if out, err := c.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	jobs := watchJobs(ctx, t, c)
	rig := startChaos(ctx, t, e, dyn)
	var manifest strings.Builder
	for i := range n {
		fmt.Fprintf(&manifest, manyRunYAML, i, e.port)
	}
	began := time.Now()
	if out, err := c.Kubectl(ctx, strings.NewReader(manifest.String()), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%.2000s", err, out)
	}
	chaosCtx, stopChaos := context.WithCancel(ctx)
	chaosDone := make(chan struct{})
	go func() { rig.run(chaosCtx, kills); close(chaosDone) }()
	// The watchdog goes on after the kills, while the runs settle: a
	// manager that loses its lease then is restarted too.
	guarded := rig.guard(chaosCtx)
	// Runs before the stack stops (cleanups run last first), should the
	// test end early: the kills and the watchdog use the stack's manager.
	t.Cleanup(func() { stopChaos(); <-chaosDone; <-guarded })
	list := func() ([]benchv1.BenchmarkRun, int, error) {
		all, err := listRuns(ctx, dyn)
		var many []benchv1.BenchmarkRun
		ended := 0
		for _, r := range all {
			if !strings.HasPrefix(r.Name, "many-") {
				continue
			}
			many = append(many, r)
			if r.Status.Phase.Terminal() {
				ended++
			}
		}
		return many, ended, err
	}
	var runs []benchv1.BenchmarkRun
	testutil.Eventually(t, 7*time.Minute+time.Duration(kills)*10*time.Second, "every run ending", func() error {
		var ended int
		var err error
		if runs, ended, err = list(); err != nil {
			return err
		}
		if ended < n {
			return fmt.Errorf("%d of %d runs ended", ended, n)
		}
		return nil
	})
	took := time.Since(began)

	phases := map[benchv1.Phase]int{}
	measurements, sampled, polled := 0, 0, 0
	for i := range runs {
		run := &runs[i]
		phases[run.Status.Phase]++
		if run.Status.Phase == benchv1.PhaseFailed {
			t.Errorf("%s: Failed: %s", run.Name, conditionsOf(run))
			continue
		}
		doc, err := runDocument(ctx, c, run)
		if err != nil {
			t.Errorf("%s: no results document: %v", run.Name, err)
			continue
		}
		status := run.Status.Steps[0].Repetitions
		if len(status) != 2 || len(doc.Steps[0].Repetitions) != 2 {
			t.Errorf("%s: %d measurements in status, %d in the document, want 2", run.Name, len(status), len(doc.Steps[0].Repetitions))
			continue
		}
		for k, rs := range status {
			dr := doc.Steps[0].Repetitions[k]
			if rs.Index != int32(k+1) || dr.Index != rs.Index || dr.Result == nil {
				t.Errorf("%s: measurement %d: status index %d, document index %d, result %v", run.Name, k+1, rs.Index, dr.Index, dr.Result != nil)
				continue
			}
			measurements++
			stored := map[results.Key]float64{}
			count := map[results.Key]int{}
			for _, m := range dr.Result.Metrics {
				stored[m.Key()] = m.Value
				if m.IsTelemetry() {
					count[m.Key()]++
				}
			}
			for key, c := range count {
				if c != 1 {
					t.Errorf("%s #%d: %s attached %d times", run.Name, rs.Index, key, c)
				}
			}
			for _, m := range rs.Metrics {
				if v, ok := stored[results.Key{Name: m.Name, Operation: m.Operation}]; !ok || v != m.Value {
					t.Errorf("%s #%d: status has %s[%s]=%v, the document %v (%v)", run.Name, rs.Index, m.Name, m.Operation, m.Value, v, ok)
				}
			}
			if count[results.Key{Name: "serverCPUCores", Operation: "server"}] == 1 {
				polled++
			}
			if hasPrefixKey(keyStrings(count), "cpuCores[loadgen/") {
				sampled++
			} else if !strings.Contains(strings.Join(dr.Result.Warnings, "; "), "kubelet telemetry:") {
				t.Errorf("%s #%d: neither kubelet figures nor a warning saying why: %q", run.Name, rs.Index, dr.Result.Warnings)
			}
		}
	}
	t.Logf("%d runs, %d measurements in %s (%.1f runs/s) beside the chaos scenario: phases %v; %d measurements with the server's statistics, %d with kubelet figures (the rest say why)",
		n, measurements, took.Round(time.Second), float64(n)/took.Seconds(), phases, polled, sampled)
	if measurements != 2*n {
		t.Errorf("%d measurements recorded, want %d", measurements, 2*n)
	}
	if polled < n {
		t.Errorf("only %d of %d measurements carry the server's statistics", polled, 2*n)
	}
	<-chaosDone
	rig.finish(ctx, t, jobs)
}

func keyStrings(m map[results.Key]int) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k.String()] = true
	}
	return out
}
