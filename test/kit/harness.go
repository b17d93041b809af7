package kit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Wiring sets up a manager's reconcilers, as cmd/manager does, for the
// harness h (whose Logs the run reconciler reads).
type Wiring func(mgr ctrl.Manager, h *H) error

// ManagerOptions are the manager's options for the wiring to fill (the
// cache and client options cmd/manager gives).
type ManagerOptions func(*ctrl.Options)

// H is one test's namespace and manager.
type H struct {
	T *testing.T
	// NS is the test's namespace.
	NS string
	// Logs is the replay kubelet's log store: what the runner printed, by pod.
	Logs *Logs
	// Client reads and writes past any manager: the API server's.
	Client client.Client

	wire    Wiring
	options ManagerOptions
	stop    context.CancelFunc
	done    chan struct{}
}

// New makes the test's namespace and starts a manager wired by wire.
// envtest has no namespace controller: the test's runs, comparisons and
// schedules are deleted at its end, so that none of them holds nodes for
// the next test.
func New(t *testing.T, env *Env, options ManagerOptions, wire Wiring) *H {
	t.Helper()
	h := &H{T: t, Logs: &Logs{}, Client: env.Client, wire: wire, options: options}
	h.NS = Namespace(t, env.Client, "t-")
	h.StartManager(env.Config)
	t.Cleanup(h.StopManager)
	return h
}

// Detached is a harness for a namespace of another API server (c and its
// client), whose manager the test starts and stops itself.
func Detached(t *testing.T, c client.Client, ns string, options ManagerOptions, wire Wiring) *H {
	return &H{T: t, Logs: &Logs{}, Client: c, NS: ns, wire: wire, options: options}
}

// Namespace makes a namespace of its own for a test, whose runs,
// comparisons and schedules are deleted at the test's end.
func Namespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = c.DeleteAllOf(ctx, &benchv1.BenchmarkComparison{}, client.InNamespace(ns.Name))
		_ = c.DeleteAllOf(ctx, &benchv1.BenchmarkSchedule{}, client.InNamespace(ns.Name))
		_ = c.DeleteAllOf(ctx, &benchv1.BenchmarkRun{}, client.InNamespace(ns.Name))
	})
	return ns.Name
}

// StartManager starts a manager wired as the binary wires it.
func (h *H) StartManager(c *rest.Config) {
	h.T.Helper()
	// The manager binary's configuration (ctrl.GetConfig) has no
	// client-side rate limit, relying on the API server's priority and
	// fairness; envtest's has client-go's default of 5 requests a second,
	// which made a test of hundreds of runs measure the limiter.
	if c.QPS == 0 && c.RateLimiter == nil {
		c = rest.CopyConfig(c)
		c.QPS = -1
	}
	o := ctrl.Options{
		Scheme:     Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if h.options != nil {
		h.options(&o)
	}
	mgr, err := ctrl.NewManager(c, o)
	if err != nil {
		h.T.Fatal(err)
	}
	if err := h.wire(mgr, h); err != nil {
		h.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop, h.done = cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		if err := mgr.Start(ctx); err != nil {
			h.T.Errorf("manager: %v", err)
		}
	}()
}

// StopManager stops the manager and waits until it has.
func (h *H) StopManager() {
	if h.stop != nil {
		h.stop()
		<-h.done
		h.stop = nil
	}
}

// RestartManager stops the manager and starts another, which must find
// what is in flight from the API server alone.
func (h *H) RestartManager(c *rest.Config) {
	h.StopManager()
	h.StartManager(c)
}

// RestartOnce restarts the manager the first time when holds: a restart
// between two looks of a test, at a moment it chooses.
func (h *H) RestartOnce(restarted *bool, when bool, c *rest.Config) {
	if !*restarted && when {
		*restarted = true
		h.RestartManager(c)
	}
}

// AllEnded says how many runs have not ended yet, for Eventually.
func AllEnded(ended, runs int) error {
	if ended < runs {
		return fmt.Errorf("%d of %d runs ended", ended, runs)
	}
	return nil
}

// Create creates obj in the test's namespace.
func (h *H) Create(obj client.Object) {
	h.T.Helper()
	obj.SetNamespace(h.NS)
	if err := h.Client.Create(context.Background(), obj); err != nil {
		h.T.Fatal(err)
	}
}

// Run reads the run of that name.
func (h *H) Run(name string) *benchv1.BenchmarkRun {
	h.T.Helper()
	run := &benchv1.BenchmarkRun{}
	if err := h.Client.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: name}, run); err != nil {
		h.T.Fatal(err)
	}
	return run
}

