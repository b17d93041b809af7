package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadSpec is the load tool: exactly one kind, plus the settings every
// tool shares.
// +kubebuilder:validation:XValidation:rule="[has(self.pgbench), has(self.memtier), has(self.redisBenchmark), has(self.ycsb), has(self.k6), has(self.osb), has(self.hammerdb), has(self.custom), has(self.queryBench)].filter(x, x).size() == 1",message="exactly one of pgbench, memtier, redisBenchmark, ycsb, k6, osb, hammerdb, custom or queryBench must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.custom) || (has(self.image) && size(self.image) > 0)",fieldPath=".image",message="custom needs image: the image holding the tool its command runs (custom has no default image)"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || self.parallelism == 1 || !(has(self.osb) || has(self.hammerdb) || has(self.queryBench))",message="parallelism above 1 is not possible for osb, hammerdb and queryBench: one client measures the whole run"
type WorkloadSpec struct {
	// +optional
	Pgbench *PgbenchWorkload `json:"pgbench,omitempty"`
	// +optional
	Memtier *MemtierWorkload `json:"memtier,omitempty"`
	// +optional
	RedisBenchmark *RedisBenchmarkWorkload `json:"redisBenchmark,omitempty"`
	// +optional
	YCSB *YCSBWorkload `json:"ycsb,omitempty"`
	// +optional
	K6 *K6Workload `json:"k6,omitempty"`
	// +optional
	OSB *OSBWorkload `json:"osb,omitempty"`
	// +optional
	HammerDB *HammerDBWorkload `json:"hammerdb,omitempty"`
	// +optional
	Custom *CustomWorkload `json:"custom,omitempty"`
	// +optional
	QueryBench *QueryWorkload `json:"queryBench,omitempty"`

	// Parallelism is the number of load-generator pods of each measurement.
	// They start together (a barrier: each waits until all are running,
	// then all begin at the same instant) and their results are merged:
	// throughputs add, and latency percentiles come from merged histograms
	// where the tool writes one, otherwise they are reported as upper bounds.
	// Per-pod settings (threads, clients, connections) apply to each pod;
	// k6 splits its VUs across the pods with execution segments.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	// +optional
	Parallelism int32 `json:"parallelism,omitempty"`

	// SkipPrepare skips the tool's prepare step (pgbench -i, the YCSB and
	// memtier load, HammerDB's schema build), for a target that already
	// holds the data a previous run prepared. Tools without one ignore it.
	// +optional
	SkipPrepare bool `json:"skipPrepare,omitempty"`

	// Warmup is the first part of every measurement, in the tool's own
	// progress series (pgbench --progress, YCSB's status lines, memtier's
	// per-second statistics, HammerDB's transaction counter), that the
	// stability checks (validity's stalls, dips and drift) leave out: a
	// cold cache or a JIT warming up is not a dip. When set, each
	// measurement also reports the steady-state throughput over the rest,
	// named as the series with steady before it (steadyTransactionsPerSecond,
	// steadyOpsPerSecond, HammerDB's steadyTpm), higher is better, beside
	// the primary metric, compared like any other metric. The tool's own
	// figures still cover the whole run, except where the tool leaves out
	// a ramp-up itself: HammerDB's rampUp is excluded from its NOPM and TPM,
	// and from the stability checks before this warm-up. Unset: nothing is
	// left out (no tool but HammerDB has a warm-up of its own).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="must be a duration between 0s and 24h, such as 30s or 2m"
	// +optional
	Warmup *metav1.Duration `json:"warmup,omitempty"`

	// Image overrides the tool's default (official) image; custom, which
	// has none, requires it.
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the load-generator container. Setting a CPU limit makes
	// the saturation check relative to it.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Placement is where the load-generator pods run (the loadgen pool).
	// +optional
	Placement Placement `json:"placement,omitempty"`
}

