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
