package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

const secretValue = "T0P-SECRET-never-recorded"

// The whole life of a run against an external PostgreSQL: prepare, a sweep
// of two client counts times two repetitions, results, cleanup.
func TestExternalPostgresLifecycle(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	h.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pg-creds"}, StringData: map[string]string{"username": "bench", "password": secretValue}})
	run := kit.PgbenchRun("ext-pg", benchv1.TargetSpec{External: &benchv1.ExternalTarget{
		Host: "db.example.internal", Port: 5432, Database: "bench", SecretRef: &corev1.LocalObjectReference{Name: "pg-creds"},
	}}, []int32{16, 105}, 2)
	h.Create(run)

	prep := h.WaitJob(specs.PrepareJobName(run))
	checkWorkloadPod(t, prep.Spec.Template.Spec, "pg-creds")
	h.Replay(prep, node, "pgbench", "/dev/null")

	fixtures := []string{"pkb-tpcb-16c-5s-r-stdout.txt", "pg14plus-tpcb-scale50-haproxy.txt"}
	for rep := int32(1); rep <= 2; rep++ {
		for step := range 2 {
			job := h.WaitJob(specs.MeasureJobName(run, step, rep))
			if got := job.Spec.Template.Spec.Containers[0].Args; !strings.Contains(strings.Join(got, " "), "--client "+[]string{"16", "105"}[step]) {
				t.Fatalf("step %d runs %v", step, got)
			}
			h.Replay(job, node, "pgbench", kit.Fixture(t, "pgbench", fixtures[step]))
		}
	}
	run = h.WaitPhase("ext-pg", 30*time.Second, benchv1.PhaseSucceeded)

	for _, c := range []string{benchv1.ConditionTargetReady, benchv1.ConditionPrepared, benchv1.ConditionCompleted, benchv1.ConditionValid} {
		if !meta.IsStatusConditionTrue(run.Status.Conditions, c) {
			t.Errorf("condition %s not True: %+v", c, meta.FindStatusCondition(run.Status.Conditions, c))
		}
	}
	if len(run.Status.Steps) != 2 || run.Status.Steps[1].Name != "clients=105" || len(run.Status.Steps[1].Repetitions) != 2 {
		t.Fatalf("steps: %+v", run.Status.Steps)
	}
	sum := findSummary(run.Status.Steps[1].Summary, "transactionsPerSecond")
	if sum == nil || sum.N != 2 || sum.Median != 4413.657304 || sum.CILow == nil {
		t.Fatalf("summary of clients=105: %+v", sum)
	}
	if p := run.Status.Primary; p == nil || p.Step != "clients=105" || p.Display != "4414 tx/s @clients=105" {
		t.Fatalf("primary: %+v", p)
	}
	env := run.Status.Environment
	if env == nil || len(env.Nodes) != 1 || env.Nodes[0].Pool != "loadgen" || env.Nodes[0].CPUModel != "Intel Xeon Emerald Rapids" ||
		env.Nodes[0].InstanceType != "n4-standard-8" || env.Images["loadgen"] != "postgres:17" || env.KubernetesVersion == "" {
		t.Fatalf("environment: %+v", env)
	}
	if run.Status.ObservedGeneration != run.Generation || run.Status.Progress != "4/4" {
		t.Errorf("observedGeneration %d/%d progress %q", run.Status.ObservedGeneration, run.Generation, run.Status.Progress)
	}

	doc := h.ResultsDocument(t, run)
	reps := doc.Steps[0].Repetitions
	if len(reps) != 2 || reps[0].Result == nil || len(reps[0].Result.Metrics) < 14 {
		t.Fatalf("the results ConfigMap must hold the full results, with per-statement latencies: %+v", reps)
	}
	noSecretAnywhere(t, h, run)

	// Cleanup policy Always: the Jobs go, the results stay.
	testutil.Eventually(t, 10*time.Second, "jobs deleted", func() error {
		if n := len(h.Jobs()); n != 0 {
			return fmt.Errorf("%d jobs left", n)
		}
		return nil
	})
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: run.Status.ResultsConfigMap}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("results configmap: %v", err)
	}
}

