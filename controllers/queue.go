package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/internal/status"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
)

// A queued run is looked at again only when something it waits on changes
// (event-driven admission): another run ends or goes (wakeQueued),
// or a node is added, removed, relabelled, tainted or cordoned
// (nodeChanged). Beside that, each looks every five minutes (queueRecheck).

// queueRecheck is the safety net under the events: a queued run looks again
// this often even if no event woke it. The short chaos test once left a
// run queued for good after its blocker ended: the blocker's end reached
// the cache while the run's own move into Queued was still on its way, so
// wakeQueued found no queued run to wake, and the run's own status write
// brings it no reconcile (runChanged). becameQueued closes that gap; this
// look covers any other not foreseen, within five minutes. A thousand
// queued runs looking once a minute cost 5 % of a core (make scale).
const queueRecheck = 5 * time.Minute

// indexPhase indexes runs by status.phase, so the queued ones are listed
// without going through every run.
const indexPhase = "status.phase"

func phaseIndex(o client.Object) []string {
	if run, ok := o.(*benchv1.BenchmarkRun); ok {
		return []string{string(run.Status.Phase)}
	}
	return nil
}

// waiting says whether a run has not claimed its nodes yet.
func waiting(p benchv1.Phase) bool {
	return p == "" || p == benchv1.PhasePending || p == benchv1.PhaseQueued
}

// admit decides whether a run that has not started may claim its nodes. A
// run waits (phase Queued) while another run whose target or load
// generators may land on one of the same nodes is active, or is waiting
// and came first (first come, first served; nobody is overtaken). It
// returns the result to return when the run must wait, and nil otherwise.
func (r *BenchmarkRunReconciler) admit(ctx context.Context, run *benchv1.BenchmarkRun) (*ctrl.Result, error) {
	if !waiting(run.Status.Phase) {
		return nil, nil
	}
	blocker, shared, err := r.nodeConflict(ctx, run)
	if err != nil {
		return nil, err
	}
	if blocker == nil {
		if run.Status.Phase == benchv1.PhaseQueued {
			run.Status.Phase = "" // starts now: its timeout counts from here
		}
		return nil, nil
	}
	msg := fmt.Sprintf("waiting for BenchmarkRun %s/%s (%s), which may use the same nodes: %s; set spec.allowSharedNodes to run alongside it",
		blocker.Namespace, blocker.Name, phaseOrNone(blocker.Status.Phase), strings.Join(shared, ", "))
	run.Status.Phase = benchv1.PhaseQueued
	run.Status.ObservedGeneration = run.Generation
	setCondition(run, benchv1.ConditionAdmitted, metav1.ConditionFalse, benchv1.ReasonWaitingForNodes, msg)
	return &ctrl.Result{RequeueAfter: queueRecheck}, nil
}

// nodeConflict finds the first run the given one must wait for, and the
// nodes they could share.
func (r *BenchmarkRunReconciler) nodeConflict(ctx context.Context, run *benchv1.BenchmarkRun) (*benchv1.BenchmarkRun, []string, error) {
	if run.Spec.AllowSharedNodes {
		return nil, nil, nil
	}
	// The cache's objects are read, never changed, here: no copies of
	// every node and run for each queued run that looks.
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, err
	}
	mine := candidateNodes(run, nodes.Items)
	if len(mine) == 0 {
		return nil, nil, nil
	}
	var runs benchv1.BenchmarkRunList
	if err := r.List(ctx, &runs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, err
	}
	order := make([]*benchv1.BenchmarkRun, 0, len(runs.Items))
	for i := range runs.Items {
		other := &runs.Items[i]
		// Terminal runs have let go of their nodes; runs that wait too and
		// came later wait behind this one. A run the operator has not
		// looked at yet (no phase) that came first is first in line: it
		// may be admitted by a reconcile running beside this one, or
		// before the cache shows it, so this one waits for it.
		if other.UID == run.UID || other.Status.Phase.Terminal() || (waiting(other.Status.Phase) && !status.CreatedBefore(other, run)) {
			continue
		}
		order = append(order, other)
	}
	sort.Slice(order, func(i, j int) bool { return status.CreatedBefore(order[i], order[j]) })
	for _, other := range order {
		var shared []string
		for n := range candidateNodes(other, nodes.Items) {
			if mine[n] {
				shared = append(shared, n)
			}
		}
		if len(shared) > 0 {
			sort.Strings(shared)
			if len(shared) > 3 {
				shared = append(shared[:3], fmt.Sprintf("and %d more", len(shared)-3))
			}
			return other, shared, nil
		}
	}
	return nil, nil, nil
}

