package controllers

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// A child's name taken by an object its owner does not control must not
// count as the owner's child: the reconcile fails with a Warning event
// naming it. The owner's own child of that name (a create the cache had
// not seen yet) is fine. The reconcilers are called directly, with no
// manager, so that nothing else creates or reconciles the objects.

// squatter creates a run named name; owner, when given, controls it.
func squatter(t *testing.T, ns, name string, owner client.Object) *benchv1.BenchmarkRun {
	t.Helper()
	run := kit.MeasureOnly(name, 4, 1)
	run.Namespace = ns
	if owner != nil {
		if err := controllerutil.SetControllerReference(owner, run, scheme); err != nil {
			t.Fatal(err)
		}
	}
	if err := k8s.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return run
}

// warnings drains the recorder's Warning events.
func warnings(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			if strings.HasPrefix(e, corev1.EventTypeWarning) {
				out = append(out, e)
			}
		default:
			return out
		}
	}
}

func TestComparisonRefusesAForeignRunOfItsName(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		ownedByComparison bool
		wantConflict      bool
	}{
		"someone else's run": {ownedByComparison: false, wantConflict: true},
		"its own unseen run": {ownedByComparison: true, wantConflict: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := kit.Namespace(t, k8s, "child-")
			c := kit.Comparison("cmp", benchv1.OrderInterleaved, 2)
			c.Namespace = ns
			if err := k8s.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			first := comparison.RunName(c, c.Spec.Variants[0].Name, 1)
			var owner client.Object
			if tc.ownedByComparison {
				owner = c
			}
			squatter(t, ns, first, owner)
			rec := record.NewFakeRecorder(20)
			r := &comparison.Reconciler{Client: k8s, Recorder: rec}
			_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c)})
			events := warnings(rec)
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(c.Status.Conditions, benchv1.ConditionCompared)
			if !tc.wantConflict {
				if err != nil || len(events) != 0 || cond == nil || cond.Reason != benchv1.ReasonRunning {
					t.Errorf("reconcile: %v, warnings %v, condition %+v; want the run counted as the comparison's", err, events, cond)
				}
				return
			}
			if err == nil || !errors.Is(err, status.ErrNameTaken) || !strings.Contains(err.Error(), first) {
				t.Errorf("reconcile: %v, want an error naming %s", err, first)
			}
			if len(events) != 1 || !strings.Contains(events[0], benchv1.ReasonNameConflict) || !strings.Contains(events[0], first) {
				t.Errorf("warnings %v, want one NameConflict naming %s", events, first)
			}
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != benchv1.ReasonNameConflict {
				t.Errorf("Compared condition %+v, want False NameConflict", cond)
			}
		})
	}
}

func TestScheduleTriggerRefusesAForeignRunOfItsName(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		ownedBySchedule bool
		wantConflict    bool
	}{
		"someone else's run": {ownedBySchedule: false, wantConflict: true},
		"its own unseen run": {ownedBySchedule: true, wantConflict: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := kit.Namespace(t, k8s, "child-")
			s := &benchv1.BenchmarkSchedule{
				ObjectMeta: metav1.ObjectMeta{Name: "sched", Namespace: ns},
				Spec:       benchv1.BenchmarkScheduleSpec{RunOnCreate: true, RunTemplate: &benchv1.RunTemplate{Spec: kit.MeasureOnly("x", 4, 1).Spec}},
			}
			if err := k8s.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
			// The run the create trigger makes (the template as the API server defaulted it).
			runName := specs.Name(s.Name, "t"+schedule.TemplateHash(s), s.UID, specs.MaxObjectNameLength)
			var owner client.Object
			if tc.ownedBySchedule {
				owner = s
			}
			squatter(t, ns, runName, owner)
			rec := record.NewFakeRecorder(20)
			r := &schedule.Reconciler{Client: k8s, Recorder: rec, Clock: clock.RealClock{}}
			_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)})
			events := warnings(rec)
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
				t.Fatal(err)
			}
			if !tc.wantConflict {
				if err != nil || len(events) != 0 || s.Status.TemplateHash == "" {
					t.Errorf("reconcile: %v, warnings %v, template hash %q; want the trigger done", err, events, s.Status.TemplateHash)
				}
				return
			}
			if err == nil || !errors.Is(err, status.ErrNameTaken) || !strings.Contains(err.Error(), runName) {
				t.Errorf("reconcile: %v, want an error naming %s", err, runName)
			}
			if len(events) != 1 || !strings.Contains(events[0], benchv1.ReasonNameConflict) || !strings.Contains(events[0], runName) {
				t.Errorf("warnings %v, want one NameConflict naming %s", events, runName)
			}
			// The trigger is not done: it is retried.
			if s.Status.TemplateHash != "" || s.Status.LastRun != "" {
				t.Errorf("template hash %q, last run %q: the foreign run counted as the trigger's", s.Status.TemplateHash, s.Status.LastRun)
			}
		})
	}
}
