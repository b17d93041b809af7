// Command localcluster is the quickstart: it starts local PostgreSQL and
// redis-server, the simulated cluster with simulated node pools, installs the
// operator with its Helm chart, runs the manager (as the chart's
// ServiceAccount) and the test executor, applies BenchmarkRuns — pgbench on
// the standard-v3 and on the standard-v4a pool, redis-benchmark on loadgen —
// and prints the results table. hack/quickstart.sh builds what it needs and
// calls it; `make demo` calls that.
//
//	go run ./hack/localcluster -bin-dir DIR -helm HELM -manager M -runner R [-keep]
//
// With -keep the cluster stays up until Ctrl-C, with KUBECONFIG printed;
// with -up-only nothing is applied (a local cluster to try your own runs on).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
)

func main() {
	var o struct {
		binDir, helm, manager, runner, chart, dir string
		seconds                                   int
		keep, upOnly                              bool
	}
	flag.StringVar(&o.binDir, "bin-dir", "", "control-plane binaries (hack/build-control-plane.sh)")
	flag.StringVar(&o.helm, "helm", "", "helm binary (hack/build-helm.sh)")
	flag.StringVar(&o.manager, "manager", "bin/manager", "manager binary")
	flag.StringVar(&o.runner, "runner", "bin/dbperf-runner", "dbperf-runner binary")
	flag.StringVar(&o.chart, "chart", "charts/dbperf-operator", "the chart")
	flag.StringVar(&o.dir, "dir", "", "work directory (default: a new one under /tmp)")
	flag.IntVar(&o.seconds, "seconds", 5, "duration of each pgbench measurement")
	flag.BoolVar(&o.keep, "keep", false, "keep everything running until Ctrl-C")
	flag.BoolVar(&o.upOnly, "up-only", false, "start the cluster, the operator and the executor, apply nothing, and wait for Ctrl-C")
	flag.Parse()
	if err := run(o.binDir, o.helm, o.manager, o.runner, o.chart, o.dir, o.seconds, o.keep, o.upOnly); err != nil {
		fmt.Fprintln(os.Stderr, "[quickstart] ERROR:", err)
		os.Exit(1)
	}
}

func progress(s string) {
	fmt.Fprintf(os.Stderr, "[quickstart] %s (%s)\n", s, time.Now().UTC().Format("15:04:05"))
}

func run(binDir, helm, manager, runner, chart, dir string, seconds int, keep, upOnly bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dir == "" {
		d, err := os.MkdirTemp("", "dbperf-quickstart-")
		if err != nil {
			return err
		}
		dir = d
		defer os.RemoveAll(dir)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // pods run as their runAsUser
		return err
	}
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }

	progress("starting PostgreSQL and redis-server on 127.0.0.1")
	pg, err := localdb.StartPostgres()
	if err != nil {
		return err
	}
	defer pg.Stop()
	redis, err := localdb.StartRedis()
	if err != nil {
		return err
	}
	defer redis.Stop()

	logf, err := os.Create(filepath.Join(dir, "components.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("quickstart-%d", os.Getpid()), Dir: dir, BinDir: binDir,
		Helm: helm, Chart: abs(chart), Manager: abs(manager), Runner: abs(runner), Log: logf, Progress: progress})
	if err != nil {
		return fmt.Errorf("%w (component logs: %s)", err, logf.Name())
	}
	defer stack.Stop()

	if upOnly {
		fmt.Printf("\nThe simulated cluster runs, with the operator and the executor. In another shell:\n"+
			"  export KUBECONFIG=%s PATH=%s:$PATH\n  kubectl get nodes -L pool,node.kubernetes.io/instance-type\n"+
			"Local PostgreSQL: 127.0.0.1:%d (user %s, password in the Secret you create); redis-server: 127.0.0.1:%d.\n"+
			"Ctrl-C stops everything.\n", stack.Kubeconfig, binDir, pg.Port, pg.User, redis.Port)
		<-ctx.Done()
		return nil
	}
	// One database per run: two pgbench runs initialising the same tables at
	// the same time would measure each other.
	if err := pg.SQL("CREATE DATABASE bench_v3"); err != nil {
		return err
	}
	if err := pg.SQL("CREATE DATABASE bench_v4a"); err != nil {
		return err
	}
	progress("kubectl apply: pgbench on pool standard-v3 and on pool standard-v4a, redis-benchmark on pool loadgen")
	manifest := fmt.Sprintf(quickstartRuns, pg.User, pg.Password, pg.Port, redis.Port, seconds)
	if out, err := stack.Kubectl(ctx, strings.NewReader(manifest), "apply", "-f", "-"); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	} else {
		fmt.Fprint(os.Stderr, string(out))
	}
	dyn, err := dynamic.NewForConfig(stack.Config)
	if err != nil {
		return err
	}
	names := []string{"pgbench-standard-v3", "pgbench-standard-v4a", "redis-loadgen"}
	runs := map[string]*benchv1.BenchmarkRun{}
	progress(fmt.Sprintf("waiting for the runs (3 pgbench steps × 3 repetitions × %ds each, redis-benchmark)", seconds))
	lastLine := ""
	for len(runs) < len(names) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if gone, err := stack.Manager.Exited(); gone {
			return fmt.Errorf("the manager exited: %w (log: %s)", err, logf.Name())
		}
		var states []string
		for _, n := range names {
			r, err := getRun(ctx, dyn, n)
			if err != nil {
				return err
			}
			p := r.Status.Phase
			if r.Status.Progress != "" && p == benchv1.PhaseRunning {
				states = append(states, fmt.Sprintf("%s %s %s", n, p, r.Status.Progress))
			} else {
				states = append(states, fmt.Sprintf("%s %s", n, p))
			}
			if p == benchv1.PhaseSucceeded || p == benchv1.PhaseFailed || p == benchv1.PhaseInvalid {
				runs[n] = r
			}
		}
		if line := strings.Join(states, " | "); line != lastLine {
			progress(line)
			lastLine = line
		}
	}
	out, _ := stack.Kubectl(ctx, nil, "get", "benchmarkruns")
	fmt.Printf("\n$ kubectl get benchmarkruns\n%s\n", out)
	printTable(names, runs)
	if keep {
		fmt.Printf("\nThe cluster keeps running. In another shell:\n  export KUBECONFIG=%s PATH=%s:$PATH\n  kubectl get benchmarkruns,jobs,pods -o wide\nCtrl-C stops everything.\n",
			stack.Kubeconfig, binDir)
		<-ctx.Done()
	}
	return nil
}

