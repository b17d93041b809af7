package redisbenchmark

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/workloads"
)

// RedisBenchmark implements workloads.Workload.
type RedisBenchmark struct{}

var _ workloads.Workload = RedisBenchmark{}

func (RedisBenchmark) Name() string { return "redis-benchmark" }

// DefaultImage is the official Redis image, which ships redis-benchmark.
func (RedisBenchmark) DefaultImage() string { return "redis:7.4" }

func (RedisBenchmark) Validate(spec *benchv1.WorkloadSpec, path *field.Path) field.ErrorList {
	if spec.RedisBenchmark == nil {
		return field.ErrorList{field.Required(path.Child("redisBenchmark"), "redis-benchmark settings are required")}
	}
	return nil
}

func (RedisBenchmark) Steps(spec *benchv1.WorkloadSpec) []workloads.Step {
	w := spec.RedisBenchmark
	return workloads.Sweep(
		workloads.Dimension{Name: "clients", Values: orDefault(w.Clients, 50)},
		workloads.Dimension{Name: "pipeline", Values: orDefault(w.Pipeline, 1)},
	)
}

func orDefault(v []int32, d int32) []int32 {
	if len(v) == 0 {
		return []int32{d}
	}
	return v
}

// Prepare: redis-benchmark writes the keys it reads in the same run.
func (RedisBenchmark) Prepare(*benchv1.WorkloadSpec, pod.Endpoint) *pod.Invocation {
	return nil
}

func (RedisBenchmark) Run(spec *benchv1.WorkloadSpec, ep pod.Endpoint, step workloads.Step) pod.Invocation {
	w := spec.RedisBenchmark
	tests := w.Tests
	if len(tests) == 0 {
		tests = []string{"set", "get"}
	}
	requests := w.Requests
	if requests < 1 {
		requests = 100000
	}
	dataSize := w.DataSizeBytes
	if dataSize < 1 {
		dataSize = 3
	}
	cmd := []string{"redis-benchmark",
		"-h", ep.Host, "-p", strconv.Itoa(int(ep.Port)),
		"-c", strconv.Itoa(int(step.Params["clients"])),
		"-P", strconv.Itoa(int(step.Params["pipeline"])),
		"-n", strconv.FormatInt(requests, 10),
		"-d", strconv.Itoa(int(dataSize)),
		"-t", strings.Join(tests, ","),
		"--csv",
	}
	if ep.Cluster {
		cmd = append(cmd, "--cluster")
	}
	if w.KeySpace > 0 {
		cmd = append(cmd, "-r", strconv.FormatInt(w.KeySpace, 10))
	}
	if w.Threads > 0 {
		cmd = append(cmd, "--threads", strconv.Itoa(int(w.Threads)))
	}
	inv := pod.Invocation{Env: ep.CredentialEnv(pod.EnvUsername, pod.EnvPassword)}
	if ep.Username != nil {
		cmd = append(cmd, "--user", "$("+pod.EnvUsername+")")
	}
	if ep.Password != nil {
		cmd = append(cmd, "-a", "$("+pod.EnvPassword+")")
		inv.SecretEnv = []string{pod.EnvPassword}
	}
	if ep.TLS {
		cmd = append(cmd, "--tls")
		if ep.CASecret != "" {
			cmd = append(cmd, "--cacert", pod.CAFile)
		} else {
			cmd = append(cmd, "--insecure")
		}
		if ep.ServerName != "" {
			cmd = append(cmd, "--sni", ep.ServerName)
		}
	}
	inv.Command = cmd
	return inv
}

// Speaks: redis-benchmark speaks the Redis protocol.
func (RedisBenchmark) Speaks(*benchv1.WorkloadSpec) workloads.Speaks {
	return workloads.Speaks{Protocol: pod.ProtocolRedis}
}
