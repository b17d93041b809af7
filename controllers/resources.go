package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/kubelet"
)

// Resources measures the pods' and nodes' resources over every measurement
// with the source the operator was started with (--telemetry-resources).
// The kubelet source samples while the load generators run and stops when
// the Job's outcome is known; the Prometheus source is asked once the
// window has settled. Either report is kept by measurement until status
// records it, so a reconcile that recomputes the outcome attaches the same
// report to the fresh result, once.
type Resources struct {
	// Kubelets, when set, is the kubelet source (kubelet.NewAPIServer).
	Kubelets kubelet.Kubelets
	// Interval between the kubelet sampler's polls; default
	// kubelet.DefaultInterval.
	Interval time.Duration
	// Prometheus, when set, makes the Prometheus source for a namespace
	// (its cAdvisor series are selected by the run's namespace).
	Prometheus func(namespace string) (telemetry.Source, error)
	// Settle is how long after a window's end Prometheus is asked, so that
	// its last scrape has landed.
	Settle time.Duration

	samplers kubelet.Samplers
	since    time.Time // when this manager began: earlier windows were sampled by another

	mu      sync.Mutex
	reports map[string][]*telemetry.Report // by measurement, until status records it
	sources map[string]telemetry.Source    // Prometheus, by namespace
	// started and stopped count the samplers, for the log and the tests.
	started, stopped int
}

// defaultSettle: a Prometheus scrape interval and a margin.
const defaultSettle = 45 * time.Second

// NewResources returns the kubelet source (k set) or the Prometheus source
// (prom set), or nothing to measure.
func NewResources(k kubelet.Kubelets, interval time.Duration, prom func(string) (telemetry.Source, error), settle time.Duration) *Resources {
	if settle <= 0 {
		settle = defaultSettle
	}
	return &Resources{Kubelets: k, Interval: interval, Prometheus: prom, Settle: settle, since: time.Now(),
		reports: map[string][]*telemetry.Report{}, sources: map[string]telemetry.Source{}}
}

// measurementKey names one measurement's window: "namespace/run/job/"
// (runKey is its prefix).
func windowKey(st *runState, job string) string {
	return runKey(st.run.Namespace, st.run.Name) + job + "/"
}

func runKey(namespace, run string) string { return namespace + "/" + run + "/" }

// resources starts the kubelet sampler once a running Job's load
// generators run (out nil), and attaches the resource figures to a
// finished Job's result (out set). A positive wait means the figures are
// not ready yet: look again then.
func (r *BenchmarkRunReconciler) resources(ctx context.Context, st *runState, job *batchv1.Job, out *outcome) (time.Duration, error) {
	rs := r.Resources
	if rs == nil || (rs.Kubelets == nil && rs.Prometheus == nil) {
		return 0, nil
	}
	key := windowKey(st, job.Name)
	if out == nil {
		return 0, r.startSampler(ctx, st, job, key)
	}
	reps, wait := r.resourceReports(ctx, st, job, out, key)
	if wait > 0 {
		st.waiting = fmt.Sprintf("waiting %s for Prometheus to scrape the end of the window", wait.Round(time.Second))
		return wait, nil
	}
	for _, rep := range reps {
		telemetry.Attach(out.result, rep)
	}
	telemetry.AddEfficiency(out.result)
	return 0, nil
}

