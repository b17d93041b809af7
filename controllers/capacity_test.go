package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// pgbenchAtRate is what pgbench 15 prints for a 5 s measurement at
// --rate offered with --latency-limit 20 against a server that keeps up
// to knee transactions per second: below it nothing is late; past it a
// tenth is skipped and half of the rest is over the limit, and only knee
// per second are achieved.
func pgbenchAtRate(offered, knee int) string {
	tps, processed, skipped, late := offered, offered*5, 0, 0
	if offered > knee {
		tps, processed, skipped = knee, knee*5, offered/2
		late = processed / 2
	}
	return fmt.Sprintf(`pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 10
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: %d
number of failed transactions: 0 (0.000%%)
number of transactions skipped: %d (0.000%%)
number of transactions above the 20.0 ms latency limit: %d/%d (0.000%%)
latency average = 6.560 ms
latency stddev = 1.906 ms
rate limit schedule lag: avg 1.330 (max 14.252) ms
initial connection time = 16.577 ms
tps = %d.000000 (without initial connection time)
`, processed, skipped, late, processed, tps)
}

// capacityRun searches pgbench's rate under p99 ≤ 20 ms.
func capacityRun(name string, reps int32) *benchv1.BenchmarkRun {
	run := kit.MakeRun(name).External().Pgbench(10).SkipPrepare().Repetitions(reps).Obj()
	run.Spec.AllowSharedNodes = true
	run.Spec.Workload.Pgbench.Duration = metav1.Duration{Duration: 5 * time.Second}
	run.Spec.Workload.Pgbench.LatencyLimit = &metav1.Duration{Duration: 20 * time.Millisecond}
	achieved := benchv1.Percent(95)
	run.Spec.Capacity = &benchv1.CapacitySpec{
		Parameter: "rate",
		Search:    &benchv1.CapacitySearch{Start: 100, FactorPercent: 200, WidthPercent: 2},
		Rules: benchv1.CapacityRules{
			Latency:            []benchv1.LatencyRule{{Percentile: 99, Max: metav1.Duration{Duration: 20 * time.Millisecond}}},
			MinAchievedPercent: &achieved,
		},
	}
	return run
}

// playCapacity plays the node for capacity runs cap-00… until all of them
// end: each measurement Job's pod ends at once with the real runner's
// result of the pgbench output answer gives for it. The manager is
// restarted once, after six Jobs a run. It returns each Job's rate.
func playCapacity(t *testing.T, h *harness, runs int, answer func(n int, j *batchv1.Job) string) (map[string]int, bool) {
	t.Helper()
	return playCapacityWith(t, h, runs, 6, answer, func(_ *batchv1.Job, out string) runner.Options {
		return runner.Options{Command: []string{"cat", out}}
	})
}

// playCapacityWith is playCapacity restarting the manager after
// restartAfter Jobs a run, each Job's answer (in file out) replayed with
// the runner options replay gives.
func playCapacityWith(t *testing.T, h *harness, runs, restartAfter int, answer func(n int, j *batchv1.Job) string,
	replay func(j *batchv1.Job, out string) runner.Options) (map[string]int, bool) {
	t.Helper()
	ctx := context.Background()
	node := h.LoadgenNode()
	dir := t.TempDir()
	seen := map[string]int{}
	restarted := false
	testutil.Eventually(t, time.Duration(5+runs/20)*time.Minute, "every capacity run ending", func() error {
		jobs, err := newLoadgenJobs(ctx, h.NS, seen)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			var n int
			if len(j.OwnerReferences) != 1 {
				return fmt.Errorf("job %s has owners %v", j.Name, j.OwnerReferences)
			}
			if _, err := fmt.Sscanf(j.OwnerReferences[0].Name, "cap-%d", &n); err != nil {
				return fmt.Errorf("job %s of run %q", j.Name, j.OwnerReferences[0].Name)
			}
			seen[j.Name] = rateOf(t, j)
			out := filepath.Join(dir, j.Name+".txt")
			if err := os.WriteFile(out, []byte(answer(n, j)), 0o600); err != nil {
				return err
			}
			h.ReplayWith(j, node, "pgbench", replay(j, out))
		}
		h.RestartOnce(&restarted, len(seen) >= runs*restartAfter, cfg)
		if len(jobs) > 0 { // runs are counted when no Job is waiting
			return fmt.Errorf("%d Jobs replayed", len(jobs))
		}
		ended, err := endedRuns(ctx, h.NS)
		if err != nil {
			return err
		}
		return kit.AllEnded(ended, runs)
	})
	return seen, restarted
}

