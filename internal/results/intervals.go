package results

import (
	"math"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// DefaultSeriesBudgetBytes bounds the JSON of a measurement's time series
// built by a SeriesBuilder: past it, the resolution doubles.
const DefaultSeriesBudgetBytes = 80 << 10

// openIntervals is how many intervals stay open for samples that arrive
// late (a tool flushes its samples in batches).
const openIntervals = 3

// SeriesBuilder turns a stream of timestamped observations into a
// TimeSeries at a fixed resolution with flat memory: counts per interval
// (reported per second) and latency percentiles per interval from
// histograms that are reset and reused. Each point's ElapsedSeconds is the
// end of its interval, from the first observation; its values cover the
// time since the previous point. When the series' JSON would pass its
// budget, adjacent points are merged and the resolution doubles: counts
// stay exact, the percentiles of merged points are the larger of the two
// (an upper bound, reported by UpperBoundUntil). The counts without an
// operation are kept at the base resolution as well (Progress), so that
// coarsening hides no stall from the stability checks.
type SeriesBuilder struct {
	res, budget int64 // res in ns
	origin      time.Time
	started     bool
	last        int64 // latest observation, ns after origin
	factor      int64 // base intervals per point
	closedBelow int64 // base intervals below it are folded
	open        map[int64]*seriesInterval
	acc         *seriesInterval
	accFrom     int64
	points      []Point
	size        int
	keys        []string // count keys in the order first seen
	known       map[string]bool
	pool        []*hdr.Histogram
	upperUntil  float64
	late        int64
	// base holds the counts without an operation per base interval: a
	// float per key and base interval, 691 KB per key over 24 h at 1 s.
	base     map[string][]float64
	finished bool
}

type seriesInterval struct {
	counts map[string]float64
	hists  map[string]*hdr.Histogram
}

// NewSeriesBuilder returns a builder at a resolution (whole seconds; zero:
// one second) whose JSON stays under budget bytes (zero: the default).
func NewSeriesBuilder(resolution time.Duration, budget int) *SeriesBuilder {
	if resolution < time.Second {
		resolution = time.Second
	}
	if budget <= 0 {
		budget = DefaultSeriesBudgetBytes
	}
	return &SeriesBuilder{res: int64(resolution.Truncate(time.Second)), budget: int64(budget), factor: 1,
		open: map[int64]*seriesInterval{}, known: map[string]bool{}, base: map[string][]float64{}}
}

// Start sets the series' origin unless it has one.
func (b *SeriesBuilder) Start(t time.Time) {
	if !b.started {
		b.origin, b.started = t, true
	}
}

// Count adds n to key in t's interval; the point reports it per second.
func (b *SeriesBuilder) Count(t time.Time, key string, n float64) {
	iv := b.at(t)
	if !b.known[key] {
		b.known[key] = true
		b.keys = append(b.keys, key)
	}
	iv.counts[key] += n
}

// Record adds a latency in microseconds of an operation (empty: overall)
// to t's interval; the point reports its p50, p95 and p99.
func (b *SeriesBuilder) Record(t time.Time, op string, micros int64) {
	iv := b.at(t)
	h := iv.hists[op]
	if h == nil {
		h = b.histogram()
		iv.hists[op] = h
	}
	_ = h.RecordValue(clampMicros(micros))
}

func clampMicros(v int64) int64 { return min(max(v, histLowest), histHighest) }

func (b *SeriesBuilder) histogram() *hdr.Histogram {
	if n := len(b.pool); n > 0 {
		h := b.pool[n-1]
		b.pool = b.pool[:n-1]
		return h
	}
	return NewHistogram()
}

func (b *SeriesBuilder) at(t time.Time) *seriesInterval {
	b.Start(t)
	d := int64(t.Sub(b.origin))
	d = max(d, 0)
	b.last = max(b.last, d)
	idx := d / b.res
	if idx < b.closedBelow {
		b.late++
		idx = b.closedBelow
	}
	for b.closedBelow <= idx-openIntervals {
		b.fold(b.closedBelow)
	}
	iv := b.open[idx]
	if iv == nil {
		iv = &seriesInterval{counts: map[string]float64{}, hists: map[string]*hdr.Histogram{}}
		b.open[idx] = iv
	}
	return iv
}

// fold closes base interval j (empty or not) into the point being built.
func (b *SeriesBuilder) fold(j int64) {
	b.closedBelow = j + 1
	b.absorb(j)
	if j+1-b.accFrom == b.factor {
		b.emit(float64((j+1)*b.res)/1e9, float64(b.factor*b.res)/1e9)
	}
}

func (b *SeriesBuilder) emit(end, length float64) {
	p := Point{ElapsedSeconds: round6(end), Values: map[string]float64{}}
	for _, k := range b.keys {
		p.Values[k] = round6(b.acc.counts[k] / length)
	}
	for op, h := range b.acc.hists {
		if h.TotalCount() > 0 {
			for _, q := range seriesPercentiles {
				p.Values[Key{Name: q.name, Operation: op}.String()] = round6(float64(h.ValueAtQuantile(q.q)) / 1000)
			}
		}
		h.Reset()
		b.pool = append(b.pool, h)
	}
	b.acc = nil
	b.points = append(b.points, p)
	b.size += pointSize(p)
	if b.size > int(b.budget) && len(b.points)%2 == 0 {
		b.coarsen()
	}
}

var seriesPercentiles = []struct {
	name string
	q    float64
}{{"latencyP50Millis", 50}, {"latencyP95Millis", 95}, {"latencyP99Millis", 99}}

// coarsen merges pairs of points and doubles the resolution.
func (b *SeriesBuilder) coarsen() {
	out := b.points[:0]
	prev := 0.0
	b.size = 0
	for i := 0; i+1 < len(b.points); i += 2 {
		p := mergeAdjacent(b.points[i], b.points[i+1], prev)
		prev = p.ElapsedSeconds
		out = append(out, p)
		b.size += pointSize(p)
	}
	b.points = out
	b.factor *= 2
	b.upperUntil = prev
}

// mergeAdjacent merges two consecutive points (prev is the end of the one
// before them): rates are weighted by the intervals' lengths, percentiles
// are the larger.
func mergeAdjacent(a, c Point, prev float64) Point {
	la, lc := a.ElapsedSeconds-prev, c.ElapsedSeconds-a.ElapsedSeconds
	p := Point{ElapsedSeconds: c.ElapsedSeconds, Values: map[string]float64{}}
	for k, v := range c.Values {
		av, ok := a.Values[k]
		switch {
		case isPercentileKey(k):
			if ok {
				v = math.Max(v, av)
			}
		default:
			v = round6((av*la + v*lc) / (la + lc))
		}
		p.Values[k] = v
	}
	for k, v := range a.Values {
		if _, ok := p.Values[k]; !ok {
			if isPercentileKey(k) {
				p.Values[k] = v
			} else {
				p.Values[k] = round6(v * la / (la + lc))
			}
		}
	}
	return p
}

func isPercentileKey(k string) bool {
	name := k
	for i := range k {
		if k[i] == '[' {
			name = k[:i]
			break
		}
	}
	return percentileName.MatchString(name)
}

// Finish closes the last intervals and returns the series. The last,
// partial interval is as long as the observations it holds; when shorter
// than half the resolution its counts join the previous point and its
// percentiles are dropped, so that a few samples in a sliver of time never
// read as a throughput.
func (b *SeriesBuilder) Finish() []Point {
	if !b.started {
		return nil
	}
	lastIdx := b.last / b.res
	for b.closedBelow < lastIdx {
		b.fold(b.closedBelow)
	}
	// The last base interval, partial.
	b.absorb(lastIdx)
	end := float64(b.last) / 1e9
	length := end - float64(b.accFrom*b.res)/1e9
	if length < float64(b.res)/2e9 && len(b.points) > 0 {
		p := &b.points[len(b.points)-1]
		prev := 0.0
		if len(b.points) > 1 {
			prev = b.points[len(b.points)-2].ElapsedSeconds
		}
		lp := p.ElapsedSeconds - prev
		for _, k := range b.keys {
			p.Values[k] = round6((p.Values[k]*lp + b.acc.counts[k]) / (lp + length))
		}
		p.ElapsedSeconds = round6(end)
	} else if length > 0 {
		b.emit(end, length)
	}
	b.finished = true
	return b.points
}

// Progress returns, once Finish has run, the counts without an operation
// at the base resolution, as Result.Progress carries them; nil without
// observations. As in the series, a last interval shorter than half the
// resolution joins the one before it.
func (b *SeriesBuilder) Progress() *Progress {
	if !b.finished {
		return nil
	}
	res := float64(b.res) / 1e9
	lastIdx := b.last / b.res
	end := float64(b.last) / 1e9
	lastLen := end - float64(lastIdx)*res
	joined := lastLen < res/2
	n := lastIdx + 1
	if joined {
		n = lastIdx
	}
	if n == 0 {
		return nil
	}
	p := &Progress{Interval: time.Duration(b.res), EndSeconds: round6(end), Rates: map[string][]float64{}}
	for k, counts := range b.base {
		counts = append(counts, make([]float64, max(0, int(lastIdx)+1-len(counts)))...)
		rates := make([]float64, n)
		for i := range rates {
			rates[i] = counts[i] / res
		}
		if joined {
			rates[n-1] = (counts[n-1] + counts[lastIdx]) / (res + lastLen)
		} else {
			rates[n-1] = counts[lastIdx] / lastLen
		}
		p.Rates[k] = rates
	}
	return p
}

// keepBase adds base interval j's counts without an operation to base.
func (b *SeriesBuilder) keepBase(j int64, iv *seriesInterval) {
	for k, v := range iv.counts {
		if strings.Contains(k, "[") {
			continue
		}
		c := b.base[k]
		if pad := int(j) + 1 - len(c); pad > 0 {
			c = append(c, make([]float64, pad)...)
		}
		c[j] += v
		b.base[k] = c
	}
}

// Resolution is the series' resolution after any coarsening.
func (b *SeriesBuilder) Resolution() time.Duration { return time.Duration(b.res * b.factor) }

// UpperBoundUntil is the elapsed time up to which the series was coarsened:
// the percentiles of points up to it are upper bounds. Zero: none.
func (b *SeriesBuilder) UpperBoundUntil() float64 { return b.upperUntil }

// Late counts observations that came after their interval was closed and
// were counted in the oldest open one.
func (b *SeriesBuilder) Late() int64 { return b.late }

// Origin is the instant of the first observation.
func (b *SeriesBuilder) Origin() (time.Time, bool) { return b.origin, b.started }

func pointSize(p Point) int {
	n := 24
	for k, v := range p.Values {
		n += len(k) + 4 + len(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return n
}

func round6(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// absorb adds base interval j (empty or not) to the point being built,
// starting one if none is, and returns its histograms to the pool.
func (b *SeriesBuilder) absorb(j int64) {
	iv := b.open[j]
	delete(b.open, j)
	if b.acc == nil {
		b.acc, b.accFrom = &seriesInterval{counts: map[string]float64{}, hists: map[string]*hdr.Histogram{}}, j
	}
	if iv == nil {
		return
	}
	b.keepBase(j, iv)
	for k, v := range iv.counts {
		b.acc.counts[k] += v
	}
	for op, h := range iv.hists {
		if a := b.acc.hists[op]; a != nil {
			a.Merge(h)
			h.Reset()
			b.pool = append(b.pool, h)
		} else {
			b.acc.hists[op] = h
		}
	}
}
