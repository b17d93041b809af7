package controllers

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/controllers/targets"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// Chaos Mesh's kinds a network disturbance creates: an optional
// integration, used where the cluster serves them.
var (
	networkChaosGVK = schema.GroupVersionKind{Group: "chaos-mesh.org", Version: "v1alpha1", Kind: "NetworkChaos"}
	ioChaosGVK      = schema.GroupVersionKind{Group: "chaos-mesh.org", Version: "v1alpha1", Kind: "IOChaos"}
)

// chaosGVK is the Chaos Mesh kind a record names.
func chaosGVK(kind string) schema.GroupVersionKind {
	if kind == ioChaosGVK.Kind {
		return ioChaosGVK
	}
	return networkChaosGVK
}

func chaosKind(n *benchv1.NetworkDisturbance) schema.GroupVersionKind {
	if n.Action == benchv1.NetworkIODelay {
		return ioChaosGVK
	}
	return networkChaosGVK
}

// chaosMissing names the first network disturbance of a run whose Chaos
// Mesh kind the cluster does not serve, with why; "" when none.
func (r *BenchmarkRunReconciler) chaosMissing(run *benchv1.BenchmarkRun) (field, why string, err error) {
	if run.Spec.Disturbances == nil {
		return "", "", nil
	}
	for i, d := range run.Spec.Disturbances.Schedule {
		if d.Network == nil {
			continue
		}
		gvk := chaosKind(d.Network)
		ok, err := targets.Served(r.RESTMapper(), gvk)
		if err != nil {
			return "", "", err
		}
		if !ok {
			return fmt.Sprintf("spec.disturbances.schedule[%d].network", i),
				fmt.Sprintf("Chaos Mesh is not installed in this cluster (no %s): install it to use network disturbances, or remove %s", gvk.GroupVersion().String()+" "+gvk.Kind, d.Name), nil
		}
	}
	return "", "", nil
}

// chaosObject is the Chaos Mesh object of a network disturbance: on the
// target's pods (its pod selector), for the disturbance's duration.
func chaosObject(st *runState, p specs.Planned, name string, volumePath string) *unstructured.Unstructured {
	n := p.Network
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(chaosKind(n))
	u.SetNamespace(st.run.Namespace)
	u.SetName(name)
	u.SetLabels(specs.BaseLabels(st.run, benchv1.RoleDisturbance))
	u.SetOwnerReferences([]metav1.OwnerReference{specs.OwnerRef(st.run)})
	labels := map[string]any{}
	for k, v := range st.target.PodSelector {
		labels[k] = v
	}
	spec := map[string]any{
		"mode":     "all",
		"selector": map[string]any{"namespaces": []any{st.run.Namespace}, "labelSelectors": labels},
		"duration": fmt.Sprintf("%ds", int64(p.Duration().Seconds())),
	}
	latency, jitter := "", "0ms"
	if n.Latency != nil {
		latency = n.Latency.Duration.String()
	}
	if n.Jitter != nil {
		jitter = n.Jitter.Duration.String()
	}
	switch n.Action {
	case benchv1.NetworkDelay:
		spec["action"], spec["direction"] = "delay", "to"
		spec["delay"] = map[string]any{"latency": latency, "jitter": jitter, "correlation": "0"}
	case benchv1.NetworkLoss:
		spec["action"], spec["direction"] = "loss", "to"
		spec["loss"] = map[string]any{"loss": strconv.FormatFloat(float64(*n.LossPercent), 'f', -1, 64), "correlation": "0"}
	case benchv1.NetworkIODelay:
		spec["action"], spec["delay"], spec["percent"], spec["volumePath"] = "latency", latency, int64(100), volumePath
	}
	u.Object["spec"] = spec
	return u
}

// dataVolumePath is where the first container of the target's member
// mounts its first volume: what an IOChaos delays.
func dataVolumePath(member *corev1.Pod) string {
	for _, c := range member.Spec.Containers {
		for _, m := range c.VolumeMounts {
			return m.MountPath
		}
	}
	return ""
}

// injected says whether a Chaos Mesh object reports its fault injected
// into every selected pod (its AllInjected condition).
func injected(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "AllInjected" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// getChaos reads a disturbance's Chaos Mesh object; nil when it is gone.
func (r *BenchmarkRunReconciler) getChaos(ctx context.Context, ns, name string, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}
