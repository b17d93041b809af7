package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/query/ssbgen"
)

// clickHouseCustomYAML: a ClickHouse target owned by the run, and a custom
// workload (curl through the HTTP interface) that fills a table in the
// target's database and sums it 10 times. cleanup Never keeps the server
// for the checks.
const clickHouseCustomYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: clickhouse-custom
spec:
  cleanup: Never
  target:
    clickhouse: {database: ssb}
    placement:
      nodeSelector: {pool: standard-v4a}
  workload:
    image: registry.example/dbperf-clickhouse-query:1
    custom:
      command: [clickhouse-query.sh]
      args: [run, "{{repeat}}"]
      prepare: {command: [clickhouse-query.sh], args: [prepare]}
      parameters: [{name: repeat, values: [10]}]
      format: Lines
      primaryMetric: {name: queriesPerSecond}
    placement:
      nodeSelector: {pool: loadgen}
`

// clickHouseSSBYAML: the Star Schema Benchmark's 13 queries (the query
// workload's examples, in the ConfigMap ssb) on a ClickHouse target on
// each of two pools, 2 runs of 2 measurements each: 4 measurements a
// variant, the fewest with a bounded 95 % interval. The data is ssbgen's
// lineorder_flat, served by the test (argument: its port).
const clickHouseSSBYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkComparison
metadata:
  name: clickhouse-ssb
spec:
  baseline: standard-v3
  runsPerVariant: 2
  template:
    repetitions: 2
    target:
      clickhouse: {database: ssb}
    workload:
      queryBench:
        driver: clickhouse
        queriesConfigMap: {name: ssb, key: ssb-clickhouse.sql}
        runsPerQuery: 2
        prepare:
          scriptConfigMap: {name: ssb, key: ssb-clickhouse-schema.sql}
          loads:
          - {table: lineorder_flat, url: "http://127.0.0.1:%d/lineorder_flat.csv.gz"}
      placement:
        nodeSelector: {pool: loadgen}
  variants:
  - name: standard-v3
    patch: {target: {placement: {nodeSelector: {pool: standard-v3}}}}
  - name: standard-v4a
    patch: {target: {placement: {nodeSelector: {pool: standard-v4a}}}}
`

