// Command kubectl-dbperf is the kubectl plugin of dbperf-operator
// (`kubectl dbperf …` when on PATH):
//
//	kubectl dbperf compare RUN_A RUN_B [-o table|markdown|json|csv|html]   baseline A, candidate B
//	kubectl dbperf compare COMPARISON [-o …]                               a BenchmarkComparison's report
//	kubectl dbperf compare --from-file A.json --from-file B.json [-o …]    offline, from `results -o json`
//	kubectl dbperf report COMPARISON -o html > report.html                 the self-contained page
//	kubectl dbperf results RUN [-o json|csv] [--series]                    a run's measurements (every metric, or the time series)
//	kubectl dbperf reject RUN [--step S --repetition N] --reason "…" [--undo]  leave measurements out of comparisons
//	kubectl dbperf logs RUN                                                the tool's log of each pod
//	kubectl dbperf history SCHEDULE [-o table|markdown|json|html]          headline values, changes marked
//	kubectl dbperf ack SCHEDULE [--run R] --reason "…" [--undo]             accept the new level of an open regression
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// usage takes the compare flags' defaults from internal/stats, where the
// criteria's defaults are spelled once.
var usage = fmt.Sprintf(`kubectl dbperf: compare and export dbperf-operator results

  kubectl dbperf compare RUN_A RUN_B [-o table|markdown|json|csv|html]  (A is the baseline)
  kubectl dbperf compare COMPARISON [-o ...]
  kubectl dbperf compare --from-file A.json --from-file B.json [-o ...]
  kubectl dbperf report COMPARISON -o html > report.html
  kubectl dbperf results RUN [-o json|csv] [--series]
  kubectl dbperf reject RUN [--step S] [--repetition N] --reason "..." [--undo]
  kubectl dbperf logs RUN
  kubectl dbperf history SCHEDULE [-o table|markdown|json|html]
  kubectl dbperf ack SCHEDULE [--run R] --reason "..." [--undo]

Common flags: -n/--namespace, --kubeconfig, --context.
Compare flags: --alpha (%g), --min-effect (percent, %g; 0 = none), --max-cv (percent, 0 = off),
               --correction (headline: Holm|BenjaminiHochberg|None; %s),
               --operation-correction (every other metric: %s),
               --metric PATTERN, --operation PATTERN (repeatable filters).`,
	stats.DefaultAlpha, stats.DefaultMinEffectPercent, stats.DefaultCorrection, stats.DefaultOperationCorrection)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type common struct {
	namespace, kubeconfig, context, output string
}

func (c *common) bind(fs *flag.FlagSet, defaultOutput string) {
	fs.StringVar(&c.namespace, "n", "", "namespace (default: the kubeconfig's)")
	fs.StringVar(&c.namespace, "namespace", "", "namespace (default: the kubeconfig's)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&c.context, "context", "", "kubeconfig context")
	fs.StringVar(&c.output, "o", defaultOutput, "output format")
	fs.StringVar(&c.output, "output", defaultOutput, "output format")
}

// parseInterspersed parses flags that may come after the positional
// arguments, as kubectl users write them.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command"}
	}
	switch args[0] {
	case "compare":
		return cmdCompare(ctx, args[1:], stdout, stderr)
	case "report":
		return cmdReport(ctx, args[1:], stdout, stderr)
	case "reject":
		return cmdReject(ctx, args[1:], stdout, stderr)
	case "results":
		return cmdResults(ctx, args[1:], stdout, stderr)
	case "logs":
		return cmdLogs(ctx, args[1:], stdout, stderr)
	case "history":
		return cmdHistory(ctx, args[1:], stdout, stderr)
	case "ack":
		return cmdAck(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}
