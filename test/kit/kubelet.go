package kit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// The replay kubelet: envtest runs no kubelet, no scheduler and no Job
// controller, so the tests play them for the pods of workload Jobs. Pod
// creates a Job's pod bound to a node with the status the scheduler or the
// kubelet would give it (Running, Terminated, or any); Exec runs the real
// runner as the pod's container would (on a tool's recorded output, or a
// real tool) and keeps its log; End and SetStatus report what followed.
// Replay and Terminate do it all at once for a Job of one pod.

// Logs is the kubelet's log store: what the runner printed, by pod. It
// reads them to the operator as the API server's pods/log would.
type Logs struct {
	mu    sync.Mutex
	byPod map[string][]byte
}

// TailLog returns the pod's whole log.
func (l *Logs) TailLog(_ context.Context, ns, pod, _ string, _ int64) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.byPod[ns+"/"+pod]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("no log for %s/%s", ns, pod)
}

// Put keeps a pod's log.
func (l *Logs) Put(ns, pod string, b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byPod == nil {
		l.byPod = map[string][]byte{}
	}
	l.byPod[ns+"/"+pod] = b
}

// OnlyPod is the index of a Job's only pod (not an Indexed Job's).
const OnlyPod = -1

// Pod plays the Job controller and the scheduler: it creates the Job's pod
// (its only one, OnlyPod, named <job>-pod, or the pod of a completion
// index of an Indexed Job), bound to node ("" for none), and gives it
// status, as the scheduler or the kubelet would.
func (h *H) Pod(job *batchv1.Job, index int, node string, status corev1.PodStatus) *corev1.Pod {
	h.T.Helper()
	name, ann := job.Name+"-pod", job.Spec.Template.Annotations
	if index != OnlyPod {
		name = fmt.Sprintf("%s-%d-x", job.Name, index)
		ann = map[string]string{specs.AnnotationCompletionIndex: fmt.Sprint(index)}
		for k, v := range job.Spec.Template.Annotations {
			ann[k] = v
		}
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.NS, Labels: job.Spec.Template.Labels, Annotations: ann},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = node
	if err := h.Client.Create(context.Background(), pod); err != nil {
		h.T.Fatal(err)
	}
	h.SetStatus(pod, status)
	return pod
}

// SetStatus reports the pod's status as the kubelet would (a container's
// image is its spec's).
func (h *H) SetStatus(pod *corev1.Pod, status corev1.PodStatus) {
	h.T.Helper()
	for i, cs := range status.ContainerStatuses {
		if cs.Image == "" && cs.Name == specs.LoadgenName && len(pod.Spec.Containers) > 0 {
			status.ContainerStatuses[i].Image = pod.Spec.Containers[0].Image
		}
	}
	pod.Status = status
	if err := h.Client.Status().Update(context.Background(), pod); err != nil {
		h.T.Fatal(err)
	}
}

// Running is the status of a pod whose load generator runs (or waits at
// the start barrier).
func Running() corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: specs.LoadgenName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
}

// Terminated is the status of a pod whose load generator, started at
// started, has ended now with exit and the termination message.
func Terminated(exit int32, message string, started metav1.Time) corev1.PodStatus {
	phase := corev1.PodSucceeded
	if exit != 0 {
		phase = corev1.PodFailed
	}
	return corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: specs.LoadgenName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: exit, Message: message, StartedAt: started, FinishedAt: metav1.Now(), Reason: "Completed"}}}}}
}

// Exec runs a command through the runner as a workload pod's container
// would (o's Parser, SummaryFile and Stdout are the kubelet's) and keeps
// the runner's log as the pod's, before the caller reports the container
// ended: as on a node, the log exists first. It returns the result and the
// termination message.
func (h *H) Exec(pod, workload string, o runner.Options) (*results.Result, string) {
	h.T.Helper()
	w, err := registry.ByName(workload)
	if err != nil {
		h.T.Fatal(err)
	}
	summary := filepath.Join(h.T.TempDir(), "termination-log")
	var out bytes.Buffer
	o.Parser, o.SummaryFile, o.Stdout = w, summary, &out
	res := runner.Exec(context.Background(), o)
	if err := runner.Finish(res, summary, &out); err != nil {
		h.T.Fatal(err)
	}
	msg, err := os.ReadFile(summary)
	if err != nil {
		h.T.Fatal(err)
	}
	h.Logs.Put(h.NS, pod, out.Bytes())
	return res, string(msg)
}

// End runs the pod's tool through the runner with o and reports the
// running load generator ended with the runner's summary.
func (h *H) End(pod *corev1.Pod, workload string, o runner.Options) *results.Result {
	h.T.Helper()
	started := metav1.Now()
	res, msg := h.Exec(pod.Name, workload, o)
	if err := h.Client.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
		h.T.Fatal(err)
	}
	h.SetStatus(pod, Terminated(int32(runner.ExitCodeFor(res.Verdict)), msg, started))
	return res
}

// Replay plays a node for a Job of one pod: it runs the real runner on a
// tool's recorded output (a fixture, printed by `cat`), then creates the
// Job's pod on the node, its load generator ended with the message the
// runner wrote, whose log the operator reads.
func (h *H) Replay(job *batchv1.Job, node, workload, fixture string) {
	h.T.Helper()
	h.ReplayWith(job, node, workload, runner.Options{Command: []string{"cat", fixture}})
}

// ReplayWith is Replay of the command o runs (a real tool, a tool with a
// result file): the pod of the Job ends at once with the runner's result,
// which it returns.
func (h *H) ReplayWith(job *batchv1.Job, node, workload string, o runner.Options) *results.Result {
	h.T.Helper()
	o.Prepare = o.Prepare || job.Labels[benchv1.LabelRole] == benchv1.RolePrepare
	res, msg := h.Exec(job.Name+"-pod", workload, o)
	h.Terminate(job, node, int32(runner.ExitCodeFor(res.Verdict)), msg)
	return res
}

// Terminate creates the Job's pod on node, its load generator ended with
// exit and message.
func (h *H) Terminate(job *batchv1.Job, node string, exit int32, message string) {
	h.T.Helper()
	h.Pod(job, OnlyPod, node, Terminated(exit, message, metav1.Now()))
}

// StartLoadgen creates the Job's pod on node with its load generator
// running, as the kubelet would report it.
func (h *H) StartLoadgen(job *batchv1.Job, node string) *corev1.Pod {
	h.T.Helper()
	return h.Pod(job, OnlyPod, node, Running())
}

// Fixture is one of a tool's recorded outputs (test/fixtures/<tool>).
func Fixture(t testing.TB, tool, name string) string {
	return filepath.Join(testutil.FixturesDir(t, tool), name)
}

// WriteTemp writes content to a file of the test's and returns its path:
// a recorded output made up by the test.
func WriteTemp(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "output.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
