package specs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// The keys of a host's Secret (spec.telemetry.hosts[].nodeExporter.secretRef).
const (
	hostKeyUsername = "username"
	hostKeyPassword = "password"
	hostKeyToken    = "token"
	hostKeyCA       = "ca.crt"
)

// hostEndpoints are the hosts the runner reads from their node_exporter:
// a database host of a target with no pods here (AvoidPods, the target's
// pod selector, is empty: an endpoint the run does not own) stands for
// the target's CPU.
func hostEndpoints(p JobParams) []pod.HostEndpoint {
	var out []pod.HostEndpoint
	for i, h := range p.Run.Spec.Telemetry.Hosts {
		if h.NodeExporter == nil {
			continue // read through Prometheus by the manager
		}
		role := h.Role
		if role == "" {
			role = benchv1.HostOther
		}
		out = append(out, pod.HostEndpoint{Name: h.Name, Role: string(role), URL: h.NodeExporter.URL, Index: i,
			Target:             role == benchv1.HostDatabase && len(p.AvoidPods) == 0,
			InsecureSkipVerify: h.NodeExporter.InsecureSkipVerify})
	}
	return out
}

// hostEnv are the variables of the hosts' credentials and CAs, each from
// its key of the host's Secret when it has that key (optional references:
// a Secret holds a token or a username and password, a CA or not).
func hostEnv(run *benchv1.BenchmarkRun) []corev1.EnvVar {
	var env []corev1.EnvVar
	for i, h := range run.Spec.Telemetry.Hosts {
		if h.NodeExporter == nil || h.NodeExporter.SecretRef == nil {
			continue
		}
		ref := h.NodeExporter.SecretRef
		for _, kv := range [][2]string{{pod.HostEnvUsername, hostKeyUsername}, {pod.HostEnvPassword, hostKeyPassword},
			{pod.HostEnvToken, hostKeyToken}, {pod.HostEnvCA, hostKeyCA}} {
			env = append(env, corev1.EnvVar{Name: pod.HostEnv(i, kv[0]), ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: *ref, Key: kv[1], Optional: ptr.To(true)}}})
		}
	}
	return env
}
