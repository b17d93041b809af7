package controllers

import (
	"context"

	"errors"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// staleRun plays a runs' cache behind the Jobs' cache: once the run has
// ended and its Job is gone from the cache, the manager's next reads of
// the run give the copy taken while it was measuring, as a runs' informer
// that has not yet delivered the last writes would.
type staleRun struct {
	mu     sync.Mutex
	name   string
	job    string
	copy   *benchv1.BenchmarkRun
	served int
}

func (s *staleRun) wrap(c client.Client) client.Client {
	return kit.Intercept(c, interceptor.Funcs{Get: s.get})
}

func (s *staleRun) get(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	run, ok := obj.(*benchv1.BenchmarkRun)
	if !ok || key.Name != s.name || !run.Status.Phase.Terminal() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.copy == nil || s.served >= 5 {
		return nil
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: s.job}, &batchv1.Job{})
	if !apierrors.IsNotFound(err) {
		return nil // the Jobs' cache has not seen the cleanup yet
	}
	s.copy.DeepCopyInto(run)
	s.served++
	return nil
}

// A reconcile that reads the run from a cache older than the status this
// manager wrote creates nothing from it: a measurement recorded and a run
// ended and cleaned up look, in the older copy, like a measurement still to
// make, and its Job was made again after the cleanup and left running (the
// e2e's 300 short runs with manager kills: 2 Jobs of 600).
func TestStaleRunReadCreatesNoJob(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	sr := &staleRun{name: "stale"}
	h.wrap = sr.wrap
	h.RestartManager(cfg)
	run := kit.MeasureOnly("stale", 16, 1)
	run.Spec.Cleanup = benchv1.CleanupAlways
	h.Create(run)
	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	measuring := h.Run("stale")
	sr.mu.Lock()
	sr.job, sr.copy = job.Name, measuring
	sr.mu.Unlock()
	h.Replay(job, node, "pgbench", kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt"))
	h.WaitPhase("stale", 20*time.Second, benchv1.PhaseSucceeded)
	h.WaitCleanup("stale")
	testutil.Eventually(t, 10*time.Second, "the stale copy served", func() error {
		h.Touch(measuring, time.Now().String()) // one more reconcile
		sr.mu.Lock()
		defer sr.mu.Unlock()
		if sr.served == 0 {
			return errors.New("the stale copy not served yet")
		}
		return nil
	})
	// One more reconcile, and none in flight: whatever a reconcile of a
	// stale read made is made by now.
	since := kit.ReconcileCount(t, "benchmarkrun")
	h.Touch(measuring, "after the stale reads")
	kit.WaitReconciled(t, "benchmarkrun", since)
	var j batchv1.Job
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: job.Name}, &j); err == nil {
		sr.mu.Lock()
		defer sr.mu.Unlock()
		t.Fatalf("job %s made again after the run ended and was cleaned up (from a run read %d times stale)", job.Name, sr.served)
	}
	if got := h.Run("stale"); got.Status.Phase != benchv1.PhaseSucceeded || len(got.Status.Steps[0].Repetitions) != 1 {
		t.Errorf("phase %s, %d measurements", got.Status.Phase, len(got.Status.Steps[0].Repetitions))
	}
}
