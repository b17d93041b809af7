package pod

// Paths inside workload pods.
const (
	// RunnerDir is the emptyDir the init container copies the runner
	// into, from InstallerPath in the runner's image.
	RunnerDir     = "/dbperf"
	RunnerPath    = RunnerDir + "/bin/dbperf-runner"
	InstallerPath = "/dbperf-runner"
	// OutputDir is a writable directory for result files.
	OutputDir = RunnerDir + "/out"
	// TerminationLog is where the runner leaves the compact summary the
	// operator reads from the container's termination message.
	TerminationLog = "/dev/termination-log"
	// CgroupRoot is the container's own cgroup mount, whose CPU the
	// runner samples.
	CgroupRoot = "/sys/fs/cgroup"
	// TmpDir is a writable emptyDir (the root filesystem is read-only).
	TmpDir = "/tmp"
)

// TLSDir holds ca.crt and, for two-way TLS, tls.crt and tls.key.
const TLSDir = "/etc/dbperf/tls"

// CAFile is where a target's CA bundle is mounted; ClientCertFile and
// ClientKeyFile are the client certificate of two-way TLS.
const (
	CAFile         = TLSDir + "/ca.crt"
	ClientCertFile = TLSDir + "/tls.crt"
	ClientKeyFile  = TLSDir + "/tls.key"
)

// FilesDir is where an invocation's Files are mounted.
const FilesDir = "/etc/dbperf/workload"

// ConfigMapFilesDir is where an invocation's ConfigMapFiles are mounted.
const ConfigMapFilesDir = "/etc/dbperf/configmaps"

// ClaimsDir is where the query workload mounts the claims its loads
// read, one directory each.
const ClaimsDir = "/dbperf-data"

// BarrierDir holds StartAtFile, the start barrier of parallel load
// generators (a downward API volume of the pod's annotation).
const (
	BarrierDir  = "/etc/dbperf/barrier"
	StartAtFile = BarrierDir + "/start-at"
)
