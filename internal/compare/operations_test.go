package compare

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// opRun is a run of one step whose status keeps only the headline (the
// whole run's throughput) while its full result has every operation's
// throughput, p95, p99 and errors; ops named in slower are 30 % slower.
func opRun(r *rand.Rand, name string, ops int, slower map[int]bool) Run {
	noise := func(cv float64) float64 { return math.Exp(r.NormFloat64() * cv / 100) }
	res := results.New("k6")
	res.Primary = results.Key{Name: "requestsPerSecond"}
	total := 0.0
	for i := 0; i < ops; i++ {
		f := 1.0
		if slower[i] {
			f = 1.3
		}
		op := fmt.Sprintf("op%02d", i)
		tput := 100 / f * noise(2)
		total += tput
		res.Add(results.Metric{Name: "requestsPerSecond", Operation: op, Value: tput, Unit: "req/s", Direction: results.HigherIsBetter, Detail: true})
		res.Add(results.Metric{Name: "latencyP95Millis", Operation: op, Value: 10 * f * noise(4), Unit: "ms", Direction: results.LowerIsBetter, Detail: true})
		res.Add(results.Metric{Name: "latencyP99Millis", Operation: op, Value: 20 * f * noise(6), Unit: "ms", Direction: results.LowerIsBetter, Detail: true})
		res.Add(results.Metric{Name: "errorPercent", Operation: op, Value: 0, Unit: "%", Direction: results.LowerIsBetter, Detail: true})
	}
	res.Add(results.Metric{Name: "requestsPerSecond", Value: total, Unit: "req/s", Direction: results.HigherIsBetter})
	run := Run{Name: name, Spec: spec("p", 20)}
	run.Steps = []benchv1.StepStatus{{Name: "vus=20", Summary: []benchv1.MetricSummary{{Name: "requestsPerSecond"}},
		Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded, Metrics: []benchv1.MetricValue{
			{Name: "requestsPerSecond", Value: total, Unit: "req/s", Direction: benchv1.HigherIsBetter}}}}}}
	run.Measurements = []Measurement{{Step: "vus=20", Repetition: 1, Result: res}}
	return run
}

func opSides(ops int, slower map[int]bool) (Side, Side) {
	r := rand.New(rand.NewPCG(3, 4))
	base, cand := Side{Name: "v3"}, Side{Name: "v4a"}
	for i := 0; i < 5; i++ {
		base.Runs = append(base.Runs, opRun(r, fmt.Sprintf("v3-%d", i), ops, nil))
		cand.Runs = append(cand.Runs, opRun(r, fmt.Sprintf("v4a-%d", i), ops, slower))
	}
	return base, cand
}

// Every operation of the full results reaches the comparison, not only the
// status's headline: of 30 operations, exactly the three made 30 % slower
// are Worse in the per-operation table; the headline is judged on its own.
func TestEveryOperationIsCompared(t *testing.T) {
	slower := map[int]bool{4: true, 11: true, 27: true}
	base, cand := opSides(30, slower)
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.HeadlineOnly) != 0 {
		t.Errorf("headline only: %v", rep.HeadlineOnly)
	}
	table := rep.OperationTable()
	if len(table) != 31 || !table[0].Overall() {
		t.Fatalf("per-operation table: %d rows (want 30 operations and the overall row first)", len(table))
	}
	var worse []string
	for _, o := range table[1:] {
		if o.Verdict() == stats.Worse {
			worse = append(worse, o.Operation)
		} else if o.Verdict() == stats.Better {
			t.Errorf("%s Better", o.Operation)
		}
	}
	if strings.Join(worse, ",") != "op04,op11,op27" || table[1].Operation != "op04" {
		t.Errorf("Worse: %v, want op04,op11,op27 listed first", worse)
	}
	for _, f := range rep.Families {
		if f.Name == "operations" && (f.Tests != 30*4 || f.Test != stats.WelchLogTest || f.Correction != stats.BenjaminiHochberg) {
			t.Errorf("operations family: %+v", f)
		}
		if f.Name == "headline" && (f.Tests != 1 || f.Test != stats.RankTest) {
			t.Errorf("headline family: %+v", f)
		}
	}
	var md bytes.Buffer
	if err := Render(&md, rep, "markdown"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "<details><summary>6 more operations</summary>") || !strings.Contains(md.String(), "| vus=20 | op04 |") {
		t.Errorf("markdown per-operation table, folded after %d:\n%s", FoldOperationsAfter, md.String())
	}
	var html bytes.Buffer
	if err := RenderHTML(&html, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(html.String(), `<tr class="worse">`) != 3 || !strings.Contains(html.String(), "6 more operations") {
		t.Errorf("html: %d worse operation rows", strings.Count(html.String(), `<tr class="worse">`))
	}

	// Filters: one metric, two operations (and the primary, always).
	rep, err = Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 5}, Metrics: []string{"latencyP9*"}, Operations: []string{"op0[34]"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, row := range rep.Rows {
		got = append(got, row.Metric+"["+row.Operation+"]")
	}
	slices.Sort(got) // the table is sorted worst first; the filter is what is checked here
	if strings.Join(got, " ") != "latencyP95Millis[op03] latencyP95Millis[op04] latencyP99Millis[op03] latencyP99Millis[op04] requestsPerSecond[]" {
		t.Errorf("filtered rows: %v", got)
	}

	// Without the full results, the headline alone, and the report says so.
	for i := range base.Runs {
		base.Runs[i].Measurements = nil
	}
	rep, err = Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.HeadlineOnly) != 5 || len(rep.Rows) != 1 {
		t.Errorf("headline only: %v, %d rows", rep.HeadlineOnly, len(rep.Rows))
	}
}

// A large report is stored gzipped and read back whole.
func TestReportDataOfManyOperations(t *testing.T) {
	base, cand := opSides(300, map[int]bool{1: true})
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, binary, note, err := ReportData([]*Report{rep})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 0 || len(binary) == 0 {
		t.Fatalf("a report of %d rows stored plain", len(rep.Rows))
	}
	size := 0
	for _, v := range binary {
		size += len(v)
	}
	back, err := ReadReports(data, binary)
	if err != nil || len(back) != 1 || len(back[0].Rows) != len(rep.Rows) {
		t.Fatalf("read back: %v", err)
	}
	t.Logf("%d rows: %d bytes gzipped (note %q)", len(rep.Rows), size, note)
}
