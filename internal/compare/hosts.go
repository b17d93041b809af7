package compare

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// HostView is one machine's resources over one measurement, as the report
// draws them beside the throughput: a host the run named (host/<name>) or
// a node its pods ran on (node/<name>), in seconds from the measurement's
// start: those of the first valid measurement of each variant at the last
// step.
type HostView struct {
	Variant    string `json:"variant"`
	Run        string `json:"run"`
	Step       string `json:"step"`
	Repetition int32  `json:"repetition"`
	Subject    string `json:"subject"`
	// CPUModes are the shares of all CPU time by mode (cpuUserPercent …),
	// stacked in the chart; CPUBusy when the source has no modes.
	CPUModes map[string][]Point `json:"cpuModes,omitempty"`
	CPUBusy  []Point            `json:"cpuBusy,omitempty"`
	Memory   []Point            `json:"memory,omitempty"`
	// Disk and Network: read + written, received + sent bytes per second
	// over every device, every interface.
	Disk    []Point `json:"disk,omitempty"`
	Network []Point `json:"network,omitempty"`
}

// HostRow is one machine's quantity in the hosts table: its mean (and 95th
// percentile of its series) over the valid measurements of the last step
// of each variant, and the change when both variants read the same host.
type HostRow struct {
	Subject   string   `json:"subject"`
	Quantity  string   `json:"quantity"`
	Unit      string   `json:"unit"`
	Baseline  HostStat `json:"baseline"`
	Candidate HostStat `json:"candidate"`
	// DeltaPercent is NaN (null) unless both variants read the machine.
	DeltaPercent Num `json:"deltaPercent"`
}

// HostStat is a host's quantity over a variant's measurements; N 0: the
// variant did not read the host.
type HostStat struct {
	Mean float64 `json:"mean"`
	P95  float64 `json:"p95"`
	N    int     `json:"n"`
}

// maxHostViews bounds the machines a report draws per variant.
const maxHostViews = 8

// hostModes are the CPU modes stacked, bottom first.
var hostModes = []string{"user", "system", "iowait", "irq", "softirq", "steal"}

// hostQuantities are the hosts table's, each a figure (or a sum of the
// figures of every device) with its series.
var hostQuantities = []struct {
	name, unit string
	// prefixes: a figure named exactly (no dot) or the sum over every
	// member of each prefix ("diskReadBytesPerSecond." …).
	exact    string
	prefixes []string
}{
	{name: "cpuBusyPercent", unit: "%", exact: "cpuBusyPercent"},
	{name: "memoryUsedBytes", unit: "bytes", exact: "memoryUsedBytes"},
	{name: "diskBytesPerSecond", unit: "bytes/s", prefixes: []string{"diskReadBytesPerSecond.", "diskWriteBytesPerSecond."}},
	{name: "networkBytesPerSecond", unit: "bytes/s", prefixes: []string{"networkReceiveBytesPerSecond.", "networkTransmitBytesPerSecond."}},
}

// isMachine says whether a subject is a machine: a host or a node.
func isMachine(subject string) bool {
	return strings.HasPrefix(subject, string(telemetry.RoleHost)+"/") || strings.HasPrefix(subject, string(telemetry.RoleNode)+"/")
}

// hostViews draws, per variant, every machine the first valid measurement
// at the last step recorded (with or without a throughput series).
func hostViews(sides []Side) []HostView {
	var out []HostView
	eachDrawable(sides, func(d drawn) bool {
		res := d.res
		if !d.valid || res.StartTime == nil {
			return false
		}
		subjects := machines(res)
		if len(subjects) == 0 {
			return false
		}
		at := func(samples []results.Sample) []Point {
			pts := make([][2]float64, len(samples))
			for i, s := range samples {
				pts[i] = [2]float64{s.Time.Sub(*res.StartTime).Seconds(), s.Value}
			}
			return downsample(pts)
		}
		for _, subject := range subjects[:min(len(subjects), maxHostViews)] {
			v := HostView{Variant: d.variant, Run: d.run.Name, Step: d.step, Repetition: d.rep.Index, Subject: subject, CPUModes: map[string][]Point{}}
			for _, s := range res.Series {
				if s.Subject != subject || len(s.Samples) < 2 {
					continue
				}
				switch s.Name {
				case "cpuBusyPercent":
					v.CPUBusy = at(s.Samples)
				case "memoryUsedBytes":
					v.Memory = at(s.Samples)
				}
				for _, m := range hostModes {
					if s.Name == hostModeName(m) {
						v.CPUModes[m] = at(s.Samples)
					}
				}
			}
			if disk := summed(res, subject, hostQuantities[2].prefixes); len(disk) > 1 {
				v.Disk = at(disk)
			}
			if net := summed(res, subject, hostQuantities[3].prefixes); len(net) > 1 {
				v.Network = at(net)
			}
			out = append(out, v)
		}
		return true
	})
	return out
}

func hostModeName(mode string) string {
	return "cpu" + strings.ToUpper(mode[:1]) + mode[1:] + "Percent"
}