// startSampler starts the measurement's kubelet sampler when its load
// generators run: for n generators, when the start barrier has opened (the
// first round is the window's start, a moment before the tools).
func (r *BenchmarkRunReconciler) startSampler(ctx context.Context, st *runState, job *batchv1.Job, key string) error {
	rs := r.Resources
	if rs.Kubelets == nil || rs.samplers.Running(key) || rs.have(key) {
		return nil
	}
	loadgens, err := r.loadgenPods(ctx, job)
	if err != nil || len(loadgens) == 0 {
		return err
	}
	if ptrValue(job.Spec.Completions) > 1 && job.Annotations[specs.AnnotationStartAt] == "" {
		return nil // at the barrier: not yet
	}
	subjects, err := r.resourceSubjects(ctx, st, loadgens)
	if err != nil {
		return err
	}
	s, err := kubelet.NewSampler(rs.Kubelets, kubelet.Config{Interval: rs.Interval}, subjects)
	if err == nil {
		// The reconcile's context lives as long as the manager (no
		// reconciliation timeout is set), as the sampler must.
		err = rs.samplers.Start(ctx, key, s)
	}
	if err != nil {
		rs.keep(key, []*telemetry.Report{{Source: kubelet.SourceName, Figures: []telemetry.Figure{},
			Warnings: []string{"no kubelet sampler: " + err.Error()}}})
		return nil
	}
	rs.mu.Lock()
	rs.started++
	rs.mu.Unlock()
	log.FromContext(ctx).Info("Started sampling the kubelets", "job", job.Name, "pods", len(subjects.Pods), "nodes", len(subjects.Nodes))
	return nil
}

// resourceReports are the measurement's reports: kept from an earlier
// reconcile, or made now (the kubelet sampler stopped, Prometheus asked).
func (r *BenchmarkRunReconciler) resourceReports(ctx context.Context, st *runState, job *batchv1.Job, out *outcome, key string) ([]*telemetry.Report, time.Duration) {
	rs := r.Resources
	if reps, ok := rs.kept(key); ok {
		return reps, 0
	}
	start, end := windowOf(out.result, timeOf(out.started), timeOf(out.finished))
	w := telemetry.Window{Start: start, End: end}
	var reps []*telemetry.Report
	if rs.Kubelets != nil {
		switch {
		case rs.samplers.Running(key):
			reps = append(reps, rs.samplers.StopWithin(ctx, key, w))
			rs.mu.Lock()
			rs.stopped++
			rs.mu.Unlock()
			log.FromContext(ctx).Info("Stopped sampling the kubelets", "job", job.Name)
		case start.IsZero() || start.After(rs.since):
			// Never seen running by this manager: a tool that failed to
			// start, or one that ended between two reconciles.
			reps = append(reps, &telemetry.Report{Source: kubelet.SourceName, Figures: []telemetry.Figure{}, Warnings: []string{
				"the measurement ended before the operator saw its load generators run: the kubelets were not sampled"}})
		default:
			reps = append(reps, kubelet.Lost())
		}
	}
	if rs.Prometheus != nil {
		if wait := time.Until(end.Add(rs.Settle)); !end.IsZero() && wait > 0 {
			return nil, wait
		}
		reps = append(reps, r.collectPrometheus(ctx, st, job, w))
	}
	rs.keep(key, reps)
	return reps, 0
}

// collectPrometheus asks Prometheus about the window; whatever goes wrong
// is a warning on the measurement, never a failure.
func (r *BenchmarkRunReconciler) collectPrometheus(ctx context.Context, st *runState, job *batchv1.Job, w telemetry.Window) *telemetry.Report {
	failed := func(err error) *telemetry.Report {
		return &telemetry.Report{Source: "prometheus", Figures: []telemetry.Figure{}, Warnings: []string{"no figures: " + err.Error()}}
	}
	if w.Start.IsZero() || !w.End.After(w.Start) {
		return failed(fmt.Errorf("the measurement has no window (%s..%s)", w.Start, w.End))
	}
	src, err := r.Resources.source(st.run.Namespace)
	if err != nil {
		return failed(err)
	}
	loadgens, err := r.loadgenPods(ctx, job)
	if err != nil {
		return failed(err)
	}
	subjects, err := r.resourceSubjects(ctx, st, loadgens)
	if err != nil {
		return failed(err)
	}
	rep, err := src.Collect(ctx, w, subjects.TelemetrySubjects())
	if err != nil {
		return failed(err)
	}
	return rep
}

// loadgenPods are the Job's pods whose load generator runs or ran, one per
// completion index (the newest).
func (r *BenchmarkRunReconciler) loadgenPods(ctx context.Context, job *batchv1.Job) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{benchv1.LabelJob: job.Name}); err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	seen := map[string]bool{}
	var out []corev1.Pod
	for _, p := range pods.Items {
		idx := p.Annotations[specs.AnnotationCompletionIndex]
		if p.Spec.NodeName == "" || seen[idx] || !loadgenStarted(&p) {
			continue
		}
		seen[idx] = true
		out = append(out, p)
	}
	return out, nil
}

