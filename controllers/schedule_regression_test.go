package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// scheduleDriver releases a schedule's template again and again, answers
// each run's measurement with a value and waits until the schedule has
// judged it: what a nightly schedule sees, in seconds.
type scheduleDriver struct {
	h       *harness
	s       *benchv1.BenchmarkSchedule
	node    string
	release int
}

func (d *scheduleDriver) get() *benchv1.BenchmarkSchedule {
	d.h.T.Helper()
	cur := &benchv1.BenchmarkSchedule{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(d.s), cur); err != nil {
		d.h.T.Fatal(err)
	}
	return cur
}

// observed waits for the schedule's first look: the template it sees first
// is the starting point, not a change.
func (d *scheduleDriver) observed() {
	testutil.Eventually(d.h.T, 10*time.Second, "schedule observed", func() error {
		if d.get().Status.TemplateHash == "" {
			return fmt.Errorf("not observed yet")
		}
		return nil
	})
}

// next starts the next release's run, measures value and returns the
// schedule once its history holds the run's judgement.
func (d *scheduleDriver) next(value float64) *benchv1.BenchmarkSchedule {
	t := d.h.T
	t.Helper()
	d.release++
	cur := &benchv1.BenchmarkSchedule{}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(d.s), cur); err != nil {
			return err
		}
		cur.Spec.RunTemplate.Labels[benchv1.LabelRelease] = fmt.Sprintf("v%d", d.release)
		return k8s.Update(context.Background(), cur)
	}); err != nil {
		t.Fatal(err)
	}
	name := d.s.Name + "-t" + schedule.TemplateHash(cur)
	var run *benchv1.BenchmarkRun
	testutil.Eventually(t, 20*time.Second, "run "+name, func() error {
		run = &benchv1.BenchmarkRun{}
		return k8s.Get(context.Background(), client.ObjectKey{Namespace: d.h.NS, Name: name}, run)
	})
	d.h.Terminate(d.h.WaitJob(specs.MeasureJobName(run, 0, 1)), d.node, 0, kit.TPSResult(value))
	d.h.WaitPhase(name, 20*time.Second, benchv1.PhaseSucceeded)
	testutil.Eventually(t, 20*time.Second, "history judged "+name, func() error {
		cur = d.get()
		for _, e := range cur.Status.History {
			if e.Run == name && e.Phase.Terminal() && e.Judgement != "" {
				return nil
			}
		}
		return fmt.Errorf("no judged entry for %s in %d entries", name, len(cur.Status.History))
	})
	return cur
}

// pendingEvents counts the schedule's events by reason (an event said
// again is counted again: the recorder folds repeats into Count).
func pendingEvents(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	var list corev1.EventList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "BenchmarkSchedule" && e.InvolvedObject.Name == name {
			out[e.Reason] += int(max(e.Count, 1))
		}
	}
	return out
}

// waitEvents waits until the schedule's events by reason are want (the
// recorder writes them asynchronously), then checks they stay so for the
// next judgement, which the caller brings.
func waitEvents(t *testing.T, ns, name string, want map[string]int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("events %v", want), func() error {
		got := pendingEvents(t, ns, name)
		for _, reason := range []string{benchv1.ReasonRegression, benchv1.ReasonRecovered, benchv1.ReasonAcknowledged, benchv1.ReasonImprovement} {
			if got[reason] != want[reason] {
				return fmt.Errorf("events %v", got)
			}
		}
		return nil
	})
}

func regressed(s *benchv1.BenchmarkSchedule) *metav1.Condition {
	return meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed)
}

