package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// These tests play kube-scheduler and the kubelet in envtest, with the
// words they use (kube-scheduler and kubelet 1.34); test/e2e's
// TestPodsThatCannotStartAreNamed has the real scheduler, Job and
// StatefulSet controllers and quota admission say them.

const schedulerSaid = "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector. " +
	"preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling."

func unschedulable() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: schedulerSaid, LastTransitionTime: metav1.Now()}}}
}

// A load generator that cannot be scheduled is named on Completed, in
// status.message and in an event at once, with the scheduler's words and
// where the pod may go; past spec.deadlines.podStart the run fails with
// it, long before its timeout.
func TestUnschedulableLoadGeneratorIsNamedThenEndsTheRun(t *testing.T) {
	h := newHarness(t)
	run := kit.MeasureOnly("unsched", 4, 2)
	run.Spec.Deadlines.PodStart = &metav1.Duration{Duration: 5 * time.Second}
	run.Spec.Cleanup = benchv1.CleanupNever
	h.Create(run)
	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	h.Pod(job, kit.OnlyPod, "", unschedulable())
	pod := job.Name + "-pod"
	testutil.Eventually(t, 4*time.Second, "the pod named on Completed", func() error {
		r := h.Run("unsched")
		c := findCondition(r, benchv1.ConditionCompleted)
		want := "pod " + pod + " cannot start: Unschedulable: 0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector. (nodeSelector pool=loadgen"
		if c == nil || c.Reason != benchv1.ReasonPodNotStarted || !strings.Contains(c.Message, want) || strings.Contains(c.Message, "preemption") {
			return fmt.Errorf("completed %+v", c)
		}
		if !strings.HasPrefix(r.Status.Message, "PodNotStarted: measurement job "+job.Name+"; pod "+pod) {
			return fmt.Errorf("status.message %q", r.Status.Message)
		}
		if d := r.Status.Deadline; d == nil || d.Of != "pod "+pod+" to start" || d.At.Sub(d.ClockStart.Time) != 5*time.Second {
			return fmt.Errorf("status.deadline %+v", d)
		}
		if r.Status.Phase != benchv1.PhaseRunning {
			return fmt.Errorf("phase %s before podStart passed", r.Status.Phase)
		}
		return nil
	})
	r := h.WaitPhase("unsched", 15*time.Second, benchv1.PhaseFailed)
	c := findCondition(r, benchv1.ConditionCompleted)
	if c.Reason != benchv1.ReasonPodNotStarted || !strings.Contains(c.Message, "(spec.deadlines.podStart is 5s)") || !strings.Contains(c.Message, "Insufficient cpu") {
		t.Fatalf("completed %+v", c)
	}
	if !strings.HasPrefix(r.Status.Message, "PodNotStarted: pod "+pod+" cannot start: Unschedulable") || r.Status.Deadline != nil {
		t.Fatalf("status.message %q, deadline %+v", r.Status.Message, r.Status.Deadline)
	}
	if n := len(h.Jobs()); n != 1 {
		t.Fatalf("%d jobs: nothing may start after the run ended", n)
	}
	named := 0
	for _, e := range h.EventsOf("unsched") {
		if e.Type == corev1.EventTypeWarning && e.Reason == benchv1.ReasonPodNotStarted && strings.Contains(e.Message, "Insufficient cpu") {
			named += int(max(e.Count, 1))
		}
	}
	if named != 1 {
		t.Fatalf("the pod must be named in one event, once (not at every look): %d", named)
	}
}

// The prepare step's image that cannot be pulled is named with the image;
// when the pull succeeds the step goes on as before.
func TestImagePullBackOffIsNamedAndClears(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.PgbenchRun("pull", kit.ExternalDB(), []int32{4}, 1)
	h.Create(run)
	job := h.WaitJob(specs.PrepareJobName(run))
	img := job.Spec.Template.Spec.Containers[0].Image
	status := corev1.PodStatus{Phase: corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: specs.LoadgenName, Image: img, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ImagePullBackOff", Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: failed to pull and unpack image: not found", img)}}}}}
	pod := h.Pod(job, kit.OnlyPod, node, status)
	testutil.Eventually(t, 4*time.Second, "the image named on Prepared", func() error {
		c := h.Condition("pull", benchv1.ConditionPrepared)
		if c == nil || c.Reason != benchv1.ReasonPodNotStarted || !strings.Contains(c.Message, "ImagePullBackOff: container loadgen: Back-off pulling image \""+img+"\"") {
			return fmt.Errorf("prepared %+v", c)
		}
		return nil
	})
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 4*time.Second, "Preparing again", func() error {
		r := h.Run("pull")
		c := findCondition(r, benchv1.ConditionPrepared)
		if c == nil || c.Reason != benchv1.ReasonPreparing || r.Status.Message != "" || r.Status.Deadline != nil {
			return fmt.Errorf("prepared %+v, message %q, deadline %+v", c, r.Status.Message, r.Status.Deadline)
		}
		return nil
	})
}

