package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CleanupPolicy says when the operator deletes the target and the workload
// Jobs of a finished run. The results ConfigMap is kept in every case; it
// goes with the run.
// +kubebuilder:validation:Enum=Always;OnSuccess;Never
type CleanupPolicy string

// MaxMeasurements bounds the measurements of one run: the steps of its
// sweep times its repetitions (docs/api-conventions.md says why 1000).
const MaxMeasurements = 1000

const (
	CleanupAlways    CleanupPolicy = "Always"
	CleanupOnSuccess CleanupPolicy = "OnSuccess"
	CleanupNever     CleanupPolicy = "Never"
)

// +kubebuilder:validation:XValidation:rule="!has(self.workload.hammerdb) || !has(self.target.mysql) || self.workload.hammerdb.database == 'mysql'",message="workload.hammerdb.database must be mysql for a mysql target"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.hammerdb) || !has(self.target.postgres) || self.workload.hammerdb.database == 'postgres'",message="workload.hammerdb.database must be postgres for a postgres target"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.hammerdb) || !(has(self.target.valkey) || has(self.target.mongodb) || has(self.target.opensearch) || has(self.target.clickhouse))",message="hammerdb needs a postgres, mysql or external target"
// +kubebuilder:validation:XValidation:rule="!has(self.workload.custom) || !has(self.workload.custom.database) || has(self.target.external) || (has(self.target.postgres) && self.workload.custom.database == 'postgres') || (has(self.target.mysql) && self.workload.custom.database == 'mysql') || (has(self.target.valkey) && self.workload.custom.database == 'valkey') || (has(self.target.mongodb) && self.workload.custom.database == 'mongodb') || (has(self.target.opensearch) && self.workload.custom.database == 'opensearch')",message="workload.custom.database must be the target's kind (or the target external)"
// +kubebuilder:validation:XValidation:rule="(has(self.repetitions) ? self.repetitions : 1) * (has(self.workload.pgbench) ? size(self.workload.pgbench.clients) : has(self.workload.memtier) ? (has(self.workload.memtier.threads) ? size(self.workload.memtier.threads) : 1) * (has(self.workload.memtier.pipeline) ? size(self.workload.memtier.pipeline) : 1) : has(self.workload.redisBenchmark) ? (has(self.workload.redisBenchmark.clients) ? size(self.workload.redisBenchmark.clients) : 1) * (has(self.workload.redisBenchmark.pipeline) ? size(self.workload.redisBenchmark.pipeline) : 1) : has(self.workload.ycsb) && has(self.workload.ycsb.threads) ? size(self.workload.ycsb.threads) : has(self.workload.k6) && has(self.workload.k6.vus) ? size(self.workload.k6.vus) : has(self.workload.osb) && has(self.workload.osb.clients) ? size(self.workload.osb.clients) : has(self.workload.hammerdb) ? size(self.workload.hammerdb.virtualUsers) : has(self.workload.custom) && has(self.workload.custom.parameters) ? (size(self.workload.custom.parameters) > 0 ? size(self.workload.custom.parameters[0].values) : 1) * (size(self.workload.custom.parameters) > 1 ? size(self.workload.custom.parameters[1].values) : 1) * (size(self.workload.custom.parameters) > 2 ? size(self.workload.custom.parameters[2].values) : 1) * (size(self.workload.custom.parameters) > 3 ? size(self.workload.custom.parameters[3].values) : 1) : 1) <= 1000",message="a run makes at most 1000 measurements (MaxMeasurements): repetitions times the steps of the workload's sweep, which are the product of the lengths of its swept lists (pgbench.clients; memtier.threads × memtier.pipeline; redisBenchmark.clients × redisBenchmark.pipeline; ycsb.threads; k6.vus; osb.clients; hammerdb.virtualUsers; the values of every custom.parameters)"
// BenchmarkRunSpec describes one benchmark: the database under test, the load
// tool, where each runs, and how often the measurement is repeated.
type BenchmarkRunSpec struct {
	// Target is the database under test.
	Target TargetSpec `json:"target"`

	// Workload is the load tool and its parameters.
	Workload WorkloadSpec `json:"workload"`

	// Repetitions is how many times each step is measured. Steps are run
	// repetition-major (all steps once, then all steps again) so that slow
	// drift of the platform spreads over every step instead of biasing one.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`

	// Timeout bounds the whole run, from the first reconcile to the last
	// result. A run past it fails with reason Timeout and keeps what it measured.
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s')",message="must be a positive duration such as 30m or 2h"
	// +kubebuilder:default="2h"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Cleanup says when the target and the workload Jobs are deleted after
	// the run ends.
	// +kubebuilder:default=Always
	// +optional
	Cleanup CleanupPolicy `json:"cleanup,omitempty"`

	// AllowSharedNodes lets the run start while another run's target or
	// load generators may land on the same nodes. Off by default: a run
	// waits in phase Queued until no active run can share a node with it,
	// because interference between concurrent runs silently ruins comparisons.
	// +optional
	AllowSharedNodes bool `json:"allowSharedNodes,omitempty"`

	// Validity holds the thresholds past which a measurement is not trusted.
	// +optional
	Validity ValiditySpec `json:"validity,omitempty"`

	// Telemetry says what is recorded of the servers' side of every
	// measurement, beside what the tool measured: see TelemetrySpec.
	// +optional
	Telemetry TelemetrySpec `json:"telemetry,omitempty"`

	// APDEX asks for the Application Performance Index of operations:
	// for a target time T, (requests within T + half of those within 4T)
	// / all, from each measurement's latency histogram (memtier, YCSB,
	// and tools whose generators' histograms are merged), as the metric
	// apdex of the operation, higher is better. An operation the tool gave
	// no histogram of gets a warning, never an approximation.
	// +listType=map
	// +listMapKey=operation
	// +kubebuilder:validation:MaxItems=100
	// +optional
	APDEX []APDEXTarget `json:"apdex,omitempty"`
}

