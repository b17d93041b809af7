package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// TestDeletedSchedulesKeepTheirRunsWithTheRealGarbageCollector: on the
// simulated cluster (kube-controller-manager's garbage collector running,
// the chart installed), a schedule deleted with deletionPolicy Retain
// leaves its run, released; one deleted with Delete takes its run with it
// (the collector deletes it). Both deleted as kubectl deletes, with
// background propagation. A third, Retain, deleted with foreground
// propagation: the collector deletes dependents at the same time as the
// operator releases them, and the test says which won (docs/install.md
// warns of it) without failing on it.
func TestDeletedSchedulesKeepTheirRunsWithTheRealGarbageCollector(t *testing.T) {
	testutil.NeedEnv(t, "KUBEBUILDER_ASSETS") // skips before the builds without a control plane
	testutil.NeedEnv(t, "HELM")
	t.Parallel() // beside TestCNPGInstalledAfterOperator, after the package's other tests
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	work, logf := workDir(t, "dbperf-e2e-retention-")
	bins := t.TempDir()
	manager := build(t, bins, "./cmd/manager", "manager")
	runner := build(t, bins, "./cmd/runner", "dbperf-runner")
	_, k := oneNodeStack(ctx, t, "e2e-retain", work, logf, manager, runner, ns)
	template := benchv1.BenchmarkRunSpec{
		Repetitions: 1, AllowSharedNodes: true,
		Target: benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "127.0.0.1", Port: 1}},
		Workload: benchv1.WorkloadSpec{
			RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Requests: 1000, Clients: []int32{1}},
			Placement:      benchv1.Placement{NodeSelector: map[string]string{"pool": "loadgen"}},
		},
	}
	schedules := map[string]benchv1.DeletionPolicy{"keep": benchv1.DeletionRetain, "gone": benchv1.DeletionDelete, "fg": benchv1.DeletionRetain}
	created := map[string]*benchv1.BenchmarkSchedule{}
	for name, policy := range schedules {
		s := &benchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: benchv1.BenchmarkScheduleSpec{
			RunOnCreate: true, DeletionPolicy: policy, RunTemplate: &benchv1.RunTemplate{Spec: template}}}
		if err := k.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		created[name] = s
	}
	runOf := map[string]string{}
	testutil.Eventually(t, time.Minute, "each schedule's run", func() error {
		for name, s := range created {
			var runs benchv1.BenchmarkRunList
			if err := k.List(ctx, &runs, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelSchedule: string(s.UID)}); err != nil {
				return err
			}
			if len(runs.Items) != 1 {
				return fmt.Errorf("schedule %s: %d runs", name, len(runs.Items))
			}
			runOf[name] = runs.Items[0].Name
		}
		return nil
	})
	testutil.Eventually(t, 30*time.Second, "the finalizers of the Retain schedules", func() error {
		for _, name := range []string{"keep", "fg"} {
			s := &benchv1.BenchmarkSchedule{}
			if err := k.Get(ctx, client.ObjectKeyFromObject(created[name]), s); err != nil {
				return err
			}
			if len(s.Finalizers) == 0 {
				return fmt.Errorf("%s: no finalizer yet", name)
			}
		}
		return nil
	})
	// A ConfigMap the operator did not make, owned by the Retain schedule:
	// nothing releases it, so the garbage collector deletes it once the
	// schedule is gone — the sign that the collector has dealt with that
	// schedule's dependents, the released run among them.
	sentinel := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keep-sentinel",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: benchv1.GroupVersion.String(), Kind: "BenchmarkSchedule", Name: "keep", UID: created["keep"].UID}}}}
	if err := k.Create(ctx, sentinel); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"keep", "gone"} {
		if err := k.Delete(ctx, created[name], client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Delete(ctx, created["fg"], client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	runGone := func(name string) (bool, *benchv1.BenchmarkRun) {
		run := &benchv1.BenchmarkRun{}
		err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: runOf[name]}, run)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return false, run
	}
	testutil.Eventually(t, time.Minute, "the garbage collector deleting the run of the schedule deleted with Delete", func() error {
		if gone, _ := runGone("gone"); !gone {
			return fmt.Errorf("run %s still there", runOf["gone"])
		}
		return nil
	})
	testutil.Eventually(t, time.Minute, "the garbage collector deleting the Retain schedule's own ConfigMap", func() error {
		err := k.Get(ctx, client.ObjectKeyFromObject(sentinel), &corev1.ConfigMap{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%s still there", sentinel.Name)
	})
	gone, run := runGone("keep")
	if gone {
		t.Fatalf("run %s of the schedule deleted with Retain was deleted", runOf["keep"])
	}
	for _, ref := range run.OwnerReferences {
		if ref.UID == created["keep"].UID {
			t.Errorf("run %s still names its deleted schedule", run.Name)
		}
	}
	if got := run.Annotations[benchv1.AnnotationReleasedFrom]; got != "BenchmarkSchedule/keep" {
		t.Errorf("run %s: released-from %q", run.Name, got)
	}
	if gone, run := runGone("fg"); gone {
		t.Logf("foreground propagation: the garbage collector deleted run %s before the operator released it (docs/install.md says so)", runOf["fg"])
	} else {
		t.Logf("foreground propagation: run %s was released (annotation %q) before the garbage collector took it", run.Name, run.Annotations[benchv1.AnnotationReleasedFrom])
	}
}
