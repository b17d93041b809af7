package compare

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/internal/stats"
)

// closedLoopRun is a closed-loop scenario of ops operations: each
// iteration runs every operation once, so each operation's rate is the
// iteration rate, which falls when any operation is slower (those in
// slower, by factor).
func closedLoopRun(r *rand.Rand, name string, ops int, slower map[int]bool, factor float64) Run {
	noise := func(cv float64) float64 { return math.Exp(r.NormFloat64() * cv / 100) }
	res := results.New("k6")
	res.Primary = results.Key{Name: "iterationsPerSecond"}
	lat := make([]float64, ops)
	iteration := 0.0
	for i := range lat {
		lat[i] = 10 * noise(2)
		if slower[i] {
			lat[i] *= factor
		}
		iteration += lat[i]
	}
	rate := 20 * 1000 / iteration // 20 virtual users
	for i := range lat {
		op := fmt.Sprintf("op%02d", i)
		res.Add(results.Metric{Name: "requestsPerSecond", Operation: op, Value: rate * noise(0.5), Unit: "req/s", Direction: results.HigherIsBetter, Detail: true})
		res.Add(results.Metric{Name: "latencyP50Millis", Operation: op, Value: lat[i], Unit: "ms", Direction: results.LowerIsBetter, Detail: true})
		res.Add(results.Metric{Name: "latencyP95Millis", Operation: op, Value: 1.5 * lat[i] * noise(3), Unit: "ms", Direction: results.LowerIsBetter, Detail: true})
		h := results.NewHistogram()
		for k := 0; k < 300; k++ {
			_ = h.RecordValue(int64(lat[i] * 1000 * noise(20))) // µs
		}
		if err := res.SetHistogram(op, h); err != nil {
			panic(err)
		}
	}
	res.Add(results.Metric{Name: "iterationsPerSecond", Value: rate, Unit: "it/s", Direction: results.HigherIsBetter})
	res.Add(results.Metric{Name: "iterations", Value: rate * 60 * noise(0.2), Unit: "count", Direction: results.Neutral})
	run := Run{Name: name, Spec: spec("p", 20)}
	run.Steps = []benchv1.StepStatus{{Name: "vus=20", Summary: []benchv1.MetricSummary{{Name: "iterationsPerSecond"}},
		Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded, Metrics: []benchv1.MetricValue{
			{Name: "iterationsPerSecond", Value: rate, Unit: "it/s", Direction: benchv1.HigherIsBetter}}}}}}
	run.Measurements = []Measurement{{Step: "vus=20", Repetition: 1, Result: res}}
	return run
}

func closedLoopSides(ops int, slower map[int]bool, factor float64) (Side, Side) {
	r := rand.New(rand.NewPCG(5, 6))
	base, cand := Side{Name: "v3"}, Side{Name: "v4a"}
	for i := 0; i < 5; i++ {
		base.Runs = append(base.Runs, closedLoopRun(r, fmt.Sprintf("v3-%d", i), ops, nil, 1))
		cand.Runs = append(cand.Runs, closedLoopRun(r, fmt.Sprintf("v4a-%d", i), ops, slower, factor))
	}
	return base, cand
}

