package results

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// generator simulates one load generator: its own latency distribution
// (they differ, as generators on different nodes do), recorded in a
// histogram, and the result its runner would report.
func generator(t *testing.T, rng *rand.Rand, n int, medianMicros float64) (*Result, []int64) {
	t.Helper()
	h := NewHistogram()
	samples := make([]int64, n)
	for i := range samples {
		v := int64(medianMicros * math.Exp(0.6*rng.NormFloat64()))
		// A slow tail on 1 % of requests.
		if rng.IntN(100) == 0 {
			v *= 20
		}
		samples[i] = max(v, 1)
		if err := h.RecordValue(samples[i]); err != nil {
			t.Fatal(err)
		}
	}
	r := New("ycsb")
	r.Primary = Key{Name: "opsPerSecond", Operation: "OVERALL"}
	r.Add(Metric{Name: "opsPerSecond", Operation: "OVERALL", Value: float64(n) / 10, Unit: "ops/s", Direction: HigherIsBetter})
	r.Add(Metric{Name: "operations", Operation: "READ", Value: float64(n), Unit: "count", Direction: Neutral})
	for _, q := range []struct {
		name string
		p    float64
	}{{"latencyP50Millis", 50}, {"latencyP95Millis", 95}, {"latencyP99Millis", 99}, {"latencyP99.9Millis", 99.9}} {
		r.Add(Metric{Name: q.name, Operation: "READ", Value: float64(h.ValueAtPercentile(q.p)) / 1000, Unit: "ms", Direction: LowerIsBetter})
	}
	r.Add(Metric{Name: "latencyAvgMillis", Operation: "READ", Value: h.Mean() / 1000, Unit: "ms", Direction: LowerIsBetter})
	r.Add(Metric{Name: "latencyAverageMillis", Operation: "READ", Value: h.Mean() / 1000, Unit: "ms", Direction: LowerIsBetter})
	r.Add(Metric{Name: "latencyMaxMillis", Operation: "READ", Value: float64(h.Max()) / 1000, Unit: "ms", Direction: LowerIsBetter})
	if err := r.SetHistogram("READ", h); err != nil {
		t.Fatal(err)
	}
	return r, samples
}

// exactPercentile is the nearest-rank percentile of the raw samples.
func exactPercentile(sorted []int64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return float64(sorted[max(rank-1, 0)])
}

// nearExact reports whether v (ms) is within rel of the exact percentile of
// the samples, allowing the neighbouring rank (conventions round ranks
// differently).
func nearExact(sorted []int64, p, v, rel float64) bool {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	for _, r := range []int{rank - 2, rank - 1, rank} {
		if r >= 0 && r < len(sorted) && math.Abs(v-float64(sorted[r])/1000) <= rel*float64(sorted[r])/1000 {
			return true
		}
	}
	return false
}

