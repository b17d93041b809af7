package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/kubelet"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/resources"
)

// ResourceMeter measures the pods' and nodes' resources over each
// measurement with the source the operator was started with
// (--telemetry-resources; resources.Meter), keeping each measurement's
// reports until status records them. Keys name measurements (windowKey);
// those of a run share its prefix (runKey).
type ResourceMeter interface {
	// Begin starts sampling a measurement whose load generators run, when
	// the source samples while the load runs and has not begun; subjects
	// is read only then (ok false: not under way yet).
	Begin(ctx context.Context, key string, subjects func(context.Context) (kubelet.Subjects, bool, error)) (begun bool, err error)
	// Reports are the measurement's reports over its window; a positive
	// wait: not ready yet. stopped says its sampler stopped now.
	Reports(ctx context.Context, key, namespace string, w telemetry.Window, subjects resources.Subjects) (reps []*telemetry.Report, stopped bool, wait time.Duration)
	// Forget drops one measurement's, ForgetAll every measurement's whose
	// key starts with prefix, stopping their samplers.
	Forget(ctx context.Context, key string)
	ForgetAll(ctx context.Context, prefix string)
	// Sources says which sources it asks: the kubelets, Prometheus.
	Sources() (kubelet, prometheus bool)
}

// windowKey names one measurement's window: "namespace/run/job/"
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
	if out != nil {
		warnUnasked(r.Resources, st.run, out.result)
	}
	if r.Resources == nil {
		return 0, nil
	}
	key := windowKey(st, job.Name)
	if out == nil {
		return 0, r.startSampler(ctx, st, job, key)
	}
	start, end := windowOf(out.result, timeOf(out.started), timeOf(out.finished))
	subjects := func(ctx context.Context) (kubelet.Subjects, error) {
		loadgens, err := r.loadgenPods(ctx, job)
		if err != nil {
			return kubelet.Subjects{}, err
		}
		return r.resourceSubjects(ctx, st, loadgens)
	}
	reps, stopped, wait := r.Resources.Reports(ctx, key, st.run.Namespace, telemetry.Window{Start: start, End: end}, subjects)
	if stopped {
		log.FromContext(ctx).Info("Stopped sampling the kubelets", "job", job.Name)
	}
	if wait > 0 {
		st.waiting = fmt.Sprintf("waiting %s for Prometheus to scrape the end of the window", wait.Round(time.Second))
		return wait, nil
	}
	for _, rep := range reps {
		telemetry.Attach(out.result, rep)
	}
	telemetry.AddEfficiency(out.result)
	telemetry.AddStageFigures(out.result)
	return 0, nil
}

// startSampler starts the measurement's kubelet sampler when its load
// generators run: for n generators, when the start barrier has opened (the
// first round is the window's start, a moment before the tools).
func (r *BenchmarkRunReconciler) startSampler(ctx context.Context, st *runState, job *batchv1.Job, key string) error {
	var subjects kubelet.Subjects
	begun, err := r.Resources.Begin(ctx, key, func(ctx context.Context) (kubelet.Subjects, bool, error) {
		loadgens, err := r.loadgenPods(ctx, job)
		if err != nil || len(loadgens) == 0 {
			return subjects, false, err
		}
		if specs.HasStartBarrier(job) && job.Annotations[specs.AnnotationStartAt] == "" {
			return subjects, false, nil // at the barrier: not yet
		}
		subjects, err = r.resourceSubjects(ctx, st, loadgens)
		return subjects, err == nil, err
	})
	if begun {
		log.FromContext(ctx).Info("Started sampling the kubelets", "job", job.Name, "pods", len(subjects.Pods), "nodes", len(subjects.Nodes))
	}
	return err
}

// loadgenPods are the Job's pods whose load generator runs or ran, one per
// completion index (the newest).
func (r *BenchmarkRunReconciler) loadgenPods(ctx context.Context, job *batchv1.Job) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.listJobPods(ctx, &pods, job); err != nil {
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
	s := kubelet.Subjects{Run: runQueries(st.run)}
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

// forgetMeasurement drops what is kept of one measurement once status
// records it, stopping a sampler still running for it.
func (r *BenchmarkRunReconciler) forgetMeasurement(ctx context.Context, key string) {
	if r.Resources != nil {
		r.Resources.Forget(ctx, key)
	}
}

// forgetResources drops what is kept of every measurement whose key starts
// with prefix (a whole run once it ended or is gone), stopping their
// samplers.
func (r *BenchmarkRunReconciler) forgetResources(ctx context.Context, prefix string) {
	if r.Resources != nil {
		r.Resources.ForgetAll(ctx, prefix)
	}
}

// runQueries are the run's own PromQL figures and its hosts read through
// Prometheus (spec.telemetry.queries, hosts[].prometheusSelector).
func runQueries(run *benchv1.BenchmarkRun) telemetry.RunQueries {
	var q telemetry.RunQueries
	for _, h := range run.Spec.Telemetry.Hosts {
		if h.PrometheusSelector != "" {
			q.Hosts = append(q.Hosts, telemetry.HostSelector{Name: h.Name, Selector: h.PrometheusSelector})
		}
	}
	for _, t := range run.Spec.Telemetry.Queries {
		q.Queries = append(q.Queries, telemetry.Query{Name: t.Name, Query: t.Query, Unit: t.Unit, Direction: t.Direction,
			Subject: t.Subject, Summary: string(t.Summary)})
	}
	return q
}

// warnUnasked says, on each measurement, what the run asks of Prometheus
// when the install has no Prometheus source to ask.
func warnUnasked(m ResourceMeter, run *benchv1.BenchmarkRun, res *results.Result) {
	q := runQueries(run)
	if len(q.Queries)+len(q.Hosts) == 0 {
		return
	}
	if m != nil {
		if _, prom := m.Sources(); prom {
			return
		}
	}
	w := fmt.Sprintf("spec.telemetry asks Prometheus for %d queries and %d hosts, but this install has no Prometheus source (telemetry.resources: prometheus): not asked",
		len(q.Queries), len(q.Hosts))
	if !slices.Contains(res.Warnings, w) { // a reconcile repeated says it once
		res.Warnings = append(res.Warnings, w)
	}
}
