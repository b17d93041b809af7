package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

func loadSample(t *testing.T, file string) *benchv1.BenchmarkRun {
	t.Helper()
	var run benchv1.BenchmarkRun
	for _, doc := range strings.Split(readSample(t, file), "\n---\n") {
		if strings.Contains(doc, "kind: BenchmarkRun") {
			if err := yaml.Unmarshal([]byte(doc), &run); err != nil {
				t.Fatal(err)
			}
		}
	}
	run.ResourceVersion = ""
	return &run
}

func readSample(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "config", "samples", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// The MySQL TLS sample: the operator runs MySQL with require_secure_transport,
// issues the CA, server and client certificates into Secrets the run owns,
// builds the HammerDB schema as the prepare step and measures 20 and 40
// virtual users, HammerDB connecting with the client certificate.
func TestHammerDBOnMySQLWithTwoWayTLS(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	run := loadSample(t, "hammerdb-tprocc-mysql-tls.yaml")
	h.Create(run)
	run = h.Run(run.Name)
	var sts appsv1.StatefulSet
	testutil.Eventually(t, 10*time.Second, "mysql statefulset", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ChildName(run, "mysql")}, &sts)
	})
	args := strings.Join(sts.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--require-secure-transport=ON") || !strings.Contains(args, "--innodb-buffer-pool-size=2G") ||
		sts.Spec.Template.Spec.NodeSelector["pool"] != "standard-v3" || !metav1.IsControlledBy(&sts, run) {
		t.Fatalf("mysql statefulset args %q, placement %v", args, sts.Spec.Template.Spec.NodeSelector)
	}
	for _, name := range []string{specs.CredentialsSecretName(run, "mysql"), specs.TLSSecretName(run, "mysql"), specs.ClientTLSSecretName(run, "mysql")} {
		var s corev1.Secret
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, &s); err != nil || !metav1.IsControlledBy(&s, run) {
			t.Fatalf("secret %s: %v (owned: %v)", name, err, metav1.IsControlledBy(&s, run))
		}
	}
	h.WaitPhase(run.Name, 5*time.Second, benchv1.PhaseProvisioning)
	sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = 1, 1, 1
	if err := k8s.Status().Update(ctx, &sts); err != nil {
		t.Fatal(err)
	}

	prep := h.WaitJob(specs.PrepareJobName(run))
	pod := prep.Spec.Template.Spec
	c := pod.Containers[0]
	if c.Image != "tpcorg/hammerdb:v4.12" || !strings.HasSuffix(strings.Join(c.Args, " "), "-- ./hammerdbcli auto /etc/dbperf/workload/build.tcl") {
		t.Errorf("prepare container %s %v", c.Image, c.Args)
	}
	var projected *corev1.ProjectedVolumeSource
	for _, v := range pod.Volumes {
		if v.Projected != nil {
			projected = v.Projected
		}
	}
	if projected == nil || len(projected.Sources) != 2 || projected.Sources[1].Secret.Name != specs.ClientTLSSecretName(run, "mysql") {
		t.Fatalf("TLS volume %+v", projected)
	}
	var files corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.FilesConfigMapName(run)}, &files); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"diset connection mysql_ssl true", "diset connection mysql_ssl_two_way true", "diset tpcc mysql_count_ware 1", "buildschema"} {
		if !strings.Contains(files.Data["build.tcl"], want) {
			t.Errorf("build.tcl lacks %q:\n%s", want, files.Data["build.tcl"])
		}
	}
	if !strings.Contains(files.Data["run-1.tcl"], "vuset vu 40") {
		t.Errorf("run-1.tcl:\n%s", files.Data["run-1.tcl"])
	}
	h.Replay(prep, node, "hammerdb", kit.WriteTemp(t, "Vuser 1:CREATING TPCC TABLES\nVuser 1:TPCC SCHEMA COMPLETE\nVuser 1:FINISHED SUCCESS\nALL VIRTUAL USERS COMPLETE\n"))
	for step := range 2 {
		job := h.WaitJob(specs.MeasureJobName(run, step, 1))
		h.Replay(job, node, "hammerdb", kit.Fixture(t, "hammerdb", "mysql-400wh-100vu-ssl-cipher-allwh.txt"))
	}
	done := h.WaitPhase(run.Name, 20*time.Second, benchv1.PhaseSucceeded)
	if p := done.Status.Primary; p == nil || !strings.HasPrefix(p.Display, "2335 NOPM") {
		t.Fatalf("primary %+v", done.Status.Primary)
	}
	if done.Status.Target == nil || done.Status.Target.Kind != "mysql" || done.Status.Steps[1].Name != "vu=40" {
		t.Errorf("target %+v steps %+v", done.Status.Target, done.Status.Steps)
	}
}

