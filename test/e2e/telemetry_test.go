package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

const kubeletRunYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: valkey-kubelet
spec:
  repetitions: 1
  target:
    valkey:
      resources:
        limits: {cpu: "%d"}
    placement:
      nodeSelector: {pool: db}
  workload:
    redisBenchmark: {tests: [set], requests: %d, clients: [20], pipeline: [1], keySpace: 1000}
    placement:
      nodeSelector: {pool: loadgen}
`

// TestRunReportsTargetCPUFromTheKubelets: the operator installed with
// telemetry.resources=kubelet (its nodes/proxy role from the chart, the
// manager acting as the chart's ServiceAccount with
// --telemetry-resources=kubelet) runs redis-benchmark against a Valkey
// target whose pod is played by a real redis-server: the executor moves the
// server into the pod's cgroup, the sampler reads the node's /stats/summary
// through the API server's node proxy. The run's status carries the
// target's cpuCores from the kubelet, which must agree within 20 % with the
// server's CPU over the measurement's window from /proc/<pid>/stat, and the
// efficiency per target core.
func TestRunReportsTargetCPUFromTheKubelets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cores := strconv.Itoa(runtime.NumCPU())
	pools := []sim.Pool{
		{Name: "db", Nodes: 1, InstanceType: "local", CPUModel: "local", Arch: "amd64", CPU: cores, Memory: "8Gi", Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"},
		{Name: "loadgen", Nodes: 1, InstanceType: "local", CPUModel: "local", Arch: "amd64", CPU: cores, Memory: "8Gi", Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"},
	}
	e := startTelemetryStack(ctx, t, "kubelet", pools,
		[]string{"telemetry.resources=kubelet"},
		[]string{"--telemetry-resources=kubelet", "--telemetry-sampling-interval=1s"})
	c, redis, port, cpu := e.stack.Cluster, e.redis, e.port, e.cpu

	// The target's Service (made by the operator) leads to the local
	// server: the executor forwards to it and adopts it into the pod.
	if out, err := c.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const limitCores, requests = 2, 200000
	if out, err := c.Kubectl(ctx, strings.NewReader(fmt.Sprintf(kubeletRunYAML, limitCores, requests)), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	run, err := getRun(ctx, dyn, "valkey-kubelet")
	if err != nil {
		t.Fatal(err)
	}
	svc := specs.ValkeyName(run)
	testutil.Eventually(t, time.Minute, "the target's Service pointed at the local server", func() error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"127.0.0.1:%d"}}}`, executor.BackendAnnotation, port)
		_, err := c.Clientset.CoreV1().Services(ns).Patch(ctx, svc, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})

	proxyBefore := nodeProxyRequests(ctx, t, c)
	testutil.Eventually(t, 90*time.Second, "the run finished", func() error {
		if gone, err := e.stack.Manager.Exited(); gone {
			t.Fatalf("the manager exited: %v", err)
		}
		if run, err = getRun(ctx, dyn, "valkey-kubelet"); err != nil {
			return err
		}
		if !run.Status.Phase.Terminal() {
			return fmt.Errorf("phase %s (%s)", run.Status.Phase, conditionsOf(run))
		}
		return nil
	})
	if run.Status.Phase != benchv1.PhaseSucceeded {
		t.Fatalf("the run ended %s: %s; steps %s", run.Status.Phase, conditionsOf(run), mustJSON(run.Status.Steps))
	}
	doc, err := runDocument(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	res := doc.Steps[0].Repetitions[0].Result
	if res == nil || res.StartTime == nil || res.EndTime == nil {
		t.Fatalf("the stored result has no window: %s", mustJSON(res))
	}
	t.Logf("warnings: %q", res.Warnings)

	// Status: the target's CPU and the efficiency, from the kubelet.
	status := map[string]benchv1.MetricValue{}
	for _, m := range run.Status.Steps[0].Repetitions[0].Metrics {
		status[m.Name+"["+m.Operation+"]"] = m
	}
	got, ok := status[telemetry.FigureCPUCores+"[target]"]
	if !ok || got.Source != "kubelet" {
		t.Fatalf("status has no cpuCores[target] from the kubelet: %s", mustJSON(status))
	}
	want := cpu.over(t, *res.StartTime, *res.EndTime)
	d := (got.Value - want) / want
	t.Logf("window %s..%s (%.1f s): target cpuCores %.4f from the kubelets through the API server's node proxy, redis-server /proc/%d/stat %.4f (%+.1f %%)",
		res.StartTime.Format("15:04:05.000"), res.EndTime.Format("15:04:05.000"), res.EndTime.Sub(*res.StartTime).Seconds(), got.Value, redis.Process.Pid, want, 100*d)
	if want < 0.1 {
		t.Fatalf("redis-server used %.3f cores over the window: the load did not reach it", want)
	}
	if d > 0.2 || d < -0.2 {
		t.Errorf("cpuCores[target] %.4f is %+.1f %% off /proc's %.4f", got.Value, 100*d, want)
	}
	eff, ok := status[telemetry.FigureEfficiency+"[target]"]
	primary, _ := res.Get(res.Primary)
	if !ok || eff.Source != "kubelet" || eff.Value <= 0 {
		t.Errorf("status has no efficiencyPerTargetCore from the kubelet's CPU: %s", mustJSON(status))
	} else if r := eff.Value * got.Value / primary.Value; r < 0.999 || r > 1.001 {
		t.Errorf("efficiency %.1f is not %s %.1f per %.4f cores", eff.Value, primary.Name, primary.Value, got.Value)
	}
	if pct, ok := status[telemetry.FigureCPULimitPercent+"[target]"]; !ok || pct.Value <= 0 {
		t.Errorf("no cpuLimitPercent[target] of the %d-core limit: %s", limitCores, mustJSON(status))
	} else {
		t.Logf("cpuLimitPercent[target] %.1f %% of %d cores; efficiency %.0f %s", pct.Value, limitCores, eff.Value, eff.Unit)
	}
	stored := map[string]bool{}
	for _, m := range res.Metrics {
		if m.Source == "kubelet" {
			if stored[m.Key().String()] {
				t.Errorf("%s attached twice", m.Key())
			}
			stored[m.Key().String()] = true
		}
	}
	for _, k := range []string{"cpuCores[loadgen/", "cpuBusyPercent[node/db-0]", "cpuBusyPercent[node/loadgen-0]"} {
		if !hasPrefixKey(stored, k) {
			t.Errorf("no %s… figure in the stored result: %v", k, stored)
		}
	}

	// The API requests the kubelet source added: one node-proxy request
	// per node per round, from the API server's own request counter.
	proxied := nodeProxyRequests(ctx, t, c) - proxyBefore
	window := res.EndTime.Sub(*res.StartTime).Seconds()
	t.Logf("API requests added by the kubelet source for this measurement: %.0f node-proxy requests (2 nodes, 1 s rounds, %.1f s window: %.2f per node-second)",
		proxied, window, proxied/2/window)
	if proxied < 2*window*0.5 || proxied > 2*(window+30)*1.5 {
		t.Errorf("%.0f node-proxy requests for 2 nodes sampled every second over %.1f s", proxied, window)
	}

	killTargetMidMeasurement(ctx, t, e, dyn)
}

