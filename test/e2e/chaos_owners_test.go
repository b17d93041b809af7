package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// checkComparisons: each comparison lists each variant's runs, which
// exist, are its own, and ended — every round's, or those of the rounds a
// sequential one stopped after, and no run of a later round exists; its
// report was written once all had ended.
func checkComparisons(ctx context.Context, t *testing.T, r *chaosRig, runs []benchv1.BenchmarkRun) {
	t.Helper()
	cmps, err := listComparisons(ctx, r.dyn)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*benchv1.BenchmarkRun{}
	for i := range runs {
		byName[runs[i].Name] = &runs[i]
	}
	for _, cmp := range cmps {
		if cmp.Status.Phase != benchv1.ComparisonSucceeded {
			t.Errorf("comparison %s is %s: %s", cmp.Name, cmp.Status.Phase, mustJSON(cmp.Status.Conditions))
			continue
		}
		rounds := cmp.Spec.RunsPerVariant
		if sq := cmp.Status.Sequential; cmp.Spec.Sequential != nil {
			if sq == nil || sq.Decision == benchv1.SequentialContinue {
				t.Errorf("comparison %s stops early but its status has no decision: %+v", cmp.Name, sq)
				continue
			}
			rounds = sq.Rounds
			t.Logf("comparison %s: %s after %d of %d rounds", cmp.Name, sq.Decision, sq.Rounds, sq.MaxRounds)
		}
		want := len(cmp.Spec.Variants) * int(rounds)
		listed := map[string]bool{}
		var last metav1.Time
		for _, cr := range cmp.Status.Runs {
			run := byName[cr.Name]
			switch {
			case listed[cr.Name]:
				t.Errorf("comparison %s lists %s twice", cmp.Name, cr.Name)
			case run == nil:
				t.Errorf("comparison %s lists %s, which does not exist", cmp.Name, cr.Name)
			case !metav1.IsControlledBy(run, &cmp):
				t.Errorf("comparison %s lists %s, which it does not control", cmp.Name, cr.Name)
			case cr.Phase != run.Status.Phase || !run.Status.Phase.Terminal() || run.Labels[benchv1.LabelVariant] != cr.Variant:
				t.Errorf("comparison %s lists %s as %s of %s; the run is %s of %s", cmp.Name, cr.Name, cr.Phase, cr.Variant, run.Status.Phase, run.Labels[benchv1.LabelVariant])
			case run.Status.CompletionTime != nil && last.Before(run.Status.CompletionTime):
				last = *run.Status.CompletionTime
			}
			listed[cr.Name] = true
		}
		owned := 0
		for _, run := range runs {
			if run.Labels[benchv1.LabelComparison] == string(cmp.UID) {
				owned++
				if !listed[run.Name] {
					t.Errorf("comparison %s has a run it does not list: %s", cmp.Name, run.Name)
				}
			}
		}
		if len(listed) != want || owned != want {
			t.Errorf("comparison %s lists %d runs and has %d, want %d", cmp.Name, len(listed), owned, want)
		}
		report, err := r.e.stack.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, cmp.Status.ReportConfigMap, metav1.GetOptions{})
		if err != nil {
			t.Errorf("comparison %s: report %q: %v", cmp.Name, cmp.Status.ReportConfigMap, err)
			continue
		}
		if report.CreationTimestamp.Before(&last) {
			t.Errorf("comparison %s: report written at %s, before its last run ended at %s", cmp.Name, report.CreationTimestamp, last)
		}
	}
}

// checkSchedule: one run per trigger — the one at creation, then one per
// minute up to the last trigger, each created after its minute — and the
// history names every ended run once, as it ended.
func checkSchedule(ctx context.Context, t *testing.T, r *chaosRig, runs []benchv1.BenchmarkRun) int {
	t.Helper()
	s, err := getSchedule(ctx, r.dyn, chaosSchedule)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status.LastScheduleTime == nil {
		t.Fatalf("the schedule never fired: %s", mustJSON(s.Status))
	}
	owned := map[string]*benchv1.BenchmarkRun{}
	fires := map[int64]string{}
	onCreate := 0
	for i := range runs {
		run := &runs[i]
		if run.Labels[benchv1.LabelSchedule] != string(s.UID) {
			continue
		}
		owned[run.Name] = run
		suffix := strings.TrimPrefix(run.Name, chaosSchedule+"-")
		minute, err := strconv.ParseInt(strings.TrimPrefix(suffix, "c"), 10, 64)
		switch {
		case strings.HasPrefix(suffix, "t"):
			onCreate++
		case err != nil:
			t.Errorf("schedule run %s: no trigger in its name", run.Name)
		case fires[minute] != "":
			t.Errorf("schedule runs %s and %s for the same minute", fires[minute], run.Name)
		default:
			fires[minute] = run.Name
			if at := time.Unix(minute*60, 0); run.CreationTimestamp.Time.Before(at) {
				t.Errorf("schedule run %s created at %s, before its trigger %s", run.Name, run.CreationTimestamp, at)
			}
		}
	}
	if onCreate != 1 {
		t.Errorf("%d runs for the schedule's creation, want 1", onCreate)
	}
	first, last := s.CreationTimestamp.Unix()/60+1, s.Status.LastScheduleTime.Unix()/60
	for m := first; m <= last; m++ {
		if fires[m] == "" {
			t.Errorf("no schedule run for the trigger at %s", time.Unix(m*60, 0).UTC())
		}
	}
	if int64(len(fires)) != last-first+1 {
		t.Errorf("%d cron runs for %d triggers (%v)", len(fires), last-first+1, fires)
	}
	inHistory := map[string]bool{}
	for _, h := range s.Status.History {
		run := owned[h.Run]
		switch {
		case inHistory[h.Run]:
			t.Errorf("the schedule's history names %s twice", h.Run)
		case run == nil:
			t.Errorf("the schedule's history names %s, which is not its run", h.Run)
		case h.Phase != run.Status.Phase:
			t.Errorf("the schedule's history says %s %s; the run is %s", h.Run, h.Phase, run.Status.Phase)
		}
		inHistory[h.Run] = true
	}
	for name := range owned {
		if !inHistory[name] {
			t.Errorf("the schedule's history lacks %s", name)
		}
	}
	return len(owned)
}
