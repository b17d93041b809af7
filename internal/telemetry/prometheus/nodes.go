package prometheus

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// cpuModes are the modes the per-core view shows: mpstat's %usr, %sys,
// %soft (which cores serve the NIC's interrupts) and %iowait.
var cpuModes = []string{"user", "system", "softirq", "iowait"}

// nodeSpecs are node_exporter's quantities for the run's nodes: the host
// view (busy %, memory used, load), CPU by mode for the node and per core,
// disk wait and traffic per device, network per interface.
func nodeSpecs(c Config, nodes []telemetry.Subject) []spec {
	return machineSpecs(c, nodeMatchers(c, nodes))
}

// hostSpecs are the same quantities of a host the run names, whose series
// its selector matches.
func hostSpecs(c Config, h telemetry.HostSelector) []spec {
	specs := machineSpecs(c, h.Selector)
	for i := range specs {
		specs[i].everySubject = false // one subject: "no data" already names it
	}
	return specs
}

// hostScope maps every result of a host's selector to host/<name>; a
// selector that matches several machines (values of the node label) is a
// warning naming them, the first kept.
func hostScope(c Config, h telemetry.HostSelector, col *collection) scope {
	subject := telemetry.Subject{Role: telemetry.RoleHost, Name: h.Name}
	var first string
	warned := false
	return scope{subjects: []telemetry.Subject{subject}, of: func(m model.Metric) (telemetry.Subject, bool) {
		v := string(m[model.LabelName(c.Labels.Node)])
		switch {
		case first == "":
			first = v
		case v != first && !warned:
			warned = true
			col.warn("host %s: the selector {%s} matches more than one machine (%s %q and %q): only the first is kept; narrow the selector", h.Name, h.Selector, c.Labels.Node, first, v)
		}
		return subject, v == first
	}}
}

// machineSpecs are node_exporter's quantities of the machines sel selects.
func machineSpecs(c Config, sel string) []spec {
	m := c.Metrics
	by := c.Labels.Node
	modes := fmt.Sprintf(`mode=~%s`, strconv.Quote(strings.Join(cpuModes, "|")))
	busy := func(rng string) string {
		return fmt.Sprintf(`100 * (1 - sum by (%[1]s) (rate(%[2]s{%[3]s}[%[4]s])) / sum by (%[1]s) (rate(%[2]s{%[5]s}[%[4]s])))`,
			by, m.NodeCPU, matchers(sel, `mode="idle"`), rng, sel)
	}
	modes1 := func(rng string) string {
		return fmt.Sprintf(`100 * sum by (%[1]s, mode) (rate(%[2]s{%[3]s}[%[4]s])) / on (%[1]s) group_left sum by (%[1]s) (rate(%[2]s{%[5]s}[%[4]s]))`,
			by, m.NodeCPU, matchers(sel, modes), rng, sel)
	}
	coreBusy := func(rng string) string {
		return fmt.Sprintf(`100 * (1 - sum by (%[1]s, cpu) (rate(%[2]s{%[3]s}[%[4]s])) / sum by (%[1]s, cpu) (rate(%[2]s{%[5]s}[%[4]s])))`,
			by, m.NodeCPU, matchers(sel, `mode="idle"`), rng, sel)
	}
	memory := func(string) string {
		return fmt.Sprintf("max by (%s) (%s{%s} - %s{%s})", by, m.NodeMemoryTotal, sel, m.NodeMemoryAvail, sel)
	}
	load := func(string) string { return fmt.Sprintf("max by (%s) (%s{%s})", by, m.NodeLoad1, sel) }
	specs := []spec{
		{base: "cpuBusyPercent", unit: "%", dir: results.Neutral, expr: busy, series: busy, p95: true, everySubject: true},
		{base: "cpuModePercent", name: modeName, unit: "%", dir: results.Neutral, expr: modes1, series: modes1},
		{base: "cpuModePercent.core", name: coreModeName, unit: "%", dir: results.Neutral, expr: func(rng string) string {
			return fmt.Sprintf(`100 * sum by (%[1]s, cpu, mode) (rate(%[2]s{%[3]s}[%[4]s])) / on (%[1]s, cpu) group_left sum by (%[1]s, cpu) (rate(%[2]s{%[5]s}[%[4]s]))`,
				by, m.NodeCPU, matchers(sel, modes), rng, sel)
		}},
		// Busy per core, with its series: one hot core among idle ones.
		{base: "cpuBusyPercent.core", name: coreBusyName, unit: "%", dir: results.Neutral, expr: coreBusy, series: coreBusy},
		{base: "memoryUsedBytes", unit: "bytes", dir: results.Neutral, series: memory, max: true, expr: func(rng string) string {
			return fmt.Sprintf("max by (%[1]s) (avg_over_time(%[2]s{%[3]s}[%[4]s]) - avg_over_time(%[5]s{%[3]s}[%[4]s]))",
				by, m.NodeMemoryTotal, sel, rng, m.NodeMemoryAvail)
		}},
		{base: "load1", unit: "tasks", dir: results.Neutral, series: load, max: true, expr: func(rng string) string {
			return fmt.Sprintf("max by (%s) (avg_over_time(%s{%s}[%s]))", by, m.NodeLoad1, sel, rng)
		}},
	}
	return append(specs, deviceSpecs(c, sel)...)
}

