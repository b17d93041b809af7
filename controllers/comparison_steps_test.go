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
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/kit"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
)

// sweepComparison is the comparison: pgbench, each variant on its
// pool with its own clients list patched over the template's.
func sweepComparison(name string, v3Clients, v4aClients string, pairing benchv1.StepPairing) *benchv1.BenchmarkComparison {
	cmp := kit.Comparison(name, benchv1.OrderInterleaved, 4)
	patch := func(pool, clients string) *apiextensionsv1.JSON {
		return &apiextensionsv1.JSON{Raw: []byte(`{"workload":{"placement":{"nodeSelector":{"pool":"` + pool + `"}},"pgbench":{"clients":` + clients + `}}}`)}
	}
	cmp.Spec.Variants = []benchv1.Variant{{Name: "v3", Patch: patch("standard-v3", v3Clients)}, {Name: "v4a", Patch: patch("standard-v4a", v4aClients)}}
	cmp.Spec.StepPairing = pairing
	return cmp
}

// comparisonEvents lists a comparison's events as "Reason: message", one
// per time said.
func comparisonEvents(t *testing.T, ns, name string) []string {
	t.Helper()
	var list corev1.EventList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "BenchmarkComparison" && e.InvolvedObject.Name == name {
			for range max(e.Count, 1) {
				out = append(out, e.Reason+": "+e.Message)
			}
		}
	}
	return out
}

// The comparison: the variants patch the swept parameter (4 clients
// on the baseline, 1 on the candidate), 4 runs each. Each measures one step
// of another name: the variant is the parameter, and the step is compared
// with the step — 1 client is Worse in throughput, not "0 compared".
func TestComparisonOfTheSweptParameter(t *testing.T) {
	h := newHarness(t)
	answer := func(variant string, i int) string {
		tps := 2000.0 + float64(i%3)
		if variant == "v4a" {
			tps = 600 + float64(i%3) // one client
		}
		res := results.New("pgbench")
		res.Primary = results.Key{Name: "transactionsPerSecond"}
		res.Add(results.Metric{Name: "transactionsPerSecond", Value: tps, Unit: "tx/s", Direction: results.HigherIsBetter})
		msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
		if err != nil {
			panic(err)
		}
		return string(msg)
	}
	h.Create(sweepComparison("clients", "[4]", "[1]", ""))
	h.PlayRuns("clients", 8, 1, answer)
	cmp := h.WaitComparison("clients", benchv1.ComparisonSucceeded)
	if len(cmp.Status.Results) != 1 {
		t.Fatalf("results %+v", cmp.Status.Results)
	}
	row := cmp.Status.Results[0]
	if row.Step != "clients=4" || row.CandidateStep != "clients=1" || row.Metric != "transactionsPerSecond" || row.Verdict != benchv1.VerdictWorse ||
		row.BaselineN != 4 || row.CandidateN != 4 {
		t.Errorf("row %+v", row)
	}
	if !strings.HasPrefix(cmp.Status.Summary, "0 better, 1 worse") {
		t.Errorf("summary %q", cmp.Status.Summary)
	}
}

