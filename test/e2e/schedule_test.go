package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// scheduleYAML is a schedule of redis-benchmark SET, pipelined, against an
// external redis-server; one run per template change, judged against the
// median of two good runs, 50 % worse opens a regression. Beside the
// package's other stories a run of 400,000 requests (half a second) swung
// 415k–909k ops/s at the same setting and opened regressions of its own, so
// a run lasts about a second or two. The good level is CPU-bound and swings
// with the machine (CI: 458k–906k ops/s, up to −45 %); the slowed level is
// bound by the fsync once per event-loop pass, so it falls with the
// commands one pass carries (clients × pipeline): at 20 × 16 it was only
// −60 % here (342k against 980k), and a low good run in the baseline made a
// slowed run −44 %, no regression (CI failure, 2026-11-28). At 8 × 16 it is
// −83 % (184k against 1,096k), well clear of the noise on both sides.
const scheduleYAML = `apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkSchedule
metadata:
  name: nightly-set
spec:
  onTemplateChange: true
  regression: {method: Threshold, thresholdPercent: 50, baselineRuns: 2}
  runTemplate:
    labels: {bench.dbperf.io/release: r0}
    spec:
      repetitions: 1
      cleanup: Always
      allowSharedNodes: true
      target:
        external: {host: 127.0.0.1, port: %d}
      workload:
        redisBenchmark: {tests: [set], requests: 1200000, clients: [8], pipeline: [16], keySpace: 1000}
        placement:
          nodeSelector: {pool: loadgen}
`

