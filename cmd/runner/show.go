package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
)

// cmdShow prints the result block at the end of a runner log (for example
// `kubectl logs job/NAME | dbperf-runner show`) as a table.
func cmdShow(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := pod.ParseShow(args, stderr)
	if err != nil {
		return runner.ExitUsage
	}
	data, err := readInput(c.Input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner show: %v\n", err)
		return runner.ExitUsage
	}
	r, err := results.DecodeBlock(data)
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner show: %v\n", err)
		return runner.ExitUsage
	}
	printTable(stdout, r, c.All)
	return runner.ExitCodeFor(r.Verdict)
}

func printTable(w io.Writer, r *results.Result, all bool) {
	fmt.Fprintf(w, "%s %s: %s\n", r.Tool, r.ToolVersion, r.Verdict)
	for _, reason := range r.Reasons {
		fmt.Fprintf(w, "  not trusted: %s\n", reason)
	}
	if len(r.Parameters) > 0 {
		keys := make([]string, 0, len(r.Parameters))
		for k := range r.Parameters {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+"="+r.Parameters[k])
		}
		fmt.Fprintf(w, "  settings: %s\n", strings.Join(parts, " "))
	}
	if lg := r.LoadGenerator; lg != nil && lg.Source != "" {
		fmt.Fprintf(w, "  load generator: %.1f%% of %.3g CPUs (%s)\n", lg.CPUPercent, lg.AvailableCPUs, lg.Source)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OPERATION\tMETRIC\tVALUE\tUNIT\tBETTER\t")
	metrics := r.Headline()
	if all {
		metrics = r.Metrics
	}
	for _, m := range metrics {
		better := map[results.Direction]string{results.HigherIsBetter: "higher", results.LowerIsBetter: "lower"}[m.Direction]
		op := m.Operation
		if len(op) > 40 {
			op = op[:39] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", op, m.Name, strconv.FormatFloat(m.Value, 'f', -1, 64), m.Unit, better)
	}
	_ = tw.Flush()
}
