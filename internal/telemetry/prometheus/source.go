// Package prometheus is the telemetry source that asks a cluster's
// Prometheus, through its HTTP API, what the run's pods (cAdvisor's
// container_* series) and nodes (node_exporter's node_* series) did over a
// measurement window, and evaluates the user's own queries for what
// Kubernetes cannot see.
package prometheus

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/dbperf-io/dbperf-operator/internal/telemetry"
)

// Source reads a window's telemetry from Prometheus.
type Source struct {
	cfg Config
	api v1.API
}

var _ telemetry.Source = (*Source)(nil)

// New checks the configuration and makes a client; it does not connect.
func New(cfg Config) (*Source, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c, err := api.NewClient(api.Config{Address: cfg.Address})
	if err != nil {
		return nil, fmt.Errorf("prometheus: client for %s: %w", cfg.Address, err)
	}
	return &Source{cfg: cfg, api: v1.NewAPI(c)}, nil
}

// Name of the source, as reports carry it.
func (s *Source) Name() string { return "prometheus" }

// Collect queries the window for the subjects' pods and nodes and the user's
// queries. A query that returns nothing is a warning naming it; an
// unreachable Prometheus or a refused query is an error.
func (s *Source) Collect(ctx context.Context, w telemetry.Window, subjects []telemetry.Subject) (*telemetry.Report, error) {
	return s.CollectRun(ctx, w, subjects, telemetry.RunQueries{})
}

// CollectRun is Collect with what the run itself asks: its hosts, whose
// node_exporter series its selectors match (the node figures, under
// host/<name>), and its own queries after the install's. A run's query
// named like one of the install's, or invalid, is a warning and is not
// asked; so is a host selector that matches no series.
func (s *Source) CollectRun(ctx context.Context, w telemetry.Window, subjects []telemetry.Subject, run telemetry.RunQueries) (*telemetry.Report, error) {
	if !w.End.After(w.Start) {
		return nil, fmt.Errorf("prometheus: empty window %s..%s", w.Start, w.End)
	}
	if err := s.waitLag(ctx, w.End); err != nil {
		return nil, err
	}
	c := &collection{src: s, w: w, report: &telemetry.Report{Source: s.Name()}}
	pods, nodes := splitSubjects(subjects)
	if len(pods) > 0 {
		if err := c.collect(ctx, podSpecs(s.cfg, pods), podScope(s.cfg, pods)); err != nil {
			return nil, err
		}
	}
	if len(nodes) > 0 {
		if err := c.collect(ctx, nodeSpecs(s.cfg, nodes), nodeScope(s.cfg, nodes)); err != nil {
			return nil, err
		}
	}
	for _, h := range run.Hosts {
		if err := c.collect(ctx, hostSpecs(s.cfg, h), hostScope(s.cfg, h, c)); err != nil {
			return nil, err
		}
	}
	installs := map[string]bool{}
	for _, q := range s.cfg.Queries {
		installs[q.Name] = true
		if err := c.userQuery(ctx, q); err != nil {
			return nil, err
		}
	}
	for i, q := range run.Queries {
		q = queryDefaults(q)
		if err := validateQuery(fmt.Sprintf("spec.telemetry.queries[%d]", i), q); err != nil {
			c.warn("not asked: %v", err)
			continue
		}
		if installs[q.Name] {
			c.warn("the run's query %s is not asked: the install has a query of that name (telemetry.prometheus.queries)", q.Name)
			continue
		}
		if err := c.userQuery(ctx, q); err != nil {
			// A run's own PromQL that Prometheus refuses is the run's
			// mistake: a warning naming it, the other figures kept.
			c.warn("the run's query %s failed: %v", q.Name, err)
		}
	}
	c.report.Coarsen(0, "prometheus")
	return c.report, nil
}

// waitLag waits until the window's last scrape should have landed.
func (s *Source) waitLag(ctx context.Context, end time.Time) error {
	wait := time.Until(end.Add(s.cfg.Lag))
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// splitSubjects returns the pods (target and load generator) and the nodes
// the source can answer for; sums and the server are not its to name.
func splitSubjects(subjects []telemetry.Subject) (pods, nodes []telemetry.Subject) {
	for _, s := range subjects {
		switch {
		case s.Name == "":
		case s.Role == telemetry.RoleTarget || s.Role == telemetry.RoleLoadgen:
			pods = append(pods, s)
		case s.Role == telemetry.RoleNode:
			nodes = append(nodes, s)
		}
	}
	return pods, nodes
}

// collection is one Collect call's state.
type collection struct {
	src    *Source
	w      telemetry.Window
	report *telemetry.Report
}

func (c *collection) warn(format string, args ...any) {
	c.report.Warnings = append(c.report.Warnings, fmt.Sprintf(format, args...))
}

// windowRange is the window's duration as a PromQL range: an expression
// over it, evaluated at the window's end, summarises exactly the window.
func (c *collection) windowRange() string {
	return promDuration(c.w.Duration())
}

func promDuration(d time.Duration) string {
	if ms := d.Milliseconds(); ms > 0 {
		return fmt.Sprintf("%dms", ms)
	}
	return "1ms"
}

// instant evaluates a query at the window's end.
func (c *collection) instant(ctx context.Context, query string) (model.Vector, error) {
	v, warnings, err := c.src.api.Query(ctx, query, c.w.End, v1.WithTimeout(c.src.cfg.Timeout))
	if err != nil {
		return nil, fmt.Errorf("prometheus: query %s at %s: %w", query, c.w.End.Format(time.RFC3339), err)
	}
	c.promWarnings(query, warnings)
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("prometheus: query %s returned a %s, not an instant vector", query, v.Type())
	}
	return vec, nil
}

// rangeQuery evaluates a query at every step whose rate range lies within
// the window (a sample at t covers (t-RateRange, t]), so the series and its
// percentiles see nothing from before the start barrier.
func (c *collection) rangeQuery(ctx context.Context, query string) (model.Matrix, error) {
	start := c.w.Start.Add(c.src.cfg.RateRange)
	if start.After(c.w.End) {
		start = c.w.End
	}
	r := v1.Range{Start: start, End: c.w.End, Step: c.src.cfg.Step}
	v, warnings, err := c.src.api.QueryRange(ctx, query, r, v1.WithTimeout(c.src.cfg.Timeout))
	if err != nil {
		return nil, fmt.Errorf("prometheus: range query %s over %s..%s: %w", query,
			start.Format(time.RFC3339), c.w.End.Format(time.RFC3339), err)
	}
	c.promWarnings(query, warnings)
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("prometheus: range query %s returned a %s, not a matrix", query, v.Type())
	}
	return m, nil
}

func (c *collection) promWarnings(query string, warnings v1.Warnings) {
	for _, w := range warnings {
		c.warn("prometheus warns about %s: %s", query, w)
	}
}
