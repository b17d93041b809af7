package specs

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The opensearch target kind: the official image, used when the spec names none.
const (
	DefaultOpenSearchImage = "opensearchproject/opensearch:2.19.1"
	OpenSearchPort         = 9200
	// OpenSearchKind is the kind as spec.target spells it; it names the generated Secrets.
	OpenSearchKind = "opensearch"
)

// The kind's default images, for the registry remap and the allow-list
// (images.go).
func init() {
	addDefaultImage("spec.target.opensearch.image", DefaultOpenSearchImage, func(t *benchv1.TargetSpec) *string {
		if t.OpenSearch == nil {
			return nil
		}
		return &t.OpenSearch.Image
	})
}

// OpenSearchServer is an OpenSearch cluster of Nodes pods, each cluster-
// manager eligible, without memory locking or mmap (which need host sysctls).
func OpenSearchServer(run *benchv1.BenchmarkRun) Server {
	t := run.Spec.Target.OpenSearch
	nodes := max(t.Nodes, 1)
	s := Server{Run: run, Name: ServerName(run, OpenSearchKind), Container: "opensearch", Image: orDefault(t.Image, DefaultOpenSearchImage),
		Port: OpenSearchPort, PortName: "http", Replicas: nodes, PeerPorts: []corev1.ContainerPort{{Name: "transport", ContainerPort: 9300}}, UID: 1000, DataPath: "/usr/share/opensearch/data", Storage: t.Storage,
		Resources: t.Resources, Args: t.Args}
	heap := orDefault(t.HeapSize, "1g")
	s.Env = []corev1.EnvVar{
		{Name: "cluster.name", Value: s.Name},
		{Name: "node.name", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "bootstrap.memory_lock", Value: "false"},
		{Name: "node.store.allow_mmap", Value: "false"},
		{Name: "OPENSEARCH_JAVA_OPTS", Value: "-Xms" + heap + " -Xmx" + heap},
	}
	if nodes == 1 {
		s.Env = append(s.Env, corev1.EnvVar{Name: "discovery.type", Value: "single-node"})
	} else {
		var names []string
		for i := range int(nodes) {
			names = append(names, fmt.Sprintf("%s-%d", s.Name, i))
		}
		s.Env = append(s.Env,
			corev1.EnvVar{Name: "discovery.seed_hosts", Value: s.HeadlessName()},
			corev1.EnvVar{Name: "cluster.initial_cluster_manager_nodes", Value: strings.Join(names, ",")})
	}
	if t.Security {
		s.User = "admin"
		s.Env = append(s.Env, secretEnv("OPENSEARCH_INITIAL_ADMIN_PASSWORD", CredentialsSecretName(run, OpenSearchKind), "password"))
	} else {
		s.Env = append(s.Env, corev1.EnvVar{Name: "plugins.security.disabled", Value: "true"},
			corev1.EnvVar{Name: "DISABLE_INSTALL_DEMO_CONFIG", Value: "true"}, corev1.EnvVar{Name: "DISABLE_SECURITY_PLUGIN", Value: "true"})
	}
	return s
}
