package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// The trend test agrees with SciPy 1.17.1 (testdata/trend_reference.py
// wrote trend_reference.json): Kendall's τ of the values against their
// order, its two-sided p-value (exact without ties, the normal
// approximation with the tie correction with them) and Sen's slope, to
// 1e-6.
func TestTrendAgreesWithSciPy(t *testing.T) {
	raw, err := os.ReadFile("testdata/trend_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Values                []float64
			Tau, P, Slope, Median float64
			Exact                 bool
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 20 {
		t.Fatalf("%d reference cases", len(ref.Cases))
	}
	near := func(i int, what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("case %d %s: %.9g, SciPy %.9g", i, what, got, want)
		}
	}
	for i, c := range ref.Cases {
		tr := MannKendall(c.Values)
		if tr.Exact != c.Exact {
			t.Errorf("case %d: exact %v, SciPy's method exact %v", i, tr.Exact, c.Exact)
		}
		near(i, "τ", tr.Tau, c.Tau)
		near(i, "p", tr.P, c.P)
		near(i, "Sen's slope %", tr.SlopePercent, 100*c.Slope/math.Abs(c.Median))
	}
	if tr := MannKendall([]float64{1, 2}); tr.P != 1 {
		t.Errorf("two values: p %g, want 1 (nothing to test)", tr.P)
	}
}
