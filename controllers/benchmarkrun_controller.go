package controllers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/metrics"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// pollInterval is how often a run waiting on something it cannot watch
// (a Secret that does not exist yet, a CRD not installed yet: optionalKinds
// wakes it sooner) looks again. A variable only for a test to lengthen, so
// that a run woken by an event is told from one that looked again.
var pollInterval = 10 * time.Second

// BenchmarkRunReconciler drives BenchmarkRuns through their phases.
type BenchmarkRunReconciler struct {
	client.Client
	// APIReader reads from the API server, past the cache: when a write
	// was refused because the cache was behind. Nil: the cached client.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// Logs reads the tail of a workload pod's log, for the full result
	// block; nil or failing readers fall back to the termination message.
	Logs LogReader
	// RunnerImage holds the static dbperf-runner binary.
	RunnerImage string
	// Images remaps the default images, checks them against the
	// allow-list and names the pods' pull secrets (specs.Images).
	Images specs.Images
	// KubernetesVersion and OperatorVersion are recorded in each run's environment.
	KubernetesVersion string
	OperatorVersion   string
	// Resources measures the pods' and nodes' resources over each
	// measurement; nil measures none (the database's own statistics, which
	// the runner polls, still are).
	Resources ResourceMeter
	// Owned are the foreign kinds the targets own (targets.ForeignOwner)
	// that were served at start-up: the controller watches them from the
	// start, and the others once their CRD is installed (optionalKinds).
	Owned []schema.GroupVersionKind

	// written holds, per run (runKey), the resourceVersion of the status
	// this manager wrote last, until the cache shows the run ended
	// (cacheBehind).
	written sync.Map
}

// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkruns,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bench.dbperf.io,resources=benchmarkruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;patch;delete;deletecollection
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch;list
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=postgresql.cnpg.io,resources=clusters,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=postgresql.cnpg.io,resources=clusters/status,verbs=patch

// runState is what one reconcile works with.
type runState struct {
	run *benchv1.BenchmarkRun
	// built is run as its children are built: its default images and
	// pull secrets resolved (specs.Images.Resolve). Never written back.
	built    *benchv1.BenchmarkRun
	workload workloads.Workload
	prov     targets.Provisioner
	target   targets.Observed
	now      time.Time
	// waiting says what the current Job's load generators wait for (the
	// start barrier), for the Completed condition's message.
	waiting string
	// events are what the phases did, said once the status that records
	// it is stored (see note).
	events *eventNotes
	// results is the results ConfigMap as this reconcile last wrote it:
	// the cache may not show that write yet.
	results *corev1.ConfigMap
	// endMessage says why the run ends early, for the Completed
	// condition (finish); empty: the reason alone.
	endMessage string
	// podStuck: a pod of the phase cannot start, and the phase's
	// condition says so (podNotStarted).
	podStuck bool
	// declared is the duration the current measurement was asked for when
	// it is longer than the workload's (a capacity confirmation): its
	// measure deadline follows it.
	declared time.Duration
}

// eventNotes are a reconcile's routine events (the target ready, the prepare
// step done, a measurement taken). They are emitted after the status that
// records them is stored, not before (a refused write would say them twice),
// and when the phase changes they are folded into the phase's event: a
// single-measurement run tells its whole story in two events (started,
// ended) instead of five, each an API write.
type eventNotes struct {
	notes []eventNote
}

type eventNote struct {
	warning        bool
	reason, detail string
}

// note records a routine event of this reconcile.
func (st *runState) note(warning bool, reason, format string, args ...any) {
	if st.events != nil {
		st.events.notes = append(st.events.notes, eventNote{warning: warning, reason: reason, detail: fmt.Sprintf(format, args...)})
	}
}

// Reconcile moves a run one or more phases forward.
func (r *BenchmarkRunReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	run := &benchv1.BenchmarkRun{}
	if err := r.Get(ctx, req.NamespacedName, run); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetRun(req.Namespace, req.Name) // its series go with it
			r.forgetResources(ctx, runKey(req.Namespace, req.Name))
			r.written.Delete(runKey(req.Namespace, req.Name))
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if behind, err := r.cacheBehind(ctx, run); behind || err != nil {
		return ctrl.Result{RequeueAfter: refusedRetry}, err
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("BenchmarkRun", klog.KObj(run)))
	base := run.DeepCopy()
	events := &eventNotes{}
	defer func() {
		if run.Status.Phase.Terminal() {
			run.Status.Deadline = nil
		}
		run.Status.Message = statusMessage(run)
		refused, perr := r.patchStatus(ctx, base, run, err == nil, events)
		if perr != nil && err == nil {
			err = perr
		}
		if refused && err == nil && (res.RequeueAfter == 0 || res.RequeueAfter > refusedRetry) {
			// The run's own status writes bring no reconcile (runChanged):
			// a refused one asks for the next.
			res.RequeueAfter = refusedRetry
		}
	}()

	noteRejections(run)
	if run.Status.Phase.Terminal() {
		metrics.RecordRun(run)
		r.forgetResources(ctx, runKey(run.Namespace, run.Name))
		// The cache has the run's end: no later read of it is older.
		r.written.Delete(runKey(run.Namespace, run.Name))
		return r.cleanupLater(ctx, run)
	}
	if wait, err := r.admit(ctx, run); wait != nil || err != nil {
		return ptrResult(wait), err
	}
	st, err := r.load(ctx, run, events)
	if st == nil || err != nil {
		return ctrl.Result{}, err
	}
	if r.timedOut(st) {
		return r.finish(ctx, st, benchv1.ReasonTimeout)
	}
	// Each phase either waits (and says when to look again) or moves the
	// run on, in which case the next phase runs in the same reconcile.
	for range 6 {
		before := run.Status.Phase
		switch before {
		case benchv1.PhasePending, benchv1.PhaseProvisioning:
			res, err = r.provision(ctx, st)
		case benchv1.PhasePreparing:
			res, err = r.prepare(ctx, st)
		case benchv1.PhaseRunning:
			res, err = r.measure(ctx, st)
		case benchv1.PhaseCollecting:
			res, err = r.finish(ctx, st, "")
		}
		if err != nil || run.Status.Phase == before || run.Status.Phase.Terminal() {
			break
		}
	}
	return r.withDeadline(st, res), err
}

