package results

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

// TestAPDEXByHand: 60 requests at 0.5 ms, 30 at 2 ms, 10 at 10 ms with
// T = 1 ms: 60 satisfied, 30 tolerating (≤ 4 ms), 10 frustrated, so
// (60 + 30/2) / 100 = 0.75; with T = 3 ms, (90 + 10/2) / 100 = 0.95.
func TestAPDEXByHand(t *testing.T) {
	h := NewHistogram()
	for range 60 {
		_ = h.RecordValue(500)
	}
	for range 30 {
		_ = h.RecordValue(2000)
	}
	for range 10 {
		_ = h.RecordValue(10000)
	}
	for target, want := range map[time.Duration]float64{time.Millisecond: 0.75, 3 * time.Millisecond: 0.95, 20 * time.Millisecond: 1, 100 * time.Microsecond: 0} {
		if got, n := APDEX(h, target); math.Abs(got-want) > 1e-12 || n != 100 {
			t.Errorf("T %s: APDEX %v of %d, want %v of 100", target, got, n, want)
		}
	}
}

// TestAddAPDEX: per operation from the measurement's histograms — here the
// real YCSB 0.17.0 UPDATE log of a run (1506 operations, 95th percentile
// 3483 µs, 99th 8067 µs by YCSB's own report) — and a warning, never a
// number, for an operation the tool gave no histogram of.
func TestAddAPDEX(t *testing.T) {
	raw, err := os.ReadFile("testdata/ycsb-0.17.0-hdr-UPDATE-resized.hdr")
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := ReadHistogramLog(raw)
	if err != nil {
		t.Fatal(err)
	}
	r := New("ycsb")
	if err := r.SetHistogram("UPDATE", h); err != nil {
		t.Fatal(err)
	}
	AddAPDEX(r, map[string]time.Duration{AllOperations: 3500 * time.Microsecond, "READ": time.Millisecond})
	m, ok := r.Get(Key{Name: "apdex", Operation: "UPDATE"})
	if !ok || m.Direction != HigherIsBetter || m.Unit != "score" {
		t.Fatalf("no apdex of UPDATE: %+v", r.Metrics)
	}
	// At least 95 % within T (the 95th percentile is 3483 µs), and every
	// request but the slowest 1 % within 4T (8067 < 14000): the score lies
	// between 0.95 + 0.04/2 and 1.
	if m.Value < 0.97 || m.Value > 1 {
		t.Errorf("apdex of UPDATE %v, want 0.97 … 1", m.Value)
	}
	if _, ok := r.Get(Key{Name: "apdex", Operation: "READ"}); ok || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "APDEX of READ cannot be computed") {
		t.Errorf("READ without a histogram: metrics %+v, warnings %q", r.Metrics, r.Warnings)
	}
	// Every operation asked of a tool that gave no histogram at all: said,
	// not silently nothing.
	none := New("redis-benchmark")
	AddAPDEX(none, map[string]time.Duration{AllOperations: time.Millisecond})
	if len(none.Warnings) != 1 || !strings.Contains(none.Warnings[0], "APDEX cannot be computed: redis-benchmark gave no latency histogram") {
		t.Errorf("no histogram at all: warnings %q", none.Warnings)
	}
}

// The overall index is the weighted mean of the key operations' scores,
// each from its own histogram and target time: 3 satisfied GETs of 4 (a
// fourth tolerated) weigh 1, 1 SET of 2 (the other frustrated) weighs 3.
func TestAddOverallAPDEX(t *testing.T) {
	r := New("k6")
	for op, micros := range map[string][]int64{"GET": {500, 600, 700, 3000}, "SET": {900, 50_000}} {
		h := NewHistogram()
		for _, v := range micros {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.SetHistogram(op, h); err != nil {
			t.Fatal(err)
		}
	}
	AddAPDEX(r, map[string]time.Duration{"GET": time.Millisecond, "SET": 2 * time.Millisecond})
	AddOverallAPDEX(r, map[string]float64{"GET": 1, "SET": 3})
	get, _ := r.Get(Key{Name: "apdex", Operation: "GET"})
	set, _ := r.Get(Key{Name: "apdex", Operation: "SET"})
	all, ok := r.Get(Key{Name: "apdex", Operation: OverallOperation})
	if get.Value != 0.875 || set.Value != 0.5 || !ok || math.Abs(all.Value-(0.875+3*0.5)/4) > 1e-12 || all.Direction != HigherIsBetter {
		t.Fatalf("GET %v, SET %v, overall %+v", get.Value, set.Value, all)
	}
	if r.Parameters["apdexOverallWeights"] != "GET×1, SET×3" {
		t.Errorf("weights %q", r.Parameters["apdexOverallWeights"])
	}
	// One scored operation: its score is the index, no overall is added.
	one := New("k6")
	one.Add(Metric{Name: "apdex", Operation: "GET", Value: 0.9})
	AddOverallAPDEX(one, map[string]float64{AllOperations: 1})
	if _, ok := one.Get(Key{Name: "apdex", Operation: OverallOperation}); ok {
		t.Error("an overall index of one operation")
	}
}
