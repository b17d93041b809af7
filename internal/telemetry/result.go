package telemetry

import (
	"fmt"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Names of the figures the validity rules and the efficiency read, the
// same whichever source gives them.
const (
	// FigureServerCPUCores is the database server's CPU as its own
	// statistics count it (Redis INFO used_cpu_*), subject "server".
	FigureServerCPUCores = "serverCPUCores"
	// FigureCPUCores is a pod's CPU (subject target/<pod>, loadgen/<pod>)
	// or the sum over the target's pods (subject "target").
	FigureCPUCores = "cpuCores"
	// FigureServerRestarts counts the intervals in which the server's
	// statistics started again: a restart or a reset.
	FigureServerRestarts = "serverRestarts"
	// FigureCPULimitPercent is CPU as a percent of the CPU limit: of a
	// pod, or of the target (the sum over its pods).
	FigureCPULimitPercent = "cpuLimitPercent"
	// FigureMemoryWorkingSetMax is a pod's peak working set (bytes).
	FigureMemoryWorkingSetMax = "memoryWorkingSetBytesMax"
	// FigureMemoryLimitPercentMax is a pod's peak working set as a percent
	// of its memory limit.
	FigureMemoryLimitPercentMax = "memoryLimitPercentMax"
	// FigureEfficiency is the primary throughput per target CPU core.
	FigureEfficiency = "efficiencyPerTargetCore"
	// SourceHosts is the source of the figures of hosts read from their
	// node_exporter (spec.telemetry.hosts); its cpuLimitPercent of the
	// target is of the target's hosts' cores, not of a limit.
	SourceHosts = "node_exporter"
)

// Attach puts a report into a measurement's result: its figures as
// metrics (Source the report's source, Operation the subject), its series,
// and its warnings, each prefixed with the source. A server whose
// statistics started again during the window (a restart, a reset)
// invalidates the measurement: its numbers straddle two servers.
func Attach(r *results.Result, rep *Report) {
	if rep == nil {
		return
	}
	for _, f := range rep.Figures {
		if f.Direction == "" {
			f.Direction = results.Neutral // a level, not a score
		}
		// A figure of one core, device or interface is a detail: folded in
		// tables, and the first dropped when the results are too large.
		r.Add(results.Metric{Name: f.Name, Operation: f.Subject, Value: f.Value, Unit: f.Unit, Direction: f.Direction, Source: rep.Source,
			Detail: strings.Contains(f.Name, ".")})
		if f.Name == FigureServerRestarts && f.Value > 0 {
			r.Invalidate("the target's server restarted (or its statistics were reset) during the measurement: %s counted %g restart(s)%s",
				rep.Source, f.Value, restartDetail(rep.Warnings))
		}
	}
	for _, s := range rep.Series {
		if s.Source == "" {
			s.Source = rep.Source
		}
		r.Series = append(r.Series, s)
	}
	for _, w := range rep.Warnings {
		r.Warnings = append(r.Warnings, rep.Source+" telemetry: "+w)
	}
}

// restartDetail returns ": " and the first warning that says when the
// restart happened, or "".
func restartDetail(warnings []string) string {
	for _, w := range warnings {
		if strings.Contains(w, "restarted") {
			return ": " + w
		}
	}
	return ""
}

// TargetCPUKeys are the figures that give the target's CPU, the one to
// prefer first: the sum over its pods from a resource source, then the
// server's own count of its CPU. Status, comparisons and the report pick
// the target's CPU by this one order.
var TargetCPUKeys = []results.Key{
	{Name: FigureCPUCores, Operation: string(RoleTarget)},
	{Name: FigureServerCPUCores, Operation: string(RoleServer)},
}

// TargetCPUCores returns the target's CPU over the window and where it
// came from: the sum over its pods from a resource source when there is
// one, else the server's own count of its CPU.
func TargetCPUCores(r *results.Result) (results.Metric, bool) {
	for _, want := range TargetCPUKeys {
		for _, m := range r.Metrics {
			if m.IsTelemetry() && m.Key() == want && m.Value > 0 {
				return m, true
			}
		}
	}
	return results.Metric{}, false
}

// AddEfficiency adds the primary throughput per target CPU core, when the
// primary metric is a throughput (higher is better, a rate) and the
// target's CPU is known. It replaces an earlier efficiency figure, so a
// second source of CPU refines the first.
func AddEfficiency(r *results.Result) {
	primary, ok := r.Get(r.Primary)
	if !ok || primary.IsTelemetry() || primary.Direction != results.HigherIsBetter || !isRate(primary) {
		return
	}
	cpu, ok := TargetCPUCores(r)
	if !ok {
		return
	}
	kept := r.Metrics[:0]
	for _, m := range r.Metrics {
		if !m.IsTelemetry() || m.Name != FigureEfficiency {
			kept = append(kept, m)
		}
	}
	r.Metrics = kept
	r.Add(results.Metric{
		Name: FigureEfficiency, Operation: string(RoleTarget), Value: primary.Value / cpu.Value,
		Unit: primary.Unit + " per core", Direction: results.HigherIsBetter, Source: cpu.Source,
	})
}

// isRate says whether a metric is work per time: ops/s, tx/s, NOPM, TPM.
func isRate(m results.Metric) bool {
	u := strings.ToLower(m.Unit)
	return strings.HasSuffix(u, "/s") || strings.HasSuffix(u, "/min") || strings.Contains(strings.ToLower(m.Name), "persecond") ||
		u == "nopm" || u == "tpm"
}

// Describe renders a figure for a reason: "cpuCores[target]=3.2 cores".
func Describe(m results.Metric) string {
	return fmt.Sprintf("%s=%.3g %s", m.Key(), m.Value, m.Unit)
}

// statusFigures are the figures of the servers' side a run's status keeps
// of each measurement, in this order, when measured: what a comparison
// table puts beside throughput. Everything else stays in the results.
var statusFigures = []results.Key{
	{Name: FigureEfficiency, Operation: string(RoleTarget)},
	{Name: FigureCPUCores, Operation: string(RoleTarget)},
	{Name: FigureCPULimitPercent, Operation: string(RoleTarget)},
	{Name: FigureServerCPUCores, Operation: string(RoleServer)},
	{Name: "memoryWorkingSetBytesMax", Operation: string(RoleTarget)},
	{Name: "networkReceiveBytesPerSecond", Operation: string(RoleTarget)},
	{Name: "networkTransmitBytesPerSecond", Operation: string(RoleTarget)},
	{Name: "commitsPerSecond", Operation: string(RoleServer)},
	{Name: "sessionsActiveMean", Operation: string(RoleServer)},
	{Name: "threadsRunningMean", Operation: string(RoleServer)},
	{Name: "connectedClientsMean", Operation: string(RoleServer)},
	{Name: FigureServerRestarts, Operation: string(RoleServer)},
}

// StatusFigures returns the result's telemetry figures a status keeps.
func StatusFigures(r *results.Result) []results.Metric {
	var out []results.Metric
	for _, k := range statusFigures {
		for _, m := range r.Metrics {
			if m.IsTelemetry() && m.Key() == k {
				out = append(out, m)
				break
			}
		}
	}
	return out
}
