package controllers

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/dbperf-io/dbperf-operator/controllers/comparison"
	"github.com/dbperf-io/dbperf-operator/controllers/schedule"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/resources"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// One API server serves every test of the package (kit.Main); each test
// has its own namespace and its own manager, so a test can stop and
// restart the manager.
var (
	env    *kit.Env
	k8s    client.Client
	cfg    *rest.Config
	scheme = kit.Scheme
)

func TestMain(m *testing.M) {
	kit.Main(m, func(e *kit.Env) { env, k8s, cfg = e, e.Client, e.Config })
}

// harness is the kit's harness with the run reconciler's knobs.
type harness struct {
	*kit.H
	// wrap, when set, stands between the run reconciler and the API server
	// (to force write conflicts).
	wrap func(client.Client) client.Client
	// wrapParents, when set, stands between the comparison and schedule
	// reconcilers and the API server.
	wrapParents func(client.Client) client.Client
	// noLogs leaves the run reconciler without a log reader.
	noLogs bool
	// resources, when set, is the reconciler's resource telemetry.
	resources *resources.Meter
	// images are the reconciler's (--image-registry, --image-pull-secrets,
	// --allowed-images); runnerImage, when set, replaces the tests'.
	images      specs.Images
	runnerImage string
	// recorder is the manager's event recorder (one broadcaster for all
	// the reconcilers), for eventsWritten's marker.
	recorder record.EventRecorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{}
	h.H = kit.New(t, env, managerOptions, h.wire)
	return h
}

func managerOptions(o *ctrl.Options) {
	o.Cache, o.Client = CacheOptions(), ClientOptions()
}

// wire sets up the reconcilers as the binary wires them.
func (h *harness) wire(mgr ctrl.Manager, k *kit.H) error {
	owned, _, err := targets.ServedOwnedKinds(mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	var lr LogReader = k.Logs
	if h.noLogs {
		lr = nil
	}
	h.recorder = mgr.GetEventRecorderFor(EventSource)
	rc := mgr.GetClient()
	if h.wrap != nil {
		rc = h.wrap(rc)
	}
	r := &BenchmarkRunReconciler{
		Client: rc, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor(EventSource), Clock: clock.RealClock{},
		Logs: lr, RunnerImage: "ghcr.io/dbperf-io/dbperf-runner:test", KubernetesVersion: "v1.34.3",
		OperatorVersion: "test", Owned: owned, Images: h.images,
	}
	if h.runnerImage != "" {
		r.RunnerImage = h.runnerImage
	}
	if h.resources != nil {
		r.Resources = h.resources
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	pc := mgr.GetClient()
	if h.wrapParents != nil {
		pc = h.wrapParents(pc)
	}
	cr := &comparison.Reconciler{Client: pc, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor(EventSource)}
	if err := cr.SetupWithManager(mgr); err != nil {
		return err
	}
	sr := &schedule.Reconciler{Client: pc, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorderFor(EventSource), Clock: clock.RealClock{}}
	return sr.SetupWithManager(mgr)
}

// eventsWritten waits for the sign that every event the reconcilers said
// so far is in the API server: no reconcile in flight, then a marker said
// through the same broadcaster (which writes in order) is there. A test
// that counts events to prove none came twice counts after it.
func (h *harness) eventsWritten(t *testing.T, on client.Object) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "no reconcile in flight", func() error {
		for c, n := range kit.Gauge(t, "controller_runtime_active_workers") {
			if n > 0 {
				return fmt.Errorf("%s: %.0f in flight", c, n)
			}
		}
		return nil
	})
	marker := fmt.Sprintf("marker %d", time.Now().UnixNano())
	h.recorder.Event(on, corev1.EventTypeNormal, "TestMarker", marker)
	testutil.Eventually(t, 30*time.Second, "the marker event written", func() error {
		var list corev1.EventList
		if err := k8s.List(context.Background(), &list, client.InNamespace(on.GetNamespace())); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Message == marker {
				return nil
			}
		}
		return fmt.Errorf("not yet")
	})
}
