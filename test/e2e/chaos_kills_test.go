package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/specs"
	"github.com/dbperf-io/dbperf-operator/test/localdb"
	"github.com/dbperf-io/dbperf-operator/test/sim"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// killRunYAML: name, the port of the run's own external server. One long
// measurement (tens of seconds unless something is killed).
const killRunYAML = `
apiVersion: bench.dbperf.io/v1alpha1
kind: BenchmarkRun
metadata:
  name: %s
spec:
  allowSharedNodes: true
  target:
    external: {host: 127.0.0.1, port: %d}
  workload:
    redisBenchmark: {tests: [get], requests: 2000000, clients: [4], pipeline: [1], keySpace: 1000}
    placement:
      nodeSelector: {pool: loadgen}
  telemetry: {pollInterval: 1s}
  validity: {maxLoadGeneratorCPUPercent: 100}
`

// underWay is how many commands the server must have served before a kill:
// the measurement is then well started (and far from its end).
const underWay = 20000

// killRunnerMidMeasurement kills (SIGKILL) the runner of a load generator,
// found among the local processes by its pod's UID, in the middle of a
// measurement, and its tool with it, as an OOM kill of the container would.
func (r *chaosRig) killRunnerMidMeasurement(ctx context.Context) (*benchv1.BenchmarkRun, error) {
	server, err := localdb.StartRedis()
	if err != nil {
		return nil, err
	}
	r.t.Cleanup(server.Stop)
	name := chaosKillPrefix + "runner"
	obj, err := r.create(ctx, runGVR, fmt.Sprintf(killRunYAML, name, server.Port))
	if err != nil {
		return nil, err
	}
	job := specs.MeasureJobName(&benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name, UID: obj.GetUID()}}, 0, 1)
	pid := 0
	err = testutil.Poll(ctx, 3*time.Minute, 50*time.Millisecond, "the runner of "+job+" measuring", func() error {
		pods, err := r.e.stack.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: benchv1.LabelJob + "=" + job})
		if err != nil {
			return err
		}
		if len(pods.Items) == 0 {
			return errors.New("no pod yet")
		}
		if pid = sim.PodProcess(pods.Items[0].UID, "dbperf-runner"); pid == 0 {
			return errors.New("no runner process yet")
		}
		if n := commandsProcessed(r.t, server.Port); n < underWay {
			return fmt.Errorf("%d commands so far", n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tools := sim.Children(pid)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("killing the runner %d: %w", pid, err)
	}
	for _, p := range tools {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	r.t.Logf("killed the runner (pid %d) of %s and its tool %v after %d commands", pid, job, tools, commandsProcessed(r.t, server.Port))
	return r.waitTerminal(ctx, name, 3*time.Minute)
}

// killServerMidMeasurement kills (SIGKILL) the redis-server behind an
// external target in the middle of a measurement, and starts it again on
// the same port at once, as a supervisor would.
func (r *chaosRig) killServerMidMeasurement(ctx context.Context) (*benchv1.BenchmarkRun, error) {
	bin, err := localdb.Tool("redis-server")
	if err != nil {
		return nil, err
	}
	port, err := localdb.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "dbperf-chaos-redis-")
	if err != nil {
		return nil, err
	}
	var server *exec.Cmd
	start := func() error {
		server = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir)
		if err := server.Start(); err != nil {
			return err
		}
		return localdb.WaitForPort(port, 10*time.Second)
	}
	if err := start(); err != nil {
		return nil, err
	}
	r.t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait(); _ = os.RemoveAll(dir) })
	name := chaosKillPrefix + "server"
	if _, err := r.create(ctx, runGVR, fmt.Sprintf(killRunYAML, name, port)); err != nil {
		return nil, err
	}
	err = testutil.Poll(ctx, 3*time.Minute, 50*time.Millisecond, name+" measuring", func() error {
		if n := commandsProcessed(r.t, port); n < underWay {
			return fmt.Errorf("%d commands so far", n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	served := commandsProcessed(r.t, port)
	_ = server.Process.Kill()
	_ = server.Wait()
	if err := start(); err != nil {
		return nil, fmt.Errorf("starting redis-server again: %w", err)
	}
	r.t.Logf("killed the redis-server behind %s after %d commands and started it again (pid %d)", name, served, server.Process.Pid)
	return r.waitTerminal(ctx, name, 3*time.Minute)
}

func (r *chaosRig) waitTerminal(ctx context.Context, name string, within time.Duration) (*benchv1.BenchmarkRun, error) {
	var run *benchv1.BenchmarkRun
	err := testutil.Poll(ctx, within, 50*time.Millisecond, name+" ending", func() error {
		var err error
		if run, err = getRun(ctx, r.dyn, name); err != nil {
			return err
		}
		if !run.Status.Phase.Terminal() {
			return fmt.Errorf("phase %s (%s)", run.Status.Phase, conditionsOf(run))
		}
		return nil
	})
	return run, err
}

// checkKilledMeasurements: a measurement whose runner or server was killed
// ends Failed or Invalid with its reason, and no number of it counts: the
// run is Failed or Invalid, no summary or primary result comes from it,
// and the results document says the same.
func checkKilledMeasurements(ctx context.Context, t *testing.T, c *sim.Cluster, runs []*benchv1.BenchmarkRun) {
	t.Helper()
	if len(runs) != 2 {
		t.Errorf("%d of the 2 kill cases ended", len(runs))
	}
	for _, run := range runs {
		if run.Status.Phase != benchv1.PhaseFailed && run.Status.Phase != benchv1.PhaseInvalid {
			t.Errorf("%s: a measurement across a kill left the run %s: %s", run.Name, run.Status.Phase, mustJSON(run.Status.Steps))
			continue
		}
		if len(run.Status.Steps) != 1 || len(run.Status.Steps[0].Repetitions) != 1 {
			t.Errorf("%s: steps %s, want its one measurement", run.Name, mustJSON(run.Status.Steps))
			continue
		}
		rep := run.Status.Steps[0].Repetitions[0]
		why := strings.Join(rep.Reasons, "; ")
		t.Logf("%s: %s, measurement %s: %s", run.Name, run.Status.Phase, rep.Verdict, why)
		if (rep.Verdict != benchv1.VerdictFailed && rep.Verdict != benchv1.VerdictInvalid) || why == "" {
			t.Errorf("%s: the killed measurement is %s with reasons %q", run.Name, rep.Verdict, why)
		}
		if run.Name == chaosKillPrefix+"runner" && !strings.Contains(why, "without a dbperf summary") {
			t.Errorf("%s: the reasons do not say the runner left no summary: %s", run.Name, why)
		}
		if len(run.Status.Steps[0].Summary) != 0 || run.Status.Primary != nil {
			t.Errorf("%s: the killed measurement counts: summary %s, primary %s", run.Name, mustJSON(run.Status.Steps[0].Summary), mustJSON(run.Status.Primary))
		}
		doc, err := runDocument(ctx, c, run)
		if err != nil {
			t.Errorf("%s: %v", run.Name, err)
			continue
		}
		if res := doc.Steps[0].Repetitions[0].Result; res == nil || string(res.Verdict) != string(rep.Verdict) || len(res.Reasons) == 0 {
			t.Errorf("%s: the document's result %s, status %s", run.Name, mustJSON(res), rep.Verdict)
		}
	}
}
