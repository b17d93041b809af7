package telemetry

import "testing"

func TestNearestRank(t *testing.T) {
	cases := map[string]struct {
		values  []float64
		p, want float64
	}{
		"p95 of 20":  {values: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, p: 95, want: 19},
		"p95 of 3":   {values: []float64{3, 1, 2}, p: 95, want: 3},
		"max":        {values: []float64{3, 9, 2}, p: 100, want: 9},
		"one sample": {values: []float64{4}, p: 95, want: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NearestRank(tc.values, tc.p); got != tc.want {
				t.Fatalf("NearestRank(%v, %g) = %g, want %g", tc.values, tc.p, got, tc.want)
			}
		})
	}
}
