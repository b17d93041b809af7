package compare

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Timeline is one measurement over its duration, as the report draws it:
// the tool's throughput series and, when telemetry recorded it, the
// target's CPU, in seconds from the start of the measurement, with its
// stalls marked. A report keeps, per variant at the last step, the first
// valid measurement and up to two that are not (a stall is why a run is
// thrown away: the chart shows where).
type Timeline struct {
	Variant    string  `json:"variant"`
	Run        string  `json:"run"`
	Step       string  `json:"step"`
	Repetition int32   `json:"repetition"`
	Series     string  `json:"series"`
	Valid      bool    `json:"valid"`
	Note       string  `json:"note,omitempty"`
	Stalls     []Span  `json:"stalls,omitempty"`
	Points     []Point `json:"points"`
	CPU        []Point `json:"cpu,omitempty"`
	CPUUnit    string  `json:"cpuUnit,omitempty"`
	// Latency is the tool's latency series (LatencySeries), when it
	// reports one over time.
	Latency       []Point `json:"latency,omitempty"`
	LatencySeries string  `json:"latencySeries,omitempty"`
	// Disturbances are the measurement's disturbance windows and the
	// target's events (spec.disturbances); Aligned is the moment the first
	// took effect, in seconds from the start: a report draws disturbed
	// measurements of both variants aligned on it.
	Disturbances []DisturbanceSpan `json:"disturbances,omitempty"`
	Aligned      *float64          `json:"aligned,omitempty"`
}

// DisturbanceSpan is a disturbance's window in a measurement, from the
// moment it took effect to its end (for a member loss, to full
// redundancy, else a new primary), with the target's events.
type DisturbanceSpan struct {
	Name   string  `json:"name"`
	Kind   string  `json:"kind"`
	From   float64 `json:"from"`
	To     float64 `json:"to"`
	Events []Mark  `json:"events,omitempty"`
}

// Mark is an event at a moment of a measurement.
type Mark struct {
	At   float64 `json:"at"`
	Text string  `json:"text"`
}

// latencySeries are the latency series a timeline draws, in order of
// preference.
var latencySeries = []string{"latencyP99Millis", "latencyAverageMillis", "latencyP95Millis", "latencyP50Millis"}

// Point is a time (seconds from the start) and a value.
type Point [2]float64

// Span is a stretch of a measurement, in seconds from its start.
type Span struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
}

// maxTimelinePoints bounds a timeline: longer series are averaged over
// equal buckets (stalls are marked from the full series).
const maxTimelinePoints = 300

// drawn is one measurement a report draws over time.
type drawn struct {
	variant string
	run     Run
	step    string
	rep     benchv1.RepetitionStatus
	valid   bool
	res     *results.Result
}

// eachDrawable calls f, per variant at the last step, for every
// measurement with a full result in order until f has taken (returned
// true for) one valid measurement and two that are not.
func eachDrawable(sides []Side, f func(d drawn) bool) {
	for _, side := range sides {
		valid, other := 0, 0
		for _, r := range side.Runs {
			if len(r.Steps) == 0 {
				continue
			}
			last := r.Steps[len(r.Steps)-1]
			for _, rep := range last.Repetitions {
				ok := rep.Verdict == benchv1.VerdictSucceeded
				if _, rejected := benchv1.Rejected(r.Rejections, last.Name, rep.Index); rejected {
					ok = false
				}
				if (ok && valid >= 1) || (!ok && other >= 2) {
					continue
				}
				res := r.result(last.Name, rep.Index)
				if res == nil || !f(drawn{variant: side.Name, run: r, step: last.Name, rep: rep, valid: ok, res: res}) {
					continue
				}
				if ok {
					valid++
				} else {
					other++
				}
			}
		}
	}
}

// timelines picks the measurements a report draws over time: those with
// a throughput series.
func timelines(sides []Side) []Timeline {
	var out []Timeline
	eachDrawable(sides, func(d drawn) bool {
		key, pts := results.Throughput(d.res)
		if len(pts) < 2 {
			return false
		}
		tl := Timeline{Variant: d.variant, Run: d.run.Name, Step: d.step, Repetition: d.rep.Index, Series: key, Valid: d.valid,
			Note: strings.Join(d.rep.Reasons, "; "), Points: downsample(pts)}
		for _, s := range results.Stalls(d.res, results.DefaultStallPercent) {
			tl.Stalls = append(tl.Stalls, Span{From: s.From.Seconds(), To: s.To.Seconds()})
		}
		tl.CPU, tl.CPUUnit = cpuTimeline(d.res)
		tl.LatencySeries, tl.Latency = latencyTimeline(d.res)
		tl.Disturbances, tl.Aligned = disturbanceSpans(d.res)
		out = append(out, tl)
		return true
	})
	return out
}

