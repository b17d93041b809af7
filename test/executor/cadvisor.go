package executor

import (
	"net/http"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// cadvisorHandler is the kubelet's /metrics/cadvisor: cAdvisor's container_*
// series of every pod the executor runs or adopted, read from the same pod
// cgroups as /stats/summary, with a real kubelet's labels (namespace, pod,
// container, id, image, name). As cAdvisor does, each pod has two sets of
// series: its pod cgroup's (container="") and its container's; here they
// are one cgroup, so they carry the same counters, and a query that does
// not pick containers counts the pod twice, as it would on a cluster.
// Like the summary's, the series come from whoever asks: every simulated
// node is this machine, so scrape the endpoint once, not once per node.
// The pods share the host's network: no network series.
func (e *Executor) cadvisorHandler() http.Handler {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(cadvisorCollector{e})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

var cadvisorLabels = []string{"container", "id", "image", "name", "namespace", "pod"}

func cadvisorDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, cadvisorLabels, nil)
}

var (
	descCPUUsage     = cadvisorDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.")
	descCPUUser      = cadvisorDesc("container_cpu_user_seconds_total", "Cumulative user cpu time consumed in seconds.")
	descCPUSystem    = cadvisorDesc("container_cpu_system_seconds_total", "Cumulative system cpu time consumed in seconds.")
	descCFSPeriods   = cadvisorDesc("container_cpu_cfs_periods_total", "Number of elapsed enforcement period intervals.")
	descCFSThrottled = cadvisorDesc("container_cpu_cfs_throttled_periods_total", "Number of throttled period intervals.")
	descQuota        = cadvisorDesc("container_spec_cpu_quota", "CPU quota of the container.")
	descPeriod       = cadvisorDesc("container_spec_cpu_period", "CPU period of the container.")
	descMemoryUsage  = cadvisorDesc("container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed")
	descWorkingSet   = cadvisorDesc("container_memory_working_set_bytes", "Current working set in bytes.")
)

type cadvisorCollector struct{ e *Executor }

func (c cadvisorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCPUUsage, descCPUUser, descCPUSystem, descCFSPeriods, descCFSThrottled,
		descQuota, descPeriod, descMemoryUsage, descWorkingSet} {
		ch <- d
	}
}

// cadvisorPod is what the series of one pod are made of.
type cadvisorPod struct {
	namespace, name, uid, container, image string
	cgroup                                 *podCgroup
}

func (c cadvisorCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.e.cadvisorPods() {
		// The pod cgroup's series, then the container's.
		p.collect(ch, []string{"", p.cgroup.id(), "", "", p.namespace, p.name})
		p.collect(ch, []string{p.container, p.cgroup.id(), p.image, p.container + "-" + p.uid, p.namespace, p.name})
	}
}

func (e *Executor) cadvisorPods() []cadvisorPod {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []cadvisorPod
	for _, r := range e.pods {
		if r.cgroup != nil {
			out = append(out, cadvisorPod{r.ref.Namespace, r.ref.Name, r.ref.UID, r.container, r.image, r.cgroup})
		}
	}
	for _, a := range e.adopted {
		out = append(out, cadvisorPod{a.ref.Namespace, a.ref.Name, a.ref.UID, a.container, a.image, a.cgroup})
	}
	return out
}

// collect sends the series a cgroup has: a counter it cannot read is left
// out, as cAdvisor leaves out what a container lacks (throttling and the
// quota without a quota, memory without the memory controller).
func (p cadvisorPod) collect(ch chan<- prometheus.Metric, labels []string) {
	send := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	if ns, err := p.cgroup.cpuNanos(); err == nil {
		send(descCPUUsage, prometheus.CounterValue, float64(ns)/1e9)
	}
	if user, system, err := p.cgroup.cpuModes(); err == nil {
		send(descCPUUser, prometheus.CounterValue, user)
		send(descCPUSystem, prometheus.CounterValue, system)
	}
	if q, err := p.cgroup.cfs(); err == nil && q.quotaMicros > 0 {
		send(descCFSPeriods, prometheus.CounterValue, float64(q.periods))
		send(descCFSThrottled, prometheus.CounterValue, float64(q.throttled))
		send(descQuota, prometheus.GaugeValue, float64(q.quotaMicros))
		send(descPeriod, prometheus.GaugeValue, float64(q.periodMicros))
	}
	if usage, ws, err := p.cgroup.memory(); err == nil {
		send(descMemoryUsage, prometheus.GaugeValue, float64(usage))
		send(descWorkingSet, prometheus.GaugeValue, float64(ws))
	}
}

// id is the cgroup's path from the hierarchy's root, cAdvisor's id label
// (a kubelet's is /kubepods/<qos>/pod<uid>/<container id>).
func (pc *podCgroup) id() string {
	return "/" + cgroupParent + "/" + filepath.Base(pc.cpuDir)
}
