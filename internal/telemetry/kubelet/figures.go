package kubelet

import (
	"fmt"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// SourceName is the Source of the reports.
const SourceName = "kubelet"

// interval is a counter's rate between two readings, stamped at its end.
type interval struct {
	round int
	end   time.Time
	secs  float64
	rate  float64
}

// rates turns a counter's readings into per-interval rates. A reading with
// the same instant as the one before (the kubelet had not read the cgroup
// again) makes no interval. A counter that went down, or a pod with another
// UID, started again: that interval is left out and returned as a reset,
// so that no rate is ever negative.
func rates(rs []reading) (ivs []interval, resets [][2]time.Time) {
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		secs := cur.at.Sub(prev.at).Seconds()
		switch {
		case secs <= 0:
			continue // a repeated reading: measure from the first
		case cur.v < prev.v || cur.epoch != prev.epoch:
			resets = append(resets, [2]time.Time{prev.at, cur.at})
		default:
			ivs = append(ivs, interval{round: cur.round, end: cur.at, secs: secs, rate: (cur.v - prev.v) / secs})
		}
	}
	return ivs, resets
}

// mean rate over the intervals: the increase over the time they cover.
func mean(ivs []interval) float64 {
	var sum, secs float64
	for _, iv := range ivs {
		sum += iv.rate * iv.secs
		secs += iv.secs
	}
	return sum / secs
}

func rateSamples(ivs []interval, scale float64) []telemetry.Sample {
	out := make([]telemetry.Sample, len(ivs))
	for i, iv := range ivs {
		out[i] = telemetry.Sample{Time: iv.end.UTC(), Value: iv.rate * scale}
	}
	return out
}

func gaugeSamples(rs []reading) []telemetry.Sample {
	out := make([]telemetry.Sample, 0, len(rs))
	for i, r := range rs {
		if i > 0 && !r.at.After(rs[i-1].at) {
			continue
		}
		out = append(out, telemetry.Sample{Time: r.at.UTC(), Value: r.v})
	}
	return out
}

// report accumulates figures, series and warnings.
type report struct{ *telemetry.Report }

func (r report) figure(name string, s telemetry.Subject, v float64, unit string) {
	r.Figures = append(r.Figures, telemetry.Figure{Name: name, Subject: s.Label(), Value: v, Unit: unit, Direction: results.Neutral})
}

func (r report) series(name string, s telemetry.Subject, unit string, samples []telemetry.Sample) {
	if len(samples) > 0 {
		r.Series = append(r.Series, telemetry.Series{Name: name, Subject: s.Label(), Unit: unit, Samples: samples})
	}
}

func (r report) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// counter adds a counter's mean (name), its P95 (when p95) and its series,
// scaled; it returns the intervals (nil when there are none).
func (r report) counter(name string, s telemetry.Subject, unit string, rs []reading, scale float64, p95 bool) []interval {
	ivs, resets := rates(rs)
	for _, rs := range resets {
		r.warn("%s of %s went down between %s and %s (a container restarted, or the pod was recreated): that interval is left out",
			name, s.Label(), stamp(rs[0]), stamp(rs[1]))
	}
	if len(ivs) == 0 {
		if len(rs) > 0 {
			r.warn("no %s for %s: fewer than two readings of the kubelet's counter", name, s.Label())
		}
		return nil
	}
	samples := rateSamples(ivs, scale)
	r.figure(name, s, mean(ivs)*scale, unit)
	if p95 {
		r.figure(name+"P95", s, telemetry.NearestRank(telemetry.SampleValues(samples), 95), unit)
	}
	r.series(name, s, unit, samples)
	return ivs
}

// Summarize turns the polls of a window into figures: per pod, summed over
// the target's pods (subject "target") and per node. It is pure: the table
// tests feed it recorded summaries.
func Summarize(subjects Subjects, polls []Poll) *telemetry.Report {
	r := report{&telemetry.Report{Source: SourceName, Figures: []telemetry.Figure{}}}
	byNode := map[string][]Poll{}
	for _, p := range polls {
		byNode[p.Node] = append(byNode[p.Node], p)
	}
	var targets []podResult
	for _, pod := range subjects.Pods {
		res := r.pod(pod, byNode[pod.Node])
		if pod.Role == telemetry.RoleTarget {
			targets = append(targets, res)
		}
	}
	if len(targets) > 0 {
		r.targetSum(targets)
	}
	for _, n := range subjects.nodes() {
		r.node(n, byNode[n.Name])
	}
	r.Coarsen(0, SourceName)
	return r.Report
}
