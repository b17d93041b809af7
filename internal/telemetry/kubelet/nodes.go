package kubelet

import (
	"sort"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// node adds one node's figures: cpuBusyPercent (the node's CPU usage over
// its capacity), memoryUsedBytes (the node's working set) and network per
// interface, named as the Prometheus source names them.
func (r report) node(n Node, polls []Poll) {
	s := telemetry.Subject{Role: telemetry.RoleNode, Name: n.Name}
	var rd nodeReadings
	for _, p := range polls {
		rd.record(p)
	}
	if rd.failed > 0 {
		r.warn("node %s: %d of %d reads of its kubelet's statistics failed (first: %v)", n.Name, rd.failed, len(polls), rd.firstErr)
	}
	if len(polls) == 0 {
		r.warn("node %s: its kubelet's statistics were never read", n.Name)
		return
	}
	if n.CPUCores > 0 {
		r.counter("cpuBusyPercent", s, "%", rd.cpu, nanos*100/n.CPUCores, true)
	} else if len(rd.cpu) > 0 {
		r.warn("node %s: CPU capacity unknown: no cpuBusyPercent", n.Name)
	}
	if samples := gaugeSamples(rd.workingSet); len(samples) > 0 {
		vs := telemetry.SampleValues(samples)
		var sum float64
		for _, v := range vs {
			sum += v
		}
		r.figure("memoryUsedBytes", s, sum/float64(len(vs)), bytesUnit)
		r.figure("memoryUsedBytesMax", s, telemetry.NearestRank(vs, 100), bytesUnit)
		r.series("memoryUsedBytes", s, bytesUnit, samples)
	}
	names := make([]string, 0, len(rd.rx))
	for name := range rd.rx {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		r.deviceRate(netRx+"."+name, s, rd.rx[name])
		r.deviceRate(netTx+"."+name, s, rd.tx[name])
	}
}

// deviceRate: the mean rate of one interface, with its series (coarsened
// before the node's own when the series are over their budget).
func (r report) deviceRate(name string, s telemetry.Subject, rs []reading) {
	ivs, _ := rates(rs)
	if len(ivs) > 0 {
		r.figure(name, s, mean(ivs), rateUnit)
		r.series(name, s, rateUnit, rateSamples(ivs, 1))
	}
}