// endedRuns counts the runs of namespace ns that have ended.
func endedRuns(ctx context.Context, ns string) (int, error) {
	var list benchv1.BenchmarkRunList
	if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	ended := 0
	for _, r := range list.Items {
		if r.Status.Phase.Terminal() {
			ended++
		}
	}
	return ended, nil
}

// newLoadgenJobs are the load-generator Jobs of namespace ns not seen yet.
// Their metadata is listed and only the new ones read whole: a test of
// hundreds of searches has thousands of Jobs, and listing them whole ten
// times a second had the API server spend its time on the test's polls.
func newLoadgenJobs(ctx context.Context, ns string, seen map[string]int) ([]*batchv1.Job, error) {
	var metas metav1.PartialObjectMetadataList
	metas.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
	if err := k8s.List(ctx, &metas, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelRole: benchv1.RoleLoadgen}); err != nil {
		return nil, err
	}
	var out []*batchv1.Job
	for _, m := range metas.Items {
		if _, done := seen[m.Name]; done {
			continue
		}
		j := &batchv1.Job{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, j); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// measurementCount counts a test's measurements in status and in the
// results documents.
type measurementCount struct{ inStatus, inDoc int }

// add counts run's measurements: every one (levels, confirmations, both
// soak attempts) is in status once and, when it succeeded, in the run's
// results document.
func (c *measurementCount) add(t *testing.T, h *harness, run *benchv1.BenchmarkRun) {
	t.Helper()
	doc := h.ResultsDocument(t, run)
	for _, st := range run.Status.Steps {
		for _, rep := range st.Repetitions {
			c.inStatus++
			if rep.Verdict == benchv1.VerdictSucceeded && doc.Result(st.Name, rep.Index) == nil {
				t.Errorf("%s: %s #%d in status, not in the results document", run.Name, st.Name, rep.Index)
			}
		}
	}
	for _, st := range doc.Steps {
		c.inDoc += len(st.Repetitions)
	}
}

// check: as many measurements in status and in the documents as Jobs.
func (c measurementCount) check(t *testing.T, jobs map[string]int) {
	t.Helper()
	if len(jobs) != c.inStatus || c.inDoc != c.inStatus {
		t.Errorf("%d Jobs, %d measurements in status, %d in the results documents", len(jobs), c.inStatus, c.inDoc)
	}
	t.Logf("%d Jobs, %d measurements in status, %d in the results documents", len(jobs), c.inStatus, c.inDoc)
}

// argOf is the value after flag in a Job's command.
func argOf(t *testing.T, job *batchv1.Job, flag string) int {
	t.Helper()
	args := job.Spec.Template.Spec.Containers[0].Args
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		if v, err := strconv.Atoi(args[i+1]); err == nil {
			return v
		}
	}
	t.Fatalf("job %s has no %s: %q", job.Name, flag, args)
	return 0
}

// interferingHarness is a harness whose manager's every first status
// write recording a measurement is refused by a real conflict (and every
// third results ConfigMap update): the phase runs twice.
func interferingHarness(t *testing.T) (*harness, *interferer) {
	h := newHarness(t)
	ic := newInterferer()
	ic.refuseRecords = true
	h.wrap = ic.wrap
	h.RestartManager(cfg)
	return h, ic
}

// rateOf is the --rate of a measurement Job's command.
func rateOf(t *testing.T, job *batchv1.Job) int { return argOf(t, job, "--rate") }

