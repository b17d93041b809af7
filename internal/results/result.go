package results

import (
	"fmt"
	"sort"
	"time"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// SchemaVersion is bumped when Result changes incompatibly.
const SchemaVersion = 1

// Direction says which way a metric improves: the API's (stats.Direction),
// so that results feed comparisons and status without conversion.
type Direction = stats.Direction

const (
	HigherIsBetter = stats.HigherIsBetter
	LowerIsBetter  = stats.LowerIsBetter
	Neutral        = stats.Neutral
)

// Verdict of one measurement: the API's. Failed outranks Invalid, which
// outranks Succeeded.
type Verdict = benchv1.Verdict

const (
	Succeeded = benchv1.VerdictSucceeded
	Failed    = benchv1.VerdictFailed
	Invalid   = benchv1.VerdictInvalid
)

// Metric is one number a tool reported, normalised: the unit is in the name
// (opsPerSecond, latencyP99Millis) and in Unit, and Direction says which way
// is better.
type Metric struct {
	Name      string    `json:"name"`
	Operation string    `json:"operation,omitempty"`
	Value     float64   `json:"value"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
	// Detail marks metrics too fine-grained for a status (per-statement
	// latencies, histogram buckets); they stay in the full result only.
	Detail bool `json:"detail,omitempty"`
	// Source names where a telemetry figure came from (the database's own
	// statistics such as "postgresql", or "prometheus", "kubernetes"), its
	// Operation then naming whose it is ("server", "target", "target/<pod>",
	// "loadgen/<pod>", "node/<name>"). Empty for what the tool measured.
	Source string `json:"source,omitempty"`
}

// IsTelemetry says whether the metric describes the servers rather than
// what the tool measured.
func (m Metric) IsTelemetry() bool { return m.Source != "" }

// Key identifies a metric within a result.
type Key struct {
	Name      string `json:"name"`
	Operation string `json:"operation,omitempty"`
}

// Key returns the metric's identity.
func (m Metric) Key() Key { return Key{Name: m.Name, Operation: m.Operation} }

// String renders "name" or "name[operation]".
func (k Key) String() string {
	if k.Operation == "" {
		return k.Name
	}
	return k.Name + "[" + k.Operation + "]"
}

// Point is one sample of a time series, such as a pgbench progress line.
type Point struct {
	ElapsedSeconds float64            `json:"t"`
	Values         map[string]float64 `json:"v"`
}

// Sample is one reading of a series at an absolute instant, so that a
// window of interest (a disturbance, a soak hour, a stop rule's last
// minute) can be cut out of it later.
type Sample struct {
	Time  time.Time `json:"t"`
	Value float64   `json:"v"`
}

// Series is one quantity of one subject over a measurement, at its
// source's resolution (5-10 s): a telemetry series such as the server's
// CPU or its commits per second.
type Series struct {
	Name string `json:"name"`
	// Subject is whose it is, as a telemetry metric's Operation says it.
	Subject string   `json:"subject"`
	Unit    string   `json:"unit"`
	Source  string   `json:"source,omitempty"`
	Samples []Sample `json:"samples"`
}

// LoadGenerator reports how busy the load generator's container was.
type LoadGenerator struct {
	// CPUPercent is CPU time used over wall time, as a percent of the CPUs
	// the container may use (its limit, else its cpuset, else the machine).
	CPUPercent float64 `json:"cpuPercent"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// RunnerCPUSeconds is what dbperf-runner itself used (its own process,
	// not the tool's): the price of measuring through it.
	RunnerCPUSeconds float64 `json:"runnerCPUSeconds"`
	AvailableCPUs    float64 `json:"availableCPUs"`
	// WallSeconds is how long the tool ran (the longest generator's when
	// merged): CPUSeconds over it is the CPUs the generators used.
	WallSeconds float64 `json:"wallSeconds,omitempty"`
	// Source is where the figures came from: "cgroup2", "cgroup1" or "".
	Source string `json:"source"`
}

// Result is the normalized outcome of one tool run.
type Result struct {
	SchemaVersion int               `json:"schemaVersion"`
	Tool          string            `json:"tool"`
	ToolVersion   string            `json:"toolVersion,omitempty"`
	Verdict       Verdict           `json:"verdict"`
	Reasons       []string          `json:"reasons,omitempty"`
	Warnings      []string          `json:"warnings,omitempty"`
	Primary       Key               `json:"primary"`
	Metrics       []Metric          `json:"metrics"`
	Parameters    map[string]string `json:"parameters,omitempty"`
	TimeSeries    []Point           `json:"timeSeries,omitempty"`
	// Series are the telemetry series of the measurement window.
	Series []Series `json:"series,omitempty"`
	// Stages are the parts of the measurement the tool ramped through by
	// itself (k6's stages), each reported as if it were a step.
	Stages []Stage `json:"stages,omitempty"`
	// Histograms are latency histograms in microseconds per operation, in
	// the compressed HdrHistogram encoding (base64): what lets the results
	// of several load generators be merged into true percentiles.
	Histograms    map[string]string `json:"histograms,omitempty"`
	LoadGenerator *LoadGenerator    `json:"loadGenerator,omitempty"`
	// Disturbances are what happened to the target during the
	// measurement (spec.disturbances).
	Disturbances []Disturbance `json:"disturbances,omitempty"`
	// ServerSettings are the target server's settings that differ from
	// its built-in defaults, read when the measurement started (PostgreSQL's
	// pg_settings by source): the environment diff of a comparison.
	ServerSettings map[string]string `json:"serverSettings,omitempty"`
	// Diagnostics are where the server spent its time over the steady
	// window, by statement, wait event and command (diagnostics.go).
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`
	// Restarts, when the runner started the tool again after it ended
	// early under a member loss (workloads.Restartable), say when.
	Restarts *Restarts `json:"restarts,omitempty"`
	ExitCode *int      `json:"exitCode,omitempty"`
	// OutputTail is the end of a failed tool's output (its last lines
	// worth reading, redacted): what it said when it failed.
	OutputTail []string   `json:"outputTail,omitempty"`
	StartTime  *time.Time `json:"startTime,omitempty"`
	EndTime    *time.Time `json:"endTime,omitempty"`
	// Progress is the throughput at the tool's finest resolution, for the
	// stability checks in this process; not stored.
	Progress *Progress `json:"-"`
}

// Restarts are the runs of a tool the runner started again, for the rest
// of its time, after it ended early when a member of the target was lost
// (pgbench ends its clients on a lost connection and never reconnects).
type Restarts struct {
	// Runs is how many times the tool was started, the first included;
	// a start that found no server to connect to counts.
	Runs int `json:"runs"`
	// EndedSeconds is when the first run ended, from the tool's start.
	EndedSeconds float64 `json:"endedSeconds"`
	// ResumedSeconds is when the last run started; Resumed says whether
	// it ran to the tool's end (exit code 0).
	ResumedSeconds float64 `json:"resumedSeconds"`
	Resumed        bool    `json:"resumed"`
}

// Progress is a measurement's counted series at the resolution they were
// counted at, before TimeSeries was coarsened to fit its budget: a stall
// shorter than a coarsened point would not show in it.
type Progress struct {
	// Interval is the length of each value's interval, from the start of
	// the measurement; the last interval ends at EndSeconds.
	Interval   time.Duration
	EndSeconds float64
	// Rates are each series key's per-second rates, one per interval.
	Rates map[string][]float64
}

// New returns an empty, successful result for a tool.
func New(tool string) *Result {
	return &Result{SchemaVersion: SchemaVersion, Tool: tool, Verdict: Succeeded, Metrics: []Metric{}}
}

// Fail marks the result failed with a reason.
func (r *Result) Fail(format string, args ...any) {
	r.Verdict = Failed
	r.addReason(fmt.Sprintf(format, args...))
}

// Invalidate marks the result untrusted with a reason, unless it already failed.
func (r *Result) Invalidate(format string, args ...any) {
	if r.Verdict != Failed {
		r.Verdict = Invalid
	}
	r.addReason(fmt.Sprintf(format, args...))
}

func (r *Result) addReason(reason string) {
	for _, have := range r.Reasons {
		if have == reason {
			return
		}
	}
	r.Reasons = append(r.Reasons, reason)
}

// Add appends a metric.
func (r *Result) Add(m Metric) { r.Metrics = append(r.Metrics, m) }

// Get returns the metric with a key.
func (r *Result) Get(k Key) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Key() == k {
			return m, true
		}
	}
	return Metric{}, false
}

// SetParam records a setting the tool reported.
func (r *Result) SetParam(name, value string) {
	if r.Parameters == nil {
		r.Parameters = map[string]string{}
	}
	r.Parameters[name] = value
}

// Headline returns the metrics that are not Detail, primary first, in a
// stable order.
func (r *Result) Headline() []Metric {
	var out []Metric
	for _, m := range r.Metrics {
		if !m.Detail {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Key() == r.Primary && out[j].Key() != r.Primary
	})
	return out
}
