package compare

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// OpColumn is one metric of the per-operation table: the first of its
// names a step's operation has.
type OpColumn struct {
	Title string
	Names []string
}

// OpColumns are the per-operation table's columns: throughput, p50, p95,
// p99, errors and APDEX — the published per-operation tables' columns, and
// the median, which a tail-noisy measurement (a p99 of a few hundred
// requests) cannot hide a change of every request behind.
var OpColumns = []OpColumn{
	{"throughput", []string{"opsPerSecond", "requestsPerSecond", "transactionsPerSecond", "iterationsPerSecond", "nopm", "tpm", "hitsPerSecond"}},
	{"p50", []string{"latencyP50Millis", "latencyP50UpperBoundMillis"}},
	{"p95", []string{"latencyP95Millis", "latencyP95UpperBoundMillis"}},
	{"p99", []string{"latencyP99Millis", "latencyP99UpperBoundMillis"}},
	{"errors", []string{"errorPercent"}},
	{"APDEX", []string{"apdex"}},
}

// OpRow is one operation of one step: its row of each column, nil where
// the operation has no such metric.
type OpRow struct {
	Step      string
	Operation string // "" is the whole run: the overall row
	Cells     []*Row
}

// Overall says whether the row is the whole run's.
func (o OpRow) Overall() bool { return o.Operation == "" }

// Verdict of the operation: Worse if any cell is, else Better if any is,
// else Inconclusive if any is, else NoChange.
func (o OpRow) Verdict() stats.Verdict {
	best, v := -1, stats.Verdict("")
	for _, c := range o.Cells {
		if c != nil && verdictRank[c.Verdict] > best {
			best, v = verdictRank[c.Verdict], c.Verdict
		}
	}
	return v
}

// verdictRank orders the verdicts from the most telling: an operation's
// verdict is its cells' highest.
var verdictRank = map[stats.Verdict]int{stats.Worse: 3, stats.Better: 2, stats.Inconclusive: 1, stats.NoChange: 0}

// OperationTable is the per-operation table of a report: per step, the
// overall row first, then the operations with a Worse verdict, Better,
// Inconclusive and NoChange, each by name. Empty when the tool reported
// no operations.
func (r *Report) OperationTable() []OpRow {
	type key struct{ step, op string }
	byKey := map[key]*OpRow{}
	var order []key
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.IsTelemetry() {
			continue
		}
		col := -1
		for c, oc := range OpColumns {
			for _, n := range oc.Names {
				if row.Metric == n {
					col = c
				}
			}
		}
		if col < 0 {
			continue
		}
		k := key{row.StepLabel(), row.Operation}
		o, ok := byKey[k]
		if !ok {
			o = &OpRow{Step: k.step, Operation: row.Operation, Cells: make([]*Row, len(OpColumns))}
			byKey[k] = o
			order = append(order, k)
		}
		if o.Cells[col] == nil {
			o.Cells[col] = row
		}
	}
	steps := map[string]int{}
	named := false
	for _, k := range order {
		if _, ok := steps[k.step]; !ok {
			steps[k.step] = len(steps)
		}
		named = named || k.op != ""
	}
	if !named {
		return nil
	}
	rank := map[stats.Verdict]int{stats.Worse: 0, stats.Better: 1, stats.Inconclusive: 2, stats.NoChange: 3}
	out := make([]OpRow, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Step != b.Step:
			return steps[a.Step] < steps[b.Step]
		case a.Overall() != b.Overall():
			return a.Overall()
		case rank[a.Verdict()] != rank[b.Verdict()]:
			return rank[a.Verdict()] < rank[b.Verdict()]
		}
		return a.Operation < b.Operation
	})
	return out
}

// FoldOperationsAfter is how many operations a report shows before it folds
// the rest (the folded ones never hold a Worse or Better verdict unless
// more than this many do).
const FoldOperationsAfter = 25

// renderOperationsMarkdown writes the per-operation table, the rows
// beyond FoldOperationsAfter in a <details> block.
func renderOperationsMarkdown(w io.Writer, r *Report) {
	ops := r.OperationTable()
	if len(ops) == 0 {
		return
	}
	fmt.Fprintf(w, "\n**Per operation** (%d; median of %s, Δ %% against %s and verdict per metric; worst first):\n\n", len(ops), r.Candidate, r.Baseline)
	head := "| Step | Operation |"
	rule := "|---|---|"
	for _, c := range OpColumns {
		head += " " + c.Title + " | Δ % |"
		rule += "---:|---:|"
	}
	writeHead := func() { fmt.Fprintln(w, head); fmt.Fprintln(w, rule) }
	writeHead()
	for i, o := range ops {
		if i == FoldOperationsAfter {
			fmt.Fprintf(w, "\n<details><summary>%d more operations</summary>\n\n", len(ops)-i)
			writeHead()
		}
		name := o.Operation
		if o.Overall() {
			name = "**overall**"
		}
		line := fmt.Sprintf("| %s | %s |", o.Step, name)
		for _, c := range o.Cells {
			if c == nil {
				line += " | |"
				continue
			}
			line += fmt.Sprintf(" %s | %s %s |", fnum(c.Candidate.Median), pct(c.DeltaPercent), verdictMark(c.Verdict))
		}
		fmt.Fprintln(w, line)
	}
	if len(ops) > FoldOperationsAfter {
		fmt.Fprintln(w, "\n</details>")
	}
}

// verdictMark is a verdict in a table cell: the word for Better and
// Worse, which a reader looks for, a mark for the others.
func verdictMark(v stats.Verdict) string {
	switch v {
	case stats.Better, stats.Worse:
		return strings.ToUpper(string(v))
	case stats.NoChange:
		return "="
	}
	return "?"
}
