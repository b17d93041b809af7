package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomWorkload runs a load tool dbperf does not ship ("bring your own
// tool": an application's test harness, sysbench, a psql script). Its
// command runs in the image spec.workload.image names (required with
// custom: there is no default image), through dbperf-runner like every
// tool, and prints its results in one of the formats of
// docs/workloads/custom.md, which the runner validates. The target comes
// as DBPERF_TARGET_HOST, DBPERF_TARGET_PORT, DBPERF_TARGET_DATABASE,
// DBPERF_TARGET_USERNAME and DBPERF_TARGET_PASSWORD (from the target's
// Secret), DBPERF_TARGET_TLS and, with TLS, DBPERF_TARGET_CA_FILE,
// DBPERF_TARGET_CERT_FILE, DBPERF_TARGET_KEY_FILE and
// DBPERF_TARGET_SERVER_NAME.
// +kubebuilder:validation:XValidation:rule=`self.command.all(a, !a.replace((has(self.parameters) && size(self.parameters) > 0) ? '\x7b\x7b' + self.parameters[0].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 0) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 1) ? '\x7b\x7b' + self.parameters[1].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 1) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 2) ? '\x7b\x7b' + self.parameters[2].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 2) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 3) ? '\x7b\x7b' + self.parameters[3].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 3) ? "" : '\x7b\x7b').contains('\x7b\x7b'))`,fieldPath=".command",message="unknown placeholder: every double curly brace must begin one of parameters' placeholders (the parameter's name in double curly braces)"
// +kubebuilder:validation:XValidation:rule=`!has(self.args) || self.args.all(a, !a.replace((has(self.parameters) && size(self.parameters) > 0) ? '\x7b\x7b' + self.parameters[0].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 0) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 1) ? '\x7b\x7b' + self.parameters[1].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 1) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 2) ? '\x7b\x7b' + self.parameters[2].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 2) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 3) ? '\x7b\x7b' + self.parameters[3].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 3) ? "" : '\x7b\x7b').contains('\x7b\x7b'))`,fieldPath=".args",message="unknown placeholder: every double curly brace must begin one of parameters' placeholders (the parameter's name in double curly braces)"
// +kubebuilder:validation:XValidation:rule=`!has(self.env) || self.env.all(e, !has(e.value) || !e.value.replace((has(self.parameters) && size(self.parameters) > 0) ? '\x7b\x7b' + self.parameters[0].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 0) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 1) ? '\x7b\x7b' + self.parameters[1].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 1) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 2) ? '\x7b\x7b' + self.parameters[2].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 2) ? "" : '\x7b\x7b').replace((has(self.parameters) && size(self.parameters) > 3) ? '\x7b\x7b' + self.parameters[3].name + '\x7d\x7d' : '\x7b\x7b', (has(self.parameters) && size(self.parameters) > 3) ? "" : '\x7b\x7b').contains('\x7b\x7b'))`,fieldPath=".env",message="unknown placeholder: every double curly brace must begin one of parameters' placeholders (the parameter's name in double curly braces)"
// +kubebuilder:validation:XValidation:rule="!has(self.parameters) || (size(self.parameters) > 0 ? size(self.parameters[0].values) : 1) * (size(self.parameters) > 1 ? size(self.parameters[1].values) : 1) * (size(self.parameters) > 2 ? size(self.parameters[2].values) : 1) * (size(self.parameters) > 3 ? size(self.parameters[3].values) : 1) <= 256",fieldPath=".parameters",message="at most 256 steps: the product of the numbers of values of the parameters"
type CustomWorkload struct {
	// Command runs one measurement (a step of the sweep), such as
	// ["sysbench", "oltp_read_only"]. A placeholder, the name of one of
	// parameters in double curly braces, is replaced by the step's value
	// of that parameter (docs/workloads/custom.md).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=1024
	Command []string `json:"command"`

	// Args follow Command; placeholders are replaced as in Command.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	// +optional
	Args []string `json:"args,omitempty"`

	// Prepare runs once before the measurements (a schema, a data load),
	// in the same image and environment; it is judged by its exit code.
	// spec.workload.skipPrepare skips it.
	// +optional
	Prepare *CustomPrepare `json:"prepare,omitempty"`

	// Env are further variables of the command, plain values only (the
	// target's credentials come as DBPERF_TARGET_USERNAME and
	// DBPERF_TARGET_PASSWORD), in order after the operator's: references
	// such as $(DBPERF_TARGET_HOST) to earlier variables are expanded by
	// the kubelet. Placeholders are replaced as in Command.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Env []CustomEnvVar `json:"env,omitempty"`

	// Parameters are the sweep: one step per combination of their values
	// (the first parameter varying slowest), each value substituted for
	// the parameter's placeholder in command, args and env.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=4
	// +optional
	Parameters []CustomParameter `json:"parameters,omitempty"`

	// Duration the tool is asked to measure for, in whole seconds: it
	// comes as DBPERF_DURATION_SECONDS. The tool decides when it stops;
	// unset, the variable is not set.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h') && duration(self).getMilliseconds() % 1000 == 0",message="must be whole seconds between 1s and 24h, such as 60s or 5m"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Format of the results the tool prints (docs/workloads/custom.md):
	// ResultJSON (dbperf's result document), Lines (dbperf-lines v1) or
	// OpenMetrics (the text exposition format).
	Format CustomResultFormat `json:"format"`

	// ResultFile is the name of the file, in the directory
	// DBPERF_OUTPUT_DIR names, that the tool writes its results to (it
	// comes as DBPERF_RESULT_FILE); unset, the results are read from the
	// tool's output (stdout and stderr).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-][a-zA-Z0-9._-]{0,127}$`
	// +optional
	ResultFile string `json:"resultFile,omitempty"`

	// PrimaryMetric is the headline number of each measurement, which
	// comparisons and schedules judge first; it must be in the results,
	// with a direction.
	PrimaryMetric CustomMetricKey `json:"primaryMetric"`

	// Metrics declare the unit and direction of metrics the results do
	// not describe, or describe otherwise (a declaration wins). A metric
	// whose unit is neither given, declared nor told by its name
	// (…Millis, …PerSecond, …Percent, …Bytes; _seconds, _bytes in
	// OpenMetrics) makes the measurement Invalid.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Metrics []CustomMetric `json:"metrics,omitempty"`

	// LatencyFromIntendedStart says that the tool, at a fixed offered rate
	// (a capacity run's rate levels, given as the parameter named rate),
	// measures each request's latency from when its schedule meant it to
	// start, not from when it was sent (it is corrected for coordinated
	// omission). Unset, a latency rule over its rate levels is a warning.
	// +optional
	LatencyFromIntendedStart bool `json:"latencyFromIntendedStart,omitempty"`

	// Database is the kind of database the tool drives, spelled as the
	// target kinds are: with it, dbperf-runner polls the server's own
	// statistics while the tool runs (telemetry.serverStatistics), as for
	// the built-in tools. Unset: none are polled.
	// +optional
	Database CustomDatabase `json:"database,omitempty"`
}

// CustomPrepare is the one-off step of a custom workload before its
// measurements. It cannot use the sweep's placeholders: it runs once for
// every step.
// +kubebuilder:validation:XValidation:rule=`self.command.all(a, !a.contains('\x7b\x7b')) && (!has(self.args) || self.args.all(a, !a.contains('\x7b\x7b')))`,message="prepare runs once, before every step: its command and args cannot hold the sweep's placeholders"
type CustomPrepare struct {
	// Command of the prepare step, such as ["psql", "-f", "/schema.sql"].
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=1024
	Command []string `json:"command"`
	// Args follow Command.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	// +optional
	Args []string `json:"args,omitempty"`
}

// CustomEnvVar is one variable of a custom tool's environment.
type CustomEnvVar struct {
	// Name of the variable; DBPERF_ variables are the operator's.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('DBPERF_')",message="DBPERF_ variables are set by the operator"
	Name string `json:"name"`
	// Value, a plain one.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Value string `json:"value,omitempty"`
}

// CustomParameter is one swept parameter of a custom workload.
type CustomParameter struct {
	// Name of the parameter; its placeholder is the name in double curly
	// braces.
	// +kubebuilder:validation:Pattern=`^[a-z][a-zA-Z0-9]{0,31}$`
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`
	// Values, one step each, in order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=0
	// +kubebuilder:validation:items:Maximum=1000000000
	Values []int32 `json:"values"`
}

// CustomMetricKey names one metric of a custom tool's results.
type CustomMetricKey struct {
	// Name of the metric as the results spell it, such as opsPerSecond.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_:][a-zA-Z0-9_:.]{0,127}$`
	Name string `json:"name"`
	// Operation the metric is about, such as select; unset: the whole run.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Operation string `json:"operation,omitempty"`
}

// CustomMetric declares the unit and direction of one metric of a custom
// tool's results (every operation of it).
// +kubebuilder:validation:XValidation:rule="has(self.unit) || has(self.direction)",message="a declaration gives a unit, a direction or both"
type CustomMetric struct {
	// Name of the metric as the results spell it.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_:][a-zA-Z0-9_:.]{0,127}$`
	Name string `json:"name"`
	// Unit of its values, such as ms, ops/s, rows or bytes.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z%/µ_.-]{1,32}$`
	// +optional
	Unit string `json:"unit,omitempty"`
	// Direction says which way the metric improves.
	// +optional
	Direction Direction `json:"direction,omitempty"`
}

// CustomResultFormat is the format of a custom tool's results.
// +kubebuilder:validation:Enum=ResultJSON;Lines;OpenMetrics
type CustomResultFormat string

const (
	// CustomResultJSON is dbperf's normalized result document (its
	// schemaVersion checked).
	CustomResultJSON CustomResultFormat = "ResultJSON"
	// CustomLines is dbperf-lines v1: one record per line, after the
	// line "# dbperf-lines v1".
	CustomLines CustomResultFormat = "Lines"
	// CustomOpenMetrics is the OpenMetrics text format (or the Prometheus
	// text format it extends).
	CustomOpenMetrics CustomResultFormat = "OpenMetrics"
)

// CustomDatabase is the kind of database a custom tool drives, spelled as
// the target kinds are.
// +kubebuilder:validation:Enum=postgres;mysql;valkey;mongodb;opensearch
type CustomDatabase string

const (
	CustomPostgres   CustomDatabase = "postgres"
	CustomMySQL      CustomDatabase = "mysql"
	CustomValkey     CustomDatabase = "valkey"
	CustomMongoDB    CustomDatabase = "mongodb"
	CustomOpenSearch CustomDatabase = "opensearch"
)
