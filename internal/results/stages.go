package results

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Stage is one part of a measurement the tool ramped through by itself
// (k6's stages), reported as if it were a step: its throughput, error
// share, latency percentiles from its own histogram and APDEX, and the
// target's CPU over it when telemetry recorded a series (StageTelemetry).
type Stage struct {
	Name        string   `json:"name"`
	FromSeconds float64  `json:"fromSeconds"`
	ToSeconds   float64  `json:"toSeconds"`
	Metrics     []Metric `json:"metrics"`
	// Histogram is the stage's latency histogram in microseconds (the
	// encoding of Histograms): what merges its percentiles across load
	// generators.
	Histogram string `json:"histogram,omitempty"`
	// APDEXTargetMillis is the target time of its APDEX, zero for none.
	APDEXTargetMillis float64 `json:"apdexTargetMillis,omitempty"`
}

// Names of a stage's counts, from which its other figures are computed.
const (
	StageRequests       = "requests"
	StageFailedRequests = "failedRequests"
)

// StageCounts are what a sample parser counted in one stage.
type StageCounts struct {
	Requests, Failed float64
	Latency          *hdr.Histogram
	APDEXTarget      time.Duration
}

// NewStage makes a stage's figures from its counts: requests per second
// over its length, the failed share, percentiles and the mean from its
// histogram, and APDEX for its target.
func NewStage(name string, from, to time.Duration, c StageCounts) (Stage, error) {
	st := Stage{Name: name, FromSeconds: from.Seconds(), ToSeconds: to.Seconds()}
	if c.Latency != nil && c.Latency.TotalCount() > 0 {
		enc, err := EncodeHistogram(c.Latency)
		if err != nil {
			return st, fmt.Errorf("stage %s: %w", name, err)
		}
		st.Histogram = enc
	}
	if c.APDEXTarget > 0 {
		st.APDEXTargetMillis = float64(c.APDEXTarget.Microseconds()) / 1000
	}
	st.figures(c.Requests, c.Failed, c.Latency)
	return st, nil
}

func (st *Stage) figures(requests, failed float64, h *hdr.Histogram) {
	st.Metrics = []Metric{
		{Name: StageRequests, Value: requests, Unit: "count", Direction: Neutral},
		{Name: StageFailedRequests, Value: failed, Unit: "count", Direction: LowerIsBetter},
	}
	if length := st.ToSeconds - st.FromSeconds; length > 0 {
		st.Metrics = append(st.Metrics, Metric{Name: "requestsPerSecond", Value: requests / length, Unit: "req/s", Direction: HigherIsBetter})
	}
	if requests > 0 {
		st.Metrics = append(st.Metrics, Metric{Name: "errorPercent", Value: 100 * failed / requests, Unit: "%", Direction: LowerIsBetter})
	}
	if h == nil || h.TotalCount() == 0 {
		return
	}
	for _, p := range []float64{50, 90, 95, 99} {
		st.Metrics = append(st.Metrics, Metric{Name: fmt.Sprintf("latencyP%gMillis", p), Value: float64(h.ValueAtPercentile(p)) / 1000, Unit: "ms", Direction: LowerIsBetter})
	}
	st.Metrics = append(st.Metrics, Metric{Name: "latencyMeanMillis", Value: h.Mean() / 1000, Unit: "ms", Direction: LowerIsBetter})
	if st.APDEXTargetMillis > 0 {
		if score, n := APDEX(h, time.Duration(st.APDEXTargetMillis*float64(time.Millisecond))); n > 0 {
			st.Metrics = append(st.Metrics, Metric{Name: "apdex", Value: score, Unit: "score", Direction: HigherIsBetter})
		}
	}
}

// Get returns a stage's metric by name.
func (st Stage) Get(name string) (Metric, bool) {
	for _, m := range st.Metrics {
		if m.Name == name && m.Operation == "" {
			return m, true
		}
	}
	return Metric{}, false
}

// mergeStages merges the stages of several load generators, stage by
// stage (the same stages, by name and position): counts add up,
// histograms merge, and the figures are computed again from them — never
// averaged percentiles. Generators that disagree on the stages keep none,
// with a warning.
func mergeStages(out *Result, parts []*Result) {
	ref := parts[0].Stages
	if len(ref) == 0 {
		return
	}
	for _, p := range parts[1:] {
		if len(p.Stages) != len(ref) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the load generators reported %d and %d stages: the stages are left out", len(ref), len(p.Stages)))
			return
		}
	}
	for i, st := range ref {
		merged := Stage{Name: st.Name, FromSeconds: st.FromSeconds, ToSeconds: st.ToSeconds, APDEXTargetMillis: st.APDEXTargetMillis}
		var requests, failed float64
		var h *hdr.Histogram
		for _, p := range parts {
			ps := p.Stages[i]
			r, _ := ps.Get(StageRequests)
			f, _ := ps.Get(StageFailedRequests)
			requests, failed = requests+r.Value, failed+f.Value
			if ps.Histogram == "" {
				continue
			}
			ph, err := DecodeHistogram(ps.Histogram)
			if err != nil {
				out.Warnings = append(out.Warnings, fmt.Sprintf("stage %s: an unreadable histogram: %v", st.Name, err))
				continue
			}
			if h == nil {
				h = NewHistogram()
			}
			h.Merge(ph)
		}
		if h != nil {
			if enc, err := EncodeHistogram(h); err == nil {
				merged.Histogram = enc
			}
		}
		merged.figures(requests, failed, h)
		out.Stages = append(out.Stages, merged)
	}
}
