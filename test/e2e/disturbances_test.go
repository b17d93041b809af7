package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

const disturbNS = "perf-disturb"

// disturbRunsYAML: three disturbed runs on targets the executor plays with
// local servers: background SQL sessions on PostgreSQL under pgbench, the
// primary of a two-instance CloudNativePG cluster deleted under pgbench
// (the executor's stand-in fails over), and a stress pod beside a Valkey
// target under memtier.
const disturbRunsYAML = `
apiVersion: v1
kind: Namespace
metadata:
  name: ` + disturbNS + `
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pg-sqlload
  namespace: ` + disturbNS + `
spec:
  target:
    postgres: {instances: 1, storage: {size: 1Gi}}
    placement: {nodeSelector: {pool: standard-v4a}}
  workload:
    pgbench: {scale: 1, clients: [2], duration: 14s, progressInterval: 1s}
    placement: {nodeSelector: {pool: loadgen}}
  disturbances:
    schedule:
    - name: heavy-query
      at: 4s
      duration: 4s
      sqlLoad:
        sessions: 2
        statements: ["SELECT sum(hashtext(g::text)) FROM generate_series(1, 300000000) g"]
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pg-failover
  namespace: ` + disturbNS + `
spec:
  target:
    postgres: {instances: 2, storage: {size: 1Gi}}
    placement: {nodeSelector: {pool: standard-v4a}}
  workload:
    pgbench: {scale: 1, clients: [2], duration: 14s, progressInterval: 1s}
    placement: {nodeSelector: {pool: loadgen}}
  disturbances:
    schedule:
    - name: lose-primary
      at: 4s
      memberLoss: {member: Primary}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: valkey-noise
  namespace: ` + disturbNS + `
spec:
  target:
    valkey: {}
    placement: {nodeSelector: {pool: standard-v4a}}
  workload:
    memtier: {threads: [1], clients: 2, pipeline: [1], ratio: "1:4", keyMaximum: 2000, dataSizeBytes: 64, duration: 10s}
    placement: {nodeSelector: {pool: loadgen}}
  disturbances:
    schedule:
    - name: neighbour
      between: {from: 2s, to: 4s}
      duration: 3s
      noisyNeighbour: {cpuWorkers: 1, diskWorkers: 1}
`

