package workloads

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// Workload is one load tool.
type Workload interface {
	// Name is the tool's name as used by `dbperf-runner --workload`.
	Name() string
	// DefaultImage is the tool's official image.
	DefaultImage() string
	// Validate re-checks what the schema cannot express.
	Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList
	// Steps expands the sweep: one step per combination of list values, in
	// the order they are listed.
	Steps(spec *benchv1.WorkloadSpec) []Step
	// Prepare returns the invocation that loads data before measuring, or
	// nil when the tool needs none. It is not called when the spec says
	// skipPrepare.
	Prepare(spec *benchv1.WorkloadSpec, ep Endpoint) *Invocation
	// Run returns the invocation that measures one step.
	Run(spec *benchv1.WorkloadSpec, ep Endpoint, step Step) Invocation
	Parser
}

// Parser turns a tool's output into a Result. It never returns nil: output
// it cannot read is a Failed result that says why.
type Parser interface {
	Parse(in ParseInput) *results.Result
}

// PrepareParser is implemented by tools whose prepare step can fail with
// exit code 0 (HammerDB's schema build): it returns why the step failed.
type PrepareParser interface {
	ParsePrepare(in ParseInput) []string
}

// ParseInput is what the tool left behind.
type ParseInput struct {
	// Output is the tool's stdout and stderr, interleaved as they were written.
	Output []byte
	// Files holds result files the tool wrote, by base name.
	Files map[string][]byte
	// ExitCode of the tool; nil when unknown (parsing an old log).
	ExitCode *int
	// Config is the parser's configuration (Invocation.ParserConfig, as
	// the runner read it); nil when the invocation has none.
	Config []byte
}

// Step is one value of the sweep.
type Step struct {
	// Name is stable and readable: "clients=20,pipeline=1".
	Name string
	// Params are the swept values by parameter name.
	Params map[string]int32
}

// Endpoint is how a load generator reaches the target. Credentials are
// references to Secret keys, never values.
type Endpoint struct {
	Host     string
	Port     int32
	Database string
	Username *corev1.SecretKeySelector
	Password *corev1.SecretKeySelector
	TLS      bool
	// CASecret names a Secret with key ca.crt; mounted at CAFile.
	CASecret   string
	ServerName string
	// ClientCertSecret names a Secret with tls.crt and tls.key, the client
	// certificate of two-way TLS; mounted in TLSDir.
	ClientCertSecret string
	// Superuser and SuperuserPassword, when the target has them, are an
	// administrator's credentials for tools that create their own schema
	// and user (HammerDB on PostgreSQL).
	Superuser, SuperuserPassword *corev1.SecretKeySelector
	// Cluster: the target is a sharded cluster the client must follow
	// (Valkey Cluster: memtier --cluster-mode); Host and Port are one of
	// its members.
	Cluster bool
	// ReadHost is a Service of the target's replicas, for tools that can
	// send reads to replicas; empty when it has none.
	ReadHost string
	// TLSVersion and TLSCipher are what the client must ask for (MySQL
	// protocol); each measurement checks what was negotiated.
	TLSVersion, TLSCipher string
	// SessionVariables a session of the workload's user must have
	// (MySQL protocol), checked at each measurement.
	SessionVariables map[string]string
}

// TLSDir holds ca.crt and, for two-way TLS, tls.crt and tls.key in workload pods.
const TLSDir = "/etc/dbperf/tls"

// CAFile is where a target's CA bundle is mounted in workload pods.
const CAFile = TLSDir + "/ca.crt"

// ClientCertFile and ClientKeyFile are the client certificate of two-way
// TLS in workload pods.
const (
	ClientCertFile = TLSDir + "/tls.crt"
	ClientKeyFile  = TLSDir + "/tls.key"
)

// LibpqTLSEnv is how a libpq client (pgbench, HammerDB's Pgtcl, psql)
// reaches the endpoint over TLS: PGSSLMODE verify-full with the target's CA,
// require without one, prefer without TLS; and the client certificate of
// two-way TLS (PGSSLCERT, PGSSLKEY), which libpq reads from these variables
// when the connection string does not name them.
func LibpqTLSEnv(ep Endpoint) []corev1.EnvVar {
	var env []corev1.EnvVar
	switch {
	case ep.TLS && ep.CASecret != "":
		env = append(env, corev1.EnvVar{Name: "PGSSLMODE", Value: "verify-full"},
			corev1.EnvVar{Name: "PGSSLROOTCERT", Value: CAFile})
	case ep.TLS:
		env = append(env, corev1.EnvVar{Name: "PGSSLMODE", Value: "require"})
	default:
		env = append(env, corev1.EnvVar{Name: "PGSSLMODE", Value: "prefer"})
	}
	if ep.TLS && ep.ClientCertSecret != "" {
		env = append(env, corev1.EnvVar{Name: "PGSSLCERT", Value: ClientCertFile},
			corev1.EnvVar{Name: "PGSSLKEY", Value: ClientKeyFile})
	}
	return env
}

// FilesDir is where an invocation's Files are mounted in workload pods.
const FilesDir = "/etc/dbperf/workload"

// OutputDir is a writable directory for result files in workload pods.
const OutputDir = "/dbperf/out"