// result is a measurement's full result, nil when the run has none.
func (r Run) result(step string, rep int32) *results.Result {
	for _, m := range r.Measurements {
		if m.Step == step && m.Repetition == rep {
			return m.Result
		}
	}
	return nil
}

// cpuTimeline is the target's CPU series of a measurement, in seconds from
// its start (telemetry.TargetCPUKeys' order).
func cpuTimeline(r *results.Result) ([]Point, string) {
	if r.StartTime == nil {
		return nil, ""
	}
	for _, k := range telemetry.TargetCPUKeys {
		for _, s := range r.Series {
			if s.Name != k.Name || s.Subject != k.Operation || len(s.Samples) < 2 {
				continue
			}
			pts := make([][2]float64, len(s.Samples))
			for i, smp := range s.Samples {
				pts[i] = [2]float64{smp.Time.Sub(*r.StartTime).Seconds(), smp.Value}
			}
			return downsample(pts), s.Unit
		}
	}
	return nil, ""
}

// latencyTimeline is the first latencySeries the result has over time.
func latencyTimeline(r *results.Result) (string, []Point) {
	for _, k := range latencySeries {
		var pts [][2]float64
		for _, p := range r.TimeSeries {
			if v, ok := p.Values[k]; ok {
				pts = append(pts, [2]float64{p.ElapsedSeconds, v})
			}
		}
		if len(pts) >= 2 {
			return k, downsample(pts)
		}
	}
	return "", nil
}

// disturbanceSpans are a result's disturbance windows, in seconds from its
// start, and the moment the first took effect.
func disturbanceSpans(r *results.Result) ([]DisturbanceSpan, *float64) {
	if r.StartTime == nil {
		return nil, nil
	}
	sec := func(t *time.Time) float64 { return t.Sub(*r.StartTime).Seconds() }
	var out []DisturbanceSpan
	var aligned *float64
	for _, d := range r.Disturbances {
		if d.TookEffect == nil {
			continue
		}
		span := DisturbanceSpan{Name: d.Name, Kind: d.Kind, From: sec(d.TookEffect)}
		span.To = span.From
		for _, end := range []*time.Time{d.Ended, d.NewPrimaryTime, d.FullRedundancy} {
			if end != nil && sec(end) > span.To {
				span.To = sec(end)
			}
		}
		for _, e := range d.Events {
			span.Events = append(span.Events, Mark{At: sec(&e.Time), Text: e.Subject + ": " + e.Message})
		}
		if aligned == nil || span.From < *aligned {
			at := span.From
			aligned = &at
		}
		out = append(out, span)
	}
	return out, aligned
}

// downsample averages a series into at most maxTimelinePoints buckets.
func downsample(pts [][2]float64) []Point {
	step := (len(pts) + maxTimelinePoints - 1) / maxTimelinePoints
	out := make([]Point, 0, min(len(pts), maxTimelinePoints))
	for i := 0; i < len(pts); i += step {
		end := min(i+step, len(pts))
		var t, v float64
		for _, p := range pts[i:end] {
			t, v = t+p[0], v+p[1]
		}
		n := float64(end - i)
		out = append(out, Point{t / n, v / n})
	}
	return out
}

