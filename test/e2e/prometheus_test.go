package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

var cmpGVR = schema.GroupVersionResource{Group: "bench.dbperf.io", Version: "v1alpha1", Resource: "benchmarkcomparisons"}

const prometheusComparisonYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: valkey-prometheus
spec:
  baseline: standard-v3
  order: Interleaved
  runsPerVariant: 1
  template:
    repetitions: 1
    target:
      valkey:
        resources:
          limits: {cpu: "2"}
    workload:
      redisBenchmark: {tests: [set], requests: %[1]d, clients: [20], pipeline: [1], keySpace: 1000}
      placement:
        nodeSelector: {pool: loadgen}
    telemetry:
      # A machine the run names, read through Prometheus (its
      # node_exporter's series by selector), and a query of the run's own.
      hosts:
      - {name: appliance, role: application, prometheusSelector: 'job="node-exporter",instance="%[2]s"'}
      queries:
      - {name: scrapeTargetsUp, query: 'sum(up)', unit: targets}
  variants:
  - name: standard-v3
    patch: {target: {placement: {nodeSelector: {pool: standard-v3}}}}
  - name: standard-v4a
    patch: {target: {placement: {nodeSelector: {pool: standard-v4a}}}}
`

// TestComparisonReportsTargetCPUFromPrometheus: the operator installed
// with telemetry.resources=prometheus (the manager with
// --telemetry-resources=prometheus and a 5 s settle time) asks a real
// Prometheus, which scrapes the test kubelet's /metrics/cadvisor over
// HTTPS (as a cluster's kubelet job does) and a real node_exporter (once
// per simulated node, its instance label the node's name) every second.
// One BenchmarkComparison runs redis-benchmark against a Valkey target on
// pool standard-v3 and on standard-v4a, its pod played by a real
// redis-server that the executor moves into the pod's cgroup. Every run's
// cpuCores[target] comes from Prometheus and agrees within 20 % with the
// server's CPU over the window from /proc/<pid>/stat; the run has the
// efficiency per target core and its nodes' busy percent from
// node_exporter, and what the run itself asks (spec.telemetry): a host by
// its Prometheus selector and a query of its own; the comparison's report
// puts the target's CPU change on the primary metric's rows.
func TestComparisonReportsTargetCPUFromPrometheus(t *testing.T) {
	testutil.RequirePrometheus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	// Prometheus' address goes to the manager before Prometheus can start
	// (its targets are the cluster's): the port is held until then, not
	// just picked, or the cluster's start-up may take it meanwhile (CI
	// failed once: "bind: address already in use" half a minute later).
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	promAddr := hold.Addr().String()
	promURL := "http://" + promAddr
	cores := strconv.Itoa(runtime.NumCPU())
	var pools []sim.Pool
	for _, name := range []string{"standard-v3", "standard-v4a", "loadgen"} {
		pools = append(pools, sim.Pool{Name: name, Nodes: 1, InstanceType: "local", CPUModel: "local", Arch: "amd64", CPU: cores,
			Memory: "8Gi", Zones: []string{"zone-a"}, Kernel: "local", OSImage: "local"})
	}
	e := startTelemetryStack(ctx, t, "prometheus", pools,
		[]string{"telemetry.resources=prometheus", "telemetry.prometheus.url=" + promURL, "telemetry.prometheus.settleTime=5s"},
		[]string{"--telemetry-resources=prometheus", "--prometheus-url=" + promURL, "--prometheus-settle-time=5s"})
	c := e.stack.Cluster

	nodeExporter := testutil.StartNodeExporter(t)
	targets := []testutil.ScrapeTarget{{Job: "kubelet", Address: c.KubeletAddr(), MetricsPath: "/metrics/cadvisor",
		Scheme: "https", InsecureSkipVerify: true}}
	for _, p := range pools {
		targets = append(targets, testutil.ScrapeTarget{Job: "node-exporter", Address: nodeExporter,
			Labels: map[string]string{"instance": sim.NodeName(p.Name, 0)}})
	}
	_ = hold.Close()
	testutil.StartPrometheusAt(t, promAddr, time.Second, targets...)

	if out, err := c.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const requests = 300000
	if out, err := c.Kubectl(ctx, strings.NewReader(fmt.Sprintf(prometheusComparisonYAML, requests, sim.NodeName("loadgen", 0))), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	pointed := make(chan struct{})
	go func() { defer close(pointed); pointTargetsAt(ctx, t, c, e.port) }()
	defer func() { cancel(); <-pointed }()

	var cmp benchv1.BenchmarkComparison
	testutil.Eventually(t, 2*time.Minute, "the comparison finished", func() error {
		if gone, err := e.stack.Manager.Exited(); gone {
			t.Fatalf("the manager exited: %v", err)
		}
		if err := getObject(ctx, dyn, cmpGVR, "valkey-prometheus", &cmp); err != nil {
			return err
		}
		if !cmp.Status.Phase.Terminal() {
			return fmt.Errorf("phase %s %s", cmp.Status.Phase, cmp.Status.Progress)
		}
		return nil
	})
	if cmp.Status.Phase != benchv1.ComparisonSucceeded || len(cmp.Status.Runs) != 2 {
		t.Fatalf("the comparison ended %s with runs %s: %s", cmp.Status.Phase, mustJSON(cmp.Status.Runs), mustJSON(cmp.Status.Conditions))
	}
	for _, r := range cmp.Status.Runs {
		checkPrometheusRun(ctx, t, c, dyn, r, e.cpu, promURL)
	}
	checkReportLinksTargetCPU(ctx, t, c, &cmp)
}

// pointTargetsAt points every run's Valkey Service at the local server
// (the executor forwards to it and adopts it into the target's pod) as
// soon as the operator creates it, until ctx ends: the comparison creates
// its runs one after the other, each starting its load a moment after its
// Service.
func pointTargetsAt(ctx context.Context, t *testing.T, c *sim.Cluster, port int) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"127.0.0.1:%d"}}}`, executor.BackendAnnotation, port)
	w, err := c.Clientset.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("watch Services: %v", err)
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		svc, ok := ev.Object.(*corev1.Service)
		if !ok || svc.Annotations[executor.BackendAnnotation] != "" {
			continue
		}
		for _, o := range svc.OwnerReferences {
			run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: o.Name, UID: o.UID}}
			if o.Kind == "BenchmarkRun" && specs.ValkeyName(run) == svc.Name {
				_, err := c.Clientset.CoreV1().Services(ns).Patch(ctx, svc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				if err != nil && ctx.Err() == nil {
					t.Errorf("point Service %s at the local server: %v", svc.Name, err)
				}
			}
		}
	}
}

