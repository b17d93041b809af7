package controllers

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// provision waits for the target to be ready; load already asked for it.
func (r *BenchmarkRunReconciler) provision(st *runState) ctrl.Result {
	run, obs := st.run, st.target
	run.Status.Phase = benchv1.PhaseProvisioning
	if !obs.Ready {
		prevReason := ""
		if prev := findCondition(run, benchv1.ConditionTargetReady); prev != nil {
			prevReason = prev.Reason
		}
		setCondition(run, benchv1.ConditionTargetReady, metav1.ConditionFalse, obs.Reason, obs.Message)
		if obs.Reason != benchv1.ReasonProvisioning && prevReason != obs.Reason {
			r.Recorder.Event(run, corev1.EventTypeWarning, obs.Reason, obs.Message)
		}
		if obs.Reason == benchv1.ReasonInvalidSpec { // waiting cannot make it valid
			r.failInvalidSpec(st, errors.New(obs.Message))
			return ctrl.Result{}
		}
		return ctrl.Result{RequeueAfter: pollInterval}
	}
	setCondition(run, benchv1.ConditionTargetReady, metav1.ConditionTrue, benchv1.ReasonReady, obs.Message)
	st.note(false, "TargetReady", "%s", obs.Message)
	run.Status.Phase = benchv1.PhasePreparing
	return ctrl.Result{}
}
