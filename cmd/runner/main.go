// Command dbperf-runner runs a load tool inside a workload pod and turns its
// output into a dbperf result.
//
//	dbperf-runner exec --workload pgbench [flags] -- pgbench -c 10 ...
//	dbperf-runner parse --workload memtier [--input FILE] [--result-file [NAME=]F] [--prepare]
//	dbperf-runner query --driver clickhouse --queries FILE --runs 3 ...
//	dbperf-runner install DEST
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/version"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return runner.ExitUsage
	}
	switch args[0] {
	case "exec":
		return cmdExec(args[1:], stdout, stderr)
	case "parse":
		return cmdParse(args[1:], stdin, stdout, stderr)
	case "show":
		return cmdShow(args[1:], stdin, stdout, stderr)
	case "query":
		return cmdQuery(args[1:], stdout, stderr)
	case "install":
		return cmdInstall(args[1:], stderr)
	case "version":
		fmt.Fprintln(stdout, version.Version)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n%s\n", args[0], usage)
		return runner.ExitUsage
	}
}

const usage = `usage:
  dbperf-runner exec --workload NAME [flags] -- TOOL [ARGS...]
  dbperf-runner parse --workload NAME [--input FILE] [--result-file [NAME=]FILE]... [--parser-config FILE] [--exit-code N] [--prepare] [--max-error-percent P]
  dbperf-runner show [--input LOG] [--all]
  dbperf-runner query --driver DRIVER --host H --port P --queries FILE [--runs N] [--prepare] ... (dbperf-runner query -h)
  dbperf-runner install DEST
  dbperf-runner version`

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdExec(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("workload", "", "workload whose parser reads the output: "+strings.Join(registry.Names(), ", "))
	summary := fs.String("summary-file", "/dev/termination-log", "where the compact summary goes")
	maxCPU := fs.Float64("max-cpu-percent", 90, "load-generator CPU use above which the result is invalid; 0 disables")
	maxErr := fs.Float64("max-error-percent", 0, "failed requests, in percent, above which the result is invalid")
	stallPct := fs.Float64("stall-percent", results.DefaultStallPercent, "throughput below this percent of the measurement's median (in the tool's progress series) is a stall, reported as a warning")
	maxStall := fs.Duration("max-stall", 0, "a stall longer than this makes the result invalid (0: stalls are only reported)")
	warmup := fs.Duration("warmup", 0, "the start of the progress series the stall, dip and drift checks leave out (after a ramp-up the tool reports); when set, the steady-state throughput over the rest is reported")
	dipPct := fs.Float64("dip-percent", results.DefaultDipPercent, "throughput below this percent of the measurement's median is a dip, reported as a warning")
	maxDip := fs.Duration("max-dip", 0, "a dip longer than this makes the result invalid (0: dips are only reported)")
	maxDrift := fs.Float64("max-drift-percent", 0, "a significant drift of the throughput over the steady window beyond this percent of its mean makes the result invalid (0: drift is only reported)")
	timeout := fs.Duration("timeout", 0, "stop the tool after this long (0: no limit)")
	afterFatal := fs.Duration("no-progress-timeout", runner.DefaultAfterFatal,
		"stop the tool when, after printing a fatal error its parser recognises, it makes no progress (output, result-file change) for this long; 0 disables")
	always := fs.Duration("hard-no-progress-timeout", 0,
		"stop the tool when it makes no progress for this long, fatal error or not; 0 disables (pgbench and HammerDB are silent for minutes while measuring)")
	killGrace := fs.Duration("kill-grace", runner.DefaultKillGrace, "time between SIGTERM and SIGKILL when the runner stops the tool")
	cgroup := fs.String("cgroup-root", "/sys/fs/cgroup", "cgroup mount of this container")
	prepare := fs.Bool("prepare", false, "a prepare step: judged by its exit code, not parsed")
	sample := fs.Duration("cpu-sample-interval", 5*time.Second, "how often CPU use is sampled for its peak")
	barrier := fs.String("start-barrier", "", "wait until this file holds a start time, then until that time (several load generators)")
	barrierTimeout := fs.Duration("barrier-timeout", 10*time.Minute, "how long to wait for the start signal")
	generators := fs.Int("generators", 1, "load generators of the measurement; this one's index is $JOB_COMPLETION_INDEX")
	var server serverFlags
	server.register(fs)
	var session sessionFlags
	session.register(fs)
	var resultFiles, redactEnv, apdex, declared listFlag
	fs.Var(&resultFiles, "result-file", "a file the tool writes its result to (repeatable)")
	fs.Var(&redactEnv, "redact-env", "an environment variable whose value must never be printed (repeatable)")
	sampleStream := fs.String("sample-stream", "", "a named pipe the runner makes at this path and reads while the tool writes its raw samples to it (the workload's sample parser builds per-operation histograms and time series)")
	resolution := fs.Duration("series-resolution", workloads.DefaultSeriesResolution, "resolution of the time series built from the sample stream (whole seconds; coarsened for long runs)")
	apdexWindow := fs.Duration("apdex-window", workloads.DefaultAPDEXWindow, "window of the APDEX counts recorded in the time series")
	fs.Var(&apdex, "apdex", "OPERATION=DURATION: record per window the APDEX of the operation for target DURATION (\"*\": every operation); repeatable")
	fs.Var(&declared, "declare-metric", "NAME,UNIT,DIRECTION: the unit and direction of a metric the tool cannot describe (repeatable)")
	parserConfig := fs.String("parser-config", "", "a file configuring the workload's parser (a custom tool's result format, primary metric and declarations)")
	if err := fs.Parse(args); err != nil {
		return runner.ExitUsage
	}
	samples := workloads.SampleOptions{Resolution: *resolution, APDEXWindow: *apdexWindow}
	for _, a := range apdex {
		op, d, err := runner.ParseAPDEXFlag(a)
		if err != nil {
			fmt.Fprintf(stderr, "dbperf-runner exec: %v\n", err)
			return runner.ExitUsage
		}
		if samples.APDEX == nil {
			samples.APDEX = map[string]time.Duration{}
		}
		samples.APDEX[op] = d
	}
	for _, m := range declared {
		d, err := runner.ParseMetricFlag(m)
		if err != nil {
			fmt.Fprintf(stderr, "dbperf-runner exec: %v\n", err)
			return runner.ExitUsage
		}
		samples.Metrics = append(samples.Metrics, d)
	}
	w, err := registry.ByName(*name)
	if err == nil && fs.NArg() == 0 {
		err = fmt.Errorf("no tool command after --")
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner exec: %v\n%s\n", err, usage)
		return runner.ExitUsage
	}
	var secrets []string
	for _, e := range redactEnv {
		secrets = append(secrets, os.Getenv(e))
	}
	stats, err := server.statistics()
	var check runner.SessionCheck
	if err == nil {
		check, err = session.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner exec: %v\n", err)
		return runner.ExitUsage
	}
	command := fs.Args()
	if *generators > 1 {
		index, err := strconv.Atoi(os.Getenv("JOB_COMPLETION_INDEX"))
		if err != nil || index < 0 || index >= *generators {
			fmt.Fprintf(stderr, "dbperf-runner exec: --generators %d needs JOB_COMPLETION_INDEX in [0, %d), got %q\n", *generators, *generators, os.Getenv("JOB_COMPLETION_INDEX"))
			return runner.ExitUsage
		}
		command = runner.ForGenerator(command, index, *generators)
		if index > 0 {
			stats, check = nil, nil // the first load generator polls the server and checks a session, once for all
		}
		fmt.Fprintf(stdout, "[dbperf-runner] load generator %d of %d\n", index+1, *generators)
	}
	failed := func(err error) int {
		r := results.New(*name)
		r.Fail("%v", err)
		if err := runner.Finish(r, *summary, stdout); err != nil {
			fmt.Fprintf(stderr, "dbperf-runner: %v\n", err)
		}
		return runner.ExitFailed
	}
	// Read before the barrier: a missing configuration fails at once.
	config, err := readParserConfig(*parserConfig)
	if err != nil {
		return failed(err)
	}
	if *barrier != "" {
		if err := runner.WaitForStart(context.Background(), *barrier, *barrierTimeout, stdout, nil); err != nil {
			return failed(err)
		}
	}
	r := runner.Exec(context.Background(), runner.Options{
		Parser: w, Prepare: *prepare, Command: command, ResultFiles: resultFiles, SecretValues: secrets,
		Thresholds: results.Thresholds{MaxLoadGeneratorCPUPercent: *maxCPU, MaxErrorPercent: *maxErr, StallPercent: *stallPct, MaxStall: *maxStall,
			Warmup: *warmup, DipPercent: *dipPct, MaxDip: *maxDip, MaxDriftPercent: *maxDrift},
		Timeout: *timeout, Watchdog: runner.Watchdog{AfterFatal: *afterFatal, Always: *always}, KillGrace: *killGrace,
		SummaryFile: *summary, CPU: runner.CPUReader{Root: *cgroup},
		SampleEvery: *sample, Stdout: stdout, ServerStatistics: stats,
		SampleStream: *sampleStream, Samples: samples, ParserConfig: config, SessionCheck: check,
	})
	if err := runner.Finish(r, *summary, stdout); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner: %v\n", err)
	}
	return runner.ExitCodeFor(r.Verdict)
}

