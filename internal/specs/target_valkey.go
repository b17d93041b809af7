package specs

import (
	"strconv"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The valkey target kind: the official image, used when the spec names none.
const (
	DefaultValkeyImage = "valkey/valkey:8.1"
	ValkeyPort         = 6379
	// ValkeyKind is the kind as spec.target spells it; it names the generated Secrets.
	ValkeyKind = "valkey"
)

// ValkeyName names the Valkey server's StatefulSet and Service.
func ValkeyName(run *benchv1.BenchmarkRun) string { return ServerName(run, ValkeyKind) }

// ValkeyServer runs one Valkey server without persistence: a benchmark
// measures the serving path, and snapshots would add noise at random times.
func ValkeyServer(run *benchv1.BenchmarkRun) Server {
	t := run.Spec.Target.Valkey
	return Server{Run: run, Name: ValkeyName(run), Container: "valkey", Image: orDefault(t.Image, DefaultValkeyImage),
		Command: []string{"valkey-server"},
		Args: append([]string{"--port", strconv.Itoa(ValkeyPort), "--protected-mode", "no", "--save", "", "--appendonly", "no", "--dir", "/data"},
			t.Args...),
		Port: ValkeyPort, PortName: "valkey", Replicas: 1, UID: 999, DataPath: "/data", Storage: t.Storage, Resources: t.Resources,
		ReadOnlyRoot: true}
}