// nodeProxyRequests reads the API server's count of node-proxy requests
// from its own /metrics (apiserver_request_total counts them under the
// verb CONNECT).
func nodeProxyRequests(ctx context.Context, t *testing.T, c *sim.Cluster) float64 {
	t.Helper()
	raw, err := c.Clientset.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("the API server's metrics: %v", err)
	}
	var n float64
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `resource="nodes"`) &&
			strings.Contains(line, `subresource="proxy"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += v
		}
	}
	return n
}

const killedRunYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: valkey-killed
spec:
  target:
    valkey: {}
    placement:
      nodeSelector: {pool: db}
  workload:
    redisBenchmark: {tests: [set], requests: 3000000, clients: [20], pipeline: [1], keySpace: 1000}
    placement:
      nodeSelector: {pool: loadgen}
  telemetry: {pollInterval: 1s}
`

// killTargetMidMeasurement: the target's server process is killed (SIGKILL)
// in the middle of a measurement and started again on the same port, as
// the kubelet restarts a container. The measurement is never a trusted
// number: the run ends Failed or Invalid, and the repetition's reasons
// name the restart the statistics poller saw (Redis's run_id changed).
func killTargetMidMeasurement(ctx context.Context, t *testing.T, e *telemetryStack, dyn dynamic.Interface) {
	c := e.stack.Cluster
	if out, err := c.Kubectl(ctx, strings.NewReader(killedRunYAML), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run, err := getRun(ctx, dyn, "valkey-killed")
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, time.Minute, "the killed run's Service pointed at the local server", func() error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"127.0.0.1:%d"}}}`, executor.BackendAnnotation, e.port)
		_, err := c.Clientset.CoreV1().Services(ns).Patch(ctx, specs.ValkeyName(run), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	})
	// Well into the measurement: the server has served a good share of it.
	before := commandsProcessed(t, e.port)
	testutil.Eventually(t, time.Minute, "the measurement under way", func() error {
		if n := commandsProcessed(t, e.port); n < before+200000 {
			return fmt.Errorf("%d commands so far", n-before)
		}
		return nil
	})
	server := e.redis.Path
	_ = e.redis.Process.Kill()
	_ = e.redis.Wait()
	e.redis = exec.Command(server, "--port", strconv.Itoa(e.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := e.redis.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed redis-server mid-measurement and started it again (pid %d)", e.redis.Process.Pid)
	run = waitEnded(ctx, t, dyn, "valkey-killed", 90*time.Second)
	rep := run.Status.Steps[0].Repetitions[0]
	t.Logf("the killed run: phase %s, repetition %s: %q", run.Status.Phase, rep.Verdict, rep.Reasons)
	if run.Status.Phase == benchv1.PhaseSucceeded || rep.Verdict == benchv1.VerdictSucceeded {
		t.Errorf("a measurement across a killed server is %s / %s", run.Status.Phase, rep.Verdict)
	}
	if why := strings.Join(rep.Reasons, "; "); !strings.Contains(why, "restarted") {
		t.Errorf("the repetition's reasons do not name the server's restart: %s", why)
	}
}

// commandsProcessed is the local redis-server's count of commands.
func commandsProcessed(t *testing.T, port int) int {
	t.Helper()
	out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "info", "stats").Output()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// telemetryStack is what the telemetry end-to-end tests share: the stack
// up with the operator's chart values and manager flags, and a real
// redis-server to play the target's pod, whose CPU is recorded from
// /proc/<pid>/stat.
type telemetryStack struct {
	stack *sim.Stack
	redis *exec.Cmd
	port  int
	cpu   *procCPU
}

// startTelemetryStack builds the manager and the runner, starts
// redis-server and the stack; everything stops with the test, and the
// components' log ends in the test's log when it fails.
func startTelemetryStack(ctx context.Context, t *testing.T, name string, pools []sim.Pool, helmSets, managerArgs []string) *telemetryStack {
	t.Helper()
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	if os.Geteuid() != 0 {
		t.Skip("needs root: the executor moves the server into the target pod's cgroup, and the nodes' address is added to lo")
	}
	server, err := localdb.Tool("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	work, logf := workDir(t, "dbperf-e2e-"+name+"-")
	bins := t.TempDir()
	manager := build(t, bins, "./cmd/manager", "manager")
	runner := build(t, bins, "./cmd/runner", "dbperf-runner")

	e := &telemetryStack{}
	if e.port, err = localdb.FreePort(); err != nil {
		t.Fatal(err)
	}
	e.redis = exec.Command(server, "--port", strconv.Itoa(e.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := e.redis.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.redis.Process.Kill(); _ = e.redis.Wait() })
	if err := localdb.WaitForPort(e.port, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	e.cpu = &procCPU{pid: e.redis.Process.Pid}
	go e.cpu.record(ctx, 100*time.Millisecond)

	e.stack, err = sim.Up(ctx, sim.StackOptions{
		Name: fmt.Sprintf("e2e-%s-%d", name, os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart: filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), Manager: manager, Runner: runner,
		Pools: pools, Log: logf, Progress: func(s string) { t.Log(s) },
		HelmSets: helmSets, ManagerArgs: managerArgs,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.stack.Stop)
	c := e.stack.Cluster
	t.Logf("nodes' address %s, kubelet endpoint %s", c.NodeAddr, c.KubeletAddr())
	if c.NodeAddr == "127.0.0.1" {
		t.Fatal("the nodes kept 127.0.0.1 (see the log): the API server's node proxy refuses it")
	}
	return e
}

func hasPrefixKey(m map[string]bool, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// procCPU records a process's CPU time (utime+stime from /proc/<pid>/stat)
// at short intervals, to read its CPU over any window afterwards.
type procCPU struct {
	pid     int
	mu      sync.Mutex
	at      []time.Time
	seconds []float64
}

func (p *procCPU) record(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if s, err := testutil.ProcessCPUSeconds(p.pid); err == nil {
			p.mu.Lock()
			p.at, p.seconds = append(p.at, time.Now()), append(p.seconds, s)
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// over is the process's mean CPU in cores between start and end, its CPU
// time interpolated between the readings around each instant.
func (p *procCPU) over(t *testing.T, start, end time.Time) float64 {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	at := func(x time.Time) float64 {
		for i := 1; i < len(p.at); i++ {
			if !p.at[i].Before(x) {
				f := x.Sub(p.at[i-1]).Seconds() / p.at[i].Sub(p.at[i-1]).Seconds()
				return p.seconds[i-1] + f*(p.seconds[i]-p.seconds[i-1])
			}
		}
		t.Fatalf("no /proc reading after %s", x)
		return 0
	}
	if len(p.at) == 0 || p.at[0].After(start) {
		t.Fatalf("no /proc reading before %s", start)
	}
	return (at(end) - at(start)) / end.Sub(start).Seconds()
}

// runDocument reads a run's results document (nil and an error when it
// has none yet).
func runDocument(ctx context.Context, c *sim.Cluster, run *benchv1.BenchmarkRun) (*specs.Document, error) {
	return runDocumentIn(ctx, c, ns, run)
}

// runDocumentIn is runDocument of a run in namespace.
func runDocumentIn(ctx context.Context, c *sim.Cluster, namespace string, run *benchv1.BenchmarkRun) (*specs.Document, error) {
	cm, err := c.Clientset.CoreV1().ConfigMaps(namespace).Get(ctx, run.Status.ResultsConfigMap, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	doc, err := specs.ReadDocument(cm)
	if err == nil && doc == nil {
		err = fmt.Errorf("%s holds no results document", cm.Name)
	}
	return doc, err
}

// waitEnded waits for a run to reach a terminal phase and returns it.
func waitEnded(ctx context.Context, t *testing.T, dyn dynamic.Interface, name string, within time.Duration) *benchv1.BenchmarkRun {
	t.Helper()
	var run *benchv1.BenchmarkRun
	testutil.Eventually(t, within, "run "+name+" ending", func() error {
		var err error
		if run, err = getRun(ctx, dyn, name); err != nil {
			return err
		}
		if !run.Status.Phase.Terminal() {
			return fmt.Errorf("phase %s (%s)", run.Status.Phase, conditionsOf(run))
		}
		return nil
	})
	return run
}