func checkWorkloadPod(t *testing.T, pod corev1.PodSpec, secret string) {
	t.Helper()
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("workload pods must not get a service-account token")
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("workload pods must run as non-root")
	}
	if pod.NodeSelector["pool"] != "loadgen" {
		t.Errorf("node selector %v", pod.NodeSelector)
	}
	found := false
	for _, e := range pod.Containers[0].Env {
		if e.Name == "PGPASSWORD" {
			found = e.Value == "" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef.Name == secret
		}
	}
	if !found {
		t.Errorf("PGPASSWORD must come from Secret %s: %+v", secret, pod.Containers[0].Env)
	}
}

func findSummary(s []benchv1.MetricSummary, name string) *benchv1.MetricSummary {
	for i := range s {
		if s[i].Name == name {
			return &s[i]
		}
	}
	return nil
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func noSecretAnywhere(t *testing.T, h *harness, run *benchv1.BenchmarkRun) {
	t.Helper()
	ctx := context.Background()
	status := mustJSON(t, run.Status)
	// A List that fails must fail the check: an empty list proves nothing.
	var cms corev1.ConfigMapList
	if err := k8s.List(ctx, &cms, client.InNamespace(h.NS)); err != nil {
		t.Fatalf("listing configmaps: %v", err)
	}
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(h.NS)); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	all, ev, jobs := mustJSON(t, cms.Items), mustJSON(t, events.Items), mustJSON(t, h.Jobs())
	if len(cms.Items) == 0 {
		t.Error("no configmaps were found: the run's results ConfigMap at least must be there")
	}
	for what, b := range map[string][]byte{"status": status, "configmaps": all, "events": ev, "jobs": jobs} {
		if strings.Contains(string(b), secretValue) {
			t.Errorf("the secret value appears in %s", what)
		}
	}
	if len(events.Items) == 0 {
		t.Error("no events were recorded")
	}
}

// A Valkey target: the operator's own StatefulSet and Service; the load
// generator keeps off the target's node; cleanup Never keeps everything.
func TestValkeyTargetWithRedisBenchmark(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "vk"},
		Spec: benchv1.BenchmarkRunSpec{
			Cleanup:  benchv1.CleanupNever,
			Target:   benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}, Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "standard-v4a"}}},
			Workload: benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set", "get"}, Clients: []int32{10}, Pipeline: []int32{1, 16}}},
		},
	}
	h.Create(run)
	sts := &appsv1.StatefulSet{}
	testutil.Eventually(t, 10*time.Second, "valkey statefulset", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ValkeyName(run)}, sts)
	})
	if sts.Spec.Template.Spec.NodeSelector["pool"] != "standard-v4a" || !metav1.IsControlledBy(sts, h.Run("vk")) {
		t.Fatalf("statefulset placement/owner wrong: %+v", sts.Spec.Template.Spec.NodeSelector)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.ValkeyName(run)}, &corev1.Service{}); err != nil {
		t.Fatal(err)
	}
	if h.WaitPhase("vk", 5*time.Second, benchv1.PhaseProvisioning).Status.Phase != benchv1.PhaseProvisioning {
		t.Fatal("must wait for the target")
	}
	sts.Status.Replicas, sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = 1, 1, 1
	if err := k8s.Status().Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	run = h.Run("vk")
	for step := range 2 {
		job := h.WaitJob(specs.MeasureJobName(run, step, 1))
		aff := job.Spec.Template.Spec.Affinity
		if aff == nil || aff.PodAntiAffinity == nil || aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels[benchv1.LabelRole] != benchv1.RoleTarget {
			t.Fatalf("the load generator must avoid the target's node: %+v", aff)
		}
		h.Replay(job, node, "redis-benchmark", kit.WriteTemp(t, redisCSV))
	}
	run = h.WaitPhase("vk", 20*time.Second, benchv1.PhaseSucceeded)
	if p := run.Status.Primary; p == nil || !strings.HasPrefix(p.Display, "37037 ops/s SET") {
		t.Fatalf("primary %+v", p)
	}
	if run.Status.Target == nil || run.Status.Target.Kind != "valkey" || run.Status.Target.Port != 6379 {
		t.Fatalf("target status %+v", run.Status.Target)
	}
	// Cleanup Never: the target and the Jobs stay, once the policy is
	// carried out.
	h.WaitCleanup("vk")
	if len(h.Jobs()) != 2 {
		t.Fatalf("jobs deleted despite cleanup Never")
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(sts), &appsv1.StatefulSet{}); err != nil {
		t.Fatalf("statefulset deleted despite cleanup Never: %v", err)
	}
}

