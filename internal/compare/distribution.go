package compare

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Distribution is one changed operation's latency distribution for both
// variants: each side's histograms merged over its measurements of the
// step (true percentiles, not a median of percentiles), read at
// DistributionPercentiles, in milliseconds.
type Distribution struct {
	Step        string    `json:"step"`
	Operation   string    `json:"operation"`
	Percentiles []float64 `json:"percentiles"`
	Baseline    []float64 `json:"baselineMillis"`
	Candidate   []float64 `json:"candidateMillis"`
	// BaselineCount and CandidateCount are the requests each side's
	// merged histogram holds.
	BaselineCount  int64 `json:"baselineCount"`
	CandidateCount int64 `json:"candidateCount"`
	// SeriesName is the operation's latency series over time that both
	// sides recorded (latencyP99Millis, else p95, else p50), and
	// BaselineSeries and CandidateSeries its points, in seconds from the
	// start and milliseconds, in each side's typical compared measurement
	// of the step (the one whose median point is the side's median: not a
	// cold first run, not one that stalled); empty when a side has none.
	SeriesName      string  `json:"seriesName,omitempty"`
	BaselineSeries  []Point `json:"baselineSeries,omitempty"`
	CandidateSeries []Point `json:"candidateSeries,omitempty"`
}

// DistributionPercentiles are the points of a percentile plot, to p99.9.
var DistributionPercentiles = []float64{0, 50, 75, 90, 95, 99, 99.5, 99.9}

// maxDistributions bounds the plots: the changed operations, worst first.
const maxDistributions = 6

// distributions are the latency distributions of the operations the
// summary found changed (and of the whole run when it changed), from the
// histograms the measurements keep; operations without histograms on both
// sides are left out.
func distributions(rep *Report, baseline, candidate Side) []Distribution {
	if rep.Summary == nil {
		return nil
	}
	var out []Distribution
	seen := map[string]bool{}
	for _, f := range append(append([]Finding{}, rep.Summary.Worse...), rep.Summary.Better...) {
		step := f.Step
		if i := strings.Index(step, " vs "); i >= 0 {
			step = step[:i] // a paired step: the baseline's name
		}
		key := step + "/" + f.Operation
		if seen[key] || len(out) == maxDistributions {
			continue
		}
		seen[key] = true
		b, nb := mergedHistogram(baseline, step, f.Operation, nil)
		c, nc := mergedHistogram(candidate, step, f.Operation, rep.stepPairs())
		if b == nil || c == nil || nb == 0 || nc == 0 {
			continue
		}
		d := Distribution{Step: step, Operation: f.Operation, Percentiles: DistributionPercentiles, BaselineCount: nb, CandidateCount: nc}
		for _, p := range DistributionPercentiles {
			d.Baseline = append(d.Baseline, float64(b.ValueAtPercentile(math.Max(p, 0.0001)))/1000)
			d.Candidate = append(d.Candidate, float64(c.ValueAtPercentile(math.Max(p, 0.0001)))/1000)
		}
		for _, name := range latencySeries {
			key := results.Key{Name: name, Operation: f.Operation}.String()
			bs, cs := typicalSeries(baseline, step, key, nil), typicalSeries(candidate, step, key, rep.stepPairs())
			if len(bs) >= 2 && len(cs) >= 2 {
				d.SeriesName, d.BaselineSeries, d.CandidateSeries = name, bs, cs
				break
			}
		}
		out = append(out, d)
	}
	return out
}