// The three kinds of disturbance on the local cluster, each acting on the
// run's own target while the real tool runs, with the chart's
// disturbances role: the SQL sessions took effect and were cancelled at
// the end of their window; the lost primary's card gives the time to a new
// primary (the stand-in promoted the standby), pgbench started again by
// the runner until the new primary took it, and the write ledger lost
// nothing; the stress pod ran on the Valkey pod's node, reported its own
// CPU, and no stress pod is left. Each disturbed measurement has its card's
// figures as metrics and its windows in the result.
func TestDisturbancesOnTheLocalCluster(t *testing.T) {
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	cnpg := testutil.NeedEnv(t, "CNPG_CRD_DIR")
	testutil.NeedEnv(t, "MEMTIER")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	work, logf := workDir(t, "dbperf-e2e-disturb-")
	bins := t.TempDir()
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("e2e-disturb-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart:   filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"),
		Manager: build(t, bins, "./cmd/manager", "manager"), Runner: build(t, bins, "./cmd/runner", "dbperf-runner"),
		CNPGCRDs: cnpg, PlayServers: true, HelmSets: []string{"disturbances.enabled=true"},
		Log: logf, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	c := stack.Cluster
	for verb, want := range map[string]string{"delete": "yes", "create": "yes"} {
		out, _ := c.Kubectl(ctx, nil, "auth", "can-i", verb, "pods", "--as", stack.Operator.User())
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("with disturbances.enabled, can %s %s pods? %q, want %q", stack.Operator.User(), verb, got, want)
		}
	}
	apply(ctx, t, c, disturbRunsYAML)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	names := []string{"pg-sqlload", "pg-failover", "valkey-noise"}
	final := map[string]*benchv1.BenchmarkRun{}
	testutil.Eventually(t, 4*time.Minute, "every disturbed run ended", func() error {
		if gone, err := stack.Manager.Exited(); gone {
			t.Fatalf("the manager exited: %v", err)
		}
		for _, name := range names {
			run, err := getRunIn(ctx, dyn, disturbNS, name)
			if err != nil {
				return err
			}
			if !run.Status.Phase.Terminal() {
				return fmt.Errorf("%s is %s (%s)", name, run.Status.Phase, conditionsOf(run))
			}
			final[name] = run
		}
		return nil
	})
	cards := map[string]*results.Result{}
	for _, name := range names {
		run := final[name]
		doc, err := runDocumentIn(ctx, c, disturbNS, run)
		if err != nil {
			t.Fatal(err)
		}
		r := doc.Steps[0].Repetitions[0].Result
		t.Logf("%s: %s; verdict %s %q; disturbances %s; card %s", name, run.Status.Phase, r.Verdict, r.Reasons, mustJSON(r.Disturbances), cardOf(r))
		if len(r.Disturbances) != 1 || r.Disturbances[0].TookEffect == nil {
			t.Errorf("%s: the disturbance did not take effect: %s", name, mustJSON(r.Disturbances))
			continue
		}
		if len(run.Status.Disturbing) != 0 {
			t.Errorf("%s: status.disturbing outlived the measurement: %+v", name, run.Status.Disturbing)
		}
		cards[name] = r
	}
	if r := cards["pg-sqlload"]; r != nil {
		d := r.Disturbances[0]
		if d.SQL == nil || d.SQL.SessionsConnected != 2 || d.SQL.StatementsCancelled < 1 || d.Ended == nil {
			t.Errorf("pg-sqlload: the sessions did not connect, run and get cancelled: %s", mustJSON(d))
		}
		if _, ok := r.Get(results.Key{Name: "steadyThroughput", Operation: d.Name}); !ok {
			t.Errorf("pg-sqlload: no card: %s", cardOf(r))
		}
	}
	if r := cards["pg-failover"]; r != nil {
		d := r.Disturbances[0]
		if d.NewPrimary == "" || d.NewPrimaryTime == nil {
			t.Errorf("pg-failover: no new primary recorded: %s", mustJSON(d))
		}
		if d.Ledger == nil || d.Ledger.Acknowledged == 0 || d.Ledger.MissingCount != 0 {
			t.Errorf("pg-failover: the write ledger wrote nothing or lost writes: %s", mustJSON(d.Ledger))
		}
		if m, ok := r.Get(results.Key{Name: "newPrimarySeconds", Operation: d.Name}); !ok || m.Value <= 0 || m.Value > 30 {
			t.Errorf("pg-failover: newPrimarySeconds %+v (%v)", m, ok)
		}
		// pgbench ended its clients on the lost connection; the runner
		// started it again until the new primary took it, so the
		// measurement is Succeeded and its card has the outage.
		if r.Verdict != results.Succeeded || r.Restarts == nil || !r.Restarts.Resumed {
			t.Errorf("pg-failover: pgbench was not run again to its end after the failover: %s %q, restarts %+v", r.Verdict, r.Reasons, r.Restarts)
		}
		if m, ok := r.Get(results.Key{Name: "unavailableSeconds", Operation: d.Name}); !ok || m.Value < 1 || m.Value > 10 {
			t.Errorf("pg-failover: unavailableSeconds %+v (%v) for the stand-in's 2 s failover", m, ok)
		}
		if !slices.ContainsFunc(d.Events, func(e results.Event) bool {
			return e.Subject == "service/pg-failover-pg-rw" && strings.Contains(e.Message, "endpoints switched (ready: "+d.NewPrimary+")")
		}) {
			t.Errorf("pg-failover: no event of the -rw Service's endpoints switching to the new primary %s: %s", d.NewPrimary, mustJSON(d.Events))
		}
		if m, ok := r.Get(results.Key{Name: "toolResumedAfterSeconds", Operation: d.Name}); !ok || m.Value <= 0 {
			t.Errorf("pg-failover: toolResumedAfterSeconds %+v (%v)", m, ok)
		}
	}
	if r := cards["valkey-noise"]; r != nil {
		d := r.Disturbances[0]
		if d.Node == "" || d.Removed == nil || d.Neighbour["cpuSeconds"] <= 0 {
			t.Errorf("valkey-noise: the stress pod did not run beside the target, report its CPU and go: %s", mustJSON(d))
		}
		if m, ok := r.Get(results.Key{Name: "neighbourCpuSeconds", Operation: d.Name}); !ok || m.Value <= 0 {
			t.Errorf("valkey-noise: the stress pod's CPU is not a metric of the measurement: %+v (%v)", m, ok)
		}
		if at := d.OffsetSeconds; at < 2 || at > 4 {
			t.Errorf("valkey-noise: its random offset %.3f s is outside [2 s, 4 s]", at)
		}
	}
	pods, err := c.Clientset.CoreV1().Pods(disturbNS).List(ctx, metav1.ListOptions{LabelSelector: benchv1.LabelRole + "=" + benchv1.RoleDisturbance})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("stress pods left behind: %d (%v)", len(pods.Items), err)
	}
	nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			t.Errorf("node %s left cordoned", n.Name)
		}
	}
}

// cardOf prints a result's disturbance figures.
func cardOf(r *results.Result) string {
	var b strings.Builder
	for _, m := range r.Metrics {
		if m.Source == "disturbance" {
			fmt.Fprintf(&b, "%s[%s]=%.4g ", m.Name, m.Operation, m.Value)
		}
	}
	return b.String()
}