// The scenario: 20 operations in a closed loop, 3 of them 1.6×
// slower. The summary leads with a regression naming those 3 first, each
// once with its largest change; the shared drop of the 20 per-operation
// rates (and the iteration count) restates the iteration rate: grouped
// under it, not counted; the table is sorted worst first and the terminal
// table fits 160 columns.
func TestSummaryLeadsWithTheRegressions(t *testing.T) {
	slower := map[int]bool{3: true, 9: true, 15: true}
	base, cand := closedLoopSides(20, slower, 1.6)
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 5}})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s == nil {
		t.Fatal("no summary")
	}
	t.Logf("summary:\n%s", strings.Join(s.Lines, "\n"))
	if s.Verdict != OverallRegression || !strings.Contains(s.Headline, "REGRESSION") {
		t.Errorf("verdict %s, headline %q", s.Verdict, s.Headline)
	}
	if len(s.Worse) < 4 {
		t.Fatalf("worse findings %+v", s.Worse)
	}
	for i, want := range []string{"op03", "op09", "op15"} {
		found := false
		for _, f := range s.Worse[:3] {
			found = found || f.Operation == want
		}
		if !found {
			t.Errorf("the 3 slowed operations are not the first findings (%d: %s): %+v", i, want, s.Worse[:3])
		}
	}
	for _, f := range s.Worse[:3] {
		if f.Rows < 2 || f.DeltaPercent < 40 || !f.FamilyWise {
			t.Errorf("%s: one finding of its %d metrics at %+.1f %% (family-wise %v): want p50 and p95, about +60 %%", f.Operation, f.Rows, f.DeltaPercent, f.FamilyWise)
		}
	}
	var iterations *Finding
	for i, f := range s.Worse {
		switch {
		case f.Operation == "" && f.Metric == "iterationsPerSecond":
			iterations = &s.Worse[i]
		case f.Operation != "" && !slower[mustOp(t, f.Operation)]:
			t.Errorf("an operation that was not slowed is a finding: %+v", f)
		}
	}
	if iterations == nil || iterations.Restated < 17 {
		t.Errorf("the shared drop is not one finding, the iteration rate, with the per-operation rates grouped under it: %+v", iterations)
	}
	if s.Restating < 17 || rep.Worse > 3*2+1+3 {
		t.Errorf("%d rows restate another; %d Worse counted (want the 3 operations' p50 and p95 and the iteration rate, not 20 rates)", s.Restating, rep.Worse)
	}
	// Worst first: the real regressions, then what restates them.
	seenRestating := false
	for _, row := range rep.Rows {
		if row.Restates != "" {
			seenRestating = true
		} else if seenRestating && row.Verdict == stats.Worse {
			t.Errorf("a real regression (%s) below a restating row", metricName(row))
		}
	}
	if rep.Rows[0].Verdict != stats.Worse || rep.Rows[0].Restates != "" {
		t.Errorf("first row %s %s", metricName(rep.Rows[0]), rep.Rows[0].Verdict)
	}
	// Each slowed operation's latency distribution, both sides merged
	// over their 5 measurements (1,500 requests each).
	if len(rep.Distributions) != 3 {
		t.Fatalf("distributions %+v, want the 3 slowed operations'", rep.Distributions)
	}
	for _, d := range rep.Distributions {
		if !slower[mustOp(t, d.Operation)] || d.BaselineCount != 1500 || d.CandidateCount != 1500 {
			t.Errorf("distribution of %s: %d and %d requests", d.Operation, d.BaselineCount, d.CandidateCount)
		}
		if r := d.Candidate[1] / d.Baseline[1]; r < 1.45 || r > 1.75 {
			t.Errorf("%s: median %.2f → %.2f ms, want 1.6×", d.Operation, d.Baseline[1], d.Candidate[1])
		}
		for i := 1; i < len(d.Percentiles); i++ {
			if d.Baseline[i] < d.Baseline[i-1] || d.Candidate[i] < d.Candidate[i-1] {
				t.Errorf("%s: percentiles not increasing: %v %v", d.Operation, d.Baseline, d.Candidate)
			}
		}
	}
	var page bytes.Buffer
	if err := RenderHTML(&page, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if strings.Count(html, "<title>latency distribution of op") != 3 {
		t.Errorf("%d percentile plots on the page", strings.Count(html, "<title>latency distribution of op"))
	}
	if i, j := strings.Index(html, `<div class="summary v-regression"><p><b>v4a vs v3: REGRESSION`), strings.Index(html, "<table"); i < 0 || i > j {
		t.Errorf("the page does not lead with the summary (at %d, first table at %d)", i, j)
	}
	var md bytes.Buffer
	if err := Render(&md, rep, "markdown"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(md.String(), "### v4a vs v3: REGRESSION") {
		t.Errorf("markdown starts %q", md.String()[:80])
	}
	var table bytes.Buffer
	if err := Render(&table, rep, "table"); err != nil {
		t.Fatal(err)
	}
	t.Logf("table:\n%s", table.String())
	lines := strings.Split(table.String(), "\n")
	if !strings.HasPrefix(lines[0], "v4a vs v3: REGRESSION") {
		t.Errorf("the table does not lead with the verdict: %q", lines[0])
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 160 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
}

func mustOp(t *testing.T, op string) int {
	var i int
	if _, err := fmt.Sscanf(op, "op%d", &i); err != nil {
		t.Fatalf("operation %q", op)
	}
	return i
}

// The quickstart's case: repetitions in two groups. The row is flagged
// bimodal with the groups' values; a Δ (the rank test's Hodges-Lehmann
// shift) moving the other way than the medians says which estimate it is
// and the medians' change.
func TestBimodalRowsAndAΔThatContradictsTheMedians(t *testing.T) {
	mk := func(name string, v float64) Run {
		return Run{Name: name, Spec: spec("p", 20), Steps: []benchv1.StepStatus{{Name: "clients=20",
			Summary: []benchv1.MetricSummary{{Name: "transactionsPerSecond"}},
			Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded, Metrics: []benchv1.MetricValue{
				{Name: "transactionsPerSecond", Value: v, Unit: "tx/s", Direction: benchv1.HigherIsBetter}}}}}}}
	}
	base, cand := Side{Name: "v3"}, Side{Name: "v4a"}
	for i, v := range []float64{1400, 1420, 2726, 2741, 2760} {
		base.Runs = append(base.Runs, mk(fmt.Sprintf("b%d", i), v))
	}
	for i, v := range []float64{1390, 1410, 1483, 2800, 2810} {
		cand.Runs = append(cand.Runs, mk(fmt.Sprintf("c%d", i), v))
	}
	rep, err := Build(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := rep.Rows[0]
	if !strings.Contains(row.Bimodal, "v3 in two groups: 2 at 1400…1420, 3 at 2726…2760") || !strings.Contains(row.Bimodal, "v4a in two groups") {
		t.Errorf("bimodal %q", row.Bimodal)
	}
	if d := deltaTextLong(rep, row); !strings.Contains(d, "Hodges-Lehmann shift; medians -45.6 %") || !strings.HasPrefix(d, "+") || deltaNote(rep, row) != "Δ: HL shift; medians -45.6 %" {
		t.Errorf("Δ %q beside medians %v → %v", d, row.Baseline.Median, row.Candidate.Median)
	}
	if len(rep.Summary.Bimodal) != 1 || !strings.Contains(strings.Join(rep.Summary.Lines, "\n"), "Bimodal (1)") {
		t.Errorf("the summary does not flag it: %q", rep.Summary.Lines)
	}
	// Unimodal values are not flagged; an outlier is not a group.
	for _, vals := range [][]float64{{100, 101, 102, 103, 104}, {100, 101, 102, 103, 150}, {100, 100, 100, 100}} {
		if g := groups(vals); g != "" {
			t.Errorf("groups(%v) = %q", vals, g)
		}
	}
}

// The overall verdict: Pass when the headline is shown unchanged and
// nothing moved, Improvement, Inconclusive when the headline is not
// judged, and the exclusions summed up in one line.
func TestOverallVerdicts(t *testing.T) {
	base, cand := sides()
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Verdict != OverallImprovement || !strings.Contains(rep.Summary.Excluded, "2 measurements (2 Invalid)") {
		t.Errorf("verdict %s, excluded %q; lines %q", rep.Summary.Verdict, rep.Summary.Excluded, rep.Summary.Lines)
	}
	same, _ := sides()
	same.Name = "again"
	rep, err = Build(base, same, Options{Criteria: stats.Criteria{MinEffectPercent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Verdict != OverallPass || !strings.Contains(rep.Summary.Headline, "PASS") {
		t.Errorf("A/A: %s %q", rep.Summary.Verdict, rep.Summary.Headline)
	}
	rep, err = Build(Side{Name: "a", Runs: base.Runs[:1]}, Side{Name: "b", Runs: cand.Runs[:1]}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Verdict != OverallInconclusive {
		t.Errorf("one run a side: %s %q", rep.Summary.Verdict, rep.Summary.Headline)
	}
}

// Nearly every operation slower, those the change cannot touch too: the
// summary asks whether the environment shifted.
func TestEnvironmentShift(t *testing.T) {
	all := map[int]bool{}
	for i := 0; i < 10; i++ {
		all[i] = true
	}
	base, cand := opSides(10, all)
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Summary.EnvironmentShift || !strings.Contains(strings.Join(rep.Summary.Lines, "\n"), "Environment shift?") {
		t.Errorf("no environment shift: %q", rep.Summary.Lines)
	}
	for _, l := range rep.Summary.Lines {
		if strings.HasPrefix(l, "Worse (") && strings.Count(l, " op") > 2 {
			t.Errorf("an environment shift lists every operation: %q", l)
		}
	}
	base, cand = opSides(10, map[int]bool{2: true})
	if rep, _ = Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 5}}); rep.Summary.EnvironmentShift {
		t.Errorf("one slower operation of 10 read as an environment shift")
	}
}

// What differed between the variants: the facts of their environments
// that differ (the candidate's nodes of another instance type and CPU, the
// server's version), not those that are the same.
func TestEnvironmentDiff(t *testing.T) {
	base, cand := sides()
	env := func(itype, cpu, kernel string) *benchv1.Environment {
		return &benchv1.Environment{KubernetesVersion: "v1.34.3", Nodes: []benchv1.NodeInfo{
			{Name: "n1", Roles: []string{"target"}, InstanceType: itype, CPUModel: cpu, KernelVersion: kernel, Zone: "a"},
			{Name: "n2", Roles: []string{"loadgen"}, InstanceType: "n4-standard-8", KernelVersion: kernel, Zone: "a"}},
			Images: map[string]string{"target": "postgres:17.2"}}
	}
	for i := range base.Runs {
		base.Runs[i].Environment = env("n2-standard-8", "Intel Cascade Lake", "6.1.0")
	}
	for i := range cand.Runs {
		cand.Runs[i].Environment = env("c4a-standard-8", "Google Axion", "6.1.0")
		if i == 0 {
			cand.Runs[i].Environment.Images["target"] = "postgres:17.4"
		}
	}
	// The servers' settings away from their defaults, as the runner
	// read them: work_mem changed, random_page_cost set on one side only.
	settings := func(r *Run, s map[string]string) {
		res := results.New("pgbench")
		res.ServerSettings = s
		r.Measurements = []Measurement{{Step: "clients=20", Repetition: 1, Result: res}}
	}
	for i := range base.Runs {
		settings(&base.Runs[i], map[string]string{"work_mem": "4096 kB", "max_connections": "200"})
	}
	for i := range cand.Runs {
		settings(&cand.Runs[i], map[string]string{"work_mem": "65536 kB", "max_connections": "200", "random_page_cost": "1.1"})
	}
	rep, err := Build(base, cand, Options{Criteria: stats.Criteria{MinEffectPercent: 2}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rep.Environment {
		got = append(got, fmt.Sprintf("%s: %s → %s", d.What, strings.Join(d.Baseline, ","), strings.Join(d.Candidate, ",")))
	}
	want := []string{"image target: postgres:17.2 → postgres:17.2,postgres:17.4", "server setting random_page_cost: (default) → 1.1",
		"server setting work_mem: 4096 kB → 65536 kB", "target node CPU model: Intel Cascade Lake → Google Axion",
		"target node instance type: n2-standard-8 → c4a-standard-8"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("environment diff:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(rep.Summary.Lines, "\n"), "What differed (5): image target") {
		t.Errorf("summary %q", rep.Summary.Lines)
	}
	var md bytes.Buffer
	_ = Render(&md, rep, "markdown")
	if !strings.Contains(md.String(), "| target node instance type | n2-standard-8 | c4a-standard-8 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// The chart of an operation over time shows each side's typical
// measurement: of three, not the first that stalled (a 3-s point) nor the
// fastest, but the one whose median point is in the middle.
func TestTypicalSeriesIsTheMiddleMeasurement(t *testing.T) {
	key := results.Key{Name: "latencyP99Millis", Operation: "op03"}.String()
	run := func(name string, points ...float64) Run {
		r := &results.Result{}
		for i, v := range points {
			r.TimeSeries = append(r.TimeSeries, results.Point{ElapsedSeconds: float64(i + 1), Values: map[string]float64{key: v}})
		}
		return Run{Name: name,
			Steps:        []benchv1.StepStatus{{Name: "run", Repetitions: []benchv1.RepetitionStatus{{Index: 1, Verdict: benchv1.VerdictSucceeded}}}},
			Measurements: []Measurement{{Step: "run", Repetition: 1, Result: r}}}
	}
	side := Side{Name: "v3", Runs: []Run{
		run("cold", 3000, 3100, 48, 47, 49), // median 49: stalled twice, yet its median is not the middle one
		run("fast", 40, 41, 42, 40, 41),
		run("typical", 46, 47, 46, 45, 47),
	}}
	got := typicalSeries(side, "run", key, nil)
	if len(got) != 5 || got[0][1] != 46 {
		t.Errorf("typical series %v, want the run 'typical' (46, 47, 46, 45, 47)", got)
	}
	// A measurement that was not compared (rejected, failed) is never drawn.
	side.Runs[2].Steps[0].Repetitions[0].Verdict = benchv1.VerdictFailed
	if got := typicalSeries(side, "run", key, nil); len(got) != 5 || got[0][1] != 40 {
		t.Errorf("of cold and fast, the lower middle: %v, want fast", got)
	}
}
