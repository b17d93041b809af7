package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// judgeZones records, for a measurement, the zones of its load generators
// and of the target's primary (parameters loadgenZones and primaryZone),
// and with validity.loadGeneratorsInPrimaryZone makes it Invalid when a
// load generator ran in another zone than the primary: the zone boundary's
// latency would be measured with the database.
func (r *BenchmarkRunReconciler) judgeZones(ctx context.Context, st *runState, job *batchv1.Job, res *results.Result) error {
	on := st.run.Spec.Validity.LoadGeneratorsInPrimaryZone
	primary, primaryZone, err := r.primaryZone(ctx, st)
	if err != nil {
		return err
	}
	loadgens, err := r.loadgenPods(ctx, job)
	if err != nil {
		return err
	}
	zones := map[string]string{}
	for _, p := range loadgens {
		z, err := r.nodeZone(ctx, p.Spec.NodeName)
		if err != nil {
			return err
		}
		zones[p.Name] = z
	}
	if len(zones) > 0 {
		var all []string
		for _, z := range zones {
			all = append(all, orUnknown(z))
		}
		slices.Sort(all)
		res.SetParam("loadgenZones", strings.Join(slices.Compact(all), ","))
	}
	if primary != "" {
		res.SetParam("primaryZone", orUnknown(primaryZone))
	}
	if !on || res.Verdict == results.Failed {
		return nil
	}
	switch {
	case primary == "" && len(st.target.PodSelector) == 0:
		res.Warnings = append(res.Warnings, "validity.loadGeneratorsInPrimaryZone: the target has no pods in this cluster, so its zone is unknown and not judged")
		return nil
	case primary == "" && len(st.target.PrimarySelector) == 0:
		res.Warnings = append(res.Warnings, "validity.loadGeneratorsInPrimaryZone: the target has no single primary (a sharded cluster): zones not judged")
		return nil
	case primary == "":
		res.Warnings = append(res.Warnings, "validity.loadGeneratorsInPrimaryZone: no single scheduled pod of the target's primary was found after the measurement: zones not judged")
		return nil
	case primaryZone == "":
		res.Invalidate("validity.loadGeneratorsInPrimaryZone: the node of the target's primary %s has no %s label", primary, benchv1.ZoneLabel)
		return nil
	}
	for _, p := range loadgens {
		if z := zones[p.Name]; z != primaryZone {
			res.Invalidate("load generator %s ran in zone %s, the target's primary %s in zone %s (validity.loadGeneratorsInPrimaryZone)",
				p.Name, orUnknown(z), primary, primaryZone)
		}
	}
	return nil
}

// primaryZone is the target's primary pod and its node's zone; "" when
// the target has no single primary (an external endpoint, a sharded
// cluster) or its primary is not scheduled.
func (r *BenchmarkRunReconciler) primaryZone(ctx context.Context, st *runState) (string, string, error) {
	sel := st.target.PrimarySelector
	if len(sel) == 0 {
		return "", "", nil
	}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(st.run.Namespace), client.MatchingLabels(sel)); err != nil {
		return "", "", err
	}
	var live []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	if len(live) != 1 {
		return "", "", nil
	}
	z, err := r.nodeZone(ctx, live[0].Spec.NodeName)
	return live[0].Name, z, err
}

func (r *BenchmarkRunReconciler) nodeZone(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	var n corev1.Node
	if err := r.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", err
	}
	return firstLabel(n.Labels, []string{corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone}), nil
}

func orUnknown(z string) string {
	if z == "" {
		return fmt.Sprintf("unknown (no %s label)", benchv1.ZoneLabel)
	}
	return z
}
