package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// cmdCapacity prints what a capacity run found: the maximum, why it
// stopped, and every level in the order measured (the knee curve) with
// its throughput, achieved rate, latency figure and why it failed.
func cmdCapacity(ctx context.Context, args []string, stdout, _ io.Writer) error {
	k, o, name, err := oneName("capacity", "RUN", "table", args)
	if err != nil {
		return err
	}
	r, err := k.run(ctx, name)
	if err != nil {
		return err
	}
	return renderCapacity(stdout, r, o.output)
}

func renderCapacity(w io.Writer, r *benchv1.BenchmarkRun, format string) error {
	cs := r.Status.Capacity
	if r.Spec.Capacity == nil {
		return fmt.Errorf("run %s is not a capacity run (it has no spec.capacity)", r.Name)
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(cs)
	case "table", "":
	default:
		return usageError{fmt.Sprintf("capacity: unknown output %q (table or json)", format)}
	}
	if cs == nil {
		_, err := fmt.Fprintf(w, "%s: no level measured yet (phase %s)\n", r.Name, r.Status.Phase)
		return err
	}
	found := "no level passed"
	if cs.Maximum != nil {
		found = fmt.Sprintf("maximum %s=%d", cs.Parameter, *cs.Maximum)
		if t := cs.Throughput; t != nil {
			found += fmt.Sprintf(" (%s %.6g %s)", t.Name, t.Value, t.Unit)
		}
	}
	stop := string(cs.StopReason)
	if stop == "" {
		stop = "searching"
	}
	fmt.Fprintf(w, "%s: %s — %s: %s\n", r.Name, found, stop, cs.Message)
	if cs.NonMonotonic {
		fmt.Fprintln(w, "non-monotonic: a level passed above the smallest failing one")
	}
	fmt.Fprintf(w, "latency at a fixed rate: %s\n\n", cs.CoordinatedOmission)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tLEVEL\tVERDICT\tTHROUGHPUT\tACHIEVED %\tLATENCY\tGEN CPU µs/OP\tWHY")
	for i, l := range cs.Levels {
		verdict := "measuring"
		switch {
		case l.Passed != nil && *l.Passed:
			verdict = "passed"
		case l.Passed != nil:
			verdict = "failed"
		case len(l.Reasons) > 0:
			verdict = "not judged"
		}
		latency := "-"
		switch {
		case l.LatencyMillis != nil:
			latency = fmt.Sprintf("%.4g ms", *l.LatencyMillis)
		case l.LatencyOverLimitPercent != nil:
			latency = fmt.Sprintf("%.4g %% over limit", *l.LatencyOverLimitPercent)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, l.Step, verdict, num(l.Throughput), num(l.AchievedPercent), latency,
			num(l.LoadGeneratorCPUMicrosPerOperation), strings.Join(l.Reasons, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return renderSoak(w, r, cs.Soak)
}

// renderSoak prints the soak's verdict and its trends.
func renderSoak(w io.Writer, r *benchv1.BenchmarkRun, sk *benchv1.CapacitySoakStatus) error {
	if sk == nil {
		return nil
	}
	verdict := "running"
	switch {
	case sk.Passed != nil && *sk.Passed:
		verdict = "held"
	case sk.Passed != nil:
		verdict = "failed"
	case len(sk.Reasons) > 0:
		verdict = "not judged"
	}
	fmt.Fprintf(w, "\nsoak at %s for %s: %s", sk.Step, r.Spec.Capacity.Soak.Duration.Duration, verdict)
	if verdict == "running" && r.Status.ExpectedCompletionTime != nil {
		fmt.Fprintf(w, " (ends about %s)", r.Status.ExpectedCompletionTime.UTC().Format("2006-01-02 15:04 MST"))
	}
	fmt.Fprintln(w)
	if sk.Restarts != "" {
		fmt.Fprintf(w, "restarted: %s\n", sk.Restarts)
	}
	if len(sk.Checks) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CHECK\tSERIES\tCHANGE\t95% CI\tLIMIT\tVERDICT")
		for _, c := range sk.Checks {
			v := "passed"
			if !c.Passed {
				v = "failed"
			}
			fmt.Fprintf(tw, "%s\t%s\t%+.3g %%\t%+.3g to %+.3g %%\t%g %%\t%s\n", c.Name, c.Series, c.ChangePercent, c.CILowPercent, c.CIHighPercent, c.LimitPercent, v)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, reason := range sk.Reasons {
		fmt.Fprintf(w, "- %s\n", reason)
	}
	return nil
}

func num(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.6g", *v)
}
