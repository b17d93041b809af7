package controllers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// What brings a run's reconcile. Every update of a run's Job and pods (a
// scheduler's binding, a pod IP, a Job's active count, a finalizer coming
// off) and every status write of the run's own used to: about a dozen
// reconciles per measurement, most of which found nothing to do and kept
// the runs that had something to do waiting in the work queue (a thousand
// runs at once: tens of seconds from a load generator's end to its run's
// terminal status). These predicates pass what a phase reads.

// runChanged passes a run's creation and deletion and the changes of what
// a person or a tool sets: the spec (its generation), labels and
// annotations (kubectl dbperf reject). The run's status is the operator's
// own: its writes do not bring another reconcile (a refused write asks for
// one itself), but for its move into Queued (becameQueued).
var runChanged = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
	predicate.LabelChangedPredicate{}, becameQueued)

// ofRun passes objects that carry a run's UID label.
var ofRun = predicate.NewPredicateFuncs(func(o client.Object) bool {
	_, ok := o.GetLabels()[benchv1.LabelRunUID]
	return ok
})

// podChanged passes a pod's creation and deletion and the changes a run
// reads: its node, phase, readiness, containers' states and restarts (the
// start barrier, a load generator's end, a target's restart), annotations
// and labels, and why it is not scheduled or a container waits (a pod that
// cannot start is named at once).
var podChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Pod)
		n, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return true
		}
		return o.Spec.NodeName != n.Spec.NodeName || o.Status.Phase != n.Status.Phase || o.Status.Reason != n.Status.Reason ||
			!n.DeletionTimestamp.Equal(o.DeletionTimestamp) ||
			!equality.Semantic.DeepEqual(o.Labels, n.Labels) || !equality.Semantic.DeepEqual(o.Annotations, n.Annotations) ||
			ready(o) != ready(n) || scheduling(o) != scheduling(n) || !sameContainers(o.Status.InitContainerStatuses, n.Status.InitContainerStatuses) ||
			!sameContainers(o.Status.ContainerStatuses, n.Status.ContainerStatuses)
	},
}

// scheduling is the pod's PodScheduled status and reason.
func scheduling(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

func ready(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

// sameContainers compares what a run reads of containers: each one's
// state (waiting, running, terminated), readiness and restarts.
func sameContainers(a, b []corev1.ContainerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	state := func(s corev1.ContainerState) string {
		switch {
		case s.Terminated != nil:
			return "terminated"
		case s.Running != nil:
			return "running"
		case s.Waiting != nil:
			return "waiting/" + s.Waiting.Reason // ImagePullBackOff is news
		}
		return ""
	}
	for i := range a {
		if a[i].Name != b[i].Name || state(a[i].State) != state(b[i].State) || a[i].Ready != b[i].Ready ||
			a[i].RestartCount != b[i].RestartCount {
			return false
		}
	}
	return true
}

// jobChanged passes a Job's creation and deletion and changes of its
// outcome: its conditions (Complete, Failed) and its counts of pods that
// ended.
var jobChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*batchv1.Job)
		n, ok2 := e.ObjectNew.(*batchv1.Job)
		if !ok1 || !ok2 {
			return true
		}
		return o.Status.Succeeded != n.Status.Succeeded || o.Status.Failed != n.Status.Failed ||
			!n.DeletionTimestamp.Equal(o.DeletionTimestamp) || !equality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions)
	},
}
