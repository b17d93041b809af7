package compare

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// palette colours the variants: baseline first.
var palette = []string{"#5b6f82", "#e07b39", "#3f9c6d", "#8a5ac2", "#c94f6d", "#2f86c9"}

// Bar is one bar of a grouped bar chart, with its whisker (min–max).
type bar struct {
	Variant       string
	Value, Lo, Hi float64
}

type group struct {
	Label string
	Bars  []bar
}

type chart struct {
	Title, Unit string
	Groups      []group
	Variants    []string
	// Half charts are drawn two to a line: throughput beside what the
	// target's CPU did for it.
	Half bool
}

// svg renders a grouped bar chart with min–max whiskers as inline SVG.
func (c chart) svg() template.HTML {
	const width, height, left, bottom, top = 760.0, 300.0, 70.0, 50.0, 30.0
	max := 0.0
	for _, g := range c.Groups {
		for _, b := range g.Bars {
			max = math.Max(max, math.Max(b.Hi, b.Value))
		}
	}
	if max <= 0 {
		max = 1
	}
	max = niceCeil(max)
	plotH := height - bottom - top
	var sb strings.Builder
	class := "chart"
	if c.Half {
		class += " half"
	}
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%g" height="%g" viewBox="0 0 %g %g" class="%s">`, width, height, width, height, class)
	fmt.Fprintf(&sb, `<title>%s</title>`, template.HTMLEscapeString(c.Title))
	fmt.Fprintf(&sb, `<text x="%g" y="18" class="ct">%s</text>`, left, template.HTMLEscapeString(c.Title+" ("+c.Unit+")"))
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		y := top + plotH - plotH*float64(i)/4
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-10, y, y, left-6, y+4, fnum(v))
	}
	n := len(c.Groups)
	if n == 0 {
		sb.WriteString(`</svg>`)
		return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
	}
	slot := (width - left - 10) / float64(n)
	bw := math.Min(40, slot*0.8/float64(max1(len(c.Variants))))
	for gi, g := range c.Groups {
		x0 := left + slot*float64(gi) + (slot-bw*float64(len(g.Bars)))/2
		for bi, b := range g.Bars {
			color := palette[indexOf(c.Variants, b.Variant)%len(palette)]
			h := plotH * b.Value / max
			x := x0 + bw*float64(bi)
			fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" class="bar"><title>%s: %s</title></rect>`,
				x, top+plotH-h, bw-2, h, color, template.HTMLEscapeString(b.Variant), fnum(b.Value))
			if b.Hi > b.Lo {
				cx := x + (bw-2)/2
				y1, y2 := top+plotH-plotH*b.Lo/max, top+plotH-plotH*b.Hi/max
				fmt.Fprintf(&sb, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="wh"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="wh"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="wh"/>`,
					cx, cx, y1, y2, cx-4, cx+4, y1, y1, cx-4, cx+4, y2, y2)
			}
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ax" text-anchor="middle">%s</text>`, left+slot*(float64(gi)+0.5), height-bottom+16, template.HTMLEscapeString(g.Label))
	}
	for i, v := range c.Variants {
		x := left + float64(i)*150
		fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="12" height="12" fill="%s"/><text x="%g" y="%g" class="ax">%s</text>`,
			x, height-18, palette[i%len(palette)], x+16, height-8, template.HTMLEscapeString(v))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return 0
}

func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// charts builds, from reports that share a baseline, the throughput chart
// (the primary metric per step per variant) and one latency-percentile chart
// per operation (at the last step).
func charts(reports []*Report) []chart {
	if len(reports) == 0 {
		return nil
	}
	variants := []string{reports[0].Baseline}
	for _, r := range reports {
		variants = append(variants, r.Candidate)
	}
	var out []chart
	primary := reports[0].Primary
	if primary != "" {
		c := chart{Title: primary + " per step", Variants: variants}
		for _, row := range reports[0].Rows {
			if !reports[0].IsPrimary(row) {
				continue
			}
			c.Unit = row.Unit
			label := row.StepLabel()
			if row.Operation != "" {
				label += " " + row.Operation
			}
			c.Groups = append(c.Groups, barGroup(label, row, variants[0], reports))
		}
		if side := serverCharts(reports, variants); len(side) > 0 {
			c.Half = true
			out = append(out, c)
			out = append(out, side...)
		} else {
			out = append(out, c)
		}
	}
	// Latency percentiles per operation at the last step.
	last := reports[0].lastStep()
	byOp := map[string]*chart{}
	var ops []string
	for _, row := range reports[0].Rows {
		if row.Step != last || !strings.HasPrefix(row.Metric, "latencyP") {
			continue
		}
		op := row.Operation
		c, ok := byOp[op]
		if !ok {
			title := "latency percentiles"
			if op != "" {
				title += " of " + op
			}
			c = &chart{Title: title + " at " + last, Unit: row.Unit, Variants: variants}
			byOp[op] = c
			ops = append(ops, op)
		}
		label := strings.TrimSuffix(strings.TrimPrefix(row.Metric, "latency"), "Millis")
		c.Groups = append(c.Groups, barGroup(label, row, variants[0], reports))
	}
	// What changed first, worst first (the summary's order), then the
	// whole run's, then the rest by name.
	rank := map[string]int{}
	if sum := reports[0].Summary; sum != nil {
		for _, f := range append(append([]Finding{}, sum.Worse...), sum.Better...) {
			if _, ok := rank[f.Operation]; !ok && f.Operation != "" {
				rank[f.Operation] = len(rank)
			}
		}
	}
	order := func(op string) int {
		if r, ok := rank[op]; ok {
			return r
		}
		if op == "" {
			return len(rank)
		}
		return len(rank) + 1
	}
	sort.SliceStable(ops, func(i, j int) bool {
		if oi, oj := order(ops[i]), order(ops[j]); oi != oj {
			return oi < oj
		}
		return ops[i] < ops[j]
	})
	if len(ops) > maxLatencyCharts {
		// Many operations: the whole run's and the changed ones, in the
		// per-operation table's order (worst first); the table has the rest.
		changedFirst := ops
		ops = nil
		for _, op := range changedFirst {
			if _, ok := rank[op]; (ok || op == "") && len(ops) < maxLatencyCharts {
				ops = append(ops, op)
			}
		}
		for _, o := range reports[0].OperationTable() {
			if slices.Contains(ops, o.Operation) {
				continue
			}
			changed := o.Verdict() == stats.Worse || o.Verdict() == stats.Better || o.Overall()
			if o.Step == last && byOp[o.Operation] != nil && changed && len(ops) < maxLatencyCharts {
				ops = append(ops, o.Operation)
			}
		}
	}
	for _, op := range ops {
		out = append(out, *byOp[op])
	}
	return out
}

// maxLatencyCharts bounds the latency charts of a report to the operations
// a reader looks at first.
const maxLatencyCharts = 6

// serverCharts are the target's CPU per step (the pods' sum, else the
// server's own count) and the efficiency per step, each drawn beside the
// throughput, when telemetry measured them.
func serverCharts(reports []*Report, variants []string) []chart {
	var steps []string
	for _, row := range reports[0].Rows {
		if reports[0].IsPrimary(row) && !slices.Contains(steps, row.Step) {
			steps = append(steps, row.Step)
		}
	}
	cpu := chart{Title: "target CPU per step", Variants: variants, Half: true}
	eff := chart{Title: telemetry.FigureEfficiency + " per step", Variants: variants, Half: true}
	for _, step := range steps {
		if row, ok := reports[0].TargetCPURow(step); ok {
			cpu.Unit = row.Unit
			cpu.Groups = append(cpu.Groups, barGroup(step, row, variants[0], reports))
		}
		for _, row := range reports[0].Rows {
			if row.Step == step && row.IsTelemetry() && row.Metric == telemetry.FigureEfficiency {
				eff.Unit = row.Unit
				eff.Groups = append(eff.Groups, barGroup(step, row, variants[0], reports))
			}
		}
	}
	var out []chart
	for _, c := range []chart{cpu, eff} {
		if len(c.Groups) > 0 {
			out = append(out, c)
		}
	}
	return out
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"fnum": fnum, "pct": pct, "ci": ci, "cpu": cpuDelta, "metric": metricName, "lower": strings.ToLower,
	"svg": func(c chart) template.HTML { return c.svg() },
	"p":   func(n Num) string { return fmt.Sprintf("%.3g", float64(n)) },
	"num": func(n Num) string {
		if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
			return ""
		}
		return fmt.Sprintf("%g", float64(n))
	},
	"sub":  func(a, b int) int { return a - b },
	"rest": func(lines []string) []string { return lines[min(1, len(lines)):] },
	"note": func(row Row) string {
		if row.Bimodal != "" {
			return strings.Replace(rowNote(row), "bimodal", "bimodal: "+row.Bimodal, 1)
		}
		return rowNote(row)
	},
	"delta":   deltaTextLong,
	"join":    func(vs []string) string { return strings.Join(vs, ", ") },
	"fnum4":   func(n Num) string { return fnum(float64(n)) },
	"pos":     func(n Num) bool { return n > 0 },
	"figures": suspectFigures,
	"flame": func(r *Report, f FlameDiff, candidateShape bool) template.HTML {
		return template.HTML(FlameSVG(f, r.Baseline, r.Candidate, candidateShape)) //nolint:gosec // built from escaped text and numbers
	},
	"opseries": func(r *Report, d Distribution) template.HTML {
		return template.HTML(seriesSVG(d, r.Baseline, r.Candidate)) //nolint:gosec // built from escaped text and numbers
	},
	"dist": func(r *Report, d Distribution) template.HTML {
		return template.HTML(percentileSVG(d, r.Baseline, r.Candidate)) //nolint:gosec // built from escaped text and numbers
	},
	"headline": func(r *Report) []Row { return r.split(true) },
	"detail":   func(r *Report) []Row { return r.split(false) },
	"opsTable": func(r *Report) []OpRow { return r.OperationTable() },
	"firstOps": func(ops []OpRow) []OpRow { return ops[:min(len(ops), FoldOperationsAfter)] },
	"restOps":  func(ops []OpRow) []OpRow { return ops[min(len(ops), FoldOperationsAfter):] },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border-bottom:1px solid #ddd;padding:4px 6px;text-align:right}
th:nth-child(-n+3),td:nth-child(-n+3){text-align:left}table.env td,table.env th{text-align:left}
.described{color:#555;font-style:italic}.better{background:#dff3e4}.worse{background:#fbe0e0}.nochange{background:#eef1f4}.inconclusive{background:#fff6d9}
.chart{display:block;margin:8px 0;border:1px solid #eee}.chart.half{display:inline-block;width:48%;height:auto;margin-right:1%;box-sizing:border-box}.ct{font-weight:600;font-size:13px}.ax{font-size:11px;fill:#444}
.grid{stroke:#e5e5e5}.stall{fill:#d33;fill-opacity:.18}.disturb{fill:#f5a623;fill-opacity:.16}.event{stroke-width:1;stroke-dasharray:2 3}.wh{stroke:#222;stroke-width:1.2}
.small{color:#666;font-size:12px}
.summary{border-left:6px solid #888;padding:4px 12px;margin:12px 0;background:#fafafa}.summary p{margin:4px 0;font-size:15px}.summary ul{margin:4px 0;padding-left:18px}
.v-regression{border-color:#c62828}.v-improvement{border-color:#2e7d32}.v-pass{border-color:#607d8b}.v-inconclusive,.v-invalid{border-color:#f9a825}
tr.overall td{font-weight:600}th{cursor:pointer}td.better{color:#17642f}td.worse{color:#9b1c1c;font-weight:600}
</style>
<script>
// Sort a table by the clicked column: numbers by data-v, else by text.
document.addEventListener('click', function (e) {
  var th = e.target.closest ? e.target.closest('table.sortable th') : null;
  if (!th) return;
  var table = th.closest('table'), i = Array.prototype.indexOf.call(th.parentNode.children, th);
  var asc = th.dataset.dir !== 'asc'; th.dataset.dir = asc ? 'asc' : 'desc';
  var body = table.tBodies[0], rows = [];
  Array.prototype.forEach.call(table.tBodies, function (b) { Array.prototype.push.apply(rows, b.rows); });
  function key(r) { var c = r.cells[i]; if (!c) return ''; var v = c.getAttribute('data-v'); return v !== null && v !== '' && !isNaN(+v) ? +v : c.textContent; }
  rows.sort(function (a, b) { var x = key(a), y = key(b); var r = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y)); return asc ? r : -r; });
  rows.forEach(function (r) { body.appendChild(r); });
});
// A link can ask for the per-operation table sorted: #sort=COLUMN (from 0).
document.addEventListener('DOMContentLoaded', function () {
  var m = /^#sort=(\d+)$/.exec(location.hash), t = document.querySelector('table.ops');
  if (m && t && t.tHead.rows[0].cells[+m[1]]) t.tHead.rows[0].cells[+m[1]].click();
});
</script></head><body>
<h1>{{.Title}}</h1>
{{range .Reports}}{{with .Summary}}<div class="summary v-{{lower (printf "%s" .Verdict)}}"><p><b>{{.Headline}}</b></p>{{with rest .Lines}}<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}</div>{{end}}{{end}}
<p class="small">Generated by dbperf-operator. The headline (the primary metric of each step) is judged on its own: Δ % is the Hodges-Lehmann change of the candidate against the baseline with its exact interval, p the Mann-Whitney p-value corrected over the steps. Every other metric of every operation is judged by Welch's t on logarithms (Δ % the change of the geometric mean, with its t interval) with false-discovery-rate control across them (the families are named under each table). Rows in italics are the servers' side (telemetry): described, not judged, and not counted; the efficiency (throughput per target core) is judged in a family of its own. Bars are medians, whiskers min–max over repetitions.</p>
{{range .Charts}}{{svg .}}{{end}}
{{range .Timelines}}{{.}}{{end}}
{{with .HostCharts}}<h2>Machines over time</h2>
<p class="small">The hosts the runs named (host/…, read from their node_exporter) and the nodes their pods ran on (node/…, from the resource source), over the same measurements as the throughput above, seconds from each measurement's start: CPU stacked by mode, then memory, disk and network with a line per machine in its variant's colour.</p>
{{range .}}{{.}}{{end}}{{end}}
{{with .Curves}}<h2>Capacity: the knee curves</h2>
<p class="small">Each line is one capacity search, in its variant's colour, through the levels it judged in order of level: a filled dot passed, a hollow one failed, a square is a confirmation; the dashed line is the search's maximum (the largest passing level below the smallest failing one).</p>
{{range .}}{{.}}{{end}}{{end}}
{{range .Reports}}{{$r := .}}
<h2>{{.Candidate}} vs {{.Baseline}} — {{.Workload}}</h2>
<p>{{.Better}} better, {{.Worse}} worse, {{.NoChange}} no change, {{.Inconclusive}} inconclusive; {{len .Excluded}} measurements excluded. Runs: {{.Baseline}}: {{range .BaselineRuns}}{{.}} {{end}}; {{.Candidate}}: {{range .CandidateRuns}}{{.}} {{end}}</p>
<table><thead><tr><th>Step</th><th>Metric</th><th>Unit</th><th>{{.Baseline}}</th><th>{{.Candidate}}</th><th>Δ %</th>{{if .HasCPU}}<th>Target CPU Δ %</th>{{end}}<th>95 % CI</th><th>p</th><th>Verdict</th><th>Note</th></tr></thead><tbody>
{{range headline .}}<tr class="{{if .Described}}described{{else}}{{lower (printf "%s" .Verdict)}}{{end}}" title="{{.Reason}}"><td>{{.StepLabel}}</td><td>{{metric .}}</td><td>{{.Unit}}</td><td>{{fnum .Baseline.Median}} (n={{.Baseline.N}})</td><td>{{fnum .Candidate.Median}} (n={{.Candidate.N}})</td><td>{{delta $r .}}</td>{{if $r.HasCPU}}<td>{{cpu .}}</td>{{end}}<td>{{ci .}}</td><td>{{p .PAdjusted}}</td><td>{{.Verdict}}</td><td class="small">{{note .}}</td></tr>
{{end}}</tbody></table>
{{with .Distributions}}<h3>Latency distributions of what changed</h3>
<p class="small">Each side's latency histograms merged over its compared measurements (true percentiles of every request), to p99.9, for the operations the summary found changed, worst first; beside each, the operation's latency over time in one measurement of each side (its typical one: the measurement whose median point is the side's median, not a cold first run or one that stalled), which shows whether the change is there throughout or in a stretch of it.</p>
{{range .}}{{dist $r .}}{{opseries $r .}}{{end}}{{end}}
{{with .Environment}}<h3>What differed between the variants</h3>
<table class="env"><thead><tr><th>Fact</th><th>{{$r.Baseline}}</th><th>{{$r.Candidate}}</th></tr></thead><tbody>
{{range .}}<tr><td>{{.What}}</td><td>{{join .Baseline}}</td><td>{{join .Candidate}}</td></tr>
{{end}}</tbody></table>{{end}}
{{with .Suspects}}<h3>Why: the suspects</h3>
<p class="small">Where the server spent its time over each measurement's steady window (the statements and the sessions' wait events of a SQL server, the commands of a key-value server), per transaction of the tool so that variants at different throughputs compare; each side's median over its repetitions, and the candidate's shift with its interval (Hodges-Lehmann, exact), confirmed when the interval excludes zero. Share: of the change of the kind's whole time per transaction. A statement's plan that changed is shown for both variants.</p>
<table class="sortable suspects"><thead><tr><th>Step</th><th>Kind</th><th>Name</th><th>{{$r.Baseline}} ms/tx</th><th>{{$r.Candidate}} ms/tx</th><th>Δ ms/tx</th><th>interval</th><th>share</th><th>what else changed (per tx)</th></tr></thead><tbody>
{{range .}}<tr class="{{if .Confirmed}}{{if pos .DeltaMillis}}worse{{else}}better{{end}}{{end}}"><td>{{.Step}}</td><td>{{.Kind}}</td><td class="stmt"><code>{{.Name}}</code>{{if .PlanChanged}} <b>plan changed</b><details><summary>plans</summary><p>{{$r.Baseline}}:</p><pre>{{.BaselinePlan}}</pre><p>{{$r.Candidate}}:</p><pre>{{.CandidatePlan}}</pre></details>{{end}}</td><td>{{fnum4 .BaselineMillis}}</td><td>{{fnum4 .CandidateMillis}}</td><td>{{fnum4 .DeltaMillis}}</td><td>{{fnum4 .LowMillis}} … {{fnum4 .HighMillis}}</td><td>{{pct .SharePercent}}</td><td class="small">{{figures .}}</td></tr>
{{end}}</tbody></table>{{end}}
{{with .Flames}}<h3>Where the server's CPU went: differential flame graphs</h3>
<p class="small">The on-CPU profiles of the server's processes (perf, cpu-clock) over each measurement's steady window, pooled over each side's repetitions, in CPU milliseconds per transaction of the tool. The first graph has {{$r.Candidate}}'s shape, coloured by what grew (red) and shrank (blue) against {{$r.Baseline}}; the second {{$r.Baseline}}'s shape coloured the other way, where what the candidate no longer runs shows. The outermost frame is on top; hover a frame for both sides' figures.</p>
{{range .}}{{flame $r . true}}{{flame $r . false}}{{end}}{{end}}
{{with .HostTable}}<h3>Machines</h3>
<p class="small">Each machine's mean over the valid measurements of the last step (and the 95th percentile of its series), per variant; Δ % where both variants read the same machine. Described, not judged.</p>
<table class="sortable hosts"><thead><tr><th>Machine</th><th>Quantity</th><th>Unit</th><th>{{$r.Baseline}} mean</th><th>p95</th><th>{{$r.Candidate}} mean</th><th>p95</th><th>Δ %</th></tr></thead><tbody>
{{range .}}<tr><td>{{.Subject}}</td><td>{{.Quantity}}</td><td>{{.Unit}}</td>{{if .Baseline.N}}<td data-v="{{.Baseline.Mean}}">{{fnum .Baseline.Mean}} (n={{.Baseline.N}})</td><td>{{fnum .Baseline.P95}}</td>{{else}}<td>—</td><td></td>{{end}}{{if .Candidate.N}}<td data-v="{{.Candidate.Mean}}">{{fnum .Candidate.Mean}} (n={{.Candidate.N}})</td><td>{{fnum .Candidate.P95}}</td>{{else}}<td>—</td><td></td>{{end}}<td data-v="{{num .DeltaPercent}}">{{pct .DeltaPercent}}</td></tr>
{{end}}</tbody></table>{{end}}
{{with opsTable .}}<h3>Per operation ({{len .}})</h3>
<p class="small">Median of {{$r.Candidate}}, Δ % against {{$r.Baseline}} and the verdict of each metric (hover for its interval and reason); the row's colour is its worst verdict. Click a heading to sort.</p>
<table class="sortable ops"><thead><tr><th>Step</th><th>Operation</th>{{range $.Columns}}<th>{{.Title}}</th><th>Δ %</th>{{end}}</tr></thead><tbody>
{{range firstOps .}}{{template "oprow" .}}{{end}}</tbody></table>
{{with restOps .}}<details><summary>{{len .}} more operations</summary>
<table class="sortable ops"><thead><tr><th>Step</th><th>Operation</th>{{range $.Columns}}<th>{{.Title}}</th><th>Δ %</th>{{end}}</tr></thead><tbody>
{{range .}}{{template "oprow" .}}{{end}}</tbody></table></details>{{end}}
{{end}}
{{with detail .}}<details><summary>Every other metric ({{len .}} rows)</summary>
<table class="sortable"><thead><tr><th>Step</th><th>Metric</th><th>Unit</th><th>{{$r.Baseline}}</th><th>{{$r.Candidate}}</th><th>Δ %</th><th>95 % CI</th><th>p</th><th>Verdict</th><th>Note</th></tr></thead><tbody>
{{range .}}<tr class="{{if .Described}}described{{else}}{{lower (printf "%s" .Verdict)}}{{end}}" title="{{.Reason}}"><td>{{.StepLabel}}</td><td>{{metric .}}</td><td>{{.Unit}}</td><td data-v="{{.Baseline.Median}}">{{fnum .Baseline.Median}} (n={{.Baseline.N}})</td><td data-v="{{.Candidate.Median}}">{{fnum .Candidate.Median}} (n={{.Candidate.N}})</td><td data-v="{{num .DeltaPercent}}">{{delta $r .}}</td><td>{{ci .}}</td><td data-v="{{num .PAdjusted}}">{{p .PAdjusted}}</td><td>{{.Verdict}}</td><td class="small">{{note .}}</td></tr>
{{end}}</tbody></table></details>{{end}}
<p class="small">{{range .Families}}{{.Name}}: {{.Tests}} tests, {{.Test}}, {{.Correction}}. {{end}}{{with .HeadlineOnly}}{{len .}} measurements compared on their status's headline metrics only (full results unavailable).{{end}}</p>
{{if .Excluded}}<p class="small">Excluded: {{range .Excluded}}{{if .Rejected}}<s class="rejected" title="{{.Rejected}}">{{.Side}} {{.Run}} {{.Step}} #{{.Repetition}}</s> ({{.Rejected}}); {{else}}{{.Side}} {{.Run}} {{.Step}} #{{.Repetition}} {{.Verdict}}; {{end}}{{end}}</p>{{end}}
{{end}}
</body></html>
{{define "oprow"}}<tr class="{{lower (printf "%s" .Verdict)}}{{if .Overall}} overall{{end}}"><td>{{.Step}}</td><td>{{if .Overall}}overall{{else}}{{.Operation}}{{end}}</td>{{range .Cells}}{{if .}}<td data-v="{{.Candidate.Median}}">{{fnum .Candidate.Median}}</td><td data-v="{{num .DeltaPercent}}" class="{{lower (printf "%s" .Verdict)}}" title="{{.Verdict}}: {{.Reason}}">{{pct .DeltaPercent}}</td>{{else}}<td></td><td></td>{{end}}{{end}}</tr>
{{end}}`))

