package results

import (
	"strings"
	"testing"
	"time"
)

// Two generators' stages merge stage by stage: counts add up, the
// percentiles come from the merged histograms (never averaged), APDEX
// from the merged histogram at the stage's target; generators that
// disagree on the stages keep none, saying so.
func TestMergeStages(t *testing.T) {
	stage := func(requests, failed float64, micros ...int64) Stage {
		h := NewHistogram()
		for _, m := range micros {
			_ = h.RecordValue(m)
		}
		st, err := NewStage("stage 1 (to 10 VUs)", 0, 10*time.Second, StageCounts{Requests: requests, Failed: failed, Latency: h, APDEXTarget: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := New("k6"), New("k6")
	a.Stages = []Stage{stage(100, 1, 1000, 1000, 1000, 1000)}
	b.Stages = []Stage{stage(300, 2, 9000, 9000, 9000, 9000)}
	m := Merge([]*Result{a, b})
	if len(m.Stages) != 1 {
		t.Fatalf("stages %+v", m.Stages)
	}
	get := func(name string) float64 {
		v, ok := m.Stages[0].Get(name)
		if !ok {
			t.Fatalf("no %s in %+v", name, m.Stages[0].Metrics)
		}
		return v.Value
	}
	if get(StageRequests) != 400 || get("requestsPerSecond") != 40 || get("errorPercent") != 0.75 {
		t.Errorf("counts: %+v", m.Stages[0].Metrics)
	}
	// Half the latencies are 1 ms, half 9 ms: p50 1 ms, p99 9 ms; APDEX at
	// 2 ms: half satisfied (≤ 2 ms), half frustrated (> 4 × 2 ms): 0.5.
	if p50, p99 := get("latencyP50Millis"), get("latencyP99Millis"); p50 > 1.01 || p99 < 8.99 || p99 > 9.01 || get("apdex") != 0.5 {
		t.Errorf("p50 %v, p99 %v, apdex %v", p50, p99, get("apdex"))
	}
	b.Stages = append(b.Stages, b.Stages[0])
	if m := Merge([]*Result{a, b}); len(m.Stages) != 0 || !strings.Contains(strings.Join(m.Warnings, "|"), "reported 1 and 2 stages") {
		t.Errorf("disagreeing stages: %+v %v", m.Stages, m.Warnings)
	}
}
