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
	// Warmup is the start of the progress series the stability checks
	// (stalls, dips, drift) leave out, after any ramp-up the tool reported
	// (RampUpParameter); when set, the steady-state throughput over the
	// rest is added beside the primary metric (SteadyName).
	Warmup time.Duration
	// DipPercent: throughput below this percent of the median is a dip
	// (DefaultDipPercent when zero); every dip is reported.
	DipPercent float64
	// MaxDip: a longer dip invalidates the measurement; zero never.
	MaxDip time.Duration
	// MaxDriftPercent: a significant drift of the throughput over the
	// steady window beyond it invalidates the measurement; zero never.
	MaxDriftPercent float64
	// SteadyUntil ends the steady window of a disturbed measurement (its
	// first disturbance): the stability checks judge the throughput before
	// it only, and the error limit, which judges the whole measurement's
	// error share, becomes a warning (errors during a disturbance are what
	// its card counts). Zero: the whole measurement is steady.
	SteadyUntil time.Duration
}

// ApplyThresholds invalidates r where it breaks a threshold, and judges
// the steady state of its progress series (stalls, dips, drift).
func ApplyThresholds(r *Result, t Thresholds) {
	if lg := r.LoadGenerator; lg != nil && lg.Source != "" && t.MaxLoadGeneratorCPUPercent > 0 &&
		lg.CPUPercent > t.MaxLoadGeneratorCPUPercent {
		r.Invalidate("the load generator was saturated: it used %.1f%% of its %.2g CPUs, above the %.0f%% limit",
			lg.CPUPercent, lg.AvailableCPUs, t.MaxLoadGeneratorCPUPercent)
	}
	if t.SteadyUntil > 0 {
		warnErrors(r, t.MaxErrorPercent)
	} else {
		judgeErrors(r, t.MaxErrorPercent)
	}
	if r.Verdict != Failed {
		judgeStability(r, t)
	}
}

// MinRequestsToJudge is how many requests an operation needs before its
// own error share can invalidate a measurement: below it, a single failed
// request of a rare operation is a large share of nothing.
const MinRequestsToJudge = 100

// judgeErrors invalidates r when the whole run's error share, or that of an
// operation with enough requests (or of unknown count), is above the
// limit; an operation with fewer requests gets a warning.
func judgeErrors(r *Result, limit float64) {
	for _, m := range r.Metrics {
		if m.Name != "errorPercent" || m.Value <= limit {
			continue
		}
		if m.Operation == "" {
			r.Invalidate("%.3g%% of requests failed, above the %.3g%% limit", m.Value, limit)
			continue
		}
		n, known := r.Get(Key{Name: "requests", Operation: m.Operation})
		switch {
		case !known:
			r.Invalidate("%.3g%% of requests of %s failed, above the %.3g%% limit", m.Value, m.Operation, limit)
		case n.Value >= MinRequestsToJudge:
			r.Invalidate("%.3g%% of the %.0f requests of %s failed, above the %.3g%% limit", m.Value, n.Value, m.Operation, limit)
		default:
			r.Warnings = append(r.Warnings, fmt.Sprintf("%.3g%% of the %.0f requests of %s failed, above the %.3g%% limit: too few requests (under %d) for the measurement to be judged by them",
				m.Value, n.Value, m.Operation, limit, MinRequestsToJudge))
		}
	}
}

// warnErrors says, of a disturbed measurement, which error shares are
// above the limit without judging by them: they count the errors the
// disturbance caused, which its card reports.
func warnErrors(r *Result, limit float64) {
	for _, m := range r.Metrics {
		if m.Name == "errorPercent" && m.Value > limit {
			what := "requests"
			if m.Operation != "" {
				what += " of " + m.Operation
			}
			r.Warnings = append(r.Warnings, fmt.Sprintf("%.3g%% of the %s failed over the whole disturbed measurement, above the %.3g%% limit: not judged (the limit judges undisturbed measurements; the disturbance's card counts its errors)",
				m.Value, what, limit))
		}
	}
}
