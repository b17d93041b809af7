package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// RestartPause is the time between a run of a restarted tool and the next:
// while no primary accepts connections, each start fails at once, and the
// pause bounds how often the runner tries (at most every 250 ms, so the
// time to a new primary is resolved to a quarter of a second).
const RestartPause = 250 * time.Millisecond

// maxRuns bounds the runs of one restarted tool: an hour of failing starts
// at RestartPause.
const maxRuns = 14400

// keepRunning starts the tool again, for the rest of its time, for as long
// as it ends early (with an error, not stopped by the runner or its
// context) after the measurement's first member loss was due
// (Options.RestartAfter, from the start barrier's instant when there is
// one: the operator's clock), when its parser can shorten its command
// (workloads.Restartable). Each run after the first is announced in the
// output by workloads.RestartLine, which the parser reads. It returns the
// restarts (nil when the tool ran once) and the last run's outcome.
func (o Options) keepRunning(ctx context.Context, out *lineWriter, start time.Time, stopped string, runErr error) (*results.Restarts, string, error) {
	rs, ok := o.Parser.(workloads.Restartable)
	if !ok || o.RestartAfter <= 0 || o.Prepare || o.SampleStream != "" {
		return nil, stopped, runErr
	}
	// The operator loses the member RestartAfter after the barrier's
	// instant; a generator that read the barrier late (CI: a loaded
	// executor) started its tool after it, and the loss came earlier on
	// the tool's clock.
	origin := start
	if !o.Origin.IsZero() && o.Origin.Before(start) {
		origin = o.Origin
	}
	var rep *results.Restarts
	for n := 2; stopped == "" && runErr != nil && ctx.Err() == nil && n <= maxRuns; n++ {
		ended := time.Since(start) // the run just ended
		if time.Since(origin) < o.RestartAfter {
			break // it ended before anything was lost: its own failure
		}
		if rep == nil {
			rep = &results.Restarts{Runs: 1, EndedSeconds: ended.Seconds()}
			out.note("the tool ended %.3f s into the measurement, after the member loss due at %s: starting it again for the rest of its time", ended.Seconds(), o.RestartAfter)
		}
		select {
		case <-ctx.Done():
			return rep, stopped, runErr
		case <-time.After(RestartPause):
		}
		at := time.Since(start)
		next, ok := rs.RestartCommand(o.Command, at)
		if !ok {
			_, _ = fmt.Fprint(out, workloads.TimeOverLine(at))
			break
		}
		_, _ = fmt.Fprint(out, workloads.RestartLine(at, ended, n))
		again := o
		again.Command = next
		stopped, runErr = again.supervisor(out).run(ctx)
		rep.Runs, rep.ResumedSeconds = n, at.Seconds()
	}
	if rep != nil {
		rep.Resumed = runErr == nil && stopped == ""
	}
	return rep, stopped, runErr
}
