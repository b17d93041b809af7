package controllers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// Two variants, 5 runs each, interleaved: the runs go one at a time in ABBA
// rounds (A B, B A, …); the comparison finds v4a about +117 % better in
// throughput and p99 unchanged, and writes status and the report (JSON, Markdown, HTML).
func TestComparisonInterleavedEndToEnd(t *testing.T) {
	h := newHarness(t)
	h.Create(kit.Comparison("gen", benchv1.OrderInterleaved, 5))
	order := h.PlayRuns("gen", 10, 1, kit.Measured)
	if strings.Join(order, " ") != "v3 v4a v4a v3 v3 v4a v4a v3 v3 v4a" {
		t.Errorf("run order %v, want interleaved, the order reversed every other round (ABBA)", order)
	}
	cmp := h.WaitComparison("gen", benchv1.ComparisonSucceeded)
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
	if cmp.Status.Verdict != benchv1.OverallImprovement || !strings.HasPrefix(cmp.Status.Headline, "v4a vs v3: IMPROVEMENT — ") {
		t.Errorf("verdict %q, headline %q", cmp.Status.Verdict, cmp.Status.Headline)
	}
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Compared condition %+v", c)
	}
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&cm, cmp) {
		t.Error("the report ConfigMap must be owned by the comparison")
	}
	if !strings.Contains(cm.Data["report.md"], "| clients=20 | transactionsPerSecond |") || !strings.Contains(cm.Data["report.html"], "<svg") ||
		!strings.Contains(cm.Data["report.json"], `"verdict": "Better"`) {
		t.Errorf("report ConfigMap keys %v:\n%.600s", kit.Keys(cm.Data), cm.Data["report.md"])
	}
	// The runs belong to the comparison.
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil || len(runs.Items) != 10 {
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
			if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: victim}, run); err != nil {
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
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: "gen"}, cmp); err != nil {
			return err
		}
		if len(cmp.Status.Rejections) != 1 || len(cmp.Status.Results) != 1 || cmp.Status.Results[0].BaselineN != 4 {
			return fmt.Errorf("rejections %v, results %+v", cmp.Status.Rejections, cmp.Status.Results)
		}
		return nil
	})
	run := &benchv1.BenchmarkRun{}
	testutil.Eventually(t, 30*time.Second, "the run's condition Rejected", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: victim}, run); err != nil {
			return err
		}
		c := meta.FindStatusCondition(run.Status.Conditions, benchv1.ConditionRejected)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "the whole run rejected by alice at 2026-11-25T12:00:00Z: a disk failed twice") {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: cmp.Status.ReportConfigMap}, &cm); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["report.md"], "~~v3 "+victim) || !strings.Contains(cm.Data["report.html"], `<s class="rejected"`) {
		t.Errorf("the report does not strike the rejected run through:\n%s", cm.Data["report.md"])
	}
	setRejections("")
	testutil.Eventually(t, 30*time.Second, "the rejection undone", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: "gen"}, cmp); err != nil {
			return err
		}
		if len(cmp.Status.Rejections) != 0 || cmp.Status.Results[0].BaselineN != 5 {
			return fmt.Errorf("rejections %v, results %+v", cmp.Status.Rejections, cmp.Status.Results)
		}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: h.NS, Name: victim}, run); err != nil {
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
			h.Create(kit.Comparison("ord", order, 3))
			got := h.PlayRuns("ord", 6, want.maxActive, kit.Measured)
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
			h.WaitComparison("ord", benchv1.ComparisonSucceeded)
		})
	}
}

func TestComparisonRefusesBadPatchesAndSpecs(t *testing.T) {
	h := newHarness(t)
	bad := kit.Comparison("typo", benchv1.OrderInterleaved, 2)
	bad.Spec.Variants[1].Patch = &apiextensionsv1.JSON{Raw: []byte(`{"workload":{"pgbench":{"clientz":[40]}}}`)}
	h.Create(bad)
	cmp := h.WaitComparison("typo", benchv1.ComparisonFailed)
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c == nil || c.Reason != benchv1.ReasonInvalidPatch || !strings.Contains(c.Message, "clientz") {
		t.Errorf("condition %+v: want InvalidPatch naming the unknown field", c)
	}
	// A variant whose run the API server refuses (a CEL rule of the patched
	// template: here a replica placement without replicas, what a patch
	// that removes replicas with null becomes after client-side kubectl
	// apply) fails the comparison before any run starts, naming the variant
	// and the rule.
	late := kit.Comparison("late", benchv1.OrderInterleaved, 2)
	late.Spec.Variants[1].Patch = &apiextensionsv1.JSON{Raw: []byte(`{"target":{"replicaPlacement":{"zone":"zone-b"}}}`)}
	h.Create(late)
	cmp = h.WaitComparison("late", benchv1.ComparisonFailed)
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c == nil || c.Reason != benchv1.ReasonInvalidPatch ||
		!strings.Contains(c.Message, "variant "+late.Spec.Variants[1].Name) || !strings.Contains(c.Message, "replicaPlacement needs replicas") {
		t.Errorf("condition %+v: want InvalidPatch naming the variant and the rule", c)
	}
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(context.Background(), &runs, client.InNamespace(h.NS), client.MatchingLabels{benchv1.LabelComparison: string(cmp.UID)}); err != nil || len(runs.Items) != 0 {
		t.Errorf("runs of a comparison refused before its first run: %d (%v)", len(runs.Items), err)
	}
	// Admission: the baseline must be a variant, names unique.
	noBase := kit.Comparison("nobase", benchv1.OrderInterleaved, 2)
	noBase.Spec.Baseline = "v5"
	noBase.SetNamespace(h.NS)
	if err := k8s.Create(context.Background(), noBase); err == nil || !strings.Contains(err.Error(), "baseline must name one of the variants") {
		t.Errorf("baseline outside the variants: %v", err)
	}
	dup := kit.Comparison("dup", benchv1.OrderInterleaved, 2)
	dup.Spec.Variants[1].Name = "v3"
	dup.SetNamespace(h.NS)
	if err := k8s.Create(context.Background(), dup); err == nil || !strings.Contains(err.Error(), "unique") {
		t.Errorf("duplicate variants: %v", err)
	}
}