// A schema build that printed no SCHEMA COMPLETE fails the run, though
// hammerdbcli exited 0.
func TestHammerDBFailedBuildFailsTheRun(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "tprocc-bad-build"}, Spec: benchv1.BenchmarkRunSpec{
		Target:   benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "pg.example", Port: 5432}},
		Workload: benchv1.WorkloadSpec{HammerDB: &benchv1.HammerDBWorkload{Database: benchv1.HammerDBPostgres, Warehouses: 1, VirtualUsers: []int32{1}}},
	}}
	h.Create(run)
	prep := h.WaitJob(specs.PrepareJobName(h.Run(run.Name)))
	h.Replay(prep, node, "hammerdb", kit.Fixture(t, "hammerdb", "mysql-v4.1-buildschema-1wh-diset-errors.txt"))
	done := h.WaitPhase(run.Name, 20*time.Second, benchv1.PhaseFailed)
	if c := findCondition(done, benchv1.ConditionPrepared); c == nil || !strings.Contains(c.Message, "refused a configuration command") {
		t.Errorf("prepared condition %+v", c)
	}
}

// Two load generators per measurement: an Indexed Job of two pods held at
// the start barrier until both run, then released with one start instant;
// their results merge (throughputs add) into one measurement.
func TestParallelLoadGeneratorsBarrierAndMerge(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "ycsb-2gen"}, Spec: benchv1.BenchmarkRunSpec{
		Target: benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "docstore", Port: 27017}},
		Workload: benchv1.WorkloadSpec{Parallelism: 2, SkipPrepare: true,
			YCSB: &benchv1.YCSBWorkload{Binding: "mongodb", CoreWorkload: "a", Threads: []int32{8}}},
	}}
	h.Create(run)
	job := h.WaitJob(specs.MeasureJobName(h.Run(run.Name), 0, 1))
	if ptrValue(job.Spec.Completions) != 2 || ptrValue(job.Spec.Parallelism) != 2 || job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("job spec %+v", job.Spec)
	}
	if args := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); !strings.HasPrefix(args, "exec --start-barrier /etc/dbperf/barrier/start-at --generators 2 ") {
		t.Fatalf("runner args %s", args)
	}
	// Both pods start; the operator must not release the barrier until
	// the second one runs.
	pods := []*corev1.Pod{h.Pod(job, 0, node, kit.Running())}
	testutil.Eventually(t, 10*time.Second, "the operator seeing one generator running", func() error {
		if c := findCondition(h.Run(run.Name), benchv1.ConditionCompleted); c == nil || !strings.Contains(c.Message, "1 of 2 load generators running") {
			return fmt.Errorf("completed condition %+v", c)
		}
		return nil
	})
	if got := podAnnotation(t, h, pods[0].Name); got != "" {
		t.Fatalf("barrier opened with one of two generators running: %s", got)
	}
	pods = append(pods, h.Pod(job, 1, node, kit.Running()))
	var at string
	testutil.Eventually(t, 10*time.Second, "start instant on both pods", func() error {
		a, b := podAnnotation(t, h, pods[0].Name), podAnnotation(t, h, pods[1].Name)
		if a == "" || a != b {
			return fmt.Errorf("annotations %q %q", a, b)
		}
		at = a
		return nil
	})
	if ts, err := time.Parse(time.RFC3339Nano, at); err != nil || ts.Before(time.Now().Add(-10*time.Second)) {
		t.Fatalf("start instant %q: %v", at, err)
	}
	// Decided once, on the Job, so that no reconcile can hand out another.
	var recorded batchv1.Job
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(job), &recorded); err != nil || recorded.Annotations[specs.AnnotationStartAt] != at {
		t.Errorf("the Job records start instant %q, the pods %q (%v)", recorded.Annotations[specs.AnnotationStartAt], at, err)
	}
	for _, pod := range pods {
		h.End(pod, "ycsb", runner.Options{Command: []string{"cat", kit.Fixture(t, "ycsb", "vc-mongodb-0.17.0-workloada-8threads.txt")}})
	}
	done := h.WaitPhase(run.Name, 20*time.Second, benchv1.PhaseSucceeded)
	rep := done.Status.Steps[0].Repetitions[0]
	var ops float64
	for _, m := range rep.Metrics {
		if m.Name == "opsPerSecond" && m.Operation == "OVERALL" {
			ops = m.Value
		}
	}
	// The fixture's throughput, 28246.6 ops/s, from each of two generators.
	if ops < 2*28246 || ops > 2*28247 || rep.Node != node+","+node {
		t.Errorf("merged throughput %v (want twice 28246.6), node %q, metrics %+v", ops, rep.Node, rep.Metrics)
	}
}

