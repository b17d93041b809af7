package capacity_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/dbperf-io/dbperf-operator/api/v1alpha1"
	"github.com/dbperf-io/dbperf-operator/internal/capacity"
	"github.com/dbperf-io/dbperf-operator/internal/results"
	"github.com/dbperf-io/dbperf-operator/test/testutil"
	"github.com/dbperf-io/dbperf-operator/workloads"
	"github.com/dbperf-io/dbperf-operator/workloads/pgbench"
)

func pgbenchResult(t *testing.T, name string) *results.Result {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "workloads", "pgbench", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return pgbench.Pgbench{}.Parse(workloads.ParseInput{Output: raw})
}

func pct(v float64) *benchv1.Percent { p := benchv1.Percent(v); return &p }

func p99(max time.Duration) []benchv1.LatencyRule {
	return []benchv1.LatencyRule{{Percentile: 99, Max: metav1.Duration{Duration: max}}}
}

// pgbench's real counts under --latency-limit: below the knee nothing is
// over 20 ms; past it (skipped ones included) most are, and the achieved
// rate falls short of the offered one, which is named first.
func TestJudgePgbenchAtAndPastTheKnee(t *testing.T) {
	rules := &benchv1.CapacityRules{Latency: p99(20 * time.Millisecond), MinAchievedPercent: pct(95)}
	j := capacity.Judge(rules, capacity.Input{Value: 1400, Rate: true, Results: []*results.Result{pgbenchResult(t, "rate-1400-latency-limit-20ms.txt")}})
	if !j.Passed || *j.OverLimitShare != 0 || *j.Achieved < 95 || j.Unjudgeable != "" {
		t.Fatalf("below the knee: %+v", j)
	}
	past := pgbenchResult(t, "rate-2200-latency-limit-20ms.txt")
	j = capacity.Judge(rules, capacity.Input{Value: 2200, Rate: true, Results: []*results.Result{past}})
	// (3921 late + 970 skipped) / (5550 processed + 970 skipped)
	if j.Passed || len(j.Reasons) != 2 || *j.OverLimitShare != 75.0153 {
		t.Fatalf("past the knee: %+v (share %v)", j, *j.OverLimitShare)
	}
	if !strings.Contains(j.Reasons[0], "achieved 5550 of the 6520 requests their schedule offered at 2200/s (85.12 %") || !strings.Contains(j.Reasons[1], "75.02 % of 6520 transactions were over it") {
		t.Fatalf("reasons: %q", j.Reasons)
	}
	// Two repetitions: counts add up, never averaged shares.
	j = capacity.Judge(rules, capacity.Input{Value: 2200, Rate: true, Results: []*results.Result{past, pgbenchResult(t, "rate-1400-latency-limit-20ms.txt")}})
	if got := *j.OverLimitShare; got != 45.642 { // 4891 / (6520 + 4196)
		t.Fatalf("merged share %v", got)
	}
	// A rule whose max is not the limit pgbench counted cannot be judged.
	j = capacity.Judge(&benchv1.CapacityRules{Latency: p99(10 * time.Millisecond)}, capacity.Input{Value: 1400, Rate: true, Results: []*results.Result{past}})
	if j.Unjudgeable == "" || !strings.Contains(j.Unjudgeable, "not over the rule's 10ms") {
		t.Fatalf("%+v", j)
	}
}

