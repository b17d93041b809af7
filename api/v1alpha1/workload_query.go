package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// QueryDriver is the client protocol of the query workload.
// +kubebuilder:validation:Enum=clickhouse;postgres;mysql
type QueryDriver string

const (
	// QueryDriverClickHouse uses ClickHouse's HTTP interface.
	QueryDriverClickHouse QueryDriver = "clickhouse"
	// QueryDriverPostgres uses the PostgreSQL wire protocol.
	QueryDriverPostgres QueryDriver = "postgres"
	// QueryDriverMySQL uses the MySQL wire protocol.
	QueryDriverMySQL QueryDriver = "mysql"
)

// QueryWorkload times SQL queries one by one, as analytical benchmarks
// do (the Star Schema Benchmark's 13 queries, ClickBench's queries.sql):
// each query runs runsPerQuery times in a row on one connection, and its
// time is an operation's metric (lower is better). The first run of each
// query is reported apart from the rest (cold versus hot); a failed run
// is counted and named, never dropped. The measurement's headline is the
// geometric mean of the queries' hot times (ClickBench's figure). The
// client is built into dbperf-runner: no tool image is needed.
// +kubebuilder:validation:XValidation:rule="has(self.queries) != has(self.queriesConfigMap)",message="exactly one of queries or queriesConfigMap must be set"
type QueryWorkload struct {
	// Driver is how the client talks to the target.
	Driver QueryDriver `json:"driver"`

	// Database the queries run in; empty: the target's.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Database string `json:"database,omitempty"`

	// Queries inline, in the order they run.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=500
	// +optional
	Queries []NamedQuery `json:"queries,omitempty"`

	// QueriesConfigMap names a ConfigMap key holding the queries, one
	// statement per query ended by a semicolon (ClickBench's queries.sql
	// has one per line). A comment line `-- name: Q1.1` before a
	// statement names it; unnamed queries are Q1, Q2, … by position.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the ConfigMap"
	QueriesConfigMap *corev1.ConfigMapKeySelector `json:"queriesConfigMap,omitempty"`

	// RunsPerQuery is how many times each query runs in a row (ClickBench: 3).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=3
	// +optional
	RunsPerQuery int32 `json:"runsPerQuery,omitempty"`

	// QueryTimeout bounds one run of one query; a run past it is failed.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 10m"
	// +kubebuilder:default="10m"
	// +optional
	QueryTimeout *metav1.Duration `json:"queryTimeout,omitempty"`

	// Settings apply to every query: ClickHouse settings (sent with each
	// request), PostgreSQL run-time parameters or MySQL session variables
	// (SET at connection). Names are the server's own.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_.]{0,127}$'))",message="setting names are letters, digits, underscores and dots"
	// +optional
	Settings map[string]QuerySettingValue `json:"settings,omitempty"`

	// Prepare creates and loads the data before the measurements;
	// spec.workload.skipPrepare skips it.
	// +optional
	Prepare *QueryPrepare `json:"prepare,omitempty"`
}

// QuerySettingValue is the value of a query setting: letters, digits,
// spaces and _.:/+- only, so that it can never be read as SQL.
// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.:/+ -]{0,256}$`
// +kubebuilder:validation:MaxLength=256
type QuerySettingValue string

// NamedQuery is one timed query.
type NamedQuery struct {
	// Name of the query's operation in the results (Q1.1).
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`
	Name string `json:"name"`
	// SQL of the query: one statement.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	SQL string `json:"sql"`
}

// QueryPrepare loads the data the queries read, in this order: the
// script, the loads, then the generator.
type QueryPrepare struct {
	// Script is SQL statements ended by semicolons (CREATE TABLE …),
	// run in order through the workload's driver.
	// +kubebuilder:validation:MaxLength=262144
	// +optional
	Script string `json:"script,omitempty"`

	// ScriptConfigMap names a ConfigMap key holding such a script; it runs
	// after Script.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the ConfigMap"
	ScriptConfigMap *corev1.ConfigMapKeySelector `json:"scriptConfigMap,omitempty"`

	// Loads insert files into tables.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Loads []QueryLoad `json:"loads,omitempty"`

	// Command generates and loads data itself (a generator such as
	// dbgen piped into a client) in the workload's image, with the
	// target's address and credentials in DBPERF_TARGET_* variables as
	// the custom workload has them; judged by its exit code.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=4096
	// +optional
	Command []string `json:"command,omitempty"`
}

// QueryLoadFormat is the format of a file loaded into a table.
// +kubebuilder:validation:Enum=CSV;TSV
type QueryLoadFormat string

const (
	QueryLoadCSV QueryLoadFormat = "CSV"
	QueryLoadTSV QueryLoadFormat = "TSV"
)

// QueryLoad inserts one file into one table: from a URL the load
// generator downloads (plain or gzip-compressed, by the .gz suffix), or
// from a path in a PersistentVolumeClaim.
// +kubebuilder:validation:XValidation:rule="has(self.url) != has(self.claim)",message="exactly one of url or claim must be set"
type QueryLoad struct {
	// Table the rows go into; it must exist (create it in script).
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_.]{0,127}$`
	Table string `json:"table"`
	// Format of the file.
	// +kubebuilder:default=CSV
	// +optional
	Format QueryLoadFormat `json:"format,omitempty"`
	// URL of the file (http or https).
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	URL string `json:"url,omitempty"`
	// Claim is a file in a PersistentVolumeClaim of the run's namespace,
	// mounted read-only.
	// +optional
	Claim *QueryLoadClaim `json:"claim,omitempty"`
}

// QueryLoadClaim is a file in a PersistentVolumeClaim.
type QueryLoadClaim struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClaimName string `json:"claimName"`
	// Path of the file inside the volume.
	// +kubebuilder:validation:Pattern=`^[^/].*$`
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`
}
