package k6

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// K6 implements workloads.Workload.
type K6 struct{ Parser }

var _ workloads.Workload = K6{}

func (K6) Name() string { return "k6" }

// DefaultImage is Grafana's official k6 image.
func (K6) DefaultImage() string { return "grafana/k6:1.0.0" }

const (
	inlineScript = "script.js"
	summaryFile  = pod.OutputDir + "/k6-summary.json"
)

func (K6) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	w := spec.K6
	p := path.Child("k6")
	if w == nil {
		return field.ErrorList{field.Required(p, "k6 settings are required")}
	}
	var errs field.ErrorList
	for k := range w.Env {
		if strings.HasPrefix(k, pod.EnvPrefix) {
			errs = append(errs, field.Invalid(p.Child("env").Key(k), k, pod.EnvPrefix+" variables are set by the operator"))
		}
	}
	for i, a := range w.Args {
		if ownedArg(a) {
			errs = append(errs, field.Invalid(p.Child("args").Index(i), a, "set by the operator (use vus and duration)"))
		}
	}
	return errs
}

// ownedArg says whether a k6 argument sets what the operator sets: a long
// flag alone or with =value, a short one also with its value attached
// (-o json=x, -ojson=x, -o=json=x).
func ownedArg(a string) bool {
	for _, f := range []string{"--summary-export", "--summary-trend-stats", "--vus", "--duration", "--out"} {
		if a == f || strings.HasPrefix(a, f+"=") {
			return true
		}
	}
	for _, f := range []string{"-u", "-d", "-o"} {
		if strings.HasPrefix(a, f) {
			return true
		}
	}
	return false
}

func (K6) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	return workloads.OptionalSweep("vus", spec.K6.VUs, "script")
}

// Prepare: a k6 script's setup() does its own preparation.
func (K6) Prepare(*benchv1.WorkloadSpec, pod.Endpoint) *pod.Invocation { return nil }

func (K6) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	w := spec.K6
	inv := pod.Invocation{ResultFiles: []string{summaryFile}, Env: ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)}
	if ep.Password != nil {
		inv.SecretEnv = []string{pod.EnvPassword}
	}
	// p(99) and p(99.9) are what comparisons publish; k6 exports only up
	// to p(95) unless told.
	// The raw samples go to a named pipe the runner reads while k6 runs:
	// per-request-name histograms and the time series come from them.
	cmd := []string{"k6", "run", "--no-color", "--summary-export", summaryFile, "--summary-trend-stats", "avg,min,med,max,p(90),p(95),p(99),p(99.9)",
		"--out", "json=" + samplesFile,
		"-e", pod.EnvHost + "=" + ep.Host, "-e", pod.EnvPort + "=" + strconv.Itoa(int(ep.Port))}
	inv.SampleStream = samplesFile
	for _, m := range w.Metrics {
		inv.Metrics = append(inv.Metrics, pod.MetricDeclaration{Name: m.Name, Unit: m.Unit, Direction: m.Direction})
	}
	if ep.Database != "" {
		cmd = append(cmd, "-e", pod.EnvDatabase+"="+ep.Database)
	}
	if v, ok := step.Params["vus"]; ok {
		cmd = append(cmd, "--vus", strconv.Itoa(int(v)))
	}
	if w.Duration != nil && w.Duration.Duration > 0 {
		cmd = append(cmd, "--duration", w.Duration.Duration.String())
	}
	for _, k := range workloads.SortedKeys(w.Env) {
		cmd = append(cmd, "-e", fmt.Sprintf("%s=%s", k, w.Env[k]))
	}
	if n := spec.Parallelism; n > 1 {
		// Each pod runs its share of the test: k6 splits VUs and
		// iterations across the execution segments.
		cmd = append(cmd, "--execution-segment", workloads.SegmentPlaceholder,
			"--execution-segment-sequence", workloads.SegmentSequencePlaceholder)
	}
	cmd = append(cmd, w.Args...)
	if w.ScriptConfigMap != nil {
		f := pod.ConfigMapFile{ConfigMap: w.ScriptConfigMap.Name, Key: w.ScriptConfigMap.Key}
		inv.ConfigMapFiles = []pod.ConfigMapFile{f}
		cmd = append(cmd, pod.ConfigMapFilePath(f))
	} else {
		inv.Files = map[string]string{inlineScript: w.Script}
		cmd = append(cmd, pod.FilesDir+"/"+inlineScript)
	}
	inv.Command = cmd
	return inv
}
