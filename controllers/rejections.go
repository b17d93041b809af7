package controllers

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
)

// maxRejectionMessage bounds the condition's message (a run may carry many
// rejections; the annotation keeps them all).
const maxRejectionMessage = 1024

// noteRejections turns the run's rejections annotation into its condition
// Rejected, in any phase: True with what, who and why; False once every
// rejection is undone; untouched when none was ever made.
func noteRejections(run *benchv1.BenchmarkRun) {
	rs, err := benchv1.Rejections(run.Annotations)
	had := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionRejected) != nil
	switch {
	case err != nil:
		setCondition(run, benchv1.ConditionRejected, metav1.ConditionFalse, benchv1.ReasonUnreadable, status.Truncate(err.Error(), maxRejectionMessage))
	case len(rs) > 0:
		parts := make([]string, len(rs))
		for i, r := range rs {
			parts[i] = r.String()
		}
		setCondition(run, benchv1.ConditionRejected, metav1.ConditionTrue, benchv1.ReasonRejectedByPerson,
			status.Truncate(strings.Join(parts, "; "), maxRejectionMessage))
	case had:
		setCondition(run, benchv1.ConditionRejected, metav1.ConditionFalse, benchv1.ReasonNotRejected, "every rejection was undone")
	}
}