// checkPrometheusRun: the run's target CPU from Prometheus against /proc,
// its efficiency, and its nodes' busy percent from node_exporter.
func checkPrometheusRun(ctx context.Context, t *testing.T, c *sim.Cluster, dyn dynamic.Interface, r benchv1.ComparisonRun, cpu *procCPU, promURL string) {
	t.Helper()
	run, err := getRun(ctx, dyn, r.Name)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status.Phase != benchv1.PhaseSucceeded {
		t.Fatalf("run %s ended %s: %s", r.Name, run.Status.Phase, conditionsOf(run))
	}
	doc, err := runDocument(ctx, c, run)
	if err != nil {
		t.Fatal(err)
	}
	res := doc.Steps[0].Repetitions[0].Result
	if res == nil || res.StartTime == nil || res.EndTime == nil {
		t.Fatalf("run %s: the stored result has no window: %s", r.Name, mustJSON(res))
	}
	t.Logf("run %s (%s): warnings %q", r.Name, r.Variant, res.Warnings)
	status := map[string]benchv1.MetricValue{}
	for _, m := range run.Status.Steps[0].Repetitions[0].Metrics {
		status[m.Name+"["+m.Operation+"]"] = m
	}
	got, ok := status[telemetry.FigureCPUCores+"[target]"]
	if !ok || got.Source != "prometheus" {
		t.Fatalf("run %s: status has no cpuCores[target] from Prometheus: %s", r.Name, mustJSON(status))
	}
	want := cpu.over(t, *res.StartTime, *res.EndTime)
	d := (got.Value - want) / want
	t.Logf("run %s (%s) window %s..%s (%.1f s): target cpuCores %.4f from Prometheus, redis-server /proc/%d/stat %.4f (%+.1f %%)",
		r.Name, r.Variant, res.StartTime.Format("15:04:05.000"), res.EndTime.Format("15:04:05.000"), res.EndTime.Sub(*res.StartTime).Seconds(),
		got.Value, cpu.pid, want, 100*d)
	if want < 0.1 {
		t.Fatalf("run %s: redis-server used %.3f cores over the window: the load did not reach it", r.Name, want)
	}
	if math.Abs(d) > 0.2 {
		t.Errorf("run %s: cpuCores[target] %.4f is %+.1f %% off /proc's %.4f", r.Name, got.Value, 100*d, want)
		// What Prometheus holds of the target's counter around the window.
		rng := fmt.Sprintf("%ds", int(res.EndTime.Sub(*res.StartTime).Seconds())+10)
		t.Logf("Prometheus' samples: %s", promQuery(ctx, promURL, `container_cpu_usage_seconds_total{namespace="`+ns+`",container!=""}[`+rng+`]`, res.EndTime.Add(5*time.Second)))
		t.Logf("Prometheus' scrapes of the kubelet: %s", promQuery(ctx, promURL, `scrape_duration_seconds{job="kubelet"}[`+rng+`]`, res.EndTime.Add(5*time.Second)))
	}
	eff, ok := status[telemetry.FigureEfficiency+"[target]"]
	primary, _ := res.Get(res.Primary)
	if !ok || eff.Source != "prometheus" || eff.Value <= 0 {
		t.Errorf("run %s: status has no efficiencyPerTargetCore from Prometheus' CPU: %s", r.Name, mustJSON(status))
	} else if q := eff.Value * got.Value / primary.Value; q < 0.999 || q > 1.001 {
		t.Errorf("run %s: efficiency %.1f is not %s %.1f per %.4f cores", r.Name, eff.Value, primary.Name, primary.Value, got.Value)
	}
	stored := map[string]float64{}
	for _, m := range res.Metrics {
		if m.Source == "prometheus" {
			stored[m.Key().String()] = m.Value
		}
	}
	// The run's own: its host by selector, its query.
	for _, k := range []string{"cpuBusyPercent[host/appliance]", "memoryUsedBytes[host/appliance]", "scrapeTargetsUp[server]"} {
		if v, ok := stored[k]; !ok || v <= 0 {
			t.Errorf("run %s: no %s from the run's own telemetry (%v); warnings %q", r.Name, k, v, res.Warnings)
		}
	}
	for _, node := range []string{sim.NodeName(r.Variant, 0), sim.NodeName("loadgen", 0)} {
		k := "cpuBusyPercent[node/" + node + "]"
		busy, ok := stored[k]
		if !ok || busy <= 0 || busy > 100 {
			t.Errorf("run %s: no %s from node_exporter (%v): %v", r.Name, k, busy, stored)
			continue
		}
		t.Logf("run %s: %s %.1f %% (efficiency %.0f %s)", r.Name, k, busy, eff.Value, eff.Unit)
	}
}

