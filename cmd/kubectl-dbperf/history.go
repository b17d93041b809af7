package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// historyRows marks change points over the valid values of a schedule's
// history (the schedule marks them itself only with the ChangePoint method).
func historyRows(s *benchv1.BenchmarkSchedule) []benchv1.HistoryEntry {
	rows := append([]benchv1.HistoryEntry(nil), s.Status.History...)
	var idx []int
	var series []float64
	for i, h := range rows {
		if h.Phase == benchv1.PhaseSucceeded && h.Value != nil {
			idx = append(idx, i)
			series = append(series, *h.Value)
		}
	}
	min := 2.0
	if p := s.Spec.Regression; p != nil && p.MinEffectPercent > 0 {
		min = float64(p.MinEffectPercent)
	}
	for _, cp := range stats.ChangePoints(series, stats.ChangePointOptions{MinEffectPercent: min}) {
		rows[idx[cp.Index]].ChangePoint = true
	}
	return rows
}

func cmdHistory(ctx context.Context, args []string, stdout, _ io.Writer) error {
	k, o, name, err := oneName("history", "SCHEDULE", "table", args)
	if err != nil {
		return err
	}
	s := &benchv1.BenchmarkSchedule{}
	if err := k.c.Get(ctx, client.ObjectKey{Namespace: k.namespace, Name: name}, s); err != nil {
		return fmt.Errorf("BenchmarkSchedule %s/%s: %w", k.namespace, name, err)
	}
	return renderHistory(stdout, s, o.output)
}

func renderHistory(w io.Writer, s *benchv1.BenchmarkSchedule, format string) error {
	rows := historyRows(s)
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if format != "table" && format != "" {
		return usageError{fmt.Sprintf("history: unknown output %q (table or json)", format)}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tRELEASE\tPHASE\tVALUE\t")
	for _, h := range rows {
		v := "-"
		if h.Value != nil {
			v = fmt.Sprintf("%.4g %s", *h.Value, h.Unit)
		}
		mark := ""
		if h.ChangePoint {
			mark = "◀ change point"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.Run, h.StartTime.UTC().Format("2006-01-02 15:04"), orDash(h.Release), h.Phase, v, mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed); c != nil {
		fmt.Fprintf(w, "\nRegressed=%s (%s): %s\n", c.Status, c.Reason, c.Message)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
