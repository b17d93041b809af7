package controllers

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// LogReader reads the end of a container's log.
type LogReader interface {
	TailLog(ctx context.Context, namespace, pod, container string, lines int64) ([]byte, error)
}

// logTailLines is enough for the result block of any run we produce: the
// block is compressed, and the largest results are a few hundred lines.
const logTailLines = 4000

// ensureJob creates a workload Job (and its files) unless it exists.
func (r *BenchmarkRunReconciler) ensureJob(ctx context.Context, st *runState, role string, step int, rep int32, inv pod.Invocation) (*batchv1.Job, error) {
	run := st.run
	name := specs.PrepareJobName(run)
	if role == benchv1.RoleLoadgen {
		name = specs.MeasureJobName(run, step, rep)
	}
	job := &batchv1.Job{}
	err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: name}, job)
	if err == nil {
		return job, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	filesCM := ""
	if len(inv.Files) > 0 {
		cm, err := r.ensureFiles(ctx, run, inv.Files)
		if err != nil {
			return nil, err
		}
		filesCM = cm
	}
	job = specs.Job(specs.JobParams{
		Run: st.built, Name: name, Role: role, Workload: st.workload.Name(), Step: step, Repetition: rep,
		Invocation: inv, Image: st.loadgenImage(), RunnerImage: r.RunnerImage, FilesConfigMap: filesCM,
		Endpoint: st.target.Endpoint, AvoidPods: st.target.PodSelector, ActiveDeadlineSeconds: remainingSeconds(st),
		ServerStatistics: st.serverStatistics(), Protocol: workloads.SpeaksOf(st.workload, &st.run.Spec.Workload).Protocol,
	})
	if err := r.Create(ctx, job); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// Created by an earlier reconcile whose cache had not caught up.
			return job, r.Get(ctx, client.ObjectKeyFromObject(job), job)
		}
		return nil, fmt.Errorf("while creating job %s: %w", name, err)
	}
	log.FromContext(ctx).Info("Created workload job", "job", name, "role", role)
	return job, nil
}

// ensureFiles puts an invocation's files into the run's files ConfigMap:
// the first Job's create it, later Jobs add what they bring that it lacks,
// so no invocation's file is ever dropped because another came first.
func (r *BenchmarkRunReconciler) ensureFiles(ctx context.Context, run *benchv1.BenchmarkRun, files map[string]string) (string, error) {
	cm := specs.FilesConfigMap(run, files)
	switch err := r.Create(ctx, cm); {
	case err == nil:
		return cm.Name, nil
	case !apierrors.IsAlreadyExists(err):
		return "", fmt.Errorf("while creating the workload files: %w", err)
	}
	var have corev1.ConfigMap
	if err := r.Get(ctx, client.ObjectKeyFromObject(cm), &have); err != nil {
		return "", err
	}
	patch := client.MergeFrom(have.DeepCopy())
	changed := false
	for k, v := range files {
		if cur, ok := have.Data[k]; !ok || cur != v {
			if have.Data == nil {
				have.Data = map[string]string{}
			}
			have.Data[k], changed = v, true
		}
	}
	if changed {
		if err := r.Patch(ctx, &have, patch); err != nil {
			return "", fmt.Errorf("while adding to the workload files: %w", err)
		}
	}
	return cm.Name, nil
}

// loadgenImage is the tool's image: the spec's override or the workload's
// default, remapped (runState.built).
func (st *runState) loadgenImage() string {
	if st.built != nil {
		return st.built.Spec.Workload.Image
	}
	if img := st.run.Spec.Workload.Image; img != "" {
		return img
	}
	return st.workload.DefaultImage()
}

// outcome is what a finished workload Job left.
type outcome struct {
	result   *results.Result
	node     string
	started  *metav1.Time
	finished *metav1.Time
	// full is true when the result came from the log block, with detail
	// metrics and time series; otherwise from the termination message.
	full bool
}

// jobOutcome reports whether a workload Job has finished and what it left.
// The load-generator container's termination is what counts: its message is
// the runner's summary. A Job that failed without one (deadline, eviction,
// image pull) is a failed measurement with the reason Kubernetes gave.
func (r *BenchmarkRunReconciler) jobOutcome(ctx context.Context, st *runState, job *batchv1.Job) (*outcome, error) {
	var pods corev1.PodList
	if err := r.listJobPods(ctx, &pods, job); err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		return pods.Items[j].CreationTimestamp.Before(&pods.Items[i].CreationTimestamp)
	})
	if specs.HasStartBarrier(job) {
		return r.parallelOutcome(ctx, st, job, pods.Items, int(max(ptrValue(job.Spec.Completions), 1)))
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name != specs.LoadgenName || cs.State.Terminated == nil {
				continue
			}
			return r.fromTermination(ctx, st, pod, cs.State.Terminated), nil
		}
		if pod.Status.Phase == corev1.PodFailed {
			res := results.New(st.workload.Name())
			res.Fail("the load-generator pod failed before the tool finished: %s %s", pod.Status.Reason, pod.Status.Message)
			return &outcome{result: res, node: pod.Spec.NodeName}, nil
		}
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			res := results.New(st.workload.Name())
			res.Fail("the job failed before the tool finished: %s: %s", c.Reason, c.Message)
			return &outcome{result: res, finished: &c.LastTransitionTime}, nil
		}
	}
	return nil, nil
}

