package pod

import (
	"fmt"
	"io"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// ExecCommand is `dbperf-runner exec [flags] -- TOOL ARGS...`: the
// container command of every workload pod. The runner runs the tool,
// parses its output with the workload's parser and judges the result.
type ExecCommand struct {
	// StartBarrier and Generators: a measurement of several load
	// generators starts when StartBarrier holds the start time; this one's
	// index is EnvCompletionIndex.
	StartBarrier string
	Generators   int
	// Workload names the parser of the tool's output.
	Workload string
	// MaxLoadGeneratorCPUPercent and MaxErrorPercent are the thresholds
	// the operator always writes (0 disables the first).
	MaxLoadGeneratorCPUPercent, MaxErrorPercent *float64
	// Stability judges the throughput over the measurement.
	Stability Stability
	// Prepare: a prepare step, judged by its exit code, not parsed.
	Prepare      bool
	ResultFiles  []string
	ParserConfig string
	// SampleStream, DeclaredMetrics and APDEX: Invocation.SampleStream,
	// Invocation.Metrics and the run's APDEX targets.
	SampleStream    string
	DeclaredMetrics []MetricDeclaration
	APDEX           []APDEXTarget
	// Stages are Invocation.Stages.
	Stages []Stage
	// RedactEnv names the variables whose values are never printed.
	RedactEnv  []string
	Statistics Statistics
	// Hosts are read from their node_exporter every HostPollInterval while
	// the tool runs.
	Hosts            []HostEndpoint
	HostPollInterval time.Duration
	// Disturbances are what the runner does or accompanies while the tool
	// runs (the first load generator's only); SteadyUntil ends the steady
	// window the stability checks and the error limit judge (0: the whole
	// measurement). RestartAfter, when set, is the first member loss's
	// offset: a tool that ends early after it is started again for the rest
	// of its time when its parser is workloads.Restartable.
	Disturbances []RunnerDisturbance
	SteadyUntil  time.Duration
	RestartAfter time.Duration
	Session      SessionCheck
	// Canary, when set, measures the node for about this long before the
	// tool starts (runner.Canary), in CanaryDir (the pod's scratch
	// directory when empty).
	Canary    time.Duration
	CanaryDir string
	// Timeout stops the tool (0: no limit).
	Timeout time.Duration
	Runner  RunnerSettings
	// Command is the tool's command line, after `--`.
	Command []string
}

// Stability are the checks of the throughput inside a measurement; zero
// fields leave the runner's defaults.
type Stability struct {
	Warmup          time.Duration
	StallPercent    float64
	MaxStall        time.Duration
	DipPercent      float64
	MaxDip          time.Duration
	MaxDriftPercent float64
}

// RunnerSettings are the flags the operator leaves at their defaults:
// where the container keeps its files and how the runner watches the tool.
// A stand-in kubelet (test/executor) sets the first two.
type RunnerSettings struct {
	SummaryFile, CgroupRoot                             string
	NoProgressTimeout, HardNoProgressTimeout, KillGrace time.Duration
	CPUSampleInterval, BarrierTimeout                   time.Duration
	SeriesResolution, APDEXWindow                       time.Duration
	// SampleAggregation is SampleAggregationAuto or SampleAggregationStream.
	SampleAggregation string
}

// Where a tool's samples are aggregated (RunnerSettings.SampleAggregation):
// auto, in the tool when its build can (workloads.ToolAggregator), else
// from its sample stream; stream, always from the stream.
const (
	SampleAggregationAuto   = "auto"
	SampleAggregationStream = "stream"
)

// APDEXTarget records, per window, the APDEX of an operation (results.
// AllOperations: every one) for a target time.
type APDEXTarget struct {
	Operation string
	Target    time.Duration
}

func (c *ExecCommand) bind(t *flagTable) {
	t.str(&c.StartBarrier, flagStartBarrier, "", "wait until this file holds a start time, then until that time (several load generators)")
	t.integer(&c.Generators, flagGenerators, DefaultGenerators, "load generators of the measurement; this one's index is $"+EnvCompletionIndex)
	t.str(&c.Workload, flagWorkload, "", "the workload whose parser reads the output")
	t.setFloat(&c.MaxLoadGeneratorCPUPercent, flagMaxCPUPercent, DefaultMaxLoadGeneratorCPUPercent, "load-generator CPU use above which the result is invalid; 0 disables")
	t.setFloat(&c.MaxErrorPercent, flagMaxErrorPercent, 0, "failed requests, in percent, above which the result is invalid")
	c.Stability.bind(t)
	t.boolean(&c.Prepare, flagPrepare, "a prepare step: judged by its exit code, not parsed")
	t.list(&c.ResultFiles, flagResultFile, "a file the tool writes its result to (repeatable)")
	t.str(&c.ParserConfig, flagParserConfig, "", "a file configuring the workload's parser (a result format, primary metric and declarations of the user's own tool)")
	t.str(&c.SampleStream, flagSampleStream, "", "a named pipe the runner makes at this path and reads while the tool writes its raw samples to it (the workload's sample parser builds per-operation histograms and time series)")
	listOf(t, &c.DeclaredMetrics, flagDeclareMetric, formatMetric, parseMetric, "NAME,UNIT,DIRECTION: the unit and direction of a metric the tool cannot describe (repeatable)")
	listOf(t, &c.APDEX, flagAPDEX, formatAPDEX, parseAPDEX, "OPERATION=DURATION: record per window the APDEX of the operation for target DURATION (\""+results.AllOperations+"\": every operation); repeatable")
	listOf(t, &c.Stages, flagStage, formatStage, parseStage, "NAME=END: a stage of the measurement the tool ramps through by itself, ending END after its start (in order; repeatable): the sample parser reports each")
	t.list(&c.RedactEnv, flagRedactEnv, "an environment variable whose value must never be printed (repeatable)")
	c.Statistics.bind(t)
	listOf(t, &c.Hosts, flagHostExporter, formatHost, parseHost, "a host to read from its node_exporter while the tool runs: a JSON object {name, role, url, index, target, insecureSkipVerify}; its credentials come from $"+HostEnv(0, "…")+" (repeatable)")
	t.duration(&c.HostPollInterval, flagHostPollInterval, DefaultHostPollInterval, "time between scrapes of the hosts' node_exporters")
	listOf(t, &c.Disturbances, flagDisturbance, formatDisturbance, parseDisturbance, "a disturbance the runner acts on or accompanies while the tool runs: a JSON object {name, kind, offset, duration, sessions, statements, once, administrator, ledger}; a SQL load's administrator comes from $"+EnvDisturbUsername+" and $"+EnvDisturbPassword+" (repeatable)")
	t.duration(&c.SteadyUntil, flagSteadyUntil, 0, "the end of the steady window, from the tool's start: the stability checks and the error limit judge the measurement before it (0: all of it)")
	t.duration(&c.RestartAfter, flagRestartAfter, 0, "a tool that ends early after this offset from its start (a member of the target lost) is started again for the rest of its time, when it can be (0: never)")
	c.Session.bind(t)
	t.duration(&c.Canary, flagCanary, 0, "before the tool starts, measure this node's CPU and disk for about this long with fixed work (its figures are metrics of the source \""+results.SourceCanary+"\"; 0: none)")
	t.str(&c.CanaryDir, flagCanaryDir, "", "where the canary writes its file (empty: "+TmpDir+")")
	t.duration(&c.Timeout, flagTimeout, 0, "stop the tool after this long (0: no limit)")
	c.Runner.bind(t)
}

func (s *Stability) bind(t *flagTable) {
	t.duration(&s.Warmup, flagWarmup, 0, "the start of the progress series the stall, dip and drift checks leave out (after a ramp-up the tool reports); when set, the steady-state throughput over the rest is reported")
	t.float(&s.StallPercent, flagStallPercent, results.DefaultStallPercent, "throughput below this percent of the measurement's median (in the tool's progress series) is a stall, reported as a warning")
	t.duration(&s.MaxStall, flagMaxStall, 0, "a stall longer than this makes the result invalid (0: stalls are only reported)")
	t.float(&s.DipPercent, flagDipPercent, results.DefaultDipPercent, "throughput below this percent of the measurement's median is a dip, reported as a warning")
	t.duration(&s.MaxDip, flagMaxDip, 0, "a dip longer than this makes the result invalid (0: dips are only reported)")
	t.float(&s.MaxDriftPercent, flagMaxDriftPercent, 0, "a significant drift of the throughput over the steady window beyond this percent of its mean makes the result invalid (0: drift is only reported)")
}

func (h *RunnerSettings) bind(t *flagTable) {
	t.str(&h.SummaryFile, flagSummaryFile, TerminationLog, "where the compact summary goes")
	t.duration(&h.NoProgressTimeout, flagNoProgressTimeout, DefaultNoProgressTimeout,
		"stop the tool when, after printing a fatal error its parser recognises, it makes no progress (output, result-file change) for this long; 0 disables")
	t.duration(&h.HardNoProgressTimeout, flagHardNoProgressTimeout, 0,
		"stop the tool when it makes no progress for this long, fatal error or not; 0 disables (some tools are silent for minutes while measuring)")
	t.duration(&h.KillGrace, flagKillGrace, DefaultKillGrace, "time between SIGTERM and SIGKILL when the runner stops the tool")
	t.str(&h.CgroupRoot, flagCgroupRoot, CgroupRoot, "cgroup mount of this container")
	t.duration(&h.CPUSampleInterval, flagCPUSampleInterval, DefaultCPUSampleInterval, "how often CPU use is sampled for its peak")
	t.duration(&h.BarrierTimeout, flagBarrierTimeout, DefaultBarrierTimeout, "how long to wait for the start signal")
	t.duration(&h.SeriesResolution, flagSeriesResolution, DefaultSeriesResolution, "resolution of the time series built from the sample stream (whole seconds; coarsened for long runs)")
	t.duration(&h.APDEXWindow, flagAPDEXWindow, DefaultAPDEXWindow, "window of the APDEX counts recorded in the time series")
	t.str(&h.SampleAggregation, flagSampleAggregation, SampleAggregationAuto, "where the tool's raw samples are aggregated: "+SampleAggregationAuto+
		" (in the tool when its build can, as the tool images dbperf-operator builds can: far cheaper for the tool near its limit; else from the sample stream) or "+SampleAggregationStream)
}

// Args is the container's arguments after RunnerPath.
func (c ExecCommand) Args() []string {
	return append(append(append([]string{CommandExec}, c.Flags()...), "--"), c.Command...)
}

// Flags are the command's flags alone.
func (c ExecCommand) Flags() []string {
	var t flagTable
	c.bind(&t)
	return t.render()
}

// ParseExec reads exec's arguments (after "exec"): the flags, then the
// tool's command after `--`. Flags left out take the runner's defaults.
func ParseExec(args []string, output io.Writer) (ExecCommand, error) {
	var c ExecCommand
	t := flagTable{parsing: true}
	c.bind(&t)
	rest, err := t.parse(CommandExec, args, output)
	c.Command = rest
	if a := c.Runner.SampleAggregation; err == nil && a != SampleAggregationAuto && a != SampleAggregationStream {
		err = fmt.Errorf("--%s is %q: want %s or %s", flagSampleAggregation, a, SampleAggregationAuto, SampleAggregationStream)
		fmt.Fprintln(output, err)
	}
	return c, err
}

// The runner's commands.
const (
	CommandExec  = "exec"
	CommandQuery = "query"
	CommandParse = "parse"
	CommandShow  = "show"
)
