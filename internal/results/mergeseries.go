package results

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Parameters that say at which resolution a tool's time series and APDEX
// windows were built (a SeriesBuilder coarsens on its own, so load
// generators of one measurement may differ).
const (
	SeriesResolutionParam = "timeSeriesResolution"
	APDEXWindowParam      = "apdexWindow"
)

// mergeTimeSeries sets out's time series from those of load generators
// that measured together. Each generator's series may have been coarsened
// on its own, so points are matched by elapsed time, never by position:
// every series is brought to the coarsest resolution among them. Rates
// (x/s, tpm) are turned into counts over each point's interval, summed per
// interval of the coarse resolution and divided by its length: exact. The
// percentiles of an interval cannot be combined without its histograms:
// the largest is kept as an upper bound, named latencyP99UpperBoundMillis
// as merged metrics are. Other values are the first generator's. APDEX
// windows are merged apart: their counts add per window, and each window's
// APDEX is recomputed from the sums.
func mergeTimeSeries(out *Result, parts []*Result) {
	var series, windows [][]Point
	var resolutions, windowLengths []float64
	for _, p := range parts {
		if len(p.TimeSeries) == 0 {
			return
		}
		s, w := splitAPDEXPoints(p.TimeSeries)
		series, windows = append(series, s), append(windows, w)
		if len(s) > 0 {
			resolutions = append(resolutions, pointSpacing(p.Parameters[SeriesResolutionParam], s))
		}
		windowLengths = append(windowLengths, pointSpacing(p.Parameters[APDEXWindowParam], w))
	}
	if len(resolutions) == 0 {
		resolutions = []float64{0}
	}
	res := maxFloat(resolutions)
	pts, warnings := mergeSeriesByTime(series, res)
	if minFloat(resolutions) < res {
		warnings = append(warnings, fmt.Sprintf("the load generators' time series had resolutions from %gs to %gs: merged at %gs", minFloat(resolutions), res, res))
		setDuration(out, SeriesResolutionParam, res)
	}
	window := maxFloat(windowLengths)
	if minFloat(windowLengths) < window {
		setDuration(out, APDEXWindowParam, window)
	}
	pts = append(pts, mergeAPDEXWindows(windows, windowLengths, window)...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].ElapsedSeconds < pts[j].ElapsedSeconds })
	out.TimeSeries = pts
	out.Warnings = append(out.Warnings, warnings...)
}

func setDuration(out *Result, param string, seconds float64) {
	if _, ok := out.Parameters[param]; ok {
		out.SetParam(param, time.Duration(seconds*float64(time.Second)).String())
	}
}

// splitAPDEXPoints separates the APDEX windows' points from the others.
func splitAPDEXPoints(pts []Point) (series, windows []Point) {
	for _, p := range pts {
		s := Point{ElapsedSeconds: p.ElapsedSeconds, Values: map[string]float64{}}
		w := Point{ElapsedSeconds: p.ElapsedSeconds, Values: map[string]float64{}}
		for k, v := range p.Values {
			if isAPDEXKey(k) {
				w.Values[k] = v
			} else {
				s.Values[k] = v
			}
		}
		if len(s.Values) > 0 {
			series = append(series, s)
		}
		if len(w.Values) > 0 {
			windows = append(windows, w)
		}
	}
	return series, windows
}

func isAPDEXKey(k string) bool {
	switch name, _ := splitSeriesKey(k); name {
	case APDEXSeries, APDEXSatisfiedSeries, APDEXToleratingSeries, APDEXRequestsSeries:
		return true
	}
	return false
}

// pointSpacing is the resolution of a series in seconds: the one its tool
// declared, else the median interval between its points (the last one,
// often partial, aside).
func pointSpacing(declared string, pts []Point) float64 {
	if d, err := time.ParseDuration(declared); err == nil && d > 0 {
		return d.Seconds()
	}
	if len(pts) == 0 {
		return 0
	}
	if len(pts) == 1 {
		return pts[0].ElapsedSeconds
	}
	gaps := make([]float64, 0, len(pts)-1)
	prev := 0.0
	for _, p := range pts[:len(pts)-1] {
		gaps = append(gaps, p.ElapsedSeconds-prev)
		prev = p.ElapsedSeconds
	}
	sort.Float64s(gaps)
	return round6(gaps[len(gaps)/2])
}