// TestCapacitySearchIsIdempotent: many capacity searches at once, each
// against its own knee, the way it breaks: the first status write
// recording each measurement is refused by a real conflict (so the phase,
// its judgement and its next level run twice), every third results
// ConfigMap update too, and the manager is restarted while searches are
// in flight. Every search finds its knee within its width, measures each
// of its levels exactly spec.repetitions times (no Job created for a
// level twice, none lost), and its levels are exactly those the pure
// search decides from their verdicts.
func TestCapacitySearchIsIdempotent(t *testing.T) {
	const reps = 2
	runs := 12 // DBPERF_CAPACITY_RUNS: hundreds at once
	if v, err := strconv.Atoi(os.Getenv("DBPERF_CAPACITY_RUNS")); err == nil && v > 0 {
		runs = v
	}
	h, ic := interferingHarness(t)
	knee := func(n int) int { return 150 + 97*n }
	for n := range runs {
		h.Create(capacityRun(fmt.Sprintf("cap-%02d", n), reps))
	}
	seen, restarted := playCapacity(t, h, runs, func(n int, j *batchv1.Job) string { return pgbenchAtRate(rateOf(t, j), knee(n)) })
	if !restarted {
		t.Error("the manager was never restarted")
	}
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if len(ic.rewritten) > 0 {
		t.Errorf("stored measurements rewritten: %v", ic.rewritten)
	}
	levels := 0
	for n := range runs {
		name := fmt.Sprintf("cap-%02d", n)
		run := h.Run(name)
		cs := run.Status.Capacity
		if run.Status.Phase != benchv1.PhaseSucceeded || cs == nil {
			t.Errorf("%s: phase %s, capacity %+v, conditions %+v", name, run.Status.Phase, cs, run.Status.Conditions)
			continue
		}
		k := int32(knee(n))
		if cs.StopReason != benchv1.CapacityConverged || cs.Maximum == nil || *cs.Maximum > k || float64(k-*cs.Maximum) > 0.02*float64(k)+1 {
			t.Errorf("%s: knee %d, found %v (%s: %s)", name, k, cs.Maximum, cs.StopReason, cs.Message)
			continue
		}
		var judged []capacity.Level
		for i, l := range cs.Levels {
			step := run.Status.Steps[i]
			if step.Name != l.Step || step.Name != fmt.Sprintf("rate=%d", l.Value) || len(step.Repetitions) != reps || l.Passed == nil {
				t.Errorf("%s: level %d (%s) has step %s with %d repetitions, judged %v", name, i, l.Step, step.Name, len(step.Repetitions), l.Passed)
				continue
			}
			if d := capacity.Decide(capacity.PlanOf(run.Spec.Capacity), judged, false); d.Next != l.Value {
				t.Errorf("%s: level %d is %d, the search decides %d", name, i, l.Value, d.Next)
			}
			judged = append(judged, capacity.Level{Value: l.Value, Passed: *l.Passed})
			if *l.Passed != (l.Value <= k) {
				t.Errorf("%s: level %d judged passed=%v against a knee at %d: %q", name, l.Value, *l.Passed, k, l.Reasons)
			}
			if achieved := float64(k) / float64(l.Value) * 100; !*l.Passed && achieved < 95 && !strings.Contains(l.Reasons[0], "the generators achieved") {
				t.Errorf("%s: level %d: the achieved rate is named first: %q", name, l.Value, l.Reasons)
			}
		}
		levels += len(cs.Levels)
		if len(run.Status.Steps) != len(cs.Levels) {
			t.Errorf("%s: %d steps, %d levels", name, len(run.Status.Steps), len(cs.Levels))
		}
		got := 0
		for _, s := range h.ResultsDocument(t, run).Steps {
			got += len(s.Repetitions)
		}
		if got != len(cs.Levels)*reps {
			t.Errorf("%s: %d measurements in the results document, want %d", name, got, len(cs.Levels)*reps)
		}
	}
	if jobs := len(seen); jobs != levels*reps {
		t.Errorf("%d measurement Jobs for %d levels × %d repetitions: a level measured twice or lost", jobs, levels, reps)
	}
	t.Logf("%d searches, %d levels, %d Jobs; %d recording status writes refused, %d results ConfigMap updates", runs, levels, len(seen), len(ic.recordRefused), ic.cmUpdates)
}