// typicalSeries is a series of a side's typical compared measurement of a
// step (a candidate's step through pairs), downsampled: of the measurements
// that have it, the one whose median point is the median of theirs (the
// lower of the two middle ones at an even count, the earlier at a tie), so
// that a chart of one measurement shows neither the cold first one nor one
// that stalled.
func typicalSeries(side Side, step, key string, pairs map[string]string) []Point {
	type candidate struct {
		pts    [][2]float64
		median float64
	}
	var found []candidate
	for _, m := range comparedAt(side, step, pairs) {
		var pts [][2]float64
		var vs []float64
		for _, p := range m.Result.TimeSeries {
			if v, ok := p.Values[key]; ok {
				pts = append(pts, [2]float64{p.ElapsedSeconds, v})
				vs = append(vs, v)
			}
		}
		if len(pts) >= 2 {
			found = append(found, candidate{pts, medianOf(vs)})
		}
	}
	if len(found) == 0 {
		return nil
	}
	order := make([]int, len(found))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(found[a].median, found[b].median) })
	return downsample(found[order[(len(order)-1)/2]].pts)
}

// comparedAt are a side's measurements of a step (a candidate's step
// through pairs) that were compared and have a full result, in order.
func comparedAt(side Side, step string, pairs map[string]string) []Measurement {
	var out []Measurement
	for _, r := range side.Runs {
		for _, m := range r.Measurements {
			s := m.Step
			if p, ok := pairs[s]; ok {
				s = p
			}
			if s == step && m.Result != nil && r.compared(m.Step, m.Repetition) {
				out = append(out, m)
			}
		}
	}
	return out
}

// seriesSVG draws a changed operation's latency over time in one
// measurement of each variant, beside its distribution: whether the
// change is there throughout or in a stretch of it.
func seriesSVG(d Distribution, baseline, candidate string) string {
	if d.SeriesName == "" {
		return ""
	}
	const width, height, left, right, top, bottom = 520.0, 240.0, 56.0, 12.0, 28.0, 40.0
	plotW, plotH := width-left-right, height-top-bottom
	var tMax, vMax float64
	for _, p := range append(append([]Point{}, d.BaselineSeries...), d.CandidateSeries...) {
		tMax, vMax = math.Max(tMax, p[0]), math.Max(vMax, p[1])
	}
	if tMax <= 0 || vMax <= 0 {
		return ""
	}
	vMax = niceCeil(vMax * 1.05)
	x := func(t float64) float64 { return left + plotW*t/tMax }
	y := func(v float64) float64 { return top + plotH*(1-v/vMax) }
	var sb strings.Builder
	title := fmt.Sprintf("%s of %s at %s over time (ms; one measurement each)", d.SeriesName, orAll(d.Operation), d.Step)
	fmt.Fprintf(&sb, `<svg class="chart half opseries" viewBox="0 0 %g %g" width="%g" height="%g" role="img"><title>%s</title>`, width, height, width, height, template.HTMLEscapeString(title))
	fmt.Fprintf(&sb, `<text x="%g" y="16" class="ct">%s</text>`, left, template.HTMLEscapeString(title))
	for i := 0; i <= 4; i++ {
		v := vMax * float64(i) / 4
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-right, y(v), y(v), left-4, y(v)+4, fnum(v))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="ax" text-anchor="end">%s s</text>`, width-right, height-bottom+16, fnum(tMax))
	for k, side := range []struct {
		name string
		pts  []Point
	}{{baseline, d.BaselineSeries}, {candidate, d.CandidateSeries}} {
		var pts []string
		for _, p := range side.pts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p[0]), y(p[1])))
		}
		color := palette[k%len(palette)]
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s</title></polyline>`, color, strings.Join(pts, " "), template.HTMLEscapeString(side.name))
		fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" class="ax">%s</text>`,
			left+float64(k)*200, height-14, color, left+float64(k)*200+14, height-5, template.HTMLEscapeString(side.name))
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

// stepPairs maps the candidate's steps to the baseline's, from the rows.
func (r *Report) stepPairs() map[string]string {
	pairs := map[string]string{}
	for _, row := range r.Rows {
		if row.CandidateStep != "" {
			pairs[row.CandidateStep] = row.Step
		}
	}
	return pairs
}