// machines are the hosts and nodes a result has series of, sorted.
func machines(res *results.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range res.Series {
		if isMachine(s.Subject) && !seen[s.Subject] {
			seen[s.Subject] = true
			out = append(out, s.Subject)
		}
	}
	sort.Strings(out)
	return out
}

// summed adds the series of every member of the prefixes sample by
// sample (one source reads a machine's devices at the same instants);
// series of other lengths (coarsened differently) are left out.
func summed(res *results.Result, subject string, prefixes []string) []results.Sample {
	var out []results.Sample
	for _, s := range res.Series {
		if s.Subject != subject || len(s.Samples) == 0 {
			continue
		}
		member := false
		for _, p := range prefixes {
			member = member || strings.HasPrefix(s.Name, p)
		}
		switch {
		case !member:
		case out == nil:
			out = append([]results.Sample(nil), s.Samples...)
		case len(s.Samples) == len(out):
			for i := range out {
				out[i].Value += s.Samples[i].Value
			}
		}
	}
	return out
}

// hostTable summarises every machine of either side over the valid
// measurements of its last step.
func hostTable(baseline, candidate Side) []HostRow {
	type acc struct {
		means, samples []float64
	}
	gather := func(side Side) map[string]map[string]*acc {
		out := map[string]map[string]*acc{}
		for _, r := range side.Runs {
			if len(r.Steps) == 0 {
				continue
			}
			last := r.Steps[len(r.Steps)-1]
			for _, rep := range last.Repetitions {
				if _, rejected := benchv1.Rejected(r.Rejections, last.Name, rep.Index); rep.Verdict != benchv1.VerdictSucceeded || rejected {
					continue
				}
				res := r.result(last.Name, rep.Index)
				if res == nil {
					continue
				}
				for _, subject := range machineFigures(res) {
					for _, q := range hostQuantities {
						mean, ok := hostFigure(res, subject, q.exact, q.prefixes)
						if !ok {
							continue
						}
						if out[subject] == nil {
							out[subject] = map[string]*acc{}
						}
						a := out[subject][q.name]
						if a == nil {
							a = &acc{}
							out[subject][q.name] = a
						}
						a.means = append(a.means, mean)
						var series []results.Sample
						if q.exact != "" {
							for _, s := range res.Series {
								if s.Subject == subject && s.Name == q.exact {
									series = s.Samples
								}
							}
						} else {
							series = summed(res, subject, q.prefixes)
						}
						a.samples = append(a.samples, telemetry.SampleValues(series)...)
					}
				}
			}
		}
		return out
	}
	stat := func(a *acc) HostStat {
		if a == nil || len(a.means) == 0 {
			return HostStat{}
		}
		s := HostStat{Mean: meanOf(a.means), N: len(a.means)}
		if len(a.samples) > 0 {
			s.P95 = telemetry.NearestRank(a.samples, 95)
		}
		return s
	}
	base, cand := gather(baseline), gather(candidate)
	subjects := map[string]bool{}
	for s := range base {
		subjects[s] = true
	}
	for s := range cand {
		subjects[s] = true
	}
	names := make([]string, 0, len(subjects))
	for s := range subjects {
		names = append(names, s)
	}
	sort.Strings(names)
	var rows []HostRow
	for _, subject := range names {
		for _, q := range hostQuantities {
			b, c := stat(base[subject][q.name]), stat(cand[subject][q.name])
			if b.N == 0 && c.N == 0 {
				continue
			}
			row := HostRow{Subject: subject, Quantity: q.name, Unit: q.unit, Baseline: b, Candidate: c, DeltaPercent: Num(math.NaN())}
			if b.N > 0 && c.N > 0 && b.Mean != 0 {
				row.DeltaPercent = Num(100 * (c.Mean - b.Mean) / b.Mean)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// machineFigures are the hosts and nodes a result has figures of.
func machineFigures(res *results.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range res.Metrics {
		if m.IsTelemetry() && isMachine(m.Operation) && !seen[m.Operation] {
			seen[m.Operation] = true
			out = append(out, m.Operation)
		}
	}
	sort.Strings(out)
	return out
}

// hostFigure is a machine's window figure, or the sum of its members'.
func hostFigure(res *results.Result, subject, exact string, prefixes []string) (float64, bool) {
	var sum float64
	found := false
	for _, m := range res.Metrics {
		if !m.IsTelemetry() || m.Operation != subject {
			continue
		}
		if exact != "" && m.Name == exact {
			return m.Value, true
		}
		for _, p := range prefixes {
			if strings.HasPrefix(m.Name, p) {
				sum, found = sum+m.Value, true
			}
		}
	}
	return sum, found
}

func meanOf(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// modeColours stack the CPU modes: user, system, iowait, irq, softirq,
// steal.
var modeColours = map[string]string{"user": "#4c78a8", "system": "#f58518", "iowait": "#e45756", "irq": "#72b7b2", "softirq": "#54a24b", "steal": "#b279a2"}

// hostCharts draws the machines over time: each one's CPU stacked by mode,
// then memory, disk and network with a line per machine and measurement,
// coloured by variant, on the axis of the throughput's timeline.
func hostCharts(reports []*Report) []template.HTML {
	if len(reports) == 0 {
		return nil
	}
	variants := []string{reports[0].Baseline}
	var views []HostView
	seen := map[string]bool{}
	for _, r := range reports {
		variants = append(variants, r.Candidate)
		for _, v := range r.Hosts {
			k := fmt.Sprintf("%s/%s/%s/%d/%s", v.Variant, v.Run, v.Step, v.Repetition, v.Subject)
			if !seen[k] {
				seen[k] = true
				views = append(views, v)
			}
		}
	}
	var out []template.HTML
	for _, v := range views {
		if c := stackedSVG(fmt.Sprintf("%s CPU by mode (%s, %s #%d)", v.Subject, v.Variant, v.Run, v.Repetition), v); c != "" {
			out = append(out, c)
		}
	}
	for _, q := range []struct {
		title, unit string
		of          func(HostView) []Point
	}{
		{"memory used by machine over time", "bytes", func(v HostView) []Point { return v.Memory }},
		{"disk read + written by machine over time", "bytes/s", func(v HostView) []Point { return v.Disk }},
		{"network received + sent by machine over time", "bytes/s", func(v HostView) []Point { return v.Network }},
	} {
		var tls []Timeline
		for _, v := range views {
			if pts := q.of(v); len(pts) > 1 {
				tls = append(tls, Timeline{Variant: v.Variant, Run: v.Subject + " in " + v.Run, Step: v.Step, Repetition: v.Repetition, Valid: true, Points: pts})
			}
		}
		if c := timelineSVG(q.title, q.unit, tls, variants, func(tl Timeline) []Point { return tl.Points }, true); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// stackedSVG draws a machine's CPU by mode as stacked areas (its busy
// share as a line when its source has no modes), 0-100 %.
func stackedSVG(title string, v HostView) template.HTML {
	const width, height, left, bottom, top = 760.0, 220.0, 70.0, 40.0, 30.0
	var modes []string
	for _, m := range hostModes {
		if len(v.CPUModes[m]) > 1 {
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 && len(v.CPUBusy) < 2 {
		return ""
	}
	maxT := 0.0
	for _, pts := range append([][]Point{v.CPUBusy}, modePoints(v, modes)...) {
		for _, p := range pts {
			maxT = math.Max(maxT, p[0])
		}
	}
	if maxT <= 0 {
		return ""
	}
	plotW, plotH := width-left-10, height-bottom-top
	x := func(t float64) float64 { return left + plotW*t/maxT }
	y := func(v float64) float64 { return top + plotH - plotH*math.Min(v, 100)/100 }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%g" height="%g" viewBox="0 0 %g %g" class="chart half host">`, width, height, width, height)
	fmt.Fprintf(&sb, `<title>%s</title><text x="%g" y="18" class="ct">%s</text>`, template.HTMLEscapeString(title), left, template.HTMLEscapeString(title+" (%)"))
	for i := 0; i <= 4; i++ {
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%d</text>`,
			left, width-10, y(float64(25*i)), y(float64(25*i)), left-6, y(float64(25*i))+4, 25*i)
	}
	for i := 0; i <= 4; i++ {
		t := maxT * float64(i) / 4
		fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ax" text-anchor="middle">%s s</text>`, x(t), height-bottom+16, fnum(t))
	}
	if len(modes) > 0 {
		n := len(v.CPUModes[modes[0]])
		for _, m := range modes {
			n = min(n, len(v.CPUModes[m]))
		}
		below := make([]float64, n)
		for _, m := range modes {
			pts := v.CPUModes[m][:n]
			var upper, lower []string
			for i, p := range pts {
				upper = append(upper, fmt.Sprintf("%.1f,%.1f", x(p[0]), y(below[i]+p[1])))
			}
			for i := n - 1; i >= 0; i-- {
				lower = append(lower, fmt.Sprintf("%.1f,%.1f", x(pts[i][0]), y(below[i])))
			}
			for i, p := range pts {
				below[i] += p[1]
			}
			fmt.Fprintf(&sb, `<polygon fill="%s" stroke="none" points="%s %s"><title>%s</title></polygon>`,
				modeColours[m], strings.Join(upper, " "), strings.Join(lower, " "), m)
		}
		for i, m := range modes {
			fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g" class="ax">%s</text>`,
				left+float64(i)*80, height-12, modeColours[m], left+float64(i)*80+14, height-3, m)
		}
	} else {
		var coords []string
		for _, p := range v.CPUBusy {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", x(p[0]), y(p[1])))
		}
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"><title>busy</title></polyline>`, modeColours["user"], strings.Join(coords, " "))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
}

func modePoints(v HostView, modes []string) [][]Point {
	out := make([][]Point, 0, len(modes))
	for _, m := range modes {
		out = append(out, v.CPUModes[m])
	}
	return out
}