// TestClickHouseTarget: a run with target.clickhouse on the simulated
// cluster, its pod played by Debian's clickhouse-server 18.16 (the test
// executor translates the pod's user, password and database: see
// test/executor/clickhouse.go). The target becomes ready, the custom
// workload's prepare and measurement succeed through the target's Service
// with the generated credentials, and the server's query_log holds exactly
// the queries the workload reports, as the generated user, in the
// database the spec names. Beside it, an SSB comparison of two pools with
// the query workload: its report has every query's hot time with a change,
// a 95 % interval and a verdict.
func TestClickHouseTarget(t *testing.T) {
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	if _, err := localdb.Tool("clickhouse-server", "/usr/sbin/clickhouse-server"); err != nil {
		t.Fatalf("%v (hack/install-deps.sh installs it)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	work, logf := workDir(t, "dbperf-e2e-clickhouse-")
	bins := t.TempDir()
	stack, err := sim.Up(ctx, sim.StackOptions{
		Name: fmt.Sprintf("e2e-ch-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm,
		Chart:   filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"),
		Manager: build(t, bins, "./cmd/manager", "manager"), Runner: build(t, bins, "./cmd/runner", "dbperf-runner"),
		Images: map[string][]string{"dbperf-clickhouse-query": {filepath.Join(testutil.RepoRoot(), "test", "e2e", "testdata", "clickhouse-query")}},
		Log:    logf, Progress: func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	c := stack.Cluster
	if out, err := c.Kubectl(ctx, strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "+ns+"\n"), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := c.Kubectl(ctx, strings.NewReader(clickHouseCustomYAML), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	examples := filepath.Join(testutil.RepoRoot(), "workloads", "query", "examples")
	if out, err := c.Kubectl(ctx, nil, "create", "configmap", "ssb", "-n", ns, "--from-file="+filepath.Join(examples, "ssb-clickhouse.sql"),
		"--from-file="+filepath.Join(examples, "ssb-clickhouse-schema.sql")); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data := serveSSBFlat(t)
	if out, err := c.Kubectl(ctx, strings.NewReader(fmt.Sprintf(clickHouseSSBYAML, data)), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	run := waitEnded(ctx, t, dyn, "clickhouse-custom", 4*time.Minute)
	if run.Status.Phase != benchv1.PhaseSucceeded {
		t.Fatalf("clickhouse-custom ended %s: %s; steps %s", run.Status.Phase, conditionsOf(run), mustJSON(run.Status.Steps))
	}
	if cond := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionTargetReady); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("TargetReady %+v", cond)
	}
	if st := run.Status.Target; st == nil || st.Kind != "clickhouse" || st.Host != "clickhouse-custom-clickhouse."+ns+".svc" || st.Port != 8123 {
		t.Errorf("status.target %+v", run.Status.Target)
	}

	// What the server saw: the played server behind the Service, asked as
	// the generated user.
	svc, err := c.Clientset.CoreV1().Services(ns).Get(ctx, "clickhouse-custom-clickhouse", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	backend := svc.Annotations[executor.BackendAnnotation]
	secret, err := c.Clientset.CoreV1().Secrets(ns).Get(ctx, specs.CredentialsSecretName(run, "clickhouse"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	user, password := string(secret.Data["username"]), string(secret.Data["password"])
	if backend == "" || user != "dbperf" || len(password) < 16 {
		t.Fatalf("backend %q, user %q, a password of %d characters", backend, user, len(password))
	}
	if strings.Contains(mustJSON(run.Status), password) {
		t.Error("the generated password appears in the run's status")
	}
	// 18.16's query_log has no database column, and its type is a number
	// (2: QueryFinish); the table the prepare step made says the database.
	queries := "SELECT count() FROM system.query_log WHERE type = 2 AND user = '" + user + "' AND query = 'SELECT sum(n) FROM dbperf_numbers'"
	testutil.Eventually(t, 30*time.Second, "the workload's queries in the server's query_log", func() error {
		out, err := localdb.ClickHouseHTTP(ctx, backend, user, password, queries)
		if err != nil {
			return err
		}
		if out != "10" {
			return fmt.Errorf("query_log has %s of the workload's 10 sums", out)
		}
		return nil
	})
	if out, err := localdb.ClickHouseHTTP(ctx, backend, user, password, "SELECT database FROM system.tables WHERE name = 'dbperf_numbers'"); err != nil || out != "ssb" {
		t.Errorf("the prepare step's table is in database %q (%v), want ssb", out, err)
	}
	r := fullResults(ctx, t, build(t, bins, "./cmd/kubectl-dbperf", "kubectl-dbperf"), c, "clickhouse-custom")
	if len(r.Measurements) != 1 || metricValue(r.Measurements[0].Result, "operations", "sum") != 10 ||
		metricValue(r.Measurements[0].Result, "queriesPerSecond", "") <= 0 {
		t.Errorf("clickhouse-custom results: %s", mustJSON(r.Measurements))
	}
	t.Logf("clickhouse-custom: %s against ClickHouse at %s", run.Status.Primary.Display, backend)

	checkSSBComparison(ctx, t, c, filepath.Join(examples, "ssb-clickhouse.sql"))
}

// checkSSBComparison waits for clickhouse-ssb and checks its report: a row
// of every query's hotTimeMillis with a change, a bounded 95 % interval
// and a verdict.
func checkSSBComparison(ctx context.Context, t *testing.T, c *sim.Cluster, queriesFile string) {
	t.Helper()
	var cmp benchv1.BenchmarkComparison
	dyn := dynamic.NewForConfigOrDie(c.Config)
	testutil.Eventually(t, 5*time.Minute, "the SSB comparison finished", func() error {
		if err := getObject(ctx, dyn, cmpGVR, "clickhouse-ssb", &cmp); err != nil {
			return err
		}
		if cmp.Status.Phase != benchv1.ComparisonSucceeded && cmp.Status.Phase != benchv1.ComparisonFailed {
			return fmt.Errorf("comparison %s %s", cmp.Status.Phase, cmp.Status.Progress)
		}
		return nil
	})
	if cmp.Status.Phase != benchv1.ComparisonSucceeded {
		var runs []string
		for _, r := range cmp.Status.Runs {
			if run, err := getRun(ctx, dyn, r.Name); err == nil {
				runs = append(runs, fmt.Sprintf("%s %s: %s; steps %s", r.Name, run.Status.Phase, conditionsOf(run), mustJSON(run.Status.Steps)))
			}
		}
		t.Fatalf("clickhouse-ssb ended %s: %s\n%s", cmp.Status.Phase, mustJSON(cmp.Status.Conditions), strings.Join(runs, "\n"))
	}
	cm, err := c.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, cmp.Status.ReportConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(cm.Data["report.json"])
	if gz := cm.BinaryData["report.json.gz"]; len(gz) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	var reports []compare.Report
	if err := json.Unmarshal(raw, &reports); err != nil || len(reports) != 1 {
		t.Fatalf("report.json: %v (%d reports)", err, len(reports))
	}
	rows := map[string]compare.Row{}
	for _, r := range reports[0].Rows {
		if r.Metric == "hotTimeMillis" {
			rows[r.Operation] = r
		}
	}
	sql, err := os.ReadFile(queriesFile)
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^-- name: (\S+)$`).FindAllStringSubmatch(string(sql), -1)
	if len(names) != 13 {
		t.Fatalf("%s names %d queries, want SSB's 13", queriesFile, len(names))
	}
	finite := func(n compare.Num) bool { return !math.IsNaN(float64(n)) && !math.IsInf(float64(n), 0) }
	for _, m := range names {
		r, ok := rows[m[1]]
		switch {
		case !ok:
			t.Errorf("the report has no hotTimeMillis of %s", m[1])
		case !finite(r.DeltaPercent) || !finite(r.CILowPercent) || !finite(r.CIHighPercent) || r.Verdict == "":
			t.Errorf("%s: Δ %v %%, CI %v … %v, verdict %q (%s)", m[1], r.DeltaPercent, r.CILowPercent, r.CIHighPercent, r.Verdict, r.Reason)
		case len(r.BaselineVals) != 4 || len(r.CandidateVals) != 4:
			t.Errorf("%s: %d baseline and %d candidate measurements, want 4 each", m[1], len(r.BaselineVals), len(r.CandidateVals))
		}
	}
	t.Logf("clickhouse-ssb: %s; Q1.1 hot %.3f → %.3f ms (Δ %.1f %%, CI %.1f … %.1f, %s)", cmp.Status.Summary, rows["Q1.1"].Baseline.Median,
		rows["Q1.1"].Candidate.Median, rows["Q1.1"].DeltaPercent, rows["Q1.1"].CILowPercent, rows["Q1.1"].CIHighPercent, rows["Q1.1"].Verdict)
}

// serveSSBFlat serves ssbgen's lineorder_flat (tiny scale) as a gzip'd CSV
// file on 127.0.0.1, where the load generators (local processes) reach
// it, and returns its port.
func serveSSBFlat(t *testing.T) int {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	if err := ssbgen.Generate(1, ssbgen.Tiny).WriteCSV("lineorder_flat", gz); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/lineorder_flat.csv.gz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(buf.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}
