package controllers

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// A spec the schema lets through but Kubernetes refuses a child of (a
// toleration's operator is not checked by the CRD) ends the run Failed,
// reason InvalidSpec, with the API server's words: it retried until its
// timeout, in phase Pending without a condition, a reconcile error every
// few seconds.
func TestRunWithARefusedChildFails(t *testing.T) {
	h := newHarness(t)
	bad := []corev1.Toleration{{Key: "pool", Operator: "Sometimes", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	names := []string{"refused-target", "refused-job"}
	if !statefulSetTemplatesValidated(t, h.NS, bad) {
		// The target's StatefulSet is created and its pod refused by the
		// StatefulSet controller: the run waits in Provisioning until its
		// timeout (docs/install.md#compatibility). A Job's template is
		// validated on every version.
		t.Logf("the API server (%s) does not validate a StatefulSet's pod template: only the Job's refusal is checked", serverVersion(t))
		names = names[1:]
	}
	target := kit.MeasureOnly("refused-target", 4, 1)
	target.Spec.AllowSharedNodes = true
	target.Spec.Target = benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}, Placement: benchv1.Placement{Tolerations: bad}}
	target.Spec.Workload = kit.CustomWorkload()
	target.Spec.Workload.Custom.Database = ""
	if len(names) == 2 {
		h.Create(target)
	}
	job := kit.MeasureOnly("refused-job", 4, 1)
	job.Spec.AllowSharedNodes = true
	job.Spec.Workload.Placement.Tolerations = bad
	h.Create(job)
	for _, name := range names {
		run := h.WaitPhase(name, 20*time.Second, benchv1.PhaseFailed)
		c := findCondition(run, benchv1.ConditionValid)
		if c == nil || c.Reason != benchv1.ReasonInvalidSpec || !strings.Contains(c.Message, "tolerations[0].operator") {
			t.Errorf("run %s: Valid condition %+v", name, c)
		}
	}
}
