package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry/prometheus"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// The chart's telemetry.prometheus values reach the manager: rendered into
// a ConfigMap mounted where --prometheus-config reads it, which the
// manager's own loader reads back into the settings set; a change of them
// changes the pod's checksum (the manager restarts with them). Without
// the Prometheus source nothing of it is rendered.
func TestPrometheusSettingsReachTheManager(t *testing.T) {
	objs := render(t, "telemetry.resources=prometheus", "telemetry.prometheus.url=http://prom.monitoring:9090",
		"telemetry.prometheus.labels.pod=pod_name", "telemetry.prometheus.labels.container=container_name",
		`telemetry.prometheus.selectors.node=job="node-exporter"`, "telemetry.prometheus.metrics.nodeCPU=node_cpu_seconds",
		"telemetry.prometheus.step=2s", "telemetry.prometheus.queries[0].name=appCPUCores",
		`telemetry.prometheus.queries[0].query=sum(rate(process_cpu_seconds_total{job="app"}[$window]))`,
		"telemetry.prometheus.queries[0].subject=host/app-01")
	cm := one[corev1.ConfigMap](t, objs, "ConfigMap") // the chart's only one
	if cm.Name != "rel-dbperf-operator-prometheus" || cm.Namespace != "perf-system" {
		t.Fatalf("ConfigMap %s/%s", cm.Namespace, cm.Name)
	}
	cfg, err := prometheus.LoadFile([]byte(cm.Data["prometheus.yaml"]), "http://prom.monitoring:9090")
	if err != nil {
		t.Fatalf("the manager refuses the rendered settings: %v\n%s", err, cm.Data["prometheus.yaml"])
	}
	if cfg.Labels.Pod != "pod_name" || cfg.Labels.Container != "container_name" || cfg.Labels.Node != "instance" ||
		cfg.NodeSelector != `job="node-exporter"` || cfg.Metrics.NodeCPU != "node_cpu_seconds" || cfg.Step.String() != "2s" ||
		len(cfg.Queries) != 1 || cfg.Queries[0].Subject != "host/app-01" {
		t.Errorf("settings read back: %+v", cfg)
	}
	dep := one[appsv1.Deployment](t, objs, "Deployment")
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	if !slices.Contains(c.Args, "--prometheus-config=/etc/dbperf/prometheus/prometheus.yaml") || len(c.VolumeMounts) != 1 ||
		c.VolumeMounts[0].MountPath != "/etc/dbperf/prometheus" || len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil ||
		pod.Volumes[0].ConfigMap.Name != cm.Name {
		t.Errorf("args %v, mounts %+v, volumes %+v", c.Args, c.VolumeMounts, pod.Volumes)
	}
	sum := dep.Spec.Template.Annotations["checksum/prometheus"]
	other := one[appsv1.Deployment](t, render(t, "telemetry.resources=prometheus", "telemetry.prometheus.url=http://prom.monitoring:9090",
		"telemetry.prometheus.labels.pod=pod"), "Deployment").Spec.Template.Annotations["checksum/prometheus"]
	if sum == "" || sum == other {
		t.Errorf("checksums %q and %q: want two different ones", sum, other)
	}

	none := render(t)
	for _, c := range ofKind(none, "ConfigMap") {
		if strings.HasSuffix(c.GetName(), "-prometheus") {
			t.Errorf("rendered without the Prometheus source: %s", c.GetName())
		}
	}
	if p := one[appsv1.Deployment](t, none, "Deployment").Spec.Template.Spec; len(p.Volumes) != 0 || len(p.Containers[0].VolumeMounts) != 0 {
		t.Errorf("volumes without the Prometheus source: %+v", p.Volumes)
	}
}

// Every series the source reads is a key of the schema's
// telemetry.prometheus.metrics, and nothing else is.
func TestSchemaKnowsEveryPrometheusMetric(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "charts", "dbperf-operator", "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Telemetry struct {
				Properties struct {
					Prometheus struct {
						Properties struct {
							Metrics struct {
								Properties map[string]any `json:"properties"`
							} `json:"metrics"`
						} `json:"properties"`
					} `json:"prometheus"`
				} `json:"properties"`
			} `json:"telemetry"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range schema.Properties.Telemetry.Properties.Prometheus.Properties.Metrics.Properties {
		got = append(got, k)
	}
	want := prometheus.MetricKeys()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("schema's metrics keys %v, the source's %v", got, want)
	}
}
