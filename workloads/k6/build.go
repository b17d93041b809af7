package k6

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// K6 implements workloads.Workload.
type K6 struct{ Parser }

var _ workloads.Workload = K6{}

func (K6) Name() string { return "k6" }

// DefaultImage is k6 with dbperf's output extension (the Dockerfile's k6
// target); grafana/k6 works too, with the sample stream.
func (K6) DefaultImage() string { return "ghcr.io/dbperf-io/k6:1.0.0" }

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
	duration := ""
	if w.Duration != nil && w.Duration.Duration > 0 {
		duration = w.Duration.Duration.String()
	}
	if d, ok := step.Params[workloads.DurationParameter]; ok { // a confirmation's or a soak's own
		duration = (time.Duration(d) * time.Second).String()
	}
	rate, atRate := step.Params[workloads.RateParameter]
	if v, ok := step.Params["vus"]; ok && !atRate {
		cmd = append(cmd, "--vus", strconv.Itoa(int(v)))
	}
	if duration != "" && !atRate {
		cmd = append(cmd, "--duration", duration)
	}
	if len(w.Stages) > 0 && !atRate {
		// k6's ramping-vus shortcut; the sample parser reports each stage.
		var end time.Duration
		for i, st := range w.Stages {
			cmd = append(cmd, "--stage", fmt.Sprintf("%s:%d", st.Duration.Duration, st.Target))
			end += st.Duration.Duration
			inv.Stages = append(inv.Stages, pod.Stage{Name: StageName(i, st), End: end})
		}
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
	script, imported := pod.FilesDir+"/"+inlineScript, "./"+inlineScript // the wrapper sits beside an inline script
	if w.ScriptConfigMap != nil {
		f := pod.ConfigMapFile{ConfigMap: w.ScriptConfigMap.Name, Key: w.ScriptConfigMap.Key}
		inv.ConfigMapFiles = []pod.ConfigMapFile{f}
		script = pod.ConfigMapFilePath(f)
		imported = script
	} else {
		inv.Files = map[string]string{inlineScript: w.Script}
	}
	if atRate {
		vus := int32(DefaultRateVUs)
		if v, ok := step.Params["vus"]; ok {
			vus = v
		}
		if inv.Files == nil {
			inv.Files = map[string]string{}
		}
		inv.Files[rateScript] = RateWrapper(imported, rate, vus, duration)
		script = pod.FilesDir + "/" + rateScript
	}
	cmd = append(cmd, script)
	inv.Command = cmd
	return inv
}

// DefaultRateVUs is the pool of virtual users an arrival-rate level starts
// its iterations on when the workload sweeps no vus.
const DefaultRateVUs = 100

const rateScript = "dbperf-rate.js"

// RateWrapper is the script a capacity level at a rate runs: the user's
// script, its exports and options kept, with one scenario of k6's
// constant-arrival-rate executor in place of any it declared (and of the
// shortcuts vus, duration, stages and iterations, which k6 refuses beside
// scenarios) running its default function: rate iterations a second for
// duration, on a pool of vus virtual users. Options in a script win over
// a --config file, which is why the script is wrapped rather than
// configured. With several load generators, k6's execution segments split
// the rate and the pool exactly.
func RateWrapper(script string, rate, vus int32, duration string) string {
	return fmt.Sprintf(`// Written by dbperf-operator: a capacity level at %[2]d iterations/s.
import * as user from %[1]q;
export * from %[1]q;
const kept = Object.assign({}, user.options || {});
for (const k of ["scenarios", "vus", "duration", "stages", "iterations", "executionSegment", "executionSegmentSequence"]) {
  delete kept[k];
}
export const options = Object.assign(kept, {
  scenarios: {
    dbperf_rate: {
      executor: "constant-arrival-rate",
      rate: %[2]d,
      timeUnit: "1s",
      duration: %[4]q,
      preAllocatedVUs: %[3]d,
      maxVUs: %[3]d,
      exec: "default",
    },
  },
});
export default user.default;
`, script, rate, vus, duration)
}

// RateCorrected: k6's constant-arrival-rate executor starts each iteration
// at its scheduled time on a free virtual user, and drops (and counts, in
// dropped_iterations) one that finds none instead of starting it late:
// what ran is measured from its intended start, and what could not run
// lowers the achieved rate, which the capacity rules judge.
func (K6) RateCorrected(*benchv1.WorkloadSpec) bool { return true }

// StepDuration: a step's DurationParameter is its --duration (or its
// arrival-rate scenario's).
func (K6) StepDuration() {}

// CheckCapacity: a rate level runs k6's arrival-rate scenario for the
// workload's duration, which it must then have.
// StageName names stage i of a ramp in results: "stage 2 (to 200 VUs)".
func StageName(i int, st benchv1.K6Stage) string {
	return fmt.Sprintf("stage %d (to %d VUs)", i+1, st.Target)
}

func (K6) CheckCapacity(spec *benchv1.WorkloadSpec, c *benchv1.CapacitySpec, path *field.Path) field.ErrorList {
	if len(spec.K6.Stages) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "workload", "k6", "stages"), len(spec.K6.Stages),
			"a capacity run sets the load of each level itself: leave stages unset (or run the stages as a plain run, whose result reports each stage)")}
	}
	if c.Parameter == workloads.RateParameter && (spec.K6.Duration == nil || spec.K6.Duration.Duration <= 0) {
		return field.ErrorList{field.Required(field.NewPath("spec", "workload", "k6", "duration"),
			"a rate level runs k6's constant-arrival-rate scenario for this duration")}
	}
	return nil
}

var (
	_ workloads.RateKnob        = K6{}
	_ workloads.DurationKnob    = K6{}
	_ workloads.CapacityChecker = K6{}
)