// Sweeps that cannot meet are refused before any run is made, naming the
// patched field; with stepPairing ByPosition the same comparison runs. A
// patch that changes the tool is refused the same way.
func TestComparisonRefusesStepsThatCannotMeet(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	h.Create(sweepComparison("apart", "[1, 2]", "[4, 8]", ""))
	cmp := h.WaitComparison("apart", benchv1.ComparisonFailed)
	c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared)
	if c.Reason != benchv1.ReasonNotComparable || !strings.Contains(c.Message, "no step in common") ||
		!strings.Contains(c.Message, "spec.variants[1].patch.workload.pgbench.clients") || !strings.Contains(c.Message, "ByPosition") {
		t.Errorf("Compared %+v", c)
	}
	var runs benchv1.BenchmarkRunList
	if err := k8s.List(ctx, &runs, client.InNamespace(h.NS)); err != nil || len(runs.Items) != 0 {
		t.Errorf("%d runs made (err %v) for a comparison refused up front", len(runs.Items), err)
	}

	h.Create(sweepComparison("positions", "[1, 2]", "[4, 8]", benchv1.StepPairingByPosition))
	testutil.Eventually(t, 20*time.Second, "ByPosition starts its runs", func() error {
		cur := &benchv1.BenchmarkComparison{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: h.NS, Name: "positions"}, cur); err != nil {
			return err
		}
		if cur.Status.Phase != benchv1.ComparisonRunning {
			return fmt.Errorf("phase %s %+v", cur.Status.Phase, cur.Status.Conditions)
		}
		return nil
	})

	other := kit.Comparison("tool", benchv1.OrderInterleaved, 2)
	other.Spec.Variants[1].Patch = &apiextensionsv1.JSON{Raw: []byte(`{"workload":{"pgbench":null,"redisBenchmark":{"tests":["SET"],"requests":1000}}}`)}
	h.Create(other)
	cmp = h.WaitComparison("tool", benchv1.ComparisonFailed)
	if c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared); c.Reason != benchv1.ReasonNotComparable ||
		!strings.Contains(c.Message, "runs redis-benchmark") || !strings.Contains(c.Message, "spec.variants[1].patch.workload.redisBenchmark") {
		t.Errorf("another tool: %+v", c)
	}
}

// A comparison whose every measurement failed ends with that reason, not
// Compared: Failed, NothingCompared in its condition, its event and its
// summary (kubectl get's column); the report keeps the exclusions.
func TestComparisonOfNothingSaysSo(t *testing.T) {
	h := newHarness(t)
	answer := func(variant string, i int) string {
		if variant != "v3" {
			return kit.Measured(variant, i)
		}
		res := results.New("pgbench")
		res.Fail("pgbench: connection to server failed: FATAL: password authentication failed for user \"bench\"")
		msg, err := results.EncodeCompact(res, results.MaxCompactBytes)
		if err != nil {
			panic(err)
		}
		return string(msg)
	}
	h.Create(kit.Comparison("failing", benchv1.OrderInterleaved, 2))
	h.PlayRuns("failing", 4, 1, answer)
	cmp := h.WaitComparison("failing", benchv1.ComparisonFailed)
	c := meta.FindStatusCondition(cmp.Status.Conditions, benchv1.ConditionCompared)
	if c.Status != "False" || c.Reason != benchv1.ReasonNothingCompared || !strings.Contains(c.Message, "every measurement of variant v3 was excluded (2 Failed)") {
		t.Errorf("Compared %+v", c)
	}
	if !strings.HasPrefix(cmp.Status.Summary, "nothing compared: v4a against v3: every measurement of variant v3 was excluded") || cmp.Status.ReportConfigMap == "" {
		t.Errorf("summary %q, report %q", cmp.Status.Summary, cmp.Status.ReportConfigMap)
	}
	if cmp.Status.Verdict != benchv1.OverallInvalid || !strings.HasPrefix(cmp.Status.Headline, "INVALID — every run finished, but nothing was compared") {
		t.Errorf("verdict %q, headline %q", cmp.Status.Verdict, cmp.Status.Headline)
	}
	testutil.Eventually(t, 10*time.Second, "NothingCompared event", func() error {
		for _, e := range comparisonEvents(t, h.NS, "failing") {
			if strings.HasPrefix(e, benchv1.ReasonNothingCompared+": ") {
				return nil
			}
		}
		return fmt.Errorf("events %v", comparisonEvents(t, h.NS, "failing"))
	})
	h.RestartManager(cfg)
	h.WaitComparison("failing", benchv1.ComparisonFailed)
	said := 0
	for _, e := range comparisonEvents(t, h.NS, "failing") {
		if strings.HasPrefix(e, benchv1.ReasonCompared+":") {
			t.Errorf("a Compared event for a comparison of nothing: %s", e)
		}
		if strings.HasPrefix(e, benchv1.ReasonNothingCompared+":") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("NothingCompared said %d times, want once", said)
	}
}
