package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

func poolPatch(pool string) *apiextensionsv1.JSON {
	return &apiextensionsv1.JSON{Raw: []byte(`{"workload":{"placement":{"nodeSelector":{"pool":"` + pool + `"}}}}`)}
}

func comparison(name string, order benchv1.ComparisonOrder, reps int32) *benchv1.BenchmarkComparison {
	tmpl := measureOnly("x", 20, 1).Spec
	return &benchv1.BenchmarkComparison{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: benchv1.BenchmarkComparisonSpec{
			Template: tmpl,
			Variants: []benchv1.Variant{{Name: "v3", Patch: poolPatch("standard-v3")}, {Name: "v4a", Patch: poolPatch("standard-v4a")}},
			Baseline: "v3", Order: order, RunsPerVariant: reps,
			Criteria: benchv1.ComparisonCriteria{MinEffectPercent: ptr.To[benchv1.Percent](2)},
		},
	}
}

// measuredFn answers the Jobs of playRuns; tests may swap it.
var measuredFn = measured

// measured is what a load generator of each variant reports: the v4a pool
// does about twice the transactions, with the same p99 within noise.
func measured(variant string, i int) string {
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

// playRuns answers every measurement Job of the comparison's runs, in the
// order they appear, and returns the variants in that order. It also checks
// that no more runs are active at once than the order allows.
func playRuns(h *harness, cmpName string, total, maxActive int) []string {
	h.t.Helper()
	ctx := context.Background()
	node := map[string]string{"v3": "v3-node", "v4a": "v4a-node"}
	h.node("v3-node", map[string]string{"pool": "standard-v3"})
	h.node("v4a-node", map[string]string{"pool": "standard-v4a"})
	answered := map[string]bool{}
	var order []string
	count := map[string]int{}
	testutil.Eventually(h.t, 90*time.Second, fmt.Sprintf("%d runs of %s measured", total, cmpName), func() error {
		var runs benchv1.BenchmarkRunList
		if err := k8s.List(ctx, &runs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		active := 0
		for _, r := range runs.Items {
			if !r.Status.Phase.Terminal() {
				active++
			}
		}
		if active > maxActive {
			h.t.Fatalf("%d runs active at once, the order allows %d", active, maxActive)
		}
		var jobs batchv1.JobList
		if err := k8s.List(ctx, &jobs, client.InNamespace(h.ns)); err != nil {
			return err
		}
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if answered[j.Name] || j.Labels[benchv1.LabelRole] != benchv1.RoleLoadgen {
				continue
			}
			runName := j.Spec.Template.Annotations[benchv1.AnnotationRunName]
			var run benchv1.BenchmarkRun
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: runName}, &run); err != nil {
				return err
			}
			v := run.Labels[benchv1.LabelVariant]
			if got := j.Spec.Template.Spec.NodeSelector["pool"]; got != map[string]string{"v3": "standard-v3", "v4a": "standard-v4a"}[v] {
				h.t.Errorf("run %s of variant %s asks for pool %q: the patch was not applied", runName, v, got)
			}
			answered[j.Name] = true
			order = append(order, v)
			h.terminate(j, node[v], 0, measuredFn(v, count[v]))
			count[v]++
		}
		if len(answered) < total {
			return fmt.Errorf("%d of %d measurements answered", len(answered), total)
		}
		return nil
	})
	return order
}

func waitComparison(h *harness, name string, phase benchv1.ComparisonPhase) *benchv1.BenchmarkComparison {
	h.t.Helper()
	cmp := &benchv1.BenchmarkComparison{}
	testutil.Eventually(h.t, 60*time.Second, "comparison "+string(phase), func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, cmp); err != nil {
			return err
		}
		if cmp.Status.Phase != phase {
			return fmt.Errorf("phase %q, progress %s, conditions %+v", cmp.Status.Phase, cmp.Status.Progress, cmp.Status.Conditions)
		}
		return nil
	})
	return cmp
}

