// Package disturb is the runner's part of a measurement's disturbances
// (docs/disturbances.md): a SQL load — parallel sessions of their own
// running statements on the target for a while, then cancelled on the
// server — and the write ledger, numbered writes through the target's
// endpoint during a member loss, read back afterwards to find the
// acknowledged writes a failover lost. Credentials never appear in what
// they print or return.
package disturb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
)

// SQLLoad is Sessions parallel sessions, each its own connection, running
// Statements in order, again and again (once with Once), for Duration.
type SQLLoad struct {
	Name       string
	Protocol   pod.Protocol
	Config     dbstats.Config
	Sessions   int
	Statements []string
	Duration   time.Duration
	Once       bool
}

// SQLReport is what a SQL load did.
type SQLReport struct {
	Name string
	// Requested is when the sessions were opened; TookEffect when every
	// one had connected and was seen running its statement (PostgreSQL:
	// pg_stat_activity; MySQL: its processlist; Valkey and ClickHouse:
	// the first statement sent); Ended when the last session ended.
	Requested, TookEffect, Ended time.Time
	SessionsConnected            int
	StatementsCompleted          int64
	StatementsCancelled          int64
	// Errors by class: a PostgreSQL SQLSTATE, a MySQL error number, a
	// Valkey error's first word, "connection" or "timeout".
	Errors   map[string]int64
	Warnings []string
}

// session is one connection of a SQL load.
type session interface {
	// run runs a statement; ctx's end cancels it on the server.
	run(ctx context.Context, statement string) error
	// id names the session on the server (a backend pid, a connection
	// id, a query id prefix).
	id() string
	close()
}

// backend opens sessions of one protocol and watches them on the server.
type backend interface {
	open(ctx context.Context, n int) (session, error)
	// running counts the load's sessions the server shows running; -1
	// when it cannot tell (then the first statement sent is the effect).
	running(ctx context.Context, ids []string) (int, error)
	// cancel cancels on the server what the sessions still run.
	cancel(ctx context.Context, ids []string) error
	close()
}

// errorClass is the class an error is counted under.
func errorClass(err error) string {
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection"
	}
	if c := classOf(err); c != "" {
		return c
	}
	return "other"
}

// redact cuts the credentials out of a text.
func redact(s string, c dbstats.Config) string {
	for _, secret := range []string{c.Password, c.Username} {
		if len(secret) >= 3 {
			s = strings.ReplaceAll(s, secret, "***")
		}
	}
	return s
}

