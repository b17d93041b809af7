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
// a share of its level: the moment it began and how long it lasted, from
// the start of the tool's progress series.
type Stall struct {
	From, To time.Duration
	// Lowest is the lowest throughput in it. Level is the measurement's
	// median, or, when that is zero (OfMean), its time-weighted mean.
	Lowest, Level float64
	OfMean        bool
	Series        string
}

// Length of the stall.
func (s Stall) Length() time.Duration { return s.To - s.From }

func (s Stall) String() string {
	return fmt.Sprintf("%s stalled from %s to %s into the measurement (%s; lowest %.4g, %s %.4g)",
		s.Series, s.From, s.To, s.Length(), s.Lowest, s.levelName(), s.Level)
}

// basis says, in a judgement, what the stretch fell below a share of.
func (s Stall) basis() string {
	if s.OfMean {
		return "time-weighted mean (its median is 0)"
	}
	return "median"
}

// levelName says what Level is.
func (s Stall) levelName() string {
	if s.OfMean {
		return "mean"
	}
	return "median"
}

// throughputSeries are the keys of the tools' progress series that carry
// throughput, for tools whose series is not named as their primary metric.
var throughputSeries = []string{"transactionsPerSecond", "opsPerSecond", "tpm", "requestsPerSecond"}

// progressInterval is the throughput v of a progress series from one of
// its points (or its start) to the next, in seconds from its start.
type progressInterval struct{ from, to, v float64 }

// Stalls finds the stretches of r's progress series (pgbench --progress,
// YCSB's status lines, memtier's per-second statistics, HammerDB's
// transaction counter, k6's counts at their finest resolution) in which
// throughput was below percent of its median: each interval of the series
// is the throughput from the previous point to its own, so a stall spans
// from the point before its first low interval to its last low point.
// Series of fewer than three points say nothing. The whole series counts:
// ApplyThresholds judges the part after the warm-up.
func Stalls(r *Result, percent float64) []Stall {
	key, ivs := progressOf(r)
	return stallsIn(key, ivs, percent)
}

func stallsIn(key string, ivs []progressInterval, percent float64) []Stall {
	var out []Stall
	for _, d := range stretchesBelow(key, ivs, percent) {
		out = append(out, d.Stall)
	}
	return out
}

// stretchesBelow returns the runs of intervals below percent of their
// level, each with its mean. The level is their median, or, when at least
// half of them are at zero, their time-weighted mean: the zero stretches
// of a mostly stalled run are then stalls.
func stretchesBelow(key string, ivs []progressInterval, percent float64) []Dip {
	if len(ivs) < 3 {
		return nil
	}
	level, ofMean := medianOf(ivs), false
	if level <= 0 {
		level, ofMean = timeMean(ivs), true
	}
	if level <= 0 {
		return nil
	}
	var out []Dip
	for _, run := range runsBelow(ivs, level*percent/100) {
		out = append(out, Dip{Stall: Stall{From: seconds(run[0].from), To: seconds(run[len(run)-1].to),
			Lowest: lowestOf(run), Level: level, OfMean: ofMean, Series: key}, Mean: timeMean(run)})
	}
	return out
}

// progressOf returns the key of r's throughput series and its intervals in
// time order: from Result.Progress, at the tool's finest resolution, when
// it has the key.
func progressOf(r *Result) (string, []progressInterval) {
	key := seriesKey(r)
	if key == "" {
		return "", nil
	}
	if ivs := r.Progress.intervals(key); len(ivs) > 0 {
		return key, ivs
	}
	type pt struct{ t, v float64 }
	var pts []pt
	for _, p := range r.TimeSeries {
		if v, ok := p.Values[key]; ok {
			pts = append(pts, pt{p.ElapsedSeconds, v})
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].t < pts[j].t })
	var ivs []progressInterval
	for i, p := range pts {
		iv := progressInterval{to: p.t, v: p.v}
		if i > 0 {
			iv.from = pts[i-1].t
		}
		// A point at the start (HammerDB's counter prints 0 tpm at 0 s)
		// or at the same instant as the one before measures no time.
		if iv.to > iv.from {
			ivs = append(ivs, iv)
		}
	}
	return key, ivs
}

// runsBelow returns the runs of consecutive intervals whose throughput is
// below limit.
func runsBelow(ivs []progressInterval, limit float64) [][]progressInterval {
	var out [][]progressInterval
	start := -1
	for i := 0; i <= len(ivs); i++ {
		low := i < len(ivs) && ivs[i].v < limit
		switch {
		case low && start < 0:
			start = i
		case !low && start >= 0:
			out = append(out, ivs[start:i])
			start = -1
		}
	}
	return out
}

func medianOf(ivs []progressInterval) float64 {
	vals := make([]float64, len(ivs))
	for i, iv := range ivs {
		vals[i] = iv.v
	}
	sort.Float64s(vals)
	n := len(vals)
	if n%2 == 0 {
		return (vals[n/2-1] + vals[n/2]) / 2
	}
	return vals[n/2]
}

func lowestOf(ivs []progressInterval) float64 {
	low := ivs[0].v
	for _, iv := range ivs[1:] {
		low = min(low, iv.v)
	}
	return low
}

// timeMean is the throughput over the intervals: each weighs by its length.
func timeMean(ivs []progressInterval) float64 {
	var sum, span float64
	for _, iv := range ivs {
		sum += iv.v * (iv.to - iv.from)
		span += iv.to - iv.from
	}
	if span <= 0 {
		return 0
	}
	return sum / span
}

// intervals are the key's rates as intervals; none without them.
func (p *Progress) intervals(key string) []progressInterval {
	if p == nil {
		return nil
	}
	rates := p.Rates[key]
	res := p.Interval.Seconds()
	ivs := make([]progressInterval, len(rates))
	for i, v := range rates {
		ivs[i] = progressInterval{from: float64(i) * res, to: float64(i+1) * res, v: v}
	}
	if n := len(ivs); n > 0 {
		ivs[n-1].to = p.EndSeconds
	}
	return ivs
}

func seriesKey(r *Result) string {
	has := func(k string) bool {
		if r.Progress != nil && len(r.Progress.Rates[k]) > 0 {
			return true
		}
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

// Throughput returns the key of r's throughput series (what its stall,
// dip and drift checks read) and its points in time order: seconds from
// the start of the measurement and the value; "" when it has none.
func Throughput(r *Result) (string, [][2]float64) {
	key, ivs := progressOf(r)
	out := make([][2]float64, len(ivs))
	for i, iv := range ivs {
		out[i] = [2]float64{iv.to, iv.v}
	}
	return key, out
}
