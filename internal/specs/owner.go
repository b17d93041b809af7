package specs

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// OwnerRef makes the run the controlling owner, so deleting the run deletes
// everything it made.
func OwnerRef(run *benchv1.BenchmarkRun) metav1.OwnerReference {
	t, block := true, true
	return metav1.OwnerReference{
		APIVersion: benchv1.GroupVersion.String(), Kind: "BenchmarkRun",
		Name: run.Name, UID: run.UID, Controller: &t, BlockOwnerDeletion: &block,
	}
}

// ObjectMeta is the metadata of a child.
func ObjectMeta(run *benchv1.BenchmarkRun, name, role string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: run.Namespace, Labels: BaseLabels(run, role),
		OwnerReferences: []metav1.OwnerReference{OwnerRef(run)},
	}
}
