package kit

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Measured is what a load generator of each variant of Comparison
// reports: the v4a pool does about twice the transactions, with the same
// p99 within noise.
func Measured(variant string, i int) string {
	jitter := []float64{0, 3, -2, 1, -1, 2}[i%6]
	res := results.New("pgbench")
	res.Primary = results.Key{Name: "transactionsPerSecond"}
	tps, p99 := 25210+40*jitter, 12.0+0.05*jitter
	if variant == "v4a" {
		tps, p99 = 54753+80*jitter, 12.0-0.05*jitter
	}
	res.Add(results.Metric{Name: "transactionsPerSecond", Value: tps, Unit: "tx/s", Direction: results.HigherIsBetter})
	res.Add(results.Metric{Name: "latencyP99Millis", Value: p99, Unit: "ms", Direction: results.LowerIsBetter})
	msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
	if err != nil {
		panic(err)
	}
	return string(msg)
}

// PlayRuns answers every measurement Job of the comparison's runs, in the
// order they appear, with answer (the variant and how many of its Jobs
// were answered before: Measured, or a test's own), and returns the
// variants in that order. It also checks that no more runs are active at
// once than the order allows.
func (h *H) PlayRuns(cmpName string, total, maxActive int, answer func(variant string, i int) string) []string {
	h.T.Helper()
	h.Node("v3-node", map[string]string{"pool": "standard-v3"})
	h.Node("v4a-node", map[string]string{"pool": "standard-v4a"})
	return h.playRuns(cmpName, total, maxActive, map[string]string{"v3": "standard-v3", "v4a": "standard-v4a"},
		map[string]string{"v3": "v3-node", "v4a": "v4a-node"}, answer)
}

// PlayRunsInOnePool is PlayRuns for a comparison whose variants' load
// generators share the pool loadgen (its node loadgen-1).
func (h *H) PlayRunsInOnePool(cmpName string, total, maxActive int, answer func(variant string, i int) string) []string {
	h.T.Helper()
	n := h.LoadgenNode()
	return h.playRuns(cmpName, total, maxActive, map[string]string{"v3": "loadgen", "v4a": "loadgen"}, map[string]string{"v3": n, "v4a": n}, answer)
}

// playRuns answers the measurements of each variant's runs on its node,
// checking that their Jobs ask for its pool.
func (h *H) playRuns(cmpName string, total, maxActive int, pool, node map[string]string, answer func(variant string, i int) string) []string {
	h.T.Helper()
	ctx := context.Background()
	answered := map[string]bool{}
	var order []string
	count := map[string]int{}
	testutil.Eventually(h.T, 90*time.Second, fmt.Sprintf("%d runs of %s measured", total, cmpName), func() error {
		var runs benchv1.BenchmarkRunList
		if err := h.Client.List(ctx, &runs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		active := 0
		for _, r := range runs.Items {
			if !r.Status.Phase.Terminal() {
				active++
			}
		}
		if active > maxActive {
			h.T.Fatalf("%d runs active at once, the order allows %d", active, maxActive)
		}
		var jobs batchv1.JobList
		if err := h.Client.List(ctx, &jobs, client.InNamespace(h.NS)); err != nil {
			return err
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if answered[j.Name] || j.Labels[benchv1.LabelRole] != benchv1.RoleLoadgen {
				continue
			}
			runName := j.Spec.Template.Annotations[benchv1.AnnotationRunName]
			var run benchv1.BenchmarkRun
			if err := h.Client.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: runName}, &run); err != nil {
				return err
			}
			v := run.Labels[benchv1.LabelVariant]
			if got := j.Spec.Template.Spec.NodeSelector["pool"]; got != pool[v] {
				h.T.Errorf("run %s of variant %s asks for pool %q: the patch was not applied", runName, v, got)
			}
			answered[j.Name] = true
			order = append(order, v)
			h.Terminate(j, node[v], 0, answer(v, count[v]))
			count[v]++
		}
		if len(answered) < total {
			return fmt.Errorf("%d of %d measurements answered", len(answered), total)
		}
		return nil
	})
	return order
}

// WaitComparison waits until the comparison is in phase.
func (h *H) WaitComparison(name string, phase benchv1.ComparisonPhase) *benchv1.BenchmarkComparison {
	h.T.Helper()
	cmp := &benchv1.BenchmarkComparison{}
	testutil.Eventually(h.T, 60*time.Second, "comparison "+string(phase), func() error {
		if err := h.Client.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: name}, cmp); err != nil {
			return err
		}
		if cmp.Status.Phase != phase {
			return fmt.Errorf("phase %q, progress %s, conditions %+v", cmp.Status.Phase, cmp.Status.Progress, cmp.Status.Conditions)
		}
		return nil
	})
	return cmp
}

// ScheduleRuns are the runs the schedule made.
func (h *H) ScheduleRuns(s *benchv1.BenchmarkSchedule) []benchv1.BenchmarkRun {
	h.T.Helper()
	var runs benchv1.BenchmarkRunList
	if err := h.Client.List(context.Background(), &runs, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelSchedule: string(s.UID)}); err != nil {
		h.T.Fatal(err)
	}
	return runs.Items
}

// History is a schedule's history of valid runs with these values (in
// ops/s, higher is better), a minute apart, named prefix-00, prefix-01, ...
func History(prefix string, values ...float64) []benchv1.HistoryEntry {
	out := make([]benchv1.HistoryEntry, len(values))
	for i, v := range values {
		out[i] = benchv1.HistoryEntry{Run: fmt.Sprintf("%s-%02d", prefix, i), Phase: benchv1.PhaseSucceeded, Release: fmt.Sprintf("v%d", i),
			StartTime: metav1.NewTime(time.Date(2026, 11, 1, 0, i, 0, 0, time.UTC)), Value: ptr.To(v), Unit: "ops/s", Direction: benchv1.HigherIsBetter}
	}
	return out
}
