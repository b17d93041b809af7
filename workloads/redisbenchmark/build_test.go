package redisbenchmark

import (
	"slices"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
)

// redis-benchmark sends each key to its shard of a Valkey Cluster with
// --cluster, and only then.
func TestClusterFlag(t *testing.T) {
	spec := &benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{}}
	for _, cluster := range []bool{true, false} {
		cmd := RedisBenchmark{}.Run(spec, pod.Endpoint{Host: "kv", Port: 6379, Cluster: cluster}, RedisBenchmark{}.Steps(spec)[0]).Command
		if got := slices.Contains(cmd, "--cluster"); got != cluster {
			t.Errorf("cluster %v: --cluster %v in %q", cluster, got, cmd)
		}
	}
}