// The scenario of issue 23 on the API server: four good runs, then a
// regression that stays (ten runs at the new level), a manager restart in
// the middle; one event for it, the history marking where it started, the
// metric raised and counted once. A return to the old level clears it with
// its own event; the next regression is a second one; a person's
// acknowledgement clears that one, and the runs after it at the new level
// are no regression.
func TestScheduleNeverForgetsARegression(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	s := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "sustained"},
		Spec: benchv1.BenchmarkScheduleSpec{
			RunTemplate: &benchv1.RunTemplate{Labels: map[string]string{benchv1.LabelRelease: "v0"}, Spec: kit.MeasureOnly("x", 4, 1).Spec},
			Regression:  &benchv1.RegressionPolicy{Method: benchv1.RegressionThreshold, ThresholdPercent: 10, BaselineRuns: 3},
		},
	}
	h.Create(s)
	d := &scheduleDriver{h: h, s: s, node: h.LoadgenNode()}
	d.observed()
	labels := map[string]string{"namespace": h.NS, "schedule": s.Name}
	gauge := func() float64 {
		v := kit.Series(t, "dbperf_schedule_regressed", labels)
		if len(v) != 1 {
			t.Fatalf("dbperf_schedule_regressed: %v", v)
		}
		return v[0].GetGauge().GetValue()
	}
	counter := func() float64 {
		v := kit.Series(t, "dbperf_schedule_regressions_total", labels)
		if len(v) != 1 {
			t.Fatalf("dbperf_schedule_regressions_total: %v", v)
		}
		return v[0].GetCounter().GetValue()
	}

	var cur *benchv1.BenchmarkSchedule
	for i := range 4 {
		cur = d.next(80e3)
		want := benchv1.ReasonNotEnoughHistory
		if i == 3 {
			want = benchv1.ReasonNoRegression
		}
		if c := regressed(cur); c.Status != metav1.ConditionFalse || c.Reason != want {
			t.Fatalf("run %d at 80k: %+v", i+1, c)
		}
	}
	first := ""
	for i := range 10 {
		if i == 4 {
			h.RestartManager(cfg) // between two runs: nothing may be forgotten or said twice
		}
		cur = d.next(47e3)
		c := regressed(cur)
		if c.Status != metav1.ConditionTrue || c.Reason != benchv1.ReasonRegression {
			t.Fatalf("run %d at 47k: %+v", i+5, c)
		}
		if i == 0 {
			first = cur.Status.History[len(cur.Status.History)-1].Run
		}
		if !strings.Contains(c.Message, "from run "+first) || !strings.Contains(c.Message, fmt.Sprintf("%d run", i+1)) {
			t.Errorf("run %d: the condition does not name the first regressed run and the runs since: %s", i+5, c.Message)
		}
		if gauge() != 1 || counter() != 1 {
			t.Errorf("run %d: regressed %v, regressions_total %v", i+5, gauge(), counter())
		}
	}
	waitEvents(t, h.NS, s.Name, map[string]int{benchv1.ReasonRegression: 1})
	marked := func(s *benchv1.BenchmarkSchedule) []string {
		var out []string
		for _, e := range s.Status.History {
			if e.ChangePoint {
				out = append(out, e.Run)
			}
		}
		return out
	}
	if got := marked(cur); !slices.Equal(got, []string{first}) || cur.Status.History[4].Run != first ||
		!slices.Contains(cur.Status.History[4].Transitions, "RegressionOpened") {
		t.Errorf("change points %v, want the fifth run %s", got, first)
	}
	if o := cur.Status.Regression.Open; o == nil || o.FirstRun != first || o.Runs != 10 || o.Reference != 80e3 {
		t.Errorf("status.regression.open %+v", o)
	}

	// Back to 80k, no acknowledgement: recovered, with its own event.
	cur = d.next(80e3)
	if c := regressed(cur); c.Status != metav1.ConditionFalse || c.Reason != benchv1.ReasonRecovered || gauge() != 0 {
		t.Fatalf("back at 80k: %+v", c)
	}
	waitEvents(t, h.NS, s.Name, map[string]int{benchv1.ReasonRegression: 1, benchv1.ReasonRecovered: 1})

	// A second regression, then a person accepts its level.
	for range 3 {
		cur = d.next(47e3)
	}
	if c := regressed(cur); c.Status != metav1.ConditionTrue || counter() != 2 {
		t.Fatalf("second regression: %+v, counted %v", c, counter())
	}
	second := cur.Status.Regression.Open.FirstRun
	ack := benchv1.Acknowledgement{Run: cur.Status.Regression.Open.LatestRun, Reason: "appendfsync always is the new default", By: "alice",
		At: metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))}
	raw, _ := json.Marshal([]benchv1.Acknowledgement{ack})
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := d.get()
		cur.Annotations = map[string]string{benchv1.AnnotationAcknowledgements: string(raw)}
		return k8s.Update(ctx, cur)
	}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "acknowledged", func() error {
		cur = d.get()
		if c := regressed(cur); c.Reason != benchv1.ReasonAcknowledged || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Regressed %+v", c)
		}
		return nil
	})
	if c := meta.FindStatusCondition(cur.Status.Conditions, benchv1.ConditionAcknowledged); c == nil || c.Status != metav1.ConditionTrue ||
		!strings.Contains(c.Message, "alice") || !strings.Contains(c.Message, "appendfsync always is the new default") {
		t.Errorf("Acknowledged %+v", c)
	}
	if e := cur.Status.History[len(cur.Status.History)-1]; !strings.Contains(e.Acknowledged, "alice") {
		t.Errorf("the history does not show the acknowledgement: %+v", e)
	}
	for range 2 {
		cur = d.next(47e3)
		if c := regressed(cur); c.Status != metav1.ConditionFalse || c.Reason != benchv1.ReasonNoRegression {
			t.Fatalf("47k after the acknowledgement: %+v", c)
		}
	}
	waitEvents(t, h.NS, s.Name, map[string]int{benchv1.ReasonRegression: 2, benchv1.ReasonRecovered: 1, benchv1.ReasonAcknowledged: 1})
	if got := marked(cur); !slices.Equal(got, []string{first, second}) {
		t.Errorf("change points %v, want %s and %s", got, first, second)
	}
	if counter() != 2 || gauge() != 0 {
		t.Errorf("regressions_total %v, regressed %v", counter(), gauge())
	}
}

