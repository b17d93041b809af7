package custom

import (
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Custom implements workloads.Workload for the user's own tool.
type Custom struct{}

var (
	_ workloads.Workload = Custom{}
	_ workloads.Speaker  = Custom{}
)

func (Custom) Name() string { return "custom" }

// DefaultImage: none. The schema requires spec.workload.image with custom.
func (Custom) DefaultImage() string { return "" }

// singleStep names the one step of a workload without parameters.
const singleStep = "default"

func (Custom) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	c := spec.Custom
	if len(c.Parameters) == 0 {
		return []workloads.Step{{Name: singleStep, Params: map[string]int32{}}}
	}
	dims := make([]workloads.Dimension, 0, len(c.Parameters))
	for _, p := range c.Parameters {
		dims = append(dims, workloads.Dimension{Name: p.Name, Values: p.Values})
	}
	return workloads.Sweep(dims...)
}

func (Custom) Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation {
	p := spec.Custom.Prepare
	if p == nil {
		return nil
	}
	return &pod.Invocation{
		Command:   append(append([]string{}, p.Command...), p.Args...),
		Env:       environment(spec, ep, nil),
		SecretEnv: secretEnv(ep),
	}
}

func (Custom) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	c := spec.Custom
	cmd := make([]string, 0, len(c.Command)+len(c.Args))
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		cmd = append(cmd, expand(a, step.Params, true))
	}
	inv := pod.Invocation{
		Command:      cmd,
		Env:          environment(spec, ep, &step),
		SecretEnv:    secretEnv(ep),
		Files:        map[string]string{configFile: string(encodeConfig(spec))},
		ParserConfig: pod.FilesDir + "/" + configFile,
	}
	if c.ResultFile != "" {
		inv.ResultFiles = []string{resultPath(c)}
	}
	return inv
}

// resultPath is where the tool writes its result file in the pod.
func resultPath(c *benchv1.CustomWorkload) string {
	return pod.OutputDir + "/" + c.ResultFile
}

// environment is the target, then dbperf's own settings, then the user's
// variables in their order (placeholders replaced for a step; the prepare
// step, of no step, gets none of those that hold one): the kubelet expands
// $(VAR) references to earlier variables, so the user's values may name
// the target's.
func environment(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step *workloads.Step) []corev1.EnvVar {
	c := spec.Custom
	env := ep.AddressEnv(ep.Database)
	env = append(env, ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)...)
	env = append(env, ep.TLSEnv()...)
	env = append(env, corev1.EnvVar{Name: pod.EnvOutputDir, Value: pod.OutputDir})
	if c.ResultFile != "" {
		env = append(env, corev1.EnvVar{Name: pod.EnvResultFile, Value: resultPath(c)})
	}
	if c.Duration != nil {
		seconds := int(c.Duration.Seconds())
		if d, ok := step.Params[workloads.DurationParameter]; step != nil && ok {
			seconds = int(d) // a capacity confirmation's or soak's own duration
		}
		env = append(env, corev1.EnvVar{Name: pod.EnvDurationSeconds, Value: strconv.Itoa(seconds)})
	}
	env = append(env, corev1.EnvVar{Name: pod.EnvGenerators, Value: strconv.Itoa(int(max(spec.Parallelism, 1)))})
	params := map[string]int32{}
	if step != nil {
		env = append(env, corev1.EnvVar{Name: pod.EnvStep, Value: step.Name})
		params = step.Params
	}
	for _, e := range c.Env {
		if step == nil && placeholder.MatchString(e.Value) {
			continue // the prepare step runs once, for every step's values
		}
		env = append(env, corev1.EnvVar{Name: e.Name, Value: expand(e.Value, params, false)})
	}
	return env
}

func secretEnv(ep pod.Endpoint) []string {
	if ep.Password == nil {
		return nil
	}
	return []string{pod.EnvPassword}
}

// Speaks: the protocol of the database the spec says the tool drives, if
// any (a measurement against MySQL gets the session check).
func (Custom) Speaks(spec *benchv1.WorkloadSpec) workloads.Speaks {
	if spec.Custom == nil {
		return workloads.Speaks{}
	}
	return workloads.Speaks{Protocol: protocols[spec.Custom.Database]}
}

