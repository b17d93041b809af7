package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
)

// cmdHistory prints a schedule's history with the marks its regression
// judgement made: where a regression or an improvement started, confirmed,
// ended, and who acknowledged it.
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
	if format != "" && !slices.Contains(compare.HistoryFormats, format) {
		return usageError{fmt.Sprintf("history: unknown output %q (%s)", format, strings.Join(compare.HistoryFormats, ", "))}
	}
	return compare.RenderHistory(w, s, format)
}
