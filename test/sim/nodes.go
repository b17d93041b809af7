package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

var metav1GetOptions = metav1.GetOptions{}

// PoolLabel is the label that names a node's pool on the simulated nodes.
const PoolLabel = "pool"

// Pool is a group of identical simulated nodes.
type Pool struct {
	Name         string
	Nodes        int
	InstanceType string
	CPUModel     string // label dbperf.io/cpu-model (spaces as '_')
	Arch         string
	CPU, Memory  string
	Zones        []string
	Kernel       string
	OSImage      string
	Taints       []corev1.Taint
}

// DefaultPools are the pools the quickstart and the e2e tests use: two
// generations of database nodes, three each across three zones (a 3-node
// OpenSearch or a primary with two standbys keeps one member per node), and
// a pool for load generators.
func DefaultPools() []Pool {
	return []Pool{
		{Name: "standard-v3", Nodes: 3, InstanceType: "standard-v3-8", CPUModel: "Intel_Xeon_Platinum_8272CL", Arch: "amd64",
			CPU: "8", Memory: "32Gi", Zones: []string{"zone-a", "zone-b", "zone-c"}, Kernel: "5.15.0-1071-azure", OSImage: "Ubuntu 22.04.5 LTS"},
		{Name: "standard-v4a", Nodes: 3, InstanceType: "standard-v4a-8", CPUModel: "AMD_EPYC_9V74_80-Core_Processor", Arch: "amd64",
			CPU: "8", Memory: "32Gi", Zones: []string{"zone-a", "zone-b", "zone-c"}, Kernel: "6.8.0-1017-azure", OSImage: "Ubuntu 24.04.1 LTS"},
		{Name: "loadgen", Nodes: 2, InstanceType: "compute-16", CPUModel: "Intel_Xeon_Gold_6338", Arch: "amd64",
			CPU: "16", Memory: "32Gi", Zones: []string{"zone-a", "zone-b"}, Kernel: "6.8.0-1017-azure", OSImage: "Ubuntu 24.04.1 LTS"},
	}
}

// NodeName is the name of a pool's i-th node.
func NodeName(pool string, i int) string { return fmt.Sprintf("%s-%d", pool, i) }

// CreateNodes creates the pools' simulated nodes (idempotent).
func (c *Cluster) CreateNodes(ctx context.Context, pools []Pool) error {
	for _, p := range pools {
		for i := 0; i < p.Nodes; i++ {
			name := NodeName(p.Name, i)
			zone := p.Zones[i%len(p.Zones)]
			capacity := corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse(p.CPU),
				corev1.ResourceMemory: resource.MustParse(p.Memory),
				corev1.ResourcePods:   resource.MustParse("110"),
			}
			n := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{
					Name: name,
					Labels: map[string]string{
						PoolLabel:                          p.Name,
						"kubernetes.io/hostname":           name,
						"kubernetes.io/arch":               p.Arch,
						"kubernetes.io/os":                 "linux",
						"node.kubernetes.io/instance-type": p.InstanceType,
						"topology.kubernetes.io/region":    "local-1",
						"topology.kubernetes.io/zone":      zone,
						"dbperf.io/cpu-model":              p.CPUModel,
						"type":                             "kwok",
					},
					// kwok manages nodes annotated this way.
					Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				},
				Spec: corev1.NodeSpec{Taints: p.Taints},
				// Nodes may carry their status on create; kwok keeps it.
				Status: corev1.NodeStatus{
					Capacity: capacity, Allocatable: capacity,
					NodeInfo: corev1.NodeSystemInfo{
						Architecture: p.Arch, OperatingSystem: "linux", OSImage: p.OSImage, KernelVersion: p.Kernel,
						KubeletVersion: "v1.34.3", ContainerRuntimeVersion: "dbperf-executor://local",
					},
				},
			}
			if _, err := c.Clientset.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create node %s: %w", name, err)
			}
		}
	}
	return c.waitNodesReady(ctx, pools)
}

func (c *Cluster) waitNodesReady(ctx context.Context, pools []Pool) error {
	want := 0
	for _, p := range pools {
		want += p.Nodes
	}
	return testutil.Poll(ctx, time.Minute, 200*time.Millisecond, "nodes Ready", func() error {
		nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready < want {
			return fmt.Errorf("%d of %d nodes Ready", ready, want)
		}
		return nil
	})
}
