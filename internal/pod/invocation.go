package pod

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

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
	// Stages are the parts of the measurement the tool ramps through by
	// itself (k6's stages), in order: the SampleParser reports each.
	Stages []Stage
	// ParserConfig is the path, under FilesDir (one of Files), of what
	// the workload's parser needs beyond the tool's output (a custom
	// tool's result format, primary metric and declarations): the runner
	// reads it (ExecCommand.ParserConfig) and hands it to Parse as
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

// ClaimMount mounts a PersistentVolumeClaim of the run's namespace.
type ClaimMount struct {
	Claim, MountPath string
	ReadOnly         bool
}

// ConfigMapFile is one key of a ConfigMap in the run's namespace.
type ConfigMapFile struct {
	ConfigMap, Key string
}

// ConfigMapFilePath is where a ConfigMap key is mounted.
func ConfigMapFilePath(f ConfigMapFile) string {
	return ConfigMapFilesDir + "/" + f.ConfigMap + "/" + f.Key
}
