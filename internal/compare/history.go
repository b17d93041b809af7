package compare

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// A schedule's history as people read it: each finished run with its value,
// what the regression policy judged it and what changed at it (a regression
// or an improvement starting, ending, acknowledged), as a table, Markdown,
// JSON or a self-contained HTML page with the values drawn over time.

// HistoryFormats are the formats RenderHistory writes.
var HistoryFormats = []string{"table", "markdown", "json", "html"}

// HistoryMark names what happened at an entry: "regression starts",
// "recovered", "acknowledged" … ("" when nothing did).
func HistoryMark(h benchv1.HistoryEntry) string {
	var parts []string
	if h.ChangePoint {
		what := "change point"
		switch h.Judgement {
		case benchv1.JudgedRegression:
			what = "regression starts"
		case benchv1.JudgedImprovement:
			what = "improvement starts"
		}
		if h.Provisional {
			what += " (provisional)"
		}
		parts = append(parts, what)
	}
	for _, t := range h.Transitions {
		if w, ok := transitionWords[t]; ok {
			parts = append(parts, w)
		}
	}
	if h.Acknowledged != "" {
		parts = append(parts, "acknowledged")
	}
	return strings.Join(parts, ", ")
}

var transitionWords = map[string]string{
	"RegressionConfirmed": "confirmed", "ImprovementConfirmed": "confirmed",
	"RegressionRecovered": "recovered", "RegressionNotConfirmed": "not confirmed", "ImprovementNotConfirmed": "not confirmed",
	"ImprovementAdopted": "improvement adopted", "ImprovementEnded": "improvement ended",
}

// RenderHistory writes a schedule's history in a format.
func RenderHistory(w io.Writer, s *benchv1.BenchmarkSchedule, format string) error {
	switch format {
	case "", "table":
		return historyTable(w, s)
	case "markdown":
		return historyMarkdown(w, s)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s.Status.History)
	case "html":
		return historyPage.Execute(w, historyView(s))
	}
	return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(HistoryFormats, ", "))
}

func entryValue(h benchv1.HistoryEntry) string {
	if h.Value == nil {
		return "-"
	}
	return fnum(*h.Value) + " " + h.Unit
}

