package compare

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
	"github.com/dbperf-io/dbperf-operator/workloads/registry"
)

// toolRun is a finished run of a tool as the controller leaves it: the
// status names the tool the registry selected for the spec.
func toolRun(t *testing.T, name string, spec benchv1.WorkloadSpec, opsPerSecond float64) *benchv1.BenchmarkRun {
	t.Helper()
	w, err := registry.For(&spec)
	if err != nil {
		t.Fatal(err)
	}
	r := &benchv1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: benchv1.BenchmarkRunSpec{Workload: spec}}
	r.Status.Workload = w.Name()
	r.Status.Phase = benchv1.PhaseSucceeded
	r.Status.Steps = []benchv1.StepStatus{{Name: "default",
		Summary: []benchv1.MetricSummary{{Name: "opsPerSecond"}},
		Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded, Metrics: []benchv1.MetricValue{
			{Name: "opsPerSecond", Value: opsPerSecond, Unit: "ops/s", Direction: benchv1.HigherIsBetter},
		}}}}}
	return r
}

// A comparison names the tool its runs ran, whichever of the registered
// tools it is, in the report and in every rendering of it.
func TestReportNamesEveryTool(t *testing.T) {
	tools := map[string]benchv1.WorkloadSpec{
		"pgbench":         {Pgbench: &benchv1.PgbenchWorkload{}},
		"memtier":         {Memtier: &benchv1.MemtierWorkload{}},
		"redis-benchmark": {RedisBenchmark: &benchv1.RedisBenchmarkWorkload{}},
		"ycsb":            {YCSB: &benchv1.YCSBWorkload{}},
		"k6":              {K6: &benchv1.K6Workload{}},
		"osb":             {OSB: &benchv1.OSBWorkload{}},
		"hammerdb":        {HammerDB: &benchv1.HammerDBWorkload{}},
		"custom":          {Custom: &benchv1.CustomWorkload{}},
		"query-bench":     {QueryBench: &benchv1.QueryWorkload{}},
	}
	var covered []string
	for tool := range tools {
		covered = append(covered, tool)
	}
	sort.Strings(covered)
	if !slices.Equal(covered, registry.Names()) {
		t.Fatalf("the table covers %v, the registry has %v", covered, registry.Names())
	}
	for tool, spec := range tools {
		t.Run(tool, func(t *testing.T) {
			base := Side{Name: "base", Runs: []Run{FromBenchmarkRun(toolRun(t, "b", spec, 100))}}
			cand := Side{Name: "cand", Runs: []Run{FromBenchmarkRun(toolRun(t, "c", spec, 110))}}
			rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 2}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Workload != tool {
				t.Errorf("report names the tool %q, want %q", rep.Workload, tool)
			}
			for _, format := range []string{"table", "markdown", "json"} {
				var out bytes.Buffer
				if err := Render(&out, rep, format); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(out.String(), tool) {
					t.Errorf("%s rendering does not name %s:\n%s", format, tool, out.String())
				}
			}
			var html bytes.Buffer
			if err := RenderHTML(&html, []*Report{rep}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(html.String(), "("+tool+")") {
				t.Errorf("HTML title does not name %s", tool)
			}
		})
	}
}

// A run exported before runs carried the tool's name leaves the name to the
// other runs of the comparison.
func TestReportNamesToolFromAnyRun(t *testing.T) {
	spec := benchv1.WorkloadSpec{YCSB: &benchv1.YCSBWorkload{}}
	old := FromBenchmarkRun(toolRun(t, "old", spec, 100))
	old.Workload = ""
	base := Side{Name: "base", Runs: []Run{old}}
	cand := Side{Name: "cand", Runs: []Run{FromBenchmarkRun(toolRun(t, "new", spec, 100))}}
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Workload != "ycsb" {
		t.Errorf("report names the tool %q, want ycsb", rep.Workload)
	}
}
