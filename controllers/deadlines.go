package controllers

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/podstart"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// A run never sits silently until its timeout: every phase watches its
// pods. A pod that cannot start is named on the phase's condition at once
// (reason PodNotStarted, Kubernetes' reason and message) and fails the run
// past spec.deadlines.podStart; once the phase's pods are scheduled, its
// own deadline (spec.deadlines) runs, and status.deadline says when it
// passes.

// refusedAfter is how long a controller (a Job, a StatefulSet) may have no
// pod before its events are read for a refused creation: a pod is created
// within a second or two when nothing refuses it.
const refusedAfter = 10 * time.Second

// podWatch is what the pods of one thing a phase waits for say.
type podWatch struct {
	// stuck is the pod that cannot start (podstart.First), or nil.
	stuck *podstart.Stuck
	// scheduled: every pod is bound to a node; clock is then when the
	// last of them was (first, for a target: see targetPods).
	scheduled bool
	clock     time.Time
	// recheck is when to look again for pods not yet there (nothing
	// brings a reconcile for a pod a controller could not create).
	recheck time.Duration
}

// lookAgain is wait, or the watch's recheck when that comes first.
func (w podWatch) lookAgain(wait time.Duration) time.Duration {
	if w.recheck > 0 && (wait <= 0 || w.recheck < wait) {
		return w.recheck
	}
	return wait
}

// jobPods watches a workload Job's pods: the newest pod of each completion
// index, all of which must be scheduled for the clock to start. A Job
// without a pod for refusedAfter has its events read for a refused
// creation (a quota).
func (r *BenchmarkRunReconciler) jobPods(ctx context.Context, job *batchv1.Job) (podWatch, error) {
	var pods corev1.PodList
	if err := r.listJobPods(ctx, &pods, job); err != nil {
		return podWatch{}, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp) })
	newest := map[string]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		idx := p.Annotations[specs.AnnotationCompletionIndex]
		if _, seen := newest[idx]; !seen && p.DeletionTimestamp == nil {
			newest[idx] = p
		}
	}
	w := podWatch{}
	var stuck []*podstart.Stuck
	scheduled := 0
	for _, p := range newest {
		stuck = append(stuck, podstart.Why(p))
		if at, ok := podstart.ScheduledAt(p); ok {
			scheduled++
			if at.After(w.clock) {
				w.clock = at
			}
		}
	}
	w.stuck = podstart.First(stuck)
	want := int(ptrValue(job.Spec.Completions))
	w.scheduled = scheduled >= want
	if len(newest) < want && w.stuck == nil {
		if age := r.Clock.Since(job.CreationTimestamp.Time); age < refusedAfter {
			w.recheck = refusedAfter - age + time.Second
		} else if w.stuck = r.refused(ctx, job.Namespace, "Job", job.Name); w.stuck == nil {
			w.recheck = pollInterval
		}
	}
	return w, nil
}

// targetPods watches the target's pods (selector: Observed.PodSelector):
// its clock starts when the first is scheduled (a StatefulSet starts its
// pods one after another). Pods fewer than its StatefulSets want, none
// stuck, have the StatefulSets' events read for a refused creation.
func (r *BenchmarkRunReconciler) targetPods(ctx context.Context, st *runState) (podWatch, error) {
	w := podWatch{}
	if len(st.target.PodSelector) == 0 {
		return w, nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(st.run.Namespace), client.MatchingLabels(st.target.PodSelector)); err != nil {
		return w, err
	}
	var stuck []*podstart.Stuck
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		stuck = append(stuck, podstart.Why(p))
		if at, ok := podstart.ScheduledAt(p); ok && (!w.scheduled || at.Before(w.clock)) {
			w.scheduled, w.clock = true, at
		}
	}
	w.stuck = podstart.First(stuck)
	if w.stuck != nil {
		return w, nil
	}
	var sets []string
	var sts appsv1.StatefulSetList
	if err := r.List(ctx, &sts, client.InNamespace(st.run.Namespace), client.MatchingLabels{benchv1.LabelRunUID: string(st.run.UID)}); err != nil {
		return w, err
	}
	for _, s := range sts.Items {
		if s.Status.Replicas < ptrValue(s.Spec.Replicas) && r.Clock.Since(s.CreationTimestamp.Time) >= refusedAfter {
			sets = append(sets, s.Name)
		}
	}
	for _, name := range sets {
		if s := r.refused(ctx, st.run.Namespace, "StatefulSet", name); s != nil {
			w.stuck = s
			return w, nil
		}
	}
	return w, nil
}