// APDEXTarget is the target time of one operation's APDEX.
type APDEXTarget struct {
	// Operation as the tool names it (GET, READ, UPDATE, Totals); "*" for
	// every operation with a latency histogram (a named one overrides it).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Operation string `json:"operation"`

	// Target is T: a request within T satisfies, within 4T tolerates.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1us') && duration(self) <= duration('1h')",message="must be between 1us and 1h"
	Target metav1.Duration `json:"target"`
}

// TelemetryMode turns one kind of telemetry on or off.
// +kubebuilder:validation:Enum=Enabled;Disabled
type TelemetryMode string

const (
	TelemetryEnabled  TelemetryMode = "Enabled"
	TelemetryDisabled TelemetryMode = "Disabled"
)

// TelemetrySpec is what the operator records of the servers' side of each
// measurement window (each step × repetition, from the start barrier to the
// tool's end; the prepare step too). Figures land in the results beside the
// tool's metrics, each with its unit, direction and subject (the operation
// "server", "target", "target/<pod>", "loadgen/<pod>", "node/<name>"), and
// series at 1-60 s resolution in the results ConfigMap.
type TelemetrySpec struct {
	// ServerStatistics: Enabled (the default) makes the first load
	// generator poll the target database's own statistics while the tool
	// runs, with the run's credentials (PostgreSQL pg_stat_database and
	// pg_stat_activity, MySQL/MariaDB SHOW GLOBAL STATUS, Valkey/Redis INFO,
	// whose used_cpu is the server's CPU even on a managed endpoint), when
	// the workload speaks one of those protocols. One short statement per
	// poll over one connection of its own. Disabled does not poll.
	// +kubebuilder:default=Enabled
	// +optional
	ServerStatistics TelemetryMode `json:"serverStatistics,omitempty"`

	// PollInterval is the time between polls of the server's statistics:
	// the resolution of their series.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('1m')",message="must be between 1s and 1m"
	// +kubebuilder:default="5s"
	// +optional
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`
}

// ValiditySpec holds the thresholds that decide whether a measurement can be
// trusted. A run that breaks one is marked Invalid, and keeps its numbers.
type ValiditySpec struct {
	// MaxLoadGeneratorCPUPercent is the highest CPU use of a load-generator
	// container, as a percent of the CPU it may use, at which its numbers are
	// still trusted. A saturated load generator measures itself, not the target.
	// +kubebuilder:validation:XValidation:rule="self >= 1.0",message="must be between 1 and 100"
	// +kubebuilder:default=90
	// +optional
	MaxLoadGeneratorCPUPercent Percent `json:"maxLoadGeneratorCPUPercent,omitempty"`

	// MaxErrorPercent is the highest share of failed requests or
	// transactions, in percent (0.5 for one in 200), that a trusted
	// measurement may have. The default 0 makes any error response
	// invalidate the repetition.
	// +optional
	MaxErrorPercent Percent `json:"maxErrorPercent,omitempty"`

	// MaxTargetCPUPercent is the highest CPU use of the target, in percent
	// of its CPU limit (the sum over its pods), at which a measurement is
	// still trusted: a latency comparison must not saturate the database,
	// while a capacity test may want to. The target's CPU comes from a
	// resource telemetry source, else from the server's own statistics
	// (Valkey/Redis). Zero (the default) does not judge it.
	// +optional
	MaxTargetCPUPercent Percent `json:"maxTargetCPUPercent,omitempty"`

	// MaxTargetMemoryPercent is the highest working set of a target pod,
	// in percent of its memory limit, at which a measurement is still
	// trusted: near its limit a server is reclaiming caches or about to be
	// OOM-killed. Judged when a resource telemetry source measured the
	// pods and they have a memory limit. Zero (the default) does not
	// judge it.
	// +optional
	MaxTargetMemoryPercent Percent `json:"maxTargetMemoryPercent,omitempty"`

	// MaxStall is the longest a measurement's throughput may stay below
	// stallPercent of its median, in the tool's own progress series
	// (pgbench --progress, YCSB's status lines, memtier's per-second
	// statistics, HammerDB's transaction counter) after workload.warmup,
	// before the measurement is Invalid with when and for how long: its
	// average mixes a stopped system with a running one. Every stall is
	// reported as a warning; unset, none invalidates.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	// +optional
	MaxStall *metav1.Duration `json:"maxStall,omitempty"`

	// StallPercent is the share of a measurement's median throughput
	// below which an interval of its progress series is stalled.
	// +kubebuilder:validation:XValidation:rule="self > 0.0",message="must be above 0"
	// +kubebuilder:default=10
	// +optional
	StallPercent Percent `json:"stallPercent,omitempty"`

	// MaxDip is the longest a measurement's throughput may stay below
	// dipPercent of its median, in the same progress series after
	// workload.warmup, before the measurement is Invalid with when, for
	// how long and how deep. Every dip is reported as a warning (a dip
	// that is all stall is reported once, as a stall); unset, none
	// invalidates.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be between 1s and 24h"
	// +optional
	MaxDip *metav1.Duration `json:"maxDip,omitempty"`

	// DipPercent is the share of a measurement's median throughput below
	// which an interval of its progress series is in a dip.
	// +kubebuilder:validation:XValidation:rule="self > 0.0",message="must be above 0"
	// +kubebuilder:default=50
	// +optional
	DipPercent Percent `json:"dipPercent,omitempty"`

	// MaxDriftPercent is the largest trend a measurement's throughput may
	// show over its progress series after workload.warmup: the change of
	// its least-squares line over that window, in percent of the mean
	// (reported as the detail metric driftPercent). A drift beyond it
	// whose slope is significant (t-test, 5 %) makes the measurement
	// Invalid: the result depends on how long it ran. A significant drift
	// of 10 % or more is a warning; zero (the default) never invalidates.
	// +optional
	MaxDriftPercent Percent `json:"maxDriftPercent,omitempty"`

	// LoadGeneratorsInPrimaryZone requires every load generator to run in
	// the zone of the target's primary (the primary's pod's node label
	// topology.kubernetes.io/zone): a measurement with a load generator
	// elsewhere is Invalid, naming both zones, since the zone boundary
	// adds latency that hides what is compared. Off (the default): the
	// zones are recorded, not judged.
	// +optional
	LoadGeneratorsInPrimaryZone bool `json:"loadGeneratorsInPrimaryZone,omitempty"`

	// MaxCoefficientOfVariationPercent marks a step unstable when the
	// run-to-run variation of its primary metric is above it (needs at
	// least two repetitions). Zero disables the check.
	// +optional
	MaxCoefficientOfVariationPercent Percent `json:"maxCoefficientOfVariationPercent,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=benchrun;benchruns,categories=dbperf
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.target.kind`
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.status.workload`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`,priority=1
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.primary.display`
// +kubebuilder:printcolumn:name="Target CPU",type=number,JSONPath=`.status.primary.targetCPUCores`
// +kubebuilder:printcolumn:name="Valid",type=string,JSONPath=`.status.conditions[?(@.type=="Valid")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// BenchmarkRun brings up a database, runs a load tool against it and records
// trustworthy results in its status and in the ConfigMap `<name>-results`.
type BenchmarkRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec cannot change once created: a run is a record of one measurement.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: create a new BenchmarkRun instead"
	Spec   BenchmarkRunSpec   `json:"spec"`
	Status BenchmarkRunStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BenchmarkRunList is a list of BenchmarkRuns.
type BenchmarkRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkRun{}, &BenchmarkRunList{})
}
