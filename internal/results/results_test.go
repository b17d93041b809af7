package results

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVerdicts(t *testing.T) {
	r := New("x")
	r.Invalidate("saturated")
	r.Invalidate("saturated")
	if r.Verdict != Invalid || len(r.Reasons) != 1 {
		t.Fatalf("%s %v", r.Verdict, r.Reasons)
	}
	r.Fail("aborted")
	r.Invalidate("errors")
	if r.Verdict != Failed || len(r.Reasons) != 3 {
		t.Fatalf("failed must stay failed: %s %v", r.Verdict, r.Reasons)
	}
}

func bigResult() *Result {
	r := New("memtier")
	r.Primary = Key{Name: "opsPerSecond", Operation: "Totals"}
	for i := range 200 {
		r.Add(Metric{Name: fmt.Sprintf("latencyP%dMillis", i), Operation: "Gets", Value: float64(i), Unit: "ms", Direction: LowerIsBetter})
	}
	r.Add(Metric{Name: "opsPerSecond", Operation: "Totals", Value: 90018.1, Unit: "ops/s", Direction: HigherIsBetter})
	r.Add(Metric{Name: "statementLatencyMillis", Operation: "SELECT", Value: 1, Unit: "ms", Detail: true})
	for i := range 30 {
		r.Invalidate("reason %d %s", i, strings.Repeat("x", 50))
	}
	for i := range 1000 {
		r.TimeSeries = append(r.TimeSeries, Point{ElapsedSeconds: float64(i), Values: map[string]float64{"opsPerSecond": 1}})
	}
	return r
}

func TestCompactFitsAndKeepsThePrimary(t *testing.T) {
	r := bigResult()
	raw, err := EncodeCompact(r, MaxCompactBytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > MaxCompactBytes {
		t.Fatalf("%d bytes", len(raw))
	}
	back, err := DecodeCompact(raw)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := back.Get(r.Primary); !ok || m.Value != 90018.1 {
		t.Fatalf("the primary metric must survive: %+v", back.Metrics[:1])
	}
	if back.Verdict != Invalid || len(back.Warnings) == 0 || !strings.Contains(strings.Join(back.Reasons, ""), "more reasons") {
		t.Fatalf("verdict %s warnings %v reasons %v", back.Verdict, back.Warnings, back.Reasons)
	}
	if _, ok := back.Get(Key{Name: "statementLatencyMillis", Operation: "SELECT"}); ok {
		t.Fatal("detail metrics do not belong in the termination message")
	}
}

func TestBlockRoundTripAndLastBlockWins(t *testing.T) {
	r := bigResult()
	block, err := EncodeBlock(r)
	if err != nil {
		t.Fatal(err)
	}
	fake := BlockBegin + "\nnot base64!\n" + BlockEnd + "\n"
	log := "tool output\n" + fake + "more output\n" + string(block)
	back, err := DecodeBlock([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Fatalf("(-want +got)\n%s", diff)
	}
	if _, err := DecodeBlock([]byte("no block here")); !errors.Is(err, ErrNoBlock) {
		t.Fatalf("err = %v", err)
	}
	if _, err := DecodeBlock([]byte(string(block[:len(block)/2]))); err == nil {
		t.Fatal("a cut-off block must not decode")
	}
}

func TestThresholds(t *testing.T) {
	cases := map[string]struct {
		cpu, errPct float64
		th          Thresholds
		want        Verdict
	}{
		"fine":          {50, 0, Thresholds{MaxLoadGeneratorCPUPercent: 90}, Succeeded},
		"saturated":     {95, 0, Thresholds{MaxLoadGeneratorCPUPercent: 90}, Invalid},
		"check off":     {99, 0, Thresholds{}, Succeeded},
		"errors":        {10, 0.5, Thresholds{MaxLoadGeneratorCPUPercent: 90}, Invalid},
		"errors within": {10, 0.5, Thresholds{MaxLoadGeneratorCPUPercent: 90, MaxErrorPercent: 1}, Succeeded},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := New("x")
			r.LoadGenerator = &LoadGenerator{CPUPercent: tc.cpu, AvailableCPUs: 2, Source: "cgroup2"}
			r.Add(Metric{Name: "errorPercent", Value: tc.errPct, Unit: "%"})
			ApplyThresholds(r, tc.th)
			if r.Verdict != tc.want {
				t.Fatalf("%s %v", r.Verdict, r.Reasons)
			}
		})
	}
}

// TestReadHistogramLogOfAResizedJavaHistogram: a real YCSB 0.17.0 log
// (the e2e's, on a loaded machine) whose interval histogram carries counts
// beyond the range its header names (Java's auto-resized array): every
// operation is read, and the tail is YCSB's own.
func TestReadHistogramLogOfAResizedJavaHistogram(t *testing.T) {
	raw, err := os.ReadFile("testdata/ycsb-0.17.0-hdr-UPDATE-resized.hdr")
	if err != nil {
		t.Fatal(err)
	}
	h, intervals, err := ReadHistogramLog(raw)
	if err != nil {
		t.Fatal(err)
	}
	// YCSB's own report of this run: [UPDATE] Operations 1506,
	// 99thPercentileLatency(us) 8067, MaxLatency(us) 40095.
	if h.TotalCount() != 1506 || intervals < 1 {
		t.Errorf("%d operations in %d intervals, want 1506", h.TotalCount(), intervals)
	}
	if p99 := h.ValueAtQuantile(99); p99 < 7900 || p99 > 8300 {
		t.Errorf("p99 %d µs, YCSB says 8067", p99)
	}
	if mx := h.Max(); mx < 39000 || mx > 41000 {
		t.Errorf("max %d µs, YCSB says 40095", mx)
	}
}
