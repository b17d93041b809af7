package hoststats

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// cpuModes are the modes with figures of their own: mpstat's %usr, %sys,
// %iowait, %irq, %soft and %steal (a virtual machine's stolen time, the
// first thing to look at behind a managed service).
var cpuModes = []string{"user", "system", "iowait", "irq", "softirq", "steal"}

// Figure names the rules and the efficiency read.
const (
	FigureBusyPercent = "cpuBusyPercent"
	// FigureCount is the host's cores: what its busy cores are a percent of.
	FigureCount    = "cpuCount"
	FigureRestarts = "hostRestarts"
)

// interval is the change between two scrapes.
type interval struct {
	at    time.Time
	secs  float64
	delta map[string]float64
}

// summary builds one host's report.
type summary struct {
	subject string
	rep     *telemetry.Report
}

// Summarize turns a host's scrapes over a window (in time order) into
// figures and series under host/<name>; warnings (failed scrapes) are
// carried over. budget bounds the series' samples (0: telemetry.DefaultSeriesBudget).
func Summarize(h Host, obs []dbstats.Observation, warnings []string, budget int) *telemetry.Report {
	subject := telemetry.Subject{Role: telemetry.RoleHost, Name: h.Name}.Label()
	s := summary{subject: subject, rep: &telemetry.Report{Source: Source, Figures: []telemetry.Figure{}}}
	for _, w := range warnings {
		s.warn("%s", w)
	}
	if len(obs) < 2 {
		s.warn("host %s: %d scrape(s) of %s succeeded: no rates", h.Name, len(obs), h.URL)
		s.gauges(obs)
		return s.rep
	}
	deltas, _ := dbstats.IntervalDeltas(obs)
	ivs := make([]interval, 0, len(obs)-1)
	reboots := 0
	for i := 1; i < len(obs); i++ {
		if obs[i].Epoch != obs[i-1].Epoch {
			reboots++
			s.warn("host %s rebooted between %s and %s (its boot time changed): its counters over that interval count from the boot",
				h.Name, obs[i-1].Time.UTC().Format(time.RFC3339), obs[i].Time.UTC().Format(time.RFC3339))
		}
		if secs := obs[i].Time.Sub(obs[i-1].Time).Seconds(); secs > 0 {
			ivs = append(ivs, interval{at: obs[i].Time, secs: secs, delta: deltas[i]})
		}
	}
	s.cpu(ivs)
	s.gauges(obs)
	s.disks(ivs)
	s.networks(ivs)
	var took time.Duration
	for _, o := range obs {
		took += o.Took
	}
	span := obs[len(obs)-1].Time.Sub(obs[0].Time).Seconds()
	s.figure(FigureRestarts, float64(reboots), "count", results.LowerIsBetter)
	s.figure("windowSeconds", span, "s", results.Neutral)
	s.figure("scrapeMillisMean", float64(took.Microseconds())/1000/float64(len(obs)), "ms", results.Neutral)
	s.rep.Coarsen(budget, "host "+h.Name)
	return s.rep
}

func (s *summary) warn(format string, args ...any) {
	s.rep.Warnings = append(s.rep.Warnings, fmt.Sprintf(format, args...))
}

func (s *summary) figure(name string, v float64, unit string, dir results.Direction) {
	s.rep.Figures = append(s.rep.Figures, telemetry.Figure{Name: name, Subject: s.subject, Value: v, Unit: unit, Direction: dir})
}

func (s *summary) series(name, unit string, samples []telemetry.Sample) {
	if len(samples) == 0 {
		return
	}
	s.rep.Series = append(s.rep.Series, telemetry.Series{Name: name, Subject: s.subject, Unit: unit, Source: Source, Samples: samples})
}

