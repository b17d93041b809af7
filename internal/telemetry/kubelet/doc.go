// Package kubelet is the telemetry source that reads the kubelets' Summary
// API (/stats/summary, k8s.io/kubelet/pkg/apis/stats/v1alpha1) through the
// API server's node proxy while a measurement runs: CPU, memory and network
// of the run's target and load-generator pods, and of the nodes they run
// on. It needs no Prometheus in the cluster.
//
// It is OPT-IN. Reading /api/v1/nodes/<node>/proxy/stats/summary needs RBAC
// get on nodes/proxy, and that permission reaches the whole kubelet API
// through the proxy, not only its statistics (pod logs of every pod on the
// node, and /exec or /run of a container on kubelets that accept GET for
// them). Grant it only where the operator is trusted that far
// (docs/security.md, "Kubernetes source").
//
// The kubelet's statistics are instantaneous: cumulative counters (CPU
// core-nanoseconds, network bytes) and gauges (working set) as of the last
// time the kubelet read them. A window cannot be read after it ended, so a
// Sampler polls every node from the window's start to its stop and keeps
// the readings in memory; Stop turns them into a telemetry.Report. A
// manager restart loses the readings of the window under way: Samplers.Stop
// then gives a warning instead of figures.
package kubelet
