package ycsb

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// The seed setting of the issue: workload A, 1M records, 5M operations,
// threads 32/48/96/128, against MongoDB with credentials.
func seed() *benchv1.WorkloadSpec {
	return &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "mongodb", CoreWorkload: "a", RecordCount: 1000000, OperationCount: 5000000,
		Threads: []int32{32, 48, 96, 128}, LoadThreads: 64, Percentiles: []string{"50", "99.9"}, Properties: map[string]string{"fieldcount": "10"}}}
}

func endpoint() pod.Endpoint {
	return pod.Endpoint{Host: "run-mongo.perf.svc", Port: 27017, Database: "ycsb",
		Username: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "mongo"}, Key: "username"},
		Password: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "mongo"}, Key: "password"}}
}

func TestGoldenProperties(t *testing.T) {
	testutil.Golden(t, "workloada-seed.properties", Properties(seed().YCSB))
	custom := &benchv1.YCSBWorkload{Binding: "redis", Properties: map[string]string{"readproportion": "0.8", "insertproportion": "0.2", "requestdistribution": "uniform"}}
	testutil.Golden(t, "custom.properties", Properties(custom))
}

func TestLoadAndRunCommands(t *testing.T) {
	spec, ep := seed(), endpoint()
	steps := YCSB{}.Steps(spec)
	if len(steps) != 4 || steps[3].Name != "threads=128" {
		t.Fatalf("steps %+v", steps)
	}
	load := YCSB{}.Prepare(spec, ep)
	run := YCSB{}.Run(spec, ep, steps[1])
	testutil.Golden(t, "mongodb-load.cmd", strings.Join(load.Command, "\n")+"\n")
	testutil.Golden(t, "mongodb-run-48.cmd", strings.Join(run.Command, "\n")+"\n")
	if run.Files[propertiesFile] == "" || len(run.SecretEnv) != 1 || len(run.Env) != 2 {
		t.Errorf("files %v, secret env %v, env %v", run.Files, run.SecretEnv, run.Env)
	}
	for _, a := range run.Command {
		if strings.Contains(a, "s3cret") {
			t.Error("a credential value in the command")
		}
	}
	basic := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "basic", CoreWorkload: "c"}}
	if (YCSB{}).Prepare(basic, ep) != nil {
		t.Error("BasicDB needs no load step")
	}
}

func TestValidate(t *testing.T) {
	spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: "cassandra", CoreWorkload: "a", Properties: map[string]string{"recordcount": "5"}}}
	errs := YCSB{}.Validate(spec, field.NewPath("spec", "workload"))
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.workload.ycsb.binding", "spec.workload.ycsb.properties[recordcount]"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %s", got, want)
		}
	}
}

// With the mongodb binding the runner polls the target's serverStatus;
// with the others nothing.
func TestServerStatistics(t *testing.T) {
	if s := workloads.SpeaksOf(YCSB{}, seed()); s != (workloads.Speaks{Protocol: pod.ProtocolMongoDB}) || !s.Protocol.HasStatistics() {
		t.Errorf("mongodb binding: %+v, want %q and no database", s, pod.ProtocolMongoDB)
	}
	for _, b := range []string{"basic", "jdbc"} {
		spec := &benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{Binding: b, CoreWorkload: "a"}}
		if s := workloads.SpeaksOf(YCSB{}, spec); s.Protocol.HasStatistics() {
			t.Errorf("%s binding: statistics of %q, want none", b, s.Protocol)
		}
	}
}