// checkReportLinksTargetCPU: the report's rows of the primary metric carry
// the target's CPU change.
func checkReportLinksTargetCPU(ctx context.Context, t *testing.T, c *sim.Cluster, cmp *benchv1.BenchmarkComparison) {
	t.Helper()
	cm, err := c.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, cmp.Status.ReportConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var reports []*compare.Report
	if err := json.Unmarshal([]byte(cm.Data["report.json"]), &reports); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	rows := 0
	for _, rep := range reports {
		for _, row := range rep.Rows {
			if row.Metric != rep.Primary || row.IsTelemetry() {
				continue
			}
			rows++
			if row.TargetCPUDeltaPercent == nil {
				t.Errorf("the report's row %s %s has no targetCPUDeltaPercent", row.Step, row.Metric)
				continue
			}
			t.Logf("report %s vs %s, step %s: %s Δ %+.1f %%, target CPU Δ %+.1f %%", rep.Candidate, rep.Baseline, row.Step,
				row.Metric, float64(row.DeltaPercent), float64(*row.TargetCPUDeltaPercent))
		}
	}
	if rows == 0 {
		t.Errorf("the report has no row of the primary metric: %.2000s", cm.Data["report.json"])
	}
}

// getObject reads a custom resource of the test's namespace into out.
func getObject(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, name string, out any) error {
	u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// promQuery is Prometheus' answer to an instant query, for the log.
func promQuery(ctx context.Context, promURL, query string, at time.Time) string {
	u := promURL + "/api/v1/query?" + url.Values{"query": {query}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 20000))
	return string(raw)
}