// What the schema cannot say about a capacity run is refused naming the
// field: a parameter the tool does not have, a sweep left in, a pgbench
// latency rule its counts cannot judge.
func TestCapacityBaseNamesTheField(t *testing.T) {
	cases := map[string]struct {
		mutate func(*benchv1.BenchmarkRun)
		want   []string
	}{
		"fine": {func(*benchv1.BenchmarkRun) {}, nil},
		"clients is a knob too": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity.Parameter = "clients"
			r.Spec.Capacity.Rules.MinAchievedPercent = nil
		}, nil},
		"an unknown knob": {func(r *benchv1.BenchmarkRun) { r.Spec.Capacity.Parameter = "threads" },
			[]string{`spec.capacity.parameter: Unsupported value: "threads": supported values: "clients", "rate"`}},
		"a sweep left in": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Pgbench.Clients = []int32{10, 20} },
			[]string{"spec.capacity", "the workload sweeps 2 steps"}},
		"achieved on a closed loop": {func(r *benchv1.BenchmarkRun) { r.Spec.Capacity.Parameter = "clients" },
			[]string{"spec.capacity.rules.minAchievedPercent", "parameter must be rate"}},
		"no latency limit": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Pgbench.LatencyLimit = nil },
			[]string{"spec.capacity.rules.latency[0].max", "spec.workload.pgbench.latencyLimit must equal this max"}},
		"a soak longer than half the timeout": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity.Soak = &benchv1.CapacitySoak{Duration: metav1.Duration{Duration: 2 * time.Hour}}
		}, []string{"spec.capacity.soak.duration", "takes up to 4h0m0s, more than spec.timeout (2h0m0s): raise spec.timeout"}},
		"a soak within a raised timeout": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity.Soak = &benchv1.CapacitySoak{Duration: metav1.Duration{Duration: 24 * time.Hour}}
			r.Spec.Timeout = &metav1.Duration{Duration: 50 * time.Hour}
			r.Spec.Workload.Pgbench.ProgressInterval = &metav1.Duration{Duration: 30 * time.Second}
		}, nil},
		"a soak of more progress lines than a result keeps": {func(r *benchv1.BenchmarkRun) {
			r.Spec.Capacity.Soak = &benchv1.CapacitySoak{Duration: metav1.Duration{Duration: 24 * time.Hour}}
			r.Spec.Timeout = &metav1.Duration{Duration: 50 * time.Hour}
			r.Spec.Workload.Pgbench.ProgressInterval = &metav1.Duration{Duration: time.Second}
		}, []string{"spec.workload.pgbench.progressInterval", "a soak of 24h0m0s prints 86400 progress lines", "raise it to at least 10s"}},
		"another latency limit": {func(r *benchv1.BenchmarkRun) { r.Spec.Workload.Pgbench.LatencyLimit.Duration = 10 * time.Millisecond },
			[]string{"spec.capacity.rules.latency[0].max"}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			run := capacityRun("r", 1)
			c.mutate(run)
			w, err := registry.For(&run.Spec.Workload)
			if err != nil {
				t.Fatal(err)
			}
			_, errs := capacityBase(run, w)
			got := errs.ToAggregate()
			if len(c.want) == 0 {
				if got != nil {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("accepted, want %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("%q lacks %q", got.Error(), w)
				}
			}
		})
	}
}

