package compare

import (
	"fmt"
	"html/template"
	"math"
	"strings"

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
}

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

// timelineSVG draws timelines of one quantity as lines, one colour per
// variant, dashed when the measurement was not valid, stalls shaded.
func timelineSVG(title, unit string, tls []Timeline, variants []string, cpu, half bool) template.HTML {
	const width, height, left, bottom, top = 760.0, 260.0, 70.0, 40.0, 30.0
	maxT, maxV := 0.0, 0.0
	for _, tl := range tls {
		pts := tl.Points
		if cpu {
			pts = tl.CPU
		}
		for _, p := range pts {
			maxT, maxV = math.Max(maxT, p[0]), math.Max(maxV, p[1])
		}
	}
	if maxT <= 0 || maxV <= 0 {
		return ""
	}
	maxV = niceCeil(maxV)
	plotW, plotH := width-left-10, height-bottom-top
	x := func(t float64) float64 { return left + plotW*t/maxT }
	y := func(v float64) float64 { return top + plotH - plotH*v/maxV }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%g" height="%g" viewBox="0 0 %g %g" class="chart%s timeline">`, width, height, width, height, map[bool]string{true: " half"}[half])
	fmt.Fprintf(&sb, `<title>%s</title><text x="%g" y="18" class="ct">%s</text>`, template.HTMLEscapeString(title), left, template.HTMLEscapeString(title+" ("+unit+")"))
	for i := 0; i <= 4; i++ {
		v := maxV * float64(i) / 4
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-10, y(v), y(v), left-6, y(v)+4, fnum(v))
	}
	for i := 0; i <= 4; i++ {
		t := maxT * float64(i) / 4
		fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ax" text-anchor="middle">%s s</text>`, x(t), height-bottom+16, fnum(t))
	}
	for _, tl := range tls {
		if cpu {
			continue
		}
		for _, s := range tl.Stalls {
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%g" width="%.1f" height="%g" class="stall"><title>%s %s #%d: stall from %s s to %s s</title></rect>`,
				x(s.From), top, math.Max(1, x(s.To)-x(s.From)), plotH, template.HTMLEscapeString(tl.Variant), template.HTMLEscapeString(tl.Run), tl.Repetition, fnum(s.From), fnum(s.To))
		}
	}
	for _, tl := range tls {
		pts := tl.Points
		if cpu {
			pts = tl.CPU
		}
		if len(pts) < 2 {
			continue
		}
		var coords []string
		for _, p := range pts {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", x(p[0]), y(p[1])))
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
	if c := timelineSVG(tls[0].Series+" over time at "+tls[0].Step, "per second", tls, variants, false, cpuUnit != ""); c != "" {
		out = append(out, c)
	}
	if cpuUnit != "" {
		if c := timelineSVG("target CPU over time", cpuUnit, tls, variants, true, true); c != "" {
			out = append(out, c)
		}
	}
	return out
}
