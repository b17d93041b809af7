package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// prepare runs the workload's prepare step (schema build, data load), if it
// has one, and waits for it.
func (r *BenchmarkRunReconciler) prepare(ctx context.Context, st *runState) (ctrl.Result, error) {
	run := st.run
	if !st.target.Ready {
		return r.waitForTarget(st), nil
	}
	if run.Spec.Workload.SkipPrepare {
		setCondition(run, benchv1.ConditionPrepared, metav1.ConditionTrue, benchv1.ReasonSkipped, "spec.workload.skipPrepare: the target holds the data a previous run prepared")
		run.Status.Phase = benchv1.PhaseRunning
		return ctrl.Result{}, nil
	}
	inv := st.workload.Prepare(&run.Spec.Workload, st.target.Endpoint)
	if inv == nil {
		setCondition(run, benchv1.ConditionPrepared, metav1.ConditionTrue, benchv1.ReasonNotNeeded, st.workload.Name()+" needs no prepare step")
		run.Status.Phase = benchv1.PhaseRunning
		return ctrl.Result{}, nil
	}
	job, err := r.ensureJob(ctx, st, benchv1.RolePrepare, 0, 0, *inv)
	if apierrors.IsInvalid(err) { // a Job Kubernetes refuses: retrying cannot help
		r.failInvalidSpec(st, err)
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	out, err := r.jobOutcome(ctx, st, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if out == nil {
		return r.preparing(ctx, st, job)
	}
	stored, err := r.storePrepare(ctx, st, out.result)
	if err != nil {
		return ctrl.Result{}, err
	}
	out.result = stored
	if out.result.Verdict != results.Succeeded {
		msg := "the prepare step failed: " + strings.Join(out.result.Reasons, "; ")
		setCondition(run, benchv1.ConditionPrepared, metav1.ConditionFalse, benchv1.ReasonPrepareFailed, msg)
		st.endMessage = msg
		return r.finish(ctx, st, benchv1.ReasonPrepareFailed)
	}
	setCondition(run, benchv1.ConditionPrepared, metav1.ConditionTrue, benchv1.ReasonPrepared, "job "+job.Name+" finished")
	st.note(false, "Prepared", "prepare step finished in job %s", job.Name)
	run.Status.Phase = benchv1.PhaseRunning
	return ctrl.Result{}, nil
}

// preparing watches the prepare Job while it runs: a pod that cannot start
// is named (and ends the run past spec.deadlines.podStart), and once its
// pod is scheduled the prepare deadline runs.
func (r *BenchmarkRunReconciler) preparing(ctx context.Context, st *runState, job *batchv1.Job) (ctrl.Result, error) {
	run := st.run
	w, err := r.jobPods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	waiting := "running job " + job.Name
	if w.stuck != nil {
		_, res, err := r.podNotStarted(ctx, st, benchv1.ConditionPrepared, waiting, w.stuck)
		return res, err
	}
	setCondition(run, benchv1.ConditionPrepared, metav1.ConditionFalse, benchv1.ReasonPreparing, waiting)
	limit := run.Spec.Deadlines.PrepareDeadline()
	passed, wait := st.phaseDeadline("job "+job.Name, w.clock, limit)
	if !w.scheduled || !passed {
		return ctrl.Result{RequeueAfter: w.lookAgain(wait)}, nil
	}
	msg := fmt.Sprintf("the prepare step did not end within spec.deadlines.prepare (%s) of its pod's scheduling at %s; job %s was stopped",
		limit, w.clock.UTC().Format(time.RFC3339), job.Name)
	if err := r.expireJob(ctx, st, job); err != nil {
		return ctrl.Result{}, err
	}
	setCondition(run, benchv1.ConditionPrepared, metav1.ConditionFalse, benchv1.ReasonDeadlineExceeded, msg)
	st.endMessage = msg
	return r.finish(ctx, st, benchv1.ReasonDeadlineExceeded)
}

// waitForTarget records a target that stopped being ready mid-run; the run
// waits for it (within its timeout) rather than measure a broken target.
func (r *BenchmarkRunReconciler) waitForTarget(st *runState) ctrl.Result {
	setCondition(st.run, benchv1.ConditionTargetReady, metav1.ConditionFalse, st.target.Reason, st.target.Message)
	return ctrl.Result{RequeueAfter: pollInterval}
}
