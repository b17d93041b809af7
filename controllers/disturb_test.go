package controllers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// faultyDisturber breaks the operator's disturbance writes the ways they
// break: the first record of the disturbances on the Job is refused with a
// conflict (someone else wrote the Job), and the first creation of the
// stress pod fails after its intent was stored (as a manager that died
// between the two would leave it). It counts the stress pod's creations
// that reached the API server.
type faultyDisturber struct {
	mu                       sync.Mutex
	conflicted, failedCreate bool
	created, conflicts       int
}

func (f *faultyDisturber) wrap(c client.Client) client.Client {
	return kit.Intercept(c, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if job, ok := obj.(*batchv1.Job); ok && job.Annotations[annotationDisturbances] != "" {
				f.mu.Lock()
				first := !f.conflicted
				f.conflicted = true
				if first {
					f.conflicts++
				}
				f.mu.Unlock()
				if first {
					return apierrors.NewConflict(batchv1.Resource("jobs"), job.Name, errors.New("changed meanwhile"))
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if p, ok := obj.(*corev1.Pod); ok && p.Labels[benchv1.LabelRole] == benchv1.RoleDisturbance {
				f.mu.Lock()
				fail := !f.failedCreate
				f.failedCreate = true
				f.mu.Unlock()
				if fail {
					return errors.New("the manager died here")
				}
				err := c.Create(ctx, obj, opts...)
				if err == nil {
					f.mu.Lock()
					f.created++
					f.mu.Unlock()
				}
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	})
}

// A noisy neighbour is applied once and removed once through everything
// that breaks a reconcile: its record on the Job refused with a conflict,
// its creation failing after its intent was stored, and the manager
// restarted while it runs. The stress pod lands on the target's node by
// name, runs without a service-account token as non-root, is deleted when
// its window ends and is not made again; the measurement keeps what it did
// (requested, took effect, ended, removed), and status.disturbing is
// cleared once it is recorded.
func TestNoisyNeighbourOnceThroughConflictsAndRestarts(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	rd := testutil.StartRedis(t)
	faults := &faultyDisturber{}
	h.wrap = faults.wrap
	run := &benchv1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "noisy"},
		Spec: benchv1.BenchmarkRunSpec{
			Target:    benchv1.TargetSpec{Valkey: &benchv1.ValkeyTarget{}},
			Workload:  benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{Tests: []string{"set"}, Clients: []int32{4}}},
			Telemetry: benchv1.TelemetrySpec{ServerStatistics: benchv1.TelemetryDisabled},
			Disturbances: &benchv1.DisturbancesSpec{Schedule: []benchv1.Disturbance{{Name: "noise",
				At: &metav1.Duration{Duration: time.Second}, Duration: &metav1.Duration{Duration: 3 * time.Second},
				NoisyNeighbour: &benchv1.NoisyNeighbourDisturbance{CPUWorkers: 1}}}},
		},
	}
	h.Create(run)
	run = h.Run("noisy")
	h.RestartManager(cfg)
	markServerReady(t, h, specs.ValkeyName(run))
	target := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: specs.ValkeyName(run) + "-0", Namespace: h.NS, Labels: specs.ValkeyServer(run).Selector()},
		Spec:       corev1.PodSpec{NodeName: "db-1", Containers: []corev1.Container{{Name: "valkey", Image: "valkey/valkey:8.1"}}},
	}
	if err := k8s.Create(ctx, target); err != nil {
		t.Fatal(err)
	}
	job := h.WaitJob(specs.MeasureJobName(run, 0, 1))
	if !specs.HasStartBarrier(job) {
		t.Fatal("a disturbed measurement's Job has no start barrier")
	}
	lg := h.Pod(job, 0, node, kit.Running())
	stress := specs.NoisePodName(run, "noise", 0, 1)
	var pod corev1.Pod
	testutil.Eventually(t, 20*time.Second, "the stress pod", func() error {
		return k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: stress}, &pod)
	})
	if pod.Spec.NodeName != "db-1" || pod.Spec.AutomountServiceAccountToken == nil || *pod.Spec.AutomountServiceAccountToken ||
		pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("the stress pod is not on the target's node db-1, or has a token, or may run as root: %+v", pod.Spec)
	}
	uid := pod.UID
	// The kubelet starts it; the manager restarts meanwhile.
	started := metav1.NewTime(time.Now().Truncate(time.Second))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: pod.Spec.Containers[0].Name,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}}
	if err := k8s.Status().Update(ctx, &pod); err != nil {
		t.Fatal(err)
	}
	h.RestartManager(cfg)
	testutil.Eventually(t, 20*time.Second, "the stress pod deleted at the end of its window", func() error {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: stress}, &pod)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%w)", err)
	})
	// The tool ends after the window: the measurement is recorded.
	tool := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "4", "-n", "5000", "-t", "set", "--csv"}
	h.End(lg, "redis-benchmark", runner.Options{Command: tool})
	done := h.WaitPhase("noisy", 30*time.Second, benchv1.PhaseSucceeded, benchv1.PhaseInvalid)
	if len(done.Status.Disturbing) != 0 {
		t.Errorf("status.disturbing outlived the measurement: %+v", done.Status.Disturbing)
	}
	if done.Status.DisturbanceSeed == nil {
		t.Error("status.disturbanceSeed not recorded")
	}
	doc := h.ResultsDocument(t, done)
	res := doc.Steps[0].Repetitions[0].Result
	if len(res.Disturbances) != 1 {
		t.Fatalf("disturbances in the result: %+v", res.Disturbances)
	}
	d := res.Disturbances[0]
	if d.Requested == nil || d.TookEffect == nil || !d.TookEffect.Equal(started.Time) || d.Ended == nil || d.Removed == nil || d.Node != "db-1" {
		t.Errorf("the result does not keep what the neighbour did (took effect at the container's start %s): %+v", started, d)
	}
	faults.mu.Lock()
	defer faults.mu.Unlock()
	if faults.created != 1 || faults.conflicts != 1 {
		t.Errorf("stress pod created %d times (want once), %d conflicts played", faults.created, faults.conflicts)
	}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: stress}, &pod); !apierrors.IsNotFound(err) || pod.UID == uid && err == nil {
		t.Errorf("the stress pod is back after its removal: %v", err)
	}
}