// load starts the run on its first reconcile, re-checks its spec, and
// observes its target (every later phase needs the endpoint).
func (r *BenchmarkRunReconciler) load(ctx context.Context, run *benchv1.BenchmarkRun, events *eventNotes) (*runState, error) {
	st := &runState{run: run, now: r.Clock.Now(), events: events}
	if run.Status.Phase == "" {
		r.start(st)
	}
	run.Status.ObservedGeneration = run.Generation
	w, err := registry.For(&run.Spec.Workload)
	if err == nil {
		if errs := w.Validate(&run.Spec.Workload, field.NewPath("spec", "workload")); len(errs) > 0 {
			err = errs.ToAggregate()
		}
	}
	if err != nil {
		r.failInvalidSpec(st, err)
		return nil, nil
	}
	st.workload = w
	run.Status.Workload = w.Name()
	if st.prov, err = targets.For(run); err != nil {
		r.failInvalidSpec(st, err)
		return nil, nil
	}
	if !anyRecorded(run) {
		// Refused at the start, before anything is made for it: the
		// integration a network disturbance needs is not there.
		if path, why, err := r.chaosMissing(run); err != nil {
			return nil, err
		} else if why != "" {
			r.failInvalidSpec(st, field.Invalid(field.NewPath(path), "", why))
			return nil, nil
		}
	}
	if st.built, err = r.Images.Resolve(run, w.DefaultImage(), r.RunnerImage); err != nil {
		r.failImageNotAllowed(st, err)
		return nil, nil
	}
	needs := targets.NeedsOf(w, &run.Spec.Workload)
	// A SQL load runs as the target's administrator unless it says otherwise.
	needs.Administrator = needs.Administrator || specs.SQLLoadAsAdministrator(run)
	if st.target, err = st.prov.Ensure(ctx, r.Client, st.built, needs); err != nil {
		return nil, err
	}
	run.Status.Target = st.target.Status.DeepCopy()
	if st.target.Ready && run.Status.Phase != benchv1.PhasePending && run.Status.Phase != benchv1.PhaseProvisioning {
		setCondition(run, benchv1.ConditionTargetReady, metav1.ConditionTrue, benchv1.ReasonReady, st.target.Message)
	}
	return st, nil
}

// patchStatus writes the status when the reconcile changed it, and then
// emits the reconcile's events: one for a phase change, which carries the
// routine notes, or else each note on its own. A run that ended in this
// reconcile is cleaned up right after its terminal status is stored (not
// before: a refused write would run the phase again, without its Jobs), and
// its end's event says what the cleanup did.
func (r *BenchmarkRunReconciler) patchStatus(ctx context.Context, base, run *benchv1.BenchmarkRun, clean bool, events *eventNotes) (refused bool, err error) {
	changed := !equality.Semantic.DeepEqual(base.Status, run.Status)
	written, err := status.Patch(ctx, r.Client, base, run, base.Status, run.Status)
	if err != nil || (changed && !written) {
		return err == nil, err // refused: the next reconcile does it again, and says it then
	}
	if written {
		r.written.Store(runKey(run.Namespace, run.Name), run.ResourceVersion)
	}
	var cleaned string
	if written && !base.Status.Phase.Terminal() && run.Status.Phase.Terminal() {
		metrics.RecordRun(run)
		r.forgetResources(ctx, runKey(run.Namespace, run.Name))
		if clean {
			stored := run.DeepCopy()
			var cw bool
			if cleaned, err = r.cleanup(ctx, run); err == nil {
				cw, err = status.Patch(ctx, r.Client, stored, run, stored.Status, run.Status)
				refused = err == nil && !cw
				if cw {
					r.written.Store(runKey(run.Namespace, run.Name), run.ResourceVersion)
				}
			}
			if err != nil || refused {
				// The next reconcile cleans up, and says so in an event of its own.
				cleaned = ""
			}
		}
	}
	if base.Status.Phase == run.Status.Phase {
		for _, n := range events.notes {
			r.Recorder.Event(run, eventType(n.warning), n.reason, status.Truncate(n.detail, 1024))
		}
		return refused, err
	}
	warning := run.Status.Phase == benchv1.PhaseFailed || run.Status.Phase == benchv1.PhaseInvalid
	var b strings.Builder
	fmt.Fprintf(&b, "Phase changed from %s to %s%s", phaseOrNone(base.Status.Phase), run.Status.Phase, phaseDetail(run))
	for _, n := range events.notes {
		fmt.Fprintf(&b, "; %s: %s", n.reason, n.detail)
		warning = warning || n.warning
	}
	if cleaned != "" {
		b.WriteString("; " + cleaned)
	}
	r.Recorder.Event(run, eventType(warning), "Phase"+string(run.Status.Phase), status.Truncate(b.String(), 1024))
	return refused, err
}

