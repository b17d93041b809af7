package runner

import (
	"context"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// SessionCheck checks, once the tool has finished (so that it cannot
// disturb the tool's own sessions), what a session of the workload's user
// has: the TLS it negotiated, its session variables. It records what it
// read in the result and invalidates it for each difference from what was
// asked for.
type SessionCheck interface {
	Apply(ctx context.Context, r *results.Result)
}

// checkSession runs the check of a measurement the tool did not fail:
// with a context of its own, since the tool's may have run out.
func (o Options) checkSession(ctx context.Context, r *results.Result) {
	if o.SessionCheck == nil || o.Prepare || r.Verdict == results.Failed {
		return
	}
	o.SessionCheck.Apply(context.WithoutCancel(ctx), r)
}
