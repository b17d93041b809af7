package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Soak limits when spec.capacity.soak leaves them at zero (an object
// written before its defaults, a test's spec).
const (
	DefaultSoakPercent        = 75
	DefaultSoakThroughputDrop = 5
	DefaultSoakLatencyGrowth  = 20
	DefaultSoakErrorGrowth    = 1
	DefaultSoakMemoryGrowth   = 10
)

// SoakPercent is the share of the maximum a soak holds.
func SoakPercent(s *benchv1.CapacitySoak) int32 {
	if s.Percent == 0 {
		return DefaultSoakPercent
	}
	return s.Percent
}

// MemorySeries is the telemetry series a soak's leak check reads, of the
// subject "target" (the sum over the target's pods).
const MemorySeries = "memoryWorkingSetBytes"

// SoakJudgement is a judged soak.
type SoakJudgement struct {
	Passed bool
	Checks []benchv1.SoakCheck
	// Reasons name each failing check with its figure, then each check
	// whose estimate is beyond its limit but whose interval is not
	// (inconclusive: it passes), then each that could not be judged.
	Reasons []string
	// Unjudgeable says why the soak could not be judged at all.
	Unjudgeable string
}

// JudgeSoak judges the trends of a soak's measurement r: the throughput
// (progress series), the latency, the failed requests' share and the
// target's memory, after warmup. latency is the first latency rule, which
// picks the latency series of a tool with interval percentiles.
func JudgeSoak(s *benchv1.CapacitySoak, latency *benchv1.LatencyRule, r *results.Result, warmup time.Duration) SoakJudgement {
	var j SoakJudgement
	tput := results.ThroughputTrend(r, warmup)
	if tput == nil {
		j.Unjudgeable = "the soak's measurement has no progress series of three intervals or more after the warm-up: no trend can be judged (give the tool a progress interval well below the soak's duration)"
		return j
	}
	var failed, inconclusive []string
	check := func(name benchv1.SoakCheckName, d *results.Drift, limit benchv1.Percent, def float64, sign float64, unit string) {
		lim := float64(limit)
		if lim == 0 {
			lim = def
		}
		c := benchv1.SoakCheck{Name: name, Series: d.Series, ChangePercent: round(d.Percent, 3),
			CILowPercent: round(d.CILow, 3), CIHighPercent: round(d.CIHigh, 3), LimitPercent: lim,
			Significant: d.Significant(), Points: int32(d.DF + 2)}
		// The bound of the 95 % interval nearest the good side: beyond the
		// limit, the change is beyond it for sure; the estimate alone
		// beyond it, a soak too short or too noisy to tell.
		near := d.CILow
		if sign < 0 {
			near = d.CIHigh
		}
		c.Passed = sign*near <= lim
		j.Checks = append(j.Checks, c)
		switch {
		case !c.Passed:
			failed = append(failed, fmt.Sprintf("%s: %s, beyond %s %g %s", name, d, soakField(name), lim, unit))
		case sign*d.Percent > lim:
			inconclusive = append(inconclusive, fmt.Sprintf("%s inconclusive: %s, beyond %s %g %s, but its interval reaches inside it: a longer soak (more intervals) would tell",
				name, d, soakField(name), lim, unit))
		}
	}
	check(benchv1.SoakThroughputDrop, tput, s.MaxThroughputDropPercent, DefaultSoakThroughputDrop, -1, "%")
	var missing []string
	if key := latencySeries(r, latency); key == "" {
		missing = append(missing, fmt.Sprintf("%s not judged: the measurement has no latency series", benchv1.SoakLatencyGrowth))
	} else if d := results.TrendOf(r, key, warmup); d == nil {
		missing = append(missing, fmt.Sprintf("%s not judged: the latency series %s holds fewer than three intervals after the warm-up", benchv1.SoakLatencyGrowth, key))
	} else {
		check(benchv1.SoakLatencyGrowth, d, s.MaxLatencyGrowthPercent, DefaultSoakLatencyGrowth, 1, "%")
	}
	if d := results.ErrorShareTrend(r, warmup); d == nil {
		missing = append(missing, fmt.Sprintf("%s not judged: the measurement has no series of failed requests per interval", benchv1.SoakErrorGrowth))
	} else {
		check(benchv1.SoakErrorGrowth, d, s.MaxErrorGrowthPercent, DefaultSoakErrorGrowth, 1, "percentage points")
	}
	if mem := memorySeries(r); mem == nil || r.StartTime == nil {
		missing = append(missing, fmt.Sprintf("%s not judged: no %s series of the target (the run's resource telemetry records none)", benchv1.SoakMemoryGrowth, MemorySeries))
	} else if d := results.SampleTrend(*mem, *r.StartTime, warmup); d == nil {
		missing = append(missing, fmt.Sprintf("%s not judged: the target's %s holds fewer than three readings after the warm-up", benchv1.SoakMemoryGrowth, MemorySeries))
	} else {
		d.Series = "target " + MemorySeries
		check(benchv1.SoakMemoryGrowth, d, s.MaxMemoryGrowthPercent, DefaultSoakMemoryGrowth, 1, "%")
	}
	j.Passed = len(failed) == 0
	j.Reasons = append(append(failed, inconclusive...), missing...)
	return j
}

func soakField(n benchv1.SoakCheckName) string {
	return "spec.capacity.soak.max" + string(n) + "Percent"
}

// latencySeries picks the soak's latency series: the interval percentile
// nearest the first latency rule's (of its operation, else the first
// operation that has one), else pgbench's mean latency per interval.
func latencySeries(r *results.Result, rule *benchv1.LatencyRule) string {
	name := "latencyP99Millis"
	op := ""
	if rule != nil {
		op = rule.Operation
		switch p := float64(rule.Percentile); {
		case p < 90:
			name = "latencyP50Millis"
		case p < 99:
			name = "latencyP95Millis"
		}
	}
	keys := map[string]bool{}
	for _, p := range r.TimeSeries {
		for k := range p.Values {
			keys[k] = true
		}
	}
	if op != "" && keys[results.Key{Name: name, Operation: op}.String()] {
		return results.Key{Name: name, Operation: op}.String()
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if strings.HasPrefix(k, name+"[") {
			return k
		}
	}
	if keys["latencyAverageMillis"] {
		return "latencyAverageMillis"
	}
	return ""
}

func memorySeries(r *results.Result) *results.Series {
	for i, s := range r.Series {
		if s.Name == MemorySeries && s.Subject == "target" && len(s.Samples) > 0 {
			return &r.Series[i]
		}
	}
	return nil
}
