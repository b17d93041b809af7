package controllers

import (
	"context"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/compare"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/test/kit"
)

// The comparison and schedule API as a user writes it (raw manifests, so
// that the schema, not the Go types, is what is tested): numbers are JSON
// numbers with their bounds, enums refuse other values, a comparison's
// phase is its own.

// comparisonManifest is a valid BenchmarkComparison as a map; spec is
// merged over it.
func comparisonManifest(t *testing.T, ns, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&kit.MeasureOnly("x", 4, 1).Spec)
	if err != nil {
		t.Fatal(err)
	}
	s := map[string]any{
		"baseline": "a",
		"template": tmpl,
		"variants": []any{map[string]any{"name": "a"}, map[string]any{"name": "b"}},
	}
	for k, v := range spec {
		s[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.dbperf.io/v1alpha1", "kind": "BenchmarkComparison",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     s,
	}}
	return u
}

// withCanary is comparisonManifest's template with a canary of duration d.
func withCanary(t *testing.T, d string) map[string]any {
	t.Helper()
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&kit.MeasureOnly("x", 4, 1).Spec)
	if err != nil {
		t.Fatal(err)
	}
	tmpl["canary"] = map[string]any{"duration": d}
	return tmpl
}

// scheduleManifest is a valid BenchmarkSchedule of runs with the given
// regression policy.
func scheduleManifest(t *testing.T, ns, name string, regression map[string]any) *unstructured.Unstructured {
	t.Helper()
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&kit.MeasureOnly("x", 4, 1).Spec)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.dbperf.io/v1alpha1", "kind": "BenchmarkSchedule",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"runTemplate": map[string]any{"spec": tmpl},
			"regression":  regression,
		},
	}}
}

// writeStatus replaces the status of the latest version of obj.
func writeStatus(ctx context.Context, obj *unstructured.Unstructured, status map[string]any) error {
	cur := obj.DeepCopy()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return err
	}
	cur.Object["status"] = status
	return k8s.Status().Update(ctx, cur)
}