// coarseBin accumulates the points of several series that fall in one
// interval of the coarse resolution.
type coarseBin struct {
	end    float64            // the latest end of a point in it (capped at the bin's)
	counts map[string]float64 // rates × time
	maxes  map[string]float64 // percentiles
	firsts map[string]firstValue
}

// firstValue is the first generator's latest value in a bin.
type firstValue struct {
	part int
	end  float64
	v    float64
}

func (b *coarseBin) add(part int, p Point, overlap, end float64) {
	b.end = max(b.end, end)
	for k, v := range p.Values {
		switch {
		case isPercentileKey(k):
			if m, ok := b.maxes[k]; !ok || v > m {
				b.maxes[k] = v
			}
		case isRateKey(k):
			b.counts[k] += v * overlap
		default:
			if f, ok := b.firsts[k]; !ok || part < f.part || part == f.part && end >= f.end {
				b.firsts[k] = firstValue{part: part, end: end, v: v}
			}
		}
	}
}

// isRateKey says whether a series value is a rate: per second, or one of
// the tools' throughputs (tpm).
func isRateKey(k string) bool {
	name, _ := splitSeriesKey(k)
	if strings.HasSuffix(name, "PerSecond") {
		return true
	}
	for _, t := range throughputSeries {
		if name == t {
			return true
		}
	}
	return false
}

// mergeSeriesByTime sums series at resolution res (seconds): the coarse
// interval k is (k·res, (k+1)·res]; a point whose interval (the end of the
// previous point, its own end] straddles two of them is shared between
// them by time.
func mergeSeriesByTime(series [][]Point, res float64) ([]Point, []string) {
	if res <= 0 {
		return nil, nil
	}
	eps := 1e-6 * res
	bins := map[int]*coarseBin{}
	ends := make([]float64, 0, len(series))
	for part, pts := range series {
		prev := 0.0
		for _, p := range pts {
			a, b := prev, p.ElapsedSeconds
			prev = b
			first, last := int(math.Floor(a/res+1e-6)), int(math.Ceil(b/res-1e-6))-1
			for k := first; k <= max(last, first); k++ {
				lo, hi := float64(k)*res, float64(k+1)*res
				overlap := min(b, hi) - max(a, lo)
				if overlap < eps && !(b <= a && k == first) {
					continue
				}
				bin := bins[k]
				if bin == nil {
					bin = &coarseBin{counts: map[string]float64{}, maxes: map[string]float64{}, firsts: map[string]firstValue{}}
					bins[k] = bin
				}
				bin.add(part, p, max(overlap, 0), min(b, hi))
			}
		}
		if len(pts) > 0 {
			ends = append(ends, pts[len(pts)-1].ElapsedSeconds)
		}
	}
	idx := make([]int, 0, len(bins))
	for k := range bins {
		idx = append(idx, k)
	}
	sort.Ints(idx)
	idx = foldShortTail(bins, idx, res)
	out := make([]Point, 0, len(idx))
	prevEnd := 0.0
	for _, k := range idx {
		bin := bins[k]
		p := Point{ElapsedSeconds: round6(bin.end), Values: map[string]float64{}}
		if length := bin.end - prevEnd; length > 0 {
			for key, c := range bin.counts {
				p.Values[key] = round6(c / length)
			}
		}
		for key, v := range bin.maxes {
			p.Values[upperBoundKey(key)] = v
		}
		for key, f := range bin.firsts {
			p.Values[key] = f.v
		}
		prevEnd = bin.end
		out = append(out, p)
	}
	var warnings []string
	if len(ends) > 1 && maxFloat(ends)-minFloat(ends) > res {
		warnings = append(warnings, fmt.Sprintf("the load generators' time series end at different times (%gs to %gs): past %gs the merged series counts only the generators still reporting",
			minFloat(ends), maxFloat(ends), minFloat(ends)))
	}
	return out, warnings
}

