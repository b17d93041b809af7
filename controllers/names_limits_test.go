package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// longName is a run name of 253 characters, a DNS-1123 subdomain that no
// child may copy as it is: it begins with a digit and holds dots.
func longName(prefix string) string {
	return ("9" + prefix + "." + strings.Repeat("x.", 130))[:252] + "z"
}

// Runs, a comparison and a schedule whose names are 253 characters long,
// begin with a digit and hold dots get every child the controllers create
// (target StatefulSets, Services, Secrets, ConfigMaps, a CloudNativePG
// Cluster, Jobs, child runs) under a name its kind accepts, and reach the
// phase that waits for their targets or Jobs: a refused child would leave
// them failing to reconcile.
func TestChildrenOfLongNamesAreValid(t *testing.T) {
	h := newHarness(t)
	h.LoadgenNode()
	targetsByKind := map[string]benchv1.TargetSpec{
		"postgres": {Postgres: &benchv1.PostgresTarget{}}, "valkey": {Valkey: &benchv1.ValkeyTarget{Replicas: 1}},
		"mysql": {MySQL: &benchv1.MySQLTarget{}}, "mongodb": {MongoDB: &benchv1.MongoDBTarget{}},
		"opensearch": {OpenSearch: &benchv1.OpenSearchTarget{Nodes: 3}}, "clickhouse": {ClickHouse: &benchv1.ClickHouseTarget{Replicas: 2, Keeper: &benchv1.ClickHouseKeeper{Replicas: 1}}},
	}
	for kind, target := range targetsByKind {
		run := kit.MeasureOnly(longName(kind), 4, 1)
		run.Spec.Target, run.Spec.AllowSharedNodes = target, true
		run.Spec.Workload = kit.CustomWorkload()
		run.Spec.Workload.Custom.Database = ""
		h.Create(run)
	}
	ext := kit.MeasureOnly(longName("external"), 4, 2)
	ext.Spec.AllowSharedNodes = true
	ext.Spec.Workload.Parallelism = 2
	ext.Spec.Workload.Pgbench.Script = `\set aid random(1, 1000)` + "\nSELECT :aid;\n"
	h.Create(ext)
	cmp := kit.Comparison(longName("comparison"), benchv1.OrderConcurrent, 1)
	cmp.Spec.Template.AllowSharedNodes = true
	h.Create(cmp)
	sched := &benchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: longName("schedule")},
		Spec: benchv1.BenchmarkScheduleSpec{RunTemplate: &benchv1.RunTemplate{Spec: ext.Spec}, RunOnCreate: true}}
	h.Create(sched)

	testutil.Eventually(t, 40*time.Second, "every run waiting for its target or its Jobs", func() error {
		var runs benchv1.BenchmarkRunList
		if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		if len(runs.Items) != len(targetsByKind)+1+2+1 {
			return fmt.Errorf("%d runs", len(runs.Items))
		}
		for i := range runs.Items {
			r := &runs.Items[i]
			if why := runUnsettled(r); why != "" || r.Status.Phase.Terminal() || r.Status.Phase == "" {
				return fmt.Errorf("run %s: %s (phase %q)", r.Name, why, r.Status.Phase)
			}
		}
		return nil
	})
	checked := checkChildNames(t, h.NS)
	for _, kind := range []string{"BenchmarkRun", "Job", "ConfigMap", "Secret", "Service", "StatefulSet", "Cluster"} {
		if checked[kind] == 0 {
			t.Errorf("no %s was created to check", kind)
		}
	}
	t.Logf("children checked: %v", checked)
}

// checkChildNames checks the name and labels of every object the
// controllers created in the namespace, and that a controller owns it; it
// returns how many of each kind it checked.
func checkChildNames(t *testing.T, ns string) map[string]int {
	t.Helper()
	ctx := context.Background()
	clusters := &unstructured.UnstructuredList{}
	clusters.SetAPIVersion("postgresql.cnpg.io/v1")
	clusters.SetKind("ClusterList")
	lists := map[string]client.ObjectList{
		"BenchmarkRun": &benchv1.BenchmarkRunList{}, "Job": &batchv1.JobList{}, "ConfigMap": &corev1.ConfigMapList{},
		"Secret": &corev1.SecretList{}, "Service": &corev1.ServiceList{}, "StatefulSet": &appsv1.StatefulSetList{}, "Cluster": clusters,
	}
	checked := map[string]int{}
	for kind, list := range lists {
		if err := k8s.List(ctx, list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		objs, err := metaItems(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if kind == "ConfigMap" && o.GetName() == "kube-root-ca.crt" {
				continue
			}
			if metav1.GetControllerOf(o) == nil {
				continue // created by the test
			}
			checked[kind]++
			for _, e := range childNameRule(kind, o.GetName()) {
				t.Errorf("%s %q: %s", kind, o.GetName(), e)
			}
			for k, v := range o.GetLabels() {
				if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
					t.Errorf("%s %q: label %s=%q: %v", kind, o.GetName(), k, v, errs)
				}
			}
		}
	}
	return checked
}

func metaItems(list client.ObjectList) ([]client.Object, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		o, ok := it.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T is not an object", it)
		}
		out = append(out, o)
	}
	return out, nil
}

// childNameRule is what a child's kind demands of its name.
func childNameRule(kind, name string) []string {
	switch kind {
	case "Service":
		return validation.IsDNS1035Label(name)
	case "Cluster": // CloudNativePG's webhook: a DNS-1035 label of at most 50 characters
		errs := validation.IsDNS1035Label(name)
		if len(name) > 50 {
			errs = append(errs, fmt.Sprintf("%d characters, over CloudNativePG's 50", len(name)))
		}
		return errs
	case "StatefulSet": // its pods' names are their hostnames; its revision label adds 11 characters
		errs := validation.IsDNS1035Label(name)
		if len(name) > 52 {
			errs = append(errs, fmt.Sprintf("%d characters, over 52", len(name)))
		}
		return errs
	case "Job": // its name is its pods' job-name label
		return append(validation.IsDNS1123Subdomain(name), validation.IsValidLabelValue(name)...)
	}
	return validation.IsDNS1123Subdomain(name)
}
