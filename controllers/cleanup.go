package controllers

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// cleanup carries out the cleanup policy once a run has ended: the target,
// the workload Jobs (and their pods) and the workload files go; the results
// ConfigMap stays with the run. It returns what it did, for the event of
// the run's end when it runs in the reconcile that ended the run (one
// event, not two); a cleanup in a later reconcile (after a restart, or a
// write that was refused) says it in an event of its own.
func (r *BenchmarkRunReconciler) cleanup(ctx context.Context, run *benchv1.BenchmarkRun) (string, error) {
	if run.Status.CleanupCompleted {
		return "", nil
	}
	if !cleanupWanted(run) {
		// Keeping everything carries the policy out too; saying so once
		// tells a person (and a test) that the decision was made.
		run.Status.CleanupCompleted = true
		return fmt.Sprintf("kept the target and workload jobs (cleanup policy %s)", cleanupPolicy(run)), nil
	}
	prov, err := targets.For(run)
	if err == nil {
		if err := prov.Cleanup(ctx, r.Client, run); err != nil {
			return "", fmt.Errorf("while deleting the target: %w", err)
		}
	}
	err = r.DeleteAllOf(ctx, &batchv1.Job{}, client.InNamespace(run.Namespace),
		client.MatchingLabels{benchv1.LabelRunUID: string(run.UID)}, client.PropagationPolicy("Background"))
	if err != nil {
		return "", fmt.Errorf("while deleting the workload jobs: %w", err)
	}
	// Most runs have no files ConfigMap: the cache says whether this one
	// has, instead of a DELETE answered 404 for every run. One the cache
	// has not seen yet goes with the run (it is owned by it).
	files := &corev1.ConfigMap{}
	switch err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: specs.FilesConfigMapName(run)}, files); {
	case err == nil:
		if err := client.IgnoreNotFound(r.Delete(ctx, files)); err != nil {
			return "", fmt.Errorf("while deleting the workload files: %w", err)
		}
	case !apierrors.IsNotFound(err):
		return "", err
	}
	log.FromContext(ctx).Info("Cleaned up", "policy", cleanupPolicy(run))
	run.Status.CleanupCompleted = true
	return fmt.Sprintf("deleted the target and workload jobs (cleanup policy %s)", cleanupPolicy(run)), nil
}

// cleanupLater is cleanup in a reconcile after the one that ended the run:
// what it did is an event of its own.
func (r *BenchmarkRunReconciler) cleanupLater(ctx context.Context, run *benchv1.BenchmarkRun) (ctrl.Result, error) {
	did, err := r.cleanup(ctx, run)
	if did != "" {
		reason := "CleanedUp"
		if !cleanupWanted(run) {
			reason = "CleanupSkipped"
		}
		r.Recorder.Event(run, corev1.EventTypeNormal, reason, capitalize(did))
	}
	return ctrl.Result{}, err
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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
