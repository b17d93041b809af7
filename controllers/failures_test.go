package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// A run past its timeout fails with reason Timeout and keeps what it measured.
func TestTimeoutKeepsMeasurements(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.MeasureOnly("slow", 16, 2)
	run.Spec.Timeout = &metav1.Duration{Duration: 6 * time.Second}
	h.Create(run)
	h.Replay(h.WaitJob(specs.MeasureJobName(run, 0, 1)), node, "pgbench", kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt"))
	h.WaitJob(specs.MeasureJobName(run, 0, 2)) // never finishes
	run = h.WaitPhase("slow", 20*time.Second, benchv1.PhaseFailed)
	c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionCompleted)
	if c == nil || c.Reason != benchv1.ReasonTimeout {
		t.Fatalf("completed condition %+v", c)
	}
	if reps := run.Status.Steps[0].Repetitions; len(reps) != 1 || reps[0].Verdict != benchv1.VerdictSucceeded {
		t.Fatalf("the finished measurement must be kept: %+v", reps)
	}
	if doc := h.ResultsDocument(t, run); len(doc.Steps[0].Repetitions) != 1 || doc.Steps[0].Repetitions[0].Result == nil {
		t.Fatalf("results document %+v", doc.Steps)
	}
}

// A manager restart in the middle of a run neither duplicates a Job nor
// loses or repeats a result. The second manager reads nothing from logs, so
// the measurement it collects comes from the termination message alone.
func TestManagerRestartMidRun(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.MeasureOnly("restart", 105, 3)
	run.Spec.Cleanup = benchv1.CleanupNever
	h.Create(run)
	f := kit.Fixture(t, "pgbench", "pg14plus-tpcb-scale50-haproxy.txt")
	h.Replay(h.WaitJob(specs.MeasureJobName(run, 0, 1)), node, "pgbench", f)
	second := h.WaitJob(specs.MeasureJobName(run, 0, 2))

	h.StopManager()
	h.Replay(second, node, "pgbench", f) // finishes while no manager runs
	h.noLogs = true
	h.StartManager(cfg)

	h.Replay(h.WaitJob(specs.MeasureJobName(run, 0, 3)), node, "pgbench", f)
	run = h.WaitPhase("restart", 20*time.Second, benchv1.PhaseSucceeded)
	if n := len(h.Jobs()); n != 3 {
		t.Fatalf("%d jobs, want 3", n)
	}
	reps := run.Status.Steps[0].Repetitions
	if len(reps) != 3 {
		t.Fatalf("%d repetitions recorded, want 3: %+v", len(reps), reps)
	}
	seen := map[int32]bool{}
	for _, r := range reps {
		if seen[r.Index] {
			t.Fatalf("repetition %d recorded twice", r.Index)
		}
		seen[r.Index] = true
	}
	doc := h.ResultsDocument(t, run)
	if got := len(doc.Steps[0].Repetitions); got != 3 {
		t.Fatalf("%d repetitions in the results document", got)
	}
	if s := findSummary(run.Status.Steps[0].Summary, "transactionsPerSecond"); s == nil || s.N != 3 || *s.CoefficientOfVariationPercent != 0 {
		t.Fatalf("summary %+v", s)
	}
}

// A failed prepare step ends the run: Failed, with the prepare step's own
// result kept in the results document.
func TestPrepareFailureEndsTheRun(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.PgbenchRun("badinit", kit.ExternalDB(), []int32{4}, 1)
	h.Create(run)
	prep := h.WaitJob(specs.PrepareJobName(run))
	// What `dbperf-runner exec --prepare` leaves when pgbench -i exits 1.
	res := results.New("prepare")
	res.Primary = results.Key{Name: "prepareSeconds"}
	res.Add(results.Metric{Name: "prepareSeconds", Value: 0.2, Unit: "s", Direction: results.LowerIsBetter})
	res.Fail("the prepare step exited with code 1")
	msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
	if err != nil {
		t.Fatal(err)
	}
	h.Terminate(prep, node, 3, string(msg))
	run = h.WaitPhase("badinit", 20*time.Second, benchv1.PhaseFailed)
	for _, c := range []string{benchv1.ConditionPrepared, benchv1.ConditionCompleted} {
		if got := meta.FindStatusCondition(run.Status.Conditions, c); got == nil || got.Reason != benchv1.ReasonPrepareFailed {
			t.Errorf("%s: %+v", c, got)
		}
	}
	if doc := h.ResultsDocument(t, run); doc.Prepare == nil || doc.Prepare.Verdict != results.Failed {
		t.Fatalf("prepare result %+v", doc.Prepare)
	}
	for _, j := range h.Jobs() {
		if j.Name != specs.PrepareJobName(run) {
			t.Fatalf("no measurement may start after a failed prepare step: %s", j.Name)
		}
	}
}

// A load generator killed before the runner could write its summary (here
// OOMKilled) is a failed measurement that says so, and Valid turns False as
// soon as it is recorded, before the run ends.
func TestLoadGeneratorKilledWithoutSummary(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.MeasureOnly("oom", 4, 2)
	h.Create(run)
	h.noLogs = true
	h.Terminate(h.WaitJob(specs.MeasureJobName(run, 0, 1)), node, 137, "")
	h.WaitJob(specs.MeasureJobName(run, 0, 2))
	testutil.Eventually(t, 10*time.Second, "Valid=False before the run ends", func() error {
		run = h.Run("oom")
		c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionValid)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "without a dbperf summary") {
			return fmt.Errorf("valid %+v", c)
		}
		return nil
	})
	if run.Status.Phase != benchv1.PhaseRunning {
		t.Fatalf("phase %s: the run goes on to its other measurements", run.Status.Phase)
	}
}
