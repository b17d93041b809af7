package pod

// The names of dbperf-runner's flags, each spelled here only: the command
// types bind their fields to these, and both the operator's rendering and
// the runner's parsing go through those bindings.
const (
	// exec, and where parse shares its meaning.
	flagWorkload              = "workload"
	flagStartBarrier          = "start-barrier"
	flagGenerators            = "generators"
	flagMaxCPUPercent         = "max-cpu-percent"
	flagMaxErrorPercent       = "max-error-percent"
	flagWarmup                = "warmup"
	flagStallPercent          = "stall-percent"
	flagMaxStall              = "max-stall"
	flagDipPercent            = "dip-percent"
	flagMaxDip                = "max-dip"
	flagMaxDriftPercent       = "max-drift-percent"
	flagPrepare               = "prepare"
	flagResultFile            = "result-file"
	flagParserConfig          = "parser-config"
	flagSampleStream          = "sample-stream"
	flagDeclareMetric         = "declare-metric"
	flagAPDEX                 = "apdex"
	flagStage                 = "stage"
	flagRedactEnv             = "redact-env"
	flagTimeout               = "timeout"
	flagSummaryFile           = "summary-file"
	flagNoProgressTimeout     = "no-progress-timeout"
	flagHardNoProgressTimeout = "hard-no-progress-timeout"
	flagKillGrace             = "kill-grace"
	flagCgroupRoot            = "cgroup-root"
	flagCPUSampleInterval     = "cpu-sample-interval"
	flagBarrierTimeout        = "barrier-timeout"
	flagSeriesResolution      = "series-resolution"
	flagAPDEXWindow           = "apdex-window"
	flagSampleAggregation     = "sample-aggregation"

	// exec: the statistics poller.
	flagServerStatistics   = "server-statistics"
	flagServerAddress      = "server-address"
	flagServerDatabase     = "server-database"
	flagServerPollInterval = "server-poll-interval"
	flagServerDiagnostics  = "server-diagnostics"
	flagServerWaitInterval = "server-wait-interval"
	flagServerPlans        = "server-plans"
	flagServerProfileHz    = "server-profile-hz"

	// exec: the hosts read from their node_exporter.
	flagHostExporter     = "host-exporter"
	flagHostPollInterval = "host-poll-interval"
	flagDisturbance      = "disturbance"
	// stress
	flagCPUWorkers   = "cpu-workers"
	flagMemoryBytes  = "memory-bytes"
	flagDiskWorkers  = "disk-workers"
	flagDir          = "dir"
	flagDuration     = "duration"
	flagSteadyUntil  = "steady-until"
	flagRestartAfter = "restart-after"
	flagCanary       = "canary"
	flagCanaryDir    = "canary-dir"

	// exec: the session check.
	flagSessionCheck      = "session-check"
	flagSessionProtocol   = "session-protocol"
	flagSessionTLSVersion = "session-tls-version"
	flagSessionTLSCipher  = "session-tls-cipher"
	flagSessionVariable   = "session-variable"

	// query.
	flagDriver   = "driver"
	flagHost     = "host"
	flagPort     = "port"
	flagDatabase = "database"
	flagQueries  = "queries"
	flagRuns     = "runs"
	flagOutput   = "output"
	flagSetting  = "setting"
	flagScript   = "script"
	flagLoad     = "load"

	// parse and show.
	flagInput    = "input"
	flagExitCode = "exit-code"
	flagAll      = "all"
)

// The flags of a TLSClient, one set per connection of the pod.
var (
	statisticsTLSFlags = tlsFlagNames{enabled: "server-tls", ca: "server-tls-ca", cert: "server-tls-cert", key: "server-tls-key", serverName: "server-tls-name"}
	sessionTLSFlags    = tlsFlagNames{enabled: "session-tls", ca: "session-tls-ca", cert: "session-tls-cert", key: "session-tls-key", serverName: "session-tls-name"}
	queryTLSFlags      = tlsFlagNames{enabled: "tls", ca: "ca-file", cert: "cert-file", key: "key-file", serverName: "server-name"}
)
