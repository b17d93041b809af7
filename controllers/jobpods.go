package controllers

import (
	"context"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// indexPodJob indexes the cached workload pods by their Job's name (the
// LabelJob label). A label selector makes the cache match the label of
// every pod in the namespace: with a few hundred runs' pods in one
// namespace, that scan, once per Job per reconcile, was a third of the
// manager's CPU (60 capacity searches at once, 1,392 Jobs: 13.8 % of all
// CPU in CacheReader.List, 56 % of it matching labels).
const indexPodJob = "metadata.labels." + benchv1.LabelJob

func podJobIndex(o client.Object) []string {
	if job := o.GetLabels()[benchv1.LabelJob]; job != "" {
		return []string{job}
	}
	return nil
}

// listJobPods lists a workload Job's pods through the index.
func (r *BenchmarkRunReconciler) listJobPods(ctx context.Context, pods *corev1.PodList, job *batchv1.Job) error {
	return r.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingFields{indexPodJob: job.Name})
}
