package runner

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/runner/hoststats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// HostStatistics are the hosts the runner reads from their node_exporter
// while the tool runs (spec.telemetry.hosts): one scrape at the start,
// one every Interval, one at the end. Their CPU is part of the runner's
// (LoadGenerator.RunnerCPUSeconds); make bench measures what it costs.
type HostStatistics struct {
	Hosts []hoststats.Host
	// Interval between scrapes; pod.DefaultHostPollInterval when zero.
	Interval time.Duration
	// SeriesBudget bounds each host's samples (0: hoststats' default).
	SeriesBudget int
}

// hostTimeout bounds each host's last scrape.
const hostTimeout = 10 * time.Second

type hostRecording struct {
	host    hoststats.Host
	scraper *hoststats.Scraper
	rec     *dbstats.Recording
}

func (h *HostStatistics) interval() time.Duration {
	if h.Interval > 0 {
		return h.Interval
	}
	return pod.DefaultHostPollInterval
}

// start begins the hosts' recordings. A host that cannot be read is a
// warning of its recording, never a failed measurement.
func (h *HostStatistics) start(ctx context.Context, stdout io.Writer) []hostRecording {
	if h == nil {
		return nil
	}
	out := make([]hostRecording, 0, len(h.Hosts))
	for _, host := range h.Hosts {
		sc := hoststats.NewScraper(host, h.interval())
		fmt.Fprintf(stdout, "[dbperf-runner] reading host %s (%s) from its node_exporter at %s every %s\n", host.Name, host.Role, host.URL, h.interval())
		out = append(out, hostRecording{host: host, scraper: sc, rec: dbstats.Start(ctx, sc, h.interval())})
	}
	return out
}

// finishHosts takes each host's last scrape and puts its figures and
// series into r; the hosts that stand for the target (Target) give the
// target's CPU: cpuCores[target], the sum of their busy cores, and
// cpuLimitPercent[target], that sum over their cores, so that
// efficiencyPerTargetCore and validity.maxTargetCPUPercent are judged
// for an endpoint the run does not own. A target host that rebooted
// during the window invalidates the measurement.
func (h *HostStatistics) finish(recs []hostRecording, r *results.Result, timeout time.Duration, red *Redactor) {
	if len(recs) == 0 {
		return
	}
	var busy, cores float64
	var targets []string
	var targetSeries []results.Series
	complete := true
	for _, hr := range recs {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		obs, warnings := hr.rec.StopObservations(ctx)
		cancel()
		_ = hr.scraper.Close()
		rep := hoststats.Summarize(hr.host, obs, warnings, h.SeriesBudget)
		for i := range rep.Warnings {
			rep.Warnings[i] = red.String(rep.Warnings[i])
		}
		telemetry.Attach(r, rep)
		if hr.host.TLS != nil && hr.host.TLS.InsecureSkipVerify {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s telemetry: host %s's certificate was not verified (insecureSkipVerify)", hoststats.Source, hr.host.Name))
		}
		if !hr.host.Target {
			continue
		}
		targets = append(targets, hr.host.Name)
		subject := telemetry.Subject{Role: telemetry.RoleHost, Name: hr.host.Name}.Label()
		c, ok1 := r.Get(results.Key{Name: telemetry.FigureCPUCores, Operation: subject})
		n, ok2 := r.Get(results.Key{Name: hoststats.FigureCount, Operation: subject})
		if !ok1 || !ok2 || n.Value <= 0 {
			complete = false
			continue
		}
		busy, cores = busy+c.Value, cores+n.Value
		for _, sr := range rep.Series {
			if sr.Name == telemetry.FigureCPUCores {
				targetSeries = append(targetSeries, sr)
			}
		}
		if rb, ok := r.Get(results.Key{Name: hoststats.FigureRestarts, Operation: subject}); ok && rb.Value > 0 {
			r.Invalidate("the target's host %s rebooted during the measurement (%s counted %g boot(s))", hr.host.Name, hoststats.Source, rb.Value)
		}
	}
	switch {
	case len(targets) == 0:
		return
	case !complete:
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s telemetry: the target's CPU is not known from its hosts %v: not every one was read", hoststats.Source, targets))
		return
	}
	target := string(telemetry.RoleTarget)
	r.Add(results.Metric{Name: telemetry.FigureCPUCores, Operation: target, Value: busy, Unit: "cores", Direction: results.Neutral, Source: hoststats.Source})
	r.Add(results.Metric{Name: telemetry.FigureCPULimitPercent, Operation: target, Value: 100 * busy / cores, Unit: "%", Direction: results.Neutral, Source: hoststats.Source})
	if sum, ok := sumSeries(targetSeries); ok && len(targetSeries) == len(targets) {
		sum.Subject = target
		r.Series = append(r.Series, sum)
	}
	telemetry.AddEfficiency(r)
}

// sumSeries adds the hosts' series sample by sample (each host's scrape
// loop has its own instants, within a scrape of each other; the first
// host's are kept), up to the shortest; not when their resolutions
// differ (one host's series coarsened more than another's).
func sumSeries(in []results.Series) (results.Series, bool) {
	if len(in) == 0 {
		return results.Series{}, false
	}
	out := in[0]
	out.Samples = append([]results.Sample(nil), in[0].Samples...)
	for _, s := range in[1:] {
		if d := len(s.Samples) - len(out.Samples); d > 1 || d < -1 {
			return results.Series{}, false // coarsened differently: not sample by sample
		}
		n := min(len(out.Samples), len(s.Samples))
		out.Samples = out.Samples[:n]
		for i := range n {
			out.Samples[i].Value += s.Samples[i].Value
		}
	}
	return out, len(out.Samples) > 0
}