// candidateNodes are the nodes a run's pods may land on: its load
// generators' placement, and its target's for targets with pods here.
func candidateNodes(run *benchv1.BenchmarkRun, nodes []corev1.Node) map[string]bool {
	placements := []benchv1.Placement{run.Spec.Workload.Placement}
	if targets.RunsPods(run) {
		placements = append(placements, run.Spec.Target.Placement)
		if run.Spec.Target.ReplicaPlacement != nil {
			placements = append(placements, *run.Spec.Target.ReplicaPlacement)
		}
	}
	out := map[string]bool{}
	for _, p := range placements {
		pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: p.Selector(), Affinity: p.Affinity, Tolerations: p.Tolerations}}
		req := nodeaffinity.GetRequiredNodeAffinity(pod)
		for i := range nodes {
			n := &nodes[i]
			if ok, _ := req.Match(n); !ok {
				continue
			}
			// Taints a pool is dedicated with count; the node.kubernetes.io/
			// ones (not-ready, unreachable, pressure) come and go with the
			// node's state and say nothing about where pods may land.
			if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(n.Spec.Taints, p.Tolerations, func(t *corev1.Taint) bool {
				return (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) &&
					!strings.HasPrefix(t.Key, "node.kubernetes.io/")
			}); untolerated {
				continue
			}
			out[n.Name] = true
		}
	}
	return out
}

// wakeQueued enqueues every queued run when another run ends or is deleted
// (releasedNodes): that run may have been the one they wait for, so they
// are admitted as soon as it lets go of its nodes.
func (r *BenchmarkRunReconciler) wakeQueued(ctx context.Context, changed client.Object) []reconcile.Request {
	return r.queued(ctx, changed.GetUID())
}

// nodeChanged enqueues every queued run when a node comes, goes or changes
// what may land on it: the nodes a queued run may use, and so whom it
// waits for, may have changed.
func (r *BenchmarkRunReconciler) nodeChanged(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.queued(ctx, "")
}

func (r *BenchmarkRunReconciler) queued(ctx context.Context, except types.UID) []reconcile.Request {
	var runs benchv1.BenchmarkRunList
	if err := r.List(ctx, &runs, client.MatchingFields{indexPhase: string(benchv1.PhaseQueued)}, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "Listing runs to wake the queued ones")
		return nil
	}
	out := make([]reconcile.Request, 0, len(runs.Items))
	for i := range runs.Items {
		if q := &runs.Items[i]; q.UID != except {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(q)})
		}
	}
	return out
}

// releasedNodes passes what can end a queued run's wait: a run ending
// (terminal) and a run deleted. Nothing else lets go of nodes: a run that
// came first and is admitted still holds them, and a later one waits
// behind the queued run anyway. Waking every queued run at every phase
// change of any run was quadratic: a thousand runs queueing one after
// another woke each other half a million times.
var releasedNodes = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*benchv1.BenchmarkRun)
		n, ok2 := e.ObjectNew.(*benchv1.BenchmarkRun)
		return ok1 && ok2 && !o.Status.Phase.Terminal() && n.Status.Phase.Terminal()
	},
	DeleteFunc: func(event.DeleteEvent) bool { return true },
}

// becameQueued passes a run's own move into Queued (one of runChanged's
// terms). Its other status writes bring no reconcile, so without this a run whose blocker
// ended while its Queued status was on its way to the cache would not be
// woken (releasedNodes found no Queued run to wake) and would wait for
// good. Looked at once more, with a cache that has its Queued status and
// so the blocker's end, it goes on.
var becameQueued = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*benchv1.BenchmarkRun)
		n, ok2 := e.ObjectNew.(*benchv1.BenchmarkRun)
		return ok1 && ok2 && o.Status.Phase != benchv1.PhaseQueued && n.Status.Phase == benchv1.PhaseQueued
	},
}

// schedulingChanged passes node creations and deletions, and updates of
// what decides whether a run's pods may land on the node: its labels,
// taints and cordon (not its status, which changes every few seconds).
var schedulingChanged = predicate.Funcs{
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		return ok1 && ok2 && (!equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
			!equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints) || o.Spec.Unschedulable != n.Spec.Unschedulable)
	},
}
