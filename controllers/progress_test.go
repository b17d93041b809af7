package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A long run keeps its progress in status: the measurement in progress
// (step, repetition, Job, start) and, once one measurement has ended, when
// the run should end (the mean duration times those left). A manager
// restarted in the middle of a measurement finds both unchanged, and the
// run goes on from there; at the end both are cleared.
func TestProgressOfALongRun(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	run := kit.MeasureOnly("long", 8, 3)
	run.Spec.Timeout = &metav1.Duration{Duration: 48 * time.Hour}
	h.Create(run)
	job1 := h.WaitJob(specs.MeasureJobName(h.Run("long"), 0, 1))
	testutil.Eventually(t, 10*time.Second, "the first measurement in status", func() error {
		m := h.Run("long").Status.Measuring
		if m == nil || m.Job != job1.Name || m.Repetition != 1 || m.StartTime == nil || !m.StartTime.Equal(&job1.CreationTimestamp) {
			return fmt.Errorf("measuring %+v, want job %s from %s", m, job1.Name, job1.CreationTimestamp)
		}
		if eta := h.Run("long").Status.ExpectedCompletionTime; eta != nil {
			return fmt.Errorf("an end expected (%s) before any measurement ended", eta)
		}
		return nil
	})
	// The first measurement took 20 minutes.
	pod := h.StartLoadgen(job1, node)
	_, msg := h.Exec(pod.Name, "pgbench", runner.Options{Command: []string{"cat", kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt")}})
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	h.SetStatus(pod, kit.Terminated(0, msg, metav1.NewTime(time.Now().Add(-20*time.Minute))))
	job2 := h.WaitJob(specs.MeasureJobName(h.Run("long"), 0, 2))
	var before *benchv1.BenchmarkRun
	testutil.Eventually(t, 10*time.Second, "the second measurement and the expected end", func() error {
		before = h.Run("long")
		m, eta := before.Status.Measuring, before.Status.ExpectedCompletionTime
		if m == nil || m.Job != job2.Name || m.Repetition != 2 {
			return fmt.Errorf("measuring %+v, want job %s", m, job2.Name)
		}
		// Two measurements left, 20 minutes each, from the second's start.
		want := job2.CreationTimestamp.Add(40 * time.Minute)
		if eta == nil || eta.Time.Sub(want).Abs() > 2*time.Second {
			return fmt.Errorf("expected completion %v, want about %s", eta, want)
		}
		if before.Status.Progress != "1/3" {
			return fmt.Errorf("progress %q", before.Status.Progress)
		}
		return nil
	})
	// A restart in the middle of the second measurement changes nothing.
	since := kit.ReconcileCount(t, "benchmarkrun")
	h.RestartManager(cfg)
	kit.WaitReconciled(t, "benchmarkrun", since) // the new manager's first look at the run
	since = kit.ReconcileCount(t, "benchmarkrun")
	h.Touch(before, "after-restart")
	kit.WaitReconciled(t, "benchmarkrun", since) // and the one the touch brings
	after := h.Run("long")
	if !equalProgress(before.Status, after.Status) {
		t.Errorf("after a restart: measuring %+v, end %v; before %+v, %v", after.Status.Measuring, after.Status.ExpectedCompletionTime,
			before.Status.Measuring, before.Status.ExpectedCompletionTime)
	}
	for _, j := range h.Jobs() {
		if j.Name != job1.Name && j.Name != job2.Name {
			t.Errorf("job %s created after the restart, while the second measurement runs", j.Name)
		}
	}
	f := kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt")
	h.Replay(job2, node, "pgbench", f)
	h.Replay(h.WaitJob(specs.MeasureJobName(h.Run("long"), 0, 3)), node, "pgbench", f)
	done := h.WaitPhase("long", 20*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid)
	if done.Status.Measuring != nil || done.Status.ExpectedCompletionTime != nil {
		t.Errorf("an ended run still measuring %+v, expected at %v", done.Status.Measuring, done.Status.ExpectedCompletionTime)
	}
}

func equalProgress(a, b benchv1.BenchmarkRunStatus) bool {
	return a.Progress == b.Progress && a.Measuring != nil && b.Measuring != nil && *a.Measuring.StartTime == *b.Measuring.StartTime &&
		a.Measuring.Job == b.Measuring.Job && a.ExpectedCompletionTime != nil && b.ExpectedCompletionTime != nil &&
		a.ExpectedCompletionTime.Equal(b.ExpectedCompletionTime)
}
