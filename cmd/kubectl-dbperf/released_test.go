package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
)

// A comparison deleted with deletionPolicy Retain left its report
// ConfigMap, released: `kubectl dbperf compare NAME` and `report NAME`
// still read it (the newest, should a comparison of that name have been
// recreated and deleted again); a name that never had a report is still
// NotFound.
func TestCompareReadsTheReportOfADeletedComparison(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = benchv1.AddToScheme(scheme)
	report := func(name, from, candidate string, age time.Duration) *corev1.ConfigMap {
		data, bin, _, err := compare.ReportData([]*compare.Report{{Baseline: "v3", Candidate: candidate}})
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "perf", CreationTimestamp: metav1.NewTime(time.Now().Add(-age)),
				Labels:      map[string]string{benchv1.LabelComparison: name + "-uid"},
				Annotations: map[string]string{benchv1.AnnotationReleasedFrom: from}},
			Data: data, BinaryData: bin,
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		report("pools-report-old", "BenchmarkComparison/pools", "old", 48*time.Hour),
		report("pools-report-new", "BenchmarkComparison/pools", "v4a", time.Hour),
		report("other-report", "BenchmarkComparison/other", "other", 0),
	).Build()
	k := &cluster{c: c, namespace: "perf"}
	reps, err := k.comparisonReports(context.Background(), "pools")
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Candidate != "v4a" {
		t.Errorf("reports %+v, want the newest released report of pools", reps)
	}
	if _, err := k.comparisonReports(context.Background(), "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("a comparison never released: %v, want NotFound", err)
	}
}