// foldShortTail joins a last coarse interval shorter than half the
// resolution to the one before it, as a SeriesBuilder does, so that a few
// samples in a sliver of time never read as a throughput.
func foldShortTail(bins map[int]*coarseBin, idx []int, res float64) []int {
	n := len(idx)
	if n < 2 || idx[n-2] != idx[n-1]-1 {
		return idx
	}
	last, prev := bins[idx[n-1]], bins[idx[n-2]]
	if last.end-float64(idx[n-1])*res >= res/2 {
		return idx
	}
	prev.end = last.end
	for k, c := range last.counts {
		prev.counts[k] += c
	}
	for k, v := range last.maxes {
		prev.maxes[k] = max(prev.maxes[k], v)
	}
	for k, f := range last.firsts {
		if g, ok := prev.firsts[k]; !ok || f.part <= g.part {
			prev.firsts[k] = f
		}
	}
	return idx[:n-1]
}

// upperBoundKey renames a merged percentile: latencyP99Millis[op] →
// latencyP99UpperBoundMillis[op].
func upperBoundKey(k string) string {
	name, op := splitSeriesKey(k)
	if pm := percentileName.FindStringSubmatch(name); pm != nil && pm[2] == "" {
		name = "latencyP" + pm[1] + "UpperBoundMillis"
	}
	return Key{Name: name, Operation: op}.String()
}

// mergeAPDEXWindows adds up the generators' APDEX counts per window of the
// longest window length (a multiple of the others': windows double from
// the same length) and recomputes each window's APDEX.
func mergeAPDEXWindows(windows [][]Point, lengths []float64, window float64) []Point {
	if window <= 0 {
		return nil
	}
	type acc struct {
		end    float64
		counts map[string]float64
	}
	byIndex := map[int]*acc{}
	for part, pts := range windows {
		length := lengths[part]
		if length <= 0 {
			length = window
		}
		for _, p := range pts {
			// A point is at its window's end, or at the last request.
			own := max(math.Ceil(p.ElapsedSeconds/length-1e-6)-1, 0)
			k := int(math.Floor(own*length/window + 1e-6))
			a := byIndex[k]
			if a == nil {
				a = &acc{counts: map[string]float64{}}
				byIndex[k] = a
			}
			a.end = max(a.end, p.ElapsedSeconds)
			for key, v := range p.Values {
				if name, _ := splitSeriesKey(key); name != APDEXSeries {
					a.counts[key] += v
				}
			}
		}
	}
	idx := make([]int, 0, len(byIndex))
	for k := range byIndex {
		idx = append(idx, k)
	}
	sort.Ints(idx)
	out := make([]Point, 0, len(idx))
	for _, k := range idx {
		a := byIndex[k]
		p := Point{ElapsedSeconds: round6(a.end), Values: a.counts}
		recomputeAPDEX(p.Values)
		out = append(out, p)
	}
	return out
}

// recomputeAPDEX sets apdex[op] from the (summed) counts beside it.
func recomputeAPDEX(v map[string]float64) {
	for k, n := range v {
		name, op := splitSeriesKey(k)
		if name != APDEXRequestsSeries || n <= 0 {
			continue
		}
		s := v[Key{Name: APDEXSatisfiedSeries, Operation: op}.String()]
		t := v[Key{Name: APDEXToleratingSeries, Operation: op}.String()]
		v[Key{Name: APDEXSeries, Operation: op}.String()] = round6((s + t/2) / n)
	}
}

// splitSeriesKey reverses Key.String: "name[op]" → name, op.
func splitSeriesKey(k string) (string, string) {
	if i := strings.IndexByte(k, '['); i > 0 && strings.HasSuffix(k, "]") {
		return k[:i], k[i+1 : len(k)-1]
	}
	return k, ""
}

func maxFloat(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

func minFloat(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}
