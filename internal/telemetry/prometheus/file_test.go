package prometheus

import (
	"strings"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// LoadFile sets every field it is given and keeps the defaults of the
// others; each refusal names the chart value to change.
func TestLoadFile(t *testing.T) {
	c, err := LoadFile([]byte(`
step: 2s
rateRange: 1m
timeout: 10s
labels: {namespace: kubernetes_namespace, pod: pod_name, container: container_name, node: nodename}
selectors:
  pod: job="kubelet",metrics_path="/metrics/cadvisor"
  node: job=~"node-exporter|node", instance!="x,y"
  networkDevice: device!~"lo|veth.*"
metrics: {cpuUsage: container_cpu_usage_seconds, nodeCPU: node_cpu_seconds}
queries:
- {name: appCPUCores, query: 'sum(rate(process_cpu_seconds_total{job="app"}[$window]))', unit: cores, direction: LowerIsBetter, subject: host/app-01, summary: max}
`), "http://prom:9090")
	if err != nil {
		t.Fatal(err)
	}
	if c.Address != "http://prom:9090" || c.Step != 2*time.Second || c.RateRange != time.Minute || c.Timeout != 10*time.Second {
		t.Errorf("durations and address: %+v", c)
	}
	if c.Labels != (Labels{Namespace: "kubernetes_namespace", Pod: "pod_name", Container: "container_name", Node: "nodename"}) {
		t.Errorf("labels %+v", c.Labels)
	}
	if c.PodSelector != `job="kubelet",metrics_path="/metrics/cadvisor"` || c.NetworkDeviceSelector != `device!~"lo|veth.*"` || c.ContainerSelector != "" {
		t.Errorf("selectors %q %q %q", c.PodSelector, c.NetworkDeviceSelector, c.ContainerSelector)
	}
	d := c.withDefaults()
	if d.ContainerSelector != `container_name!="",container_name!="POD"` || d.Metrics.CPUUsage != "container_cpu_usage_seconds" ||
		d.Metrics.NodeCPU != "node_cpu_seconds" || d.Metrics.MemoryWorkingSet != "container_memory_working_set_bytes" {
		t.Errorf("defaults under the file: %q %+v", d.ContainerSelector, d.Metrics)
	}
	if len(c.Queries) != 1 || c.Queries[0] != (Query{Name: "appCPUCores", Query: `sum(rate(process_cpu_seconds_total{job="app"}[$window]))`, Unit: "cores",
		Direction: results.LowerIsBetter, Subject: "host/app-01", Summary: "max"}) {
		t.Errorf("queries %+v", c.Queries)
	}
	if c, err := LoadFile([]byte("{}"), "http://p:9090"); err != nil || c.Step != 0 {
		t.Errorf("an empty file: %+v, %v", c, err)
	}

	for body, want := range map[string]string{
		"lables: {pod: pod_name}":                       `telemetry.prometheus: error unmarshaling JSON: while decoding JSON: json: unknown field "lables"`,
		"step: often":                                   `telemetry.prometheus.step: "often" is not a positive duration`,
		"rateRange: -30s":                               `telemetry.prometheus.rateRange: "-30s" is not a positive duration`,
		"labels: {pod: pod-name}":                       `telemetry.prometheus.labels.pod: "pod-name" is not a Prometheus label name`,
		"selectors: {node: job=node-exporter}":          `telemetry.prometheus.selectors.node: "job=node-exporter": "job=node-exporter" is not a matcher`,
		`selectors: {pod: 'job="a",'}`:                  `telemetry.prometheus.selectors.pod`,
		`selectors: {networkDevice: 'device=~"(lo"'}`:   `telemetry.prometheus.selectors.networkDevice`,
		"metrics: {cpuUsges: x}":                        `telemetry.prometheus.metrics.cpuUsges: not a series the source reads (one of cpuUsage, cpuUser`,
		"metrics: {nodeCPU: node-cpu}":                  `telemetry.prometheus.metrics.nodeCPU: "node-cpu" is not a Prometheus metric name`,
		"queries: [{name: App CPU, query: x}]":          `telemetry.prometheus.queries[0]: name "App CPU"`,
		"queries: [{name: a, query: x, summary: p99}]":  `telemetry.prometheus.queries[0] (a): summary "p99"`,
		"queries: [{name: a, query: x, direction: up}]": `telemetry.prometheus.queries[0] (a): direction "up"`,
		"step: x\nlabels: {node: a-b}":                  `telemetry.prometheus.step: "x" is not a positive duration such as 5s; telemetry.prometheus.labels.node`,
	} {
		_, err := LoadFile([]byte(body), "http://p:9090")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

func TestMetricKeys(t *testing.T) {
	keys := MetricKeys()
	for _, k := range []string{"cpuUsage", "cfsThrottledPeriods", "oomEvents", "fsReadBytes", "nodeCPU", "nodeDiskIOTime", "nodeNetworkTransmitPackets"} {
		if !strings.Contains(" "+strings.Join(keys, " ")+" ", " "+k+" ") {
			t.Errorf("%s not among %v", k, keys)
		}
	}
}
