package k6

import (
	"fmt"
	"strings"

	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// MetricsField is where a spec declares the unit and direction of a
// script's custom metrics.
const MetricsField = "spec.workload.k6.metrics"

// builtin says whether k6 itself defines a metric (its unit and direction
// are known).
func builtin(name string) bool {
	switch name {
	case "vus", "vus_max", "iterations", "iteration_duration", "dropped_iterations", "checks", "group_duration":
		return true
	}
	for _, p := range []string{"http_", "ws_", "grpc_", "browser_", "data_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// inferDirection tells a custom metric's direction where it is
// unambiguous: a time trend is a latency; a rate or counter follows
// workloads.DirectionOfShare (a rate of successes is never Neutral).
func inferDirection(name, kind string, time bool) (results.Direction, bool) {
	switch kind {
	case "trend":
		if time {
			return results.LowerIsBetter, true
		}
	case "rate", "counter":
		return workloads.DirectionOfShare(name)
	}
	return results.Neutral, false
}

func (s *sink) declaration(name string) (pod.MetricDeclaration, bool) {
	for _, d := range s.opts.Metrics {
		if d.Name == name {
			return d, true
		}
	}
	return pod.MetricDeclaration{}, false
}

// addCustom adds the script's custom metrics per request name, and gives
// every figure of a custom metric (the summary's too) its declared or
// inferred unit and direction.
func (s *sink) addCustom(r *results.Result, span float64) {
	for _, name := range workloads.SortedKeys(s.metrics) {
		m := s.metrics[name]
		if m.known {
			continue
		}
		op := s.metricOp(name)
		if m.kind != "trend" && !hasOperation(r, op) && m.total != nil {
			s.addCustomOp(r, m, op, m.total, span) // no end-of-test summary
		}
		for _, v := range workloads.SortedKeys(m.byName) {
			s.addCustomOp(r, m, operation(name, "name:"+v), m.byName[v], span)
		}
		d, declared := s.declaration(name)
		dir, inferred := inferDirection(name, m.kind, m.time)
		if declared && d.Direction != "" {
			dir = d.Direction
		} else if !inferred {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the k6 metric %s (a %s) has no direction dbperf can tell, so it is reported Neutral and never judged: declare it in %s (name: %s, unit, direction)",
				name, m.kind, MetricsField, name))
		}
		describe(r, m, op, dir, d.Unit)
	}
}

func (s *sink) addCustomOp(r *results.Result, m *metricState, op string, a *agg, span float64) {
	if a.count == 0 {
		return
	}
	add := func(name string, v float64, unit string) {
		r.Add(results.Metric{Name: name, Operation: op, Value: v, Unit: unit, Direction: results.Neutral, Detail: true})
	}
	switch m.kind {
	case "trend":
		s.addLatency(r, op, a, true)
	case "counter":
		add("ratePerSecond", a.sum/span, "/s")
		add("count", a.sum, "count")
	case "rate":
		add("ratePercent", 100*float64(a.nonzero)/float64(a.count), "%")
	case "gauge":
		add("max", a.max, "")
	}
}

// describe sets the unit and direction of a custom metric's figures: the
// whole run's (operation op: the metric's name unless a request has it)
// and the breakdowns' (metric{...}). A trend that is not of time is no
// latency: its figures are named value… and carry the declared unit.
func describe(r *results.Result, m *metricState, op string, dir results.Direction, unit string) {
	for i := range r.Metrics {
		x := &r.Metrics[i]
		if x.Operation != op && !strings.HasPrefix(x.Operation, m.name+"{") || x.IsTelemetry() || x.Name == "thresholdsCrossed" {
			continue
		}
		x.Direction = dir
		switch m.kind {
		case "trend":
			if !m.time && strings.HasPrefix(x.Name, "latency") && strings.HasSuffix(x.Name, "Millis") {
				x.Name, x.Unit = "value"+strings.TrimSuffix(strings.TrimPrefix(x.Name, "latency"), "Millis"), unit
			}
		case "counter":
			if unit != "" {
				if x.Name == "count" {
					x.Unit = unit
				} else {
					x.Unit = unit + "/s"
				}
			}
		case "gauge":
			x.Unit = unit
		}
	}
}

func hasOperation(r *results.Result, op string) bool {
	for _, m := range r.Metrics {
		if m.Operation == op {
			return true
		}
	}
	return false
}
