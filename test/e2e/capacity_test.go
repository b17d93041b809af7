package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// capacityYAML: pgbench against a local PostgreSQL whose transactions each
// sleep 5 ms, driven by 10 clients at a fixed offered rate (--rate, open
// loop: latency counted from each transaction's scheduled start). The
// server cannot do more than 10 / 5 ms = 2000 tx/s whatever the offered
// rate, and queueing pushes p99 past its limit (20 ms, 50 ms in the short
// form) before that: a knee that does
// not depend on this machine's CPU. The search steps up until a level
// fails, then bisects (its start, factor and width, repetitions, duration
// exceed ratio and latency limit are filled in by the test).
const capacityYAML = `apiVersion: v1
kind: Secret
metadata:
  name: local-pg
stringData:
  username: %[1]s
  password: %[2]s
---
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %[4]s
spec:
  cleanup: Never
  repetitions: %[5]d
  target:
    external: {host: 127.0.0.1, port: %[3]d, database: postgres, secretRef: {name: local-pg}}
  workload:
    skipPrepare: true
    pgbench: {script: "SELECT pg_sleep(0.005);", clients: [10], jobs: 2, duration: %[6]s, progressInterval: 1s, latencyLimit: %[11]s}
    placement:
      nodeSelector: {pool: loadgen}
  capacity:
    parameter: rate
    search: {start: %[8]d, factorPercent: %[9]d, widthPercent: %[10]d}
    maxLevels: 12%[7]s
    rules:
      latency: [{percentile: 99, max: %[11]s}]
      minAchievedPercent: 95
`

// behindYAML: one client at 5 ms a transaction (at most about 190/s)
// passes 50/s and cannot offer 400/s: the
// ladder's second level fails because the achieved rate falls short, and
// says so first (its latency fails too). The latency limit is 200 ms, far
// above the 5-ms transaction: at 50/s a stall of the machine beside CI's
// other tests (CI once: 5 of 108 transactions over 50 ms) is not the
// generator's limit this test is about.
const behindYAML = `apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: pg-behind
spec:
  cleanup: Never
  target:
    external: {host: 127.0.0.1, port: %[1]d, database: postgres, secretRef: {name: local-pg}}
  workload:
    skipPrepare: true
    pgbench: {script: "SELECT pg_sleep(0.005);", clients: [1], duration: 3s, progressInterval: 1s, latencyLimit: 200ms}
    placement:
      nodeSelector: {pool: loadgen}
  capacity:
    parameter: rate
    levels: [50, 400, 800]
    rules:
      latency: [{percentile: 99, max: 200ms}]
      minAchievedPercent: 95
`