func loadgenStarted(p *corev1.Pod) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == specs.LoadgenName && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

// resourceSubjects are the target's pods (CPU limits from their spec), the
// load generators and their nodes (CPU capacity from their status).
func (r *BenchmarkRunReconciler) resourceSubjects(ctx context.Context, st *runState, loadgens []corev1.Pod) (kubelet.Subjects, error) {
	var s kubelet.Subjects
	if len(st.target.PodSelector) > 0 {
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(st.run.Namespace), client.MatchingLabels(st.target.PodSelector)); err != nil {
			return s, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				continue
			}
			s.Pods = append(s.Pods, kubelet.Pod{Namespace: p.Namespace, Name: p.Name, Role: telemetry.RoleTarget, Node: p.Spec.NodeName,
				CPULimitCores: podLimit(&p, corev1.ResourceCPU)})
		}
	}
	for _, p := range loadgens {
		s.Pods = append(s.Pods, kubelet.Pod{Namespace: p.Namespace, Name: p.Name, Role: telemetry.RoleLoadgen, Node: p.Spec.NodeName})
	}
	seen := map[string]bool{}
	allocatable := map[string]float64{}
	for _, p := range s.Pods {
		if seen[p.Node] {
			continue
		}
		seen[p.Node] = true
		n := kubelet.Node{Name: p.Node}
		var node corev1.Node
		if err := r.Get(ctx, client.ObjectKey{Name: p.Node}, &node); err == nil {
			if q, ok := node.Status.Capacity[corev1.ResourceCPU]; ok {
				n.CPUCores = q.AsApproximateFloat64()
			}
			if q, ok := node.Status.Allocatable[corev1.ResourceCPU]; ok {
				allocatable[p.Node] = q.AsApproximateFloat64()
			}
		}
		s.Nodes = append(s.Nodes, n)
	}
	for i := range s.Pods {
		s.Pods[i].NodeAllocatableCores = allocatable[s.Pods[i].Node]
	}
	return s, nil
}

func (rs *Resources) have(key string) bool {
	_, ok := rs.kept(key)
	return ok
}

func (rs *Resources) kept(key string) ([]*telemetry.Report, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	reps, ok := rs.reports[key]
	return reps, ok
}

func (rs *Resources) keep(key string, reps []*telemetry.Report) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.reports[key] = reps
}

// forgetMeasurement drops what is kept of one measurement once status
// records it, stopping a sampler still running for it. Map lookups only:
// it runs for every recorded measurement of every measure reconcile.
func (r *BenchmarkRunReconciler) forgetMeasurement(ctx context.Context, key string) {
	rs := r.Resources
	if rs == nil {
		return
	}
	rs.mu.Lock()
	delete(rs.reports, key)
	rs.mu.Unlock()
	if rs.samplers.Running(key) {
		rs.samplers.Stop(ctx, key)
	}
}

// forgetResources drops what is kept of every measurement whose key starts
// with prefix (a whole run once it ended or is gone), stopping their
// samplers.
func (r *BenchmarkRunReconciler) forgetResources(ctx context.Context, prefix string) {
	rs := r.Resources
	if rs == nil {
		return
	}
	rs.mu.Lock()
	for k := range rs.reports {
		if strings.HasPrefix(k, prefix) {
			delete(rs.reports, k)
		}
	}
	rs.mu.Unlock()
	for _, k := range rs.samplers.Keys() {
		if strings.HasPrefix(k, prefix) {
			rs.samplers.Stop(ctx, k)
		}
	}
}

func (rs *Resources) source(namespace string) (telemetry.Source, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if s, ok := rs.sources[namespace]; ok {
		return s, nil
	}
	s, err := rs.Prometheus(namespace)
	if err != nil {
		return nil, err
	}
	rs.sources[namespace] = s
	return s, nil
}
