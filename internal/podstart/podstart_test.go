package podstart

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0)},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"pool": "standard-v4a"},
			Containers: []corev1.Container{{Name: "loadgen", Image: "redislabs/memtier_benchmark:2.1.1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

// The scheduler's own words (kube-scheduler 1.34) with what the pod asked
// for and where, without the note on preemption.
func TestUnschedulableSaysWhereAndWhatWasShort(t *testing.T) {
	p := pod("lg-0")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		LastTransitionTime: metav1.NewTime(t0.Add(2 * time.Second)),
		Message: "0/9 nodes are available: 3 Insufficient cpu, 6 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/9 nodes are available: " +
			"3 No preemption victims found for incoming pod, 6 Preemption is not helpful for scheduling."}}
	s := Why(p)
	if s == nil || s.Reason != "Unschedulable" || s.Final || !s.Since.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("%+v", s)
	}
	want := "pod lg-0 cannot start: Unschedulable: 0/9 nodes are available: 3 Insufficient cpu, 6 node(s) didn't match Pod's node affinity/selector. " +
		"(nodeSelector pool=standard-v4a; requests cpu 64, memory 8Gi)"
	if s.String() != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
}

func TestNotYetScheduledIsNotStuck(t *testing.T) {
	p := pod("lg-0")
	if s := Why(p); s != nil {
		t.Fatalf("a pod the scheduler has not looked at: %+v", s)
	}
	p.Spec.NodeName = "n1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(time.Second))}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "loadgen", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	if s := Why(p); s != nil {
		t.Fatalf("a pod being created: %+v", s)
	}
	if Started(p) {
		t.Fatal("not started")
	}
	if at, ok := ScheduledAt(p); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("scheduled at %v %v", at, ok)
	}
}

func TestImagePullBackOffNamesTheImage(t *testing.T) {
	p := pod("lg-0")
	p.Spec.NodeName = "n1"
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(time.Second))}}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "loadgen", Image: "redislabs/memtier_benchmark:2.1.1",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: `Back-off pulling image "redislabs/memtier_benchmark:2.1.1"`}}}}
	s := Why(p)
	if s == nil || s.Reason != "ImagePullBackOff" || s.Final || !strings.Contains(s.Message, `"redislabs/memtier_benchmark:2.1.1"`) {
		t.Fatalf("%+v", s)
	}
	// Without a message, the image is named from the pod's spec.
	p.Status.ContainerStatuses[0].State.Waiting.Message = ""
	if s := Why(p); !strings.Contains(s.Message, "image redislabs/memtier_benchmark:2.1.1 of container loadgen") {
		t.Fatalf("%+v", s)
	}
	p.Status.ContainerStatuses[0].State.Waiting.Reason = "InvalidImageName"
	if s := Why(p); !s.Final {
		t.Fatalf("an invalid image name is final: %+v", s)
	}
}

func TestConfigErrorAndCrashLoop(t *testing.T) {
	p := pod("pg-1")
	p.Spec.NodeName = "n1"
	p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "bootstrap",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "pg-app" not found`}}}}
	if s := Why(p); s == nil || s.Message != `container bootstrap: secret "pg-app" not found` {
		t.Fatalf("%+v", s)
	}
	p.Status.InitContainerStatuses = nil
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "postgres", RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "FATAL: invalid value for parameter \"shared_buffers\""}}}}
	if s := Why(p); s == nil || !strings.Contains(s.Message, "restarted 4 times, last exit code 1 (Error): FATAL: invalid value") {
		t.Fatalf("%+v", s)
	}
}

func TestEvictedIsFinal(t *testing.T) {
	p := pod("lg-0")
	p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
	p.Status.Message = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi."
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(time.Minute))}}
	s := Why(p)
	if s == nil || !s.Final || s.Reason != "Evicted" || !s.Since.Equal(t0.Add(time.Minute)) || !strings.Contains(s.Message, "low on resource: memory") {
		t.Fatalf("%+v", s)
	}
}

// A quota refusal leaves no pod: the Job controller's FailedCreate event says it.
func TestRefusedCreationFromEvents(t *testing.T) {
	ev := []corev1.Event{
		{Reason: "SuccessfulCreate", LastTimestamp: metav1.NewTime(t0)},
		{Reason: "FailedCreate", InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "r-measure-0-1"},
			FirstTimestamp: metav1.NewTime(t0.Add(time.Second)), LastTimestamp: metav1.NewTime(t0.Add(9 * time.Second)),
			Message: `Error creating: pods "r-measure-0-1-x2x9z" is forbidden: exceeded quota: perf, requested: pods=1, used: pods=0, limited: pods=0`},
	}
	s := Refused(ev)
	if s == nil || s.Pod != "" || !s.Since.Equal(t0.Add(time.Second)) ||
		s.String() != `FailedCreate: Job r-measure-0-1 could not create its pod: Error creating: pods "r-measure-0-1-x2x9z" is forbidden: exceeded quota: perf, requested: pods=1, used: pods=0, limited: pods=0` {
		t.Fatalf("%+v", s)
	}
	if Refused(ev[:1]) != nil {
		t.Fatal("no FailedCreate, nothing refused")
	}
	// The Job controller retries with backoff, each time with a new pod
	// name, so a new event: the message is the newest's, the time the first's.
	ev = append(ev, corev1.Event{Reason: "FailedCreate", InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "r-measure-0-1"},
		FirstTimestamp: metav1.NewTime(t0.Add(70 * time.Second)), LastTimestamp: metav1.NewTime(t0.Add(70 * time.Second)),
		Message: `Error creating: pods "r-measure-0-1-q7k2p" is forbidden: exceeded quota: perf`})
	s = Refused(ev)
	if s == nil || !s.Since.Equal(t0.Add(time.Second)) || !strings.Contains(s.Message, "q7k2p") {
		t.Fatalf("after a retry: %+v", s)
	}
}

func TestFirstPrefersFinalThenOldest(t *testing.T) {
	a := &Stuck{Pod: "a", Since: t0.Add(time.Minute)}
	b := &Stuck{Pod: "b", Since: t0}
	c := &Stuck{Pod: "c", Since: t0.Add(2 * time.Minute), Final: true}
	if got := First([]*Stuck{a, nil, b}); got != b {
		t.Fatalf("%+v", got)
	}
	if got := First([]*Stuck{a, b, c}); got != c {
		t.Fatalf("%+v", got)
	}
	if First(nil) != nil {
		t.Fatal("none")
	}
}

func TestMessagesAreBounded(t *testing.T) {
	p := pod("lg-0")
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: strings.Repeat("0/9 nodes are available: é ", 100)}}
	if s := Why(p); len(s.Message) > MaxMessageBytes+len("…") || !strings.HasSuffix(s.Message, "…") {
		t.Fatalf("%d bytes", len(s.Message))
	}
}
