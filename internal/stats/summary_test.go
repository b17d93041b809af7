package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarizeKnownAnswers(t *testing.T) {
	cases := map[string]struct {
		in   []float64
		want Summary
	}{
		"empty": {nil, Summary{}},
		"one":   {[]float64{5}, Summary{N: 1, Median: 5, Mean: 5, Min: 5, Max: 5}},
		// mean 5, sample sd sqrt(32/7)=2.13809, t(0.975,7)=2.365, half = 2.365*2.13809/sqrt(8) = 1.78777
		"eight": {[]float64{2, 4, 4, 4, 5, 5, 7, 9}, Summary{N: 8, Median: 4.5, Mean: 5, Min: 2, Max: 9,
			StdDev: math.Sqrt(32.0 / 7), CILow: 5 - 1.787774, CIHigh: 5 + 1.787774, HasCI: true, CVPercent: 100 * math.Sqrt(32.0/7) / 5}},
		"identical": {[]float64{3, 3, 3}, Summary{N: 3, Median: 3, Mean: 3, Min: 3, Max: 3, CILow: 3, CIHigh: 3, HasCI: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := append([]float64(nil), tc.in...)
			got := Summarize(tc.in)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-5 })); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if !cmp.Equal(in, tc.in) {
				t.Error("Summarize changed its input")
			}
		})
	}
}

func TestTQuantile(t *testing.T) {
	for df, want := range map[int]float64{1: 12.706, 9: 2.262, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980, 100000: 1.960} {
		if got := TQuantile975(df); math.Abs(got-want) > 1.5e-3 {
			t.Errorf("t(%d) = %.4f, want %.3f", df, got, want)
		}
	}
}
