package compare

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
)

// The knee curves of capacity runs: per search, throughput and latency at
// each level it measured, drawn per variant so that two platforms' curves
// lie on one chart.

// Curve is one capacity run's knee curve.
type Curve struct {
	Variant string `json:"variant"`
	Run     string `json:"run"`
	// Parameter is the knob the levels set; LevelUnit its unit ("/s" for
	// an offered rate).
	Parameter string `json:"parameter"`
	LevelUnit string `json:"levelUnit"`
	// ThroughputUnit is the unit of the run's primary throughput.
	ThroughputUnit string `json:"throughputUnit,omitempty"`
	// Maximum is the largest passing level below the smallest failing
	// one; nil when none passed.
	Maximum *int32       `json:"maximum,omitempty"`
	Points  []CurvePoint `json:"points"`
}

// CurvePoint is one judged level of a search (confirmations included,
// marked).
type CurvePoint struct {
	Level      int32 `json:"level"`
	Passed     bool  `json:"passed"`
	Confirm    bool  `json:"confirm,omitempty"`
	Throughput *Num  `json:"throughput,omitempty"`
	// LatencyMillis is the first latency rule's percentile at the level.
	LatencyMillis *Num `json:"latencyMillis,omitempty"`
}

// curves are the knee curves of the sides' capacity runs, baseline first.
func curves(sides []Side) []Curve {
	var out []Curve
	for _, side := range sides {
		for _, r := range side.Runs {
			cs := r.Capacity
			if cs == nil || len(cs.Levels) == 0 {
				continue
			}
			c := Curve{Variant: side.Name, Run: r.Name, Parameter: cs.Parameter, LevelUnit: CapacityUnit(cs.Parameter), Maximum: cs.Maximum}
			if cs.Throughput != nil {
				c.ThroughputUnit = cs.Throughput.Unit
			}
			for _, l := range cs.Levels {
				if l.Passed == nil { // not judged: no point
					continue
				}
				p := CurvePoint{Level: l.Value, Passed: *l.Passed, Confirm: l.Confirm}
				if l.Throughput != nil {
					v := Num(*l.Throughput)
					p.Throughput = &v
				}
				if l.LatencyMillis != nil {
					v := Num(*l.LatencyMillis)
					p.LatencyMillis = &v
				}
				c.Points = append(c.Points, p)
			}
			out = append(out, c)
		}
	}
	return out
}