// Merged percentiles of N generators equal the percentiles of one
// histogram holding every sample, and the exact percentiles of all samples
// within the histogram's 0.1 % resolution — while the average of the
// generators' percentiles (what must never be done) is far off.
func TestMergedPercentilesEqualAllSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var parts []*Result
	var all []int64
	reference := NewHistogram()
	for i, median := range []float64{800, 1200, 2500, 5000} {
		r, samples := generator(t, rng, 20000+5000*i, median)
		parts = append(parts, r)
		all = append(all, samples...)
		for _, v := range samples {
			_ = reference.RecordValue(v)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	merged := Merge(parts)
	if merged.Verdict != Succeeded || merged.Parameters["loadGenerators"] != "4" {
		t.Fatalf("merged %s %v %v", merged.Verdict, merged.Reasons, merged.Parameters)
	}
	for _, q := range []struct {
		name string
		p    float64
	}{{"latencyP50Millis", 50}, {"latencyP95Millis", 95}, {"latencyP99Millis", 99}, {"latencyP99.9Millis", 99.9}} {
		m, ok := merged.Get(Key{Name: q.name, Operation: "READ"})
		if !ok {
			t.Fatalf("no %s in %+v", q.name, merged.Metrics)
		}
		ref := float64(reference.ValueAtPercentile(q.p)) / 1000
		if m.Value != ref {
			t.Errorf("%s = %v, single histogram of all samples says %v", q.name, m.Value, ref)
		}
		exact := exactPercentile(all, q.p) / 1000
		if !nearExact(all, q.p, m.Value, 0.001) {
			t.Errorf("%s = %v, exact percentile of all samples %v: more than the histogram's 0.1%% apart", q.name, m.Value, exact)
		}
		var avg float64
		for _, p := range parts {
			v, _ := p.Get(Key{Name: q.name, Operation: "READ"})
			avg += v.Value / float64(len(parts))
		}
		if q.p >= 95 && math.Abs(avg-exact)/exact < 0.05 {
			t.Errorf("%s: averaging the generators' percentiles (%v) came within 5%% of the truth (%v): the test data does not tell merging from averaging", q.name, avg, exact)
		}
	}
	if got, want := mustGet(t, merged, "opsPerSecond", "OVERALL"), float64(len(all))/10; got != want {
		t.Errorf("throughput %v, want the sum %v", got, want)
	}
	if got := mustGet(t, merged, "operations", "READ"); got != float64(len(all)) {
		t.Errorf("operations %v", got)
	}
	if got, want := mustGet(t, merged, "latencyMaxMillis", "READ"), float64(reference.Max())/1000; got != want {
		t.Errorf("max %v, want %v", got, want)
	}
	// Averages, as HammerDB (Avg) and the other tools (Average) name them.
	for _, name := range []string{"latencyAvgMillis", "latencyAverageMillis"} {
		if got, want := mustGet(t, merged, name, "READ"), reference.Mean()/1000; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s %v, want %v", name, got, want)
		}
	}
	// The merged histogram travels on, so merges compose.
	h, err := DecodeHistogram(merged.Histograms["READ"])
	if err != nil || !h.Equals(reference) {
		t.Errorf("merged histogram differs from the reference (%v)", err)
	}
}