func podAnnotation(t *testing.T, h *harness, name string) string {
	t.Helper()
	var p corev1.Pod
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	return p.Annotations[specs.AnnotationStartAt]
}

// applySample creates every object of a sample file in the test's
// namespace and returns its BenchmarkRun.
func applySample(t *testing.T, h *harness, file string) *benchv1.BenchmarkRun {
	t.Helper()
	var run *benchv1.BenchmarkRun
	for _, doc := range strings.Split(readSample(t, file), "\n---\n") {
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil || obj.GetKind() == "" {
			continue
		}
		if obj.GetKind() == "BenchmarkRun" {
			run = loadSampleDoc(t, doc)
			h.Create(run)
			continue
		}
		obj.SetNamespace(h.NS)
		if err := k8s.Create(context.Background(), obj); err != nil {
			t.Fatalf("%s: %s %s: %v", file, obj.GetKind(), obj.GetName(), err)
		}
	}
	if run == nil {
		t.Fatalf("%s holds no BenchmarkRun", file)
	}
	return h.Run(run.Name)
}

func loadSampleDoc(t *testing.T, doc string) *benchv1.BenchmarkRun {
	t.Helper()
	var run benchv1.BenchmarkRun
	if err := yaml.Unmarshal([]byte(doc), &run); err != nil {
		t.Fatal(err)
	}
	return &run
}

// markServerReady plays the StatefulSet controller for a provisioned target.
func markServerReady(t *testing.T, h *harness, name string) {
	t.Helper()
	ctx := context.Background()
	var sts appsv1.StatefulSet
	testutil.Eventually(t, 10*time.Second, "statefulset "+name, func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, &sts)
	})
	n := ptrValue(sts.Spec.Replicas)
	sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = n, n, n
	if err := k8s.Status().Update(ctx, &sts); err != nil {
		t.Fatal(err)
	}
}

// markCNPGHealthy plays CloudNativePG for a postgres target.
func markCNPGHealthy(t *testing.T, h *harness, name string) *unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	testutil.Eventually(t, 10*time.Second, "CNPG cluster "+name, func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, cluster)
	})
	want, _, _ := unstructured.NestedInt64(cluster.Object, "spec", "instances")
	_ = unstructured.SetNestedField(cluster.Object, specs.CNPGHealthyPhase, "status", "phase")
	_ = unstructured.SetNestedField(cluster.Object, want, "status", "readyInstances")
	if err := k8s.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	return cluster
}