// curveCharts draws, from reports that share a baseline, throughput and
// latency against the level, one line per search in its variant's colour.
func curveCharts(reports []*Report) []template.HTML {
	if len(reports) == 0 {
		return nil
	}
	variants := []string{reports[0].Baseline}
	var all []Curve
	seen := map[string]bool{}
	for _, r := range reports {
		variants = append(variants, r.Candidate)
		for _, c := range r.Curves {
			if k := c.Variant + "/" + c.Run; !seen[k] {
				seen[k] = true
				all = append(all, c)
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	tput := func(p CurvePoint) *Num { return p.Throughput }
	lat := func(p CurvePoint) *Num { return p.LatencyMillis }
	var out []template.HTML
	for _, c := range []struct {
		title, unit string
		y           func(CurvePoint) *Num
	}{{"Throughput against the level", all[0].ThroughputUnit, tput}, {"Latency against the level (the first latency rule's percentile)", "ms", lat}} {
		if svg := curveSVG(c.title, c.unit, all, variants, c.y); svg != "" {
			out = append(out, svg)
		}
	}
	return out
}

// curveSVG is one chart of the curves: a line per search through its
// levels in order of level, a filled dot where the level passed and a
// hollow one where it failed (a confirmation drawn as a square), and a
// dashed vertical line at each search's maximum.
func curveSVG(title, unit string, cs []Curve, variants []string, y func(CurvePoint) *Num) template.HTML {
	const width, height, left, bottom, top, right = 760.0, 320.0, 70.0, 56.0, 30.0, 30.0
	xMax, yMax := 0.0, 0.0
	for _, c := range cs {
		for _, p := range c.Points {
			if v := y(p); v != nil && finite(float64(*v)) {
				xMax, yMax = math.Max(xMax, float64(p.Level)), math.Max(yMax, float64(*v))
			}
		}
	}
	if xMax <= 0 || yMax <= 0 {
		return ""
	}
	xMax, yMax = axisCeil(xMax), axisCeil(yMax)
	plotW, plotH := width-left-right, height-bottom-top
	px := func(v float64) float64 { return left + plotW*v/xMax }
	py := func(v float64) float64 { return top + plotH - plotH*v/yMax }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%g" height="%g" viewBox="0 0 %g %g" class="chart curve">`, width, height, width, height)
	fmt.Fprintf(&sb, `<title>%s</title><text x="%g" y="18" class="ct">%s</text>`, template.HTMLEscapeString(title), left, template.HTMLEscapeString(title+" ("+unit+")"))
	for i := 0; i <= 4; i++ {
		yv, xv := yMax*float64(i)/4, xMax*float64(i)/4
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-right, py(yv), py(yv), left-6, py(yv)+4, fnum(yv))
		fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ax" text-anchor="middle">%s</text>`, px(xv), height-bottom+16, fnum(xv))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" class="ax" text-anchor="middle">level: %s (%s)</text>`, left+plotW/2, height-bottom+32,
		template.HTMLEscapeString(cs[0].Parameter), template.HTMLEscapeString(cs[0].LevelUnit))
	for _, c := range cs {
		color := palette[indexOf(variants, c.Variant)%len(palette)]
		pts := sortedPoints(c.Points, y)
		if c.Maximum != nil {
			fmt.Fprintf(&sb, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="%s" stroke-width="1.5" stroke-dasharray="5,4"><title>%s %s: maximum %d</title></line>`,
				px(float64(*c.Maximum)), px(float64(*c.Maximum)), top, top+plotH, color, template.HTMLEscapeString(c.Variant), template.HTMLEscapeString(c.Run), *c.Maximum)
		}
		var line []string
		for _, p := range pts {
			line = append(line, fmt.Sprintf("%.1f,%.1f", px(float64(p.Level)), py(float64(*y(p)))))
		}
		fmt.Fprintf(&sb, `<polyline points="%s" fill="none" stroke="%s" stroke-width="3"/>`, strings.Join(line, " "), color)
		for _, p := range pts {
			verdict, fill := "passed", color
			if !p.Passed {
				verdict, fill = "failed", "#fff"
			}
			label := fmt.Sprintf("%s %s: %s=%d %s, %s", c.Variant, c.Run, c.Parameter, p.Level, verdict, fnum(float64(*y(p))))
			x, yy := px(float64(p.Level)), py(float64(*y(p)))
			if p.Confirm {
				fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s" stroke="%s" stroke-width="2"><title>%s (confirmation)</title></rect>`,
					x-5, yy-5, fill, color, template.HTMLEscapeString(label))
				continue
			}
			fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s" stroke="%s" stroke-width="2"><title>%s</title></circle>`, x, yy, fill, color, template.HTMLEscapeString(label))
		}
	}
	for i, v := range variants {
		x := left + float64(i)*150
		fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="12" height="12" fill="%s"/><text x="%g" y="%g" class="ax">%s</text>`,
			x, height-14, palette[i%len(palette)], x+16, height-4, template.HTMLEscapeString(v))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
}

// sortedPoints are the points with a value of y, in order of level (a
// bisection measures out of order; a confirmation after its level).
func sortedPoints(ps []CurvePoint, y func(CurvePoint) *Num) []CurvePoint {
	var out []CurvePoint
	for _, p := range ps {
		if v := y(p); v != nil && finite(float64(*v)) {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b CurvePoint) int { return cmp.Compare(a.Level, b.Level) })
	return out
}

// axisCeil is the smallest round number at or above v whose quarters are
// round too (3200 → 4000, where niceCeil's bars would take 5000).
func axisCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.6, 2, 2.4, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
