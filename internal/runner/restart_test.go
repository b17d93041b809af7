package runner

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// shortenedTool is a restartable tool whose first run fails at once (its
// connections lost) and whose restarts run to their end.
type shortenedTool struct{}

func (shortenedTool) Parse(workloads.ParseInput) *results.Result {
	r := results.New("sh")
	r.Add(results.Metric{Name: "opsPerSecond", Value: 1, Unit: "ops/s", Direction: results.HigherIsBetter})
	return r
}

func (shortenedTool) RestartCommand([]string, time.Duration) ([]string, bool) {
	return []string{"sh", "-c", "exit 0"}, true
}

// The operator loses the member RestartAfter after the start barrier's
// instant; a generator that read the barrier late started its tool after
// that instant, so the loss comes earlier on the tool's clock. A tool that
// ends after the loss on the operator's clock is started again, however
// late its own start (CI: a loaded executor wrote the barrier's file late,
// pgbench's clients were cut 1.5 s into its run, before the loss's 2 s on
// its clock, and the measurement failed as the tool's own failure).
func TestRestartJudgedOnTheBarriersClock(t *testing.T) {
	for name, tc := range map[string]struct {
		origin  time.Duration // the barrier's instant, before the tool's start
		restart bool
	}{
		"started on time: it ended before the loss":       {origin: 0, restart: false},
		"started 3 s late: it ended after the loss at 2s": {origin: 3 * time.Second, restart: true},
	} {
		t.Run(name, func(t *testing.T) {
			o := Options{Parser: shortenedTool{}, Command: []string{"sh", "-c", "exit 2"}, Stdout: io.Discard,
				RestartAfter: 2 * time.Second, KillGrace: time.Second}
			if tc.origin > 0 {
				o.Origin = time.Now().Add(-tc.origin)
			}
			r := Exec(context.Background(), o)
			if got := r.Restarts != nil; got != tc.restart {
				t.Fatalf("restarted %v (%+v), want %v", got, r.Restarts, tc.restart)
			}
			if tc.restart && (!r.Restarts.Resumed || r.Restarts.Runs != 2 || r.Restarts.EndedSeconds > 1) {
				t.Errorf("restarts %+v: want the tool's own clock (ended at once) and one run after it that reached its end", r.Restarts)
			}
		})
	}
}
