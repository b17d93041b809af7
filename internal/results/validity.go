package results

import (
	"fmt"
	"time"
)

// Thresholds decide whether a measurement is trusted.
type Thresholds struct {
	// MaxLoadGeneratorCPUPercent: above it the load generator was saturated.
	// Zero disables the check.
	MaxLoadGeneratorCPUPercent float64
	// MaxErrorPercent: above it too many requests failed.
	MaxErrorPercent float64
	// StallPercent: throughput below this percent of the measurement's
	// median is a stall (DefaultStallPercent when zero); every stall is
	// reported.
	StallPercent float64
	// MaxStall: a longer stall invalidates the measurement; zero never.
	MaxStall time.Duration
}

// ApplyThresholds invalidates r where it breaks a threshold.
func ApplyThresholds(r *Result, t Thresholds) {
	if lg := r.LoadGenerator; lg != nil && lg.Source != "" && t.MaxLoadGeneratorCPUPercent > 0 &&
		lg.CPUPercent > t.MaxLoadGeneratorCPUPercent {
		r.Invalidate("the load generator was saturated: it used %.1f%% of its %.2g CPUs, above the %.0f%% limit",
			lg.CPUPercent, lg.AvailableCPUs, t.MaxLoadGeneratorCPUPercent)
	}
	for _, m := range r.Metrics {
		if m.Name == "errorPercent" && m.Value > t.MaxErrorPercent {
			op := ""
			if m.Operation != "" {
				op = " of " + m.Operation
			}
			r.Invalidate("%s", fmt.Sprintf("%.3g%% of requests%s failed, above the %.3g%% limit", m.Value, op, t.MaxErrorPercent))
		}
	}
	if r.Verdict != Failed {
		JudgeStalls(r, t.StallPercent, t.MaxStall)
	}
}
