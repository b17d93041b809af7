package controllers

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// CacheOptions caches only the objects of runs (everything a run makes, and
// the pods of its target, carry the run's UID), not every pod, Job or
// ConfigMap of the cluster, and of CRDs only the optional kinds' metadata
// (optionalCRDs).
func CacheOptions() cache.Options {
	hasRun, err := labels.NewRequirement(benchv1.LabelRunUID, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	ofRuns := cache.ByObject{Label: labels.NewSelector().Add(*hasRun)}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:         ofRuns,
		&corev1.ConfigMap{}:   ofRuns,
		&corev1.Service{}:     ofRuns,
		&batchv1.Job{}:        ofRuns,
		&appsv1.StatefulSet{}: ofRuns,
		crdMeta():             optionalCRDs(),
	}}
}

// ClientOptions never caches Secrets: the operator only checks that they
// exist, by their metadata, and must not hold their data.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}
