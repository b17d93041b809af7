package osb

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// OSB implements workloads.Workload.
type OSB struct{ Parser }

var _ workloads.Workload = OSB{}

var _ workloads.Speaker = OSB{}

// Speaks: OpenSearch Benchmark talks to an OpenSearch cluster, whose
// nodes stats API the runner polls.
func (OSB) Speaks(*benchv1.WorkloadSpec) workloads.Speaks {
	return workloads.Speaks{Protocol: pod.ProtocolOpenSearch}
}

func (OSB) Name() string { return "osb" }

// DefaultImage is the project's official image.
func (OSB) DefaultImage() string { return "opensearchproject/opensearch-benchmark:1.15.0" }

// OSB keeps its state in ~/.benchmark; the home is the writable /tmp.
const home = "/tmp"

func (OSB) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	w := spec.OSB
	p := path.Child("osb")
	if w == nil {
		return field.ErrorList{field.Required(p, "osb settings are required")}
	}
	var errs field.ErrorList
	for k, v := range w.WorkloadParams {
		if strings.ContainsAny(k+v, ",:") {
			errs = append(errs, field.Invalid(p.Child("workloadParams").Key(k), v, "keys and values cannot hold ',' or ':'"))
		}
	}
	for k := range w.ClientOptions {
		switch k {
		case "basic_auth_user", "basic_auth_password", "use_ssl", "verify_certs", "ca_certs":
			errs = append(errs, field.Invalid(p.Child("clientOptions").Key(k), k, "set by the operator from the target"))
		}
	}
	return errs
}

func (OSB) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	return workloads.OptionalSweep("clients", spec.OSB.Clients, "default")
}

// Prepare: the benchmark-only pipeline loads its corpus within the test procedure.
func (OSB) Prepare(*benchv1.WorkloadSpec, pod.Endpoint) *pod.Invocation { return nil }

func joinKV(m map[string]string) string {
	keys := workloads.SortedKeys(m)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+":"+m[k])
	}
	return strings.Join(parts, ",")
}

func (OSB) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	w := spec.OSB
	cli := w.CLI
	if cli == "" {
		cli = "execute-test"
	}
	format := w.ResultsFormat
	if format == "" {
		format = "markdown"
	}
	ext := map[string]string{"markdown": "md", "csv": "csv"}[format]
	resultsFile := pod.OutputDir + "/osb-results." + ext
	workload := w.Name
	if workload == "" {
		workload = "http_logs"
	}
	cmd := []string{"opensearch-benchmark", cli, "--pipeline=benchmark-only", "--target-hosts=" + ep.Host + ":" + strconv.Itoa(int(ep.Port)),
		"--workload=" + workload, "--results-format=" + format, "--results-file=" + resultsFile, "--kill-running-processes"}
	if w.TestProcedure != "" {
		cmd = append(cmd, "--test-procedure="+w.TestProcedure)
	}
	if len(w.IncludeTasks) > 0 {
		cmd = append(cmd, "--include-tasks="+strings.Join(w.IncludeTasks, ","))
	}
	params := map[string]string{}
	for k, v := range w.WorkloadParams {
		params[k] = v
	}
	if c, ok := step.Params["clients"]; ok {
		name := w.ClientsParam
		if name == "" {
			name = "bulk_indexing_clients"
		}
		params[name] = strconv.Itoa(int(c))
	}
	if len(params) > 0 {
		cmd = append(cmd, "--workload-params="+joinKV(params))
	}
	opts := map[string]string{}
	for k, v := range w.ClientOptions {
		opts[k] = v
	}
	inv := pod.Invocation{ResultFiles: []string{resultsFile}, Env: append(ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword),
		corev1.EnvVar{Name: "HOME", Value: home})}
	if ep.TLS {
		opts["use_ssl"] = "true"
		opts["verify_certs"] = strconv.FormatBool(ep.CASecret != "")
		if ep.CASecret != "" {
			opts["ca_certs"] = pod.CAFile
		}
	}
	if ep.Username != nil && ep.Password != nil {
		opts["basic_auth_user"] = "'$(" + pod.EnvUsername + ")'"
		opts["basic_auth_password"] = "'$(" + pod.EnvPassword + ")'"
		inv.SecretEnv = []string{pod.EnvPassword}
	}
	if len(opts) > 0 {
		cmd = append(cmd, "--client-options="+joinKV(opts))
	}
	if w.CorpusClaim != "" {
		inv.ClaimMounts = []pod.ClaimMount{{Claim: w.CorpusClaim, MountPath: home + "/.benchmark/benchmarks", ReadOnly: false}}
		cmd = append(cmd, "--offline")
	}
	inv.Command = cmd
	return inv
}
