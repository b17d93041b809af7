package prometheus

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Config says where Prometheus is and how this cluster names its series.
// Every field but Address has a default that fits current kubelets
// (cAdvisor through /metrics/cadvisor) and node_exporter.
type Config struct {
	// Address of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090.
	Address string
	// Namespace of the run's pods: every cAdvisor series is selected in it.
	Namespace string
	// Step between the samples of a series (default 5s).
	Step time.Duration
	// RateRange is the range of rate() for a series' samples: at least two
	// scrape intervals of the cluster (default 30s). Window figures do not
	// use it: they are taken over the window itself.
	RateRange time.Duration
	// Lag is how long after the window's end Collect waits before querying,
	// so that the last scrape of the window has landed (about one scrape
	// interval; default 0: the caller collects late enough).
	Lag time.Duration
	// Timeout of each query (default 30s).
	Timeout time.Duration
	Labels  Labels
	// ContainerSelector: matchers that pick containers, not pod cgroups or
	// the pause container, for per-container series (CPU, memory, disk).
	// Default `<container>!="",<container>!="POD"`.
	ContainerSelector string
	// PodSelector: extra matchers for every cAdvisor series, e.g.
	// `job="kubelet",metrics_path="/metrics/cadvisor"` (default none).
	PodSelector string
	// NodeSelector: extra matchers for every node_exporter series, e.g.
	// `job="node-exporter"` (default none).
	NodeSelector string
	// NetworkDeviceSelector picks the node's interfaces (default `device!="lo"`).
	NetworkDeviceSelector string
	Metrics               Metrics
	// Queries are the user's own, for what Kubernetes cannot see.
	Queries []Query
}

// Labels are the label names the cluster's series carry. Older kubelets
// say pod_name and container_name; node_exporter's node is usually its
// instance (relabelled to the node's name, or host:port: the port is
// ignored).
type Labels struct {
	Namespace string `json:"namespace,omitempty"` // default "namespace"
	Pod       string `json:"pod,omitempty"`       // default "pod"
	Container string `json:"container,omitempty"` // default "container"
	Node      string `json:"node,omitempty"`      // default "instance"
}

// Metrics are the series' names (defaults: cAdvisor's and node_exporter's).
type Metrics struct {
	CPUUsage, CPUUser, CPUSystem          string
	CFSThrottledPeriods, CFSPeriods       string
	MemoryWorkingSet, OOMEvents           string
	NetworkReceiveBytes                   string
	NetworkTransmitBytes                  string
	NetworkReceivePackets                 string
	NetworkTransmitPackets                string
	FSReadBytes, FSWriteBytes             string
	FSReads, FSWrites                     string
	NodeCPU                               string
	NodeMemoryTotal, NodeMemoryAvail      string
	NodeLoad1                             string
	NodeDiskIOTime, NodeDiskIOWeighted    string
	NodeDiskReadTime, NodeDiskWriteTime   string
	NodeDiskReads, NodeDiskWrites         string
	NodeDiskReadBytes, NodeDiskWriteBytes string
	NodeNetworkReceiveBytes               string
	NodeNetworkTransmitBytes              string
	NodeNetworkReceivePackets             string
	NodeNetworkTransmitPackets            string
}

// Query is a user-defined figure: PromQL for what Kubernetes cannot see
// (telemetry.Query: the install's, and a run's own).
type Query = telemetry.Query

// WindowPlaceholder in a user query is replaced by the window's duration.
const WindowPlaceholder = telemetry.WindowPlaceholder

var nameRE = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)