// RenderHTML writes one self-contained page (inline CSS and SVG, a few
// lines of inline script that sort tables,
// nothing fetched) for reports that share a baseline.
func RenderHTML(w io.Writer, reports []*Report) error {
	title := "dbperf comparison"
	if len(reports) > 0 {
		var c []string
		for _, r := range reports {
			c = append(c, r.Candidate)
		}
		title = fmt.Sprintf("dbperf comparison: %s vs %s (%s)", strings.Join(c, ", "), reports[0].Baseline, reports[0].Workload)
	}
	return page.Execute(w, map[string]any{"Title": title, "Reports": reports, "Charts": charts(reports), "Timelines": timelineCharts(reports), "HostCharts": hostCharts(reports), "Curves": curveCharts(reports), "Columns": OpColumns, "Fold": FoldOperationsAfter})
}

// barGroup is one row's bars: the baseline's median with its range, then
// each candidate's for the same step, metric and operation.
func barGroup(label string, row Row, baseline string, reports []*Report) group {
	g := group{Label: label, Bars: []bar{{Variant: baseline, Value: row.Baseline.Median, Lo: row.Baseline.Min, Hi: row.Baseline.Max}}}
	for _, r := range reports {
		for _, cr := range r.Rows {
			if cr.Step == row.Step && cr.Metric == row.Metric && cr.Operation == row.Operation {
				g.Bars = append(g.Bars, bar{Variant: r.Candidate, Value: cr.Candidate.Median, Lo: cr.Candidate.Min, Hi: cr.Candidate.Max})
			}
		}
	}
	return g
}

// headlineRowLimit: a report with at most this many rows shows them all
// in its first table.
const headlineRowLimit = 40

// split parts a report's rows into its first table (headline true: the
// primary metric, the whole run's figures, the servers' side) and the
// folded rest (every other operation's metrics); a short report shows
// every row first.
func (r *Report) split(headline bool) []Row {
	if len(r.Rows) <= headlineRowLimit {
		if headline {
			return r.Rows
		}
		return nil
	}
	var out []Row
	for _, row := range r.Rows {
		first := r.IsPrimary(row) || row.Operation == "" || row.IsTelemetry()
		if first == headline {
			out = append(out, row)
		}
	}
	return out
}