// PgbenchWorkload drives PostgreSQL with pgbench.
// +kubebuilder:validation:XValidation:rule="!has(self.jobs) || self.clients.all(c, c >= self.jobs)",message="jobs must not exceed any clients value"
type PgbenchWorkload struct {
	// Scale is the pgbench scale factor used by the init step (-s).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:default=10
	// +optional
	Scale int32 `json:"scale,omitempty"`

	// Clients is swept: each value is one step (-c).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	Clients []int32 `json:"clients"`

	// Jobs is the number of pgbench worker threads (-j).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +optional
	Jobs *int32 `json:"jobs,omitempty"`

	// Duration of each measurement (-T).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 5m"
	Duration metav1.Duration `json:"duration"`

	// BuiltinScript selects a built-in script (-b); ignored with Script.
	// +kubebuilder:validation:Enum=tpcb-like;simple-update;select-only
	// +kubebuilder:default=tpcb-like
	// +optional
	BuiltinScript string `json:"builtinScript,omitempty"`

	// Script is a custom pgbench script (-f); it replaces BuiltinScript.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Script string `json:"script,omitempty"`

	// Protocol is the query protocol (-M).
	// +kubebuilder:validation:Enum=simple;extended;prepared
	// +kubebuilder:default=simple
	// +optional
	Protocol string `json:"protocol,omitempty"`

	// RateLimitPerSecond limits the transactions per second (-R); absent
	// means as fast as possible.
	// +kubebuilder:validation:Minimum=1
	// +optional
	RateLimitPerSecond *int32 `json:"rateLimitPerSecond,omitempty"`

	// ProgressInterval prints progress this often (-P, whole seconds): the
	// time series of the run; 0s turns it off.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('1h') && duration(self).getMilliseconds() % 1000 == 0",message="must be whole seconds between 0s and 1h, such as 5s"
	// +kubebuilder:default="5s"
	// +optional
	ProgressInterval *metav1.Duration `json:"progressInterval,omitempty"`

	// PerStatementLatencies reports the latency of each statement (-r).
	// +kubebuilder:default=true
	// +optional
	PerStatementLatencies *bool `json:"perStatementLatencies,omitempty"`
}

// MemtierWorkload drives a Redis-compatible server with memtier_benchmark.
type MemtierWorkload struct {
	// Protocol spoken to the server.
	// +kubebuilder:validation:Enum=redis;resp2;resp3;memcache_text;memcache_binary
	// +kubebuilder:default=redis
	// +optional
	Protocol string `json:"protocol,omitempty"`

	// Ratio of SET to GET requests, such as "1:10".
	// +kubebuilder:validation:Pattern=`^[0-9]+:[0-9]+$`
	// +kubebuilder:default="1:10"
	// +optional
	Ratio string `json:"ratio,omitempty"`

	// KeyPattern for SET:GET, such as "R:R" or "G:G".
	// +kubebuilder:validation:Pattern=`^[RSGP]:[RSGP]$`
	// +kubebuilder:default="R:R"
	// +optional
	KeyPattern string `json:"keyPattern,omitempty"`

	// KeyMinimum and KeyMaximum bound the key range (memtier refuses 0).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	KeyMinimum int64 `json:"keyMinimum,omitempty"`
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1000000
	// +optional
	KeyMaximum int64 `json:"keyMaximum,omitempty"`

	// DataSizeBytes of each value (--data-size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=67108864
	// +kubebuilder:default=32
	// +optional
	DataSizeBytes int32 `json:"dataSizeBytes,omitempty"`

	// Threads is swept: each value is one step (-t).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=256
	// +kubebuilder:default={4}
	// +optional
	Threads []int32 `json:"threads,omitempty"`

	// Clients per thread (-c).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=50
	// +optional
	Clients int32 `json:"clients,omitempty"`

	// Pipeline depth is swept: each value is one step.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:default={1}
	// +optional
	Pipeline []int32 `json:"pipeline,omitempty"`

	// Duration of each measurement (--test-time).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 5m"
	Duration metav1.Duration `json:"duration"`

	// Commands replace the SET/GET mix by arbitrary commands, such as
	// "INCR __key__" (--command); each gets its own row of results.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Commands []MemtierCommand `json:"commands,omitempty"`
}

