package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/executor"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// failNS holds the runs that must fail saying why.
const failNS = "perf-failures"

// wrongPassword is what every Secret of a wrong password holds: it must
// never appear in status, events, the results ConfigMap or a pod's log.
const wrongPassword = "Wr0ng-Pass-e2e-7f3a"

// failure is one run that fails and what its user must read.
type failure struct {
	name string
	// yaml is the run's spec (indented under spec:).
	yaml string
	// said is what the tool itself said (quoted by its parser, or by the
	// runner as "the tool said: …"), which status.message, the condition,
	// an event and `kubectl get` must carry.
	said string
}

// failures: every tool, against a real server, with a wrong password, a
// missing database or a host where nothing listens. The servers are local;
// the tools are the real ones the executor runs.
func failures(pg testutil.Postgres, redisPort, mariaPort, mongoPort, nobodyPort int) []failure {
	lg := "    placement: {nodeSelector: {pool: loadgen}}\n"
	ext := func(port int, db, secret string) string {
		s := fmt.Sprintf("  target:\n    external: {host: 127.0.0.1, port: %d", port)
		if db != "" {
			s += ", database: " + db
		}
		if secret != "" {
			s += ", secretRef: {name: " + secret + "}"
		}
		return s + "}\n"
	}
	return []failure{
		{"pgbench-wrong-password", ext(pg.Port, "postgres", "pg-wrong") +
			"  workload:\n    pgbench: {scale: 1, clients: [1], duration: 2s}\n" + lg,
			`password authentication failed for user`},
		{"pgbench-missing-database", ext(pg.Port, "nosuchdb", "pg-right") +
			"  workload:\n    pgbench: {scale: 1, clients: [1], duration: 2s}\n" + lg,
			`database "nosuchdb" does not exist`},
		{"hammerdb-pg-wrong-password", ext(pg.Port, "tpcc", "pg-wrong") +
			"  workload:\n    hammerdb: {database: postgres, warehouses: 1, buildVirtualUsers: 1, virtualUsers: [1], rampUp: 0m, duration: 1m}\n" + lg,
			`password authentication failed for user`},
		{"hammerdb-mysql-wrong-password", ext(mariaPort, "tpcc", "mysql-wrong") +
			"  workload:\n    hammerdb: {database: mysql, warehouses: 1, buildVirtualUsers: 1, virtualUsers: [1], rampUp: 0m, duration: 1m}\n" + lg,
			`Access denied for user`},
		{"redis-benchmark-wrong-password", ext(redisPort, "", "redis-wrong") +
			"  workload:\n    redisBenchmark: {tests: [set], requests: 1000, clients: [1]}\n" + lg,
			`WRONGPASS`},
		{"redis-benchmark-unreachable", ext(nobodyPort, "", "") +
			"  workload:\n    redisBenchmark: {tests: [set], requests: 1000, clients: [1]}\n" + lg,
			`Could not connect to Redis at 127.0.0.1:`},
		{"memtier-wrong-password", ext(redisPort, "", "redis-wrong") +
			"  workload:\n    memtier: {threads: [1], clients: 1, pipeline: [1], ratio: \"1:1\", keyMaximum: 100, dataSizeBytes: 32, duration: 2s}\n" + lg,
			`WRONGPASS`},
		{"ycsb-wrong-password", ext(mongoPort, "ycsb", "mongo-wrong") +
			"  workload:\n    ycsb: {binding: mongodb, coreWorkload: a, recordCount: 10, operationCount: 10, threads: [1]}\n" + lg,
			`Exception authenticating MongoCredential{mechanism=SCRAM-SHA-256, userName='ycsb'`},
		{"k6-wrong-password", ext(redisPort, "", "redis-wrong") +
			"  workload:\n    k6:\n      vus: [1]\n      duration: 2s\n      script: |\n" +
			"        import redis from 'k6/experimental/redis';\n" +
			"        const client = new redis.Client(`redis://:${__ENV.DBPERF_TARGET_PASSWORD}@${__ENV.DBPERF_TARGET_HOST}:${__ENV.DBPERF_TARGET_PORT}`);\n" +
			"        export default async function () { await client.set('k', 'v'); }\n" + lg,
			`WRONGPASS`},
		{"query-missing-database", ext(pg.Port, "", "pg-right") +
			"  workload:\n    queryBench: {driver: postgres, database: nosuchdb, queries: [{name: one, sql: \"SELECT 1\"}], runsPerQuery: 1}\n" + lg,
			`database "nosuchdb" does not exist`},
		{"custom-missing-database", ext(pg.Port, "nosuchdb", "pg-right") +
			"  workload:\n    image: registry.example/dbperf-psql-statements:1\n    custom:\n      command: [psql-statements.sh]\n      args: [run, \"5\"]\n" +
			"      prepare: {command: [psql-statements.sh], args: [prepare]}\n      format: Lines\n      primaryMetric: {name: statementsPerSecond}\n" + lg,
			`database "nosuchdb" does not exist`},
	}
}

