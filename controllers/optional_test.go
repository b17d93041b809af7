package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// CloudNativePG installed after the manager started: a postgres run waiting
// with CRDNotInstalled creates its Cluster as soon as the CRDs are served,
// with no restart, and its Cluster's status change wakes it through the
// watch added then. Runs look again only every minute here (pollInterval):
// both happen well before the run's next look, and nothing else wakes the
// run in between, so without the CRD watch and the Cluster watch the Job
// would come no sooner than a minute after CRDNotInstalled.
func TestCNPGInstalledAfterManager(t *testing.T) {
	bare, err := kit.Start(false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bare.Stop() }()
	defer func(p time.Duration) { pollInterval = p }(pollInterval) // after the manager stopped
	pollInterval = time.Minute
	h := &harness{}
	h.H = kit.Detached(t, bare.Client, "default", managerOptions, h.wire)
	h.StartManager(bare.Config)
	defer h.StopManager()
	h.LoadgenNode()
	run := kit.PgbenchRun("late", benchv1.TargetSpec{Postgres: &benchv1.PostgresTarget{Instances: 1}}, []int32{4}, 1)
	run.Spec.Workload.SkipPrepare = true
	h.Create(run)
	waitReason(h, run.Name, benchv1.ReasonCRDNotInstalled)
	waited := time.Now() // the run just looked: its next look is pollInterval away

	if err := bare.InstallCNPGCRDs(); err != nil {
		t.Fatal(err)
	}
	installed := time.Now()
	ctx := context.Background()
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(specs.CNPGClusterGVK)
	testutil.Eventually(t, pollInterval, "the run's Cluster", func() error {
		return bare.Client.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: specs.PostgresClusterName(run)}, cluster)
	})
	created := time.Now()
	waitReason(h, run.Name, benchv1.ReasonProvisioning) // waiting for the Cluster to be healthy

	_ = unstructured.SetNestedField(cluster.Object, specs.CNPGHealthyPhase, "status", "phase")
	_ = unstructured.SetNestedField(cluster.Object, int64(1), "status", "readyInstances")
	if err := bare.Client.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	healthy := time.Now()
	h.WaitJob(specs.MeasureJobName(run, 0, 1))
	measuring := time.Now()
	t.Logf("CRDs installed in %s; the Cluster created %s after; the measurement's Job %s after the Cluster was healthy; %s in all since CRDNotInstalled (the run's next look: %s)",
		installed.Sub(waited).Round(time.Millisecond), created.Sub(installed).Round(time.Millisecond),
		measuring.Sub(healthy).Round(time.Millisecond), measuring.Sub(waited).Round(time.Millisecond), pollInterval)
	if measuring.Sub(waited) > pollInterval/2 {
		t.Fatalf("the Job came %s after CRDNotInstalled: not within half the interval of the run's looks (%s): no event woke it", measuring.Sub(waited), pollInterval)
	}
}

// waitReason waits until the run's TargetReady condition has that reason.
func waitReason(h *harness, name, reason string) {
	h.T.Helper()
	testutil.Eventually(h.T, 15*time.Second, name+" TargetReady "+reason, func() error {
		if c := h.Condition(name, benchv1.ConditionTargetReady); c == nil || c.Reason != reason {
			return fmt.Errorf("TargetReady %+v", c)
		}
		return nil
	})
}
