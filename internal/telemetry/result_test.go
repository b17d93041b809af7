package telemetry

import (
	"strings"
	"testing"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

func TestAttachAndEfficiency(t *testing.T) {
	cases := map[string]struct {
		primary results.Metric
		figures []Figure
		source  string
		want    float64 // efficiency; 0: none
		invalid bool
	}{
		"the server's own CPU": {
			primary: results.Metric{Name: "opsPerSecond", Operation: "Totals", Value: 90000, Unit: "ops/s", Direction: results.HigherIsBetter},
			figures: []Figure{{Name: FigureServerCPUCores, Subject: "server", Value: 0.9, Unit: "cores"}},
			source:  "redis", want: 100000,
		},
		"NOPM per target core": {
			primary: results.Metric{Name: "nopm", Value: 50000, Unit: "NOPM", Direction: results.HigherIsBetter},
			figures: []Figure{{Name: FigureCPUCores, Subject: "target", Value: 2.5, Unit: "cores"}, {Name: FigureCPUCores, Subject: "target/db-1", Value: 2.5, Unit: "cores"}},
			source:  "prometheus", want: 20000,
		},
		"a latency primary has no efficiency": {
			primary: results.Metric{Name: "latencyP99Millis", Value: 3, Unit: "ms", Direction: results.LowerIsBetter},
			figures: []Figure{{Name: FigureServerCPUCores, Subject: "server", Value: 0.9, Unit: "cores"}},
			source:  "redis",
		},
		"no CPU, no efficiency": {
			primary: results.Metric{Name: "transactionsPerSecond", Value: 900, Unit: "tx/s", Direction: results.HigherIsBetter},
			figures: []Figure{{Name: "commitsPerSecond", Subject: "server", Value: 905, Unit: "tx/s"}},
			source:  "postgresql",
		},
		"a restart invalidates": {
			primary: results.Metric{Name: "transactionsPerSecond", Value: 900, Unit: "tx/s", Direction: results.HigherIsBetter},
			figures: []Figure{{Name: FigureServerRestarts, Subject: "server", Value: 1, Unit: "count", Direction: results.LowerIsBetter}},
			source:  "postgresql", invalid: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := results.New("tool")
			r.Primary = tc.primary.Key()
			r.Add(tc.primary)
			Attach(r, &Report{Source: tc.source, Figures: tc.figures, Warnings: []string{"server statistics restarted between a and b"},
				Series: []Series{{Name: "x", Subject: "server", Unit: "cores"}}})
			for _, f := range tc.figures {
				m, ok := r.Get(results.Key{Name: f.Name, Operation: f.Subject})
				if !ok || m.Source != tc.source || !m.IsTelemetry() || m.Direction == "" {
					t.Errorf("figure %s[%s] attached as %+v", f.Name, f.Subject, m)
				}
			}
			if len(r.Series) != 1 || r.Series[0].Source != tc.source || !strings.HasPrefix(r.Warnings[0], tc.source+" telemetry: ") {
				t.Errorf("series %+v, warnings %v", r.Series, r.Warnings)
			}
			if got := r.Verdict == results.Invalid; got != tc.invalid {
				t.Errorf("verdict %s (%v), want invalid %v", r.Verdict, r.Reasons, tc.invalid)
			}
			AddEfficiency(r)
			AddEfficiency(r) // a second source refines, never duplicates
			n := 0
			for _, m := range r.Metrics {
				if m.Name == FigureEfficiency {
					n++
					if m.Value != tc.want || m.Unit != tc.primary.Unit+" per core" {
						t.Errorf("efficiency %+v, want %v", m, tc.want)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.want > 0]; n != want {
				t.Errorf("%d efficiency figures, want %d", n, want)
			}
		})
	}
}

// TestMergeTakesTheServersSideOnce: of several load generators only the
// first polls the server; merging keeps its figures as they are (not
// added up, no "reported by 1 of 3" warning), and its series.
func TestMergeTakesTheServersSideOnce(t *testing.T) {
	var parts []*results.Result
	for i := 0; i < 3; i++ {
		r := results.New("tool")
		r.Primary = results.Key{Name: "opsPerSecond"}
		r.Add(results.Metric{Name: "opsPerSecond", Value: 100, Unit: "ops/s", Direction: results.HigherIsBetter})
		if i == 0 {
			Attach(r, &Report{Source: "redis", Figures: []Figure{{Name: FigureServerCPUCores, Subject: "server", Value: 1.5, Unit: "cores"}},
				Series: []Series{{Name: FigureServerCPUCores, Subject: "server", Unit: "cores"}}})
		}
		parts = append(parts, r)
	}
	m := results.Merge(parts)
	cpu, ok := m.Get(results.Key{Name: FigureServerCPUCores, Operation: "server"})
	if !ok || cpu.Value != 1.5 || cpu.Source != "redis" {
		t.Errorf("merged server CPU %+v", cpu)
	}
	if ops, _ := m.Get(m.Primary); ops.Value != 300 {
		t.Errorf("merged throughput %v, want 300", ops.Value)
	}
	if len(m.Series) != 1 || len(m.Warnings) != 0 {
		t.Errorf("series %+v, warnings %v", m.Series, m.Warnings)
	}
}
