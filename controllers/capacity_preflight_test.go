package controllers

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
)

// TestCapacityLaddersAndPreflightAtOnce: many capacity ladders at once
// (100 … 700/s against a knee at 650), every second one's load
// generators declaring a thousandth of a CPU, each Job's runner reading a
// cgroup of its own that the replayed pgbench output advances by 0.2 CPU
// seconds (the generators' cost the pre-flight check reads), the way it
// breaks: the first status write recording each measurement refused by a
// real conflict, every third results ConfigMap update too, the manager
// restarted mid-way. The ladders end FirstFailure at 600 after 7 levels;
// the thin ones end GeneratorLimit after exactly one, saying the
// pre-flight refused the next level; every Job is one measurement in
// status and in the results documents, and no stored result is
// rewritten. DBPERF_CAPACITY_RUNS: hundreds at once (300: 1,200 Jobs).
func TestCapacityLaddersAndPreflightAtOnce(t *testing.T) {
	runs := 8
	if v, err := strconv.Atoi(os.Getenv("DBPERF_CAPACITY_RUNS")); err == nil && v > 0 {
		runs = v
	}
	h, ic := interferingHarness(t)
	for n := range runs {
		run := capacityRun(fmt.Sprintf("cap-%02d", n), 1)
		run.Spec.Capacity.Search, run.Spec.Capacity.Levels = nil, []int32{100, 200, 300, 400, 500, 600, 700}
		if n%2 == 1 { // generators declaring a thousandth of a CPU
			run.Spec.Workload.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m")}
		}
		h.Create(run)
	}
	seen, restarted := playWithCgroup(t, h, runs, func(n int, j *batchv1.Job) string { return pgbenchAtRate(rateOf(t, j), 650) })
	var counted measurementCount
	reasons := map[benchv1.CapacityStopReason]int{}
	for n := range runs {
		run := h.Run(fmt.Sprintf("cap-%02d", n))
		counted.add(t, h, run)
		cs := run.Status.Capacity
		if run.Status.Phase != benchv1.PhaseSucceeded || cs == nil {
			t.Errorf("%s: %s %+v", run.Name, run.Status.Phase, cs)
			continue
		}
		reasons[cs.StopReason]++
		for i, s := range run.Status.Steps {
			if len(s.Repetitions) != 1 || s.Name != cs.Levels[i].Step {
				t.Errorf("%s: step %s with %d measurements", run.Name, s.Name, len(s.Repetitions))
			}
		}
		switch {
		case n%2 == 0 && (cs.StopReason != benchv1.CapacityFirstFailure || *cs.Maximum != 600):
			t.Errorf("%s: %s %v %s", run.Name, cs.StopReason, cs.Maximum, cs.Message)
		case n%2 == 1 && (cs.StopReason != benchv1.CapacityGeneratorLimit || len(cs.Levels) != 1 || !strings.Contains(cs.Message, "pre-flight")):
			t.Errorf("%s: refused after %d levels: %s", run.Name, len(cs.Levels), cs.Message)
		}
	}
	counted.check(t, seen)
	ic.mu.Lock()
	defer ic.mu.Unlock()
	t.Logf("%d ladders, restarted %v: stop reasons %v; %d recording status writes refused, %d ConfigMap updates, rewritten %v",
		runs, restarted, reasons, len(ic.recordRefused), ic.cmUpdates, ic.rewritten)
	if len(ic.rewritten) > 0 || !restarted {
		t.Errorf("rewritten %v, restarted %v", ic.rewritten, restarted)
	}
}

// playWithCgroup is playCapacity with each Job's runner reading a cgroup
// of its own that the replayed command advances by 0.2 CPU seconds: the
// generators' CPU per operation the pre-flight check reads. The manager
// is restarted after two Jobs a run.
func playWithCgroup(t *testing.T, h *harness, runs int, answer func(n int, j *batchv1.Job) string) (map[string]int, bool) {
	t.Helper()
	dir := t.TempDir()
	return playCapacityWith(t, h, runs, 2, answer, func(j *batchv1.Job, out string) runner.Options {
		root := filepath.Join(dir, j.Name+"-cgroup")
		_ = os.MkdirAll(root, 0o755)
		_ = os.WriteFile(filepath.Join(root, "cpu.stat"), []byte("usage_usec 1000000\n"), 0o600)
		return runner.Options{Command: []string{"sh", "-c", "cat " + out + "; sleep 0.05; echo usage_usec 1200000 > " + filepath.Join(root, "cpu.stat")},
			CPU: runner.CPUReader{Root: root}}
	})
}
