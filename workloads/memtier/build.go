package memtier

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// Memtier implements workloads.Workload.
type Memtier struct{}

var _ workloads.Workload = Memtier{}

func (Memtier) Name() string { return "memtier" }

// DefaultImage is Redis's official memtier_benchmark image, at a release
// its maintainers confirmed as published (the :latest tag has lagged releases).
func (Memtier) DefaultImage() string { return "redislabs/memtier_benchmark:2.1.1" }

// JSONFile is where the run step writes its JSON result.
const JSONFile = pod.OutputDir + "/memtier.json"

func (Memtier) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	m := spec.Memtier
	path = path.Child("memtier")
	var errs field.ErrorList
	if m == nil {
		return append(errs, field.Required(path, "memtier settings are required"))
	}
	if m.KeyMaximum > 0 && m.KeyMinimum > m.KeyMaximum {
		errs = append(errs, field.Invalid(path.Child("keyMinimum"), m.KeyMinimum, "must not exceed keyMaximum"))
	}
	if m.Duration.Duration < 1e9 {
		errs = append(errs, field.Invalid(path.Child("duration"), m.Duration.String(), "must be at least 1s"))
	}
	return errs
}

func (Memtier) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	m := spec.Memtier
	return workloads.Sweep(
		workloads.Dimension{Name: "threads", Values: orDefault(m.Threads, 4)},
		workloads.Dimension{Name: "pipeline", Values: orDefault(m.Pipeline, 1)},
	)
}

func orDefault(v []int32, d int32) []int32 {
	if len(v) == 0 {
		return []int32{d}
	}
	return v
}

func common(m *benchv1.MemtierWorkload, ep pod.Endpoint) ([]string, pod.Invocation) {
	protocol := m.Protocol
	if protocol == "" {
		protocol = "redis"
	}
	cmd := []string{"memtier_benchmark",
		"--server", ep.Host, "--port", strconv.Itoa(int(ep.Port)),
		"--protocol", protocol,
		"--key-minimum", strconv.FormatInt(keyMin(m), 10),
		"--key-maximum", strconv.FormatInt(keyMax(m), 10),
		"--data-size", strconv.Itoa(int(dataSize(m))),
		"--hide-histogram",
	}
	if ep.Cluster {
		// memtier asks the member it reaches for the slot map, then sends
		// each key to its shard's primary.
		cmd = append(cmd, "--cluster-mode")
	}
	inv := pod.Invocation{Env: ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)}
	if ep.Password != nil {
		inv.SecretEnv = []string{pod.EnvPassword}
		if !optionalCredentials(ep) {
			cmd = append(cmd, "--authenticate", credentials(ep))
		}
	}
	if ep.TLS {
		cmd = append(cmd, "--tls")
		if ep.CASecret != "" {
			cmd = append(cmd, "--cacert", pod.CAFile)
		} else {
			cmd = append(cmd, "--tls-skip-verify")
		}
		if ep.ServerName != "" {
			cmd = append(cmd, "--sni", ep.ServerName)
		}
	}
	return cmd, inv
}

// credentials is memtier's "USER:PASSWORD", or the password alone, as
// references the kubelet expands from the Secret.
func credentials(ep pod.Endpoint) string {
	if ep.Username == nil {
		return "$(" + pod.EnvPassword + ")"
	}
	return "$(" + pod.EnvUsername + "):$(" + pod.EnvPassword + ")"
}

// optionalCredentials: an external target's Secret may or may not hold a
// username (the operator never reads it), and the kubelet leaves the
// reference to a variable it could not set as literal text, so memtier would
// log in as the user "$(DBPERF_TARGET_USERNAME)". Such credentials are
// assembled by a shell when the tool starts instead.
func optionalCredentials(ep pod.Endpoint) bool {
	optional := func(s *corev1.SecretKeySelector) bool { return s != nil && s.Optional != nil && *s.Optional }
	return ep.Password != nil && (optional(ep.Username) || optional(ep.Password))
}

// authScript runs memtier with the credentials the container got: with
// "USER:PASSWORD" when the Secret has a username, else with ":PASSWORD"
// (memtier's form of a password alone, which may itself hold a colon), and
// without --authenticate when the Secret has no password either.
const authScript = `if [ -n "$` + pod.EnvPassword + `" ]; then set -- "$@" --authenticate "${` + pod.EnvUsername + `:+$` + pod.EnvUsername + `}:$` + pod.EnvPassword + `"; fi; exec memtier_benchmark "$@"`

// withCredentials wraps a memtier command line in authScript when the
// credentials are optional.
func withCredentials(ep pod.Endpoint, cmd []string) []string {
	if !optionalCredentials(ep) {
		return cmd
	}
	return append([]string{"sh", "-c", authScript, "memtier_benchmark"}, cmd[1:]...)
}

// keyMin is at least 1: memtier_benchmark 2.1.1 refuses --key-minimum 0
// ("key-minimum must be greater than zero", exit 2), which the schema allows.
func keyMin(m *benchv1.MemtierWorkload) int64 { return max(m.KeyMinimum, 1) }
func keyMax(m *benchv1.MemtierWorkload) int64 {
	if m.KeyMaximum < 1 {
		return 1000000
	}
	return m.KeyMaximum
}
func dataSize(m *benchv1.MemtierWorkload) int32 {
	if m.DataSizeBytes < 1 {
		return 32
	}
	return m.DataSizeBytes
}

