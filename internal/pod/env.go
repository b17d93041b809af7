package pod

// EnvPrefix begins every variable the operator sets: a user's variable
// may not.
const EnvPrefix = "DBPERF_"

// The target as a workload pod's environment carries it. Credentials come
// from the target's Secret, never from a flag; the runner's own
// connections (statistics, session check, query engine) read the same two
// variables as the tools.
const (
	EnvUsername = "DBPERF_TARGET_USERNAME"
	EnvPassword = "DBPERF_TARGET_PASSWORD"
	// EnvSuperuser and EnvSuperuserPassword carry the target's
	// administrator, for tools that create their own schema and user.
	EnvSuperuser         = "DBPERF_TARGET_SUPERUSER"
	EnvSuperuserPassword = "DBPERF_TARGET_SUPERUSER_PASSWORD"
	EnvHost              = "DBPERF_TARGET_HOST"
	EnvPort              = "DBPERF_TARGET_PORT"
	EnvDatabase          = "DBPERF_TARGET_DATABASE"
	EnvTLS               = "DBPERF_TARGET_TLS"
	EnvCAFile            = "DBPERF_TARGET_CA_FILE"
	EnvCertFile          = "DBPERF_TARGET_CERT_FILE"
	EnvKeyFile           = "DBPERF_TARGET_KEY_FILE"
	EnvServerName        = "DBPERF_TARGET_SERVER_NAME"
)

// What a custom tool is told besides the target.
const (
	// EnvOutputDir names OutputDir; the runner makes that directory
	// before the tool starts.
	EnvOutputDir       = "DBPERF_OUTPUT_DIR"
	EnvResultFile      = "DBPERF_RESULT_FILE"
	EnvDurationSeconds = "DBPERF_DURATION_SECONDS"
	EnvStep            = "DBPERF_STEP"
	EnvGenerators      = "DBPERF_GENERATORS"
)

// EnvCompletionIndex is the Job controller's index of a pod of an Indexed
// Job: which of ExecCommand.Generators this load generator is.
const EnvCompletionIndex = "JOB_COMPLETION_INDEX"
