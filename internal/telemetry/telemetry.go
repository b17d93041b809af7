// Package telemetry measures what the servers did while a measurement ran:
// the database's own statistics, the pods' and nodes' resources. Every
// source answers for one measurement window and returns figures in one
// shape, so the run's results, a comparison, a later sweep stop rule or a
// soak judgement read them alike.
package telemetry

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Window is one measurement: from the start barrier to the tool's end.
type Window struct {
	Start, End time.Time
}

// Duration of the window.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// Role says whose figures they are.
type Role string

const (
	// RoleTarget: a pod of the database under test, or (RoleServer) the
	// database as its own statistics describe it.
	RoleTarget Role = "target"
	// RoleServer: the database server as seen through its own statistics
	// (pg_stat_database, SHOW GLOBAL STATUS, INFO): the only view of an
	// external or managed endpoint.
	RoleServer Role = "server"
	// RoleLoadgen: a load-generator pod.
	RoleLoadgen Role = "loadgen"
	// RoleNode: a node the run's pods ran on.
	RoleNode Role = "node"
	// RoleHost: a machine the spec names (spec.telemetry.hosts), read from
	// its node_exporter: a database appliance, an application server, the
	// virtual machine behind a managed service. Its Name is the spec's.
	RoleHost Role = "host"
)

// Subject is what a figure is about. Its Label is the Operation of the
// metrics: "target/<pod>", "loadgen/<pod>", "node/<name>", "host/<name>",
// "server", and
// "target" alone for a sum over the target's pods.
type Subject struct {
	Role Role
	// Name of the pod or node; empty for a sum over a role, and for the
	// server.
	Name string
}

// Label renders the subject as metrics carry it.
func (s Subject) Label() string {
	if s.Name == "" {
		return string(s.Role)
	}
	return string(s.Role) + "/" + s.Name
}

// Figure is one summary number of a window, normalised like every metric:
// the unit in the name (cpuCores, networkReceiveBytesPerSecond,
// commitsPerSecond) and in Unit; Direction is Neutral for telemetry unless
// less is plainly better (throttling, OOM kills, restarts).
type Figure struct {
	Name      string            `json:"name"`
	Subject   string            `json:"subject"`
	Value     float64           `json:"value"`
	Unit      string            `json:"unit"`
	Direction results.Direction `json:"direction"`
}

// Sample is one reading of a series, at an absolute instant so that a
// window of interest (a disturbance, a soak hour) can be cut out later.
type Sample = results.Sample

// Series is one quantity of one subject over the window, at the source's
// resolution (5-10 s).
type Series = results.Series

// Report is what a source measured over one window.
type Report struct {
	Source   string   `json:"source"`
	Figures  []Figure `json:"figures"`
	Series   []Series `json:"series,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Source reads telemetry of a window after it ended (Prometheus, the
// kubelet's statistics).
type Source interface {
	Name() string
	Collect(ctx context.Context, w Window, subjects []Subject) (*Report, error)
}

// SampleValues are the values of samples, in their order.
func SampleValues(samples []Sample) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = s.Value
	}
	return out
}

// NearestRank is the p-th percentile of values by nearest rank: a value
// that was measured, never one interpolated between two samples (p 100 is
// the maximum). NaN when there are none.
func NearestRank(values []float64, p float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

// Query is a user-defined figure: PromQL for what Kubernetes cannot see
// (application servers, the VMs behind a managed service), the install's
// (telemetry.prometheus.queries) or a run's own (spec.telemetry.queries).
//
// With the placeholder $window the query is evaluated once, at the
// window's end, with $window replaced by the window's duration (e.g.
// `rate(process_cpu_seconds_total{job="app"}[$window])`): the figure is
// its value. Without it the query is evaluated at every step over the
// window and the figure is the mean (Summary "max": the maximum) of its
// samples; the samples are kept as a series. Several returned series are
// added up, with a warning: aggregate in the query to say how; none is a
// warning naming the query, never a zero.
type Query struct {
	Name      string            `json:"name"`
	Query     string            `json:"query"`
	Unit      string            `json:"unit,omitempty"`
	Direction results.Direction `json:"direction,omitempty"`
	// Subject the figure is about (default "server").
	Subject string `json:"subject,omitempty"`
	// Summary of a range query's samples: "mean" (default) or "max".
	Summary string `json:"summary,omitempty"`
}

// WindowPlaceholder in a user query is replaced by the window's duration.
const WindowPlaceholder = "$window"

// HostSelector is a host a run names that Prometheus scrapes: its
// node_exporter's series are those the selector matches
// (`instance="db-01:9100"`), its figures under host/<Name>.
type HostSelector struct {
	Name, Selector string
}

// RunQueries are what a run asks of a source beyond its pods and nodes:
// its own queries and its hosts read through Prometheus.
type RunQueries struct {
	Queries []Query
	Hosts   []HostSelector
}

// RunSource is a source that answers a run's own queries (Prometheus).
type RunSource interface {
	Source
	CollectRun(ctx context.Context, w Window, subjects []Subject, run RunQueries) (*Report, error)
}