func getRun(ctx context.Context, dyn dynamic.Interface, name string) (*benchv1.BenchmarkRun, error) {
	u, err := dyn.Resource(schema.GroupVersionResource{Group: "bench.dbperf.io", Version: "v1alpha1", Resource: "benchmarkruns"}).
		Namespace("default").Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	r := &benchv1.BenchmarkRun{}
	return r, json.Unmarshal(raw, r)
}

// printTable prints, per run and step, the headline metric's summary over
// the valid repetitions and where the load generators ran.
func printTable(names []string, runs map[string]*benchv1.BenchmarkRun) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tSTEP\tMETRIC\tMEDIAN\t95% CI\tCV %\tN\tVERDICTS\tNODES")
	for _, n := range names {
		r := runs[n]
		for _, st := range r.Status.Steps {
			verdicts, nodes := map[string]int{}, map[string]bool{}
			for _, rep := range st.Repetitions {
				verdicts[string(rep.Verdict)]++
				nodes[rep.Node] = true
			}
			vs, ns := []string{}, []string{}
			for v, c := range verdicts {
				vs = append(vs, fmt.Sprintf("%d %s", c, v))
			}
			for n := range nodes {
				ns = append(ns, n)
			}
			sort.Strings(vs)
			sort.Strings(ns)
			if len(st.Summary) == 0 {
				fmt.Fprintf(w, "%s\t%s\t-\t-\t-\t-\t0\t%s\t%s\n", n, st.Name, strings.Join(vs, ", "), strings.Join(ns, ","))
			}
			for i, m := range st.Summary {
				if i >= 2 { // the headline metrics; the rest is in the results ConfigMap
					break
				}
				name := m.Name
				if m.Operation != "" {
					name += " " + m.Operation
				}
				ci, cv := "-", "-"
				if m.CILow != nil && m.CIHigh != nil {
					ci = num(*m.CILow) + " – " + num(*m.CIHigh)
				}
				if m.CoefficientOfVariationPercent != nil {
					cv = fmt.Sprintf("%.2f", *m.CoefficientOfVariationPercent)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s %s\t%s\t%s\t%d\t%s\t%s\n", n, st.Name, name, num(m.Median), m.Unit,
					ci, cv, m.N, strings.Join(vs, ", "), strings.Join(ns, ","))
			}
		}
		for _, c := range r.Status.Conditions {
			if c.Status == metav1.ConditionFalse && c.Type != "Completed" {
				fmt.Fprintf(w, "%s\t%s=False (%s): %s\t\t\t\t\t\t\t\n", n, c.Type, c.Reason, c.Message)
			}
		}
	}
	_ = w.Flush()
	fmt.Println("\nEvery number above comes from real pgbench/redis-benchmark runs against the local servers;")
	fmt.Println("the full results (every metric, every repetition, the environment) are in each run's")
	fmt.Println("<run>-results ConfigMap.")
}

const quickstartRuns = `
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
  name: pgbench-standard-v3
spec:
  repetitions: 3
  cleanup: Never
  target:
    external: {host: 127.0.0.1, port: %[3]d, database: bench_v3, secretRef: {name: local-pg}}
  workload:
    pgbench: {scale: 5, clients: [1, 2, 4], jobs: 1, duration: %[5]ds}
    placement:
      nodeSelector: {pool: standard-v3}
    resources:
      limits: {cpu: "1"}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pgbench-standard-v4a
spec:
  repetitions: 3
  cleanup: Never
  target:
    external: {host: 127.0.0.1, port: %[3]d, database: bench_v4a, secretRef: {name: local-pg}}
  workload:
    pgbench: {scale: 5, clients: [1, 2, 4], jobs: 1, duration: %[5]ds}
    placement:
      nodeSelector: {pool: standard-v4a}
    resources:
      limits: {cpu: "1"}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: redis-loadgen
spec:
  repetitions: 3
  target:
    external: {host: 127.0.0.1, port: %[4]d}
  workload:
    redisBenchmark: {tests: [set, get], requests: 100000, clients: [50], pipeline: [1, 16], keySpace: 100000}
    placement:
      nodeSelector: {pool: loadgen}
`

// num prints large values whole and small ones with four significant digits.
func num(v float64) string {
	if v >= 1000 || v <= -1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}
