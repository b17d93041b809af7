package targets

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
)

// OnPlacement says whether a node is one a placement allows: its
// nodeSelector with its zone, and its required node affinity.
func OnPlacement(node *corev1.Node, pl benchv1.Placement) bool {
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: pl.Selector(), Affinity: pl.Affinity}}
	ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return ok
}

// where names a node and its zone for messages.
func where(node *corev1.Node) string {
	if z := node.Labels[benchv1.ZoneLabel]; z != "" {
		return fmt.Sprintf("node %s in zone %s", node.Name, z)
	}
	return "node " + node.Name + " (no zone label)"
}

// placeCNPGRoles puts a CloudNativePG cluster's primary and standbys where
// target.placement and target.replicaPlacement ask. CloudNativePG places
// every instance alike (on either placement's nodes: specs.CNPGCluster), so
// once the cluster is healthy the primary is switched over, as `kubectl
// cnpg promote` does, to a standby on the primary's placement when it is
// not on it; a standby off the replicas' placement cannot be moved and
// leaves the target not ready, saying where every instance is. ok is true
// when every instance is where it must be.
func placeCNPGRoles(ctx context.Context, c client.Client, run *benchv1.BenchmarkRun, cluster *unstructured.Unstructured, o Observed) (Observed, bool, error) {
	t := &run.Spec.Target
	if t.ReplicaPlacement == nil {
		return o, true, nil
	}
	// A switchover in progress was reported before (Postgres.Ensure).
	current, _, _ := unstructured.NestedString(cluster.Object, "status", "currentPrimary")
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(specs.CNPGInstancePods(cluster.GetName()))); err != nil {
		return o, false, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	nodes := map[string]*corev1.Node{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("instance %s is not scheduled yet", p.Name)), false, nil
		}
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &n); err != nil {
			return o, false, fmt.Errorf("while reading node %s of instance %s: %w", p.Spec.NodeName, p.Name, err)
		}
		nodes[p.Name] = &n
	}
	primary, ok := nodes[current]
	if !ok {
		return notReady(o, benchv1.ReasonProvisioning, fmt.Sprintf("waiting for the primary %q among the instance pods", current)), false, nil
	}
	if !OnPlacement(primary, t.Placement) {
		for _, p := range pods.Items {
			if p.Name == current || !OnPlacement(nodes[p.Name], t.Placement) {
				continue
			}
			if err := promote(ctx, c, cluster, p.Name, "the benchmark's placement"); err != nil {
				return o, false, fmt.Errorf("while switching the primary over to %s: %w", p.Name, err)
			}
			return notReady(o, benchv1.ReasonSwitchingOver, fmt.Sprintf("the primary %s is on %s, off spec.target.placement: switching over to %s on %s",
				current, where(primary), p.Name, where(nodes[p.Name]))), false, nil
		}
		return notReady(o, benchv1.ReasonPlacementUnsatisfied, fmt.Sprintf("no instance is on spec.target.placement for the primary: %s", layout(pods.Items, nodes, current))), false, nil
	}
	for _, p := range pods.Items {
		if p.Name != current && !OnPlacement(nodes[p.Name], *t.ReplicaPlacement) {
			return notReady(o, benchv1.ReasonPlacementUnsatisfied, fmt.Sprintf("standby %s is on %s, off spec.target.replicaPlacement: %s",
				p.Name, where(nodes[p.Name]), layout(pods.Items, nodes, current))), false, nil
		}
	}
	return o, true, nil
}

func layout(pods []corev1.Pod, nodes map[string]*corev1.Node, primary string) string {
	s := ""
	for i, p := range pods {
		role := "standby"
		if p.Name == primary {
			role = "primary"
		}
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("%s %s on %s", role, p.Name, where(nodes[p.Name]))
	}
	return s
}

// promote asks CloudNativePG for a switchover to instance, as `kubectl cnpg
// promote` does: the cluster's status names the target primary.
func promote(ctx context.Context, c client.Client, cluster *unstructured.Unstructured, instance, why string) error {
	patch := fmt.Sprintf(`{"status":{"targetPrimary":%q,"targetPrimaryTimestamp":%q,"phase":"Switchover in progress","phaseReason":"Switching over to %s for %s"}}`,
		instance, time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), instance, why)
	return c.Status().Patch(ctx, cluster, client.RawPatch(types.MergePatchType, []byte(patch)))
}
