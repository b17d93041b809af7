package results

import (
	"math"
	"strings"
	"testing"
	"time"
)

// series is a generator's series of a constant rate: a point every step
// seconds up to end, then the given tail points.
func series(step, end, rps, p99 float64, tail ...float64) []Point {
	var out []Point
	for t := step; t <= end+1e-9; t += step {
		out = append(out, Point{ElapsedSeconds: t, Values: map[string]float64{"requestsPerSecond": rps, "latencyP99Millis": p99}})
	}
	for _, t := range tail {
		out = append(out, Point{ElapsedSeconds: t, Values: map[string]float64{"requestsPerSecond": rps}})
	}
	return out
}

// requestsIn is what a series' throughput adds up to.
func requestsIn(pts []Point) float64 {
	sum, prev := 0.0, 0.0
	for _, p := range pts {
		if v, ok := p.Values["requestsPerSecond"]; ok {
			sum += v * (p.ElapsedSeconds - prev)
			prev = p.ElapsedSeconds
		}
	}
	return sum
}

// One generator kept its series at 1 s, the other coarsened it to 4 s, and
// the first ran one second longer: the merged series is at 4 s, every full
// interval carries both generators' 100 req/s, and the throughput adds up
// to every request of both.
func TestMergeTimeSeriesOfDifferentResolutions(t *testing.T) {
	a, b := New("k6"), New("k6")
	a.SetParam(SeriesResolutionParam, "1s")
	b.SetParam(SeriesResolutionParam, "4s")
	a.TimeSeries = series(1, 60, 100, 5, 61)
	b.TimeSeries = series(4, 60, 100, 9)
	m := Merge([]*Result{a, b})
	if len(m.TimeSeries) != 15 {
		t.Fatalf("%d points, want 15: %+v", len(m.TimeSeries), m.TimeSeries)
	}
	for i, p := range m.TimeSeries[:14] {
		if p.ElapsedSeconds != float64(4*(i+1)) || p.Values["requestsPerSecond"] != 200 || p.Values["latencyP99UpperBoundMillis"] != 9 {
			t.Errorf("point %d: %+v", i, p)
		}
	}
	// The last second of the first generator joins the last interval.
	if last := m.TimeSeries[14]; last.ElapsedSeconds != 61 || last.Values["requestsPerSecond"] != 180 {
		t.Errorf("last point %+v", last)
	}
	if got, want := requestsIn(m.TimeSeries), requestsIn(a.TimeSeries)+requestsIn(b.TimeSeries); got != want || want != 12100 {
		t.Errorf("the merged series adds up to %v requests, want %v", got, want)
	}
	if m.Parameters[SeriesResolutionParam] != "4s" || !strings.Contains(strings.Join(m.Warnings, "\n"), "merged at 4s") {
		t.Errorf("parameters %v, warnings %v", m.Parameters, m.Warnings)
	}
}

// Series built by SeriesBuilders that coarsened differently, with APDEX
// windows interleaved: throughput and APDEX counts add up exactly.
func TestMergeTimeSeriesOfBuilders(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	build := func(res, window time.Duration, seconds int) (*Result, float64) {
		b := NewSeriesBuilder(res, 0)
		w := NewAPDEXWindows(window, 0)
		n := 0.0
		for ms := 0; ms < seconds*1000; ms += 10 {
			at := t0.Add(time.Duration(ms) * time.Millisecond)
			b.Count(at, "requestsPerSecond", 1)
			b.Record(at, "A", int64(1000+ms%5000))
			w.Observe(at, "A", int64(1000+ms%5000), 2*time.Millisecond)
			n++
		}
		r := New("k6")
		r.TimeSeries = append(b.Finish(), w.Points()...)
		r.SetParam(SeriesResolutionParam, b.Resolution().String())
		r.SetParam(APDEXWindowParam, w.Window().String())
		return r, n
	}
	a, na := build(time.Second, 10*time.Second, 90)
	b, nb := build(4*time.Second, 20*time.Second, 87)
	m := Merge([]*Result{a, b})
	if got := requestsIn(m.TimeSeries); math.Abs(got-na-nb) > 1e-6*(na+nb) {
		t.Errorf("the merged series adds up to %v requests, want %v", got, na+nb)
	}
	var apdex float64
	windows := 0
	for _, p := range m.TimeSeries {
		if v, ok := p.Values["apdexRequests[A]"]; ok {
			apdex += v
			windows++
		}
	}
	if apdex != na+nb || windows != 5 {
		t.Errorf("%d APDEX windows counted %v requests, want 5 and %v", windows, apdex, na+nb)
	}
	if m.Parameters[APDEXWindowParam] != "20s" {
		t.Errorf("parameters %v", m.Parameters)
	}
}