func (r *BenchmarkRunReconciler) fromTermination(ctx context.Context, st *runState, pod *corev1.Pod, term *corev1.ContainerStateTerminated) *outcome {
	o := &outcome{node: pod.Spec.NodeName, started: &term.StartedAt, finished: &term.FinishedAt}
	if r.Logs != nil {
		raw, err := r.Logs.TailLog(ctx, pod.Namespace, pod.Name, specs.LoadgenName, logTailLines)
		if err == nil {
			if full, derr := results.DecodeBlock(raw); derr == nil {
				o.result, o.full = full, true
				return o
			}
		} else {
			log.FromContext(ctx).V(1).Info("Could not read the load generator's log, using its termination message", "pod", pod.Name, "error", err.Error())
		}
	}
	if res, err := results.DecodeCompact([]byte(term.Message)); err == nil {
		o.result = res
		return o
	}
	res := results.New(st.workload.Name())
	if msg := strings.TrimSpace(term.Message); msg != "" {
		// Not the runner's summary: what the kubelet (or the container
		// runtime) said, such as a missing image or tool.
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		res.Fail("the load generator ended (exit code %d, %s) without a dbperf summary: %s", term.ExitCode, orDash(term.Reason), msg)
	} else {
		res.Fail("the load generator ended (exit code %d, %s) without a dbperf summary; its log may say why", term.ExitCode, orDash(term.Reason))
	}
	code := int(term.ExitCode)
	res.ExitCode = &code
	o.result = res
	return o
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ptrValue(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// parallelOutcome handles a Job of n load generators: it opens the start
// barrier once every generator runs, and when all have ended it merges their
// results (results.Merge: throughputs add, percentiles from merged
// histograms or reported as upper bounds).
func (r *BenchmarkRunReconciler) parallelOutcome(ctx context.Context, st *runState, job *batchv1.Job, pods []corev1.Pod, n int) (*outcome, error) {
	newest := map[int]*corev1.Pod{}
	for i := range pods { // newest first
		idx, err := strconv.Atoi(pods[i].Annotations[specs.AnnotationCompletionIndex])
		if err != nil || idx < 0 || idx >= n {
			continue
		}
		if _, seen := newest[idx]; !seen {
			newest[idx] = &pods[i]
		}
	}
	running, released := 0, 0
	var ended []*corev1.Pod
	for _, pod := range newest {
		if pod.Annotations[specs.AnnotationStartAt] != "" {
			released++
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name != specs.LoadgenName {
				continue
			}
			if cs.State.Running != nil {
				running++
			}
			if cs.State.Terminated != nil {
				ended = append(ended, pod)
			}
		}
	}
	if released < n {
		st.waiting = fmt.Sprintf("%d of %d load generators running; the start barrier opens when all run", running, n)
	} else {
		st.waiting = ""
	}
	if len(newest) == n && running == n && released < n {
		// Everyone waits at the barrier: start them all a moment from now,
		// long enough for the kubelets to refresh the annotation file.
		at, err := r.startInstant(ctx, job)
		if err != nil {
			return nil, err
		}
		for _, pod := range newest {
			if pod.Annotations[specs.AnnotationStartAt] == at {
				continue
			}
			patch := client.MergeFrom(pod.DeepCopy())
			if pod.Annotations == nil {
				pod.Annotations = map[string]string{}
			}
			pod.Annotations[specs.AnnotationStartAt] = at
			if err := r.Patch(ctx, pod, patch); err != nil {
				return nil, fmt.Errorf("while opening the start barrier of %s: %w", pod.Name, err)
			}
		}
		log.FromContext(ctx).Info("Opened the start barrier", "job", job.Name, "generators", n, "startAt", at)
	}
	failed := false
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			failed = true
		}
	}
	if len(ended) < n && !failed {
		return nil, nil
	}
	// By completion index, so that "load generator i" in a reason is pod i.
	index := func(p *corev1.Pod) int {
		i, _ := strconv.Atoi(p.Annotations[specs.AnnotationCompletionIndex])
		return i
	}
	sort.Slice(ended, func(i, j int) bool { return index(ended[i]) < index(ended[j]) })
	var parts []*results.Result
	out := &outcome{full: true}
	var nodes []string
	for _, pod := range ended {
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name != specs.LoadgenName || cs.State.Terminated == nil {
				continue
			}
			o := r.fromTermination(ctx, st, pod, cs.State.Terminated)
			parts = append(parts, o.result)
			out.full = out.full && o.full
			nodes = append(nodes, o.node)
			if out.started == nil || (o.started != nil && o.started.Before(out.started)) {
				out.started = o.started
			}
			if out.finished == nil || (o.finished != nil && out.finished.Before(o.finished)) {
				out.finished = o.finished
			}
		}
	}
	if len(parts) < n {
		res := results.New(st.workload.Name())
		res.Fail("only %d of %d load generators finished before the job failed", len(parts), n)
		parts = append(parts, res)
	}
	out.result = results.Merge(parts)
	out.node = strings.Join(nodes, ",")
	return out, nil
}

// startInstant is the one start instant of a Job's load generators. It is
// decided once and recorded on the Job with an optimistic-concurrency
// patch, so that reconciles working from caches of different ages can never
// hand the generators different instants: a reconcile that lost the race
// gets a conflict and retries with the recorded value.
func (r *BenchmarkRunReconciler) startInstant(ctx context.Context, job *batchv1.Job) (string, error) {
	if at := job.Annotations[specs.AnnotationStartAt]; at != "" {
		return at, nil
	}
	at := time.Now().Add(barrierLead).UTC().Format(time.RFC3339Nano)
	patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	job.Annotations[specs.AnnotationStartAt] = at
	if err := r.Patch(ctx, job, patch); err != nil {
		return "", fmt.Errorf("while recording the start instant on job %s: %w", job.Name, err)
	}
	return at, nil
}

// barrierLead is how far ahead the start instant is set.
const barrierLead = 3 * time.Second
