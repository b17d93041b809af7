package topology

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/memtier"
)

// The test of a Valkey Cluster: three shards with a replica each,
// two servers per pod, so three pods of two containers. Each server is
// started here with its container's arguments, the cluster is created by
// the script of the operator's Job (run twice: the second finds it made),
// and memtier in cluster mode, as the operator builds its command lines,
// loads and measures it: every primary holds keys, and memtier's result
// is valid.
func TestRealValkeyCluster(t *testing.T) {
	needMemtier(t)
	run := valkeyRun(benchv1.ValkeyTarget{Cluster: &benchv1.ValkeyCluster{Shards: 3, ReplicasPerShard: 1, InstancesPerNode: 2}})
	v := specs.NewValkeyCluster(run)
	sts := v.StatefulSet()
	if n := len(sts.Spec.Template.Spec.Containers); *sts.Spec.Replicas != 3 || n != 2 {
		t.Fatalf("%d pods of %d containers, want 3 of 2", *sts.Spec.Replicas, n)
	}
	var addrs []string
	for range *sts.Spec.Replicas {
		for _, c := range sts.Spec.Template.Spec.Containers {
			r := testutil.StartRedisWith(t, func(port int, dir string) []string { return local(c.Args, port, dir, 0) })
			addrs = append(addrs, r.Addr())
		}
	}
	job := v.CreateJob().Spec.Template.Spec.Containers[0].Command
	if want := specs.ValkeyClusterCreateScript("valkey-cli", 1); job[2] != want || len(job) != 4+len(addrs) {
		t.Fatalf("the Job runs %q", job)
	}
	for _, want := range []string{"the cluster serves", "the cluster exists"} {
		cmd := exec.Command("sh", append([]string{"-c", specs.ValkeyClusterCreateScript("redis-cli", 1), "create-cluster"}, addrs...)...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Fatalf("the create script: %v, want %q in\n%s", err, want, out)
		}
	}

	spec := &benchv1.WorkloadSpec{Memtier: &benchv1.MemtierWorkload{Threads: []int32{1}, Clients: 4, KeyMaximum: 3000,
		Duration: metav1.Duration{Duration: 2 * time.Second}}}
	host, port, _ := strings.Cut(addrs[0], ":")
	ep := workloads.Endpoint{Host: host, Port: int32(atoi(t, port)), Cluster: true}
	runMemtier(t, *memtier.Memtier{}.Prepare(spec, ep), true)
	r := runMemtier(t, memtier.Memtier{}.Run(spec, ep, memtier.Memtier{}.Steps(spec)[0]), false)
	if m, ok := r.Get(r.Primary); !ok || m.Value <= 0 {
		t.Fatalf("primary metric %v = %+v", r.Primary, m)
	}
	primaries := 0
	for _, a := range addrs {
		c := client(a)
		defer c.Close()
		if info(t, c, "replication", "role") != "master" {
			continue
		}
		primaries++
		n, err := c.DBSize(context.Background()).Result()
		if err != nil || n == 0 {
			t.Errorf("primary %s holds %d keys (%v)", a, n, err)
		}
		t.Logf("primary %s holds %d keys", a, n)
	}
	if primaries != 3 {
		t.Errorf("%d primaries, want 3", primaries)
	}
}