func TestComparisonAndScheduleAdmission(t *testing.T) {
	ns := kit.Namespace(t, k8s, "cmpadm-")
	ctx := context.Background()
	refused := map[string]struct {
		obj  *unstructured.Unstructured
		want []string
	}{
		"alpha as a decimal string": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"alpha": "0.05"}}),
			[]string{"spec.criteria.alpha"}},
		"alpha 0.5": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"alpha": 0.5}}),
			[]string{"spec.criteria.alpha"}},
		"alpha 0": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"alpha": 0.0}}),
			[]string{"spec.criteria.alpha"}},
		"min effect above 100 %": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"minEffectPercent": 100.5}}),
			[]string{"spec.criteria.minEffectPercent"}},
		"negative coefficient of variation": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"maxCoefficientOfVariationPercent": -1}}),
			[]string{"spec.criteria.maxCoefficientOfVariationPercent"}},
		"unknown correction": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"correction": "Bonferroni"}}),
			[]string{"spec.criteria.correction", "Holm"}},
		"zero runs per variant": {
			comparisonManifest(t, ns, "c", map[string]any{"runsPerVariant": 0}),
			[]string{"spec.runsPerVariant"}},
		"51 runs per variant": {
			comparisonManifest(t, ns, "c", map[string]any{"runsPerVariant": 51}),
			[]string{"spec.runsPerVariant"}},
		"sequential stopping without rounds": {
			comparisonManifest(t, ns, "c", map[string]any{"order": "Sequential", "sequential": map[string]any{"targetEffectPercent": 3}}),
			[]string{"order must be Interleaved or Concurrent"}},
		"a first look after the most rounds": {
			comparisonManifest(t, ns, "c", map[string]any{"runsPerVariant": 4, "sequential": map[string]any{"minRounds": 5}}),
			[]string{"sequential.minRounds must be at most runsPerVariant"}},
		"a first look after one round": {
			comparisonManifest(t, ns, "c", map[string]any{"sequential": map[string]any{"minRounds": 1}}),
			[]string{"spec.sequential.minRounds"}},
		"sequential stopping with nothing to tell": {
			comparisonManifest(t, ns, "c", map[string]any{"criteria": map[string]any{"minEffectPercent": 0}, "sequential": map[string]any{}}),
			[]string{"sequential.targetEffectPercent is needed"}},
		"a target effect of 0": {
			comparisonManifest(t, ns, "c", map[string]any{"sequential": map[string]any{"targetEffectPercent": 0}}),
			[]string{"targetEffectPercent must be above 0"}},
		"an unknown spending rule": {
			comparisonManifest(t, ns, "c", map[string]any{"sequential": map[string]any{"spending": "Haybittle"}}),
			[]string{"spec.sequential.spending", "OBrienFleming"}},
		"a covariate without rounds": {
			comparisonManifest(t, ns, "c", map[string]any{"order": "Sequential", "covariate": map[string]any{"canary": "CPU"}}),
			[]string{"covariate: the canary adjusts the change within each round; order must be Interleaved or Concurrent"}},
		"an unknown canary figure": {
			comparisonManifest(t, ns, "c", map[string]any{"covariate": map[string]any{"canary": "Memory"}}),
			[]string{"spec.covariate.canary", "DiskSync"}},
		"a canary of 100 ms": {
			comparisonManifest(t, ns, "c", map[string]any{"template": withCanary(t, "100ms")}),
			[]string{"spec.template.canary.duration", "must be between 400ms and 30s"}},
		"threshold above 100 %": {
			scheduleManifest(t, ns, "s", map[string]any{"thresholdPercent": 150}),
			[]string{"spec.regression.thresholdPercent"}},
		"negative change-point effect": {
			scheduleManifest(t, ns, "s", map[string]any{"minEffectPercent": -0.5}),
			[]string{"spec.regression.minEffectPercent"}},
	}
	for name, tc := range refused {
		t.Run("refuses "+name, func(t *testing.T) {
			err := k8s.Create(ctx, tc.obj, client.DryRunAll)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	t.Run("keeps fractional percents and a numeric alpha", func(t *testing.T) {
		obj := comparisonManifest(t, ns, "c", map[string]any{"runsPerVariant": 3, "criteria": map[string]any{
			"alpha": 0.01, "minEffectPercent": 1.5, "maxCoefficientOfVariationPercent": 7.5, "correction": "BenjaminiHochberg"}})
		if err := k8s.Create(ctx, obj, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		for path, want := range map[string]any{
			"runsPerVariant": int64(3), "criteria.alpha": 0.01, "criteria.minEffectPercent": 1.5,
			"criteria.maxCoefficientOfVariationPercent": 7.5, "criteria.correction": "BenjaminiHochberg",
		} {
			got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
			if got != want {
				t.Errorf("spec.%s = %v (%T), want %v", path, got, got, want)
			}
		}
		sched := scheduleManifest(t, ns, "s", map[string]any{"thresholdPercent": 2.5, "minEffectPercent": 0.5})
		if err := k8s.Create(ctx, sched, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedFieldNoCopy(sched.Object, "spec", "regression", "thresholdPercent"); got != 2.5 {
			t.Errorf("spec.regression.thresholdPercent = %v", got)
		}
	})

	t.Run("defaults", func(t *testing.T) {
		obj := comparisonManifest(t, ns, "c", nil)
		if err := k8s.Create(ctx, obj, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		seq := comparisonManifest(t, ns, "c", map[string]any{"sequential": map[string]any{}})
		if err := k8s.Create(ctx, seq, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedFieldNoCopy(seq.Object, "spec", "sequential"); !reflect.DeepEqual(got, map[string]any{"minRounds": int64(3), "spending": "OBrienFleming"}) {
			t.Errorf("spec.sequential defaults to %v", got)
		}
		cov := comparisonManifest(t, ns, "c", map[string]any{"covariate": map[string]any{"canary": "DiskSync"}, "template": withCanary(t, "1s")})
		if err := k8s.Create(ctx, cov, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedFieldNoCopy(cov.Object, "spec", "template", "canary"); !reflect.DeepEqual(got, map[string]any{"duration": "1s"}) {
			t.Errorf("spec.template.canary is %v", got)
		}
		for path, want := range map[string]any{"runsPerVariant": int64(5), "criteria.alpha": 0.05, "criteria.correction": "Holm"} {
			got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
			if got != want {
				t.Errorf("spec.%s = %v (%T), want %v", path, got, got, want)
			}
		}
	})

	t.Run("a comparison's phase is its own", func(t *testing.T) {
		obj := comparisonManifest(t, ns, "phase", nil)
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		setStatus := func(status map[string]any) error {
			return writeStatus(ctx, obj, status)
		}
		for _, p := range []string{"Provisioning", "Queued", "Collecting", "Invalid"} {
			// Kubernetes 1.28 names the field "phase", later ones "status.phase".
			if err := setStatus(map[string]any{"phase": p}); err == nil || !strings.Contains(err.Error(), "phase: Unsupported value") {
				t.Errorf("phase %s: %v, want refused", p, err)
			}
		}
		// A child run's phase is a run's phase; a verdict is one of four.
		run := map[string]any{"name": "r", "variant": "a", "index": int64(1), "phase": "Provisioning"}
		if err := setStatus(map[string]any{"phase": "Running", "runs": []any{run}}); err != nil {
			t.Errorf("phase Running with a provisioning run: %v", err)
		}
		row := map[string]any{"candidate": "b", "step": "s", "metric": "m", "unit": "tx/s", "direction": "HigherIsBetter",
			"baselineMedian": 1.0, "candidateMedian": 1.0, "baselineN": int64(1), "candidateN": int64(1), "pValue": 1.0, "verdict": "Maybe"}
		if err := setStatus(map[string]any{"phase": "Succeeded", "results": []any{row}}); err == nil || !strings.Contains(err.Error(), "verdict") {
			t.Errorf("verdict Maybe: %v, want refused", err)
		}
	})

	t.Run("a schedule's history verdict is a comparison verdict", func(t *testing.T) {
		obj := scheduleManifest(t, ns, "hist", map[string]any{})
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		setHistory := func(entry map[string]any) error {
			return writeStatus(ctx, obj, map[string]any{"history": []any{entry}})
		}
		entry := func(phase, verdict string) map[string]any {
			return map[string]any{"run": "r", "startTime": "2025-01-01T00:00:00Z", "phase": phase, "verdict": verdict}
		}
		if err := setHistory(entry("Succeeded", "Bogus")); err == nil || !strings.Contains(err.Error(), "verdict") {
			t.Errorf("history verdict Bogus: %v, want refused", err)
		}
		// The history's phase is the run's (or comparison's) phase.
		if err := setHistory(entry("Invalid", "Worse")); err != nil {
			t.Errorf("history of an invalid run judged Worse: %v", err)
		}
	})
}

// kubectl explain shows the conditions of comparisons and schedules with
// their reasons, and the renamed runsPerVariant.
func TestExplainComparisonAndSchedule(t *testing.T) {
	user, err := env.AddUser(envtest.User{Name: "explainer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := user.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	explain := func(field string) string {
		t.Helper()
		out, errOut, err := kubectl.Run("explain", field)
		o, _ := readAll(out)
		if err != nil {
			e, _ := readAll(errOut)
			t.Fatalf("kubectl explain %s: %v: %s", field, err, e)
		}
		return o
	}
	cases := map[string]struct{ want, notWant []string }{
		"benchmarkcomparison.status.conditions":   {want: []string{"Compared", "Running", "InvalidPatch", "NotComparable", "NameConflict"}},
		"benchmarkschedule.status.conditions":     {want: []string{"Regressed", "Regression", "NoRegression", "NotEnoughHistory"}},
		"benchmarkcomparison.spec.runsPerVariant": {want: []string{"runs each variant gets"}},
		"benchmarkcomparison.status.phase":        {want: []string{"Pending", "Running", "Succeeded", "Failed"}, notWant: []string{"Provisioning", "Queued"}},
	}
	for field, tc := range cases {
		t.Run(field, func(t *testing.T) {
			out := explain(field)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("kubectl explain %s lacks %q:\n%s", field, w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("kubectl explain %s shows %q:\n%s", field, w, out)
				}
			}
		})
	}
}

// An explicit minEffectPercent of 0 is stored, read by the operator, copied
// by it into a new comparison (as a schedule does from its template) and
// judged as zero; left out, it is the default 1. It used to become 1 either
// way.
func TestAnExplicitZeroMinimumEffectIsZero(t *testing.T) {
	ns := kit.Namespace(t, k8s, "mineffect-")
	ctx := context.Background()
	cases := map[string]struct {
		spec map[string]any
		want float64
	}{
		"explicit-zero": {map[string]any{"criteria": map[string]any{"minEffectPercent": 0.0}}, 0},
		"omitted":       {nil, stats.DefaultMinEffectPercent},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := comparisonManifest(t, ns, name, tc.spec)
			if err := k8s.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			typed := &benchv1.BenchmarkComparison{}
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(obj), typed); err != nil {
				t.Fatal(err)
			}
			if got := compare.OptionsFor(typed.Spec.Criteria).Criteria.MinEffectPercent; got != tc.want {
				t.Errorf("judged with a minimum effect of %v, want %v", got, tc.want)
			}
			// The copy goes through Go's omitempty: only a pointer keeps
			// the zero.
			cp := &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Name: name + "-copy", Namespace: ns}, Spec: typed.Spec}
			if err := k8s.Create(ctx, cp); err != nil {
				t.Fatal(err)
			}
			for _, o := range []*unstructured.Unstructured{obj, comparisonManifest(t, ns, cp.Name, nil)} {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
					t.Fatal(err)
				}
				if got, ok, _ := unstructured.NestedNumberAsFloat64(o.Object, "spec", "criteria", "minEffectPercent"); !ok || got != tc.want {
					t.Errorf("%s: stored minEffectPercent %v (set: %v), want %v", o.GetName(), got, ok, tc.want)
				}
			}
		})
	}
}