// mergedHistogram merges a side's histograms of an operation at a step
// (a candidate's step through pairs), over its measurements that were
// compared (Succeeded and not rejected).
func mergedHistogram(side Side, step, op string, pairs map[string]string) (h interface {
	ValueAtPercentile(float64) int64
}, n int64) {
	merged := results.NewHistogram()
	for _, m := range comparedAt(side, step, pairs) {
		enc, ok := m.Result.Histograms[op]
		if !ok {
			continue
		}
		one, err := results.DecodeHistogram(enc)
		if err != nil {
			continue
		}
		merged.Merge(one)
	}
	if merged.TotalCount() == 0 {
		return nil, 0
	}
	return merged, merged.TotalCount()
}

// compared says whether a measurement of the run was compared: Succeeded
// and not rejected.
func (r Run) compared(step string, rep int32) bool {
	for _, st := range r.Steps {
		if st.Name != step {
			continue
		}
		for _, m := range st.Repetitions {
			if m.Index == rep {
				_, gone := benchv1.Rejected(r.Rejections, step, rep)
				return m.Verdict == benchv1.VerdictSucceeded && !gone
			}
		}
	}
	return false
}

// percentileSVG draws a distribution as a percentile plot: latency (log
// scale) against the percentile, a line per variant.
func percentileSVG(d Distribution, baseline, candidate string) string {
	const width, height, left, right, top, bottom = 520.0, 240.0, 56.0, 12.0, 28.0, 40.0
	plotW, plotH := width-left-right, height-top-bottom
	lo, hi := math.Inf(1), 0.0
	for _, v := range append(append([]float64{}, d.Baseline...), d.Candidate...) {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == 0 {
		return ""
	}
	lo, hi = math.Log10(lo*0.9), math.Log10(hi*1.1)
	if hi-lo < 0.3 {
		lo, hi = lo-0.15, hi+0.15
	}
	x := func(i int) float64 { return left + plotW*float64(i)/float64(len(d.Percentiles)-1) }
	y := func(v float64) float64 { return top + plotH*(1-(math.Log10(math.Max(v, 1e-9))-lo)/(hi-lo)) }
	var sb strings.Builder
	title := fmt.Sprintf("latency distribution of %s at %s (ms, log scale)", orAll(d.Operation), d.Step)
	fmt.Fprintf(&sb, `<svg class="chart half" viewBox="0 0 %g %g" width="%g" height="%g" role="img"><title>%s</title>`, width, height, width, height, template.HTMLEscapeString(title))
	fmt.Fprintf(&sb, `<text x="%g" y="16" class="ct">%s</text>`, left, template.HTMLEscapeString(title))
	for e := math.Ceil(lo); e <= hi; e++ {
		yy := y(math.Pow(10, e))
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-right, yy, yy, left-4, yy+4, fnum(math.Pow(10, e)))
	}
	for i, p := range d.Percentiles {
		label := "p" + strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", p), "0"), ".")
		if p == 0 {
			label = "min"
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ax" text-anchor="middle">%s</text>`, x(i), height-bottom+16, label)
	}
	for k, side := range []struct {
		name string
		vals []float64
		n    int64
	}{{baseline, d.Baseline, d.BaselineCount}, {candidate, d.Candidate, d.CandidateCount}} {
		var pts []string
		for i, v := range side.vals {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
		}
		color := palette[k%len(palette)]
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"><title>%s: %d requests</title></polyline>`, color, strings.Join(pts, " "), template.HTMLEscapeString(side.name), side.n)
		for i, v := range side.vals {
			fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s %s: %s ms</title></circle>`, x(i), y(v), color, template.HTMLEscapeString(side.name), template.HTMLEscapeString(labelOf(d.Percentiles[i])), fnum(v))
		}
		fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" class="ax">%s (%d requests)</text>`,
			left+float64(k)*200, height-14, color, left+float64(k)*200+14, height-5, template.HTMLEscapeString(side.name), side.n)
	}
	sb.WriteString(`</svg>`)
	return sb.String()
}

func labelOf(p float64) string {
	if p == 0 {
		return "min"
	}
	return fmt.Sprintf("p%g", p)
}

func orAll(op string) string {
	if op == "" {
		return "the whole run"
	}
	return op
}
