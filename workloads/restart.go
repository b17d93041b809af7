package workloads

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Restartable is a parser whose tool the runner starts again, for the rest
// of its time, when the tool ended early after a member of the target was
// lost (a failover, a switchover): pgbench ends a client on a lost
// connection and never reconnects, so without this a primary's loss ends
// the measurement. The output the parser then reads holds every run of
// the tool, each after a RestartLine giving its start from the first's.
type Restartable interface {
	// RestartCommand is the tool's command for what is left of its time
	// after elapsed since the first run started; false when too little
	// is left or the command has no time to shorten.
	RestartCommand(cmd []string, elapsed time.Duration) ([]string, bool)
}

// RestartPrefix begins the line the runner writes into the tool's output
// before each run after the first.
const RestartPrefix = "[dbperf-runner] tool restarted at +"

var reRestart = regexp.MustCompile(`^\[dbperf-runner\] tool restarted at \+([0-9.]+) s \(run ([0-9]+)\): the previous run ended at \+([0-9.]+) s`)

// RestartLine is the line before the n-th run (n ≥ 2) of the tool, started
// at from the first run's start, the run before it having ended at ended.
func RestartLine(at, ended time.Duration, n int) string {
	return fmt.Sprintf("%s%.3f s (run %d): the previous run ended at +%.3f s, before its time, after a member of the target was lost\n",
		RestartPrefix, at.Seconds(), n, ended.Seconds())
}

// TimeOverPrefix begins the line the runner writes when a restarted tool
// ended early once more and too little of its time was left to start it
// again: the target had not come back within the measurement, which is
// what the disturbance's card says, not a failure of the tool.
const TimeOverPrefix = "[dbperf-runner] tool not started again at +"

// TimeOverLine is that line, at from the first run's start.
func TimeOverLine(at time.Duration) string {
	return fmt.Sprintf("%s%.3f s: too little of its time is left\n", TimeOverPrefix, at.Seconds())
}

// Run is one run of a restarted tool: its output, when it started and
// when the run before it ended, in seconds from the first run's start.
// TimeOver: after it the runner had no time left to start another.
type Run struct {
	StartSeconds, PreviousEndedSeconds float64
	Output                             []byte
	TimeOver                           bool
}

// SplitRuns cuts a restarted tool's output at its RestartLines. An output
// without one is a single run from 0.
func SplitRuns(out []byte) []Run {
	runs := []Run{{}}
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if m := reRestart.FindSubmatch(bytes.TrimSpace(line)); m != nil {
			runs[len(runs)-1].Output = bytes.Clone(cur.Bytes())
			cur.Reset()
			at, _ := strconv.ParseFloat(string(m[1]), 64)
			ended, _ := strconv.ParseFloat(string(m[3]), 64)
			runs = append(runs, Run{StartSeconds: at, PreviousEndedSeconds: ended})
			continue
		}
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte(TimeOverPrefix)) {
			runs[len(runs)-1].TimeOver = true
			continue
		}
		cur.Write(line)
	}
	runs[len(runs)-1].Output = cur.Bytes()
	return runs
}
