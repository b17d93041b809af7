package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Kubelets reads one node's statistics summary.
type Kubelets interface {
	Summary(ctx context.Context, node string) (*stats.Summary, error)
}

// APIServer reads the kubelets through the API server's node proxy
// (GET /api/v1/nodes/<node>/proxy/stats/summary), which needs RBAC get on
// nodes/proxy.
type APIServer struct {
	client rest.Interface
}

var _ Kubelets = (*APIServer)(nil)

// NewAPIServer reads summaries with the clientset's core REST client.
func NewAPIServer(c kubernetes.Interface) *APIServer {
	return &APIServer{client: c.CoreV1().RESTClient()}
}

// Summary of one node's kubelet.
func (a *APIServer) Summary(ctx context.Context, node string) (*stats.Summary, error) {
	raw, err := a.client.Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").DoRaw(ctx)
	if err != nil {
		if len(raw) > 0 && len(raw) < 512 {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(raw)))
		}
		return nil, fmt.Errorf("while reading the statistics of node %s through the API server: %w", node, err)
	}
	var s stats.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("while decoding the statistics of node %s: %w", node, err)
	}
	return &s, nil
}

// NodeCPUCores reads the nodes' CPU capacity (status.capacity.cpu), the
// denominator of cpuBusyPercent, with the operator's existing nodes get. A
// node that cannot be read is left out; the sampler warns that its busy
// percentage is unknown.
func NodeCPUCores(ctx context.Context, c kubernetes.Interface, names []string) (map[string]float64, error) {
	out := map[string]float64{}
	var firstErr error
	for _, n := range names {
		node, err := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("while reading node %s: %w", n, err)
			}
			continue
		}
		if q, ok := node.Status.Capacity[corev1.ResourceCPU]; ok {
			out[n] = float64(q.MilliValue()) / 1000
		}
	}
	return out, firstErr
}
