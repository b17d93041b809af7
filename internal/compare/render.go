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
)

// Formats Render writes.
var Formats = []string{"table", "markdown", "json", "csv", "html"}

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

func renderTable(w io.Writer, r *Report) error {
	fmt.Fprintln(w, header(r))
	cpu := hasTargetCPU(r)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "STEP\tMETRIC\tUNIT\t%s\t%s\tΔ %%\t", strings.ToUpper(r.Baseline), strings.ToUpper(r.Candidate))
	if cpu {
		fmt.Fprint(tw, "TARGET CPU Δ %\t")
	}
	fmt.Fprint(tw, "95% CI\tP\tVERDICT\n")
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (n=%d)\t%s (n=%d)\t%s\t", row.StepLabel(), metricName(row), row.Unit,
			fnum(row.Baseline.Median), row.Baseline.N, fnum(row.Candidate.Median), row.Candidate.N, pct(row.DeltaPercent))
		if cpu {
			fmt.Fprintf(tw, "%s\t", cpuDelta(row))
		}
		fmt.Fprintf(tw, "%s\t%.3g\t%s\n", ci(row), float64(row.PAdjusted), row.Verdict)
	}
	return tw.Flush()
}

func renderMarkdown(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "**%s**\n\n", header(r))
	cpu := hasTargetCPU(r)
	cpuHead, cpuRule := "", ""
	if cpu {
		cpuHead, cpuRule = " Target CPU Δ % |", "---:|"
	}
	fmt.Fprintf(w, "| Step | Metric | Unit | %s (median) | %s (median) | Δ %% |%s 95 %% CI | p (adj.) | Verdict |\n", r.Baseline, r.Candidate, cpuHead)
	fmt.Fprintf(w, "|---|---|---|---:|---:|---:|%s---|---:|---|\n", cpuRule)
	for _, row := range r.Rows {
		cpuCell := ""
		if cpu {
			cpuCell = " " + cpuDelta(row) + " |"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |%s %s | %.3g | %s |\n", row.StepLabel(), metricName(row), row.Unit,
			fnum(row.Baseline.Median), fnum(row.Candidate.Median), pct(row.DeltaPercent), cpuCell, ci(row), float64(row.PAdjusted), row.Verdict)
	}
	renderOperationsMarkdown(w, r)
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
		"source", "target_cpu_delta_percent", "candidate_step"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, row := range r.Rows {
		_ = cw.Write([]string{row.Step, row.Metric, row.Operation, row.Unit, string(row.Direction),
			r.Baseline, strconv.Itoa(row.Baseline.N), f(row.Baseline.Median), f(row.Baseline.CVPercent),
			r.Candidate, strconv.Itoa(row.Candidate.N), f(row.Candidate.Median), f(row.Candidate.CVPercent),
			f(float64(row.DeltaPercent)), f(float64(row.CILowPercent)), f(float64(row.CIHighPercent)), f(float64(row.P)), f(float64(row.PAdjusted)), string(row.Verdict),
			row.Source, cpuDeltaNumber(row), row.CandidateStep})
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
