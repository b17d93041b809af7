package runner

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
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
	return sr
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
