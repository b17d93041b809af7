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
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
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
	case pod.CommandStress:
		return cmdStress(args[1:], stdout, stderr)
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
  dbperf-runner stress [--cpu-workers N] [--memory-bytes B] [--disk-workers N] [--dir DIR] --duration D (a noisy neighbour's stress pod)
  dbperf-runner install DEST
  dbperf-runner version`

func cmdExec(args []string, stdout, stderr io.Writer) int {
	c, err := pod.ParseExec(args, stderr)
	if err != nil {
		return runner.ExitUsage
	}
	w, err := registry.ByName(c.Workload)
	if err == nil && len(c.Command) == 0 {
		err = fmt.Errorf("no tool command after --")
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner exec: %v\n%s\n", err, usage)
		return runner.ExitUsage
	}
	var secrets []string
	for _, e := range c.RedactEnv {
		secrets = append(secrets, os.Getenv(e))
	}
	stats, err := statistics(c.Statistics)
	var check runner.SessionCheck
	if err == nil {
		check, err = sessionCheck(c.Session)
	}
	var hostStats *runner.HostStatistics
	if err == nil {
		hostStats, err = hosts(c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner exec: %v\n", err)
		return runner.ExitUsage
	}
	command := c.Command
	if c.Generators > 1 {
		index, err := strconv.Atoi(os.Getenv(pod.EnvCompletionIndex))
		if err != nil || index < 0 || index >= c.Generators {
			fmt.Fprintf(stderr, "dbperf-runner exec: %d load generators need %s in [0, %d), got %q\n", c.Generators, pod.EnvCompletionIndex, c.Generators, os.Getenv(pod.EnvCompletionIndex))
			return runner.ExitUsage
		}
		command = runner.ForGenerator(command, index, c.Generators)
		if index > 0 {
			stats, check, hostStats = nil, nil, nil // the first load generator polls the server and the hosts and checks a session, once for all
			c.Disturbances = nil                    // and runs the disturbances' SQL loads and ledgers
		}
		fmt.Fprintf(stdout, "[dbperf-runner] load generator %d of %d\n", index+1, c.Generators)
	} else {
		// One generator: its share of an offered rate is the whole.
		command = runner.ForGenerator(command, 0, 1)
	}
	failed := func(err error) int {
		r := results.New(c.Workload)
		r.Fail("%v", err)
		if err := runner.Finish(r, c.Runner.SummaryFile, stdout); err != nil {
			fmt.Fprintf(stderr, "dbperf-runner: %v\n", err)
		}
		return runner.ExitFailed
	}
	// Read before the barrier: a missing configuration fails at once.
	config, err := readParserConfig(c.ParserConfig)
	if err != nil {
		return failed(err)
	}
	// The canary before the barrier: the instant the generators start at
	// is set seconds ahead, and a canary that made one start late would
	// be said so (Options.Origin).
	var canary []results.Metric
	var canaryErr error
	if c.Canary > 0 && !c.Prepare {
		dir := c.CanaryDir
		if dir == "" {
			dir = pod.TmpDir
		}
		canary, canaryErr = runner.Canary(context.Background(), dir, c.Canary)
		fmt.Fprintf(stdout, "[dbperf-runner] canary of this node: %s\n", runner.CanaryText(canary, canaryErr))
	}
	var origin time.Time
	if c.StartBarrier != "" {
		at, err := runner.WaitForStart(context.Background(), c.StartBarrier, c.Runner.BarrierTimeout, stdout, nil)
		if err != nil {
			return failed(err)
		}
		origin = at
	}
	opts := execOptions(c, w, command, secrets, config, stats, check, stdout)
	opts.Origin = origin
	opts.Hosts = hostStats
	opts.Canary, opts.CanaryError = canary, canaryErr
	r := runner.Exec(context.Background(), opts)
	if err := runner.Finish(r, c.Runner.SummaryFile, stdout); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner: %v\n", err)
	}
	return runner.ExitCodeFor(r.Verdict)
}

// execOptions are what exec's command line asks of the runner.
func execOptions(c pod.ExecCommand, w workloads.Parser, command, secrets []string, config []byte,
	stats *runner.ServerStatistics, check runner.SessionCheck, stdout io.Writer) runner.Options {
	samples := workloads.SampleOptions{Resolution: c.Runner.SeriesResolution, APDEXWindow: c.Runner.APDEXWindow, Metrics: c.DeclaredMetrics, Stages: c.Stages}
	for _, a := range c.APDEX {
		if samples.APDEX == nil {
			samples.APDEX = map[string]time.Duration{}
		}
		samples.APDEX[a.Operation] = a.Target
	}
	s := c.Stability
	if stats != nil && stats.Diagnostics != nil {
		// The steady window: after the warm-up, before a disturbance.
		stats.Diagnostics.StartAfter, stats.Diagnostics.EndAfter = s.Warmup, c.SteadyUntil
	}
	return runner.Options{
		Parser: w, Prepare: c.Prepare, Command: command, ResultFiles: c.ResultFiles, SecretValues: secrets,
		Thresholds: results.Thresholds{MaxLoadGeneratorCPUPercent: *c.MaxLoadGeneratorCPUPercent, MaxErrorPercent: *c.MaxErrorPercent,
			StallPercent: s.StallPercent, MaxStall: s.MaxStall, Warmup: s.Warmup, DipPercent: s.DipPercent, MaxDip: s.MaxDip, MaxDriftPercent: s.MaxDriftPercent,
			SteadyUntil: c.SteadyUntil},
		Timeout: c.Timeout, Watchdog: runner.Watchdog{AfterFatal: c.Runner.NoProgressTimeout, Always: c.Runner.HardNoProgressTimeout}, KillGrace: c.Runner.KillGrace,
		SummaryFile: c.Runner.SummaryFile, CPU: runner.CPUReader{Root: c.Runner.CgroupRoot},
		SampleEvery: c.Runner.CPUSampleInterval, Stdout: stdout, ServerStatistics: stats,
		SampleStream: c.SampleStream, Samples: samples, ParserConfig: config, SessionCheck: check,
		SamplesFromStreamOnly: c.Runner.SampleAggregation == pod.SampleAggregationStream, Disturbances: c.Disturbances,
		RestartAfter: c.RestartAfter,
	}
}

func cmdParse(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := pod.ParseParse(args, stderr)
	if err != nil {
		return runner.ExitUsage
	}
	w, err := registry.ByName(c.Workload)
	if err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	in := workloads.ParseInput{Files: map[string][]byte{}}
	if in.Config, err = readParserConfig(c.ParserConfig); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	data, err := readInput(c.Input, stdin)
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
	for _, f := range c.ResultFiles {
		name, b, err := readResultFile(f)
		if err != nil {
			fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
			return runner.ExitUsage
		}
		in.Files[name] = b
	}
	if c.ExitCode != "" {
		code, err := strconv.Atoi(c.ExitCode)
		if err != nil {
			fmt.Fprintf(stderr, "dbperf-runner parse: the exit code: %v\n", err)
			return runner.ExitUsage
		}
		in.ExitCode = &code
	}
	r := runner.Judge(w, in, c.Prepare, 0)
	if c.MaxErrorPercent >= 0 && !c.Prepare {
		results.ApplyThresholds(r, results.Thresholds{MaxErrorPercent: c.MaxErrorPercent})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		fmt.Fprintf(stderr, "dbperf-runner parse: %v\n", err)
		return runner.ExitUsage
	}
	return runner.ExitCodeFor(r.Verdict)
}

// readResultFile reads a result file's argument, PATH or NAME=PATH (as
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

// readParserConfig reads the parser's configuration file; none is nil.
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
