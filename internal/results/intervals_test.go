package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// A long run at 1 s: the series stays under its budget by doubling its
// resolution, and its throughput still adds up to every request.
func TestSeriesBuilderCoarsensUnderBudget(t *testing.T) {
	b := NewSeriesBuilder(time.Second, 20<<10)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	op := "GET /api/v1/items/" + strings.Repeat("x", 40)
	total := 0.0
	for ms := 0; ms < 1800_000; ms += 50 { // 30 minutes, 20 requests a second
		at := t0.Add(time.Duration(ms) * time.Millisecond)
		b.Count(at, "requestsPerSecond", 1)
		b.Count(at, Key{Name: "requestsPerSecond", Operation: op}.String(), 1)
		b.Record(at, op, int64(1000+ms%7000))
		total++
	}
	pts := b.Finish()
	size := 0
	sum, prev := 0.0, 0.0
	for _, p := range pts {
		size += pointSize(p)
		sum += p.Values["requestsPerSecond"] * (p.ElapsedSeconds - prev)
		prev = p.ElapsedSeconds
	}
	if size > 20<<10 || b.Resolution() <= time.Second || b.UpperBoundUntil() == 0 {
		t.Errorf("%d bytes in %d points at %s", size, len(pts), b.Resolution())
	}
	if math.Abs(sum-total) > 1e-4*total {
		t.Errorf("the series adds up to %v requests, want %v", sum, total)
	}
}

// A sliver of a last interval joins the point before it.
func TestSeriesBuilderShortTail(t *testing.T) {
	b := NewSeriesBuilder(time.Second, 0)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for ms := 0; ms <= 2100; ms += 100 {
		b.Count(t0.Add(time.Duration(ms)*time.Millisecond), "requestsPerSecond", 1)
	}
	pts := b.Finish()
	if len(pts) != 2 || pts[1].ElapsedSeconds != 2.1 || math.Abs(pts[0].Values["requestsPerSecond"]+1.1*pts[1].Values["requestsPerSecond"]-22) > 1e-3 {
		t.Errorf("points %+v", pts)
	}
}

// Two generators' series: rates add, percentiles become upper bounds, and
// each window's APDEX comes from the summed counts.
func TestMergeTimeSeries(t *testing.T) {
	mk := func(rps, p99, sat, n float64) *Result {
		r := New("k6")
		r.TimeSeries = []Point{
			{ElapsedSeconds: 1, Values: map[string]float64{"requestsPerSecond": rps, "latencyP99Millis[A]": p99}},
			{ElapsedSeconds: 1, Values: map[string]float64{"apdexSatisfied[A]": sat, "apdexTolerating[A]": 0, "apdexRequests[A]": n, "apdex[A]": sat / n}},
		}
		return r
	}
	m := Merge([]*Result{mk(100, 5, 100, 100), mk(50, 9, 0, 50)})
	if len(m.TimeSeries) != 2 {
		t.Fatalf("series %+v", m.TimeSeries)
	}
	v := m.TimeSeries[0].Values
	if v["requestsPerSecond"] != 150 || v["latencyP99UpperBoundMillis[A]"] != 9 {
		t.Errorf("merged %v", v)
	}
	if a := m.TimeSeries[1].Values["apdex[A]"]; math.Abs(a-100.0/150) > 1e-5 {
		t.Errorf("merged APDEX %v, want %v", a, 100.0/150)
	}
}

// A stall shorter than a coarsened point is still found: the builder
// hands the counts at its base resolution to the stability checks, beside
// the coarse series it stores.
func TestSeriesBuilderKeepsStallsFromCoarsening(t *testing.T) {
	cases := map[string]struct {
		length, gapFrom, gap, maxStall time.Duration
		// coarseHides: the stored series alone shows no stall past maxStall.
		coarseHides bool
	}{
		"a 7 s stall in 10 minutes": {length: 10 * time.Minute, gapFrom: 301 * time.Second, gap: 7 * time.Second, maxStall: 5 * time.Second, coarseHides: true},
		"a 20 s stall in an hour":   {length: time.Hour, gapFrom: 1801 * time.Second, gap: 20 * time.Second, maxStall: 10 * time.Second, coarseHides: true},
		"a 2 s stall in 10 minutes": {length: 10 * time.Minute, gapFrom: 100 * time.Second, gap: 2 * time.Second, maxStall: time.Second, coarseHides: true},
		"a 19 s stall at the end":   {length: time.Hour, gapFrom: time.Hour - 20*time.Second, gap: 19 * time.Second, maxStall: 10 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := NewSeriesBuilder(time.Second, 0)
			t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			ops := []string{"GET /api/v1/items", "POST /api/v1/orders", "GET /api/v1/users/{id}", "DELETE /api/v1/carts/{id}"}
			for ms := time.Duration(0); ms < tc.length; ms += 20 * time.Millisecond { // 50 requests a second
				if ms >= tc.gapFrom && ms < tc.gapFrom+tc.gap {
					continue
				}
				at := t0.Add(ms)
				op := ops[int(ms/time.Millisecond/20)%len(ops)]
				b.Count(at, "requestsPerSecond", 1)
				b.Count(at, Key{Name: "requestsPerSecond", Operation: op}.String(), 1)
				b.Record(at, op, int64(1000+ms/time.Millisecond%7000))
			}
			// The last request ends the measurement.
			b.Count(t0.Add(tc.length), "requestsPerSecond", 1)
			r := New("k6")
			r.Primary = Key{Name: "requestsPerSecond", Operation: "http_reqs"}
			r.TimeSeries, r.Progress = b.Finish(), b.Progress()
			if b.Resolution() < 2*tc.gap/3 {
				t.Fatalf("the stored series is at %s: not coarse enough to hide the stall", b.Resolution())
			}
			coarse := *r
			coarse.Progress = nil
			ApplyThresholds(&coarse, Thresholds{MaxStall: tc.maxStall})
			if tc.coarseHides && coarse.Verdict != Succeeded {
				t.Errorf("the stored series at %s alone shows the stall: %q", b.Resolution(), coarse.Reasons)
			}
			ApplyThresholds(r, Thresholds{MaxStall: tc.maxStall})
			want := fmt.Sprintf("requestsPerSecond stalled from %s to %s into the measurement (%s; lowest 0, median 50)",
				tc.gapFrom, tc.gapFrom+tc.gap, tc.gap)
			if r.Verdict != Invalid || len(r.Reasons) != 1 || !strings.Contains(r.Reasons[0], want) {
				t.Errorf("at %s: %s %q %q, want Invalid for %q", b.Resolution(), r.Verdict, r.Reasons, r.Warnings, want)
			}
			if raw, err := json.Marshal(r); err != nil || bytes.Contains(raw, []byte("rogress")) {
				t.Errorf("the finest resolution is stored: %v", err)
			}
		})
	}
}