// TestCapacitySearchFindsTheKnee: issue 27's search on the simulated
// cluster with real pgbench against a real PostgreSQL. The search finds
// the knee below the server's hard limit, its levels each measured once
// although the manager is killed mid-search; a generator that cannot
// offer the load stops a ladder for that reason. DBPERF_CAPACITY_SEARCHES
// repeats the search (make capacity: five) and reports the spread of the
// maxima, which must stay within one width of each other.
func TestCapacitySearchFindsTheKnee(t *testing.T) {
	testutil.NeedEnv(t, "KUBEBUILDER_ASSETS")
	testutil.NeedEnv(t, "HELM")
	// Beside the package's other parallel stories: the knee is the
	// server's (5 ms a transaction, 10 clients), not this machine's CPU,
	// and once it is only checked to lie below the server's hard limit.
	t.Parallel()
	searches := 1
	if v, err := strconv.Atoi(os.Getenv("DBPERF_CAPACITY_SEARCHES")); err == nil && v > 0 {
		searches = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(4+3*searches)*time.Minute)
	defer cancel()
	pg := testutil.StartPostgres(t)
	work, logf := workDir(t, "dbperf-e2e-capacity-")
	bins := t.TempDir()
	manager := build(t, bins, "./cmd/manager", "manager")
	runner := build(t, bins, "./cmd/runner", "dbperf-runner")
	plugin := build(t, bins, "./cmd/kubectl-dbperf", "kubectl-dbperf")
	stack, k := oneNodeStack(ctx, t, "e2e-cap", work, logf, manager, runner, ns)
	var maxima []int32
	for s := range searches {
		name := fmt.Sprintf("pg-knee-%d", s)
		// make test's short form: from 1000, ×1.5, to within 20 %, two
		// trials of 2 s a level, one of which may fail, and a p99 limit of
		// 50 ms: beside the package's other parallel stories a loaded
		// machine stalled pgbench for more than 20 ms in 2-10 % of the
		// transactions at every level down to 87/s (CI), while above the
		// server's 2,000/s the queue grows without bound and any limit
		// fails (four levels or so).
		manifest := fmt.Sprintf(capacityYAML, pg.User, pg.Password, pg.Port, name, 2, "2s", "\n    exceedRatioPercent: 50", 1000, 150, 20, "50ms")
		if searches > 1 {
			// From 400, ×2, to within 5 %, three trials of 3 s a level, one
			// of which may fail (a hiccup of the machine): MLRsearch's
			// exceed ratio.
			manifest = fmt.Sprintf(capacityYAML, pg.User, pg.Password, pg.Port, name, 3, "3s", "\n    exceedRatioPercent: 34", 400, 200, 5, "20ms")
		}
		if out, err := stack.Kubectl(ctx, strings.NewReader(manifest), "apply", "-n", ns, "-f", "-"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		restarted := s > 0
		run := waitCapacity(ctx, t, k, name, func(r *benchv1.BenchmarkRun) {
			if c := r.Status.Capacity; !restarted && c != nil && len(c.Levels) >= 2 {
				restarted = true
				if err := stack.RestartManager(ctx); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: manager killed and restarted at level %d", name, len(c.Levels))
			}
		})
		cs := run.Status.Capacity
		if cs.StopReason != benchv1.CapacityConverged || cs.Maximum == nil || *cs.Maximum < 400 || *cs.Maximum >= 2000 {
			t.Fatalf("%s: %+v", name, cs)
		}
		for _, l := range cs.Levels {
			t.Logf("%s: level %d passed=%v throughput %v achieved %v %% over the limit %v %% %q", name, l.Value, *l.Passed, deref(l.Throughput), deref(l.AchievedPercent), deref(l.LatencyOverLimitPercent), l.Reasons)
		}
		took := "?"
		if st, end := run.Status.StartTime, run.Status.CompletionTime; st != nil && end != nil {
			took = end.Sub(st.Time).String()
		}
		t.Logf("%s: maximum %d (smallest failing %d) after %d levels in %s: %s", name, *cs.Maximum, *cs.SmallestFailing, len(cs.Levels), took, cs.Message)
		if cs.CoordinatedOmission != "Corrected" {
			t.Errorf("%s: pgbench --rate is corrected for coordinated omission, status says %q", name, cs.CoordinatedOmission)
		}
		checkOneJobPerMeasurement(ctx, t, k, run)
		maxima = append(maxima, *cs.Maximum)
		out, err := exec.CommandContext(ctx, plugin, "capacity", name, "--kubeconfig", stack.Kubeconfig, "-n", ns).CombinedOutput()
		if want := fmt.Sprintf("%s: maximum rate=%d (transactionsPerSecond ", name, *cs.Maximum); err != nil || !strings.Contains(string(out), want) ||
			len(regexp.MustCompile(`(?m)^[0-9]+ +rate=[0-9]+ +(passed|failed) `).FindAll(out, -1)) != len(cs.Levels) {
			t.Errorf("kubectl dbperf capacity %s: %v, want %q and %d levels:\n%s", name, err, want, len(cs.Levels), out)
		} else if s == 0 {
			t.Logf("kubectl dbperf capacity %s:\n%s", name, out)
		}
	}
	if searches > 1 {
		lo, hi := slices.Min(maxima), slices.Max(maxima)
		t.Logf("%d searches: maxima %v, spread %d (%.1f %% of the largest)", searches, maxima, hi-lo, float64(hi-lo)/float64(hi)*100)
		if float64(hi-lo) > 0.05*float64(hi)+1 { // the full form's width
			t.Errorf("the maxima of %d searches of one setting spread over more than one width (5 %%): %v", searches, maxima)
		}
	}

	if out, err := stack.Kubectl(ctx, strings.NewReader(fmt.Sprintf(behindYAML, pg.Port)), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run := waitCapacity(ctx, t, k, "pg-behind", nil)
	cs := run.Status.Capacity
	if cs.StopReason != benchv1.CapacityFirstFailure || cs.Maximum == nil || *cs.Maximum != 50 || len(cs.Levels) != 2 {
		t.Fatalf("pg-behind: %+v", cs)
	}
	if r := cs.Levels[1].Reasons; len(r) == 0 || !strings.Contains(r[0], "the generators achieved") {
		t.Fatalf("pg-behind: level 400 must fail for the achieved rate first: %q", r)
	}
	t.Logf("pg-behind: %s; level 400: %q", cs.Message, cs.Levels[1].Reasons)
}

// waitCapacity waits for a capacity run to succeed; each looks at it on the way.
func waitCapacity(ctx context.Context, t *testing.T, k client.Client, name string, each func(*benchv1.BenchmarkRun)) *benchv1.BenchmarkRun {
	t.Helper()
	run := &benchv1.BenchmarkRun{}
	err := testutil.Poll(ctx, 30*time.Minute, time.Second, name+" ending", func() error {
		if err := k.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, run); err != nil {
			return err
		}
		switch {
		case run.Status.Phase == benchv1.PhaseSucceeded && run.Status.Capacity != nil:
			return nil
		case run.Status.Phase.Terminal():
			t.Fatalf("%s ended %s: %s\n%+v", name, run.Status.Phase, run.Status.Message, run.Status.Capacity)
		case each != nil:
			each(run)
		}
		return fmt.Errorf("phase %s, capacity %+v", run.Status.Phase, run.Status.Capacity)
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// checkOneJobPerMeasurement: every level's repetition had one Job, and no
// level had a Job of its own twice.
func checkOneJobPerMeasurement(ctx context.Context, t *testing.T, k client.Client, run *benchv1.BenchmarkRun) {
	t.Helper()
	var jobs batchv1.JobList
	if err := k.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{benchv1.LabelRunUID: string(run.UID), benchv1.LabelRole: benchv1.RoleLoadgen}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for i, s := range run.Status.Steps {
		want += len(s.Repetitions)
		reps := max(1, int(run.Spec.Repetitions))
		if l := run.Status.Capacity.Levels[i]; l.Retried {
			reps++
		}
		if len(s.Repetitions) != reps {
			t.Errorf("%s: level %s has %d measurements, want %d", run.Name, s.Name, len(s.Repetitions), reps)
		}
	}
	if len(jobs.Items) != want || len(run.Status.Steps) != len(run.Status.Capacity.Levels) {
		t.Errorf("%s: %d measurement Jobs, %d measurements in status; %d steps, %d levels", run.Name, len(jobs.Items), want, len(run.Status.Steps), len(run.Status.Capacity.Levels))
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