// protocols are those of the databases a custom tool may drive.
var protocols = map[benchv1.CustomDatabase]pod.Protocol{
	benchv1.CustomPostgres: pod.ProtocolPostgres, benchv1.CustomMySQL: pod.ProtocolMySQL, benchv1.CustomValkey: pod.ProtocolRedis,
	benchv1.CustomMongoDB: pod.ProtocolMongoDB, benchv1.CustomOpenSearch: pod.ProtocolOpenSearch,
}

// toolName is how reasons name the tool: its command's base name.
func toolName(c *benchv1.CustomWorkload) string {
	if len(c.Command) == 0 {
		return "the custom tool"
	}
	name := path.Base(c.Command[0])
	if name == "sh" || name == "bash" || strings.HasPrefix(name, "python") {
		// An interpreter: the script it runs says more.
		for _, a := range append(append([]string{}, c.Command[1:]...), c.Args...) {
			if a == "-c" || strings.ContainsAny(a, " \t\n") {
				break // an inline script
			}
			if !strings.HasPrefix(a, "-") {
				return name + " " + path.Base(a)
			}
		}
	}
	return name
}

// maxSteps bounds the sweep: each step is a Job per repetition.
const maxSteps = 256

// sweepSize is the number of steps of the sweep (at most 32⁴ by the schema).
func sweepSize(c *benchv1.CustomWorkload) int {
	n := 1
	for _, p := range c.Parameters {
		n *= max(len(p.Values), 1)
	}
	return n
}

// RateCorrected: the tool says so itself (latencyFromIntendedStart).
func (Custom) RateCorrected(spec *benchv1.WorkloadSpec) bool {
	return spec.Custom != nil && spec.Custom.LatencyFromIntendedStart
}

// StepDuration: a step's DurationParameter replaces
// DBPERF_DURATION_SECONDS (CheckCapacity requires the tool to read it).
func (Custom) StepDuration() {}

// CheckCapacity: a rate level is the parameter named rate, which the
// command must use ({{rate}}, each load generator's share); with several
// generators, a variable's {{rate}} (the same for all) would offer the
// rate once per generator. A confirmation or soak of its own duration
// reaches the tool through DBPERF_DURATION_SECONDS, so duration must be
// set.
func (Custom) CheckCapacity(spec *benchv1.WorkloadSpec, c *benchv1.CapacitySpec, path *field.Path) field.ErrorList {
	cw := spec.Custom
	cp := field.NewPath("spec", "workload", "custom")
	var errs field.ErrorList
	holds := (c.Confirm != nil && c.Confirm.Duration != nil) || c.Soak != nil
	if holds && cw.Duration == nil {
		errs = append(errs, field.Required(cp.Child("duration"),
			"a confirmation or soak of its own duration tells the tool through DBPERF_DURATION_SECONDS, which is set only with duration"))
	}
	if c.Parameter != workloads.RateParameter {
		return errs
	}
	const use = "{{" + workloads.RateParameter + "}}"
	inCommand := false
	for _, a := range append(append([]string{}, cw.Command...), cw.Args...) {
		inCommand = inCommand || strings.Contains(a, use)
	}
	if !inCommand {
		errs = append(errs, field.Invalid(cp.Child("command"), strings.Join(cw.Command, " "),
			"a rate level is given to the tool as "+use+" in command or args (each load generator's share); declare a parameter named rate and use it"))
	}
	for i, e := range cw.Env {
		if spec.Parallelism > 1 && strings.Contains(e.Value, use) {
			errs = append(errs, field.Invalid(cp.Child("env").Index(i).Child("value"), e.Value,
				"every load generator would read the whole rate: with parallelism above 1, give "+use+" in command or args, where each generator gets its share"))
		}
	}
	return errs
}

var (
	_ workloads.RateKnob        = Custom{}
	_ workloads.DurationKnob    = Custom{}
	_ workloads.CapacityChecker = Custom{}
)
