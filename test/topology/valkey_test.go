package topology

import (
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads/memtier"
)

func valkeyRun(t benchv1.ValkeyTarget) *benchv1.BenchmarkRun {
	return &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: "kv", Namespace: "perf", UID: "6f1c1a2e-0000-4000-8000-000000000001"},
		Spec: benchv1.BenchmarkRunSpec{Target: benchv1.TargetSpec{Valkey: &t}}}
}

// local is a pod's arguments on this machine: its port, directory, address
// and primary (host and port after --replicaof) are the test's; every
// other argument is the operator's.
func local(args []string, port int, dir string, primary int) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		switch out[i] {
		case "--port":
			out[i+1] = strconv.Itoa(port)
		case "--dir":
			out[i+1] = dir
		case "--cluster-announce-ip": // $(POD_IP) in the pod
			out[i+1] = "127.0.0.1"
		case "--replicaof":
			out[i+1], out[i+2] = "127.0.0.1", strconv.Itoa(primary)
		}
	}
	return out
}

// The test of Valkey replication: a primary and a replica started
// with the arguments of the operator's StatefulSets, the replica ready by
// its readiness probe's own command; memtier, with the operator's command
// line, measures the primary with replication on and a single server with
// it off, five times each, interleaved, and the comparison says what
// replication costs. Both sides must measure, and the replica must have
// caught up with every write (the same replication offset as the primary)
// after each measurement.
func TestRealValkeyReplication(t *testing.T) {
	needMemtier(t)
	on, off := valkeyRun(benchv1.ValkeyTarget{Replicas: 1}), valkeyRun(benchv1.ValkeyTarget{})
	single := testutil.StartRedisWith(t, func(port int, dir string) []string { return local(specs.ValkeyServer(off).Args, port, dir, 0) })
	primary := testutil.StartRedisWith(t, func(port int, dir string) []string { return local(specs.ValkeyServer(on).Args, port, dir, 0) })
	replica := testutil.StartRedisWith(t, func(port int, dir string) []string {
		return local(specs.ValkeyReplicas(on).Args, port, dir, primary.Port)
	})
	probe := specs.ValkeyReplicaReadyCommand("redis-cli", replica.Port)
	testutil.Eventually(t, 20*time.Second, "the replica's readiness probe to pass", func() error {
		if out, err := exec.Command(probe[0], probe[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%q: %w %s", probe, err, out)
		}
		return nil
	})
	pc, rc := client(primary.Addr()), client(replica.Addr())
	defer pc.Close()
	defer rc.Close()

	spec := &benchv1.WorkloadSpec{Memtier: &benchv1.MemtierWorkload{Threads: []int32{1}, Clients: 8, KeyMaximum: 20000, DataSizeBytes: 256,
		Ratio: "1:1", Duration: metav1.Duration{Duration: 3 * time.Second}}}
	eps := [2]pod.Endpoint{{Host: "127.0.0.1", Port: int32(single.Port)}, {Host: "127.0.0.1", Port: int32(primary.Port)}}
	for _, ep := range eps {
		runMemtier(t, *memtier.Memtier{}.Prepare(spec, ep), true)
	}
	step := memtier.Memtier{}.Steps(spec)[0]
	sides := [2]compare.Side{{Name: "replication off"}, {Name: "replication on"}}
	for rep := range 10 { // off, on, off, on, ...
		v := rep % 2
		r := runMemtier(t, memtier.Memtier{}.Run(spec, eps[v], step), false)
		if m, ok := r.Get(r.Primary); !ok || m.Value <= 0 {
			t.Fatalf("%s, repetition %d: primary metric %v = %+v", sides[v].Name, rep/2+1, r.Primary, m)
		}
		sides[v].Runs = append(sides[v].Runs, asRun(fmt.Sprintf("%s-%d", sides[v].Name, rep/2+1), spec, r))
		if v == 1 {
			caughtUp(t, pc, rc)
		}
	}
	rep, err := compare.Build(sides[0], sides[1], compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.Metric == rep.Primary && row.Operation == rep.PrimaryOperation || row.Metric == "latencyP99Millis" && row.Operation == "Sets" {
			t.Logf("%s %s: off %.4g, on %.4g %s (medians; off %.4g, on %.4g), Δ %+.1f %% [%.1f, %.1f], %s", row.Metric, row.Operation,
				row.Baseline.Median, row.Candidate.Median, row.Unit, row.BaselineVals, row.CandidateVals,
				float64(row.DeltaPercent), float64(row.CILowPercent), float64(row.CIHighPercent), row.Verdict)
		}
	}
	if len(rep.Rows) == 0 {
		t.Fatal("the comparison has no rows")
	}
}

// caughtUp waits until the replica has applied every write the primary
// logged: the same master_repl_offset on both.
func caughtUp(t *testing.T, primary, replica *goredis.Client) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "the replica to catch up with the primary", func() error {
		p, r := info(t, primary, "replication", "master_repl_offset"), info(t, replica, "replication", "master_repl_offset")
		if p == "" || p != r {
			return fmt.Errorf("master_repl_offset %q on the primary, %q on the replica", p, r)
		}
		return nil
	})
}
