package controllers

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// A YCSB run against an external document store goes through the whole
// lifecycle: the load step as the prepare Job, one measurement per thread
// count with the generated property file mounted, results from YCSB's report.
func TestYCSBLifecycle(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	h.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "docstore"}, StringData: map[string]string{"username": "ycsb", "password": secretValue}})
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "ycsb-a"},
		Spec: benchv1.BenchmarkRunSpec{
			Target: benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "docstore", Port: 27017, Database: "ycsb",
				SecretRef: &corev1.LocalObjectReference{Name: "docstore"}}},
			Workload: benchv1.WorkloadSpec{
				YCSB:      &benchv1.YCSBWorkload{Binding: "mongodb", CoreWorkload: "a", RecordCount: 500000, OperationCount: 5000000, Threads: []int32{8, 16}},
				Placement: benchv1.Placement{NodeSelector: map[string]string{"pool": "loadgen"}},
			},
		},
	}
	h.Create(run)
	f := kit.Fixture(t, "ycsb", "vc-mongodb-0.17.0-workloada-8threads.txt")
	prep := h.WaitJob(specs.PrepareJobName(h.Run("ycsb-a")))
	c := prep.Spec.Template.Spec.Containers[0]
	cmd := strings.Join(c.Args, " ")
	if c.Image != "ghcr.io/dbperf-io/ycsb:0.17.0" || !strings.Contains(cmd, "site.ycsb.Client -load -db site.ycsb.db.MongoDbClient") ||
		!strings.Contains(cmd, "-P /etc/dbperf/workload/workload.properties") || strings.Contains(cmd, secretValue) {
		t.Errorf("load Job: image %s, args %s", c.Image, cmd)
	}
	var files corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: specs.FilesConfigMapName(h.Run("ycsb-a"))}, &files); err != nil {
		t.Fatalf("property file ConfigMap: %v", err)
	}
	if p := files.Data["workload.properties"]; !strings.Contains(p, "recordcount=500000") || !strings.Contains(p, "updateproportion=0.5") {
		t.Errorf("workload.properties:\n%s", p)
	}
	h.Replay(prep, node, "ycsb", f)
	for i, threads := range []string{"8", "16"} {
		j := h.WaitJob(specs.MeasureJobName(h.Run("ycsb-a"), i, 1))
		if args := strings.Join(j.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "-t -db site.ycsb.db.MongoDbClient") || !strings.Contains(args, "-threads "+threads) {
			t.Errorf("step %d args %s", i, args)
		}
		h.Replay(j, node, "ycsb", f)
	}
	done := h.WaitPhase("ycsb-a", 20*time.Second, benchv1.PhaseSucceeded)
	if done.Status.Primary == nil || !strings.HasPrefix(done.Status.Primary.Display, "28246 ops/s") {
		t.Errorf("primary %+v", done.Status.Primary)
	}
	if n := len(done.Status.Steps); n != 2 || done.Status.Steps[1].Name != "threads=16" {
		t.Errorf("steps %+v", done.Status.Steps)
	}
}