// The seed settings, as their samples are written, go through the
// whole lifecycle: every object of the sample applied, the target played
// ready, each Job fed the tool's recorded output through the real runner,
// until the run Succeeds with the tool's numbers.
func TestSeedSamplesRunThroughTheLifecycle(t *testing.T) {
	cases := []struct {
		file, workload, fixture, primary string
		ready                            func(t *testing.T, h *harness, run *benchv1.BenchmarkRun)
		prepare                          string
	}{
		{file: "hammerdb-tprocc-cnpg.yaml", workload: "hammerdb", fixture: "pkb-mysql-v4.0-cli-4vu-20wh.txt", primary: "8153 NOPM",
			prepare: "Vuser 1:TPCC SCHEMA COMPLETE\nVuser 1:FINISHED SUCCESS\n",
			ready: func(t *testing.T, h *harness, run *benchv1.BenchmarkRun) {
				c := markCNPGHealthy(t, h, specs.PostgresClusterName(run))
				if su, _, _ := unstructured.NestedBool(c.Object, "spec", "enableSuperuserAccess"); !su {
					t.Error("HammerDB on CloudNativePG needs superuser access")
				}
			}},
		{file: "ycsb-mongodb-external.yaml", workload: "ycsb", fixture: "vc-mongodb-0.17.0-workloada-8threads.txt", primary: "28246 ops/s",
			prepare: ycsbLoad(t)},
		{file: "ycsb-mongodb-parallel.yaml", workload: "ycsb", fixture: "vc-mongodb-0.17.0-workloada-8threads.txt", primary: "56492 ops/s",
			prepare: ycsbLoad(t), ready: func(t *testing.T, h *harness, run *benchv1.BenchmarkRun) {
				markServerReady(t, h, specs.ChildName(run, "mongodb"))
			}},
		{file: "osb-http-logs-external.yaml", workload: "osb", fixture: "docs-quickstart-percolator-test-mode-summary.txt"},
		{file: "osb-opensearch-3nodes.yaml", workload: "osb", fixture: "docs-quickstart-percolator-test-mode-summary.txt",
			ready: func(t *testing.T, h *harness, run *benchv1.BenchmarkRun) {
				markServerReady(t, h, specs.ChildName(run, "opensearch"))
			}},
		{file: "k6-session-valkey.yaml", workload: "k6", fixture: "v1-compact-pass-with-progress-lines.txt",
			ready: func(t *testing.T, h *harness, run *benchv1.BenchmarkRun) {
				markServerReady(t, h, specs.ValkeyName(run))
			}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			h := newHarness(t)
			node := h.LoadgenNode()
			run := applySample(t, h, c.file)
			if c.ready != nil {
				c.ready(t, h, run)
			}
			steps := len(run.Status.Steps)
			fed := map[string]bool{}
			testutil.Eventually(t, 60*time.Second, c.file+" finished", func() error {
				cur := h.Run(run.Name)
				switch cur.Status.Phase {
				case benchv1.PhaseSucceeded:
					return nil
				case benchv1.PhaseFailed, benchv1.PhaseInvalid:
					t.Fatalf("%s ended %s: %s", c.file, cur.Status.Phase, mustCondition(cur))
				}
				var jobs batchv1.JobList
				if err := k8s.List(context.Background(), &jobs, client.InNamespace(h.NS)); err != nil {
					return err
				}
				for i := range jobs.Items {
					j := &jobs.Items[i]
					if fed[j.Name] {
						continue
					}
					fed[j.Name] = true
					out := kit.Fixture(t, c.workload, c.fixture)
					if j.Labels[benchv1.LabelRole] == benchv1.RolePrepare {
						out = kit.WriteTemp(t, c.prepare)
					}
					if n := ptrValue(j.Spec.Completions); n > 1 {
						for idx := range int(n) {
							pod := h.Pod(j, idx, node, kit.Running())
							h.End(pod, c.workload, runner.Options{Command: []string{"cat", out}})
						}
						continue
					}
					h.Replay(j, node, c.workload, out)
				}
				return fmt.Errorf("%s is %s (%d steps)", c.file, cur.Status.Phase, steps)
			})
			done := h.Run(run.Name)
			if c.primary != "" && (done.Status.Primary == nil || !strings.HasPrefix(done.Status.Primary.Display, c.primary)) {
				t.Errorf("primary %+v, want %s…", done.Status.Primary, c.primary)
			}
			for _, st := range done.Status.Steps {
				if want := max(done.Spec.Repetitions, 1); int32(len(st.Repetitions)) != want {
					t.Errorf("step %s: %d repetitions, want %d", st.Name, len(st.Repetitions), want)
				}
			}
		})
	}
}

// ycsbLoad is the output of a real YCSB load step.
func ycsbLoad(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "workloads", "ycsb", "testdata", "ycsb-0.17.0-basicdb-load-2000.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustCondition(run *benchv1.BenchmarkRun) string {
	var parts []string
	for _, c := range run.Status.Conditions {
		parts = append(parts, c.Type+"="+string(c.Status)+"/"+c.Reason+": "+c.Message)
	}
	return strings.Join(parts, "; ")
}

// The run's files ConfigMap holds every invocation's files: a later Job's
// new or changed file is added, never dropped because an earlier Job
// created the ConfigMap first.
func TestFilesConfigMapGainsLaterInvocationsFiles(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	run := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "files", Namespace: h.NS, UID: "0f1e2d3c-0000-4000-8000-000000000001"}}
	r := &BenchmarkRunReconciler{Client: k8s}
	if _, err := r.ensureFiles(ctx, run, map[string]string{"build.tcl": "buildschema"}); err != nil {
		t.Fatal(err)
	}
	name, err := r.ensureFiles(ctx, run, map[string]string{"build.tcl": "buildschema", "run-0.tcl": "vurun"})
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["build.tcl"] != "buildschema" || cm.Data["run-0.tcl"] != "vurun" {
		t.Errorf("files %v", cm.Data)
	}
}
