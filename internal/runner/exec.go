package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Exit codes of `dbperf-runner exec` and `parse`. A Job fails on any of the
// non-zero ones; the operator reads the verdict from the termination message.
const (
	ExitValid   = 0
	ExitInvalid = 2 // the tool ran; its numbers are not to be trusted
	ExitFailed  = 3 // the tool failed or printed no usable result
	ExitUsage   = 4 // the runner itself could not do its work
)

// ExitCodeFor maps a verdict to the runner's exit code.
func ExitCodeFor(v results.Verdict) int {
	switch v {
	case results.Succeeded:
		return ExitValid
	case results.Invalid:
		return ExitInvalid
	default:
		return ExitFailed
	}
}

// Options configure one exec.
type Options struct {
	Parser workloads.Parser
	// Prepare runs a prepare step (schema build, data load): its output is
	// not a measurement, so only its exit code and duration count.
	Prepare     bool
	Command     []string
	ResultFiles []string
	// SecretValues are redacted from everything printed.
	SecretValues []string
	Thresholds   results.Thresholds
	// Timeout kills the tool after this long; zero means no limit.
	Timeout time.Duration
	// Watchdog stops a tool that has stopped making progress.
	Watchdog Watchdog
	// KillGrace is the time between SIGTERM and SIGKILL when the tool is
	// stopped; zero means pod.DefaultKillGrace.
	KillGrace time.Duration
	// SummaryFile receives the compact summary (the termination message).
	SummaryFile string
	CPU         CPUReader
	// SampleEvery is how often CPU is sampled for the peak figure.
	SampleEvery time.Duration
	Stdout      io.Writer
	// MaxOutputBytes bounds the copy of the output kept for parsing.
	MaxOutputBytes int
	// ServerStatistics, when set, polls the target's own statistics over
	// the tool's run.
	ServerStatistics *ServerStatistics
	// Hosts, when set, are read from their node_exporter over the
	// measurement.
	Hosts *HostStatistics
	// SampleStream is the path of the tool's raw sample stream
	// (Invocation.SampleStream), read while the tool runs by the parser's
	// sample sink when it has one; Samples configure the sink.
	SampleStream string
	Samples      workloads.SampleOptions
	// SamplesFromStreamOnly keeps the stream even when the tool could
	// aggregate its samples itself (workloads.ToolAggregator).
	SamplesFromStreamOnly bool
	// ParserConfig is handed to the parser as ParseInput.Config (the
	// invocation's ParserConfig file, which `exec --parser-config` reads).
	ParserConfig []byte
	// SessionCheck, when set, checks a session of the workload's user
	// after the tool ran.
	SessionCheck SessionCheck
	// Disturbances are the SQL loads the runner runs and the member losses
	// whose writes its ledger checks, at offsets from the tool's start.
	Disturbances []pod.RunnerDisturbance
	// RestartAfter is the first member loss's offset (pod.ExecConfig):
	// see keepRunning.
	RestartAfter time.Duration
	// Canary are the figures of the node's canary (runner.Canary), made
	// before the tool started, and CanaryError what it could not measure.
	Canary      []results.Metric
	CanaryError error
	// Origin is the start barrier's instant (zero without one): the clock
	// the operator's disturbances act on. A generator that read the barrier
	// late started its tool after it.
	Origin time.Time
}