// TestCapacityConfirmationReopensTheSearch: a search confirmed at 95 % of
// its maximum for 7 s (its levels last 5 s), the way it breaks (status
// writes refused, the manager restarted). The first confirmation fails (the
// server slows down for it): the search reopens below it and a second
// confirmation, at 95 % of the new maximum, holds. A second search's two
// confirmations both fail: ConfirmationFailed, the maximum not confirmed.
func TestCapacityConfirmationReopensTheSearch(t *testing.T) {
	const runs = 4
	h, _ := interferingHarness(t)
	for n := range runs {
		run := capacityRun(fmt.Sprintf("cap-%02d", n), 1)
		run.Spec.Capacity.Confirm = &benchv1.CapacityConfirm{FractionPercent: 95, Duration: &metav1.Duration{Duration: 7 * time.Second}}
		h.Create(run)
	}
	const knee = 1000
	var mu sync.Mutex
	confirmed := map[int]int{}
	seen, _ := playCapacity(t, h, runs, func(n int, j *batchv1.Job) string {
		rate := rateOf(t, j)
		if argOf(t, j, "--time") != 7 {
			return pgbenchAtRate(rate, knee)
		}
		mu.Lock()
		defer mu.Unlock()
		confirmed[n]++
		if confirmed[n] == 1 || n%2 == 1 { // odd runs never hold
			return pgbenchAtRate(rate, rate/2)
		}
		return pgbenchAtRate(rate, knee)
	})
	var counted measurementCount
	for n := range runs {
		name := fmt.Sprintf("cap-%02d", n)
		run := h.Run(name)
		cs := run.Status.Capacity
		counted.add(t, h, run)
		if run.Status.Phase != benchv1.PhaseSucceeded || cs == nil || cs.Confirmed == nil {
			t.Fatalf("%s: phase %s, capacity %+v", name, run.Status.Phase, cs)
		}
		held := confirms(cs)
		if len(held) != 2 || *held[0].Passed || held[1].Value != *cs.Maximum*95/100 {
			t.Fatalf("%s: confirmations %+v, maximum %d", name, held, *cs.Maximum)
		}
		firstAt := slices.IndexFunc(cs.Levels, func(l benchv1.CapacityLevel) bool { return l.Confirm })
		if held[0].Value <= *cs.Maximum {
			t.Errorf("%s: the first confirmation at %d, the maximum after it %d", name, held[0].Value, *cs.Maximum)
		}
		if searched := len(cs.Levels) - firstAt - 2; searched < 1 {
			t.Errorf("%s: the search did not reopen below the failed confirmation: %+v", name, cs.Levels)
		}
		if n%2 == 0 && (!*cs.Confirmed || !*held[1].Passed || cs.StopReason != benchv1.CapacityConverged) {
			t.Errorf("%s: the second confirmation holds: %+v", name, cs)
		}
		if n%2 == 1 && (*cs.Confirmed || *held[1].Passed || cs.StopReason != benchv1.CapacityConfirmationFailed || !strings.Contains(cs.Message, "is not confirmed")) {
			t.Errorf("%s: both confirmations fail: %s %s", name, cs.StopReason, cs.Message)
		}
		for i, s := range run.Status.Steps {
			if len(s.Repetitions) != 1 || s.Name != cs.Levels[i].Step {
				t.Errorf("%s: step %s: %d measurements (level %s)", name, s.Name, len(s.Repetitions), cs.Levels[i].Step)
			}
		}
		t.Logf("%s: %s — %s", name, cs.StopReason, cs.Message)
	}
	counted.check(t, seen)
}

// pgbenchSoak is pgbench's output for a soak of secs seconds at rate with
// a progress line a second, its mean latency growing by grow (0.5: half
// again by the end) with a little jitter.
func pgbenchSoak(rate, secs int, grow float64) string {
	var b strings.Builder
	for i := 1; i <= secs; i++ {
		x := float64(i) / float64(secs)
		jitter := 1 + 0.02*float64(i%5-2)
		fmt.Fprintf(&b, "progress: %d.0 s, %.1f tps, lat %.3f ms stddev 1.000, 0 failed, lag 0.500 ms, 0 skipped\n",
			i, float64(rate)*jitter, 4*(1+grow*x)*jitter)
	}
	return b.String() + strings.Replace(pgbenchAtRate(rate, rate), "duration: 5 s", fmt.Sprintf("duration: %d s", secs), 1)
}