// Without histograms the merged percentile is the largest generator's,
// named as an upper bound, and it is one: never below the truth.
func TestMergeWithoutHistogramsGivesUpperBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var parts []*Result
	var all []int64
	for _, median := range []float64{1000, 3000} {
		r, samples := generator(t, rng, 10000, median)
		r.Histograms = nil
		parts = append(parts, r)
		all = append(all, samples...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	merged := Merge(parts)
	if _, ok := merged.Get(Key{Name: "latencyP99Millis", Operation: "READ"}); ok {
		t.Error("a percentile without histograms was reported as exact")
	}
	ub := mustGet(t, merged, "latencyP99UpperBoundMillis", "READ")
	if exact := exactPercentile(all, 99) / 1000; ub < exact*0.999 {
		t.Errorf("upper bound %v below the true p99 %v", ub, exact)
	}
	if !strings.Contains(strings.Join(merged.Warnings, "|"), "upper bounds") {
		t.Errorf("warnings %v", merged.Warnings)
	}
}

// The worst verdict wins and every reason names its generator.
func TestMergeVerdicts(t *testing.T) {
	a, b, c := New("k6"), New("k6"), New("k6")
	b.Invalidate("thresholds crossed")
	c.Fail("exit 107")
	m := Merge([]*Result{a, b, c})
	if m.Verdict != Failed || strings.Join(m.Reasons, "|") != "load generator 2: exit 107|load generator 1: thresholds crossed" &&
		strings.Join(m.Reasons, "|") != "load generator 1: thresholds crossed|load generator 2: exit 107" {
		t.Errorf("%s %v", m.Verdict, m.Reasons)
	}
}

func mustGet(t *testing.T, r *Result, name, op string) float64 {
	t.Helper()
	m, ok := r.Get(Key{Name: name, Operation: op})
	if !ok {
		t.Fatalf("no %s[%s]", name, op)
	}
	return m.Value
}

// BenchmarkMerge merges 64 load generators' results of 5 operations, each
// with a histogram of 50 000 latencies: the work the operator does once per
// measurement. It reports the merged result's size, which must stay far
// below what a log tail and the results ConfigMap (1 MiB) hold.
func BenchmarkMerge(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	ops := []string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}
	var parts []*Result
	for g := range 64 {
		r := New("ycsb")
		r.Primary = Key{Name: "opsPerSecond", Operation: "OVERALL"}
		r.Add(Metric{Name: "opsPerSecond", Operation: "OVERALL", Value: 1000 + float64(g), Unit: "ops/s", Direction: HigherIsBetter})
		for _, op := range ops {
			h := NewHistogram()
			for range 50000 {
				_ = h.RecordValue(int64(500 * math.Exp(0.7*rng.NormFloat64())))
			}
			r.Add(Metric{Name: "operations", Operation: op, Value: float64(h.TotalCount()), Unit: "count"})
			r.Add(Metric{Name: "latencyP99Millis", Operation: op, Value: float64(h.ValueAtPercentile(99)) / 1000, Unit: "ms", Direction: LowerIsBetter})
			if err := r.SetHistogram(op, h); err != nil {
				b.Fatal(err)
			}
		}
		parts = append(parts, r)
	}
	b.ResetTimer()
	var merged *Result
	for range b.N {
		merged = Merge(parts)
	}
	b.StopTimer()
	raw, _ := json.Marshal(merged)
	b.ReportMetric(float64(len(raw)), "merged-result-bytes")
	b.ReportMetric(float64(len(merged.Histograms["READ"])), "histogram-bytes")
	if len(raw) > 256<<10 {
		b.Errorf("merged result is %d bytes: too large for the results ConfigMap", len(raw))
	}
}

func TestPercentileOfName(t *testing.T) {
	for in, want := range map[string]float64{"50": 50, "99": 99, "999": 99.9, "9999": 99.99, "995": 99.5, "100": 100, "5": 5, "99.9": 99.9} {
		if got := PercentileOfName(in); got != want {
			t.Errorf("%s: %g, want %g", in, got, want)
		}
	}
}

// The p99.9 of merged histograms is their 99.9th percentile, not the
// maximum (ValueAtPercentile(999) is clamped to 100).
func TestMergedP999IsTheQuantile(t *testing.T) {
	var parts []*Result
	for g := 0; g < 2; g++ {
		r := New("k6")
		h := hdr.New(1, 60_000_000, 3)
		for i := 1; i <= 10000; i++ {
			_ = h.RecordValue(int64(i)) // 1 µs … 10 ms
		}
		_ = h.RecordValue(1_000_000) // one outlier of 1 s
		if err := r.SetHistogram("GET", h); err != nil {
			t.Fatal(err)
		}
		r.Add(Metric{Name: "latencyP999Millis", Operation: "GET", Value: 9.99, Unit: "ms", Direction: LowerIsBetter})
		parts = append(parts, r)
	}
	m, ok := Merge(parts).Get(Key{Name: "latencyP999Millis", Operation: "GET"})
	if !ok || m.Value < 9.9 || m.Value > 10.1 {
		t.Errorf("merged p99.9 %v ms, want about 10 (the 99.9th of 20002 values, not the 1 s maximum)", m.Value)
	}
}

// The server's settings read by the first generator survive the merge.
func TestMergeKeepsTheServersSettings(t *testing.T) {
	a, b := New("pgbench"), New("pgbench")
	a.ServerSettings = map[string]string{"work_mem": "64 kB"}
	if m := Merge([]*Result{a, b}); m.ServerSettings["work_mem"] != "64 kB" {
		t.Errorf("settings %v", m.ServerSettings)
	}
}