// EnvOutputDir names OutputDir in a tool's environment (the custom
// workload's); the runner makes that directory before the tool starts.
const EnvOutputDir = "DBPERF_OUTPUT_DIR"

// Invocation is one run of a tool: the command after `--` in
// `dbperf-runner exec`, its environment and its files.
type Invocation struct {
	Command []string
	Env     []corev1.EnvVar
	// Files are written into a ConfigMap and mounted at FilesDir.
	Files map[string]string
	// ResultFiles are paths the runner reads after the tool exits and
	// hands to Parse by base name.
	ResultFiles []string
	// SecretEnv names the variables whose values the runner must redact
	// from everything it prints.
	SecretEnv []string
	// ConfigMapFiles are keys of the user's ConfigMaps (a test script)
	// mounted read-only at ConfigMapFilePath.
	ConfigMapFiles []ConfigMapFile
	// ClaimMounts are the user's PersistentVolumeClaims (a data corpus).
	ClaimMounts []ClaimMount
	// SampleStream is where the tool writes its raw samples, one per line,
	// while it runs: the runner makes it a named pipe and hands every line
	// to the workload's SampleParser, so that per-operation histograms and
	// time series are built without keeping a sample. Empty: none.
	SampleStream string
	// Metrics are the user's declarations of metrics the tool cannot
	// describe itself (custom metrics of a script): their unit and
	// direction, handed to the SampleParser.
	Metrics []MetricDeclaration
	// ParserConfig is the path, under FilesDir (one of Files), of what
	// the workload's parser needs beyond the tool's output (a custom
	// tool's result format, primary metric and declarations): the runner
	// reads it (--parser-config) and hands it to Parse as
	// ParseInput.Config. Empty: none.
	ParserConfig string
}

// MetricDeclaration is the unit and direction the user declared for a
// metric a tool reports under its own name.
type MetricDeclaration struct {
	Name      string
	Unit      string
	Direction results.Direction
}

// SampleParser is implemented by tools that write a raw sample stream
// (Invocation.SampleStream): its sink consumes the stream while the tool
// runs, with memory that does not grow with the samples.
type SampleParser interface {
	NewSampleSink(o SampleOptions) SampleSink
}

// SampleSink consumes one sample stream. Line is called for each line, in
// order, from one goroutine; Finish once, after the stream ended and after
// Parse, to add what the samples say to the result.
type SampleSink interface {
	// Line must not keep line: its bytes are reused.
	Line(line []byte)
	Finish(r *results.Result)
}

// SampleOptions configure a sample sink.
type SampleOptions struct {
	// Resolution of the time series; zero means DefaultSeriesResolution.
	Resolution time.Duration
	// APDEX target times by operation (results.AllOperations for all): the
	// sink records the APDEX counts of each window of APDEXWindow.
	APDEX       map[string]time.Duration
	APDEXWindow time.Duration
	Metrics     []MetricDeclaration
}

// Defaults of SampleOptions.
const (
	DefaultSeriesResolution = time.Second
	DefaultAPDEXWindow      = time.Minute
)

// ClaimMount mounts a PersistentVolumeClaim of the run's namespace.
type ClaimMount struct {
	Claim, MountPath string
	ReadOnly         bool
}

// ConfigMapFile is one key of a ConfigMap in the run's namespace.
type ConfigMapFile struct {
	ConfigMap, Key string
}

// ConfigMapFilesDir is where ConfigMapFiles are mounted in workload pods.
const ConfigMapFilesDir = "/etc/dbperf/configmaps"

// ConfigMapFilePath is where a ConfigMap key is mounted.
func ConfigMapFilePath(f ConfigMapFile) string {
	return ConfigMapFilesDir + "/" + f.ConfigMap + "/" + f.Key
}

// Env names shared by the tools' invocations.
const (
	EnvUsername = "DBPERF_TARGET_USERNAME"
	EnvPassword = "DBPERF_TARGET_PASSWORD"
)

// CredentialEnv returns the variables that carry the endpoint's credentials
// from their Secret, under the given names (empty skips one).
func (ep Endpoint) CredentialEnv(userVar, passVar string) []corev1.EnvVar {
	var env []corev1.EnvVar
	if ep.Username != nil && userVar != "" {
		env = append(env, corev1.EnvVar{Name: userVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ep.Username}})
	}
	if ep.Password != nil && passVar != "" {
		env = append(env, corev1.EnvVar{Name: passVar, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ep.Password}})
	}
	return env
}

// Placeholders the runner replaces in a tool's command line when a Job
// runs several load generators: the generator's k6 execution segment
// ("1/4:2/4") and the whole sequence ("0,1/4,2/4,3/4,1").
const (
	SegmentPlaceholder         = "{{dbperf.segment}}"
	SegmentSequencePlaceholder = "{{dbperf.segment-sequence}}"
)

// Segment returns generator index's execution segment of n and the sequence.
func Segment(index, n int) (segment, sequence string) {
	frac := func(i int) string {
		switch i {
		case 0:
			return "0"
		case n:
			return "1"
		}
		return fmt.Sprintf("%d/%d", i, n)
	}
	parts := make([]string, 0, n+1)
	for i := 0; i <= n; i++ {
		parts = append(parts, frac(i))
	}
	return frac(index) + ":" + frac(index+1), strings.Join(parts, ",")
}