// TestCapacitySoakIsMeasuredOnce: searches confirmed, then soaked at 75 %
// of the confirmed maximum for 30 s, the way it breaks (every first
// status write of a measurement refused, the manager restarted while
// soaks run). A steady soak holds; one whose latency grows by half fails
// LatencyGrowth, naming its figure; one whose first attempt fails (its
// load generator lost) is measured again from its start, which status
// says, and holds (the run ends Failed: one of its measurements failed);
// a search whose confirmation never holds is not soaked.
// Each soak attempt is one Job: none measured twice, none lost.
func TestCapacitySoakIsMeasuredOnce(t *testing.T) {
	const runs, soakSeconds, knee = 4, 30, 1000
	h, _ := interferingHarness(t)
	for n := range runs {
		run := capacityRun(fmt.Sprintf("cap-%02d", n), 1)
		run.Spec.Capacity.Confirm = &benchv1.CapacityConfirm{FractionPercent: 95, Duration: &metav1.Duration{Duration: 7 * time.Second}}
		run.Spec.Capacity.Soak = &benchv1.CapacitySoak{Percent: 75, Duration: metav1.Duration{Duration: soakSeconds * time.Second},
			MaxThroughputDropPercent: 5, MaxLatencyGrowthPercent: 20, MaxErrorGrowthPercent: 1, MaxMemoryGrowthPercent: 10}
		h.Create(run)
	}
	var mu sync.Mutex
	soaks := map[int]int{}
	seen, _ := playCapacity(t, h, runs, func(n int, j *batchv1.Job) string {
		rate := rateOf(t, j)
		switch argOf(t, j, "--time") {
		case 7:
			if n == 3 { // its confirmations never hold
				return pgbenchAtRate(rate, rate/2)
			}
		case soakSeconds:
			mu.Lock()
			defer mu.Unlock()
			soaks[n]++
			switch {
			case n == 1:
				return pgbenchSoak(rate, soakSeconds, 0.5)
			case n == 2 && soaks[n] == 1:
				return "pgbench: error: connection to server was lost\n"
			}
			return pgbenchSoak(rate, soakSeconds, 0)
		}
		return pgbenchAtRate(rate, knee)
	})
	var counted measurementCount
	for n := range runs {
		name := fmt.Sprintf("cap-%02d", n)
		run := h.Run(name)
		cs := run.Status.Capacity
		counted.add(t, h, run)
		// A run one of whose measurements failed says so, whatever was
		// measured again (the lost soak's run ends Failed, keeping its
		// capacity and soak).
		if want := map[bool]benchv1.Phase{true: benchv1.PhaseFailed, false: benchv1.PhaseSucceeded}[n == 2]; run.Status.Phase != want || cs == nil || cs.Maximum == nil {
			t.Fatalf("%s: phase %s (want %s), capacity %+v; %s", name, run.Status.Phase, want, cs, run.Status.Message)
		}
		sk := cs.Soak
		if n == 3 {
			if sk != nil || soaks[n] != 0 || !strings.Contains(cs.Message, "no soak: the maximum was not confirmed") {
				t.Errorf("%s: an unconfirmed maximum soaked: %+v, %d soak Jobs; %s", name, sk, soaks[n], cs.Message)
			}
			continue
		}
		if sk == nil || sk.Passed == nil || sk.Value != *cs.Maximum*75/100 || sk.Step != fmt.Sprintf("rate=%d,soak", sk.Value) {
			t.Fatalf("%s: soak %+v, maximum %d", name, sk, *cs.Maximum)
		}
		last := run.Status.Steps[len(run.Status.Steps)-1]
		wantAttempts := map[int]int{0: 1, 1: 1, 2: 2}[n]
		if last.Name != sk.Step || len(last.Repetitions) != wantAttempts || int(sk.Attempts) != wantAttempts || soaks[n] != wantAttempts {
			t.Errorf("%s: soak step %s with %d measurements, %d attempts in status, %d Jobs; want %d", name, last.Name, len(last.Repetitions), sk.Attempts, soaks[n], wantAttempts)
		}
		if len(run.Status.Steps) != len(cs.Levels)+1 {
			t.Errorf("%s: %d steps for %d levels and a soak", name, len(run.Status.Steps), len(cs.Levels))
		}
		switch n {
		case 0:
			if !*sk.Passed || len(sk.Checks) != 3 {
				t.Errorf("%s: a steady soak: %+v", name, sk)
			}
		case 1:
			if *sk.Passed || !strings.HasPrefix(sk.Reasons[0], "LatencyGrowth: latencyAverageMillis drifted by +") {
				t.Errorf("%s: a soak whose latency grows by half: %+v", name, sk)
			}
		case 2:
			if !*sk.Passed || !strings.Contains(sk.Restarts, "the soak was measured again from its start") {
				t.Errorf("%s: a soak lost once: %+v", name, sk)
			}
		}
		if !strings.Contains(run.Status.Progress, "soak") {
			t.Errorf("%s: progress %q does not say the soak's verdict", name, run.Status.Progress)
		}
		t.Logf("%s: maximum %d, soak at %d: passed %v, %d attempts; %v %s", name, *cs.Maximum, sk.Value, *sk.Passed, sk.Attempts, sk.Reasons, sk.Restarts)
	}
	counted.check(t, seen)
}

