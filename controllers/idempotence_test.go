package controllers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	stats "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/pod"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/runner"
	"github.com/dbperf-io/dbperf-operator/internal/runner/dbstats"
	"github.com/dbperf-io/dbperf-operator/internal/telemetry/resources"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// nodeKubelet answers a node's statistics for every pod the API server has
// on it, with this machine's busy CPU time (real counters, read at each
// poll): a kubelet for any number of runs.
type nodeKubelet struct{ ns string }

func (k nodeKubelet) Summary(ctx context.Context, node string) (*stats.Summary, error) {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(k.ns)); err != nil {
		return nil, err
	}
	var refs []stats.PodReference
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			refs = append(refs, stats.PodReference{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID)})
		}
	}
	return hostKubelet{pods: refs}.Summary(ctx, node)
}

// TestMeasurePhaseIsIdempotent: the measure phase as telemetry changed it
// (the resource sampler, the server's statistics, the target's judgement,
// APDEX, the stored result, the status metrics), the way it breaks. Many
// runs at once; the first status write recording each measurement meets a
// real conflict, so the phase computes that measurement again; every third
// results ConfigMap update meets one too; the manager is restarted (with a
// fresh resource source: the old one's samples are gone) while runs are in
// flight. Afterwards every run has every measurement once in status and in
// its results document; no stored measurement was ever rewritten; status
// records exactly what is stored; no telemetry figure is attached twice.
func TestMeasurePhaseIsIdempotent(t *testing.T) {
	const runs, reps = 12, 2
	h := newHarness(t)
	ctx := context.Background()
	node := h.LoadgenNode()
	rd := testutil.StartRedis(t)
	ic := newInterferer()
	ic.refuseRecords = true
	h.wrap = ic.wrap
	h.resources = resources.NewMeter(nodeKubelet{ns: h.NS}, 200*time.Millisecond, nil, 0)
	h.RestartManager(cfg)
	for n := range runs {
		h.Create(&benchv1.BenchmarkRun{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("idem-%02d", n)},
			Spec: benchv1.BenchmarkRunSpec{
				Repetitions:      reps,
				AllowSharedNodes: true,
				Target:           benchv1.TargetSpec{External: &benchv1.ExternalTarget{Host: "127.0.0.1", Port: int32(rd.Port)}},
				Workload: benchv1.WorkloadSpec{RedisBenchmark: &benchv1.RedisBenchmarkWorkload{
					Tests: []string{"set"}, Clients: []int32{4}, Requests: 3000}},
				Telemetry: benchv1.TelemetrySpec{PollInterval: &metav1.Duration{Duration: time.Second}},
				APDEX:     []benchv1.APDEXTarget{{Operation: "*", Target: metav1.Duration{Duration: time.Millisecond}}},
			},
		})
	}
	tool := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(rd.Port), "-c", "4", "-n", "3000", "-t", "set", "--csv"}
	running := map[string]*corev1.Pod{}
	finished := map[string]bool{}
	restarted := false
	testutil.Eventually(t, 4*time.Minute, "every run ending", func() error {
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			switch lg := running[j.Name]; {
			case lg == nil:
				// The load generator starts; the sampler starts with it.
				running[j.Name] = h.StartLoadgen(j, node)
			case !finished[j.Name]:
				finished[j.Name] = true
				h.End(lg, "redis-benchmark", runner.Options{Command: tool,
					ServerStatistics: &runner.ServerStatistics{Protocol: pod.ProtocolRedis,
						Config: dbstats.Config{Host: "127.0.0.1", Port: rd.Port}, Interval: 200 * time.Millisecond}})
			}
		}
		ended, err := endedRuns(ctx, h.NS)
		if err != nil {
			return err
		}
		if !restarted && ended >= runs/3 {
			restarted = true
			h.StopManager()
			h.resources = resources.NewMeter(nodeKubelet{ns: h.NS}, 200*time.Millisecond, nil, 0)
			h.StartManager(cfg)
		}
		return kit.AllEnded(ended, runs)
	})

	ic.mu.Lock()
	defer ic.mu.Unlock()
	if len(ic.rewritten) > 0 {
		t.Errorf("stored measurements rewritten with other bytes: %v", ic.rewritten)
	}
	refused, sampled, lost := len(ic.recordRefused), 0, 0
	for n := range runs {
		name := fmt.Sprintf("idem-%02d", n)
		run := h.Run(name)
		if !run.Status.Phase.Terminal() || run.Status.Phase == benchv1.PhaseFailed {
			t.Errorf("%s: phase %s, conditions %+v", name, run.Status.Phase, run.Status.Conditions)
			continue
		}
		doc := h.ResultsDocument(t, run)
		status := run.Status.Steps[0].Repetitions
		if len(status) != reps || len(doc.Steps[0].Repetitions) != reps {
			t.Errorf("%s: %d repetitions in status, %d in the document, want %d", name, len(status), len(doc.Steps[0].Repetitions), reps)
			continue
		}
		for i, rs := range status {
			dr := doc.Steps[0].Repetitions[i]
			if rs.Index != int32(i+1) || dr.Index != rs.Index || dr.Result == nil {
				t.Errorf("%s: repetition %d: status index %d, document index %d, result %v", name, i+1, rs.Index, dr.Index, dr.Result != nil)
				continue
			}
			res := dr.Result
			// Status records what is stored, figure for figure.
			want := statusMetrics(res)
			if len(want) != len(rs.Metrics) {
				t.Errorf("%s #%d: %d metrics in status, %d from the stored result", name, rs.Index, len(rs.Metrics), len(want))
			}
			for k := range min(len(want), len(rs.Metrics)) {
				if w, g := want[k], rs.Metrics[k]; w.Name != g.Name || w.Operation != g.Operation || w.Value != g.Value || w.Source != g.Source {
					t.Errorf("%s #%d: status metric %d is %s[%s]=%v (%s), stored %s[%s]=%v (%s)", name, rs.Index, k, g.Name, g.Operation, g.Value, g.Source, w.Name, w.Operation, w.Value, w.Source)
				}
			}
			seen := map[results.Key]int{}
			for _, m := range res.Metrics {
				if m.IsTelemetry() {
					seen[m.Key()]++
				}
			}
			for k, c := range seen {
				if c != 1 {
					t.Errorf("%s #%d: %s attached %d times", name, rs.Index, k, c)
				}
			}
			if seen[results.Key{Name: "serverCPUCores", Operation: "server"}] != 1 {
				t.Errorf("%s #%d: no server CPU from the server's statistics: %q", name, rs.Index, res.Warnings)
			}
			joined := strings.Join(res.Warnings, "; ")
			switch {
			case hasKubeletCPU(seen):
				sampled++
			case strings.Contains(joined, "kubelet statistics lost") || strings.Contains(joined, "were not sampled") ||
				strings.Contains(joined, "fewer than two readings") || strings.Contains(joined, "reads of its kubelet's statistics failed"):
				// sampled by the stopped manager, a window too short to
				// sample, or every read timed out (a loaded machine)
				lost++
			default:
				t.Errorf("%s #%d: neither kubelet figures nor a warning saying why: %q", name, rs.Index, res.Warnings)
			}
			if !strings.Contains(joined, "APDEX cannot be computed: redis-benchmark gave no latency histogram") {
				t.Errorf("%s #%d: no APDEX warning for a tool without histograms: %q", name, rs.Index, res.Warnings)
			}
		}
	}
	t.Logf("%d runs × %d repetitions: %d status writes recording a measurement refused (the phase ran again), %d results ConfigMap updates; %d measurements with kubelet figures, %d without and saying why",
		runs, reps, refused, ic.cmUpdates, sampled, lost)
	// One refusal per status write that records measurements (a write may
	// record two), at least one per run.
	if refused < runs {
		t.Errorf("only %d recording status writes were refused for %d runs", refused, runs)
	}
	if sampled == 0 {
		t.Error("no measurement carries kubelet figures")
	}
}

func hasKubeletCPU(seen map[results.Key]int) bool {
	for k := range seen {
		if k.Name == "cpuCores" && strings.HasPrefix(k.Operation, "loadgen/") {
			return true
		}
	}
	return false
}
