package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// expectedUnits are a run's step × repetition pairs, from its spec.
func expectedUnits(run *benchv1.BenchmarkRun) ([]string, int, error) {
	w, err := registry.For(&run.Spec.Workload)
	if err != nil {
		return nil, 0, err
	}
	steps := len(w.Steps(&run.Spec.Workload))
	reps := max(int(run.Spec.Repetitions), 1)
	var out []string
	for s := range steps {
		for r := 1; r <= reps; r++ {
			out = append(out, fmt.Sprintf("%d/%d", s, r))
		}
	}
	return out, steps, nil
}

// chaosFigures count what the checks found over every run.
type chaosFigures struct {
	runs, measurements, jobs, duplicates, losses int
}

// checkRecordedOnce: every step × repetition is in status once and in the
// results document once with its result, under the Job that measured it,
// and a Job was created for it exactly once.
func checkRecordedOnce(ctx context.Context, t *testing.T, c *sim.Cluster, runs []benchv1.BenchmarkRun, jobs *jobLedger) chaosFigures {
	t.Helper()
	var f chaosFigures
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	for name, uids := range jobs.byName {
		if len(uids) > 1 {
			f.duplicates++
			t.Errorf("Job %s was created %d times", name, len(uids))
		}
	}
	for _, g := range jobs.gaps {
		t.Errorf("the Job watch lost track (a duplicate Job could be missed): %s", g)
	}
	for i := range runs {
		run := &runs[i]
		f.runs++
		units, steps, err := expectedUnits(run)
		if err != nil {
			t.Errorf("%s: %v", run.Name, err)
			continue
		}
		doc, err := runDocument(ctx, c, run)
		if err != nil {
			t.Errorf("%s: no results document: %v", run.Name, err)
			f.losses += len(units)
			continue
		}
		if len(run.Status.Steps) != steps || len(doc.Steps) != steps {
			t.Errorf("%s: %d steps in status, %d in the document, want %d", run.Name, len(run.Status.Steps), len(doc.Steps), steps)
			f.losses += len(units)
			continue
		}
		inStatus, inDoc := map[string]int{}, map[string]int{}
		for s := range steps {
			for _, rep := range run.Status.Steps[s].Repetitions {
				u := fmt.Sprintf("%d/%d", s, rep.Index)
				inStatus[u]++
				if want := specs.MeasureJobName(run, s, rep.Index); rep.Job != want {
					t.Errorf("%s %s: status names Job %q, want %q", run.Name, u, rep.Job, want)
				}
			}
			for _, rep := range doc.Steps[s].Repetitions {
				if rep.Result != nil {
					inDoc[fmt.Sprintf("%d/%d", s, rep.Index)]++
				}
			}
		}
		for _, u := range units {
			step, rep, _ := strings.Cut(u, "/")
			made := len(jobs.byUnit[unitKey(string(run.UID), benchv1.RoleLoadgen, step, rep)])
			f.jobs += made
			switch {
			case inStatus[u] == 0 || inDoc[u] == 0 || made == 0:
				f.losses++
				t.Errorf("%s (%s) measurement %s: %d times in status, %d in the document, %d Jobs", run.Name, run.Status.Phase, u, inStatus[u], inDoc[u], made)
			case inStatus[u] > 1 || inDoc[u] > 1 || made > 1:
				f.duplicates++
				t.Errorf("%s measurement %s: %d times in status, %d in the document, %d Jobs", run.Name, u, inStatus[u], inDoc[u], made)
			default:
				f.measurements++
			}
		}
		if len(inStatus) > len(units) || len(inDoc) > len(units) {
			t.Errorf("%s: measurements beyond its steps × repetitions: status %v, document %v", run.Name, inStatus, inDoc)
		}
		for key := range jobs.byUnit {
			if rest, ok := strings.CutPrefix(key, string(run.UID)+"/"+benchv1.RoleLoadgen+"/"); ok && !containsString(units, rest) {
				t.Errorf("%s: a Job for %s, which is no step × repetition of it", run.Name, rest)
			}
		}
		if !strings.HasPrefix(run.Name, "many-") {
			checkStatusInDocument(t, run, doc)
		}
	}
	return f
}

