package specs

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/memtier"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
	"github.com/dbperf-io/dbperf-operator/workloads/redisbenchmark"
)

func golden(t *testing.T, name string, obj any) {
	t.Helper()
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, name+".golden.yaml", string(got))
}

func sampleRun() *benchv1.BenchmarkRun {
	return &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "v4a-tpcb", Namespace: "perf", UID: "8f14e45f-ceea-467a-9575-7d8d8a1a0b1c"},
		Spec: benchv1.BenchmarkRunSpec{
			Validity: benchv1.ValiditySpec{MaxLoadGeneratorCPUPercent: 85, MaxErrorPercent: 0.5},
			Target: benchv1.TargetSpec{
				Postgres:  &benchv1.PostgresTarget{Instances: 2, Parameters: map[string]string{"max_connections": "400"}},
				Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "standard-v4a"}},
			},
			Workload: benchv1.WorkloadSpec{
				Pgbench:   &benchv1.PgbenchWorkload{Scale: 100, Clients: []int32{20, 40}, Duration: metav1.Duration{Duration: 5 * time.Minute}, ProgressInterval: &metav1.Duration{Duration: 10 * time.Second}},
				Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "loadgen"}, Tolerations: []corev1.Toleration{{Key: "dedicated", Value: "loadgen", Effect: corev1.TaintEffectNoSchedule}}},
			},
		},
	}
}

func endpoint() pod.Endpoint {
	sec := corev1.LocalObjectReference{Name: "v4a-tpcb-pg-app"}
	return pod.Endpoint{Host: "v4a-tpcb-pg-rw.perf.svc", Port: 5432, Database: "app",
		Username: &corev1.SecretKeySelector{LocalObjectReference: sec, Key: "username"},
		Password: &corev1.SecretKeySelector{LocalObjectReference: sec, Key: "password"}}
}

func TestPgbenchJobsGolden(t *testing.T) {
	run := sampleRun()
	w := pgbench.Pgbench{}
	steps := w.Steps(&run.Spec.Workload)
	if len(steps) != 2 || steps[1].Name != "clients=40" {
		t.Fatalf("steps %+v", steps)
	}
	ep := endpoint()
	job := Job(JobParams{Run: run, Name: MeasureJobName(run, 1, 2), Role: benchv1.RoleLoadgen, Workload: w.Name(), Step: 1, Repetition: 2,
		Invocation: w.Run(&run.Spec.Workload, ep, steps[1]), Image: w.DefaultImage(), RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:v0.1.0",
		Endpoint: ep, AvoidPods: map[string]string{CNPGClusterLabel: "v4a-tpcb-pg"}, ActiveDeadlineSeconds: ptr.To[int64](3600),
		ServerStatistics: ServerStatistics{Protocol: pod.ProtocolPostgres, Interval: 5 * time.Second}})
	golden(t, "pgbench-measure-job", job)
	prep := Job(JobParams{Run: run, Name: PrepareJobName(run), Role: benchv1.RolePrepare, Workload: w.Name(),
		Invocation: *w.Prepare(&run.Spec.Workload, ep), Image: w.DefaultImage(), RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:v0.1.0", Endpoint: ep})
	golden(t, "pgbench-prepare-job", prep)
	cluster, err := CNPGCluster(run, false)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "cnpg-cluster", cluster.Object)
}

func TestMemtierAndRedisBenchmarkCommands(t *testing.T) {
	spec := &benchv1.WorkloadSpec{Memtier: &benchv1.MemtierWorkload{Threads: []int32{4}, Pipeline: []int32{1, 16}, Clients: 50,
		Ratio: "1:10", KeyPattern: "R:R", KeyMinimum: 1, KeyMaximum: 1000000, DataSizeBytes: 1024, Duration: metav1.Duration{Duration: 3 * time.Minute}}}
	ep := pod.Endpoint{Host: "vk.perf.svc", Port: 6379, Password: &corev1.SecretKeySelector{Key: "password"}, TLS: true}
	m := memtier.Memtier{}
	steps := m.Steps(spec)
	inv := m.Run(spec, ep, steps[1])
	got := strings.Join(inv.Command, " ")
	want := "memtier_benchmark --server vk.perf.svc --port 6379 --protocol redis --key-minimum 1 --key-maximum 1000000 --data-size 1024 --hide-histogram " +
		"--authenticate $(DBPERF_TARGET_PASSWORD) --tls --tls-skip-verify --threads 4 --clients 50 --pipeline 16 --test-time 180 " +
		"--print-percentiles 50,90,95,99,99.9 --json-out-file /dbperf/out/memtier.json --ratio 1:10 --key-pattern R:R"
	if got != want {
		t.Errorf("memtier run:\n got %s\nwant %s", got, want)
	}
	if len(inv.SecretEnv) != 1 || inv.SecretEnv[0] != pod.EnvPassword {
		t.Errorf("the password variable must be redacted: %v", inv.SecretEnv)
	}
	load := strings.Join(m.Prepare(spec, ep).Command, " ")
	if !strings.Contains(load, "--ratio 1:0 --key-pattern P:P --requests allkeys") {
		t.Errorf("memtier load step: %s", load)
	}
	rb := redisbenchmark.RedisBenchmark{}
	rspec := &benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set", "get"}, Clients: []int32{50}, Pipeline: []int32{1}, Requests: 1000, DataSizeBytes: 3}}
	got = strings.Join(rb.Run(rspec, pod.Endpoint{Host: "r", Port: 6379}, rb.Steps(rspec)[0]).Command, " ")
	if got != "redis-benchmark -h r -p 6379 -c 50 -P 1 -n 1000 -d 3 -t set,get --csv" {
		t.Errorf("redis-benchmark: %s", got)
	}
}

func TestChildNames(t *testing.T) {
	short := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "run", UID: "u1"}}
	if got := MeasureJobName(short, 3, 12); got != "run-s3-r12" {
		t.Errorf("short name %q", got)
	}
	long := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("postgres-tpcc-", 10) + "x", UID: "u2"}}
	a, b := MeasureJobName(long, 3, 12), MeasureJobName(long, 3, 12)
	if a != b || len(a) > MaxNameLength || !strings.HasSuffix(a, "-s3-r12") {
		t.Errorf("long name %q (%d)", a, len(a))
	}
	if errs := validation.IsDNS1123Label(a); len(errs) > 0 {
		t.Errorf("%q: %v", a, errs)
	}
	other := long.DeepCopy()
	other.UID = "u3"
	if MeasureJobName(other, 3, 12) == a {
		t.Error("runs with the same long name must not share child names")
	}
}