// cacheBehind says whether the run read from the cache is older than the
// status this manager wrote of it last. Its status writes are guarded by
// an optimistic lock, but what a reconcile creates is not: from a read one
// or two writes old, a run whose last measurement was recorded, which
// ended and whose Jobs the cleanup deleted, looked unmeasured, and its Job
// was made again after the cleanup and left running (two of 600 Jobs, 300
// short runs at once with manager kills). The Jobs' informer had seen the
// deletions, the runs' informer not yet the writes before them. Only when
// the cached version is not the one written does it ask the API server;
// a version written since by someone else (a label) is then the cache's.
func (r *BenchmarkRunReconciler) cacheBehind(ctx context.Context, run *benchv1.BenchmarkRun) (bool, error) {
	key := runKey(run.Namespace, run.Name)
	last, ok := r.written.Load(key)
	if !ok || last.(string) == run.ResourceVersion || r.APIReader == nil {
		return false, nil
	}
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(benchv1.GroupVersion.WithKind("BenchmarkRun"))
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(run), live); err != nil {
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	if live.ResourceVersion != run.ResourceVersion {
		return true, nil
	}
	r.written.Store(key, run.ResourceVersion)
	return false, nil
}

// refusedRetry is how soon a reconcile whose status write was refused runs
// again.
const refusedRetry = 200 * time.Millisecond

func eventType(warning bool) string {
	if warning {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

func phaseOrNone(p benchv1.Phase) string {
	if p == "" {
		return "(none)"
	}
	return string(p)
}

// withDeadline makes sure the run is looked at again when its timeout expires.
func (r *BenchmarkRunReconciler) withDeadline(st *runState, res ctrl.Result) ctrl.Result {
	if st.run.Status.Phase.Terminal() || st.run.Status.StartTime == nil {
		return res
	}
	left := st.run.Status.StartTime.Add(timeout(st.run)).Sub(st.now) + time.Second
	if res.RequeueAfter == 0 || left < res.RequeueAfter {
		res.RequeueAfter = max(left, time.Second)
	}
	return res
}

// SetupWithManager watches runs, their Jobs, StatefulSets and workload
// pods, the nodes (for queued runs), and the foreign kinds the targets own:
// those served now (Owned) from the start, the others once their CRD is
// installed (optionalKinds). Reconciles of different runs run side by side
// (the manager's MaxConcurrentReconciles, --max-concurrent-reconciles):
// every phase is idempotent and a run is never reconciled twice at once.
func (r *BenchmarkRunReconciler) SetupWithManager(mgr ctrl.Manager) error {
	metrics.Register(mgr.GetCache())
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &benchv1.BenchmarkRun{}, indexPhase, phaseIndex); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, indexPodJob, podJobIndex); err != nil {
		return err
	}
	wake := make(chan event.GenericEvent)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&benchv1.BenchmarkRun{}, builder.WithPredicates(runChanged)).
		Watches(&benchv1.BenchmarkRun{}, handler.EnqueueRequestsFromMapFunc(r.wakeQueued), builder.WithPredicates(releasedNodes)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.nodeChanged), builder.WithPredicates(schedulingChanged)).
		Owns(&batchv1.Job{}, builder.WithPredicates(jobChanged)).
		Owns(&appsv1.StatefulSet{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToRun), builder.WithPredicates(ofRun, podChanged)).
		WatchesRawSource(source.Channel(wake, &handler.EnqueueRequestForObject{}))
	for _, gvk := range r.Owned {
		b = b.WatchesRawSource(ownedSource(mgr, gvk))
	}
	c, err := b.Named("benchmarkrun").Build(r)
	if err != nil {
		return err
	}
	return setupOptionalKinds(mgr, c, r.Owned, wake)
}

// podToRun maps a workload pod to its run through the annotation every
// workload pod carries (a run's name can be longer than a label value).
func podToRun(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetAnnotations()[benchv1.AnnotationRunName]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

func ptrResult(r *ctrl.Result) ctrl.Result {
	if r == nil {
		return ctrl.Result{}
	}
	return *r
}
