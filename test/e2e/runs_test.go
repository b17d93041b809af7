package e2e

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// placements records where every workload pod was bound, as pods are
// deleted by cleanup before the end.
type placements struct {
	mu   sync.Mutex
	node map[string]string // pod → node
	run  map[string]string // pod → run UID
	role map[string]string
}

func (p *placements) watch(ctx context.Context, c *sim.Cluster) {
	for ctx.Err() == nil {
		pods, err := c.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: executor.WorkloadSelector})
		if err == nil {
			p.mu.Lock()
			for _, pod := range pods.Items {
				if pod.Spec.NodeName != "" {
					p.node[pod.Name] = pod.Spec.NodeName
					p.run[pod.Name] = pod.Labels["bench.dbperf.io/run-uid"]
					p.role[pod.Name] = pod.Labels["bench.dbperf.io/role"]
				}
			}
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestEndToEnd is the README's main story: a user installs the chart with
// helm and applies runs of every tool (pgbench, redis-benchmark, memtier,
// HammerDB, YCSB, k6, custom images) onto node pools with kubectl — against
// external servers, CloudNativePG clusters (played with local PostgreSQL)
// and a primary and standby across zones — and reads real numbers in
// status, the results ConfigMaps and the plugin's table; placement, least
// privilege, parallel load generators, cleanup and secrets are checked on
// the way.
func TestEndToEnd(t *testing.T) {
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	cnpgCRDs := testutil.NeedEnv(t, "CNPG_CRD_DIR")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// The work directory (cluster logs, each pod's log and termination
	// message) is kept when the test fails.
	work, logf := workDir(t, "dbperf-e2e-")
	bins := t.TempDir()
	manager := build(t, bins, "./cmd/manager", "manager")
	plugin := build(t, bins, "./cmd/kubectl-dbperf", "kubectl-dbperf")
	runner := build(t, bins, "./cmd/runner", "dbperf-runner")

	pg := testutil.StartPostgres(t)
	redis := testutil.StartRedis(t)
	// memtier and HammerDB get servers of their own: their checks compare
	// the tools' counts with the servers'.
	memtierRedis := testutil.StartRedis(t)
	hammerPG := testutil.StartPostgres(t)
	customRedis := testutil.StartRedis(t)
	testutil.NeedEnv(t, "MEMTIER")
	testutil.NeedEnv(t, "HAMMERDB_HOME")

	// The custom workload's two example images: the psql script with the
	// PostgreSQL client beside it, and the histograms program built here.
	customImage := filepath.Join(work, "custom-image")
	if err := os.MkdirAll(customImage, 0o755); err != nil {
		t.Fatal(err)
	}
	build(t, customImage, "./workloads/custom/examples/histograms", "dbperf-example-histograms")
	images := map[string][]string{
		"dbperf-psql-statements":    append([]string{filepath.Join(testutil.RepoRoot(), "workloads", "custom", "examples", "psql-statements")}, executor.DefaultImages()["postgres"]...),
		"dbperf-example-histograms": {customImage},
	}
	stack, err := sim.Up(ctx, sim.StackOptions{Images: images,
		Name: fmt.Sprintf("e2e-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart: filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), Manager: manager, Runner: runner,
		// CloudNativePG's own CRDs: the test plays CloudNativePG's part below.
		CNPGCRDs: cnpgCRDs, Log: logf, Progress: func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stack.Stop()
	c, mgr := stack.Cluster, stack.Manager
	checkLeastPrivilege(ctx, t, c, stack.Operator)
	exCtx, exStop := context.WithCancel(ctx)
	defer exStop()
	seen := &placements{node: map[string]string{}, run: map[string]string{}, role: map[string]string{}}
	go seen.watch(exCtx, c)

	// 3. kubectl apply: external PostgreSQL (pgbench on standard-v3), external
	// Redis (redis-benchmark on standard-v4a), CloudNativePG (target and load
	// generator both asked onto standard-v4a: anti-affinity must separate them).
	// k6 drives a local HTTP server; YCSB's BasicDB needs no server.
	testutil.NeedEnv(t, "K6")
	testutil.NeedEnv(t, "YCSB_LIB")
	var httpHits atomic.Int64
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpHits.Add(1)
		fmt.Fprintln(w, "ok")
	}))
	defer web.Close()
	webPort := web.Listener.Addr().(*net.TCPAddr).Port
	// pgbench-external's database host: this machine, read from a
	// node_exporter behind HTTPS and basic auth by the load generator,
	// against /proc sampled every 100 ms.
	const exporterPassword = "host-exporter-s3cret"
	exporterPort, exporterCA := testutil.StartSecuredNodeExporter(t, "dbperf", exporterPassword)
	procs := testutil.StartProcSampler(t, 100*time.Millisecond)
	manifest := fmt.Sprintf(runsYAML, pg.User, pg.Password, pg.Port, redis.Port, webPort, memtierRedis.Port, exporterPort)
	for _, pool := range []string{"v3", "v4a"} {
		manifest += fmt.Sprintf(customHistYAML, pool, customRedis.Port)
	}
	if out, err := c.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := c.Clientset.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-01-exporter"},
		StringData: map[string]string{"username": "dbperf", "password": exporterPassword, "ca.crt": string(exporterCA)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := c.Kubectl(ctx, strings.NewReader(manifest), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	applyStuck(ctx, t, c)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	simFailed := make(chan struct{})
	var simOnce sync.Once
	zonesPG := testutil.StartPostgres(t)
	for run, server := range map[string]testutil.Postgres{"pgbench-cnpg": pg, "hammerdb-cnpg": hammerPG, "pg-zones": zonesPG} {
		go func() {
			if !playCloudNativePG(ctx, t, c, dyn, run, server) {
				simOnce.Do(func() { close(simFailed) })
			}
		}()
	}

	runs := []string{"pgbench-external", "redis-external", "pgbench-cnpg", "pgbench-parallel", "ycsb-parallel", "k6-http", "memtier-redis", "hammerdb-cnpg",
		"custom-psql", "custom-hist-v3", "custom-hist-v4a", "pg-zones"}
	final := map[string]*benchv1.BenchmarkRun{}
	testutil.Eventually(t, 6*time.Minute, "every run finished", func() error {
		run, err := getRun(ctx, dyn, "osb-missing-tool")
		if err != nil {
			return err
		}
		if run.Status.Phase != benchv1.PhaseFailed && run.Status.Phase != benchv1.PhaseInvalid {
			return fmt.Errorf("osb-missing-tool is %s", run.Status.Phase)
		}
		if why := conditionsOf(run) + mustJSON(run.Status.Steps); !strings.Contains(why, "opensearch-benchmark") || !strings.Contains(why, "not have") {
			t.Errorf("osb-missing-tool failed without saying the tool is missing: %s", why)
		}
		final["osb-missing-tool"] = run
		return nil
	})
	checkStuck(ctx, t, c, dyn)
	testutil.Eventually(t, 6*time.Minute, "every run finished", func() error {
		select {
		case <-simFailed:
			t.Fatal("simulating CloudNativePG failed")
		default:
		}
		if gone, err := mgr.Exited(); gone {
			t.Fatalf("the manager exited: %v", err)
		}
		for _, name := range runs {
			run, err := getRun(ctx, dyn, name)
			if err != nil {
				return err
			}
			switch run.Status.Phase {
			case benchv1.PhaseSucceeded, benchv1.PhaseFailed, benchv1.PhaseInvalid:
				final[name] = run
			default:
				return fmt.Errorf("%s is %s (%s)", name, run.Status.Phase, conditionsOf(run))
			}
		}
		return nil
	})

	// 4. Real numbers from real tools, in status and in the results ConfigMap.
	for _, name := range runs {
		run := final[name]
		if name == "pg-zones" {
			checkZones(t, run)
			continue
		}
		if run.Status.Phase != benchv1.PhaseSucceeded {
			t.Errorf("%s ended %s: %s; steps %s", name, run.Status.Phase, conditionsOf(run), mustJSON(run.Status.Steps))
			continue
		}
		if run.Status.Primary == nil || run.Status.Primary.Display == "" {
			t.Errorf("%s has no primary result", name)
		}
		for _, st := range run.Status.Steps {
			for _, rep := range st.Repetitions {
				if rep.Verdict != benchv1.VerdictSucceeded || len(rep.Metrics) == 0 || rep.Node == "" {
					t.Errorf("%s step %s repetition %d: verdict %s, %d metrics, node %q", name, st.Name, rep.Index, rep.Verdict, len(rep.Metrics), rep.Node)
				}
				for _, m := range rep.Metrics {
					if m.Value <= 0 && m.Direction == benchv1.HigherIsBetter {
						t.Errorf("%s %s: %s = %v", name, st.Name, m.Name, m.Value)
					}
				}
			}
		}
		// The environment names the simulated nodes with their pool labels.
		if env := run.Status.Environment; env == nil || len(env.Nodes) == 0 {
			t.Errorf("%s records no environment", name)
		} else {
			for _, n := range env.Nodes {
				if n.Pool == "" || n.InstanceType == "" || n.CPUModel == "" || n.KernelVersion == "" {
					t.Errorf("%s environment node %+v lacks pool, instance type, CPU model or kernel", name, n)
				}
			}
		}
		cm, err := c.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, run.Status.ResultsConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s results ConfigMap %q: %v", name, run.Status.ResultsConfigMap, err)
		} else if len(cm.Data)+len(cm.BinaryData) == 0 {
			t.Errorf("%s results ConfigMap is empty", name)
		}
		t.Logf("%s: %s", name, run.Status.Primary.Display)
	}

	// Secrets never reach status, results, events or the manager's log.
	for _, name := range runs {
		cm, _ := c.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, final[name].Status.ResultsConfigMap, metav1.GetOptions{})
		if strings.Contains(mustJSON(final[name].Status), pg.Password) || (cm != nil && strings.Contains(mustJSON(cm), pg.Password)) {
			t.Errorf("%s: the database password appears in status or the results ConfigMap", name)
		}
	}
	if evs, err := c.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil && strings.Contains(mustJSON(evs), pg.Password) {
		t.Error("the database password appears in an event")
	}
	if raw, _ := os.ReadFile(logf.Name()); strings.Contains(string(raw), pg.Password) {
		t.Error("the database password appears in the manager's or the executor's log")
	}

	// 5. Placement: requested pools, never a target's node.
	checkPlacement(ctx, t, c, seen, final)

	// 6. kubectl get: the printer columns.
	out, err := c.Kubectl(ctx, nil, "get", "benchmarkruns", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl get benchmarkruns:\n%s", out)
	header := strings.Fields(strings.SplitN(string(out), "\n", 2)[0])
	if strings.Join(header, " ") != "NAME TARGET WORKLOAD PHASE PRIMARY TARGET CPU VALID MESSAGE AGE" {
		t.Errorf("columns %v", header)
	}
	// An external PostgreSQL: its own statistics give commits and sessions
	// of every measurement (no pod of it is visible).
	for _, step := range final["pgbench-external"].Status.Steps {
		for _, rep := range step.Repetitions {
			found := map[string]float64{}
			for _, m := range rep.Metrics {
				if m.Source == "postgresql" {
					found[m.Name] = m.Value
				}
			}
			if found["commitsPerSecond"] <= 0 {
				t.Errorf("pgbench-external %s #%d: no commits from the server's statistics: %+v", step.Name, rep.Index, rep.Metrics)
			}
			if _, ok := found["sessionsActiveMean"]; !ok {
				t.Errorf("pgbench-external %s #%d: no sessions from the server's statistics", step.Name, rep.Index)
			}
		}
	}
	checkDatabaseHost(ctx, t, c, final["pgbench-external"], procs, exporterPassword)
	// The external Redis's own statistics give its CPU, beside throughput.
	if cpu := final["redis-external"].Status.Primary; cpu == nil || cpu.TargetCPUCores == nil || *cpu.TargetCPUCores <= 0 {
		t.Errorf("redis-external: no target CPU from the server's statistics: %+v", cpu)
	}
	// Every run Succeeded but pg-zones, Invalid by design (checkZones).
	for _, name := range runs {
		if !strings.Contains(string(out), name) || strings.Count(string(out), " Succeeded ") != len(runs)-1 || !regexp.MustCompile(`pg-zones +postgres +pgbench +Invalid `).Match(out) {
			t.Errorf("kubectl get does not show %s Succeeded (pg-zones Invalid)", name)
		}
	}

	// 7. Logs: the tool's output reaches kubectl logs through the executor's
	// kubelet endpoint (cleanup Never kept pgbench-external's Jobs).
	logs, err := c.Kubectl(ctx, nil, "logs", "-n", ns, "-l", "bench.dbperf.io/role=loadgen,bench.dbperf.io/run-uid="+string(final["pgbench-external"].UID), "--tail", "-1")
	if err != nil || !strings.Contains(string(logs), "tps = ") || !strings.Contains(string(logs), "DBPERF RESULT") {
		t.Errorf("kubectl logs of the pgbench pods: %v\n%.2000s", err, logs)
	}
	if strings.Contains(string(logs), pg.Password) {
		t.Error("the database password appears in the load generator's log")
	}

	// 7a. memtier and HammerDB: their numbers against the servers' own
	// counters and the tools' own output.
	checkRealTools(ctx, t, plugin, c, final, memtierRedis, hammerPG)
	checkCustom(ctx, t, plugin, c, final, pg, customRedis)

	// 7b. Parallel load generators: both pods waited at the barrier and were
	// released with one start instant; the measurement merges both.
	checkParallel(ctx, t, c, final["pgbench-parallel"])

	// 8. The kubectl plugin against the cluster: results, logs, and a
	// refusal to compare runs that did not apply the same load.
	// Flags go after the command name, anywhere among the arguments.
	dbperf := func(args ...string) (string, error) {
		all := append(append([]string{args[0]}, "--kubeconfig", c.Kubeconfig, "-n", ns), args[1:]...)
		out, err := exec.CommandContext(ctx, plugin, all...).CombinedOutput()
		return string(out), err
	}
	exported, err := dbperf("results", "pgbench-external", "-o", "json")
	if err != nil {
		t.Fatalf("kubectl dbperf results: %v\n%s", err, exported)
	}
	exportFile := filepath.Join(work, "pgbench-external.json")
	if err := os.WriteFile(exportFile, []byte(exported), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := dbperf("compare", "--from-file", exportFile, "--from-file", exportFile, "-o", "markdown"); err != nil || !strings.Contains(out, "| clients=2 | transactionsPerSecond |") {
		t.Errorf("compare --from-file of the exported run with itself: %v\n%s", err, out)
	}
	if out, err := dbperf("compare", "pgbench-external", "pgbench-cnpg"); err == nil || !strings.Contains(out, "workload settings differ") {
		t.Errorf("comparing runs with different pgbench settings: %v\n%s", err, out)
	}
	// The two YCSB generators' histograms merged: exact percentiles (without
	// histograms from both they would be named …UpperBoundMillis).
	if out, err := dbperf("results", "ycsb-parallel", "-o", "json"); err != nil || !strings.Contains(out, "latencyP99Millis") ||
		strings.Contains(out, "UpperBound") || strings.Count(mustJSON(final["ycsb-parallel"].Status.Steps[0].Repetitions[0].Node), ",") != 1 {
		t.Errorf("kubectl dbperf results ycsb-parallel: %v\n%.3000s", err, out)
	}
	if httpHits.Load() == 0 {
		t.Error("k6 never reached the HTTP server")
	}
	if out, err := dbperf("logs", "pgbench-external"); err != nil || strings.Count(out, "==> ") != 5 || !strings.Contains(out, "tps = ") {
		t.Errorf("kubectl dbperf logs: %v\n%.1500s", err, out)
	}

	// 9. A BenchmarkComparison of two pools with real pgbench: interleaved
	// runs, a report with verdicts and the HTML page.
	if err := pg.SQL("CREATE DATABASE cmp"); err != nil {
		t.Fatal(err)
	}
	cmpYAML := fmt.Sprintf(comparisonYAML, pg.Port)
	if out, err := c.Kubectl(ctx, strings.NewReader(cmpYAML), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	testutil.Eventually(t, 4*time.Minute, "the comparison finished", func() error {
		out, err := c.Kubectl(ctx, nil, "get", "benchmarkcomparison", "pools", "-n", ns, "-o", "jsonpath={.status.phase} {.status.progress}")
		if err != nil {
			return err
		}
		if !strings.HasPrefix(string(out), "Succeeded") {
			return fmt.Errorf("comparison: %s", out)
		}
		return nil
	})
	table, err := dbperf("compare", "pools")
	if err != nil || !strings.Contains(table, "STANDARD-V3") || !strings.Contains(table, "transactionsPerSecond") {
		t.Errorf("kubectl dbperf compare pools: %v\n%s", err, table)
	}
	t.Logf("kubectl dbperf compare pools:\n%s", table)
	// The pipeline's gate: the exit code is the verdict's (both pools are
	// this machine: Pass or Inconclusive, never an error), with the
	// headline printed and a JUnit file that parses.
	junit := filepath.Join(work, "pools.xml")
	gate, err := dbperf("wait", "pools", "--no-wait", "--junit", junit)
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Errorf("kubectl dbperf wait: %v", err)
	}
	var verdict struct {
		Status struct {
			Verdict string `json:"verdict"`
		} `json:"status"`
	}
	raw, _ := c.Kubectl(ctx, nil, "get", "benchmarkcomparison", "pools", "-n", ns, "-o", "json")
	_ = json.Unmarshal(raw, &verdict)
	want := map[string]int{"Pass": 0, "Improvement": 0, "Regression": 3, "Inconclusive": 4, "Invalid": 4}[verdict.Status.Verdict]
	if junitXML, rerr := os.ReadFile(junit); code != want || !strings.Contains(gate, "BenchmarkComparison pools: "+verdict.Status.Verdict) || rerr != nil ||
		xml.Unmarshal(junitXML, new(struct {
			XMLName xml.Name `xml:"testsuites"`
		})) != nil {
		t.Errorf("kubectl dbperf wait pools: exit %d for verdict %q (want %d), JUnit %v\n%s", code, verdict.Status.Verdict, want, rerr, gate)
	}
	html, err := dbperf("report", "pools", "-o", "html")
	if err != nil || !strings.Contains(html, "<svg") || !strings.Contains(html, "standard-v4a") {
		t.Errorf("kubectl dbperf report: %v\n%.500s", err, html)
	}
	order, _ := c.Kubectl(ctx, nil, "get", "benchmarkruns", "-n", ns, "-l", "bench.dbperf.io/variant", "--sort-by", ".metadata.creationTimestamp",
		"-o", "jsonpath={range .items[*]}{.metadata.labels.bench\\.dbperf\\.io/variant} {end}")
	if strings.TrimSpace(string(order)) != "standard-v3 standard-v4a standard-v4a standard-v3" {
		t.Errorf("runs created in the order %q, want interleaved, the second round reversed (ABBA)", order)
	}

	// 10. Cleanup: Always removes Jobs and the target; Never keeps them.
	testutil.Eventually(t, time.Minute, "cleanup", func() error {
		for name, keep := range map[string]bool{"pgbench-external": true, "redis-external": false, "pgbench-cnpg": false} {
			jobs, err := c.Clientset.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: "bench.dbperf.io/run-uid=" + string(final[name].UID)})
			if err != nil {
				return err
			}
			if keep && len(jobs.Items) == 0 {
				return fmt.Errorf("%s (cleanup Never) lost its Jobs", name)
			}
			if !keep && len(jobs.Items) != 0 {
				return fmt.Errorf("%s (cleanup Always) still has %d Jobs", name, len(jobs.Items))
			}
		}
		switch _, err := dyn.Resource(clusterGVR).Namespace(ns).Get(ctx, "pgbench-cnpg-pg", metav1.GetOptions{}); {
		case err == nil:
			return fmt.Errorf("the CloudNativePG Cluster of pgbench-cnpg is still there")
		case !apierrors.IsNotFound(err):
			return err
		}
		return nil
	})
}

const runsYAML = `
apiVersion: v1
kind: Secret
metadata:
  name: local-pg
stringData:
  username: %[1]s
  password: %[2]s
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pgbench-external
spec:
  repetitions: 2
  cleanup: Never
  target:
    external: {host: 127.0.0.1, port: %[3]d, database: postgres, secretRef: {name: local-pg}}
  telemetry:
    pollInterval: 1s
    hosts:
    - name: db-01
      role: database
      nodeExporter: {url: "https://localhost:%[7]d/metrics", secretRef: {name: db-01-exporter}}
  workload:
    pgbench: {scale: 2, clients: [2, 4], jobs: 2, duration: 3s}
    placement:
      nodeSelector: {pool: standard-v3}
    resources:
      limits: {cpu: "1"}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: redis-external
spec:
  repetitions: 1
  target:
    external: {host: 127.0.0.1, port: %[4]d}
  workload:
    redisBenchmark: {tests: [set, get], requests: 20000, clients: [10], pipeline: [1, 8], keySpace: 1000}
    placement:
      nodeSelector: {pool: standard-v4a}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pgbench-cnpg
spec:
  repetitions: 1
  target:
    postgres:
      instances: 1
      storage: {size: 1Gi}
    placement:
      nodeSelector: {pool: standard-v4a}
  workload:
    pgbench: {scale: 1, clients: [2], duration: 3s}
    placement:
      nodeSelector: {pool: standard-v4a}
---
# A primary in zone-b and its synchronous standby in zone-a, both on
# standard-v4a (the test plays CloudNativePG, which puts its first
# instance wherever the scheduler does: the operator switches over when it
# is in zone-a). The load generators run on pool loadgen, in zone-a only:
# with loadGeneratorsInPrimaryZone the measurement is Invalid, naming both
# zones.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pg-zones
spec:
  repetitions: 1
  validity: {loadGeneratorsInPrimaryZone: true}
  target:
    postgres:
      instances: 2
      replication: {mode: Synchronous}
      storage: {size: 1Gi}
    placement: {nodeSelector: {pool: standard-v4a}, zone: zone-b}
    replicaPlacement: {nodeSelector: {pool: standard-v4a}, zone: zone-a}
  workload:
    pgbench: {scale: 1, clients: [2], duration: 3s}
    placement:
      nodeSelector: {pool: loadgen}
      zone: zone-a
---
# Two load generators per measurement, started together at the barrier.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pgbench-parallel
spec:
  cleanup: Never
  target:
    external: {host: 127.0.0.1, port: %[3]d, database: postgres, secretRef: {name: local-pg}}
  workload:
    parallelism: 2
    pgbench: {script: "SELECT 1;", clients: [2], duration: 3s, progressInterval: 0s}
    skipPrepare: true
    placement:
      nodeSelector: {pool: loadgen}
    resources:
      limits: {cpu: "1"}
---
# The real YCSB client (BasicDB, simulated latency) as two load generators:
# their HdrHistogram logs merge into true percentiles.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: ycsb-parallel
spec:
  target:
    external: {host: 127.0.0.1, port: 1}
  workload:
    parallelism: 2
    ycsb:
      binding: basic
      coreWorkload: a
      recordCount: 1000
      operationCount: 3000
      threads: [4]
      properties: {basicdb.verbose: "false", basicdb.simulatedelay: "2", basicdb.randomizedelay: "true"}
    placement:
      nodeSelector: {pool: loadgen}
---
# The real k6 against a local HTTP server.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: k6-http
spec:
  target:
    external: {host: 127.0.0.1, port: %[5]d}
  workload:
    k6:
      vus: [2]
      duration: 2s
      script: |
        import http from 'k6/http';
        export const options = { thresholds: { http_req_failed: ['rate<0.01'] } };
        export default function () { http.get('http://' + __ENV.DBPERF_TARGET_HOST + ':' + __ENV.DBPERF_TARGET_PORT + '/'); }
    placement:
      nodeSelector: {pool: standard-v3}
---
# The real memtier_benchmark 2.1.1 against a Redis of its own: the load
# step, then a 1:10 SET:GET mix at pipelines 1 and 8.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: memtier-redis
spec:
  target:
    external: {host: 127.0.0.1, port: %[6]d}
  workload:
    memtier: {threads: [1], clients: 2, pipeline: [1, 8], ratio: "1:10", keyMaximum: 2000, dataSizeBytes: 64, duration: 3s}
    placement:
      nodeSelector: {pool: standard-v3}
---
# The real HammerDB 4.12 TPROC-C on the CloudNativePG target (played by
# the test with a PostgreSQL of its own): the schema build (1 warehouse),
# then a 1-minute timed test at 2 virtual users.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: hammerdb-cnpg
spec:
  cleanup: Never # its log is read after the run
  target:
    postgres:
      instances: 1
      storage: {size: 1Gi}
    placement:
      nodeSelector: {pool: standard-v3}
  workload:
    hammerdb: {database: postgres, warehouses: 1, buildVirtualUsers: 1, virtualUsers: [2], rampUp: 0m, duration: 1m}
    placement:
      nodeSelector: {pool: standard-v4a}
---
# A custom workload: the psql-statements example (workloads/custom/examples)
# times four statements with psql against the external PostgreSQL, 20 times
# each, and reports them in dbperf-lines v1.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: custom-psql
spec:
  target:
    external: {host: 127.0.0.1, port: %[3]d, database: postgres, secretRef: {name: local-pg}}
  workload:
    image: registry.example/dbperf-psql-statements:1
    custom:
      command: [psql-statements.sh]
      args: [run, "{{repeat}}"]
      prepare: {command: [psql-statements.sh], args: [prepare]}
      parameters: [{name: repeat, values: [20]}]
      format: Lines
      primaryMetric: {name: statementsPerSecond}
      database: postgres
    placement:
      nodeSelector: {pool: standard-v3}
---
# OpenSearch Benchmark is not installed here: the run must fail, saying so.
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: osb-missing-tool
spec:
  target:
    external: {host: 127.0.0.1, port: 1}
  workload:
    osb: {name: http_logs, testProcedure: append-no-conflicts-index-only, clients: [1]}
    placement:
      nodeSelector: {pool: loadgen}
`

// customHistYAML is the custom workload with histograms, one run per pool
// (custom-hist-v3, custom-hist-v4a; arguments: the pool's suffix and the
// Redis port): the histograms example (a Go program) as two load generators
// against a Redis of its own, twice; their HdrHistograms merge, and the two
// runs compare like any others.
const customHistYAML = `
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: custom-hist-%[1]s
spec:
  repetitions: 2
  target:
    external: {host: 127.0.0.1, port: %[2]d}
  workload:
    image: registry.example/dbperf-example-histograms:1
    parallelism: 2
    custom:
      command: [dbperf-example-histograms]
      args: [-clients, "{{clients}}", -requests, "2000"]
      parameters: [{name: clients, values: [4]}]
      format: Lines
      primaryMetric: {name: opsPerSecond}
      database: valkey
    placement:
      nodeSelector: {pool: standard-%[1]s}
`

const comparisonYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: pools
spec:
  baseline: standard-v3
  runsPerVariant: 2
  template:
    target:
      external: {host: 127.0.0.1, port: %d, database: cmp, secretRef: {name: local-pg}}
    workload:
      pgbench: {scale: 1, clients: [2], jobs: 1, duration: 2s}
      resources:
        limits: {cpu: "1"}
  variants:
  - name: standard-v3
    patch: {workload: {placement: {nodeSelector: {pool: standard-v3}}}}
  - name: standard-v4a
    patch: {workload: {placement: {nodeSelector: {pool: standard-v4a}}}}
`

// playCloudNativePG plays CloudNativePG's part for the run's Cluster with
// the test's own server (executor.PlayCloudNativePG): the checks compare
// the tools' counts with that server's.
func playCloudNativePG(ctx context.Context, t *testing.T, c *sim.Cluster, dyn dynamic.Interface, run string, pg testutil.Postgres) bool {
	if err := executor.PlayCloudNativePG(ctx, c.Clientset, dyn, ns, run+"-pg", pg, t.Logf); err != nil {
		if ctx.Err() == nil {
			t.Errorf("simulating CloudNativePG for %s: %v", run, err)
		}
		return false
	}
	return true
}

// checkZones: pg-zones' primary ran in zone-b and its standby in zone-a,
// as asked, whichever instance CloudNativePG (played) made primary first;
// the environment records every instance with its role, pool and zone;
// the load generator in zone-a made the measurement Invalid, naming both
// zones.
func checkZones(t *testing.T, run *benchv1.BenchmarkRun) {
	t.Helper()
	if run.Status.Phase != benchv1.PhaseInvalid || len(run.Status.Steps) != 1 || len(run.Status.Steps[0].Repetitions) != 1 {
		t.Errorf("pg-zones ended %s (%s), want Invalid with one measurement: %s", run.Status.Phase, conditionsOf(run), mustJSON(run.Status.Steps))
		return
	}
	rep := run.Status.Steps[0].Repetitions[0]
	env := run.Status.Environment
	if env == nil {
		t.Fatal("pg-zones records no environment")
	}
	roles := map[benchv1.InstanceRole][]string{}
	primary := ""
	for _, in := range env.Instances {
		roles[in.Role] = append(roles[in.Role], in.Pool+"/"+in.Zone)
		if in.Role == benchv1.InstancePrimary {
			primary = in.Name
		}
	}
	want := map[benchv1.InstanceRole][]string{benchv1.InstancePrimary: {"standard-v4a/zone-b"}, benchv1.InstanceReplica: {"standard-v4a/zone-a"},
		benchv1.InstanceLoadGenerator: {"loadgen/zone-a"}}
	for role, w := range want {
		if strings.Join(roles[role], ",") != strings.Join(w, ",") {
			t.Errorf("pg-zones %s instances %v, want %v (all: %s)", role, roles[role], w, mustJSON(env.Instances))
		}
	}
	reason := fmt.Sprintf("ran in zone zone-a, the target's primary %s in zone zone-b (validity.loadGeneratorsInPrimaryZone)", primary)
	if rep.Verdict != benchv1.VerdictInvalid || !strings.Contains(strings.Join(rep.Reasons, "; "), reason) || len(rep.Metrics) == 0 {
		t.Errorf("pg-zones measurement %s %v (%d metrics), want Invalid with %q and its numbers kept", rep.Verdict, rep.Reasons, len(rep.Metrics), reason)
	}
}

// checkPlacement: every workload pod ran on a node of its run's pool, and no
// load generator shared a node with its run's target.
func checkPlacement(ctx context.Context, t *testing.T, c *sim.Cluster, seen *placements, final map[string]*benchv1.BenchmarkRun) {
	t.Helper()
	wantPool := map[string]string{"pgbench-external": "standard-v3", "redis-external": "standard-v4a", "pgbench-cnpg": "standard-v4a",
		"osb-missing-tool": "loadgen", "pgbench-parallel": "loadgen", "ycsb-parallel": "loadgen", "k6-http": "standard-v3",
		"memtier-redis": "standard-v3", "hammerdb-cnpg": "standard-v4a", "custom-psql": "standard-v3", "custom-hist-v3": "standard-v3",
		"custom-hist-v4a": "standard-v4a", "pg-zones": "loadgen"}
	byUID := map[string]string{}
	for name, run := range final {
		byUID[string(run.UID)] = name
	}
	targetNode := ""
	if p, err := c.Clientset.CoreV1().Pods(ns).Get(ctx, "pgbench-cnpg-pg-1", metav1.GetOptions{}); err == nil {
		targetNode = p.Spec.NodeName
	} else if env := final["pgbench-cnpg"].Status.Environment; env != nil {
		for _, n := range env.Nodes {
			if slices.Contains(n.Roles, "target") {
				targetNode = n.Name
			}
		}
	}
	if targetNode == "" {
		t.Error("could not tell where the CloudNativePG instance ran")
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	counted := map[string]int{}
	for pod, node := range seen.node {
		run := byUID[seen.run[pod]]
		counted[run]++
		n, err := c.Clientset.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			t.Errorf("node %s of pod %s: %v", node, pod, err)
			continue
		}
		if got := n.Labels[sim.PoolLabel]; got != wantPool[run] {
			t.Errorf("pod %s of %s ran on %s in pool %s, want pool %s", pod, run, node, got, wantPool[run])
		}
		if run == "pgbench-cnpg" && node == targetNode {
			t.Errorf("load generator %s (%s) ran on the target's node %s", pod, seen.role[pod], node)
		}
	}
	// pgbench-external: prepare + 2 clients × 2 repetitions; redis: 2 steps;
	// cnpg: prepare + 1; parallel: two generators of one measurement.
	// memtier: the load + 2 pipelines; HammerDB: the schema build + 1; the
	// missing OpenSearch Benchmark: its one attempt.
	want := map[string]int{"pgbench-external": 5, "redis-external": 2, "pgbench-cnpg": 2, "pgbench-parallel": 2, "ycsb-parallel": 2, "k6-http": 1,
		"memtier-redis": 3, "hammerdb-cnpg": 2, "osb-missing-tool": 1, "custom-psql": 2, "custom-hist-v3": 4, "custom-hist-v4a": 4, "pg-zones": 2}
	for run, want := range want {
		if counted[run] != want {
			t.Errorf("%s: saw %d workload pods, want %d", run, counted[run], want)
		}
	}
}

// checkLeastPrivilege asks the API server what the chart's ServiceAccount
// may do: what the manager needs, and nothing of what it must not.
func checkLeastPrivilege(ctx context.Context, t *testing.T, c *sim.Cluster, op sim.Operator) {
	t.Helper()
	for _, check := range []struct {
		verb, resource string
		want           string
	}{
		{"create", "jobs.batch", "yes"},
		{"patch", "benchmarkruns.bench.dbperf.io/status", "yes"},
		{"create", "clusters.postgresql.cnpg.io", "yes"},
		{"get", "secrets", "yes"}, // by name, for their metadata: the existence check
		{"list", "secrets", "no"}, // never all of them
		{"watch", "secrets", "no"},
		{"update", "secrets", "no"},
		{"create", "secrets", "yes"}, // generated target credentials and certificates
		{"patch", "pods", "yes"},     // the start barrier of parallel load generators
		{"update", "pods", "no"},
		{"create", "pods", "no"},
		{"create", "clusterrolebindings.rbac.authorization.k8s.io", "no"},
		{"delete", "nodes", "no"},
		{"create", "pods/exec", "no"},
		{"list", "events", "yes"}, // a Job or StatefulSet without pods: its FailedCreate events (a quota)
	} {
		out, _ := c.Kubectl(ctx, nil, "auth", "can-i", check.verb, check.resource, "-A", "--as", op.User())
		if got := strings.TrimSpace(string(out)); got != check.want {
			t.Errorf("can %s %s %s? %q, want %q", op.User(), check.verb, check.resource, got, check.want)
		}
	}
}

// checkParallel: the two load generators of pgbench-parallel each logged the
// same start instant, which lies after both pods started, and the result
// merges two generators.
func checkParallel(ctx context.Context, t *testing.T, c *sim.Cluster, run *benchv1.BenchmarkRun) {
	t.Helper()
	pods, err := c.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "bench.dbperf.io/role=loadgen,bench.dbperf.io/run-uid=" + string(run.UID)})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("pgbench-parallel pods: %v (%d)", err, len(pods.Items))
	}
	starts := map[string]bool{}
	for _, p := range pods.Items {
		raw, err := c.Clientset.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: "loadgen"}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("log of %s: %v", p.Name, err)
		}
		_, after, ok := strings.Cut(string(raw), "all load generators are running; starting at ")
		if !ok || !strings.Contains(string(raw), "tps = ") {
			t.Errorf("%s did not pass the barrier and measure:\n%.1500s", p.Name, raw)
			continue
		}
		at, _, _ := strings.Cut(after, " ")
		starts[at] = true
		ts, err := time.Parse(time.RFC3339Nano, at)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "loadgen" && cs.State.Terminated != nil && (err != nil || ts.Before(cs.State.Terminated.StartedAt.Add(-time.Second))) {
				t.Errorf("%s: start instant %q before its container started at %s", p.Name, at, cs.State.Terminated.StartedAt)
			}
		}
	}
	if len(starts) != 1 {
		t.Errorf("the generators started at different instants: %v", starts)
	}
	rep := run.Status.Steps[0].Repetitions[0]
	if strings.Count(rep.Node, ",") != 1 {
		t.Errorf("the measurement names %q, want both generators' nodes", rep.Node)
	}
	t.Logf("pgbench-parallel: %s from 2 generators started at %v", run.Status.Primary.Display, starts)
}
