package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// provision waits for the target to be ready; load already asked for it.
// While it is not, the target's pods are watched: one that cannot start is
// named, and once the first is scheduled the provision deadline runs (from
// the phase's start for a target without pods).
func (r *BenchmarkRunReconciler) provision(ctx context.Context, st *runState) (ctrl.Result, error) {
	run, obs := st.run, st.target
	run.Status.Phase = benchv1.PhaseProvisioning
	if obs.Ready {
		setCondition(run, benchv1.ConditionTargetReady, metav1.ConditionTrue, benchv1.ReasonReady, obs.Message)
		st.note(false, "TargetReady", "%s", obs.Message)
		run.Status.Phase = benchv1.PhasePreparing
		run.Status.Deadline = nil
		return ctrl.Result{}, nil
	}
	prevReason := ""
	if prev := findCondition(run, benchv1.ConditionTargetReady); prev != nil {
		prevReason = prev.Reason
	}
	if obs.Reason == benchv1.ReasonInvalidSpec { // waiting cannot make it valid
		r.failInvalidSpec(st, errors.New(obs.Message))
		return ctrl.Result{}, nil
	}
	w, err := r.targetPods(ctx, st)
	if err != nil {
		return ctrl.Result{}, err
	}
	if w.stuck != nil {
		ended, res, err := r.podNotStarted(ctx, st, benchv1.ConditionTargetReady, obs.Message, w.stuck)
		if ended || err != nil {
			return res, err
		}
		return ctrl.Result{RequeueAfter: min(res.RequeueAfter, pollInterval)}, nil
	}
	setCondition(run, benchv1.ConditionTargetReady, metav1.ConditionFalse, obs.Reason, obs.Message)
	if obs.Reason != benchv1.ReasonProvisioning && prevReason != obs.Reason {
		r.Recorder.Event(run, corev1.EventTypeWarning, obs.Reason, obs.Message)
	}
	what := "the target"
	if obs.Status.Resource != "" {
		what = obs.Status.Resource
	}
	clock := w.clock
	if len(obs.PodSelector) == 0 {
		clock = st.phaseClock(what)
	}
	limit := run.Spec.Deadlines.ProvisionDeadline()
	passed, wait := st.phaseDeadline(what, clock, limit)
	if !passed {
		if wait <= 0 || wait > pollInterval {
			wait = pollInterval
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	from := "its first pod's scheduling"
	if len(obs.PodSelector) == 0 {
		from = "the phase's start"
	}
	st.endMessage = fmt.Sprintf("the target was not ready within spec.deadlines.provision (%s) of %s at %s: %s",
		limit, from, clock.UTC().Format(time.RFC3339), obs.Message)
	return r.finish(ctx, st, benchv1.ReasonDeadlineExceeded)
}
