package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Two runs whose load generators may land on the same pool do not run at
// the same time: the later one waits in Queued, saying for which run, and
// starts when that one ends. A run on another pool, and a run that allows
// sharing, start at once.
func TestExclusivePoolsQueue(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	h.Node("other-1", map[string]string{"pool": "other"})
	first := kit.MeasureOnly("first", 4, 1)
	h.Create(first)
	firstJob := h.WaitJob(specs.MeasureJobName(h.Run("first"), 0, 1))
	// Created within the same second, first still comes first: ties go by name.
	h.Create(kit.MeasureOnly("second", 4, 1))
	elsewhere := kit.MeasureOnly("elsewhere", 4, 1)
	elsewhere.Spec.Workload.Placement.NodeSelector = map[string]string{"pool": "other"}
	h.Create(elsewhere)
	sharing := kit.MeasureOnly("sharing", 4, 1)
	sharing.Spec.AllowSharedNodes = true
	h.Create(sharing)

	second := h.WaitPhase("second", 20*time.Second, benchv1.PhaseQueued)
	c := meta.FindStatusCondition(second.Status.Conditions, benchv1.ConditionAdmitted)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != benchv1.ReasonWaitingForNodes ||
		!strings.Contains(c.Message, "/first") || !strings.Contains(c.Message, node) {
		t.Errorf("Admitted condition %+v: want WaitingForNodes naming the first run and node %s", c, node)
	}
	if second.Status.StartTime != nil {
		t.Error("a queued run has not started: its timeout must not run yet")
	}
	// The others start at once: their Jobs appear while second waits.
	h.WaitJob(specs.MeasureJobName(h.Run("elsewhere"), 0, 1))
	if got := h.Run("second").Status.Phase; got != benchv1.PhaseQueued {
		t.Fatalf("second is %s while first runs", got)
	}
	for _, j := range h.Jobs() {
		if strings.HasPrefix(j.Name, "second-") {
			t.Fatalf("second created Job %s while queued", j.Name)
		}
	}
	// first ends, but second still waits for sharing: allowing to share
	// nodes is sharing's choice, not second's.
	f := kit.Fixture(t, "pgbench", "pg14plus-tpcb-scale50-haproxy.txt")
	h.Replay(firstJob, node, "pgbench", f)
	h.WaitPhase("first", 20*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid)
	// The end of first wakes second at once (nothing polls: the phase
	// change is the event), which now names the run it still waits for.
	testutil.Eventually(t, 6*time.Second, "second waiting for sharing", func() error {
		r := h.Run("second")
		if c := meta.FindStatusCondition(r.Status.Conditions, benchv1.ConditionAdmitted); r.Status.Phase != benchv1.PhaseQueued || c == nil || !strings.Contains(c.Message, "/sharing") {
			return fmt.Errorf("second after first ended: %s, %+v; want it waiting for sharing", r.Status.Phase, c)
		}
		return nil
	})
	h.Replay(h.WaitJob(specs.MeasureJobName(h.Run("sharing"), 0, 1)), node, "pgbench", f)
	testutil.Eventually(t, 6*time.Second, "second admitted as soon as sharing ends", func() error {
		r := h.Run("second")
		if c := meta.FindStatusCondition(r.Status.Conditions, benchv1.ConditionAdmitted); r.Status.Phase == benchv1.PhaseQueued || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("phase %s, Admitted %+v", r.Status.Phase, c)
		}
		return nil
	})
	h.WaitJob(specs.MeasureJobName(h.Run("second"), 0, 1))
}

// TestAdmissionIsIdempotent: the admission phase the way it breaks. A dozen
// runs wait for the one node of their pool and are admitted one after
// another; the first status patch moving each into Queued and the first
// admitting it meet a real conflict (so admission runs twice each way), and
// the manager is restarted while runs wait. Every run is admitted in the
// order it came, never while another holds the node, each wake comes from
// an event (the whole queue drains in far less than the five-minute safety
// net), every Job is created once, and every measurement is once in status
// and in the results document.
func TestAdmissionIsIdempotent(t *testing.T) {
	const runs = 12
	h := newHarness(t)
	ic := newInterferer()
	ic.refuseAdmission = true
	h.wrap = ic.wrap
	h.RestartManager(cfg)
	node := h.LoadgenNode()
	for n := range runs {
		h.Create(kit.MeasureOnly(fmt.Sprintf("adm-%02d", n), 4, 1)) // in name order: ties go by name
	}
	ctx := context.Background()
	f := kit.Fixture(t, "pgbench", "pg14plus-tpcb-scale50-haproxy.txt")
	jobUIDs := map[string]map[types.UID]bool{}
	done := map[string]bool{}
	restarted := false
	began := time.Now()
	testutil.Eventually(t, 3*time.Minute, "every run ending", func() error {
		var list benchv1.BenchmarkRunList
		if err := k8s.List(ctx, &list, client.InNamespace(h.NS)); err != nil {
			return err
		}
		holding, ended := []string{}, 0
		for _, r := range list.Items {
			switch {
			case r.Status.Phase.Terminal():
				ended++
			case !waiting(r.Status.Phase):
				holding = append(holding, r.Name)
			}
		}
		if len(holding) > 1 {
			t.Errorf("%v hold the node at once", holding)
		}
		for _, j := range h.Jobs() {
			if jobUIDs[j.Name] == nil {
				jobUIDs[j.Name] = map[types.UID]bool{}
			}
			jobUIDs[j.Name][j.UID] = true
			if !done[j.Name] {
				done[j.Name] = true
				h.Replay(&j, node, "pgbench", f)
			}
		}
		h.RestartOnce(&restarted, ended >= runs/3, cfg)
		return kit.AllEnded(ended, runs)
	})
	t.Logf("%d runs through one node in %s", runs, time.Since(began).Round(time.Second))

	var prevEnd *metav1.Time
	for n := range runs {
		name := fmt.Sprintf("adm-%02d", n)
		run := h.Run(name)
		if run.Status.Phase != benchv1.PhaseSucceeded && run.Status.Phase != benchv1.PhaseInvalid {
			t.Errorf("%s: %s, %+v", name, run.Status.Phase, run.Status.Conditions)
			continue
		}
		// First come, first served, one at a time (whole seconds).
		if prevEnd != nil && run.Status.StartTime.Before(prevEnd) {
			t.Errorf("%s started at %s, before the run ahead of it ended at %s", name, run.Status.StartTime, prevEnd)
		}
		prevEnd = run.Status.CompletionTime
		doc := h.ResultsDocument(t, run)
		if len(run.Status.Steps) != 1 || len(run.Status.Steps[0].Repetitions) != 1 || len(doc.Steps) != 1 ||
			len(doc.Steps[0].Repetitions) != 1 || doc.Steps[0].Repetitions[0].Result == nil {
			t.Errorf("%s: status %+v, document %+v: want its one measurement in both", name, run.Status.Steps, doc.Steps)
		}
	}
	for name, uids := range jobUIDs {
		if len(uids) != 1 {
			t.Errorf("Job %s created %d times", name, len(uids))
		}
	}
	if len(jobUIDs) != runs {
		t.Errorf("%d Jobs, want %d", len(jobUIDs), runs)
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	for n := range runs {
		name := fmt.Sprintf("adm-%02d", n)
		if !ic.recordRefused[name+"/True"] {
			t.Errorf("%s: its admission met no conflict: the test did not test it", name)
		}
		if n > 0 && !ic.recordRefused[name+"/False"] {
			t.Errorf("%s: its move into Queued met no conflict: the test did not test it", name)
		}
	}
}