// uncorrectedTool is a tool whose latency at a fixed rate is measured
// from when each request was sent: pgbench saying so of itself.
type uncorrectedTool struct{ workloads.Workload }

func (uncorrectedTool) RateCorrected(*benchv1.WorkloadSpec) bool { return false }

// A latency rule over an uncorrected tool's rate levels is a warning
// naming the tool; a corrected tool, a closed loop or no latency rule is
// none.
func TestUncorrectedLatencyIsAWarningNamingTheTool(t *testing.T) {
	run := capacityRun("r", 1)
	pg, err := registry.For(&run.Spec.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if w := uncorrectedWarning(run, uncorrectedTool{pg}); !strings.HasPrefix(w, "pgbench measures latency at a fixed rate from when each request was sent") {
		t.Errorf("uncorrected: %q", w)
	}
	if w := uncorrectedWarning(run, pg); w != "" {
		t.Errorf("corrected: %q", w)
	}
	run.Spec.Capacity.Parameter = "clients"
	if w := uncorrectedWarning(run, uncorrectedTool{pg}); w != "" {
		t.Errorf("closed loop: %q", w)
	}
	run.Spec.Capacity.Parameter, run.Spec.Capacity.Rules.Latency = "rate", nil
	if w := uncorrectedWarning(run, uncorrectedTool{pg}); w != "" {
		t.Errorf("no latency rule: %q", w)
	}
}

// TestCapacityComparisonGivesTheDeltaWithItsInterval: a comparison of two
// pools whose variants are capacity searches, four a side (the fewest that
// give a 95 % interval), interleaved. The v4a pool's server keeps up to
// about 31 % more rate than v3's: the comparison compares what each search
// found, capacityMaximum, and says Better with its Δ and interval.
func TestCapacityComparisonGivesTheDeltaWithItsInterval(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	cmp := kit.Comparison("cap", benchv1.OrderInterleaved, 4)
	cmp.Spec.Template = capacityRun("x", 1).Spec
	h.Create(cmp)
	h.Node("v3-node", map[string]string{"pool": "standard-v3"})
	h.Node("v4a-node", map[string]string{"pool": "standard-v4a"})
	knees := map[string][]int{"v3": {1000, 1020, 990, 1010}, "v4a": {1310, 1330, 1300, 1320}}
	index, runs := map[string]int{}, map[string]int{} // run → its index within its variant; runs seen a variant
	seen := map[string]bool{}
	dir := t.TempDir()
	testutil.Eventually(t, 3*time.Minute, "both variants' searches measured", func() error {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if seen[j.Name] || j.Labels[benchv1.LabelRole] != benchv1.RoleLoadgen {
				continue
			}
			runName := j.Spec.Template.Annotations[benchv1.AnnotationRunName]
			var run benchv1.BenchmarkRun
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: runName}, &run); err != nil {
				return err
			}
			v := run.Labels[benchv1.LabelVariant]
			n, ok := index[runName]
			if !ok {
				n = runs[v]
				index[runName], runs[v] = n, n+1
			}
			seen[j.Name] = true
			out := filepath.Join(dir, j.Name+".txt")
			if err := os.WriteFile(out, []byte(pgbenchAtRate(rateOf(t, j), knees[v][n%4])), 0o600); err != nil {
				return err
			}
			h.ReplayWith(j, v+"-node", "pgbench", runner.Options{Command: []string{"cat", out}})
		}
		var c benchv1.BenchmarkComparison
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: "cap"}, &c); err != nil {
			return err
		}
		if c.Status.Phase != benchv1.ComparisonSucceeded {
			return fmt.Errorf("comparison %s: %s", c.Status.Phase, c.Status.Progress)
		}
		return nil
	})
	got := h.WaitComparison("cap", benchv1.ComparisonSucceeded)
	var row *benchv1.MetricComparison
	for i := range got.Status.Results {
		if got.Status.Results[i].Metric == "capacityMaximum" {
			row = &got.Status.Results[i]
		}
	}
	if row == nil {
		t.Fatalf("no capacityMaximum row: %+v", got.Status.Results)
	}
	if row.Step != "capacity" || row.Operation != "rate" || row.Unit != "/s" || row.BaselineN != 4 || row.CandidateN != 4 || row.Verdict != benchv1.VerdictBetter ||
		row.DeltaPercent == nil || *row.DeltaPercent < 27 || *row.DeltaPercent > 35 || row.CILowPercent == nil || row.CIHighPercent == nil {
		t.Errorf("row %+v", row)
	}
	t.Logf("capacity %g → %g /s: Δ %+.1f %% (95 %% CI %+.1f to %+.1f), %s; %s", row.BaselineMedian, row.CandidateMedian, *row.DeltaPercent, *row.CILowPercent, *row.CIHighPercent, row.Verdict, got.Status.Summary)
}

