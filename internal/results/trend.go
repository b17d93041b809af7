package results

import (
	"sort"
	"time"
)

// The trends of a long measurement (a capacity soak): the least-squares
// line of one series over the measurement after skip, as a Drift. Each
// is nil when the series is missing or holds fewer than three intervals
// after skip.

// TrendOf is the trend of r's time series key (a throughput, a latency
// per interval), in percent of its mean.
func TrendOf(r *Result, key string, skip time.Duration) *Drift {
	return lineOf(key, after(pointIntervals(r.TimeSeries, key), skip), false)
}

// ThroughputTrend is the trend of r's progress series (the one stalls,
// dips and drift are judged on), after skip and any ramp-up the tool
// reported, in percent of its mean.
func ThroughputTrend(r *Result, skip time.Duration) *Drift {
	key, ivs := progressOf(r)
	return lineOf(key, after(ivs, skip+rampUp(r)), false)
}

// ErrorShareTrend is the trend of the share of failed requests per
// interval, in percentage points: pgbench's failed transactions per
// progress interval against its transactions, or a tool's
// errorsPerSecond against its requestsPerSecond. The key it names is the
// error series.
func ErrorShareTrend(r *Result, skip time.Duration) *Drift {
	type pair struct {
		errors, total string
		rates         bool // errors per second, not per interval
	}
	for _, p := range []pair{
		{"failedTransactions", "transactionsPerSecond", false},
		{"errorsPerSecond", "requestsPerSecond", true},
	} {
		var ivs []progressInterval
		prev := 0.0
		for _, pt := range sortedPoints(r.TimeSeries) {
			total, ok := pt.Values[p.total]
			if !ok {
				continue
			}
			errs, length := pt.Values[p.errors], pt.ElapsedSeconds-prev
			from := prev
			prev = pt.ElapsedSeconds
			if length <= 0 {
				continue
			}
			done := total*length + errs // per-interval counts
			if p.rates {
				done = total // both per second; requests include the failed ones
			}
			share := 0.0
			if done > 0 {
				share = 100 * errs / done
			}
			ivs = append(ivs, progressInterval{from: from, to: pt.ElapsedSeconds, v: share})
		}
		if len(ivs) > 0 {
			return lineOf(p.errors, after(ivs, skip), true)
		}
	}
	return nil
}

// SampleTrend is the trend of a telemetry series (a gauge such as the
// target's memory), in percent of its mean, from start + skip.
func SampleTrend(s Series, start time.Time, skip time.Duration) *Drift {
	var ivs []progressInterval
	for i, x := range s.Samples {
		if i == 0 {
			continue
		}
		from, to := s.Samples[i-1].Time.Sub(start).Seconds(), x.Time.Sub(start).Seconds()
		if to > from {
			// A gauge is read at an instant: the interval ending at it carries it.
			ivs = append(ivs, progressInterval{from: from, to: to, v: x.Value})
		}
	}
	return lineOf(s.Name, after(ivs, skip), false)
}

func pointIntervals(ts []Point, key string) []progressInterval {
	var ivs []progressInterval
	prev := 0.0
	for _, p := range sortedPoints(ts) {
		v, ok := p.Values[key]
		if !ok {
			continue
		}
		if p.ElapsedSeconds > prev {
			ivs = append(ivs, progressInterval{from: prev, to: p.ElapsedSeconds, v: v})
		}
		prev = p.ElapsedSeconds
	}
	return ivs
}

func sortedPoints(ts []Point) []Point {
	out := append([]Point(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].ElapsedSeconds < out[j].ElapsedSeconds })
	return out
}

func after(ivs []progressInterval, skip time.Duration) []progressInterval {
	var out []progressInterval
	for _, iv := range ivs {
		if iv.from >= skip.Seconds()-1e-9 {
			out = append(out, iv)
		}
	}
	return out
}