// refused reads a controller's FailedCreate events from the API server
// (past the cache: the manager keeps no informer of events) and says the
// newest as Stuck, or nil. An error reading them is no answer: the pod's
// absence is still said by the phase's own message.
func (r *BenchmarkRunReconciler) refused(ctx context.Context, namespace, kind, name string) *podstart.Stuck {
	reader := r.APIReader
	if reader == nil {
		return nil
	}
	var events corev1.EventList
	sel := fields.SelectorFromSet(fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": "FailedCreate"})
	if err := reader.List(ctx, &events, client.InNamespace(namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		log.FromContext(ctx).V(1).Info("Could not read the events of a controller without pods", "kind", kind, "name", name, "error", err.Error())
		return nil
	}
	return podstart.Refused(events.Items)
}

// podNotStarted names a pod of the phase that cannot start on the phase's
// condition (cond, with what the phase waits for) and in an event, and
// ends the run when the pod has been so for spec.deadlines.podStart, or at
// once when waiting cannot help. ended reports that the run ended.
func (r *BenchmarkRunReconciler) podNotStarted(ctx context.Context, st *runState, cond, waiting string, s *podstart.Stuck) (ended bool, res ctrl.Result, err error) {
	run := st.run
	msg := s.String()
	if waiting != "" {
		msg = waiting + "; " + msg
	}
	if prev := findCondition(run, cond); prev == nil || prev.Reason != benchv1.ReasonPodNotStarted || prev.Message != msg {
		st.note(true, benchv1.ReasonPodNotStarted, "%s", s.String())
	}
	setCondition(run, cond, metav1.ConditionFalse, benchv1.ReasonPodNotStarted, msg)
	st.podStuck = true
	limit := run.Spec.Deadlines.PodStartDeadline()
	what := "pod " + s.Pod + " to start"
	if s.Pod == "" {
		what = "a pod to be created"
	}
	at := s.Since.Add(limit)
	run.Status.Deadline = deadlineStatus(run.Status.Phase, what, s.Since, at)
	switch {
	case s.Final:
		st.endMessage = s.String() + " (waiting cannot help)"
	case !st.now.Before(at):
		st.endMessage = fmt.Sprintf("%s, for %s (spec.deadlines.podStart is %s)", s.String(), st.now.Sub(s.Since).Round(time.Second), limit)
	default:
		return false, ctrl.Result{RequeueAfter: min(pollInterval, at.Sub(st.now)+time.Second)}, nil
	}
	res, err = r.finish(ctx, st, benchv1.ReasonPodNotStarted)
	return true, res, err
}

// phaseDeadline records the deadline of what the phase waits for, its
// clock started at clock, and says whether it has passed. A zero limit is
// no deadline (status.deadline unset).
func (st *runState) phaseDeadline(what string, clock time.Time, limit time.Duration) (passed bool, wait time.Duration) {
	if limit <= 0 || clock.IsZero() {
		st.run.Status.Deadline = nil
		return false, 0
	}
	at := clock.Add(limit)
	st.run.Status.Deadline = deadlineStatus(st.run.Status.Phase, what, clock, at)
	if !st.now.Before(at) {
		return true, 0
	}
	return false, at.Sub(st.now) + time.Second
}

func deadlineStatus(phase benchv1.Phase, what string, clock, at time.Time) *benchv1.DeadlineStatus {
	return &benchv1.DeadlineStatus{Phase: phase, Of: what,
		ClockStart: metav1.NewTime(clock.Truncate(time.Second)), At: metav1.NewTime(at.Truncate(time.Second))}
}

// phaseClock is when the current phase's clock started for a phase
// without pods (an external target's provisioning, the collection): the
// recorded one when status.deadline is the phase's, else now.
func (st *runState) phaseClock(what string) time.Time {
	if d := st.run.Status.Deadline; d != nil && d.Phase == st.run.Status.Phase && d.Of == what {
		return d.ClockStart.Time
	}
	return st.now
}

// longestMeasurement is the longest measurement the run has recorded.
func longestMeasurement(run *benchv1.BenchmarkRun) time.Duration {
	var out time.Duration
	for _, s := range run.Status.Steps {
		for _, r := range s.Repetitions {
			if r.StartTime != nil && r.CompletionTime != nil {
				out = max(out, r.CompletionTime.Sub(r.StartTime.Time))
			}
		}
	}
	return out
}

// expireJob ends a Job whose phase deadline passed: its active deadline is
// set to the time it has been active, so the Job controller stops its pods
// and marks it Failed (DeadlineExceeded); the Job, and what it says, stay.
func (r *BenchmarkRunReconciler) expireJob(ctx context.Context, st *runState, job *batchv1.Job) error {
	start := job.CreationTimestamp.Time
	if job.Status.StartTime != nil {
		start = job.Status.StartTime.Time
	}
	active := max(int64(st.now.Sub(start).Seconds()), 1)
	if d := job.Spec.ActiveDeadlineSeconds; d != nil && *d <= active {
		return nil
	}
	patch := client.MergeFrom(job.DeepCopy())
	job.Spec.ActiveDeadlineSeconds = &active
	if err := r.Patch(ctx, job, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("while stopping job %s past its deadline: %w", job.Name, err)
	}
	log.FromContext(ctx).Info("Stopped a job past its phase deadline", "job", job.Name, "activeDeadlineSeconds", strconv.FormatInt(active, 10))
	return nil
}
