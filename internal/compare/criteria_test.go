package compare

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

func TestOptionsForAComparisonsCriteria(t *testing.T) {
	cases := map[string]struct {
		in   benchv1.ComparisonCriteria
		want Options
	}{
		"as the API server defaults them": {
			benchv1.ComparisonCriteria{Alpha: 0.05, MinEffectPercent: ptr.To[benchv1.Percent](1), Correction: benchv1.CorrectionHolm,
				OperationCorrection: benchv1.CorrectionBenjaminiHochberg},
			Options{Criteria: stats.Criteria{Alpha: 0.05, MinEffectPercent: 1, Correction: stats.Holm}, OperationCorrection: stats.BenjaminiHochberg},
		},
		"an explicit zero minimum effect is zero": {
			benchv1.ComparisonCriteria{Alpha: 0.05, MinEffectPercent: ptr.To[benchv1.Percent](0), Correction: benchv1.CorrectionNone},
			Options{Criteria: stats.Criteria{Alpha: 0.05, MinEffectPercent: 0, Correction: stats.NoCorrection}},
		},
		"an omitted minimum effect is the default (a spec the API server did not default)": {
			benchv1.ComparisonCriteria{MaxCoefficientOfVariationPercent: 7.5, Metrics: []string{"latencyP9*"}, Operations: []string{"GET"}},
			Options{Criteria: stats.Criteria{MinEffectPercent: stats.DefaultMinEffectPercent, MaxCVPercent: 7.5},
				Metrics: []string{"latencyP9*"}, Operations: []string{"GET"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, OptionsFor(tc.in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("OptionsFor (-want +got):\n%s", diff)
			}
		})
	}
}

// A change of 0.5 %, clearly measured: within the default minimum effect
// it is NoChange; with a minimum effect of zero it is Better.
func TestAZeroMinimumEffectJudgesEveryChange(t *testing.T) {
	base, cand := Side{Name: "base"}, Side{Name: "cand"}
	for i, jitter := range []float64{0, 3, -2, 1, -1} {
		name := string(rune('a' + i))
		base.Runs = append(base.Runs, run("base-"+name, "p", map[string]float64{"clients=20": 30000 + 5*jitter, "clients=40": 30000 + 5*jitter}, benchv1.VerdictSucceeded))
		cand.Runs = append(cand.Runs, run("cand-"+name, "p", map[string]float64{"clients=20": 30150 + 5*jitter, "clients=40": 30150 + 5*jitter}, benchv1.VerdictSucceeded))
	}
	for name, tc := range map[string]struct {
		minEffect *benchv1.Percent
		want      stats.Verdict
	}{
		"omitted: the default 1 %": {nil, stats.NoChange},
		"explicit zero":            {ptr.To[benchv1.Percent](0), stats.Better},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Build(base, cand, OptionsFor(benchv1.ComparisonCriteria{Alpha: 0.05, MinEffectPercent: tc.minEffect}))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Rows {
				if rep.IsPrimary(r) && r.Verdict != tc.want {
					t.Errorf("%s: %s (%s), want %s", r.Step, r.Verdict, r.Reason, tc.want)
				}
			}
		})
	}
}

// The schema's markers repeat the defaults and bounds of internal/stats
// (markers cannot name a Go constant): they must agree, so that the
// controller, the plugin and `kubectl apply` take the same criteria.
func TestTheSchemaHasTheCriteriasDefaultsAndBounds(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/bench.dbperf.io_benchmarkcomparisons.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Properties map[string]struct {
								Properties map[string]property `json:"properties"`
							} `json:"properties"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	got := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["criteria"].Properties
	corrections := make([]any, 0, len(stats.Corrections))
	for _, c := range stats.Corrections {
		corrections = append(corrections, string(c))
	}
	want := map[string]property{
		"alpha":                            {Default: stats.DefaultAlpha, Minimum: ptr.To(0.0), ExclusiveMinimum: true, Maximum: ptr.To(stats.MaxAlpha), ExclusiveMaximum: true},
		"minEffectPercent":                 {Default: stats.DefaultMinEffectPercent, Minimum: ptr.To(0.0), Maximum: ptr.To(100.0)},
		"maxCoefficientOfVariationPercent": {Minimum: ptr.To(0.0), Maximum: ptr.To(100.0)},
		"correction":                       {Default: string(stats.DefaultCorrection), Enum: corrections},
		"operationCorrection":              {Default: string(stats.DefaultOperationCorrection), Enum: corrections},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, got[name]); diff != "" {
			t.Errorf("spec.criteria.%s (-internal/stats +CRD):\n%s", name, diff)
		}
	}
}

// property is what TestTheSchemaHasTheCriteriasDefaultsAndBounds reads
// of a field's schema.
type property struct {
	Default          any      `json:"default"`
	Minimum          *float64 `json:"minimum"`
	ExclusiveMinimum bool     `json:"exclusiveMinimum"`
	Maximum          *float64 `json:"maximum"`
	ExclusiveMaximum bool     `json:"exclusiveMaximum"`
	Enum             []any    `json:"enum"`
}