// Exec runs the tool and returns the result it produced. It never returns
// nil: anything that goes wrong becomes a Failed result with the reason.
func Exec(ctx context.Context, o Options) *results.Result {
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = 256 << 20
	}
	red := NewRedactor(o.SecretValues...)
	out := &lineWriter{out: o.Stdout, red: red, limit: o.MaxOutputBytes}
	inTool := o.aggregateInTool()
	if inTool != nil {
		o.Command = inTool.command
	}
	fmt.Fprintf(o.Stdout, "[dbperf-runner] running: %s\n", red.String(strings.Join(o.Command, " ")))
	if inTool != nil {
		fmt.Fprintf(o.Stdout, "[dbperf-runner] the tool aggregates its samples itself (into %s), not through the sample stream\n", inTool.file)
	}

	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.Timeout, fmt.Errorf("the %s timeout passed", o.Timeout))
		defer cancel()
	}
	// The output directory the tool is told about exists even when no
	// result file is named in it (a custom tool printing to stdout).
	if d := os.Getenv(pod.EnvOutputDir); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			r := results.New(o.Command[0])
			r.Fail("the runner could not make the output directory %s: %v", d, err)
			return r
		}
	}
	if err := prepareResultFiles(o.ResultFiles); err != nil {
		r := results.New(o.Command[0])
		r.Fail("the runner could not prepare the result files: %v", err)
		return r
	}
	samples, sink, err := o.startSamples(inTool != nil)
	if err != nil {
		r := results.New(o.Command[0])
		r.Fail("the runner could not prepare the sample stream: %v", err)
		return r
	}
	sup := o.supervisor(out)

	server := o.ServerStatistics.start(ctx, o.Stdout, red)
	hosts := o.Hosts.start(ctx, o.Stdout)
	cpu0, source, cpuOK := o.CPU.Usage()
	start := time.Now()
	if s, ok := sink.(workloads.StartedSink); ok {
		s.Started(start)
	}
	if inTool != nil {
		env, err := inTool.agg.AggregateEnv(o.Samples, start)
		if err != nil {
			r := results.New(o.Command[0])
			r.Fail("the runner could not tell the tool how to aggregate its samples: %v", err)
			return r
		}
		sup.cmd.Env = append(os.Environ(), env...)
	}
	sampler := startSampler(o.CPU, o.SampleEvery)
	disturbing := startDisturbances(ctx, o.Disturbances, start, o.Stdout, red)
	stopped, runErr := sup.run(ctx)
	restarts, stopped, runErr := o.keepRunning(ctx, out, start, stopped, runErr)
	end := time.Now()
	// Read at once, over the same interval as the wall time: what the
	// runner does after the tool ended (the sample stream's end, the
	// sampler's) is not the tool's load, and counted against a wall time
	// that leaves it out it overstated the share (a saturated machine
	// read above 100 %).
	cpu1, _, _ := o.CPU.Usage()
	var streamWarnings []string
	if samples != nil {
		streamWarnings = samples.finish()
	}
	if inTool != nil {
		sink, streamWarnings = inTool.load(o.Samples)
	}
	peak := sampler.stop()
	_ = out.Flush()

	exitCode := exitCodeOf(runErr)
	in := workloads.ParseInput{Output: out.copy.Bytes(), Files: readFiles(o.ResultFiles), ExitCode: &exitCode, Config: o.ParserConfig}
	r := Judge(o.Parser, in, o.Prepare, end.Sub(start))
	r.StartTime, r.EndTime = &start, &end
	r.Restarts = restarts
	if sink != nil {
		sink.Finish(r)
	}
	r.Warnings = append(r.Warnings, streamWarnings...)
	if server != nil {
		server.finish(r, o.ServerStatistics.timeout(), red)
	}
	o.Hosts.finish(hosts, r, hostTimeout, red)
	disturbing.finish(r)
	for _, m := range o.Canary {
		r.Add(m)
	}
	if o.CanaryError != nil {
		r.Warnings = append(r.Warnings, o.CanaryError.Error()) // it names the canary's part
	}
	switch {
	case stopped != "":
		r.Fail("the tool was stopped by dbperf-runner: %s", stopped)
	case ctx.Err() == context.DeadlineExceeded:
		r.Fail("the tool was stopped after the %s timeout", o.Timeout)
	case runErr != nil && exitCode < 0:
		r.Fail("the tool could not be run: %s", red.String(runErr.Error()))
	}
	o.checkSession(ctx, r)
	if out.dropped > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d bytes of output beyond %d were not parsed", out.dropped, o.MaxOutputBytes))
	}
	if cpuOK {
		avail := o.CPU.AvailableCPUs()
		wall := end.Sub(start).Seconds()
		used := (cpu1 - cpu0).Seconds()
		r.LoadGenerator = &results.LoadGenerator{CPUSeconds: used, AvailableCPUs: avail, Source: source, RunnerCPUSeconds: ownCPU(), WallSeconds: wall}
		if wall > 0 && avail > 0 {
			r.LoadGenerator.CPUPercent = 100 * used / (wall * avail)
		}
		if peak > 0 {
			r.Add(results.Metric{Name: "loadGeneratorCPUPeakPercent", Value: peak, Unit: "%", Direction: results.Neutral, Detail: true})
		}
	}
	if !o.Prepare {
		results.ApplyThresholds(r, o.Thresholds)
	}
	sayLastWords(r, out.end(), red)
	redactResult(r, red)
	return r
}

// startSamples starts reading the sample stream when the tool writes one,
// its parser reads it and the tool does not aggregate its samples itself.
func (o Options) startSamples(inTool bool) (*sampleStream, workloads.SampleSink, error) {
	sp, ok := o.Parser.(workloads.SampleParser)
	if o.SampleStream == "" || o.Prepare || !ok || inTool {
		return nil, nil, nil
	}
	sink := sp.NewSampleSink(o.Samples)
	s, err := startSampleStream(o.SampleStream, sink)
	if err != nil {
		return nil, nil, err
	}
	return s, sink, nil
}

