package controllers

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxTargetEvents bounds the endpoint changes and node transitions one
// disturbance records (they live in the Job's annotation).
const maxTargetEvents = 8

// endpointChange is the target's Service showing other ready endpoints.
type endpointChange struct {
	Time metav1.MicroTime `json:"t"`
	// Ready are the pods behind the Service's ready endpoints, sorted;
	// empty when none is ready.
	Ready []string `json:"ready"`
}

// nodeNotReady is a node of the target's pods leaving Ready.
type nodeNotReady struct {
	Node   string      `json:"node"`
	Time   metav1.Time `json:"t"`
	Reason string      `json:"reason,omitempty"`
}

// serviceOf is the name of the Service behind a target's endpoint host
// ("pg-rw", "pg-rw.perf", "pg-rw.perf.svc.cluster.local"); "" for a host
// that is no Service of the run's namespace.
func serviceOf(host, ns string) string {
	name, rest, dotted := strings.Cut(host, ".")
	if !dotted || rest == ns || strings.HasPrefix(rest, ns+".svc") {
		return name
	}
	return ""
}

// observeTargetEvents records, while a member loss acts, what the
// target's clients and nodes show: the ready endpoints of the Service the
// load generators connect to changing (away from the lost member, none
// between), and a node of the target's pods leaving Ready. It reads past
// the cache (EndpointSlices are not watched) and records nothing where
// the operator may not read them.
func (r *BenchmarkRunReconciler) observeTargetEvents(ctx context.Context, st *runState, d *disturbRecord) error {
	reader := client.Reader(r.Client)
	if r.APIReader != nil {
		reader = r.APIReader
	}
	ns := st.run.Namespace
	if svc := serviceOf(st.target.Endpoint.Host, ns); svc != "" && len(d.Endpoints) < maxTargetEvents {
		var eps discoveryv1.EndpointSliceList
		err := reader.List(ctx, &eps, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: svc})
		switch {
		case apierrors.IsForbidden(err):
		case err != nil:
			return err
		default:
			ready := readyPods(eps.Items)
			if n := len(d.Endpoints); n == 0 || !slices.Equal(d.Endpoints[n-1].Ready, ready) {
				d.Service = svc
				d.Endpoints = append(d.Endpoints, endpointChange{Time: metav1.NewMicroTime(time.Now()), Ready: ready})
			}
		}
	}
	if len(st.target.PodSelector) == 0 || len(d.NotReady) >= maxTargetEvents {
		return nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(st.target.PodSelector)); err != nil {
		return err
	}
	nodes := []string{d.Node}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	for _, name := range nodes {
		if name == "" {
			continue
		}
		var n corev1.Node
		if err := r.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type != corev1.NodeReady || c.Status == corev1.ConditionTrue || d.RequestedTime == nil || c.LastTransitionTime.Before(&metav1.Time{Time: d.RequestedTime.Add(-time.Second)}) {
				continue
			}
			seen := slices.ContainsFunc(d.NotReady, func(x nodeNotReady) bool { return x.Node == name && x.Time.Equal(&c.LastTransitionTime) })
			if !seen && len(d.NotReady) < maxTargetEvents {
				d.NotReady = append(d.NotReady, nodeNotReady{Node: name, Time: c.LastTransitionTime, Reason: c.Reason})
			}
		}
	}
	return nil
}

// readyPods are the pods behind the ready endpoints of a Service's slices.
func readyPods(items []discoveryv1.EndpointSlice) []string {
	out := []string{}
	for _, s := range items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			name := strings.Join(ep.Addresses, ",")
			if ep.TargetRef != nil {
				name = ep.TargetRef.Name
			}
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}
