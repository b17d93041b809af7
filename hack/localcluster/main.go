// Command localcluster is the quickstart: it starts local PostgreSQL and
// redis-server, the simulated cluster with simulated node pools, installs the
// operator with its Helm chart, runs the manager (as the chart's
// ServiceAccount) and the test executor, applies a BenchmarkComparison —
// pgbench on pool standard-v3 against standard-v4a, 5 interleaved runs each —
// and one of redis-benchmark on the same pools, 3 runs each, whose server's
// own statistics give the target's CPU and the efficiency, and prints both
// comparison tables (target CPU beside throughput) and the HTML reports' paths. hack/quickstart.sh builds what it needs and
// calls it; `make demo` calls that.
//
//	go run ./hack/localcluster -bin-dir DIR -helm HELM -manager M -runner R [-keep]
//
// With -keep the cluster stays up until Ctrl-C, with KUBECONFIG printed;
// with -up-only nothing is applied (a local cluster to try your own runs on);
// -dir keeps the work directory (created when missing) instead of a
// temporary one. README.md and docs/local-cluster.md document these.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
)

func main() {
	var o struct {
		binDir, helm, manager, runner, chart, dir, cnpg string
		seconds                                         int
		keep, upOnly                                    bool
		html                                            string
	}
	flag.StringVar(&o.binDir, "bin-dir", "", "control-plane binaries (hack/build-control-plane.sh)")
	flag.StringVar(&o.helm, "helm", "", "helm binary (hack/build-helm.sh)")
	flag.StringVar(&o.manager, "manager", "bin/manager", "manager binary")
	flag.StringVar(&o.runner, "runner", "bin/dbperf-runner", "dbperf-runner binary")
	flag.StringVar(&o.chart, "chart", "charts/dbperf-operator", "the chart")
	flag.StringVar(&o.cnpg, "cnpg-crds", "", "CloudNativePG's CRDs (hack/fetch-cnpg-crds.sh): installed, and its Clusters played with local PostgreSQL servers")
	flag.StringVar(&o.dir, "dir", "", "work directory (default: a new one under /tmp)")
	flag.IntVar(&o.seconds, "seconds", 5, "duration of each pgbench measurement")
	flag.BoolVar(&o.keep, "keep", false, "keep everything running until Ctrl-C")
	flag.StringVar(&o.html, "html", "bin/quickstart-report.html", "where to write the comparison's HTML report (empty: nowhere)")
	flag.BoolVar(&o.upOnly, "up-only", false, "start the cluster, the operator and the executor, apply nothing, and wait for Ctrl-C")
	flag.Parse()
	if err := run(o.binDir, o.helm, o.manager, o.runner, o.chart, o.dir, o.cnpg, o.seconds, o.keep, o.upOnly, o.html); err != nil {
		fmt.Fprintln(os.Stderr, "[quickstart] ERROR:", err)
		os.Exit(1)
	}
}

// workDir makes the quickstart's work directory: a given one is created when
// missing (and kept), else a temporary one is removed at the end. Either is
// made searchable by others, since pods run as their runAsUser.
func workDir(dir string) (string, func(), error) {
	cleanup := func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "dbperf-quickstart-")
		if err != nil {
			return "", nil, fmt.Errorf("while creating a work directory: %w", err)
		}
		dir, cleanup = d, func() { _ = os.RemoveAll(d) }
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("while creating the work directory (--dir): %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("while making the work directory searchable: %w", err)
	}
	return dir, cleanup, nil
}

func progress(s string) {
	fmt.Fprintf(os.Stderr, "[quickstart] %s (%s)\n", s, time.Now().UTC().Format("15:04:05"))
}