// MemtierCommand is one custom command of a memtier run.
type MemtierCommand struct {
	// Command line with __key__ and __data__ placeholders.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Command string `json:"command"`
	// Ratio weight of this command.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	Ratio int32 `json:"ratio,omitempty"`
	// KeyPattern of this command: R, S, G or P.
	// +kubebuilder:validation:Enum=R;S;G;P
	// +kubebuilder:default=R
	// +optional
	KeyPattern string `json:"keyPattern,omitempty"`
}

// RedisBenchmarkWorkload drives a Redis-compatible server with redis-benchmark
// (or valkey-benchmark), which ships inside the server images.
type RedisBenchmarkWorkload struct {
	// Tests to run (-t), such as ["set", "get"].
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[a-zA-Z_,:-]+$`
	// +kubebuilder:default={"set","get"}
	// +optional
	Tests []string `json:"tests,omitempty"`

	// Requests per test (-n).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=100000
	// +optional
	Requests int64 `json:"requests,omitempty"`

	// Clients is swept: each value is one step (-c).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:default={50}
	// +optional
	Clients []int32 `json:"clients,omitempty"`

	// Pipeline depth is swept: each value is one step (-P).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:default={1}
	// +optional
	Pipeline []int32 `json:"pipeline,omitempty"`

	// DataSizeBytes of SET values (-d).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=536870912
	// +kubebuilder:default=3
	// +optional
	DataSizeBytes int32 `json:"dataSizeBytes,omitempty"`

	// KeySpace makes keys random in [0, KeySpace) (-r); 0 uses one key.
	// +kubebuilder:validation:Minimum=0
	// +optional
	KeySpace int64 `json:"keySpace,omitempty"`

	// Threads of the benchmark client (--threads); 0 keeps it single-threaded.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	// +optional
	Threads int32 `json:"threads,omitempty"`
}

// YCSBWorkload drives a key-value or document store with the YCSB client.
// +kubebuilder:validation:XValidation:rule="has(self.coreWorkload) || has(self.properties)",message="set coreWorkload (a-f) or properties (a custom property set)"
type YCSBWorkload struct {
	// Binding is the YCSB database binding: mongodb, redis, jdbc, or basic
	// (BasicDB: the client loop without a database, to measure the client).
	// +kubebuilder:validation:Enum=mongodb;redis;jdbc;basic
	Binding string `json:"binding"`

	// CoreWorkload is one of YCSB's core workloads: a (50/50 read/update),
	// b (95/5), c (read only), d (read latest), e (short scans), f
	// (read-modify-write).
	// +kubebuilder:validation:Enum=a;b;c;d;e;f
	// +optional
	CoreWorkload string `json:"coreWorkload,omitempty"`

	// Properties are passed as -p key=value after the core workload, so they
	// extend or override it (a custom property set without workload).
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Properties map[string]string `json:"properties,omitempty"`

	// RecordCount is the number of records the load step inserts.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1000000
	// +optional
	RecordCount int64 `json:"recordCount,omitempty"`

	// OperationCount is the number of operations of each run step.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=5000000
	// +optional
	OperationCount int64 `json:"operationCount,omitempty"`

	// Threads is swept: each value is one step (-threads).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=4096
	// +kubebuilder:default={32}
	// +optional
	Threads []int32 `json:"threads,omitempty"`

	// LoadThreads of the load step.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4096
	// +kubebuilder:default=32
	// +optional
	LoadThreads int32 `json:"loadThreads,omitempty"`

	// TargetOpsPerSecond is the throughput the client aims at (-target);
	// 0 means as fast as possible.
	// +kubebuilder:validation:Minimum=0
	// +optional
	TargetOpsPerSecond int64 `json:"targetOpsPerSecond,omitempty"`

	// MaxExecutionTime stops a run step after this long, in whole seconds
	// (maxexecutiontime).
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h') && duration(self).getMilliseconds() % 1000 == 0",message="must be whole seconds between 1s and 24h, such as 60s or 5m"
	// +optional
	MaxExecutionTime *metav1.Duration `json:"maxExecutionTime,omitempty"`

	// Percentiles reported besides 95 and 99 (hdrhistogram.percentiles),
	// such as ["50", "99.9"].
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Pattern=`^[0-9]{1,2}([.][0-9]{1,3})?$`
	// +optional
	Percentiles []string `json:"percentiles,omitempty"`
}

// K6Workload runs a Grafana k6 script.
// +kubebuilder:validation:XValidation:rule="has(self.script) != has(self.scriptConfigMap)",message="exactly one of script or scriptConfigMap must be set"
type K6Workload struct {
	// ScriptConfigMap names the ConfigMap key holding the test script.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="must name the ConfigMap"
	ScriptConfigMap *corev1.ConfigMapKeySelector `json:"scriptConfigMap,omitempty"`
	// Script is the test script inline, for short scripts.
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Script string `json:"script,omitempty"`
	// VUs is swept (--vus): each value is one step; empty: the script's options.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=100000
	// +optional
	VUs []int32 `json:"vus,omitempty"`
	// Duration (--duration); empty: the script's options.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="must be a duration between 1s and 24h, such as 60s or 5m"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// Env is passed to the script as -e NAME=VALUE (__ENV); the target's
	// host and port come as DBPERF_TARGET_HOST and DBPERF_TARGET_PORT, its
	// credentials as DBPERF_TARGET_USERNAME and DBPERF_TARGET_PASSWORD.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Env map[string]string `json:"env,omitempty"`
	// Args are extra arguments of `k6 run`, before the script.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Args []string `json:"args,omitempty"`
	// Metrics declare the unit and direction of the script's custom
	// metrics (Trend, Counter, Rate, Gauge), which k6 cannot tell. Without
	// a declaration a time Trend is a latency (ms, LowerIsBetter) and a
	// Rate or Counter whose name says failure or error is LowerIsBetter,
	// success, ok or pass HigherIsBetter; any other is Neutral, never
	// judged, with a warning.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Metrics []K6Metric `json:"metrics,omitempty"`
}

// K6Metric is the unit and direction of one custom metric of a k6 script.
type K6Metric struct {
	// Name of the metric as the script creates it (new Trend('name')).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z_][a-zA-Z0-9_]{0,127}$`
	Name string `json:"name"`
	// Unit of its values, such as items or bytes (a time Trend is in ms).
	// +kubebuilder:validation:Pattern=`^[a-zA-Z%/µ_.-]{0,32}$`
	// +optional
	Unit string `json:"unit,omitempty"`
	// Direction says which way the metric improves.
	Direction Direction `json:"direction"`
}

