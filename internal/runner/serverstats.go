package runner

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/diagnose"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// ServerStatistics polls the target database's own statistics while the
// tool runs (pg_stat_database, SHOW GLOBAL STATUS, INFO): the server's
// side of a measurement, and the only one of an endpoint the run does not
// own. One short statement per interval over one connection of its own;
// the poll's CPU is part of the runner's (LoadGenerator.RunnerCPUSeconds).
type ServerStatistics struct {
	// Protocol is the server's, one of dbstats.Protocols().
	Protocol pod.Protocol
	Config   dbstats.Config
	// Interval between polls; pod.DefaultPollInterval when zero.
	Interval time.Duration
	// Timeout bounds connecting and the last poll; 10 s when zero.
	Timeout time.Duration
	// Diagnostics, when set, record where the server spent its time over
	// the steady window (diagnose.Window), beside the statistics.
	Diagnostics *diagnose.Options
}

// serverRecording is a recording under way, or why there is none.
type serverRecording struct {
	source string
	// tls is the poller's TLS, nil in clear text.
	tls    *tls.Config
	rec    *dbstats.Recording
	poller dbstats.Poller
	failed string
	// settings are the server's own (dbstats.SettingsReader), read at the
	// start; settingsErr why they could not be.
	settings    map[string]string
	settingsErr string
	// diag is the diagnostics' window under way, diagSrc its source;
	// diagErr why there is none.
	diag    *diagnose.Window
	diagSrc diagnose.Source
	diagErr string
}

func (s *ServerStatistics) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 10 * time.Second
}

// start connects and takes the first poll. A server that cannot be reached
// is a warning on the result, never a failed measurement: the tool's own
// numbers stand without the server's side.
func (s *ServerStatistics) start(ctx context.Context, stdout io.Writer, red *Redactor) *serverRecording {
	if s == nil || s.Protocol == "" {
		return nil
	}
	source := cmp.Or(dbstats.SourceOf(s.Protocol), string(s.Protocol))
	cctx, cancel := context.WithTimeout(ctx, s.timeout())
	defer cancel()
	p, err := dbstats.Open(cctx, s.Protocol, s.Config)
	if err != nil {
		msg := red.String(err.Error())
		fmt.Fprintf(stdout, "[dbperf-runner] the server's %s statistics cannot be read: %s\n", source, msg)
		return &serverRecording{source: source, tls: s.Config.TLS, failed: msg}
	}
	interval := s.Interval
	if interval <= 0 {
		interval = pod.DefaultPollInterval
	}
	fmt.Fprintf(stdout, "[dbperf-runner] polling the server's %s statistics at %s every %s\n", source, s.Config.Host, interval)
	sr := &serverRecording{source: source, tls: s.Config.TLS, poller: p}
	if sp, ok := p.(dbstats.SettingsReader); ok {
		if sr.settings, err = sp.Settings(cctx); err != nil {
			sr.settingsErr = red.String(err.Error())
		}
	}
	sr.rec = dbstats.Start(ctx, p, interval)
	s.startDiagnostics(ctx, cctx, sr, stdout, red)
	return sr
}

// startDiagnostics opens the diagnostics' own connection and takes the
// window's first snapshot; what fails is said on the result, never a
// failed measurement.
func (s *ServerStatistics) startDiagnostics(ctx, cctx context.Context, sr *serverRecording, stdout io.Writer, red *Redactor) {
	if s.Diagnostics == nil {
		return
	}
	src, err := diagnose.Open(cctx, s.Protocol, s.Config)
	if err != nil {
		sr.diagErr = red.String(err.Error())
		return
	}
	if src == nil {
		return
	}
	o := *s.Diagnostics
	o.Redact = red.String
	if sr.diag, err = diagnose.Start(ctx, src, o); err != nil {
		_ = src.Close()
		sr.diagErr = red.String(err.Error())
		return
	}
	sr.diagSrc = src
	fmt.Fprintf(stdout, "[dbperf-runner] recording where the server spends its time (%s; waits sampled every %s)\n", src.TransactionsFrom(), o.WaitInterval)
}

// finish takes the last poll and puts what was recorded into r.
func (sr *serverRecording) finish(r *results.Result, timeout time.Duration, red *Redactor) {
	if sr == nil {
		return
	}
	if sr.tls != nil {
		r.SetParam(pod.ParamServerCertificateVerified, strconv.FormatBool(!sr.tls.InsecureSkipVerify))
	}
	if sr.rec == nil {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s telemetry: the server's statistics could not be read: %s", sr.source, sr.failed))
		return
	}
	if len(sr.settings) > 0 {
		r.ServerSettings = map[string]string{}
		for k, v := range sr.settings {
			r.ServerSettings[k] = red.String(v)
		}
	}
	if sr.diagErr != "" {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the server's diagnostics could not be read: %s", sr.source, sr.diagErr))
	}
	if sr.diag != nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		d, warnings := sr.diag.Stop(ctx)
		cancel()
		_ = sr.diagSrc.Close()
		perToolTransaction(d, r)
		r.Diagnostics = d
		for _, w := range warnings {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s diagnostics: %s", sr.source, red.String(w)))
		}
	}
	if sr.settingsErr != "" {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the server's settings could not be read: %s", sr.source, sr.settingsErr))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	rep := sr.rec.Stop(ctx)
	_ = sr.poller.Close()
	for i := range rep.Warnings {
		rep.Warnings[i] = red.String(rep.Warnings[i])
	}
	telemetry.Attach(r, rep)
	telemetry.AddEfficiency(r)
}

// perToolTransaction makes the diagnostics' unit of work the tool's own
// when its primary metric is a rate (pgbench's transactions, memtier's
// operations, k6's iterations a second): the rate times the window. The
// server's own count takes in what is not the tool's work (PostgreSQL
// counts a parallel query's workers' transactions, the runner's polls),
// and stays in the notes.
func perToolTransaction(d *results.Diagnostics, r *results.Result) {
	if d == nil {
		return
	}
	m, ok := r.Get(r.Primary)
	if !ok || !strings.HasSuffix(m.Unit, "/s") || !(m.Value > 0) || d.WindowSeconds <= 0 {
		return
	}
	d.Notes = append(d.Notes, fmt.Sprintf("the server counted %.0f transactions in the window (%s)", d.Transactions, d.TransactionsFrom))
	d.Transactions = m.Value * d.WindowSeconds
	d.TransactionsFrom = fmt.Sprintf("the tool's %s (%s) over the window's %.1f s", m.Name, m.Unit, d.WindowSeconds)
}