func run(binDir, helm, manager, runner, chart, dir, cnpg string, seconds int, keep, upOnly bool, html string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, cleanup, err := workDir(dir)
	if err != nil {
		return err
	}
	defer cleanup()
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
	// This machine as the database host the pgbench comparison names,
	// read from Debian's node_exporter by the load generators (when it is
	// installed: hack/install-deps.sh demo adds it).
	hosts := ""
	if ne, err := localdb.StartNodeExporter(); err != nil {
		progress(fmt.Sprintf("no node_exporter (%v): the pgbench comparison names no host", err))
	} else {
		defer ne.Stop()
		hosts = fmt.Sprintf(quickstartHosts, ne.Address)
	}

	logf, err := os.Create(filepath.Join(dir, "components.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	// Local servers stand for the targets the operator provisions (Valkey,
	// MySQL, MongoDB, ClickHouse, CloudNativePG's Clusters), so that every
	// sample runs here.
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("quickstart-%d", os.Getpid()), Dir: dir, BinDir: binDir,
		Helm: helm, Chart: abs(chart), Manager: abs(manager), Runner: abs(runner), Log: logf, Progress: progress,
		CNPGCRDs: cnpg, PlayServers: true})
	if err != nil {
		return fmt.Errorf("%w (component logs: %s)", err, logf.Name())
	}
	defer stack.Stop()

	if upOnly {
		fmt.Printf("\nThe simulated cluster runs, with the operator and the executor. In another shell:\n"+
			"  export KUBECONFIG=%s PATH=%s:$PATH\n  kubectl get nodes -L pool,node.kubernetes.io/instance-type\n"+
			"Local PostgreSQL: 127.0.0.1:%d, database %s; the Secret an external target names (secretRef: {name: local-pg}):\n"+
			"  kubectl create secret generic local-pg --from-literal=username=%s --from-literal=password=%s\n"+
			"Local redis-server: 127.0.0.1:%d, no password.\n"+
			"Targets the operator provisions are played by local servers (CloudNativePG's Clusters by PostgreSQL, Valkey by\n"+
			"redis-server, MySQL by MariaDB, MongoDB by FerretDB, ClickHouse by clickhouse-server; not OpenSearch).\n"+
			"Tools the pods' images stand for here: %s.\n"+
			"Try any sample in its smoke form: bin/kubectl-dbperf try config/samples/memtier-valkey.yaml --apply\n"+
			"Ctrl-C stops everything.\n",
			stack.Kubeconfig, binDir, pg.Port, pg.Database, pg.User, pg.Password, redis.Port, toolsHere())
		<-ctx.Done()
		return nil
	}
	if err := pg.SQL("CREATE DATABASE bench"); err != nil {
		return err
	}
	progress("kubectl apply: BenchmarkComparisons of pgbench and of redis-benchmark on pool standard-v3 against standard-v4a")
	manifest := fmt.Sprintf(quickstartRuns, pg.User, pg.Password, pg.Port, redis.Port, seconds, hosts)
	if out, err := stack.Kubectl(ctx, strings.NewReader(manifest), "apply", "-f", "-"); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	} else {
		fmt.Fprint(os.Stderr, string(out))
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	c, err := client.New(stack.Config, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	progress(fmt.Sprintf("waiting: 5 interleaved pgbench runs per pool (pgbench -i, then 2 clients steps × %ds) and 3 redis-benchmark runs per pool, taking turns on the pools", seconds))
	names := []string{"pgbench-v3-vs-v4a", "redis-v3-vs-v4a"}
	cmps := map[string]*benchv1.BenchmarkComparison{}
	lastLine := ""
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if gone, err := stack.Manager.Exited(); gone {
			return fmt.Errorf("the manager exited: %w (log: %s)", err, logf.Name())
		}
		var parts []string
		done := true
		for _, n := range names {
			cmp := &benchv1.BenchmarkComparison{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: n}, cmp); err != nil {
				return err
			}
			cmps[n] = cmp
			parts = append(parts, fmt.Sprintf("%s %s %s", n, cmp.Status.Phase, cmp.Status.Progress))
			done = done && cmp.Status.Phase.Terminal()
		}
		if line := strings.Join(parts, " | "); line != lastLine {
			progress(line)
			lastLine = line
		}
		if done {
			break
		}
	}
	out, _ := stack.Kubectl(ctx, nil, "get", "benchmarkcomparisons,benchmarkruns")
	fmt.Printf("\n$ kubectl get benchmarkcomparisons,benchmarkruns\n%s\n", out)
	for i, n := range names {
		cmp := cmps[n]
		if cmp.Status.Phase != benchv1.ComparisonSucceeded {
			return fmt.Errorf("the comparison %s ended %s: %+v", n, cmp.Status.Phase, cmp.Status.Conditions)
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: cmp.Status.ReportConfigMap}, cm); err != nil {
			return err
		}
		reports, err := compare.ReadReports(cm.Data, cm.BinaryData)
		if err != nil {
			return err
		}
		fmt.Printf("\n$ kubectl dbperf compare %s\n", n)
		for _, rep := range reports {
			if err := compare.Render(os.Stdout, rep, "table"); err != nil {
				return err
			}
		}
		if html != "" {
			path := html
			if i > 0 {
				path = strings.TrimSuffix(html, ".html") + "-" + strings.SplitN(n, "-", 2)[0] + ".html"
			}
			var page bytes.Buffer
			if err := compare.RenderHTML(&page, reports); err != nil {
				return err
			}
			if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Printf("\nThe HTML report (kubectl dbperf report %s -o html) is in %s\n", n, path)
		}
	}
	fmt.Println("\nThe target's CPU (TARGET CPU Δ %, cpu rows, efficiencyPerTargetCore) comes from the server's own")
	fmt.Println("statistics for Redis (INFO), polled by the first load generator; for PostgreSQL, whose statistics give")
	fmt.Println("commits and sessions but no CPU, from its database host (this machine, host/this-machine) read from")
	fmt.Println("node_exporter, whose CPU by mode, memory, disk and network the HTML report draws over time.")
	fmt.Println("\nThe pools are simulated nodes of one machine: here the two \"generations\" are the same CPU, so the")
	fmt.Println("honest verdict is NoChange or Inconclusive; on a real cluster the same objects compare real pools.")
	if keep {
		fmt.Printf("\nThe cluster keeps running. In another shell:\n  export KUBECONFIG=%s PATH=%s:$PATH\n  kubectl get benchmarkcomparisons,benchmarkruns,jobs,pods -o wide\nCtrl-C stops everything.\n",
			stack.Kubeconfig, binDir)
		<-ctx.Done()
	}
	return nil
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
kind: BenchmarkComparison
metadata:
  name: pgbench-v3-vs-v4a
