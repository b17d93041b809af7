package specs

import (
	"io"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
)

// pgbench against an external PostgreSQL whose database host and an
// application server are read from their node_exporter: each host a
// --host-exporter flag (the database host standing for the target, the
// endpoint having no pods here), its Secret's keys as optional variables,
// the password and token among the redacted ones, nothing secret on the
// command line.
func TestHostsJobGolden(t *testing.T) {
	run := serverRun(benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "pg.example", Port: 5432}})
	run.Spec.Workload = benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{Clients: []int32{8}}}
	run.Spec.Telemetry.Hosts = []benchv1.HostSpec{
		{Name: "db-01", Role: benchv1.HostDatabase, NodeExporter: &benchv1.NodeExporterEndpoint{URL: "https://db-01.example:9100/metrics",
			SecretRef: &corev1.LocalObjectReference{Name: "db-01-exporter"}}},
		{Name: "app-1", NodeExporter: &benchv1.NodeExporterEndpoint{URL: "http://app-1.example:9100/metrics", InsecureSkipVerify: true}},
		// Read by the manager from Prometheus: not the runner's.
		{Name: "app-2", PrometheusSelector: `instance="app-2:9100"`},
	}
	w := pgbench.Pgbench{}
	ep := pod.Endpoint{Host: "pg.example", Port: 5432}
	job := Job(JobParams{Run: run, Name: MeasureJobName(run, 0, 1), Role: benchv1.RoleLoadgen, Workload: w.Name(), Repetition: 1,
		Invocation: w.Run(&run.Spec.Workload, ep, w.Steps(&run.Spec.Workload)[0]), Image: w.DefaultImage(), RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:v0.1.0",
		Endpoint: ep})
	golden(t, "pgbench-hosts-job", job)
	c := job.Spec.Template.Spec.Containers[0]
	exec, err := pod.ParseExec(c.Args[1:], io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []pod.HostEndpoint{{Name: "db-01", Role: "database", URL: "https://db-01.example:9100/metrics", Index: 0, Target: true},
		{Name: "app-1", Role: "other", URL: "http://app-1.example:9100/metrics", Index: 1, InsecureSkipVerify: true}}
	if len(exec.Hosts) != 2 || exec.Hosts[0] != want[0] || exec.Hosts[1] != want[1] {
		t.Errorf("hosts %+v, want %+v", exec.Hosts, want)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for kind, key := range map[string]string{pod.HostEnvUsername: "username", pod.HostEnvPassword: "password", pod.HostEnvToken: "token", pod.HostEnvCA: "ca.crt"} {
		e, ok := env[pod.HostEnv(0, kind)]
		if !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "db-01-exporter" ||
			e.ValueFrom.SecretKeyRef.Key != key || e.ValueFrom.SecretKeyRef.Optional == nil || !*e.ValueFrom.SecretKeyRef.Optional {
			t.Errorf("%s: %+v, want key %s of db-01-exporter, optional", pod.HostEnv(0, kind), e, key)
		}
	}
	if _, ok := env[pod.HostEnv(1, pod.HostEnvPassword)]; ok {
		t.Error("a host without a Secret has credential variables")
	}
	redacted := strings.Join(exec.RedactEnv, " ")
	for _, kind := range []string{pod.HostEnvPassword, pod.HostEnvToken} {
		if !strings.Contains(redacted, pod.HostEnv(0, kind)) {
			t.Errorf("%s is not redacted: %v", pod.HostEnv(0, kind), exec.RedactEnv)
		}
	}

	// A provisioned target's database host does not stand for the target:
	// its pods do.
	owned := Job(JobParams{Run: run, Name: MeasureJobName(run, 0, 1), Role: benchv1.RoleLoadgen, Workload: w.Name(), Repetition: 1,
		Invocation: w.Run(&run.Spec.Workload, ep, w.Steps(&run.Spec.Workload)[0]), Image: w.DefaultImage(), RunnerImage: "r",
		Endpoint: ep, AvoidPods: map[string]string{"app": "db"}})
	if exec, _ := pod.ParseExec(owned.Spec.Template.Spec.Containers[0].Args[1:], io.Discard); exec.Hosts[0].Target {
		t.Error("a database host stands for a target with pods")
	}
	checkRestricted(t, "pgbench hosts job", &job.Spec.Template.ObjectMeta, &job.Spec.Template.Spec)
}