// timelineSVG draws timelines of one quantity (pick's points) as lines,
// one colour per variant, dashed when the measurement was not valid,
// stalls and disturbance windows shaded, the target's events marked. When
// every timeline was disturbed, they are aligned on the moment their
// disturbance took effect (time 0).
func timelineSVG(title, unit string, tls []Timeline, variants []string, pick func(Timeline) []Point, half bool) template.HTML {
	const width, height, left, bottom, top = 760.0, 260.0, 70.0, 40.0, 30.0
	aligned := len(tls) > 0
	for _, tl := range tls {
		aligned = aligned && tl.Aligned != nil
	}
	shift := func(tl Timeline) float64 {
		if aligned {
			return *tl.Aligned
		}
		return 0
	}
	minT, maxT, maxV := 0.0, 0.0, 0.0
	for _, tl := range tls {
		for _, p := range pick(tl) {
			minT, maxT, maxV = math.Min(minT, p[0]-shift(tl)), math.Max(maxT, p[0]-shift(tl)), math.Max(maxV, p[1])
		}
	}
	if maxT <= minT || maxV <= 0 {
		return ""
	}
	maxV = niceCeil(maxV)
	plotW, plotH := width-left-10, height-bottom-top
	x := func(t float64) float64 { return left + plotW*(t-minT)/(maxT-minT) }
	y := func(v float64) float64 { return top + plotH - plotH*v/maxV }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%g" height="%g" viewBox="0 0 %g %g" class="chart%s timeline">`, width, height, width, height, map[bool]string{true: " half"}[half])
	if aligned {
		title += ", aligned on the disturbance taking effect (0 s)"
	}
	fmt.Fprintf(&sb, `<title>%s</title><text x="%g" y="18" class="ct">%s</text>`, template.HTMLEscapeString(title), left, template.HTMLEscapeString(title+" ("+unit+")"))
	for i := 0; i <= 4; i++ {
		v := maxV * float64(i) / 4
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-10, y(v), y(v), left-6, y(v)+4, fnum(v))
	}
	for i := 0; i <= 4; i++ {
		t := minT + (maxT-minT)*float64(i)/4
		fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ax" text-anchor="middle">%s s</text>`, x(t), height-bottom+16, fnum(t))
	}
	for _, tl := range tls {
		who := fmt.Sprintf("%s %s #%d", tl.Variant, tl.Run, tl.Repetition)
		for _, st := range tl.Stalls {
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%g" width="%.1f" height="%g" class="stall"><title>%s: stall from %s s to %s s</title></rect>`,
				x(st.From-shift(tl)), top, math.Max(1, x(st.To-shift(tl))-x(st.From-shift(tl))), plotH, template.HTMLEscapeString(who), fnum(st.From), fnum(st.To))
		}
		for _, d := range tl.Disturbances {
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%g" width="%.1f" height="%g" class="disturb"><title>%s: %s (%s) from %s s to %s s</title></rect>`,
				x(d.From-shift(tl)), top, math.Max(2, x(d.To-shift(tl))-x(d.From-shift(tl))), plotH, template.HTMLEscapeString(who),
				template.HTMLEscapeString(d.Name), template.HTMLEscapeString(d.Kind), fnum(d.From), fnum(d.To))
			for _, e := range d.Events {
				if t := e.At - shift(tl); t >= minT && t <= maxT {
					fmt.Fprintf(&sb, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" class="event" stroke="%s"><title>%s: %s at %s s</title></line>`,
						x(t), x(t), top, top+plotH, palette[indexOf(variants, tl.Variant)%len(palette)], template.HTMLEscapeString(who), template.HTMLEscapeString(e.Text), fnum(e.At))
				}
			}
		}
	}
	for _, tl := range tls {
		pts := pick(tl)
		if len(pts) < 2 {
			continue
		}
		var coords []string
		for _, p := range pts {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", x(p[0]-shift(tl)), y(p[1])))
		}
		dash := ""
		label := "valid"
		if !tl.Valid {
			dash, label = ` stroke-dasharray="6 4"`, "not valid: "+tl.Note
		}
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"><title>%s %s #%d (%s)</title></polyline>`,
			palette[indexOf(variants, tl.Variant)%len(palette)], dash, strings.Join(coords, " "),
			template.HTMLEscapeString(tl.Variant), template.HTMLEscapeString(tl.Run), tl.Repetition, template.HTMLEscapeString(label))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
}

// timelineCharts are a report's charts over time: throughput, and the
// target's CPU beside it when telemetry recorded it.
func timelineCharts(reports []*Report) []template.HTML {
	if len(reports) == 0 {
		return nil
	}
	variants := []string{reports[0].Baseline}
	var tls []Timeline
	seen := map[string]bool{}
	for _, r := range reports {
		variants = append(variants, r.Candidate)
		for _, tl := range r.Timelines {
			k := fmt.Sprintf("%s/%s/%s/%d", tl.Variant, tl.Run, tl.Step, tl.Repetition)
			if !seen[k] {
				seen[k] = true
				tls = append(tls, tl)
			}
		}
	}
	if len(tls) == 0 {
		return nil
	}
	cpuUnit := ""
	for _, tl := range tls {
		if len(tl.CPU) > 0 {
			cpuUnit = tl.CPUUnit
			break
		}
	}
	var out []template.HTML
	latency := ""
	for _, tl := range tls {
		if len(tl.Latency) > 0 {
			latency = tl.LatencySeries
			break
		}
	}
	if c := timelineSVG(tls[0].Series+" over time at "+tls[0].Step, "per second", tls, variants, func(tl Timeline) []Point { return tl.Points }, cpuUnit != ""); c != "" {
		out = append(out, c)
	}
	if cpuUnit != "" {
		if c := timelineSVG("target CPU over time", cpuUnit, tls, variants, func(tl Timeline) []Point { return tl.CPU }, true); c != "" {
			out = append(out, c)
		}
	}
	if latency != "" {
		pick := func(tl Timeline) []Point {
			if tl.LatencySeries != latency {
				return nil
			}
			return tl.Latency
		}
		if c := timelineSVG(latency+" over time", "ms", tls, variants, pick, false); c != "" {
			out = append(out, c)
		}
	}
	return out
}
