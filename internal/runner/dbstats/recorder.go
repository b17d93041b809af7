package dbstats

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Recording polls a server from Start until Stop.
type Recording struct {
	poller   Poller
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	obs      []Observation
	warnings []string
}

// Start polls at once and then every interval (pod.DefaultPollInterval when 0)
// until Stop or ctx ends. A failed poll is a warning; polling goes on.
func Start(ctx context.Context, p Poller, interval time.Duration) *Recording {
	if interval <= 0 {
		interval = pod.DefaultPollInterval
	}
	r := &Recording{poller: p, interval: interval, stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop(ctx)
	return r
}

func (r *Recording) loop(ctx context.Context) {
	defer close(r.done)
	r.poll(atWindowEdge(ctx))
	tick := time.NewTicker(r.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.stop:
			return
		case <-tick.C:
			r.poll(ctx)
		}
	}
}

// lastPoll takes the window's last reading. A server that cannot be read
// then (it died with the tool's clients, or is coming back) is tried again
// every half second until ctx ends: a server back within that time shows
// its restart in the reading, which is what judges the window.
func (r *Recording) lastPoll(ctx context.Context) {
	ctx = atWindowEdge(ctx)
	// The window ends now: a wait for the server to publish what was done
	// by then does not lengthen it (its rates would count the wait).
	end := time.Now()
	settled := false
	if s, ok := r.poller.(Settler); ok {
		s.Settle(ctx)
		settled = true
	}
	for {
		if r.poll(ctx) || ctx.Err() != nil {
			if settled {
				r.mu.Lock()
				if n := len(r.obs); n > 0 && r.obs[n-1].Time.After(end) {
					r.obs[n-1].Time = end
				}
				r.mu.Unlock()
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(lastPollRetry):
		}
	}
}

// lastPollRetry is the pause between tries of the last poll.
const lastPollRetry = 500 * time.Millisecond

// poll reads once, within an interval, and keeps the reading or a warning.
// It says whether it read.
func (r *Recording) poll(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, r.interval)
	defer cancel()
	began := time.Now()
	rd, err := r.poller.Poll(ctx)
	took := time.Since(began)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.warnings = append(r.warnings, fmt.Sprintf("poll at %s failed: %v", began.UTC().Format(time.RFC3339), err))
		return false
	}
	r.obs = append(r.obs, Observation{Time: began.Add(took / 2), Took: took, Reading: rd})
	return true
}

// Stop lets a poll under way finish, polls a last time (the window's end,
// tried again until ctx ends while the server cannot be read) and
// summarises the window, with the poller's notes (Noter) among the
// warnings.
func (r *Recording) Stop(ctx context.Context) *telemetry.Report {
	obs, warnings := r.StopObservations(ctx)
	if n, ok := r.poller.(Noter); ok {
		warnings = append(slices.Clone(warnings), n.Notes()...)
	}
	return Summarize(r.poller.Source(), r.poller.Figures(), obs, warnings)
}

// StopObservations is Stop without the summary: the window's successful
// polls in time order and the warnings of those that failed, for a poller
// whose figures are not Defs (a host's, whose cores and devices are known
// from its readings only).
func (r *Recording) StopObservations(ctx context.Context) ([]Observation, []string) {
	close(r.stop)
	<-r.done
	if ctx.Err() == nil {
		r.lastPoll(ctx)
	} else {
		r.warnings = append(r.warnings, "the recording was cancelled before the window's end: no last poll")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.obs, r.warnings
}

// Record polls p over a window known in advance: it waits for its start,
// polls every interval and a last time at its end. A cancelled ctx ends
// the recording early, with what it had and ctx's error.
func Record(ctx context.Context, p Poller, w telemetry.Window, interval time.Duration) (*telemetry.Report, error) {
	if err := sleepUntil(ctx, w.Start); err != nil {
		return nil, err
	}
	rec := Start(ctx, p, interval)
	err := sleepUntil(ctx, w.End)
	return rec.Stop(ctx), err
}

func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