func (c Config) withDefaults() Config {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	if c.Step <= 0 {
		c.Step = 5 * time.Second
	}
	if c.RateRange <= 0 {
		c.RateRange = 30 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	def(&c.Labels.Namespace, "namespace")
	def(&c.Labels.Pod, "pod")
	def(&c.Labels.Container, "container")
	def(&c.Labels.Node, "instance")
	def(&c.ContainerSelector, fmt.Sprintf(`%s!="",%s!="POD"`, c.Labels.Container, c.Labels.Container))
	def(&c.NetworkDeviceSelector, `device!="lo"`)
	c.Metrics = c.Metrics.withDefaults()
	c.Queries = slices.Clone(c.Queries) // a copy of the caller's: one Config serves every run's source
	for i := range c.Queries {
		c.Queries[i] = queryDefaults(c.Queries[i])
	}
	return c
}

func (m Metrics) withDefaults() Metrics {
	for _, d := range []struct {
		v   *string
		def string
	}{
		{&m.CPUUsage, "container_cpu_usage_seconds_total"},
		{&m.CPUUser, "container_cpu_user_seconds_total"},
		{&m.CPUSystem, "container_cpu_system_seconds_total"},
		{&m.CFSThrottledPeriods, "container_cpu_cfs_throttled_periods_total"},
		{&m.CFSPeriods, "container_cpu_cfs_periods_total"},
		{&m.MemoryWorkingSet, "container_memory_working_set_bytes"},
		{&m.OOMEvents, "container_oom_events_total"},
		{&m.NetworkReceiveBytes, "container_network_receive_bytes_total"},
		{&m.NetworkTransmitBytes, "container_network_transmit_bytes_total"},
		{&m.NetworkReceivePackets, "container_network_receive_packets_total"},
		{&m.NetworkTransmitPackets, "container_network_transmit_packets_total"},
		{&m.FSReadBytes, "container_fs_reads_bytes_total"},
		{&m.FSWriteBytes, "container_fs_writes_bytes_total"},
		{&m.FSReads, "container_fs_reads_total"},
		{&m.FSWrites, "container_fs_writes_total"},
		{&m.NodeCPU, "node_cpu_seconds_total"},
		{&m.NodeMemoryTotal, "node_memory_MemTotal_bytes"},
		{&m.NodeMemoryAvail, "node_memory_MemAvailable_bytes"},
		{&m.NodeLoad1, "node_load1"},
		{&m.NodeDiskIOTime, "node_disk_io_time_seconds_total"},
		{&m.NodeDiskIOWeighted, "node_disk_io_time_weighted_seconds_total"},
		{&m.NodeDiskReadTime, "node_disk_read_time_seconds_total"},
		{&m.NodeDiskWriteTime, "node_disk_write_time_seconds_total"},
		{&m.NodeDiskReads, "node_disk_reads_completed_total"},
		{&m.NodeDiskWrites, "node_disk_writes_completed_total"},
		{&m.NodeDiskReadBytes, "node_disk_read_bytes_total"},
		{&m.NodeDiskWriteBytes, "node_disk_written_bytes_total"},
		{&m.NodeNetworkReceiveBytes, "node_network_receive_bytes_total"},
		{&m.NodeNetworkTransmitBytes, "node_network_transmit_bytes_total"},
		{&m.NodeNetworkReceivePackets, "node_network_receive_packets_total"},
		{&m.NodeNetworkTransmitPackets, "node_network_transmit_packets_total"},
	} {
		if *d.v == "" {
			*d.v = d.def
		}
	}
	return m
}

// validate refuses what would only fail later, naming the field.
func (c Config) validate() error {
	if c.Address == "" {
		return fmt.Errorf("prometheus: address is empty")
	}
	seen := map[string]bool{}
	for i, q := range c.Queries {
		field := fmt.Sprintf("prometheus: queries[%d]", i)
		if seen[q.Name] {
			return fmt.Errorf("%s: name %q is used twice", field, q.Name)
		}
		if err := validateQuery(field, q); err != nil {
			return err
		}
		seen[q.Name] = true
	}
	return nil
}

// queryDefaults: subject server, summary mean, direction Neutral.
func queryDefaults(q Query) Query {
	if q.Subject == "" {
		q.Subject = "server"
	}
	if q.Summary == "" {
		q.Summary = "mean"
	}
	if q.Direction == "" {
		q.Direction = results.Neutral
	}
	return q
}

// validateQuery refuses a query (with its defaults) that would only fail
// later, naming field.
func validateQuery(field string, q Query) error {
	switch {
	case !nameRE.MatchString(q.Name):
		return fmt.Errorf("%s: name %q is not a lowerCamel name with its unit (e.g. appCPUCores)", field, q.Name)
	case strings.TrimSpace(q.Query) == "":
		return fmt.Errorf("%s (%s): query is empty", field, q.Name)
	case q.Summary != "mean" && q.Summary != "max":
		return fmt.Errorf("%s (%s): summary %q is neither mean nor max", field, q.Name, q.Summary)
	}
	switch q.Direction {
	case results.HigherIsBetter, results.LowerIsBetter, results.Neutral:
	default:
		return fmt.Errorf("%s (%s): direction %q is not HigherIsBetter, LowerIsBetter or Neutral", field, q.Name, q.Direction)
	}
	return nil
}
