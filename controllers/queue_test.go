package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Two runs whose load generators may land on the same pool do not run at
// the same time: the later one waits in Queued, saying for which run, and
// starts when that one ends. A run on another pool, and a run that allows
// sharing, start at once.
func TestExclusivePoolsQueue(t *testing.T) {
	h := newHarness(t)
	node := loadgenNode(h)
	h.node("other-1", map[string]string{"pool": "other"})
	first := measureOnly("first", 4, 1)
	h.create(first)
	firstJob := h.waitJob(specs.MeasureJobName(h.run("first"), 0, 1))
	// Created within the same second, first still comes first: ties go by name.
	h.create(measureOnly("second", 4, 1))
	elsewhere := measureOnly("elsewhere", 4, 1)
	elsewhere.Spec.Workload.Placement.NodeSelector = map[string]string{"pool": "other"}
	h.create(elsewhere)
	sharing := measureOnly("sharing", 4, 1)
	sharing.Spec.AllowSharedNodes = true
	h.create(sharing)

	second := h.waitPhase("second", 20*time.Second, benchv1.PhaseQueued)
	c := meta.FindStatusCondition(second.Status.Conditions, benchv1.ConditionAdmitted)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != benchv1.ReasonWaitingForNodes ||
		!strings.Contains(c.Message, "/first") || !strings.Contains(c.Message, node) {
		t.Errorf("Admitted condition %+v: want WaitingForNodes naming the first run and node %s", c, node)
	}
	if second.Status.StartTime != nil {
		t.Error("a queued run has not started: its timeout must not run yet")
	}
	// The others start at once: their Jobs appear while second waits.
	h.waitJob(specs.MeasureJobName(h.run("elsewhere"), 0, 1))
	if got := h.run("second").Status.Phase; got != benchv1.PhaseQueued {
		t.Fatalf("second is %s while first runs", got)
	}
	for _, j := range h.jobs() {
		if strings.HasPrefix(j.Name, "second-") {
			t.Fatalf("second created Job %s while queued", j.Name)
		}
	}
	// first ends, but second still waits for sharing: allowing to share
	// nodes is sharing's choice, not second's.
	f := fixture(t, "pgbench", "pg14plus-tpcb-scale50-haproxy.txt")
	h.kubelet(firstJob, node, "pgbench", f)
	h.waitPhase("first", 20*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid)
	// The end of first wakes second at once (nothing polls: the phase
	// change is the event), which now names the run it still waits for.
	testutil.Eventually(t, 6*time.Second, "second waiting for sharing", func() error {
		r := h.run("second")
		if c := meta.FindStatusCondition(r.Status.Conditions, benchv1.ConditionAdmitted); r.Status.Phase != benchv1.PhaseQueued || c == nil || !strings.Contains(c.Message, "/sharing") {
			return fmt.Errorf("second after first ended: %s, %+v; want it waiting for sharing", r.Status.Phase, c)
		}
		return nil
	})
	h.kubelet(h.waitJob(specs.MeasureJobName(h.run("sharing"), 0, 1)), node, "pgbench", f)
	testutil.Eventually(t, 6*time.Second, "second admitted as soon as sharing ends", func() error {
		r := h.run("second")
		if c := meta.FindStatusCondition(r.Status.Conditions, benchv1.ConditionAdmitted); r.Status.Phase == benchv1.PhaseQueued || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("phase %s, Admitted %+v", r.Status.Phase, c)
		}
		return nil
	})
	h.waitJob(specs.MeasureJobName(h.run("second"), 0, 1))
}