// checkStatusInDocument: the figures status shows are the stored ones.
func checkStatusInDocument(t *testing.T, run *benchv1.BenchmarkRun, doc *specs.Document) {
	t.Helper()
	for s, st := range run.Status.Steps {
		for _, rs := range st.Repetitions {
			res := doc.Result(st.Name, rs.Index)
			if res == nil {
				continue // reported as a loss
			}
			if string(res.Verdict) != string(rs.Verdict) {
				t.Errorf("%s step %d #%d: %s in status, %s in the document", run.Name, s, rs.Index, rs.Verdict, res.Verdict)
			}
			stored := map[results.Key]float64{}
			for _, m := range res.Metrics {
				stored[m.Key()] = m.Value
			}
			for _, m := range rs.Metrics {
				if v, ok := stored[results.Key{Name: m.Name, Operation: m.Operation}]; !ok || v != m.Value {
					t.Errorf("%s step %d #%d: status has %s[%s]=%v, the document %v (%v)", run.Name, s, rs.Index, m.Name, m.Operation, m.Value, v, ok)
				}
			}
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// settle stops the schedule and waits until every run, comparison and the
// schedule have come to rest: runs ended with their cleanup carried out,
// comparisons ended, the schedule's history complete.
func settle(ctx context.Context, t *testing.T, r *chaosRig, within time.Duration) []benchv1.BenchmarkRun {
	t.Helper()
	if _, err := r.dyn.Resource(scheduleGVR).Namespace(ns).Patch(ctx, chaosSchedule, types.MergePatchType,
		[]byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var runs []benchv1.BenchmarkRun
	testutil.Eventually(t, within, "every run, comparison and the schedule at rest", func() error {
		var err error
		if runs, err = listRuns(ctx, r.dyn); err != nil {
			return err
		}
		for _, run := range runs {
			if !run.Status.Phase.Terminal() || !run.Status.CleanupCompleted {
				return fmt.Errorf("%s is %s, cleanup done %v (%s)", run.Name, run.Status.Phase, run.Status.CleanupCompleted, conditionsOf(&run))
			}
		}
		cmps, err := listComparisons(ctx, r.dyn)
		if err != nil {
			return err
		}
		for _, c := range cmps {
			if !c.Status.Phase.Terminal() {
				return fmt.Errorf("comparison %s is %s (%s)", c.Name, c.Status.Phase, c.Status.Progress)
			}
		}
		s, err := getSchedule(ctx, r.dyn, chaosSchedule)
		if err != nil {
			return err
		}
		if len(s.Status.Active) > 0 {
			return fmt.Errorf("the schedule still names active runs %v", s.Status.Active)
		}
		return nil
	})
	return runs
}

// checkCleanup: once a run's cleanup is done, what its policy deletes is
// gone (Jobs and their pods, the target's StatefulSets, Services and pods,
// the workload files) and what it keeps is there; the results ConfigMap
// stays either way; no child outlives its run.
func checkCleanup(ctx context.Context, t *testing.T, c *sim.Cluster, runs []benchv1.BenchmarkRun) {
	t.Helper()
	byUID := map[string]*benchv1.BenchmarkRun{}
	for i := range runs {
		byUID[string(runs[i].UID)] = &runs[i]
	}
	core, sel := c.Clientset.CoreV1(), metav1.ListOptions{LabelSelector: benchv1.LabelRunUID}
	testutil.Eventually(t, 2*time.Minute, "every child as the cleanup policies say", func() error {
		children := map[string]map[string]int{} // run UID → kind → count
		count := func(kind string, labels map[string]string) {
			uid := labels[benchv1.LabelRunUID]
			if children[uid] == nil {
				children[uid] = map[string]int{}
			}
			children[uid][kind]++
		}
		jobs, err := c.Clientset.BatchV1().Jobs(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, x := range jobs.Items {
			count("Job", x.Labels)
		}
		sts, err := c.Clientset.AppsV1().StatefulSets(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, x := range sts.Items {
			count("StatefulSet", x.Labels)
		}
		svcs, err := core.Services(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, x := range svcs.Items {
			count("Service", x.Labels)
		}
		pods, err := core.Pods(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, x := range pods.Items {
			count("Pod", x.Labels)
		}
		cms, err := core.ConfigMaps(ns).List(ctx, sel)
		if err != nil {
			return err
		}
		for _, x := range cms.Items {
			count("ConfigMap "+x.Labels[benchv1.LabelRole], x.Labels)
		}
		var problems []string
		for uid, kinds := range children {
			if byUID[uid] == nil {
				problems = append(problems, fmt.Sprintf("children of a run that is gone (UID %s): %v", uid, kinds))
			}
		}
		for uid, run := range byUID {
			have := children[uid]
			if have["ConfigMap "+benchv1.RoleResults] != 1 {
				problems = append(problems, fmt.Sprintf("%s: %d results ConfigMaps", run.Name, have["ConfigMap "+benchv1.RoleResults]))
			}
			policy := run.Spec.Cleanup
			deletes := policy == "" || policy == benchv1.CleanupAlways || (policy == benchv1.CleanupOnSuccess && run.Status.Phase == benchv1.PhaseSucceeded)
			if deletes {
				for kind, n := range have {
					if kind != "ConfigMap "+benchv1.RoleResults {
						problems = append(problems, fmt.Sprintf("%s (cleanup %s, %s): %d %s left", run.Name, policy, run.Status.Phase, n, kind))
					}
				}
				continue
			}
			units, _, _ := expectedUnits(run)
			if have["Job"] < len(units) {
				problems = append(problems, fmt.Sprintf("%s (cleanup %s, %s) kept %d Jobs of %d", run.Name, policy, run.Status.Phase, have["Job"], len(units)))
			}
			if run.Spec.Target.Valkey != nil && have["StatefulSet"] == 0 {
				problems = append(problems, fmt.Sprintf("%s (cleanup %s, %s) did not keep its target", run.Name, policy, run.Status.Phase))
			}
		}
		if len(problems) > 0 {
			sort.Strings(problems)
			return fmt.Errorf("%d problems: %s", len(problems), strings.Join(problems, "; "))
		}
		return nil
	})
}

// checkManagerLog: no manager panicked, even in a reconcile
// (controller-runtime recovers those and logs them).
func checkManagerLog(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "components.log"))
	if err != nil {
		t.Errorf("the components' log: %v", err)
		return 0
	}
	reconcileErrors := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.Contains(line, "Observed a panic") {
			t.Errorf("a manager panicked: %.500s", line)
		}
		if strings.Contains(line, "Reconciler error") {
			if reconcileErrors++; reconcileErrors <= 5 {
				t.Logf("a reconcile error: %.600s", line)
			}
		}
	}
	return reconcileErrors
}

// finish waits for everything to come to rest after the kills and checks
// it all; it logs the figures of the scenario.
func (r *chaosRig) finish(ctx context.Context, t *testing.T, jobs *jobLedger) {
	t.Helper()
	r.mu.Lock()
	errs, killed, kills := r.errs, r.killed, r.kills
	var leaderless, longest time.Duration
	for _, d := range r.leaderless {
		leaderless += d
		longest = max(longest, d)
	}
	atKills := fmt.Sprint(r.atKills)
	r.mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
	// Every kill adds a run, which may still be in flight.
	runs := settle(ctx, t, r, 5*time.Minute+time.Duration(kills)*6*time.Second)
	took := time.Since(r.began)
	c := r.e.stack.Cluster
	f := checkRecordedOnce(ctx, t, c, runs, jobs)
	kinds := map[string]int{}
	for i := range runs {
		run := &runs[i]
		kind := "own"
		switch {
		case strings.HasPrefix(run.Name, "many-"):
			kind = "many"
		case strings.HasPrefix(run.Name, chaosKillPrefix):
			kind = "kill cases"
		case run.Labels[benchv1.LabelComparison] != "":
			kind = "comparisons'"
		case run.Labels[benchv1.LabelSchedule] != "":
			kind = "the schedule's"
		}
		kinds[kind]++
		if kind != "many" && kind != "kill cases" && run.Status.Phase == benchv1.PhaseFailed {
			t.Errorf("%s: Failed: %s", run.Name, conditionsOf(run))
		}
	}
	for i, k := range killed {
		for j := range runs {
			if runs[j].Name == k.Name {
				killed[i] = &runs[j]
			}
		}
	}
	checkKilledMeasurements(ctx, t, c, killed)
	checkCleanup(ctx, t, c, runs)
	checkComparisons(ctx, t, r, runs)
	checkSchedule(ctx, t, r, runs)
	reconcileErrors := checkManagerLog(t, r.e.stack.Dir())
	// The watchdog went on while the runs settled: what it saw since.
	r.mu.Lock()
	late := r.errs[len(errs):]
	leaseLost := r.leaseLost
	r.mu.Unlock()
	for _, e := range late {
		t.Error(e)
	}
	t.Logf("chaos: %d kills (seed %d) in %s; %d runs %v; %d measurements recorded exactly once each, from %d Jobs; %d duplicates, %d losses; "+
		"no manager led for %s in all (at most %.1f s after a kill); the manager lost its lease by itself %d times; %d `Reconciler error` lines; "+
		"phases at the kills (kills at which some run or comparison was in it): %s",
		kills, r.seed, took.Round(time.Second), f.runs, kinds, f.measurements, f.jobs, f.duplicates, f.losses,
		leaderless.Round(time.Second), longest.Seconds(), leaseLost, reconcileErrors, atKills)
}