// Finish writes the compact summary and prints the full result block.
func Finish(r *results.Result, summaryFile string, stdout io.Writer) error {
	var errs []error
	if summaryFile != "" {
		compact, err := results.EncodeCompact(r, results.MaxCompactBytes)
		if err == nil {
			err = os.WriteFile(summaryFile, compact, 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("while writing the summary to %s: %w", summaryFile, err))
		}
	}
	block, err := results.EncodeBlock(r)
	if err != nil {
		errs = append(errs, err)
	} else {
		fmt.Fprintf(stdout, "[dbperf-runner] verdict %s%s\n", r.Verdict, reasonSuffix(r))
		_, _ = stdout.Write(block)
	}
	return errors.Join(errs...)
}

func reasonSuffix(r *results.Result) string {
	if len(r.Reasons) == 0 {
		return ""
	}
	return ": " + strings.Join(r.Reasons, "; ")
}

// redactResult redacts every text of a result that a tool may have
// written (a custom tool writes its own names, operations and versions),
// not only reasons and parameter values.
func redactResult(r *results.Result, red *Redactor) {
	for i := range r.Reasons {
		r.Reasons[i] = red.String(r.Reasons[i])
	}
	for i := range r.Warnings {
		r.Warnings[i] = red.String(r.Warnings[i])
	}
	for i := range r.OutputTail {
		r.OutputTail[i] = red.String(r.OutputTail[i])
	}
	r.Tool, r.ToolVersion = red.String(r.Tool), red.String(r.ToolVersion)
	r.Primary.Name, r.Primary.Operation = red.String(r.Primary.Name), red.String(r.Primary.Operation)
	if len(r.Parameters) > 0 {
		params := make(map[string]string, len(r.Parameters))
		for k, v := range r.Parameters {
			params[red.String(k)] = red.String(v)
		}
		r.Parameters = params
	}
	for i := range r.Metrics {
		m := &r.Metrics[i]
		m.Name, m.Operation, m.Unit = red.String(m.Name), red.String(m.Operation), red.String(m.Unit)
	}
	for i := range r.TimeSeries {
		renamed := make(map[string]float64, len(r.TimeSeries[i].Values))
		for k, v := range r.TimeSeries[i].Values {
			renamed[red.String(k)] = v
		}
		r.TimeSeries[i].Values = renamed
	}
	if len(r.Histograms) > 0 {
		hists := make(map[string]string, len(r.Histograms))
		for k, v := range r.Histograms {
			hists[red.String(k)] = v
		}
		r.Histograms = hists
	}
}

// supervisor prepares the tool's command: its output goes to out and, when
// a watchdog is set, to the watchdog too (one writer, so stdout and stderr
// stay interleaved as written).
func (o Options) supervisor(out *lineWriter) *supervisor {
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	s := &supervisor{cmd: cmd, grace: o.KillGrace, poll: o.Watchdog.pollEvery(), note: out.note}
	if s.grace <= 0 {
		s.grace = pod.DefaultKillGrace
	}
	var w io.Writer = out
	if o.Watchdog.enabled() {
		s.dog = newProgress(o.Watchdog, o.Parser, o.ResultFiles, time.Now)
		w = io.MultiWriter(out, s.dog)
	}
	cmd.Stdout, cmd.Stderr = w, w
	return s
}

// ownCPU is the CPU time this process (not its children) has used.
func ownCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// exitCodeOf returns the tool's exit code, 128+signal when it was killed, or
// -1 when it never ran.
func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	// The tool exited 0, but something it started kept the output open
	// until the runner gave up waiting and killed its process group.
	if errors.Is(err, exec.ErrWaitDelay) {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// prepareResultFiles makes the directories the tool writes its result files
// into, and removes stale files so an old result is never read as new.
func prepareResultFiles(paths []string) error {
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

func readFiles(paths []string) map[string][]byte {
	files := map[string][]byte{}
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			files[filepath.Base(p)] = data
		}
	}
	return files
}

// sampler records the highest CPU use over any sampling interval.
type sampler struct {
	stopCh chan struct{}
	wg     sync.WaitGroup
	peak   float64
}

func startSampler(c CPUReader, every time.Duration) *sampler {
	s := &sampler{stopCh: make(chan struct{})}
	if every <= 0 {
		return s
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		avail := c.AvailableCPUs()
		prev, _, ok := c.Usage()
		if !ok || avail <= 0 {
			return
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stopCh:
				return
			case <-t.C:
				now, _, _ := c.Usage()
				if pct := 100 * (now - prev).Seconds() / (every.Seconds() * avail); pct > s.peak {
					s.peak = pct
				}
				prev = now
			}
		}
	}()
	return s
}

func (s *sampler) stop() float64 {
	close(s.stopCh)
	s.wg.Wait()
	return s.peak
}