// members returns the sorted members of a group seen in any interval, and
// the quantities each has.
func members(ivs []interval, group string) []string {
	seen := map[string]bool{}
	prefix := group + "/"
	for _, iv := range ivs {
		for k := range iv.delta {
			if rest, ok := strings.CutPrefix(k, prefix); ok {
				member, _, _ := strings.Cut(rest, "/")
				seen[member] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return lessNatural(out[i], out[j]) })
	return out
}

// lessNatural orders cpu 2 before cpu 10.
func lessNatural(a, b string) bool {
	if len(a) != len(b) && strings.TrimLeft(a, "0123456789") == "" && strings.TrimLeft(b, "0123456789") == "" {
		return len(a) < len(b)
	}
	return a < b
}

// cpu: busy and by mode, for the host and per core. Busy is everything
// but idle (iowait counts, as the node source and mpstat's %idle do).
func (s *summary) cpu(ivs []interval) {
	cores := members(ivs, groupCPU)
	if len(cores) == 0 {
		s.warn("no node_cpu_seconds_total: no CPU figures (is the cpu collector enabled?)")
		return
	}
	type sums struct{ busy, total float64 }
	var host sums
	hostMode := map[string]float64{}
	core := make([]sums, len(cores))
	coreMode := make([]map[string]float64, len(cores))
	var busyPct, busyCores []telemetry.Sample
	modeSeries := map[string][]telemetry.Sample{}
	coreSeries := make([][]telemetry.Sample, len(cores))
	var span float64
	for _, iv := range ivs {
		var ib, it float64
		im := map[string]float64{}
		for ci, c := range cores {
			var cb, ct float64
			for k, v := range iv.delta {
				rest, ok := strings.CutPrefix(k, Key(groupCPU, c, ""))
				if !ok {
					continue
				}
				ct += v
				if rest != "idle" {
					cb += v
				}
				im[rest] += v
				if coreMode[ci] == nil {
					coreMode[ci] = map[string]float64{}
				}
				coreMode[ci][rest] += v
			}
			core[ci].busy += cb
			core[ci].total += ct
			if ct > 0 {
				coreSeries[ci] = append(coreSeries[ci], telemetry.Sample{Time: iv.at, Value: 100 * cb / ct})
			}
			ib += cb
			it += ct
		}
		if it <= 0 {
			continue
		}
		span += iv.secs
		host.busy += ib
		host.total += it
		busyPct = append(busyPct, telemetry.Sample{Time: iv.at, Value: 100 * ib / it})
		busyCores = append(busyCores, telemetry.Sample{Time: iv.at, Value: ib / iv.secs})
		for _, m := range cpuModes {
			hostMode[m] += im[m]
			modeSeries[m] = append(modeSeries[m], telemetry.Sample{Time: iv.at, Value: 100 * im[m] / it})
		}
	}
	if host.total <= 0 || span <= 0 {
		s.warn("the CPU counters did not move over the window: no CPU figures")
		return
	}
	vs := telemetry.SampleValues(busyPct)
	s.figure(FigureBusyPercent, 100*host.busy/host.total, "%", results.Neutral)
	s.figure(FigureBusyPercent+"P95", telemetry.NearestRank(vs, 95), "%", results.Neutral)
	s.figure(FigureBusyPercent+"Max", telemetry.NearestRank(vs, 100), "%", results.Neutral)
	s.series(FigureBusyPercent, "%", busyPct)
	s.figure(telemetry.FigureCPUCores, host.busy/span, "cores", results.Neutral)
	s.series(telemetry.FigureCPUCores, "cores", busyCores)
	s.figure(FigureCount, float64(len(cores)), "cores", results.Neutral)
	for _, m := range cpuModes {
		name := modeName(m)
		s.figure(name, 100*hostMode[m]/host.total, "%", results.Neutral)
		s.series(name, "%", modeSeries[m])
	}
	busiest := 0.0
	for ci, c := range cores {
		if core[ci].total <= 0 {
			continue
		}
		pct := 100 * core[ci].busy / core[ci].total
		busiest = max(busiest, pct)
		s.figure(FigureBusyPercent+".cpu"+c, pct, "%", results.Neutral)
		s.series(FigureBusyPercent+".cpu"+c, "%", coreSeries[ci])
		for _, m := range cpuModes {
			s.figure(modeName(m)+".cpu"+c, 100*coreMode[ci][m]/core[ci].total, "%", results.Neutral)
		}
	}
	// The busiest core against the mean: one core at 100 % while the rest
	// idle (a single-threaded server, interrupts on one core).
	s.figure(FigureBusyPercent+"BusiestCore", busiest, "%", results.Neutral)
}

// modeName: cpuSoftirqPercent for softirq, as the node source names it.
func modeName(mode string) string { return "cpu" + strings.ToUpper(mode[:1]) + mode[1:] + "Percent" }

// gauges: memory used (total less available) and the 1-minute load, mean
// and peak over the scrapes, with their series.
func (s *summary) gauges(obs []dbstats.Observation) {
	var used, load []telemetry.Sample
	var total float64
	for _, o := range obs {
		t, ok1 := o.Gauges[Key(groupMemory, "", "total")]
		a, ok2 := o.Gauges[Key(groupMemory, "", "available")]
		if ok1 && ok2 {
			used = append(used, telemetry.Sample{Time: o.Time, Value: t - a})
			total = t
		}
		if l, ok := o.Gauges[Key(groupLoad, "", "1")]; ok {
			load = append(load, telemetry.Sample{Time: o.Time, Value: l})
		}
	}
	s.gauge("memoryUsedBytes", "bytes", used)
	if total > 0 {
		s.figure("memoryTotalBytes", total, "bytes", results.Neutral)
	}
	s.gauge("load1", "tasks", load)
}

// gauge adds a level's mean (under its name), its peak (name+"Max") and
// its series.
func (s *summary) gauge(name, unit string, samples []telemetry.Sample) {
	if len(samples) == 0 {
		return
	}
	vs := telemetry.SampleValues(samples)
	var sum float64
	for _, v := range vs {
		sum += v
	}
	s.figure(name, sum/float64(len(vs)), unit, results.Neutral)
	s.figure(name+"Max", telemetry.NearestRank(vs, 100), unit, results.Neutral)
	s.series(name, unit, samples)
}

// rate is one per-member quantity: the window's figure is the ratio of
// the sums of num and den over the intervals (den nil: seconds), times
// scale, and each interval is one sample of its series.
type rate struct {
	name, unit string
	num, den   []string
	scale      float64
}

func (s *summary) rates(ivs []interval, group, member string, qs []rate) {
	for _, q := range qs {
		var num, den float64
		var samples []telemetry.Sample
		for _, iv := range ivs {
			n, okN := sum(iv.delta, group, member, q.num)
			if !okN {
				continue
			}
			d := iv.secs
			if q.den != nil {
				var okD bool
				if d, okD = sum(iv.delta, group, member, q.den); !okD {
					continue
				}
			}
			num += n
			den += d
			if d > 0 {
				samples = append(samples, telemetry.Sample{Time: iv.at, Value: q.scale * n / d})
			}
		}
		if den <= 0 {
			continue
		}
		name := q.name + "." + member
		s.figure(name, q.scale*num/den, q.unit, results.Neutral)
		s.series(name, q.unit, samples)
	}
}

func sum(delta map[string]float64, group, member string, quantities []string) (float64, bool) {
	var total float64
	for _, q := range quantities {
		v, ok := delta[Key(group, member, q)]
		if !ok {
			return 0, false
		}
		total += v
	}
	return total, true
}

// disks: per device, iostat's r/s, w/s, rkB/s, wkB/s, await, %util and
// aqu-sz.
func (s *summary) disks(ivs []interval) {
	for _, dev := range members(ivs, groupDisk) {
		s.rates(ivs, groupDisk, dev, []rate{
			{name: "diskReadsPerSecond", unit: "ops/s", num: []string{"reads"}, scale: 1},
			{name: "diskWritesPerSecond", unit: "ops/s", num: []string{"writes"}, scale: 1},
			{name: "diskReadBytesPerSecond", unit: "bytes/s", num: []string{"readBytes"}, scale: 1},
			{name: "diskWriteBytesPerSecond", unit: "bytes/s", num: []string{"writtenBytes"}, scale: 1},
			// await: time spent on requests over requests completed.
			{name: "diskAwaitMillis", unit: "ms", num: []string{"readSeconds", "writeSeconds"}, den: []string{"reads", "writes"}, scale: 1000},
			{name: "diskBusyPercent", unit: "%", num: []string{"ioSeconds"}, scale: 100},
			// aqu-sz: the weighted I/O time per second is the mean number
			// of requests in flight.
			{name: "diskQueueLength", unit: "requests", num: []string{"ioWeightedSeconds"}, scale: 1},
		})
	}
}

// networks: per interface but the loopback, bytes and packets per second
// with series, and the window's drops and errors.
func (s *summary) networks(ivs []interval) {
	for _, dev := range members(ivs, groupNet) {
		if dev == "lo" {
			continue
		}
		s.rates(ivs, groupNet, dev, []rate{
			{name: "networkReceiveBytesPerSecond", unit: "bytes/s", num: []string{"receiveBytes"}, scale: 1},
			{name: "networkTransmitBytesPerSecond", unit: "bytes/s", num: []string{"transmitBytes"}, scale: 1},
			{name: "networkReceivePacketsPerSecond", unit: "packets/s", num: []string{"receivePackets"}, scale: 1},
			{name: "networkTransmitPacketsPerSecond", unit: "packets/s", num: []string{"transmitPackets"}, scale: 1},
		})
		for _, q := range []string{"receiveDrops", "transmitDrops", "receiveErrors", "transmitErrors"} {
			var n float64
			seen := false
			for _, iv := range ivs {
				if v, ok := iv.delta[Key(groupNet, dev, q)]; ok {
					n, seen = n+v, true
				}
			}
			if seen {
				s.figure("network"+strings.ToUpper(q[:1])+q[1:]+"."+dev, n, "count", results.LowerIsBetter)
			}
		}
	}
}
