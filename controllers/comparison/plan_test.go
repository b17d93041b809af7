package comparison

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
)

// The plan of a comparison's runs: which run of which variant starts in
// which batch, for each order.
func TestComparisonPlanOrder(t *testing.T) {
	cases := map[string]struct {
		order benchv1.ComparisonOrder
		want  []string // variant-index@batch
	}{
		"interleaved: one at a time, repetition-major": {
			order: benchv1.OrderInterleaved, want: []string{"a1@0", "b1@1", "b2@2", "a2@3"},
		},
		"default is interleaved": {
			order: "", want: []string{"a1@0", "b1@1", "b2@2", "a2@3"},
		},
		"sequential: one at a time, variant-major": {
			order: benchv1.OrderSequential, want: []string{"a1@0", "a2@1", "b1@2", "b2@3"},
		},
		"concurrent: every variant of a repetition together": {
			order: benchv1.OrderConcurrent, want: []string{"a1@1", "b1@1", "a2@2", "b2@2"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "u"}}
			c.Spec.Variants = []benchv1.Variant{{Name: "a"}, {Name: "b"}}
			c.Spec.Order, c.Spec.RunsPerVariant = tc.order, 2
			var got []string
			names := map[string]bool{}
			for _, p := range plan(c) {
				got = append(got, fmt.Sprintf("%s%d@%d", p.variant, p.index, p.batch))
				names[p.name] = true
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if len(names) != len(got) {
				t.Errorf("child names collide: %v", names)
			}
		})
	}
}

// Capacity runs are paired on what they found (one step, the maximum);
// a capacity against a plain run, or against a search of another knob,
// is refused naming both variants.
func TestCapacityVariantsArePairedOnWhatTheyFound(t *testing.T) {
	c := &benchv1.BenchmarkComparison{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
	c.Spec.Variants = []benchv1.Variant{{Name: "v3"}, {Name: "v4a"}}
	c.Spec.Baseline = "v3"
	spec := func(param string) benchv1.BenchmarkRunSpec {
		s := benchv1.BenchmarkRunSpec{Workload: benchv1.WorkloadSpec{Pgbench: &benchv1.PgbenchWorkload{Clients: []int32{10}}}}
		if param != "" {
			s.Capacity = &benchv1.CapacitySpec{Parameter: param, Search: &benchv1.CapacitySearch{Start: 100}}
		}
		return s
	}
	pairs, ref := stepPairs(c, map[string]benchv1.BenchmarkRunSpec{"v3": spec("rate"), "v4a": spec("rate")})
	if ref != nil || fmt.Sprint(pairs) != "map[v4a:map[capacity:capacity]]" {
		t.Errorf("two searches: %v, %v", pairs, ref)
	}
	for name, c2 := range map[string]struct {
		specs map[string]benchv1.BenchmarkRunSpec
		want  string
	}{
		"a capacity and a plain run": {map[string]benchv1.BenchmarkRunSpec{"v3": spec(""), "v4a": spec("rate")},
			"variant v4a against the baseline v3: one is a capacity run (spec.capacity) and the other is not"},
		"two knobs": {map[string]benchv1.BenchmarkRunSpec{"v3": spec("clients"), "v4a": spec("rate")},
			"variant v4a searches capacity.parameter rate and the baseline v3 clients"},
	} {
		if _, ref := stepPairs(c, c2.specs); ref == nil || ref.reason != benchv1.ReasonNotComparable || !strings.Contains(ref.message, c2.want) {
			t.Errorf("%s: %+v, want %q", name, ref, c2.want)
		}
	}
}
