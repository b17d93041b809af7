// Command kubectl-dbperf is the kubectl plugin of dbperf-operator
// (`kubectl dbperf …` when on PATH):
//
//	kubectl dbperf compare RUN_A RUN_B [-o table|markdown|json|csv|html]   baseline A, candidate B
//	kubectl dbperf compare COMPARISON [-o …]                               a BenchmarkComparison's report
//	kubectl dbperf compare --from-file A.json --from-file B.json [-o …]    offline, from `results -o json`
//	kubectl dbperf report COMPARISON -o html > report.html                 the self-contained page
//	kubectl dbperf results RUN [-o json|csv] [--series|--stages]           a run's measurements (every metric, the time series, or the stages)
//	kubectl dbperf reject RUN [--step S --repetition N] --reason "…" [--undo]  leave measurements out of comparisons
//	kubectl dbperf logs RUN                                                the tool's log of each pod
//	kubectl dbperf history SCHEDULE [-o table|markdown|json|html]          headline values, changes marked
//	kubectl dbperf ack SCHEDULE [--run R] --reason "…" [--undo]             accept the new level of an open regression
//	kubectl dbperf try FILE… [--apply]                                     a sample's smoke form, to try in a minute
//	kubectl dbperf version                                                 the plugin's release
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/version"
)

// command is one subcommand of the plugin.
type command struct {
	name string
	// synopsis is how it is called, one line per form, after "kubectl dbperf".
	synopsis string
	run      func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the plugin's subcommands, in the order the usage lists them.
var commands = []command{
	{"compare", "compare RUN_A RUN_B [-o table|markdown|json|csv|html]  (A is the baseline)\n" +
		"compare COMPARISON [-o ...]\n" +
		"compare --from-file A.json --from-file B.json [-o ...]", cmdCompare},
	{"explain", "explain COMPARISON | RUN_A RUN_B | --from-file A.json --from-file B.json  (the summary, what differed, the suspects)", cmdExplain},
	{"report", "report COMPARISON -o html > report.html", cmdReport},
	{"results", "results RUN [-o json|csv] [--series|--stages]", cmdResults},
	{"reject", `reject RUN [--step S] [--repetition N] --reason "..." [--undo]`, cmdReject},
	{"capacity", "capacity RUN [-o table|json]", cmdCapacity},
	{"logs", "logs RUN", cmdLogs},
	{"history", "history SCHEDULE [-o table|markdown|json|html]", cmdHistory},
	{"ack", `ack SCHEDULE [--run R] --reason "..." [--undo]`, cmdAck},
	{"try", "try FILE... [--apply]", cmdTry},
	{"wait", "wait COMPARISON|RUN [--timeout 24h] [--no-wait] [--junit FILE]  (exit 0 pass, 3 regression, 4 inconclusive or invalid, 5 not yet)", cmdWait},
}

// usage is the plugin's: every command's synopsis. A command's flags and
// their defaults are its --help's, printed from the flags themselves.
func usage() string {
	var b strings.Builder
	b.WriteString("kubectl dbperf: compare and export dbperf-operator results\n\n")
	for _, c := range commands {
		writeSynopsis(&b, c)
	}
	b.WriteString("\nCommon flags: -n/--namespace, --kubeconfig, --context.\n")
	b.WriteString("kubectl dbperf COMMAND --help shows the command's flags and their defaults.\n")
	b.WriteString("kubectl dbperf version prints the plugin's release.")
	return b.String()
}

func writeSynopsis(w io.Writer, c command) {
	for _, line := range strings.Split(c.synopsis, "\n") {
		fmt.Fprintf(w, "  kubectl dbperf %s\n", line)
	}
}

// helpRequest is a command's -h or --help: its flags, to print.
type helpRequest struct{ flags *flag.FlagSet }

func (helpRequest) Error() string { return "help requested" }

// writeHelp prints a command's synopsis and flags.
func writeHelp(w io.Writer, c command, flags *flag.FlagSet) {
	fmt.Fprintln(w, "Usage:")
	writeSynopsis(w, c)
	fmt.Fprintln(w, "\nFlags:")
	flags.SetOutput(w)
	flags.PrintDefaults()
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if code, ok := exitCodeOf(err); ok {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, usage())
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
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, helpRequest{fs}
		} else if err != nil {
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
	case "help", "-h", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		fmt.Fprintln(stdout, usage())
		return nil
	case "version", "--version":
		fmt.Fprintln(stdout, version.Version)
		return nil
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		var help helpRequest
		if errors.As(err, &help) {
			writeHelp(stdout, c, help.flags)
			return nil
		}
		return err
	}
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}