// The judgement the way it breaks (no manager: the test reconciles by hand):
// the first write of a transition is refused by a conflict, and no event is
// said; the next reconcile, by another reconciler (a restarted manager),
// stores it and says it once; reconciled again, nothing is written or said;
// a confirming run says nothing; the recovery is said once, after its own
// refused write.
func TestScheduleJudgementIsIdempotent(t *testing.T) {
	h := newHarness(t)
	h.StopManager()
	ctx := context.Background()
	s := &benchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "idem"},
		Spec: benchv1.BenchmarkScheduleSpec{
			RunTemplate: &benchv1.RunTemplate{Spec: kit.MeasureOnly("x", 4, 1).Spec},
			Regression:  &benchv1.RegressionPolicy{Method: benchv1.RegressionThreshold, ThresholdPercent: 10, BaselineRuns: 3},
		},
	}
	h.Create(s)
	key := client.ObjectKeyFromObject(s)
	get := func() *benchv1.BenchmarkSchedule {
		t.Helper()
		cur := &benchv1.BenchmarkSchedule{}
		if err := k8s.Get(ctx, key, cur); err != nil {
			t.Fatal(err)
		}
		return cur
	}
	history := kit.History("idem", 80e3, 80e3, 80e3, 80e3, 47e3, 47e3, 80e3)
	feed := func(n int) {
		t.Helper()
		cur := get()
		cur.Status.History = append(cur.Status.History, history[len(cur.Status.History):n]...)
		if err := k8s.Status().Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	var refused atomic.Bool
	conflicting := kit.Intercept(k8s, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
			if refused.CompareAndSwap(false, true) {
				return kit.Conflict("benchmarkschedules", obj.GetName())
			}
			return c.SubResource(sub).Patch(ctx, obj, p, o...)
		},
	})
	reconcile := func(c client.Client) error {
		t.Helper()
		r := &schedule.Reconciler{Client: c, Recorder: record.NewFakeRecorder(100), Clock: clock.RealClock{}}
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	said := func() []string { // the schedule's events created since the last look
		t.Helper()
		var list corev1.EventList
		must(k8s.List(ctx, &list, client.InNamespace(h.NS)))
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Name == "idem" && !seen[e.Name] {
				seen[e.Name] = true
				for range max(e.Count, 1) {
					out = append(out, e.Type+" "+e.Reason+" "+e.Message)
				}
			}
		}
		return out
	}

	feed(5) // the fifth run is 41 % down
	must(reconcile(conflicting))
	if !refused.Load() || len(said()) != 0 || regressed(get()) != nil {
		t.Fatalf("a refused write: refused %v, condition %+v", refused.Load(), regressed(get()))
	}
	must(reconcile(k8s)) // a restarted manager
	if ev := said(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning Regression ") || regressed(get()).Status != metav1.ConditionTrue {
		t.Fatalf("events %v, condition %+v", ev, regressed(get()))
	}
	rv := get().ResourceVersion
	for range 4 {
		must(reconcile(k8s))
	}
	if ev := said(); len(ev) != 0 || get().ResourceVersion != rv {
		t.Errorf("judged again: events %v, resourceVersion %s → %s", ev, rv, get().ResourceVersion)
	}
	if reg := get().Status.Regression; reg.RegressionsDetected != 1 || len(reg.Unannounced) != 0 {
		t.Errorf("regressions detected %d, unannounced %v", reg.RegressionsDetected, reg.Unannounced)
	}

	feed(6) // still 41 % down: confirms, says nothing
	must(reconcile(k8s))
	if ev := said(); len(ev) != 0 || !strings.Contains(regressed(get()).Message, "2 runs so far") {
		t.Errorf("a confirming run: events %v, %s", ev, regressed(get()).Message)
	}

	feed(7) // back at 80k
	refused.Store(false)
	must(reconcile(conflicting))
	if ev := said(); len(ev) != 0 || regressed(get()).Status != metav1.ConditionTrue {
		t.Fatalf("a refused recovery: events %v", ev)
	}
	// The manager stops between the status write that records the recovery
	// and its event (the event's creation refused, as a killed manager
	// would never make it): the transition waits in status, and the next
	// reconcile says it, once.
	var eventRefused atomic.Bool
	stopsBeforeTheEvent := kit.Intercept(k8s, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Event); ok && eventRefused.CompareAndSwap(false, true) {
				return fmt.Errorf("the manager stopped")
			}
			return c.Create(ctx, obj, o...)
		},
	})
	if err := reconcile(stopsBeforeTheEvent); err == nil || !eventRefused.Load() {
		t.Fatalf("the event's creation was not refused: %v", err)
	}
	if ev, reg := said(), get().Status.Regression; len(ev) != 0 || len(reg.Unannounced) != 1 || reg.Unannounced[0].Reason != benchv1.ReasonRecovered {
		t.Fatalf("stopped before the event: events %v, unannounced %+v", ev, reg.Unannounced)
	}
	// The event made, then the write emptying the list refused: the next
	// reconcile finds the event already there and makes none.
	refused.Store(false)
	must(reconcile(conflicting))
	must(reconcile(k8s))
	must(reconcile(k8s))
	if ev := said(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal Recovered ") || regressed(get()).Reason != benchv1.ReasonRecovered {
		t.Errorf("recovery: events %v, condition %+v", ev, regressed(get()))
	}
	if reg := get().Status.Regression; reg.RegressionsDetected != 1 || reg.Open != nil || len(reg.Unannounced) != 0 || reg.Transitions != 2 {
		t.Errorf("after the recovery: %+v", reg)
	}
}