spec:
  baseline: standard-v3
  order: Interleaved
  runsPerVariant: 5
  criteria: {minEffectPercent: 2}
  template:
    target:
      external: {host: 127.0.0.1, port: %[3]d, database: bench, secretRef: {name: local-pg}}
    workload:
      pgbench: {scale: 5, clients: [1, 4], jobs: 1, duration: %[5]ds, progressInterval: 1s}
      resources:
        limits: {cpu: "1"}%[6]s
  variants:
  - name: standard-v3
    patch: {workload: {placement: {nodeSelector: {pool: standard-v3}}}}
  - name: standard-v4a
    patch: {workload: {placement: {nodeSelector: {pool: standard-v4a}}}}
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: redis-v3-vs-v4a
spec:
  baseline: standard-v3
  order: Interleaved
  runsPerVariant: 3
  criteria: {minEffectPercent: 2}
  template:
    target:
      external: {host: 127.0.0.1, port: %[4]d}
    workload:
      redisBenchmark: {tests: [set, get], requests: 100000, clients: [50], pipeline: [1, 16], keySpace: 100000}
    telemetry: {pollInterval: 1s}
  variants:
  - name: standard-v3
    patch: {workload: {placement: {nodeSelector: {pool: standard-v3}}}}
  - name: standard-v4a
    patch: {workload: {placement: {nodeSelector: {pool: standard-v4a}}}}
`

// quickstartHosts names this machine as the pgbench comparison's database
// host, its node_exporter at %s: CPU by mode, memory, disk and network
// beside the throughput in every measurement of both pools.
const quickstartHosts = `
    telemetry:
      pollInterval: 1s
      hosts:
      - name: this-machine
        role: database
        nodeExporter: {url: "http://%s/metrics"}`

// toolsHere names the images the executor finds a local stand-in for.
func toolsHere() string {
	var out []string
	for image := range executor.DefaultImages() {
		out = append(out, image)
	}
	sort.Strings(out)
	return strings.Join(out, ", ") + " (bash hack/build-tools.sh builds memtier_benchmark and HammerDB)"
}