func histogramResult(t *testing.T, tput float64, micros ...int64) *results.Result {
	t.Helper()
	r := results.New("k6")
	r.Primary = results.Key{Name: "requestsPerSecond"}
	r.Add(results.Metric{Name: "requestsPerSecond", Value: tput, Unit: "req/s", Direction: results.HigherIsBetter})
	r.Add(results.Metric{Name: "errorPercent", Value: 0.1, Unit: "%", Direction: results.LowerIsBetter})
	r.Add(results.Metric{Name: "cpuLimitPercent", Operation: "target", Value: tput / 10, Unit: "%", Direction: results.LowerIsBetter})
	h := results.NewHistogram()
	for _, m := range micros {
		if err := h.RecordValue(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SetHistogram("GET /", h); err != nil {
		t.Fatal(err)
	}
	return r
}

// Percentiles come from the level's histograms merged: two repetitions,
// one fast and one with a slow tail, judged together.
func TestJudgeMergesHistogramsAndJudgesEveryRule(t *testing.T) {
	fast := make([]int64, 0, 1000)
	for i := range 1000 {
		fast = append(fast, int64(1000+i)) // 1.000–1.999 ms
	}
	slow := append([]int64{}, fast...)
	for i := range 30 {
		slow[i] = 50_000 // 3 % at 50 ms
	}
	rules := &benchv1.CapacityRules{Latency: p99(10 * time.Millisecond)}
	one := capacity.Judge(rules, capacity.Input{Value: 100, Results: []*results.Result{histogramResult(t, 500, fast...)}})
	if !one.Passed || *one.LatencyMillis > 2 {
		t.Fatalf("%+v", one)
	}
	// Merged: 30 of 2000 at 50 ms = 1.5 % over 10 ms: p99 is 50 ms. An
	// average of the two p99s (about 26 ms) or of the shares would differ.
	both := capacity.Judge(rules, capacity.Input{Value: 100, Results: []*results.Result{histogramResult(t, 500, fast...), histogramResult(t, 520, slow...)}})
	if both.Passed || *both.LatencyMillis < 49.9 || *both.LatencyMillis > 50.1 || !strings.Contains(both.Reasons[0], "from 2000 requests' merged histograms") {
		t.Fatalf("%+v %q", both, both.Reasons)
	}
	if *both.Throughput != 510 {
		t.Fatalf("median throughput %v", *both.Throughput)
	}
	maxCPU := 45.0
	rules = &benchv1.CapacityRules{MaxErrorPercent: pct(0.05), MinGainPercent: pct(50), Metrics: []benchv1.MetricRule{{Name: "cpuLimitPercent", Operation: "target", Max: &maxCPU}}}
	j := capacity.Judge(rules, capacity.Input{Value: 200, Results: []*results.Result{histogramResult(t, 520, fast...)}, Previous: &capacity.Previous{Value: 100, Throughput: 500}})
	if j.Passed || len(j.Reasons) != 3 {
		t.Fatalf("%+v", j)
	}
	for i, want := range []string{"errors 0.1 % (above maxErrorPercent 0.05 %)", "a gain of 4 % of the load added", "cpuLimitPercent of target 52 (above its max 45)"} {
		if !strings.Contains(j.Reasons[i], want) {
			t.Errorf("reason %d %q lacks %q", i, j.Reasons[i], want)
		}
	}
	j = capacity.Judge(&benchv1.CapacityRules{Metrics: []benchv1.MetricRule{{Name: "notRecorded", Max: &maxCPU}}}, capacity.Input{Value: 200, Results: []*results.Result{histogramResult(t, 520, fast...)}})
	if j.Unjudgeable == "" {
		t.Fatalf("a rule on a figure nothing recorded must not pass: %+v", j)
	}
	j = capacity.Judge(&benchv1.CapacityRules{Latency: []benchv1.LatencyRule{{Operation: "POST /", Percentile: 99, Max: metav1.Duration{Duration: time.Second}}}},
		capacity.Input{Value: 200, Results: []*results.Result{histogramResult(t, 520, fast...)}})
	if !strings.Contains(j.Unjudgeable, `no histogram of operation "POST /"; the measurements have GET /`) {
		t.Fatalf("%+v", j)
	}
}

// With an exceed ratio each repetition is a trial judged on its own: one
// hiccup in three passes at 34 %, two do not; the level's figures are
// still those of all its trials together.
func TestJudgeTrialsWithAnExceedRatio(t *testing.T) {
	rules := &benchv1.CapacityRules{Latency: p99(20 * time.Millisecond)}
	ok, past := pgbenchResult(t, "rate-1400-latency-limit-20ms.txt"), pgbenchResult(t, "rate-2200-latency-limit-20ms.txt")
	in := capacity.Input{Value: 1400, Rate: true, Results: []*results.Result{ok, past, ok}}
	if merged := capacity.Judge(rules, in); merged.Passed {
		t.Fatalf("merged, the hiccup's transactions fail the level: %+v", merged)
	}
	j := capacity.JudgeTrials(rules, in, 34)
	if !j.Passed || j.Reasons != nil || *j.OverLimitShare != *capacity.Judge(rules, in).OverLimitShare {
		t.Fatalf("one failed trial of three at 34 %%: %+v", j)
	}
	in.Results = []*results.Result{ok, past, past}
	j = capacity.JudgeTrials(rules, in, 34)
	if j.Passed || len(j.Reasons) != 1 || !strings.Contains(j.Reasons[0], "2 of 3 trials failed (66.7 %, above the exceed ratio of 34 %); trial 2: p99 of the whole load above 20ms") {
		t.Fatalf("%+v", j)
	}
}

// A tool that says what it was set to offer (memtier: a whole rate per
// connection) is still judged against the level: what it could not be
// told to offer was not offered, and the reason says how much it was.
func TestJudgeNamesWhatTheToolWasSetToOffer(t *testing.T) {
	r := histogramResult(t, 1900, 900, 1000, 1100)
	r.Add(results.Metric{Name: capacity.MetricOffered, Value: 1920, Unit: "/s", Direction: results.Neutral, Detail: true})
	j := capacity.Judge(&benchv1.CapacityRules{MinAchievedPercent: pct(97)}, capacity.Input{Value: 2000, Rate: true, Results: []*results.Result{r}})
	if j.Passed || *j.Achieved != 95 || len(j.Reasons) != 1 ||
		!strings.Contains(j.Reasons[0], "achieved 1900 req/s of 2000/s offered (the generators were set to offer 1920/s of it) (95 %, below minAchievedPercent 97 %)") {
		t.Fatalf("%+v", j)
	}
	r = histogramResult(t, 1990, 900, 1000, 1100)
	r.Add(results.Metric{Name: capacity.MetricOffered, Value: 2000, Unit: "/s", Direction: results.Neutral, Detail: true})
	if j := capacity.Judge(&benchv1.CapacityRules{MinAchievedPercent: pct(97)}, capacity.Input{Value: 2000, Rate: true, Results: []*results.Result{r}}); !j.Passed {
		t.Fatalf("offered as set: %+v", j)
	}
}

// The load generators' CPU per operation comes from the runner's figures
// (CPU seconds over wall seconds and throughput), averaged over a level's
// repetitions; the pre-flight check turns it into generators needed.
func TestGeneratorCostAndGeneratorsNeeded(t *testing.T) {
	a := histogramResult(t, 1000, 900, 1000)
	a.LoadGenerator = &results.LoadGenerator{CPUSeconds: 2, WallSeconds: 10, AvailableCPUs: 1, CPUPercent: 20} // 0.2 CPU at 1000/s: 200 µs each
	b := histogramResult(t, 1000, 900, 1000)
	b.LoadGenerator = &results.LoadGenerator{CPUSeconds: 3, WallSeconds: 10, AvailableCPUs: 1, CPUPercent: 30} // 300 µs
	none := histogramResult(t, 1000, 900, 1000)
	j := capacity.Judge(&benchv1.CapacityRules{}, capacity.Input{Value: 1000, Rate: true, Results: []*results.Result{a, b, none}})
	if j.GeneratorCPUMicrosPerOp == nil || *j.GeneratorCPUMicrosPerOp != 250 {
		t.Fatalf("cost %v, want 250 µs", j.GeneratorCPUMicrosPerOp)
	}
	if j := capacity.Judge(&benchv1.CapacityRules{}, capacity.Input{Value: 1000, Rate: true, Results: []*results.Result{none}}); j.GeneratorCPUMicrosPerOp != nil {
		t.Fatalf("no CPU figures, cost %v", *j.GeneratorCPUMicrosPerOp)
	}
	// 250 µs an operation, 1 CPU up to 90 %: 3,600/s a generator.
	for rate, want := range map[int32]int{3600: 1, 3601: 2, 10000: 3, 14400: 4} {
		if got, per := capacity.GeneratorsNeeded(rate, 250, 1, 90); got != want || per != 3600 {
			t.Errorf("%d/s: %d generators of %v/s, want %d of 3600/s", rate, got, per, want)
		}
	}
	if got, _ := capacity.GeneratorsNeeded(7200, 250, 0.5, 90); got != 4 {
		t.Errorf("half a CPU each: %d", got)
	}
}