func TestResultsConfigMapStaysUnderTheLimit(t *testing.T) {
	run := sampleRun()
	doc := &Document{Run: run.Name, Steps: []DocumentStep{{Name: "clients=20"}}}
	small, err := ResultsConfigMap(run, doc)
	if err != nil || small.Data[ResultsKey] == "" || len(doc.Dropped) != 0 {
		t.Fatalf("small document: %v %v", err, doc.Dropped)
	}
	big := bigDocument()
	cm, err := ResultsConfigMap(run, big)
	if err != nil {
		t.Fatal(err)
	}
	size := len(cm.BinaryData[ResultsKeyGzip]) + len(cm.Data[ResultsKey])
	if size == 0 || size > 1<<20 {
		t.Fatalf("configmap payload %d bytes", size)
	}
	t.Logf("dropped: %v, %d bytes", big.Dropped, size)
}

// TestServerStatisticsArguments: the runner's poller gets where the server
// is and how to reach it over TLS, never a credential; the credentials
// reach it as the tool's do, from their Secret, and the password is
// redacted even when the tool takes none.
func TestServerStatisticsArguments(t *testing.T) {
	run := sampleRun()
	ep := endpoint()
	ep.TLS, ep.CASecret, ep.ClientCertSecret, ep.ServerName = true, "pg-ca", "pg-client", "db.example"
	inv := pod.Invocation{Command: []string{"tool"}} // a tool that takes no credentials
	job := Job(JobParams{Run: run, Name: "j", Role: benchv1.RoleLoadgen, Workload: "pgbench", Invocation: inv, Endpoint: ep,
		ServerStatistics: ServerStatistics{Protocol: pod.ProtocolPostgres, Database: "tpcc", Interval: 2 * time.Second}})
	c := job.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{
		"--server-statistics postgres --server-address v4a-tpcb-pg-rw.perf.svc:5432 --server-database tpcc --server-poll-interval 2s",
		"--server-tls --server-tls-ca " + pod.CAFile + " --server-tls-cert " + pod.TLSDir + "/tls.crt --server-tls-key " + pod.TLSDir + "/tls.key --server-tls-name db.example",
		"--redact-env " + pod.EnvPassword,
	} {
		if !strings.Contains(args, want) {
			t.Errorf("runner arguments lack %q: %s", want, args)
		}
	}
	env := map[string]*corev1.EnvVarSource{}
	for _, e := range c.Env {
		if e.Value != "" {
			t.Errorf("a literal value in the environment: %s", e.Name)
		}
		env[e.Name] = e.ValueFrom
	}
	if u, p := env[pod.EnvUsername], env[pod.EnvPassword]; u == nil || p == nil || p.SecretKeyRef.Name != "v4a-tpcb-pg-app" {
		t.Errorf("the poller's credentials do not come from the Secret: %+v", c.Env)
	}
	prep := Job(JobParams{Run: run, Name: "p", Role: benchv1.RolePrepare, Workload: "pgbench", Invocation: inv, Endpoint: ep,
		ServerStatistics: ServerStatistics{Protocol: pod.ProtocolPostgres, Database: "tpcc"}})
	if a := strings.Join(prep.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(a, "--server-database app") {
		t.Errorf("a prepare step polls the endpoint's database (the tool's schema is not built yet): %s", a)
	}
	none := Job(JobParams{Run: run, Name: "n", Role: benchv1.RoleLoadgen, Workload: "pgbench", Invocation: inv, Endpoint: ep})
	if a := strings.Join(none.Spec.Template.Spec.Containers[0].Args, " "); strings.Contains(a, "--server-") || len(none.Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Errorf("no statistics asked, yet: %s %+v", a, none.Spec.Template.Spec.Containers[0].Env)
	}
}
