package compare

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// Formats Render writes.
var Formats = []string{"table", "markdown", "json", "csv", "html", "explain"}

// Render writes the report in a format of Formats.
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "table", "":
		return renderTable(w, r)
	case "markdown", "md":
		return renderMarkdown(w, r)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "csv":
		return renderCSV(w, r)
	case "html":
		return RenderHTML(w, []*Report{r})
	case "explain":
		return renderExplain(w, r)
	}
	return fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(Formats, ", "))
}

func fnum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
}

func pct(v Num) string {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return "-"
	case math.IsInf(f, 1):
		return "+∞"
	case math.IsInf(f, -1):
		return "-∞"
	}
	return fmt.Sprintf("%+.1f %%", f)
}

func ci(r Row) string { return pct(r.CILowPercent) + " … " + pct(r.CIHighPercent) }

// Percent formats a Δ % as the reports print it ("+1.2 %", "-" for none).
func Percent(v Num) string { return pct(v) }

// Name is the row's metric and operation, as the reports name it.
func (r Row) Name() string { return metricName(r) }

func metricName(r Row) string {
	if r.Operation != "" {
		return r.Metric + " " + r.Operation
	}
	return r.Metric
}

func header(r *Report) string {
	return fmt.Sprintf("%s: %s (%d runs) vs baseline %s (%d runs); %d better, %d worse, %d no change, %d inconclusive; %d measurements excluded",
		r.Workload, r.Candidate, len(r.CandidateRuns), r.Baseline, len(r.BaselineRuns), r.Better, r.Worse, r.NoChange, r.Inconclusive, len(r.Excluded))
}

// hasTargetCPU says whether any row carries the target's CPU change.
func hasTargetCPU(r *Report) bool {
	for _, row := range r.Rows {
		if row.TargetCPUDeltaPercent != nil {
			return true
		}
	}
	return false
}

// HasCPU says whether the report shows the target's CPU change beside its
// primary metric.
func (r *Report) HasCPU() bool { return hasTargetCPU(r) }

// cpuDelta renders a row's target CPU change, or "" when it has none.
func cpuDelta(row Row) string {
	if row.TargetCPUDeltaPercent == nil {
		return ""
	}
	return pct(*row.TargetCPUDeltaPercent)
}

// tableNameWidth bounds a metric's name (a statement's text) in the
// terminal table, so that the default table fits 160 columns.
const tableNameWidth = 36

// tableWidth is the terminal width the summary's lines are wrapped at.
const tableWidth = 160

// summaryText is the report's summary, a line each ("" when none).
func summaryText(r *Report) []string {
	if r.Summary == nil {
		return nil
	}
	return r.Summary.Lines
}

// rowNote is what the table says of a row besides its verdict: the row it
// restates, its bimodal sides, an order effect.
func rowNote(row Row) string {
	var notes []string
	if row.Restates != "" {
		notes = append(notes, "restates "+row.Restates[strings.Index(row.Restates, "/")+1:])
	}
	if row.Bimodal != "" {
		notes = append(notes, "bimodal")
	}
	if row.Order != nil && row.Order.Flag != "" {
		notes = append(notes, "order effect")
	}
	return strings.Join(notes, "; ")
}

// wrap breaks a line at spaces to width columns, indenting the rest.
func wrap(line string, width int, indent string) string {
	words := strings.Fields(line)
	var out strings.Builder
	col := 0
	for i, w := range words {
		n := utf8.RuneCountInString(w)
		if i > 0 && col+1+n > width {
			out.WriteString("\n" + indent)
			col = utf8.RuneCountInString(indent)
		} else if i > 0 {
			out.WriteByte(' ')
			col++
		}
		out.WriteString(w)
		col += n
	}
	return out.String()
}

// sideN is the number of repetitions most rows of a side have: the
// table's header says it once, and a row that has another says its own.
func sideN(r *Report, base bool) int {
	count := map[int]int{}
	best, n := 0, 0
	for _, row := range r.Rows {
		k := row.Candidate.N
		if base {
			k = row.Baseline.N
		}
		count[k]++
		if count[k] > best {
			best, n = count[k], k
		}
	}
	return n
}

// medianCell is a side's median, with its n when it differs from the
// header's.
func medianCell(s stats.Summary, n int) string {
	if s.N != n {
		return fmt.Sprintf("%s (n=%d)", fnum(s.Median), s.N)
	}
	return fnum(s.Median)
}

func renderTable(w io.Writer, r *Report) error {
	for _, line := range summaryText(r) {
		fmt.Fprintln(w, wrap(line, tableWidth, "    "))
	}
	fmt.Fprintln(w, wrap(header(r), tableWidth, "    "))
	cpu := hasTargetCPU(r)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	nb, nc := sideN(r, true), sideN(r, false)
	fmt.Fprintf(tw, "STEP\tMETRIC\tUNIT\t%s (n=%d)\t%s (n=%d)\tΔ %%\t", strings.ToUpper(shorten(r.Baseline, 16)), nb, strings.ToUpper(shorten(r.Candidate, 16)), nc)
	if cpu {
		fmt.Fprint(tw, "TARGET CPU Δ %\t")
	}
	fmt.Fprint(tw, "95% CI\tP\tVERDICT\tNOTE\n")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t", shorten(row.StepLabel(), 16), shorten(metricName(row), tableNameWidth), row.Unit,
			medianCell(row.Baseline, nb), medianCell(row.Candidate, nc), pct(row.DeltaPercent))
		if cpu {
			fmt.Fprintf(tw, "%s\t", cpuDelta(row))
		}
		note := rowNote(row)
		if other := deltaNote(r, row); other != "" {
			note = strings.TrimPrefix(note+"; "+other, "; ")
		}
		fmt.Fprintf(tw, "%s\t%.3g\t%s\t%s\n", ci(row), float64(row.PAdjusted), row.Verdict, shorten(note, 28))
	}
	return tw.Flush()
}