// Condition is the run's condition of type t, or nil.
func (h *H) Condition(name, t string) *metav1.Condition {
	return meta.FindStatusCondition(h.Run(name).Status.Conditions, t)
}

// WaitPhase waits until the run is in one of phases.
func (h *H) WaitPhase(name string, within time.Duration, phases ...benchv1.Phase) *benchv1.BenchmarkRun {
	h.T.Helper()
	var run *benchv1.BenchmarkRun
	testutil.Eventually(h.T, within, "run "+name+" reaching "+fmt.Sprint(phases), func() error {
		run = h.Run(name)
		for _, p := range phases {
			if run.Status.Phase == p {
				return nil
			}
		}
		return fmt.Errorf("phase %q, conditions %+v", run.Status.Phase, run.Status.Conditions)
	})
	return run
}

// WaitCleanup waits until the run's cleanup policy has been carried out,
// whatever it keeps.
func (h *H) WaitCleanup(name string) {
	h.T.Helper()
	testutil.Eventually(h.T, 20*time.Second, "cleanup policy of "+name+" carried out", func() error {
		if run := h.Run(name); !run.Status.CleanupCompleted {
			return fmt.Errorf("phase %s, cleanup not completed", run.Status.Phase)
		}
		return nil
	})
}

// WaitJob waits until the Job of that name exists.
func (h *H) WaitJob(name string) *batchv1.Job {
	h.T.Helper()
	job := &batchv1.Job{}
	testutil.Eventually(h.T, 20*time.Second, "job "+name, func() error {
		return h.Client.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: name}, job)
	})
	return job
}

// Jobs are the namespace's Jobs.
func (h *H) Jobs() []batchv1.Job {
	h.T.Helper()
	var jobs batchv1.JobList
	if err := h.Client.List(context.Background(), &jobs, client.InNamespace(h.NS)); err != nil {
		h.T.Fatal(err)
	}
	return jobs.Items
}

// EventsOf are the events of the run of that name.
func (h *H) EventsOf(name string) []corev1.Event {
	h.T.Helper()
	var evs corev1.EventList
	if err := h.Client.List(context.Background(), &evs, client.InNamespace(h.NS)); err != nil {
		h.T.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range evs.Items {
		if e.InvolvedObject.Kind == "BenchmarkRun" && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// Node makes a node with labels (once: nodes are not namespaced, and
// tests share them).
func (h *H) Node(name string, labels map[string]string) {
	h.T.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := h.Client.Create(context.Background(), n); err != nil && !strings.Contains(err.Error(), "already exists") {
		h.T.Fatal(err)
	}
}

// LoadgenNode makes the load generators' node, loadgen-1, of pool
// loadgen, and returns its name.
func (h *H) LoadgenNode() string {
	h.Node("loadgen-1", map[string]string{
		"pool": "loadgen", corev1.LabelInstanceTypeStable: "n4-standard-8", corev1.LabelTopologyZone: "zone-a",
		corev1.LabelArchStable: "amd64", "dbperf.io/cpu-model": "Intel_Xeon_Emerald_Rapids",
	})
	return "loadgen-1"
}

// Touch changes an annotation of obj, which brings a reconcile.
func (h *H) Touch(obj client.Object, v string) {
	h.T.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.dbperf.io/touched":%q}}}`, v)
	if err := h.Client.Patch(context.Background(), obj.DeepCopyObject().(client.Object), client.RawPatch("application/merge-patch+json", []byte(patch))); err != nil {
		h.T.Fatal(err)
	}
}

// ResultsDocument reads the run's results document, checking that its
// ConfigMap is the run's and keeps no per-measurement key.
func (h *H) ResultsDocument(t testing.TB, run *benchv1.BenchmarkRun) specs.Document {
	t.Helper()
	var cm corev1.ConfigMap
	if err := h.Client.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: run.Status.ResultsConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&cm, run) {
		t.Error("the results ConfigMap must be owned by its run")
	}
	for k := range cm.BinaryData {
		if specs.IsMeasurementKey(k) {
			t.Errorf("per-measurement key %s left behind", k)
		}
	}
	doc, err := specs.ReadDocument(&cm)
	if err != nil || doc == nil {
		t.Fatalf("results document: %v (keys %v)", err, Keys(cm.Data))
	}
	return *doc
}

// Keys are a map's keys, in no order.
func Keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