// OSBWorkload runs OpenSearch Benchmark against the target cluster
// (--pipeline=benchmark-only).
type OSBWorkload struct {
	// Name of the OSB workload (--workload), such as http_logs.
	// +kubebuilder:validation:Pattern=`^[a-z0-9_-]+$`
	// +kubebuilder:default=http_logs
	// +optional
	Name string `json:"name,omitempty"`
	// TestProcedure, such as append-no-conflicts-index-only.
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9_-]+$`
	// +optional
	TestProcedure string `json:"testProcedure,omitempty"`
	// IncludeTasks limits the run to these tasks (--include-tasks).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	IncludeTasks []string `json:"includeTasks,omitempty"`
	// WorkloadParams (--workload-params key:value,…).
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	WorkloadParams map[string]string `json:"workloadParams,omitempty"`
	// ClientOptions (--client-options key:value,…), besides the TLS and
	// credentials the operator sets from the target.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	ClientOptions map[string]string `json:"clientOptions,omitempty"`
	// Clients is swept: each value is one step, passed as the workload
	// parameter named by ClientsParam.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +optional
	Clients []int32 `json:"clients,omitempty"`
	// ClientsParam is the workload parameter the clients sweep sets.
	// +kubebuilder:default=bulk_indexing_clients
	// +optional
	ClientsParam string `json:"clientsParam,omitempty"`
	// CLI is the subcommand: execute-test (OSB 1.x) or run (2.x).
	// +kubebuilder:validation:Enum=execute-test;run
	// +kubebuilder:default=execute-test
	// +optional
	CLI string `json:"cli,omitempty"`
	// ResultsFormat of the results file.
	// +kubebuilder:validation:Enum=markdown;csv
	// +kubebuilder:default=markdown
	// +optional
	ResultsFormat string `json:"resultsFormat,omitempty"`
	// CorpusClaim is a PersistentVolumeClaim holding OSB's benchmark data
	// (~/.benchmark/benchmarks: data and workloads), used offline; without
	// it OSB downloads the corpus.
	// +optional
	CorpusClaim string `json:"corpusClaim,omitempty"`
}

// HammerDBWorkload runs HammerDB TPROC-C (`hammerdbcli auto <script>`) against
// PostgreSQL or MySQL. The operator writes the Tcl scripts: the schema build
// is the prepare step, and each virtual-user count is one timed step.
// +kubebuilder:validation:XValidation:rule="!has(self.buildVirtualUsers) || self.buildVirtualUsers <= self.warehouses",message="buildVirtualUsers must not exceed warehouses"
type HammerDBWorkload struct {
	// Database is the kind of database HammerDB drives, spelled as the
	// target kinds are: postgres or mysql.
	Database HammerDBDatabase `json:"database"`

	// Warehouses of the schema (count_ware).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +kubebuilder:default=1
	// +optional
	Warehouses int32 `json:"warehouses,omitempty"`

	// BuildVirtualUsers load the schema in parallel (num_vu of the build).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	// +kubebuilder:default=1
	// +optional
	BuildVirtualUsers int32 `json:"buildVirtualUsers,omitempty"`

	// VirtualUsers is swept: each value is one timed test (vuset vu).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	VirtualUsers []int32 `json:"virtualUsers"`

	// RampUp before the measured period (rampup), in whole minutes, as
	// HammerDB takes it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('10h') && duration(self).getSeconds() % 60 == 0 && duration(self).getMilliseconds() % 1000 == 0",message="must be whole minutes between 0m and 10h, such as 2m"
	// +kubebuilder:default="2m"
	// +optional
	RampUp *metav1.Duration `json:"rampUp,omitempty"`

	// Duration of the measured period (duration), in whole minutes, as
	// HammerDB takes it.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('24h') && duration(self).getSeconds() % 60 == 0 && duration(self).getMilliseconds() % 1000 == 0",message="must be whole minutes between 1m and 24h, such as 5m"
	// +kubebuilder:default="5m"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// AllWarehouses makes every virtual user use all warehouses
	// (allwarehouse), spreading I/O over the whole schema.
	// +optional
	AllWarehouses bool `json:"allWarehouses,omitempty"`

	// TimeProfile records per-transaction response times (timeprofile:
	// NEWORD, PAYMENT, DELIVERY, SLEV, OSTAT percentiles).
	// +kubebuilder:default=true
	// +optional
	TimeProfile *bool `json:"timeProfile,omitempty"`

	// KeyAndThink adds TPC-C keying and thinking time (keyandthink).
	// +optional
	KeyAndThink bool `json:"keyAndThink,omitempty"`

	// StoredProcedures uses PostgreSQL stored procedures rather than
	// functions (pg_storedprocs; PostgreSQL 11 and later).
	// +kubebuilder:default=true
	// +optional
	StoredProcedures *bool `json:"storedProcedures,omitempty"`

	// Partition partitions the order line table (partition).
	// +optional
	Partition bool `json:"partition,omitempty"`

	// SchemaDatabase is the database HammerDB builds and drives (dbase).
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +kubebuilder:default=tpcc
	// +optional
	SchemaDatabase string `json:"schemaDatabase,omitempty"`

	// SchemaUser owns the PostgreSQL schema (pg_user); HammerDB creates it
	// with the target's password. MySQL uses the target's user.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +kubebuilder:default=tpcc
	// +optional
	SchemaUser string `json:"schemaUser,omitempty"`

	// Settings are further tpcc dictionary values (diset tpcc KEY VALUE),
	// such as {"pg_vacuum": "true"}; keys carry the database prefix.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// HammerDBDatabase is the kind of database HammerDB drives.
// +kubebuilder:validation:Enum=postgres;mysql
type HammerDBDatabase string

const (
	// HammerDBPostgres drives PostgreSQL (HammerDB's "pg" plugin).
	HammerDBPostgres HammerDBDatabase = "postgres"
	// HammerDBMySQL drives MySQL or MariaDB (HammerDB's "mysql" plugin).
	HammerDBMySQL HammerDBDatabase = "mysql"
)
