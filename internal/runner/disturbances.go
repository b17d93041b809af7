package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/disturb"
)

// disturbing is the runner's part of a measurement's disturbances under
// way: its SQL loads, at their offsets from the tool's start, and the write
// ledgers that accompany member losses from LedgerLead before them to the
// end of the tool.
type disturbing struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	sql     map[string]disturb.SQLReport
	ledgers map[string]*disturb.LedgerRun
	stop    context.CancelFunc
	order   []pod.RunnerDisturbance
	offsets map[string]time.Time
	red     *Redactor
}

// startDisturbances starts the runner's disturbances of a measurement whose
// tool started at start; nil when it has none.
func startDisturbances(ctx context.Context, ds []pod.RunnerDisturbance, start time.Time, out io.Writer, red *Redactor) *disturbing {
	if len(ds) == 0 {
		return nil
	}
	ctx, stop := context.WithCancel(ctx)
	g := &disturbing{sql: map[string]disturb.SQLReport{}, ledgers: map[string]*disturb.LedgerRun{}, stop: stop, order: ds,
		offsets: map[string]time.Time{}, red: red}
	for _, d := range ds {
		cfg, err := disturbConfig(d)
		if err != nil {
			fmt.Fprintf(out, "[dbperf-runner] disturbance %s: %s\n", d.Name, red.String(err.Error()))
			continue
		}
		at := start.Add(d.Offset)
		g.offsets[d.Name] = at
		switch {
		case d.Kind == "sqlLoad":
			l := disturb.SQLLoad{Name: d.Name, Protocol: d.Protocol, Config: cfg, Sessions: d.Sessions, Statements: d.Statements,
				Duration: d.Duration, Once: d.Once}
			g.wg.Add(1)
			go func() {
				defer g.wg.Done()
				rep := disturb.RunSQLLoad(ctx, l, at, out)
				g.mu.Lock()
				g.sql[d.Name] = rep
				g.mu.Unlock()
			}()
		case d.Ledger:
			from := at.Add(-pod.LedgerLead)
			if from.Before(start) {
				from = start
			}
			// Until the tool ends (finish stops it): the writes after the
			// loss are the ones a failover may lose.
			g.ledgers[d.Name] = disturb.StartLedger(ctx, disturb.Ledger{Name: d.Name, Protocol: d.Protocol, Config: cfg}, from, start.Add(24*time.Hour), out)
		}
	}
	return g
}

// disturbConfig reaches the target with the disturbances' account.
func disturbConfig(d pod.RunnerDisturbance) (dbstats.Config, error) {
	cfg := dbstats.Config{Host: d.Address.Host, Port: d.Address.Port, Database: d.Database,
		Username: os.Getenv(pod.EnvDisturbUsername), Password: os.Getenv(pod.EnvDisturbPassword)}
	tlsConfig, err := d.TLS.Config(d.Address.Host)
	if err != nil {
		return cfg, fmt.Errorf("TLS: %w", err)
	}
	cfg.TLS = tlsConfig
	return cfg, nil
}

// finish ends the disturbances (a SQL load still running is cancelled, a
// ledger stops writing and is read back) and records them in r.
func (g *disturbing) finish(r *results.Result) {
	if g == nil {
		return
	}
	g.stop()
	g.wg.Wait()
	for _, d := range g.order {
		rd := results.Disturbance{Name: d.Name, Kind: d.Kind, OffsetSeconds: d.Offset.Seconds()}
		if rep, ok := g.sql[d.Name]; ok {
			rd.Requested, rd.TookEffect, rd.Ended = when(rep.Requested), when(rep.TookEffect), when(rep.Ended)
			rd.SQL = &results.SQLLoadReport{Sessions: d.Sessions, SessionsConnected: rep.SessionsConnected,
				StatementsCompleted: rep.StatementsCompleted, StatementsCancelled: rep.StatementsCancelled}
			rd.Errors = map[string]float64{}
			for class, n := range rep.Errors {
				rd.Errors[class] = float64(n)
			}
			for _, w := range rep.Warnings {
				r.Warnings = append(r.Warnings, fmt.Sprintf("disturbance %s: %s", d.Name, g.red.String(w)))
			}
			rd.Message = fmt.Sprintf("%d sessions running %d statements for %s", d.Sessions, len(d.Statements), d.Duration)
		}
		if lr, ok := g.ledgers[d.Name]; ok {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			rep := lr.Check(ctx)
			cancel()
			rd.Ledger = &results.LedgerReport{Acknowledged: rep.Acknowledged, Failed: rep.Failed, Missing: rep.Missing,
				MissingCount: rep.MissingCount, FirstFailure: when(rep.FirstFailure), LastFailure: when(rep.LastFailure),
				Reconnected: when(rep.Reconnected)}
			for _, w := range rep.Warnings {
				r.Warnings = append(r.Warnings, fmt.Sprintf("disturbance %s: write ledger: %s", d.Name, g.red.String(w)))
			}
		}
		r.Disturbances = append(r.Disturbances, rd)
	}
}

// when is t, nil when zero.
func when(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