// An image name that is not one ends the run at once: waiting cannot help.
func TestInvalidImageNameEndsTheRunAtOnce(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.MeasureOnly("badimage", 4, 1)
	run.Spec.Workload.Image = "registry.example/pgbench::17"
	h.Create(run)
	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	h.Pod(job, kit.OnlyPod, node, corev1.PodStatus{Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{Name: specs.LoadgenName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "InvalidImageName", Message: `Failed to apply default image tag "registry.example/pgbench::17": couldn't parse image name`}}}}})
	r := h.WaitPhase("badimage", 10*time.Second, benchv1.PhaseFailed)
	c := findCondition(r, benchv1.ConditionCompleted)
	if c.Reason != benchv1.ReasonPodNotStarted || !strings.Contains(c.Message, "InvalidImageName") || !strings.Contains(c.Message, "(waiting cannot help)") {
		t.Fatalf("completed %+v", c)
	}
}

// A measurement past spec.deadlines.measure (its clock started when its
// pod was scheduled) is recorded Failed with DeadlineExceeded, its Job is
// stopped (its active deadline set to now), and the run goes on to the next.
func TestMeasureDeadlineFailsTheMeasurementAndGoesOn(t *testing.T) {
	h := newHarness(t)
	node := h.LoadgenNode()
	run := kit.MeasureOnly("hung", 4, 2)
	run.Spec.Deadlines.Measure = &metav1.Duration{Duration: 3 * time.Second}
	h.Create(run)
	first := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	h.StartLoadgen(first, node) // and never ends
	testutil.Eventually(t, 6*time.Second, "status.deadline of the running measurement", func() error {
		if d := h.Run("hung").Status.Deadline; d == nil || d.Phase != benchv1.PhaseRunning || d.Of != "job "+first.Name {
			return fmt.Errorf("deadline %+v", d)
		}
		return nil
	})
	second := h.WaitJob(specs.MeasureJobName(run, 0, 2))
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(first), first); err != nil {
		t.Fatal(err)
	}
	if d := first.Spec.ActiveDeadlineSeconds; d == nil || *d > 10 {
		t.Fatalf("the hung job must be stopped: activeDeadlineSeconds %v", d)
	}
	h.Replay(second, node, "pgbench", kit.Fixture(t, "pgbench", "pkb-tpcb-16c-5s-r-stdout.txt"))
	r := h.WaitPhase("hung", 15*time.Second, benchv1.PhaseFailed)
	reps := r.Status.Steps[0].Repetitions
	if len(reps) != 2 || reps[0].Verdict != benchv1.VerdictFailed || !strings.Contains(strings.Join(reps[0].Reasons, ";"), "DeadlineExceeded: the measurement did not end within 3s (spec.deadlines.measure)") ||
		reps[1].Verdict != benchv1.VerdictSucceeded {
		t.Fatalf("repetitions %+v", reps)
	}
	if c := findCondition(r, benchv1.ConditionCompleted); c.Reason != benchv1.ReasonAllMeasured {
		t.Fatalf("every measurement ran: %+v", c)
	}
	if !strings.HasPrefix(r.Status.Message, "SomeFailed: ") || !strings.Contains(r.Status.Message, "DeadlineExceeded") {
		t.Fatalf("status.message %q", r.Status.Message)
	}
}

// A target that does not become ready (here an external target whose
// Secret does not exist) fails the run at spec.deadlines.provision, saying
// what it waited for.
func TestProvisionDeadlineSaysWhatTheTargetWaitedFor(t *testing.T) {
	h := newHarness(t)
	run := kit.PgbenchRun("nosecret", benchv1.TargetSpec{External: &benchv1.ExternalTarget{
		Host: "db", Port: 5432, SecretRef: &corev1.LocalObjectReference{Name: "db-creds"}}}, []int32{4}, 1)
	run.Spec.Deadlines.Provision = &metav1.Duration{Duration: 3 * time.Second}
	h.Create(run)
	testutil.Eventually(t, 4*time.Second, "the provision deadline in status", func() error {
		r := h.Run("nosecret")
		if d := r.Status.Deadline; d == nil || d.Phase != benchv1.PhaseProvisioning || d.At.Sub(d.ClockStart.Time) != 3*time.Second {
			return fmt.Errorf("deadline %+v", d)
		}
		if !strings.HasPrefix(r.Status.Message, "SecretNotFound: ") {
			return fmt.Errorf("status.message %q", r.Status.Message)
		}
		return nil
	})
	r := h.WaitPhase("nosecret", 10*time.Second, benchv1.PhaseFailed)
	c := findCondition(r, benchv1.ConditionCompleted)
	if c.Reason != benchv1.ReasonDeadlineExceeded || !strings.Contains(c.Message, "spec.deadlines.provision (3s) of the phase's start") || !strings.Contains(c.Message, "db-creds") {
		t.Fatalf("completed %+v", c)
	}
	if r.Status.Deadline != nil || !strings.HasPrefix(r.Status.Message, "DeadlineExceeded: the target was not ready") {
		t.Fatalf("deadline %+v, message %q", r.Status.Deadline, r.Status.Message)
	}
}

// Bad deadlines are refused at admission, naming the field.
func TestDeadlinesAreCheckedAtAdmission(t *testing.T) {
	h := newHarness(t)
	run := kit.MeasureOnly("baddeadline", 4, 1)
	run.Namespace = h.NS
	run.Spec.Deadlines.Measure = &metav1.Duration{Duration: -time.Second}
	err := k8s.Create(context.Background(), run)
	if err == nil || !strings.Contains(err.Error(), "spec.deadlines.measure") || !strings.Contains(err.Error(), "must be a positive duration") {
		t.Fatalf("%v", err)
	}
}