func renderMarkdown(w io.Writer, r *Report) error {
	if lines := summaryText(r); len(lines) > 0 {
		fmt.Fprintf(w, "### %s\n\n", lines[0])
		for _, line := range lines[1:] {
			fmt.Fprintf(w, "- %s\n", line)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "**%s**\n\n", header(r))
	cpu := hasTargetCPU(r)
	cpuHead, cpuRule := "", ""
	if cpu {
		cpuHead, cpuRule = " Target CPU Δ % |", "---:|"
	}
	fmt.Fprintf(w, "| Step | Metric | Unit | %s (median) | %s (median) | Δ %% |%s 95 %% CI | p (adj.) | Verdict | Note |\n", r.Baseline, r.Candidate, cpuHead)
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|%s---|---:|---|---|\n", cpuRule)
	for _, row := range r.Rows {
		cpuCell := ""
		if cpu {
			cpuCell = " " + cpuDelta(row) + " |"
		}
		note := rowNote(row)
		if row.Bimodal != "" {
			note = strings.Replace(note, "bimodal", "bimodal: "+row.Bimodal, 1)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |%s %s | %.3g | %s | %s |\n", row.StepLabel(), mdCell(metricName(row)), row.Unit,
			fnum(row.Baseline.Median), fnum(row.Candidate.Median), deltaTextLong(r, row), cpuCell, ci(row), float64(row.PAdjusted), row.Verdict, mdCell(note))
	}
	renderOperationsMarkdown(w, r)
	if len(r.Environment) > 0 {
		fmt.Fprintf(w, "\n**What differed between the variants** (%d):\n\n| | %s | %s |\n|---|---|---|\n", len(r.Environment), r.Baseline, r.Candidate)
		for _, d := range r.Environment {
			fmt.Fprintf(w, "| %s | %s | %s |\n", mdCell(d.What), mdCell(strings.Join(d.Baseline, ", ")), mdCell(strings.Join(d.Candidate, ", ")))
		}
	}
	renderSuspectsMarkdown(w, r)
	renderNotes(w, r)
	if len(r.Excluded) > 0 {
		fmt.Fprintf(w, "\nExcluded measurements:\n\n")
		for _, e := range r.Excluded {
			if e.Rejected != "" {
				fmt.Fprintf(w, "- ~~%s %s %s #%d~~ %s\n", e.Side, e.Run, e.Step, e.Repetition, e.Rejected)
				continue
			}
			fmt.Fprintf(w, "- %s %s %s #%d: %s (%s)\n", e.Side, e.Run, e.Step, e.Repetition, e.Verdict, strings.Join(e.Reasons, "; "))
		}
	}
	return nil
}

func renderCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"step", "metric", "operation", "unit", "direction", "baseline", "baseline_n", "baseline_median", "baseline_cv_percent",
		"candidate", "candidate_n", "candidate_median", "candidate_cv_percent", "delta_percent", "ci_low_percent", "ci_high_percent", "p", "p_adjusted", "verdict",
		"source", "target_cpu_delta_percent", "candidate_step", "restates", "bimodal"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, row := range r.Rows {
		_ = cw.Write([]string{row.Step, row.Metric, row.Operation, row.Unit, string(row.Direction),
			r.Baseline, strconv.Itoa(row.Baseline.N), f(row.Baseline.Median), f(row.Baseline.CVPercent),
			r.Candidate, strconv.Itoa(row.Candidate.N), f(row.Candidate.Median), f(row.Candidate.CVPercent),
			f(float64(row.DeltaPercent)), f(float64(row.CILowPercent)), f(float64(row.CIHighPercent)), f(float64(row.P)), f(float64(row.PAdjusted)), string(row.Verdict),
			row.Source, cpuDeltaNumber(row), row.CandidateStep, row.Restates, row.Bimodal})
	}
	cw.Flush()
	return cw.Error()
}

func cpuDeltaNumber(row Row) string {
	if row.TargetCPUDeltaPercent == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*row.TargetCPUDeltaPercent), 'g', -1, 64)
}

// renderNotes says how the families were tested and which measurements
// were compared on their headline metrics only.
func renderNotes(w io.Writer, r *Report) {
	if len(r.Families) > 0 {
		var fs []string
		for _, f := range r.Families {
			fs = append(fs, fmt.Sprintf("%s: %d tests, %s, %s", f.Name, f.Tests, f.Test, f.Correction))
		}
		fmt.Fprintf(w, "\nTests: %s.\n", strings.Join(fs, "; "))
	}
	if n := len(r.HeadlineOnly); n > 0 {
		fmt.Fprintf(w, "\n%d measurements were compared on the headline metrics their run's status keeps, their full results being unavailable: %s\n",
			n, strings.Join(r.HeadlineOnly, ", "))
	}
}

// mdCell keeps a text from breaking a Markdown table: its pipes escaped,
// its line breaks spaces.
func mdCell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", "\\|")
}