// The pre-flight check of the next rate level reads the generators' CPU
// per operation at the largest level measured that recorded it and the
// CPU each generator declares (limit, else request): a level they cannot
// offer is refused saying how many generators it needs; without a
// declared CPU, a cost, or at a closed-loop knob, nothing is refused.
func TestGeneratorLimitRefusesALevelTheGeneratorsCannotOffer(t *testing.T) {
	run := capacityRun("r", 1)
	run.Spec.Workload.Parallelism = 2
	cs := &benchv1.CapacityStatus{Parameter: "rate", Levels: []benchv1.CapacityLevel{
		{Value: 400, Step: "rate=400", LoadGeneratorCPUMicrosPerOperation: ptr.To(100.0)},
		{Value: 800, Step: "rate=800", LoadGeneratorCPUMicrosPerOperation: ptr.To(250.0)}, // the largest: 1 CPU at 90 % offers 3,600/s
		{Value: 600, Step: "rate=600"},
	}}
	if why := generatorLimit(run, cs, 100000); why != "" {
		t.Errorf("no declared CPU: %q", why)
	}
	run.Spec.Workload.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}
	run.Spec.Workload.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if why := generatorLimit(run, cs, 7200); why != "" {
		t.Errorf("two generators offer 7,200/s: %q", why)
	}
	want := "the pre-flight check refused level rate=7201: it needs 3 load generators — at rate=800 the generators used 250 µs of CPU an operation, and each may use 1 CPU (spec.workload.resources.limits.cpu) up to 90 % (spec.validity.maxLoadGeneratorCPUPercent), 3600 operations a second; spec.workload.parallelism is 2: raise it to 3"
	if why := generatorLimit(run, cs, 7201); !strings.HasPrefix(why, want) {
		t.Errorf("7,201/s:\n%s\nwant\n%s", why, want)
	}
	run.Spec.Workload.Resources.Limits = nil // the request then: 1,800/s a generator
	if why := generatorLimit(run, cs, 3601); !strings.Contains(why, "needs 3 load generators") || !strings.Contains(why, "resources.requests.cpu") {
		t.Errorf("by the request: %q", why)
	}
	if why := generatorLimit(run, &benchv1.CapacityStatus{Levels: cs.Levels[2:]}, 100000); why != "" {
		t.Errorf("no cost measured: %q", why)
	}
	run.Spec.Capacity.Parameter = "clients"
	if why := generatorLimit(run, cs, 100000); why != "" {
		t.Errorf("closed loop: %q", why)
	}
}