// TestEveryToolSaysWhyItFailed: issue 25's "every failure says why where a
// user looks first". Each tool runs for real against a real server with a
// wrong password, a missing database or nothing listening; each run fails,
// and what the tool itself said (redacted) is in status.message and so in
// `kubectl get`, on the failing condition (`kubectl describe`), in an event
// and in the results document; the wrong password is nowhere.
func TestEveryToolSaysWhyItFailed(t *testing.T) {
	binDir := testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	helm := testutil.NeedEnv(t, "HELM")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	pg := testutil.StartPostgres(t)
	redis := testutil.StartRedis(t, "--requirepass", "right-"+wrongPassword[:4])
	mariaDir, err := os.MkdirTemp("", "dbperf-mysql-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(mariaDir) })
	maria := testutil.StartMariaDB(t, mariaDir)
	if out, err := maria.Client("--socket="+maria.Socket, "-uroot", "-e", "CREATE USER 'bench'@'%' IDENTIFIED BY 'right-pass'; GRANT ALL ON *.* TO 'bench'@'%'"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ferret, err := localdb.StartFerretDB(executor.FerretDBBin(), "ycsb", "right-pass")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ferret.Stop)

	work, logf := workDir(t, "dbperf-e2e-failures-")
	bins := t.TempDir()
	images := map[string][]string{
		"dbperf-psql-statements": append([]string{filepath.Join(testutil.RepoRoot(), "workloads", "custom", "examples", "psql-statements")}, executor.DefaultImages()["postgres"]...),
	}
	stack, err := sim.Up(ctx, sim.StackOptions{Name: fmt.Sprintf("e2e-failures-%d", os.Getpid()), Dir: work, BinDir: binDir, Helm: helm, Images: images,
		Chart: filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator"), Manager: build(t, bins, "./cmd/manager", "manager"),
		Runner: build(t, bins, "./cmd/runner", "dbperf-runner"), Log: logf, Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stack.Stop)
	c := stack.Cluster

	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + failNS + "\n")
	for name, creds := range map[string][2]string{
		"pg-wrong": {pg.User, wrongPassword}, "pg-right": {pg.User, pg.Password}, "mysql-wrong": {"bench", wrongPassword},
		"redis-wrong": {"default", wrongPassword}, "mongo-wrong": {"ycsb", wrongPassword},
	} {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\nstringData:\n  username: %s\n  password: %s\n", name, failNS, creds[0], creds[1])
	}
	cases := failures(pg, redis.Port, maria.Port, ferret.Port, testutil.FreePort(t))
	for _, f := range cases {
		fmt.Fprintf(&b, "---\napiVersion: bench.dbperf.io/v1alpha1\nkind: BenchmarkRun\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  allowSharedNodes: true\n  cleanup: Never\n%s",
			f.name, failNS, f.yaml)
	}
	if out, err := c.Kubectl(ctx, strings.NewReader(b.String()), "apply", "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	final := map[string]*benchv1.BenchmarkRun{}
	var mu sync.Mutex
	testutil.Eventually(t, 6*time.Minute, "every run ended", func() error {
		if gone, err := stack.Manager.Exited(); gone {
			t.Fatalf("the manager exited: %v", err)
		}
		var waiting []string
		for _, f := range cases {
			r, err := getRunIn(ctx, dyn, failNS, f.name)
			if err != nil {
				return err
			}
			if !r.Status.Phase.Terminal() {
				waiting = append(waiting, fmt.Sprintf("%s is %s (%s)", f.name, r.Status.Phase, r.Status.Message))
				continue
			}
			mu.Lock()
			final[f.name] = r
			mu.Unlock()
		}
		if len(waiting) > 0 {
			return fmt.Errorf("%s", strings.Join(waiting, "; "))
		}
		return nil
	})

	get, err := c.Kubectl(ctx, nil, "get", "benchmarkruns", "-n", failNS)
	if err != nil {
		t.Fatalf("%v\n%s", err, get)
	}
	events, err := c.Clientset.CoreV1().Events(failNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cases {
		r := final[f.name]
		if r.Status.Phase != benchv1.PhaseFailed {
			t.Errorf("%s ended %s: %s", f.name, r.Status.Phase, conditionsOf(r))
			continue
		}
		msg := r.Status.Message
		if !strings.Contains(msg, f.said) {
			t.Errorf("%s: status.message does not quote the tool saying %q: %s\n%s", f.name, f.said, msg, conditionsOf(r))
		}
		if !strings.Contains(conditionsOf(r), f.said) {
			t.Errorf("%s: no condition says %q: %s", f.name, f.said, conditionsOf(r))
		}
		row := ""
		for _, l := range strings.Split(string(get), "\n") {
			if strings.HasPrefix(l, f.name+" ") {
				row = l
			}
		}
		if !strings.Contains(row, f.said) {
			t.Errorf("%s: `kubectl get benchmarkruns` does not show %q: %s", f.name, f.said, row)
		}
		said := false
		for _, e := range events.Items {
			if e.InvolvedObject.Name == f.name && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, f.said) {
				said = true
			}
		}
		if !said {
			t.Errorf("%s: no Warning event quotes %q", f.name, f.said)
		}
		cm, err := c.Clientset.CoreV1().ConfigMaps(failNS).Get(ctx, specs.ResultsConfigMapName(r), metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s: results ConfigMap: %v", f.name, err)
		} else if !strings.Contains(documentText(t, cm), "outputTail") {
			t.Errorf("%s: the results document keeps no end of the tool's output", f.name)
		}
		t.Logf("%s: %s", f.name, msg)
	}
	// The wrong password is nowhere a user or a log reader looks.
	leak := func(where string, v any) {
		if raw, _ := json.Marshal(v); strings.Contains(string(raw), wrongPassword) {
			t.Errorf("the password appears in %s", where)
		}
	}
	leak("events", events.Items)
	for name, r := range final {
		leak("the status of "+name, r.Status)
	}
	cms, err := c.Clientset.CoreV1().ConfigMaps(failNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if strings.Contains(documentText(t, &cm), wrongPassword) {
			t.Errorf("the password appears in ConfigMap %s", cm.Name)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(work, "pods", failNS+"_*", "container.log"))
	for _, l := range logs {
		if raw, _ := os.ReadFile(l); strings.Contains(string(raw), wrongPassword) {
			t.Errorf("the password appears in the log %s", l)
		}
	}
	if len(logs) < len(cases) {
		t.Errorf("%d pod logs for %d runs", len(logs), len(cases))
	}
}

// documentText is a ConfigMap's text, its results document unpacked.
func documentText(t *testing.T, cm *corev1.ConfigMap) string {
	t.Helper()
	var b strings.Builder
	for _, v := range cm.Data {
		b.WriteString(v)
	}
	if doc, err := specs.ReadDocument(cm); err == nil && doc != nil {
		raw, _ := json.Marshal(doc)
		b.Write(raw)
	}
	return b.String()
}
