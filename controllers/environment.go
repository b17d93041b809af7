package controllers

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// poolLabels are the node labels that name a node pool, most specific first.
var poolLabels = []string{
	"pool", "dbperf.io/pool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup",
	"karpenter.sh/nodepool", "kubernetes.azure.com/agentpool", "agentpool", "node.kubernetes.io/pool",
}

// cpuModelLabels name the CPU model, as set by node-feature-discovery or by hand.
var cpuModelLabels = []string{"dbperf.io/cpu-model", "feature.node.kubernetes.io/cpu-model.name", "cpu-model"}

// environment records the nodes the run used, the images, and the versions.
func (r *BenchmarkRunReconciler) environment(ctx context.Context, st *runState) (*benchv1.Environment, error) {
	run := st.run
	roles := map[string]map[string]bool{}
	var instances []benchv1.InstanceInfo
	loadgenNodes := map[string]bool{}
	addPods := func(sel map[string]string, role string) error {
		if len(sel) == 0 {
			return nil
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(run.Namespace), client.MatchingLabels(sel)); err != nil {
			return err
		}
		sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				continue
			}
			if roles[p.Spec.NodeName] == nil {
				roles[p.Spec.NodeName] = map[string]bool{}
			}
			roles[p.Spec.NodeName][role] = true
			// Every target pod; one load generator per node (a run has
			// one pod per measurement and load generator).
			if role == "loadgen" {
				if loadgenNodes[p.Spec.NodeName] {
					continue
				}
				loadgenNodes[p.Spec.NodeName] = true
			}
			instances = append(instances, benchv1.InstanceInfo{Name: p.Name, Role: instanceRole(&p, role, st.target.RoleLabels), Node: p.Spec.NodeName})
		}
		return nil
	}
	if err := addPods(map[string]string{benchv1.LabelRunUID: string(run.UID), benchv1.LabelRole: benchv1.RoleLoadgen}, "loadgen"); err != nil {
		return nil, err
	}
	if err := addPods(st.target.PodSelector, "target"); err != nil {
		return nil, err
	}
	env := &benchv1.Environment{
		KubernetesVersion: r.KubernetesVersion, OperatorVersion: r.OperatorVersion,
		Images: map[string]string{"runner": r.RunnerImage},
	}
	env.Images["loadgen"] = st.loadgenImage()
	if st.target.Image != "" {
		env.Images["target"] = st.target.Image
	}
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		info := benchv1.NodeInfo{Name: name}
		for role := range roles[name] {
			info.Roles = append(info.Roles, role)
		}
		sort.Strings(info.Roles)
		var node corev1.Node
		err := r.Get(ctx, client.ObjectKey{Name: name}, &node)
		if apierrors.IsNotFound(err) {
			env.Nodes = append(env.Nodes, info)
			continue
		}
		if err != nil {
			return nil, err
		}
		describeNode(&info, &node)
		env.Nodes = append(env.Nodes, info)
	}
	byNode := map[string]benchv1.NodeInfo{}
	for _, n := range env.Nodes {
		byNode[n.Name] = n
	}
	for i := range instances {
		n := byNode[instances[i].Node]
		instances[i].Pool, instances[i].Zone = n.Pool, n.Zone
	}
	if len(instances) > maxInstances {
		instances = instances[:maxInstances]
	}
	env.Instances = instances
	env.Volumes = st.target.Volumes
	return env, nil
}

// maxInstances bounds status.environment.instances (its schema's MaxItems).
const maxInstances = 512

// instanceRole is the part a pod plays: a load generator, or the role its
// target's labels give it (the operator's own label, or another
// operator's, such as CloudNativePG's instance role), else the one server.
func instanceRole(p *corev1.Pod, role string, roleLabels []string) benchv1.InstanceRole {
	if role == "loadgen" {
		return benchv1.InstanceLoadGenerator
	}
	for _, l := range append([]string{benchv1.LabelInstanceRole}, roleLabels...) {
		if v := p.Labels[l]; v != "" {
			return benchv1.InstanceRole(v)
		}
	}
	return benchv1.InstanceServer
}

func describeNode(info *benchv1.NodeInfo, node *corev1.Node) {
	l := node.Labels
	info.Pool = firstLabel(l, poolLabels)
	info.InstanceType = firstLabel(l, []string{corev1.LabelInstanceTypeStable, corev1.LabelInstanceType})
	info.Zone = firstLabel(l, []string{corev1.LabelTopologyZone, corev1.LabelFailureDomainBetaZone})
	info.Arch = firstLabel(l, []string{corev1.LabelArchStable})
	if info.Arch == "" {
		info.Arch = node.Status.NodeInfo.Architecture
	}
	info.KernelVersion = node.Status.NodeInfo.KernelVersion
	info.OSImage = node.Status.NodeInfo.OSImage
	info.CPUModel = strings.ReplaceAll(firstLabel(l, cpuModelLabels), "_", " ")
	info.AllocatableFrom(node.Status.Allocatable)
}

func firstLabel(labels map[string]string, keys []string) string {
	for _, k := range keys {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return ""
}
