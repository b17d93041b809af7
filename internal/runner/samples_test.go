package runner

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// lineParser is a tool whose sample sink only counts lines.
type lineParser struct{ sink *lineSink }

func (lineParser) Parse(workloads.ParseInput) *results.Result {
	r := results.New("sh")
	r.Add(results.Metric{Name: "opsPerSecond", Value: 1, Unit: "ops/s", Direction: results.HigherIsBetter})
	return r
}

func (p lineParser) NewSampleSink(workloads.SampleOptions) workloads.SampleSink { return p.sink }

type lineSink struct {
	lines   int
	longest int
	last    string
}

func (s *lineSink) Line(b []byte) {
	s.lines++
	s.longest = max(s.longest, len(b))
	s.last = string(b)
}

func (s *lineSink) Finish(*results.Result) {}

// shortDrain shortens the times the runner waits for a sample stream.
func shortDrain(t *testing.T, quiet, drainMax time.Duration) {
	q, m := sampleQuiet, sampleDrainMax
	sampleQuiet, sampleDrainMax = quiet, drainMax
	t.Cleanup(func() { sampleQuiet, sampleDrainMax = q, m })
}

// killLater kills, at the end of the test, the process whose id a script
// wrote to pidFile (one that escaped the tool's process group).
func killLater(t *testing.T, pidFile string) {
	t.Cleanup(func() {
		raw, err := os.ReadFile(pidFile)
		if err != nil {
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func TestSampleStream(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid is needed to escape the tool's process group")
	}
	shortDrain(t, 300*time.Millisecond, 1500*time.Millisecond)
	cases := map[string]struct {
		// script runs with $FIFO the sample stream and $PIDFILE where an
		// escaped process writes its id.
		script  string
		lines   int
		longest int
		last    string
		warning string // a part of the only warning; "": none
		atMost  time.Duration
		atLeast time.Duration
		endless bool // lines keep coming: how many is unknown
	}{
		"the tool never opens the pipe": {
			script: `exit 0`, atMost: 250 * time.Millisecond,
		},
		"many lines": {
			script: `seq 1 200000 > "$FIFO"`, lines: 200000, longest: 6, last: "200000", atMost: 5 * time.Second,
		},
		"a line over 1 MiB is skipped, the next one read": {
			script: `{ head -c 2000000 /dev/zero | tr '\0' a; echo; echo ok; } > "$FIFO"`,
			lines:  1, longest: 2, last: "ok", warning: "1 lines of the sample stream longer than 1048576 bytes were skipped", atMost: 5 * time.Second,
		},
		"an escaped process holds the pipe and writes nothing": {
			script:  `setsid sh -c 'echo $$ > "$PIDFILE"; exec sleep 60' > "$FIFO" 2>/dev/null </dev/null & while [ ! -s "$PIDFILE" ]; do sleep 0.05; done`,
			warning: "stayed open with nothing arriving 300ms after the tool exited", atLeast: 300 * time.Millisecond, atMost: time.Second,
		},
		"an escaped process writes on and on": {
			script:  `setsid sh -c 'echo $$ > "$PIDFILE"; while true; do echo x; sleep 0.1; done' > "$FIFO" 2>/dev/null </dev/null & while [ ! -s "$PIDFILE" ]; do sleep 0.05; done`,
			warning: "was still being written 1.5s after the tool exited", atLeast: 1500 * time.Millisecond, atMost: 3 * time.Second,
			last: "x", endless: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo, pidFile := filepath.Join(dir, "samples"), filepath.Join(dir, "pid")
			killLater(t, pidFile)
			t.Setenv("FIFO", fifo)
			t.Setenv("PIDFILE", pidFile)
			sink := &lineSink{}
			r := Exec(context.Background(), Options{Parser: lineParser{sink}, Command: []string{"sh", "-c", tc.script},
				Stdout: io.Discard, SampleStream: fifo, KillGrace: time.Second})
			// How long Exec took after the tool exited.
			after := time.Since(*r.EndTime)
			if after > tc.atMost || after < tc.atLeast {
				t.Errorf("Exec returned %s after the tool exited, want %s to %s", after, tc.atLeast, tc.atMost)
			}
			var warnings []string
			for _, w := range r.Warnings {
				if strings.Contains(w, "sample stream") {
					warnings = append(warnings, w)
				}
			}
			if tc.warning == "" && len(warnings) > 0 || tc.warning != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tc.warning)) {
				t.Errorf("warnings %q, want one with %q", warnings, tc.warning)
			}
			if tc.endless {
				if sink.lines == 0 || sink.last != tc.last {
					t.Errorf("read %d lines, the last %q", sink.lines, sink.last)
				}
				return
			}
			if sink.lines != tc.lines || sink.longest != tc.longest || sink.last != tc.last {
				t.Errorf("read %d lines (the longest %d bytes, the last %q), want %d (%d, %q)", sink.lines, sink.longest, sink.last, tc.lines, tc.longest, tc.last)
			}
			if _, err := os.Stat(fifo); !os.IsNotExist(err) {
				t.Errorf("the pipe is left behind: %v", err)
			}
		})
	}
}
