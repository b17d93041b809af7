package prometheus

import (
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

func TestNewRefusesBadConfig(t *testing.T) {
	cases := map[string]struct {
		cfg  Config
		want string // "" accepts
	}{
		"defaults":          {cfg: Config{Address: "http://p:9090"}},
		"no address":        {cfg: Config{}, want: "address is empty"},
		"user query":        {cfg: Config{Address: "http://p:9090", Queries: []Query{{Name: "appCPUCores", Query: "x"}}}},
		"name without unit": {cfg: Config{Address: "http://p:9090", Queries: []Query{{Name: "App cpu", Query: "x"}}}, want: "queries[0]: name"},
		"name twice": {cfg: Config{Address: "http://p:9090", Queries: []Query{{Name: "a", Query: "x"}, {Name: "a", Query: "y"}}},
			want: `queries[1]: name "a" is used twice`},
		"empty query":   {cfg: Config{Address: "http://p:9090", Queries: []Query{{Name: "a"}}}, want: "query is empty"},
		"bad summary":   {cfg: Config{Address: "http://p:9090", Queries: []Query{{Name: "a", Query: "x", Summary: "p99"}}}, want: "summary"},
		"bad direction": {cfg: Config{Address: "http://p:9090", Queries: []Query{{Name: "a", Query: "x", Direction: results.Direction("up")}}}, want: "direction"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestPartNames(t *testing.T) {
	cases := map[string]struct{ name, base, part string }{
		"per core":      {name: Part("cpuSoftirqPercent", "cpu3"), base: "cpuSoftirqPercent", part: "cpu3"},
		"per device":    {name: Part("diskAwaitMillis", "nvme0n1"), base: "diskAwaitMillis", part: "nvme0n1"},
		"whole subject": {name: "cpuBusyPercent", base: "cpuBusyPercent"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if base, part := SplitPart(tc.name); base != tc.base || part != tc.part {
				t.Fatalf("SplitPart(%q) = %q, %q; want %q, %q", tc.name, base, part, tc.base, tc.part)
			}
		})
	}
}

func TestPercentileIsAMeasuredValue(t *testing.T) {
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
			if got := percentile(tc.values, tc.p); got != tc.want {
				t.Fatalf("percentile(%v, %g) = %g, want %g", tc.values, tc.p, got, tc.want)
			}
		})
	}
}
