package k6

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dbperf-io/dbperf-operator/internal/results"
)

// stageAgg counts one stage of a ramp (SampleOptions.Stages): its HTTP
// requests (or iterations, for a script without them), the failed ones,
// and a histogram of their latency, with flat memory.
type stageAgg struct {
	requests, failed, iterations float64
	latency, iterLatency         *hdr.Histogram
}

// Started is when the runner started k6 (StartedSink): the stages are
// measured from it, the same instant for every load generator; a
// generator whose share of the ramp starts late (execution segments)
// would otherwise measure them from its own first sample.
func (s *sink) Started(t time.Time) { s.started.Store(t.UnixNano()) }

// stageOf is the index of the stage sample time t falls in, measured from
// the tool's start (else the first sample); -1 before it or past the last
// stage (k6's graceful stop).
func (s *sink) stageOf(t time.Time) int {
	from := s.first
	if ns := s.started.Load(); ns != 0 {
		from = time.Unix(0, ns)
	}
	at := t.Sub(from)
	if at < 0 {
		return -1
	}
	for i, st := range s.opts.Stages {
		if at < st.End {
			return i
		}
	}
	return -1
}

// countStage adds a sample of the metrics the stages report.
func (s *sink) countStage(m *metricState, t time.Time, v float64) {
	if len(s.opts.Stages) == 0 {
		return
	}
	i := s.stageOf(t)
	if i < 0 {
		return
	}
	if s.stages == nil {
		s.stages = make([]stageAgg, len(s.opts.Stages))
	}
	a := &s.stages[i]
	switch m.name {
	case "http_reqs":
		a.requests += v
	case "http_req_failed":
		a.failed += v
	case "iterations":
		a.iterations += v
	case "http_req_duration":
		if a.latency == nil {
			a.latency = results.NewHistogram()
		}
		_ = a.latency.RecordValue(results.MillisToMicros(v))
	case "iteration_duration":
		if a.iterLatency == nil {
			a.iterLatency = results.NewHistogram()
		}
		_ = a.iterLatency.RecordValue(results.MillisToMicros(v))
	}
}

// addStages reports each stage as if it were a step: HTTP requests, or
// iterations for a script without requests.
func (s *sink) addStages(r *results.Result) {
	if len(s.opts.Stages) == 0 {
		return
	}
	if s.stages == nil {
		s.stages = make([]stageAgg, len(s.opts.Stages))
	}
	from := time.Duration(0)
	for i, st := range s.opts.Stages {
		a := s.stages[i]
		c := results.StageCounts{Requests: a.requests, Failed: a.failed, Latency: a.latency, APDEXTarget: s.apdexTarget("", true)}
		if !s.sawHTTP {
			c = results.StageCounts{Requests: a.iterations, Latency: a.iterLatency, APDEXTarget: s.apdexTarget("iteration_duration", true)}
		}
		stage, err := results.NewStage(st.Name, from, st.End, c)
		if err != nil {
			r.Warnings = append(r.Warnings, err.Error())
		}
		r.Stages = append(r.Stages, stage)
		from = st.End
	}
	if !s.vusFirst.IsZero() && s.started.Load() != 0 {
		// k6 samples its VUs every second from its test's start: the first
		// sample a second after it. Init time (compiling the script) moves
		// the stages' windows by as much.
		if late := s.vusFirst.Add(-time.Second).Sub(time.Unix(0, s.started.Load())); late > 500*time.Millisecond {
			r.Warnings = append(r.Warnings, fmt.Sprintf("k6 started its test about %s after it was started (its init): the stages are measured from the latter, so each stage's figures include that much of the one before",
				late.Round(100*time.Millisecond)))
		}
	}
	if last := s.opts.Stages[len(s.opts.Stages)-1].End; s.last.Sub(s.first) < last-time.Second {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the samples end %s into the measurement, before its last stage does (%s): the stages after are short or empty",
			s.last.Sub(s.first).Round(time.Second), last))
	}
}
