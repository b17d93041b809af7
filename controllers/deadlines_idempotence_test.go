package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestDeadlinePhasesAreIdempotent: the phases that gained deadlines and a
// second look at pods that never came, the way they break. Nine runs at
// once: three whose load generator cannot be scheduled (podStart), three
// whose Job's pod is refused by a quota and never exists (the FailedCreate
// event, found by the reconciler's own recheck), three whose first
// measurement hangs past spec.deadlines.measure and whose second succeeds.
// The first status write ending each run, and the first recording each
// measurement, meet a conflict (so each is judged twice); the manager is
// restarted while the clocks run; every run is reconciled again after it
// ended. Afterwards each run ended once, as it should, with one
// PodNotStarted event where one was met, one Job per measurement begun,
// every measurement once in status and in its results document, no stored
// measurement rewritten; and reconciling an ended run writes and says
// nothing.
func TestDeadlinePhasesAreIdempotent(t *testing.T) {
	const each = 3
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	ic := newInterferer()
	ic.refuseRecords = true
	h.wrap = ic.wrap
	h.RestartManager(cfg)
	runs := map[string]*benchv1.BenchmarkRun{}
	for n := range each {
		for _, kind := range []string{"unsched", "refused", "hung"} {
			run := kit.MeasureOnly(fmt.Sprintf("%s-%d", kind, n), 4, 2)
			if kind == "hung" {
				run.Spec.Deadlines.Measure = &metav1.Duration{Duration: 3 * time.Second}
			} else {
				run.Spec.Deadlines.PodStart = &metav1.Duration{Duration: 5 * time.Second}
			}
			run.Spec.Cleanup = benchv1.CleanupNever // the Jobs stay to be counted
			h.Create(run)
			runs[run.Name] = run
		}
	}
	acted := map[string]bool{}
	restarted := false
	testutil.Eventually(t, 2*time.Minute, "every run ending", func() error {
		for _, j := range h.Jobs() {
			if !acted[j.Name] {
				acted[j.Name] = true
				playDeadlineJob(t, h, runs, &j, node)
			}
		}
		if !restarted && len(acted) >= 3*each {
			restarted = true // every clock is running
			h.StopManager()
			h.StartManager(cfg)
		}
		ended := 0
		for name := range runs {
			if h.Run(name).Status.Phase.Terminal() {
				ended++
			}
		}
		return kit.AllEnded(ended, len(runs))
	})
	h.eventsWritten(t, h.Run("hung-0"))

	jobs := map[string]int{}
	for _, j := range h.Jobs() {
		jobs[ownerRun(&j)]++
	}
	ended := map[string]benchv1.BenchmarkRunStatus{}
	for name := range runs {
		r := h.Run(name)
		ended[name] = r.Status
		checkDeadlineRun(t, h, r, jobs[name])
	}
	ic.mu.Lock()
	if len(ic.rewritten) > 0 || len(ic.endRefused) != len(runs) {
		t.Errorf("stored measurements rewritten: %v; runs whose ending met a conflict: %d of %d", ic.rewritten, len(ic.endRefused), len(runs))
	}
	ic.mu.Unlock()

	// Twice: each ended run reconciled again (an annotation changed) writes
	// nothing and says nothing.
	for name := range runs {
		if err := touch(ctx, k8s, h.Run(name)); err != nil {
			t.Fatal(err)
		}
	}
	h.eventsWritten(t, h.Run("hung-0"))
	for name, before := range ended {
		if after := h.Run(name).Status; !equality.Semantic.DeepEqual(before, after) {
			t.Errorf("%s: status changed when reconciled again after it ended", name)
		}
	}
	for name, r := range runs {
		checkDeadlineRun(t, h, h.Run(r.Name), jobs[name])
	}
}