// Prepare writes every key of the range once, sequentially, so that GETs in
// the measurement hit.
func (Memtier) Prepare(spec *benchv1.WorkloadSpec, ep pod.Endpoint) *pod.Invocation {
	m := spec.Memtier
	if len(m.Commands) > 0 {
		return nil
	}
	cmd, inv := common(m, ep)
	cmd = append(cmd, "--ratio", "1:0", "--key-pattern", "P:P", "--requests", "allkeys",
		"--threads", "1", "--clients", "4", "--pipeline", "16")
	inv.Command = withCredentials(ep, cmd)
	return &inv
}

func (Memtier) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	m := spec.Memtier
	cmd, inv := common(m, ep)
	clients := m.Clients
	if clients < 1 {
		clients = 50
	}
	seconds := int(m.Duration.Seconds())
	if d, ok := step.Params[workloads.DurationParameter]; ok {
		seconds = int(d)
	}
	threads := step.Params["threads"]
	cmd = append(cmd,
		"--threads", strconv.Itoa(int(threads)),
		"--clients", strconv.Itoa(int(clients)),
		"--pipeline", strconv.Itoa(int(step.Params["pipeline"])),
		"--test-time", strconv.Itoa(seconds),
		"--print-percentiles", "50,90,95,99,99.9",
		"--json-out-file", JSONFile,
	)
	if rate, ok := step.Params[workloads.RateParameter]; ok {
		// memtier limits the rate of each connection: each generator's
		// share of the level, divided among its threads × clients.
		cmd = append(cmd, "--rate-limiting", workloads.SharePerPlaceholder(int64(rate), int64(threads)*int64(clients)))
	}
	if len(m.Commands) == 0 {
		ratio, pattern := m.Ratio, m.KeyPattern
		if ratio == "" {
			ratio = "1:10"
		}
		if pattern == "" {
			pattern = "R:R"
		}
		cmd = append(cmd, "--ratio", ratio, "--key-pattern", pattern)
	}
	for _, c := range m.Commands {
		ratio, pattern := c.Ratio, c.KeyPattern
		if ratio < 1 {
			ratio = 1
		}
		if pattern == "" {
			pattern = "R"
		}
		cmd = append(cmd, "--command", c.Command,
			"--command-ratio", fmt.Sprint(ratio), "--command-key-pattern", pattern)
	}
	inv.Command = withCredentials(ep, cmd)
	inv.ResultFiles = []string{JSONFile}
	return inv
}

// RateCorrected: memtier's --rate-limiting opens, every 20 ms or so, a
// quota of requests per connection; a request the connection cannot send
// then (its pipeline full of unanswered ones) is not sent at all, and each
// latency runs from when the request was sent. Its latency at a fixed
// rate is therefore not corrected for coordinated omission: a latency
// rule on its rate levels is a warning, and what was not sent shows as
// achieved below offered.
func (Memtier) RateCorrected(*benchv1.WorkloadSpec) bool { return false }

// StepDuration: a step's DurationParameter replaces --test-time.
func (Memtier) StepDuration() {}

// CheckCapacity: a rate level tells every connection at least 1
// request per second, so a level below the connections of all the
// generators cannot be offered; and a connection's rate is whole, so the
// clients and threads of a rate run are one value each.
func (Memtier) CheckCapacity(spec *benchv1.WorkloadSpec, c *benchv1.CapacitySpec, path *field.Path) field.ErrorList {
	if c.Parameter != workloads.RateParameter {
		return nil
	}
	m := spec.Memtier
	clients := int64(m.Clients)
	if clients < 1 {
		clients = 50
	}
	threads := int64(slices.Max(orDefault(m.Threads, 4)))
	conns := threads * clients * int64(max(spec.Parallelism, 1))
	lowest, where := int64(0), path
	switch {
	case len(c.Levels) > 0:
		lowest, where = int64(slices.Min(c.Levels)), path.Child("levels")
	case c.Search != nil:
		lowest, where = int64(c.Search.Start), path.Child("search", "start")
	}
	if lowest > 0 && lowest < conns {
		return field.ErrorList{field.Invalid(where, lowest, fmt.Sprintf(
			"memtier limits the rate of each connection, at least 1/s each: %d connections (threads %d × clients %d × parallelism %d) offer at least %d/s; lower spec.workload.memtier.clients or threads, or start higher",
			conns, threads, clients, max(spec.Parallelism, 1), conns))}
	}
	return nil
}

var (
	_ workloads.RateKnob        = Memtier{}
	_ workloads.DurationKnob    = Memtier{}
	_ workloads.CapacityChecker = Memtier{}
)

// Speaks: memtier speaks the Redis protocol (Valkey, Redis).
func (Memtier) Speaks(*benchv1.WorkloadSpec) workloads.Speaks {
	return workloads.Speaks{Protocol: pod.ProtocolRedis}
}
