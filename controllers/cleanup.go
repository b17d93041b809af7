package controllers

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// cleanup carries out the cleanup policy once a run has ended: the target,
// the workload Jobs (and their pods) and the workload files go; the results
// ConfigMap stays with the run.
func (r *BenchmarkRunReconciler) cleanup(ctx context.Context, run *benchv1.BenchmarkRun) (ctrl.Result, error) {
	if run.Status.CleanupCompleted {
		return ctrl.Result{}, nil
	}
	if !cleanupWanted(run) {
		// Keeping everything carries the policy out too; saying so once
		// tells a person (and a test) that the decision was made.
		r.Recorder.Eventf(run, corev1.EventTypeNormal, "CleanupSkipped", "Kept the target and workload jobs (cleanup policy %s, phase %s)", cleanupPolicy(run), run.Status.Phase)
		run.Status.CleanupCompleted = true
		return ctrl.Result{}, nil
	}
	prov, err := targets.For(run)
	if err == nil {
		if err := prov.Cleanup(ctx, r.Client, run); err != nil {
			return ctrl.Result{}, fmt.Errorf("while deleting the target: %w", err)
		}
	}
	err = r.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(run.Namespace),
		client.MatchingLabels{specs.LabelRunUID: string(run.UID)}, client.PropagationPolicy("Background"))
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("while deleting the workload jobs: %w", err)
	}
	files := &corev1.ConfigMap{ObjectMeta: specs.ObjectMeta(run, specs.FilesConfigMapName(run), specs.RoleLoadgen)}
	if err := client.IgnoreNotFound(r.Delete(ctx, files)); err != nil {
		return ctrl.Result{}, fmt.Errorf("while deleting the workload files: %w", err)
	}
	log.FromContext(ctx).Info("Cleaned up", "policy", cleanupPolicy(run))
	r.Recorder.Eventf(run, corev1.EventTypeNormal, "CleanedUp", "Deleted the target and workload jobs (cleanup policy %s)", cleanupPolicy(run))
	run.Status.CleanupCompleted = true
	return ctrl.Result{}, nil
}

func cleanupPolicy(run *benchv1.BenchmarkRun) benchv1.CleanupPolicy {
	if run.Spec.Cleanup == "" {
		return benchv1.CleanupAlways
	}
	return run.Spec.Cleanup
}

func cleanupWanted(run *benchv1.BenchmarkRun) bool {
	switch cleanupPolicy(run) {
	case benchv1.CleanupNever:
		return false
	case benchv1.CleanupOnSuccess:
		return run.Status.Phase == benchv1.PhaseSucceeded
	}
	return true
}