func cmdParse(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("workload", "", "workload whose parser reads the output: "+strings.Join(registry.Names(), ", "))
	input := fs.String("input", "-", "the tool's output (text, or a JSON result document); - is stdin")
	exit := fs.String("exit-code", "", "the tool's exit code, when known")
	maxErr := fs.Float64("max-error-percent", -1, "judge failed requests as exec does (exec's default is 0); negative: do not judge")
	prepare := fs.Bool("prepare", false, "the output of a prepare step: judged as exec --prepare judges it")
	var resultFiles listFlag
	fs.Var(&resultFiles, "result-file", "[NAME=]PATH: a result file the tool wrote beside its output, found by the parser under NAME (default: PATH's base name, as exec hands files over) (repeatable)")
	parserConfig := fs.String("parser-config", "", "a file configuring the workload's parser, as exec takes it")
	if err := fs.Parse(args); err != nil {
		return runner.ExitUsage
	}
	w, err := registry.ByName(*name)
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	in := workloads.ParseInput{Files: map[string][]byte{}}
	if in.Config, err = readParserConfig(*parserConfig); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	data, err := readInput(*input, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	// A JSON document is a result file (memtier --json-out-file); text is output.
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		in.Files["input.json"] = data
	} else {
		in.Output = data
	}
	for _, f := range resultFiles {
		name, b, err := readResultFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
			return runner.ExitUsage
		}
		in.Files[name] = b
	}
	if *exit != "" {
		code, err := strconv.Atoi(*exit)
		if err != nil {
			fmt.Fprintf(stderr, "dbperf-runner parse: --exit-code: %v\n", err)
			return runner.ExitUsage
		}
		in.ExitCode = &code
	}
	r := runner.Judge(w, in, *prepare, 0)
	if *maxErr >= 0 && !*prepare {
		results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: *maxErr})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	return runner.ExitCodeFor(r.Verdict)
}

// readResultFile reads a --result-file argument, PATH or NAME=PATH (as
// kubectl's --from-file): parsers look result files up by the base name the
// tool gives them, which a saved copy may not have kept. An existing file
// whose name holds "=" is read as a PATH.
func readResultFile(arg string) (name string, data []byte, err error) {
	path := arg
	if n, p, ok := strings.Cut(arg, "="); ok && n != "" && !strings.Contains(n, "/") {
		if _, statErr := os.Stat(arg); statErr != nil {
			name, path = n, p
		}
	}
	if name == "" {
		name = filepath.Base(path)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("while reading the result file: %w", err)
	}
	return name, data, nil
}

// readParserConfig reads the --parser-config file; none is nil.
func readParserConfig(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("while reading the parser configuration: %w", err)
	}
	return data, nil
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

// cmdInstall copies this binary to DEST: the init container of a workload
// pod uses it to hand the runner to the tool's own image.
func cmdInstall(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "dbperf-runner install: want one destination\n%s\n", usage)
		return runner.ExitUsage
	}
	self, err := os.Executable()
	if err == nil {
		err = copyExecutable(self, args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner install: %v\n", err)
		return runner.ExitUsage
	}
	return 0
}

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