// rangeToken stands for the range in a device quantity's PromQL.
const rangeToken = "<range>"

// deviceSpecs: disk and network per device, named <quantity>.<device>,
// each with its series.
func deviceSpecs(c Config, sel string) []spec {
	m := c.Metrics
	by := c.Labels.Node + ", device"
	rate := func(metric, sel string) string {
		return fmt.Sprintf("sum by (%s) (rate(%s{%s}[%s]))", by, metric, sel, rangeToken)
	}
	perDevice := func(base, unit, template string) spec {
		expr := func(rng string) string { return strings.ReplaceAll(template, rangeToken, rng) }
		return spec{base: base, name: devicePart(base), unit: unit, dir: results.Neutral, expr: expr, series: expr}
	}
	net := matchers(sel, c.NetworkDeviceSelector)
	return []spec{
		// aqu-sz: the weighted I/O time per second is the mean number of
		// requests in flight, busy or not.
		perDevice("diskQueueLength", "requests", rate(m.NodeDiskIOWeighted, sel)),
		perDevice("diskBusyPercent", "%", "100 * "+rate(m.NodeDiskIOTime, sel)),
		// await: time spent on requests over requests completed.
		perDevice("diskAwaitMillis", "ms", "1000 * ("+rate(m.NodeDiskReadTime, sel)+" + "+rate(m.NodeDiskWriteTime, sel)+
			") / ("+rate(m.NodeDiskReads, sel)+" + "+rate(m.NodeDiskWrites, sel)+")"),
		perDevice("diskReadsPerSecond", "ops/s", rate(m.NodeDiskReads, sel)),
		perDevice("diskWritesPerSecond", "ops/s", rate(m.NodeDiskWrites, sel)),
		perDevice("diskReadBytesPerSecond", "bytes/s", rate(m.NodeDiskReadBytes, sel)),
		perDevice("diskWriteBytesPerSecond", "bytes/s", rate(m.NodeDiskWriteBytes, sel)),
		perDevice("networkReceiveBytesPerSecond", "bytes/s", rate(m.NodeNetworkReceiveBytes, net)),
		perDevice("networkTransmitBytesPerSecond", "bytes/s", rate(m.NodeNetworkTransmitBytes, net)),
		perDevice("networkReceivePacketsPerSecond", "packets/s", rate(m.NodeNetworkReceivePackets, net)),
		perDevice("networkTransmitPacketsPerSecond", "packets/s", rate(m.NodeNetworkTransmitPackets, net)),
	}
}

// modeName: "cpuSoftirqPercent" for mode softirq, the node as a whole.
func modeName(m model.Metric) string {
	mode := string(m["mode"])
	if mode == "" {
		return "cpuPercent"
	}
	return "cpu" + strings.ToUpper(mode[:1]) + mode[1:] + "Percent"
}

// coreBusyName: "cpuBusyPercent.cpu3" for core 3.
func coreBusyName(m model.Metric) string { return Part("cpuBusyPercent", "cpu"+string(m["cpu"])) }

// coreModeName: "cpuSoftirqPercent.cpu3" for core 3.
func coreModeName(m model.Metric) string {
	return Part(modeName(m), "cpu"+string(m["cpu"]))
}

func devicePart(base string) func(model.Metric) string {
	return func(m model.Metric) string { return Part(base, string(m["device"])) }
}

// nodeMatchers select the nodes by name; an instance label of host:port
// matches the host.
func nodeMatchers(c Config, nodes []telemetry.Subject) string {
	re := "(" + alternatives(names(nodes)) + ")(:[0-9]+)?"
	return matchers(fmt.Sprintf("%s=~%s", c.Labels.Node, strconv.Quote(re)), c.NodeSelector)
}

// nodeScope maps a result to its node's subject.
func nodeScope(c Config, nodes []telemetry.Subject) scope {
	byName := map[string]telemetry.Subject{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	return scope{subjects: nodes, of: func(m model.Metric) (telemetry.Subject, bool) {
		v := string(m[model.LabelName(c.Labels.Node)])
		if s, ok := byName[v]; ok {
			return s, true
		}
		host, _, err := net.SplitHostPort(v)
		if err != nil {
			return telemetry.Subject{}, false
		}
		s, ok := byName[host]
		return s, ok
	}}
}
