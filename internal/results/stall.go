package results

import (
	"fmt"
	"sort"
	"time"
)

// DefaultStallPercent: throughput below this share of a measurement's
// median is a stall.
const DefaultStallPercent = 10

// Stall is a stretch of a measurement in which its throughput stayed below
// a share of its median: the moment it began and how long it lasted, from
// the start of the tool's progress series.
type Stall struct {
	From, To time.Duration
	// Lowest is the lowest throughput in it; Median the measurement's.
	Lowest, Median float64
	Series         string
}

// Length of the stall.
func (s Stall) Length() time.Duration { return s.To - s.From }

func (s Stall) String() string {
	return fmt.Sprintf("%s stalled from %s to %s into the measurement (%s; lowest %.4g, median %.4g)",
		s.Series, s.From, s.To, s.Length(), s.Lowest, s.Median)
}

// throughputSeries are the keys of the tools' progress series that carry
// throughput, for tools whose series is not named as their primary metric.
var throughputSeries = []string{"transactionsPerSecond", "opsPerSecond", "tpm", "requestsPerSecond"}

// Stalls finds the stretches of r's progress series (pgbench --progress,
// YCSB's status lines, memtier's per-second statistics, HammerDB's
// transaction counter) in which throughput was below percent of its
// median: each interval of the series is the throughput from the previous
// point to its own, so a stall spans from the point before its first low
// interval to its last low point. Series of fewer than three points say
// nothing.
func Stalls(r *Result, percent float64) []Stall {
	key := seriesKey(r)
	if key == "" {
		return nil
	}
	type pt struct{ t, v float64 }
	var pts []pt
	for _, p := range r.TimeSeries {
		if v, ok := p.Values[key]; ok {
			pts = append(pts, pt{p.ElapsedSeconds, v})
		}
	}
	if len(pts) < 3 {
		return nil
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].t < pts[j].t })
	vals := make([]float64, len(pts))
	for i, p := range pts {
		vals[i] = p.v
	}
	sort.Float64s(vals)
	median := vals[len(vals)/2]
	if len(vals)%2 == 0 {
		median = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	if median <= 0 {
		return nil
	}
	limit := median * percent / 100
	var out []Stall
	var cur *Stall
	for i, p := range pts {
		if p.v >= limit {
			cur = nil
			continue
		}
		start := 0.0
		if i > 0 {
			start = pts[i-1].t
		}
		if cur == nil {
			out = append(out, Stall{From: seconds(start), Lowest: p.v, Median: median, Series: key})
			cur = &out[len(out)-1]
		}
		cur.To = seconds(p.t)
		cur.Lowest = min(cur.Lowest, p.v)
	}
	return out
}

func seriesKey(r *Result) string {
	has := func(k string) bool {
		for _, p := range r.TimeSeries {
			if _, ok := p.Values[k]; ok {
				return true
			}
		}
		return false
	}
	if has(r.Primary.Name) {
		return r.Primary.Name
	}
	for _, k := range throughputSeries {
		if has(k) {
			return k
		}
	}
	return ""
}

func seconds(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// JudgeStalls reports every stall of a measurement as a warning, and makes
// the measurement Invalid when one lasted longer than maxStall (zero: never).
// A stall means the numbers average a stopped system with a running one.
func JudgeStalls(r *Result, percent float64, maxStall time.Duration) {
	if percent <= 0 {
		percent = DefaultStallPercent
	}
	for _, s := range Stalls(r, percent) {
		msg := fmt.Sprintf("%s: below %g%% of its median", s, percent)
		if maxStall > 0 && s.Length() > maxStall {
			r.Invalidate("%s, longer than validity.maxStall %s", msg, maxStall)
			continue
		}
		r.Warnings = append(r.Warnings, msg)
	}
}