// playDeadlineJob is the kubelet and the Job controller of
// TestDeadlinePhasesAreIdempotent: what happens to each run's Jobs.
func playDeadlineJob(t *testing.T, h *harness, runs map[string]*benchv1.BenchmarkRun, j *batchv1.Job, node string) {
	t.Helper()
	name := ownerRun(j)
	switch {
	case strings.HasPrefix(name, "unsched-"):
		h.Pod(j, kit.OnlyPod, "", unschedulable())
	case strings.HasPrefix(name, "refused-"):
		now := metav1.Now()
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name + ".refused"},
			InvolvedObject: corev1.ObjectReference{APIVersion: "batch/v1", Kind: "Job", Namespace: j.Namespace, Name: j.Name, UID: j.UID},
			Reason:         "FailedCreate", Type: corev1.EventTypeWarning, Count: 1, FirstTimestamp: now, LastTimestamp: now,
			Source:  corev1.EventSource{Component: "job-controller"},
			Message: fmt.Sprintf(`Error creating: pods "%s-x" is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0`, j.Name)}
		if err := k8s.Create(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	case j.Name == specs.MeasureJobName(runs[name], 0, 1):
		h.StartLoadgen(j, node) // and never ends
	default:
		h.Replay(j, node, "pgbench", kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt"))
	}
}

// checkDeadlineRun checks how one run of TestDeadlinePhasesAreIdempotent
// ended: the reason, its Jobs, its event, its measurements in status and in
// the results document.
func checkDeadlineRun(t *testing.T, h *harness, r *benchv1.BenchmarkRun, jobs int) {
	t.Helper()
	c := findCondition(r, benchv1.ConditionCompleted)
	if r.Status.Phase != benchv1.PhaseFailed || c == nil {
		t.Errorf("%s: phase %s, completed %+v", r.Name, r.Status.Phase, c)
		return
	}
	said, failed := 0, 0 // PodNotStarted and PhaseFailed events, each counted as often as said
	for _, e := range h.EventsOf(r.Name) {
		switch e.Reason {
		case benchv1.ReasonPodNotStarted:
			said += int(max(e.Count, 1))
		case "PhaseFailed":
			failed += int(max(e.Count, 1))
		}
	}
	if failed != 1 {
		t.Errorf("%s: %d PhaseFailed events, want one", r.Name, failed)
	}
	if strings.HasPrefix(r.Name, "hung-") {
		reps := r.Status.Steps[0].Repetitions
		doc := h.ResultsDocument(t, r).Steps[0].Repetitions
		if jobs != 2 || said != 0 || c.Reason != benchv1.ReasonAllMeasured || len(reps) != 2 || len(doc) != 2 ||
			reps[0].Verdict != benchv1.VerdictFailed || !strings.Contains(strings.Join(reps[0].Reasons, ";"), "DeadlineExceeded") ||
			reps[1].Verdict != benchv1.VerdictSucceeded || doc[0].Index != 1 || doc[1].Index != 2 || doc[1].Result == nil {
			t.Errorf("%s: %d jobs, %d PodNotStarted events, completed %s, %d repetitions in status %+v, %d in the document", r.Name, jobs, said, c.Reason, len(reps), reps, len(doc))
		}
		return
	}
	// An unschedulable pod is named in its own event while podStart runs;
	// a refused one is found past podStart (the Job controller's events are
	// read after refusedAfter), so the run's failure event is the one that
	// names it.
	want, named := "Unschedulable", 1
	if strings.HasPrefix(r.Name, "refused-") {
		want, named = "exceeded quota: no-pods", 0
	}
	if jobs != 1 || said != named || c.Reason != benchv1.ReasonPodNotStarted || !strings.Contains(c.Message, want) || !strings.Contains(c.Message, "spec.deadlines.podStart is 5s") || len(r.Status.Steps) > 0 && len(r.Status.Steps[0].Repetitions) > 0 {
		t.Errorf("%s: %d jobs, %d PodNotStarted events (want %d), completed %s: %s", r.Name, jobs, said, named, c.Reason, c.Message)
	}
}

// ownerRun is the name of the run controlling a Job.
func ownerRun(j *batchv1.Job) string {
	if ref := metav1.GetControllerOf(j); ref != nil {
		return ref.Name
	}
	return ""
}