// RunSQLLoad waits until at, runs the load for its duration and returns
// what it did. It never fails: what went wrong is in the report.
func RunSQLLoad(ctx context.Context, l SQLLoad, at time.Time, log io.Writer) SQLReport {
	rep := SQLReport{Name: l.Name, Errors: map[string]int64{}}
	say := func(format string, args ...any) {
		fmt.Fprintf(log, "[dbperf-runner] disturbance %s: %s\n", l.Name, redact(fmt.Sprintf(format, args...), l.Config))
	}
	select {
	case <-time.After(time.Until(at)):
	case <-ctx.Done():
		rep.Warnings = append(rep.Warnings, "the measurement ended before the SQL load was due")
		return rep
	}
	b, err := newBackend(ctx, l)
	if err != nil {
		rep.Warnings = append(rep.Warnings, redact("no SQL load: "+err.Error(), l.Config))
		say("no SQL load: %v", err)
		return rep
	}
	defer b.close()
	rep.Requested = time.Now()
	end := rep.Requested.Add(l.Duration)
	lctx, stop := context.WithDeadline(ctx, end)
	defer stop()
	say("%d sessions for %s", l.Sessions, l.Duration)
	var mu sync.Mutex
	count := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		rep.Errors[errorClass(err)]++
	}
	var completed, cancelled atomic.Int64
	var sent atomic.Int32
	ids := make([]string, l.Sessions)
	var connected atomic.Int32
	var wg sync.WaitGroup
	for i := range l.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s session
			var lastTry time.Time
			defer func() {
				if s != nil {
					s.close()
				}
			}()
			for ran := false; lctx.Err() == nil && (!l.Once || !ran); {
				if s == nil {
					if wait := time.Second - time.Since(lastTry); !lastTry.IsZero() && wait > 0 {
						select {
						case <-time.After(wait):
						case <-lctx.Done():
							return
						}
					}
					lastTry = time.Now()
					var err error
					if s, err = b.open(lctx, i); err != nil {
						if lctx.Err() == nil {
							count(err)
						}
						s = nil
						continue
					}
					mu.Lock()
					if ids[i] == "" {
						connected.Add(1)
					}
					ids[i] = s.id()
					mu.Unlock()
				}
				for _, stmt := range l.Statements {
					sent.Add(1)
					err := s.run(lctx, stmt)
					switch {
					case err == nil:
						completed.Add(1)
						continue
					case lctx.Err() != nil || !time.Now().Before(end):
						// At the end: go-redis's read deadline (the
						// context's) may fire before the context ends.
						cancelled.Add(1)
						return
					}
					count(err)
					if errorClass(err) == "connection" || errorClass(err) == "timeout" {
						s.close()
						s = nil
						break
					}
				}
				ran = true
			}
		}()
	}
	// Sessions of a load run once may all finish before its duration:
	// the load ends then.
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	over := func() bool {
		select {
		case <-finished:
			return true
		default:
			return lctx.Err() != nil
		}
	}
	// The effect: every session connected and running, as the server
	// shows it where it can.
	tick := time.NewTicker(100 * time.Millisecond)
	for rep.TookEffect.IsZero() && !over() {
		select {
		case <-tick.C:
		case <-lctx.Done():
		case <-finished:
		}
		if int(connected.Load()) < l.Sessions || int(sent.Load()) < l.Sessions {
			continue
		}
		mu.Lock()
		now := append([]string(nil), ids...)
		mu.Unlock()
		n, err := b.running(lctx, now)
		if err == nil && (n < 0 || n >= l.Sessions) {
			rep.TookEffect = time.Now()
			say("took effect: %d sessions running", l.Sessions)
		}
	}
	tick.Stop()
	select {
	case <-lctx.Done():
	case <-finished:
	}
	// Cancel on the server too: a client's cancellation alone may leave a
	// statement running after its connection is gone.
	mu.Lock()
	now := append([]string(nil), ids...)
	mu.Unlock()
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := b.cancel(cctx, now); err != nil {
		rep.Warnings = append(rep.Warnings, redact("cancelling the sessions' statements: "+err.Error(), l.Config))
	}
	ccancel()
	wg.Wait()
	rep.Ended = time.Now()
	rep.SessionsConnected = int(connected.Load())
	rep.StatementsCompleted, rep.StatementsCancelled = completed.Load(), cancelled.Load()
	if rep.TookEffect.IsZero() {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the SQL load never took effect: %d of %d sessions connected", rep.SessionsConnected, l.Sessions))
	}
	say("ended: %d statements completed, %d cancelled, errors %v", rep.StatementsCompleted, rep.StatementsCancelled, rep.Errors)
	return rep
}

// newBackend connects the load's control connection.
func newBackend(ctx context.Context, l SQLLoad) (backend, error) {
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	switch l.Protocol {
	case pod.ProtocolPostgres:
		return newPostgres(cctx, l)
	case pod.ProtocolMySQL:
		return newMySQL(cctx, l)
	case pod.ProtocolRedis:
		return newRedis(l), nil
	case pod.ProtocolClickHouse:
		return newClickHouse(l), nil
	}
	return nil, fmt.Errorf("a SQL load speaks %s, %s, %s or %s, not %q", pod.ProtocolPostgres, pod.ProtocolMySQL, pod.ProtocolRedis, pod.ProtocolClickHouse, l.Protocol)
}