// TestScheduleKeepsARealRegression: issue 23's night on the simulated
// cluster with a real redis-server. Three good runs, then the test switches
// the server to appendfsync always (every write fsync'd: about a third of
// the throughput here) and the regression opens at the first slowed run and
// stays through the next, the manager killed between the two; the server
// switched back, the next run recovers it with its own event; slowed again,
// a second regression, which a person acknowledges with the real plugin
// (`kubectl dbperf ack`), after which a slowed run is no regression. One
// Regression event per regression, `kubectl dbperf history` marks both.
func TestScheduleKeepsARealRegression(t *testing.T) {
	testutil.NeedEnv(t, "KUBEBUILDER_ASSETS") // skips before the builds without a control plane
	testutil.NeedEnv(t, "HELM")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	server, err := localdb.Tool("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	port, err := localdb.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	redis := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := redis.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = redis.Process.Kill(); _ = redis.Wait() })
	if err := localdb.WaitForPort(port, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cli, err := localdb.Tool("redis-cli")
	if err != nil {
		t.Fatal(err)
	}
	slow := func(on bool) {
		t.Helper()
		args := [][]string{{"config", "set", "appendonly", "no"}, {"config", "set", "appendfsync", "everysec"}}
		if on {
			args = [][]string{{"config", "set", "appendonly", "yes"}, {"config", "set", "appendfsync", "always"}}
		}
		for _, a := range args {
			if out, err := exec.CommandContext(ctx, cli, append([]string{"-p", strconv.Itoa(port)}, a...)...).CombinedOutput(); err != nil || !strings.Contains(string(out), "OK") {
				t.Fatalf("redis-cli %v: %v %s", a, err, out)
			}
		}
	}

	work, logf := workDir(t, "dbperf-e2e-schedule-")
	bins := t.TempDir()
	manager := build(t, bins, "./cmd/manager", "manager")
	runner := build(t, bins, "./cmd/runner", "dbperf-runner")
	plugin := build(t, bins, "./cmd/kubectl-dbperf", "kubectl-dbperf")
	stack, k := oneNodeStack(ctx, t, "e2e-sched", work, logf, manager, runner, ns)
	c := stack.Cluster
	if out, err := c.Kubectl(ctx, strings.NewReader(fmt.Sprintf(scheduleYAML, port)), "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	key := client.ObjectKey{Namespace: ns, Name: "nightly-set"}
	get := func() *benchv1.BenchmarkSchedule {
		t.Helper()
		s := &benchv1.BenchmarkSchedule{}
		if err := k.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	testutil.Eventually(t, time.Minute, "the schedule observed", func() error {
		if get().Status.TemplateHash == "" {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	release := 0
	// next bumps the release (a GitOps commit), waits for its run to end
	// and for the schedule to judge it, and returns the Regressed condition.
	next := func(what string) *metav1.Condition {
		t.Helper()
		release++
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s := get()
			s.Spec.RunTemplate.Labels[benchv1.LabelRelease] = fmt.Sprintf("r%d", release)
			return k.Update(ctx, s)
		}); err != nil {
			t.Fatal(err)
		}
		var s *benchv1.BenchmarkSchedule
		testutil.Eventually(t, 90*time.Second, fmt.Sprintf("release r%d (%s) judged", release, what), func() error {
			if gone, err := stack.Manager.Exited(); gone {
				t.Fatalf("the manager exited: %v", err)
			}
			s = get()
			h := s.Status.History
			if len(h) < release || h[len(h)-1].Release != fmt.Sprintf("r%d", release) || !h[len(h)-1].Phase.Terminal() {
				return fmt.Errorf("%d entries", len(h))
			}
			if h[len(h)-1].Phase != benchv1.PhaseSucceeded {
				t.Fatalf("release r%d's run ended %s", release, h[len(h)-1].Phase)
			}
			if h[len(h)-1].Judgement == "" {
				return fmt.Errorf("not judged yet")
			}
			return nil
		})
		e := s.Status.History[len(s.Status.History)-1]
		cond := meta.FindStatusCondition(s.Status.Conditions, benchv1.ConditionRegressed)
		t.Logf("r%d (%s): %.0f %s, %s; Regressed=%s (%s)", release, what, *e.Value, e.Unit, e.Judgement, cond.Status, cond.Reason)
		return cond
	}
	want := func(cond *metav1.Condition, status metav1.ConditionStatus, reason string) {
		t.Helper()
		if cond.Status != status || cond.Reason != reason {
			t.Fatalf("Regressed=%s (%s), want %s (%s): %s\n%s", cond.Status, cond.Reason, status, reason, cond.Message, history(ctx, t, plugin, c.Kubeconfig))
		}
	}

	var good []float64
	for range 3 {
		next("appendfsync no")
		h := get().Status.History
		good = append(good, *h[len(h)-1].Value)
	}
	// The control: three runs at one setting must agree within 1.5× for a
	// 50 % threshold to mean anything. When other packages' tests load
	// the machine, they did not (CI: 391k, 501k, 800k ops/s), and the test
	// says so and stops instead of judging noise, as TestExecDipIsFlagged
	// does; the judgement itself is proven deterministically by the
	// controllers' TestScheduleNeverForgetsARegression.
	if lo, hi := slices.Min(good), slices.Max(good); hi > 1.5*lo {
		t.Skipf("the machine is too noisy to judge a 50 %% change: three runs at one setting measured %.0f–%.0f ops/s (%.1f×)", lo, hi, hi/lo)
	}
	want(meta.FindStatusCondition(get().Status.Conditions, benchv1.ConditionRegressed), metav1.ConditionFalse, benchv1.ReasonNoRegression)
	slow(true)
	want(next("appendfsync always"), metav1.ConditionTrue, benchv1.ReasonRegression)
	first := get().Status.Regression.Open.FirstRun
	if err := stack.RestartManager(ctx); err != nil { // nothing may be forgotten or said twice
		t.Fatal(err)
	}
	c2 := next("appendfsync always, after a manager restart")
	want(c2, metav1.ConditionTrue, benchv1.ReasonRegression)
	if !strings.Contains(c2.Message, "from run "+first) || !strings.Contains(c2.Message, "2 runs so far") {
		t.Errorf("the regression forgot where it started: %s", c2.Message)
	}
	slow(false)
	// Back at the old level the regression clears. The machine runs the
	// package's other stories beside this one, so one run of it can land
	// 40 % low (CI: 462k against 788k ops/s): up to three runs of the old
	// level are given, and one of them must clear it; a regression that
	// never clears still fails.
	var back *metav1.Condition
	for range 3 {
		if back = next("appendfsync no again"); back.Status == metav1.ConditionFalse || back.Reason != benchv1.ReasonRegression {
			break
		}
	}
	want(back, metav1.ConditionFalse, benchv1.ReasonRecovered)
	slow(true)
	want(next("appendfsync always"), metav1.ConditionTrue, benchv1.ReasonRegression)
	want(next("appendfsync always"), metav1.ConditionTrue, benchv1.ReasonRegression)
	second := get().Status.Regression.Open.FirstRun

	out, err := exec.CommandContext(ctx, plugin, "ack", "nightly-set", "--kubeconfig", c.Kubeconfig, "-n", ns, "--reason", "appendfsync always is the release's new durability default").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "acknowledged by") {
		t.Fatalf("kubectl dbperf ack: %v\n%s", err, out)
	}
	testutil.Eventually(t, 30*time.Second, "the acknowledgement judged", func() error {
		if c := meta.FindStatusCondition(get().Status.Conditions, benchv1.ConditionRegressed); c.Reason != benchv1.ReasonAcknowledged {
			return fmt.Errorf("Regressed=%s (%s)", c.Status, c.Reason)
		}
		return nil
	})
	want(next("appendfsync always, the accepted level"), metav1.ConditionFalse, benchv1.ReasonNoRegression)

	// One event per transition, never two: two regressions, one recovery,
	// one acknowledgement.
	testutil.Eventually(t, 20*time.Second, "the events", func() error {
		var events corev1.EventList
		if err := k.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		got := map[string]int{}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "BenchmarkSchedule" {
				got[e.Reason] += int(max(e.Count, 1))
			}
		}
		if got[benchv1.ReasonRegression] != 2 || got[benchv1.ReasonRecovered] != 1 || got[benchv1.ReasonAcknowledged] != 1 {
			return fmt.Errorf("events %v", got)
		}
		return nil
	})
	s := get()
	if s.Status.Regression.RegressionsDetected != 2 {
		t.Errorf("regressions detected %d, want 2", s.Status.Regression.RegressionsDetected)
	}
	text := history(ctx, t, plugin, c.Kubeconfig)
	for _, w := range []string{first, second} {
		found := false
		for _, line := range strings.Split(text, "\n") {
			found = found || strings.HasPrefix(line, w+" ") && strings.Contains(line, "◀ regression starts")
		}
		if !found {
			t.Errorf("kubectl dbperf history does not mark %s:\n%s", w, text)
		}
	}
	if !strings.Contains(text, "acknowledged") || !strings.Contains(text, "recovered") {
		t.Errorf("kubectl dbperf history:\n%s", text)
	}
	t.Logf("kubectl dbperf history nightly-set:\n%s", text)
	raw, _ := json.Marshal(s.Status.Regression)
	t.Logf("status.regression: %s", raw)
}

// history is `kubectl dbperf history nightly-set` as a person reads it.
func history(ctx context.Context, t *testing.T, plugin, kubeconfig string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, plugin, "history", "nightly-set", "--kubeconfig", kubeconfig, "-n", ns).CombinedOutput()
	if err != nil {
		t.Errorf("kubectl dbperf history: %v\n%s", err, out)
	}
	return string(out)
}