const redisCSV = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","37037.04","0.144","0.040","0.135","0.239","0.319","4.671"
"GET","36166.37","0.151","0.032","0.135","0.207","0.319","5.655"
`

// A CloudNativePG target: the operator creates the Cluster, waits until
// CloudNativePG reports it healthy, and uses its -rw Service and -app Secret.
func TestCNPGPostgresTarget(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	run := kit.PgbenchRun("cnpg", benchv1.TargetSpec{
		Postgres:  &benchv1.PostgresTarget{Instances: 2, Parameters: map[string]string{"shared_buffers": "2GB"}},
		Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "standard-v3"}},
	}, []int32{16}, 1)
	run.Spec.Cleanup = benchv1.CleanupOnSuccess
	run.Spec.Workload.SkipPrepare = true
	h.Create(run)
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	name := specs.PostgresClusterName(run)
	testutil.Eventually(t, 10*time.Second, "CNPG cluster", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, cluster)
	})
	if v, _, _ := unstructured.NestedString(cluster.Object, "spec", "postgresql", "parameters", "shared_buffers"); v != "2GB" {
		t.Errorf("parameters not passed: %v", cluster.Object["spec"])
	}
	if v, _, _ := unstructured.NestedString(cluster.Object, "spec", "affinity", "nodeSelector", "pool"); v != "standard-v3" {
		t.Errorf("placement not passed: %v", cluster.Object["spec"])
	}
	// Primary and replica never share a node.
	if v, _, _ := unstructured.NestedString(cluster.Object, "spec", "affinity", "podAntiAffinityType"); v != "required" {
		t.Errorf("2 instances without required anti-affinity: %v", cluster.Object["spec"])
	}
	_ = unstructured.SetNestedField(cluster.Object, specs.CNPGHealthyPhase, "status", "phase")
	_ = unstructured.SetNestedField(cluster.Object, int64(2), "status", "readyInstances")
	if err := k8s.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	// CloudNativePG's instance pod, on the pool under test.
	h.Node("pg-1", map[string]string{"pool": "standard-v3"})
	inherited, _, _ := unstructured.NestedStringMap(cluster.Object, "spec", "inheritedMetadata", "labels")
	pgPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-1", Labels: inherited},
		Spec:       corev1.PodSpec{NodeName: "pg-1", Containers: []corev1.Container{{Name: "postgres", Image: "ghcr.io/cloudnative-pg/postgresql:17"}}},
	}
	for k, v := range specs.CNPGInstancePods(name) {
		pgPod.Labels[k] = v
	}
	h.Create(pgPod)
	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	checkWorkloadPod(t, job.Spec.Template.Spec, specs.CNPGAppSecret(name))
	if host := envValue(job.Spec.Template.Spec.Containers[0].Env, "PGHOST"); host != specs.CNPGRWService(name)+"."+h.NS+".svc" {
		t.Fatalf("PGHOST = %q", host)
	}
	// An aborted pgbench run is Failed, keeps its numbers, and with
	// cleanup OnSuccess leaves the cluster for inspection.
	h.Replay(job, node, "pgbench", kit.Fixture(t, "pgbench", "pg16-rdsproxy-600c-prepared-rate-progress-client-aborted.txt"))
	run = h.WaitPhase("cnpg", 20*time.Second, benchv1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionValid)
	if c == nil || c.Reason != benchv1.ReasonSomeFailed || !strings.Contains(c.Message, "Run was aborted") {
		t.Fatalf("valid condition %+v", c)
	}
	rep := run.Status.Steps[0].Repetitions[0]
	if rep.Verdict != benchv1.VerdictFailed || len(rep.Metrics) == 0 {
		t.Fatalf("a failed measurement keeps its metrics: %+v", rep)
	}
	roles := map[string]string{}
	for _, n := range run.Status.Environment.Nodes {
		roles[n.Name] = n.Pool + ":" + strings.Join(n.Roles, ",")
	}
	if roles["pg-1"] != "standard-v3:target" || roles[node] != "loadgen:loadgen" {
		t.Fatalf("environment nodes %v", roles)
	}
	h.WaitCleanup(run.Name)
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: name}, cluster); err != nil {
		t.Fatalf("cluster deleted despite cleanup OnSuccess on a failed run: %v", err)
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
