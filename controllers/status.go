package controllers

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

const defaultTimeout = 2 * time.Hour

func timeout(run *benchv1.BenchmarkRun) time.Duration {
	if run.Spec.Timeout == nil || run.Spec.Timeout.Duration <= 0 {
		return defaultTimeout
	}
	return run.Spec.Timeout.Duration
}

// start stamps a new run and sets every condition to Unknown, so that
// `kubectl describe` lists what is still to come.
func (r *BenchmarkRunReconciler) start(st *runState) {
	run := st.run
	now := metav1.NewTime(st.now)
	run.Status.Phase = benchv1.PhasePending
	run.Status.StartTime = &now
	run.Status.ResultsConfigMap = specs.ResultsConfigMapName(run)
	for _, t := range []string{benchv1.ConditionTargetReady, benchv1.ConditionPrepared, benchv1.ConditionCompleted, benchv1.ConditionValid} {
		setCondition(run, t, metav1.ConditionUnknown, benchv1.ReasonPending, "not evaluated yet")
	}
	msg := "no other active run may use the same nodes"
	if run.Spec.AllowSharedNodes {
		msg = "spec.allowSharedNodes: runs alongside others on shared nodes"
	}
	setCondition(run, benchv1.ConditionAdmitted, metav1.ConditionTrue, benchv1.ReasonAdmitted, msg)
}

func (r *BenchmarkRunReconciler) timedOut(st *runState) bool {
	start := st.run.Status.StartTime
	return start != nil && st.now.After(start.Add(timeout(st.run)))
}

// remainingSeconds is what is left of the run's timeout, for Job deadlines.
func remainingSeconds(st *runState) *int64 {
	left := int64(st.run.Status.StartTime.Add(timeout(st.run)).Sub(st.now).Seconds())
	left = max(left, 30)
	return &left
}

func setCondition(run *benchv1.BenchmarkRun, t string, s metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&run.Status.Conditions, metav1.Condition{
		Type: t, Status: s, Reason: reason, Message: status.Truncate(msg, 1024), ObservedGeneration: run.Generation,
	})
}

// failInvalidSpec ends a run whose spec the schema let through but the
// workload or target rejects (for example, a CRD installed without its
// validation rules).
func (r *BenchmarkRunReconciler) failInvalidSpec(st *runState, err error) {
	run := st.run
	now := metav1.NewTime(st.now)
	run.Status.Phase = benchv1.PhaseFailed
	run.Status.CompletionTime = &now
	msg := fmt.Sprintf("invalid spec: %v", err)
	setCondition(run, benchv1.ConditionCompleted, metav1.ConditionFalse, benchv1.ReasonInvalidSpec, msg)
	setCondition(run, benchv1.ConditionValid, metav1.ConditionFalse, benchv1.ReasonInvalidSpec, msg)
}

// failImageNotAllowed ends a run before anything is created for it: a
// default image it would run, or the runner image, is outside the
// manager's allow-list (--allowed-images); the message names the image,
// the field or flag, and the fix.
func (r *BenchmarkRunReconciler) failImageNotAllowed(st *runState, err error) {
	run := st.run
	now := metav1.NewTime(st.now)
	run.Status.Phase = benchv1.PhaseFailed
	run.Status.CompletionTime = &now
	msg := err.Error()
	setCondition(run, benchv1.ConditionCompleted, metav1.ConditionFalse, benchv1.ReasonImageNotAllowed, msg)
	setCondition(run, benchv1.ConditionValid, metav1.ConditionFalse, benchv1.ReasonImageNotAllowed, msg)
}

// phaseDetail adds the reason of a terminal phase to its event.
func phaseDetail(run *benchv1.BenchmarkRun) string {
	if !run.Status.Phase.Terminal() {
		return ""
	}
	for _, t := range []string{benchv1.ConditionCompleted, benchv1.ConditionValid} {
		if c := meta.FindStatusCondition(run.Status.Conditions, t); c != nil && c.Status == metav1.ConditionFalse {
			return ": " + c.Message
		}
	}
	if p := run.Status.Primary; p != nil {
		return ": " + p.Display
	}
	return ""
}

func findCondition(run *benchv1.BenchmarkRun, t string) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, t)
}

// maxStatusMessageBytes bounds status.message, a printer column.
const maxStatusMessageBytes = 512

// statusMessage is status.message: the condition that keeps the run from
// going on (a pod that cannot start, the nodes another run holds) or says
// why it failed or is not valid, as "Reason: message"; empty while all goes
// well and on success. It depends on the conditions
// alone, so a reconcile that changes nothing writes nothing.
func statusMessage(run *benchv1.BenchmarkRun) string {
	if run.Status.Phase == benchv1.PhaseSucceeded {
		return ""
	}
	for _, t := range []string{benchv1.ConditionCompleted, benchv1.ConditionPrepared, benchv1.ConditionTargetReady, benchv1.ConditionValid, benchv1.ConditionAdmitted} {
		c := findCondition(run, t)
		if c == nil || c.Status != metav1.ConditionFalse {
			continue
		}
		switch c.Reason {
		case benchv1.ReasonMeasuring, benchv1.ReasonPreparing, benchv1.ReasonProvisioning, benchv1.ReasonAwaitingResults:
			continue // going on as it should
		}
		// One line: a printer column shows a message up to its first newline.
		return status.Truncate(strings.Join(strings.Fields(c.Reason+": "+c.Message), " "), maxStatusMessageBytes)
	}
	return ""
}