// Two variants, 5 runs each, interleaved: the runs alternate A B A B, one at
// a time; the comparison finds v4a about +117 % better in throughput and p99
// unchanged, and writes status and the report (JSON, Markdown, HTML).
func TestComparisonInterleavedEndToEnd(t *testing.T) {
	h := newHarness(t)
	h.create(comparison("gen", benchv1.OrderInterleaved, 5))
	order := playRuns(h, "gen", 10, 1)
	if strings.Join(order, " ") != "v3 v4a v3 v4a v3 v4a v3 v4a v3 v4a" {
		t.Errorf("run order %v, want interleaved", order)
	}
	cmp := waitComparison(h, "gen", benchv1.ComparisonSucceeded)
	if len(cmp.Status.Results) != 1 {
		t.Fatalf("status results %+v, want the primary metric of one step", cmp.Status.Results)
	}
	r := cmp.Status.Results[0]
	if r.Verdict != benchv1.VerdictBetter || r.Candidate != "v4a" || r.BaselineN != 5 || r.CandidateN != 5 || r.DeltaPercent == nil || *r.DeltaPercent < 110 || *r.DeltaPercent > 125 {
		t.Errorf("result %+v", r)
	}
	if cmp.Status.Summary != "1 better, 0 worse, 1 no change, 0 inconclusive" || cmp.Status.Progress != "10/10" {
		t.Errorf("summary %q, progress %q", cmp.Status.Summary, cmp.Status.Progress)
	}
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Compared condition %+v", c)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: cmp.Status.ReportConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&cm, cmp) {
		t.Error("the report ConfigMap must be owned by the comparison")
	}
	if !strings.Contains(cm.Data["report.md"], "| clients=20 | transactionsPerSecond |") || !strings.Contains(cm.Data["report.html"], "<svg") ||
		!strings.Contains(cm.Data["report.json"], `"verdict": "Better"`) {
		t.Errorf("report ConfigMap keys %v:\n%.600s", keys(cm.Data), cm.Data["report.md"])
	}
	// The runs belong to the comparison.
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(h.ns), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil || len(runs.Items) != 10 {
		t.Fatalf("%d runs (err %v), want 10", len(runs.Items), err)
	}
	for _, run := range runs.Items {
		if !metav1.IsControlledBy(&run, cmp) {
			t.Errorf("run %s is not owned by the comparison", run.Name)
		}
	}

	// A person rejects one baseline run after the comparison ended (what
	// `kubectl dbperf reject` writes): the run says so in its condition,
	// the comparison compares again without it and strikes it through;
	// undone, the comparison is back to 5 vs 5.
	var victim string
	for _, run := range runs.Items {
		if run.Labels[benchv1.LabelVariant] == "v3" {
			victim = run.Name
			break
		}
	}
	setRejections := func(value string) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			run := &benchv1.BenchmarkRun{}
			if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: victim}, run); err != nil {
				return err
			}
			if value == "" {
				delete(run.Annotations, benchv1.AnnotationRejections)
			} else {
				if run.Annotations == nil {
					run.Annotations = map[string]string{}
				}
				run.Annotations[benchv1.AnnotationRejections] = value
			}
			return k8s.Update(context.Background(), run)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setRejections(`[{"reason":"a disk failed twice during the run","by":"alice","at":"2026-11-25T12:00:00Z"}]`)
	testutil.Eventually(t, 30*time.Second, "the comparison leaves the rejected run out", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "gen"}, cmp); err != nil {
			return err
		}
		if len(cmp.Status.Rejections) != 1 || len(cmp.Status.Results) != 1 || cmp.Status.Results[0].BaselineN != 4 {
			return fmt.Errorf("rejections %v, results %+v", cmp.Status.Rejections, cmp.Status.Results)
		}
		return nil
	})
	run := &benchv1.BenchmarkRun{}
	testutil.Eventually(t, 30*time.Second, "the run's condition Rejected", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: victim}, run); err != nil {
			return err
		}
		c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionRejected)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "the whole run rejected by alice at 2026-11-25T12:00:00Z: a disk failed twice") {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: cmp.Status.ReportConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["report.md"], "~~v3 "+victim) || !strings.Contains(cm.Data["report.html"], `<s class="rejected"`) {
		t.Errorf("the report does not strike the rejected run through:\n%s", cm.Data["report.md"])
	}
	setRejections("")
	testutil.Eventually(t, 30*time.Second, "the rejection undone", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: "gen"}, cmp); err != nil {
			return err
		}
		if len(cmp.Status.Rejections) != 0 || cmp.Status.Results[0].BaselineN != 5 {
			return fmt.Errorf("rejections %v, results %+v", cmp.Status.Rejections, cmp.Status.Results)
		}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: victim}, run); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionRejected); c == nil || c.Status != metav1.ConditionFalse || c.Reason != benchv1.ReasonNotRejected {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
}

func TestComparisonOrders(t *testing.T) {
	for order, want := range map[benchv1.ComparisonOrder]struct {
		seq       string
		maxActive int
	}{
		benchv1.OrderSequential: {"v3 v3 v3 v4a v4a v4a", 1},
		benchv1.OrderConcurrent: {"", 2},
	} {
		t.Run(string(order), func(t *testing.T) {
			h := newHarness(t)
			h.create(comparison("ord", order, 3))
			got := playRuns(h, "ord", 6, want.maxActive)
			if want.seq != "" && strings.Join(got, " ") != want.seq {
				t.Errorf("order %v, want %s", got, want.seq)
			}
			if order == benchv1.OrderConcurrent {
				// Each repetition starts both variants together: pairs.
				for i := 0; i+1 < len(got); i += 2 {
					if got[i] == got[i+1] {
						t.Errorf("concurrent order %v: repetition %d is not one run of each variant", got, i/2+1)
					}
				}
			}
			waitComparison(h, "ord", benchv1.ComparisonSucceeded)
		})
	}
}

func TestComparisonRefusesBadPatchesAndSpecs(t *testing.T) {
	h := newHarness(t)
	bad := comparison("typo", benchv1.OrderInterleaved, 2)
	bad.Spec.Variants[1].Patch = &apiextensionsv1.JSON{Raw: []byte(`{"workload":{"pgbench":{"clientz":[40]}}}`)}
	h.create(bad)
	cmp := waitComparison(h, "typo", benchv1.ComparisonFailed)
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c == nil || c.Reason != benchv1.ReasonInvalidPatch || !strings.Contains(c.Message, "clientz") {
		t.Errorf("condition %+v: want InvalidPatch naming the unknown field", c)
	}
	// Admission: the baseline must be a variant, names unique.
	noBase := comparison("nobase", benchv1.OrderInterleaved, 2)
	noBase.Spec.Baseline = "v5"
	noBase.SetNamespace(h.ns)
	if err := k8s.Create(context.Background(), noBase); err == nil || !strings.Contains(err.Error(), "baseline must name one of the variants") {
		t.Errorf("baseline outside the variants: %v", err)
	}
	dup := comparison("dup", benchv1.OrderInterleaved, 2)
	dup.Spec.Variants[1].Name = "v3"
	dup.SetNamespace(h.ns)
	if err := k8s.Create(context.Background(), dup); err == nil || !strings.Contains(err.Error(), "unique") {
		t.Errorf("duplicate variants: %v", err)
	}
}