func entryDelta(h benchv1.HistoryEntry) string {
	if h.DeltaPercent == nil {
		return "-"
	}
	return pct(Num(*h.DeltaPercent))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func historyTable(w io.Writer, s *benchv1.BenchmarkSchedule) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tRELEASE\tPHASE\tVALUE\tΔ\tJUDGEMENT\t")
	for _, h := range s.Status.History {
		mark := HistoryMark(h)
		if mark != "" {
			mark = "◀ " + mark
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.Run, h.StartTime.UTC().Format("2006-01-02 15:04"), orDash(h.Release), h.Phase,
			entryValue(h), entryDelta(h), orDash(string(h.Judgement)), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range conditionLines(s) {
		fmt.Fprintln(w, line)
	}
	return nil
}

// conditionLines are the schedule's judgement in a few lines: Regressed,
// Improved and Acknowledged with their reasons.
func conditionLines(s *benchv1.BenchmarkSchedule) []string {
	var out []string
	for i, t := range []string{benchv1.ConditionRegressed, benchv1.ConditionImproved, benchv1.ConditionAcknowledged} {
		if c := meta.FindStatusCondition(s.Status.Conditions, t); c != nil {
			if i == 0 {
				out = append(out, "")
			}
			out = append(out, fmt.Sprintf("%s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message))
		}
	}
	return out
}

func historyMarkdown(w io.Writer, s *benchv1.BenchmarkSchedule) error {
	fmt.Fprintf(w, "### History of BenchmarkSchedule %s\n\n", s.Name)
	for _, line := range conditionLines(s) {
		if line != "" {
			fmt.Fprintf(w, "- %s\n", line)
		}
	}
	fmt.Fprintln(w, "\n| Run | Started | Release | Phase | Value | Δ | Judgement | |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---|---|")
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	for _, h := range s.Status.History {
		mark := HistoryMark(h)
		if h.ChangePoint {
			mark = "**" + mark + "**"
		}
		if h.Acknowledged != "" {
			mark += " (" + h.Acknowledged + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", esc.Replace(h.Run), h.StartTime.UTC().Format("2006-01-02 15:04"),
			esc.Replace(orDash(h.Release)), h.Phase, entryValue(h), entryDelta(h), orDash(string(h.Judgement)), esc.Replace(mark))
	}
	return nil
}

type historyRow struct {
	benchv1.HistoryEntry
	Mark, ValueText, DeltaText, Class string
}

func historyView(s *benchv1.BenchmarkSchedule) map[string]any {
	var rows []historyRow
	for _, h := range s.Status.History {
		rows = append(rows, historyRow{HistoryEntry: h, Mark: HistoryMark(h), ValueText: entryValue(h), DeltaText: entryDelta(h),
			Class: strings.ToLower(string(h.Judgement))})
	}
	return map[string]any{"Name": s.Name, "Namespace": s.Namespace, "Conditions": conditionLines(s), "Rows": rows, "Chart": historySVG(s)}
}

// historySVG draws the values in run order: each point coloured by its
// judgement, the change points as dashed lines, acknowledgements flagged,
// and the reference level of an open change with its margin.
func historySVG(s *benchv1.BenchmarkSchedule) template.HTML {
	const width, height, left, right, top, bottom = 900.0, 320.0, 80.0, 20.0, 30.0, 40.0
	h := s.Status.History
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, e := range h {
		if e.Value != nil {
			lo, hi = math.Min(lo, *e.Value), math.Max(hi, *e.Value)
		}
	}
	var open *benchv1.RegressionEpisode
	if s.Status.Regression != nil {
		open = s.Status.Regression.Open
	}
	if open != nil {
		lo, hi = math.Min(lo, open.Reference), math.Max(hi, open.Reference)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" role="img" width="%g" height="%g" viewBox="0 0 %g %g" class="chart">`, width, height, width, height)
	fmt.Fprintf(&sb, `<title>%s over the schedule's runs</title>`, template.HTMLEscapeString(s.Name))
	if math.IsInf(lo, 1) {
		sb.WriteString(`<text x="80" y="40" class="ax">no value yet</text></svg>`)
		return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
	}
	pad := (hi - lo) * 0.1
	if pad == 0 {
		pad = math.Max(math.Abs(hi)*0.05, 1)
	}
	lo, hi = math.Max(0, lo-pad), hi+pad
	plotW, plotH := width-left-right, height-top-bottom
	x := func(i int) float64 {
		if len(h) == 1 {
			return left + plotW/2
		}
		return left + plotW*float64(i)/float64(len(h)-1)
	}
	y := func(v float64) float64 { return top + plotH - plotH*(v-lo)/(hi-lo) }
	for i := 0; i <= 4; i++ {
		v := lo + (hi-lo)*float64(i)/4
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="grid"/><text x="%g" y="%.1f" class="ax" text-anchor="end">%s</text>`,
			left, width-right, y(v), y(v), left-6, y(v)+4, fnum(v))
	}
	if open != nil {
		fmt.Fprintf(&sb, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" class="ref"><title>the level before the open %s: %s</title></line>`,
			left, width-right, y(open.Reference), y(open.Reference), strings.ToLower(string(open.Kind)), fnum(open.Reference))
	}
	var path []string
	for i, e := range h {
		if e.ChangePoint {
			fmt.Fprintf(&sb, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" class="cp"/><text x="%.1f" y="%g" class="cpl">%s</text>`,
				x(i), x(i), top, top+plotH, x(i)+3, top+10, template.HTMLEscapeString(HistoryMark(e)))
		}
		if e.Acknowledged != "" {
			fmt.Fprintf(&sb, `<text x="%.1f" y="%g" class="ack"><title>%s</title>✓ ack</text>`, x(i)-10, top+plotH+28, template.HTMLEscapeString(e.Acknowledged))
		}
		if e.Value != nil && e.Phase == benchv1.PhaseSucceeded {
			path = append(path, fmt.Sprintf("%.1f,%.1f", x(i), y(*e.Value)))
		}
	}
	if len(path) > 1 {
		fmt.Fprintf(&sb, `<polyline points="%s" class="line"/>`, strings.Join(path, " "))
	}
	for i, e := range h {
		if e.Value == nil {
			continue
		}
		class := "pt " + strings.ToLower(string(e.Judgement))
		if e.Phase != benchv1.PhaseSucceeded {
			class = "pt invalid"
		}
		fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="4" class="%s"><title>%s (%s): %s, %s %s</title></circle>`, x(i), y(*e.Value), class,
			template.HTMLEscapeString(e.Run), template.HTMLEscapeString(orDash(e.Release)), template.HTMLEscapeString(entryValue(e)),
			orDash(string(e.Judgement)), template.HTMLEscapeString(HistoryMark(e)))
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String()) //nolint:gosec // built from escaped text and numbers
}

var historyPage = template.Must(template.New("history").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dbperf history: {{.Name}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.num{text-align:right}tr.regression td{background:#fde2e2}tr.improvement td{background:#e2f5e8}
tr.notenoughhistory td{color:#777}.grid{stroke:#eee}.ax{font-size:11px;fill:#555}.line{fill:none;stroke:#8aa;stroke-width:1.5}
.pt{fill:#5b6f82}.pt.regression{fill:#c0392b}.pt.improvement{fill:#27ae60}.pt.notenoughhistory{fill:#bbb}.pt.invalid{fill:#fff;stroke:#999}
.cp{stroke:#c0392b;stroke-dasharray:4 3}.cpl{font-size:11px;fill:#c0392b}.ref{stroke:#555;stroke-dasharray:6 4}.ack{font-size:11px;fill:#2471a3}
.cond{margin:2px 0}
</style></head><body>
<h1>History of BenchmarkSchedule {{.Name}}</h1>
<p class="small">namespace {{.Namespace}}</p>
{{range .Conditions}}{{if .}}<p class="cond">{{.}}</p>{{end}}{{end}}
{{.Chart}}
<table><thead><tr><th>Run</th><th>Started</th><th>Release</th><th>Phase</th><th>Value</th><th>Δ</th><th>Judgement</th><th>What changed</th></tr></thead><tbody>
{{range .Rows}}<tr class="{{.Class}}"><td>{{.Run}}</td><td>{{.StartTime.UTC.Format "2006-01-02 15:04"}}</td><td>{{.Release}}</td><td>{{.Phase}}</td><td class="num">{{.ValueText}}</td><td class="num">{{.DeltaText}}</td><td>{{.Judgement}}</td><td>{{.Mark}}{{with .Acknowledged}}<br><small>{{.}}</small>{{end}}</td></tr>
{{end}}</tbody></table>
</body></html>
`))
